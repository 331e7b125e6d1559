/*
 * Unit tests for the session layer: secrets, histories, Reconnect, graces,
 * the end's epilogue and the resume step, observed through a broadcaster
 * whose sink is the session layer and a recording sink behind it
 * ("comm:Event", "join:p@comm", "left:p@comm", "close:comm"; "timer:p=sec"
 * for each grace timer asked for).
 * No sockets, no game.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "sopra/bcast.h"
#include "sopra/game_event.h"
#include "sopra/session.h"

#include "contract.h"
#include "sink_log.h"

struct rec {
	char log[SINK_LOG_SIZE];                /* first: the sink_log */
	char secret_seen[PROTO_SECRET_HEX + 1]; /* of the last Session sent */
};

static void rec_send(void *ctx, int comm_id, int player, const struct game_event *ev)
{
	struct rec *r = ctx;
	char item[64];
	assert_true(comm_id > 0); /* the session layer passes on only these */
	if (ev->type == GEV_COMMAND_FAILED)
		snprintf(item, sizeof item, "%d:CommandFailed(%s)", comm_id, ev->str);
	else
		snprintf(item, sizeof item, "%d:%s", comm_id, game_event_name(ev->type));
	sink_log_add(r, item);
	if (ev->type == GEV_SESSION) {
		assert_int_equal(ev->arg[0], player);
		assert_int_equal(ev->nargs, 1);
		snprintf(r->secret_seen, sizeof r->secret_seen, "%s", ev->str);
	}
}

static void rec_timer(void *ctx, int player, int sec)
{
	char item[32];
	snprintf(item, sizeof item, "timer:%d=%d", player, sec);
	sink_log_add(ctx, item);
}

static void fake_secret(void *ctx, int player, char *hex)
{
	(void)ctx;
	memset(hex, 'a' + player, PROTO_SECRET_HEX);
	hex[PROTO_SECRET_HEX] = '\0';
}

struct t {
	struct rec r;
	struct bcast *b;
	struct session *s;
	struct game_event_list l;
};

/* A broadcaster behind a session layer (sessions on: secret, grace 5 s). */
static void t_init(struct t *t, bool sessions)
{
	memset(t, 0, sizeof *t);
	struct session_opts o = {.timer = rec_timer, .timer_ctx = &t->r};
	if (sessions)
		o = (struct session_opts){.secret = fake_secret,
		                          .grace_sec = 5,
		                          .timer = rec_timer,
		                          .timer_ctx = &t->r};
	struct bcast_sink out = {.send = rec_send,
	                         .joined = sink_log_joined,
	                         .left = sink_log_left,
	                         .close = sink_log_close,
	                         .ctx = &t->r};
	t->b = bcast_new(out);
	t->s = session_new(&o, t->b, out);
	game_event_list_init(&t->l);
}

static void t_free(struct t *t)
{
	game_event_list_free(&t->l);
	session_free(t->s);
	bcast_free(t->b);
}

static struct game_event *push(struct t *t, enum game_event_type type, int to)
{
	return game_event_list_push(&t->l, type, to);
}

static void route(struct t *t, int sender)
{
	bcast_route(t->b, sender, &t->l);
	game_event_list_clear(&t->l);
}

static void secret_of(int player, char *hex)
{
	fake_secret(NULL, player, hex);
}

/* Players 0..n-1 join on connections 11, 12, ... */
static void join_players(struct t *t, int n)
{
	for (int p = 0; p < n; p++)
		bcast_join(t->b, p, 11 + p);
}

/* Player p leaves (Left to all, routed); the log starts afresh. */
static void player_left(struct t *t, int p)
{
	push(t, GEV_LEFT, GEV_TO_ALL)->arg[0] = p;
	route(t, 0);
	t->r.log[0] = '\0';
}

static int reconnect(struct t *t, int comm, int sender, const char *secret, char *msg)
{
	return session_reconnect(t->s, comm, sender, secret, msg, 128);
}

