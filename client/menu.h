/*
 * menu: the commands a player can send now, one kind (command type) at a
 * time, each with a label in words. The commands are the engine's legal
 * commands of the player (command.h: client_cmds_update), so a menu offers
 * exactly what the server accepts; a kind's items come in the engine's
 * order, a choice listed twice (a pair of characters in both orders) once.
 * No ncurses here: the unit test builds the menus of recorded boards.
 */
#ifndef SOPRA_CLIENT_MENU_H
#define SOPRA_CLIENT_MENU_H

#include <stdbool.h>

#include "command.h"
#include "model.h"
#include "sopra/game.h"

#define MENU_MAX_ITEMS 400
#define MENU_MAX_NOTES 4

struct menu_item {
	char label[120];
	struct cmd cmd; /* cmd.name (a NAME) points into the list it came from */
};

struct menu {
	enum cmd_type kind;
	int n;
	struct menu_item items[MENU_MAX_ITEMS];
	/* what the choice needs to be made well, shown above the items: the
	 * offered characters' stats and abilities when picking characters */
	int nnotes;
	char notes[MENU_MAX_NOTES][300];
};

/* Fill out with the commands of type `kind` among legal (the player's
 * legal commands now), labelled with m's names, and its notes; returns
 * out->n. */
int menu_build(const struct model *m, const struct game_cmd_list *legal, enum cmd_type kind,
               struct menu *out);
/* Why the menu of `kind` is empty (menu_build gave 0 items), in words,
 * into buf: the game's phase or turn, else the reason the server would
 * give for each of our characters (cc's game: client_cmds_refusal), e.g.
 * "Tom Kowalski: nothing left to search here; Ravi Anand: no action die
 * high enough". */
void menu_why_not(const struct model *m, const struct client_cmds *cc, enum cmd_type kind,
                  char *buf, size_t n);
/* The command type whose menu key is ch, or -1. */
int menu_kind_of_key(int ch);

#endif
