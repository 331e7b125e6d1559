/*
 * Unit tests of the config module: every valid file we know of parses, and
 * every validity rule rejects with its exact message (path + reason).
 *
 * Invalid configs are made by small text edits on VALID below, a compact
 * valid config written with ' instead of " (q() converts), so these tests
 * do not depend on ../shared.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sopra/config.h"

/* maxPlayers 1: needs >= 4 characters, >= 5 cards per stack, crises >= rounds.
 * Card, character, location and crisis id 1 all exist (different kinds). */
/* clang-format off */
static const char VALID[] =
	"{\n"
	"'maxPlayers': 1,\n"
	"'cards': [\n"
	" {'food': {'identifier': 1, 'amount': 2}},\n"
	" {'fuel': {'identifier': 2}},\n"
	" {'stuff': {'identifier': 3}},\n"
	" {'medicine': {'identifier': 4}},\n"
	" {'lock': {'identifier': 5}},\n"
	" {'scissors': {'identifier': 6}},\n"
	" {'hammer': {'identifier': 7}},\n"
	" {'snow_boots': {'identifier': 8}},\n"
	" {'colt': {'identifier': 9}},\n"
	" {'swab': {'identifier': 10}},\n"
	" {'blueprint': {'identifier': 11, 'location': 2}},\n"
	" {'fuel': {'identifier': 12}}\n"
	"],\n"
	"'characters': [\n"
	" {'name': 'Ann', 'identifier': 1, 'status': 10, 'attack': 3, 'search': 4,\n"
	"  'ability': {'kill': {'locationId': 2, 'dieValue': 4, 'numZombies': 2, 'maxActivations': 1, 'infectionDie': true}}},\n"
	" {'name': 'Bob', 'identifier': 2, 'status': 20, 'attack': 2, 'search': 5,\n"
	"  'ability': {'search': {'location': 2, 'numCards': 1, 'maxActivations': 3}}},\n"
	" {'name': 'Cid', 'identifier': 3, 'status': 30, 'attack': 1, 'search': 6,\n"
	"  'ability': {'wound': {'before': 'frostBite', 'after': 'wound'}}},\n"
	" {'name': 'Dot', 'identifier': 4, 'status': 40, 'attack': 6, 'search': 1,\n"
	"  'ability': {'feed': {'numFood': 2}}}\n"
	"],\n"
	"'goal': {'rounds': 2, 'moral': 5, 'zombiesColony': 3, 'zombiesLocations': 3, 'childrenInColony': 1, 'survive': true},\n"
	"'locations': [\n"
	" {'colony': {'identifier': 1, 'entrances': 1, 'startCards': [1, 2, 3, 4, 5, 6]}},\n"
	" {'name': 'Mall', 'identifier': 2, 'entrances': 1, 'survivorSpaces': 2, 'cards': [7, 8, 9, 10, 11, 12]}\n"
	"],\n"
	"'crises': [\n"
	" {'food': {'identifier': 1, 'moralChange': 1, 'requiredCards': 2}},\n"
	" {'fuel': {'identifier': 2, 'moralChange': 2, 'requiredCards': 1}}\n"
	"]\n"
	"}\n";
/* clang-format on */

/* Returns a malloc'd copy of s with every ' turned into ". */
static char *q(const char *s)
{
	char *t = strdup(s);
	assert_non_null(t);
	for (char *p = t; *p; p++)
		if (*p == '\'')
			*p = '"';
	return t;
}

/* Returns a malloc'd copy of VALID (quoted) with `from` (written with ')
 * replaced by `to`, applied to each pair of the NULL-terminated list in
 * order. Every `from` must occur. */
static char *edit(const char *from, const char *to, ...)
{
	char *cur = strdup(VALID);
	assert_non_null(cur);
	va_list ap;
	va_start(ap, to);
	while (from) {
		char *hit = strstr(cur, from);
		if (!hit)
			fail_msg("edit: '%s' not found", from);
		size_t pre = (size_t)(hit - cur), fl = strlen(from), tl = strlen(to);
		char *next = malloc(strlen(cur) - fl + tl + 1);
		assert_non_null(next);
		memcpy(next, cur, pre);
		memcpy(next + pre, to, tl);
		strcpy(next + pre + tl, hit + fl);
		free(cur);
		cur = next;
		from = va_arg(ap, const char *);
		if (from)
			to = va_arg(ap, const char *);
	}
	va_end(ap);
	char *out = q(cur);
	free(cur);
	return out;
}

/* Prints all messages (for failing assertions). */
static void dump(const struct config_errors *e)
{
	for (int i = 0; i < e->n; i++)
		print_message("  error[%d]: %s\n", i, e->msgs[i]);
}

/* Parses text (NUL-terminated) and asserts it is rejected with exactly one
 * message equal to msg. Frees text. */
static void expect_one(char *text, const char *msg)
{
	struct config_errors e = { 0 };
	struct config *cfg = config_parse(text, strlen(text), &e);
	if (cfg || e.n != 1 || strcmp(e.msgs[0], msg) != 0) {
		print_message("expected exactly: %s\n", msg);
		dump(&e);
		config_free(cfg);
		config_errors_free(&e);
		free(text);
		fail();
	}
	config_errors_free(&e);
	free(text);
}

/* Parses text and asserts it is rejected with msg among the messages.
 * Frees text. */
static void expect_has(char *text, const char *msg)
{
	struct config_errors e = { 0 };
	struct config *cfg = config_parse(text, strlen(text), &e);
	bool found = false;
	for (int i = 0; i < e.n; i++)
		found = found || strcmp(e.msgs[i], msg) == 0;
	if (cfg || !found) {
		print_message("expected among the errors: %s\n", msg);
		dump(&e);
		config_free(cfg);
		config_errors_free(&e);
		free(text);
		fail();
	}
	config_errors_free(&e);
	free(text);
}

/* Parses text, asserts success and returns the config. Frees text. */
static struct config *expect_ok(char *text)
{
	struct config_errors e = { 0 };
	struct config *cfg = config_parse(text, strlen(text), &e);
	if (!cfg) {
		dump(&e);
		config_errors_free(&e);
		free(text);
		fail();
	}
	assert_int_equal(e.n, 0);
	free(text);
	return cfg;
}

/* ---- valid files ------------------------------------------------------ */

