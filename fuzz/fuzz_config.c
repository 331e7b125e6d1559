/*
 * fuzz_config: config_parse on arbitrary bytes.
 *
 * On failure: at least one message, each non-empty, valid UTF-8 and one
 * line; config_errors_free releases them (LeakSanitizer checks).
 * On success: no message, and the promises of docs/configuration.md hold
 * (counts, ids unique and referenced ones present, exactly one colony at
 * cfg->colony, ranges, the text kept verbatim). Then the config is played:
 * in both editions a few players register and select, and a simple policy
 * (EndTurn or an action of the command table with arguments from the
 * player's characters and cards) plays up to 400 steps through
 * fuzz_session, which checks every event and game_check_invariants() --
 * whatever the validator accepts must be playable. config_free at the end.
 */
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ERRORS_REPORTED 1001 /* CONFIG_MAX_ERRORS + the "too many" line */
#define PLAY_STEPS          400

static bool has_dup(const int *v, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (v[i] == v[j])
				return true;
	return false;
}

static int loc_index(const struct config *cfg, int id)
{
	for (int i = 0; i < cfg->nlocations; i++)
		if (cfg->locations[i].id == id)
			return i;
	return -1;
}

static void check_config(const struct config *cfg, const uint8_t *data, size_t size)
{
	FUZZ_CHECK(cfg->text && cfg->text_len == size && memcmp(cfg->text, data, size) == 0 &&
	                   cfg->text[size] == '\0',
	           "config text is not the input verbatim");
	long long mp = cfg->max_players;
	FUZZ_CHECK(mp >= 1, "maxPlayers %lld", mp);
	FUZZ_CHECK(cfg->ncharacters >= mp * 2 + 2, "%d characters for %lld players",
	           cfg->ncharacters, mp);
	const struct config_goal *g = &cfg->goal;
	FUZZ_CHECK(g->rounds >= 1 && g->moral >= 1 && g->zombies_colony >= 0 &&
	                   g->zombies_locations >= 0 && g->children_in_colony >= 0,
	           "goal out of range");
	FUZZ_CHECK(g->type == GOAL_SURVIVE || g->type == GOAL_BARRICADES ||
	                   g->type == GOAL_LOCATION_WITH_ZOMBIES,
	           "goal type %d", (int)g->type);
	FUZZ_CHECK(g->type == GOAL_SURVIVE || g->value >= 0, "goal value %d", g->value);
	FUZZ_CHECK(cfg->ncrises >= g->rounds, "%d crises for %d rounds", cfg->ncrises, g->rounds);

	/* cards */
	int *ids = xcalloc((size_t)cfg->ncards, sizeof(int));
	for (int i = 0; i < cfg->ncards; i++) {
		const struct config_card *c = &cfg->cards[i];
		ids[i] = c->id;
		FUZZ_CHECK(c->id >= 1, "card id %d", c->id);
		FUZZ_CHECK((unsigned)c->type < CARD_TYPE_COUNT, "card type %d", (int)c->type);
		if (c->type == CARD_FOOD)
			FUZZ_CHECK(c->amount >= 1, "food amount %d", c->amount);
		if (c->type == CARD_BLUEPRINT)
			FUZZ_CHECK(loc_index(cfg, c->location) >= 0,
			           "blueprint %d names unknown location %d", c->id, c->location);
	}
	FUZZ_CHECK(!has_dup(ids, cfg->ncards), "duplicate card id");
	free(ids);

	/* characters */
	ids = xcalloc((size_t)cfg->ncharacters, sizeof(int));
	int *status = xcalloc((size_t)cfg->ncharacters, sizeof(int));
	for (int i = 0; i < cfg->ncharacters; i++) {
		const struct config_character *c = &cfg->characters[i];
		ids[i] = c->id;
		status[i] = c->status;
		FUZZ_CHECK(c->id >= 1, "character id %d", c->id);
		FUZZ_CHECK(c->name != NULL, "character %d without a name", c->id);
		FUZZ_CHECK(c->attack >= 1 && c->attack <= 6 && c->search >= 1 && c->search <= 6,
		           "character %d attack %d search %d", c->id, c->attack, c->search);
		const struct config_ability *a = &c->ability;
		switch (a->type) {
		case ABILITY_WOUND:
			FUZZ_CHECK((unsigned)a->before <= INJURY_BITE &&
			                   (unsigned)a->after <= INJURY_BITE,
			           "wound ability injuries %d %d", (int)a->before, (int)a->after);
			break;
		case ABILITY_NO_INFECTION:
		case ABILITY_HEAL:
			break;
		case ABILITY_SEARCH:
			FUZZ_CHECK(loc_index(cfg, a->location) >= 0 && a->num_cards >= 1 &&
			                   a->max_activations >= 1,
			           "search ability of %d", c->id);
			break;
		case ABILITY_TRASH:
			FUZZ_CHECK(a->num_cards >= 1, "trash ability of %d", c->id);
			break;
		case ABILITY_FEED:
			FUZZ_CHECK(a->num_food >= 1, "feed ability of %d", c->id);
			break;
		case ABILITY_BARRICADE:
			FUZZ_CHECK(a->num_barricades >= 1 && a->max_activations >= 1,
			           "barricade ability of %d", c->id);
			break;
		case ABILITY_KILL:
			FUZZ_CHECK(loc_index(cfg, a->location) >= 0 && a->die_value >= 0 &&
			                   a->die_value <= 6 && a->num_zombies >= 1 &&
			                   a->max_activations >= 1,
			           "kill ability of %d", c->id);
			break;
		default:
			FUZZ_CHECK(false, "ability type %d", (int)a->type);
		}
	}
	FUZZ_CHECK(!has_dup(ids, cfg->ncharacters), "duplicate character id");
	FUZZ_CHECK(!has_dup(status, cfg->ncharacters), "duplicate status");
	free(ids);
	free(status);

	/* locations */
	FUZZ_CHECK(cfg->nlocations >= 1, "no locations");
	FUZZ_CHECK(cfg->colony >= 0 && cfg->colony < cfg->nlocations, "colony index %d of %d",
	           cfg->colony, cfg->nlocations);
	ids = xcalloc((size_t)cfg->nlocations, sizeof(int));
	int ncolonies = 0;
	long long entrances = 0;
	unsigned char *in_stack = xcalloc((size_t)cfg->ncards, 1);
	for (int i = 0; i < cfg->nlocations; i++) {
		const struct config_location *l = &cfg->locations[i];
		ids[i] = l->id;
		FUZZ_CHECK(l->id >= 1 && l->entrances >= 1, "location %d: id or entrances", i);
		FUZZ_CHECK(l->name != NULL, "location %d without a name", l->id);
		entrances += l->entrances;
		if (l->is_colony) {
			ncolonies++;
			FUZZ_CHECK(i == cfg->colony, "colony at %d, cfg->colony %d", i,
			           cfg->colony);
			FUZZ_CHECK(strcmp(l->name, "colony") == 0 && l->survivor_spaces == 0,
			           "colony name/spaces");
			FUZZ_CHECK(g->zombies_colony <= 3LL * l->entrances, "colony zombies");
		} else {
			FUZZ_CHECK(l->survivor_spaces >= 1, "location %d: survivorSpaces %d", l->id,
			           l->survivor_spaces);
			FUZZ_CHECK(g->zombies_locations <= 3LL * l->entrances,
			           "location %d zombies", l->id);
		}
		FUZZ_CHECK(l->ncards >= mp * 5, "location %d: %d cards for %lld players", l->id,
		           l->ncards, mp);
		for (int k = 0; k < l->ncards; k++) {
			int ci = -1;
			for (int m = 0; m < cfg->ncards && ci < 0; m++)
				if (cfg->cards[m].id == l->cards[k])
					ci = m;
			FUZZ_CHECK(ci >= 0, "location %d lists unknown card %d", l->id,
			           l->cards[k]);
			FUZZ_CHECK(!in_stack[ci], "card %d is in two stacks", l->cards[k]);
			in_stack[ci] = 1;
		}
	}
	FUZZ_CHECK(ncolonies == 1, "%d colonies", ncolonies);
	FUZZ_CHECK(!has_dup(ids, cfg->nlocations), "duplicate location id");
	free(ids);
	free(in_stack);
	if (g->type == GOAL_LOCATION_WITH_ZOMBIES)
		FUZZ_CHECK(g->value <= cfg->nlocations, "locationWithZombies %d", g->value);
	if (g->type == GOAL_BARRICADES)
		FUZZ_CHECK(g->value <= 3 * entrances, "barricades %d", g->value);

	for (int i = 0; i < cfg->ncrises; i++) {
		const struct config_crisis *c = &cfg->crises[i];
		FUZZ_CHECK(c->id >= 1 && (unsigned)c->type <= CRISIS_FUEL && c->moral_change >= 1 &&
		                   c->required_cards >= 1,
		           "crisis %d", i);
	}
}

