/*
 * Unit tests for the pure game module: commands are applied directly to a
 * game built from a small configuration written here, and the exact events
 * are compared (name, arguments, recipient).
 *
 * Dice are random, so tests that depend on them read the DieRolled events
 * and pick what to do from the values, or search for a seed with the needed
 * property; nothing is hard-coded per seed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sopra/config.h"
#include "sopra/game_event.h"
#include "sopra/game.h"
#include "sopra/proto.h"

/* ---- fixtures -------------------------------------------------------- */

/*
 * A compact config. Characters 1..8 with status 10*id; their ability, attack
 * and search come from the caller so one test can give every character the
 * ability under test. Colony 100 (2 entrances), Mall 101 (2 entrances, 2
 * spaces), School 102 (1 entrance, 1 space). Cards: 1000.. start pile,
 * 2000.. Mall deck, 3000.. School deck, by type given in `start_types`,
 * `mall_types` (one letter each: F food, U fuel, S stuff, M medicine,
 * L lock, X scissors, H hammer, B snow_boots, C colt, W swab, P blueprint
 * for the Mall).
 */
struct fixture {
	int max_players;
	const char *ability; /* JSON of the ability object */
	int attack;
	int search;
	const char *start_types; /* 10 letters */
	const char *mall_types;  /* 10 letters */
	const char *goal;        /* JSON members after moral etc. */
	int rounds;
	int moral;
	int zombies_colony;
	int zombies_locations;
	int children;
	const char *crisis_type;
	int required;
};

static void card_json(char *buf, size_t cap, int id, char t)
{
	switch (t) {
	case 'F':
		snprintf(buf, cap, "{\"food\":{\"identifier\":%d,\"amount\":2}}", id);
		return;
	case 'U':
		snprintf(buf, cap, "{\"fuel\":{\"identifier\":%d}}", id);
		return;
	case 'S':
		snprintf(buf, cap, "{\"stuff\":{\"identifier\":%d}}", id);
		return;
	case 'M':
		snprintf(buf, cap, "{\"medicine\":{\"identifier\":%d}}", id);
		return;
	case 'L':
		snprintf(buf, cap, "{\"lock\":{\"identifier\":%d}}", id);
		return;
	case 'X':
		snprintf(buf, cap, "{\"scissors\":{\"identifier\":%d}}", id);
		return;
	case 'H':
		snprintf(buf, cap, "{\"hammer\":{\"identifier\":%d}}", id);
		return;
	case 'B':
		snprintf(buf, cap, "{\"snow_boots\":{\"identifier\":%d}}", id);
		return;
	case 'C':
		snprintf(buf, cap, "{\"colt\":{\"identifier\":%d}}", id);
		return;
	case 'W':
		snprintf(buf, cap, "{\"swab\":{\"identifier\":%d}}", id);
		return;
	case 'P':
		snprintf(buf, cap, "{\"blueprint\":{\"identifier\":%d,\"location\":101}}", id);
		return;
	default:
		fail_msg("bad card letter %c", t);
	}
}

static char *build_config_text(const struct fixture *f)
{
	size_t cap = 1 << 16;
	char *s = malloc(cap);
	assert_non_null(s);
	size_t n = 0;
#define PUT(...) (n += (size_t)snprintf(s + n, cap - n, __VA_ARGS__))
	PUT("{\"maxPlayers\":%d,\"cards\":[", f->max_players);
	char card[128];
	const char *decks[3] = {f->start_types, f->mall_types, "FFFFFFFFFF"};
	for (int d = 0; d < 3; d++)
		for (int i = 0; i < 10; i++) {
			card_json(card, sizeof card, 1000 * (d + 1) + i, decks[d][i]);
			PUT("%s%s", d == 0 && i == 0 ? "" : ",", card);
		}
	PUT("],\"characters\":[");
	for (int c = 1; c <= 8; c++)
		PUT("%s{\"name\":\"C%d\",\"identifier\":%d,\"status\":%d,\"attack\":%d,"
		    "\"search\":%d,\"ability\":%s}",
		    c == 1 ? "" : ",", c, c, 10 * c, f->attack, f->search, f->ability);
	PUT("],\"goal\":{\"rounds\":%d,\"moral\":%d,\"zombiesColony\":%d,"
	    "\"zombiesLocations\":%d,\"childrenInColony\":%d,%s},",
	    f->rounds, f->moral, f->zombies_colony, f->zombies_locations, f->children, f->goal);
	PUT("\"locations\":[{\"colony\":{\"identifier\":100,\"entrances\":2,\"startCards\":["
	    "1000,1001,1002,1003,1004,1005,1006,1007,1008,1009]}},"
	    "{\"name\":\"Mall\",\"identifier\":101,\"entrances\":2,\"survivorSpaces\":2,\"cards\":["
	    "2000,2001,2002,2003,2004,2005,2006,2007,2008,2009]},"
	    "{\"name\":\"School\",\"identifier\":102,\"entrances\":1,\"survivorSpaces\":1,"
	    "\"cards\":["
	    "3000,3001,3002,3003,3004,3005,3006,3007,3008,3009]}],");
	PUT("\"crises\":[");
	for (int i = 0; i < 10; i++)
		PUT("%s{\"%s\":{\"identifier\":%d,\"moralChange\":2,\"requiredCards\":%d}}",
		    i ? "," : "", f->crisis_type, 4000 + i, f->required);
	PUT("]}");
#undef PUT
	assert_true(n < cap);
	return s;
}

static struct fixture default_fixture(void)
{
	struct fixture f = {
	        .max_players = 2,
	        .ability = "{\"feed\":{\"numFood\":3}}",
	        .attack = 1,
	        .search = 1,
	        .start_types = "FFSSMMLLXU",
	        .mall_types = "FUSMLXFUSM",
	        .goal = "\"survive\":true",
	        .rounds = 3,
	        .moral = 10,
	        .zombies_colony = 0,
	        .zombies_locations = 0,
	        .children = 0,
	        .crisis_type = "food",
	        .required = 1,
	};
	return f;
}

/* One game under test with its config and the events of the last step. */
struct t {
	struct config *cfg;
	struct game *g;
	struct game_event_list ev;
	int hand[5]; /* t_start1: the five start cards */
	int dice[8]; /* t_start1: the first round's dice, in roll order */
	int ndice;
	char text[1 << 16]; /* the events of the last step, one per line */
};

static struct t *t_new(const struct fixture *f, int64_t seed, enum game_rules rules)
{
	struct t *t = calloc(1, sizeof *t);
	assert_non_null(t);
	char *text = build_config_text(f);
	struct config_errors errs = {0};
	t->cfg = config_parse(text, strlen(text), &errs);
	if (!t->cfg) {
		for (int i = 0; i < errs.n; i++)
			print_error("config: %s\n", errs.msgs[i]);
		fail_msg("fixture config invalid");
	}
	config_errors_free(&errs);
	free(text);
	t->g = game_new(t->cfg, seed, rules);
	assert_non_null(t->g);
	game_event_list_init(&t->ev);
	return t;
}

static void t_free(struct t *t)
{
	game_free(t->g);
	config_free(t->cfg);
	game_event_list_free(&t->ev);
	free(t);
}

static const char *const moral_names[] = {"CHARACTER_DIED", "CRISIS", "STARVATION_TOKEN", "WASTE"};
static const char *const food_names[] = {"FOOD_ADDED", "FOOD_CONSUMED"};

/* "to:Name arg arg" with bools and enums spelled as on the wire; strings
 * other than names are left out (Config text, CommandFailed message). */
static void format_events(struct t *t)
{
	size_t n = 0, cap = sizeof t->text;
	t->text[0] = '\0';
	for (size_t i = 0; i < t->ev.n; i++) {
		const struct game_event *e = &t->ev.v[i];
		char to[16];
		if (e->to == GEV_TO_ALL)
			snprintf(to, sizeof to, "*");
		else if (e->to == GEV_TO_SENDER)
			snprintf(to, sizeof to, "s");
		else
			snprintf(to, sizeof to, "%d", e->to);
		n += (size_t)snprintf(t->text + n, cap - n, "%s:%s", to, game_event_name(e->type));
		for (int a = 0; a < e->nargs; a++) {
			int v = e->arg[a];
			if ((e->type == GEV_MOVED && a == 2) || e->type == GEV_GAME_END)
				n += (size_t)snprintf(t->text + n, cap - n, " %s",
				                      v ? "true" : "false");
			else if (e->type == GEV_MORAL_CHANGED && a == 1)
				n += (size_t)snprintf(t->text + n, cap - n, " %s", moral_names[v]);
			else if (e->type == GEV_FOOD_CHANGED && a == 1)
				n += (size_t)snprintf(t->text + n, cap - n, " %s", food_names[v]);
			else
				n += (size_t)snprintf(t->text + n, cap - n, " %d", v);
		}
		if (e->type == GEV_PLAYER)
			n += (size_t)snprintf(t->text + n, cap - n, " %s", e->str);
		if (e->type == GEV_COMMAND_FAILED) {
			assert_non_null(e->str);
			assert_true(e->str[0] != '\0');
		}
		n += (size_t)snprintf(t->text + n, cap - n, "\n");
		assert_true(n < cap);
	}
#ifdef SOPRA_CHECK_INVARIANTS
	const char *bad = game_check_invariants(t->g);
	if (bad)
		fail_msg("invariant violated: %s", bad);
#else
	assert_null(game_check_invariants(t->g));
#endif
}

static int t_sender;

/* Apply a command given as "Name args" from player p; returns the events.
 * The arguments are the command's parameters in protocol order (its row in
 * the command table): integers, "true" for a flag, a word for a name (""
 * when absent); giving a target parameter sets has_target. */
static const char *t_do(struct t *t, int p, const char *line)
{
	struct cmd c;
	memset(&c, 0, sizeof c);
	char name[64];
	char word[4][64];
	int nw = sscanf(line, "%63s %63s %63s %63s %63s", name, word[0], word[1], word[2], word[3]);
	size_t nargs = nw > 1 ? (size_t)nw - 1 : 0;
	bool found = false;
	for (int i = 0; i < CMD_TYPE_COUNT; i++)
		if (strcmp(cmd_name((enum cmd_type)i), name) == 0) {
			c.type = (enum cmd_type)i;
			found = true;
		}
	assert_true(found);
	size_t np;
	const struct proto_param *ps = proto_cmd_params(c.type, &np);
	for (size_t i = 0; i < np; i++) {
		if (ps[i].type == PROTO_STRING) {
			c.name = i < nargs ? word[i] : "";
			continue;
		}
		if (i >= nargs)
			continue;
		if (proto_param_with_target(&ps[i]))
			c.has_target = true;
		proto_param_set(&c, &ps[i],
		                ps[i].type == PROTO_BOOL ? strcmp(word[i], "true") == 0
		                                         : atoi(word[i]));
	}
	game_event_list_clear(&t->ev);
	t_sender = game_apply(t->g, p, &c, &t->ev);
	format_events(t);
	return t->text;
}

