/*
 * Unit tests for the command queue and the dispatcher, in the core that
 * assembles them (core.h): lines, timeouts and lost connections go in as
 * queue entries; a recording sink shows what the core delivered
 * ("comm:Event", "comm:CommandFailed(msg)", "close:comm"). A real game from
 * resources/example.json; no sockets.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sopra/bcast.h"
#include "sopra/cmdq.h"
#include "sopra/config.h"
#include "sopra/core.h"
#include "sopra/game.h"

struct t {
	char log[8192];
	struct config *cfg;
	struct core *core;
	struct game *game;         /* the core's */
	const struct bcast *bcast; /* the core's */
	struct cmdq *q;            /* the core's */
	char observed[1024];
	int after_count;
};

static void rec_add(struct t *t, const char *item)
{
	size_t n = strlen(t->log);
	snprintf(t->log + n, sizeof t->log - n, "%s%s", n ? " " : "", item);
}

static void rec_send(void *ctx, int comm_id, int player, const struct game_event *ev)
{
	(void)player;
	char item[300];
	if (ev->type == GEV_COMMAND_FAILED)
		snprintf(item, sizeof item, "%d:CommandFailed(%s)", comm_id, ev->str);
	else
		snprintf(item, sizeof item, "%d:%s", comm_id, game_event_name(ev->type));
	rec_add(ctx, item);
}

static void rec_close(void *ctx, int comm_id)
{
	char item[32];
	snprintf(item, sizeof item, "close:%d", comm_id);
	rec_add(ctx, item);
}

static void observe(void *ctx, const struct cmdq_entry *e, int player)
{
	struct t *t = ctx;
	size_t n = strlen(t->observed);
	snprintf(t->observed + n, sizeof t->observed - n, "%s%d/%d/%d", n ? " " : "", e->kind,
	         e->comm_id, player);
}

/* After the entry: its events were routed already. */
static void observe_after(void *ctx, const struct cmdq_entry *e, int player)
{
	struct t *t = ctx;
	(void)player;
	t->after_count++;
	assert_int_equal(
	        e->kind == CMDQ_COMMAND || e->kind == CMDQ_BAD_LINE ? t->log[0] != '\0' : 1, 1);
}

static void rec_left(void *ctx, int comm_id, int player)
{
	(void)player;
	rec_close(ctx, comm_id);
}

static void fake_secret(void *ctx, int player, char *hex)
{
	(void)ctx;
	memset(hex, 'a' + player, PROTO_SECRET_HEX);
	hex[PROTO_SECRET_HEX] = '\0';
}

/* A core of example.json, seed 42; sessions with a grace when asked, and
 * the failure budget of the next core (0: every entry recorded). */
static int t_budget;

static struct t *t_new_with(bool sessions)
{
	struct t *t = calloc(1, sizeof *t);
	struct config_errors errs = {0};
	t->cfg = config_load(SOPRA_SOURCE_DIR "/resources/example.json", &errs);
	assert_non_null(t->cfg);
	struct core_params p = {
	        .cfg = t->cfg, .seed = 42, .rules = RULES_BASE, .failure_budget = t_budget};
	if (sessions)
		p.sessions = (struct session_opts){.secret = fake_secret, .grace_sec = 30};
	t->core = core_new(
	        &p, (struct bcast_sink){
	                    .send = rec_send, .left = rec_left, .close = rec_close, .ctx = t});
	t->game = core_game(t->core);
	t->bcast = core_bcast(t->core);
	t->q = core_queue(t->core);
	struct dispatch_hooks hooks = {.before = observe, .after = observe_after, .ctx = t};
	core_set_hooks(t->core, &hooks);
	return t;
}

static struct t *t_new(void)
{
	return t_new_with(false);
}

static void t_free(struct t *t)
{
	core_free(t->core);
	config_free(t->cfg);
	free(t);
}

static void line(struct t *t, int comm, const char *text)
{
	cmdq_push_line(t->q, comm, text, strlen(text));
}

#define REGISTER(name) "{\"command\":\"Register\",\"playerName\":\"" name "\"}"