static void test_valid_compact(void **state)
{
	(void)state;
	char *text = q(VALID);
	size_t len = strlen(text);
	struct config *cfg = expect_ok(strdup(text));
	assert_int_equal(cfg->max_players, 1);
	assert_int_equal(cfg->ncards, 12);
	assert_int_equal(cfg->cards[0].id, 1);
	assert_int_equal(cfg->cards[0].type, CARD_FOOD);
	assert_int_equal(cfg->cards[0].amount, 2);
	static const enum card_type types[] = {
		CARD_FOOD, CARD_FUEL, CARD_STUFF, CARD_MEDICINE, CARD_LOCK, CARD_SCISSORS,
		CARD_HAMMER, CARD_SNOW_BOOTS, CARD_COLT, CARD_SWAB, CARD_BLUEPRINT, CARD_FUEL,
	};
	for (int i = 0; i < 12; i++) {
		assert_int_equal(cfg->cards[i].id, i + 1);
		assert_int_equal(cfg->cards[i].type, types[i]);
	}
	assert_int_equal(cfg->cards[10].location, 2);

	assert_int_equal(cfg->ncharacters, 4);
	const struct config_character *a = &cfg->characters[0];
	assert_string_equal(a->name, "Ann");
	assert_int_equal(a->id, 1);
	assert_int_equal(a->status, 10);
	assert_int_equal(a->attack, 3);
	assert_int_equal(a->search, 4);
	assert_int_equal(a->ability.type, ABILITY_KILL);
	assert_int_equal(a->ability.location, 2);
	assert_int_equal(a->ability.die_value, 4);
	assert_int_equal(a->ability.num_zombies, 2);
	assert_int_equal(a->ability.max_activations, 1);
	assert_true(a->ability.infection_die);
	assert_false(a->ability.children); /* default */
	const struct config_ability *b = &cfg->characters[1].ability;
	assert_int_equal(b->type, ABILITY_SEARCH);
	assert_int_equal(b->location, 2);
	assert_int_equal(b->num_cards, 1);
	assert_int_equal(b->max_activations, 3);
	const struct config_ability *c = &cfg->characters[2].ability;
	assert_int_equal(c->type, ABILITY_WOUND);
	assert_int_equal(c->before, INJURY_FROSTBITE);
	assert_int_equal(c->after, INJURY_WOUND);
	assert_int_equal(cfg->characters[3].ability.type, ABILITY_FEED);
	assert_int_equal(cfg->characters[3].ability.num_food, 2);
	assert_string_equal(cfg->characters[3].name, "Dot");

	assert_int_equal(cfg->goal.rounds, 2);
	assert_int_equal(cfg->goal.moral, 5);
	assert_int_equal(cfg->goal.zombies_colony, 3);
	assert_int_equal(cfg->goal.zombies_locations, 3);
	assert_int_equal(cfg->goal.children_in_colony, 1);
	assert_int_equal(cfg->goal.type, GOAL_SURVIVE);

	assert_int_equal(cfg->nlocations, 2);
	assert_int_equal(cfg->colony, 0);
	const struct config_location *col = &cfg->locations[0];
	assert_true(col->is_colony);
	assert_string_equal(col->name, "colony");
	assert_int_equal(col->id, 1);
	assert_int_equal(col->entrances, 1);
	assert_int_equal(col->survivor_spaces, 0);
	assert_int_equal(col->ncards, 6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(col->cards[i], i + 1);
	const struct config_location *mall = &cfg->locations[1];
	assert_false(mall->is_colony);
	assert_string_equal(mall->name, "Mall");
	assert_int_equal(mall->id, 2);
	assert_int_equal(mall->survivor_spaces, 2);
	assert_int_equal(mall->ncards, 6);
	assert_int_equal(mall->cards[0], 7);
	assert_int_equal(mall->cards[5], 12);

	assert_int_equal(cfg->ncrises, 2);
	assert_int_equal(cfg->crises[0].type, CRISIS_FOOD);
	assert_int_equal(cfg->crises[0].id, 1);
	assert_int_equal(cfg->crises[0].moral_change, 1);
	assert_int_equal(cfg->crises[0].required_cards, 2);
	assert_int_equal(cfg->crises[1].type, CRISIS_FUEL);

	assert_int_equal(cfg->text_len, len);
	assert_memory_equal(cfg->text, text, len);
	assert_int_equal(cfg->text[len], '\0');
	config_free(cfg);
	free(text);
}

static void test_lookups(void **state)
{
	(void)state;
	struct config *cfg = expect_ok(q(VALID));
	const struct config_card *card = config_find_card(cfg, 11);
	assert_non_null(card);
	assert_int_equal(card->type, CARD_BLUEPRINT);
	assert_null(config_find_card(cfg, 13));
	assert_null(config_find_card(cfg, 0));
	assert_int_equal(config_location_index(cfg, 1), 0);
	assert_int_equal(config_location_index(cfg, 2), 1);
	assert_int_equal(config_location_index(cfg, 3), -1);
	config_free(cfg);
}

static void test_colony_not_first(void **state)
{
	(void)state;
	struct config *cfg = expect_ok(edit(
		" {'colony': {'identifier': 1, 'entrances': 1, 'startCards': [1, 2, 3, 4, 5, 6]}},\n"
		" {'name': 'Mall', 'identifier': 2, 'entrances': 1, 'survivorSpaces': 2, 'cards': [7, 8, 9, 10, 11, 12]}\n",
		" {'name': 'Mall', 'identifier': 2, 'entrances': 1, 'survivorSpaces': 2, 'cards': [7, 8, 9, 10, 11, 12]},\n"
		" {'colony': {'identifier': 1, 'entrances': 1, 'startCards': [1, 2, 3, 4, 5, 6]}}\n",
		NULL));
	assert_int_equal(cfg->colony, 1);
	assert_true(cfg->locations[1].is_colony);
	assert_int_equal(cfg->locations[0].id, 2);
	config_free(cfg);
}

static void test_other_abilities(void **state)
{
	(void)state;
	struct config *cfg = expect_ok(edit(
		"'kill': {'locationId': 2, 'dieValue': 4, 'numZombies': 2, 'maxActivations': 1, 'infectionDie': true}",
		"'kill': {'children': true, 'infectionDie': false, 'locationId': 1, 'dieValue': 0, 'numZombies': 1, 'maxActivations': 2}",
		"'search': {'location': 2, 'numCards': 1, 'maxActivations': 3}", "'trash': {'numCards': 4}",
		"'wound': {'before': 'frostBite', 'after': 'wound'}", "'barricade': {'numBarricades': 2, 'maxActivations': 5}",
		"'feed': {'numFood': 2}", "'heal': {}", NULL));
	const struct config_ability *a = &cfg->characters[0].ability;
	assert_int_equal(a->type, ABILITY_KILL);
	assert_true(a->children);
	assert_false(a->infection_die);
	assert_int_equal(a->location, 1);
	assert_int_equal(a->die_value, 0);
	assert_int_equal(a->max_activations, 2);
	assert_int_equal(cfg->characters[1].ability.type, ABILITY_TRASH);
	assert_int_equal(cfg->characters[1].ability.num_cards, 4);
	assert_int_equal(cfg->characters[2].ability.type, ABILITY_BARRICADE);
	assert_int_equal(cfg->characters[2].ability.num_barricades, 2);
	assert_int_equal(cfg->characters[2].ability.max_activations, 5);
	assert_int_equal(cfg->characters[3].ability.type, ABILITY_HEAL);
	config_free(cfg);

	cfg = expect_ok(edit("'feed': {'numFood': 2}", "'no_infection': {}",
			     "'wound': {'before': 'frostBite', 'after': 'wound'}",
			     "'wound': {'after': 'bite', 'before': 'bite'}", NULL));
	assert_int_equal(cfg->characters[3].ability.type, ABILITY_NO_INFECTION);
	assert_int_equal(cfg->characters[2].ability.before, INJURY_BITE);
	assert_int_equal(cfg->characters[2].ability.after, INJURY_BITE);
	config_free(cfg);
}

static void test_goal_variants(void **state)
{
	(void)state;
	/* survive: presence selects the goal, whatever the value */
	struct config *cfg = expect_ok(edit("'survive': true", "'survive': false", NULL));
	assert_int_equal(cfg->goal.type, GOAL_SURVIVE);
	config_free(cfg);
	/* barricades at the maximum: 3 per entrance, 2 entrances in total */
	cfg = expect_ok(edit("'survive': true", "'barricades': 6", NULL));
	assert_int_equal(cfg->goal.type, GOAL_BARRICADES);
	assert_int_equal(cfg->goal.value, 6);
	config_free(cfg);
	cfg = expect_ok(edit("'survive': true", "'barricades': 0", NULL));
	assert_int_equal(cfg->goal.value, 0);
	config_free(cfg);
	/* locationWithZombies at the maximum: 2 locations, colony included */
	cfg = expect_ok(edit("'survive': true", "'locationWithZombies': 2", NULL));
	assert_int_equal(cfg->goal.type, GOAL_LOCATION_WITH_ZOMBIES);
	assert_int_equal(cfg->goal.value, 2);
	config_free(cfg);
	cfg = expect_ok(edit("'zombiesColony': 3, 'zombiesLocations': 3, 'childrenInColony': 1",
			     "'zombiesColony': 0, 'zombiesLocations': 0, 'childrenInColony': 0", NULL));
	assert_int_equal(cfg->goal.zombies_colony, 0);
	config_free(cfg);
}

static void test_integral_float_and_key_order(void **state)
{
	(void)state;
	/* 2.0 and 1e0 are integral numbers; top-level key order is free */
	struct config *cfg = expect_ok(edit("'amount': 2}", "'amount': 2.0}",
					    "'maxPlayers': 1,\n", "",
					    "'crises': [", "'maxPlayers': 1e0, 'crises': [", NULL));
	assert_int_equal(cfg->cards[0].amount, 2);
	assert_int_equal(cfg->max_players, 1);
	config_free(cfg);
}

static void test_unicode_name_and_whitespace(void **state)
{
	(void)state;
	struct config *cfg = expect_ok(edit("'name': 'Ann'", "'name':\t'J\\u00fcrgen \xc3\xa9 \\ud83d\\ude00'",
					    "\n", "\r\n", NULL));
	assert_string_equal(cfg->characters[0].name, "J\xc3\xbcrgen \xc3\xa9 \xf0\x9f\x98\x80");
	config_free(cfg);
}

static void test_text_not_nul_terminated(void **state)
{
	(void)state;
	char *text = q(VALID);
	size_t len = strlen(text);
	char *buf = malloc(len);
	assert_non_null(buf);
	memcpy(buf, text, len); /* no NUL at the end */
	struct config_errors e = { 0 };
	struct config *cfg = config_parse(buf, len, &e);
	assert_non_null(cfg);
	assert_int_equal(cfg->text_len, len);
	assert_string_equal(cfg->text, text);
	config_free(cfg);
	free(buf);
	free(text);
}

/* Loads path and asserts success; returns the config. */
static struct config *load_ok(const char *path)
{
	struct config_errors e = { 0 };
	struct config *cfg = config_load(path, &e);
	if (!cfg) {
		print_message("%s:\n", path);
		dump(&e);
		config_errors_free(&e);
		fail();
	}
	assert_int_equal(e.n, 0);
	return cfg;
}

/* Asserts cfg->text equals the bytes of the file at path. */
static void assert_verbatim(const struct config *cfg, const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *buf = malloc(cfg->text_len + 2);
	assert_non_null(buf);
	size_t got = fread(buf, 1, cfg->text_len + 1, f);
	fclose(f);
	assert_int_equal(got, cfg->text_len);
	assert_memory_equal(buf, cfg->text, got);
	free(buf);
}

/* Loads every *.json in dir (relative to SOPRA_SHARED_DIR); skips when absent. */
static void load_dir(const char *sub)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/conformance/%s", SOPRA_SHARED_DIR, sub);
	DIR *d = opendir(dir);
	if (!d) {
		skip();
		return;
	}
	int n = 0;
	struct dirent *ent;
	while ((ent = readdir(d)) != NULL) {
		size_t l = strlen(ent->d_name);
		if (l < 5 || strcmp(ent->d_name + l - 5, ".json") != 0)
			continue;
		char path[2048];
		snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
		struct config *cfg = load_ok(path);
		assert_verbatim(cfg, path);
		assert_true(cfg->locations[cfg->colony].is_colony);
		config_free(cfg);
		n++;
	}
	closedir(d);
	assert_true(n > 0);
}

