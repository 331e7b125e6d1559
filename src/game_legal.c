/*
 * game_legal: the commands a player may send now (game_legal_commands in
 * include/sopra/game.h).
 *
 * Each command's row in the command table (cmd_table.h) names its
 * enumerator, a function here that is given the command's type and pushes
 * every fully parameterised command of that type that game_apply would
 * accept: the same checks as the command's row and handler in game.c, in
 * the form "which parameters pass them all". Enumerators know what the
 * commands do, never which command they are. tests/test_game_api.c holds
 * the two in step: over thousands of random states, every listed command
 * is accepted and every other command of the parameter space is refused.
 * A row may name legal_by_trying instead, which finds the commands by
 * trying its parameters' domains (proto.h) on a copy of the game: exact,
 * since game_apply decides, but slow -- the enumerators are the fast path
 * of the commands bots use.
 *
 * Order (part of the contract: deterministic, the same for a state and for
 * a game built from a player's view of it): command types in enum cmd_type
 * order; within a type by character (configuration order), then card
 * (configuration order), then the target or location (configuration order)
 * or entrance (ascending).
 */
#include "sopra/game.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "game_internal.h"
#include "sopra/cmd_table.h"
#include "sopra/proto.h"
#include "sopra/xalloc.h"

/* ---- the list ------------------------------------------------------------------- */

XGROWABLE_FUNCTIONS(game_cmd_list, clear, v, n)

struct cmd *game_cmd_list_push(struct game_cmd_list *l, enum cmd_type type)
{
	l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof *l->v, 64);
	struct cmd *c = &l->v[l->n++];
	memset(c, 0, sizeof *c);
	c->type = type;
	return c;
}

/* ---- one call's context ------------------------------------------------------------- */

/* What every enumerator of one call needs, worked out once: the player's
 * living characters and the cards of its hand, both in configuration order,
 * and how many characters stand at each location. The arrays are small and
 * on the stack; a configuration with more falls back to reading the game
 * (the same answers, more slowly). */
#define LEGAL_MAX_MINE 32
#define LEGAL_MAX_HAND 128
#define LEGAL_MAX_LOCS 64

struct legal {
	const struct game *g;
	int p;
	struct game_cmd_list *out;
	int mine[LEGAL_MAX_MINE]; /* the player's living characters */
	int nmine;                /* -1: more than fit (read the game) */
	int hand[LEGAL_MAX_HAND]; /* the player's cards */
	int nhand;                /* -1: more than fit */
	int here[LEGAL_MAX_LOCS]; /* living characters per location */
	bool counted;             /* here[] holds the counts */
};

