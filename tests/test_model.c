/*
 * Unit tests for the client model (client/model.c, client/describe.c).
 *
 * The event streams are real server output: the scenario files in
 * client/testdata (copies of scenarios from systemtests/scenarios, which the
 * system tests check against the server) list, per client, every line the
 * server sends. A scenario is read for one client: its "N < Event args"
 * and "* < Event args" lines become the event lines (JSON, parameters in
 * protocol order; "Config" becomes the configuration file's text), its
 * "N > Command args" lines the commands that client sent (the model is
 * told which one is in flight, as sopra-bot does, so that it can take the
 * die a successful command uses). Two further streams (bot_*.ndjson) are
 * complete random games recorded from sopra-bot's --log.
 *
 * The tests fold a stream up to a given line and compare the board with
 * values worked out by hand from the scenario and its configuration.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "model.h"
#include "toolutil.h" /* read_file */

/* ---- reading the streams ---------------------------------------------------------------- */

static char *load_text(const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", SOPRA_MODEL_TESTDATA, name);
	char *buf = read_file(path, NULL);
	if (!buf)
		fail_msg("cannot open %s", path);
	return buf;
}

/* One line of a stream: an event the client received, or a command it sent. */
struct step {
	char text[160]; /* "CardDrawn 0 28" (an event), "> Search 201" (a command) */
	char *json;     /* the event line; NULL for a command */
	char cmd[32];
	int arg[3], nargs;
};

struct stream {
	struct step *steps;
	size_t n, cap, pos;
	struct model m;
};

static struct step *add_step(struct stream *s)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->steps = realloc(s->steps, s->cap * sizeof *s->steps);
		assert_non_null(s->steps);
	}
	struct step *st = &s->steps[s->n++];
	memset(st, 0, sizeof *st);
	return st;
}

/* The events' parameters in protocol order: i int, b bool, s string. */
static const struct {
	const char *name;
	const char *keys[4];
	const char *types;
} params[] = {
        {"Config", {"config"}, "s"},
        {"ActNow", {NULL}, ""},
        {"Characters", {"characterId0", "characterId1", "characterId2", "characterId3"}, "iiii"},
        {"CommandFailed", {"message"}, "s"},
        {"RegistrationAborted", {NULL}, ""},
        {"Player", {"player", "playerName"}, "is"},
        {"GameStarted", {NULL}, ""},
        {"CharacterSpawned", {"player", "characterId"}, "ii"},
        {"ZombieSpawned", {"locationId", "entrance"}, "ii"},
        {"ChildSpawned", {NULL}, ""},
        {"CardDrawn", {"player", "cardId"}, "ii"},
        {"GameEnd", {"win"}, "b"},
        {"NextRound", {"round"}, "i"},
        {"Crisis", {"crisisId"}, "i"},
        {"DieRolled", {"player", "value"}, "ii"},
        {"AbilityUsed", {"characterId", "target"}, "ii"},
        {"Barricaded", {"characterId", "locationId", "entrance"}, "iii"},
        {"Moved", {"characterId", "locationId", "fuel"}, "iib"},
        {"Frostbitten", {"characterId"}, "i"},
        {"Wounded", {"characterId"}, "i"},
        {"Bitten", {"characterId"}, "i"},
        {"Contributed", {"player", "cardId"}, "ii"},
        {"CardUsed", {"cardId", "characterId", "target"}, "iii"},
        {"FoodChanged", {"amount", "reason"}, "is"},
        {"ColonyPhaseStarted", {NULL}, ""},
        {"StarvationTokenAdded", {NULL}, ""},
        {"MoralChanged", {"amount", "reason"}, "is"},
        {"SurvivorKilled", {"characterId"}, "i"},
        {"ChildKilled", {NULL}, ""},
        {"BarricadeDestroyed", {"locationId", "entrance"}, "ii"},
        {"WasteChanged", {"amount"}, "i"},
        {"ZombieKilled", {"characterId", "locationId", "entrance"}, "iii"},
        {"Searched", {"characterId", "locationId"}, "ii"},
        {"Left", {"player"}, "i"},
};

/* Split a scenario line into words ("quoted" strings are one word without
 * their quotes); a word starting with # ends the line. */
static int split_words(char *line, char **w, int max)
{
	int n = 0;
	char *p = line;
	while (*p && n < max) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			break;
		if (*p == '"') {
			char *out = ++p;
			w[n++] = out;
			while (*p && *p != '"') {
				if (*p == '\\' && p[1])
					p++;
				*out++ = *p++;
			}
			if (*p)
				p++;
			*out = '\0';
			continue;
		}
		w[n++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

static char *event_json(char **w, int nw, const char *config_text)
{
	for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
		if (strcmp(params[i].name, w[0]) != 0)
			continue;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "event", w[0]);
		if (strcmp(w[0], "Config") == 0)
			cJSON_AddStringToObject(o, "config", config_text);
		if (strcmp(w[0], "CommandFailed") == 0 && nw == 1) /* any message */
			cJSON_AddStringToObject(o, "message", "failed");
		for (int k = 1; k < nw; k++) {
			const char *key = params[i].keys[k - 1];
			char t = params[i].types[k - 1];
			assert_non_null(key);
			if (t == 'i')
				cJSON_AddNumberToObject(o, key, atoi(w[k]));
			else if (t == 'b')
				cJSON_AddBoolToObject(o, key, strcmp(w[k], "true") == 0);
			else
				cJSON_AddStringToObject(o, key, w[k]);
		}
		char *line = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
		return line;
	}
	fail_msg("unknown event %s", w[0]);
	return NULL;
}

/* The lines of scenario `name` as client `client` saw them; its model is
 * for the name that client registered with. */
