/*
 * bot_policy: the rule-of-thumb scores of commands (bot_policy.h).
 *
 * Every score is a guess in morale points: what the command saves or gains
 * for the colony, less what it risks and spends. They only have to rank
 * the commands of one moment sensibly; the search corrects them by playing
 * the futures out. The weights below were set by playing thousands of
 * games of the policy alone on the example configuration (docs/bots.md).
 */
#include "bot_policy.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>

#include "command_words.h"

/* ---- the bots' generator ---------------------------------------------------------- */

uint64_t bot_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

double bot_rand_unit(uint64_t *state)
{
	return (double)(bot_rand(state) >> 11) / 9007199254740992.0;
}

/* ---- what the scores weigh -------------------------------------------------------- */

#define DIE_COST    0.15 /* a die spent: others might have used it */
#define WASTE_COST  0.05 /* a card onto the waste pile */
#define WOUND_COST  0.35
#define FROST_COST  0.6
#define ROLL_WOUND  (3.0 / 12)
#define ROLL_FROST  (2.0 / 12)
#define ROLL_BITE   (1.0 / 12)
#define SPREAD_COST 0.5 /* a bite spreads to the others there */
#define NEVER       (-1000.0)
/* Weights measured with many games of the policy alone (docs/bots.md). */
#define EXTRA_CONTRIBUTION 0.45 /* a card for the crisis beyond the cards it needs */
#define MOUTH_VALUE        0.1  /* the food need a character adds to the colony, per round */
#define SEARCH_SPOT        0.2  /* a location to search, per point of search value under 5 */
#define COLONY_BARRICADE   0.2  /* a barricade at the colony, besides deaths saved */
#define CARD_VALUE         0.7  /* a card drawn by a search */
#define HUNGRY_MOUTH       0.5  /* a mouth more or less while the food falls short */

/* What one scoring needs, worked out once per view. */
struct scene {
	const struct bot_ids *ids;
	const struct game_view *v;
	const struct config *cfg;
	int me, colony;
	int need, food;
	int hand_food;  /* in every hand together */
	int missing;    /* cards the crisis still needs; <= 0 when met */
	int extra_left; /* cards still short of the +1 morale (required + 2) */
	int phases;     /* colony phases ahead, this round's included */
};

static void scene_of(struct scene *s, const struct bot_ids *ids, const struct game_view *v)
{
	s->ids = ids;
	s->v = v;
	s->cfg = v->cfg;
	s->me = v->me;
	s->colony = v->cfg->colony;
	s->need = bot_food_need(v);
	s->food = v->food;
	s->hand_food = bot_team_hand_food(v);
	s->missing = 0;
	s->extra_left = 0;
	if (v->crisis >= 0) {
		int req = v->cfg->crises[v->crisis].required_cards;
		s->missing = req - v->contributed;
		s->extra_left = req + 2 - v->contributed;
	}
	s->phases = bot_rounds_after(v) + (v->round > 0 ? 1 : 0);
}

static const struct game_view_character *chr(const struct scene *s, int c)
{
	return &s->v->characters[c];
}

static int hurt(const struct scene *s, int c)
{
	return chr(s, c)->wounds + chr(s, c)->frostbites;
}

/* What losing a character costs: a point of morale, and its die and
 * hands for every round left (as the evaluation counts them). */
static double death_cost(const struct scene *s)
{
	return 1.0 + 0.4 + 0.3 * s->phases;
}

/* Expected cost of an infection roll for character c. */
static double roll_risk(const struct scene *s, int c)
{
	int h = hurt(s, c);
	double death = death_cost(s);
	double wound = h + 1 >= 3 ? death : WOUND_COST;
	double frost = h + 1 >= 3 ? death : FROST_COST;
	return ROLL_WOUND * wound + ROLL_FROST * frost + ROLL_BITE * (death + SPREAD_COST);
}

/* Character c wears an unspent equipment card of type t. */
static bool wears_unspent(const struct scene *s, int c, enum card_type t)
{
	for (int k = 0; k < s->cfg->ncards; k++)
		if (s->v->cards[k].place == VIEW_EQUIPPED && s->v->cards[k].holder == c &&
		    !s->v->cards[k].spent && s->cfg->cards[k].type == t)
			return true;
	return false;
}