static void test_conformance_base(void **state)
{
	(void)state;
	load_dir("base");
}

static void test_conformance_revised(void **state)
{
	(void)state;
	load_dir("revised");
}

static void test_conformance_configuration_values(void **state)
{
	(void)state;
	char path[1024];
	snprintf(path, sizeof path, "%s/conformance/base/configuration.json", SOPRA_SHARED_DIR);
	struct stat st;
	if (stat(path, &st) != 0) {
		skip();
		return;
	}
	struct config *cfg = load_ok(path);
	assert_int_equal(cfg->max_players, 5);
	assert_int_equal(cfg->ncards, 196);
	assert_int_equal(cfg->ncharacters, 31);
	assert_int_equal(cfg->nlocations, 7);
	assert_int_equal(cfg->ncrises, 12);
	assert_int_equal(cfg->locations[cfg->colony].id, 42);
	assert_int_equal(cfg->goal.rounds, 10);
	assert_int_equal(cfg->goal.type, GOAL_SURVIVE);
	config_free(cfg);
}

/* The server drops the text once it has encoded the Config line: the
 * rest of the configuration stays, text_len too, and it frees cleanly. */
static void test_drop_text(void **state)
{
	(void)state;
	char path[1024];
	snprintf(path, sizeof path, "%s/resources/example.json", SOPRA_SOURCE_DIR);
	struct config *cfg = load_ok(path);
	size_t len = cfg->text_len;
	int ncards = cfg->ncards;
	config_drop_text(cfg);
	assert_null(cfg->text);
	assert_int_equal(cfg->text_len, len);
	assert_int_equal(cfg->ncards, ncards);
	assert_int_equal(cfg->max_players, 4);
	config_drop_text(cfg); /* twice is harmless */
	config_free(cfg);
}

static void test_example_files(void **state)
{
	(void)state;
	char path[1024];
	snprintf(path, sizeof path, "%s/resources/example.json", SOPRA_SOURCE_DIR);
	struct config *cfg = load_ok(path);
	assert_verbatim(cfg, path);
	assert_int_equal(cfg->max_players, 4);
	assert_true(cfg->ncharacters >= 10);
	assert_int_equal(cfg->goal.type, GOAL_SURVIVE);
	assert_true(cfg->ncrises >= cfg->goal.rounds);
	assert_true(cfg->nlocations >= 4);
	bool card_seen[CARD_TYPE_COUNT] = { false };
	for (int i = 0; i < cfg->ncards; i++)
		card_seen[cfg->cards[i].type] = true;
	for (int t = 0; t < CARD_TYPE_COUNT; t++)
		assert_true(card_seen[t]);
	bool ab_seen[ABILITY_KILL + 1] = { false };
	bool kill_inf = false, kill_children = false;
	for (int i = 0; i < cfg->ncharacters; i++) {
		const struct config_ability *a = &cfg->characters[i].ability;
		ab_seen[a->type] = true;
		kill_inf = kill_inf || (a->type == ABILITY_KILL && a->infection_die);
		kill_children = kill_children || (a->type == ABILITY_KILL && a->children);
	}
	for (int t = 0; t <= ABILITY_KILL; t++)
		assert_true(ab_seen[t]);
	assert_true(kill_inf);
	assert_true(kill_children);
	for (int i = 0; i < cfg->nlocations; i++)
		assert_true(cfg->locations[i].ncards >= 20);
	config_free(cfg);

	snprintf(path, sizeof path, "%s/resources/example-barricades.json", SOPRA_SOURCE_DIR);
	cfg = load_ok(path);
	assert_int_equal(cfg->goal.type, GOAL_BARRICADES);
	config_free(cfg);
	snprintf(path, sizeof path, "%s/resources/example-zombies.json", SOPRA_SOURCE_DIR);
	cfg = load_ok(path);
	assert_int_equal(cfg->goal.type, GOAL_LOCATION_WITH_ZOMBIES);
	assert_non_null(strstr(cfg->text, "\"$schema\"")); /* the example of a "$schema" */
	config_free(cfg);
}

/* ---- syntax ----------------------------------------------------------- */

static void test_not_json(void **state)
{
	(void)state;
	expect_one(strdup("{"), "(root): not valid JSON at line 1 column 2: unexpected end of input");
	expect_one(strdup("hello"), "(root): not valid JSON at line 1 column 1: unexpected character");
	expect_one(strdup(""), "(root): not valid JSON at line 1 column 1: empty input");
	expect_one(strdup("  \n "), "(root): not valid JSON at line 2 column 2: empty input");
	/* error position on a later line: a missing comma after "amount": 2} */
	expect_one(edit("'amount': 2}},", "'amount': 2}}", NULL),
		   "(root): not valid JSON at line 5 column 2: expected ',' or ']'");
}

