/*
 * game_view: what one player has been told, and games built from it
 * (include/sopra/game_view.h).
 *
 * game_view_of reads a game's state and keeps what the viewer was told;
 * game_from_view starts from game_new's state and writes the view's facts
 * into it, then draws what the view leaves open from the new game's own
 * generator. tests/test_game_api.c checks that the two agree
 * (view -> game -> view is the identity) over thousands of random states.
 */
#include "sopra/game_view.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "game_internal.h"
#include "sopra/xalloc.h"

/* When cond holds: the message into buf (n bytes), and return buf. The
 * checks and the comparison below report their first finding this way. */
#define SAY(cond, ...)                                 \
	do {                                           \
		if (cond) {                            \
			snprintf(buf, n, __VA_ARGS__); \
			return buf;                    \
		}                                      \
	} while (0)

/* ---- the view's memory ---------------------------------------------------------- */

/* Point v's arrays into its block (v NULL: only measure); returns the size. */
static size_t view_layout(struct game_view *v, const struct config *cfg)
{
	char *base = (char *)v;
	size_t off = sizeof(struct game_view);
#define CARVE(dst, n, T) GAME_CARVE(v, base, off, dst, n, T)
	CARVE(v->crises, cfg->ncrises, int);
	CARVE(v->players, cfg->max_players, struct game_view_player);
	for (int p = 0; p < cfg->max_players; p++)
		CARVE(v->players[p].dice, cfg->ncharacters + 1, int);
	CARVE(v->characters, cfg->ncharacters, struct game_view_character);
	CARVE(v->spawn_order, cfg->ncharacters, int);
	CARVE(v->cards, cfg->ncards, struct game_view_card);
	CARVE(v->waste, cfg->ncards, int);
	CARVE(v->locations, cfg->nlocations, struct game_view_location);
	for (int l = 0; l < cfg->nlocations; l++) {
		CARVE(v->locations[l].zombies, cfg->locations[l].entrances, int);
		CARVE(v->locations[l].barricades, cfg->locations[l].entrances, int);
	}
#undef CARVE
	return off;
}

struct game_view *game_view_new(const struct config *cfg)
{
	struct game_view *v = xcalloc(1, view_layout(NULL, cfg));
	view_layout(v, cfg);
	v->cfg = cfg;
	return v;
}

void game_view_free(struct game_view *v)
{
	free(v);
}

int game_view_seat(const struct game_view *v)
{
	if (v->phase == VIEW_REGISTRATION || v->result == VIEW_ABORTED)
		return v->registered ? 0 : GAME_NO_PLAYER;
	return v->me;
}

/* ---- game -> view ----------------------------------------------------------------- */

/* The crises drawn, with crises that share an id taken in file order: the
 * i-th crisis with id X that was drawn is the i-th with id X in the file. */
static void canonical_crises(const struct game *g, int *out)
{
	const struct config *cfg = g->cfg;
	for (int r = 0; r < g->round; r++) {
		int id = cfg->crises[g->crisis_pile[r]].id;
		int before = 0; /* earlier draws of the same id */
		for (int q = 0; q < r; q++)
			before += cfg->crises[g->crisis_pile[q]].id == id;
		out[r] = -1;
		for (int i = 0; i < cfg->ncrises && out[r] < 0; i++)
			if (cfg->crises[i].id == id && before-- == 0)
				out[r] = i;
		assert(out[r] >= 0);
	}
}

static enum game_view_phase view_phase(const struct game *g)
{
	switch (g->phase) {
	case PH_REGISTRATION:
		return VIEW_REGISTRATION;
	case PH_SELECTION:
		return VIEW_SELECTION;
	case PH_TURN:
		return VIEW_TURNS;
	case PH_OVER:
		break;
	}
	return VIEW_OVER;
}

static enum game_view_result view_result(const struct game *g)
{
	if (g->phase != PH_OVER)
		return VIEW_RUNNING;
	if (g->end_reason == game_reason_aborted)
		return VIEW_ABORTED;
	return g->end_reason == game_reason_won ? VIEW_WON : VIEW_LOST;
}

