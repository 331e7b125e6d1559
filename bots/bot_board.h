/*
 * bot_board: facts a bot derives from a view (sopra/game_view.h) -- how many
 * mouths the colony feeds, what the next colony phase's zombies will do to
 * the board as it stands, which cards in hand fit the crisis.
 *
 * Pure functions of the view and its configuration; the evaluation
 * (bot_eval.h) and the rollout policy (bot_policy.h) are built on them. Indices
 * are the configuration's, as in the view.
 */
#ifndef SOPRA_BOTS_BOARD_H
#define SOPRA_BOTS_BOARD_H

#include <stdbool.h>

#include "sopra/config.h"
#include "sopra/game_view.h"

/* ---- ids ------------------------------------------------------------------------ */

/* Commands name cards, characters and locations by id, views by index:
 * an index of the ids of one configuration, built once (it borrows cfg). */
struct bot_ids;

struct bot_ids *bot_ids_new(const struct config *cfg);
void bot_ids_free(struct bot_ids *ids);

/* The configuration index of an id, or -1 when no such id exists. */
int bot_card_index(const struct bot_ids *ids, int id);
int bot_char_index(const struct bot_ids *ids, int id);
int bot_loc_index(const struct bot_ids *ids, int id);

/* ---- the board ------------------------------------------------------------------ */

/* Living characters at location l. */
int bot_chars_at(const struct game_view *v, int l);

/* Children plus living characters in the colony: the mouths fed and the
 * count the colony's zombies are drawn from. */
int bot_colony_people(const struct game_view *v);

/* The food the colony eats in its next colony phase: ceil(people / 2). */
int bot_food_need(const struct game_view *v);

/* The food a player could add from its hand (FOOD cards' amounts). */
int bot_hand_food(const struct game_view *v, int player);

/* The food every hand holds together. */
int bot_team_hand_food(const struct game_view *v);

/* The kind of crisis (enum crisis_type) a card of type t may be
 * contributed to. */
enum crisis_type bot_card_crisis_kind(enum card_type t);

/* Whether card k fits the crisis now (may be contributed to it). */
bool bot_card_fits_crisis(const struct game_view *v, int k);

/* Cards in every hand that fit the current crisis. */
int bot_team_fitting_cards(const struct game_view *v);

/*
 * The entrances of one location, copied from a view so that a bot can try
 * what a command would change (a zombie less, a barricade more) and ask
 * what the next colony phase's zombies would then do.
 */
#define BOT_MAX_ENTRANCES 32

struct bot_gate {
	int n; /* entrances (at most BOT_MAX_ENTRANCES are modelled) */
	int zombies[BOT_MAX_ENTRANCES];
	int barricades[BOT_MAX_ENTRANCES];
	int people; /* who can die there: children and characters */
};

void bot_gate_of(const struct game_view *v, int l, struct bot_gate *g);

/* The deaths `arrivals` zombies bring at g, as rules section 8 step 5 has
 * it: they try the entrances 0, 1, ... in turn; a full entrance loses a
 * barricade if it has one, else one of the people dies. g is not changed. */
int bot_gate_deaths(const struct bot_gate *g, int arrivals);

/* bot_gate_deaths for location l of v as it stands. */
int bot_zombie_deaths(const struct game_view *v, int l, int arrivals);

/* The zombies the next colony phase sends to location l: ceil(people / 2)
 * at the colony, the characters there elsewhere. */
int bot_zombie_arrivals(const struct game_view *v, int l);

/* Free spaces (3 - zombies - barricades) at entrance e of location l. */
int bot_free_spaces(const struct game_view *v, int l, int e);

/* Cards left in location l's pile (searching draws from it). */
int bot_deck_left(const struct game_view *v, int l);

/* Rounds still to play after the current one (0 in the last). */
int bot_rounds_after(const struct game_view *v);

/* The index of the player's first living character at location l, or -1. */
int bot_character_at(const struct game_view *v, int player, int l);

#endif
