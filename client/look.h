/*
 * look: what a person can look at with the look key (';', as in nethack)
 * and what the client says about it, in words: any character (its
 * attack, search, social status and ability, where it is, its injuries),
 * location (room, cards left, each entrance), card (what playing or
 * contributing it does) and the crisis. Also the short facts the menus
 * show (a character's stats in one line) and the dangers the board shows
 * when they are near (a full entrance, food short, starvation).
 *
 * Everything here reads the model only (model.h) and writes text: no
 * ncurses, so the unit test checks the words.
 */
#ifndef SOPRA_CLIENT_LOOK_H
#define SOPRA_CLIENT_LOOK_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

enum look_kind { LOOK_CRISIS, LOOK_LOCATION, LOOK_CHARACTER, LOOK_CARD };

struct look_item {
	enum look_kind kind;
	int index; /* into the model's crises, locs, chars or cards */
	char label[120];
};

#define LOOK_MAX_ITEMS 600

struct look_list {
	int n;
	struct look_item items[LOOK_MAX_ITEMS];
};

/* Everything there is to look at now, in this order: the crisis (once one
 * is drawn), the locations, the characters (ours, then the others in play,
 * then those not in play yet, each with its one-line stats), the cards in
 * our hand, then the cards in the others' hands and those worn as
 * equipment. Returns out->n. */
int look_list_build(const struct model *m, struct look_list *out);

#define LOOK_MAX_LINES 14
#define LOOK_LINE_LEN  200

struct look_text {
	int n;
	char lines[LOOK_MAX_LINES][LOOK_LINE_LEN];
};

/* The words about one thing (kind and index as in struct look_item). */
void look_describe(const struct model *m, enum look_kind kind, int index, struct look_text *out);

/* A character's numbers in one line: "attack 4+ search 2+ status 22". */
void look_char_stats(const struct model *m, int c, char *buf, size_t n);
/* A character's ability in words: "search: draws 2 cards at Police
 * Station, 2 times a round". */
void look_ability(const struct model *m, int c, char *buf, size_t n);

/* ---- dangers ------------------------------------------------------------------------ */

#define LOOK_MAX_DANGERS 8

struct look_dangers {
	int n;
	char text[LOOK_MAX_DANGERS][120];
};

/* The dangers that are near, the worst first: a full entrance (zombies +
 * barricades = 3, no barricade: the next zombie kills the weakest there or
 * a child), the colony short of food for the next colony phase, the
 * starvation tokens' morale loss, waste that costs morale, a character one
 * injury from death or with a frostbite, morale about to run out. */
int look_dangers(const struct model *m, struct look_dangers *out);

#endif