static void view_players(const struct game *g, int player, struct game_view *v)
{
	for (int p = 0; p < v->nplayers; p++) {
		const struct player_state *ps = &g->players[p];
		struct game_view_player *vp = &v->players[p];
		vp->name = ps->name;
		vp->in_game = ps->in_game;
		vp->cleaned = v->turn_known && ps->cleaned;
		vp->ndice = v->turn_known ? ps->ndice : 0;
		memcpy(vp->dice, ps->dice, (size_t)vp->ndice * sizeof(int));
		bool offered = v->phase == VIEW_SELECTION && p == player && p == g->sel;
		for (int i = 0; i < 4; i++)
			vp->offered[i] = offered ? ps->offered[i] : -1;
	}
}

static void view_characters(const struct game *g, struct game_view *v)
{
	for (int c = 0; c < g->cfg->ncharacters; c++) {
		const struct char_state *cs = &g->chars[c];
		struct game_view_character *vc = &v->characters[c];
		bool alive = cs->life == CH_ALIVE;
		vc->life = alive ? VIEW_ALIVE : cs->life == CH_DEAD ? VIEW_DEAD : VIEW_UNSPAWNED;
		vc->owner = alive ? cs->owner : -1;
		vc->loc = alive ? cs->loc : -1;
		vc->wounds = alive ? cs->wounds : 0;
		vc->frostbites = alive ? cs->frostbites : 0;
		vc->moved = v->turn_known && alive && cs->moved;
		vc->uses = v->turn_known && alive ? cs->uses : 0;
	}
	v->nspawned = g->nspawned;
	memcpy(v->spawn_order, g->spawn_order, (size_t)g->nspawned * sizeof(int));
}

static void view_cards(const struct game *g, struct game_view *v)
{
	const struct config *cfg = g->cfg;
	for (int k = 0; k < cfg->ncards; k++) {
		const struct card_state *cs = &g->cards[k];
		struct game_view_card *vk = &v->cards[k];
		*vk = (struct game_view_card){VIEW_GONE, -1, 0, false};
		switch (cs->place) {
		case CP_HAND:
			vk->place = VIEW_HAND;
			vk->holder = cs->holder;
			break;
		case CP_WASTE:
			vk->place = VIEW_WASTE;
			break;
		case CP_EQUIPPED:
			vk->place = VIEW_EQUIPPED;
			vk->holder = cs->holder;
			vk->spent = v->turn_known && cs->spent;
			break;
		case CP_DECK: /* its location: below */
		case CP_GONE:
			break;
		}
	}
	for (int l = 0; l < cfg->nlocations; l++) {
		const struct loc_state *ls = &g->locs[l];
		for (int i = ls->top; i < ls->ndeck; i++)
			v->cards[ls->deck[i]] = (struct game_view_card){VIEW_PILE, l, 0, false};
	}
	for (int c = 0; c < cfg->ncharacters; c++) {
		int order = 0;
		for (int k = g->chars[c].equip.first; k >= 0; k = g->cards[k].next)
			v->cards[k].order = order++;
	}
	v->nwaste = g->waste;
	memcpy(v->waste, g->waste_pile, (size_t)g->waste * sizeof(int));
}

void game_view_of(const struct game *g, int player, struct game_view *v)
{
	const struct config *cfg = g->cfg;
	assert(v->cfg == cfg);
	assert(player == GAME_NO_PLAYER || (player >= 0 && player < g->nplayers));
	v->rules = g->rules;
	v->phase = view_phase(g);
	v->result = view_result(g);
	bool before_start = g->phase == PH_REGISTRATION || v->result == VIEW_ABORTED;
	v->me = before_start ? GAME_NO_PLAYER : player;
	v->registered = before_start && player != GAME_NO_PLAYER;
	switch (v->phase) {
	case VIEW_REGISTRATION:
		v->waiting_for = GAME_WAIT_ANY;
		break;
	case VIEW_SELECTION:
		v->waiting_for = g->sel;
		break;
	case VIEW_TURNS:
		v->waiting_for =
		        player >= 0 && player == g->active ? player : GAME_VIEW_SOMEONE_ELSE;
		break;
	case VIEW_OVER:
		v->waiting_for = GAME_WAIT_NONE;
		break;
	}
	v->turn_known = v->phase == VIEW_TURNS && v->waiting_for == player;
	v->round = g->round;
	v->food = g->food;
	v->moral = g->moral;
	v->starvation = g->starvation;
	v->children = g->locs[g->colony].children;
	v->contributed = g->contributed;
	canonical_crises(g, v->crises);
	v->crisis = g->round > 0 ? v->crises[g->round - 1] : -1;
	v->nplayers = before_start ? 0 : g->nplayers;
	view_players(g, player, v);
	view_characters(g, v);
	view_cards(g, v);
	for (int l = 0; l < cfg->nlocations; l++) {
		size_t n = (size_t)entrances(g, l) * sizeof(int);
		memcpy(v->locations[l].zombies, g->locs[l].zombies, n);
		memcpy(v->locations[l].barricades, g->locs[l].barricades, n);
	}
}

