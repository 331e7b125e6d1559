/*
 * app: the terminal client's state without the terminal. It feeds the
 * server's lines to the model (model.h), keeps the event log in words
 * (describe.h), follows whose turn it is and what the status line says.
 * The play, watch and replay modes share it; no ncurses here.
 */
#ifndef SOPRA_CLIENT_APP_H
#define SOPRA_CLIENT_APP_H

#include <stdbool.h>
#include <stddef.h>

#include "command.h"
#include "menu.h"
#include "model.h"
#include "rejoin.h"

enum app_mode { APP_PLAY, APP_WATCH, APP_REPLAY };

struct app {
	enum app_mode mode;
	char *name; /* our player name, NULL when watching */
	bool revised;
	struct model m;
	struct client_cmds cmds; /* play: the commands we may send now (kept up to date) */
	bool broken;             /* the model refused an event: no more folding */
	bool closed;             /* the server closed the connection */
	bool awaiting;           /* a command of ours is in flight */
	int turn;                /* whose turn it is (inferred), -1 none / unknown */
	bool dice_phase;         /* between Crisis and the first turn */
	long events;             /* lines folded */
	int timeout_s;           /* the server's --timeout in s, 0 unknown (the countdown) */
	bool leave_sent;         /* we sent the command to leave: a Left of ours is no timeout */
	int marked;              /* the player whose turn the log marked last, -1 none */
	/* sessions: the secret of our Session line, "" without one (a server
	 * without sessions keeps no seat: a player who quits is gone) */
	char secret[REJOIN_SECRET_HEX + 1];
	/* every line fed since the start (app_reset forgets them): read again
	 * in the other edition when the board contradicts an event */
	char **lines;
	int nlines, linecap;
	/* after a reconnect (app_rejoin): the lines received before, which the
	 * server's history repeats first; folded again without a log line */
	char **seen;
	int nseen, iseen;
	char status[512];
	bool status_err;
	/* the event log: one line per event, in words */
	char **log;
	int nlog, logcap;
};

void app_init(struct app *a, enum app_mode mode, const char *name, bool revised);
void app_free(struct app *a);
/* Forget the board, the log and the lines (replay, a reconnect: fold again
 * from the start); the session secret stays. */
void app_reset(struct app *a);
/* Back on a server after a drop: the board is folded again from the
 * history the server sends, whose first lines are the ones received
 * before. Those are folded without new log lines (the log stays), and once
 * they are through, a note says so; what follows is new. */
void app_rejoin(struct app *a);
/* One server line (without "\n"): decode, describe into the log, fold.
 * Returns the event type, or -1 when the line was refused or ignored (an
 * event the client does not know: a note in the log, nothing else, as
 * protocol.md asks). When the board contradicts an event and the other
 * rule edition reads every line so far, the status line names the fix
 * (--rules). */
int app_feed(struct app *a, const char *line, size_t len);
/* We are sending command c (label: its words for the status line), or,
 * with c NULL, a line typed by hand (label: the line): tell the model what
 * is in flight (a typed line that decodes counts as its command). */
void app_sent(struct app *a, const struct cmd *c, const char *label);
void app_logf(struct app *a, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;
void app_status(struct app *a, bool err, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4)))
#endif
        ;
/* The question on the status line when the player presses q during a
 * game: what quitting costs, and with sessions the way back (c). */
const char *app_quit_question(const struct app *a);
/* The player whose character an event names (the actor), or -1. */
int app_actor(const struct model *m, const struct model_event *ev);

#endif