static const char *t_timeout(struct t *t)
{
	game_event_list_clear(&t->ev);
	game_timeout(t->g, &t->ev);
	format_events(t);
	return t->text;
}

static const char *t_disconnect(struct t *t, int p)
{
	game_event_list_clear(&t->ev);
	game_disconnect(t->g, p, &t->ev);
	format_events(t);
	return t->text;
}

/* value of the n-th (0-based) event named `name` in the last step's events */
static int t_arg(const struct t *t, enum game_event_type type, int nth, int arg)
{
	for (size_t i = 0; i < t->ev.n; i++)
		if (t->ev.v[i].type == type && nth-- == 0)
			return t->ev.v[i].arg[arg];
	fail_msg("no such event %s", game_event_name(type));
	return -1;
}

static int t_count(const struct t *t, enum game_event_type type)
{
	int n = 0;
	for (size_t i = 0; i < t->ev.n; i++)
		n += t->ev.v[i].type == type;
	return n;
}

/* Register one player, start, select the two lowest offered characters.
 * Leaves the events of the selection step (up to the first ActNow). */
static void t_start1(struct t *t, int *c0, int *c1)
{
	assert_string_equal(t_do(t, GAME_NO_PLAYER, "Register Ann"), "0:Config\n");
	t_do(t, 0, "StartGame");
	int offered[4];
	for (int i = 0; i < 4; i++)
		offered[i] = t_arg(t, GEV_CHARACTERS, 0, i);
	int lo = offered[0] < offered[1] ? offered[0] : offered[1];
	int hi = offered[0] < offered[1] ? offered[1] : offered[0];
	char cmd[64];
	snprintf(cmd, sizeof cmd, "SelectCharacters %d %d", offered[0], offered[1]);
	t_do(t, 0, cmd);
	for (int i = 0; i < 5; i++)
		t->hand[i] = t_arg(t, GEV_CARD_DRAWN, i, 1);
	t->ndice = t_count(t, GEV_DIE_ROLLED);
	for (int i = 0; i < t->ndice; i++)
		t->dice[i] = t_arg(t, GEV_DIE_ROLLED, i, 1);
	if (c0)
		*c0 = lo;
	if (c1)
		*c1 = hi;
}

static bool contains(const char *hay, const char *needle)
{
	return strstr(hay, needle) != NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

#define T_DO(t, p, cmdline, expected) assert_string_equal(t_do((t), (p), (cmdline)), (expected))

/* the events of the step start with `prefix` */
static void t_prefix(struct t *t, int p, const char *cmdline, const char *prefix)
{
	const char *ev = t_do(t, p, cmdline);
	if (strncmp(ev, prefix, strlen(prefix)) != 0)
		fail_msg("events:\n%s\ndo not start with:\n%s", ev, prefix);
}

/* ---- registration ---------------------------------------------------- */

static void test_register_and_start(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.max_players = 2;
	struct t *t = t_new(&f, 1, RULES_BASE);
	assert_int_equal(game_waiting_for(t->g), GAME_WAIT_ANY);
	T_DO(t, GAME_NO_PLAYER, "Register Ann", "0:Config\n");
	assert_int_equal(t_sender, 0);
	assert_ptr_equal(t->ev.v[0].str, t->cfg->text);
	T_DO(t, 0, "Register Ann", "s:CommandFailed\n");
	T_DO(t, GAME_NO_PLAYER, "StartGame", "s:CommandFailed\n");
	/* the second registration reaches maxPlayers: the game starts at once */
	const char *ev = t_do(t, GAME_NO_PLAYER, "Register Bob");
	assert_int_equal(t_sender, 1);
	assert_true(
	        strncmp(ev,
	                "1:Config\n*:GameStarted\n*:Player 0 Ann\n*:Player 1 Bob\n0:Characters ",
	                strlen("1:Config\n*:GameStarted\n*:Player 0 Ann\n*:Player 1 "
	                       "Bob\n0:Characters ")) == 0);
	assert_int_equal(game_waiting_for(t->g), 0);
	T_DO(t, 1, "StartGame", "s:CommandFailed\n");
	T_DO(t, GAME_NO_PLAYER, "Register Carl", "s:CommandFailed\n");
	t_free(t);
}

static void test_registration_aborted_by_other_command(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.max_players = 2;
	struct t *t = t_new(&f, 1, RULES_BASE);
	T_DO(t, GAME_NO_PLAYER, "Register Ann", "0:Config\n");
	T_DO(t, GAME_NO_PLAYER, "Leave", "*:RegistrationAborted\n");
	assert_true(game_is_over(t->g));
	assert_int_equal(game_waiting_for(t->g), GAME_WAIT_NONE);
	t_free(t);
}

static void test_registration_timeout(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.max_players = 2;
	struct t *t = t_new(&f, 1, RULES_BASE);
	T_DO(t, GAME_NO_PLAYER, "Register Ann", "0:Config\n");
	assert_string_equal(t_timeout(t), "*:RegistrationAborted\n");
	assert_true(game_is_over(t->g));
	t_free(t);
}

/* ---- preparation ----------------------------------------------------- */

static void test_selection_checks(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.max_players = 2;
	struct t *t = t_new(&f, 5, RULES_BASE);
	t_do(t, GAME_NO_PLAYER, "Register Ann");
	t_do(t, GAME_NO_PLAYER, "Register Bob");
	int o[4];
	for (int i = 0; i < 4; i++)
		o[i] = t_arg(t, GEV_CHARACTERS, 0, i);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "SelectCharacters %d %d", o[0], o[0]);
	T_DO(t, 0, cmd, "s:CommandFailed\n");
	int other = 1;
	while (other == o[0] || other == o[1] || other == o[2] || other == o[3])
		other++;
	snprintf(cmd, sizeof cmd, "SelectCharacters %d %d", o[0], other);
	T_DO(t, 0, cmd, "s:CommandFailed\n");
	snprintf(cmd, sizeof cmd, "SelectCharacters %d %d", o[2], o[3]);
	T_DO(t, 1, cmd, "s:CommandFailed\n");
	T_DO(t, 0, "EndTurn", "s:CommandFailed\n");
	T_DO(t, 0, "StartGame", "s:CommandFailed\n");
	snprintf(cmd, sizeof cmd, "SelectCharacters %d %d", o[3], o[1]);
	const char *ev = t_do(t, 0, cmd);
	char want[256];
	int lo = o[3] < o[1] ? o[3] : o[1], hi = o[3] < o[1] ? o[1] : o[3];
	snprintf(want, sizeof want,
	         "*:CharacterSpawned 0 %d\n*:CharacterSpawned 0 %d\n*:CardDrawn 0 ", lo, hi);
	assert_true(strncmp(ev, want, strlen(want)) == 0);
	assert_int_equal(t_count(t, GEV_CARD_DRAWN), 5);
	assert_int_equal(t_count(t, GEV_CHARACTERS), 1);
	assert_int_equal(t->ev.v[t->ev.n - 1].to, 1); /* Characters for player 1 */
	/* a repeated selection by player 0 fails */
	T_DO(t, 0, cmd, "s:CommandFailed\n");
	t_free(t);
}

/* The full preparation of one player: events in order, then round 1 with
 * NextRound, Crisis, three dice and ActNow. */
static void test_preparation_and_first_round(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	struct t *t = t_new(&f, 3, RULES_BASE);
	t_do(t, GAME_NO_PLAYER, "Register Ann");
	const char *ev = t_do(t, 0, "StartGame");
	assert_true(strncmp(ev, "*:GameStarted\n*:Player 0 Ann\n0:Characters ", 41) == 0);
	int o[4];
	for (int i = 0; i < 4; i++)
		o[i] = t_arg(t, GEV_CHARACTERS, 0, i);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "SelectCharacters %d %d", o[0], o[1]);
	t_do(t, 0, cmd);
	assert_int_equal(t_count(t, GEV_CARD_DRAWN), 5);
	/* all five start cards are distinct cards of the start pile */
	for (int i = 0; i < 5; i++) {
		int id = t_arg(t, GEV_CARD_DRAWN, i, 1);
		assert_true(id >= 1000 && id <= 1009);
	}
	assert_int_equal(t_count(t, GEV_NEXT_ROUND), 1);
	assert_int_equal(t_arg(t, GEV_NEXT_ROUND, 0, 0), 1);
	assert_int_equal(t_count(t, GEV_CRISIS), 1);
	assert_int_equal(t_count(t, GEV_DIE_ROLLED), 3);
	assert_int_equal(t->ev.v[t->ev.n - 1].type, GEV_ACT_NOW);
	assert_int_equal(t->ev.v[t->ev.n - 1].to, 0);
	assert_true(contains(t->text, "*:Crisis 40"));
	t_free(t);
}

static void test_revised_round_counts_down(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	struct t *t = t_new(&f, 3, RULES_REVISED);
	t_start1(t, NULL, NULL);
	assert_int_equal(t_arg(t, GEV_NEXT_ROUND, 0, 0), 3);
	t_do(t, 0, "EndTurn");
	assert_int_equal(t_arg(t, GEV_NEXT_ROUND, 0, 0), 2);
	t_do(t, 0, "EndTurn");
	assert_int_equal(t_arg(t, GEV_NEXT_ROUND, 0, 0), 1);
	t_free(t);
}

static void test_selection_timeout_leaves(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.max_players = 2;
	struct t *t = t_new(&f, 9, RULES_BASE);
	t_do(t, GAME_NO_PLAYER, "Register Ann");
	t_do(t, GAME_NO_PLAYER, "Register Bob");
	const char *ev = t_timeout(t);
	assert_true(strncmp(ev, "*:Left 0\n1:Characters ", 22) == 0);
	assert_int_equal(game_waiting_for(t->g), 1);
	t_free(t);
}

static void test_disconnect_in_selection(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.max_players = 2;
	struct t *t = t_new(&f, 9, RULES_BASE);
	t_do(t, GAME_NO_PLAYER, "Register Ann");
	t_do(t, GAME_NO_PLAYER, "Register Bob");
	/* player 1 drops while 0 chooses: nothing happens yet */
	assert_string_equal(t_disconnect(t, 1), "");
	assert_int_equal(game_waiting_for(t->g), 0);
	t_free(t);
	/* again, and let player 0 choose: player 1 is offered four characters
	 * (the RNG order stays as on a timeout), leaves at once, and the first
	 * round starts with player 0 alone */
	t = t_new(&f, 9, RULES_BASE);
	t_do(t, GAME_NO_PLAYER, "Register Ann");
	t_do(t, GAME_NO_PLAYER, "Register Bob");
	int o[4];
	for (int i = 0; i < 4; i++)
		o[i] = t_arg(t, GEV_CHARACTERS, 0, i);
	t_disconnect(t, 1);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "SelectCharacters %d %d", o[0], o[1]);
	const char *ev = t_do(t, 0, cmd);
	assert_true(contains(ev, "\n1:Characters "));
	assert_true(contains(ev, "\n*:Left 1\n*:NextRound 1\n"));
	assert_int_equal(t_count(t, GEV_DIE_ROLLED), 3); /* player 0 only */
	assert_int_equal(game_waiting_for(t->g), 0);
	t_free(t);
}

