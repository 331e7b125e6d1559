/*
 * Unit tests of the terminal client's parts without a terminal: the model
 * as a watcher's (no name), the state in app.c (log, turn, status), the
 * menus of what is possible now (menu.c), the recorded games (replay.c),
 * which player we are (Session, a name given twice), unknown events, the
 * edition hint and the kept session secret (rejoin.c).
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
#include <sys/stat.h>
#include <unistd.h>

#include "app.h"
#include "command.h"
#include "look.h"
#include "menu.h"
#include "model.h"
#include "pace.h"
#include "rejoin.h"
#include "replay.h"
#include "wrap.h"
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

/* Fold file for B0 up to the first event of type `type`. */
static void fold_to_event(struct app *a, const char *file, bool revised, int type)
{
	char *text = load(file);
	app_init(a, APP_PLAY, "B0", revised);
	int got = -1;
	for (char *p = text; *p && got != type;) {
		char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char *line = strndup(p, len);
		assert_non_null(line);
		if (len && !strstr(line, "\"message\":\"register first\""))
			got = app_feed(a, line, len);
		free(line);
		p += len + (eol ? 1 : 0);
	}
	free(text);
	assert_int_equal(got, type);
}

static int count_log(const struct app *a, const char *text)
{
	int n = 0;
	for (int i = 0; i < a->nlog; i++)
		n += strcmp(a->log[i], text) == 0;
	return n;
}

/* "Your turn" once per turn: the ActNow after each command is not logged
 * again; the others' turns get a marker before their first move. */
static void test_log_turn_markers(void **state)
{
	(void)state;
	static struct app a;
	fold_to_act_now(&a, "bot_base_2p.ndjson", false, 4); /* B0's 4th ActNow of round 1 */
	assert_int_equal(count_log(&a, "== Your turn =="), 1);
	assert_int_equal(count_log(&a, "Your turn"), 0);
	app_free(&a);
	fold_to_act_now(&a, "bot_base_2p.ndjson", false, 5); /* round 2 */
	assert_int_equal(count_log(&a, "== Your turn =="), 2);
	assert_int_equal(count_log(&a, "== B1's turn =="), 1);
	int marker = -1, first_move = -1;
	for (int i = 0; i < a.nlog; i++) {
		if (marker < 0 && strcmp(a.log[i], "== B1's turn ==") == 0)
			marker = i;
		if (first_move < 0 && strncmp(a.log[i], "B1 contributed", 14) == 0)
			first_move = i;
	}
	assert_int_equal(marker + 1, first_move);
	app_free(&a);
}

/* After a reconnect the history repeats the lines we had: the board is
 * folded again without a log line (turn markers included), then a note. */
static void test_rejoin_history_quiet(void **state)
{
	(void)state;
	static struct app a;
	fold_to_act_now(&a, "bot_base_2p.ndjson", false, 5); /* round 2, our turn */
	int nlog = a.nlog, nlines = a.nlines, marked = a.marked, round = a.m.round;
	char **lines = calloc((size_t)nlines, sizeof *lines);
	assert_non_null(lines);
	for (int i = 0; i < nlines; i++)
		lines[i] = strdup(a.lines[i]);
	app_rejoin(&a);
	assert_int_equal(a.nlog, nlog);
	for (int i = 0; i < nlines; i++)
		assert_true(app_feed(&a, lines[i], strlen(lines[i])) >= 0);
	char note[100];
	snprintf(note, sizeof note,
	         "-- back in the game: the server sent the %d lines we had again", nlines);
	assert_int_equal(a.nlog, nlog + 1);
	assert_string_equal(a.log[nlog], note);
	assert_int_equal(count_log(&a, "== Your turn =="), 2);
	assert_int_equal(count_log(&a, "== B1's turn =="), 1);
	assert_int_equal(a.marked, marked);
	assert_int_equal(a.m.round, round);
	assert_true(a.m.my_turn);
	assert_int_equal(a.nseen, 0);
	for (int i = 0; i < nlines; i++)
		free(lines[i]);
	free(lines);
	app_free(&a);
}