static void open_scenario(struct stream *s, const char *name, int client)
{
	memset(s, 0, sizeof *s);
	char *text = load_text(name);
	char *config_text = NULL, *my_name = NULL;
	bool revised = false;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *w[16];
		int nw = split_words(line, w, 16);
		if (nw == 0)
			continue;
		if (strcmp(w[0], "config") == 0 && nw > 1) {
			config_text = load_text(w[1]);
			continue;
		}
		if (strcmp(w[0], "rules") == 0 && nw > 1) {
			revised = strcmp(w[1], "revised") == 0;
			continue;
		}
		if (nw < 3 || (strcmp(w[0], "*") != 0 && atoi(w[0]) != client))
			continue;
		if (strcmp(w[1], "<") == 0) {
			struct step *st = add_step(s);
			int k = 0;
			for (int i = 2; i < nw; i++)
				k += snprintf(st->text + k, sizeof st->text - (size_t)k, "%s%s",
				              i > 2 ? " " : "", w[i]);
			st->json = event_json(w + 2, nw - 2, config_text);
		} else if (strcmp(w[1], ">") == 0 && strcmp(w[0], "*") != 0) {
			if (strcmp(w[2], "Register") == 0 && nw > 3 && !my_name)
				my_name = strdup(w[3]);
			struct step *st = add_step(s);
			snprintf(st->text, sizeof st->text, "> %s", w[2]);
			snprintf(st->cmd, sizeof st->cmd, "%s", w[2]);
			for (int i = 3; i < nw && st->nargs < 3; i++)
				st->arg[st->nargs++] = atoi(w[i]);
		}
	}
	model_init(&s->m, my_name, revised);
	free(my_name);
	free(config_text);
	free(text);
}

/* A recorded stream: one event line per line. */
static void open_ndjson(struct stream *s, const char *name, const char *my_name, bool revised)
{
	memset(s, 0, sizeof *s);
	char *text = load_text(name);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		struct step *st = add_step(s);
		snprintf(st->text, sizeof st->text, "%s", line);
		st->json = strdup(line);
	}
	free(text);
	model_init(&s->m, my_name, revised);
}

static void close_stream(struct stream *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->steps[i].json);
	free(s->steps);
	model_free(&s->m);
}

/* Our command st is in flight: tell the model, as sopra-bot does. */
static void apply_command(struct stream *s, const struct step *st)
{
	struct model *m = &s->m;
	int c = st->nargs > 0 ? model_find_char(m, st->arg[0]) : -1;
	if (strcmp(st->cmd, "EndTurn") == 0 || strcmp(st->cmd, "Leave") == 0)
		model_end_my_turn(m);
	else if (strcmp(st->cmd, "Search") == 0)
		model_set_pending(m, MODEL_PEND_SEARCH, c);
	else if (strcmp(st->cmd, "Attack") == 0)
		model_set_pending(m, MODEL_PEND_ATTACK, c);
	else if (strcmp(st->cmd, "Barricade") == 0)
		model_set_pending(m, MODEL_PEND_BARRICADE, c);
	else if (strcmp(st->cmd, "CleanWaste") == 0)
		model_set_pending(m, MODEL_PEND_CLEAN, c);
	else if (strcmp(st->cmd, "UseAbility") == 0 && st->nargs == 2 && c >= 0 &&
	         m->chars[c].ability == MODEL_AB_KILL)
		model_set_pending(m, MODEL_PEND_KILL, c);
	else
		model_set_pending(m, MODEL_PEND_NONE, -1);
}

/* Fold the next step (or tell the model about our command); returns it. */
static const struct step *fold_one(struct stream *s)
{
	const struct step *st = &s->steps[s->pos++];
	if (!st->json) {
		apply_command(s, st);
		return st;
	}
	char err[600];
	if (model_fold_line(&s->m, st->json, strlen(st->json), err, sizeof err) != MODEL_OK)
		fail_msg("step %zu (%s): %s", s->pos, st->text, err);
	return st;
}

/* Fold the steps up to and including the next one whose text is upto
 * (NULL: all of them). Any model error fails the test. */
static void fold_to(struct stream *s, const char *upto)
{
	while (s->pos < s->n) {
		const struct step *st = fold_one(s);
		if (upto && strcmp(st->text, upto) == 0)
			return;
	}
	if (upto)
		fail_msg("no step \"%s\" left in the stream", upto);
}

/* Fold up to the next event whose text is upto and describe that one
 * (before folding it, as describe.h asks). */
static const char *describe_at(struct stream *s, const char *upto, char *buf, size_t n)
{
	while (s->pos < s->n &&
	       !(s->steps[s->pos].json && strcmp(s->steps[s->pos].text, upto) == 0))
		fold_one(s);
	if (s->pos >= s->n)
		fail_msg("no step \"%s\" left in the stream", upto);
	const struct step *st = &s->steps[s->pos];
	struct model_event ev;
	char err[600];
	if (model_decode(&s->m, st->json, strlen(st->json), &ev, err, sizeof err) != MODEL_OK)
		fail_msg("%s: %s", st->text, err);
	model_describe(&s->m, &ev, buf, n);
	model_event_free(&ev);
	fold_one(s);
	return buf;
}

/* Fold one line that must be rejected; its message must contain want. */
static void fold_fails(struct stream *s, const char *line, const char *want)
{
	char err[600] = "";
	int rc = model_fold_line(&s->m, line, strlen(line), err, sizeof err);
	assert_int_equal(rc, MODEL_VIOLATION);
	if (!strstr(err, want))
		fail_msg("%s: error \"%s\" does not contain \"%s\"", line, err, want);
}

/* ---- reading the board ------------------------------------------------------------------ */

static const struct model_character *chr(const struct model *m, int id)
{
	int c = model_find_char(m, id);
	assert_true(c >= 0);
	return &m->chars[c];
}

