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
	bool leave_sent;         /* we sent Leave: a Left of ours is no timeout */
	int marked;              /* the player whose turn the log marked last, -1 none */
	char status[512];
	bool status_err;
	/* the event log: one line per event, in words */
	char **log;
	int nlog, logcap;
};

void app_init(struct app *a, enum app_mode mode, const char *name, bool revised);
void app_free(struct app *a);
/* Forget the board and the log (replay: fold again from the start). */
void app_reset(struct app *a);
/* One server line (without "\n"): decode, describe into the log, fold.
 * Returns the event type, or -1 when the line was refused. */
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
/* The player whose character an event names (the actor), or -1. */
int app_actor(const struct model *m, const struct model_event *ev);

#endif
