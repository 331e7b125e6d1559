/*
 * game_internal: the state of a game, shared by the files of the game module
 * (game.c: the rules; game_legal.c: the commands a player may send now;
 * game_view.c: what a player has been told, and games built from it). Not a
 * public header: everything else sees `struct game` only through game.h.
 *
 * Memory: a game is ONE allocation. `struct game` comes first, every array
 * it points to follows it in the same block (game_layout carves them), so
 * game_clone is a memcpy plus re-pointing the arrays into the copy. Nothing
 * grows after game_new: hands and equipment are lists threaded through the
 * cards (struct card_state's prev/next), whose count is fixed by the
 * configuration. The players' names are the only other memory (see
 * struct player_state).
 */
#ifndef SOPRA_GAME_INTERNAL_H
#define SOPRA_GAME_INTERNAL_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>

#include "sopra/config.h"
#include "sopra/game.h"
#include "sopra/rng.h"

#define SPACES_PER_ENTRANCE 3

enum phase {
	PH_REGISTRATION,
	PH_SELECTION,
	PH_TURN,
	PH_OVER,
};

enum char_life {
	CH_UNUSED, /* in the unused list, or offered to a player */
	CH_ALIVE,
	CH_DEAD,
};

enum card_place {
	CP_DECK, /* in a location's deck or the start pile */
	CP_HAND, /* holder = player */
	CP_WASTE,
	CP_GONE,     /* contributed, discarded, or lost with a hand or a death */
	CP_EQUIPPED, /* holder = character index */
};

/* A list of cards threaded through struct card_state's prev/next: a hand
 * (in the order drawn) or a character's equipment (oldest first, the most
 * recently equipped last). A card is in at most one list. */
struct card_list {
	int first, last; /* card indices, -1 when empty */
	int n;
};

struct card_state {
	enum card_place place;
	int holder;
	int prev, next; /* neighbours in its hand or equipment list, -1 at the ends */
	bool spent;     /* equipment: used this round */
};

struct char_state {
	enum char_life life;
	int owner; /* player id while alive */
	int loc;   /* location index while alive */
	int wounds;
	int frostbites;
	bool moved;
	int uses; /* ability activations this round */
	struct card_list equip;
};

struct loc_state {
	int *zombies;    /* per entrance */
	int *barricades; /* per entrance */
	int *deck;       /* card indices, top at deck[top] */
	int ndeck;
	int top;
	int children; /* colony only */
};

struct player_state {
	char *name;      /* NULL before registering; a copy, in the block's tail after a clone */
	bool name_owned; /* name is this game's own allocation (game_free frees it) */
	bool in_game;
	bool disconnected;
	bool cleaned; /* base: cleaned waste this round */
	int offered[4];
	int *dice; /* sorted ascending, capacity ncharacters + 1 */
	int ndice;
	struct card_list hand;
};

struct id_index {
	int id;
	int index;
};

struct game {
	const struct config *cfg;
	size_t size; /* bytes of the block: this struct and its arrays (not the names) */
	enum game_rules rules;
	struct rng rng;
	enum phase phase;
	struct game_event_list *out;

	struct player_state *players; /* capacity cfg->max_players */
	int nplayers;

	struct char_state *chars; /* parallel to cfg->characters */
	int *unused;              /* character indices, first = next to spawn */
	int nunused;
	int *spawn_order; /* character indices in the order they were given out */
	int nspawned;

	struct card_state *cards;  /* parallel to cfg->cards */
	struct id_index *card_ids; /* sorted by id */
	struct loc_state *locs;    /* parallel to cfg->locations */
	int *loc_order;            /* location indices by ascending id */
	int colony;

	int *crisis_pile; /* crisis indices after the shuffle */
	int crisis;       /* index of the current crisis */
	int contributed;

	int round;
	const char *end_reason; /* static; set when the game ends */
	int moral;
	int food;
	int waste;       /* cards on the waste pile */
	int *waste_pile; /* their indices, bottom first, capacity ncards */
	int starvation;

	int sel; /* selection: the player choosing */
	bool sel_waiting;
	int active;        /* turn: the active player, -1 before the first */
	bool turn_waiting; /* a turn is in progress */
	bool turn_ended;   /* the active player's turn ended inside a command */
	bool prompt;       /* send ActNow when next waiting */
};

/* game_end_reason of a registration that was aborted, of a game won
 * (compared by pointer). */
extern const char game_reason_aborted[];
extern const char game_reason_won[];

