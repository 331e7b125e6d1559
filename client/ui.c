/*
 * ui: drawing the client's screen with ncurses (ui.h).
 *
 * Layout: two header rows (round, food, morale, waste, starvation tokens,
 * children; crisis, goal, whose turn), then the board: one row per location
 * (its entrances' zombies and barricades, its pile, who stands there), the
 * characters (owner, place, wounds, frostbite), the players' hands and our
 * dice. The event log takes the rest: below the board on a small terminal,
 * to its right from 120 columns on. The last two rows are the action bar
 * (what is possible now, with its key) and the status line.
 */
#include "ui.h"

#include "describe.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

enum { PAIR_TITLE = 1, PAIR_ERR, PAIR_OK, PAIR_MENU, PAIR_ME };

void ui_init(void)
{
	initscr();
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	if (has_colors()) {
		start_color();
		use_default_colors();
		init_pair(PAIR_TITLE, COLOR_CYAN, -1);
		init_pair(PAIR_ERR, COLOR_RED, -1);
		init_pair(PAIR_OK, COLOR_GREEN, -1);
		init_pair(PAIR_MENU, COLOR_BLACK, COLOR_WHITE);
		init_pair(PAIR_ME, COLOR_YELLOW, -1);
	}
}

void ui_end(void)
{
	endwin();
}

int ui_item_key(int i)
{
	if (i < 9)
		return '1' + i;
	if (i < 9 + 26)
		return 'a' + (i - 9);
	return 0;
}

/* text at (y, x), cut to w columns */
static void put(int y, int x, int w, const char *s)
{
	if (w > 0 && y >= 0 && y < LINES)
		mvaddnstr(y, x, s, w);
}

static void title(int y, int x, int w, const char *s)
{
	attron(COLOR_PAIR(PAIR_TITLE) | A_BOLD);
	char buf[512];
	snprintf(buf, sizeof buf, "-- %s ", s);
	int n = (int)strlen(buf);
	put(y, x, w, buf);
	for (int i = n; i < w; i++)
		mvaddch(y, x + i, '-');
	attroff(COLOR_PAIR(PAIR_TITLE) | A_BOLD);
}

static const char *mode_name(const struct app *a)
{
	return a->mode == APP_WATCH ? "WATCH" : a->mode == APP_REPLAY ? "REPLAY" : "PLAY";
}

static void draw_header(const struct app *a, const struct view *v, int W)
{
	const struct model *m = &a->m;
	char buf[512], round[48];
	if (m->rounds_seen == 0)
		snprintf(round, sizeof round, "Round -/%d", m->rounds);
	else if (a->revised)
		snprintf(round, sizeof round, "Round %d/%d (%d left)", m->rounds - m->round + 1,
		         m->rounds, m->round);
	else
		snprintf(round, sizeof round, "Round %d/%d", m->round, m->rounds);
	snprintf(buf, sizeof buf,
	         "%s  Food %d (eats %d)  Morale %d  Waste %d  Starvation %d  Children %d", round,
	         m->food, model_food_need(m), m->moral, m->waste, m->tokens, m->children);
	attron(A_BOLD);
	put(0, 0, W, buf);
	attroff(A_BOLD);
	char mode[64];
	if (a->mode == APP_REPLAY)
		snprintf(mode, sizeof mode, "[%s %d/%d %s]", mode_name(a), v->step, v->nsteps,
		         a->revised ? "revised" : "base");
	else
		snprintf(mode, sizeof mode, "[%s %s]", mode_name(a),
		         a->revised ? "revised" : "base");
	int n = (int)strlen(mode);
	if (W - n > (int)strlen(buf) + 1)
		put(0, W - n, n, mode);

	char crisis[96], turn[96];
	if (m->crisis >= 0) {
		const struct model_crisis *c = &m->crises[m->crisis];
		snprintf(crisis, sizeof crisis, "Crisis: %s %d/%d (fail %+d)",
		         model_card_type_names[c->type], m->contributed, c->required, c->moral);
	} else {
		snprintf(crisis, sizeof crisis, "Crisis: -");
	}
	if (m->result != MODEL_RUNNING)
		snprintf(turn, sizeof turn, "Game over: %s",
		         m->result == MODEL_WON    ? "WON"
		         : m->result == MODEL_LOST ? "LOST"
		                                   : "aborted");
	else if (m->colony_phase)
		snprintf(turn, sizeof turn, "Turn: colony phase");
	else if (a->turn >= 0 && a->turn < m->nplayers)
		snprintf(turn, sizeof turn, "Turn: %s%s", m->player_names[a->turn],
		         a->turn == m->me ? " (you)" : "");
	else
		snprintf(turn, sizeof turn, "Turn: -");
	const char *goal = m->goal == MODEL_GOAL_SURVIVE      ? "survive"
	                   : m->goal == MODEL_GOAL_BARRICADES ? "barricades"
	                                                      : "zombies";
	snprintf(buf, sizeof buf, "%s  Goal: %s %d%s  %s", crisis, goal,
	         m->goal == MODEL_GOAL_SURVIVE ? m->rounds : m->goal_value,
	         m->goal == MODEL_GOAL_SURVIVE ? " rounds" : "", turn);
	put(1, 0, W, buf);
}