/* The pick menu shows each offered character's numbers and ability. */
static void test_pick_menu_notes(void **state)
{
	(void)state;
	static struct app a;
	static struct menu mn;
	fold_to_event(&a, "bot_base_2p.ndjson", false, MEV_CHARACTERS);
	assert_int_equal(menu_build(&a.m, &a.cmds.legal, CMD_SELECT_CHARACTERS, &mn), 6);
	assert_int_equal(mn.nnotes, 4);
	assert_string_equal(mn.notes[0],
	                    "David: attack 5+ search 2+ status 40; kill (y): at Colony "
	                    "with a die of 4+, kills up to 1 zombie at one entrance, "
	                    "once a round");
	assert_string_equal(mn.notes[1], "Felix: attack 4+ search 3+ status 60; no infection: an "
	                                 "attack rolls no infection die");
	assert_string_equal(mn.notes[2], "Eva: attack 3+ search 4+ status 50; heal (y): removes a "
	                                 "frostbite or a wound of someone here, once a round");
	assert_string_equal(mn.notes[3],
	                    "Ben: attack 4+ search 2+ status 20; feed (y): +1 food, once a round");
	/* other menus have no notes */
	assert_int_equal(menu_build(&a.m, &a.cmds.legal, CMD_MOVE, &mn), 0);
	assert_int_equal(mn.nnotes, 0);
	app_free(&a);
}

/* A look at a character, a location and the crisis, in words. */
static void test_look(void **state)
{
	(void)state;
	static struct app a;
	static struct look_list list;
	struct look_text t;
	fold_to_act_now(&a, "bot_base_2p.ndjson", false, 1);
	const struct model *m = &a.m;
	/* the crisis, 3 locations, our 2 characters, B1's 2, 2 not in play, 5 + 5 cards */
	assert_int_equal(look_list_build(m, &list), 1 + 3 + 6 + 10);
	assert_int_equal(list.items[0].kind, LOOK_CRISIS);
	assert_string_equal(list.items[4].label, "David (B0): attack 5+ search 2+ status 40");
	assert_string_equal(list.items[8].label,
	                    "Anna (not in play): attack 3+ search 3+ status 10");
	look_describe(m, LOOK_CHARACTER, model_find_char(m, 4), &t);
	assert_int_equal(t.n, 5);
	assert_string_equal(t.lines[0], "David (#4): B0's, at Colony");
	assert_string_equal(t.lines[1], "attack: needs a die of 5 or more; search: 2 or more");
	assert_string_equal(t.lines[2], "Social status 40: the lowest status here dies first to "
	                                "zombies and bites");
	assert_string_equal(t.lines[3], "Ability: kill (y): at Colony with a die of 4+, kills up "
	                                "to 1 zombie at one entrance, once a round");
	assert_string_equal(t.lines[4], "Injuries: none (3 injuries kill)");
	look_describe(m, LOOK_LOCATION, m->colony, &t);
	assert_int_equal(t.n, 6);
	assert_string_equal(
	        t.lines[0],
	        "Colony (#10): 4 characters and 1 child; eats 3 food each colony phase");
	assert_string_equal(t.lines[2], "Entrance 0: 1 zombie, 0 barricades, 2 free spaces");
	assert_string_equal(t.lines[4], "Entrance 2: 0 zombies, 0 barricades, 3 free spaces");
	assert_string_equal(t.lines[5], "Each colony phase 3 zombies come (half the people here, "
	                                "children too, rounded up)");
	look_describe(m, LOOK_LOCATION, model_find_loc(m, 11), &t);
	assert_string_equal(
	        t.lines[0],
	        "Gas Station (#11): 0 of 2 places taken; 10 of 10 cards left to search");
	look_describe(m, LOOK_CRISIS, m->crisis, &t);
	assert_string_equal(t.lines[0], "Crisis 3: 2 medicine cards needed");
	assert_string_equal(t.lines[2], "In the colony phase: fewer than 2 contributed: morale -1");
	assert_string_equal(t.lines[3], "4 or more contributed: morale +1");
	app_free(&a);
}

static struct menu scratch_menu;