static void sort_ints(int *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			int t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

static void legal_init(struct legal *L, const struct game *g, int p, struct game_cmd_list *out)
{
	const struct config *cfg = g->cfg;
	L->g = g;
	L->p = p;
	L->out = out;
	L->nmine = 0;
	L->nhand = 0;
	L->counted = g->phase == PH_TURN && cfg->nlocations <= LEGAL_MAX_LOCS;
	if (L->counted)
		memset(L->here, 0, sizeof L->here);
	for (int c = 0; c < cfg->ncharacters && g->phase == PH_TURN; c++) {
		if (!is_alive(g, c))
			continue;
		if (L->counted)
			L->here[g->chars[c].loc]++;
		if (g->chars[c].owner != p || L->nmine < 0)
			continue;
		if (L->nmine == LEGAL_MAX_MINE)
			L->nmine = -1;
		else
			L->mine[L->nmine++] = c;
	}
	if (p < 0 || g->phase != PH_TURN)
		return;
	const struct card_list *hand = &g->players[p].hand;
	if (hand->n > LEGAL_MAX_HAND) {
		L->nhand = -1;
		return;
	}
	for (int k = hand->first; k >= 0; k = g->cards[k].next)
		L->hand[L->nhand++] = k;
	sort_ints(L->hand, L->nhand);
}

/* The i-th living character of the player (configuration order), -1 after
 * the last. */
static int mine(const struct legal *L, int i)
{
	if (L->nmine >= 0)
		return i < L->nmine ? L->mine[i] : -1;
	for (int c = 0, n = 0; c < L->g->cfg->ncharacters; c++)
		if (owned(L->g, L->p, c) && n++ == i)
			return c;
	return -1;
}

/* The i-th card of the player's hand (configuration order), -1 after the last. */
static int hand_card(const struct legal *L, int i)
{
	if (L->nhand >= 0)
		return i < L->nhand ? L->hand[i] : -1;
	for (int k = 0, n = 0; k < L->g->cfg->ncards; k++)
		if (in_hand(L->g, L->p, k) && n++ == i)
			return k;
	return -1;
}

/* ---- helpers ---------------------------------------------------------------------- */

/* A command of `type` for character c (index) of the list. */
static struct cmd *push_char(const struct legal *L, enum cmd_type type, int c)
{
	struct cmd *x = game_cmd_list_push(L->out, type);
	x->character = cchar(L->g, c)->id;
	return x;
}

/* Whether character c may move to location l now (a move's and FUEL's checks). */
static bool may_move(const struct legal *L, int c, int l)
{
	const struct game *g = L->g;
	const struct char_state *cs = &g->chars[c];
	if (cs->moved || cs->loc == l)
		return false;
	if (!L->counted)
		return has_room(g, l);
	return l == g->colony || L->here[l] < g->cfg->locations[l].survivor_spaces;
}

/* Whether entrance e of c's location has a zombie (want_zombie) or a free
 * space for a barricade. */
static bool entrance_fits(const struct game *g, int c, int e, bool want_zombie)
{
	int l = g->chars[c].loc;
	return want_zombie ? g->locs[l].zombies[e] > 0 : space_at(g, l, e) > 0;
}

/* tmpl (a card or an ability played) with target = each entrance of c's location
 * that has a zombie (want_zombie) or a free space. */
static void push_entrances(const struct legal *L, const struct cmd *tmpl, int c, bool want_zombie)
{
	for (int e = 0; e < entrances(L->g, L->g->chars[c].loc); e++) {
		if (!entrance_fits(L->g, c, e, want_zombie))
			continue;
		struct cmd *x = game_cmd_list_push(L->out, tmpl->type);
		*x = *tmpl;
		x->target = e;
		x->has_target = true;
	}
}

/* tmpl with target = each living character at c's location (injured ones
 * only when `injured`). */
static void push_char_targets(const struct legal *L, const struct cmd *tmpl, int c, bool injured)
{
	const struct game *g = L->g;
	int l = g->chars[c].loc;
	for (int t = 0; t < g->cfg->ncharacters; t++) {
		const struct char_state *ts = &g->chars[t];
		if (!is_alive(g, t) || ts->loc != l ||
		    (injured && ts->wounds + ts->frostbites == 0))
			continue;
		struct cmd *x = game_cmd_list_push(L->out, tmpl->type);
		*x = *tmpl;
		x->target = cchar(g, t)->id;
		x->has_target = true;
	}
}

static int ndice(const struct legal *L)
{
	return L->g->players[L->p].ndice;
}

static bool has_fuel_card(const struct legal *L)
{
	for (int i = 0, k; (k = hand_card(L, i)) >= 0; i++)
		if (L->g->cfg->cards[k].type == CARD_FUEL)
			return true;
	return false;
}

/* ---- the enumerators named in the command table ---------------------------------- */

/* Each pushes the commands of `type` (its row's) that L's player may send. */

/* A connection not yet registered: the command, its name left to the caller. */
static void legal_register(const struct legal *L, enum cmd_type type)
{
	if (L->p == GAME_NO_PLAYER)
		game_cmd_list_push(L->out, type);
}

/* A registered player: the command, without parameters. */
static void legal_start_game(const struct legal *L, enum cmd_type type)
{
	if (L->p != GAME_NO_PLAYER)
		game_cmd_list_push(L->out, type);
}

/* Two different offered characters, in either order (both are accepted). */
static void legal_select_characters(const struct legal *L, enum cmd_type type)
{
	const int *offered = L->g->players[L->p].offered;
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			if (i == j)
				continue;
			struct cmd *x = game_cmd_list_push(L->out, type);
			x->character = cchar(L->g, offered[i])->id;
			x->character2 = cchar(L->g, offered[j])->id;
		}
}

/* A command without parameters that its phase's speaker may always send. */
static void legal_always(const struct legal *L, enum cmd_type type)
{
	game_cmd_list_push(L->out, type);
}

static void legal_move(const struct legal *L, enum cmd_type type)
{
	const struct game *g = L->g;
	bool fuel = g->rules == RULES_BASE && has_fuel_card(L);
	for (int i = 0, c; (c = mine(L, i)) >= 0; i++) {
		for (int l = 0; l < g->cfg->nlocations; l++) {
			if (!may_move(L, c, l))
				continue;
			push_char(L, type, c)->location = loc_id(g, l);
			if (fuel) {
				struct cmd *x = push_char(L, type, c);
				x->location = loc_id(g, l);
				x->fuel = true;
			}
		}
	}
}