/* "Ava, Ben" at location l: first names when short is set */
static void who_at(const struct model *m, int l, bool shortnames, char *out, size_t n)
{
	out[0] = '\0';
	for (int c = 0; c < m->nchars; c++) {
		if (!m->chars[c].alive || m->chars[c].loc != l)
			continue;
		char nm[64];
		snprintf(nm, sizeof nm, "%s", model_char_name(m, c));
		if (shortnames)
			nm[strcspn(nm, " ")] = '\0';
		size_t len = strlen(out);
		snprintf(out + len, n - len, "%s%s%s", len ? " " : "", nm,
		         m->chars[c].owner == m->me && m->me >= 0 ? "*" : "");
	}
}

static int draw_locations(const struct app *a, int y, int x, int w)
{
	const struct model *m = &a->m;
	title(y++, x, w, "Locations: entrance zombies(z)/barricades(b), pile, who (*: yours)");
	int namew = w >= 100 ? 18 : 14;
	for (int l = 0; l < m->nlocs; l++) {
		const struct model_location *L = &m->locs[l];
		char buf[1024], ent[256] = "", who[512];
		for (int e = 0; e < L->entrances; e++) {
			size_t n = strlen(ent);
			snprintf(ent + n, sizeof ent - n, "%se%d:%dz%db", e ? " " : "", e,
			         L->zombies[e], L->barricades[e]);
		}
		who_at(m, l, w < 100, who, sizeof who);
		char pile[24] = "";
		if (!L->colony)
			snprintf(pile, sizeof pile, "%2d/%d", model_chars_at(m, l), L->spaces);
		snprintf(buf, sizeof buf, "%-*.*s %-5s %-*s %s", namew, namew, model_loc_name(m, l),
		         pile, w >= 100 ? 30 : 22, ent, who);
		put(y++, x, w, buf);
	}
	return y;
}

static void char_cell(const struct model *m, int c, bool wide, char *buf, size_t n)
{
	const struct model_character *ch = &m->chars[c];
	const char *owner =
	        ch->owner >= 0 && ch->owner < m->nplayers ? m->player_names[ch->owner] : "?";
	char state[48];
	if (!ch->alive)
		snprintf(state, sizeof state, "%s", ch->bitten ? "died (bitten)" : "died");
	else
		snprintf(state, sizeof state, "W%d F%d%s", ch->wounds, ch->frost,
		         ch->moved ? " m" : "");
	if (wide)
		snprintf(buf, n, "%-16.16s %-10.10s %-16.16s %s%s", model_char_name(m, c), owner,
		         ch->alive ? model_loc_name(m, ch->loc) : "-", state,
		         ch->nequip ? " eq" : "");
	else
		snprintf(buf, n, "%-11.11s %-6.6s %-10.10s %s", model_char_name(m, c), owner,
		         ch->alive ? model_loc_name(m, ch->loc) : "-", state);
}

static int draw_characters(const struct app *a, int y, int x, int w, int maxy)
{
	const struct model *m = &a->m;
	title(y++, x, w, "Characters: owner, place, wounds(W) frostbite(F), m: moved");
	int cols = (w >= 76 && w < 90) || w >= 120 ? 2 : 1, colw = w / cols, k = 0;
	for (int c = 0; c < m->nchars && y < maxy; c++) {
		if (!m->chars[c].spawned)
			continue;
		char buf[256];
		char_cell(m, c, colw >= 60, buf, sizeof buf);
		bool me = m->chars[c].owner == m->me && m->me >= 0;
		if (me)
			attron(COLOR_PAIR(PAIR_ME));
		put(y, x + (k % cols) * colw, colw - 1, buf);
		if (me)
			attroff(COLOR_PAIR(PAIR_ME));
		if (++k % cols == 0)
			y++;
	}
	return k % cols ? y + 1 : y;
}