/* Session follows Config, to that player alone; the history (also what was
 * routed while the player had no connection) goes out again on Reconnect,
 * Session included; the grace runs while the player is away. */
static void test_history_and_reconnect(void **state)
{
	(void)state;
	struct t t;
	t_init(&t, true);
	assert_true(session_on(t.s));
	assert_true(session_keeps_seat(t.s));
	join_players(&t, 2);
	push(&t, GEV_CONFIG, 0);
	push(&t, GEV_ACT_NOW, 0);
	route(&t, 11);
	assert_string_equal(t.r.log, "join:0@11 join:1@12 11:Config 11:Session 11:ActNow");
	char sec[PROTO_SECRET_HEX + 1];
	secret_of(0, sec);
	assert_string_equal(t.r.secret_seen, sec);
	assert_int_equal(bcast_conn_lost(t.b, 11), 0);
	assert_true(session_is_away(t.s, 0));
	assert_false(session_is_away(t.s, 1));
	session_away(t.s, 0);
	push(&t, GEV_NEXT_ROUND, GEV_TO_ALL);
	route(&t, 0);
	t.r.log[0] = '\0';
	t.r.secret_seen[0] = '\0';
	char msg[128];
	assert_int_equal(reconnect(&t, 20, -1, sec, msg), 0);
	assert_string_equal(t.r.log,
	                    "join:0@20 timer:0=0 20:Config 20:Session 20:ActNow 20:NextRound");
	assert_string_equal(t.r.secret_seen, sec);
	assert_int_equal(bcast_player_of(t.b, 20), 0);
	assert_false(session_is_away(t.s, 0));
	t_free(&t);
}

static void rec_history(void *ctx, int comm_id, int player, size_t n)
{
	char item[48];
	snprintf(item, sizeof item, "history:%d@%d=%zu", player, comm_id, n);
	sink_log_add(ctx, item);
}

/* A sink that takes the history (bcast_sink.history) is told its length
 * instead of getting it sent, and reads it as its connection drains: here
 * one entry per drain (the smallest budget there is), while the game goes
 * on. Each entry is what the sink without it was sent (Session with the
 * secret, addressed to the player alone); what the player is sent
 * meanwhile comes as sends and lands in the history behind the n entries;
 * a player that left has none. */
static void test_history_read_as_it_drains(void **state)
{
	(void)state;
	struct t t;
	t_init(&t, true);
	session_free(t.s);
	struct session_opts o = {.secret = fake_secret, .grace_sec = 5};
	struct bcast_sink out = {
	        .send = rec_send, .joined = sink_log_joined, .history = rec_history, .ctx = &t.r};
	t.s = session_new(&o, t.b, out);
	bcast_join(t.b, 0, 11);
	bcast_join(t.b, 1, 12);
	push(&t, GEV_CONFIG, 0);
	push(&t, GEV_NEXT_ROUND, GEV_TO_ALL);
	push(&t, GEV_ACT_NOW, 0);
	route(&t, 11);
	assert_int_equal(bcast_conn_lost(t.b, 11), 0);
	push(&t, GEV_CRISIS, GEV_TO_ALL);
	route(&t, 0);
	t.r.log[0] = '\0';
	char sec[PROTO_SECRET_HEX + 1], msg[128];
	secret_of(0, sec);
	assert_int_equal(reconnect(&t, 20, -1, sec, msg), 0);
	assert_string_equal(t.r.log, "join:0@20 history:0@20=5");
	static const enum game_event_type want[] = {GEV_CONFIG, GEV_SESSION, GEV_NEXT_ROUND,
	                                            GEV_ACT_NOW, GEV_CRISIS};
	for (size_t i = 0; i < 5; i++) {
		struct game_event ev = session_history_at(t.s, 0, i);
		assert_int_equal(ev.type, want[i]);
		assert_int_equal(ev.to, 0);
		if (ev.type == GEV_SESSION)
			assert_string_equal(ev.str, sec);
		/* the game goes on between two drains */
		push(&t, GEV_DIE_ROLLED, GEV_TO_ALL);
		route(&t, 0);
	}
	assert_int_equal(session_history_len(t.s, 0), 10);
	assert_int_equal(session_history_at(t.s, 0, 5).type, GEV_DIE_ROLLED);
	assert_int_equal(session_history_len(t.s, 1), 7); /* NextRound, Crisis, 5 DieRolled */
	push(&t, GEV_LEFT, GEV_TO_ALL)->arg[0] = 0;
	route(&t, 0);
	assert_int_equal(session_history_len(t.s, 0), 0);
	assert_int_equal(session_history_len(t.s, 7), 0);
	t_free(&t);
}