static void test_player_resolved_when_dispatched(void **state)
{
	(void)state;
	struct t *t = t_new();
	/* Register and StartGame pipelined: StartGame comes from player 0 */
	line(t, 7, REGISTER("Anna"));
	line(t, 7, "{\"command\":\"StartGame\"}");
	struct dispatch_result r = core_drain(t->core);
	assert_int_equal(r.entries, 2);
	assert_true(r.restart_timer);
	assert_false(r.game_over);
	assert_true(cmdq_empty(t->q));
	assert_string_equal(t->observed, "0/7/-1 0/7/0");
	assert_int_equal(t->after_count, 2);
	t->log[44] = '\0';
	assert_string_equal(t->log, "7:Config 7:GameStarted 7:Player 7:Characters");
	assert_int_equal(bcast_player_of(t->bcast, 7), 0);
	t_free(t);
}

static void test_bad_line_answers_sender_only(void **state)
{
	(void)state;
	struct t *t = t_new();
	line(t, 3, REGISTER("Anna"));
	assert_true(core_drain(t->core).restart_timer);
	t->log[0] = '\0';
	line(t, 4, "{\"command\":\"Fly\"}");
	line(t, 4, "not json");
	cmdq_push_error(t->q, 4, PROTO_ERR_LINE_TOO_LONG);
	struct dispatch_result r = core_drain(t->core);
	assert_int_equal(r.entries, 3);
	assert_false(r.restart_timer); /* bad lines do not restart the wait */
	assert_string_equal(t->log,
	                    "4:CommandFailed(unknown command \"Fly\") "
	                    "4:CommandFailed(malformed JSON at byte 1: unexpected character) "
	                    "4:CommandFailed(line too long)");
	assert_int_equal(game_player_count(t->game), 1);
	t_free(t);
}

/* Decode errors live in each entry's own buffer: growing the ring must not
 * mix them up. */
static void test_queue_growth_keeps_messages(void **state)
{
	(void)state;
	struct t *t = t_new();
	char buf[64];
	for (int i = 0; i < 100; i++) {
		snprintf(buf, sizeof buf, "{\"command\":\"X%d\"}", i);
		line(t, 1, buf);
	}
	assert_int_equal(t->q->n, 100);
	core_drain(t->core);
	char want[64];
	for (int i = 0; i < 100; i += 33) {
		snprintf(want, sizeof want, "1:CommandFailed(unknown command \"X%d\")", i);
		assert_non_null(strstr(t->log, want));
	}
	t_free(t);
}

/* cmdq_more_from: whether an entry behind the front comes from a
 * connection (the front itself does not count), also once the ring has
 * wrapped around. */
static void test_more_from_behind_the_front(void **state)
{
	(void)state;
	struct cmdq q;
	cmdq_init(&q, RULES_BASE, false);
	assert_false(cmdq_more_from(&q, 1));
	cmdq_push_line(&q, 1, "x", 1);
	assert_false(cmdq_more_from(&q, 1)); /* only the front */
	cmdq_push_line(&q, 2, "x", 1);
	cmdq_push_line(&q, 1, "x", 1);
	assert_true(cmdq_more_from(&q, 1));
	assert_true(cmdq_more_from(&q, 2));
	assert_false(cmdq_more_from(&q, 3));
	cmdq_pop(&q);
	assert_true(cmdq_more_from(&q, 1)); /* 2 is the front now */
	assert_false(cmdq_more_from(&q, 2));
	cmdq_pop(&q);
	assert_false(cmdq_more_from(&q, 1));
	cmdq_pop(&q);
	/* the ring wraps: filled from head 3, its last entry is at index 2 */
	size_t cap = q.cap;
	assert_int_equal(q.head, 3);
	for (size_t i = 0; i + 1 < cap; i++)
		cmdq_push_line(&q, 5, "x", 1);
	cmdq_push_line(&q, 8, "x", 1);
	assert_int_equal(q.cap, cap); /* not grown */
	assert_true(cmdq_more_from(&q, 8));
	assert_false(cmdq_more_from(&q, 1));
	cmdq_free(&q);
}

static void test_timeout_aborts_registration_and_drops_rest(void **state)
{
	(void)state;
	struct t *t = t_new();
	line(t, 1, REGISTER("Anna"));
	line(t, 2, REGISTER("Ben"));
	cmdq_push_timeout(t->q);
	line(t, 2, "{\"command\":\"StartGame\"}");
	struct dispatch_result r = core_drain(t->core);
	assert_int_equal(r.entries, 3);
	assert_true(r.game_over);
	assert_true(cmdq_empty(t->q)); /* StartGame dropped: nobody acts after the end */
	assert_string_equal(t->log,
	                    "1:Config 2:Config 1:RegistrationAborted 2:RegistrationAborted");
	assert_string_equal(t->observed, "0/1/-1 0/2/-1 2/0/-1");
	t_free(t);
}

