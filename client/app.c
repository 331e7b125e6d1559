/*
 * app: the client's state without the terminal (app.h).
 */
#include "app.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "sopra/proto.h"

/* Play: the commands we may send now, after the model changed. */
static void app_refresh_cmds(struct app *a)
{
	char err[300];
	if (a->mode == APP_PLAY && !a->broken &&
	    client_cmds_update(&a->cmds, &a->m, err, sizeof err) != 0)
		app_status(a, true, "%s", err);
}

void app_init(struct app *a, enum app_mode mode, const char *name, bool revised)
{
	memset(a, 0, sizeof *a);
	a->mode = mode;
	a->name = name ? strdup(name) : NULL;
	a->revised = revised;
	a->turn = -1;
	a->marked = -1;
	model_init(&a->m, a->name, revised);
	client_cmds_init(&a->cmds);
	app_refresh_cmds(a);
}

static void clear_log(struct app *a)
{
	for (int i = 0; i < a->nlog; i++)
		free(a->log[i]);
	free(a->log);
	a->log = NULL;
	a->nlog = a->logcap = 0;
}

static void clear_lines(struct app *a)
{
	for (int i = 0; i < a->nlines; i++)
		free(a->lines[i]);
	free(a->lines);
	a->lines = NULL;
	a->nlines = a->linecap = 0;
}

static void drop_seen(struct app *a)
{
	for (int i = 0; i < a->nseen; i++)
		free(a->seen[i]);
	free(a->seen);
	a->seen = NULL;
	a->nseen = a->iseen = 0;
}

void app_free(struct app *a)
{
	clear_log(a);
	clear_lines(a);
	drop_seen(a);
	client_cmds_free(&a->cmds);
	model_free(&a->m);
	free(a->name);
	a->name = NULL;
}

void app_reset(struct app *a)
{
	char *name = a->name;
	a->name = NULL;
	enum app_mode mode = a->mode;
	bool revised = a->revised;
	int timeout_s = a->timeout_s;
	char secret[sizeof a->secret];
	memcpy(secret, a->secret, sizeof secret);
	app_free(a);
	app_init(a, mode, name, revised);
	a->timeout_s = timeout_s;
	memcpy(a->secret, secret, sizeof secret); /* the history brings it again */
	free(name);
}

void app_rejoin(struct app *a)
{
	char **log = a->log, **lines = a->lines;
	int nlog = a->nlog, logcap = a->logcap, nlines = a->nlines;
	a->log = a->lines = NULL;
	a->nlog = a->logcap = a->nlines = a->linecap = 0;
	app_reset(a);
	a->log = log;
	a->nlog = nlog;
	a->logcap = logcap;
	a->seen = lines;
	a->nseen = nlines;
}

static void log_add(struct app *a, const char *text)
{
	if (a->nlog == a->logcap) {
		int cap = a->logcap ? 2 * a->logcap : 256;
		char **nl = realloc(a->log, (size_t)cap * sizeof *nl);
		if (!nl)
			return;
		a->log = nl;
		a->logcap = cap;
	}
	char *copy = strdup(text);
	if (copy)
		a->log[a->nlog++] = copy;
}

void app_logf(struct app *a, const char *fmt, ...)
{
	char buf[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	log_add(a, buf);
}

void app_status(struct app *a, bool err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->status, sizeof a->status, fmt, ap);
	va_end(ap);
	a->status_err = err;
}

int app_actor(const struct model *m, const struct model_event *ev)
{
	int c = -1;
	switch (ev->type) {
	case MEV_MOVED:
	case MEV_SEARCHED:
	case MEV_BARRICADED:
	case MEV_ZOMBIE_KILLED:
	case MEV_ABILITY_USED:
		c = model_find_char(m, ev->v[0]);
		break;
	case MEV_CONTRIBUTED:
	case MEV_DIE_ROLLED:
		return ev->v[0];
	case MEV_CARD_USED: {
		int k = model_find_card(m, ev->v[0]);
		return k >= 0 ? m->cards[k].holder : -1;
	}
	default:
		return -1;
	}
	return c >= 0 ? m->chars[c].owner : -1;
}

const char *app_quit_question(const struct app *a)
{
	if (a->secret[0])
		return "Quit the game? c: close, come back later  y: leave for good  other: stay";
	return "Quit the game? No seat is kept here: you leave, your characters die (y: quit)";
}

/* the first player still in the game after p, -1 none */
static int next_in(const struct model *m, int p)
{
	for (int q = p + 1; q < m->nplayers; q++)
		if (m->player_in[q])
			return q;
	return -1;
}

/* Whose turn: events carry no turn order, so it is inferred (rules.md 5.2):
 * the first player after the round's dice, the sender of ActNow, and from
 * then on whoever acts (turns go in ascending player id). */
