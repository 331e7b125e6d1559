/*
 * bot_board: facts a bot derives from a view (features.h).
 */
#include "bot_board.h"

#include <assert.h>
#include <stdlib.h>

#include "sopra/xalloc.h"

#define SPACES 3 /* per entrance, zombies and barricades together */

/* ---- ids ------------------------------------------------------------------------ */

struct id_pair {
	int id, index;
};

struct id_table {
	struct id_pair *v;
	int n;
};

struct bot_ids {
	struct id_table cards, chars, locs;
};

static int by_id(const void *a, const void *b)
{
	int x = ((const struct id_pair *)a)->id, y = ((const struct id_pair *)b)->id;
	return (x > y) - (x < y);
}

/* The n ids at base (each `stride` bytes after the last), sorted. */
static void table_fill(struct id_table *t, const void *base, size_t stride, int n)
{
	t->v = xreallocarray(NULL, (size_t)(n > 0 ? n : 1), sizeof *t->v);
	t->n = n;
	for (int i = 0; i < n; i++) {
		t->v[i].id = *(const int *)((const char *)base + (size_t)i * stride);
		t->v[i].index = i;
	}
	qsort(t->v, (size_t)n, sizeof *t->v, by_id);
}

static int table_find(const struct id_table *t, int id)
{
	int lo = 0, hi = t->n - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (t->v[mid].id == id)
			return t->v[mid].index;
		if (t->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

struct bot_ids *bot_ids_new(const struct config *cfg)
{
	struct bot_ids *ids = xcalloc(1, sizeof *ids);
	table_fill(&ids->cards, &cfg->cards[0].id, sizeof cfg->cards[0], cfg->ncards);
	table_fill(&ids->chars, &cfg->characters[0].id, sizeof cfg->characters[0],
	           cfg->ncharacters);
	table_fill(&ids->locs, &cfg->locations[0].id, sizeof cfg->locations[0], cfg->nlocations);
	return ids;
}

void bot_ids_free(struct bot_ids *ids)
{
	if (!ids)
		return;
	free(ids->cards.v);
	free(ids->chars.v);
	free(ids->locs.v);
	free(ids);
}

int bot_card_index(const struct bot_ids *ids, int id)
{
	return table_find(&ids->cards, id);
}

int bot_char_index(const struct bot_ids *ids, int id)
{
	return table_find(&ids->chars, id);
}

int bot_loc_index(const struct bot_ids *ids, int id)
{
	return table_find(&ids->locs, id);
}

/* ---- the board ------------------------------------------------------------------ */

int bot_chars_at(const struct game_view *v, int l)
{
	int n = 0;
	for (int c = 0; c < v->cfg->ncharacters; c++)
		n += v->characters[c].life == VIEW_ALIVE && v->characters[c].loc == l;
	return n;
}

int bot_colony_people(const struct game_view *v)
{
	return v->children + bot_chars_at(v, v->cfg->colony);
}

int bot_food_need(const struct game_view *v)
{
	return (bot_colony_people(v) + 1) / 2;
}

int bot_hand_food(const struct game_view *v, int player)
{
	int food = 0;
	for (int k = 0; k < v->cfg->ncards; k++)
		if (v->cards[k].place == VIEW_HAND && v->cards[k].holder == player &&
		    v->cfg->cards[k].type == CARD_FOOD)
			food += v->cfg->cards[k].amount;
	return food;
}

int bot_team_hand_food(const struct game_view *v)
{
	int food = 0;
	for (int k = 0; k < v->cfg->ncards; k++)
		if (v->cards[k].place == VIEW_HAND && v->cfg->cards[k].type == CARD_FOOD)
			food += v->cfg->cards[k].amount;
	return food;
}

enum crisis_type bot_card_crisis_kind(enum card_type t)
{
	switch (t) {
	case CARD_FOOD:
		return CRISIS_FOOD;
	case CARD_FUEL:
		return CRISIS_FUEL;
	case CARD_MEDICINE:
		return CRISIS_MEDICINE;
	default:
		return CRISIS_STUFF;
	}
}

bool bot_card_fits_crisis(const struct game_view *v, int k)
{
	return v->crisis >= 0 &&
	       bot_card_crisis_kind(v->cfg->cards[k].type) == v->cfg->crises[v->crisis].type;
}

int bot_team_fitting_cards(const struct game_view *v)
{
	int n = 0;
	for (int k = 0; k < v->cfg->ncards; k++)
		n += v->cards[k].place == VIEW_HAND && bot_card_fits_crisis(v, k);
	return n;
}

int bot_free_spaces(const struct game_view *v, int l, int e)
{
	return SPACES - v->locations[l].zombies[e] - v->locations[l].barricades[e];
}

int bot_zombie_arrivals(const struct game_view *v, int l)
{
	if (l == v->cfg->colony)
		return (bot_colony_people(v) + 1) / 2;
	return bot_chars_at(v, l);
}

void bot_gate_of(const struct game_view *v, int l, struct bot_gate *g)
{
	int n = v->cfg->locations[l].entrances;
	assert(n >= 1);
	g->n = n < BOT_MAX_ENTRANCES ? n : BOT_MAX_ENTRANCES;
	for (int e = 0; e < g->n; e++) {
		g->zombies[e] = v->locations[l].zombies[e];
		g->barricades[e] = v->locations[l].barricades[e];
	}
	g->people = l == v->cfg->colony ? bot_colony_people(v) : bot_chars_at(v, l);
}

int bot_gate_deaths(const struct bot_gate *g, int arrivals)
{
	int zombies[BOT_MAX_ENTRANCES], barricades[BOT_MAX_ENTRANCES];
	for (int e = 0; e < g->n; e++) {
		zombies[e] = g->zombies[e];
		barricades[e] = g->barricades[e];
	}
	int deaths = 0;
	for (int i = 0; i < arrivals; i++) {
		int e = i % g->n;
		if (zombies[e] + barricades[e] < SPACES)
			zombies[e]++;
		else if (barricades[e] > 0)
			barricades[e]--;
		else if (g->people > deaths)
			deaths++;
	}
	return deaths;
}

int bot_zombie_deaths(const struct game_view *v, int l, int arrivals)
{
	struct bot_gate g;
	bot_gate_of(v, l, &g);
	return bot_gate_deaths(&g, arrivals);
}

int bot_deck_left(const struct game_view *v, int l)
{
	int n = 0;
	for (int k = 0; k < v->cfg->ncards; k++)
		n += v->cards[k].place == VIEW_PILE && v->cards[k].holder == l;
	return n;
}

int bot_rounds_after(const struct game_view *v)
{
	int left = v->cfg->goal.rounds - v->round;
	return left > 0 ? left : 0;
}

int bot_character_at(const struct game_view *v, int player, int l)
{
	for (int c = 0; c < v->cfg->ncharacters; c++)
		if (v->characters[c].life == VIEW_ALIVE && v->characters[c].owner == player &&
		    v->characters[c].loc == l)
			return c;
	return -1;
}
