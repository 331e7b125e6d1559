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
 *
 * Commands: game_apply checks who may speak (sender_gate), then
 * run_command looks the command up in command_rules, made from the command
 * table (cmd_table.h): the phase it belongs to, its shared preconditions
 * (enum command_needs, resolved into a struct command before the handler
 * runs) and its handler.
 * Every CommandFailed message comes from GAME_ERRORS.
 *
 * The state (struct game) is in game_internal.h, shared with game_legal.c
 * (the legal commands) and game_view.c (a player's view); a game is one
 * allocation, laid out by game_layout, so that game_clone is a copy.
 */
#include "sopra/game.h"

#include <stdarg.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "game_internal.h"
#include "sopra/rng.h"
#include "sopra/xalloc.h"

/* ---- failure messages ------------------------------------------------ */

/*
 * Every CommandFailed message the game sends: X(ERR_ID, "message"). The
 * texts go to the clients as they are; behaviour.md fixes which check fails
 * first, this table what it says. Handlers name an ERR_ID, never a string.
 */
#define GAME_ERRORS(X)                                                                  \
	/* game_apply: who may speak, and which phase a command belongs to */           \
	X(ERR_GAME_OVER, "the game is over")                                            \
	X(ERR_REGISTER_FIRST, "register first")                                         \
	X(ERR_ALREADY_REGISTERED, "already registered")                                 \
	X(ERR_ALREADY_STARTED, "the game has already started")                          \
	X(ERR_BEING_SELECTED, "characters are being selected")                          \
	X(ERR_ALREADY_SELECTED, "characters were already selected")                     \
	X(ERR_NOT_YOUR_TURN, "it is not your turn")                                     \
	X(ERR_UNKNOWN_COMMAND, "unknown command")                                       \
	/* SelectCharacters */                                                          \
	X(ERR_NOT_YOUR_SELECTION, "it is not your turn to select characters")           \
	X(ERR_SAME_CHARACTER_TWICE, "select two different characters")                  \
	X(ERR_NOT_OFFERED, "select two of the characters offered to you")               \
	/* the shared preconditions (enum command_needs) */                             \
	X(ERR_CARD_NOT_IN_HAND, "card is not in your hand")                             \
	X(ERR_NOT_YOUR_CHARACTER, "no living character of yours with that id")          \
	X(ERR_NO_DICE, "no action die left")                                            \
	X(ERR_NO_DIE_HIGH_ENOUGH, "no action die high enough")                          \
	/* targets: entrances, locations, characters */                                 \
	X(ERR_NO_ENTRANCE, "no such entrance at the character's location")              \
	X(ERR_NO_ZOMBIE, "no zombie at that entrance")                                  \
	X(ERR_NO_SPACE, "no free space at that entrance")                               \
	X(ERR_ALREADY_MOVED, "character has already moved this round")                  \
	X(ERR_NO_LOCATION, "no such location")                                          \
	X(ERR_ALREADY_THERE, "character is already at that location")                   \
	X(ERR_NO_ROOM, "no room at that location")                                      \
	X(ERR_TARGET_NOT_HERE, "target is not a living character at the same location") \
	X(ERR_TARGET_NOT_INJURED, "target has no wound or frostbite")                   \
	/* Move, Search, CleanWaste, ContributeCard */                                  \
	X(ERR_NO_FUEL_CARD, "no FUEL card in hand")                                     \
	X(ERR_NOTHING_TO_SEARCH, "nothing left to search here")                         \
	X(ERR_NOT_IN_COLONY, "character is not in the colony")                          \
	X(ERR_WASTE_EMPTY, "the waste pile is empty")                                   \
	X(ERR_ALREADY_CLEANED, "waste was already cleaned this round")                  \
	X(ERR_CARD_NOT_FOR_CRISIS, "card does not fit the current crisis")              \
	/* UseCard */                                                                   \
	X(ERR_NO_DIE_TO_REROLL, "no action die to reroll")                              \
	X(ERR_CARD_NEEDS_TARGET, "this card needs a character and a target")            \
	X(ERR_CARD_TAKES_NO_TARGET, "this card takes no character and target")          \
	X(ERR_FUEL_WITH_MOVE, "FUEL is played with Move in this edition")               \
	X(ERR_NO_EQUIPMENT_IN_BASE, "equipment cards cannot be played in this edition") \
	/* UseAbility */                                                                \
	X(ERR_FEED_TAKES_NO_TARGET, "FEED takes no target")                             \
	X(ERR_HEAL_NEEDS_TARGET, "HEAL needs a target character")                       \
	X(ERR_BARRICADE_NEEDS_TARGET, "BARRICADE needs a target entrance")              \
	X(ERR_KILL_NEEDS_TARGET, "KILL needs a target entrance")                        \
	X(ERR_ABILITY_USED, "ability already used this round")                          \
	X(ERR_NO_ACTIVATIONS_LEFT, "no activations left this round")                    \
	X(ERR_KILL_WRONG_LOCATION, "KILL cannot be used at this location")              \
	X(ERR_KILL_NEEDS_CHILD, "KILL needs a child in the colony")                     \
	X(ERR_PASSIVE_ABILITY, "a passive ability cannot be used")

enum game_err {
	ERR_NONE, /* every check passed; never sent */
#define GAME_ERR_ENUM(id, msg) id,
	GAME_ERRORS(GAME_ERR_ENUM)
#undef GAME_ERR_ENUM
};

static const char *const game_err_msg[] = {
#define GAME_ERR_MSG(id, msg) [id] = (msg),
        GAME_ERRORS(GAME_ERR_MSG)
#undef GAME_ERR_MSG
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

/* CommandFailed(err) to the sender; returns false for `return fail(...)`.
 * err is never ERR_NONE. */
static bool fail(struct game *g, enum game_err err)
{
	struct game_event *e = game_event_list_push(g->out, GEV_COMMAND_FAILED, GEV_TO_SENDER);
	e->str = game_err_msg[err];
	return false;
}

/* The outcome of a check: CommandFailed(err) unless err is ERR_NONE.
 * Returns true when the command was refused. */
static bool refused(struct game *g, enum game_err err)
{
	if (err == ERR_NONE)
		return false;
	fail(g, err);
	return true;
}

int game_char_index(const struct game *g, int id)
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

/* A binary search of card_ids, written out: it runs for every card of every
 * pile when a game is built (game_new, game_from_view). */
int game_card_index(const struct game *g, int id)
{
	int lo = 0, hi = g->cfg->ncards - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		int at = g->card_ids[mid].id;
		if (at == id)
			return g->card_ids[mid].index;
		if (at < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* Sort v[0..n) by id, unless it is sorted already (cards are usually
 * listed in ascending id). */
static void sort_by_id(struct id_index *v, int n)
{
	for (int i = 1; i < n; i++)
		if (v[i - 1].id > v[i].id) {
			qsort(v, (size_t)n, sizeof *v, cmp_id_index);
			return;
		}
}

int game_loc_index(const struct game *g, int id)
{
	for (int i = 0; i < g->cfg->nlocations; i++)
		if (g->cfg->locations[i].id == id)
			return i;
	return -1;
}

static int living_count(const struct game *g, int p)
{
	int n = 0;
	for (int c = 0; c < g->cfg->ncharacters; c++)
		if (owned(g, p, c))
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

/* Card k is now at `place`, held by no one. */
static void card_to(struct game *g, int k, enum card_place place)
{
	g->cards[k].place = place;
	g->cards[k].holder = -1;
}

void game_list_push(struct game *g, struct card_list *l, int k)
{
	struct card_state *cs = &g->cards[k];
	cs->prev = l->last;
	cs->next = -1;
	if (l->last >= 0)
		g->cards[l->last].next = k;
	else
		l->first = k;
	l->last = k;
	l->n++;
}

/* Take card k out of list l (it must be in it). */
static void list_unlink(struct game *g, struct card_list *l, int k)
{
	struct card_state *cs = &g->cards[k];
	if (cs->prev >= 0)
		g->cards[cs->prev].next = cs->next;
	else
		l->first = cs->next;
	if (cs->next >= 0)
		g->cards[cs->next].prev = cs->prev;
	else
		l->last = cs->prev;
	cs->prev = cs->next = -1;
	l->n--;
}

static void hand_add(struct game *g, int p, int k)
{
	game_list_push(g, &g->players[p].hand, k);
	g->cards[k].place = CP_HAND;
	g->cards[k].holder = p;
}

/* Take card k out of p's hand and put it at `place`. */
static void hand_remove(struct game *g, int p, int k, enum card_place place)
{
	list_unlink(g, &g->players[p].hand, k);
	card_to(g, k, place);
}

/* The cards of list l leave the game; l becomes empty. */
static void cards_gone(struct game *g, struct card_list *l)
{
	for (int k = l->first, next; k >= 0; k = next) {
		next = g->cards[k].next;
		card_to(g, k, CP_GONE);
		g->cards[k].prev = g->cards[k].next = -1;
	}
	*l = (struct card_list){-1, -1, 0};
}

static void hand_vanish(struct game *g, int p)
{
	cards_gone(g, &g->players[p].hand);
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

/* ---- morale, death and infection (section 7) -------------------------- */

static bool over(const struct game *g)
{
	return g->phase == PH_OVER;
}

const char game_reason_aborted[] = "registration aborted";
const char game_reason_won[] = "won: the goal was reached";

const char *game_end_text(const struct game *g, bool win)
{
	if (win)
		return game_reason_won;
	if (g->moral <= 0)
		return "lost: morale fell to 0";
	return "lost: the last round ended";
}

static void game_end(struct game *g, bool win)
{
	emit(g, GEV_GAME_END, GEV_TO_ALL, 1, win ? 1 : 0);
	g->phase = PH_OVER;
	g->end_reason = game_end_text(g, win);
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
	cards_gone(g, &g->chars[c].equip);
	g->chars[c].life = CH_DEAD;
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

/* Registration ends without a game (behaviour.md 2): a command other than
 * Register or StartGame, or the timeout. */
static void abort_registration(struct game *g)
{
	emit(g, GEV_REGISTRATION_ABORTED, GEV_TO_ALL, 0);
	g->phase = PH_OVER;
	g->end_reason = game_reason_aborted;
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

/* Turn start (behaviour.md 4.4): for each of p's characters in the order p
 * got them, each frostbite adds one wound (Wounded); the frostbites stay
 * until healed. Three injuries kill (section 7); the step goes on with p's
 * next character and stops at GameEnd. */
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
		for (int k = cs->equip.first; k >= 0; k = g->cards[k].next)
			g->cards[k].spent = false;
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

/* ---- the shared preconditions of commands (behaviour.md 5, 6) ------------ */

/*
 * A command row's preconditions (command_rules[].needs), checked before its
 * handler runs, always in this order; the first that fails sends its
 * CommandFailed and the handler does not run. The *_DIE ones need
 * NEEDS_OWN_CHARACTER, whose character they look at.
 */
enum command_needs {
	NEEDS_NEW_CONNECTION = 1u << 0,   /* the sender has not registered */
	NEEDS_REGISTERED = 1u << 1,       /* the sender has registered */
	NEEDS_SELECTING_PLAYER = 1u << 2, /* the sender is the player choosing characters */
	NEEDS_CARD_IN_HAND = 1u << 3,     /* cmd->card is in the sender's hand */
	NEEDS_OWN_CHARACTER = 1u << 4,    /* cmd->character is a living character of the sender */
	NEEDS_OWN_CHARACTER_IF_TARGET = 1u << 5, /* the same, when cmd->has_target */
	NEEDS_A_DIE = 1u << 6,                   /* the sender holds an action die */
	NEEDS_SEARCH_DIE = 1u << 7, /* a die >= the character's search value ("needs v") */
	NEEDS_ATTACK_DIE = 1u << 8, /* a die >= the character's attack value */
};

/* A command being run: the decoded command and what its preconditions
 * resolved. A field is -1 unless the command's row asks for it. */
struct command {
	const struct cmd *cmd;
	int player;    /* the sender; GAME_NO_PLAYER until Register gives it an id */
	int character; /* NEEDS_OWN_CHARACTER*: the index of cmd->character */
	int card;      /* NEEDS_CARD_IN_HAND: the index of cmd->card */
	int die;       /* NEEDS_*_DIE: the index in the sender's dice of the die to use */
};

static enum game_err sender_error(const struct game *g, unsigned needs, int p)
{
	if ((needs & NEEDS_NEW_CONNECTION) && p != GAME_NO_PLAYER)
		return ERR_ALREADY_REGISTERED;
	if ((needs & NEEDS_REGISTERED) && p == GAME_NO_PLAYER)
		return ERR_REGISTER_FIRST;
	if ((needs & NEEDS_SELECTING_PLAYER) && (p != g->sel || !g->sel_waiting))
		return ERR_NOT_YOUR_SELECTION;
	return ERR_NONE;
}

/* The die checks; the SMALLEST die >= v is the one a command uses. */
static enum game_err resolve_die(const struct game *g, unsigned needs, struct command *x)
{
	if ((needs & NEEDS_A_DIE) && g->players[x->player].ndice == 0)
		return ERR_NO_DICE;
	if (!(needs & (NEEDS_SEARCH_DIE | NEEDS_ATTACK_DIE)))
		return ERR_NONE;
	const struct config_character *cc = cchar(g, x->character);
	int v = (needs & NEEDS_SEARCH_DIE) ? cc->search : cc->attack;
	x->die = die_at_least(&g->players[x->player], v);
	return x->die < 0 ? ERR_NO_DIE_HIGH_ENOUGH : ERR_NONE;
}

/* Check `needs` in enum command_needs' order and fill in x's indices. */
static enum game_err resolve_needs(const struct game *g, unsigned needs, struct command *x)
{
	enum game_err err = sender_error(g, needs, x->player);
	if (err != ERR_NONE)
		return err;
	const struct cmd *cmd = x->cmd;
	if (needs & NEEDS_CARD_IN_HAND) {
		x->card = game_card_index(g, cmd->card);
		if (!in_hand(g, x->player, x->card))
			return ERR_CARD_NOT_IN_HAND;
	}
	if ((needs & NEEDS_OWN_CHARACTER) ||
	    ((needs & NEEDS_OWN_CHARACTER_IF_TARGET) && cmd->has_target)) {
		x->character = game_char_index(g, cmd->character);
		if (!owned(g, x->player, x->character))
			return ERR_NOT_YOUR_CHARACTER;
	}
	return resolve_die(g, needs, x);
}

/* ---- checks shared by several commands -------------------------------- */

enum entrance_need { ENTRANCE_WITH_ZOMBIE, ENTRANCE_WITH_SPACE };

/* Whether entrance e exists at l and has a zombie (Attack, SCISSORS, KILL)
 * or room for a barricade (Barricade, LOCK, BARRICADE). */
static enum game_err entrance_error(const struct game *g, int l, int e, enum entrance_need need)
{
	if (e < 0 || e >= entrances(g, l))
		return ERR_NO_ENTRANCE;
	if (need == ENTRANCE_WITH_ZOMBIE)
		return g->locs[l].zombies[e] > 0 ? ERR_NONE : ERR_NO_ZOMBIE;
	return space_at(g, l, e) > 0 ? ERR_NONE : ERR_NO_SPACE;
}

/* Whether character cs may move to location index l (-1: no such location)
 * this round: the checks of Move and of a FUEL card, in behaviour.md's order. */
static enum game_err move_error(const struct game *g, const struct char_state *cs, int l)
{
	if (cs->moved)
		return ERR_ALREADY_MOVED;
	if (l < 0)
		return ERR_NO_LOCATION;
	if (cs->loc == l)
		return ERR_ALREADY_THERE;
	if (!has_room(g, l))
		return ERR_NO_ROOM;
	return ERR_NONE;
}

/* The index of character id if it is alive at location l, else -1. */
static int character_at(const struct game *g, int l, int id)
{
	int c = game_char_index(g, id);
	return is_alive(g, c) && g->chars[c].loc == l ? c : -1;
}

static void move_character(struct game *g, int c, int l)
{
	g->chars[c].moved = true;
	g->chars[c].loc = l;
}

/* MEDICINE and HEAL on character id at l: one frostbite, else one wound
 * healed; or why not (nothing changed). */
static enum game_err heal(struct game *g, int l, int id)
{
	int tc = character_at(g, l, id);
	if (tc < 0)
		return ERR_TARGET_NOT_HERE;
	struct char_state *ts = &g->chars[tc];
	if (ts->wounds + ts->frostbites == 0)
		return ERR_TARGET_NOT_INJURED;
	if (ts->frostbites > 0)
		ts->frostbites--;
	else
		ts->wounds--;
	return ERR_NONE;
}

/* ---- registration and selection commands (sections 2, 3) -------------- */

/* Register: the connection becomes the next player and gets Config; the
 * game starts when it is full. */
static bool cmd_register(struct game *g, struct command *x)
{
	int p = g->nplayers++;
	struct player_state *ps = &g->players[p];
	ps->name = xstrdup(x->cmd->name ? x->cmd->name : "");
	ps->name_owned = true;
	ps->in_game = true;
	struct game_event *e = game_event_list_push(g->out, GEV_CONFIG, p);
	e->str = g->cfg->text;
	x->player = p;
	if (g->nplayers == g->cfg->max_players)
		start_game(g);
	return true;
}

static bool cmd_start_game(struct game *g, struct command *x)
{
	(void)x;
	start_game(g);
	return true;
}

/* The slot (0..3) of character id among those offered to ps, or -1. */
static int offered_slot(const struct game *g, const struct player_state *ps, int id)
{
	for (int i = 0; i < 4; i++)
		if (cchar(g, ps->offered[i])->id == id)
			return i;
	return -1;
}

/* SelectCharacters: two different ones of the four offered. The lower id
 * spawns first, the other two go back to the unused list in offered order,
 * five cards come from the start pile. */
static bool cmd_select_characters(struct game *g, struct command *x)
{
	const struct cmd *cmd = x->cmd;
	struct player_state *ps = &g->players[x->player];
	if (cmd->character == cmd->character2)
		return fail(g, ERR_SAME_CHARACTER_TWICE);
	int a = offered_slot(g, ps, cmd->character);
	int b = offered_slot(g, ps, cmd->character2);
	if (a < 0 || b < 0)
		return fail(g, ERR_NOT_OFFERED);
	g->sel_waiting = false;
	int first = cmd->character < cmd->character2 ? a : b;
	place_character(g, ps->offered[first], x->player);
	place_character(g, ps->offered[first == a ? b : a], x->player);
	for (int i = 0; i < 4; i++)
		if (i != a && i != b)
			unused_append(g, ps->offered[i]);
	for (int i = 0; i < 5; i++)
		draw_card(g, x->player, g->colony);
	return true;
}

/* ---- in-game commands (section 6) ------------------------------------- */

static bool cmd_leave(struct game *g, struct command *x)
{
	do_leave(g, x->player);
	return true;
}

static bool cmd_end_turn(struct game *g, struct command *x)
{
	(void)x;
	g->turn_ended = true;
	return true;
}

/* The FUEL card with the lowest id in p's hand, or -1. */
static int lowest_fuel_card(const struct game *g, int p)
{
	const struct player_state *ps = &g->players[p];
	int best = -1;
	for (int k = ps->hand.first; k >= 0; k = g->cards[k].next) {
		if (g->cfg->cards[k].type == CARD_FUEL &&
		    (best < 0 || card_id(g, k) < card_id(g, best)))
			best = k;
	}
	return best;
}

/* Move with fuel=true (base): a FUEL card goes to waste instead of the
 * infection roll. */
static bool move_with_fuel(struct game *g, const struct command *x, int l)
{
	int k = lowest_fuel_card(g, x->player);
	if (k < 0)
		return fail(g, ERR_NO_FUEL_CARD);
	play_to_waste(g, x->player, k);
	move_character(g, x->character, l);
	emit(g, GEV_MOVED, GEV_TO_ALL, 3, x->cmd->character, x->cmd->location, 1);
	waste_changed(g, 1);
	return true;
}

static bool cmd_move(struct game *g, struct command *x)
{
	int l = game_loc_index(g, x->cmd->location);
	if (refused(g, move_error(g, &g->chars[x->character], l)))
		return false;
	if (g->rules == RULES_BASE && x->cmd->fuel)
		return move_with_fuel(g, x, l);
	move_character(g, x->character, l);
	if (g->rules == RULES_BASE)
		emit(g, GEV_MOVED, GEV_TO_ALL, 3, x->cmd->character, x->cmd->location, 0);
	else
		emit(g, GEV_MOVED, GEV_TO_ALL, 2, x->cmd->character, x->cmd->location);
	infect_move(g, x->character);
	return true;
}

/* A search's random encounter: a new character for the searcher, 0-3
 * children, no card. */
static void search_encounter(struct game *g, const struct command *x, int l)
{
	emit(g, GEV_SEARCHED, GEV_TO_ALL, 2, x->cmd->character, loc_id(g, l));
	spawn_for(g, x->player);
	int k = rng_next_int(&g->rng, 4);
	for (int i = 0; i < k; i++) {
		g->locs[g->colony].children++;
		emit(g, GEV_CHILD_SPAWNED, GEV_TO_ALL, 0);
	}
}

/* How many cards c draws searching l, spending the one item that gives
 * them: an unspent BLUEPRINT for l (2), else c's SEARCH ability at l with
 * uses left (numCards + 1), else 1. */
static int search_draws(struct game *g, int c, int l)
{
	int blueprint = equipment(g, c, CARD_BLUEPRINT, l);
	const struct config_ability *ab = &cchar(g, c)->ability;
	if (blueprint >= 0) {
		g->cards[blueprint].spent = true;
		return 2;
	}
	if (ab->type == ABILITY_SEARCH && ab->location == loc_id(g, l) &&
	    g->chars[c].uses < ab->max_activations) {
		g->chars[c].uses++;
		return ab->num_cards + 1;
	}
	return 1;
}

static bool cmd_search(struct game *g, struct command *x)
{
	int l = g->chars[x->character].loc;
	struct loc_state *ls = &g->locs[l];
	int left = ls->ndeck - ls->top;
	if (l == g->colony || left <= 0)
		return fail(g, ERR_NOTHING_TO_SEARCH);
	die_remove(&g->players[x->player], x->die);
	if (g->nunused > 0 && rng_next_int(&g->rng, ls->ndeck) == 0) {
		search_encounter(g, x, l);
		return true;
	}
	int n = search_draws(g, x->character, l);
	emit(g, GEV_SEARCHED, GEV_TO_ALL, 2, x->cmd->character, loc_id(g, l));
	for (int i = 0; i < n && i < left; i++)
		draw_card(g, x->player, l);
	return true;
}

static bool cmd_attack(struct game *g, struct command *x)
{
	int c = x->character;
	int l = g->chars[c].loc;
	int e = x->cmd->entrance;
	if (refused(g, entrance_error(g, l, e, ENTRANCE_WITH_ZOMBIE)))
		return false;
	g->locs[l].zombies[e]--;
	die_remove(&g->players[x->player], x->die);
	emit(g, GEV_ZOMBIE_KILLED, GEV_TO_ALL, 3, x->cmd->character, loc_id(g, l), e);
	int colt = equipment(g, c, CARD_COLT, -1);
	if (colt >= 0)
		g->cards[colt].spent = true;
	else if (cchar(g, c)->ability.type != ABILITY_NO_INFECTION)
		injure(g, c, roll_infection(g));
	return true;
}

static bool cmd_barricade(struct game *g, struct command *x)
{
	struct player_state *ps = &g->players[x->player];
	int hammer = equipment(g, x->character, CARD_HAMMER, -1);
	if (hammer < 0 && ps->ndice == 0)
		return fail(g, ERR_NO_DICE);
	int l = g->chars[x->character].loc;
	int e = x->cmd->entrance;
	if (refused(g, entrance_error(g, l, e, ENTRANCE_WITH_SPACE)))
		return false;
	g->locs[l].barricades[e]++;
	if (hammer >= 0)
		g->cards[hammer].spent = true;
	else
		die_remove(ps, 0);
	emit(g, GEV_BARRICADED, GEV_TO_ALL, 3, x->cmd->character, loc_id(g, l), e);
	return true;
}

/* How many cards c's cleaning removes at most, spending what applies, and
 * whether it costs the lowest die: an unspent SWAB 5 without a die, else a
 * TRASH ability numCards (without a die in revised), else 3. */
static int cleaning_amount(struct game *g, int c, bool *uses_die)
{
	int swab = equipment(g, c, CARD_SWAB, -1);
	const struct config_ability *ab = &cchar(g, c)->ability;
	if (swab >= 0) {
		g->cards[swab].spent = true;
		*uses_die = false;
		return 5;
	}
	if (ab->type == ABILITY_TRASH) {
		*uses_die = g->rules == RULES_BASE;
		return ab->num_cards;
	}
	*uses_die = true;
	return 3;
}

static bool cmd_clean_waste(struct game *g, struct command *x)
{
	struct player_state *ps = &g->players[x->player];
	if (g->chars[x->character].loc != g->colony)
		return fail(g, ERR_NOT_IN_COLONY);
	if (g->waste == 0)
		return fail(g, ERR_WASTE_EMPTY);
	if (g->rules == RULES_BASE && ps->cleaned)
		return fail(g, ERR_ALREADY_CLEANED);
	bool uses_die = true;
	int amount = cleaning_amount(g, x->character, &uses_die);
	if (uses_die)
		die_remove(ps, 0);
	ps->cleaned = true;
	int removed = amount < g->waste ? amount : g->waste;
	for (int i = 0; i < removed; i++)
		g->cards[g->waste_pile[--g->waste]].place = CP_GONE;
	waste_changed(g, -removed);
	return true;
}

static bool cmd_contribute_card(struct game *g, struct command *x)
{
	if (!card_fits_crisis(g->cfg->cards[x->card].type, g->cfg->crises[g->crisis].type))
		return fail(g, ERR_CARD_NOT_FOR_CRISIS);
	hand_remove(g, x->player, x->card, CP_GONE);
	g->contributed++;
	emit(g, GEV_CONTRIBUTED, GEV_TO_ALL, 2, x->player, x->cmd->card);
	return true;
}

/* ---- UseCard ---------------------------------------------------------- */

static bool play_food(struct game *g, const struct command *x)
{
	const struct config_card *cc = &g->cfg->cards[x->card];
	play_to_waste(g, x->player, x->card);
	g->food = java_add(g->food, cc->amount);
	emit(g, GEV_CARD_USED, GEV_TO_ALL, 1, cc->id);
	waste_changed(g, 1);
	emit(g, GEV_FOOD_CHANGED, GEV_TO_ALL, 2, cc->amount, (int)FOOD_ADDED);
	return true;
}

/* STUFF: the lowest die is rolled again. */
static bool play_stuff(struct game *g, const struct command *x)
{
	struct player_state *ps = &g->players[x->player];
	if (ps->ndice == 0)
		return fail(g, ERR_NO_DIE_TO_REROLL);
	play_to_waste(g, x->player, x->card);
	die_remove(ps, 0);
	int v = roll_die(g);
	die_insert(ps, v);
	emit(g, GEV_CARD_USED, GEV_TO_ALL, 1, g->cfg->cards[x->card].id);
	waste_changed(g, 1);
	emit(g, GEV_DIE_ROLLED, GEV_TO_ALL, 2, x->player, v);
	return true;
}

/* UseCard(card) without character and target: FOOD or STUFF. */
static bool play_card(struct game *g, const struct command *x)
{
	switch (g->cfg->cards[x->card].type) {
	case CARD_FOOD:
		return play_food(g, x);
	case CARD_STUFF:
		return play_stuff(g, x);
	default:
		return fail(g, ERR_CARD_NEEDS_TARGET);
	}
}

/* FUEL (revised): character c moves to location id without a roll. */
static enum game_err fuel_move(struct game *g, int c, int id)
{
	if (g->rules == RULES_BASE)
		return ERR_FUEL_WITH_MOVE;
	int l = game_loc_index(g, id);
	enum game_err err = move_error(g, &g->chars[c], l);
	if (err == ERR_NONE)
		move_character(g, c, l);
	return err;
}

/* The effect of a card that goes to the waste pile when played on a target
 * (MEDICINE, LOCK, SCISSORS, FUEL): ERR_NONE with the effect applied, or the
 * first failing check with nothing changed. */
static enum game_err card_effect(struct game *g, const struct command *x)
{
	int l = g->chars[x->character].loc;
	int t = x->cmd->target;
	enum game_err err = ERR_NONE;
	switch (g->cfg->cards[x->card].type) {
	case CARD_MEDICINE:
		return heal(g, l, t);
	case CARD_LOCK:
		err = entrance_error(g, l, t, ENTRANCE_WITH_SPACE);
		if (err == ERR_NONE)
			g->locs[l].barricades[t]++;
		return err;
	case CARD_SCISSORS:
		err = entrance_error(g, l, t, ENTRANCE_WITH_ZOMBIE);
		if (err == ERR_NONE)
			g->locs[l].zombies[t]--;
		return err;
	case CARD_FUEL:
		return fuel_move(g, x->character, t);
	default: /* FOOD, STUFF; equipment is equip()'s */
		return ERR_CARD_TAKES_NO_TARGET;
	}
}

/* An equipment card (revised) goes on top of the stack of the target, a
 * living character at c's location: CardUsed only, not to the waste pile. */
static bool equip(struct game *g, const struct command *x)
{
	int k = x->card;
	int tc = character_at(g, g->chars[x->character].loc, x->cmd->target);
	if (tc < 0)
		return fail(g, ERR_TARGET_NOT_HERE);
	hand_remove(g, x->player, k, CP_EQUIPPED);
	g->cards[k].holder = tc;
	g->cards[k].spent = false;
	game_list_push(g, &g->chars[tc].equip, k);
	emit(g, GEV_CARD_USED, GEV_TO_ALL, 3, card_id(g, k), x->cmd->character, x->cmd->target);
	return true;
}

/* UseCard(card, c, target). */
static bool play_card_on_target(struct game *g, const struct command *x)
{
	const struct config_card *cc = &g->cfg->cards[x->card];
	if (is_equipment(cc->type))
		return equip(g, x);
	if (refused(g, card_effect(g, x)))
		return false;
	play_to_waste(g, x->player, x->card);
	emit(g, GEV_CARD_USED, GEV_TO_ALL, 3, cc->id, x->cmd->character, x->cmd->target);
	waste_changed(g, 1);
	if (cc->type == CARD_SCISSORS)
		emit(g, GEV_ZOMBIE_KILLED, GEV_TO_ALL, 3, x->cmd->character,
		     loc_id(g, g->chars[x->character].loc), x->cmd->target);
	return true;
}

static bool cmd_use_card(struct game *g, struct command *x)
{
	if (!x->cmd->has_target)
		return play_card(g, x);
	if (is_equipment(g->cfg->cards[x->card].type) && g->rules == RULES_BASE)
		return fail(g, ERR_NO_EQUIPMENT_IN_BASE);
	return play_card_on_target(g, x);
}

/* ---- UseAbility ------------------------------------------------------- */

static bool use_feed(struct game *g, const struct command *x)
{
	struct char_state *cs = &g->chars[x->character];
	if (x->cmd->has_target)
		return fail(g, ERR_FEED_TAKES_NO_TARGET);
	if (cs->uses >= 1)
		return fail(g, ERR_ABILITY_USED);
	cs->uses++;
	g->food = java_add(g->food, cchar(g, x->character)->ability.num_food);
	emit(g, GEV_ABILITY_USED, GEV_TO_ALL, 1, x->cmd->character);
	return true;
}

static bool use_heal(struct game *g, const struct command *x)
{
	struct char_state *cs = &g->chars[x->character];
	if (!x->cmd->has_target)
		return fail(g, ERR_HEAL_NEEDS_TARGET);
	if (cs->uses >= 1)
		return fail(g, ERR_ABILITY_USED);
	if (refused(g, heal(g, cs->loc, x->cmd->target)))
		return false;
	cs->uses++;
	emit(g, GEV_ABILITY_USED, GEV_TO_ALL, 2, x->cmd->character, x->cmd->target);
	return true;
}

/* BARRICADE: min(space, numBarricades) barricades at entrance target. */
static bool use_barricade(struct game *g, const struct command *x)
{
	struct char_state *cs = &g->chars[x->character];
	const struct config_ability *ab = &cchar(g, x->character)->ability;
	int l = cs->loc;
	int t = x->cmd->target;
	if (!x->cmd->has_target)
		return fail(g, ERR_BARRICADE_NEEDS_TARGET);
	if (cs->uses >= ab->max_activations)
		return fail(g, ERR_NO_ACTIVATIONS_LEFT);
	if (refused(g, entrance_error(g, l, t, ENTRANCE_WITH_SPACE)))
		return false;
	int space = space_at(g, l, t);
	cs->uses++;
	g->locs[l].barricades[t] += space < ab->num_barricades ? space : ab->num_barricades;
	emit(g, GEV_ABILITY_USED, GEV_TO_ALL, 2, x->cmd->character, t);
	return true;
}

/* KILL's checks before the die, in behaviour.md's order. */
static enum game_err kill_error(const struct game *g, const struct command *x)
{
	const struct char_state *cs = &g->chars[x->character];
	const struct config_ability *ab = &cchar(g, x->character)->ability;
	if (!x->cmd->has_target)
		return ERR_KILL_NEEDS_TARGET;
	if (cs->uses >= ab->max_activations)
		return ERR_NO_ACTIVATIONS_LEFT;
	if (loc_id(g, cs->loc) != ab->location)
		return ERR_KILL_WRONG_LOCATION;
	if (ab->children && g->locs[g->colony].children == 0)
		return ERR_KILL_NEEDS_CHILD;
	return entrance_error(g, cs->loc, x->cmd->target, ENTRANCE_WITH_ZOMBIE);
}

/* KILL: up to numZombies zombies at entrance target for a die >= dieValue,
 * then a plain infection roll if the ability says so. */
static bool use_kill(struct game *g, const struct command *x)
{
	int c = x->character;
	const struct config_ability *ab = &cchar(g, c)->ability;
	if (refused(g, kill_error(g, x)))
		return false;
	struct player_state *ps = &g->players[x->player];
	int d = die_at_least(ps, ab->die_value);
	if (d < 0)
		return fail(g, ERR_NO_DIE_HIGH_ENOUGH);
	int l = g->chars[c].loc;
	int t = x->cmd->target;
	die_remove(ps, d);
	g->chars[c].uses++;
	int z = g->locs[l].zombies[t] < ab->num_zombies ? g->locs[l].zombies[t] : ab->num_zombies;
	g->locs[l].zombies[t] -= z;
	emit(g, GEV_ABILITY_USED, GEV_TO_ALL, 2, x->cmd->character, t);
	for (int i = 0; i < z; i++)
		emit(g, GEV_ZOMBIE_KILLED, GEV_TO_ALL, 3, x->cmd->character, loc_id(g, l), t);
	if (ab->infection_die)
		injure(g, c, roll_infection(g));
	return true;
}

static bool cmd_use_ability(struct game *g, struct command *x)
{
	switch (cchar(g, x->character)->ability.type) {
	case ABILITY_FEED:
		return use_feed(g, x);
	case ABILITY_HEAL:
		return use_heal(g, x);
	case ABILITY_BARRICADE:
		return use_barricade(g, x);
	case ABILITY_KILL:
		return use_kill(g, x);
	case ABILITY_WOUND:
	case ABILITY_NO_INFECTION:
	case ABILITY_SEARCH:
	case ABILITY_TRASH:
		return fail(g, ERR_PASSIVE_ABILITY);
	}
	return false; /* not an ability type */
}

#ifdef SOPRA_EXAMPLE_COMMAND
/* Wait, the example command of the test build (cmd_table.h): the sender's
 * character spends its move of the round where it stands. */
static bool cmd_wait(struct game *g, struct command *x)
{
	struct char_state *cs = &g->chars[x->character];
	if (cs->moved)
		return fail(g, ERR_ALREADY_MOVED);
	cs->moved = true;
	return true;
}
#endif

/* ---- the command table and the one dispatch point --------------------- */

/* A handler runs after its row's phase and preconditions held. It makes
 * the command's own checks in behaviour.md's order -- the first failing one
 * sends CommandFailed, and then nothing has changed and nothing was drawn
 * from the rng -- then changes the state and emits the events. Returns
 * whether the command succeeded. */
typedef bool command_handler(struct game *g, struct command *x);

struct command_rule {
	enum phase phase;           /* the one phase in which the command is run */
	enum game_err out_of_phase; /* its CommandFailed in the other phases after
	                               registration (during registration the game
	                               aborts instead) */
	unsigned needs;             /* enum command_needs, resolved into struct command */
	command_handler *handler;
};

/* A row's PHASE (cmd_table.h): the one phase in which the command runs, and
 * its CommandFailed in another phase after the registration (a command of
 * the turns sent during the selection is told that characters are being
 * selected). */
#define COMMAND_PHASE_REGISTRATION PH_REGISTRATION, ERR_ALREADY_STARTED
#define COMMAND_PHASE_SELECTION    PH_SELECTION, ERR_ALREADY_SELECTED
#define COMMAND_PHASE_TURN         PH_TURN, ERR_BEING_SELECTED

/* The game's columns of the command table. */
static const struct command_rule command_rules[CMD_TYPE_COUNT] = {
#define COMMAND_RULE(id, name, phase, needs, handler, legal, params) \
	[CMD_##id] = {COMMAND_PHASE_##phase, (needs), handler},
        SOPRA_COMMANDS(COMMAND_RULE)
#undef COMMAND_RULE
};

#undef COMMAND_PHASE_REGISTRATION
#undef COMMAND_PHASE_SELECTION
#undef COMMAND_PHASE_TURN

/* The row of a command type. A type out of range (every other has its row)
 * belongs to no phase: it aborts registration and fails with
 * ERR_UNKNOWN_COMMAND later. */
static const struct command_rule *command_rule(enum cmd_type type)
{
	static const struct command_rule unknown = {PH_OVER, ERR_UNKNOWN_COMMAND, 0, NULL};
	if ((unsigned)type >= CMD_TYPE_COUNT)
		return &unknown;
	return &command_rules[type];
}

/* Run one command (the sender may speak, see sender_gate): its phase,
 * then its row's preconditions, then its handler. */
static void run_command(struct game *g, struct command *x)
{
	const struct command_rule *rule = command_rule(x->cmd->type);
	if (rule->phase != g->phase) {
		if (g->phase == PH_REGISTRATION)
			abort_registration(g);
		else
			fail(g, rule->out_of_phase);
		return;
	}
	if (refused(g, resolve_needs(g, rule->needs, x)))
		return;
	rule->handler(g, x);
}

/* Who may send a command now, before what it is counts (behaviour.md 4.4,
 * 5): no one once the game is over; during the turns only the active player. */
static enum game_err sender_gate(const struct game *g, int player)
{
	if (g->phase == PH_OVER)
		return ERR_GAME_OVER;
	if (g->phase != PH_TURN)
		return ERR_NONE;
	if (player < 0)
		return ERR_REGISTER_FIRST;
	if (player != g->active || !g->turn_waiting)
		return ERR_NOT_YOUR_TURN;
	return ERR_NONE;
}

int game_apply(struct game *g, int player, const struct cmd *cmd, struct game_event_list *out)
{
	g->out = out;
	if (refused(g, sender_gate(g, player)))
		return player;
	bool in_turn = g->phase == PH_TURN;
	struct command x = {.cmd = cmd, .player = player, .character = -1, .card = -1, .die = -1};
	run_command(g, &x);
	if (in_turn)
		g->prompt = true; /* ActNow again if the turn goes on */
	advance(g);
	return x.player;
}

struct cmd game_registration(const char *name)
{
	return (struct cmd){.type = CMD_REGISTER, .name = name};
}

void game_timeout(struct game *g, struct game_event_list *out)
{
	g->out = out;
	switch (g->phase) {
	case PH_REGISTRATION:
		abort_registration(g);
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

const char *game_end_reason(const struct game *g)
{
	return g->end_reason;
}

int game_round(const struct game *g)
{
	return g->round;
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

/* Point every array of g into g's own block, in one fixed order, and return
 * the block's size; with g NULL only measure. The one place that knows the
 * layout: game_alloc carves a new block with it, game_clone re-points a
 * copied one. */
static size_t game_layout(struct game *g, const struct config *cfg)
{
	char *base = (char *)g;
	size_t off = sizeof(struct game);
#define CARVE(dst, n, T) GAME_CARVE(g, base, off, dst, n, T)
	CARVE(g->players, cfg->max_players, struct player_state);
	for (int p = 0; p < cfg->max_players; p++)
		CARVE(g->players[p].dice, cfg->ncharacters + 1, int);
	CARVE(g->chars, cfg->ncharacters, struct char_state);
	CARVE(g->unused, cfg->ncharacters, int);
	CARVE(g->spawn_order, cfg->ncharacters, int);
	CARVE(g->cards, cfg->ncards, struct card_state);
	CARVE(g->card_ids, cfg->ncards, struct id_index);
	CARVE(g->locs, cfg->nlocations, struct loc_state);
	for (int l = 0; l < cfg->nlocations; l++) {
		const struct config_location *cl = &cfg->locations[l];
		CARVE(g->locs[l].zombies, cl->entrances, int);
		CARVE(g->locs[l].barricades, cl->entrances, int);
		CARVE(g->locs[l].deck, cl->ncards, int);
	}
	CARVE(g->loc_order, cfg->nlocations, int);
	CARVE(g->waste_pile, cfg->ncards, int);
	CARVE(g->crisis_pile, cfg->ncrises, int);
#undef CARVE
	return off;
}

struct game *game_alloc(const struct config *cfg)
{
	size_t size = game_layout(NULL, cfg);
	struct game *g = xcalloc(1, size);
	g->cfg = cfg;
	g->size = size;
	game_layout(g, cfg);
	return g;
}

struct game *game_new(const struct config *cfg, int64_t seed, enum game_rules rules)
{
	struct game *g = game_alloc(cfg);
	g->rules = rules;
	rng_init(&g->rng, seed);
	g->phase = PH_REGISTRATION;
	g->active = -1;
	g->sel = -1;
	g->colony = cfg->colony;

	for (int p = 0; p < cfg->max_players; p++)
		g->players[p].hand = (struct card_list){-1, -1, 0};
	for (int c = 0; c < cfg->ncharacters; c++) {
		g->chars[c].owner = -1;
		g->chars[c].equip = (struct card_list){-1, -1, 0};
		g->unused[c] = c;
	}
	g->nunused = cfg->ncharacters;

	for (int k = 0; k < cfg->ncards; k++) {
		card_to(g, k, CP_GONE); /* not in any stack */
		g->cards[k].prev = g->cards[k].next = -1;
		g->card_ids[k] = (struct id_index){cfg->cards[k].id, k};
	}
	sort_by_id(g->card_ids, cfg->ncards);

	struct id_index *order = xcalloc((size_t)cfg->nlocations, sizeof *order);
	for (int l = 0; l < cfg->nlocations; l++)
		order[l] = (struct id_index){cfg->locations[l].id, l};
	sort_by_id(order, cfg->nlocations);
	for (int l = 0; l < cfg->nlocations; l++)
		g->loc_order[l] = order[l].index;
	free(order);

	for (int l = 0; l < cfg->nlocations; l++) {
		const struct config_location *cl = &cfg->locations[l];
		struct loc_state *ls = &g->locs[l];
		ls->ndeck = cl->ncards;
		for (int i = 0; i < cl->ncards; i++) {
			int k = game_card_index(g, cl->cards[i]);
			ls->deck[i] = k;
			if (k >= 0)
				g->cards[k].place = CP_DECK;
		}
	}
	for (int i = 0; i < cfg->ncrises; i++)
		g->crisis_pile[i] = i;
	return g;
}

struct game *game_clone(const struct game *g)
{
	size_t names = 0;
	for (int p = 0; p < g->nplayers; p++)
		if (g->players[p].name)
			names += strlen(g->players[p].name) + 1;
	struct game *c = xmalloc(g->size + names);
	memcpy(c, g, g->size);
	game_layout(c, g->cfg);
	c->out = NULL;
	char *tail = (char *)c + g->size;
	for (int p = 0; p < g->nplayers; p++) {
		struct player_state *ps = &c->players[p];
		if (!ps->name)
			continue;
		size_t len = strlen(ps->name) + 1;
		memcpy(tail, ps->name, len);
		ps->name = tail;
		ps->name_owned = false;
		tail += len;
	}
	return c;
}

void game_free(struct game *g)
{
	if (!g)
		return;
	for (int p = 0; p < g->nplayers; p++)
		if (g->players[p].name_owned)
			free(g->players[p].name);
	free(g);
}

/* ---- invariants ------------------------------------------------------ */

/* Whether list l is well linked, counts its cards, and holds only cards at
 * `place` held by `holder`: NULL, or what is wrong. */
static const char *list_error(const struct game *g, const struct card_list *l,
                              enum card_place place, int holder)
{
	int n = 0, prev = -1;
	for (int k = l->first; k >= 0; k = g->cards[k].next) {
		if (k >= g->cfg->ncards || g->cards[k].prev != prev || ++n > l->n)
			return "a broken hand or equipment list";
		if (g->cards[k].place != place || g->cards[k].holder != holder)
			return "a card in a hand or an equipment list is also elsewhere";
		prev = k;
	}
	return n == l->n && l->last == prev ? NULL : "a broken hand or equipment list";
}

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
		const char *bad = list_error(g, &ps->hand, CP_HAND, p);
		if (bad)
			return bad;
		held += ps->hand.n;
		if (!ps->in_game && ps->hand.n != 0)
			return "a player out of the game holds cards";
	}
	int in_hands = 0, waste = 0, equipped = 0, on_chars = 0;
	for (int c = 0; c < cfg->ncharacters; c++) {
		const char *bad = list_error(g, &g->chars[c].equip, CP_EQUIPPED, c);
		if (bad)
			return bad;
		on_chars += g->chars[c].equip.n;
	}
	for (int k = 0; k < cfg->ncards; k++) {
		if (g->cards[k].place == CP_HAND)
			in_hands++;
		if (g->cards[k].place == CP_WASTE)
			waste++;
		if (g->cards[k].place == CP_EQUIPPED) {
			int c = g->cards[k].holder;
			if (c < 0 || !is_alive(g, c))
				return "equipment on a character not in play";
			equipped++;
		}
	}
	if (in_hands != held || equipped != on_chars)
		return "hand or equipment card count mismatch";
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

/* ---- a readable summary of the state (sopra-replay --at) ----------------- */

static const char *describe_card(const struct game *g, int k, char *buf, size_t len)
{
	static const char *const types[CARD_TYPE_COUNT] = {
	        "FOOD",   "FUEL",       "STUFF", "MEDICINE", "LOCK",     "SCISSORS",
	        "HAMMER", "SNOW_BOOTS", "COLT",  "SWAB",     "BLUEPRINT"};
	const struct config_card *cc = &g->cfg->cards[k];
	if (cc->type == CARD_FOOD)
		snprintf(buf, len, "%d FOOD(%d)", cc->id, cc->amount);
	else
		snprintf(buf, len, "%d %s", cc->id, types[cc->type]);
	return buf;
}

void game_describe(const struct game *g, FILE *out)
{
	static const char *const phases[] = {"registration", "character selection", "turns",
	                                     "over"};
	static const char *const crises[] = {"FOOD", "STUFF", "MEDICINE", "FUEL"};
	const struct config *cfg = g->cfg;
	char card[64];
	fprintf(out, "phase: %s", phases[g->phase]);
	if (game_waiting_for(g) >= 0)
		fprintf(out, ", waiting for player %d", game_waiting_for(g));
	fprintf(out, "\nround %d of %d, food %d, morale %d, waste %d, starvation tokens %d\n",
	        g->round, cfg->goal.rounds, g->food, g->moral, g->waste, g->starvation);
	if (g->round > 0) {
		const struct config_crisis *cr = &cfg->crises[g->crisis];
		fprintf(out, "crisis %d: %s, %d cards required, %d contributed, fail: morale -%d\n",
		        cr->id, crises[cr->type], cr->required_cards, g->contributed,
		        cr->moral_change);
	}
	fputs("players:\n", out);
	for (int p = 0; p < g->nplayers; p++) {
		const struct player_state *ps = &g->players[p];
		fprintf(out, "  %d %s: %s%s; dice", p, ps->name ? ps->name : "",
		        ps->in_game ? "in the game" : "left",
		        ps->disconnected ? ", disconnected" : "");
		for (int i = 0; i < ps->ndice; i++)
			fprintf(out, " %d", ps->dice[i]);
		fputs(ps->ndice ? "; hand:" : " none; hand:", out);
		for (int k = ps->hand.first; k >= 0; k = g->cards[k].next)
			fprintf(out, "%s %s", k != ps->hand.first ? "," : "",
			        describe_card(g, k, card, sizeof card));
		fputs(ps->hand.n ? "\n" : " empty\n", out);
	}
	fputs("locations (per entrance: zombies/barricades):\n", out);
	for (int i = 0; i < cfg->nlocations; i++) {
		int l = g->loc_order[i];
		const struct config_location *cl = &cfg->locations[l];
		const struct loc_state *ls = &g->locs[l];
		fprintf(out, "  %d %s:", cl->id, cl->name);
		for (int e = 0; e < cl->entrances; e++)
			fprintf(out, " %d/%d", ls->zombies[e], ls->barricades[e]);
		if (cl->is_colony)
			fprintf(out, "; children %d", ls->children);
		fprintf(out, "; %d cards to search; characters:", ls->ndeck - ls->top);
		int here = 0;
		for (int c = 0; c < cfg->ncharacters; c++)
			if (g->chars[c].life == CH_ALIVE && g->chars[c].loc == l) {
				fprintf(out, " %d", cfg->characters[c].id);
				here++;
			}
		fputs(here ? "\n" : " none\n", out);
	}
	fputs("characters in play:\n", out);
	for (int c = 0; c < cfg->ncharacters; c++) {
		const struct char_state *cs = &g->chars[c];
		if (cs->life == CH_UNUSED)
			continue;
		const struct config_character *cc = &cfg->characters[c];
		if (cs->life == CH_DEAD) {
			fprintf(out, "  %d %s: dead\n", cc->id, cc->name);
			continue;
		}
		fprintf(out, "  %d %s (player %d) at %d: wounds %d, frostbite %d%s%s", cc->id,
		        cc->name, cs->owner, cfg->locations[cs->loc].id, cs->wounds, cs->frostbites,
		        cs->moved ? ", moved" : "", cs->uses ? ", ability used" : "");
		for (int k = cs->equip.first; k >= 0; k = g->cards[k].next)
			fprintf(out, "%s %s", k != cs->equip.first ? "," : "; equipment",
			        describe_card(g, k, card, sizeof card));
		fputc('\n', out);
	}
}