/* An empty menu says why, in words. */
static void test_why_not(void **state)
{
	(void)state;
	static struct app a;
	char why[400];
	fold_to_act_now(&a, "bot_base_2p.ndjson", false, 1);
	menu_why_not(&a.m, &a.cmds, CMD_SEARCH, why, sizeof why);
	assert_string_equal(why,
	                    "all your characters: in the colony, which has no cards to search");
	menu_why_not(&a.m, &a.cmds, CMD_START_GAME, why, sizeof why);
	assert_string_equal(why, "the game has already started");
	/* the engine's own reason */
	assert_int_equal(menu_build(&a.m, &a.cmds.legal, CMD_CLEAN_WASTE, &scratch_menu), 0);
	menu_why_not(&a.m, &a.cmds, CMD_CLEAN_WASTE, why, sizeof why);
	assert_string_equal(why, "all your characters: the waste pile is empty");
	struct cmd end = {.type = CMD_END_TURN};
	app_sent(&a, &end, "End your turn");
	menu_why_not(&a.m, &a.cmds, CMD_MOVE, why, sizeof why);
	assert_string_equal(why, "it is not your turn");
	app_free(&a);
}

/* The dangers near: food short at the first turn. */
static void test_dangers(void **state)
{
	(void)state;
	static struct app a;
	struct look_dangers d;
	fold_to_act_now(&a, "bot_base_2p.ndjson", false, 1);
	assert_int_equal(look_dangers(&a.m, &d), 1);
	assert_string_equal(d.text[0],
	                    "Food 0 of 3: short, a starvation token (morale -1 each round)");
	a.m.locs[a.m.colony].zombies[2] = 3; /* a full entrance where a child is */
	a.m.food = 3;
	a.m.tokens = 2;
	assert_int_equal(look_dangers(&a.m, &d), 2);
	assert_string_equal(d.text[0], "Colony e2 full: a new zombie kills a child");
	assert_string_equal(d.text[1], "Starvation: 2 tokens, morale -2 every colony phase");
	a.m.moral = 3; /* 2 tokens and the crisis's 1 */
	assert_int_equal(look_dangers(&a.m, &d), 3);
	assert_string_equal(d.text[0], "Morale 3: the colony phase costs 3 as things stand");
	app_free(&a);
}

static void test_wrap(void **state)
{
	(void)state;
	struct wrap_row r[8];
	const char *s = "Choose two of Nora Quinn, Oskar Brandt, Lena Vogel and Mia Schulz";
	assert_int_equal(wrap_text(s, 30, 2, r, 8), 3);
	assert_int_equal(r[0].off, 0);
	assert_int_equal(r[0].len, 25); /* "Choose two of Nora Quinn," */
	assert_int_equal(r[1].off, 26);
	assert_int_equal(r[1].len, 28); /* "Oskar Brandt, Lena Vogel and": 30 - the indent */
	assert_int_equal(r[2].off, 55);
	assert_int_equal(r[2].len, 10); /* "Mia Schulz" */
	assert_int_equal(wrap_text("", 10, 2, NULL, 0), 1);
	assert_int_equal(wrap_text("abcdefghij", 4, 0, r, 8), 3); /* a long word is cut */
	assert_int_equal(r[2].len, 2);
}

struct pace_log {
	char got[8][16];
	int n;
};

static bool fake_move(void *ctx, const struct pace_line *l)
{
	(void)ctx;
	return l->text[0] == 'M';
}

static void fake_feed(void *ctx, const struct pace_line *l)
{
	struct pace_log *log = ctx;
	snprintf(log->got[log->n++], 16, "%s", l->text);
}

/* The others' moves come at most one per pace; the lines after a move
 * come with it. */
