/*
 * ui: the ncurses screen: the board (header, locations, characters, hand
 * and dice), the event log, the action bar, the status line, an open menu
 * and the help screen. It only draws; sopra-client.c handles the keys.
 */
#ifndef SOPRA_CLIENT_UI_H
#define SOPRA_CLIENT_UI_H

#include <stdbool.h>

#include "app.h"
#include "look.h"
#include "menu.h"

struct view {
	bool help;
	bool menu_open;
	struct menu menu;
	int menu_sel;   /* highlighted item */
	int scroll;     /* log lines scrolled back from the newest */
	bool history;   /* the whole log on the whole screen (Ctrl-P) */
	bool look_open; /* the look list (;) */
	struct look_list look;
	int look_sel;
	bool info_open; /* the words about one thing looked at */
	struct look_text info;
	int secs_left; /* the server's timeout for our move: seconds left, -1 none */
	bool prompting;
	const char *prompt; /* "Command" / "Go to step" */
	char input[512];
	int ninput;
	bool confirm_quit;
	int step, nsteps; /* replay */
};

void ui_init(void);
void ui_end(void);
void ui_draw(const struct app *a, const struct view *v);
/* items of an open menu per page, for the key handling (notes: rows of
 * notes shown above the items) */
int ui_menu_page_size(int notes);
/* rows the notes of mn take in a menu */
int ui_menu_note_rows(const struct menu *mn);
/* the key that picks item i of a page ('1'..'9', 'a'..'z'), 0 none */
int ui_item_key(int i);

#endif