/* A new game's block for cfg: zeroed, every array carved, nothing else set
 * (game_new and game_from_view fill it in). Never NULL. */
struct game *game_alloc(const struct config *cfg);

/* game_end_reason of a game that ends now with GameEnd(win): won, or lost
 * by morale or by the last round (a static string). */
const char *game_end_text(const struct game *g, bool win);

/* Card k goes to the end of list l (its place and holder are the caller's). */
void game_list_push(struct game *g, struct card_list *l, int k);

/* Index by id, -1 when absent. */
int game_card_index(const struct game *g, int id);
int game_char_index(const struct game *g, int id);
int game_loc_index(const struct game *g, int id);

/* ---- one block of arrays ------------------------------------------------------ */

/* Where n objects of `size` bytes and alignment `align` start in a block
 * whose first *off bytes are taken; *off moves past them. NULL when only
 * measuring (base NULL). */
static inline void *game_carve(char *base, size_t *off, size_t n, size_t size, size_t align)
{
	*off = (*off + align - 1) / align * align;
	void *p = base ? base + *off : NULL;
	*off += n * size;
	return p;
}

/* Carve n objects of type T from block `base` (at offset `off`) for the
 * pointer dst, which is assigned only when `owner` is not NULL (else the
 * block is only measured). */
#define GAME_CARVE(owner, base, off, dst, n, T)                                              \
	do {                                                                                 \
		T *carved_ = game_carve((base), &(off), (size_t)(n), sizeof(T), alignof(T)); \
		if (owner)                                                                   \
			(dst) = carved_;                                                     \
	} while (0)

/* ---- small reads shared by the game's files ---------------------------------- */

static inline const struct config_character *cchar(const struct game *g, int c)
{
	return &g->cfg->characters[c];
}

static inline int loc_id(const struct game *g, int l)
{
	return g->cfg->locations[l].id;
}

static inline int card_id(const struct game *g, int k)
{
	return g->cfg->cards[k].id;
}

static inline bool is_alive(const struct game *g, int c)
{
	return c >= 0 && g->chars[c].life == CH_ALIVE;
}

/* c is a living character of player p */
static inline bool owned(const struct game *g, int p, int c)
{
	return is_alive(g, c) && g->chars[c].owner == p;
}

static inline int chars_at(const struct game *g, int l)
{
	int n = 0;
	for (int c = 0; c < g->cfg->ncharacters; c++)
		if (is_alive(g, c) && g->chars[c].loc == l)
			n++;
	return n;
}

static inline int entrances(const struct game *g, int l)
{
	return g->cfg->locations[l].entrances;
}

static inline int space_at(const struct game *g, int l, int e)
{
	return SPACES_PER_ENTRANCE - g->locs[l].zombies[e] - g->locs[l].barricades[e];
}

static inline bool has_room(const struct game *g, int l)
{
	return l == g->colony || chars_at(g, l) < g->cfg->locations[l].survivor_spaces;
}

/* index of the smallest die >= v, or -1 */
static inline int die_at_least(const struct player_state *ps, int v)
{
	for (int i = 0; i < ps->ndice; i++)
		if (ps->dice[i] >= v)
			return i;
	return -1;
}

static inline bool in_hand(const struct game *g, int p, int k)
{
	return k >= 0 && g->cards[k].place == CP_HAND && g->cards[k].holder == p;
}

static inline bool is_equipment(enum card_type t)
{
	return t >= CARD_HAMMER;
}

static inline bool card_fits_crisis(enum card_type t, enum crisis_type crisis)
{
	switch (crisis) {
	case CRISIS_FOOD:
		return t == CARD_FOOD;
	case CRISIS_FUEL:
		return t == CARD_FUEL;
	case CRISIS_MEDICINE:
		return t == CARD_MEDICINE;
	case CRISIS_STUFF:
		return t != CARD_FOOD && t != CARD_FUEL && t != CARD_MEDICINE;
	}
	return false;
}

/* The most recently equipped unspent card of `type` on c (matching
 * location index l for blueprints), or -1. Equipment exists only in
 * revised: always -1 in base. */
static inline int equipment(const struct game *g, int c, enum card_type type, int l)
{
	if (g->rules != RULES_REVISED)
		return -1;
	for (int k = g->chars[c].equip.last; k >= 0; k = g->cards[k].prev) {
		const struct config_card *cc = &g->cfg->cards[k];
		if (cc->type != type || g->cards[k].spent)
			continue;
		if (type == CARD_BLUEPRINT && cc->location != loc_id(g, l))
			continue;
		return k;
	}
	return -1;
}

#endif