static void test_pace(void **state)
{
	(void)state;
	struct pace p;
	struct pace_log log = {.n = 0};
	pace_init(&p, 400);
	const char *lines[] = {"a", "M1", "b", "M2", "c", "M3"};
	for (int i = 0; i < 6; i++)
		assert_int_equal(pace_push(&p, lines[i], strlen(lines[i]), 1000.0), 0);
	assert_int_equal(pace_release(&p, 1000.0, fake_move, fake_feed, &log), 401);
	assert_int_equal(log.n, 3); /* a M1 b */
	assert_string_equal(log.got[2], "b");
	assert_int_equal(pace_release(&p, 1200.0, fake_move, fake_feed, &log), 201);
	assert_int_equal(log.n, 3);
	assert_int_equal(pace_release(&p, 1400.0, fake_move, fake_feed, &log), 401);
	assert_int_equal(log.n, 5); /* M2 c */
	assert_int_equal(pace_release(&p, 1800.0, fake_move, fake_feed, &log), -1);
	assert_int_equal(log.n, 6);
	assert_string_equal(log.got[5], "M3");
	pace_free(&p);
	pace_init(&p, 0); /* no pace: all at once */
	for (int i = 0; i < 6; i++)
		pace_push(&p, lines[i], strlen(lines[i]), 0.0);
	log.n = 0;
	assert_int_equal(pace_release(&p, 0.0, fake_move, fake_feed, &log), -1);
	assert_int_equal(log.n, 6);
	pace_free(&p);
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

/* The first line of the recorded game (B0's Config), without its "\n". */
static char *config_line(const char *file)
{
	char *text = load(file);
	char *eol = strchr(text, '\n');
	if (strncmp(text, "{\"event\":\"Config\"", 17) != 0)
		eol = strchr(eol + 1, '\n'); /* a CommandFailed first */
	*eol = '\0';
	char *line = strdup(strstr(text, "{\"event\":\"Config\""));
	free(text);
	return line;
}

static void feed_ok(struct app *a, const char *line)
{
	if (app_feed(a, line, strlen(line)) < 0)
		fail_msg("%s: %s", line, a->status);
}

/* Two players named B0 and no sessions: we are the one who gets our
 * Characters offer -- here player 1, player 0 having left before it chose. */
static void test_seat_from_offer(void **state)
{
	(void)state;
	char *cfg = config_line("bot_base_2p.ndjson");
	struct app a;
	app_init(&a, APP_PLAY, "B0", false);
	feed_ok(&a, cfg);
	feed_ok(&a, "{\"event\":\"GameStarted\"}");
	feed_ok(&a, "{\"event\":\"Player\",\"player\":0,\"playerName\":\"B0\"}");
	assert_int_equal(a.m.me, 0); /* one B0 so far */
	feed_ok(&a, "{\"event\":\"Player\",\"player\":1,\"playerName\":\"B0\"}");
	assert_int_equal(a.m.me, -1); /* two: the name says nothing */
	feed_ok(&a, "{\"event\":\"Left\",\"player\":0}");
	assert_false(a.broken);
	feed_ok(&a, "{\"event\":\"Characters\",\"characterId0\":4,\"characterId1\":6,"
	            "\"characterId2\":5,\"characterId3\":2}");
	assert_int_equal(a.m.me, 1);
	assert_true(a.m.me_sure && a.m.selecting);
	feed_ok(&a, "{\"event\":\"CharacterSpawned\",\"player\":1,\"characterId\":4}");
	assert_false(a.m.selecting);
	app_free(&a);
	free(cfg);
}

/* With sessions the Session line names our player, whatever the names. */
static void test_seat_from_session(void **state)
{
	(void)state;
	char *cfg = config_line("bot_base_2p.ndjson");
	static const char secret[] = "00112233445566778899aabbccddeeff"
	                             "00112233445566778899aabbccddeeff";
	char session[200];
	snprintf(session, sizeof session, "{\"event\":\"Session\",\"player\":1,\"secret\":\"%s\"}",
	         secret);
	struct app a;
	app_init(&a, APP_PLAY, "B0", false);
	feed_ok(&a, cfg);
	assert_int_equal(app_feed(&a, session, strlen(session)), MEV_SESSION);
	assert_string_equal(a.secret, secret);
	assert_int_equal(a.m.me, 1);
	feed_ok(&a, "{\"event\":\"GameStarted\"}");
	feed_ok(&a, "{\"event\":\"Player\",\"player\":0,\"playerName\":\"B0\"}");
	feed_ok(&a, "{\"event\":\"Player\",\"player\":1,\"playerName\":\"B0\"}");
	assert_int_equal(a.m.me, 1);
	assert_non_null(strstr(app_quit_question(&a), "c: close"));
	app_free(&a);

	/* a secret that is no secret is a protocol violation */
	app_init(&a, APP_PLAY, "B0", false);
	feed_ok(&a, cfg);
	const char *bad = "{\"event\":\"Session\",\"player\":0,\"secret\":\"abc\"}";
	assert_int_equal(app_feed(&a, bad, strlen(bad)), -1);
	assert_true(a.broken);
	assert_null(strstr(app_quit_question(&a), "c: close"));
	app_free(&a);
	free(cfg);
}

/* An event the client does not know is noted in the log and skipped. */
static void test_unknown_event_ignored(void **state)
{
	(void)state;
	char *cfg = config_line("bot_base_2p.ndjson");
	struct app a;
	app_init(&a, APP_PLAY, "B0", false);
	feed_ok(&a, cfg);
	const char *line = "{\"event\":\"Weather\",\"snow\":true}";
	assert_int_equal(app_feed(&a, line, strlen(line)), -1);
	assert_false(a.broken);
	assert_string_equal(
	        a.log[a.nlog - 1],
	        "-- ignored a line the client does not know: unknown event \"Weather\"");
	feed_ok(&a, "{\"event\":\"GameStarted\"}");
	app_free(&a);
	free(cfg);
}

/* A revised game read with the base rules: the status names the fix. */
static void test_edition_hint(void **state)
{
	(void)state;
	char *text = load("bot_revised_2p.ndjson");
	struct app a;
	app_init(&a, APP_PLAY, "B0", false);
	for (char *p = text; *p && !a.broken;) {
		char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		app_feed(&a, p, len);
		p += len + (eol ? 1 : 0);
	}
	assert_true(a.broken);
	assert_string_equal(a.status,
	                    "The server plays the revised rules: start again with --rules revised");
	app_free(&a);
	free(text);
}

/* The kept secret: its file's name, mode and contents; the schedule. */
static void test_rejoin_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/sopra-rejoin-XXXXXX";
	assert_non_null(mkdtemp(dir));
	setenv("XDG_STATE_HOME", dir, 1);
	char path[512], err[600], want[600], secret[REJOIN_SECRET_HEX + 1];
	assert_int_equal(rejoin_path(path, sizeof path, "::1", 7777, "A b/c", err, sizeof err), 0);
	snprintf(want, sizeof want, "%s/sopra-client/%%3A%%3A1_7777_A%%20b%%2Fc.session", dir);
	assert_string_equal(path, want);
	const char *s = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	assert_int_equal(rejoin_save(path, s, 2, err, sizeof err), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	int player = -1;
	assert_int_equal(rejoin_load(path, secret, &player, err, sizeof err), 0);
	assert_string_equal(secret, s);
	assert_int_equal(player, 2);
	assert_int_equal(rejoin_save(path, "xyz", 2, err, sizeof err), -1);
	rejoin_forget(path);
	assert_int_equal(rejoin_load(path, secret, &player, err, sizeof err), -1);
	assert_non_null(strstr(err, "no session kept in"));
	assert_true(rejoin_delay(1) == 0.5 && rejoin_delay(2) == 1.0 && rejoin_delay(4) == 4.0 &&
	            rejoin_delay(REJOIN_ATTEMPTS) == 4.0);
	char sub[600];
	snprintf(sub, sizeof sub, "%s/sopra-client", dir);
	rmdir(sub);
	rmdir(dir);
	unsetenv("XDG_STATE_HOME");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_watcher_base),
	        cmocka_unit_test(test_watcher_revised),
	        cmocka_unit_test(test_menus_first_turn),
	        cmocka_unit_test(test_menu_keys),
	        cmocka_unit_test(test_log_turn_markers),
	        cmocka_unit_test(test_rejoin_history_quiet),
	        cmocka_unit_test(test_pick_menu_notes),
	        cmocka_unit_test(test_look),
	        cmocka_unit_test(test_why_not),
	        cmocka_unit_test(test_dangers),
	        cmocka_unit_test(test_wrap),
	        cmocka_unit_test(test_pace),
	        cmocka_unit_test(test_replay_botlog),
	        cmocka_unit_test(test_replay_journal_lines),
	        cmocka_unit_test(test_seat_from_offer),
	        cmocka_unit_test(test_seat_from_session),
	        cmocka_unit_test(test_unknown_event_ignored),
	        cmocka_unit_test(test_edition_hint),
	        cmocka_unit_test(test_rejoin_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
