/*
 * menu: the commands a player can send now, derived from the model alone
 * (rules.md section 6: each check the client can make before sending).
 * One action kind at a time (Move, Search, ...); each item is one complete
 * command with a label in words. No ncurses here: the unit test builds the
 * menus of recorded boards.
 */
#ifndef SOPRA_CLIENT_MENU_H
#define SOPRA_CLIENT_MENU_H

#include <stdbool.h>

#include "model.h"

#define MENU_MAX_ITEMS 400

enum menu_action {
	ACT_START,
	ACT_SELECT,
	ACT_MOVE,
	ACT_SEARCH,
	ACT_ATTACK,
	ACT_BARRICADE,
	ACT_CLEAN,
	ACT_CONTRIBUTE,
	ACT_CARD,
	ACT_ABILITY,
	ACT_END,
	ACT_LEAVE,
	ACT_COUNT
};

struct menu_item {
	char label[120];
	char cmd[200]; /* the JSON line, without "\n" */
	enum model_pending pend;
	int pend_char;
};

struct menu {
	enum menu_action kind;
	int n;
	struct menu_item items[MENU_MAX_ITEMS];
};

/* key and name of each action kind ('s', "Search") */
extern const char menu_keys[ACT_COUNT];
extern const char *const menu_names[ACT_COUNT];

/* Fill out with every command of kind k possible now; returns out->n. */
int menu_build(const struct model *m, enum menu_action k, struct menu *out);
/* The action kind bound to key ch, or -1. */
int menu_action_of_key(int ch);
/* A character's short name (its configured name, or "#id"). */
const char *menu_char_name(const struct model *m, int c);
/* A location's name ("Colony" for the colony). */
const char *menu_loc_name(const struct model *m, int l);
/* "food(2) #105", "lock #9" */
void menu_card_label(const struct model *m, int k, char *buf, int n);

#endif