/* ---- playing an accepted config ------------------------------------------- */

static uint64_t next_rand(uint64_t *x)
{
	/* xorshift64* */
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 2685821657736338717ULL;
}

/* The actions the policy draws from: the commands with parameters, all of
 * them picked from the sender's characters and cards and the board (not
 * Register's name nor the characters offered in the selection). Register,
 * StartGame, SelectCharacters and EndTurn the policy sends itself; a
 * command without parameters (Leave) it never draws. */
static bool is_action(enum cmd_type t)
{
	size_t n;
	const struct proto_param *ps = proto_cmd_params(t, &n);
	for (size_t i = 0; i < n; i++)
		if (ps[i].domain == PROTO_DOMAIN_NAME ||
		    ps[i].domain == PROTO_DOMAIN_OFFERED_CHARACTER)
			return false;
	return n > 0;
}

/* Player w's next command in the turns: EndTurn 8 times in 20 (one of
 * them in 8 a timeout instead: returns false), else an action, its
 * arguments read like fuzz_game's from pseudo-random bytes that stay in
 * the likely pools (the player's characters and cards). */
static bool next_command(struct fuzz_session *s, int w, uint64_t *x, struct cmd *c, char name[17])
{
	static enum cmd_type actions[CMD_TYPE_COUNT];
	static size_t nactions;
	if (nactions == 0)
		for (int t = 0; t < CMD_TYPE_COUNT; t++)
			if (is_action((enum cmd_type)t))
				actions[nactions++] = (enum cmd_type)t;
	uint64_t r = next_rand(x);
	if (r % 20 >= 12) {
		if (r % 20 == 12 && (r >> 48) % 8 == 0)
			return false;
		*c = (struct cmd){.type = CMD_END_TURN};
		return true;
	}
	uint8_t bytes[24];
	for (size_t i = 0; i < sizeof bytes; i++)
		bytes[i] = (uint8_t)(next_rand(x) % 0xA0);
	struct fuzz_reader rd = {bytes, sizeof bytes, 0};
	fuzz_read_cmd(&rd, s, w, actions[(r >> 8) % nactions], c, name);
	return true;
}