/* ---- view -> game ----------------------------------------------------------------- */

/* Registration: a game with the viewer as its only player, if registered. */
static void build_registration(struct game *g, const struct game_view *v)
{
	if (!v->registered)
		return;
	struct game_event_list out;
	game_event_list_init(&out);
	struct cmd reg = game_registration("");
	game_apply(g, GAME_NO_PLAYER, &reg, &out);
	game_event_list_free(&out);
}

static void build_players(struct game *g, const struct game_view *v)
{
	g->nplayers = v->nplayers;
	for (int p = 0; p < v->nplayers; p++) {
		const struct game_view_player *vp = &v->players[p];
		struct player_state *ps = &g->players[p];
		ps->name = xstrdup(vp->name ? vp->name : "");
		ps->name_owned = true;
		ps->in_game = vp->in_game;
		ps->cleaned = vp->cleaned;
		ps->ndice = vp->ndice;
		memcpy(ps->dice, vp->dice, (size_t)vp->ndice * sizeof(int));
	}
}

static void build_characters(struct game *g, const struct game_view *v)
{
	for (int c = 0; c < g->cfg->ncharacters; c++) {
		const struct game_view_character *vc = &v->characters[c];
		struct char_state *cs = &g->chars[c];
		cs->life = vc->life == VIEW_ALIVE  ? CH_ALIVE
		           : vc->life == VIEW_DEAD ? CH_DEAD
		                                   : CH_UNUSED;
		cs->owner = vc->owner;
		cs->loc = vc->loc;
		cs->wounds = vc->wounds;
		cs->frostbites = vc->frostbites;
		cs->moved = vc->moved;
		cs->uses = vc->uses;
	}
	g->nspawned = v->nspawned;
	memcpy(g->spawn_order, v->spawn_order, (size_t)v->nspawned * sizeof(int));
}

/* Hands in card order, equipment in the order given, the waste pile. */
static void build_cards(struct game *g, const struct game_view *v)
{
	const struct config *cfg = g->cfg;
	for (int k = 0; k < cfg->ncards; k++) {
		const struct game_view_card *vk = &v->cards[k];
		struct card_state *cs = &g->cards[k];
		cs->holder = -1;
		cs->spent = vk->spent;
		switch (vk->place) {
		case VIEW_PILE:
			cs->place = CP_DECK;
			break;
		case VIEW_HAND:
			cs->place = CP_HAND;
			cs->holder = vk->holder;
			game_list_push(g, &g->players[vk->holder].hand, k);
			break;
		case VIEW_WASTE:
			cs->place = CP_WASTE;
			break;
		case VIEW_GONE:
			cs->place = CP_GONE;
			break;
		case VIEW_EQUIPPED:
			cs->place = CP_EQUIPPED;
			cs->holder = vk->holder;
			break;
		}
	}
	/* equipment: each character's items in the order given */
	for (int k = 0; k < cfg->ncards; k++)
		if (v->cards[k].place == VIEW_EQUIPPED)
			g->chars[v->cards[k].holder].equip.n++;
	for (int c = 0; c < cfg->ncharacters; c++) {
		struct card_list *l = &g->chars[c].equip;
		int n = l->n;
		*l = (struct card_list){-1, -1, 0};
		for (int order = 0; order < n; order++)
			for (int k = 0; k < cfg->ncards; k++)
				if (v->cards[k].place == VIEW_EQUIPPED && v->cards[k].holder == c &&
				    v->cards[k].order == order)
					game_list_push(g, l, k);
	}
	g->waste = v->nwaste;
	memcpy(g->waste_pile, v->waste, (size_t)v->nwaste * sizeof(int));
}