/* Deaths saved by a change at entrance e of location l (dz zombies, db
 * barricades): at the next colony phase, and half as much for the one
 * after. */
static double gate_gain(const struct scene *s, int l, int e, int dz, int db)
{
	struct bot_gate g;
	bot_gate_of(s->v, l, &g);
	int arrivals = bot_zombie_arrivals(s->v, l);
	int now1 = bot_gate_deaths(&g, arrivals), now2 = bot_gate_deaths(&g, 2 * arrivals);
	if (e < g.n) {
		g.zombies[e] += dz;
		g.barricades[e] += db;
	}
	int then1 = bot_gate_deaths(&g, arrivals), then2 = bot_gate_deaths(&g, 2 * arrivals);
	return 1.2 * (now1 - then1) + 0.5 * ((now2 - now1) - (then2 - then1));
}

/* A zombie less anywhere people are: a little, even with no death in sight. */
static double zombie_gone(const struct scene *s, int l)
{
	return l == s->colony || bot_chars_at(s->v, l) > 1 ? 0.35 : 0.15;
}

/* What card k is worth kept for the crisis (when it fits and is missing). */
static double crisis_hold(const struct scene *s, int k)
{
	return s->missing > 0 && bot_card_fits_crisis(s->v, k) ? 0.5 : 0;
}

/* ---- what the commands do, scored ----------------------------------------------- */

static double score_attack(const struct scene *s, int c, int e)
{
	int l = chr(s, c)->loc;
	double gain = gate_gain(s, l, e, -1, 0) + zombie_gone(s, l);
	bool safe = s->cfg->characters[c].ability.type == ABILITY_NO_INFECTION ||
	            wears_unspent(s, c, CARD_COLT);
	return gain - (safe ? 0 : roll_risk(s, c)) - DIE_COST;
}

static double score_barricade(const struct scene *s, int l, int e, int n, double cost)
{
	double gain = gate_gain(s, l, e, 0, n);
	return gain + (l == s->colony ? COLONY_BARRICADE : 0.05) * n - cost;
}

static double score_search(const struct scene *s, int c)
{
	const struct config_ability *ab = &s->cfg->characters[c].ability;
	int l = chr(s, c)->loc;
	double cards = 1;
	if (ab->type == ABILITY_SEARCH && ab->location == s->cfg->locations[l].id &&
	    chr(s, c)->uses < ab->max_activations)
		cards += ab->num_cards;
	double hungry = s->food + s->hand_food < s->need * 2 ? 0.3 : 0;
	return (CARD_VALUE + hungry) * cards - DIE_COST;
}

/* Moving c from where it stands to l2: what it gains there (searching, or
 * safety back home) less the roll (risky false: FUEL). */
/* The food the colony needs with `people` in it. */
static int need_with(int people)
{
	return (people + 1) / 2;
}

/* Moving c from where it stands to l2: what it gains there (searching, a
 * mouth less to feed and a zombie less at the colony, or safety back
 * home) less the roll (risky false: FUEL). */
static double score_move(const struct scene *s, int c, int l2, bool risky)
{
	int l = chr(s, c)->loc;
	int people = bot_colony_people(s->v);
	int soon = s->phases < 3 ? s->phases : 3;
	double v = 0;
	if (l2 == s->colony) {
		struct bot_gate g;
		bot_gate_of(s->v, l, &g);
		int arrivals = bot_zombie_arrivals(s->v, l);
		int stay = bot_gate_deaths(&g, arrivals);
		g.people--;
		int gone = bot_gate_deaths(&g, arrivals - 1);
		v += 1.2 * (stay - gone);
		if (bot_deck_left(s->v, l) == 0)
			v += 0.6;
		if (s->food + s->hand_food < s->need + 1)
			v -= HUNGRY_MOUTH; /* one more mouth */
		v -= MOUTH_VALUE * (need_with(people + 1) - need_with(people)) * soon;
	} else {
		int left = bot_deck_left(s->v, l2);
		int search = s->cfg->characters[c].search;
		if (left > 0 && search <= 4 && s->phases > 1)
			v += SEARCH_SPOT * (5 - search);
		struct bot_gate g;
		bot_gate_of(s->v, l2, &g);
		g.people++;
		int arrivals = bot_zombie_arrivals(s->v, l2) + 1;
		v -= 1.2 * bot_gate_deaths(&g, arrivals);
		if (l == s->colony && s->food + s->hand_food < s->need)
			v += HUNGRY_MOUTH; /* one mouth less */
		if (l == s->colony)
			v += MOUTH_VALUE * (need_with(people) - need_with(people - 1)) * soon;
		else
			v -= 0.4;
	}
	return v - (risky ? roll_risk(s, c) : 0);
}

