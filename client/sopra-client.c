/*
 * sopra-client: a terminal client for people (ncurses).
 *
 *   sopra-client --local [--name NAME] [--bots K] [--rules base|revised] [--timeout S]
 *                [--pace MS]
 *   sopra-client --host H --port P --name NAME [--start] [--rules base|revised]
 *                [--timeout S] [--pace MS] [--bots K [--bots-log DIR] [--bot-seed S]]
 *   sopra-client --reconnect --host H --port P --name NAME [--rules base|revised]
 *   sopra-client --watch --port N [--host H] [--rules base|revised] [--pace MS]
 *   sopra-client --replay FILE
 *
 * Playing: the board (ui.c) is the client model (model.c) folded from the
 * server's events; the menus (menu.c) offer the commands possible now.
 * --local plays on a server of the client's own (local.c) on the default
 * game. SIGINT, SIGTERM and SIGHUP end the client in order: the bots and a
 * --local server are stopped, never left behind.
 * Watching: a read-only connection to the server's --watch-port. Replay: a
 * journal or a sopra-bot --log (replay.c), stepped through by rebuilding the
 * board from the first event up to the chosen one.
 * Sessions (a server with --reconnect-grace): the secret of our Session line
 * is kept (rejoin.c); after a drop the client reconnects by itself on
 * rejoin's schedule and folds the board again from the history the server
 * sends (at once: the history is not paced); --reconnect does the same
 * after a restart.
 *
 * The server's lines are queued and released at --pace (pace.c). The loop
 * blocks in poll(), with a timeout only while the pace holds lines back,
 * the countdown of our move runs or a reconnect is planned: no CPU while
 * idle, and a redraw right after the lines released are folded
 * (docs/client.md).
 */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "bots.h"
#include "command.h"
#include "local.h"
#include "look.h"
#include "menu.h"
#include "pace.h"
#include "sopra/proto.h"
#include "net.h"
#include "rejoin.h"
#include "replay.h"
#include "toolutil.h"
#include "sopra/usage.h"
#include "ui.h"

struct client {
	struct app a;
	struct view v;
	struct conn c;
	bool connected;
	struct bots bots;
	struct replay r;
	FILE *timing;
	bool start, start_sent, quit;
	bool bot_due;               /* start the first bot after this redraw */
	struct local_server server; /* --local */
	struct pace pace;           /* the server's lines, released at --pace */
	bool close_due;             /* the server closed: say so once its lines are out */
	double wait_since;          /* ms: the server's timer for our move started */
	/* sessions: our seat kept for a return (rejoin.h) */
	char seat_path[PATH_MAX]; /* the file that keeps our secret, "" none */
	bool rejoining;           /* Reconnect sent, its answer not read yet */
	bool drop_conn;           /* give this connection up (read on: nothing) */
	int rejoin_try;           /* tries since the drop, 0: not reconnecting */
	double rejoin_at;         /* clock_ms() of the next try, 0: none */
	bool catching_up;         /* Reconnect taken: the history is being read */
	double history_until;     /* ms: lines that arrived by then are history */
	bool close_refused;       /* the connection went after a refused Reconnect */
	/* options */
	const char *host, *name, *replay_path, *timing_path;
	int port, nbots;
	int local_timeout; /* --local: the server's --timeout; else --timeout for the countdown */
	int pace_ms;       /* --pace, -1 not given */
	bool watch, revised, local;
	bool reconnect; /* --reconnect: take the kept seat back */
};

/* --pace's default: a move of another player every 400 ms, so that a
 * person sees each one */
#define PACE_DEFAULT_MS 400

/* The --local server's --timeout unless --timeout says otherwise: a person
 * may think longer than the server's default 30 s. */
#define LOCAL_TIMEOUT_SEC 120

/* SIGINT, SIGTERM, SIGHUP: the handler writes a byte into this pipe, which
 * the loop polls with the rest, so none is missed between two polls. */
static int stop_pipe[2] = {-1, -1};

static void on_stop_signal(int sig)
{
	(void)sig;
	int saved = errno;
	if (write(stop_pipe[1], "x", 1) < 0) {
		/* full: a stop is pending already */
	}
	errno = saved;
}

/* Catch the signals that end the client (before ncurses starts, which then
 * leaves them to us). 0, or -1 when the pipe cannot be made. */