/* Each pile: the cards drawn from it below its top, the rest (the view's
 * VIEW_PILE cards of that location) shuffled above. The piles of a new game
 * hold the configuration's cards in file order. scratch: room for ncards +
 * nlocations ints. False when the view has a card in a pile it was never
 * dealt to (nothing else is checked here: game_view_check did). */
static bool build_piles(struct game *g, const struct game_view *v, int *scratch)
{
	const struct config *cfg = g->cfg;
	int *rest = scratch, *claimed = scratch + cfg->ncards;
	memset(claimed, 0, (size_t)cfg->nlocations * sizeof(int));
	for (int k = 0; k < cfg->ncards; k++)
		if (v->cards[k].place == VIEW_PILE)
			claimed[v->cards[k].holder]++;
	for (int l = 0; l < cfg->nlocations; l++) {
		struct loc_state *ls = &g->locs[l];
		const struct game_view_location *vl = &v->locations[l];
		int below = 0, left = 0;
		for (int i = 0; i < ls->ndeck; i++) {
			int k = ls->deck[i];
			if (v->cards[k].place == VIEW_PILE && v->cards[k].holder == l)
				rest[left++] = k;
			else
				ls->deck[below++] = k;
		}
		if (left != claimed[l])
			return false;
		rng_shuffle_ints(&g->rng, rest, (size_t)left);
		memcpy(&ls->deck[below], rest, (size_t)left * sizeof(int));
		ls->top = below;
		size_t n = (size_t)entrances(g, l) * sizeof(int);
		memcpy(ls->zombies, vl->zombies, n);
		memcpy(ls->barricades, vl->barricades, n);
	}
	g->locs[g->colony].children = v->children;
	return true;
}

/* The crises drawn, then the others shuffled. */
static void build_crises(struct game *g, const struct game_view *v)
{
	int n = 0;
	for (int r = 0; r < v->round; r++)
		g->crisis_pile[n++] = v->crises[r];
	for (int i = 0; i < g->cfg->ncrises; i++) {
		bool drawn = false;
		for (int r = 0; r < v->round && !drawn; r++)
			drawn = v->crises[r] == i;
		if (!drawn)
			g->crisis_pile[n++] = i;
	}
	rng_shuffle_ints(&g->rng, &g->crisis_pile[v->round], (size_t)(n - v->round));
	g->crisis = v->crisis >= 0 ? v->crisis : 0;
}

/* The characters not in play, shuffled; during the selection the four
 * offered to the player choosing come out of them (drawn when the viewer
 * is not that player). */
static void build_unused(struct game *g, const struct game_view *v)
{
	g->nunused = 0;
	for (int c = 0; c < g->cfg->ncharacters; c++) {
		bool offered = false;
		if (v->phase == VIEW_SELECTION)
			for (int i = 0; i < 4; i++)
				offered |= v->players[v->waiting_for].offered[i] == c;
		if (v->characters[c].life == VIEW_UNSPAWNED && !offered)
			g->unused[g->nunused++] = c;
	}
	rng_shuffle_ints(&g->rng, g->unused, (size_t)g->nunused);
	if (v->phase != VIEW_SELECTION)
		return;
	struct player_state *ps = &g->players[v->waiting_for];
	memcpy(ps->offered, v->players[v->waiting_for].offered, sizeof ps->offered);
	if (ps->offered[0] >= 0)
		return;
	assert(g->nunused >= 4);
	memcpy(ps->offered, g->unused, sizeof ps->offered);
	memmove(&g->unused[0], &g->unused[4], (size_t)(g->nunused - 4) * sizeof(int));
	g->nunused -= 4;
}

/* The turns, when the view does not say whose turn it is: the first player
 * in the game but the viewer acts, it and everyone after it hold a fresh
 * roll of their dice. */
static void sample_turn(struct game *g, const struct game_view *v)
{
	g->active = -1;
	for (int p = 0; p < g->nplayers && g->active < 0; p++)
		if (g->players[p].in_game && p != v->me)
			g->active = p;
	assert(g->active >= 0);
	for (int p = g->active; p < g->nplayers; p++) {
		struct player_state *ps = &g->players[p];
		if (!ps->in_game)
			continue;
		int n = 1;
		for (int c = 0; c < g->cfg->ncharacters; c++)
			n += owned(g, p, c);
		for (int i = 0; i < n; i++) {
			int d = rng_next_int(&g->rng, 6) + 1, j = i;
			for (; j > 0 && ps->dice[j - 1] > d; j--)
				ps->dice[j] = ps->dice[j - 1];
			ps->dice[j] = d;
		}
		ps->ndice = n;
	}
}