static void test_lost_connection_tells_game(void **state)
{
	(void)state;
	struct t *t = t_new();
	line(t, 1, REGISTER("Anna"));
	line(t, 2, REGISTER("Ben"));
	line(t, 1, "{\"command\":\"StartGame\"}");
	core_drain(t->core);
	/* selection waits for player 0; its connection drops */
	assert_int_equal(game_waiting_for(t->game), 0);
	t->log[0] = '\0';
	cmdq_push_lost(t->q, 1, false);
	cmdq_push_lost(t->q, 99, true); /* a stranger broke the framing */
	struct dispatch_result r = core_drain(t->core);
	assert_false(r.restart_timer);
	/* player 0 leaves at once (the game waited for it); Left goes to the
	 * others only, and the stranger's connection is closed */
	assert_non_null(strstr(t->log, "2:Left"));
	assert_null(strstr(t->log, "1:"));
	assert_non_null(strstr(t->log, "close:99"));
	assert_false(bcast_in_game(t->bcast, 0));
	assert_int_equal(game_waiting_for(t->game), 1);
	t_free(t);
}

static void test_entry_order_is_arrival_order(void **state)
{
	(void)state;
	struct t *t = t_new();
	line(t, 5, REGISTER("A"));
	line(t, 6, REGISTER("B"));
	line(t, 7, REGISTER("C"));
	core_drain(t->core);
	assert_int_equal(bcast_player_of(t->bcast, 5), 0);
	assert_int_equal(bcast_player_of(t->bcast, 6), 1);
	assert_int_equal(bcast_player_of(t->bcast, 7), 2);
	assert_string_equal(t->log, "5:Config 6:Config 7:Config");
	t_free(t);
}

/* Sessions with a grace: Anna (conn 1) and Ben (conn 2) register, Ben's
 * connection drops (away), the timeout aborts the registration. */
static struct t *ended_with_ben_away(void)
{
	struct t *t = t_new_with(true);
	line(t, 1, REGISTER("Anna"));
	line(t, 2, REGISTER("Ben"));
	cmdq_push_lost(t->q, 2, false);
	cmdq_push_timeout(t->q);
	line(t, 1, "{\"command\":\"StartGame\"}");
	struct dispatch_result r = core_drain(t->core);
	assert_true(r.game_over);
	assert_int_equal(r.entries, 4);
	assert_true(cmdq_empty(t->q)); /* StartGame dropped, as without sessions */
	assert_string_equal(t->log, "1:Config 1:Session 2:Config 2:Session 1:RegistrationAborted");
	t->log[0] = '\0';
	t->observed[0] = '\0';
	return t;
}

#define RECONNECT(c)  "{\"command\":\"Reconnect\",\"secret\":\"" c c c c c c c c "\"}"
#define SECRET_OF_BEN "bbbbbbbb"

/* After the end (sessions): the game changes no more; a Reconnect of the
 * player who missed the end gets the history (ending with the end) and its
 * connection closes; what it pipelined behind is dropped; it may come
 * back once more. Every entry of a drain after the end is applied. */
static void test_after_the_end(void **state)
{
	(void)state;
	struct t *t = ended_with_ben_away();
	assert_false(session_missed_end(core_sessions(t->core), 0));
	assert_true(session_missed_end(core_sessions(t->core), 1));
	line(t, 3, REGISTER("Late"));
	cmdq_push_timeout(t->q);
	cmdq_push_lost(t->q, 3, false);
	line(t, 4, RECONNECT(SECRET_OF_BEN));
	line(t, 4, "{\"command\":\"Leave\"}");
	struct dispatch_result r = core_drain(t->core);
	assert_int_equal(r.entries, 5);
	assert_true(r.game_over);
	assert_string_equal(t->log, "3:CommandFailed(the game is over) "
	                            "4:Config 4:Session 4:RegistrationAborted close:4");
	assert_string_equal(t->observed, "0/3/-1 2/0/-1 3/3/-1 4/4/-1 0/4/-1");
	assert_false(session_missed_end(core_sessions(t->core), 1));
	assert_int_equal(bcast_comm_of(t->bcast, 1), 0); /* the seat is free again */
	assert_int_equal(game_player_count(t->game), 2);
	t->log[0] = '\0';
	line(t, 5, RECONNECT(SECRET_OF_BEN));
	line(t, 6, RECONNECT("cccccccc"));
	core_drain(t->core);
	assert_string_equal(t->log, "5:Config 5:Session 5:RegistrationAborted close:5 "
	                            "6:CommandFailed(Reconnect: wrong secret)");
	t_free(t);
}