static double score_clean(const struct scene *s, int c)
{
	const struct config_ability *ab = &s->cfg->characters[c].ability;
	bool revised = s->v->rules == RULES_REVISED;
	int amount = 3;
	double cost = DIE_COST;
	if (revised && wears_unspent(s, c, CARD_SWAB)) {
		amount = 5;
		cost = 0;
	} else if (ab->type == ABILITY_TRASH) {
		amount = ab->num_cards;
		cost = revised ? 0 : DIE_COST;
	}
	int w = s->v->nwaste, removed = amount < w ? amount : w;
	double tens = (double)(w / 10 - (w - removed) / 10);
	return tens * (s->phases > 0 ? 1.0 : 0) + 0.05 * removed + (w >= 7 ? 0.4 : 0) - cost;
}

static double score_contribute(const struct scene *s, int k)
{
	const struct config_card *cd = &s->cfg->cards[k];
	double keep = 0;
	if (cd->type == CARD_FOOD && s->food + s->hand_food <= s->need + 1)
		keep = 0.3 * cd->amount;
	else if (cd->type == CARD_MEDICINE || cd->type == CARD_LOCK || cd->type == CARD_SCISSORS)
		keep = 0.2;
	else if (cd->type >= CARD_HAMMER && s->v->rules == RULES_REVISED)
		keep = 0.3;
	if (s->missing > 0) {
		double mc = s->cfg->crises[s->v->crisis].moral_change;
		return 0.4 + 0.4 * mc - keep;
	}
	if (s->extra_left > 0)
		return EXTRA_CONTRIBUTION - keep;
	return -0.5;
}

static double score_heal(const struct scene *s, int t)
{
	const struct game_view_character *ch = chr(s, t);
	if (ch->frostbites > 0)
		return 0.3 + FROST_COST + (hurt(s, t) >= 2 ? 0.5 : 0);
	return WOUND_COST + (hurt(s, t) >= 2 ? 0.6 : 0);
}

static double score_food(const struct scene *s, int k)
{
	int amount = s->cfg->cards[k].amount;
	double v;
	if (s->food < s->need) {
		int short_by = s->need - s->food;
		v = 0.6 + 0.4 * (amount < short_by ? amount : short_by);
	} else if (s->food < 2 * s->need && s->phases > 1) {
		v = 0.05;
	} else {
		v = -0.3;
	}
	return v - WASTE_COST - crisis_hold(s, k);
}

/* Equipment worn by character t (revised). */
static double score_equip(const struct scene *s, int k, int t)
{
	const struct config_card *cd = &s->cfg->cards[k];
	const struct config_character *ct = &s->cfg->characters[t];
	double v = 0.3;
	switch (cd->type) {
	case CARD_COLT:
		v += ct->ability.type == ABILITY_NO_INFECTION ? -0.3 : 0.05 * (6 - ct->attack);
		break;
	case CARD_SWAB:
		v += chr(s, t)->loc == s->colony ? 0.2 : 0;
		break;
	case CARD_BLUEPRINT:
		v += cd->location == s->cfg->locations[chr(s, t)->loc].id ? 0.3 : -0.1;
		break;
	default:
		break;
	}
	if (chr(s, t)->owner == s->me)
		v += 0.05;
	return v - crisis_hold(s, k);
}

