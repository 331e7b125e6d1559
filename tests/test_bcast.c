/*
 * Unit tests for the broadcaster: every routing rule, observed through a
 * sink that records "comm:Event" for each delivery and "close:comm" for
 * each connection told to close. No sockets.
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

struct rec {
	char log[2048];
	int encodes;
};

static void rec_add(struct rec *r, const char *item)
{
	size_t n = strlen(r->log);
	snprintf(r->log + n, sizeof r->log - n, "%s%s", n ? " " : "", item);
}

static void rec_encode(void *ctx, const struct game_event *ev)
{
	(void)ev;
	((struct rec *)ctx)->encodes++;
}

static void rec_send(void *ctx, int comm_id, const struct game_event *ev)
{
	char item[64];
	snprintf(item, sizeof item, "%d:%s", comm_id, game_event_name(ev->type));
	rec_add(ctx, item);
}

static void rec_close(void *ctx, int comm_id)
{
	char item[32];
	snprintf(item, sizeof item, "close:%d", comm_id);
	rec_add(ctx, item);
}

static struct bcast *new_bcast(struct rec *r)
{
	memset(r, 0, sizeof *r);
	return bcast_new((struct bcast_sink){
	        .encode = rec_encode, .send = rec_send, .close = rec_close, .ctx = r});
}

static struct game_event *push(struct game_event_list *l, enum game_event_type t, int to)
{
	return game_event_list_push(l, t, to);
}

/* Players 0, 1, 2 on connections 11, 12, 13 (joined out of order). */
static struct bcast *three_players(struct rec *r)
{
	struct bcast *b = new_bcast(r);
	bcast_join(b, 2, 13);
	bcast_join(b, 0, 11);
	bcast_join(b, 1, 12);
	return b;
}

static void test_to_all_in_ascending_player_id(void **state)
{
	(void)state;
	struct rec r;
	struct bcast *b = three_players(&r);
	struct game_event_list l;
	game_event_list_init(&l);
	push(&l, GEV_NEXT_ROUND, GEV_TO_ALL);
	bcast_route(b, 12, &l);
	assert_string_equal(r.log, "11:NextRound 12:NextRound 13:NextRound");
	assert_int_equal(r.encodes, 1);
	game_event_list_free(&l);
	bcast_free(b);
}

static void test_to_sender_also_unregistered(void **state)
{
	(void)state;
	struct rec r;
	struct bcast *b = three_players(&r);
	struct game_event_list l;
	game_event_list_init(&l);
	push(&l, GEV_COMMAND_FAILED, GEV_TO_SENDER);
	bcast_route(b, 99, &l); /* a stranger's bad line */
	bcast_route(b, 12, &l); /* a player's */
	bcast_route(b, 0, &l);  /* no sender (a timeout): nobody */
	assert_string_equal(r.log, "99:CommandFailed 12:CommandFailed");
	game_event_list_free(&l);
	bcast_free(b);
}

static void test_to_one_player(void **state)
{
	(void)state;
	struct rec r;
	struct bcast *b = three_players(&r);
	struct game_event_list l;
	game_event_list_init(&l);
	push(&l, GEV_ACT_NOW, 2);
	push(&l, GEV_CARD_DRAWN, 0);
	push(&l, GEV_ACT_NOW, 7); /* no such player: nobody */
	bcast_route(b, 11, &l);
	assert_string_equal(r.log, "13:ActNow 11:CardDrawn");
	game_event_list_free(&l);
	bcast_free(b);
}

static void test_left_is_last_then_close(void **state)
{
	(void)state;
	struct rec r;
	struct bcast *b = three_players(&r);
	struct game_event_list l;
	game_event_list_init(&l);
	struct game_event *ev = push(&l, GEV_LEFT, GEV_TO_ALL);
	ev->arg[0] = 1;
	ev->nargs = 1;
	push(&l, GEV_NEXT_ROUND, GEV_TO_ALL);
	push(&l, GEV_ACT_NOW, 1); /* p left: nothing more for p */
	bcast_route(b, 12, &l);
	assert_string_equal(r.log, "11:Left 12:Left 13:Left close:12 11:NextRound 13:NextRound");
	assert_false(bcast_in_game(b, 1));
	assert_int_equal(bcast_player_of(b, 12), -1);
	assert_int_equal(bcast_comm_of(b, 1), 0);
	assert_int_equal(bcast_comm_of(b, 2), 13);
	game_event_list_free(&l);
	bcast_free(b);
}

static void test_lost_connection_skipped_until_left(void **state)
{
	(void)state;
	struct rec r;
	struct bcast *b = three_players(&r);
	assert_int_equal(bcast_conn_lost(b, 13), 2);
	assert_int_equal(bcast_conn_lost(b, 13), -1); /* reported once */
	assert_int_equal(bcast_conn_lost(b, 55), -1); /* a stranger */
	assert_true(bcast_in_game(b, 2));             /* until its Left */
	struct game_event_list l;
	game_event_list_init(&l);
	push(&l, GEV_NEXT_ROUND, GEV_TO_ALL);
	push(&l, GEV_ACT_NOW, 2);
	struct game_event *ev = push(&l, GEV_LEFT, GEV_TO_ALL);
	ev->arg[0] = 2;
	ev->nargs = 1;
	bcast_route(b, 0, &l);
	/* no delivery and no close for the lost connection */
	assert_string_equal(r.log, "11:NextRound 12:NextRound 11:Left 12:Left");
	assert_false(bcast_in_game(b, 2));
	game_event_list_free(&l);
	bcast_free(b);
}