static void test_trailing_garbage(void **state)
{
	(void)state;
	char *t = q(VALID);
	size_t l = strlen(t);
	char *u = malloc(l + 3);
	assert_non_null(u);
	memcpy(u, t, l);
	strcpy(u + l, "{}");
	free(t);
	expect_one(u, "(root): not valid JSON at line 37 column 1: unexpected text after the JSON value");
}

static void test_nul_byte(void **state)
{
	(void)state;
	char text[] = "{\"maxPlayers\": 1}\0  ";
	struct config_errors e = { 0 };
	assert_null(config_parse(text, sizeof text - 1, &e));
	assert_int_equal(e.n, 1);
	assert_string_equal(e.msgs[0], "(root): not valid JSON at line 1 column 18: NUL byte");
	config_errors_free(&e);
}

static void test_strict_json(void **state)
{
	(void)state;
	expect_one(edit("'maxPlayers': 1", "'maxPlayers': 01", NULL),
		   "(root): not valid JSON at line 2 column 16: leading zero in number");
	expect_one(edit("'maxPlayers': 1", "'maxPlayers': 1.", NULL),
		   "(root): not valid JSON at line 2 column 17: invalid number");
	expect_one(edit("'name': 'Ann'", "'name': 'A\tn'", NULL),
		   "(root): not valid JSON at line 18 column 13: control character in string");
	expect_one(edit("'name': 'Ann'", "'name': 'A\xff'", NULL),
		   "(root): not valid JSON at line 18 column 13: invalid UTF-8");
	expect_one(edit("'name': 'Ann'", "'name': 'A\\x'", NULL),
		   "(root): not valid JSON at line 18 column 13: invalid escape in string");
	expect_one(edit("'name': 'Ann'", "'name': 'A\\u0000'", NULL),
		   "(root): not valid JSON at line 18 column 13: \\u0000 is not allowed in strings");
	expect_one(edit("'name': 'Ann'", "'name': 'A\\ud800'", NULL),
		   "(root): not valid JSON at line 18 column 13: lone surrogate in \\u escape");
	expect_one(edit("'maxPlayers': 1,", "'maxPlayers': 1,,", NULL),
		   "(root): not valid JSON at line 2 column 17: expected a string key");
	expect_one(edit("'survive': true", "'survive': True", NULL),
		   "(root): not valid JSON at line 27 column 112: unexpected character");
	expect_one(q("\xEF\xBB\xBF{}"),
		   "(root): not valid JSON at line 1 column 1: byte order mark not allowed");
}

static void test_too_deep(void **state)
{
	(void)state;
	char *t = malloc(2 * 100 + 1);
	assert_non_null(t);
	for (int i = 0; i < 100; i++) {
		t[i] = '[';
		t[100 + i] = ']';
	}
	t[200] = '\0';
	expect_one(t, "(root): not valid JSON at line 1 column 65: nesting too deep");
}

static void test_too_large(void **state)
{
	(void)state;
	size_t len = 16u * 1024u * 1024u + 1;
	char *t = malloc(len);
	assert_non_null(t);
	memset(t, ' ', len);
	struct config_errors e = { 0 };
	assert_null(config_parse(t, len, &e));
	assert_int_equal(e.n, 1);
	assert_string_equal(e.msgs[0], "(root): too large (16777217 bytes, the limit is 16777216)");
	config_errors_free(&e);
	free(t);
}

/* ---- schema ----------------------------------------------------------- */

static void test_root_not_object(void **state)
{
	(void)state;
	expect_one(strdup("[]"), "(root): must be an object");
	expect_one(strdup("42"), "(root): must be an object");
}

static void test_unknown_keys(void **state)
{
	(void)state;
	expect_one(edit("'maxPlayers': 1,", "'maxPlayers': 1, 'extra': 0,", NULL), "extra: unknown key");
	expect_one(edit("{'identifier': 2}", "{'identifier': 2, 'amount': 1}", NULL),
		   "cards[1].fuel.amount: unknown key");
	expect_one(edit("'name': 'Ann',", "'name': 'Ann', 'Name': 'x',", NULL),
		   "characters[0].Name: unknown key");
	expect_one(edit("'numFood': 2", "'numFood': 2, 'maxActivations': 1", NULL),
		   "characters[3].ability.feed.maxActivations: unknown key");
	expect_one(edit("'survive': true", "'survive': true, 'zombies Colony': 1", NULL),
		   "goal.zombies Colony: unknown key");
	expect_one(edit("'survivorSpaces': 2", "'survivor_spaces': 2, 'survivorSpaces': 2", NULL),
		   "locations[1].survivor_spaces: unknown key");
	expect_one(edit("'startCards'", "'survivorSpaces': 1, 'startCards'", NULL),
		   "locations[0].colony.survivorSpaces: unknown key");
	expect_one(edit("'requiredCards': 2}", "'requiredCards': 2, 'x': 1}", NULL),
		   "crises[0].food.x: unknown key");
	/* no_infection and heal take no parameters */
	expect_one(edit("'feed': {'numFood': 2}", "'heal': {'numFood': 2}", NULL),
		   "characters[3].ability.heal.numFood: unknown key");
}

/* A top-level "$schema" (for editors) is ignored when it is a string; it is
 * the only "$" key allowed, and only at the top. */
static void test_schema_key(void **state)
{
	(void)state;
	struct config *cfg =
		expect_ok(edit("{\n'maxPlayers'", "{'$schema': './config.schema.json', 'maxPlayers'", NULL));
	assert_int_equal(cfg->max_players, 1);
	assert_non_null(strstr(cfg->text, "\"$schema\"")); /* the text stays verbatim */
	config_free(cfg);
	cfg = expect_ok(edit("\n]\n}\n", "\n], '$schema': 'https://example.org/s.json'}", NULL));
	config_free(cfg);
	expect_one(edit("'maxPlayers': 1,", "'maxPlayers': 1, '$schema': 7,", NULL),
		   "$schema: must be a string (the URI or path of a JSON Schema)");
	expect_one(edit("'maxPlayers': 1,", "'maxPlayers': 1, '$schema': null,", NULL),
		   "$schema: must be a string (the URI or path of a JSON Schema)");
	expect_one(edit("'maxPlayers': 1,", "'$schema': 'a', 'maxPlayers': 1, '$schema': 'a',", NULL),
		   "$schema: duplicate key");
	expect_one(edit("'maxPlayers': 1,", "'maxPlayers': 1, '$id': 'x',", NULL), "$id: unknown key");
	expect_one(edit("'survive': true", "'survive': true, '$schema': 'x'", NULL),
		   "goal.$schema: unknown key");
}

static void test_colony_wrapper_extra_key(void **state)
{
	(void)state;
	expect_one(edit("{'colony': {'identifier': 1,", "{'name': 'c', 'colony': {'identifier': 1,", NULL),
		   "locations[0].name: unknown key");
}

static void test_duplicate_key(void **state)
{
	(void)state;
	expect_one(edit("'maxPlayers': 1,", "'maxPlayers': 1, 'maxPlayers': 1,", NULL),
		   "maxPlayers: duplicate key");
}