static void legal_search(const struct legal *L, enum cmd_type type)
{
	const struct game *g = L->g;
	for (int i = 0, c; (c = mine(L, i)) >= 0; i++) {
		int l = g->chars[c].loc;
		if (die_at_least(&g->players[L->p], cchar(g, c)->search) >= 0 && l != g->colony &&
		    g->locs[l].ndeck > g->locs[l].top)
			push_char(L, type, c);
	}
}

static void legal_attack(const struct legal *L, enum cmd_type type)
{
	const struct game *g = L->g;
	for (int i = 0, c; (c = mine(L, i)) >= 0; i++) {
		if (die_at_least(&g->players[L->p], cchar(g, c)->attack) < 0)
			continue;
		for (int e = 0; e < entrances(g, g->chars[c].loc); e++)
			if (entrance_fits(g, c, e, true))
				push_char(L, type, c)->entrance = e;
	}
}

static void legal_barricade(const struct legal *L, enum cmd_type type)
{
	const struct game *g = L->g;
	for (int i = 0, c; (c = mine(L, i)) >= 0; i++) {
		if (ndice(L) == 0 && equipment(g, c, CARD_HAMMER, -1) < 0)
			continue;
		for (int e = 0; e < entrances(g, g->chars[c].loc); e++)
			if (entrance_fits(g, c, e, false))
				push_char(L, type, c)->entrance = e;
	}
}

static void legal_clean_waste(const struct legal *L, enum cmd_type type)
{
	const struct game *g = L->g;
	if (ndice(L) == 0 || g->waste == 0 || (g->rules == RULES_BASE && g->players[L->p].cleaned))
		return;
	for (int i = 0, c; (c = mine(L, i)) >= 0; i++)
		if (g->chars[c].loc == g->colony)
			push_char(L, type, c);
}

static void legal_contribute_card(const struct legal *L, enum cmd_type type)
{
	const struct game *g = L->g;
	enum crisis_type crisis = g->cfg->crises[g->crisis].type;
	for (int i = 0, k; (k = hand_card(L, i)) >= 0; i++)
		if (card_fits_crisis(g->cfg->cards[k].type, crisis))
			game_cmd_list_push(L->out, type)->card = card_id(g, k);
}

/* The commands of `type` (the one that plays cards) playing card k through character c
 * on a target. */
static void card_on_target(const struct legal *L, enum cmd_type type, int k, int c)
{
	const struct game *g = L->g;
	enum card_type card = g->cfg->cards[k].type;
	struct cmd tmpl = {.type = type, .card = card_id(g, k), .character = cchar(g, c)->id};
	if (is_equipment(card)) {
		if (g->rules == RULES_REVISED)
			push_char_targets(L, &tmpl, c, false);
		return;
	}
	switch (card) {
	case CARD_MEDICINE:
		push_char_targets(L, &tmpl, c, true);
		break;
	case CARD_LOCK:
		push_entrances(L, &tmpl, c, false);
		break;
	case CARD_SCISSORS:
		push_entrances(L, &tmpl, c, true);
		break;
	case CARD_FUEL:
		if (g->rules == RULES_BASE)
			break;
		for (int l = 0; l < g->cfg->nlocations; l++) {
			if (!may_move(L, c, l))
				continue;
			struct cmd *x = game_cmd_list_push(L->out, type);
			*x = tmpl;
			x->target = loc_id(g, l);
			x->has_target = true;
		}
		break;
	default: /* FOOD, STUFF: played without a target */
		break;
	}
}

static void legal_use_card(const struct legal *L, enum cmd_type type)
{
	const struct game *g = L->g;
	for (int i = 0, k; (k = hand_card(L, i)) >= 0; i++) {
		enum card_type card = g->cfg->cards[k].type;
		if (card == CARD_FOOD || (card == CARD_STUFF && ndice(L) > 0))
			game_cmd_list_push(L->out, type)->card = card_id(g, k);
		for (int j = 0, c; (c = mine(L, j)) >= 0; j++)
			card_on_target(L, type, k, c);
	}
}

/* The commands of `type` (the one that uses abilities) using character c's ability (KILL
 * needs a die >= dieValue). */