/* ---- turns ------------------------------------------------------------- */

static void test_not_your_turn_and_end_turn(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.max_players = 2;
	struct t *t = t_new(&f, 11, RULES_BASE);
	t_do(t, GAME_NO_PLAYER, "Register Ann");
	t_do(t, GAME_NO_PLAYER, "Register Bob");
	int o[4];
	char cmd[64];
	for (int p = 0; p < 2; p++) {
		for (int i = 0; i < 4; i++)
			o[i] = t_arg(t, GEV_CHARACTERS, 0, i);
		snprintf(cmd, sizeof cmd, "SelectCharacters %d %d", o[0], o[1]);
		t_do(t, p, cmd);
	}
	assert_int_equal(t_count(t, GEV_DIE_ROLLED), 6);
	assert_int_equal(game_waiting_for(t->g), 0);
	T_DO(t, 1, "EndTurn", "s:CommandFailed\n");
	T_DO(t, 1, "Leave", "s:CommandFailed\n");
	T_DO(t, GAME_NO_PLAYER, "EndTurn", "s:CommandFailed\n");
	T_DO(t, 0, "Register X", "s:CommandFailed\n0:ActNow\n");
	T_DO(t, 0, "EndTurn", "1:ActNow\n");
	assert_int_equal(game_waiting_for(t->g), 1);
	const char *ev = t_do(t, 1, "EndTurn");
	assert_true(strncmp(ev, "*:ColonyPhaseStarted\n", 21) == 0);
	assert_true(contains(ev, "*:NextRound 2\n"));
	t_free(t);
}

static void test_leave_kills_in_descending_status(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.max_players = 2;
	struct t *t = t_new(&f, 11, RULES_BASE);
	t_do(t, GAME_NO_PLAYER, "Register Ann");
	t_do(t, GAME_NO_PLAYER, "Register Bob");
	int lo = 0, hi = 0;
	char cmd[64];
	for (int p = 0; p < 2; p++) {
		int a = t_arg(t, GEV_CHARACTERS, 0, 0), b = t_arg(t, GEV_CHARACTERS, 0, 1);
		if (p == 0) {
			lo = a < b ? a : b;
			hi = a < b ? b : a;
		}
		snprintf(cmd, sizeof cmd, "SelectCharacters %d %d", a, b);
		t_do(t, p, cmd);
	}
	char want[256];
	snprintf(want, sizeof want,
	         "*:Left 0\n*:SurvivorKilled %d\n*:MoralChanged -1 CHARACTER_DIED\n"
	         "*:SurvivorKilled %d\n*:MoralChanged -1 CHARACTER_DIED\n1:ActNow\n",
	         hi, lo); /* status = 10 * id: higher id first */
	T_DO(t, 0, "Leave", want);
	/* the last player leaves: the engine plays on alone until GameEnd */
	const char *ev = t_do(t, 1, "Leave");
	assert_true(strncmp(ev, "*:Left 1\n", 9) == 0);
	assert_true(game_is_over(t->g));
	assert_int_equal(t->ev.v[t->ev.n - 1].type, GEV_GAME_END);
	t_free(t);
}