static int catch_stop_signals(void)
{
	if (pipe(stop_pipe) != 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		fcntl(stop_pipe[i], F_SETFD, FD_CLOEXEC);
		fcntl(stop_pipe[i], F_SETFL, O_NONBLOCK);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
	return 0;
}

/* The monotonic clock in milliseconds with fractions (toolutil's now_ms()
 * has whole ones): the redraw timing. */
static double clock_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The seconds left of the server's timeout for our move, -1 when it is
 * not waiting for us or its --timeout is unknown. */
static int secs_left(const struct client *cl)
{
	const struct model *m = &cl->a.m;
	bool waits = cl->a.mode == APP_PLAY && cl->connected && m->result == MODEL_RUNNING &&
	             (m->my_turn || m->selecting) && cl->pace.n == 0;
	if (!waits || cl->a.timeout_s <= 0)
		return -1;
	double left = cl->a.timeout_s - (clock_ms() - cl->wait_since) / 1000.0;
	if (left <= 0)
		return 0;
	int whole = (int)left;
	return whole < left ? whole + 1 : whole; /* whole seconds, rounded up */
}

static void draw(struct client *cl)
{
	cl->v.secs_left = secs_left(cl);
	ui_draw(&cl->a, &cl->v);
}

/* a decimal integer, or -1 */
static int parse_int(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	return end == s || *end || v < 0 || v > 1000000000 ? -1 : (int)v;
}

/* Send a line (without "\n"); label NULL: it is the typed line itself. */
static void send_line(struct client *cl, const char *line, const struct cmd *c, const char *label)
{
	if (!cl->connected || net_send_line(&cl->c, line) != 0) {
		app_status(&cl->a, true, "Not connected: the command was not sent");
		return;
	}
	cl->wait_since = clock_ms(); /* a command of ours restarts the server's timer */
	app_sent(&cl->a, c, label ? label : line);
}

static void send_cmd(struct client *cl, const struct menu_item *it)
{
	char line[1024];
	int n = client_cmd_line(&it->cmd, cl->a.revised, line, sizeof line);
	if (n <= 0) {
		app_status(&cl->a, true, "The command is too long");
		return;
	}
	line[n - 1] = '\0'; /* net_send_line adds the "\n" */
	send_line(cl, line, &it->cmd, it->label);
}

/* Send the first legal command whose row has flag (CLIENT_*), if any. */
static void send_legal_with(struct client *cl, unsigned flag)
{
	const struct game_cmd_list *legal = &cl->a.cmds.legal;
	for (size_t i = 0; i < legal->n; i++)
		if (client_command(legal->v[i].type)->flags & flag) {
			struct menu_item it = {.cmd = legal->v[i]};
			client_cmd_label(&cl->a.m, &it.cmd, it.label, sizeof it.label);
			send_cmd(cl, &it);
			return;
		}
}

/* --start: start the game, once, when the game is not full yet */
static void send_start(struct client *cl)
{
	if (cl->start_sent)
		return;
	cl->start_sent = true;
	send_legal_with(cl, CLIENT_STARTS);
}

static void start_bot(struct client *cl)
{
	char err[256];
	if (bots_start_next(&cl->bots, err, sizeof err) != 0)
		app_status(&cl->a, true, "%s", err);
	else
		app_status(&cl->a, false, "Starting bot %d of %d ...", cl->bots.started, cl->nbots);
}

static void open_menu(struct client *cl, enum cmd_type k)
{
	if (menu_build(&cl->a.m, &cl->a.cmds.legal, k, &cl->v.menu) == 0) {
		char why[400];
		menu_why_not(&cl->a.m, &cl->a.cmds, k, why, sizeof why);
		app_status(&cl->a, true, "%s is not possible now: %s", client_command(k)->menu,
		           why);
		app_logf(&cl->a, "-- %s", cl->a.status);
		return;
	}
	size_t nparams;
	proto_cmd_params(k, &nparams);
	if (cl->v.menu.n == 1 && nparams == 0 && !(client_command(k)->flags & CLIENT_LEAVES)) {
		send_cmd(cl, &cl->v.menu.items[0]); /* one choice, nothing to pick: no menu */
		return;
	}
	cl->v.menu_open = true;
	cl->v.menu_sel = 0;
}

/* An open menu whose items are not all possible any more is closed. */
static void close_stale_menu(struct client *cl)
{
	const struct game_cmd_list *legal = &cl->a.cmds.legal;
	for (int i = 0; cl->v.menu_open && i < cl->v.menu.n; i++) {
		bool still = false;
		for (size_t j = 0; j < legal->n && !still; j++)
			still = client_same_choice(&cl->v.menu.items[i].cmd, &legal->v[j]);
		if (!still)
			cl->v.menu_open = false;
	}
}

/* ---- coming back (sessions) ----------------------------------------------------------- */

/* The command that brings us back: "sopra-client --reconnect ..." */
static void reconnect_hint(const struct client *cl, char *buf, size_t n)
{
	snprintf(buf, n, "sopra-client --reconnect --host %s --port %d --name %s%s", cl->host,
	         cl->port, cl->name ? cl->name : "?", cl->revised ? " --rules revised" : "");
}

/* Our Session line came: keep its secret for a return after a restart. */
static void keep_session(struct client *cl)
{
	char err[PATH_MAX + 128];
	if (rejoin_path(cl->seat_path, sizeof cl->seat_path, cl->host, cl->port, cl->name, err,
	                sizeof err) != 0 ||
	    rejoin_save(cl->seat_path, cl->a.secret, cl->a.m.me, err, sizeof err) != 0) {
		cl->seat_path[0] = '\0';
		app_status(&cl->a, true, "%s", err);
		app_logf(&cl->a, "!! %s", err);
	}
}

/* The game is over for us: the kept secret is of no use any more. */
static void forget_session(struct client *cl)
{
	rejoin_forget(cl->seat_path);
	cl->seat_path[0] = '\0';
}

/* Whether we are still in a running game (not left, not over). */
static bool still_playing(const struct client *cl)
{
	const struct model *m = &cl->a.m;
	return cl->a.mode == APP_PLAY && m->result == MODEL_RUNNING &&
	       (m->me < 0 || m->me >= m->nplayers || m->player_in[m->me]) && !cl->a.broken;
}

/* The connection is gone: plan the next try, or give up after
 * REJOIN_ATTEMPTS of them. */
static void schedule_rejoin(struct client *cl)
{
	if (cl->rejoin_try == 0)
		app_logf(&cl->a,
		         "-- the connection is lost; the server keeps our seat: reconnecting");
	cl->rejoin_try++;
	if (cl->rejoin_try > REJOIN_ATTEMPTS) {
		char hint[PATH_MAX];
		reconnect_hint(cl, hint, sizeof hint);
		cl->rejoin_at = 0;
		cl->rejoin_try = 0;
		app_status(&cl->a, true, "No way back after %d tries. Later: %s", REJOIN_ATTEMPTS,
		           hint);
		app_logf(&cl->a,
		         "!! no way back after %d tries; try later (while the server "
		         "keeps the seat): %s",
		         REJOIN_ATTEMPTS, hint);
		return;
	}
	double wait = rejoin_delay(cl->rejoin_try);
	cl->rejoin_at = clock_ms() + wait * 1000;
	app_status(&cl->a, true, "Connection lost: reconnecting in %.1f s (try %d of %d)", wait,
	           cl->rejoin_try, REJOIN_ATTEMPTS);
}

/* Connected: send Reconnect; the answer is the history, or a refusal. */
static void send_reconnect(struct client *cl)
{
	char line[128];
	int n = client_reconnect_line(cl->a.secret, line, sizeof line);
	if (n > 0)
		line[n - 1] = '\0'; /* net_send_line adds the "\n" */
	if (n <= 0 || net_send_line(&cl->c, line) != 0) {
		cl->drop_conn = true;
		return;
	}
	cl->rejoining = true;
	app_status(&cl->a, false, "Reconnecting: waiting for the game so far");
}

/* A try is due: connect (once, no waiting) and send Reconnect. */
static void try_rejoin(struct client *cl)
{
	char err[256];
	cl->rejoin_at = 0;
	if (net_connect(&cl->c, cl->host, cl->port, 0, err, sizeof err) != 0) {
		schedule_rejoin(cl);
		return;
	}
	fcntl(cl->c.fd, F_SETFD, FD_CLOEXEC);
	cl->connected = true;
	send_reconnect(cl);
}

/* The first line after our Reconnect: false when it is a refusal (handled
 * here); else the history begins: the board is folded again from it. */
static bool rejoin_answer(struct client *cl, const char *line, size_t len)
{
	cl->rejoining = false;
	struct model_event ev;
	char err[600];
	bool refused = model_decode(&cl->a.m, line, len, &ev, err, sizeof err) == MODEL_OK &&
	               ev.type == MEV_COMMAND_FAILED;
	if (!refused) {
		model_event_free(&ev);
		cl->rejoin_try = 0;
		cl->catching_up = true; /* the history is not paced (on_server) */
		if (cl->a.nlines > 0) {
			app_rejoin(&cl->a); /* the log goes on after the history */
		} else {
			app_reset(&cl->a);
			app_logf(&cl->a, "-- back in the game: the game so far, from the server");
		}
		return true;
	}
	char msg[300];
	snprintf(msg, sizeof msg, "%s", ev.s ? ev.s : "");
	model_event_free(&ev);
	cl->drop_conn = true;
	if (strstr(msg, " is connected")) {
		/* the server has not seen our old connection go yet */
		app_logf(&cl->a, "-- %s: trying again", msg);
		return false;
	}
	forget_session(cl);
	cl->a.secret[0] = '\0';
	app_status(&cl->a, true, "No way back: %s", msg);
	app_logf(&cl->a, "!! the server did not take us back: %s", msg);
	return false;
}

/* one server line, released by the pace */
static void feed_line(void *ctx, const struct pace_line *l)
{
	struct client *cl = ctx;
	int type = app_feed(&cl->a, l->text, l->len);
	if (type == MEV_ACT_NOW || type == MEV_CHARACTERS)
		cl->wait_since = l->arrived; /* the server's timer for us runs from then */
	if (type == MEV_SESSION)
		keep_session(cl);
	if (cl->seat_path[0] && !still_playing(cl) && !cl->a.broken)
		forget_session(cl);
	if (type == MEV_CONFIG && cl->a.mode == APP_PLAY) {
		if (cl->nbots > 0 && cl->bots.started == 0)
			cl->bot_due = true; /* after the redraw: fork() takes time */
		else if (cl->start && cl->nbots == 0)
			send_start(cl);
	} else if (type == MEV_CHARACTERS && cl->a.cmds.legal.n > 0) {
		open_menu(cl, cl->a.cmds.legal.v[0].type); /* the choice of characters */
	} else {
		close_stale_menu(cl);
	}
}

/* A move to hold back: another player's, live (the history after a
 * Reconnect is the game so far: it is folded at once). */
static bool is_others_move(void *ctx, const struct pace_line *l)
{
	const struct client *cl = ctx;
	return l->arrived > cl->history_until && pace_is_others_move(&cl->a, l->text, l->len);
}

/* The connection is gone and its lines are all folded: with a seat the
 * server keeps, plan the way back; else say that it is closed (after a
 * refused Reconnect the status says why already). */
static void connection_gone(struct client *cl)
{
	bool refused = cl->close_refused;
	cl->close_refused = false;
	if (cl->a.secret[0] && still_playing(cl)) {
		schedule_rejoin(cl);
	} else if (!refused) {
		cl->a.closed = true;
		if (cl->a.m.result == MODEL_RUNNING && !cl->a.status_err)
			app_status(&cl->a, true, "The server closed the connection");
		app_logf(&cl->a, "-- the connection is closed");
	}
}

/* Fold and draw the lines that are due; the ms until more are, -1 none
 * queued. */
static int release_lines(struct client *cl)
{
	double t0 = clock_ms();
	long before = cl->a.events;
	int wait = pace_release(&cl->pace, t0, is_others_move, feed_line, cl);
	if (wait < 0 && cl->close_due) {
		cl->close_due = false;
		connection_gone(cl);
	}
	draw(cl);
	if (cl->timing && cl->a.events > before) {
		fprintf(cl->timing, "redraw_ms %.3f events %ld\n", clock_ms() - t0,
		        cl->a.events - before);
		fflush(cl->timing);
	}
	if (cl->bot_due) {
		cl->bot_due = false;
		start_bot(cl);
		draw(cl);
	}
	return wait;
}

/* one server line: the answer to our Reconnect is read at once; the
 * lines of the game are queued for the pace */
static void on_line(void *ctx, const char *line, size_t len)
{
	struct client *cl = ctx;
	if (cl->drop_conn || (cl->rejoining && !rejoin_answer(cl, line, len)))
		return;
	if (pace_push(&cl->pace, line, len, clock_ms()) != 0)
		app_status(&cl->a, true, "Out of memory: a line of the server is lost");
}

/* Read the server's lines; the ms until the pace releases more, -1 none.
 * A lost connection is dealt with once its queued lines are folded
 * (connection_gone). */
static int on_server(struct client *cl)
{
	int rc = net_read(&cl->c, on_line, cl);
	if (cl->catching_up) {
		/* the history came at once with the answer: all read now */
		cl->catching_up = false;
		cl->history_until = clock_ms();
	}
	if (rc != 0 || cl->drop_conn) {
		net_close(&cl->c);
		cl->connected = false;
		cl->close_refused = cl->drop_conn;
		cl->drop_conn = cl->rejoining = false;
		cl->close_due = true;
	}
	return release_lines(cl);
}

static void on_bot(struct client *cl, int i)
{
	char msg[400];
	enum bots_news news = bots_read(&cl->bots, i, msg, sizeof msg);
	if (news == BOTS_ENDED && msg[0]) {
		if (!cl->a.broken) /* else the status says what went wrong for us all */
			app_status(&cl->a, true, "%s", msg);
		app_logf(&cl->a, "!! %s", msg);
	}
	if (news != BOTS_REGISTERED)
		return;
	if (cl->bots.started < cl->nbots)
		start_bot(cl);
	else if (cl->start)
		send_start(cl);
	else
		app_status(&cl->a, false, "%d bot(s) registered. S: start the game", cl->nbots);
}

/* ---- replay --------------------------------------------------------------------------- */

static void replay_goto(struct client *cl, int step)
{
	if (step < 0)
		step = 0;
	if (step > cl->r.n)
		step = cl->r.n;
	app_reset(&cl->a);
	for (int i = 0; i < step; i++)
		app_feed(&cl->a, cl->r.lines[i], strlen(cl->r.lines[i]));
	cl->v.step = step;
	cl->v.nsteps = cl->r.n;
	cl->v.scroll = 0;
	if (!cl->a.status_err)
		app_status(&cl->a, false, "Step %d of %d%s%s", step, cl->r.n,
		           cl->r.name ? ", the view of " : "", cl->r.name ? cl->r.name : "");
}

static bool replay_key(struct client *cl, int ch)
{
	int s = cl->v.step;
	switch (ch) {
	case KEY_RIGHT:
	case 'l':
	case ' ':
		replay_goto(cl, s + 1);
		return true;
	case KEY_LEFT:
	case 'h':
	case KEY_BACKSPACE:
		replay_goto(cl, s - 1);
		return true;
	case KEY_NPAGE:
	case ']':
		replay_goto(cl, replay_round_step(&cl->r, s, 1));
		return true;
	case KEY_PPAGE:
	case '[':
		replay_goto(cl, replay_round_step(&cl->r, s, -1));
		return true;
	case KEY_HOME:
		replay_goto(cl, 0);
		return true;
	case KEY_END:
		replay_goto(cl, cl->r.n);
		return true;
	case 'g':
		cl->v.prompting = true;
		cl->v.prompt = "Go to step";
		cl->v.ninput = 0;
		return true;
	default:
		return false;
	}
}

/* ---- keys ----------------------------------------------------------------------------- */

static void prompt_done(struct client *cl)
{
	cl->v.prompting = false;
	cl->v.input[cl->v.ninput] = '\0';
	if (cl->a.mode == APP_REPLAY) {
		replay_goto(cl, parse_int(cl->v.input) < 0 ? cl->v.step : parse_int(cl->v.input));
		return;
	}
	if (cl->v.ninput > 0)
		send_line(cl, cl->v.input, NULL, NULL);
}

static void prompt_key(struct client *cl, int ch)
{
	struct view *v = &cl->v;
	if (ch == '\n' || ch == KEY_ENTER || ch == '\r')
		prompt_done(cl);
	else if (ch == 27)
		v->prompting = false;
	else if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && v->ninput > 0)
		v->ninput--;
	else if (ch >= 32 && ch < 127 && v->ninput < (int)sizeof v->input - 1)
		v->input[v->ninput++] = (char)ch;
}

