/*
 * Unit tests of the terminal client's parts without a terminal: the model
 * as a watcher's (no name), the state in app.c (log, turn, status), the
 * menus of what is possible now (menu.c) and the recorded games (replay.c).
 * The streams are the recorded bot games of testdata/ (see tests/test_model.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "command.h"
#include "menu.h"
#include "model.h"
#include "replay.h"
#include "toolutil.h" /* read_file */

static char *load(const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", SOPRA_MODEL_TESTDATA, name);
	char *buf = read_file(path, NULL);
	assert_non_null(buf);
	return buf;
}

static bool is_private(const char *line)
{
	return strstr(line, "\"ActNow\"") || strstr(line, "\"Characters\"") ||
	       strstr(line, "\"CommandFailed\"");
}

/* A watcher's model (no name) folds the public events of a whole game to
 * the same board as the player's model. */
static void check_watcher(const char *file, bool revised)
{
	char *text = load(file);
	struct app pa, wa;
	app_init(&pa, APP_PLAY, "B0", revised);
	app_init(&wa, APP_WATCH, NULL, revised);
	for (char *p = text; *p;) {
		char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char *line = strndup(p, len);
		assert_non_null(line);
		if (len && !strstr(line, "\"message\":\"register first\""))
			assert_true(app_feed(&pa, line, len) >= 0);
		if (len && !is_private(line) && app_feed(&wa, line, len) < 0)
			fail_msg("%s: %s", line, wa.status);
		free(line);
		p += len + (eol ? 1 : 0);
	}
	const struct model *a = &pa.m, *b = &wa.m;
	assert_int_equal(b->me, -1);
	assert_int_equal(a->result, b->result);
	assert_int_equal(a->round, b->round);
	assert_int_equal(a->food, b->food);
	assert_int_equal(a->moral, b->moral);
	assert_int_equal(a->waste, b->waste);
	assert_int_equal(a->tokens, b->tokens);
	assert_int_equal(a->children, b->children);
	for (int l = 0; l < a->nlocs; l++)
		for (int e = 0; e < a->locs[l].entrances; e++) {
			assert_int_equal(a->locs[l].zombies[e], b->locs[l].zombies[e]);
			assert_int_equal(a->locs[l].barricades[e], b->locs[l].barricades[e]);
		}
	for (int c = 0; c < a->nchars; c++) {
		assert_int_equal(a->chars[c].alive, b->chars[c].alive);
		assert_int_equal(a->chars[c].loc, b->chars[c].loc);
		assert_int_equal(a->chars[c].wounds, b->chars[c].wounds);
	}
	for (int k = 0; k < a->ncards; k++)
		assert_int_equal(a->cards[k].holder, b->cards[k].holder);
	assert_false(pa.broken || wa.broken);
	assert_true(wa.nlog > 100);
	app_free(&pa);
	app_free(&wa);
	free(text);
}

static void test_watcher_base(void **state)
{
	(void)state;
	check_watcher("bot_base_2p.ndjson", false);
}

static void test_watcher_revised(void **state)
{
	(void)state;
	check_watcher("bot_revised_2p.ndjson", true);
}

/* Fold file for B0 up to its n-th ActNow. */
static void fold_to_act_now(struct app *a, const char *file, bool revised, int n)
{
	char *text = load(file);
	app_init(a, APP_PLAY, "B0", revised);
	int seen = 0;
	for (char *p = text; *p && seen < n;) {
		char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char *line = strndup(p, len);
		assert_non_null(line);
		if (len && !strstr(line, "\"message\":\"register first\"") &&
		    app_feed(a, line, len) == MEV_ACT_NOW)
			seen++;
		free(line);
		p += len + (eol ? 1 : 0);
	}
	free(text);
	assert_int_equal(seen, n);
}