static void test_missing_keys(void **state)
{
	(void)state;
	expect_one(edit(",\n'crises': [\n {'food': {'identifier': 1, 'moralChange': 1, 'requiredCards': 2}},\n"
			" {'fuel': {'identifier': 2, 'moralChange': 2, 'requiredCards': 1}}\n]", "", NULL),
		   "crises: missing required key");
	expect_one(edit("'identifier': 1, 'amount': 2", "'identifier': 1", NULL),
		   "cards[0].food.amount: missing required key");
	expect_one(edit("'identifier': 11, 'location': 2", "'identifier': 11", NULL),
		   "cards[10].blueprint.location: missing required key");
	expect_one(edit("'name': 'Bob', ", "", NULL), "characters[1].name: missing required key");
	expect_one(edit("'rounds': 2, ", "", NULL), "goal.rounds: missing required key");
	expect_one(edit("'numCards': 1, ", "", NULL),
		   "characters[1].ability.search.numCards: missing required key");
	expect_one(edit("'maxActivations': 1, ", "", NULL),
		   "characters[0].ability.kill.maxActivations: missing required key");
	expect_one(edit(", 'after': 'wound'", "", NULL),
		   "characters[2].ability.wound.after: missing required key");
	expect_one(edit(", 'survivorSpaces': 2", "", NULL),
		   "locations[1].survivorSpaces: missing required key");
	expect_one(edit("'identifier': 1, 'entrances': 1, ", "'entrances': 1, ", NULL),
		   "locations[0].colony.identifier: missing required key");
	expect_one(edit("'moralChange': 2, ", "", NULL), "crises[1].fuel.moralChange: missing required key");
	expect_one(edit(",\n  'ability': {'feed': {'numFood': 2}}", "", NULL),
		   "characters[3].ability: missing required key");
}

static void test_wrong_types(void **state)
{
	(void)state;
	expect_one(edit("'maxPlayers': 1", "'maxPlayers': '1'", NULL), "maxPlayers: must be an integer");
	expect_one(edit("'maxPlayers': 1", "'maxPlayers': true", NULL), "maxPlayers: must be an integer");
	expect_one(edit("'maxPlayers': 1", "'maxPlayers': null", NULL), "maxPlayers: must be an integer");
	expect_one(edit("'amount': 2", "'amount': 1.5", NULL), "cards[0].food.amount: must be an integer");
	expect_one(edit("'status': 10", "'status': 1e300", NULL), "characters[0].status: integer out of range");
	expect_one(edit("'status': 10", "'status': -2147483649", NULL), "characters[0].status: integer out of range");
	expect_one(edit("'status': 10", "'status': -1e400", NULL), "characters[0].status: integer out of range");
	expect_one(edit("'status': 10", "'status': 100000000000000000000000000000000000000000000000000000000000000000000000", NULL),
		   "characters[0].status: integer out of range");
	struct config *cfg = expect_ok(edit("'status': 10", "'status': -2147483648", "'status': 40", "'status': 2147483647", NULL));
	assert_int_equal(cfg->characters[0].status, -2147483648LL);
	assert_int_equal(cfg->characters[3].status, 2147483647);
	config_free(cfg);
	expect_one(edit("'name': 'Ann'", "'name': 7", NULL), "characters[0].name: must be a string");
	expect_one(edit("'name': 'Mall'", "'name': null", NULL), "locations[1].name: must be a string");
	expect_has(edit("'cards': [\n {'food'", "'cards': {}, 'x': [\n {'food'", NULL),
		   "cards: must be an array");
	/* x above is also unknown; check both messages are given */
	expect_has(edit("'cards': [\n {'food'", "'cards': {}, 'x': [\n {'food'", NULL), "x: unknown key");
	expect_has(edit("'goal': {", "'goal': 1, 'g': {", NULL), "g: unknown key");
	expect_has(edit("'goal': {", "'goal': 1, 'g': {", NULL), "goal: must be an object");
	expect_one(edit("'startCards': [1, 2, 3, 4, 5, 6]", "'startCards': [1, 2, 3, 4, 5, '6']", NULL),
		   "locations[0].colony.startCards[5]: must be an integer");
	expect_one(edit("{'name': 'Bob'", "[{'name': 'Bob'", "'maxActivations': 3}}},", "'maxActivations': 3}}}],", NULL),
		   "characters[1]: must be an object");
	expect_one(edit("{'colony': {'identifier': 1, 'entrances': 1, 'startCards': [1, 2, 3, 4, 5, 6]}}", "{'colony': 1}", NULL),
		   "locations[0].colony: must be an object");
}

static void test_bool_type(void **state)
{
	(void)state;
	expect_one(edit("'survive': true", "'survive': 1", NULL), "goal.survive: must be a boolean");
	expect_one(edit("'infectionDie': true", "'infectionDie': 'true'", NULL),
		   "characters[0].ability.kill.infectionDie: must be a boolean");
	expect_one(edit("'infectionDie': true", "'children': null", NULL),
		   "characters[0].ability.kill.children: must be a boolean");
}

static void test_polymorphic(void **state)
{
	(void)state;
	expect_one(edit("{'fuel': {'identifier': 2}}", "{'petrol': {'identifier': 2}}", NULL),
		   "cards[1].petrol: unknown card type (expected one of food, fuel, stuff, medicine, lock, "
		   "scissors, hammer, snow_boots, colt, swab, blueprint)");
	expect_one(edit("{'fuel': {'identifier': 2}}", "{'fuel': {'identifier': 2}, 'stuff': {'identifier': 13}}", NULL),
		   "cards[1]: must have exactly one key, the card type (one of food, fuel, stuff, medicine, "
		   "lock, scissors, hammer, snow_boots, colt, swab, blueprint); has 2");
	expect_one(edit("{'fuel': {'identifier': 2}}", "{}", NULL),
		   "cards[1]: must have exactly one key, the card type (one of food, fuel, stuff, medicine, "
		   "lock, scissors, hammer, snow_boots, colt, swab, blueprint); has 0");
	expect_one(edit("{'fuel': {'identifier': 2}}", "{'fuel': 2}", NULL), "cards[1].fuel: must be an object");
	expect_one(edit("'feed': {'numFood': 2}", "'fly': {}", NULL),
		   "characters[3].ability.fly: unknown ability type (expected one of wound, no_infection, "
		   "search, trash, heal, feed, barricade, kill)");
	expect_one(edit("{'fuel': {'identifier': 2, 'moralChange'", "{'gold': {'identifier': 2, 'moralChange'", NULL),
		   "crises[1].gold: unknown crisis type (expected one of food, stuff, medicine, fuel)");
	expect_one(edit("'ability': {'feed': {'numFood': 2}}", "'ability': ['feed']", NULL),
		   "characters[3].ability: must be an object");
}

static void test_wound_values(void **state)
{
	(void)state;
	expect_one(edit("'before': 'frostBite'", "'before': 'frostbite'", NULL),
		   "characters[2].ability.wound.before: must be one of \"wound\", \"frostBite\", \"bite\"");
	expect_one(edit("'after': 'wound'", "'after': 2", NULL),
		   "characters[2].ability.wound.after: must be one of \"wound\", \"frostBite\", \"bite\"");
}

/* ---- minimums ----------------------------------------------------------- */

static void test_min_max_players(void **state)
{
	(void)state;
	expect_one(edit("'maxPlayers': 1", "'maxPlayers': 0", NULL), "maxPlayers: must be >= 1");
}

static void test_min_identifiers(void **state)
{
	(void)state;
	expect_one(edit("{'identifier': 3}", "{'identifier': 0}", NULL), "cards[2].stuff.identifier: must be >= 1");
	expect_one(edit("'identifier': 2, 'status'", "'identifier': -2, 'status'", NULL),
		   "characters[1].identifier: must be >= 1");
	expect_one(edit("{'identifier': 1, 'moralChange'", "{'identifier': 0, 'moralChange'", NULL),
		   "crises[0].food.identifier: must be >= 1");
}

static void test_min_food_amount(void **state)
{
	(void)state;
	expect_one(edit("'amount': 2", "'amount': 0", NULL), "cards[0].food.amount: must be >= 1");
}