/* Playing a card (a row's score function, like policy_ability). */
static double policy_card(const struct scene *s, const struct cmd *c)
{
	int k = bot_card_index(s->ids, c->card);
	if (k < 0)
		return NEVER;
	const struct config_card *cd = &s->cfg->cards[k];
	int ci = c->has_target ? bot_char_index(s->ids, c->character) : -1;
	int l = ci >= 0 ? chr(s, ci)->loc : -1;
	switch (cd->type) {
	case CARD_FOOD:
		return score_food(s, k);
	case CARD_STUFF: {
		const struct game_view_player *p = &s->v->players[s->me];
		double v = p->ndice > 0 && p->dice[0] <= 2 ? 0.15 : -0.3;
		return v - WASTE_COST - crisis_hold(s, k);
	}
	case CARD_MEDICINE: {
		int t = bot_char_index(s->ids, c->target);
		return t < 0 ? NEVER : score_heal(s, t) - WASTE_COST - crisis_hold(s, k);
	}
	case CARD_LOCK:
		return score_barricade(s, l, c->target, 1, 0.1 + WASTE_COST) - crisis_hold(s, k);
	case CARD_SCISSORS:
		return gate_gain(s, l, c->target, -1, 0) + zombie_gone(s, l) - 0.1 - WASTE_COST -
		       crisis_hold(s, k);
	case CARD_FUEL: {
		int l2 = bot_loc_index(s->ids, c->target);
		return l2 < 0 ? NEVER : score_move(s, ci, l2, false) - 0.1 - crisis_hold(s, k);
	}
	default: {
		int t = bot_char_index(s->ids, c->target);
		return t < 0 ? NEVER : score_equip(s, k, t);
	}
	}
}

static double policy_ability(const struct scene *s, const struct cmd *c)
{
	int ci = bot_char_index(s->ids, c->character);
	if (ci < 0)
		return NEVER;
	const struct config_ability *ab = &s->cfg->characters[ci].ability;
	int l = chr(s, ci)->loc;
	switch (ab->type) {
	case ABILITY_FEED:
		return 0.5 + 0.4 * ab->num_food;
	case ABILITY_HEAL: {
		int t = bot_char_index(s->ids, c->target);
		return t < 0 ? NEVER : score_heal(s, t) + 0.1;
	}
	case ABILITY_BARRICADE: {
		int free = bot_free_spaces(s->v, l, c->target);
		int n = ab->num_barricades < free ? ab->num_barricades : free;
		return score_barricade(s, l, c->target, n, 0);
	}
	case ABILITY_KILL: {
		int z = s->v->locations[l].zombies[c->target];
		int n = ab->num_zombies < z ? ab->num_zombies : z;
		double v = gate_gain(s, l, c->target, -n, 0) + n * zombie_gone(s, l);
		return v - (ab->infection_die ? roll_risk(s, ci) : 0) - DIE_COST;
	}
	default:
		return NEVER;
	}
}

/* A character's worth for the team when chosen. */
static double character_value(const struct config_character *ch)
{
	static const double ability[] = {
	        [ABILITY_WOUND] = 0.3,     [ABILITY_NO_INFECTION] = 1.2, [ABILITY_SEARCH] = 1.0,
	        [ABILITY_TRASH] = 0.8,     [ABILITY_HEAL] = 1.2,         [ABILITY_FEED] = 1.5,
	        [ABILITY_BARRICADE] = 1.2, [ABILITY_KILL] = 1.6,
	};
	return ability[ch->ability.type] + 0.35 * (6 - ch->attack) + 0.2 * (6 - ch->search);
}

/* ---- the score functions command_words.h's rows name ---------------------------- */

/* A step that does nothing for the colony: worth 0, the bar every other
 * command must clear. */
static double policy_nothing(const struct scene *sc, const struct cmd *c)
{
	(void)sc, (void)c;
	return 0;
}

static double policy_select(const struct scene *sc, const struct cmd *c)
{
	int ci = bot_char_index(sc->ids, c->character);
	int c2 = bot_char_index(sc->ids, c->character2);
	if (ci < 0 || c2 < 0)
		return NEVER;
	return character_value(&sc->cfg->characters[ci]) +
	       character_value(&sc->cfg->characters[c2]);
}