static void build_turn_state(struct game *g, const struct game_view *v)
{
	switch (v->phase) {
	case VIEW_REGISTRATION:
		break;
	case VIEW_SELECTION:
		g->phase = PH_SELECTION;
		g->sel = v->waiting_for;
		g->sel_waiting = true;
		break;
	case VIEW_TURNS:
		g->phase = PH_TURN;
		g->turn_waiting = true;
		if (v->turn_known)
			g->active = v->me;
		else
			sample_turn(g, v);
		break;
	case VIEW_OVER:
		g->phase = PH_OVER;
		g->end_reason = v->result == VIEW_ABORTED ? game_reason_aborted
		                                          : game_end_text(g, v->result == VIEW_WON);
		break;
	}
}

/* ---- is a view one a game can have? ------------------------------------------------ */

static const char *check_players(const struct game_view *v, char *buf, size_t n)
{
	const struct config *cfg = v->cfg;
	SAY(v->nplayers < 0 || v->nplayers > cfg->max_players, "%d players", v->nplayers);
	SAY(v->me < GAME_NO_PLAYER || v->me >= v->nplayers, "viewer %d of %d players", v->me,
	    v->nplayers);
	for (int p = 0; p < v->nplayers; p++) {
		const struct game_view_player *vp = &v->players[p];
		SAY(vp->ndice < 0 || vp->ndice > cfg->ncharacters + 1 ||
		            (vp->ndice > 0 && !v->turn_known),
		    "player %d: %d dice", p, vp->ndice);
		for (int i = 0; i < vp->ndice; i++)
			SAY(vp->dice[i] < 1 || vp->dice[i] > 6 ||
			            (i > 0 && vp->dice[i - 1] > vp->dice[i]),
			    "player %d: die %d", p, vp->dice[i]);
		for (int i = 0; i < 4; i++)
			SAY(vp->offered[i] < -1 || vp->offered[i] >= cfg->ncharacters ||
			            (vp->offered[i] >= 0 &&
			             v->characters[vp->offered[i]].life != VIEW_UNSPAWNED) ||
			            (vp->offered[i] < 0) != (vp->offered[0] < 0),
			    "player %d: offered %d", p, vp->offered[i]);
	}
	return NULL;
}

static const char *check_characters(const struct game_view *v, char *buf, size_t n)
{
	const struct config *cfg = v->cfg;
	int spawned = 0;
	for (int c = 0; c < cfg->ncharacters; c++) {
		const struct game_view_character *vc = &v->characters[c];
		spawned += vc->life != VIEW_UNSPAWNED;
		if (vc->life != VIEW_ALIVE)
			continue;
		SAY(vc->owner < 0 || vc->owner >= v->nplayers ||
		            (!v->players[vc->owner].in_game && v->phase != VIEW_OVER),
		    "character %d: owner %d", c, vc->owner);
		SAY(vc->loc < 0 || vc->loc >= cfg->nlocations, "character %d: location %d", c,
		    vc->loc);
		SAY(vc->wounds < 0 || vc->frostbites < 0 || vc->wounds + vc->frostbites >= 3,
		    "character %d: %d wounds, %d frostbites", c, vc->wounds, vc->frostbites);
	}
	SAY(v->nspawned != spawned, "%d characters in the spawn order, %d spawned", v->nspawned,
	    spawned);
	for (int i = 0; i < v->nspawned; i++) {
		int c = v->spawn_order[i];
		SAY(c < 0 || c >= cfg->ncharacters || v->characters[c].life == VIEW_UNSPAWNED,
		    "spawn order %d: character %d", i, c);
		for (int j = 0; j < i; j++)
			SAY(v->spawn_order[j] == c, "character %d spawned twice", c);
	}
	return NULL;
}

