/*
 * game: the rules as a pure state machine (see include/sopra/game.h).
 *
 * The section numbers in comments refer to ../shared/spec/behaviour.md, the
 * binding description of event order and failure checks. Edition differences
 * are consulted through g->rules at the few points where they matter.
 *
 * Control flow: every entry point (game_apply, game_timeout, game_disconnect)
 * changes the state and then calls advance(), which runs the game forward
 * (turn starts, colony phases, new rounds) until it has to wait for a player
 * or the game is over.
 */
#include "sopra/game.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sopra/rng.h"
#include "sopra/xalloc.h"

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

struct card_state {
	enum card_place place;
	int holder;
	bool spent; /* equipment: used this round */
};

struct char_state {
	enum char_life life;
	int owner; /* player id while alive */
	int loc;   /* location index while alive */
	int wounds;
	int frostbites;
	bool moved;
	int uses;   /* ability activations this round */
	int *equip; /* owned: card indices, most recently equipped last */
	int nequip;
	int capequip;
};

struct loc_state {
	int *zombies;    /* owned, per entrance */
	int *barricades; /* owned, per entrance */
	int *deck;       /* owned: card indices, top at deck[top] */
	int ndeck;
	int top;
	int children; /* colony only */
};

struct player_state {
	char *name; /* owned */
	bool in_game;
	bool disconnected;
	bool cleaned; /* base: cleaned waste this round */
	int offered[4];
	int *dice; /* owned, sorted ascending, capacity ncharacters + 1 */
	int ndice;
	int *hand; /* owned: card indices in the order drawn */
	int nhand;
	int caphand;
};

struct id_index {
	int id;
	int index;
};

struct game {
	const struct config *cfg;
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
	int moral;
	int food;
	int waste;       /* cards on the waste pile */
	int *waste_pile; /* owned: their indices, capacity ncards */
	int starvation;

	int sel; /* selection: the player choosing */
	bool sel_waiting;
	int active;        /* turn: the active player, -1 before the first */
	bool turn_waiting; /* a turn is in progress */
	bool turn_ended;   /* the active player's turn ended inside a command */
	bool prompt;       /* send ActNow when next waiting */
};

/* ---- small helpers --------------------------------------------------- */

static void emit(struct game *g, enum game_event_type t, int to, int nargs, ...)
{
	struct game_event *e = game_event_list_push(g->out, t, to);
	va_list ap;
	va_start(ap, nargs);
	for (int i = 0; i < nargs; i++)
		e->arg[i] = va_arg(ap, int);
	va_end(ap);
	e->nargs = nargs;
}

/* CommandFailed to the sender; returns false for `return fail(...)`. */
static bool fail(struct game *g, const char *msg)
{
	struct game_event *e = game_event_list_push(g->out, GEV_COMMAND_FAILED, GEV_TO_SENDER);
	e->str = msg;
	return false;
}

static const struct config_character *cchar(const struct game *g, int c)
{
	return &g->cfg->characters[c];
}

static int loc_id(const struct game *g, int l)
{
	return g->cfg->locations[l].id;
}

static int card_id(const struct game *g, int k)
{
	return g->cfg->cards[k].id;
}

static int char_index(const struct game *g, int id)
{
	for (int i = 0; i < g->cfg->ncharacters; i++)
		if (g->cfg->characters[i].id == id)
			return i;
	return -1;
}