#define KEY_CTRL_P 16

/* A key in a list of n items shown `per` a page, *sel highlighted:
 * Up/Down/PgUp/PgDn move *sel; Enter or an item's key gives the item
 * picked; -1 nothing picked; -2 a key that means nothing here. */
static int list_key(int ch, int n, int per, int *sel)
{
	int first = *sel / per * per;
	if (ch == KEY_DOWN || ch == KEY_UP || ch == KEY_NPAGE || ch == KEY_PPAGE) {
		if (ch == KEY_DOWN && *sel + 1 < n)
			(*sel)++;
		else if (ch == KEY_UP && *sel > 0)
			(*sel)--;
		else if (ch == KEY_NPAGE && first + per < n)
			*sel = first + per;
		else if (ch == KEY_PPAGE && first > 0)
			*sel = first - per;
		return -1;
	}
	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
		return *sel;
	for (int i = 0; i < per && first + i < n; i++)
		if (ch == ui_item_key(i))
			return first + i;
	return -2;
}

/* a key that closes a list */
static bool is_back_key(int ch)
{
	return ch == 27 || ch == KEY_BACKSPACE || ch == 127;
}

static void unknown_key(struct client *cl, int ch, const char *where)
{
	char name[16];
	if (ch > 32 && ch < 127)
		snprintf(name, sizeof name, "'%c'", ch);
	else
		snprintf(name, sizeof name, "%s", keyname(ch) ? keyname(ch) : "?");
	app_status(&cl->a, true, "Key %s does nothing %s: press ? for help", name, where);
}