static void follow_turn(struct app *a, const struct model_event *ev, int actor)
{
	const struct model *m = &a->m;
	switch (ev->type) {
	case MEV_CRISIS:
		a->dice_phase = true;
		a->turn = -1;
		return;
	case MEV_ACT_NOW:
		a->dice_phase = false;
		a->turn = m->me;
		return;
	case MEV_COLONY_PHASE_STARTED:
	case MEV_GAME_END:
		a->turn = -1;
		return;
	case MEV_LEFT:
		if (ev->v[0] == a->turn)
			a->turn = next_in(m, ev->v[0]);
		return;
	default:
		break;
	}
	if (a->dice_phase && ev->type == MEV_DIE_ROLLED) {
		a->turn = next_in(m, -1);
		return;
	}
	if (actor >= 0 && !m->colony_phase && actor > a->turn) {
		a->dice_phase = false;
		a->turn = actor;
	}
}

/* We left: by our command to leave, with our last character, or removed by the
 * server's timeout (the only other way a connected player leaves). */
static void status_left(struct app *a, bool was_selecting)
{
	if (a->leave_sent)
		app_status(a, true, "You have left the game");
	else if (model_living_of(&a->m, a->m.me) == 0 && !was_selecting)
		app_status(a, true, "You have no characters left: you are out of the game");
	else if (a->timeout_s > 0)
		app_status(a, true,
		           "Timeout: no command within the server's %d s, so it removed you "
		           "from the game",
		           a->timeout_s);
	else
		app_status(a, true,
		           "Timeout: no command in time, so the server removed you from the "
		           "game");
	app_logf(a, "!! %s", a->status);
}

/* The log's turn marker: "== Bot1's turn ==" before the first move of a
 * player's turn, "== Your turn ==" for our first ActNow of a turn (the
 * ActNow after each of our commands is not logged again). False: the
 * event's own line is not logged either (a repeated ActNow). quiet: a line
 * of the history folded again after a reconnect, whose marker the log
 * already has: only the marker's state follows. */
static bool mark_turn(struct app *a, const struct model_event *ev, int actor, bool quiet)
{
	const struct model *m = &a->m;
	switch (ev->type) {
	case MEV_NEXT_ROUND:
	case MEV_COLONY_PHASE_STARTED:
		a->marked = -1;
		return true;
	case MEV_ACT_NOW:
		if (m->my_turn && a->marked == m->me)
			return false;
		a->marked = m->me;
		if (!quiet)
			app_logf(a, "== Your turn ==");
		return false;
	case MEV_DIE_ROLLED:
		return true; /* the round's dice, or a reroll within the turn */
	default:
		break;
	}
	if (actor >= 0 && actor != a->marked && !m->colony_phase && m->rounds_seen > 0) {
		a->marked = actor;
		const char *who = actor < m->nplayers && m->player_names[actor]
		                          ? m->player_names[actor]
		                          : "?";
		if (!quiet)
			app_logf(a, "== %s's turn ==", who);
	}
	return true;
}

static void set_status_after(struct app *a, const struct model_event *ev, bool was_selecting)
{
	const struct model *m = &a->m;
	switch (ev->type) {
	case MEV_CONFIG:
		if (a->mode == APP_PLAY)
			app_status(a, false, "Registered as %s. Waiting for players (S: start now)",
			           a->name ? a->name : "?");
		break;
	case MEV_CHARACTERS:
		app_status(a, false, "Pick two characters: press p");
		break;
	case MEV_ACT_NOW:
		if (!a->status_err)
			app_status(a, false, "Your turn: choose an action (? for help)");
		break;
	case MEV_COMMAND_FAILED:
		app_status(a, true, "Command failed: %s", ev->s ? ev->s : "");
		break;
	case MEV_REGISTRATION_ABORTED:
		app_status(a, true, "The registration was aborted");
		break;
	case MEV_GAME_END:
		app_status(a, !ev->v[0], "Game over: the colony has %s", ev->v[0] ? "WON" : "LOST");
		break;
	case MEV_LEFT:
		if (ev->v[0] == m->me && m->me >= 0)
			status_left(a, was_selecting);
		break;
	case MEV_GAME_STARTED:
		if (a->mode == APP_PLAY)
			app_status(a, false, "The game has started");
		break;
	default:
		break;
	}
}

/* Keep a copy of the line (for the edition check). */
static void keep_line(struct app *a, const char *line, size_t len)
{
	if (a->nlines == a->linecap) {
		int cap = a->linecap ? 2 * a->linecap : 256;
		char **nl = realloc(a->lines, (size_t)cap * sizeof *nl);
		if (!nl)
			return;
		a->lines = nl;
		a->linecap = cap;
	}
	char *copy = malloc(len + 1);
	if (!copy)
		return;
	memcpy(copy, line, len);
	copy[len] = '\0';
	a->lines[a->nlines++] = copy;
}