static void test_min_locations(void **state)
{
	(void)state;
	expect_one(edit("'survivorSpaces': 2", "'survivorSpaces': 0", NULL),
		   "locations[1].survivorSpaces: must be >= 1");
	expect_one(edit("'identifier': 2, 'entrances': 1", "'identifier': 2, 'entrances': 0", NULL),
		   "locations[1].entrances: must be >= 1");
	expect_one(edit("'identifier': 1, 'entrances': 1", "'identifier': 1, 'entrances': 0", NULL),
		   "locations[0].colony.entrances: must be >= 1");
}

static void test_min_goal(void **state)
{
	(void)state;
	expect_one(edit("'rounds': 2", "'rounds': 0", NULL), "goal.rounds: must be >= 1");
	expect_one(edit("'moral': 5", "'moral': 0", NULL), "goal.moral: must be >= 1");
	expect_one(edit("'zombiesColony': 3", "'zombiesColony': -1", NULL), "goal.zombiesColony: must be >= 0");
	expect_one(edit("'zombiesLocations': 3", "'zombiesLocations': -1", NULL),
		   "goal.zombiesLocations: must be >= 0");
	expect_one(edit("'childrenInColony': 1", "'childrenInColony': -1", NULL),
		   "goal.childrenInColony: must be between 0 and 100000");
	/* a limit of this server: each child may cost a zombie spawn and two
	 * events every colony phase */
	expect_one(edit("'childrenInColony': 1", "'childrenInColony': 100001", NULL),
		   "goal.childrenInColony: must be between 0 and 100000");
	expect_one(edit("'childrenInColony': 1", "'childrenInColony': 2000000000", NULL),
		   "goal.childrenInColony: must be between 0 and 100000");
	expect_one(edit("'survive': true", "'barricades': -1", NULL), "goal.barricades: must be >= 0");
	expect_one(edit("'survive': true", "'locationWithZombies': -1", NULL),
		   "goal.locationWithZombies: must be >= 0");
}

static void test_min_crisis(void **state)
{
	(void)state;
	expect_one(edit("'moralChange': 1", "'moralChange': 0", NULL), "crises[0].food.moralChange: must be >= 1");
	expect_one(edit("'requiredCards': 1", "'requiredCards': 0", NULL),
		   "crises[1].fuel.requiredCards: must be >= 1");
}

static void test_attack_search_range(void **state)
{
	(void)state;
	expect_one(edit("'attack': 3", "'attack': 7", NULL), "characters[0].attack: must be between 1 and 6");
	expect_one(edit("'attack': 3", "'attack': 0", NULL), "characters[0].attack: must be between 1 and 6");
	expect_one(edit("'search': 5", "'search': 7", NULL), "characters[1].search: must be between 1 and 6");
	expect_one(edit("'search': 5", "'search': 0", NULL), "characters[1].search: must be between 1 and 6");
}

static void test_kill_die_value(void **state)
{
	(void)state;
	expect_one(edit("'dieValue': 4", "'dieValue': 7", NULL),
		   "characters[0].ability.kill.dieValue: must be between 0 and 6");
	expect_one(edit("'dieValue': 4", "'dieValue': -1", NULL),
		   "characters[0].ability.kill.dieValue: must be between 0 and 6");
}

static void test_ability_minimums(void **state)
{
	(void)state;
	expect_one(edit("'numZombies': 2", "'numZombies': 0", NULL),
		   "characters[0].ability.kill.numZombies: must be >= 1");
	expect_one(edit("'dieValue': 4, 'numZombies': 2, 'maxActivations': 1", "'dieValue': 4, 'numZombies': 2, 'maxActivations': 0", NULL),
		   "characters[0].ability.kill.maxActivations: must be >= 1");
	expect_one(edit("'numCards': 1", "'numCards': 0", NULL),
		   "characters[1].ability.search.numCards: must be >= 1");
	expect_one(edit("'maxActivations': 3", "'maxActivations': 0", NULL),
		   "characters[1].ability.search.maxActivations: must be >= 1");
	expect_one(edit("'numFood': 2", "'numFood': 0", NULL), "characters[3].ability.feed.numFood: must be >= 1");
	expect_one(edit("'feed': {'numFood': 2}", "'trash': {'numCards': 0}", NULL),
		   "characters[3].ability.trash.numCards: must be >= 1");
	expect_one(edit("'feed': {'numFood': 2}", "'barricade': {'numBarricades': 0, 'maxActivations': 1}", NULL),
		   "characters[3].ability.barricade.numBarricades: must be >= 1");
	expect_one(edit("'feed': {'numFood': 2}", "'barricade': {'numBarricades': 1, 'maxActivations': 0}", NULL),
		   "characters[3].ability.barricade.maxActivations: must be >= 1");
}

/* ---- cross rules -------------------------------------------------------- */

static void test_too_few_characters(void **state)
{
	(void)state;
	expect_one(edit(",\n {'name': 'Dot', 'identifier': 4, 'status': 40, 'attack': 6, 'search': 1,\n"
			"  'ability': {'feed': {'numFood': 2}}}", "", NULL),
		   "characters: needs at least 4 characters (maxPlayers*2+2), has 3");
	/* maxPlayers 2 needs 6 characters (and 10 cards per stack) */
	expect_has(edit("'maxPlayers': 1", "'maxPlayers': 2", NULL),
		   "characters: needs at least 6 characters (maxPlayers*2+2), has 4");
}

static void test_deck_too_small(void **state)
{
	(void)state;
	expect_one(edit("'cards': [7, 8, 9, 10, 11, 12]", "'cards': [7, 8, 9, 10]", NULL),
		   "locations[1].cards: needs at least 5 cards (maxPlayers*5), has 4");
	expect_one(edit("'cards': [7, 8, 9, 10, 11, 12]", "'cards': []", NULL),
		   "locations[1].cards: needs at least 5 cards (maxPlayers*5), has 0");
}

static void test_start_cards_too_small(void **state)
{
	(void)state;
	expect_one(edit("'startCards': [1, 2, 3, 4, 5, 6]", "'startCards': [1, 2]", NULL),
		   "locations[0].colony.startCards: needs at least 5 cards (maxPlayers*5), has 2");
}

static void test_too_few_crises(void **state)
{
	(void)state;
	expect_one(edit("'rounds': 2", "'rounds': 3", NULL), "crises: needs at least 3 crises (one per round), has 2");
}

static void test_duplicate_status(void **state)
{
	(void)state;
	expect_one(edit("'status': 40", "'status': 20", NULL),
		   "characters[3].status: duplicate social status 20 (also characters[1])");
	/* three equal statuses: two messages, both naming the first */
	struct config_errors e = { 0 };
	char *t = edit("'status': 20", "'status': 10", "'status': 40", "'status': 10", NULL);
	assert_null(config_parse(t, strlen(t), &e));
	assert_int_equal(e.n, 2);
	assert_string_equal(e.msgs[0], "characters[1].status: duplicate social status 10 (also characters[0])");
	assert_string_equal(e.msgs[1], "characters[3].status: duplicate social status 10 (also characters[0])");
	config_errors_free(&e);
	free(t);
}

static void test_duplicate_card_id(void **state)
{
	(void)state;
	expect_has(edit("{'identifier': 12}", "{'identifier': 2}", NULL),
		   "cards[11].fuel.identifier: duplicate card id 2 (also cards[1].fuel)");
}

static void test_duplicate_character_id(void **state)
{
	(void)state;
	expect_one(edit("'identifier': 4, 'status'", "'identifier': 1, 'status'", NULL),
		   "characters[3].identifier: duplicate character id 1 (also characters[0])");
}

static void test_duplicate_location_id(void **state)
{
	(void)state;
	expect_one(edit("'name': 'Mall', 'identifier': 2", "'name': 'Mall', 'identifier': 1",
			"'location': 2}}", "'location': 1}}",
			"'locationId': 2", "'locationId': 1", "'location': 2,", "'location': 1,", NULL),
		   "locations[1].identifier: duplicate location id 1 (also locations[0].colony)");
}