/* Every way a Reconnect fails, with its message; nothing is sent. */
static void test_reconnect_refused(void **state)
{
	(void)state;
	struct t t;
	t_init(&t, true);
	join_players(&t, 3);
	player_left(&t, 2);
	char s0[PROTO_SECRET_HEX + 1], s2[PROTO_SECRET_HEX + 1], wrong[PROTO_SECRET_HEX + 1];
	secret_of(0, s0);
	secret_of(2, s2);
	secret_of(9, wrong);
	char msg[128];
	assert_int_equal(reconnect(&t, 20, 1, s0, msg), -1);
	assert_string_equal(msg, "Reconnect: this connection is player 1 already");
	assert_int_equal(reconnect(&t, 20, -1, wrong, msg), -1);
	assert_string_equal(msg, "Reconnect: wrong secret");
	assert_int_equal(reconnect(&t, 20, -1, "", msg), -1);
	assert_string_equal(msg, "Reconnect: wrong secret");
	assert_int_equal(reconnect(&t, 20, -1, s2, msg), -1);
	assert_string_equal(msg, "Reconnect: player 2 has left the game");
	assert_int_equal(reconnect(&t, 20, -1, s0, msg), -1);
	assert_string_equal(msg, "Reconnect: player 0 is connected");
	assert_string_equal(t.r.log, "");
	t_free(&t);
}

/* Who missed the end of the game (no connection when it was routed) until
 * a Reconnect delivers the history; a player who left never; every grace
 * stops at the end. A resume of a finished game (session_all_away) marks
 * everyone still in it: who had received the end is unknown. */
static void test_missed_end(void **state)
{
	(void)state;
	struct t t;
	t_init(&t, true);
	join_players(&t, 3);
	assert_int_equal(bcast_conn_lost(t.b, 12), 1);
	assert_int_equal(bcast_conn_lost(t.b, 13), 2);
	push(&t, GEV_LEFT, GEV_TO_ALL)->arg[0] = 2;
	push(&t, GEV_GAME_END, GEV_TO_ALL);
	route(&t, 0);
	t.r.log[0] = '\0';
	session_note_end(t.s);
	assert_string_equal(t.r.log, "timer:0=0 timer:1=0 timer:2=0");
	assert_false(session_missed_end(t.s, 0)); /* connected at the end */
	assert_true(session_missed_end(t.s, 1));  /* away */
	assert_false(session_missed_end(t.s, 2)); /* left */
	assert_false(session_missed_end(t.s, 7)); /* no such player */
	t.r.log[0] = '\0';
	char sec[PROTO_SECRET_HEX + 1], msg[128];
	secret_of(1, sec);
	assert_int_equal(reconnect(&t, 21, -1, sec, msg), 1);
	assert_string_equal(t.r.log, "join:1@21 timer:1=0 21:Left 21:GameEnd");
	assert_false(session_missed_end(t.s, 1));
	session_all_away(t.s, true);
	assert_true(session_missed_end(t.s, 0));
	assert_true(session_missed_end(t.s, 1));
	assert_false(session_missed_end(t.s, 2));
	t_free(&t);
}

/* The resume: everyone away; while the game goes on every player in it
 * gets the grace it is given, after the end nobody (the epilogue waits). */