/* Whether the other rule edition folds every line kept without a
 * contradiction: then the server plays that one. */
static bool other_edition_fits(const struct app *a)
{
	struct model m;
	model_init(&m, a->name, !a->revised);
	bool fits = true;
	char err[600];
	for (int i = 0; i < a->nlines && fits; i++) {
		int rc = model_fold_line(&m, a->lines[i], strlen(a->lines[i]), err, sizeof err);
		fits = rc == MODEL_OK || rc == MODEL_UNKNOWN_EVENT;
	}
	model_free(&m);
	return fits;
}

/* The board refused the last line (err: why): the client stops folding. */
static void broken(struct app *a, const char *what, const char *err)
{
	a->broken = true;
	app_logf(a, "!! %s", err);
	if (other_edition_fits(a)) {
		const char *other = a->revised ? "base" : "revised";
		app_status(a, true, "The server plays the %s rules: start again with --rules %s",
		           other, other);
		app_logf(a, "!! the server plays %s, not %s: use --rules %s", other,
		         a->revised ? "revised" : "base", other);
		return;
	}
	app_status(a, true, "%s: %s", what, err);
}

int app_feed(struct app *a, const char *line, size_t len)
{
	if (a->broken)
		return -1;
	struct model_event ev;
	char err[600], text[400];
	/* a line of the history that we had received before the drop */
	bool again = a->iseen < a->nseen && strlen(a->seen[a->iseen]) == len &&
	             memcmp(a->seen[a->iseen], line, len) == 0;
	if (again)
		a->iseen++;
	else if (a->nseen > 0)
		drop_seen(a); /* not the same: from here on, it is news */
	int rc = model_decode(&a->m, line, len, &ev, err, sizeof err);
	if (rc == MODEL_UNKNOWN_EVENT) {
		app_logf(a, "-- ignored a line the client does not know: %s", err);
		return -1;
	}
	keep_line(a, line, len);
	if (rc != MODEL_OK) {
		broken(a, "Bad line from the server", err);
		return -1;
	}
	model_describe(&a->m, &ev, text, sizeof text);
	int actor = app_actor(&a->m, &ev);
	if (mark_turn(a, &ev, actor, again) && ev.type != MEV_CONFIG && !again)
		app_logf(a, "%s", text);
	bool had_status_err = a->status_err, was_selecting = a->m.selecting;
	if (ev.type == MEV_ACT_NOW || ev.type == MEV_COMMAND_FAILED)
		a->awaiting = false;
	if (model_fold(&a->m, &ev, err, sizeof err) != MODEL_OK) {
		broken(a, "The board contradicts an event", err);
		model_event_free(&ev);
		return -1;
	}
	if (ev.type == MEV_SESSION && ev.s)
		snprintf(a->secret, sizeof a->secret, "%s", ev.s);
	a->events++;
	app_refresh_cmds(a);
	follow_turn(a, &ev, actor);
	/* a failure stays visible until the next command is sent */
	a->status_err = had_status_err && ev.type == MEV_ACT_NOW;
	set_status_after(a, &ev, was_selecting);
	if (again && a->iseen == a->nseen) {
		app_logf(a, "-- back in the game: the server sent the %d lines we had again",
		         a->nseen);
		drop_seen(a);
	}
	int type = (int)ev.type;
	model_event_free(&ev);
	return type;
}

void app_sent(struct app *a, const struct cmd *c, const char *label)
{
	struct proto_cmd typed;
	proto_cmd_init(&typed);
	const char *err = NULL;
	if (!c && proto_decode(label, strlen(label), a->revised ? RULES_REVISED : RULES_BASE,
	                       &typed, &err))
		c = &typed.cmd;
	a->awaiting = true;
	a->status_err = false;
	app_status(a, false, "Sent: %s", label);
	const struct client_command *row = c ? client_command(c->type) : NULL;
	if (c)
		client_sent(&a->m, c);
	else
		model_set_pending(&a->m, MODEL_PEND_NONE, -1);
	if (row && (row->flags & CLIENT_ENDS_TURN)) {
		a->awaiting = false;
		a->turn = next_in(&a->m, a->m.me);
		app_status(a, false, "Turn ended. Waiting for the others");
	}
	if (row && (row->flags & CLIENT_LEAVES))
		a->leave_sent = true;
	if (row && (row->flags & CLIENT_NO_PROMPT))
		a->awaiting = false;
	proto_cmd_clear(&typed);
	app_refresh_cmds(a);
}