static void test_card_used_twice(void **state)
{
	(void)state;
	/* in the same stack */
	expect_one(edit("[7, 8, 9, 10, 11, 12]", "[7, 8, 9, 10, 11, 12, 7]", NULL),
		   "locations[1].cards[6]: card 7 is used more than once (also locations[1].cards[0])");
	/* in two stacks */
	expect_one(edit("[7, 8, 9, 10, 11, 12]", "[7, 8, 9, 10, 11, 12, 3]", NULL),
		   "locations[1].cards[6]: card 3 is used more than once (also locations[0].colony.startCards[2])");
}

static void test_unknown_card(void **state)
{
	(void)state;
	expect_one(edit("[7, 8, 9, 10, 11, 12]", "[7, 8, 9, 10, 11, 12, 99]", NULL),
		   "locations[1].cards[6]: unknown card 99");
	expect_one(edit("[1, 2, 3, 4, 5, 6]", "[1, 2, 3, 4, 5, 6, 0]", NULL),
		   "locations[0].colony.startCards[6]: must be >= 1");
}

static void test_unknown_location(void **state)
{
	(void)state;
	expect_one(edit("'identifier': 11, 'location': 2", "'identifier': 11, 'location': 3", NULL),
		   "cards[10].blueprint.location: unknown location 3");
	expect_one(edit("'location': 2, 'numCards'", "'location': 9, 'numCards'", NULL),
		   "characters[1].ability.search.location: unknown location 9");
	expect_one(edit("'locationId': 2", "'locationId': 5", NULL),
		   "characters[0].ability.kill.locationId: unknown location 5");
}

static void test_too_many_zombies(void **state)
{
	(void)state;
	expect_one(edit("'zombiesColony': 3", "'zombiesColony': 4", NULL),
		   "goal.zombiesColony: 4 initial zombies exceed the 3 entrance spaces of the colony "
		   "(locations[0], 3 per entrance)");
	expect_one(edit("'zombiesLocations': 3", "'zombiesLocations': 4", NULL),
		   "goal.zombiesLocations: 4 initial zombies exceed the 3 entrance spaces of locations[1] "
		   "(3 per entrance)");
	/* more entrances, more room */
	struct config *cfg = expect_ok(edit("'zombiesColony': 3", "'zombiesColony': 6",
					    "'identifier': 1, 'entrances': 1", "'identifier': 1, 'entrances': 2", NULL));
	config_free(cfg);
}

/* The entrances of all locations together are limited (the game keeps
 * and walks every entrance): one number must not ask for gigabytes. */
static void test_too_many_entrances(void **state)
{
	(void)state;
	expect_one(edit("'identifier': 2, 'entrances': 1", "'identifier': 2, 'entrances': 1555555554",
			NULL),
		   "locations: 1555555555 entrances in all locations together; at most 1000000 are "
		   "supported");
	expect_one(edit("'identifier': 1, 'entrances': 1", "'identifier': 1, 'entrances': 500000",
			"'identifier': 2, 'entrances': 1", "'identifier': 2, 'entrances': 500001", NULL),
		   "locations: 1000001 entrances in all locations together; at most 1000000 are "
		   "supported");
	struct config *cfg = expect_ok(edit("'identifier': 1, 'entrances': 1",
					    "'identifier': 1, 'entrances': 500000",
					    "'identifier': 2, 'entrances': 1",
					    "'identifier': 2, 'entrances': 500000", NULL));
	config_free(cfg);
}

static void test_goal_conditions(void **state)
{
	(void)state;
	expect_one(edit("'survive': true", "'survive': true, 'barricades': 1", NULL),
		   "goal: must have exactly one of survive, barricades, locationWithZombies");
	expect_one(edit(", 'survive': true", "", NULL),
		   "goal: must have exactly one of survive, barricades, locationWithZombies");
	expect_one(edit("'survive': true", "'barricades': 1, 'locationWithZombies': 1, 'survive': false", NULL),
		   "goal: must have exactly one of survive, barricades, locationWithZombies");
}

static void test_location_with_zombies_too_high(void **state)
{
	(void)state;
	expect_one(edit("'survive': true", "'locationWithZombies': 3", NULL),
		   "goal.locationWithZombies: 3 exceeds the number of locations (2, colony included)");
}

static void test_barricades_too_high(void **state)
{
	(void)state;
	expect_one(edit("'survive': true", "'barricades': 7", NULL),
		   "goal.barricades: 7 exceeds 3 per entrance in total (6)");
}

static void test_colony_count(void **state)
{
	(void)state;
	expect_one(edit("{'colony': {'identifier': 1, 'entrances': 1, 'startCards': [1, 2, 3, 4, 5, 6]}}",
			"{'name': 'Home', 'identifier': 1, 'entrances': 1, 'survivorSpaces': 1, 'cards': [1, 2, 3, 4, 5, 6]}",
			NULL),
		   "locations: must contain exactly one colony, has 0");
	expect_one(edit("{'name': 'Mall', 'identifier': 2, 'entrances': 1, 'survivorSpaces': 2, 'cards'",
			"{'colony': {'identifier': 2, 'entrances': 1, 'startCards'", "11, 12]}", "11, 12]}}", NULL),
		   "locations: must contain exactly one colony, has 2");
}

/* ---- reporting ---------------------------------------------------------- */

static void test_every_problem_reported(void **state)
{
	(void)state;
	struct config_errors e = { 0 };
	char *t = edit("'maxPlayers': 1", "'maxPlayers': 1, 'bogus': 1", "'amount': 2", "'amount': 0",
		       "'attack': 3", "'attack': 9", "'status': 40", "'status': 10", "'survive': true",
		       "'barricades': 99", "'survivorSpaces': 2", "'survivorSpaces': 'x'", NULL);
	assert_null(config_parse(t, strlen(t), &e));
	static const char *const want[] = {
		"bogus: unknown key",
		"cards[0].food.amount: must be >= 1",
		"characters[0].attack: must be between 1 and 6",
		"locations[1].survivorSpaces: must be an integer",
		"characters[3].status: duplicate social status 10 (also characters[0])",
		"goal.barricades: 99 exceeds 3 per entrance in total (6)",
	};
	if (e.n != 6)
		dump(&e);
	assert_int_equal(e.n, 6);
	for (int i = 0; i < 6; i++)
		assert_string_equal(e.msgs[i], want[i]);
	config_errors_free(&e);
	free(t);
}

static void test_errors_appended(void **state)
{
	(void)state;
	struct config_errors e = { 0 };
	assert_null(config_parse("[]", 2, &e));
	assert_null(config_parse("{", 1, &e));
	assert_int_equal(e.n, 2);
	assert_string_equal(e.msgs[0], "(root): must be an object");
	config_errors_free(&e);
	assert_int_equal(e.n, 0);
	assert_null(e.msgs);
	config_errors_free(&e); /* twice is fine */
	config_errors_free(NULL);
	config_free(NULL);
}

static void test_error_cap(void **state)
{
	(void)state;
	size_t n = 3000;
	char *t = malloc(n * 12 + 16);
	assert_non_null(t);
	size_t l = 0;
	t[l++] = '{';
	for (size_t i = 0; i < n; i++)
		l += (size_t)sprintf(t + l, "%s\"k%zu\":0", i ? "," : "", i);
	t[l++] = '}';
	t[l] = '\0';
	struct config_errors e = { 0 };
	assert_null(config_parse(t, l, &e));
	assert_int_equal(e.n, 1001);
	assert_string_equal(e.msgs[0], "k0: unknown key");
	assert_string_equal(e.msgs[1000], "(root): too many problems; only the first 1000 are reported");
	config_errors_free(&e);
	free(t);
}

