/*
 * ui: drawing the client's screen with ncurses (ui.h).
 *
 * Layout: two header rows (round, food, morale, waste, starvation tokens,
 * children and the mode badge; crisis, goal, whose turn), then the board:
 * one row per location (people there and its room, cards left in its pile,
 * its entrances' zombies and barricades, who stands there), the characters
 * (owner, place, wounds, frostbite), our dice and hand, every player's
 * cards, and the dangers near. The event log takes the rest: below the
 * board on a small terminal, to its right from 120 columns on; its entries
 * wrap. The last two rows are the action bar (what is possible now, with
 * its key) and the status line (with the timeout's countdown on the right
 * while the server waits for us). Menus, the look list and what a look
 * shows are drawn over the board; help and the message history take the
 * whole screen.
 *
 * Colour marks threats (red: deadly, yellow: close) unless the terminal
 * has none or NO_COLOR is set (https://no-color.org); then bold marks the
 * deadly ones.
 */
#include "ui.h"

#include "describe.h"
#include "wrap.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PAIR_TITLE = 1, PAIR_ERR, PAIR_OK, PAIR_MENU, PAIR_ME, PAIR_DANGER, PAIR_WARN };

static bool colour; /* colours are on: the terminal has them and NO_COLOR is not set */

void ui_init(void)
{
	initscr();
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	const char *no_colour = getenv("NO_COLOR");
	colour = has_colors() && !(no_colour && *no_colour);
	if (colour) {
		start_color();
		use_default_colors();
		init_pair(PAIR_TITLE, COLOR_CYAN, -1);
		init_pair(PAIR_ERR, COLOR_RED, -1);
		init_pair(PAIR_OK, COLOR_GREEN, -1);
		init_pair(PAIR_MENU, COLOR_BLACK, COLOR_WHITE);
		init_pair(PAIR_ME, COLOR_YELLOW, -1);
		init_pair(PAIR_DANGER, COLOR_RED, -1);
		init_pair(PAIR_WARN, COLOR_YELLOW, -1);
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

/* the attribute of colour pair p, nothing without colour */
static attr_t pair(int p)
{
	return colour ? COLOR_PAIR(p) : A_NORMAL;
}

/* Threat levels: 2 deadly (red, bold), 1 close (yellow), 0 none. */
static attr_t threat(int level)
{
	if (level >= 2)
		return pair(PAIR_DANGER) | A_BOLD;
	return level == 1 ? pair(PAIR_WARN) : A_NORMAL;
}

/* text at (y, x), cut to w columns */
static void put(int y, int x, int w, const char *s)
{
	if (w > 0 && y >= 0 && y < LINES)
		mvaddnstr(y, x, s, w);
}

static void put_attr(int y, int x, int w, const char *s, attr_t at)
{
	attron(at);
	put(y, x, w, s);
	attroff(at);
}

/* Draw again, with attribute at, the first `needle` in the row s drawn at
 * (y, x) cut to w columns. */
static void emphasize(int y, int x, int w, const char *s, const char *needle, attr_t at)
{
	const char *p = needle && *needle ? strstr(s, needle) : NULL;
	if (!p || at == A_NORMAL)
		return;
	int col = (int)(p - s);
	if (col < w)
		put_attr(y, x + col, w - col < (int)strlen(needle) ? w - col : (int)strlen(needle),
		         needle, at);
}

static void title(int y, int x, int w, const char *s)
{
	attr_t at = pair(PAIR_TITLE) | A_BOLD;
	attron(at);
	char buf[512];
	snprintf(buf, sizeof buf, "-- %s ", s);
	int n = (int)strlen(buf);
	put(y, x, w, buf);
	for (int i = n; i < w; i++)
		mvaddch(y, x + i, '-');
	attroff(at);
}

static const char *mode_name(const struct app *a)
{
	return a->mode == APP_WATCH ? "WATCH" : a->mode == APP_REPLAY ? "REPLAY" : "PLAY";
}

/* ---- the header --------------------------------------------------------------------- */

/* The first header row in one of three widths (0 widest): the numbers are
 * always there; narrower forms drop the double spaces, then the rounds
 * left and the food the colony eats (the dangers row warns of that). */
static void header_stats(const struct app *a, int form, char *buf, size_t n)
{
	const struct model *m = &a->m;
	const char *sp = form == 0 ? "  " : " ";
	char round[48], food[48];
	if (m->rounds_seen == 0)
		snprintf(round, sizeof round, "Round -/%d", m->rounds);
	else if (a->revised && form < 2)
		snprintf(round, sizeof round, "Round %d/%d (%d left)", m->rounds - m->round + 1,
		         m->rounds, m->round);
	else
		snprintf(round, sizeof round, "Round %d/%d",
		         a->revised ? m->rounds - m->round + 1 : m->round, m->rounds);
	if (form < 2)
		snprintf(food, sizeof food, "Food %d (eats %d)", m->food, model_food_need(m));
	else
		snprintf(food, sizeof food, "Food %d", m->food);
	snprintf(buf, n, "%s%s%s%sMorale %d%sWaste %d%sStarvation %d%sChildren %d", round, sp, food,
	         sp, m->moral, sp, m->waste, sp, m->tokens, sp, m->children);
}

static void draw_header_stats(const struct app *a, const struct view *v, int W)
{
	const struct model *m = &a->m;
	char buf[512], mode[64];
	if (a->mode == APP_REPLAY)
		snprintf(mode, sizeof mode, "[%s %d/%d %s]", mode_name(a), v->step, v->nsteps,
		         a->revised ? "revised" : "base");
	else
		snprintf(mode, sizeof mode, "[%s %s]", mode_name(a),
		         a->revised ? "revised" : "base");
	int n = (int)strlen(mode), form = 0;
	header_stats(a, form, buf, sizeof buf);
	while (form < 2 && (int)strlen(buf) + 1 + n > W)
		header_stats(a, ++form, buf, sizeof buf);
	put_attr(0, 0, W, buf, A_BOLD);
	bool started = m->rounds_seen > 0 && m->result == MODEL_RUNNING;
	char word[48];
	snprintf(word, sizeof word, "Food %d", m->food);
	emphasize(0, 0, W, buf, word, threat(started && m->food < model_food_need(m) ? 2 : 0));
	snprintf(word, sizeof word, "Morale %d", m->moral);
	emphasize(0, 0, W, buf, word, threat(!started ? 0 : m->moral <= 2 ? 2 : m->moral <= 4));
	snprintf(word, sizeof word, "Starvation %d", m->tokens);
	emphasize(0, 0, W, buf, word, threat(m->tokens > 0 ? 2 : 0));
	if ((int)strlen(buf) + 1 + n <= W)
		put(0, W - n, n, mode);
}

static void draw_header(const struct app *a, const struct view *v, int W)
{
	const struct model *m = &a->m;
	draw_header_stats(a, v, W);
	char buf[512], crisis[96], turn[96];
	if (m->crisis >= 0) {
		const struct model_crisis *c = &m->crises[m->crisis];
		snprintf(crisis, sizeof crisis, "Crisis: %s %d/%d (fail: morale -%d)",
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
	bool short_of = m->crisis >= 0 && m->contributed < m->crises[m->crisis].required;
	emphasize(1, 0, W, buf, strchr(crisis, '('), threat(short_of ? 1 : 0));
	emphasize(1, 0, W, buf, strstr(buf, "Turn: "), a->turn == m->me && m->me >= 0 ? A_BOLD : 0);
}

/* ---- the board ---------------------------------------------------------------------- */

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

/* An entrance's threat: 2 full of zombies where someone would die, 1 full
 * or two zombies. */
static int entrance_threat(const struct model *m, int l, int e)
{
	int z = m->locs[l].zombies[e], b = m->locs[l].barricades[e];
	bool people = model_chars_at(m, l) > 0 || (l == m->colony && m->children > 0);
	if (z >= 3 && b == 0 && people)
		return 2;
	return z + b >= 3 || z >= 2 ? 1 : 0;
}

static int draw_locations(const struct app *a, int y, int x, int w)
{
	const struct model *m = &a->m;
	title(y++, x, w, "Locations: here/room, cards left/all, entrance:zombies(z)/barricades(b)");
	int namew = w >= 100 ? 18 : 14;
	for (int l = 0; l < m->nlocs; l++) {
		const struct model_location *L = &m->locs[l];
		char buf[1024], ent[256] = "", who[512], room[24] = "", cards[24] = "";
		for (int e = 0; e < L->entrances; e++) {
			size_t n = strlen(ent);
			snprintf(ent + n, sizeof ent - n, "%se%d:%dz%db", e ? " " : "", e,
			         L->zombies[e], L->barricades[e]);
		}
		who_at(m, l, w < 100, who, sizeof who);
		if (!L->colony) {
			snprintf(room, sizeof room, "%d/%d", model_chars_at(m, l), L->spaces);
			snprintf(cards, sizeof cards, "%d/%d", L->deck_left, L->deck_size);
		}
		snprintf(buf, sizeof buf, "%-*.*s %4s %5s  %-*s %s", namew, namew,
		         model_loc_name(m, l), room, cards, w >= 100 ? 30 : 22, ent, who);
		put(y, x, w, buf);
		for (int e = 0; e < L->entrances; e++) {
			char seg[32];
			snprintf(seg, sizeof seg, "e%d:%dz%db", e, L->zombies[e], L->barricades[e]);
			emphasize(y, x, w, buf, seg, threat(entrance_threat(m, l, e)));
		}
		y++;
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
		const struct model_character *ch = &m->chars[c];
		char buf[256];
		char_cell(m, c, colw >= 60, buf, sizeof buf);
		bool me = ch->owner == m->me && m->me >= 0;
		int cx = x + (k % cols) * colw;
		put_attr(y, cx, colw - 1, buf, me ? pair(PAIR_ME) : A_NORMAL);
		if (ch->alive) {
			char inj[16];
			snprintf(inj, sizeof inj, "W%d F%d", ch->wounds, ch->frost);
			int hurt = ch->wounds + ch->frost;
			emphasize(y, cx, colw - 1, buf, inj, threat(hurt >= 2 ? 2 : ch->frost > 0));
		}
		if (++k % cols == 0)
			y++;
	}
	return k % cols ? y + 1 : y;
}

/* Rows of text at (y, x), wrapped at w between words, up to maxy; returns
 * the next row. */
static int put_wrapped(int y, int x, int w, int maxy, const char *s, attr_t at)
{
	struct wrap_row rows[16];
	int n = wrap_text(s, w, 0, rows, 16);
	for (int i = 0; i < n && i < 16 && y < maxy; i++, y++) {
		attron(at);
		mvaddnstr(y, x, s + rows[i].off, rows[i].len);
		attroff(at);
	}
	return y;
}

/* our hand and dice, the others' hand sizes (">" marks whose turn it is) */
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
		n += (size_t)snprintf(buf + n, sizeof buf - n, " %s%s %d%s",
		                      p == a->turn && !m->colony_phase ? ">" : "",
		                      m->player_names[p], model_hand_size(m, p),
		                      m->player_in[p] ? "" : " (left)");
	return put_wrapped(y, x, w, maxy, buf, A_NORMAL);
}

/* the dangers near, in one or two rows */
static int draw_dangers(const struct app *a, int y, int x, int w, int maxy)
{
	struct look_dangers d;
	if (look_dangers(&a->m, &d) == 0 || y >= maxy)
		return y;
	char buf[1024] = "Danger:";
	for (int i = 0; i < d.n; i++) {
		size_t len = strlen(buf);
		snprintf(buf + len, sizeof buf - len, "%s %s", i ? " |" : "", d.text[i]);
	}
	int last = maxy < y + 2 ? maxy : y + 2;
	return put_wrapped(y, x, w, last, buf, threat(2));
}

/* ---- the log ------------------------------------------------------------------------ */

static bool log_is_error(const char *s)
{
	return strncmp(s, "!!", 2) == 0 || strstr(s, "failed:") != NULL;
}

/* The log's entries up to `last` (exclusive), wrapped at w, in the rows
 * top .. bottom-1, the newest at the bottom. */
static void draw_log_rows(const struct app *a, int last, int top, int bottom, int x, int w)
{
	int y = bottom;
	for (int i = last - 1; i >= 0 && y > top; i--) {
		struct wrap_row rows[32];
		int n = wrap_text(a->log[i], w, 2, rows, 32);
		if (n > 32)
			n = 32;
		attr_t at = log_is_error(a->log[i])            ? pair(PAIR_ERR)
		            : strncmp(a->log[i], "==", 2) == 0 ? pair(PAIR_TITLE) | A_BOLD
		                                               : A_NORMAL;
		for (int r = n - 1; r >= 0 && y > top; r--) {
			y--;
			int ind = r ? 2 : 0;
			attron(at);
			mvaddnstr(y, x + ind, a->log[i] + rows[r].off, rows[r].len);
			attroff(at);
		}
	}
}

static void draw_log(const struct app *a, const struct view *v, int top, int bottom, int x, int w)
{
	if (bottom - top <= 1)
		return;
	title(top, x, w,
	      v->scroll ? "Events (scrolled back: Down/End; Ctrl-P: all)" : "Events (Ctrl-P: all)");
	draw_log_rows(a, a->nlog - v->scroll, top + 1, bottom, x, w);
}

static void draw_history(const struct app *a, const struct view *v, int W, int H)
{
	char buf[160];
	snprintf(buf, sizeof buf,
	         "Message history: %d entries%s (Up/Down, PgUp/PgDn, Home/End; Esc closes)",
	         a->nlog, v->scroll ? ", scrolled back" : "");
	title(0, 0, W, buf);
	draw_log_rows(a, a->nlog - v->scroll, 1, H - 1, 0, W);
}

/* ---- lists over the board: menus, the look list, what a look shows ----------------- */

int ui_menu_note_rows(const struct menu *mn)
{
	int w = (COLS < 80 ? COLS : 80) - 2, rows = 0;
	for (int i = 0; i < mn->nnotes; i++)
		rows += wrap_text(mn->notes[i], w, 2, NULL, 0);
	return rows;
}

int ui_menu_page_size(int notes)
{
	int rows = LINES - 6 - notes;
	return rows > 35 ? 35 : rows < 1 ? 1 : rows;
}

typedef const char *label_fn(const void *ctx, int i);

struct list_look {
	const char *title;
	int n, sel;
	label_fn *label;
	const void *ctx;
	const struct menu *notes; /* notes above the items, or NULL */
};

static int draw_notes(const struct menu *mn, int top, int x, int w)
{
	for (int i = 0; mn && i < mn->nnotes; i++) {
		struct wrap_row rows[8];
		int n = wrap_text(mn->notes[i], w - 2, 2, rows, 8);
		for (int r = 0; r < n && r < 8; r++) {
			mvhline(top, x, ' ', w);
			mvaddnstr(top++, x + 1 + (r ? 2 : 0), mn->notes[i] + rows[r].off,
			          rows[r].len);
		}
	}
	return top;
}

static void draw_list(const struct list_look *lk)
{
	int notes = lk->notes ? ui_menu_note_rows(lk->notes) : 0;
	int per = ui_menu_page_size(notes), page = lk->sel / per;
	int first = page * per, cnt = lk->n - first < per ? lk->n - first : per;
	int w = COLS < 80 ? COLS : 80, x = COLS - w, top = 2;
	attr_t at = colour ? pair(PAIR_MENU) : A_NORMAL;
	attron(at);
	char buf[300];
	snprintf(buf, sizeof buf, " %s: key or Up/Down+Enter, Esc back, ? help%s", lk->title,
	         lk->n > per ? ", PgUp/PgDn" : "");
	mvhline(top, x, ' ', w);
	put(top++, x, w, buf);
	top = draw_notes(lk->notes, top, x, w);
	for (int i = 0; i < cnt; i++) {
		snprintf(buf, sizeof buf, " [%c] %s", ui_item_key(i),
		         lk->label(lk->ctx, first + i));
		mvhline(top + i, x, ' ', w);
		if (first + i == lk->sel)
			attron(A_REVERSE);
		put(top + i, x, w, buf);
		if (first + i == lk->sel)
			attroff(A_REVERSE);
	}
	mvhline(top + cnt, x, ' ', w);
	if (lk->n > per) {
		snprintf(buf, sizeof buf, " page %d/%d", page + 1, (lk->n + per - 1) / per);
		put(top + cnt, x, w, buf);
	}
	attroff(at);
}

static const char *menu_label(const void *ctx, int i)
{
	return ((const struct menu *)ctx)->items[i].label;
}

static const char *look_label(const void *ctx, int i)
{
	return ((const struct look_list *)ctx)->items[i].label;
}

static void draw_menu(const struct view *v)
{
	const struct menu *mn = &v->menu;
	struct list_look lk = {
	        client_command(mn->kind)->menu, mn->n, v->menu_sel, menu_label, mn, mn};
	draw_list(&lk);
}

static void draw_look(const struct view *v)
{
	struct list_look lk = {"Look at", v->look.n, v->look_sel, look_label, &v->look, NULL};
	draw_list(&lk);
}

static void draw_info(const struct view *v)
{
	int w = COLS < 100 ? COLS : 100, x = COLS - w, y = 2;
	attr_t at = colour ? pair(PAIR_MENU) : A_NORMAL;
	attron(at);
	mvhline(y, x, ' ', w);
	put(y++, x, w, " Look (any key: back to the list, Esc: close)");
	for (int i = 0; i < v->info.n && y < LINES - 3; i++) {
		struct wrap_row rows[8];
		int n = wrap_text(v->info.lines[i], w - 2, 2, rows, 8);
		for (int r = 0; r < n && r < 8 && y < LINES - 3; r++) {
			mvhline(y, x, ' ', w);
			mvaddnstr(y++, x + 1 + (r ? 2 : 0), v->info.lines[i] + rows[r].off,
			          rows[r].len);
		}
	}
	mvhline(y, x, ' ', w);
	attroff(at);
}

/* ---- help --------------------------------------------------------------------------- */

static const char *const help_text[] = {
        "sopra-client: keys (docs/playing.md explains the game)",
        "",
        "Playing (the action bar shows what is possible now):",
        "  S start the game   p pick characters   m move   s search   a attack",
        "  b barricade   w clean waste   c contribute a card   u use a card",
        "  y use an ability   e end turn   L leave the game   r raw command (JSON)",
        "  In a menu: the key in [ ], or Up/Down + Enter; PgUp/PgDn pages; Esc back.",
        "Looking:",
        "  ; look at a character, location, card or the crisis: what it can do, its",
        "    attack/search die, social status, ability, injuries, entrances, cards left",
        "Everywhere:",
        "  Up/Down/PgUp/PgDn scroll the event log, Home the oldest, End the newest;",
        "  Ctrl-P the whole message history;  ? this help;  q quit",
        "Replay (--replay FILE):",
        "  Right/l one event on, Left/h one back, PgDn/] next round, PgUp/[ previous",
        "  Home/End first/last, g go to a step number",
        "",
        "Board: e0:2z1b = entrance 0 has 2 zombies and 1 barricade (3 spaces each);",
        "2/3 = characters at a location / its room; 9/12 = cards left in its pile;",
        "* marks your characters; W wounds, F frostbite (3 injuries kill); > whose turn.",
        "Danger: what can cost morale or lives in the next colony phase (red).",
        "The countdown (bottom right) is the server's timeout for your move: after it",
        "the server removes you from the game.",
        "",
        "Press any key to close this help.",
};

static void draw_help(const struct view *v)
{
	erase();
	int n = (int)(sizeof help_text / sizeof help_text[0]), y = 0;
	if (v->menu_open)
		put(y++, 1, COLS - 1,
		    "(A menu is open: it is still there when you close this help.)");
	for (int i = 0; i < n && y < LINES; i++)
		put(y++, 1, COLS - 1, help_text[i]);
}

/* ---- the bars ----------------------------------------------------------------------- */

static void draw_status(const struct app *a, const struct view *v, int W, int H)
{
	char cd[96] = "";
	if (v->secs_left >= 0) {
		snprintf(cd, sizeof cd, "%d:%02d left: you will be removed after the timeout",
		         v->secs_left / 60, v->secs_left % 60);
		if ((int)(strlen(a->status) + strlen(cd)) + 2 > W)
			snprintf(cd, sizeof cd, "%d:%02d left", v->secs_left / 60,
			         v->secs_left % 60);
	}
	int cdw = (int)strlen(cd), sw = cdw ? W - cdw - 2 : W;
	int p = a->status_err ? PAIR_ERR : PAIR_OK;
	put_attr(H - 1, 0, sw, a->status, pair(p) | (a->status_err ? A_BOLD : 0));
	if (cdw && cdw <= W)
		put_attr(H - 1, W - cdw, cdw, cd, threat(v->secs_left <= 10 ? 2 : 1));
}

/* The action bar's words: what is possible now, then ";:Look ?:Help q:Quit". */
static void bar_text(const struct app *a, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	if (a->mode == APP_PLAY) {
		static struct menu probe;
		int nk;
		const enum cmd_type *kinds = client_menu_order(&nk);
		for (int i = 0; i < nk && n < size - 40; i++)
			if (menu_build(&a->m, &a->cmds.legal, kinds[i], &probe) > 0)
				n += (size_t)snprintf(buf + n, size - n, "%c:%s ",
				                      client_command(kinds[i])->key,
				                      client_command(kinds[i])->menu);
		if (a->m.my_turn)
			n += (size_t)snprintf(buf + n, size - n, "r:Raw ");
	} else if (a->mode == APP_REPLAY) {
		n += (size_t)snprintf(buf, size, "Left/Right: step  PgUp/PgDn: round  g: go to ");
	}
	snprintf(buf + n, size - n, ";:Look ?:Help q:Quit");
}

/* The action bar in rows H-2 (and H-3 when it does not fit in one: then
 * its first row starts "Keys:"); returns its first row. */
static int draw_action_bar(const char *buf, int W, int H)
{
	char two[600];
	int top = H - 2;
	struct wrap_row rows[2];
	const char *text = buf;
	if ((int)strlen(buf) > W) {
		snprintf(two, sizeof two, "Keys: %s", buf);
		text = two;
		if (wrap_text(two, W, 0, rows, 2) == 2)
			top = H - 3;
	}
	int n = wrap_text(text, W, 0, rows, 2);
	attron(A_REVERSE);
	for (int i = 0; i < n && i < 2 && top + i < H - 1; i++) {
		mvhline(top + i, 0, ' ', W);
		mvaddnstr(top + i, 0, text + rows[i].off, rows[i].len);
	}
	attroff(A_REVERSE);
	return top;
}

/* the action bar and the status line */
static void draw_bars(const struct app *a, const struct view *v, const char *bar, int W, int H)
{
	draw_action_bar(bar, W, H);
	move(H - 1, 0);
	clrtoeol();
	if (v->prompting) {
		char buf[600];
		snprintf(buf, sizeof buf, "%s: %.*s_", v->prompt, v->ninput, v->input);
		put(H - 1, 0, W, buf);
	} else if (v->confirm_quit) {
		put(H - 1, 0, W, app_quit_question(a));
	} else {
		draw_status(a, v, W, H);
	}
}

/* the rows the bars take at the bottom */
static int bar_rows(const char *buf, int W)
{
	char two[600];
	if ((int)strlen(buf) <= W)
		return 2;
	snprintf(two, sizeof two, "Keys: %s", buf);
	return wrap_text(two, W, 0, NULL, 0) >= 2 ? 3 : 2;
}

void ui_draw(const struct app *a, const struct view *v)
{
	int W = COLS, H = LINES;
	erase();
	if (v->help) {
		draw_help(v);
		refresh();
		return;
	}
	if (v->history) {
		draw_history(a, v, W, H);
		draw_status(a, v, W, H);
		refresh();
		return;
	}
	draw_header(a, v, W);
	char bar[512];
	bar_text(a, bar, sizeof bar);
	bool side = W >= 120;
	int bw = side ? W - (W * 2 / 5) - 1 : W, bottom = H - bar_rows(bar, W);
	int y = 2;
	if (a->m.got_config) {
		y = draw_locations(a, y, 0, bw);
		y = draw_characters(a, y, 0, bw, bottom - 2);
		y = draw_hand(a, y, 0, bw, bottom - 1);
		y = draw_dangers(a, y, 0, bw, bottom - 1);
	}
	if (side) {
		mvvline(2, bw, '|', bottom - 2);
		draw_log(a, v, 2, bottom, bw + 1, W - bw - 1);
	} else {
		draw_log(a, v, y, bottom, 0, W);
	}
	if (v->menu_open)
		draw_menu(v);
	if (v->look_open && !v->info_open)
		draw_look(v);
	if (v->info_open)
		draw_info(v);
	draw_bars(a, v, bar, W, H);
	refresh();
}