static void ability_of(const struct legal *L, enum cmd_type type, int c)
{
	const struct game *g = L->g;
	const struct config_ability *ab = &cchar(g, c)->ability;
	const struct char_state *cs = &g->chars[c];
	struct cmd tmpl = {.type = type, .character = cchar(g, c)->id};
	switch (ab->type) {
	case ABILITY_FEED:
		if (cs->uses < 1)
			push_char(L, type, c);
		break;
	case ABILITY_HEAL:
		if (cs->uses < 1)
			push_char_targets(L, &tmpl, c, true);
		break;
	case ABILITY_BARRICADE:
		if (cs->uses < ab->max_activations)
			push_entrances(L, &tmpl, c, false);
		break;
	case ABILITY_KILL:
		if (cs->uses < ab->max_activations && loc_id(g, cs->loc) == ab->location &&
		    (!ab->children || g->locs[g->colony].children > 0) &&
		    die_at_least(&g->players[L->p], ab->die_value) >= 0)
			push_entrances(L, &tmpl, c, true);
		break;
	case ABILITY_WOUND:
	case ABILITY_NO_INFECTION:
	case ABILITY_SEARCH:
	case ABILITY_TRASH:
		break; /* passive: never used by command */
	}
}

static void legal_use_ability(const struct legal *L, enum cmd_type type)
{
	for (int i = 0, c; (c = mine(L, i)) >= 0; i++)
		ability_of(L, type, c);
}

/* ---- legal_by_trying: a command's domains tried --------------------------------- */

/* A growing list of values to try (owned: values_free). */
struct values {
	int *v;
	size_t n, cap;
};

/* x, unless the list has it (a target's domains overlap: id 1, entrance 1). */
static void add_value(struct values *vs, int x)
{
	for (size_t i = 0; i < vs->n; i++)
		if (vs->v[i] == x)
			return;
	vs->v = xgrow(vs->v, &vs->cap, vs->n + 1, sizeof *vs->v, 16);
	vs->v[vs->n++] = x;
}

static void add_locations(const struct game *g, struct values *vs)
{
	for (int l = 0; l < g->cfg->nlocations; l++)
		add_value(vs, loc_id(g, l));
}

static void add_entrances(const struct game *g, struct values *vs)
{
	int most = 0;
	for (int l = 0; l < g->cfg->nlocations; l++)
		if (entrances(g, l) > most)
			most = entrances(g, l);
	for (int e = 0; e < most; e++)
		add_value(vs, e);
}

/* The values parameter p of a command takes in a try: its domain (proto.h)
 * in the game now. */
static void domain_values(const struct legal *L, const struct proto_param *p, struct values *vs)
{
	const struct game *g = L->g;
	*vs = (struct values){0};
	switch (p->domain) {
	case PROTO_DOMAIN_NAME:
		add_value(vs, 0);
		break;
	case PROTO_DOMAIN_OFFERED_CHARACTER:
		for (int i = 0; i < 4; i++)
			add_value(vs, cchar(g, g->players[L->p].offered[i])->id);
		break;
	case PROTO_DOMAIN_OWN_CHARACTER:
		for (int i = 0, c; (c = mine(L, i)) >= 0; i++)
			add_value(vs, cchar(g, c)->id);
		break;
	case PROTO_DOMAIN_HAND_CARD:
		for (int i = 0, k; (k = hand_card(L, i)) >= 0; i++)
			add_value(vs, card_id(g, k));
		break;
	case PROTO_DOMAIN_TARGET: /* a character, a location or an entrance */
		for (int c = 0; c < g->cfg->ncharacters; c++)
			if (is_alive(g, c))
				add_value(vs, cchar(g, c)->id);
		add_locations(g, vs);
		add_entrances(g, vs);
		break;
	case PROTO_DOMAIN_LOCATION:
		add_locations(g, vs);
		break;
	case PROTO_DOMAIN_ENTRANCE:
		add_entrances(g, vs);
		break;
	case PROTO_DOMAIN_FLAG:
		add_value(vs, 0);
		if (!(p->flags & PROTO_BASE_ONLY) || g->rules == RULES_BASE)
			add_value(vs, 1);
		break;
	}
}

/* Try c on *scratch (a copy of the game); push it when accepted. A refused
 * command changed nothing, so the copy serves the next try; an accepted one
 * is replaced by a fresh copy. */