static int loc_id(const struct model *m, int index)
{
	return index < 0 ? -1 : m->locs[index].id;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static const char *join(int *v, int n, bool sort, char *buf, size_t size)
{
	if (sort)
		qsort(v, (size_t)n, sizeof *v, cmp_int);
	size_t k = 0;
	buf[0] = '\0';
	for (int i = 0; i < n && k < size; i++)
		k += (size_t)snprintf(buf + k, size - k, "%s%d", i ? "," : "", v[i]);
	return buf;
}

/* player p's cards, ascending ids */
static const char *hand_str(const struct model *m, int p, char *buf, size_t size)
{
	int ids[512], n = 0;
	for (int i = 0; i < m->ncards && n < 512; i++)
		if (m->cards[i].holder == p)
			ids[n++] = m->cards[i].id;
	return join(ids, n, true, buf, size);
}

/* our dice, ascending */
static const char *dice_str(const struct model *m, char *buf, size_t size)
{
	int d[MODEL_MAX_DICE];
	memcpy(d, m->dice, sizeof d);
	return join(d, m->ndice, true, buf, size);
}

/* zombies (or barricades) per entrance of location id */
static const char *entrances_str(const struct model *m, int id, bool barricades, char *buf,
                                 size_t size)
{
	int l = model_find_loc(m, id);
	assert_true(l >= 0);
	int v[64], n = 0;
	for (int e = 0; e < m->locs[l].entrances && n < 64; e++)
		v[n++] = barricades ? m->locs[l].barricades[e] : m->locs[l].zombies[e];
	return join(v, n, false, buf, size);
}

#define assert_hand(m, p, want)                                           \
	do {                                                              \
		char b_[1024];                                            \
		assert_string_equal(hand_str(m, p, b_, sizeof b_), want); \
	} while (0)
#define assert_dice(m, want)                                           \
	do {                                                           \
		char b_[256];                                          \
		assert_string_equal(dice_str(m, b_, sizeof b_), want); \
	} while (0)
#define assert_zombies(m, id, want)                                                    \
	do {                                                                           \
		char b_[256];                                                          \
		assert_string_equal(entrances_str(m, id, false, b_, sizeof b_), want); \
	} while (0)
#define assert_barricades(m, id, want)                                                \
	do {                                                                          \
		char b_[256];                                                         \
		assert_string_equal(entrances_str(m, id, true, b_, sizeof b_), want); \
	} while (0)

/* ---- complete games from the scenarios ---------------------------------------------------- */

/* b_full_game_two_players_won: Anna (player 0) and Bert (player 1) survive
 * three rounds. Config b_duo.json: colony 100 (2 entrances), Farm 200 (1
 * entrance, 2 spaces, food(2) cards 21-30), Depot 300 (2 entrances);
 * zombies 2 in the colony, 1 at each location; 2 children; morale 8. */
static void test_won_game_as_anna(void **state)
{
	(void)state;
	struct stream s;
	open_scenario(&s, "b_full_game_two_players_won.scn", 1);
	struct model *m = &s.m;

	fold_to(&s, "Config");
	assert_true(m->got_config);
	assert_int_equal(m->nlocs, 3);
	assert_int_equal(m->locs[m->colony].id, 100);
	assert_int_equal(m->moral, 8);
	assert_int_equal(m->children, 2);
	assert_int_equal(m->food, 0);
	assert_int_equal(m->rounds, 3);
	assert_int_equal(m->goal, MODEL_GOAL_SURVIVE);
	assert_zombies(m, 100, "1,1"); /* zombiesColony 2, round-robin */
	assert_zombies(m, 200, "1");
	assert_zombies(m, 300, "1,0");
	assert_int_equal(m->locs[model_find_loc(m, 200)].deck_left, 10);

	fold_to(&s, "Player 1 Bert");
	assert_int_equal(m->nplayers, 2);
	assert_int_equal(m->me, 0);
	assert_string_equal(m->player_names[1], "Bert");

	fold_to(&s, "Characters 202 201 207 205");
	assert_true(m->selecting);
	assert_int_equal(m->offered[2], 207);

	fold_to(&s, "CardDrawn 1 1"); /* both selections done */
	assert_false(m->selecting);
	assert_int_equal(chr(m, 201)->owner, 0);
	assert_int_equal(chr(m, 206)->owner, 1);
	assert_int_equal(loc_id(m, chr(m, 203)->loc), 100);
	assert_hand(m, 0, "4,5,7,9,10");
	assert_hand(m, 1, "1,2,3,6,8");
	assert_int_equal(model_living_of(m, 1), 2);

	fold_to(&s, "DieRolled 1 2");
	assert_int_equal(m->round, 1);
	assert_int_equal(m->crises[m->crisis].id, 912);
	assert_dice(m, "4,5,5"); /* only our own dice */

	fold_to(&s, "ActNow");
	assert_true(m->my_turn);
	fold_to(&s, "Contributed 0 10");
	assert_int_equal(m->contributed, 3);
	assert_hand(m, 0, "4,7");

	fold_to(&s, "AbilityUsed 201"); /* FEED 2 */
	assert_int_equal(m->food, 2);
	fold_to(&s, "FoodChanged 1 FOOD_ADDED"); /* food card 4 */
	assert_int_equal(m->food, 3);
	assert_int_equal(m->waste, 1);
	assert_hand(m, 0, "7");

	fold_to(&s, "Frostbitten 201");
	assert_int_equal(loc_id(m, chr(m, 201)->loc), 200);
	assert_true(chr(m, 201)->moved);
	assert_int_equal(chr(m, 201)->frost, 1);
	assert_int_equal(chr(m, 201)->wounds, 0);

	fold_to(&s, "CardDrawn 0 28"); /* Ava searches: search 2 takes the 4 */
	assert_dice(m, "5,5");
	assert_hand(m, 0, "7,28");
	assert_int_equal(m->locs[model_find_loc(m, 200)].deck_left, 9);

	fold_to(&s, "Wounded 202"); /* Ben (attack 3) killed a zombie at entrance 0 */
	assert_zombies(m, 100, "0,1");
	assert_dice(m, "5");
	assert_int_equal(chr(m, 202)->wounds, 1);

	fold_to(&s, "> EndTurn");
	assert_false(m->my_turn);
	fold_to(&s, "ZombieKilled 206 100 1"); /* Bert's turn */
	assert_int_equal(m->food, 6);
	assert_int_equal(m->waste, 4);
	assert_hand(m, 1, "6,8,29");
	assert_zombies(m, 100, "0,0");
	assert_int_equal(model_chars_at(m, model_find_loc(m, 200)), 2);

	fold_to(&s, "ColonyPhaseStarted");
	assert_true(m->colony_phase);
	assert_int_equal(m->ndice, 0);
	assert_int_equal(model_food_need(m), 2); /* 2 children + Ben + Flo */
	fold_to(&s, "FoodChanged -2 FOOD_CONSUMED");
	assert_int_equal(m->food, 4);
	fold_to(&s, "MoralChanged 1 CRISIS"); /* 3 contributed >= 1 + 2 */
	assert_int_equal(m->moral, 9);
	fold_to(&s, "NextRound 2");
	assert_false(m->colony_phase);
	assert_zombies(m, 100, "1,1");
	assert_zombies(m, 200, "3"); /* two characters at the Farm: two zombies */
	assert_zombies(m, 300, "1,0");
	assert_int_equal(m->round, 2);
	assert_false(chr(m, 201)->moved);

	fold_to(&s, "Wounded 201"); /* the frostbite step of Anna's turn */
	assert_int_equal(chr(m, 201)->wounds, 1);
	assert_int_equal(chr(m, 201)->frost, 1);
	fold_to(&s, "CardDrawn 0 22");
	assert_dice(m, "4,6"); /* the 2 went on the search */
	assert_int_equal(m->food, 8);
	assert_int_equal(m->waste, 5);

	fold_to(&s, "Wounded 206");
	assert_int_equal(m->contributed, 2);
	assert_int_equal(m->food, 10);
	assert_hand(m, 1, "6,24");

	fold_to(&s, "SurvivorKilled 201"); /* the Farm's entrance is full: the lowest status dies */
	assert_false(chr(m, 201)->alive);
	assert_int_equal(chr(m, 201)->loc, -1);
	assert_int_equal(chr(m, 201)->owner, 0);
	fold_to(&s, "MoralChanged -1 CHARACTER_DIED");
	assert_int_equal(m->moral, 8);
	fold_to(&s, "SurvivorKilled 203");
	fold_to(&s, "MoralChanged -1 CHARACTER_DIED");
	assert_int_equal(m->moral, 7);
	assert_int_equal(model_living_of(m, 0), 1);
	assert_int_equal(model_living_of(m, 1), 1);

	fold_to(&s, "DieRolled 1 3");
	assert_dice(m, "3,5"); /* one living character: two dice */

	fold_to(&s, "GameEnd true");
	assert_int_equal(m->result, MODEL_WON);
	assert_int_equal(m->round, 3);
	assert_int_equal(m->moral, 6);
	assert_int_equal(m->food, 10);
	assert_int_equal(m->waste, 8);
	assert_int_equal(m->children, 2);
	assert_int_equal(m->tokens, 0);
	assert_zombies(m, 100, "1,1");
	assert_hand(m, 0, "");
	assert_hand(m, 1, "6");
	assert_int_equal(chr(m, 202)->wounds, 1);
	assert_int_equal(chr(m, 206)->wounds, 1);
	assert_int_equal(m->locs[model_find_loc(m, 200)].deck_left, 6);

	fold_to(&s, NULL); /* nothing left */
	close_stream(&s);
}

/* The same game as Bert sees it: his dice and turns. */
static void test_won_game_as_bert(void **state)
{
	(void)state;
	struct stream s;
	open_scenario(&s, "b_full_game_two_players_won.scn", 2);
	struct model *m = &s.m;

	fold_to(&s, "DieRolled 1 2");
	assert_int_equal(m->me, 1);
	assert_dice(m, "1,2,5");
	fold_to(&s, "Wounded 202"); /* Anna's turn */
	assert_false(m->my_turn);
	assert_dice(m, "1,2,5");
	fold_to(&s, "ActNow");
	assert_true(m->my_turn);
	fold_to(&s, "CardDrawn 1 29"); /* Cal (search 3) takes the 5 */
	assert_dice(m, "1,2");
	fold_to(&s, "ZombieKilled 206 100 1"); /* Flo (attack 2) takes the 2 */
	assert_dice(m, "1");
	fold_to(&s, "GameEnd true");
	assert_int_equal(m->result, MODEL_WON);
	assert_int_equal(m->moral, 6);
	close_stream(&s);
}

/* b_full_game_two_players_lost: the barricades goal (5) is missed after the
 * last of 2 rounds. */
static void test_lost_game(void **state)
{
	(void)state;
	struct stream s;
	open_scenario(&s, "b_full_game_two_players_lost.scn", 1);
	struct model *m = &s.m;

	fold_to(&s, "Config");
	assert_int_equal(m->goal, MODEL_GOAL_BARRICADES);
	assert_int_equal(m->goal_value, 5);
	fold_to(&s, "Barricaded 201 100 0");
	assert_barricades(m, 100, "1,0");
	assert_dice(m, "5,5"); /* the lowest die, 4 */
	fold_to(&s, "Barricaded 202 100 0");
	assert_dice(m, "5");
	fold_to(&s, "Barricaded 206 100 1");
	assert_barricades(m, 100, "2,2");
	fold_to(&s, "FoodChanged -3 FOOD_CONSUMED");
	assert_int_equal(m->food, 3);
	fold_to(&s, "BarricadeDestroyed 100 1");
	assert_barricades(m, 100, "1,1");
	fold_to(&s, "ZombieSpawned 100 0");
	assert_zombies(m, 100, "2,1");
	fold_to(&s, "Barricaded 201 100 1");
	assert_dice(m, "3,4");
	assert_barricades(m, 100, "1,2");
	fold_to(&s, "Contributed 1 8");
	assert_int_equal(m->contributed, 2);
	fold_to(&s, "GameEnd false");
	assert_int_equal(m->result, MODEL_LOST);
	assert_int_equal(m->moral, 9);
	assert_int_equal(m->food, 2);
	assert_int_equal(m->waste, 4);
	assert_zombies(m, 100, "3,1");
	assert_barricades(m, 100, "0,1");
	assert_hand(m, 0, "");
	assert_hand(m, 1, "6");
	close_stream(&s);
}

/* b_full_game_4p: four players barricade the colony (42, 4 entrances);
 * starvation and failed crises cost morale; survived after 2 rounds. */
static void test_four_players(void **state)
{
	(void)state;
	struct stream s;
	open_scenario(&s, "b_full_game_4p.scn", 1);
	struct model *m = &s.m;

	fold_to(&s, "Config");
	assert_zombies(m, 42, "1,1,1,1");
	assert_zombies(m, 2, "1,0");
	fold_to(&s, "CardDrawn 3 117");
	assert_int_equal(m->nplayers, 4);
	assert_string_equal(m->player_names[3], "Di");
	for (int p = 0; p < 4; p++)
		assert_int_equal(model_hand_size(m, p), 5);
	assert_int_equal(model_chars_at(m, m->colony), 8);
	fold_to(&s, "Barricaded 1 42 0");
	assert_dice(m, "4,4");
	fold_to(&s, "Barricaded 7 42 1");
	assert_barricades(m, 42, "2,2,0,0");
	fold_to(&s, "StarvationTokenAdded");
	assert_int_equal(m->tokens, 1);
	fold_to(&s, "MoralChanged -2 CRISIS");
	assert_int_equal(m->moral, 17);
	fold_to(&s, "NextRound 2");
	assert_zombies(m, 42, "2,1,2,2");
	assert_barricades(m, 42, "1,1,0,0");
	fold_to(&s, "CommandFailed"); /* entrance 0 is full: no die used */
	assert_dice(m, "2,5,6");
	fold_to(&s, "MoralChanged -2 STARVATION_TOKEN");
	assert_int_equal(m->tokens, 2);
	assert_int_equal(m->moral, 15);
	fold_to(&s, "GameEnd true");
	assert_int_equal(m->result, MODEL_WON);
	assert_int_equal(m->moral, 14);
	assert_int_equal(m->food, 0);
	assert_zombies(m, 42, "3,1,3,3");
	assert_barricades(m, 42, "0,1,0,0");
	close_stream(&s);
}

/* ---- single rules ------------------------------------------------------------------------ */

/* r_equip_other_player [revised], as player B: A gives hammer 5 to B's Ann,
 * B adds hammer 1; the newest unspent hammer pays for a barricade first. */
static void test_hammers(void **state)
{
	(void)state;
	struct stream s;
	open_scenario(&s, "r_equip_other_player.scn", 2);
	struct model *m = &s.m;

	fold_to(&s, "CardUsed 5 202 201");
	assert_int_equal(chr(m, 201)->nequip, 1);
	assert_int_equal(m->cards[chr(m, 201)->equip[0]].id, 5);
	assert_hand(m, 0, "7,8,9,10");
	assert_int_equal(m->waste, 0); /* equipment does not go to the waste */
	fold_to(&s, "CardUsed 1 201 201");
	assert_int_equal(chr(m, 201)->nequip, 2);
	assert_dice(m, "1,2,5");
	fold_to(&s, "Barricaded 201 500 0");
	assert_true(chr(m, 201)->equip_spent[1]);
	assert_false(chr(m, 201)->equip_spent[0]);
	assert_dice(m, "1,2,5");
	fold_to(&s, "Barricaded 201 500 0");
	assert_true(chr(m, 201)->equip_spent[0]);
	assert_dice(m, "1,2,5");
	fold_to(&s, "Barricaded 201 500 0");
	assert_dice(m, "2,5");
	fold_to(&s, "Barricaded 201 500 1");
	fold_to(&s, "Barricaded 201 500 1");
	assert_dice(m, "");
	assert_barricades(m, 500, "3,2,0,0");
	fold_to(&s, "GameEnd true");
	assert_int_equal(m->moral, 18);
	assert_barricades(m, 500, "2,2,0,0");
	assert_zombies(m, 500, "0,1,0,0");
	close_stream(&s);
}

/* r_swab_vs_trash [revised], as player B: waste counts in changes; the swab,
 * then Ann's TRASH clean without a die. */
static void test_swab_and_trash(void **state)
{
	(void)state;
	struct stream s;
	open_scenario(&s, "r_swab_vs_trash.scn", 2);
	struct model *m = &s.m;

	fold_to(&s, "NextRound 2");
	assert_int_equal(m->round, 2);
	fold_to(&s, "CardUsed 1 201 201");
	assert_int_equal(m->waste, 5); /* +1 for each of A's five food cards */
	assert_int_equal(m->food, 5);
	fold_to(&s, "Barricaded 201 500 1");
	assert_dice(m, "");
	assert_barricades(m, 500, "2,1,0");
	fold_to(&s, "ZombieSpawned 500 1");
	assert_int_equal(m->waste, 7);
	assert_int_equal(m->food, 5);
	assert_int_equal(m->moral, 19);
	assert_zombies(m, 500, "1,2,1");
	fold_to(&s, "NextRound 1");
	fold_to(&s, "WasteChanged -5");
	assert_int_equal(m->waste, 4);
	assert_true(chr(m, 201)->equip_spent[0]);
	assert_dice(m, "3,3,5");
	fold_to(&s, "WasteChanged -2");
	fold_to(&s, "WasteChanged -2");
	assert_int_equal(m->waste, 0);
	assert_dice(m, "3,3,5");
	fold_to(&s, "Barricaded 201 500 0");
	assert_dice(m, "");
	fold_to(&s, "GameEnd true");
	assert_int_equal(m->moral, 18);
	assert_int_equal(m->food, 5);
	assert_barricades(m, 500, "1,0,2");
	close_stream(&s);
}

/* r_blueprint_search [revised]: Dan wears a blueprint for the Mall: the
 * first search of a round draws 2 cards, the second 1. */
static void test_blueprint(void **state)
{
	(void)state;
	struct stream s;
	open_scenario(&s, "r_blueprint_search.scn", 1);
	struct model *m = &s.m;

	fold_to(&s, "CardUsed 3 204 204");
	assert_int_equal(chr(m, 204)->nequip, 1);
	fold_to(&s, "CardDrawn 0 18");
	assert_dice(m, "5,6");
	fold_to(&s, "ActNow");
	assert_true(chr(m, 204)->equip_spent[0]);
	fold_to(&s, "CardDrawn 0 15");
	assert_dice(m, "6");
	assert_int_equal(m->locs[model_find_loc(m, 501)].deck_left, 7);
	fold_to(&s, "NextRound 1");
	assert_false(chr(m, 204)->equip_spent[0]);
	fold_to(&s, "GameEnd true");
	assert_int_equal(m->locs[model_find_loc(m, 501)].deck_left, 4);
	assert_hand(m, 0, "1,2,4,5,12,13,15,16,18,20");
	assert_int_equal(m->tokens, 2);
	assert_int_equal(m->moral, 15);
	close_stream(&s);
}

/* r_spread_children [revised]: Ann is bitten in the colony; the spread
 * kills both children. */
static void test_bites_and_children(void **state)
{
	(void)state;
	struct stream s;
	open_scenario(&s, "r_spread_children.scn", 1);
	struct model *m = &s.m;

	fold_to(&s, "ZombieKilled 201 500 0");
	assert_dice(m, "3,5");
	assert_zombies(m, 500, "0,1,1");
	fold_to(&s, "Bitten 201");
	assert_false(chr(m, 201)->alive);
	assert_true(chr(m, 201)->bitten);
	fold_to(&s, "Bitten");
	assert_int_equal(m->children, 1);
	fold_to(&s, "Bitten");
	fold_to(&s, "MoralChanged -1 CHARACTER_DIED");
	assert_int_equal(m->children, 0);
	assert_int_equal(m->moral, 17);
	assert_int_equal(model_living_of(m, 0), 1);
	fold_to(&s, "GameEnd true");
	assert_int_equal(m->moral, 15);
	assert_zombies(m, 500, "1,1,1");
	close_stream(&s);
}

/* b_search_random_encounter: the search finds a survivor (a new character
 * in the colony) and two children instead of a card. */
static void test_random_encounter(void **state)
{
	(void)state;
	struct stream s;
	open_scenario(&s, "b_search_random_encounter.scn", 1);
	struct model *m = &s.m;

	fold_to(&s, "CharacterSpawned 0 107");
	assert_int_equal(chr(m, 107)->owner, 0);
	assert_int_equal(loc_id(m, chr(m, 107)->loc), 100);
	assert_dice(m, "5,6");
	fold_to(&s, "ChildSpawned");
	fold_to(&s, "ChildSpawned");
	assert_int_equal(m->children, 3);
	assert_int_equal(m->locs[model_find_loc(m, 200)].deck_left, 5);
	fold_to(&s, "Moved 107 300 false");
	assert_int_equal(model_living_of(m, 0), 3);
	fold_to(&s, "GameEnd true");
	assert_int_equal(m->moral, 2);
	assert_zombies(m, 100, "3,2");
	assert_zombies(m, 200, "2");
	assert_zombies(m, 300, "2,0,0");
	close_stream(&s);
}

/* b_usecard_medicine_heals_frostbite_first: medicine heals the frostbite
 * first; starvation tokens pile up; morale 0 ends the game. */
static void test_medicine_and_starvation(void **state)
{
	(void)state;
	struct stream s;
	open_scenario(&s, "b_usecard_medicine_heals_frostbite_first.scn", 1);
	struct model *m = &s.m;

	fold_to(&s, "Wounded 102");
	assert_int_equal(chr(m, 102)->frost, 1);
	assert_int_equal(chr(m, 102)->wounds, 1);
	assert_zombies(m, 300, "0,0,0");
	assert_dice(m, "3,3");
	fold_to(&s, "WasteChanged 1");
	assert_int_equal(chr(m, 102)->frost, 0);
	assert_int_equal(chr(m, 102)->wounds, 1);
	assert_hand(m, 0, "1,2,4,5");
	fold_to(&s, "ChildKilled");
	assert_int_equal(m->children, 0);
	assert_int_equal(m->tokens, 2);
	assert_int_equal(m->moral, 6);
	fold_to(&s, "MoralChanged -3 CRISIS");
	assert_int_equal(m->moral, 0);
	assert_int_equal(m->tokens, 2); /* nobody in the colony: no food needed, no token */
	assert_int_equal(m->result, MODEL_RUNNING);
	fold_fails(&s, "{\"event\":\"NextRound\",\"round\":4}",
	           "morale is 0 but NextRound came instead of GameEnd(false)");
	fold_to(&s, "GameEnd false");
	assert_int_equal(m->result, MODEL_LOST);
	assert_zombies(m, 100, "3,1");
	assert_zombies(m, 300, "2,2,0");
	assert_int_equal(chr(m, 102)->wounds, 1);
	close_stream(&s);
}

/* b_leave_kills_descending_status, as Bert: Anna leaves; her hand vanishes,
 * her characters die highest status first; round 2 rolls only Bert's dice. */
static void test_leave(void **state)
{
	(void)state;
	struct stream s;
	open_scenario(&s, "b_leave_kills_descending_status.scn", 2);
	struct model *m = &s.m;

	fold_to(&s, "Left 0");
	assert_false(m->player_in[0]);
	assert_true(m->player_in[1]);
	assert_hand(m, 0, "");
	assert_int_equal(model_living_of(m, 0), 2); /* until their SurvivorKilled */
	fold_to(&s, "MoralChanged -1 CHARACTER_DIED");
	assert_false(chr(m, 202)->alive);
	assert_true(chr(m, 201)->alive);
	fold_to(&s, "SurvivorKilled 201");
	fold_to(&s, "ActNow");
	assert_int_equal(m->moral, 6);
	assert_true(m->my_turn);
	fold_to(&s, "DieRolled 1 1");
	assert_int_equal(m->round, 2);
	assert_int_equal(m->moral, 3);
	assert_dice(m, "1,3,4");
	assert_zombies(m, 100, "2,2");
	close_stream(&s);
}

/* ---- recorded random games ---------------------------------------------------------------- */

/* Two complete games of sopra-bot (player B0) with many kinds of events,
 * folded without a complaint; the end values were counted from the
 * recording by a separate script. */
static void test_bot_game_base(void **state)
{
	(void)state;
	struct stream s;
	open_ndjson(&s, "bot_base_2p.ndjson", "B0", false);
	struct model *m = &s.m;
	fold_to(&s, NULL);
	assert_int_equal(m->result, MODEL_LOST);
	assert_int_equal(m->me, 0);
	assert_int_equal(m->round, 4);
	assert_int_equal(m->moral, 0);
	assert_int_equal(m->food, 3);
	assert_int_equal(m->waste, 1);
	assert_int_equal(m->children, 3);
	assert_int_equal(m->tokens, 1);
	assert_zombies(m, 10, "0,0,1");
	assert_zombies(m, 11, "3");
	assert_zombies(m, 12, "2");
	assert_int_equal(model_living_of(m, 0), 1);
	assert_int_equal(model_living_of(m, 1), 2);
	assert_false(chr(m, 2)->alive);
	assert_false(chr(m, 6)->alive);
	close_stream(&s);
}

static void test_bot_game_revised(void **state)
{
	(void)state;
	struct stream s;
	open_ndjson(&s, "bot_revised_2p.ndjson", "B0", true);
	struct model *m = &s.m;
	fold_to(&s, NULL);
	assert_int_equal(m->result, MODEL_LOST);
	assert_int_equal(m->round, 2);
	assert_int_equal(m->moral, 0);
	assert_int_equal(m->food, 0);
	assert_int_equal(m->waste, 1);
	assert_int_equal(m->children, 1);
	assert_int_equal(m->tokens, 1);
	assert_zombies(m, 10, "2,2,0");
	assert_zombies(m, 11, "3");
	assert_int_equal(model_living_of(m, 0), 0);
	assert_int_equal(model_living_of(m, 1), 1);
	close_stream(&s);
}

/* ---- events in words ------------------------------------------------------------------- */

static void test_describe(void **state)
{
	(void)state;
	char buf[256];
	struct stream s;
	open_scenario(&s, "b_full_game_two_players_won.scn", 1);
#define SAYS(step, text) assert_string_equal(describe_at(&s, step, buf, sizeof buf), text)
	SAYS("Config", "Configuration received");
	SAYS("Player 0 Anna", "Anna is player 0");
	SAYS("Characters 202 201 207 205", "Choose two of Ben, Ava, Gil and Eli");
	SAYS("CharacterSpawned 0 201", "Anna's Ava joined the colony");
	SAYS("CardDrawn 0 5", "Anna drew stuff card 5");
	SAYS("Crisis 912", "Crisis 912: 1 stuff card needed, else morale -2");
	SAYS("DieRolled 0 4", "Anna rolled a 4");
	SAYS("ActNow", "Your turn");
	SAYS("Contributed 0 5", "Anna contributed stuff card 5 to the crisis");
	SAYS("AbilityUsed 201", "Anna's Ava fed the colony (+2 food)");
	SAYS("CardUsed 4", "Anna used food card 4 (1 food)");
	SAYS("WasteChanged 1", "Waste pile: 1 card");
	SAYS("FoodChanged 1 FOOD_ADDED", "Food +1");
	SAYS("Moved 201 200 false", "Anna's Ava moved to Farm");
	SAYS("Frostbitten 201", "Anna's Ava got frostbite");
	SAYS("Searched 201 200", "Anna's Ava searched Farm");
	SAYS("CardDrawn 0 28", "Anna drew food card 28 (2 food)");
	SAYS("ZombieKilled 202 100 0", "Anna's Ben killed a zombie at the colony, entrance 0");
	SAYS("Wounded 202", "Anna's Ben was wounded");
	SAYS("Moved 203 200 false", "Bert's Cal moved to Farm");
	SAYS("ColonyPhaseStarted", "Colony phase");
	SAYS("FoodChanged -2 FOOD_CONSUMED", "The colony ate 2 food");
	SAYS("MoralChanged 1 CRISIS", "Morale +1 (the crisis)");
	SAYS("ZombieSpawned 100 0", "Zombie spawned at the colony, entrance 0");
	SAYS("ZombieSpawned 200 0", "Zombie spawned at Farm, entrance 0");
	SAYS("NextRound 2", "Round 2");
	SAYS("SurvivorKilled 201", "Anna's Ava was killed");
	SAYS("MoralChanged -1 CHARACTER_DIED", "Morale -1 (a character died)");
	SAYS("GameEnd true", "The game is won");
	close_stream(&s);

	open_scenario(&s, "r_equip_other_player.scn", 1);
	SAYS("NextRound 1", "Next round: 1 left");
	SAYS("CardUsed 5 202 201", "A's Bob gave hammer card 5 to Ann");
	SAYS("Barricaded 201 500 0", "B's Ann barricaded the colony, entrance 0");
	close_stream(&s);

	open_scenario(&s, "b_leave_kills_descending_status.scn", 2);
	SAYS("Left 0", "Anna left the game");
	close_stream(&s);

	open_scenario(&s, "r_spread_children.scn", 1);
	SAYS("Bitten 201", "Anna's Ann was bitten and died");
	SAYS("Bitten", "A child was bitten and died");
	close_stream(&s);
#undef SAYS
}

/* ---- what the model rejects ------------------------------------------------------------- */

static void test_decode(void **state)
{
	(void)state;
	struct model base, revised;
	model_init(&base, "x", false);
	model_init(&revised, "x", true);
	struct model_event ev;
	char err[600];
	static const struct {
		const char *line;
		bool revised;
		const char *error;
	} bad[] = {
	        {"not json", false, "unparseable event line: not json"},
	        {"[1]", false, "event line is not a JSON object: [1]"},
	        {"{\"event\":\"ActNow\"} x", false, "garbage after the JSON object"},
	        {"{\"event\":\"ActNow\"}\r", false, "an event line ends with CRLF"},
	        {"{\"event\":7}", false, "an event line without a string \"event\""},
	        {"{\"event\":\"Moved\",\"characterId\":1,\"locationId\":2}", false,
	         "Moved: parameter fuel missing (base edition)"},
	        {"{\"event\":\"Moved\",\"characterId\":1,\"locationId\":2,\"fuel\":false}", true,
	         "Moved: parameter fuel must be absent in the revised edition"},
	        {"{\"event\":\"Wounded\",\"characterId\":1.5}", false,
	         "Wounded: parameter characterId is not an integer"},
	        {"{\"event\":\"Wounded\"}", false, "Wounded: parameter characterId missing"},
	        {"{\"event\":\"Wounded\",\"characterId\":1,\"x\":2}", false,
	         "Wounded: unexpected parameter \"x\""},
	        {"{\"event\":\"GameEnd\",\"win\":1}", false,
	         "GameEnd: parameter win is not a boolean"},
	        {"{\"event\":\"CardUsed\",\"cardId\":1,\"characterId\":2}", false,
	         "CardUsed: characterId and target must come together"},
	        {"{\"event\":\"FoodChanged\",\"amount\":1,\"reason\":\"EATEN\"}", false,
	         "FoodChanged: unknown reason \"EATEN\""},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		int rc = model_decode(bad[i].revised ? &revised : &base, bad[i].line,
		                      strlen(bad[i].line), &ev, err, sizeof err);
		assert_int_equal(rc, MODEL_VIOLATION);
		if (!strstr(err, bad[i].error))
			fail_msg("%s: \"%s\" instead of \"%s\"", bad[i].line, err, bad[i].error);
	}

	/* an event the model does not know: a code of its own (a client ignores it) */
	const char *dance = "{\"event\":\"Dance\"}";
	assert_int_equal(model_decode(&base, dance, strlen(dance), &ev, err, sizeof err),
	                 MODEL_UNKNOWN_EVENT);
	assert_non_null(strstr(err, "unknown event \"Dance\""));

	const char *ok = "{\"event\":\"MoralChanged\",\"amount\":-2,\"reason\":\"WASTE\"}";
	assert_int_equal(model_decode(&base, ok, strlen(ok), &ev, err, sizeof err), MODEL_OK);
	assert_int_equal(ev.type, MEV_MORAL_CHANGED);
	assert_string_equal(ev.name, "MoralChanged");
	assert_int_equal(ev.v[0], -2);
	assert_int_equal(ev.v[1], MODEL_MORAL_WASTE);
	model_event_free(&ev);
	ok = "{\"event\":\"Bitten\"}";
	assert_int_equal(model_decode(&revised, ok, strlen(ok), &ev, err, sizeof err), MODEL_OK);
	assert_int_equal(ev.type, MEV_BITTEN);
	assert_false(ev.has[0]);
	model_event_free(&ev);
	ok = "{\"event\":\"Player\",\"player\":3,\"playerName\":\"Z\\u00e9\"}";
	assert_int_equal(model_decode(&revised, ok, strlen(ok), &ev, err, sizeof err), MODEL_OK);
	assert_int_equal(ev.v[0], 3);
	assert_string_equal(ev.s, "Z\xc3\xa9");
	model_event_free(&ev);
	assert_string_equal(model_event_name(MEV_LEFT), "Left");
	assert_null(model_event_name(MEV_COUNT));
	model_free(&base);
	model_free(&revised);
}

/* A scenario up to the steps upto ("A|B": up to A, then on to B), then one
 * contradicting line. */
static void contradiction(const char *scn, int client, const char *upto, const char *line,
                          const char *error)
{
	struct stream s;
	open_scenario(&s, scn, client);
	char steps[256];
	snprintf(steps, sizeof steps, "%s", upto ? upto : "");
	for (char *p = strtok(steps, "|"); p; p = strtok(NULL, "|"))
		fold_to(&s, p);
	fold_fails(&s, line, error);
	close_stream(&s);
}

static void test_contradictions(void **state)
{
	(void)state;
	const char *won = "b_full_game_two_players_won.scn";
	contradiction(won, 1, NULL, "{\"event\":\"GameStarted\"}", "GameStarted before Config");
	contradiction(won, 1, "CardDrawn 0 5",
	              "{\"event\":\"CardDrawn\",\"player\":0,\"cardId\":5}", "card 5 drawn twice");
	contradiction(won, 1, "CardDrawn 0 4",
	              "{\"event\":\"CardDrawn\",\"player\":0,\"cardId\":28}",
	              "card 28 drawn without a search, but it is not a start card");
	contradiction(won, 1, "CardDrawn 0 9", "{\"event\":\"NextRound\",\"round\":1}",
	              "order: expected CardDrawn 0, got NextRound 1");
	contradiction(won, 1, "ActNow", "{\"event\":\"Contributed\",\"player\":0,\"cardId\":6}",
	              "player 0 contributed card 6, which it does not hold");
	contradiction(won, 1, "ActNow", "{\"event\":\"Contributed\",\"player\":0,\"cardId\":7}",
	              "card 7 (medicine) does not match the crisis");
	contradiction(won, 1, "CardUsed 4", "{\"event\":\"WasteChanged\",\"amount\":3}",
	              "WasteChanged from 0 to 3 where one card was added");
	contradiction(won, 1, "CardUsed 4", "{\"event\":\"ActNow\"}",
	              "ActNow came where WasteChanged(+1) was due");
	contradiction(won, 1, "ActNow",
	              "{\"event\":\"ZombieSpawned\",\"locationId\":100,\"entrance\":0}",
	              "ZombieSpawned 100 0 out of place");
	contradiction(won, 1, "ActNow",
	              "{\"event\":\"ZombieKilled\",\"characterId\":202,\"locationId\":200,"
	              "\"entrance\":0}",
	              "ZombieKilled at location 200, character 202 is elsewhere");
	contradiction(won, 1, "ActNow",
	              "{\"event\":\"ZombieKilled\",\"characterId\":202,\"locationId\":100,"
	              "\"entrance\":2}",
	              "ZombieKilled: location 100 has no entrance 2");
	contradiction(won, 1, "ColonyPhaseStarted",
	              "{\"event\":\"FoodChanged\",\"amount\":-3,\"reason\":\"FOOD_CONSUMED\"}",
	              "colony phase: expected FoodChanged -2 1, got FoodChanged -3 1");
	contradiction(won, 1, "MoralChanged 1 CRISIS",
	              "{\"event\":\"ZombieSpawned\",\"locationId\":100,\"entrance\":1}",
	              "colony phase: expected ZombieSpawned 100 0, got ZombieSpawned 100 1");
	contradiction(won, 1, "ZombieSpawned 200 0", "{\"event\":\"NextRound\",\"round\":2}",
	              "colony phase: expected ZombieSpawned 200 0, got NextRound 2");
	contradiction(won, 1, "NextRound 2|ZombieSpawned 100 1", /* the Farm's entrance is full */
	              "{\"event\":\"SurvivorKilled\",\"characterId\":203}",
	              "colony phase: expected SurvivorKilled 201, got SurvivorKilled 203");
	contradiction(won, 1, "SurvivorKilled 201", "{\"event\":\"NextRound\",\"round\":3}",
	              "order: expected MoralChanged -1 0, got NextRound 3");
	contradiction(won, 1, "GameEnd true", "{\"event\":\"ActNow\"}",
	              "event ActNow after the end (win)");
	contradiction("b_leave_kills_descending_status.scn", 2, "Left 0",
	              "{\"event\":\"SurvivorKilled\",\"characterId\":201}",
	              "order: expected SurvivorKilled 202, got SurvivorKilled 201");
	contradiction("r_spread_children.scn", 1, "ActNow",
	              "{\"event\":\"Moved\",\"characterId\":201,\"locationId\":500}",
	              "Moved: character 201 is already at location 500");
	contradiction("r_spread_children.scn", 1, "Bitten 201",
	              "{\"event\":\"Wounded\",\"characterId\":201}",
	              "order: expected MoralChanged -1 0, got Wounded 201");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_won_game_as_anna),
	        cmocka_unit_test(test_won_game_as_bert),
	        cmocka_unit_test(test_lost_game),
	        cmocka_unit_test(test_four_players),
	        cmocka_unit_test(test_hammers),
	        cmocka_unit_test(test_swab_and_trash),
	        cmocka_unit_test(test_blueprint),
	        cmocka_unit_test(test_bites_and_children),
	        cmocka_unit_test(test_random_encounter),
	        cmocka_unit_test(test_medicine_and_starvation),
	        cmocka_unit_test(test_leave),
	        cmocka_unit_test(test_bot_game_base),
	        cmocka_unit_test(test_bot_game_revised),
	        cmocka_unit_test(test_describe),
	        cmocka_unit_test(test_decode),
	        cmocka_unit_test(test_contradictions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