static void menu_key(struct client *cl, int ch)
{
	struct view *v = &cl->v;
	if (is_back_key(ch)) {
		v->menu_open = false;
		return;
	}
	if (ch == '?') {
		v->help = true; /* the menu stays open behind the help */
		return;
	}
	int per = ui_menu_page_size(ui_menu_note_rows(&v->menu));
	int pick = list_key(ch, v->menu.n, per, &v->menu_sel);
	if (pick == -2)
		unknown_key(cl, ch, "in this menu (the keys in [ ], Esc back)");
	if (pick < 0)
		return;
	v->menu_open = false;
	send_cmd(cl, &v->menu.items[pick]);
}

/* ---- looking (;) ---------------------------------------------------------------------- */

static void open_look(struct client *cl)
{
	if (look_list_build(&cl->a.m, &cl->v.look) == 0) {
		app_status(&cl->a, true, "Nothing to look at before the configuration arrives");
		return;
	}
	cl->v.look_open = true;
	cl->v.look_sel = 0;
}

static void look_key(struct client *cl, int ch)
{
	struct view *v = &cl->v;
	if (is_back_key(ch) || ch == ';') {
		v->look_open = false;
		return;
	}
	if (ch == '?') {
		v->help = true;
		return;
	}
	int pick = list_key(ch, v->look.n, ui_menu_page_size(0), &v->look_sel);
	if (pick == -2)
		unknown_key(cl, ch, "here (the keys in [ ], Esc back)");
	if (pick < 0)
		return;
	const struct look_item *it = &v->look.items[pick];
	look_describe(&cl->a.m, it->kind, it->index, &v->info);
	v->info_open = true;
}