/* A player whose grace ran out cannot come back, also while the game, not
 * waiting for it, has not removed it yet. */
static void test_no_reconnect_after_grace(void **state)
{
	(void)state;
	struct t *t = t_new_with(true);
	line(t, 1, REGISTER("Anna"));
	line(t, 2, REGISTER("Ben"));
	line(t, 1, "{\"command\":\"StartGame\"}");
	cmdq_push_lost(t->q, 2, false);
	cmdq_push_grace_over(t->q, 1);
	core_drain(t->core);
	assert_int_equal(game_waiting_for(t->game), 0); /* Anna selects */
	assert_true(bcast_in_game(t->bcast, 1));
	t->log[0] = '\0';
	line(t, 3, RECONNECT(SECRET_OF_BEN));
	core_drain(t->core);
	assert_string_equal(t->log, "3:CommandFailed(Reconnect: player 1's grace is over)");
	t_free(t);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

static bool recorded_tap(void *ctx, const struct cmdq_entry *e, int player, bool recorded)
{
	(void)e;
	(void)player;
	*(int *)ctx += recorded;
	return true;
}

/* A player's failures beyond the budget are answered, neither recorded
 * nor kept in its history; a stranger's are never. A new wait renews the
 * budget. */
static void test_failure_budget(void **state)
{
	(void)state;
	t_budget = 3;
	struct t *t = t_new_with(true);
	t_budget = 0;
	int recorded = 0;
	struct dispatch_hooks hooks = {.record = recorded_tap, .ctx = &recorded};
	core_set_hooks(t->core, &hooks);
	line(t, 1, REGISTER("Anna"));
	line(t, 2, REGISTER("Ben"));
	line(t, 1, "{\"command\":\"StartGame\"}");
	core_drain(t->core);
	assert_int_equal(recorded, 3);
	for (int i = 0; i < 10; i++) {
		line(t, 2, "{\"command\":\"EndTurn\"}"); /* Ben: Anna selects */
		line(t, 3, "nonsense");                  /* a stranger */
		line(t, 3, RECONNECT("cccccccc"));
	}
	cmdq_push_lost(t->q, 3, false);
	t->log[0] = '\0';
	core_drain(t->core);
	assert_int_equal(count(t->log, "2:CommandFailed"), 10); /* all answered */
	assert_int_equal(count(t->log, "3:CommandFailed"), 20);
	assert_int_equal(recorded, 3 + 3);
	/* Ben comes back: his history holds the 3 recorded failures only */
	cmdq_push_lost(t->q, 2, false);
	line(t, 4, RECONNECT(SECRET_OF_BEN));
	t->log[0] = '\0';
	core_drain(t->core);
	assert_int_equal(count(t->log, "4:CommandFailed"), 3);
	assert_int_equal(recorded, 3 + 3 + 2);
	/* Anna's selection times out: Ben's wait, a whole budget again */
	cmdq_push_timeout(t->q);
	core_drain(t->core);
	assert_int_equal(game_waiting_for(t->game), 1);
	assert_int_equal(recorded, 3 + 3 + 2 + 1);
	for (int i = 0; i < 10; i++)
		line(t, 4, "{\"command\":\"EndTurn\"}");
	core_drain(t->core);
	assert_int_equal(recorded, 3 + 3 + 2 + 1 + 3);
	t_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_player_resolved_when_dispatched),
	        cmocka_unit_test(test_bad_line_answers_sender_only),
	        cmocka_unit_test(test_queue_growth_keeps_messages),
	        cmocka_unit_test(test_more_from_behind_the_front),
	        cmocka_unit_test(test_timeout_aborts_registration_and_drops_rest),
	        cmocka_unit_test(test_lost_connection_tells_game),
	        cmocka_unit_test(test_entry_order_is_arrival_order),
	        cmocka_unit_test(test_after_the_end),
	        cmocka_unit_test(test_failure_budget),
	        cmocka_unit_test(test_no_reconnect_after_grace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