/* our hand and dice, the others' hand sizes */
static int draw_hand(const struct app *a, int y, int x, int w, int maxy)
{
	const struct model *m = &a->m;
	char buf[2048];
	size_t n = 0;
	if (m->me >= 0) {
		n += (size_t)snprintf(buf, sizeof buf, "Dice:");
		for (int i = 0; i < m->ndice; i++)
			n += (size_t)snprintf(buf + n, sizeof buf - n, " %d", m->dice[i]);
		if (m->ndice == 0)
			n += (size_t)snprintf(buf + n, sizeof buf - n, " -");
		n += (size_t)snprintf(buf + n, sizeof buf - n, "  Hand:");
		for (int k = 0; k < m->ncards && n < sizeof buf - 64; k++) {
			if (m->cards[k].holder != m->me)
				continue;
			char lab[64];
			model_card_label(m, k, lab, sizeof lab);
			n += (size_t)snprintf(buf + n, sizeof buf - n, " %s,", lab);
		}
		if (buf[n - 1] == ',')
			buf[--n] = '\0';
	}
	n += (size_t)snprintf(buf + n, sizeof buf - n, "%sCards:", n ? "  " : "");
	for (int p = 0; p < m->nplayers && n < sizeof buf - 80; p++)
		n += (size_t)snprintf(buf + n, sizeof buf - n, " %s %d%s", m->player_names[p],
		                      model_hand_size(m, p), m->player_in[p] ? "" : " (left)");
	/* wrap at w, between words */
	for (size_t off = 0; off < n && y < maxy;) {
		size_t len = n - off;
		if (len > (size_t)w) {
			len = (size_t)w;
			while (len > 1 && buf[off + len] != ' ')
				len--;
			if (len <= 1)
				len = (size_t)w;
		}
		mvaddnstr(y++, x, buf + off, (int)len);
		off += len;
		while (off < n && buf[off] == ' ')
			off++;
	}
	return y;
}

static void draw_log(const struct app *a, const struct view *v, int top, int bottom, int x, int w)
{
	int rows = bottom - top;
	if (rows <= 1)
		return;
	title(top, x, w, v->scroll ? "Events (scrolled back: Down/End)" : "Events");
	rows--;
	int last = a->nlog - v->scroll;
	int first = last - rows < 0 ? 0 : last - rows;
	for (int i = first, y = top + 1; i < last; i++, y++) {
		bool err = strncmp(a->log[i], "!!", 2) == 0 || strstr(a->log[i], "failed:") != NULL;
		if (err)
			attron(COLOR_PAIR(PAIR_ERR));
		put(y, x, w, a->log[i]);
		if (err)
			attroff(COLOR_PAIR(PAIR_ERR));
	}
}

int ui_menu_page_size(void)
{
	int rows = LINES - 6;
	return rows > 35 ? 35 : rows < 1 ? 1 : rows;
}

static void draw_menu(const struct view *v)
{
	const struct menu *mn = &v->menu;
	int per = ui_menu_page_size(), page = v->menu_sel / per;
	int first = page * per, cnt = mn->n - first < per ? mn->n - first : per;
	int w = COLS < 72 ? COLS : 72, x = COLS - w, top = 2;
	attron(COLOR_PAIR(PAIR_MENU));
	char buf[256];
	snprintf(buf, sizeof buf, " %s: key or Up/Down+Enter, Esc back%s",
	         client_command(mn->kind)->menu, mn->n > per ? ", PgUp/PgDn" : "");
	mvhline(top, x, ' ', w);
	put(top, x, w, buf);
	for (int i = 0; i < cnt; i++) {
		const struct menu_item *it = &mn->items[first + i];
		snprintf(buf, sizeof buf, " [%c] %s", ui_item_key(i), it->label);
		mvhline(top + 1 + i, x, ' ', w);
		if (first + i == v->menu_sel)
			attron(A_REVERSE);
		put(top + 1 + i, x, w, buf);
		if (first + i == v->menu_sel)
			attroff(A_REVERSE);
	}
	mvhline(top + 1 + cnt, x, ' ', w);
	if (mn->n > per) {
		snprintf(buf, sizeof buf, " page %d/%d", page + 1, (mn->n + per - 1) / per);
		put(top + 1 + cnt, x, w, buf);
	}
	attroff(COLOR_PAIR(PAIR_MENU));
}

