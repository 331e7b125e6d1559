/*
 * Unit tests for the broadcaster: every routing rule, observed through a
 * sink that records "comm:Event" for each delivery ("(p):Event" for player p
 * without a connection), "join:p@comm", "left:p@comm" and "close:comm" for
 * the calls that tell it who joined and what to close. No sockets.
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

#include "contract.h"
#include "sink_log.h"

struct rec {
	char log[SINK_LOG_SIZE]; /* first: the sink_log */
	int encodes;
	int comm_of[64]; /* as the joined calls said */
};

static void rec_encode(void *ctx, const struct game_event *ev)
{
	(void)ev;
	((struct rec *)ctx)->encodes++;
}

/* The player named with a delivery is the one on the connection, as the
 * joined calls told the sink (never a lookup in the broadcaster). */
static void rec_send(void *ctx, int comm_id, int player, const struct game_event *ev)
{
	struct rec *r = ctx;
	char item[64];
	if (player >= 0 && comm_id > 0)
		assert_int_equal(comm_id, r->comm_of[player]);
	if (comm_id > 0)
		snprintf(item, sizeof item, "%d:%s", comm_id, game_event_name(ev->type));
	else
		snprintf(item, sizeof item, "(%d):%s", player, game_event_name(ev->type));
	sink_log_add(r, item);
}

static void rec_joined(void *ctx, int comm_id, int player)
{
	struct rec *r = ctx;
	r->comm_of[player] = comm_id;
	sink_log_joined(r, comm_id, player);
}

static struct bcast *new_bcast(struct rec *r)
{
	memset(r, 0, sizeof *r);
	return bcast_new((struct bcast_sink){.encode = rec_encode,
	                                     .send = rec_send,
	                                     .joined = rec_joined,
	                                     .left = sink_log_left,
	                                     .close = sink_log_close,
	                                     .ctx = r});
}

static struct game_event *push(struct game_event_list *l, enum game_event_type t, int to)
{
	return game_event_list_push(l, t, to);
}

/* Players 0, 1, 2 on connections 11, 12, 13 (joined out of order); the
 * sink is told each join as it happens. */
static struct bcast *three_players(struct rec *r)
{
	struct bcast *b = new_bcast(r);
	bcast_join(b, 2, 13);
	bcast_join(b, 0, 11);
	bcast_join(b, 1, 12);
	assert_string_equal(r->log, "join:2@13 join:0@11 join:1@12");
	r->log[0] = '\0';
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
	assert_string_equal(r.log, "11:Left 12:Left 13:Left left:1@12 11:NextRound 13:NextRound");
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
	/* player 2 gets its events without a connection (for the session
	 * layer to keep), and leaves without one */
	assert_string_equal(r.log, "11:NextRound 12:NextRound (2):NextRound (2):ActNow "
	                           "11:Left 12:Left (2):Left left:2@0");
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
	assert_string_equal(r.log, "close:42");
	bcast_free(b);
}

/* A player without a connection comes back on a new one: the sink is told,
 * and the player's events go there. */
static void test_rejoin_and_set_away(void **state)
{
	(void)state;
	struct rec r;
	struct bcast *b = three_players(&r);
	assert_int_equal(bcast_conn_lost(b, 12), 1);
	bcast_rejoin(b, 1, 22);
	assert_int_equal(bcast_player_of(b, 22), 1);
	assert_int_equal(bcast_comm_of(b, 1), 22);
	bcast_set_away(b, 0);
	bcast_set_away(b, 7); /* no such player: nothing */
	struct game_event_list l;
	game_event_list_init(&l);
	push(&l, GEV_NEXT_ROUND, GEV_TO_ALL);
	bcast_route(b, 0, &l);
	assert_string_equal(r.log, "join:1@22 (0):NextRound 22:NextRound 13:NextRound");
	game_event_list_free(&l);
	bcast_free(b);
}

static void test_many_players_grow(void **state)
{
	(void)state;
	struct rec r;
	struct bcast *b = new_bcast(&r);
	for (int p = 0; p < 40; p++)
		bcast_join(b, p, 100 + p);
	r.log[0] = '\0';
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

/* Programming errors stop the program (asserts), not return quietly. */
static struct rec contract_rec;
static void join_negative(void)
{
	bcast_join(new_bcast(&contract_rec), -1, 5);
}
static void join_without_connection(void)
{
	bcast_join(new_bcast(&contract_rec), 0, 0);
}
static void join_twice(void)
{
	struct bcast *b = new_bcast(&contract_rec);
	bcast_join(b, 0, 5);
	bcast_join(b, 0, 6);
}
static void rejoin_connected(void)
{
	struct bcast *b = new_bcast(&contract_rec);
	bcast_join(b, 0, 5);
	bcast_rejoin(b, 0, 6);
}
static void close_no_connection(void)
{
	bcast_close_conn(new_bcast(&contract_rec), 0);
}
static void sink_without_send(void)
{
	bcast_new((struct bcast_sink){0});
}

static void test_contracts(void **state)
{
	(void)state;
	SKIP_WITHOUT_ASSERTS();
	assert_true(dies(join_negative));
	assert_true(dies(join_without_connection));
	assert_true(dies(join_twice));
	assert_true(dies(rejoin_connected));
	assert_true(dies(close_no_connection));
	assert_true(dies(sink_without_send));
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
	        cmocka_unit_test(test_rejoin_and_set_away),
	        cmocka_unit_test(test_contracts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