static int cmp_id_index(const void *a, const void *b)
{
	const struct id_index *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

static int card_index(const struct game *g, int id)
{
	struct id_index key = {id, 0};
	const struct id_index *f =
	        bsearch(&key, g->card_ids, (size_t)g->cfg->ncards, sizeof key, cmp_id_index);
	return f ? f->index : -1;
}

static int loc_index(const struct game *g, int id)
{
	for (int i = 0; i < g->cfg->nlocations; i++)
		if (g->cfg->locations[i].id == id)
			return i;
	return -1;
}

static bool is_alive(const struct game *g, int c)
{
	return c >= 0 && g->chars[c].life == CH_ALIVE;
}

/* c is a living character of player p */
static bool owned(const struct game *g, int p, int c)
{
	return is_alive(g, c) && g->chars[c].owner == p;
}

static int living_count(const struct game *g, int p)
{
	int n = 0;
	for (int c = 0; c < g->cfg->ncharacters; c++)
		if (owned(g, p, c))
			n++;
	return n;
}

static int chars_at(const struct game *g, int l)
{
	int n = 0;
	for (int c = 0; c < g->cfg->ncharacters; c++)
		if (is_alive(g, c) && g->chars[c].loc == l)
			n++;
	return n;
}

/* living character with the lowest social status at l, or -1 */
static int weakest_at(const struct game *g, int l)
{
	int best = -1;
	for (int c = 0; c < g->cfg->ncharacters; c++)
		if (is_alive(g, c) && g->chars[c].loc == l &&
		    (best < 0 || cchar(g, c)->status < cchar(g, best)->status))
			best = c;
	return best;
}

static int entrances(const struct game *g, int l)
{
	return g->cfg->locations[l].entrances;
}

static int space_at(const struct game *g, int l, int e)
{
	return SPACES_PER_ENTRANCE - g->locs[l].zombies[e] - g->locs[l].barricades[e];
}

static bool has_room(const struct game *g, int l)
{
	return l == g->colony || chars_at(g, l) < g->cfg->locations[l].survivor_spaces;
}

static int ceil_half(int n)
{
	return (n + 1) / 2;
}

/* a + b as Java's int addition: wrapping around at 2^32 (the reference
 * server is written in Java) instead of overflowing, which is undefined in
 * C. Food, morale and a crisis's "required + 2" are sums of configuration
 * numbers (up to INT_MAX each); the conversion back to int is modulo 2^32
 * with GCC and clang. */
static int java_add(int a, int b)
{
	return (int)((unsigned)a + (unsigned)b);
}

/* ---- dice ------------------------------------------------------------ */

/* index of the smallest die >= v, or -1 */
static int die_at_least(const struct player_state *ps, int v)
{
	for (int i = 0; i < ps->ndice; i++)
		if (ps->dice[i] >= v)
			return i;
	return -1;
}

static void die_remove(struct player_state *ps, int i)
{
	memmove(&ps->dice[i], &ps->dice[i + 1], (size_t)(ps->ndice - i - 1) * sizeof(int));
	ps->ndice--;
}

static void die_insert(struct player_state *ps, int v)
{
	int i = ps->ndice;
	while (i > 0 && ps->dice[i - 1] > v) {
		ps->dice[i] = ps->dice[i - 1];
		i--;
	}
	ps->dice[i] = v;
	ps->ndice++;
}

static int roll_die(struct game *g)
{
	return rng_next_int(&g->rng, 6) + 1;
}

/* ---- cards ----------------------------------------------------------- */

static void hand_add(struct game *g, int p, int k)
{
	struct player_state *ps = &g->players[p];
	if (ps->nhand == ps->caphand) {
		ps->caphand = ps->caphand ? ps->caphand * 2 : 16;
		ps->hand = xreallocarray(ps->hand, (size_t)ps->caphand, sizeof(int));
	}
	ps->hand[ps->nhand++] = k;
	g->cards[k].place = CP_HAND;
	g->cards[k].holder = p;
}

static bool in_hand(const struct game *g, int p, int k)
{
	return k >= 0 && g->cards[k].place == CP_HAND && g->cards[k].holder == p;
}

/* Take card k out of p's hand and put it at `place`. */
static void hand_remove(struct game *g, int p, int k, enum card_place place)
{
	struct player_state *ps = &g->players[p];
	for (int i = 0; i < ps->nhand; i++) {
		if (ps->hand[i] == k) {
			memmove(&ps->hand[i], &ps->hand[i + 1],
			        (size_t)(ps->nhand - i - 1) * sizeof(int));
			ps->nhand--;
			break;
		}
	}
	g->cards[k].place = place;
	g->cards[k].holder = -1;
}

static void hand_vanish(struct game *g, int p)
{
	struct player_state *ps = &g->players[p];
	for (int i = 0; i < ps->nhand; i++) {
		g->cards[ps->hand[i]].place = CP_GONE;
		g->cards[ps->hand[i]].holder = -1;
	}
	ps->nhand = 0;
}

/* Draw the top card of location l's deck into p's hand with CardDrawn. */
static void draw_card(struct game *g, int p, int l)
{
	struct loc_state *ls = &g->locs[l];
	int k = ls->deck[ls->top++];
	hand_add(g, p, k);
	emit(g, GEV_CARD_DRAWN, GEV_TO_ALL, 2, p, card_id(g, k));
}

/* WasteChanged after the pile changed by delta: base carries the new total,
 * revised the change (editions.md 4). */
static void waste_changed(struct game *g, int delta)
{
	emit(g, GEV_WASTE_CHANGED, GEV_TO_ALL, 1, g->rules == RULES_BASE ? g->waste : delta);
}

/* A played card goes to the waste pile. */
static void play_to_waste(struct game *g, int p, int k)
{
	hand_remove(g, p, k, CP_WASTE);
	g->waste_pile[g->waste++] = k;
}

/* The most recently equipped unspent card of `type` on c (matching
 * `location` for blueprints), or -1. Equipment exists only in revised. */
static int equipment(const struct game *g, int c, enum card_type type, int l)
{
	const struct char_state *cs = &g->chars[c];
	for (int i = cs->nequip - 1; i >= 0; i--) {
		int k = cs->equip[i];
		const struct config_card *cc = &g->cfg->cards[k];
		if (cc->type != type || g->cards[k].spent)
			continue;
		if (type == CARD_BLUEPRINT && cc->location != loc_id(g, l))
			continue;
		return k;
	}
	return -1;
}

/* ---- morale, death and infection (section 7) -------------------------- */

static bool over(const struct game *g)
{
	return g->phase == PH_OVER;
}

static void game_end(struct game *g, bool win)
{
	emit(g, GEV_GAME_END, GEV_TO_ALL, 1, win ? 1 : 0);
	g->phase = PH_OVER;
}

/* Change morale with MoralChanged; morale <= 0 ends the game (lost). */
static void moral_change(struct game *g, int delta, enum moral_reason reason)
{
	g->moral = java_add(g->moral, delta);
	emit(g, GEV_MORAL_CHANGED, GEV_TO_ALL, 2, delta, (int)reason);
	if (g->moral <= 0)
		game_end(g, false);
}

/* Character c joins player p in the colony: CharacterSpawned. */
static void place_character(struct game *g, int c, int p)
{
	struct char_state *cs = &g->chars[c];
	cs->life = CH_ALIVE;
	cs->owner = p;
	cs->loc = g->colony;
	cs->wounds = cs->frostbites = cs->uses = 0;
	cs->moved = false;
	g->spawn_order[g->nspawned++] = c;
	emit(g, GEV_CHARACTER_SPAWNED, GEV_TO_ALL, 2, p, cchar(g, c)->id);
}

/* The first unused character joins player p. */
static void spawn_for(struct game *g, int p)
{
	int c = g->unused[0];
	memmove(&g->unused[0], &g->unused[1], (size_t)(g->nunused - 1) * sizeof(int));
	g->nunused--;
	place_character(g, c, p);
}

/* Remove c from the board; its equipment leaves the game with it. */
static void remove_character(struct game *g, int c)
{
	struct char_state *cs = &g->chars[c];
	for (int i = 0; i < cs->nequip; i++) {
		g->cards[cs->equip[i]].place = CP_GONE;
		g->cards[cs->equip[i]].holder = -1;
	}
	cs->nequip = 0;
	cs->life = CH_DEAD;
}

/* The player leaves the game: Left(p); p's turn ends if p is active. */
static void player_out(struct game *g, int p)
{
	g->players[p].in_game = false;
	g->players[p].ndice = 0;
	emit(g, GEV_LEFT, GEV_TO_ALL, 1, p);
	if (g->phase == PH_TURN && p == g->active)
		g->turn_ended = true;
}

/* Death of c (section 7): event, morale, and for an owner left without
 * characters: hand lost, respawn or removal. */
static void kill_character(struct game *g, int c, bool bitten)
{
	int q = g->chars[c].owner;
	if (bitten)
		emit(g, GEV_BITTEN, GEV_TO_ALL, 1, cchar(g, c)->id);
	else
		emit(g, GEV_SURVIVOR_KILLED, GEV_TO_ALL, 1, cchar(g, c)->id);
	remove_character(g, c);
	moral_change(g, -1, MORAL_CHARACTER_DIED);
	if (over(g) || living_count(g, q) > 0)
		return;
	hand_vanish(g, q);
	if (g->nunused > 0) {
		spawn_for(g, q);
		if (g->phase == PH_TURN && q == g->active)
			g->turn_ended = true;
	} else {
		player_out(g, q);
	}
}

enum roll_result { ROLL_NONE, ROLL_WOUND, ROLL_FROSTBITE, ROLL_BITE };

static enum roll_result roll_infection(struct game *g)
{
	int n = rng_next_int(&g->rng, 12);
	if (n < 6)
		return ROLL_NONE;
	if (n < 9)
		return ROLL_WOUND;
	if (n < 11)
		return ROLL_FROSTBITE;
	return ROLL_BITE;
}

static void spread(struct game *g, int l);

/* Apply an injury to c: events, death at three injuries, spreading on a bite. */
static void injure(struct game *g, int c, enum roll_result r)
{
	struct char_state *cs = &g->chars[c];
	switch (r) {
	case ROLL_NONE:
		return;
	case ROLL_WOUND:
		cs->wounds++;
		emit(g, GEV_WOUNDED, GEV_TO_ALL, 1, cchar(g, c)->id);
		break;
	case ROLL_FROSTBITE:
		cs->frostbites++;
		emit(g, GEV_FROSTBITTEN, GEV_TO_ALL, 1, cchar(g, c)->id);
		break;
	case ROLL_BITE: {
		int l = cs->loc;
		kill_character(g, c, true);
		if (!over(g))
			spread(g, l);
		return;
	}
	}
	if (cs->wounds + cs->frostbites >= 3)
		kill_character(g, c, false);
}

static enum roll_result to_roll(enum injury i)
{
	switch (i) {
	case INJURY_WOUND:
		return ROLL_WOUND;
	case INJURY_FROSTBITE:
		return ROLL_FROSTBITE;
	case INJURY_BITE:
		return ROLL_BITE;
	}
	return ROLL_NONE;
}

/* The infection die after a normal move: SNOW_BOOTS (revised) turn a
 * frostbite into a wound; otherwise a WOUND ability may replace the result. */
static void infect_move(struct game *g, int c)
{
	enum roll_result r = roll_infection(g);
	const struct config_ability *ab = &cchar(g, c)->ability;
	if (r == ROLL_FROSTBITE && equipment(g, c, CARD_SNOW_BOOTS, -1) >= 0)
		r = ROLL_WOUND;
	else if (r != ROLL_NONE && ab->type == ABILITY_WOUND && to_roll(ab->before) == r)
		r = to_roll(ab->after);
	injure(g, c, r);
}

/* One spreading loop at l after a bite; victims start no spread of their own. */
static void spread(struct game *g, int l)
{
	while (!over(g)) {
		if (g->rules == RULES_REVISED && l == g->colony && g->locs[l].children > 0) {
			if (roll_infection(g) == ROLL_NONE)
				return;
			g->locs[l].children--;
			emit(g, GEV_BITTEN, GEV_TO_ALL, 0);
			moral_change(g, -1, MORAL_CHARACTER_DIED);
			continue;
		}
		int c = weakest_at(g, l);
		if (c < 0 || roll_infection(g) == ROLL_NONE)
			return;
		kill_character(g, c, true);
	}
}

/* ---- registration and preparation (sections 2, 3) -------------------- */

static void offer(struct game *g, int p)
{
	struct player_state *ps = &g->players[p];
	rng_shuffle_ints(&g->rng, g->unused, (size_t)g->nunused);
	for (int i = 0; i < 4; i++)
		ps->offered[i] = g->unused[i];
	memmove(&g->unused[0], &g->unused[4], (size_t)(g->nunused - 4) * sizeof(int));
	g->nunused -= 4;
	emit(g, GEV_CHARACTERS, p, 4, cchar(g, ps->offered[0])->id, cchar(g, ps->offered[1])->id,
	     cchar(g, ps->offered[2])->id, cchar(g, ps->offered[3])->id);
}

static void unused_append(struct game *g, int c)
{
	g->unused[g->nunused++] = c;
}

static void start_game(struct game *g)
{
	emit(g, GEV_GAME_STARTED, GEV_TO_ALL, 0);
	for (int p = 0; p < g->nplayers; p++) {
		struct game_event *e = game_event_list_push(g->out, GEV_PLAYER, GEV_TO_ALL);
		e->nargs = 1;
		e->arg[0] = p;
		e->str = g->players[p].name;
	}
	/* RNG order (spec 4.2): start pile, location decks by ascending id, crises. */
	struct loc_state *colony = &g->locs[g->colony];
	rng_shuffle_ints(&g->rng, colony->deck, (size_t)colony->ndeck);
	for (int i = 0; i < g->cfg->nlocations; i++) {
		struct loc_state *ls = &g->locs[g->loc_order[i]];
		if (g->loc_order[i] != g->colony)
			rng_shuffle_ints(&g->rng, ls->deck, (size_t)ls->ndeck);
	}
	rng_shuffle_ints(&g->rng, g->crisis_pile, (size_t)g->cfg->ncrises);
	g->phase = PH_SELECTION;
	g->sel = -1;
	g->sel_waiting = false;
}

/* The player choosing characters leaves (timeout or disconnect): the four
 * offered go back to the end of the unused list. */
static void selection_leave(struct game *g, int p)
{
	player_out(g, p);
	for (int i = 0; i < 4; i++)
		unused_append(g, g->players[p].offered[i]);
	g->sel_waiting = false;
}

static void place_zombies(struct game *g, int l, int n)
{
	for (int i = 0; i < n; i++)
		g->locs[l].zombies[i % entrances(g, l)]++;
}

static void finish_preparation(struct game *g)
{
	struct loc_state *colony = &g->locs[g->colony];
	for (int i = colony->top; i < colony->ndeck; i++)
		g->cards[colony->deck[i]].place = CP_GONE;
	colony->top = colony->ndeck;
	rng_shuffle_ints(&g->rng, g->unused, (size_t)g->nunused);
	g->moral = g->cfg->goal.moral;
	colony->children = g->cfg->goal.children_in_colony;
	for (int l = 0; l < g->cfg->nlocations; l++)
		place_zombies(g, l,
		              l == g->colony ? g->cfg->goal.zombies_colony
		                             : g->cfg->goal.zombies_locations);
}

/* ---- rounds (section 4) ----------------------------------------------- */

static void start_round(struct game *g)
{
	g->round++;
	int shown = g->rules == RULES_BASE ? g->round : g->cfg->goal.rounds - g->round + 1;
	emit(g, GEV_NEXT_ROUND, GEV_TO_ALL, 1, shown);
	g->crisis = g->crisis_pile[g->round - 1];
	g->contributed = 0;
	emit(g, GEV_CRISIS, GEV_TO_ALL, 1, g->cfg->crises[g->crisis].id);
	for (int p = 0; p < g->nplayers; p++) {
		struct player_state *ps = &g->players[p];
		if (!ps->in_game)
			continue;
		int n = living_count(g, p) + 1;
		ps->ndice = 0;
		for (int i = 0; i < n; i++) {
			int v = roll_die(g);
			die_insert(ps, v);
			emit(g, GEV_DIE_ROLLED, GEV_TO_ALL, 2, p, v);
		}
	}
	g->active = -1;
	g->turn_waiting = false;
}

/* Turn start: every frostbite of p's characters becomes a wound. */
static void frostbite_step(struct game *g, int p)
{
	for (int i = 0; i < g->nspawned && !over(g); i++) {
		int c = g->spawn_order[i];
		if (!owned(g, p, c))
			continue;
		int n = g->chars[c].frostbites;
		for (int k = 0; k < n && is_alive(g, c) && !over(g); k++)
			injure(g, c, ROLL_WOUND);
	}
}

/* End of p's turn: dice gone, moved marks and per-round counters reset. */
static void end_turn(struct game *g, int p)
{
	struct player_state *ps = &g->players[p];
	ps->ndice = 0;
	ps->cleaned = false;
	for (int c = 0; c < g->cfg->ncharacters; c++) {
		struct char_state *cs = &g->chars[c];
		if (cs->life != CH_ALIVE || cs->owner != p)
			continue;
		cs->moved = false;
		cs->uses = 0;
		for (int i = 0; i < cs->nequip; i++)
			g->cards[cs->equip[i]].spent = false;
	}
	g->turn_waiting = false;
	g->turn_ended = false;
}

/* Leave (command, timeout or dropped connection) of p during the game. */
static void do_leave(struct game *g, int p)
{
	player_out(g, p);
	hand_vanish(g, p);
	for (;;) {
		int best = -1;
		for (int c = 0; c < g->cfg->ncharacters; c++)
			if (owned(g, p, c) &&
			    (best < 0 || cchar(g, c)->status > cchar(g, best)->status))
				best = c;
		if (best < 0)
			break;
		emit(g, GEV_SURVIVOR_KILLED, GEV_TO_ALL, 1, cchar(g, best)->id);
		remove_character(g, best);
		moral_change(g, -1, MORAL_CHARACTER_DIED);
		if (over(g))
			return;
	}
}

static int barricade_total(const struct game *g)
{
	int n = 0;
	for (int l = 0; l < g->cfg->nlocations; l++)
		for (int e = 0; e < entrances(g, l); e++)
			n += g->locs[l].barricades[e];
	return n;
}

static int zombie_locations(const struct game *g)
{
	int n = 0;
	for (int l = 0; l < g->cfg->nlocations; l++)
		for (int e = 0; e < entrances(g, l); e++)
			if (g->locs[l].zombies[e] > 0) {
				n++;
				break;
			}
	return n;
}

static void spawn_zombies(struct game *g, int l, int n)
{
	struct loc_state *ls = &g->locs[l];
	for (int i = 0; i < n && !over(g); i++) {
		int e = i % entrances(g, l);
		if (space_at(g, l, e) > 0) {
			ls->zombies[e]++;
			emit(g, GEV_ZOMBIE_SPAWNED, GEV_TO_ALL, 2, loc_id(g, l), e);
		} else if (ls->barricades[e] > 0) {
			ls->barricades[e]--;
			emit(g, GEV_BARRICADE_DESTROYED, GEV_TO_ALL, 2, loc_id(g, l), e);
		} else if (ls->children > 0) {
			ls->children--;
			emit(g, GEV_CHILD_KILLED, GEV_TO_ALL, 0);
			moral_change(g, -1, MORAL_CHARACTER_DIED);
		} else {
			int c = weakest_at(g, l);
			if (c >= 0)
				kill_character(g, c, false);
		}
	}
}

/* Section 8. */
static void colony_phase(struct game *g)
{
	const struct config_goal *goal = &g->cfg->goal;
	struct loc_state *colony = &g->locs[g->colony];
	emit(g, GEV_COLONY_PHASE_STARTED, GEV_TO_ALL, 0);

	int need = ceil_half(colony->children + chars_at(g, g->colony));
	if (g->food >= need) {
		if (need > 0) {
			g->food -= need;
			emit(g, GEV_FOOD_CHANGED, GEV_TO_ALL, 2, -need, (int)FOOD_CONSUMED);
		}
	} else {
		g->starvation++;
		emit(g, GEV_STARVATION_TOKEN_ADDED, GEV_TO_ALL, 0);
	}
	if (g->starvation > 0)
		moral_change(g, -g->starvation, MORAL_STARVATION_TOKEN);
	if (over(g))
		return;

	if (g->waste / 10 >= 1)
		moral_change(g, -(g->waste / 10), MORAL_WASTE);
	if (over(g))
		return;

	const struct config_crisis *cr = &g->cfg->crises[g->crisis];
	if (g->contributed >= java_add(cr->required_cards, 2))
		moral_change(g, 1, MORAL_CRISIS);
	else if (g->contributed < cr->required_cards)
		moral_change(g, -cr->moral_change, MORAL_CRISIS);
	if (over(g))
		return;

	spawn_zombies(g, g->colony, ceil_half(colony->children + chars_at(g, g->colony)));
	for (int i = 0; i < g->cfg->nlocations && !over(g); i++) {
		int l = g->loc_order[i];
		if (l != g->colony)
			spawn_zombies(g, l, chars_at(g, l));
	}
	if (over(g))
		return;

	bool won = false;
	switch (goal->type) {
	case GOAL_SURVIVE:
		won = g->round >= goal->rounds;
		break;
	case GOAL_BARRICADES:
		won = barricade_total(g) >= goal->value;
		break;
	case GOAL_LOCATION_WITH_ZOMBIES:
		won = zombie_locations(g) <= goal->value;
		break;
	}
	if (won)
		game_end(g, true);
	else if (g->round >= goal->rounds)
		game_end(g, false);
}

static int next_player(const struct game *g, int after)
{
	for (int p = after + 1; p < g->nplayers; p++)
		if (g->players[p].in_game)
			return p;
	return -1;
}

/* Run the game forward until it waits for a player or is over. */
static void advance(struct game *g)
{
	for (;;) {
		if (g->phase == PH_OVER || g->phase == PH_REGISTRATION)
			return;
		if (g->phase == PH_SELECTION) {
			if (g->sel_waiting) {
				if (!g->players[g->sel].disconnected)
					return;
				selection_leave(g, g->sel);
				continue;
			}
			g->sel = next_player(g, g->sel);
			if (g->sel < 0) {
				finish_preparation(g);
				g->phase = PH_TURN;
				start_round(g);
				continue;
			}
			offer(g, g->sel);
			g->sel_waiting = true;
			continue;
		}
		/* PH_TURN */
		if (g->turn_waiting) {
			int p = g->active;
			if (g->turn_ended || !g->players[p].in_game) {
				end_turn(g, p);
				continue;
			}
			if (g->players[p].disconnected) {
				do_leave(g, p);
				continue;
			}
			if (g->prompt) {
				emit(g, GEV_ACT_NOW, p, 0);
				g->prompt = false;
			}
			return;
		}
		int p = next_player(g, g->active);
		if (p < 0) {
			colony_phase(g);
			if (!over(g))
				start_round(g);
			continue;
		}
		g->active = p;
		g->turn_waiting = true;
		g->turn_ended = false;
		g->prompt = true;
		frostbite_step(g, p);
	}
}

/* ---- in-game commands (sections 5, 6) --------------------------------- */

static const char *const E_NOT_YOURS = "no living character of yours with that id";
static const char *const E_NO_DIE = "no action die high enough";
static const char *const E_NO_ENTRANCE = "no such entrance at the character's location";
static const char *const E_NO_DICE = "no action die left";
static const char *const E_NO_ZOMBIE = "no zombie at that entrance";
static const char *const E_NO_SPACE = "no free space at that entrance";

/* Why character cs cannot move to location index l (-1: unknown) this
 * round, or NULL: the checks of Move and of a FUEL card (behaviour.md 6). */
static const char *move_error(const struct game *g, const struct char_state *cs, int l)
{
	if (cs->moved)
		return "character has already moved this round";
	if (l < 0)
		return "no such location";
	if (cs->loc == l)
		return "character is already at that location";
	if (!has_room(g, l))
		return "no room at that location";
	return NULL;
}

/* The index of character id if it is a living character of p; otherwise
 * sends CommandFailed and returns -1. */
static int own_character(struct game *g, int p, int id)
{
	int c = char_index(g, id);
	if (!owned(g, p, c)) {
		fail(g, E_NOT_YOURS);
		return -1;
	}
	return c;
}

static bool cmd_move(struct game *g, int p, const struct cmd *cmd)
{
	int c = own_character(g, p, cmd->character);
	if (c < 0)
		return false;
	struct char_state *cs = &g->chars[c];
	int l = loc_index(g, cmd->location);
	const char *err = move_error(g, cs, l);
	if (err)
		return fail(g, err);
	bool fuel = g->rules == RULES_BASE && cmd->fuel;
	if (fuel) {
		int best = -1;
		struct player_state *ps = &g->players[p];
		for (int i = 0; i < ps->nhand; i++) {
			int k = ps->hand[i];
			if (g->cfg->cards[k].type == CARD_FUEL &&
			    (best < 0 || card_id(g, k) < card_id(g, best)))
				best = k;
		}
		if (best < 0)
			return fail(g, "no FUEL card in hand");
		play_to_waste(g, p, best);
		cs->moved = true;
		cs->loc = l;
		emit(g, GEV_MOVED, GEV_TO_ALL, 3, cmd->character, cmd->location, 1);
		waste_changed(g, 1);
		return true;
	}
	cs->moved = true;
	cs->loc = l;
	if (g->rules == RULES_BASE)
		emit(g, GEV_MOVED, GEV_TO_ALL, 3, cmd->character, cmd->location, 0);
	else
		emit(g, GEV_MOVED, GEV_TO_ALL, 2, cmd->character, cmd->location);
	infect_move(g, c);
	return true;
}

static bool cmd_search(struct game *g, int p, const struct cmd *cmd)
{
	int c = own_character(g, p, cmd->character);
	if (c < 0)
		return false;
	struct player_state *ps = &g->players[p];
	if (ps->ndice == 0)
		return fail(g, E_NO_DICE);
	int d = die_at_least(ps, cchar(g, c)->search);
	if (d < 0)
		return fail(g, E_NO_DIE);
	int l = g->chars[c].loc;
	struct loc_state *ls = &g->locs[l];
	int left = ls->ndeck - ls->top;
	if (l == g->colony || left <= 0)
		return fail(g, "nothing left to search here");
	die_remove(ps, d);
	if (g->nunused > 0 && rng_next_int(&g->rng, ls->ndeck) == 0) {
		emit(g, GEV_SEARCHED, GEV_TO_ALL, 2, cmd->character, loc_id(g, l));
		spawn_for(g, p);
		int k = rng_next_int(&g->rng, 4);
		for (int i = 0; i < k; i++) {
			g->locs[g->colony].children++;
			emit(g, GEV_CHILD_SPAWNED, GEV_TO_ALL, 0);
		}
		return true;
	}
	int n = 1;
	int bp = g->rules == RULES_REVISED ? equipment(g, c, CARD_BLUEPRINT, l) : -1;
	const struct config_ability *ab = &cchar(g, c)->ability;
	if (bp >= 0) {
		g->cards[bp].spent = true;
		n = 2;
	} else if (ab->type == ABILITY_SEARCH && ab->location == loc_id(g, l) &&
	           g->chars[c].uses < ab->max_activations) {
		g->chars[c].uses++;
		n = ab->num_cards + 1;
	}
	if (n > left)
		n = left;
	emit(g, GEV_SEARCHED, GEV_TO_ALL, 2, cmd->character, loc_id(g, l));
	for (int i = 0; i < n; i++)
		draw_card(g, p, l);
	return true;
}

static bool cmd_attack(struct game *g, int p, const struct cmd *cmd)
{
	int c = own_character(g, p, cmd->character);
	if (c < 0)
		return false;
	struct player_state *ps = &g->players[p];
	int d = die_at_least(ps, cchar(g, c)->attack);
	if (d < 0)
		return fail(g, E_NO_DIE);
	int l = g->chars[c].loc;
	int e = cmd->entrance;
	if (e < 0 || e >= entrances(g, l))
		return fail(g, E_NO_ENTRANCE);
	if (g->locs[l].zombies[e] == 0)
		return fail(g, E_NO_ZOMBIE);
	g->locs[l].zombies[e]--;
	die_remove(ps, d);
	emit(g, GEV_ZOMBIE_KILLED, GEV_TO_ALL, 3, cmd->character, loc_id(g, l), e);
	int colt = g->rules == RULES_REVISED ? equipment(g, c, CARD_COLT, -1) : -1;
	if (colt >= 0)
		g->cards[colt].spent = true;
	else if (cchar(g, c)->ability.type != ABILITY_NO_INFECTION)
		injure(g, c, roll_infection(g));
	return true;
}

static bool cmd_barricade(struct game *g, int p, const struct cmd *cmd)
{
	int c = own_character(g, p, cmd->character);
	if (c < 0)
		return false;
	struct player_state *ps = &g->players[p];
	int hammer = g->rules == RULES_REVISED ? equipment(g, c, CARD_HAMMER, -1) : -1;
	if (hammer < 0 && ps->ndice == 0)
		return fail(g, E_NO_DICE);
	int l = g->chars[c].loc;
	int e = cmd->entrance;
	if (e < 0 || e >= entrances(g, l))
		return fail(g, E_NO_ENTRANCE);
	if (space_at(g, l, e) <= 0)
		return fail(g, E_NO_SPACE);
	g->locs[l].barricades[e]++;
	if (hammer >= 0)
		g->cards[hammer].spent = true;
	else
		die_remove(ps, 0);
	emit(g, GEV_BARRICADED, GEV_TO_ALL, 3, cmd->character, loc_id(g, l), e);
	return true;
}

static bool cmd_clean(struct game *g, int p, const struct cmd *cmd)
{
	int c = own_character(g, p, cmd->character);
	if (c < 0)
		return false;
	struct player_state *ps = &g->players[p];
	if (ps->ndice == 0)
		return fail(g, E_NO_DICE);
	if (g->chars[c].loc != g->colony)
		return fail(g, "character is not in the colony");
	if (g->waste == 0)
		return fail(g, "the waste pile is empty");
	if (g->rules == RULES_BASE && ps->cleaned)
		return fail(g, "waste was already cleaned this round");
	int amount = 3;
	bool free_of_die = false;
	int swab = g->rules == RULES_REVISED ? equipment(g, c, CARD_SWAB, -1) : -1;
	const struct config_ability *ab = &cchar(g, c)->ability;
	if (swab >= 0) {
		g->cards[swab].spent = true;
		amount = 5;
		free_of_die = true;
	} else if (ab->type == ABILITY_TRASH) {
		amount = ab->num_cards;
		free_of_die = g->rules == RULES_REVISED;
	}
	if (!free_of_die)
		die_remove(ps, 0);
	ps->cleaned = true;
	int removed = amount < g->waste ? amount : g->waste;
	for (int i = 0; i < removed; i++)
		g->cards[g->waste_pile[--g->waste]].place = CP_GONE;
	waste_changed(g, -removed);
	return true;
}

static bool card_fits_crisis(enum card_type t, enum crisis_type crisis)
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

static bool cmd_contribute(struct game *g, int p, const struct cmd *cmd)
{
	int k = card_index(g, cmd->card);
	if (!in_hand(g, p, k))
		return fail(g, "card is not in your hand");
	if (!card_fits_crisis(g->cfg->cards[k].type, g->cfg->crises[g->crisis].type))
		return fail(g, "card does not fit the current crisis");
	hand_remove(g, p, k, CP_GONE);
	g->contributed++;
	emit(g, GEV_CONTRIBUTED, GEV_TO_ALL, 2, p, cmd->card);
	return true;
}

static bool is_equipment(enum card_type t)
{
	return t >= CARD_HAMMER;
}

static bool use_card_plain(struct game *g, int p, int k)
{
	const struct config_card *cc = &g->cfg->cards[k];
	struct player_state *ps = &g->players[p];
	switch (cc->type) {
	case CARD_FOOD:
		play_to_waste(g, p, k);
		g->food = java_add(g->food, cc->amount);
		emit(g, GEV_CARD_USED, GEV_TO_ALL, 1, cc->id);
		waste_changed(g, 1);
		emit(g, GEV_FOOD_CHANGED, GEV_TO_ALL, 2, cc->amount, (int)FOOD_ADDED);
		return true;
	case CARD_STUFF: {
		if (ps->ndice == 0)
			return fail(g, "no action die to reroll");
		play_to_waste(g, p, k);
		die_remove(ps, 0);
		int v = roll_die(g);
		die_insert(ps, v);
		emit(g, GEV_CARD_USED, GEV_TO_ALL, 1, cc->id);
		waste_changed(g, 1);
		emit(g, GEV_DIE_ROLLED, GEV_TO_ALL, 2, p, v);
		return true;
	}
	default:
		return fail(g, "this card needs a character and a target");
	}
	return true;
}

static int heal_target(const struct game *g, int l, int t, const char **err)
{
	int tc = char_index(g, t);
	if (!is_alive(g, tc) || g->chars[tc].loc != l) {
		*err = "target is not a living character at the same location";
		return -1;
	}
	if (g->chars[tc].wounds + g->chars[tc].frostbites == 0) {
		*err = "target has no wound or frostbite";
		return -1;
	}
	return tc;
}

static void heal(struct game *g, int tc)
{
	if (g->chars[tc].frostbites > 0)
		g->chars[tc].frostbites--;
	else
		g->chars[tc].wounds--;
}

static bool use_card_target(struct game *g, int p, int k, int c, int t)
{
	const struct config_card *cc = &g->cfg->cards[k];
	struct char_state *cs = &g->chars[c];
	int l = cs->loc;
	const char *err = NULL;
	switch (cc->type) {
	case CARD_MEDICINE: {
		int tc = heal_target(g, l, t, &err);
		if (tc < 0)
			return fail(g, err);
		heal(g, tc);
		break;
	}
	case CARD_LOCK:
		if (t < 0 || t >= entrances(g, l))
			return fail(g, E_NO_ENTRANCE);
		if (space_at(g, l, t) <= 0)
			return fail(g, E_NO_SPACE);
		g->locs[l].barricades[t]++;
		break;
	case CARD_SCISSORS:
		if (t < 0 || t >= entrances(g, l))
			return fail(g, E_NO_ENTRANCE);
		if (g->locs[l].zombies[t] == 0)
			return fail(g, E_NO_ZOMBIE);
		g->locs[l].zombies[t]--;
		break;
	case CARD_FUEL: {
		if (g->rules == RULES_BASE)
			return fail(g, "FUEL is played with Move in this edition");
		int to = loc_index(g, t);
		err = move_error(g, cs, to);
		if (err)
			return fail(g, err);
		cs->moved = true;
		cs->loc = to;
		break;
	}
	case CARD_HAMMER:
	case CARD_SNOW_BOOTS:
	case CARD_COLT:
	case CARD_SWAB:
	case CARD_BLUEPRINT: {
		if (g->rules == RULES_BASE)
			return fail(g, "equipment cards cannot be played in this edition");
		int tc = char_index(g, t);
		if (!is_alive(g, tc) || g->chars[tc].loc != l)
			return fail(g, "target is not a living character at the same location");
		struct char_state *ts = &g->chars[tc];
		if (ts->nequip == ts->capequip) {
			ts->capequip = ts->capequip ? ts->capequip * 2 : 4;
			ts->equip = xreallocarray(ts->equip, (size_t)ts->capequip, sizeof(int));
		}
		hand_remove(g, p, k, CP_EQUIPPED);
		g->cards[k].holder = tc;
		g->cards[k].spent = false;
		ts->equip[ts->nequip++] = k;
		emit(g, GEV_CARD_USED, GEV_TO_ALL, 3, cc->id, cchar(g, c)->id, t);
		return true;
	}
	case CARD_FOOD:
	case CARD_STUFF:
		return fail(g, "this card takes no character and target");
	}
	play_to_waste(g, p, k);
	emit(g, GEV_CARD_USED, GEV_TO_ALL, 3, cc->id, cchar(g, c)->id, t);
	waste_changed(g, 1);
	if (cc->type == CARD_SCISSORS)
		emit(g, GEV_ZOMBIE_KILLED, GEV_TO_ALL, 3, cchar(g, c)->id, loc_id(g, l), t);
	return true;
}

static bool cmd_use_card(struct game *g, int p, const struct cmd *cmd)
{
	int k = card_index(g, cmd->card);
	if (!in_hand(g, p, k))
		return fail(g, "card is not in your hand");
	if (!cmd->has_target)
		return use_card_plain(g, p, k);
	int c = own_character(g, p, cmd->character);
	if (c < 0)
		return false;
	if (is_equipment(g->cfg->cards[k].type) && g->rules == RULES_BASE)
		return fail(g, "equipment cards cannot be played in this edition");
	return use_card_target(g, p, k, c, cmd->target);
}

static bool cmd_use_ability(struct game *g, int p, const struct cmd *cmd)
{
	int c = own_character(g, p, cmd->character);
	if (c < 0)
		return false;
	struct char_state *cs = &g->chars[c];
	const struct config_ability *ab = &cchar(g, c)->ability;
	int l = cs->loc;
	int t = cmd->target;
	switch (ab->type) {
	case ABILITY_FEED:
		if (cmd->has_target)
			return fail(g, "FEED takes no target");
		if (cs->uses >= 1)
			return fail(g, "ability already used this round");
		cs->uses++;
		g->food = java_add(g->food, ab->num_food);
		emit(g, GEV_ABILITY_USED, GEV_TO_ALL, 1, cmd->character);
		return true;
	case ABILITY_HEAL: {
		if (!cmd->has_target)
			return fail(g, "HEAL needs a target character");
		if (cs->uses >= 1)
			return fail(g, "ability already used this round");
		const char *err = NULL;
		int tc = heal_target(g, l, t, &err);
		if (tc < 0)
			return fail(g, err);
		cs->uses++;
		heal(g, tc);
		emit(g, GEV_ABILITY_USED, GEV_TO_ALL, 2, cmd->character, t);
		return true;
	}
	case ABILITY_BARRICADE: {
		if (!cmd->has_target)
			return fail(g, "BARRICADE needs a target entrance");
		if (cs->uses >= ab->max_activations)
			return fail(g, "no activations left this round");
		if (t < 0 || t >= entrances(g, l))
			return fail(g, E_NO_ENTRANCE);
		int space = space_at(g, l, t);
		if (space <= 0)
			return fail(g, E_NO_SPACE);
		cs->uses++;
		g->locs[l].barricades[t] += space < ab->num_barricades ? space : ab->num_barricades;
		emit(g, GEV_ABILITY_USED, GEV_TO_ALL, 2, cmd->character, t);
		return true;
	}
	case ABILITY_KILL: {
		if (!cmd->has_target)
			return fail(g, "KILL needs a target entrance");
		if (cs->uses >= ab->max_activations)
			return fail(g, "no activations left this round");
		if (loc_id(g, l) != ab->location)
			return fail(g, "KILL cannot be used at this location");
		if (ab->children && g->locs[g->colony].children == 0)
			return fail(g, "KILL needs a child in the colony");
		if (t < 0 || t >= entrances(g, l))
			return fail(g, E_NO_ENTRANCE);
		if (g->locs[l].zombies[t] == 0)
			return fail(g, E_NO_ZOMBIE);
		struct player_state *ps = &g->players[p];
		int d = die_at_least(ps, ab->die_value);
		if (d < 0)
			return fail(g, E_NO_DIE);
		die_remove(ps, d);
		cs->uses++;
		int z = g->locs[l].zombies[t] < ab->num_zombies ? g->locs[l].zombies[t]
		                                                : ab->num_zombies;
		g->locs[l].zombies[t] -= z;
		emit(g, GEV_ABILITY_USED, GEV_TO_ALL, 2, cmd->character, t);
		for (int i = 0; i < z; i++)
			emit(g, GEV_ZOMBIE_KILLED, GEV_TO_ALL, 3, cmd->character, loc_id(g, l), t);
		if (ab->infection_die)
			injure(g, c, roll_infection(g));
		return true;
	}
	case ABILITY_WOUND:
	case ABILITY_NO_INFECTION:
	case ABILITY_SEARCH:
	case ABILITY_TRASH:
		return fail(g, "a passive ability cannot be used");
	}
	return true;
}

static bool turn_command(struct game *g, int p, const struct cmd *cmd)
{
	switch (cmd->type) {
	case CMD_REGISTER:
	case CMD_START_GAME:
		return fail(g, "the game has already started");
	case CMD_SELECT_CHARACTERS:
		return fail(g, "characters were already selected");
	case CMD_LEAVE:
		do_leave(g, p);
		return true;
	case CMD_END_TURN:
		g->turn_ended = true;
		return true;
	case CMD_MOVE:
		return cmd_move(g, p, cmd);
	case CMD_SEARCH:
		return cmd_search(g, p, cmd);
	case CMD_ATTACK:
		return cmd_attack(g, p, cmd);
	case CMD_BARRICADE:
		return cmd_barricade(g, p, cmd);
	case CMD_CLEAN_WASTE:
		return cmd_clean(g, p, cmd);
	case CMD_CONTRIBUTE_CARD:
		return cmd_contribute(g, p, cmd);
	case CMD_USE_CARD:
		return cmd_use_card(g, p, cmd);
	case CMD_USE_ABILITY:
		return cmd_use_ability(g, p, cmd);
	}
	return fail(g, "unknown command");
}

/* ---- phases --------------------------------------------------------- */

static int registration_command(struct game *g, int player, const struct cmd *cmd)
{
	switch (cmd->type) {
	case CMD_REGISTER: {
		if (player != GAME_NO_PLAYER) {
			fail(g, "already registered");
			return player;
		}
		int p = g->nplayers++;
		struct player_state *ps = &g->players[p];
		const char *name = cmd->name ? cmd->name : "";
		ps->name = xstrdup(name);
		ps->in_game = true;
		struct game_event *e = game_event_list_push(g->out, GEV_CONFIG, p);
		e->str = g->cfg->text;
		if (g->nplayers == g->cfg->max_players) {
			start_game(g);
			advance(g);
		}
		return p;
	}
	case CMD_START_GAME:
		if (player == GAME_NO_PLAYER) {
			fail(g, "register first");
			return player;
		}
		start_game(g);
		advance(g);
		return player;
	default:
		emit(g, GEV_REGISTRATION_ABORTED, GEV_TO_ALL, 0);
		g->phase = PH_OVER;
		return player;
	}
}

static bool selection_command(struct game *g, int player, const struct cmd *cmd)
{
	if (cmd->type == CMD_REGISTER || cmd->type == CMD_START_GAME)
		return fail(g, "the game has already started");
	if (cmd->type != CMD_SELECT_CHARACTERS)
		return fail(g, "characters are being selected");
	if (player != g->sel || !g->sel_waiting)
		return fail(g, "it is not your turn to select characters");
	struct player_state *ps = &g->players[player];
	int a = -1, b = -1;
	for (int i = 0; i < 4; i++) {
		if (cchar(g, ps->offered[i])->id == cmd->character)
			a = i;
		if (cchar(g, ps->offered[i])->id == cmd->character2)
			b = i;
	}
	if (cmd->character == cmd->character2)
		return fail(g, "select two different characters");
	if (a < 0 || b < 0)
		return fail(g, "select two of the characters offered to you");
	int first = cmd->character < cmd->character2 ? a : b;
	int second = first == a ? b : a;
	g->sel_waiting = false;
	int picks[2] = {ps->offered[first], ps->offered[second]};
	for (int i = 0; i < 2; i++)
		place_character(g, picks[i], player);
	for (int i = 0; i < 4; i++)
		if (i != a && i != b)
			unused_append(g, ps->offered[i]);
	for (int i = 0; i < 5; i++)
		draw_card(g, player, g->colony);
	advance(g);
	return true;
}

int game_apply(struct game *g, int player, const struct cmd *cmd, struct game_event_list *out)
{
	g->out = out;
	switch (g->phase) {
	case PH_REGISTRATION:
		return registration_command(g, player, cmd);
	case PH_SELECTION:
		selection_command(g, player, cmd);
		break;
	case PH_TURN:
		if (player < 0 || player != g->active || !g->turn_waiting) {
			fail(g, player < 0 ? "register first" : "it is not your turn");
			break;
		}
		turn_command(g, player, cmd);
		g->prompt = true;
		advance(g);
		break;
	case PH_OVER:
		fail(g, "the game is over");
		break;
	}
	return player;
}

void game_timeout(struct game *g, struct game_event_list *out)
{
	g->out = out;
	switch (g->phase) {
	case PH_REGISTRATION:
		emit(g, GEV_REGISTRATION_ABORTED, GEV_TO_ALL, 0);
		g->phase = PH_OVER;
		return;
	case PH_SELECTION:
		if (g->sel_waiting)
			selection_leave(g, g->sel);
		break;
	case PH_TURN:
		if (g->turn_waiting)
			do_leave(g, g->active);
		break;
	case PH_OVER:
		return;
	}
	advance(g);
}

void game_disconnect(struct game *g, int player, struct game_event_list *out)
{
	g->out = out;
	if (player < 0 || player >= g->nplayers)
		return;
	g->players[player].disconnected = true;
	advance(g);
}

int game_waiting_for(const struct game *g)
{
	switch (g->phase) {
	case PH_REGISTRATION:
		return GAME_WAIT_ANY;
	case PH_SELECTION:
		return g->sel;
	case PH_TURN:
		return g->active;
	case PH_OVER:
		break;
	}
	return GAME_WAIT_NONE;
}

bool game_is_over(const struct game *g)
{
	return g->phase == PH_OVER;
}

struct rng game_rng_peek(const struct game *g)
{
	return g->rng;
}

enum game_rules game_rules_of(const struct game *g)
{
	return g->rules;
}

int game_player_count(const struct game *g)
{
	return g->nplayers;
}

bool game_rules_parse(const char *s, enum game_rules *out)
{
	if (strcmp(s, "base") == 0)
		*out = RULES_BASE;
	else if (strcmp(s, "revised") == 0)
		*out = RULES_REVISED;
	else
		return false;
	return true;
}

const char *game_rules_name(enum game_rules r)
{
	return r == RULES_REVISED ? "revised" : "base";
}

/* ---- lifecycle ------------------------------------------------------- */

struct game *game_new(const struct config *cfg, int64_t seed, enum game_rules rules)
{
	struct game *g = xcalloc(1, sizeof *g);
	g->cfg = cfg;
	g->rules = rules;
	rng_init(&g->rng, seed);
	g->phase = PH_REGISTRATION;
	g->active = -1;
	g->sel = -1;
	g->colony = cfg->colony;

	g->players = xcalloc((size_t)cfg->max_players, sizeof *g->players);
	for (int p = 0; p < cfg->max_players; p++)
		g->players[p].dice = xcalloc((size_t)cfg->ncharacters + 1, sizeof(int));

	g->chars = xcalloc((size_t)cfg->ncharacters, sizeof *g->chars);
	g->unused = xcalloc((size_t)cfg->ncharacters, sizeof(int));
	g->spawn_order = xcalloc((size_t)cfg->ncharacters, sizeof(int));
	for (int c = 0; c < cfg->ncharacters; c++) {
		g->chars[c].owner = -1;
		g->unused[c] = c;
	}
	g->nunused = cfg->ncharacters;

	g->cards = xcalloc((size_t)cfg->ncards, sizeof *g->cards);
	g->card_ids = xcalloc((size_t)cfg->ncards, sizeof *g->card_ids);
	for (int k = 0; k < cfg->ncards; k++) {
		g->cards[k].place = CP_GONE; /* not in any stack */
		g->cards[k].holder = -1;
		g->card_ids[k] = (struct id_index){cfg->cards[k].id, k};
	}
	qsort(g->card_ids, (size_t)cfg->ncards, sizeof *g->card_ids, cmp_id_index);

	struct id_index *order = xcalloc((size_t)cfg->nlocations, sizeof *order);
	for (int l = 0; l < cfg->nlocations; l++)
		order[l] = (struct id_index){cfg->locations[l].id, l};
	qsort(order, (size_t)cfg->nlocations, sizeof *order, cmp_id_index);
	g->loc_order = xcalloc((size_t)cfg->nlocations, sizeof(int));
	for (int l = 0; l < cfg->nlocations; l++)
		g->loc_order[l] = order[l].index;
	free(order);

	g->locs = xcalloc((size_t)cfg->nlocations, sizeof *g->locs);
	for (int l = 0; l < cfg->nlocations; l++) {
		const struct config_location *cl = &cfg->locations[l];
		struct loc_state *ls = &g->locs[l];
		ls->zombies = xcalloc((size_t)cl->entrances, sizeof(int));
		ls->barricades = xcalloc((size_t)cl->entrances, sizeof(int));
		ls->deck = xcalloc((size_t)cl->ncards, sizeof(int));
		ls->ndeck = cl->ncards;
		for (int i = 0; i < cl->ncards; i++) {
			int k = card_index(g, cl->cards[i]);
			ls->deck[i] = k;
			if (k >= 0)
				g->cards[k].place = CP_DECK;
		}
	}
	g->waste_pile = xcalloc((size_t)cfg->ncards, sizeof(int));
	g->crisis_pile = xcalloc((size_t)cfg->ncrises, sizeof(int));
	for (int i = 0; i < cfg->ncrises; i++)
		g->crisis_pile[i] = i;
	return g;
}

void game_free(struct game *g)
{
	if (!g)
		return;
	for (int p = 0; p < g->cfg->max_players; p++) {
		free(g->players[p].name);
		free(g->players[p].dice);
		free(g->players[p].hand);
	}
	free(g->players);
	for (int c = 0; c < g->cfg->ncharacters; c++)
		free(g->chars[c].equip);
	free(g->chars);
	free(g->unused);
	free(g->spawn_order);
	free(g->cards);
	free(g->card_ids);
	for (int l = 0; l < g->cfg->nlocations; l++) {
		free(g->locs[l].zombies);
		free(g->locs[l].barricades);
		free(g->locs[l].deck);
	}
	free(g->locs);
	free(g->loc_order);
	free(g->crisis_pile);
	free(g->waste_pile);
	free(g);
}

/* ---- invariants ------------------------------------------------------ */

const char *game_check_invariants(const struct game *g)
{
	const struct config *cfg = g->cfg;
	if (g->phase == PH_TURN && g->moral <= 0)
		return "morale <= 0 while the game goes on";
	for (int l = 0; l < cfg->nlocations; l++) {
		const struct loc_state *ls = &g->locs[l];
		for (int e = 0; e < entrances(g, l); e++) {
			if (ls->zombies[e] < 0 || ls->barricades[e] < 0)
				return "negative zombies or barricades";
			if (ls->zombies[e] + ls->barricades[e] > SPACES_PER_ENTRANCE)
				return "more than 3 zombies+barricades at an entrance";
		}
		if (l != g->colony && chars_at(g, l) > cfg->locations[l].survivor_spaces)
			return "location over capacity";
		if (ls->children < 0 || (l != g->colony && ls->children != 0))
			return "children outside the colony";
		if (ls->top < 0 || ls->top > ls->ndeck)
			return "deck pointer out of range";
		for (int i = ls->top; i < ls->ndeck; i++)
			if (g->cards[ls->deck[i]].place != CP_DECK)
				return "a card in a deck is also elsewhere";
	}
	int held = 0;
	for (int p = 0; p < g->nplayers; p++) {
		const struct player_state *ps = &g->players[p];
		if (ps->ndice < 0 || ps->ndice > cfg->ncharacters + 1)
			return "dice count out of range";
		for (int i = 0; i < ps->ndice; i++)
			if (ps->dice[i] < 1 || ps->dice[i] > 6 ||
			    (i > 0 && ps->dice[i - 1] > ps->dice[i]))
				return "bad die value or order";
		for (int i = 0; i < ps->nhand; i++)
			if (g->cards[ps->hand[i]].place != CP_HAND ||
			    g->cards[ps->hand[i]].holder != p)
				return "a card in a hand is also elsewhere";
		held += ps->nhand;
		if (!ps->in_game && ps->nhand != 0)
			return "a player out of the game holds cards";
	}
	int in_hands = 0, waste = 0;
	for (int k = 0; k < cfg->ncards; k++) {
		if (g->cards[k].place == CP_HAND)
			in_hands++;
		if (g->cards[k].place == CP_WASTE)
			waste++;
		if (g->cards[k].place == CP_EQUIPPED) {
			int c = g->cards[k].holder;
			if (c < 0 || !is_alive(g, c))
				return "equipment on a character not in play";
		}
	}
	if (in_hands != held)
		return "hand card count mismatch";
	if (waste != g->waste)
		return "waste pile count mismatch";
	for (int c = 0; c < cfg->ncharacters; c++) {
		const struct char_state *cs = &g->chars[c];
		if (cs->life == CH_ALIVE &&
		    (cs->wounds + cs->frostbites >= 3 || cs->wounds < 0 || cs->frostbites < 0))
			return "a living character with 3 injuries";
		/* a game lost in the middle of a Leave stops killing */
		if (g->phase != PH_OVER && cs->life == CH_ALIVE &&
		    (cs->owner < 0 || !g->players[cs->owner].in_game))
			return "a living character without a player";
	}
	return NULL;
}