static void test_close_conn_and_lookups(void **state)
{
	(void)state;
	struct rec r;
	struct bcast *b = three_players(&r);
	assert_int_equal(bcast_player_of(b, 11), 0);
	assert_int_equal(bcast_player_of(b, 13), 2);
	assert_int_equal(bcast_player_of(b, 0), -1);
	assert_int_equal(bcast_comm_of(b, 1), 12);
	assert_int_equal(bcast_comm_of(b, -1), 0);
	assert_int_equal(bcast_comm_of(b, 3), 0);
	bcast_close_conn(b, 42);
	bcast_close_conn(b, 0); /* none: no call */
	assert_string_equal(r.log, "close:42");
	bcast_free(b);
}

static void test_many_players_grow(void **state)
{
	(void)state;
	struct rec r;
	struct bcast *b = new_bcast(&r);
	for (int p = 0; p < 40; p++)
		bcast_join(b, p, 100 + p);
	assert_int_equal(bcast_player_of(b, 139), 39);
	assert_int_equal(bcast_comm_of(b, 20), 120);
	struct game_event_list l;
	game_event_list_init(&l);
	push(&l, GEV_GAME_END, GEV_TO_ALL);
	bcast_route(b, 0, &l);
	assert_int_equal(strncmp(r.log, "100:GameEnd 101:GameEnd", 23), 0);
	assert_non_null(strstr(r.log, "138:GameEnd 139:GameEnd"));
	game_event_list_free(&l);
	bcast_free(b);
}

static void fake_secret(void *ctx, int player, char *hex)
{
	(void)ctx;
	memset(hex, 'a' + player, PROTO_SECRET_HEX);
	hex[PROTO_SECRET_HEX] = '\0';
}

/* Sessions: Session right after Config to that player alone; the history
 * (also what was routed while away) is resent on rejoin; secrets. */
static void test_sessions_history_and_rejoin(void **state)
{
	(void)state;
	struct rec r;
	memset(&r, 0, sizeof r);
	struct bcast *b = bcast_new((struct bcast_sink){.encode = rec_encode,
	                                                .send = rec_send,
	                                                .close = rec_close,
	                                                .ctx = &r});
	bcast_enable_sessions(b, fake_secret, NULL);
	bcast_join(b, 0, 11);
	bcast_join(b, 1, 12);
	struct game_event_list l;
	game_event_list_init(&l);
	push(&l, GEV_CONFIG, 0);
	push(&l, GEV_ACT_NOW, 0);
	bcast_route(b, 11, &l);
	assert_string_equal(r.log, "11:Config 11:Session 11:ActNow");
	assert_int_equal(bcast_conn_lost(b, 11), 0);
	game_event_list_clear(&l);
	push(&l, GEV_NEXT_ROUND, GEV_TO_ALL);
	bcast_route(b, 0, &l);
	r.log[0] = '\0';
	char sec[PROTO_SECRET_HEX + 1];
	fake_secret(NULL, 0, sec);
	assert_int_equal(bcast_find_secret(b, sec, strlen(sec)), 0);
	assert_int_equal(bcast_find_secret(b, "x", 1), -1);
	assert_false(bcast_rejoin(b, 1, 20)); /* connected */
	assert_true(bcast_rejoin(b, 0, 21));
	assert_string_equal(r.log, "21:Config 21:Session 21:ActNow 21:NextRound");
	assert_int_equal(bcast_player_of(b, 21), 0);
	game_event_list_free(&l);
	bcast_free(b);
}

/* Sessions: who missed the end of the game (no connection when it was
 * routed) until a rejoin delivers the history; set away after the end (a
 * resume of a finished game) counts as missed; a player who left never. */
static void test_sessions_missed_end(void **state)
{
	(void)state;
	struct rec r;
	memset(&r, 0, sizeof r);
	struct bcast *b = bcast_new((struct bcast_sink){
	        .send = rec_send, .close = rec_close, .ctx = &r});
	bcast_note_end(b); /* without sessions: nothing */
	bcast_join(b, 0, 11);
	assert_false(bcast_missed_end(b, 0));
	bcast_enable_sessions(b, fake_secret, NULL);
	bcast_join(b, 1, 12);
	bcast_join(b, 2, 13);
	assert_int_equal(bcast_conn_lost(b, 12), 1);
	assert_int_equal(bcast_conn_lost(b, 13), 2);
	struct game_event_list l;
	game_event_list_init(&l);
	push(&l, GEV_LEFT, GEV_TO_ALL)->arg[0] = 2;
	push(&l, GEV_GAME_END, GEV_TO_ALL);
	bcast_route(b, 0, &l);
	bcast_note_end(b);
	assert_false(bcast_missed_end(b, 0)); /* connected at the end */
	assert_true(bcast_missed_end(b, 1));  /* away */
	assert_false(bcast_missed_end(b, 2)); /* left */
	assert_false(bcast_missed_end(b, 7)); /* no such player */
	r.log[0] = '\0';
	assert_true(bcast_rejoin(b, 1, 21));
	assert_string_equal(r.log, "21:Left 21:GameEnd");
	assert_false(bcast_missed_end(b, 1));
	bcast_set_away(b, 0);
	bcast_note_end(b);
	assert_true(bcast_missed_end(b, 0));
	assert_false(bcast_missed_end(b, 1)); /* on 21 */
	game_event_list_free(&l);
	bcast_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_to_all_in_ascending_player_id),
	        cmocka_unit_test(test_to_sender_also_unregistered),
	        cmocka_unit_test(test_to_one_player),
	        cmocka_unit_test(test_left_is_last_then_close),
	        cmocka_unit_test(test_lost_connection_skipped_until_left),
	        cmocka_unit_test(test_close_conn_and_lookups),
	        cmocka_unit_test(test_many_players_grow),
	        cmocka_unit_test(test_sessions_history_and_rejoin),
	        cmocka_unit_test(test_sessions_missed_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