static double policy_move(const struct scene *sc, const struct cmd *c)
{
	int ci = bot_char_index(sc->ids, c->character);
	int l2 = bot_loc_index(sc->ids, c->location);
	return ci < 0 || l2 < 0 ? NEVER : score_move(sc, ci, l2, !c->fuel) - (c->fuel ? 0.1 : 0);
}

static double policy_search(const struct scene *sc, const struct cmd *c)
{
	int ci = bot_char_index(sc->ids, c->character);
	return ci < 0 ? NEVER : score_search(sc, ci);
}

static double policy_attack(const struct scene *sc, const struct cmd *c)
{
	int ci = bot_char_index(sc->ids, c->character);
	return ci < 0 ? NEVER : score_attack(sc, ci, c->entrance);
}

static double policy_barricade(const struct scene *sc, const struct cmd *c)
{
	int ci = bot_char_index(sc->ids, c->character);
	if (ci < 0)
		return NEVER;
	bool hammer = sc->v->rules == RULES_REVISED && wears_unspent(sc, ci, CARD_HAMMER);
	return score_barricade(sc, chr(sc, ci)->loc, c->entrance, 1, hammer ? 0 : DIE_COST);
}

static double policy_clean(const struct scene *sc, const struct cmd *c)
{
	int ci = bot_char_index(sc->ids, c->character);
	return ci < 0 ? NEVER : score_clean(sc, ci);
}

static double policy_contribute(const struct scene *sc, const struct cmd *c)
{
	int k = bot_card_index(sc->ids, c->card);
	return k < 0 ? NEVER : score_contribute(sc, k);
}

typedef double policy_fn(const struct scene *sc, const struct cmd *c);

/* Each command's score function: its row's score column. NULL (leaving the
 * game, a command without a row): never sent. */
static policy_fn *const policy_of[CMD_TYPE_COUNT] = {
#define POLICY_OF(id, key, menu, weight, flags, pending, label, score) [CMD_##id] = (score),
        CLIENT_COMMAND_WORDS(POLICY_OF)
#undef POLICY_OF
};

bool bot_never_sends(const struct cmd *c)
{
	return (unsigned)c->type >= CMD_TYPE_COUNT || !policy_of[c->type];
}

/* Each command's roles: its row's flags column (0 without a row). */
static const unsigned roles_of[CMD_TYPE_COUNT] = {
#define ROLES_OF(id, key, menu, weight, flags, pending, label, score) [CMD_##id] = (flags),
        CLIENT_COMMAND_WORDS(ROLES_OF)
#undef ROLES_OF
};

/* The roles of command c (CLIENT_*). */
static unsigned roles(const struct cmd *c)
{
	return (unsigned)c->type < CMD_TYPE_COUNT ? roles_of[c->type] : 0;
}

bool bot_ends_turn(const struct cmd *c)
{
	return (roles(c) & CLIENT_ENDS_TURN) && !(roles(c) & CLIENT_LEAVES);
}

bool bot_other_order(const struct cmd *c)
{
	return (roles(c) & CLIENT_UNORDERED) && c->character > c->character2;
}

static double score_cmd(const struct scene *sc, const struct cmd *c)
{
	return bot_never_sends(c) ? NEVER : policy_of[c->type](sc, c);
}

void bot_policy_scores(const struct bot_ids *ids, const struct game_view *v,
                       const struct cmd *legal, size_t n, double *score)
{
	struct scene s;
	scene_of(&s, ids, v);
	for (size_t i = 0; i < n; i++)
		score[i] = score_cmd(&s, &legal[i]);
}

size_t bot_policy_pick(const struct bot_ids *ids, const struct game_view *v,
                       const struct cmd *legal, size_t n, double noise, uint64_t *rng)
{
	assert(n > 0);
	struct scene s;
	scene_of(&s, ids, v);
	size_t best = 0;
	double best_score = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		double x = score_cmd(&s, &legal[i]);
		if (noise > 0)
			x += noise * bot_rand_unit(rng);
		if (x > best_score) {
			best_score = x;
			best = i;
		}
	}
	return best;
}
