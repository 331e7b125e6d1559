/*
 * menu: the commands a player can send now, one kind (command type) at a
 * time, each with a label in words. The commands are the engine's legal
 * commands of the player (command.h: client_cmds_update), so a menu offers
 * exactly what the server accepts; a kind's items come in the engine's
 * order, a choice listed twice (SelectCharacters' pair in both orders) once.
 * No ncurses here: the unit test builds the menus of recorded boards.
 */
#ifndef SOPRA_CLIENT_MENU_H
#define SOPRA_CLIENT_MENU_H

#include <stdbool.h>

#include "model.h"
#include "sopra/game.h"

#define MENU_MAX_ITEMS 400

struct menu_item {
	char label[120];
	struct cmd cmd; /* cmd.name (Register) points into the list it came from */
};

struct menu {
	enum cmd_type kind;
	int n;
	struct menu_item items[MENU_MAX_ITEMS];
};

/* Fill out with the commands of type `kind` among legal (the player's
 * legal commands now), labelled with m's names; returns out->n. */
int menu_build(const struct model *m, const struct game_cmd_list *legal, enum cmd_type kind,
               struct menu *out);
/* The command type whose menu key is ch, or -1. */
int menu_kind_of_key(int ch);

#endif
