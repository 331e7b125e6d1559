/*
 * Unit tests of the bots (bots/): whole games in one process through the
 * server's queue, dispatcher and broadcaster (bot_table.h), each bot
 * deciding from the client model its own events built.
 *
 *   - no strategy ever sends a command the server refuses: hundreds of
 *     games of random, greedy and search bots (a small iteration budget;
 *     the budget does not change which commands are legal), on every
 *     example configuration, 1 to 4 players, in both editions;
 *   - a search bot with a fixed iteration budget and seed plays the same
 *     game twice, byte for byte, and another seed plays another game;
 *   - the board facts the strategies build on (food need, the zombies of
 *     a colony phase) and the evaluation's order of simple states.
 *
 * SOPRA_TEST_GAMES (default 12) sets the games per configuration, edition
 * and strategy.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot_board.h"
#include "bot_eval.h"
#include "bot_table.h"
#include "strategy.h"
#include "sopra/config.h"
#include "sopra/game_view.h"

static const char *const config_names[] = {"example.json", "example-barricades.json",
                                           "example-zombies.json"};
#define NCONFIGS (sizeof config_names / sizeof config_names[0])
static struct config *configs[NCONFIGS];

static int setup(void **state)
{
	(void)state;
	for (size_t i = 0; i < NCONFIGS; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/resources/%s", SOPRA_SOURCE_DIR, config_names[i]);
		struct config_errors e = {0};
		configs[i] = config_load(path, &e);
		if (!configs[i])
			fail_msg("%s: %s", path, e.n ? e.msgs[0] : "?");
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < NCONFIGS; i++)
		config_free(configs[i]);
	return 0;
}

static int games_per_cell(void)
{
	const char *env = getenv("SOPRA_TEST_GAMES");
	return env && atoi(env) > 0 ? atoi(env) : 12;
}

static struct table_seat seat(enum strategy_kind kind, uint64_t seed, long iterations)
{
	return (struct table_seat){
	        .strategy = {.kind = kind, .seed = seed, .iterations = iterations}};
}

/* Play one game; fail on a harness error or any refused command. */
static void play(const struct config *cfg, enum game_rules rules, int64_t seed, int n,
                 const struct table_seat *seats, FILE *transcript, struct table_result *r)
{
	char err[800];
	if (table_play(cfg, rules, seed, n, seats, transcript, r, err, sizeof err) != 0)
		fail_msg("%s, seed %lld, %d players: %s", game_rules_name(rules), (long long)seed,
		         n, err);
	if (r->failed != 0)
		fail_msg("%s, seed %lld, %d players: the server refused %ld of the bots' commands",
		         game_rules_name(rules), (long long)seed, n, r->failed);
	assert_non_null(r->end_reason);
}

static void never_refused(enum game_rules rules)
{
	int games = games_per_cell();
	long played = 0, won = 0, commands = 0;
	const enum strategy_kind kinds[] = {STRATEGY_RANDOM, STRATEGY_GREEDY, STRATEGY_SEARCH};
	for (size_t c = 0; c < NCONFIGS; c++)
		for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
			for (int i = 0; i < games; i++) {
				int n = 1 + i % (configs[c]->max_players < 4
				                         ? configs[c]->max_players
				                         : 4);
				struct table_seat seats[4];
				for (int p = 0; p < n; p++) /* mixed teams now and then */
					seats[p] = seat((i + p) % 3 == 0 ? kinds[k]
					                                 : kinds[(k + p) % 3],
					                (uint64_t)(100 * i + p), 6);
				struct table_result r;
				play(configs[c], rules, 7000 + i, n, seats, NULL, &r);
				played++;
				won += r.won;
				commands += r.commands;
			}
	printf("%s: %ld games, %ld won, %ld commands, none refused\n", game_rules_name(rules),
	       played, won, commands);
	assert_true(played >= 100);
}

static void test_never_refused_base(void **state)
{
	(void)state;
	never_refused(RULES_BASE);
}

static void test_never_refused_revised(void **state)
{
	(void)state;
	never_refused(RULES_REVISED);
}

/* The lines the seats send in one game of three search bots. */
static char *transcript_of(enum game_rules rules, uint64_t bot_seed, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	assert_non_null(f);
	struct table_seat seats[3];
	for (int p = 0; p < 3; p++)
		seats[p] = seat(STRATEGY_SEARCH, bot_seed + (uint64_t)p, 40);
	struct table_result r;
	play(configs[0], rules, 4242, 3, seats, f, &r);
	fclose(f);
	assert_true(r.stats.iterations > 0);
	return buf;
}

static void test_search_reproducible(void **state)
{
	(void)state;
	for (int e = 0; e < 2; e++) {
		enum game_rules rules = e ? RULES_REVISED : RULES_BASE;
		size_t n1, n2, n3;
		char *a = transcript_of(rules, 11, &n1), *b = transcript_of(rules, 11, &n2);
		char *c = transcript_of(rules, 12, &n3);
		assert_true(n1 > 100);
		assert_int_equal(n1, n2);
		assert_memory_equal(a, b, n1);
		/* the bots' seed matters: another seed, another game */
		assert_true(n1 != n3 || memcmp(a, c, n1) != 0);
		free(a);
		free(b);
		free(c);
	}
}