/* The menus at B0's first turn: everybody is in the colony. */
static void test_menus_first_turn(void **state)
{
	(void)state;
	static struct app a;
	static struct menu mn;
	fold_to_act_now(&a, "bot_base_2p.ndjson", false, 1);
	const struct model *m = &a.m;
	const struct game_cmd_list *legal = &a.cmds.legal;
	assert_true(m->my_turn);
	assert_int_equal(a.turn, m->me);
	assert_string_equal(a.status, "Your turn: choose an action (? for help)");
	/* nobody stands where a pile is: no Search */
	assert_int_equal(menu_build(m, legal, CMD_SEARCH, &mn), 0);
	assert_int_equal(menu_build(m, legal, CMD_START_GAME, &mn), 0);
	assert_int_equal(menu_build(m, legal, CMD_SELECT_CHARACTERS, &mn), 0);
	assert_int_equal(menu_build(m, legal, CMD_END_TURN, &mn), 1);
	char line[256];
	assert_int_equal(client_cmd_line(&mn.items[0].cmd, false, line, sizeof line), 22);
	assert_string_equal(line, "{\"command\":\"EndTurn\"}\n");
	assert_string_equal(mn.items[0].label, "End your turn");
	/* moves: each own character to every other location with room, base
	 * with fuel false (and a fuel variant when holding FUEL) */
	int n = menu_build(m, legal, CMD_MOVE, &mn), plain = 0;
	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(mn.items[i].cmd.type, CMD_MOVE);
		client_cmd_line(&mn.items[i].cmd, false, line, sizeof line);
		plain += strstr(line, "\"fuel\":false") != NULL;
		assert_non_null(strstr(mn.items[i].label, "Colony -> "));
	}
	assert_int_equal(plain, 2 * (m->nlocs - 1));
	/* contributions fit the crisis, every card is ours */
	n = menu_build(m, legal, CMD_CONTRIBUTE_CARD, &mn);
	for (int i = 0; i < n; i++) {
		int k = model_find_card(m, mn.items[i].cmd.card);
		assert_true(k >= 0);
		assert_int_equal(m->cards[k].holder, m->me);
		assert_true(model_crisis_accepts(m, m->cards[k].type));
	}
	/* an attack needs a zombie at an entrance of the colony and a die */
	n = menu_build(m, legal, CMD_ATTACK, &mn);
	for (int i = 0; i < n; i++) {
		int c = model_find_char(m, mn.items[i].cmd.character);
		assert_true(c >= 0);
		assert_int_equal(m->chars[c].owner, m->me);
		assert_true(m->locs[m->chars[c].loc].zombies[mn.items[i].cmd.entrance] > 0);
	}
	/* sent EndTurn: not our turn any more, no menus */
	struct cmd end = {.type = CMD_END_TURN};
	app_sent(&a, &end, "End your turn");
	assert_false(a.m.my_turn);
	assert_int_equal(menu_build(m, legal, CMD_MOVE, &mn), 0);
	assert_int_equal(menu_build(m, legal, CMD_END_TURN, &mn), 0);
	app_free(&a);
}

static void test_menu_keys(void **state)
{
	(void)state;
	int n;
	const enum cmd_type *kinds = client_menu_order(&n);
	assert_int_equal(n, 12);
	for (int i = 0; i < n; i++)
		assert_int_equal(menu_kind_of_key(client_command(kinds[i])->key), kinds[i]);
	assert_int_equal(menu_kind_of_key('?'), -1);
	assert_int_equal(menu_kind_of_key('m'), CMD_MOVE);
	assert_int_equal(menu_kind_of_key('p'), CMD_SELECT_CHARACTERS);
}

static void test_replay_botlog(void **state)
{
	(void)state;
	struct replay r;
	memset(&r, 0, sizeof r);
	const char *log =
	        "# sopra-bot --port 1 --seed 2 --name Zo\xc3\xab --rules revised --invalid 0\n"
	        "> {\"command\":\"Register\",\"playerName\":\"Zo\\xc3\\xab\"}\\n\n"
	        "< {\"event\":\"Player\",\"player\":0,\"playerName\":\"Zo\\xc3\\xab \\\\x41\"}\n"
	        "! closed\n";
	assert_int_equal(replay_parse_botlog(&r, log), 0);
	assert_string_equal(r.name, "Zo\xc3\xab");
	assert_true(r.revised);
	assert_int_equal(r.n, 1);
	assert_string_equal(
	        r.lines[0],
	        "{\"event\":\"Player\",\"player\":0,\"playerName\":\"Zo\xc3\xab \\\\x41\"}");
	replay_free(&r);
}

static void test_replay_journal_lines(void **state)
{
	(void)state;
	struct replay r;
	memset(&r, 0, sizeof r);
	const char *out = "0\t{\"event\":\"Config\",\"config\":\"{}\"}\n"
	                  "1\t{\"event\":\"Config\",\"config\":\"{}\"}\n"
	                  "-\t{\"event\":\"CommandFailed\",\"message\":\"x\"}\n"
	                  "0\t{\"event\":\"ZombieSpawned\",\"locationId\":2,\"entrance\":0}\n"
	                  "1\t{\"event\":\"ZombieSpawned\",\"locationId\":2,\"entrance\":0}\n"
	                  "0\t{\"event\":\"ZombieSpawned\",\"locationId\":2,\"entrance\":0}\n"
	                  "1\t{\"event\":\"ZombieSpawned\",\"locationId\":2,\"entrance\":0}\n"
	                  "0\t{\"event\":\"ActNow\"}\n"
	                  "0\t{\"event\":\"NextRound\",\"round\":2}\n"
	                  "1\t{\"event\":\"NextRound\",\"round\":2}\n";
	assert_int_equal(replay_parse_journal_lines(&r, out), 0);
	assert_int_equal(r.n, 4); /* Config, two spawns, NextRound */
	assert_non_null(strstr(r.lines[1], "ZombieSpawned"));
	assert_non_null(strstr(r.lines[2], "ZombieSpawned"));
	assert_non_null(strstr(r.lines[3], "NextRound"));
	assert_int_equal(replay_round_step(&r, 0, 1), 4);
	assert_int_equal(replay_round_step(&r, 4, -1), 0);
	replay_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_watcher_base),
	        cmocka_unit_test(test_watcher_revised),
	        cmocka_unit_test(test_menus_first_turn),
	        cmocka_unit_test(test_menu_keys),
	        cmocka_unit_test(test_replay_botlog),
	        cmocka_unit_test(test_replay_journal_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