static void try_command(const struct legal *L, const struct cmd *c, struct game **scratch,
                        struct game_event_list *ev)
{
	game_event_list_clear(ev);
	game_apply(*scratch, L->p, c, ev);
	for (size_t k = 0; k < ev->n; k++)
		if (ev->v[k].type == GEV_COMMAND_FAILED ||
		    ev->v[k].type == GEV_REGISTRATION_ABORTED)
			return;
	*game_cmd_list_push(L->out, c->type) = *c;
	game_free(*scratch);
	*scratch = game_clone(L->g);
}

#define MAX_PARAMS 8

/* The commands of `type` found by trying every combination of its
 * parameters' domains (with and without a target) on a copy: exact, since
 * game_apply decides, but slow. Parameters vary like an odometer, the last
 * fastest. */
static void legal_by_trying(const struct legal *L, enum cmd_type type)
{
	size_t n;
	const struct proto_param *ps = proto_cmd_params(type, &n);
	assert(n <= MAX_PARAMS);
	bool with_target = false;
	for (size_t i = 0; i < n; i++)
		with_target |= proto_param_with_target(&ps[i]);
	struct values vs[MAX_PARAMS];
	for (size_t i = 0; i < n; i++)
		domain_values(L, &ps[i], &vs[i]);
	struct game *scratch = game_clone(L->g);
	struct game_event_list ev;
	game_event_list_init(&ev);
	for (int target = 0; target <= (with_target ? 1 : 0); target++) {
		struct cmd c = {.type = type, .has_target = target};
		size_t vary[MAX_PARAMS]; /* the parameters carried, but the name */
		int m = 0;
		size_t at[MAX_PARAMS] = {0};
		bool none = false;
		for (size_t i = 0; i < n; i++)
			if (proto_param_carried(&c, &ps[i]) && ps[i].type != PROTO_STRING) {
				vary[m++] = i;
				none |= vs[i].n == 0;
			}
		for (int j = 0; !none && j >= 0;) {
			for (int k = 0; k < m; k++)
				proto_param_set(&c, &ps[vary[k]], vs[vary[k]].v[at[k]]);
			try_command(L, &c, &scratch, &ev);
			/* the next combination, the last parameter fastest; none left: j < 0 */
			for (j = m - 1; j >= 0 && ++at[j] == vs[vary[j]].n; j--)
				at[j] = 0;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(vs[i].v);
	game_event_list_free(&ev);
	game_free(scratch);
}

/* ---- the table ---------------------------------------------------------------------- */

/* Each command's phase and enumerator, from the command table: the
 * enumerator runs only in that phase, and only for a player who may speak
 * then (game_apply's sender gate: in the selection the player choosing, in
 * the turns the active player). */
struct legal_rule {
	enum phase phase;
	void (*enumerate)(const struct legal *L, enum cmd_type type);
};

static const struct legal_rule legal_rules[CMD_TYPE_COUNT] = {
#define LEGAL_RULE(id, name, phase, needs, handler, legal, params) [CMD_##id] = {PH_##phase, legal},
        SOPRA_COMMANDS(LEGAL_RULE)
#undef LEGAL_RULE
};

/* Whether player may send anything now: game_apply's sender gate. */
static bool may_speak(const struct game *g, int player)
{
	switch (g->phase) {
	case PH_REGISTRATION:
		return true;
	case PH_SELECTION:
		return player == g->sel && g->sel_waiting;
	case PH_TURN:
		return player >= 0 && player == g->active && g->turn_waiting;
	case PH_OVER:
		break;
	}
	return false;
}

/* game_legal_commands, or with `tried` the reference: every command tried. */
static size_t legal_commands(const struct game *g, int player, struct game_cmd_list *out,
                             bool tried)
{
	assert(player == GAME_NO_PLAYER || (player >= 0 && player < g->cfg->max_players));
	game_cmd_list_clear(out);
	if (!may_speak(g, player))
		return 0;
	struct legal L;
	legal_init(&L, g, player, out);
	for (int t = 0; t < CMD_TYPE_COUNT; t++) {
		const struct legal_rule *rule = &legal_rules[t];
		if (rule->phase == g->phase)
			(tried ? legal_by_trying : rule->enumerate)(&L, (enum cmd_type)t);
	}
	return out->n;
}

size_t game_legal_commands(const struct game *g, int player, struct game_cmd_list *out)
{
	return legal_commands(g, player, out, false);
}

size_t game_legal_commands_tried(const struct game *g, int player, struct game_cmd_list *out)
{
	return legal_commands(g, player, out, true);
}