static void test_timeout_in_turn_is_leave(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	struct t *t = t_new(&f, 11, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	const char *ev = t_timeout(t);
	char want[256];
	snprintf(want, sizeof want,
	         "*:Left 0\n*:SurvivorKilled %d\n*:MoralChanged -1 CHARACTER_DIED\n"
	         "*:SurvivorKilled %d\n*:MoralChanged -1 CHARACTER_DIED\n*:ColonyPhaseStarted\n",
	         c1, c0);
	assert_true(strncmp(ev, want, strlen(want)) == 0);
	assert_true(game_is_over(t->g));
	t_free(t);
}

static void test_disconnect_in_turn_is_leave(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	struct t *t = t_new(&f, 11, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	const char *ev = t_disconnect(t, 0);
	assert_true(strncmp(ev, "*:Left 0\n", 9) == 0);
	assert_true(game_is_over(t->g));
	t_free(t);
}

/* ---- which check fails first, and what it says (behaviour.md 2-6) -------- */

/* Apply a command that must fail; returns its CommandFailed message. */
static const char *t_failure(struct t *t, int p, const char *cmdline)
{
	t_do(t, p, cmdline);
	assert_true(t->ev.n >= 1);
	assert_int_equal(t->ev.v[0].type, GEV_COMMAND_FAILED);
	return t->ev.v[0].str;
}

#define T_FAILS(t, p, cmdline, msg) assert_string_equal(t_failure((t), (p), (cmdline)), (msg))

/* An id of the eight characters that is neither a nor b. */
static int other_character(int a, int b)
{
	int id = 1;
	while (id == a || id == b)
		id++;
	return id;
}

/* Registration and selection: the command's phase is checked before its
 * sender; during the turns the sender comes first. */
static void test_phase_and_sender_checks_order(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.max_players = 2;
	struct t *t = t_new(&f, 11, RULES_BASE);
	t_do(t, GAME_NO_PLAYER, "Register Ann");
	T_FAILS(t, 0, "Register Ann", "already registered");
	T_FAILS(t, GAME_NO_PLAYER, "StartGame", "register first");
	t_do(t, GAME_NO_PLAYER, "Register Bob");

	int a = t_arg(t, GEV_CHARACTERS, 0, 0), b = t_arg(t, GEV_CHARACTERS, 0, 1);
	char cmd[64];
	T_FAILS(t, GAME_NO_PLAYER, "Register Carl", "the game has already started");
	T_FAILS(t, 1, "EndTurn", "characters are being selected");
	snprintf(cmd, sizeof cmd, "SelectCharacters %d %d", a, b);
	T_FAILS(t, 1, cmd, "it is not your turn to select characters");
	T_FAILS(t, 0, "SelectCharacters 999 999", "select two different characters");
	snprintf(cmd, sizeof cmd, "SelectCharacters %d 999", a);
	T_FAILS(t, 0, cmd, "select two of the characters offered to you");
	snprintf(cmd, sizeof cmd, "SelectCharacters %d %d", a, b);
	t_do(t, 0, cmd);
	a = t_arg(t, GEV_CHARACTERS, 0, 0); /* offered to player 1 */
	b = t_arg(t, GEV_CHARACTERS, 0, 1);
	snprintf(cmd, sizeof cmd, "SelectCharacters %d %d", a, b);
	t_do(t, 1, cmd);

	assert_int_equal(game_waiting_for(t->g), 0);
	T_FAILS(t, 1, cmd, "it is not your turn");
	T_FAILS(t, GAME_NO_PLAYER, "Register Dan", "register first");
	T_FAILS(t, 0, cmd, "characters were already selected");
	T_FAILS(t, 0, "StartGame", "the game has already started");
	t_do(t, 0, "Leave");
	t_do(t, 1, "Leave");
	assert_true(game_is_over(t->g));
	T_FAILS(t, 1, "EndTurn", "the game is over");
	t_free(t);
}

/* The shared preconditions: the card before the character, the character
 * before the dice, the dice before anything the command checks itself. */
static void test_precondition_order(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	struct t *t = t_new(&f, 6, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	int other = other_character(c0, c1);
	const char *not_yours = "no living character of yours with that id";
	char cmd[64];
	snprintf(cmd, sizeof cmd, "UseCard 9999 %d 0", other);
	T_FAILS(t, 0, cmd, "card is not in your hand");
	snprintf(cmd, sizeof cmd, "UseCard %d %d 0", t->hand[0], other);
	T_FAILS(t, 0, cmd, not_yours);
	snprintf(cmd, sizeof cmd, "Move %d 999", other);
	T_FAILS(t, 0, cmd, not_yours);
	snprintf(cmd, sizeof cmd, "UseAbility %d", other);
	T_FAILS(t, 0, cmd, not_yours);

	for (int i = 0; i < 3; i++) { /* three dice, three barricades */
		snprintf(cmd, sizeof cmd, "Barricade %d 0", c0);
		t_do(t, 0, cmd);
	}
	snprintf(cmd, sizeof cmd, "Search %d", other);
	T_FAILS(t, 0, cmd, not_yours);
	snprintf(cmd, sizeof cmd, "Search %d", c0); /* the colony has nothing to search */
	T_FAILS(t, 0, cmd, "no action die left");
	snprintf(cmd, sizeof cmd, "Attack %d 7", c0); /* "needs attack", before the entrance */
	T_FAILS(t, 0, cmd, "no action die high enough");
	snprintf(cmd, sizeof cmd, "Barricade %d 7", c0);
	T_FAILS(t, 0, cmd, "no action die left");
	snprintf(cmd, sizeof cmd, "CleanWaste %d", c0); /* the waste pile is empty too */
	T_FAILS(t, 0, cmd, "no action die left");
	t_free(t);
}

/* Every command has a row in the game's command table: none is answered
 * "unknown command", in any phase. */
static void test_every_command_is_known(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	for (int type = 0; type < CMD_TYPE_COUNT; type++) {
		const char *name = cmd_name((enum cmd_type)type);
		for (int phase = 0; phase < 3; phase++) {
			struct t *t = t_new(&f, 6, RULES_BASE);
			if (phase == 1) { /* the selection */
				t_do(t, GAME_NO_PLAYER, "Register Ann");
				t_do(t, 0, "StartGame");
			} else if (phase == 2) { /* player 0's turn */
				t_start1(t, NULL, NULL);
			}
			t_do(t, phase == 0 ? GAME_NO_PLAYER : 0, name);
			for (size_t i = 0; i < t->ev.n; i++)
				if (t->ev.v[i].type == GEV_COMMAND_FAILED)
					assert_string_not_equal(t->ev.v[i].str, "unknown command");
			t_free(t);
		}
	}
}

/* ---- moves and infection ------------------------------------------------ */

static void test_move_checks(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.max_players = 2;
	struct t *t = t_new(&f, 11, RULES_BASE);
	t_do(t, GAME_NO_PLAYER, "Register Ann");
	t_do(t, GAME_NO_PLAYER, "Register Bob");
	int mine[2][2];
	char cmd[64];
	for (int p = 0; p < 2; p++) {
		int a = t_arg(t, GEV_CHARACTERS, 0, 0), b = t_arg(t, GEV_CHARACTERS, 0, 1);
		mine[p][0] = a;
		mine[p][1] = b;
		snprintf(cmd, sizeof cmd, "SelectCharacters %d %d", a, b);
		t_do(t, p, cmd);
	}
	snprintf(cmd, sizeof cmd, "Move %d 101", mine[1][0]);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* not mine */
	snprintf(cmd, sizeof cmd, "Move %d 100", mine[0][0]);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* already there */
	snprintf(cmd, sizeof cmd, "Move %d 999", mine[0][0]);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* no such location */
	snprintf(cmd, sizeof cmd, "Move %d 102", mine[0][0]);
	const char *ev = t_do(t, 0, cmd);
	char want[128];
	snprintf(want, sizeof want, "*:Moved %d 102 false\n", mine[0][0]);
	assert_true(strncmp(ev, want, strlen(want)) == 0);
	t_free(t);
}

/* ---- prediction helpers ------------------------------------------------ */

/* The events one infection roll r (0..11) causes for character id, when it
 * is neither fatal nor a bite: "" / Wounded / Frostbitten. */
static const char *injury_events(int r, int id, char *buf, size_t cap)
{
	if (r < 6)
		snprintf(buf, cap, "%s", "");
	else if (r < 9)
		snprintf(buf, cap, "*:Wounded %d\n", id);
	else if (r < 11)
		snprintf(buf, cap, "*:Frostbitten %d\n", id);
	else
		snprintf(buf, cap, "*:Bitten %d\n", id);
	return buf;
}

/* the last step ended with an ActNow and did not kill character id */
static bool is_alive_after(const struct t *t, int id)
{
	for (size_t i = 0; i < t->ev.n; i++)
		if ((t->ev.v[i].type == GEV_BITTEN || t->ev.v[i].type == GEV_SURVIVOR_KILLED) &&
		    t->ev.v[i].nargs == 1 && t->ev.v[i].arg[0] == id)
			return false;
	return t->ev.n > 0 && t->ev.v[t->ev.n - 1].type == GEV_ACT_NOW;
}

static int peek12(const struct t *t)
{
	struct rng r = game_rng_peek(t->g);
	return rng_next_int(&r, 12);
}

/* Start a one-player game on the first seed >= from whose first move roll
 * falls in [lo, hi]; returns the seed. */
static struct t *t_start_roll(const struct fixture *f, enum game_rules rules, int lo, int hi,
                              int *c0, int *c1)
{
	for (int64_t seed = 1; seed < 500; seed++) {
		struct t *t = t_new(f, seed, rules);
		t_start1(t, c0, c1);
		int r = peek12(t);
		if (r >= lo && r <= hi)
			return t;
		t_free(t);
	}
	fail_msg("no seed found");
	return NULL;
}

static void test_move_infection_roll(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	for (int kind = 0; kind < 3; kind++) {
		int lo = kind == 0 ? 0 : kind == 1 ? 6 : 9;
		int hi = kind == 0 ? 5 : kind == 1 ? 8 : 10;
		int c0, c1;
		struct t *t = t_start_roll(&f, RULES_BASE, lo, hi, &c0, &c1);
		char cmd[64], want[256], inj[64];
		int r = peek12(t);
		snprintf(cmd, sizeof cmd, "Move %d 101", c0);
		snprintf(want, sizeof want, "*:Moved %d 101 false\n%s0:ActNow\n", c0,
		         injury_events(r, c0, inj, sizeof inj));
		T_DO(t, 0, cmd, want);
		/* once per round */
		snprintf(cmd, sizeof cmd, "Move %d 100", c0);
		T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
		if (kind == 2) {
			/* a frostbite wounds at the start of the player's next turn */
			const char *ev = t_do(t, 0, "EndTurn");
			snprintf(want, sizeof want, "*:Wounded %d\n0:ActNow\n", c0);
			size_t n = strlen(ev), m = strlen(want);
			assert_true(n >= m && strcmp(ev + n - m, want) == 0);
		}
		t_free(t);
	}
}

static void test_move_revised_has_no_fuel_arg(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	int c0, c1;
	struct t *t = t_start_roll(&f, RULES_REVISED, 0, 5, &c0, &c1);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "Move %d 102 true", c0); /* fuel ignored in revised */
	snprintf(want, sizeof want, "*:Moved %d 102\n0:ActNow\n", c0);
	T_DO(t, 0, cmd, want);
	/* School has one space */
	snprintf(cmd, sizeof cmd, "Move %d 102", c1);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	t_free(t);
}

static void test_move_wound_ability(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.ability = "{\"wound\":{\"before\":\"wound\",\"after\":\"frostBite\"}}";
	int c0, c1;
	struct t *t = t_start_roll(&f, RULES_BASE, 6, 8, &c0, &c1);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "Move %d 101", c0);
	snprintf(want, sizeof want, "*:Moved %d 101 false\n*:Frostbitten %d\n0:ActNow\n", c0, c0);
	T_DO(t, 0, cmd, want);
	t_free(t);
}

static void test_move_with_fuel_base(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "UUUUUUUUUU";
	f.crisis_type = "fuel";
	struct t *t = t_new(&f, 4, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	int lowest = t->hand[0];
	for (int i = 1; i < 5; i++)
		if (t->hand[i] < lowest)
			lowest = t->hand[i];
	struct rng before = game_rng_peek(t->g);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "Move %d 101 true", c0);
	snprintf(want, sizeof want, "*:Moved %d 101 true\n*:WasteChanged 1\n0:ActNow\n", c0);
	T_DO(t, 0, cmd, want);
	struct rng after = game_rng_peek(t->g);
	assert_true(before.state == after.state); /* no infection roll */
	/* the FUEL card with the lowest id went to the waste pile */
	snprintf(cmd, sizeof cmd, "ContributeCard %d", lowest);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	snprintf(cmd, sizeof cmd, "ContributeCard %d",
	         t->hand[0] == lowest ? t->hand[1] : t->hand[0]);
	snprintf(want, sizeof want, "*:Contributed 0 %d\n0:ActNow\n",
	         t->hand[0] == lowest ? t->hand[1] : t->hand[0]);
	T_DO(t, 0, cmd, want);
	t_free(t);
}

static void test_move_with_fuel_but_none(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "FFFFFFFFFF";
	struct t *t = t_new(&f, 4, RULES_BASE);
	int c0;
	t_start1(t, &c0, NULL);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "Move %d 101 true", c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	t_free(t);
}

static void test_fuel_card_revised(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "UUUUUUUUUU";
	struct t *t = t_new(&f, 4, RULES_REVISED);
	int c0, c1;
	t_start1(t, &c0, &c1);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "UseCard %d %d 100", t->hand[0], c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* already there */
	snprintf(cmd, sizeof cmd, "UseCard %d %d 102", t->hand[0], c0);
	snprintf(want, sizeof want, "*:CardUsed %d %d 102\n*:WasteChanged 1\n0:ActNow\n",
	         t->hand[0], c0);
	T_DO(t, 0, cmd, want);
	snprintf(cmd, sizeof cmd, "UseCard %d %d 101", t->hand[1], c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* moved already */
	snprintf(cmd, sizeof cmd, "UseCard %d %d 102", t->hand[1], c1);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* School full */
	t_free(t);
	/* base: FUEL is not played with UseCard */
	t = t_new(&f, 4, RULES_BASE);
	t_start1(t, &c0, &c1);
	snprintf(cmd, sizeof cmd, "UseCard %d %d 102", t->hand[0], c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	snprintf(cmd, sizeof cmd, "UseCard %d", t->hand[0]);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	t_free(t);
}

/* ---- search ------------------------------------------------------------ */

static void test_search(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	struct t *t = t_new(&f, 2, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "Search %d", c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* nothing to search in the colony */
	t_free(t);

	/* find seeds for an encounter and for a plain search after a quiet move */
	bool seen_plain = false, seen_encounter = false;
	for (int64_t seed = 1; seed < 400 && !(seen_plain && seen_encounter); seed++) {
		t = t_new(&f, seed, RULES_BASE);
		t_start1(t, &c0, &c1);
		if (peek12(t) >= 6) {
			t_free(t);
			continue;
		}
		snprintf(cmd, sizeof cmd, "Move %d 101", c0);
		t_do(t, 0, cmd);
		struct rng r = game_rng_peek(t->g);
		int x = rng_next_int(&r, 10); /* initial deck size of the Mall */
		snprintf(cmd, sizeof cmd, "Search %d", c0);
		const char *ev = t_do(t, 0, cmd);
		char want[512];
		if (x == 0) {
			int kids = rng_next_int(&r, 4);
			int n = snprintf(want, sizeof want,
			                 "*:Searched %d 101\n*:CharacterSpawned 0 ", c0);
			assert_true(strncmp(ev, want, (size_t)n) == 0);
			assert_int_equal(t_count(t, GEV_CHILD_SPAWNED), kids);
			assert_int_equal(t_count(t, GEV_CARD_DRAWN), 0);
			seen_encounter = true;
		} else {
			snprintf(want, sizeof want, "*:Searched %d 101\n*:CardDrawn 0 ", c0);
			assert_true(strncmp(ev, want, strlen(want)) == 0);
			int card = t_arg(t, GEV_CARD_DRAWN, 0, 1);
			assert_true(card >= 2000 && card <= 2009);
			assert_int_equal(t_count(t, GEV_ACT_NOW), 1);
			seen_plain = true;
		}
		t_free(t);
	}
	assert_true(seen_plain);
	assert_true(seen_encounter);
}

static void test_search_ability_draws_more(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.ability = "{\"search\":{\"location\":101,\"numCards\":2,\"maxActivations\":1}}";
	for (int64_t seed = 1; seed < 400; seed++) {
		struct t *t = t_new(&f, seed, RULES_BASE);
		int c0, c1;
		t_start1(t, &c0, &c1);
		if (peek12(t) >= 6) {
			t_free(t);
			continue;
		}
		char cmd[64];
		snprintf(cmd, sizeof cmd, "Move %d 101", c0);
		t_do(t, 0, cmd);
		struct rng r = game_rng_peek(t->g);
		if (rng_next_int(&r, 10) == 0 || rng_next_int(&r, 10) == 0) {
			t_free(t);
			continue;
		}
		snprintf(cmd, sizeof cmd, "Search %d", c0);
		t_do(t, 0, cmd);
		assert_int_equal(t_count(t, GEV_CARD_DRAWN), 3); /* numCards + 1 */
		t_do(t, 0, cmd);
		assert_int_equal(t_count(t, GEV_CARD_DRAWN), 1); /* activations used up */
		t_free(t);
		return;
	}
	fail_msg("no seed found");
}

/* ---- dice-based actions ------------------------------------------------- */

static void test_barricade_and_dice(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	struct t *t = t_new(&f, 6, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "Barricade %d 2", c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* the colony has entrances 0, 1 */
	for (int i = 0; i < 3; i++) {
		snprintf(cmd, sizeof cmd, "Barricade %d 0", c0);
		snprintf(want, sizeof want, "*:Barricaded %d 100 0\n0:ActNow\n", c0);
		T_DO(t, 0, cmd, want);
	}
	/* three dice used: none left */
	snprintf(cmd, sizeof cmd, "Barricade %d 1", c1);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	snprintf(cmd, sizeof cmd, "Attack %d 0", c1);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	t_free(t);

	t = t_new(&f, 6, RULES_BASE);
	t_start1(t, &c0, &c1);
	for (int i = 0; i < 3; i++) {
		snprintf(cmd, sizeof cmd, "Barricade %d 1", c0);
		t_do(t, 0, cmd);
	}
	t_free(t);
}

static void test_barricade_full_entrance(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.zombies_colony = 4; /* entrance 0: 2 zombies, entrance 1: 2 zombies */
	struct t *t = t_new(&f, 6, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "Barricade %d 0", c0);
	snprintf(want, sizeof want, "*:Barricaded %d 100 0\n0:ActNow\n", c0);
	T_DO(t, 0, cmd, want);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	t_free(t);
}

static void test_attack(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.zombies_colony = 1;
	int c0, c1;
	struct t *t = t_start_roll(&f, RULES_BASE, 0, 8, &c0, &c1);
	char cmd[64], want[256], inj[64];
	snprintf(cmd, sizeof cmd, "Attack %d 1", c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* no zombie at 1 */
	snprintf(cmd, sizeof cmd, "Attack %d 7", c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* no entrance 7 */
	int r = peek12(t);
	snprintf(cmd, sizeof cmd, "Attack %d 0", c0);
	snprintf(want, sizeof want, "*:ZombieKilled %d 100 0\n%s0:ActNow\n", c0,
	         injury_events(r, c0, inj, sizeof inj));
	T_DO(t, 0, cmd, want);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* no zombie left */
	t_free(t);
}

static void test_attack_no_infection(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.ability = "{\"no_infection\":{}}";
	f.zombies_colony = 1;
	struct t *t = t_new(&f, 6, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	struct rng before = game_rng_peek(t->g);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "Attack %d 0", c0);
	snprintf(want, sizeof want, "*:ZombieKilled %d 100 0\n0:ActNow\n", c0);
	T_DO(t, 0, cmd, want);
	assert_true(before.state == game_rng_peek(t->g).state);
	/* a passive ability cannot be used actively */
	snprintf(cmd, sizeof cmd, "UseAbility %d", c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	t_free(t);
}

/* Attack needs a die >= attack value: with attack 6, a seed whose dice have
 * no 6 fails; the first seed with a 6 succeeds and uses exactly that die. */
static void test_attack_needs_high_die(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.attack = 6;
	f.zombies_colony = 2;
	bool seen_fail = false, seen_ok = false;
	for (int64_t seed = 1; seed < 200 && !(seen_fail && seen_ok); seed++) {
		struct t *t = t_new(&f, seed, RULES_BASE);
		int c0, c1;
		t_start1(t, &c0, &c1);
		int sixes = 0;
		for (int i = 0; i < t->ndice; i++)
			sixes += t->dice[i] == 6;
		char cmd[64];
		snprintf(cmd, sizeof cmd, "Attack %d 0", c0);
		const char *ev = t_do(t, 0, cmd);
		if (sixes == 0) {
			assert_string_equal(ev, "s:CommandFailed\n0:ActNow\n");
			seen_fail = true;
		} else if (peek12(t) >= 0 && t_count(t, GEV_ZOMBIE_KILLED) == 1) {
			seen_ok = true;
			if (sixes == 1 && is_alive_after(t, c0)) {
				snprintf(cmd, sizeof cmd, "Attack %d 1", c0);
				assert_string_equal(t_do(t, 0, cmd), "s:CommandFailed\n0:ActNow\n");
			}
		}
		t_free(t);
	}
	assert_true(seen_fail && seen_ok);
}

/* ---- waste, crisis, cards ---------------------------------------------- */

static void test_food_card_and_clean_waste_base(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "FFFFFFFFFF";
	struct t *t = t_new(&f, 6, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	char cmd[64], want[256];
	snprintf(cmd, sizeof cmd, "CleanWaste %d", c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* empty pile */
	for (int i = 0; i < 4; i++) {
		snprintf(cmd, sizeof cmd, "UseCard %d", t->hand[i]);
		snprintf(want, sizeof want,
		         "*:CardUsed %d\n*:WasteChanged %d\n*:FoodChanged 2 FOOD_ADDED\n0:ActNow\n",
		         t->hand[i], i + 1);
		T_DO(t, 0, cmd, want);
	}
	snprintf(cmd, sizeof cmd, "UseCard %d", t->hand[0]);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* no longer in hand */
	snprintf(cmd, sizeof cmd, "CleanWaste %d", c0);
	T_DO(t, 0, cmd, "*:WasteChanged 1\n0:ActNow\n"); /* base: the new total */
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");  /* once per round */
	snprintf(cmd, sizeof cmd, "CleanWaste %d", c1);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* per player, not character */
	/* colony phase: 2 in the colony eat 1 of the 8 food */
	const char *ev = t_do(t, 0, "EndTurn");
	assert_true(strncmp(ev, "*:ColonyPhaseStarted\n*:FoodChanged -1 FOOD_CONSUMED\n", 52) == 0);
	t_free(t);
}

static void test_clean_waste_revised_repeatable(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "FFFFFFFFFF";
	struct t *t = t_new(&f, 6, RULES_REVISED);
	int c0, c1;
	t_start1(t, &c0, &c1);
	char cmd[64];
	for (int i = 0; i < 5; i++) {
		snprintf(cmd, sizeof cmd, "UseCard %d", t->hand[i]);
		t_do(t, 0, cmd);
	}
	snprintf(cmd, sizeof cmd, "CleanWaste %d", c0);
	T_DO(t, 0, cmd, "*:WasteChanged -3\n0:ActNow\n");
	T_DO(t, 0, cmd, "*:WasteChanged -2\n0:ActNow\n");
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	t_free(t);
}

static void test_trash_ability(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "FFFFFFFFFF";
	f.ability = "{\"trash\":{\"numCards\":4}}";
	struct t *t = t_new(&f, 6, RULES_REVISED);
	int c0, c1;
	t_start1(t, &c0, &c1);
	char cmd[64];
	for (int i = 0; i < 5; i++) {
		snprintf(cmd, sizeof cmd, "UseCard %d", t->hand[i]);
		t_do(t, 0, cmd);
	}
	snprintf(cmd, sizeof cmd, "CleanWaste %d", c0);
	T_DO(t, 0, cmd, "*:WasteChanged -4\n0:ActNow\n");
	t_free(t);
}

static void test_contribute(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "FFFFFMMMMM";
	f.crisis_type = "medicine";
	f.required = 1;
	struct t *t = t_new(&f, 8, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	char cmd[64], want[128];
	int meds = 0;
	for (int i = 0; i < 5; i++) {
		snprintf(cmd, sizeof cmd, "ContributeCard %d", t->hand[i]);
		if (t->hand[i] >= 1005) {
			snprintf(want, sizeof want, "*:Contributed 0 %d\n0:ActNow\n", t->hand[i]);
			meds++;
		} else {
			snprintf(want, sizeof want, "s:CommandFailed\n0:ActNow\n");
		}
		T_DO(t, 0, cmd, want);
	}
	T_DO(t, 0, "ContributeCard 2000", "s:CommandFailed\n0:ActNow\n");
	const char *ev = t_do(t, 0, "EndTurn");
	if (meds >= 3)
		assert_true(contains(ev, "*:MoralChanged 1 CRISIS\n"));
	else if (meds >= 1)
		assert_false(contains(ev, "CRISIS"));
	else
		assert_true(contains(ev, "*:MoralChanged -2 CRISIS\n"));
	/* contributed cards are not waste */
	assert_false(contains(ev, "WASTE"));
	t_free(t);
}

static void test_stuff_rerolls_lowest(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "SSSSSSSSSS";
	struct t *t = t_new(&f, 8, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	struct rng r = game_rng_peek(t->g);
	int v = rng_next_int(&r, 6) + 1;
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "UseCard %d", t->hand[0]);
	snprintf(want, sizeof want, "*:CardUsed %d\n*:WasteChanged 1\n*:DieRolled 0 %d\n0:ActNow\n",
	         t->hand[0], v);
	T_DO(t, 0, cmd, want);
	snprintf(cmd, sizeof cmd, "UseCard %d %d 0", t->hand[1], c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* STUFF takes no target */
	t_free(t);
}

static void test_lock_scissors_medicine(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "LLLXXXMMMM";
	f.zombies_colony = 1;
	int c0, c1;
	struct t *t = t_start_roll(&f, RULES_BASE, 9, 10, &c0, &c1); /* a frostbite on the move */
	char cmd[64], want[256];
	int lock = -1, sc = -1, med = -1;
	for (int i = 0; i < 5; i++) {
		if (t->hand[i] <= 1002)
			lock = t->hand[i];
		else if (t->hand[i] <= 1005)
			sc = t->hand[i];
		else
			med = t->hand[i];
	}
	if (lock >= 0) {
		snprintf(cmd, sizeof cmd, "UseCard %d %d 3", lock, c0);
		T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
		snprintf(cmd, sizeof cmd, "UseCard %d %d 1", lock, c0);
		snprintf(want, sizeof want, "*:CardUsed %d %d 1\n*:WasteChanged 1\n0:ActNow\n",
		         lock, c0);
		T_DO(t, 0, cmd, want);
	}
	if (sc >= 0) {
		snprintf(cmd, sizeof cmd, "UseCard %d %d 1", sc, c0);
		T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* no zombie at 1 */
		snprintf(cmd, sizeof cmd, "UseCard %d %d 0", sc, c0);
		int w = lock >= 0 ? 2 : 1;
		snprintf(want, sizeof want,
		         "*:CardUsed %d %d 0\n*:WasteChanged %d\n*:ZombieKilled %d 100 "
		         "0\n0:ActNow\n",
		         sc, c0, w, c0);
		T_DO(t, 0, cmd, want);
	}
	if (med >= 0) {
		snprintf(cmd, sizeof cmd, "UseCard %d %d %d", med, c0, c1);
		T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* c1 is not injured */
		snprintf(cmd, sizeof cmd, "Move %d 101", c1);
		const char *ev = t_do(t, 0, cmd);
		if (!contains(ev, "Bitten")) {
			/* c1 frostbitten in the Mall, c0 heals it from the colony: no */
			snprintf(cmd, sizeof cmd, "UseCard %d %d %d", med, c0, c1);
			T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
		}
	}
	t_free(t);
}

/* MEDICINE heals a frostbite: the next turn brings no Wounded. */
static void test_medicine_heals_frostbite(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "MMMMMMMMMM";
	int c0, c1;
	struct t *t = t_start_roll(&f, RULES_BASE, 9, 10, &c0, &c1);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "Move %d 102", c0);
	snprintf(want, sizeof want, "*:Moved %d 102 false\n*:Frostbitten %d\n0:ActNow\n", c0, c0);
	T_DO(t, 0, cmd, want);
	snprintf(cmd, sizeof cmd, "UseCard %d %d %d", t->hand[0], c1, c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* not at the same location */
	snprintf(cmd, sizeof cmd, "UseCard %d %d %d", t->hand[0], c0, c0);
	snprintf(want, sizeof want, "*:CardUsed %d %d %d\n*:WasteChanged 1\n0:ActNow\n", t->hand[0],
	         c0, c0);
	T_DO(t, 0, cmd, want);
	snprintf(cmd, sizeof cmd, "UseCard %d %d %d", t->hand[1], c0, c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* healthy again */
	const char *ev = t_do(t, 0, "EndTurn");
	assert_false(contains(ev, "Wounded"));
	t_free(t);
}

/* A frostbite stays until healed: it adds a wound at each turn start of its
 * player, and the third injury kills. */
static void test_frostbite_wounds_every_turn(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	int c0, c1;
	struct t *t = t_start_roll(&f, RULES_BASE, 9, 10, &c0, &c1);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "Move %d 102", c0);
	snprintf(want, sizeof want, "*:Moved %d 102 false\n*:Frostbitten %d\n0:ActNow\n", c0, c0);
	T_DO(t, 0, cmd, want);
	snprintf(want, sizeof want, "*:Wounded %d\n0:ActNow\n", c0);
	assert_true(ends_with(t_do(t, 0, "EndTurn"), want));
	snprintf(want, sizeof want,
	         "*:Wounded %d\n*:SurvivorKilled %d\n*:MoralChanged -1 CHARACTER_DIED\n0:ActNow\n",
	         c0, c0);
	assert_true(ends_with(t_do(t, 0, "EndTurn"), want));
	t_free(t);
}

/* ---- abilities ----------------------------------------------------------- */

static void test_feed(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	struct t *t = t_new(&f, 8, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "UseAbility %d 1", c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* FEED takes no target */
	snprintf(cmd, sizeof cmd, "UseAbility %d", c0);
	snprintf(want, sizeof want, "*:AbilityUsed %d\n0:ActNow\n", c0);
	T_DO(t, 0, cmd, want);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* once per round */
	snprintf(cmd, sizeof cmd, "UseAbility %d", c1);
	snprintf(want, sizeof want, "*:AbilityUsed %d\n0:ActNow\n", c1);
	T_DO(t, 0, cmd, want);
	/* 6 food, 2 eat 1 */
	const char *ev = t_do(t, 0, "EndTurn");
	assert_true(strncmp(ev, "*:ColonyPhaseStarted\n*:FoodChanged -1 FOOD_CONSUMED\n", 52) == 0);
	/* the next round the ability is available again */
	snprintf(cmd, sizeof cmd, "UseAbility %d", c0);
	snprintf(want, sizeof want, "*:AbilityUsed %d\n0:ActNow\n", c0);
	T_DO(t, 0, cmd, want);
	t_free(t);
}

/* Food is a Java int in the reference server: INT_MAX + INT_MAX wraps to
 * -2 (in C the plain sum would be undefined behaviour, which the
 * sanitizer build turns into an abort), and the colony starves. */
static void test_feed_overflow_wraps_like_java(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.ability = "{\"feed\":{\"numFood\":2147483647}}";
	struct t *t = t_new(&f, 8, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "UseAbility %d", c0);
	snprintf(want, sizeof want, "*:AbilityUsed %d\n0:ActNow\n", c0);
	T_DO(t, 0, cmd, want);
	snprintf(cmd, sizeof cmd, "UseAbility %d", c1);
	snprintf(want, sizeof want, "*:AbilityUsed %d\n0:ActNow\n", c1);
	T_DO(t, 0, cmd, want);
	/* food is -2 now: nothing to eat, a starvation token, morale -1 */
	const char *ev = t_do(t, 0, "EndTurn");
	const char *starve = "*:ColonyPhaseStarted\n*:StarvationTokenAdded\n*:MoralChanged -1 "
	                     "STARVATION_TOKEN\n";
	assert_true(strncmp(ev, starve, strlen(starve)) == 0);
	assert_null(strstr(ev, "FOOD_CONSUMED"));
	t_free(t);
}

/* requiredCards + 2 as a Java int: for 2147483647 it wraps to -2147483647,
 * so even no contribution "exceeds" it by two and morale rises (the plain C
 * sum would be undefined behaviour). */
static void test_crisis_required_overflow_wraps_like_java(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.required = 2147483647;
	struct t *t = t_new(&f, 8, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	const char *ev = t_do(t, 0, "EndTurn");
	assert_non_null(strstr(ev, "*:MoralChanged 1 CRISIS\n"));
	t_free(t);
}

static void test_heal(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.ability = "{\"heal\":{}}";
	int c0, c1;
	struct t *t = t_start_roll(&f, RULES_BASE, 6, 8, &c0, &c1); /* a wound on the move */
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "Move %d 101", c0);
	t_do(t, 0, cmd);
	snprintf(cmd, sizeof cmd, "UseAbility %d %d", c1, c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* not at the same location */
	snprintf(cmd, sizeof cmd, "UseAbility %d", c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* HEAL needs a target */
	snprintf(cmd, sizeof cmd, "UseAbility %d %d", c0, c0);
	snprintf(want, sizeof want, "*:AbilityUsed %d %d\n0:ActNow\n", c0, c0);
	T_DO(t, 0, cmd, want);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	t_free(t);
}

static void test_barricade_ability(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.ability = "{\"barricade\":{\"numBarricades\":2,\"maxActivations\":2}}";
	f.zombies_colony = 2; /* one per entrance */
	struct t *t = t_new(&f, 8, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "UseAbility %d", c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	snprintf(cmd, sizeof cmd, "UseAbility %d 4", c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	snprintf(cmd, sizeof cmd, "UseAbility %d 0", c0);
	snprintf(want, sizeof want, "*:AbilityUsed %d 0\n0:ActNow\n", c0);
	T_DO(t, 0, cmd, want);
	/* entrance 0 is full now (1 zombie + 2 barricades) */
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	snprintf(cmd, sizeof cmd, "UseAbility %d 1", c0);
	snprintf(want, sizeof want, "*:AbilityUsed %d 1\n0:ActNow\n", c0);
	T_DO(t, 0, cmd, want);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* 2 activations used */
	/* no die was used: three plain barricades would need three dice */
	snprintf(cmd, sizeof cmd, "Barricade %d 0", c1);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* full */
	t_free(t);
}

static void test_kill_ability(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.ability = "{\"kill\":{\"locationId\":100,\"dieValue\":1,\"numZombies\":2,"
	            "\"maxActivations\":1}}";
	f.zombies_colony = 6; /* three at each entrance */
	struct t *t = t_new(&f, 8, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	struct rng before = game_rng_peek(t->g);
	char cmd[64], want[256];
	snprintf(cmd, sizeof cmd, "UseAbility %d 0", c0);
	snprintf(want, sizeof want,
	         "*:AbilityUsed %d 0\n*:ZombieKilled %d 100 0\n*:ZombieKilled %d 100 0\n0:ActNow\n",
	         c0, c0, c0);
	T_DO(t, 0, cmd, want);
	assert_true(before.state == game_rng_peek(t->g).state); /* no infection die */
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	t_free(t);

	/* children=true needs a child in the colony; wrong location fails */
	f.ability = "{\"kill\":{\"locationId\":100,\"dieValue\":1,\"numZombies\":1,"
	            "\"maxActivations\":1,\"children\":true}}";
	t = t_new(&f, 8, RULES_BASE);
	t_start1(t, &c0, &c1);
	snprintf(cmd, sizeof cmd, "UseAbility %d 0", c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	t_free(t);
	f.ability = "{\"kill\":{\"locationId\":101,\"dieValue\":1,\"numZombies\":1,"
	            "\"maxActivations\":1}}";
	t = t_new(&f, 8, RULES_BASE);
	t_start1(t, &c0, &c1);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	t_free(t);
}

/* ---- colony phase and goals ------------------------------------------------ */

static void test_colony_phase_starvation_and_crisis(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.children = 3;
	f.moral = 10;
	struct t *t = t_new(&f, 8, RULES_BASE);
	t_start1(t, NULL, NULL);
	/* 2 characters + 3 children need 3 food; there is none: a token. The
	 * food crisis got nothing: -2. Zombies: ceil(5/2) = 3 over entrances 0,1,0. */
	t_prefix(
	        t, 0, "EndTurn",
	        "*:ColonyPhaseStarted\n*:StarvationTokenAdded\n*:MoralChanged -1 STARVATION_TOKEN\n"
	        "*:MoralChanged -2 CRISIS\n*:ZombieSpawned 100 0\n*:ZombieSpawned 100 1\n"
	        "*:ZombieSpawned 100 0\n*:NextRound 2\n*:Crisis ");
	/* second round: two tokens cost 2; entrance 0 gets its third zombie,
	 * entrance 1 its second, then entrance 0 is full: a child dies.
	 * Morale 7 - 2 - 2 - 1 = 2. */
	t_prefix(
	        t, 0, "EndTurn",
	        "*:ColonyPhaseStarted\n*:StarvationTokenAdded\n*:MoralChanged -2 STARVATION_TOKEN\n"
	        "*:MoralChanged -2 CRISIS\n*:ZombieSpawned 100 0\n*:ZombieSpawned 100 1\n"
	        "*:ChildKilled\n*:MoralChanged -1 CHARACTER_DIED\n*:NextRound 3\n");
	/* third round: -3 tokens, morale < 0: lost; nothing after GameEnd */
	T_DO(t, 0, "EndTurn",
	     "*:ColonyPhaseStarted\n*:StarvationTokenAdded\n*:MoralChanged -3 STARVATION_TOKEN\n"
	     "*:GameEnd false\n");
	assert_true(game_is_over(t->g));
	T_DO(t, 0, "EndTurn", "s:CommandFailed\n");
	t_free(t);
}

/* Full entrances: barricades are destroyed first, then children, then the
 * weakest survivor dies. */
static void test_zombie_overrun(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.zombies_colony = 5; /* entrance 0: 3, entrance 1: 2 */
	f.children = 1;
	f.moral = 20;
	f.crisis_type = "food";
	f.required = 0 + 1;
	struct t *t = t_new(&f, 8, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "Barricade %d 1", c0);
	t_do(t, 0, cmd); /* entrance 1 full: 2 zombies + 1 barricade */
	/* need = ceil((2 + 1) / 2) = 2: entrance 0 full without barricade ->
	 * the child dies; entrance 1 -> the barricade is destroyed. */
	t_prefix(
	        t, 0, "EndTurn",
	        "*:ColonyPhaseStarted\n*:StarvationTokenAdded\n*:MoralChanged -1 STARVATION_TOKEN\n"
	        "*:MoralChanged -2 CRISIS\n*:ChildKilled\n*:MoralChanged -1 CHARACTER_DIED\n"
	        "*:BarricadeDestroyed 100 1\n*:NextRound 2\n");
	/* round 2: need = 1: entrance 0 full, no child: the weakest (c0 has the
	 * lower status) dies. */
	char want[256];
	snprintf(
	        want, sizeof want,
	        "*:ColonyPhaseStarted\n*:StarvationTokenAdded\n*:MoralChanged -2 STARVATION_TOKEN\n"
	        "*:MoralChanged -2 CRISIS\n*:SurvivorKilled %d\n*:MoralChanged -1 CHARACTER_DIED\n"
	        "*:NextRound 3\n",
	        c0);
	t_prefix(t, 0, "EndTurn", want);
	t_free(t);
}

static void test_goal_survive_won_in_last_round(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.rounds = 1;
	f.moral = 20;
	struct t *t = t_new(&f, 8, RULES_BASE);
	t_start1(t, NULL, NULL);
	/* zombies still come (2 in the colony: 1), then the goal is checked */
	T_DO(t, 0, "EndTurn",
	     "*:ColonyPhaseStarted\n*:StarvationTokenAdded\n*:MoralChanged -1 STARVATION_TOKEN\n"
	     "*:MoralChanged -2 CRISIS\n*:ZombieSpawned 100 0\n*:GameEnd true\n");
	t_free(t);
}

static void test_goal_barricades(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.goal = "\"barricades\":2";
	f.rounds = 2;
	f.moral = 20;
	struct t *t = t_new(&f, 8, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "Barricade %d 0", c0);
	t_do(t, 0, cmd);
	/* one barricade: not yet, and rounds remain */
	t_prefix(t, 0, "EndTurn", "*:ColonyPhaseStarted\n");
	assert_false(game_is_over(t->g));
	/* entrance 0 now holds the barricade and a zombie; build at 1 so the
	 * next spawn at 0 finds space and destroys nothing */
	snprintf(cmd, sizeof cmd, "Barricade %d 1", c0);
	t_do(t, 0, cmd);
	const char *ev = t_do(t, 0, "EndTurn");
	assert_true(contains(ev, "*:GameEnd true\n"));
	t_free(t);
	/* not reached in the last round: lost */
	t = t_new(&f, 8, RULES_BASE);
	t_start1(t, &c0, &c1);
	t_do(t, 0, "EndTurn");
	ev = t_do(t, 0, "EndTurn");
	assert_true(contains(ev, "*:GameEnd false\n"));
	t_free(t);
}

static void test_goal_location_with_zombies(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.goal = "\"locationWithZombies\":0";
	f.zombies_colony = 1;
	f.rounds = 2;
	f.moral = 20;
	struct t *t = t_new(&f, 8, RULES_BASE);
	int c0, c1;
	t_start1(t, &c0, &c1);
	/* kill the colony's zombie without a roll: the colony spawns again at the
	 * end (2 characters), so the goal is not reached */
	t_prefix(t, 0, "EndTurn", "*:ColonyPhaseStarted\n");
	assert_false(game_is_over(t->g));
	t_free(t);
	f.goal = "\"locationWithZombies\":3";
	t = t_new(&f, 8, RULES_BASE);
	t_start1(t, &c0, &c1);
	const char *ev = t_do(t, 0, "EndTurn");
	assert_true(contains(ev, "*:GameEnd true\n"));
	t_free(t);
}

/* ---- revised: equipment -------------------------------------------------- */

static struct t *t_equipped(const char *types, enum game_rules rules, int *c0, int *c1)
{
	struct fixture f = default_fixture();
	f.start_types = types;
	f.zombies_colony = 2;
	struct t *t = t_new(&f, 8, rules);
	t_start1(t, c0, c1);
	return t;
}

static void test_equipment_base_fails(void **state)
{
	(void)state;
	int c0, c1;
	struct t *t = t_equipped("HHHHHHHHHH", RULES_BASE, &c0, &c1);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "UseCard %d %d %d", t->hand[0], c0, c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	snprintf(cmd, sizeof cmd, "UseCard %d", t->hand[0]);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n");
	t_free(t);
}

static void test_hammer(void **state)
{
	(void)state;
	int c0, c1;
	struct t *t = t_equipped("HHHHHHHHHH", RULES_REVISED, &c0, &c1);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "UseCard %d %d 999", t->hand[0], c0);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* no such character */
	snprintf(cmd, sizeof cmd, "UseCard %d %d %d", t->hand[0], c0, c1);
	snprintf(want, sizeof want, "*:CardUsed %d %d %d\n0:ActNow\n", t->hand[0], c0, c1);
	T_DO(t, 0, cmd, want); /* no WasteChanged */
	/* c1 barricades 4 times: the first is free, then three dice */
	for (int i = 0; i < 4; i++) {
		snprintf(cmd, sizeof cmd, "Barricade %d %d", c1, i < 2 ? 0 : 1);
		snprintf(want, sizeof want, "*:Barricaded %d 100 %d\n0:ActNow\n", c1,
		         i < 2 ? 0 : 1);
		T_DO(t, 0, cmd, want);
	}
	snprintf(cmd, sizeof cmd, "Barricade %d 1", c1);
	T_DO(t, 0, cmd, "s:CommandFailed\n0:ActNow\n"); /* hammer spent, no dice */
	t_free(t);
}

static void test_colt(void **state)
{
	(void)state;
	int c0, c1;
	struct t *t = t_equipped("CCCCCCCCCC", RULES_REVISED, &c0, &c1);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "UseCard %d %d %d", t->hand[0], c0, c0);
	t_do(t, 0, cmd);
	struct rng before = game_rng_peek(t->g);
	snprintf(cmd, sizeof cmd, "Attack %d 0", c0);
	snprintf(want, sizeof want, "*:ZombieKilled %d 100 0\n0:ActNow\n", c0);
	T_DO(t, 0, cmd, want);
	assert_true(before.state == game_rng_peek(t->g).state);
	/* once per round: the next attack rolls */
	snprintf(cmd, sizeof cmd, "Attack %d 1", c0);
	t_do(t, 0, cmd);
	assert_true(before.state != game_rng_peek(t->g).state);
	t_free(t);
}

static void test_swab_and_lifo(void **state)
{
	(void)state;
	int c0, c1;
	struct t *t = t_equipped("WWWWWFFFFF", RULES_REVISED, &c0, &c1);
	/* needs a waste pile: the start pile has 5 swabs and 5 food; play food */
	char cmd[64];
	int swabs[5], nsw = 0, foods[5], nf = 0;
	for (int i = 0; i < 5; i++) {
		if (t->hand[i] <= 1004)
			swabs[nsw++] = t->hand[i];
		else
			foods[nf++] = t->hand[i];
	}
	for (int i = 0; i < nf; i++) {
		snprintf(cmd, sizeof cmd, "UseCard %d", foods[i]);
		t_do(t, 0, cmd);
	}
	if (nsw == 0 || nf < 2) {
		t_free(t);
		skip();
	}
	snprintf(cmd, sizeof cmd, "UseCard %d %d %d", swabs[0], c0, c0);
	t_do(t, 0, cmd);
	char want[64];
	snprintf(cmd, sizeof cmd, "CleanWaste %d", c0);
	snprintf(want, sizeof want, "*:WasteChanged -%d\n0:ActNow\n", nf);
	T_DO(t, 0, cmd, want); /* up to 5, no die */
	t_free(t);
}

static void test_blueprint(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "PPPPPPPPPP";
	for (int64_t seed = 1; seed < 400; seed++) {
		struct t *t = t_new(&f, seed, RULES_REVISED);
		int c0, c1;
		t_start1(t, &c0, &c1);
		char cmd[64];
		snprintf(cmd, sizeof cmd, "UseCard %d %d %d", t->hand[0], c0, c0);
		t_do(t, 0, cmd);
		if (peek12(t) >= 6) {
			t_free(t);
			continue;
		}
		snprintf(cmd, sizeof cmd, "Move %d 101", c0);
		t_do(t, 0, cmd);
		struct rng r = game_rng_peek(t->g);
		if (rng_next_int(&r, 10) == 0 || rng_next_int(&r, 10) == 0) {
			t_free(t);
			continue;
		}
		snprintf(cmd, sizeof cmd, "Search %d", c0);
		t_do(t, 0, cmd);
		assert_int_equal(t_count(t, GEV_CARD_DRAWN), 2);
		t_do(t, 0, cmd);
		assert_int_equal(t_count(t, GEV_CARD_DRAWN), 1); /* once per round */
		t_free(t);
		return;
	}
	fail_msg("no seed found");
}

static void test_snow_boots(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "BBBBBBBBBB";
	for (int64_t seed = 1; seed < 400; seed++) {
		struct t *t = t_new(&f, seed, RULES_REVISED);
		int c0, c1;
		t_start1(t, &c0, &c1);
		char cmd[64], want[128];
		snprintf(cmd, sizeof cmd, "UseCard %d %d %d", t->hand[0], c0, c0);
		t_do(t, 0, cmd);
		int r = peek12(t);
		if (r != 9 && r != 10) {
			t_free(t);
			continue;
		}
		snprintf(cmd, sizeof cmd, "Move %d 101", c0);
		snprintf(want, sizeof want, "*:Moved %d 101\n*:Wounded %d\n0:ActNow\n", c0, c0);
		T_DO(t, 0, cmd, want);
		t_free(t);
		return;
	}
	fail_msg("no seed found");
}

/* LIFO: the most recently equipped item applies first, one per action. A
 * TRASH(2) character with a SWAB cleans up to 5 (the swab), not 2. */
static void test_lifo_swab_over_trash(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "WFFFFFFFFF";
	f.mall_types = "FFFFFFFFFF";
	f.ability = "{\"trash\":{\"numCards\":2}}";
	for (int64_t seed = 1; seed < 400; seed++) {
		struct t *t = t_new(&f, seed, RULES_REVISED);
		int c0, c1;
		t_start1(t, &c0, &c1);
		int swab = -1;
		for (int i = 0; i < 5; i++)
			if (t->hand[i] == 1000)
				swab = i;
		if (swab < 0) {
			t_free(t);
			continue;
		}
		char cmd[64];
		for (int i = 0; i < 5; i++)
			if (i != swab) {
				snprintf(cmd, sizeof cmd, "UseCard %d", t->hand[i]);
				t_do(t, 0, cmd);
			}
		/* 4 cards on the pile */
		snprintf(cmd, sizeof cmd, "UseCard %d %d %d", t->hand[swab], c0, c0);
		t_do(t, 0, cmd);
		snprintf(cmd, sizeof cmd, "CleanWaste %d", c0);
		T_DO(t, 0, cmd, "*:WasteChanged -4\n0:ActNow\n"); /* swab: min(5, 4) */
		t_free(t);
		return;
	}
	fail_msg("no seed found");
}

/* COLT before NO_INFECTION: the colt is spent on the first attack, the
 * second attack is covered by the ability (no roll either way). */
static void test_lifo_colt_over_no_infection(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "CCCCCCCCCC";
	f.ability = "{\"no_infection\":{}}";
	f.zombies_colony = 2;
	struct t *t = t_new(&f, 8, RULES_REVISED);
	int c0, c1;
	t_start1(t, &c0, &c1);
	char cmd[64], want[128];
	snprintf(cmd, sizeof cmd, "UseCard %d %d %d", t->hand[0], c0, c0);
	t_do(t, 0, cmd);
	struct rng before = game_rng_peek(t->g);
	for (int e = 0; e < 2; e++) {
		snprintf(cmd, sizeof cmd, "Attack %d %d", c0, e);
		snprintf(want, sizeof want, "*:ZombieKilled %d 100 %d\n0:ActNow\n", c0, e);
		T_DO(t, 0, cmd, want);
	}
	assert_true(before.state == game_rng_peek(t->g).state);
	t_free(t);
}

/* Two blueprints for the Mall on one character: each applies once per
 * round, the newest first; the third search draws one card. */
static void test_lifo_two_blueprints(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.start_types = "PPPPPPPPPP";
	for (int64_t seed = 1; seed < 600; seed++) {
		struct t *t = t_new(&f, seed, RULES_REVISED);
		int c0, c1;
		t_start1(t, &c0, &c1);
		char cmd[64];
		for (int i = 0; i < 2; i++) {
			snprintf(cmd, sizeof cmd, "UseCard %d %d %d", t->hand[i], c0, c0);
			t_do(t, 0, cmd);
		}
		if (peek12(t) >= 6) {
			t_free(t);
			continue;
		}
		snprintf(cmd, sizeof cmd, "Move %d 101", c0);
		t_do(t, 0, cmd);
		struct rng r = game_rng_peek(t->g);
		if (rng_next_int(&r, 10) == 0 || rng_next_int(&r, 10) == 0 ||
		    rng_next_int(&r, 10) == 0) {
			t_free(t);
			continue;
		}
		snprintf(cmd, sizeof cmd, "Search %d", c0);
		t_do(t, 0, cmd);
		assert_int_equal(t_count(t, GEV_CARD_DRAWN), 2);
		t_do(t, 0, cmd);
		assert_int_equal(t_count(t, GEV_CARD_DRAWN), 2);
		t_do(t, 0, cmd);
		assert_int_equal(t_count(t, GEV_CARD_DRAWN), 1);
		t_free(t);
		return;
	}
	fail_msg("no seed found");
}

/* A bite in the colony spreads: revised rolls for the children first
 * (each injury kills one; a clean roll ends the spread), base never does
 * and goes straight to the weakest survivor. Expected events are computed
 * from a copy of the generator. */
static void spread_case(enum game_rules rules)
{
	struct fixture f = default_fixture();
	f.zombies_colony = 1;
	f.children = 2;
	f.moral = 30;
	for (int64_t seed = 1; seed < 3000; seed++) {
		struct t *t = t_new(&f, seed, rules);
		int c0, c1;
		t_start1(t, &c0, &c1);
		struct rng r = game_rng_peek(t->g);
		if (rng_next_int(&r, 12) != 11) {
			t_free(t);
			continue;
		}
		/* c1 attacks and is bitten; the spread loop follows */
		char want[1024];
		size_t n = (size_t)snprintf(want, sizeof want,
		                            "*:ZombieKilled %d 100 0\n*:Bitten %d\n"
		                            "*:MoralChanged -1 CHARACTER_DIED\n",
		                            c1, c1);
		int children = 2;
		bool c0_alive = true;
		for (;;) {
			if (rules == RULES_REVISED && children > 0) {
				if (rng_next_int(&r, 12) < 6)
					break;
				children--;
				n += (size_t)snprintf(
				        want + n, sizeof want - n,
				        "*:Bitten\n*:MoralChanged -1 CHARACTER_DIED\n");
				continue;
			}
			if (!c0_alive || rng_next_int(&r, 12) < 6)
				break;
			c0_alive = false;
			n += (size_t)snprintf(want + n, sizeof want - n,
			                      "*:Bitten %d\n*:MoralChanged -1 CHARACTER_DIED\n",
			                      c0);
			/* the player's last character: a new one spawns and the turn ends */
			break;
		}
		char cmd[64];
		snprintf(cmd, sizeof cmd, "Attack %d 0", c1);
		const char *ev = t_do(t, 0, cmd);
		if (strncmp(ev, want, n) != 0)
			fail_msg("seed %lld: events\n%s\nexpected to start with\n%s",
			         (long long)seed, ev, want);
		if (c0_alive) {
			assert_string_equal(ev + n, "0:ActNow\n");
		} else {
			/* the replacement in the colony is the next victim candidate */
			assert_true(strncmp(ev + n, "*:CharacterSpawned 0 ", 21) == 0);
		}
		t_free(t);
		if (rules == RULES_BASE || children < 2)
			return; /* found a case that exercises the rule */
	}
	fail_msg("no seed found");
}

static void test_spread_children_first_revised(void **state)
{
	(void)state;
	spread_case(RULES_REVISED);
}

static void test_spread_no_children_base(void **state)
{
	(void)state;
	spread_case(RULES_BASE);
}

/* KILL with infectionDie rolls a plain infection die (no WOUND ability). */
static void test_kill_with_infection_die(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.ability = "{\"kill\":{\"locationId\":100,\"dieValue\":1,\"numZombies\":1,"
	            "\"maxActivations\":1,\"infectionDie\":true}}";
	f.zombies_colony = 1;
	int c0, c1;
	struct t *t = t_start_roll(&f, RULES_BASE, 6, 8, &c0, &c1);
	char cmd[64], want[256];
	snprintf(cmd, sizeof cmd, "UseAbility %d 0", c0);
	snprintf(want, sizeof want,
	         "*:AbilityUsed %d 0\n*:ZombieKilled %d 100 0\n*:Wounded %d\n0:ActNow\n", c0, c0,
	         c0);
	T_DO(t, 0, cmd, want);
	t_free(t);
}

/* ---- determinism ----------------------------------------------------------- */

static void play_script(struct t *t, char *log, size_t cap)
{
	size_t n = 0;
	int c0, c1;
	t_start1(t, &c0, &c1);
	n += (size_t)snprintf(log + n, cap - n, "%s", t->text);
	/* verb, then the character, then an optional argument ("" for none) */
	const char *script[][2] = {{"Move", "101"}, {"Search", ""},    {"Barricade", "0"},
	                           {"Attack", "0"}, {"EndTurn", NULL}, {"Move", "102"},
	                           {"Search", ""},  {"EndTurn", NULL}, {"EndTurn", NULL}};
	for (size_t i = 0; i < sizeof script / sizeof script[0] && !game_is_over(t->g); i++) {
		char cmd[64];
		if (script[i][1])
			snprintf(cmd, sizeof cmd, "%s %d %s", script[i][0], c0, script[i][1]);
		else
			snprintf(cmd, sizeof cmd, "%s", script[i][0]);
		n += (size_t)snprintf(log + n, cap - n, "%s", t_do(t, 0, cmd));
	}
}

static void test_deterministic(void **state)
{
	(void)state;
	struct fixture f = default_fixture();
	f.zombies_colony = 3;
	static char a[1 << 16], b[1 << 16];
	for (int64_t seed = -3; seed < 20; seed++) {
		struct t *x = t_new(&f, seed, RULES_BASE), *y = t_new(&f, seed, RULES_BASE);
		play_script(x, a, sizeof a);
		play_script(y, b, sizeof b);
		assert_string_equal(a, b);
		t_free(x);
		t_free(y);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_register_and_start),
	        cmocka_unit_test(test_registration_aborted_by_other_command),
	        cmocka_unit_test(test_registration_timeout),
	        cmocka_unit_test(test_selection_checks),
	        cmocka_unit_test(test_preparation_and_first_round),
	        cmocka_unit_test(test_revised_round_counts_down),
	        cmocka_unit_test(test_selection_timeout_leaves),
	        cmocka_unit_test(test_disconnect_in_selection),
	        cmocka_unit_test(test_not_your_turn_and_end_turn),
	        cmocka_unit_test(test_leave_kills_in_descending_status),
	        cmocka_unit_test(test_timeout_in_turn_is_leave),
	        cmocka_unit_test(test_disconnect_in_turn_is_leave),
	        cmocka_unit_test(test_phase_and_sender_checks_order),
	        cmocka_unit_test(test_precondition_order),
	        cmocka_unit_test(test_every_command_is_known),
	        cmocka_unit_test(test_move_checks),
	        cmocka_unit_test(test_move_infection_roll),
	        cmocka_unit_test(test_move_revised_has_no_fuel_arg),
	        cmocka_unit_test(test_move_wound_ability),
	        cmocka_unit_test(test_move_with_fuel_base),
	        cmocka_unit_test(test_move_with_fuel_but_none),
	        cmocka_unit_test(test_fuel_card_revised),
	        cmocka_unit_test(test_search),
	        cmocka_unit_test(test_search_ability_draws_more),
	        cmocka_unit_test(test_barricade_and_dice),
	        cmocka_unit_test(test_barricade_full_entrance),
	        cmocka_unit_test(test_attack),
	        cmocka_unit_test(test_attack_no_infection),
	        cmocka_unit_test(test_attack_needs_high_die),
	        cmocka_unit_test(test_food_card_and_clean_waste_base),
	        cmocka_unit_test(test_clean_waste_revised_repeatable),
	        cmocka_unit_test(test_trash_ability),
	        cmocka_unit_test(test_contribute),
	        cmocka_unit_test(test_stuff_rerolls_lowest),
	        cmocka_unit_test(test_lock_scissors_medicine),
	        cmocka_unit_test(test_medicine_heals_frostbite),
	        cmocka_unit_test(test_frostbite_wounds_every_turn),
	        cmocka_unit_test(test_feed),
	        cmocka_unit_test(test_feed_overflow_wraps_like_java),
	        cmocka_unit_test(test_crisis_required_overflow_wraps_like_java),
	        cmocka_unit_test(test_heal),
	        cmocka_unit_test(test_barricade_ability),
	        cmocka_unit_test(test_kill_ability),
	        cmocka_unit_test(test_colony_phase_starvation_and_crisis),
	        cmocka_unit_test(test_zombie_overrun),
	        cmocka_unit_test(test_goal_survive_won_in_last_round),
	        cmocka_unit_test(test_goal_barricades),
	        cmocka_unit_test(test_goal_location_with_zombies),
	        cmocka_unit_test(test_equipment_base_fails),
	        cmocka_unit_test(test_hammer),
	        cmocka_unit_test(test_colt),
	        cmocka_unit_test(test_swab_and_lifo),
	        cmocka_unit_test(test_blueprint),
	        cmocka_unit_test(test_snow_boots),
	        cmocka_unit_test(test_lifo_swab_over_trash),
	        cmocka_unit_test(test_lifo_colt_over_no_infection),
	        cmocka_unit_test(test_lifo_two_blueprints),
	        cmocka_unit_test(test_spread_children_first_revised),
	        cmocka_unit_test(test_spread_no_children_base),
	        cmocka_unit_test(test_kill_with_infection_die),
	        cmocka_unit_test(test_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