static void play(const struct config *cfg, enum game_rules rules, uint64_t seed)
{
	struct fuzz_session s;
	fuzz_session_init(&s, cfg, (int64_t)seed, rules);
	uint64_t x = seed | 1;
	int nreg = cfg->max_players < 3 ? cfg->max_players : 3;
	for (int i = 0; i < nreg && !s.over; i++) {
		struct cmd c = {.type = CMD_REGISTER, .name = "fuzz"};
		fuzz_apply(&s, GAME_NO_PLAYER, &c);
	}
	if (!s.over && game_waiting_for(s.g) == GAME_WAIT_ANY) {
		struct cmd c = {.type = CMD_START_GAME};
		fuzz_apply(&s, 0, &c);
	}
	char name[17];
	for (int step = 0; step < PLAY_STEPS && !s.over; step++) {
		int w = game_waiting_for(s.g);
		FUZZ_CHECK(w >= 0, "the game waits for %d after the start", w);
		const struct fuzz_player *fp = &s.pl[w];
		struct cmd c = {0};
		if (fp->nchars == 0) { /* selecting */
			FUZZ_CHECK(fp->offered_valid, "player %d selects without an offer", w);
			uint64_t r = next_rand(&x);
			c.type = CMD_SELECT_CHARACTERS;
			c.character = fp->offered[r % 4];
			c.character2 = fp->offered[(r % 4 + 1 + (r >> 8) % 3) % 4];
			fuzz_apply(&s, w, &c);
			continue;
		}
		if (next_command(&s, w, &x, &c, name))
			fuzz_apply(&s, w, &c);
		else
			fuzz_timeout(&s);
	}
	fuzz_session_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_errors errs = {0};
	struct config *cfg = config_parse((const char *)data, size, &errs);
	if (!cfg) {
		FUZZ_CHECK(errs.n >= 1, "config_parse failed without a message");
		FUZZ_CHECK(errs.n <= MAX_ERRORS_REPORTED, "%d messages", errs.n);
		for (int i = 0; i < errs.n; i++) {
			const char *m = errs.msgs[i];
			FUZZ_CHECK(m && *m, "message %d is empty", i);
			FUZZ_CHECK(strchr(m, '\n') == NULL, "message %d is not one line: %s", i, m);
			FUZZ_CHECK(fuzz_utf8_valid(m, strlen(m)), "message %d is not UTF-8: %s", i,
			           m);
		}
		config_errors_free(&errs);
		FUZZ_CHECK(errs.n == 0 && errs.msgs == NULL, "config_errors_free left messages");
		return 0;
	}
	FUZZ_CHECK(errs.n == 0 && errs.msgs == NULL, "config_parse succeeded with %d messages",
	           errs.n);
	check_config(cfg, data, size);

	uint64_t h = 1469598103934665603ULL; /* FNV-1a of the input: the game seed */
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 1099511628211ULL;
	play(cfg, RULES_BASE, h);
	play(cfg, RULES_REVISED, h ^ 0x5DEECE66DULL);
	config_free(cfg);
	return 0;
}