/* ?: the help; any other key: back to the look list; Esc closes both */
static void info_key(struct client *cl, int ch)
{
	if (ch == '?') {
		cl->v.help = true; /* what was looked at is still there after the help */
		return;
	}
	cl->v.info_open = false;
	if (is_back_key(ch))
		cl->v.look_open = false;
	else if (cl->v.look_open) /* the list again, built from the board as it is now */
		look_list_build(&cl->a.m, &cl->v.look);
}

static void scroll_key(struct client *cl, int ch)
{
	struct view *v = &cl->v;
	int page = LINES / 2;
	if (ch == KEY_UP && v->scroll < cl->a.nlog - 1)
		v->scroll++;
	else if (ch == KEY_DOWN && v->scroll > 0)
		v->scroll--;
	else if (ch == KEY_PPAGE)
		v->scroll = v->scroll + page < cl->a.nlog ? v->scroll + page : cl->a.nlog - 1;
	else if (ch == KEY_NPAGE)
		v->scroll = v->scroll > page ? v->scroll - page : 0;
	else if (ch == KEY_END)
		v->scroll = 0;
	else if (ch == KEY_HOME)
		v->scroll = cl->a.nlog - 1;
	if (v->scroll < 0)
		v->scroll = 0;
}

static bool is_scroll_key(int ch)
{
	return ch == KEY_UP || ch == KEY_DOWN || ch == KEY_PPAGE || ch == KEY_NPAGE ||
	       ch == KEY_END || ch == KEY_HOME;
}

/* the message history on the whole screen */
static void history_key(struct client *cl, int ch)
{
	if (is_scroll_key(ch))
		scroll_key(cl, ch);
	else if (ch == '?')
		cl->v.help = true;
	else
		cl->v.history = false; /* Esc, q, Ctrl-P or any other key */
}

static void play_key(struct client *cl, int ch)
{
	if (ch == 'r' && cl->a.mode == APP_PLAY && cl->connected) {
		cl->v.prompting = true;
		cl->v.prompt = "Command (JSON)";
		cl->v.ninput = 0;
		return;
	}
	int k = menu_kind_of_key(ch);
	if (k >= 0 && cl->a.mode == APP_PLAY) {
		if (cl->a.awaiting)
			app_status(&cl->a, true, "Wait for the answer to the last command");
		else
			open_menu(cl, (enum cmd_type)k);
	} else if (k >= 0) {
		app_status(&cl->a, true, "%s: you are %s, not playing", client_command(k)->menu,
		           cl->a.mode == APP_WATCH ? "watching" : "replaying a game");
	} else {
		unknown_key(cl, ch, "here");
	}
}

/* The answer to the quit question (app_quit_question): y leaves for good
 * (with sessions: leave, if the turn is ours; the kept secret goes), c
 * (sessions) closes and keeps the seat for a return, any other key stays. */
static void quit_answer(struct client *cl, int ch)
{
	if (ch == 'c' && cl->a.secret[0]) {
		cl->quit = true; /* the seat file stays: main names the way back */
		return;
	}
	if (ch != 'y' && ch != 'Y')
		return;
	cl->quit = true;
	if (!cl->a.secret[0])
		return;
	send_legal_with(cl, CLIENT_LEAVES); /* leave, when the turn is ours */
	forget_session(cl);
}