static void test_long_unknown_key(void **state)
{
	(void)state;
	char key[200];
	memset(key, 'a', sizeof key - 1);
	key[sizeof key - 1] = '\0';
	char text[300];
	snprintf(text, sizeof text, "{\"%s\": 1, \"x\\ny\": 2}", key);
	struct config_errors e = { 0 };
	assert_null(config_parse(text, strlen(text), &e));
	char want[100];
	snprintf(want, sizeof want, "%.64s...: unknown key", key);
	assert_string_equal(e.msgs[0], want);
	assert_string_equal(e.msgs[1], "x?y: unknown key");
	config_errors_free(&e);
}

static void test_load_errors(void **state)
{
	(void)state;
	struct config_errors e = { 0 };
	assert_null(config_load("/nonexistent/dir/x.json", &e));
	assert_int_equal(e.n, 1);
	assert_string_equal(e.msgs[0], "/nonexistent/dir/x.json: cannot read: No such file or directory");
	config_errors_free(&e);
	assert_null(config_load("/", &e));
	assert_int_equal(e.n, 1);
	assert_string_equal(e.msgs[0], "/: cannot read: Is a directory");
	config_errors_free(&e);
}

static void test_load_invalid_file(void **state)
{
	(void)state;
	char path[] = "/tmp/test_config_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "wb");
	assert_non_null(f);
	fputs("{\"maxPlayers\": 0}", f);
	fclose(f);
	struct config_errors e = { 0 };
	assert_null(config_load(path, &e));
	assert_int_equal(e.n, 6);
	assert_string_equal(e.msgs[0], "maxPlayers: must be >= 1");
	assert_string_equal(e.msgs[1], "cards: missing required key");
	config_errors_free(&e);

	/* a valid file round-trips verbatim */
	f = fopen(path, "wb");
	assert_non_null(f);
	char *t = q(VALID);
	fputs(t, f);
	fclose(f);
	struct config *cfg = load_ok(path);
	assert_string_equal(cfg->text, t);
	config_free(cfg);
	free(t);
	remove(path);
}

/* Writes len bytes of text into the write end w of a pipe from a child
 * process (a pipe holds less than the texts here) and closes w. The child
 * frees its copy of text, which stays the caller's. */
static pid_t write_from_child(int w, char *text, size_t len)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		size_t done = 0;
		while (done < len) {
			ssize_t n = write(w, text + done, len - done);
			if (n <= 0)
				break;
			done += (size_t)n;
		}
		free(text); /* the child's copy: leak checkers follow the fork */
		_exit(done == len ? 0 : 1);
	}
	close(w);
	return pid;
}

/* Not a regular file (no size to read at): read until its end, through a
 * buffer that grows past its first 64 KiB, and kept verbatim. */
static void test_load_from_pipe(void **state)
{
	(void)state;
	char *t = q(VALID);
	size_t vlen = strlen(t), len = vlen + (200u << 10);
	char *text = malloc(len + 1);
	assert_non_null(text);
	memcpy(text, t, vlen);
	free(t); /* before the fork: the writing child must not hold it */
	memset(text + vlen, ' ', len - vlen); /* whitespace after the value */
	text[len] = '\0';
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = write_from_child(p[1], text, len);
	char path[32];
	snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
	struct config *cfg = load_ok(path);
	assert_int_equal(cfg->text_len, len);
	assert_memory_equal(cfg->text, text, len + 1);
	config_free(cfg);
	close(p[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	free(text);
}

/* A regular file over the limit is refused by its size, without reading. */
static void test_load_too_large_file(void **state)
{
	(void)state;
	char path[] = "/tmp/test_config_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (16 << 20) + 1), 0); /* sparse */
	close(fd);
	struct config_errors e = { 0 };
	assert_null(config_load(path, &e));
	assert_int_equal(e.n, 1);
	char want[128];
	snprintf(want, sizeof want, "%s: file too large (more than 16777216 bytes)", path);
	assert_string_equal(e.msgs[0], want);
	config_errors_free(&e);
	remove(path);
}

/* Text denser than the tree's first block assumes (one-digit numbers):
 * the tree continues in more blocks, and every problem is still found. */
static void test_dense_text(void **state)
{
	(void)state;
	size_t n = 100000;
	char *more = malloc(2 * n + 64);
	assert_non_null(more);
	size_t l = (size_t)sprintf(more, "'cards': [7, 8, 9, 10, 11, 12");
	for (size_t i = 0; i < n; i++)
		l += (size_t)sprintf(more + l, ",7");
	strcpy(more + l, "]");
	char *t = edit("'cards': [7, 8, 9, 10, 11, 12]", more, NULL);
	struct config_errors e = { 0 };
	assert_null(config_parse(t, strlen(t), &e));
	assert_int_equal(e.n, 1001);
	assert_string_equal(e.msgs[0], "locations[1].cards[6]: card 7 is used more than once "
				       "(also locations[1].cards[0])");
	assert_string_equal(e.msgs[1000], "(root): too many problems; only the first 1000 are reported");
	config_errors_free(&e);
	free(t);
	free(more);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_compact),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_colony_not_first),
		cmocka_unit_test(test_other_abilities),
		cmocka_unit_test(test_goal_variants),
		cmocka_unit_test(test_integral_float_and_key_order),
		cmocka_unit_test(test_unicode_name_and_whitespace),
		cmocka_unit_test(test_text_not_nul_terminated),
		cmocka_unit_test(test_conformance_base),
		cmocka_unit_test(test_conformance_revised),
		cmocka_unit_test(test_conformance_configuration_values),
		cmocka_unit_test(test_example_files),
		cmocka_unit_test(test_not_json),
		cmocka_unit_test(test_trailing_garbage),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_strict_json),
		cmocka_unit_test(test_too_deep),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_root_not_object),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_schema_key),
		cmocka_unit_test(test_colony_wrapper_extra_key),
		cmocka_unit_test(test_duplicate_key),
		cmocka_unit_test(test_missing_keys),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_bool_type),
		cmocka_unit_test(test_polymorphic),
		cmocka_unit_test(test_wound_values),
		cmocka_unit_test(test_min_max_players),
		cmocka_unit_test(test_min_identifiers),
		cmocka_unit_test(test_min_food_amount),
		cmocka_unit_test(test_min_locations),
		cmocka_unit_test(test_min_goal),
		cmocka_unit_test(test_min_crisis),
		cmocka_unit_test(test_attack_search_range),
		cmocka_unit_test(test_kill_die_value),
		cmocka_unit_test(test_ability_minimums),
		cmocka_unit_test(test_too_few_characters),
		cmocka_unit_test(test_deck_too_small),
		cmocka_unit_test(test_start_cards_too_small),
		cmocka_unit_test(test_too_few_crises),
		cmocka_unit_test(test_duplicate_status),
		cmocka_unit_test(test_duplicate_card_id),
		cmocka_unit_test(test_duplicate_character_id),
		cmocka_unit_test(test_duplicate_location_id),
		cmocka_unit_test(test_card_used_twice),
		cmocka_unit_test(test_unknown_card),
		cmocka_unit_test(test_unknown_location),
		cmocka_unit_test(test_too_many_zombies),
		cmocka_unit_test(test_too_many_entrances),
		cmocka_unit_test(test_goal_conditions),
		cmocka_unit_test(test_location_with_zombies_too_high),
		cmocka_unit_test(test_barricades_too_high),
		cmocka_unit_test(test_colony_count),
		cmocka_unit_test(test_every_problem_reported),
		cmocka_unit_test(test_errors_appended),
		cmocka_unit_test(test_error_cap),
		cmocka_unit_test(test_long_unknown_key),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_load_invalid_file),
		cmocka_unit_test(test_load_from_pipe),
		cmocka_unit_test(test_load_too_large_file),
		cmocka_unit_test(test_dense_text),
		cmocka_unit_test(test_drop_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