static const char *const help_text[] = {
        "sopra-client: keys",
        "",
        "Playing (the action bar shows what is possible now):",
        "  S start the game   p pick characters   m move   s search   a attack",
        "  b barricade   w clean waste   c contribute a card   u use a card",
        "  y use an ability   e end turn   L leave the game   r raw command (JSON)",
        "  In a menu: the key in [ ], or Up/Down + Enter; PgUp/PgDn pages; Esc back.",
        "Everywhere:",
        "  Up/Down scroll the event log, End back to the newest;  ? help;  q quit",
        "Replay (--replay FILE):",
        "  Right/l one event on, Left/h one back, PgDn/] next round, PgUp/[ previous",
        "  Home/End first/last, g go to a step number",
        "",
        "Board: e0:2z1b = entrance 0 has 2 zombies and 1 barricade; 2/3 = characters",
        "at a location / its room; * marks your characters; W wounds, F frostbite.",
        "",
        "Press any key to close this help.",
};

static void draw_help(void)
{
	erase();
	int n = (int)(sizeof help_text / sizeof help_text[0]);
	for (int i = 0; i < n && i < LINES; i++)
		put(i, 1, COLS - 1, help_text[i]);
}

static void draw_bars(const struct app *a, const struct view *v, int W, int H)
{
	char buf[512];
	size_t n = 0;
	buf[0] = '\0';
	if (a->mode == APP_PLAY) {
		static struct menu probe;
		int nk;
		const enum cmd_type *kinds = client_menu_order(&nk);
		for (int i = 0; i < nk && n < sizeof buf - 40; i++)
			if (menu_build(&a->m, &a->cmds.legal, kinds[i], &probe) > 0)
				n += (size_t)snprintf(buf + n, sizeof buf - n, "%c:%s ",
				                      client_command(kinds[i])->key,
				                      client_command(kinds[i])->menu);
		if (a->m.my_turn)
			n += (size_t)snprintf(buf + n, sizeof buf - n, "r:Raw ");
	} else if (a->mode == APP_REPLAY) {
		n += (size_t)snprintf(buf, sizeof buf,
		                      "Left/Right: step  PgUp/PgDn: round  g: go to ");
	}
	snprintf(buf + n, sizeof buf - n, "?:Help q:Quit");
	attron(A_REVERSE);
	mvhline(H - 2, 0, ' ', W);
	put(H - 2, 0, W, buf);
	attroff(A_REVERSE);
	move(H - 1, 0);
	clrtoeol();
	if (v->prompting) {
		snprintf(buf, sizeof buf, "%s: %.*s_", v->prompt, v->ninput, v->input);
		put(H - 1, 0, W, buf);
	} else if (v->confirm_quit) {
		put(H - 1, 0, W, "Quit the game? (y: yes, any other key: no)");
	} else {
		int pair = a->status_err ? PAIR_ERR : PAIR_OK;
		attron(COLOR_PAIR(pair) | (a->status_err ? A_BOLD : 0));
		put(H - 1, 0, W, a->status);
		attroff(COLOR_PAIR(pair) | A_BOLD);
	}
}

void ui_draw(const struct app *a, const struct view *v)
{
	int W = COLS, H = LINES;
	erase();
	if (v->help) {
		draw_help();
		refresh();
		return;
	}
	draw_header(a, v, W);
	bool side = W >= 120;
	int bw = side ? W - (W * 2 / 5) - 1 : W, bottom = H - 2;
	int y = 2;
	if (a->m.got_config) {
		y = draw_locations(a, y, 0, bw);
		y = draw_characters(a, y, 0, bw, bottom - 2);
		y = draw_hand(a, y, 0, bw, bottom - 1);
	}
	if (side) {
		mvvline(2, bw, '|', bottom - 2);
		draw_log(a, v, 2, bottom, bw + 1, W - bw - 1);
	} else {
		draw_log(a, v, y, bottom, 0, W);
	}
	if (v->menu_open)
		draw_menu(v);
	draw_bars(a, v, W, H);
	refresh();
}