static void on_key(struct client *cl, int ch)
{
	struct view *v = &cl->v;
	if (ch == KEY_RESIZE)
		return;
	if (v->help) {
		v->help = false;
	} else if (v->confirm_quit) {
		v->confirm_quit = false;
		quit_answer(cl, ch);
	} else if (v->prompting) {
		prompt_key(cl, ch);
	} else if (v->info_open) {
		info_key(cl, ch);
	} else if (v->look_open) {
		look_key(cl, ch);
	} else if (v->history) {
		history_key(cl, ch);
	} else if (v->menu_open) {
		menu_key(cl, ch);
	} else if (ch == '?') {
		v->help = true;
	} else if (ch == ';') {
		open_look(cl);
	} else if (ch == KEY_CTRL_P) {
		v->history = true;
	} else if (ch == 'q') {
		bool running = cl->a.mode == APP_PLAY && cl->connected &&
		               cl->a.m.result == MODEL_RUNNING && cl->a.m.me >= 0;
		if (running)
			v->confirm_quit = true;
		else
			cl->quit = true;
	} else if (cl->a.mode == APP_REPLAY && replay_key(cl, ch)) {
		return;
	} else if (is_scroll_key(ch)) {
		scroll_key(cl, ch);
	} else {
		play_key(cl, ch);
	}
}

static void on_keys(struct client *cl)
{
	int ch;
	while ((ch = getch()) != ERR && !cl->quit)
		on_key(cl, ch);
	draw(cl);
}

/* ---- the loop ------------------------------------------------------------------------- */

/* How long poll() may block: until the pace releases more lines, the
 * countdown shows the next second or a planned reconnect is due; -1 (for
 * ever) when none of them runs. */
static int poll_timeout(struct client *cl, int pace_wait)
{
	int t = pace_wait;
	if (cl->v.secs_left > 0) {
		double elapsed = clock_ms() - cl->wait_since;
		int tick = 1000 - (int)elapsed % 1000 + 1;
		t = t < 0 || tick < t ? tick : t;
	}
	if (cl->rejoin_at > 0) {
		double left = cl->rejoin_at - clock_ms();
		int due = left > 0 ? (int)left + 1 : 0;
		t = t < 0 || due < t ? due : t;
	}
	return t;
}

static void loop(struct client *cl)
{
	int pace_wait = -1;
	while (!cl->quit) {
		struct pollfd pfd[3 + BOTS_MAX];
		int n = 0, bot_of[3 + BOTS_MAX];
		pfd[n++] = (struct pollfd){.fd = 0, .events = POLLIN};
		bot_of[n] = -2; /* the stop signals' pipe */
		pfd[n++] = (struct pollfd){.fd = stop_pipe[0], .events = POLLIN};
		if (cl->connected) {
			bot_of[n] = -1;
			pfd[n++] = (struct pollfd){.fd = cl->c.fd, .events = POLLIN};
		}
		for (int i = 0; i < cl->bots.started; i++)
			if (cl->bots.fd[i] >= 0) {
				bot_of[n] = i;
				pfd[n++] = (struct pollfd){.fd = cl->bots.fd[i], .events = POLLIN};
			}
		/* block: no CPU while idle */
		int pr = poll(pfd, (nfds_t)n, poll_timeout(cl, pace_wait));
		if (cl->rejoin_at > 0 && clock_ms() >= cl->rejoin_at) {
			try_rejoin(cl);
			draw(cl);
			continue;
		}
		if (pr == 0) {
			pace_wait = release_lines(cl); /* the pace, or a new second to show */
			continue;
		}
		if (pr < 0) {
			if (errno == EINTR) /* SIGWINCH: ncurses queues KEY_RESIZE */
				on_keys(cl);
			continue;
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))
			on_keys(cl);
		for (int i = 1; i < n; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (bot_of[i] == -2) {
				cl->quit = true;
				return;
			}
			if (bot_of[i] < 0)
				pace_wait = on_server(cl);
			else
				on_bot(cl, bot_of[i]);
			draw(cl);
		}
	}
}

/* ---- options -------------------------------------------------------------------------- */

static const char usage_text[] =
        "Usage: sopra-client --local [--name NAME] [--bots K] [--rules E] [--timeout S]"
        " [--pace MS]\n"
        "       sopra-client --port P --name NAME [--host H] [--start|--reconnect] [--rules E]\n"
        "                    [--timeout S] [--pace MS] [--bots K] [--bots-log DIR] [--bot-seed S]\n"
        "                    [--bot-strategy S]\n"
        "       sopra-client --watch --port N [--host H] [--rules E] [--pace MS]\n"
        "       sopra-client --replay FILE    (E: the rule edition, base or revised)\n"
        "\n"
        "  --local         play a game of your own: start a sopra-server on the\n"
        "                  default game (on a free port of 127.0.0.1), join it and\n"
        "                  start the game (with --bots K once the bots are in); the\n"
        "                  server ends with the game or with the client. Its log and\n"
        "                  a journal of the game go to $XDG_STATE_HOME/sopra-server/\n"
        "                  (default ~/.local/state/sopra-server/)\n"
        "  --timeout S     with --local: how long the server waits for each move,\n"
        "                  its --timeout (default 120); playing on another server:\n"
        "                  that server's --timeout, for the countdown of your move\n"
        "  --pace MS       show the other players' moves at most one per MS\n"
        "                  milliseconds, so that you can follow them (default 400;\n"
        "                  0: at once)\n"
        "  --host H        server host (default 127.0.0.1)\n"
        "  --port P        the server's port (with --watch: its --watch-port)\n"
        "  --name NAME     your player name (--local: default $USER, else Player)\n"
        "  --start         start the game once registered (and the bots are in)\n"
        "  --rules E       base (default) or revised: must match the server\n"
        "  --bots K        start K sopra-bot team mates into the same game\n"
        "  --bots-log DIR  write each bot's --log into DIR/BotN.log (DIR must exist)\n"
        "  --bot-seed S    the first bot's seed (default: from the clock)\n"
        "  --bot-strategy S  how the bots play: search (default), greedy or random\n"
        "                  (sopra-bot --strategy; docs/bots.md)\n"
        "  --reconnect     take back the seat NAME had in the game on H:P (a server\n"
        "                  with --reconnect-grace keeps it; the secret is kept in\n"
        "                  $XDG_STATE_HOME/sopra-client/, default ~/.local/state/)\n"
        "  --watch         watch a game read-only (all players' events)\n"
        "  --replay FILE   step through a journal (sopra-server --journal) or a\n"
        "                  sopra-bot --log\n"
        "  --timing FILE   write each redraw's latency after events (tests)\n"
        "Keys: press ? in the client (docs/client.md); the game: docs/playing.md.\n";