static const char *check_cards(const struct game_view *v, char *buf, size_t n)
{
	const struct config *cfg = v->cfg;
	SAY(v->nwaste < 0 || v->nwaste > cfg->ncards, "%d cards on the waste pile", v->nwaste);
	int waste = 0;
	for (int k = 0; k < cfg->ncards; k++) {
		const struct game_view_card *vk = &v->cards[k];
		switch (vk->place) {
		case VIEW_PILE:
			SAY(vk->holder < 0 || vk->holder >= cfg->nlocations ||
			            (vk->holder == cfg->colony && v->round > 0),
			    "card %d: in pile %d", k, vk->holder);
			break;
		case VIEW_HAND:
			SAY(vk->holder < 0 || vk->holder >= v->nplayers, "card %d: in hand %d", k,
			    vk->holder);
			break;
		case VIEW_WASTE:
			waste++;
			break;
		case VIEW_GONE:
			break;
		case VIEW_EQUIPPED: {
			int c = vk->holder, count = 0, same = 0;
			SAY(c < 0 || c >= cfg->ncharacters || v->characters[c].life != VIEW_ALIVE,
			    "card %d: on character %d", k, c);
			for (int j = 0; j < cfg->ncards; j++)
				if (v->cards[j].place == VIEW_EQUIPPED && v->cards[j].holder == c) {
					count++;
					same += v->cards[j].order == vk->order;
				}
			SAY(vk->order < 0 || vk->order >= count || same != 1,
			    "card %d: item %d on character %d", k, vk->order, c);
			break;
		}
		default:
			SAY(true, "card %d: place %d", k, (int)vk->place);
		}
	}
	SAY(waste != v->nwaste, "%d waste cards, a pile of %d", waste, v->nwaste);
	for (int i = 0; i < v->nwaste; i++)
		SAY(v->waste[i] < 0 || v->waste[i] >= cfg->ncards ||
		            v->cards[v->waste[i]].place != VIEW_WASTE,
		    "waste pile %d: card %d", i, v->waste[i]);
	return NULL;
}

static const char *check_board(const struct game_view *v, char *buf, size_t n)
{
	const struct config *cfg = v->cfg;
	SAY(v->round < 0 || v->round > cfg->ncrises || v->round > cfg->goal.rounds, "round %d",
	    v->round);
	for (int r = 0; r < v->round; r++) {
		SAY(v->crises[r] < 0 || v->crises[r] >= cfg->ncrises, "crisis %d", v->crises[r]);
		for (int q = 0; q < r; q++)
			SAY(v->crises[q] == v->crises[r], "crisis %d drawn twice", v->crises[r]);
	}
	SAY(v->crisis != (v->round > 0 ? v->crises[v->round - 1] : -1), "crisis %d", v->crisis);
	SAY(v->children < 0 || v->starvation < 0 || v->contributed < 0,
	    "children %d, starvation %d, contributed %d", v->children, v->starvation,
	    v->contributed);
	for (int l = 0; l < cfg->nlocations; l++)
		for (int e = 0; e < cfg->locations[l].entrances; e++) {
			int z = v->locations[l].zombies[e], b = v->locations[l].barricades[e];
			SAY(z < 0 || b < 0 || z + b > SPACES_PER_ENTRANCE,
			    "location %d entrance %d: %d zombies, %d barricades", l, e, z, b);
		}
	return NULL;
}

/* Who may act: the phase's waiting_for, the turn's facts. */
static const char *check_turn(const struct game_view *v, char *buf, size_t n)
{
	int w = v->waiting_for;
	bool others = false;
	for (int p = 0; p < v->nplayers; p++)
		others |= v->players[p].in_game && p != v->me;
	switch (v->phase) {
	case VIEW_REGISTRATION:
		SAY(w != GAME_WAIT_ANY || v->nplayers != 0 || v->result != VIEW_RUNNING,
		    "a registration waiting for %d", w);
		SAY(v->registered && v->cfg->max_players < 2, "registered, the game not started");
		break;
	case VIEW_SELECTION:
		SAY(w < 0 || w >= v->nplayers || !v->players[w].in_game || v->round != 0,
		    "a selection by player %d", w);
		break;
	case VIEW_TURNS:
		SAY(v->round < 1 || v->result != VIEW_RUNNING, "the turns of round %d", v->round);
		SAY(v->turn_known != (w == v->me && v->me >= 0) ||
		            (w != v->me && w != GAME_VIEW_SOMEONE_ELSE),
		    "the turns waiting for %d", w);
		SAY(v->turn_known && !v->players[v->me].in_game, "the turn of a player who left");
		SAY(!v->turn_known && !others, "another player's turn, but no other player");
		break;
	case VIEW_OVER:
		SAY(w != GAME_WAIT_NONE || v->result == VIEW_RUNNING, "a game over waiting for %d",
		    w);
		break;
	default:
		SAY(true, "phase %d", (int)v->phase);
	}
	return NULL;
}