static void test_resume(void **state)
{
	(void)state;
	struct t t;
	t_init(&t, true);
	join_players(&t, 2);
	player_left(&t, 0);
	session_resume(t.s, false, 30);
	assert_string_equal(t.r.log, "timer:0=0 timer:1=0 timer:1=30");
	assert_true(session_is_away(t.s, 1));
	assert_false(session_missed_end(t.s, 1));
	t.r.log[0] = '\0';
	session_resume(t.s, true, 30);
	assert_string_equal(t.r.log, "timer:0=0 timer:1=0 timer:0=0 timer:1=0");
	assert_true(session_missed_end(t.s, 1));
	t_free(&t);
}

/* A bad line's message lives in its queue entry: the history keeps a copy. */
static void test_history_keeps_its_strings(void **state)
{
	(void)state;
	struct t t;
	t_init(&t, true);
	bcast_join(t.b, 0, 11);
	char msg[] = "first message";
	push(&t, GEV_COMMAND_FAILED, GEV_TO_SENDER)->str = msg;
	route(&t, 11);
	strcpy(msg, "overwritten!!");
	assert_int_equal(bcast_conn_lost(t.b, 11), 0);
	char sec[PROTO_SECRET_HEX + 1], why[128];
	secret_of(0, sec);
	t.r.log[0] = '\0';
	assert_int_equal(reconnect(&t, 30, -1, sec, why), 0);
	assert_string_equal(t.r.log, "join:0@30 timer:0=0 30:CommandFailed(first message)");
	t_free(&t);
}

/* Without sessions: deliveries pass through, those without a connection go
 * nowhere, no Session, no secrets, no graces. */
static void test_without_sessions(void **state)
{
	(void)state;
	struct t t;
	t_init(&t, false);
	assert_false(session_on(t.s));
	assert_false(session_keeps_seat(t.s));
	join_players(&t, 2);
	assert_int_equal(bcast_conn_lost(t.b, 12), 1);
	push(&t, GEV_CONFIG, 0);
	push(&t, GEV_NEXT_ROUND, GEV_TO_ALL);
	push(&t, GEV_LEFT, GEV_TO_ALL)->arg[0] = 0;
	route(&t, 11);
	assert_string_equal(t.r.log,
	                    "join:0@11 join:1@12 11:Config 11:NextRound 11:Left left:0@11");
	t.r.log[0] = '\0';
	session_note_end(t.s);
	assert_false(session_missed_end(t.s, 1));
	char sec[PROTO_SECRET_HEX + 1], msg[128];
	secret_of(1, sec);
	assert_int_equal(reconnect(&t, 20, -1, sec, msg), -1);
	assert_string_equal(msg, "Reconnect: wrong secret");
	bcast_close_conn(t.b, 12);
	assert_string_equal(t.r.log, "close:12");
	t_free(&t);
}

/* Programming errors stop the program (asserts), not return quietly. */
static struct t contract_t;
static void away_without_grace(void)
{
	t_init(&contract_t, false);
	bcast_join(contract_t.b, 0, 11);
	bcast_conn_lost(contract_t.b, 11);
	session_away(contract_t.s, 0);
}
static void away_while_connected(void)
{
	t_init(&contract_t, true);
	bcast_join(contract_t.b, 0, 11);
	session_away(contract_t.s, 0);
}
static void reconnect_without_connection(void)
{
	char msg[128];
	t_init(&contract_t, true);
	session_reconnect(contract_t.s, 0, -1, "", msg, sizeof msg);
}

static void test_contracts(void **state)
{
	(void)state;
	SKIP_WITHOUT_ASSERTS();
	assert_true(dies(away_without_grace));
	assert_true(dies(away_while_connected));
	assert_true(dies(reconnect_without_connection));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_history_and_reconnect),
	        cmocka_unit_test(test_reconnect_refused),
	        cmocka_unit_test(test_history_read_as_it_drains),
	        cmocka_unit_test(test_missed_end),
	        cmocka_unit_test(test_resume),
	        cmocka_unit_test(test_history_keeps_its_strings),
	        cmocka_unit_test(test_without_sessions),
	        cmocka_unit_test(test_contracts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