static int usage(const char *msg, const char *arg)
{
	sopra_usage_error("sopra-client", usage_text, "%s%s%s", msg, arg ? " " : "",
	                  arg ? arg : "");
	return SOPRA_EXIT_USAGE;
}

/* --local's options: it picks the port and starts the game itself. */
static int local_args(struct client *cl)
{
	if (cl->port > 0 || cl->watch || cl->replay_path || strcmp(cl->host, "127.0.0.1") != 0)
		return usage("--local starts its own server: --port, --host, --watch and "
		             "--replay do not go with it",
		             NULL);
	if (!cl->name) {
		const char *user = getenv("USER");
		cl->name = user && *user ? user : "Player";
	}
	if (!cl->local_timeout)
		cl->local_timeout = LOCAL_TIMEOUT_SEC;
	cl->start = true;
	return -1;
}

/* Whether path is a folder we may write into (errno set when not). */
static bool is_dir(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return false;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return false;
	}
	return access(path, W_OK | X_OK) == 0;
}

static int parse_args(struct client *cl, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes = strcmp(a, "--host") == 0 || strcmp(a, "--port") == 0 ||
		             strcmp(a, "--name") == 0 || strcmp(a, "--rules") == 0 ||
		             strcmp(a, "--bots") == 0 || strcmp(a, "--replay") == 0 ||
		             strcmp(a, "--bots-log") == 0 || strcmp(a, "--bot-seed") == 0 ||
		             strcmp(a, "--bot-strategy") == 0 || strcmp(a, "--timing") == 0 ||
		             strcmp(a, "--timeout") == 0 || strcmp(a, "--pace") == 0;
		if (takes && !val)
			return usage("missing value for", a);
		if (takes)
			i++;
		else
			val = "";
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage_text, stdout);
			return 0;
		} else if (strcmp(a, "--local") == 0) {
			cl->local = true;
		} else if (strcmp(a, "--timeout") == 0) {
			cl->local_timeout = parse_int(val);
			if (cl->local_timeout < 1)
				return usage("--timeout must be whole seconds >= 1, not", val);
		} else if (strcmp(a, "--pace") == 0) {
			cl->pace_ms = parse_int(val);
			if (cl->pace_ms < 0 || cl->pace_ms > 60000)
				return usage("--pace must be 0..60000 milliseconds, not", val);
		} else if (strcmp(a, "--host") == 0) {
			cl->host = val;
		} else if (strcmp(a, "--port") == 0) {
			cl->port = parse_int(val);
			if (cl->port <= 0 || cl->port > 65535)
				return usage("invalid port", val);
		} else if (strcmp(a, "--name") == 0) {
			cl->name = val;
		} else if (strcmp(a, "--rules") == 0) {
			if (strcmp(val, "base") != 0 && strcmp(val, "revised") != 0)
				return usage("--rules must be base or revised, not", val);
			cl->revised = strcmp(val, "revised") == 0;
		} else if (strcmp(a, "--bots") == 0) {
			cl->nbots = parse_int(val);
			if (cl->nbots < 0 || cl->nbots > BOTS_MAX)
				return usage("--bots must be 0..16, not", val);
		} else if (strcmp(a, "--bots-log") == 0) {
			cl->bots.log_dir = val;
		} else if (strcmp(a, "--bot-seed") == 0) {
			cl->bots.seed = strtoul(val, NULL, 10);
		} else if (strcmp(a, "--bot-strategy") == 0) {
			if (strcmp(val, "random") != 0 && strcmp(val, "greedy") != 0 &&
			    strcmp(val, "search") != 0)
				return usage("--bot-strategy must be random, greedy or search, not",
				             val);
			cl->bots.strategy = val;
		} else if (strcmp(a, "--replay") == 0) {
			cl->replay_path = val;
		} else if (strcmp(a, "--timing") == 0) {
			cl->timing_path = val;
		} else if (strcmp(a, "--start") == 0) {
			cl->start = true;
		} else if (strcmp(a, "--watch") == 0) {
			cl->watch = true;
		} else if (strcmp(a, "--reconnect") == 0) {
			cl->reconnect = true;
		} else {
			return usage("unknown option", a);
		}
	}
	if (cl->local)
		return local_args(cl);
	if (cl->local_timeout && (cl->watch || cl->replay_path))
		return usage("--timeout goes with --local or with playing (--name)", NULL);
	if (cl->reconnect && (cl->watch || cl->replay_path || cl->nbots > 0 || cl->start))
		return usage("--reconnect takes a seat back: --watch, --replay, --bots and --start "
		             "do not go with it",
		             NULL);
	if (cl->bots.log_dir && !is_dir(cl->bots.log_dir)) {
		fprintf(stderr, "sopra-client: --bots-log %s: %s\n", cl->bots.log_dir,
		        errno == ENOTDIR ? "not a folder" : strerror(errno));
		return 1;
	}
	if (!cl->replay_path && cl->port <= 0)
		return usage("--port is required", NULL);
	if (!cl->replay_path && !cl->watch && !cl->name)
		return usage("--name is required to play", NULL);
	return -1;
}