const char *game_view_check(const struct game_view *v, char *buf, size_t n)
{
	SAY(v->rules != RULES_BASE && v->rules != RULES_REVISED, "rules %d", (int)v->rules);
	const char *bad = check_turn(v, buf, n);
	if (!bad)
		bad = check_players(v, buf, n);
	if (!bad)
		bad = check_characters(v, buf, n);
	if (!bad)
		bad = check_cards(v, buf, n);
	if (!bad)
		bad = check_board(v, buf, n);
	return bad;
}

struct game *game_from_view(const struct game_view *v, int64_t sample_seed)
{
	char why[160];
	if (game_view_check(v, why, sizeof why))
		return NULL;
	struct game *g = game_new(v->cfg, sample_seed, v->rules);
	if (v->phase == VIEW_REGISTRATION || v->result == VIEW_ABORTED) {
		build_registration(g, v);
		if (v->result == VIEW_ABORTED) {
			g->phase = PH_OVER;
			g->end_reason = game_reason_aborted;
		}
		return g;
	}
	g->round = v->round;
	g->food = v->food;
	g->moral = v->moral;
	g->starvation = v->starvation;
	g->contributed = v->contributed;
	build_players(g, v);
	build_characters(g, v);
	build_cards(g, v);
	int *scratch = xcalloc((size_t)v->cfg->ncards + (size_t)v->cfg->nlocations, sizeof(int));
	bool dealt = build_piles(g, v, scratch);
	free(scratch);
	if (!dealt) {
		game_free(g);
		return NULL;
	}
	build_crises(g, v);
	build_unused(g, v);
	build_turn_state(g, v);
	return g;
}

/* ---- comparing ------------------------------------------------------------------- */

static const char *diff_players(const struct game_view *a, const struct game_view *b, char *buf,
                                size_t n)
{
	for (int p = 0; p < a->nplayers; p++) {
		const struct game_view_player *x = &a->players[p], *y = &b->players[p];
		SAY(strcmp(x->name ? x->name : "", y->name ? y->name : "") != 0,
		    "player %d: name \"%s\" / \"%s\"", p, x->name ? x->name : "",
		    y->name ? y->name : "");
		SAY(x->in_game != y->in_game || x->cleaned != y->cleaned,
		    "player %d: in game %d / %d, cleaned %d / %d", p, x->in_game, y->in_game,
		    x->cleaned, y->cleaned);
		SAY(x->ndice != y->ndice, "player %d: %d / %d dice", p, x->ndice, y->ndice);
		for (int i = 0; i < x->ndice; i++)
			SAY(x->dice[i] != y->dice[i], "player %d: die %d is %d / %d", p, i,
			    x->dice[i], y->dice[i]);
		for (int i = 0; i < 4; i++)
			SAY(x->offered[i] != y->offered[i], "player %d: offered[%d] %d / %d", p, i,
			    x->offered[i], y->offered[i]);
	}
	return NULL;
}

static const char *diff_characters(const struct game_view *a, const struct game_view *b, char *buf,
                                   size_t n)
{
	for (int c = 0; c < a->cfg->ncharacters; c++) {
		const struct game_view_character *x = &a->characters[c], *y = &b->characters[c];
		SAY(x->life != y->life || x->owner != y->owner || x->loc != y->loc,
		    "character %d: life %d / %d, owner %d / %d, location %d / %d", c, x->life,
		    y->life, x->owner, y->owner, x->loc, y->loc);
		SAY(x->wounds != y->wounds || x->frostbites != y->frostbites,
		    "character %d: wounds %d / %d, frostbites %d / %d", c, x->wounds, y->wounds,
		    x->frostbites, y->frostbites);
		SAY(x->moved != y->moved || x->uses != y->uses,
		    "character %d: moved %d / %d, uses %d / %d", c, x->moved, y->moved, x->uses,
		    y->uses);
	}
	SAY(a->nspawned != b->nspawned, "%d / %d characters spawned", a->nspawned, b->nspawned);
	for (int i = 0; i < a->nspawned; i++)
		SAY(a->spawn_order[i] != b->spawn_order[i], "spawn order %d: %d / %d", i,
		    a->spawn_order[i], b->spawn_order[i]);
	return NULL;
}

