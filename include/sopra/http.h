/*
 * http: the opt-in HTTP port (sopra-server --http-port N, docs/web.md).
 *
 * It serves one page (resources/web/: HTML, CSS and plain JavaScript,
 * compiled in; nothing is loaded from elsewhere) and a small API on
 * libevent's evhttp, on the server's own event loop:
 *
 *   GET  /                    the page (also /app.js, /style.css)
 *   GET  /api/info            what the page needs to know of the server
 *   GET  /api/watch           Server-Sent Events: what a --watch-port
 *                             watcher gets, one protocol line per event,
 *                             and "turn" events (whose turn, time left)
 *   GET  /api/play?name=N     Server-Sent Events: a seat -- registers N,
 *   GET  /api/play?secret=S   or takes seat S back (Reconnect) -- with the
 *                             player's lines, a "me" event (its legal
 *                             commands, dice, characters offered) and
 *                             "turn" events
 *   POST /api/command         one command line for the seat whose secret
 *                             the X-Sopra-Secret header names
 *   POST /api/bots            start one sopra-bot team mate (--http-bots)
 *
 * Nothing of the game is handled here. Each stream is a connection the
 * server adopts (server_adopt: one end of a socketpair), so a browser seat
 * is a player like a TCP one -- the same framing, queue, checks, sessions
 * (its secret comes in its Session line; a reload comes back with
 * Reconnect), limits and budgets -- and a browser watcher is a watcher
 * like those of --watch-port, under the same limit. What this module adds
 * is the HTTP framing, and for a seat the legal commands of its player
 * (game_legal_commands) and its private facts (game_view_of), read from
 * the game after each batch of lines it got, and for every stream whose
 * turn it is and the time left of the --timeout (game_waiting_for,
 * server_timeout_left_ms) when that changes.
 *
 * Bad requests get clear answers: 404 for an unknown path, 405 for a wrong
 * method, 413 for a body over 64 KiB, 400 for a command that is not one
 * line of strict JSON, 403 for an unknown secret, 503 when a limit is
 * reached; a client that does not send its request within --timeout is
 * dropped, and a stream whose browser does not read stops taking lines
 * from its connection, which the server then drops as it drops any
 * client that does not read.
 */
#ifndef SOPRA_HTTP_H
#define SOPRA_HTTP_H

#include <stdio.h>

#include "sopra/config.h"
#include "sopra/net.h"

struct http_opts {
	const char *bind;        /* address to listen on; NULL: every address */
	int port;                /* 0..65535; 0 = an ephemeral port */
	int timeout_sec;         /* >= 1: how long a request may take to arrive */
	int max_bots;            /* sopra-bot processes the page may start (0: none) */
	const char *bot_program; /* the sopra-bot to start; NULL: none */
	int max_play_streams;    /* seats' streams at once (>= 1) */
};

struct http;

/*
 * Listen for HTTP on opts->port and serve on srv's event loop. The game is
 * srv's (core_game(server_core(srv)): the legal commands and views of the
 * seats); cfg is its configuration, borrowed, and must outlive the result,
 * as must srv. Logs "http on ADDR:PORT" to log. Returns NULL after logging
 * why (e.g. the port is in use).
 */
struct http *http_new(struct server *srv, const struct config *cfg, const struct http_opts *opts,
                      FILE *log);

/* The port it listens on (the one port 0 picked). */
int http_port(const struct http *h);

/* After server_run returned: send the streams what they still hold and end
 * them, running the loop for at most cap_ms. */
void http_finish(struct http *h, int cap_ms);

/* Close every stream, stop the bots still running and free h. NULL is fine. */
void http_free(struct http *h);

#endif