/* --reconnect: the secret kept for NAME on H:P, before anything starts. */
static int load_session(struct client *cl)
{
	char err[PATH_MAX + 128];
	int player;
	if (rejoin_path(cl->seat_path, sizeof cl->seat_path, cl->host, cl->port, cl->name, err,
	                sizeof err) != 0 ||
	    rejoin_load(cl->seat_path, cl->a.secret, &player, err, sizeof err) != 0) {
		fprintf(stderr,
		        "sopra-client: %s\n(a seat is kept only on a server with sessions, by a "
		        "client that played there as %s, until the game ends)\n",
		        err, cl->name);
		cl->seat_path[0] = '\0';
		return -1;
	}
	return 0;
}

static int setup(struct client *cl)
{
	char err[512];
	if (cl->replay_path) {
		if (replay_load(&cl->r, cl->replay_path, bots_find_tool("sopra-replay")) != 0) {
			fprintf(stderr, "sopra-client: %s\n", cl->r.err);
			return 1;
		}
		app_init(&cl->a, APP_REPLAY, cl->r.name, cl->r.revised);
		return 0;
	}
	app_init(&cl->a, cl->watch ? APP_WATCH : APP_PLAY, cl->watch ? NULL : cl->name,
	         cl->revised);
	cl->a.timeout_s = cl->local_timeout;
	pace_init(&cl->pace, cl->pace_ms < 0 ? PACE_DEFAULT_MS : cl->pace_ms);
	if (cl->reconnect && load_session(cl) != 0)
		return 1;
	if (cl->local) {
		if (local_start(&cl->server, bots_find_tool("sopra-server"), cl->local_timeout,
		                cl->revised, err, sizeof err) != 0) {
			fprintf(stderr, "sopra-client: %s\n", err);
			return 1;
		}
		cl->port = cl->server.port;
	}
	if (net_connect(&cl->c, cl->host, cl->port, 5.0, err, sizeof err) != 0) {
		fprintf(stderr, "sopra-client: %s\n", err);
		return 1;
	}
	fcntl(cl->c.fd, F_SETFD, FD_CLOEXEC);
	cl->connected = true;
	app_status(&cl->a, false, cl->watch ? "Watching %s:%d" : "Connected to %s:%d", cl->host,
	           cl->port);
	if (cl->reconnect) {
		send_reconnect(cl);
	} else if (!cl->watch && cl->a.cmds.legal.n == 1) {
		/* before the Config the one legal command: registering with our name */
		struct proto_buf reg;
		proto_buf_init(&reg);
		proto_encode_cmd(&cl->a.cmds.legal.v[0], cl->revised ? RULES_REVISED : RULES_BASE,
		                 &reg);
		reg.data[reg.len - 1] = '\0'; /* net_send_line adds the "\n" */
		net_send_line(&cl->c, reg.data);
		proto_buf_free(&reg);
	}
	cl->bots = (struct bots){.exe = bots_find_tool("sopra-bot"),
	                         .host = cl->host,
	                         .port = cl->port,
	                         .revised = cl->revised,
	                         .log_dir = cl->bots.log_dir,
	                         .strategy = cl->bots.strategy ? cl->bots.strategy : "search",
	                         .seed = cl->bots.seed ? cl->bots.seed : (unsigned long)time(NULL)};
	return 0;
}

int main(int argc, char **argv)
{
	static struct client cl;
	cl.host = "127.0.0.1";
	cl.pace_ms = -1;
	int rc = parse_args(&cl, argc, argv);
	if (rc >= 0)
		return rc;
	signal(SIGPIPE, SIG_IGN);
	if (catch_stop_signals() != 0) {
		perror("sopra-client: pipe");
		return 1;
	}
	if (setup(&cl) != 0) {
		local_stop(&cl.server, false);
		return 1;
	}
	if (cl.timing_path)
		cl.timing = fopen(cl.timing_path, "w");
	ui_init();
	if (cl.a.mode == APP_REPLAY)
		replay_goto(&cl, 1); /* the configuration: the board before the game */
	draw(&cl);
	loop(&cl);
	ui_end();
	/* the server first: its journal then says the game was stopped, not
	 * that every player left */
	local_stop(&cl.server, cl.a.m.result != MODEL_RUNNING);
	bots_stop(&cl.bots);
	if (cl.connected)
		net_close(&cl.c);
	if (cl.local)
		printf("sopra-client: the game's journal: %s (sopra-client --replay %s)\n",
		       cl.server.journal_path, cl.server.journal_path);
	if (cl.seat_path[0] && still_playing(&cl)) {
		char hint[PATH_MAX];
		reconnect_hint(&cl, hint, sizeof hint);
		printf("sopra-client: the server keeps your seat for its reconnect grace; "
		       "come back with: %s\n",
		       hint);
	}
	if (cl.timing)
		fclose(cl.timing);
	app_free(&cl.a);
	pace_free(&cl.pace);
	replay_free(&cl.r);
	return 0;
}