/* ---- the board facts ------------------------------------------------------------ */

/* The view of player 0 at the first ActNow of a one-player game of cfg. */
static struct game_view *first_turn(const struct config *cfg, struct game **out)
{
	struct game *g = game_new(cfg, 1, RULES_BASE);
	struct game_event_list ev;
	game_event_list_init(&ev);
	struct cmd reg = {.type = CMD_REGISTER, .name = "t"}, start = {.type = CMD_START_GAME};
	game_apply(g, GAME_NO_PLAYER, &reg, &ev);
	game_apply(g, 0, &start, &ev);
	struct game_cmd_list l;
	game_cmd_list_init(&l);
	game_legal_commands(g, 0, &l);
	assert_int_equal(l.v[0].type, CMD_SELECT_CHARACTERS);
	game_apply(g, 0, &l.v[0], &ev);
	assert_int_equal(game_waiting_for(g), 0);
	game_cmd_list_free(&l);
	game_event_list_free(&ev);
	struct game_view *v = game_view_new(cfg);
	game_view_of(g, 0, v);
	*out = g;
	return v;
}

static void test_board_facts(void **state)
{
	(void)state;
	const struct config *cfg = configs[0]; /* 2 children, 4 zombies at the colony */
	struct game *g;
	struct game_view *v = first_turn(cfg, &g);
	int colony = cfg->colony;
	/* 2 children and 2 characters in the colony */
	assert_int_equal(bot_colony_people(v), 4);
	assert_int_equal(bot_food_need(v), 2);
	assert_int_equal(bot_zombie_arrivals(v, colony), 2);
	/* one zombie at each of the 4 entrances: 2 arrive, nobody dies */
	assert_int_equal(bot_zombie_deaths(v, colony, 2), 0);
	/* 12 more fill every entrance (3 each); the 13th kills, the 16th too */
	assert_int_equal(bot_zombie_deaths(v, colony, 8), 0);
	assert_int_equal(bot_zombie_deaths(v, colony, 9), 1);
	assert_int_equal(bot_zombie_deaths(v, colony, 12), 4);
	/* a barricade at a full entrance takes one arrival for a death */
	struct bot_gate gate;
	bot_gate_of(v, colony, &gate);
	gate.zombies[0] = 3;
	assert_int_equal(bot_gate_deaths(&gate, 1), 1);
	gate.zombies[0] = 2;
	gate.barricades[0] = 1;
	/* the 1st arrival breaks the barricade, the 5th fills the entrance
	 * again, the 9th kills (the others fill entrances 1 to 3) */
	assert_int_equal(bot_gate_deaths(&gate, 1), 0);
	assert_int_equal(bot_gate_deaths(&gate, 8), 0);
	assert_int_equal(bot_gate_deaths(&gate, 9), 1);
	/* nobody to die: no deaths however many come */
	gate.people = 0;
	assert_int_equal(bot_gate_deaths(&gate, 40), 0);
	game_view_free(v);
	game_free(g);
}

static void test_evaluation_order(void **state)
{
	(void)state;
	const struct config *cfg = configs[0];
	struct game *g;
	struct game_view *v = first_turn(cfg, &g);
	double base = bot_evaluate(v, 0);
	/* more morale is better, a starvation token worse, a zombie at a full
	 * colony entrance worse, more food better while the colony is short */
	v->moral++;
	assert_true(bot_evaluate(v, 0) > base);
	v->moral--;
	v->starvation++;
	assert_true(bot_evaluate(v, 0) < base);
	v->starvation--;
	int before = v->locations[cfg->colony].zombies[0];
	v->locations[cfg->colony].zombies[0] = 3;
	double crowded = bot_evaluate(v, 0);
	assert_true(crowded < base);
	v->locations[cfg->colony].zombies[0] = before;
	v->result = VIEW_WON;
	assert_true(bot_evaluate(v, 0) == BOT_EVAL_WON);
	v->result = VIEW_LOST;
	assert_true(bot_evaluate(v, 0) < crowded);
	game_view_free(v);
	game_free(g);
}

static void test_kind_names(void **state)
{
	(void)state;
	enum strategy_kind k;
	for (int i = STRATEGY_RANDOM; i <= STRATEGY_SEARCH; i++) {
		assert_true(strategy_kind_parse(strategy_kind_name((enum strategy_kind)i), &k));
		assert_int_equal(k, i);
	}
	assert_false(strategy_kind_parse("oracle", &k));
	assert_false(strategy_kind_parse("", &k));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_kind_names),
	        cmocka_unit_test(test_board_facts),
	        cmocka_unit_test(test_evaluation_order),
	        cmocka_unit_test(test_search_reproducible),
	        cmocka_unit_test(test_never_refused_base),
	        cmocka_unit_test(test_never_refused_revised),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