static const char *diff_cards(const struct game_view *a, const struct game_view *b, char *buf,
                              size_t n)
{
	for (int k = 0; k < a->cfg->ncards; k++) {
		const struct game_view_card *x = &a->cards[k], *y = &b->cards[k];
		SAY(x->place != y->place || x->holder != y->holder || x->order != y->order ||
		            x->spent != y->spent,
		    "card %d (id %d): place %d / %d, holder %d / %d, order %d / %d, spent %d / %d",
		    k, a->cfg->cards[k].id, x->place, y->place, x->holder, y->holder, x->order,
		    y->order, x->spent, y->spent);
	}
	SAY(a->nwaste != b->nwaste, "%d / %d cards on the waste pile", a->nwaste, b->nwaste);
	for (int i = 0; i < a->nwaste; i++)
		SAY(a->waste[i] != b->waste[i], "waste pile %d: card %d / %d", i, a->waste[i],
		    b->waste[i]);
	return NULL;
}

static const char *diff_board(const struct game_view *a, const struct game_view *b, char *buf,
                              size_t n)
{
	SAY(a->food != b->food || a->moral != b->moral || a->starvation != b->starvation,
	    "food %d / %d, morale %d / %d, starvation %d / %d", a->food, b->food, a->moral,
	    b->moral, a->starvation, b->starvation);
	SAY(a->children != b->children || a->contributed != b->contributed,
	    "children %d / %d, contributed %d / %d", a->children, b->children, a->contributed,
	    b->contributed);
	SAY(a->crisis != b->crisis, "crisis %d / %d", a->crisis, b->crisis);
	for (int r = 0; r < a->round; r++)
		SAY(a->crises[r] != b->crises[r], "crisis of round %d: %d / %d", r + 1,
		    a->crises[r], b->crises[r]);
	for (int l = 0; l < a->cfg->nlocations; l++)
		for (int e = 0; e < a->cfg->locations[l].entrances; e++)
			SAY(a->locations[l].zombies[e] != b->locations[l].zombies[e] ||
			            a->locations[l].barricades[e] != b->locations[l].barricades[e],
			    "location %d entrance %d: zombies %d / %d, barricades %d / %d", l, e,
			    a->locations[l].zombies[e], b->locations[l].zombies[e],
			    a->locations[l].barricades[e], b->locations[l].barricades[e]);
	return NULL;
}

const char *game_view_diff(const struct game_view *a, const struct game_view *b, char *buf,
                           size_t n)
{
	const struct config *x = a->cfg, *y = b->cfg;
	SAY(x->ncards != y->ncards || x->ncharacters != y->ncharacters ||
	            x->nlocations != y->nlocations || x->ncrises != y->ncrises ||
	            x->max_players != y->max_players,
	    "views of different configurations");
	for (int l = 0; l < x->nlocations; l++)
		SAY(x->locations[l].entrances != y->locations[l].entrances,
		    "views of different configurations");
	SAY(a->rules != b->rules, "rules %d / %d", a->rules, b->rules);
	SAY(a->me != b->me || a->registered != b->registered, "viewer %d / %d, registered %d / %d",
	    a->me, b->me, a->registered, b->registered);
	SAY(a->phase != b->phase || a->result != b->result, "phase %d / %d, result %d / %d",
	    a->phase, b->phase, a->result, b->result);
	SAY(a->waiting_for != b->waiting_for || a->turn_known != b->turn_known,
	    "waiting for %d / %d, turn known %d / %d", a->waiting_for, b->waiting_for,
	    a->turn_known, b->turn_known);
	SAY(a->round != b->round, "round %d / %d", a->round, b->round);
	SAY(a->nplayers != b->nplayers, "%d / %d players", a->nplayers, b->nplayers);
	const char *d = diff_board(a, b, buf, n);
	if (!d)
		d = diff_players(a, b, buf, n);
	if (!d)
		d = diff_characters(a, b, buf, n);
	if (!d)
		d = diff_cards(a, b, buf, n);
	return d;
}
