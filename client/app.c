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

void app_free(struct app *a)
{
	clear_log(a);
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
	app_free(a);
	app_init(a, mode, name, revised);
	a->timeout_s = timeout_s;
	free(name);
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

/* We left: by our Leave, with our last character, or removed by the
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
 * event's own line is not logged either (a repeated ActNow). */
static bool mark_turn(struct app *a, const struct model_event *ev, int actor)
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
		app_logf(a, "== Your turn ==");
		return false;
	case MEV_DIE_ROLLED:
		return true; /* the round's dice, or a reroll within the turn */
	default:
		break;
	}
	if (actor >= 0 && actor != a->marked && !m->colony_phase && m->rounds_seen > 0) {
		a->marked = actor;
		app_logf(a, "== %s's turn ==",
		         actor < m->nplayers && m->player_names[actor] ? m->player_names[actor]
		                                                       : "?");
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

int app_feed(struct app *a, const char *line, size_t len)
{
	if (a->broken)
		return -1;
	struct model_event ev;
	char err[600], text[400];
	if (model_decode(&a->m, line, len, &ev, err, sizeof err) != MODEL_OK) {
		a->broken = true;
		app_status(a, true, "Bad line from the server: %s", err);
		app_logf(a, "!! %s", err);
		return -1;
	}
	model_describe(&a->m, &ev, text, sizeof text);
	int actor = app_actor(&a->m, &ev);
	if (mark_turn(a, &ev, actor) && ev.type != MEV_CONFIG)
		app_logf(a, "%s", text);
	bool had_status_err = a->status_err, was_selecting = a->m.selecting;
	if (ev.type == MEV_ACT_NOW || ev.type == MEV_COMMAND_FAILED)
		a->awaiting = false;
	if (model_fold(&a->m, &ev, err, sizeof err) != MODEL_OK) {
		a->broken = true;
		app_status(a, true, "The board contradicts an event: %s", err);
		app_logf(a, "!! %s", err);
		model_event_free(&ev);
		return -1;
	}
	a->events++;
	app_refresh_cmds(a);
	follow_turn(a, &ev, actor);
	/* a failure stays visible until the next command is sent */
	a->status_err = had_status_err && ev.type == MEV_ACT_NOW;
	set_status_after(a, &ev, was_selecting);
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
