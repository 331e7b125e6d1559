/*
 * net: the libevent loop around one game (docs/protocol.md).
 *
 * One struct server owns the event base, the listening sockets, every client
 * connection, the --timeout timer and the core (core.h: the game, the
 * command queue, the dispatcher, the broadcaster and the session layer).
 * Nothing here is global, so a process may run several servers.
 *
 * The data path: line -> queue -> dispatcher -> game -> broadcaster ->
 * session layer -> connections (core.h). net is its sink: it is told by
 * calls which connection registered, what to send where and what to close.
 * What net itself does:
 *   - accepts TCP clients on 0.0.0.0:port; each gets an increasing commId and
 *     its own input and output evbuffers; pending output per client is capped
 *     (NET_MAX_OUTPUT, plus the size of the Config line, which carries the
 *     whole configuration file): a client that does not read is dropped
 *     like a disconnect;
 *   - frames input as "\n"-terminated lines ("\r\n" accepted), at most
 *     PROTO_MAX_LINE bytes; an over-long line is answered with
 *     CommandFailed("line too long") and the connection is closed;
 *   - decodes each line into a queue entry (a bad line is answered with
 *     CommandFailed on that connection only and changes nothing else), at
 *     most a few lines per connection and readable event, so that one
 *     client's flood cannot delay another's command;
 *   - queues the --timeout expiry and every lost connection as entries too,
 *     and drains the queue through the dispatcher after every callback;
 *   - runs the --timeout timer while the game waits (restarted by every
 *     applied command);
 *   - when the game is over, or on SIGINT/SIGTERM, stops reading, flushes
 *     every output (capped in time) and returns from server_run;
 *   - sessions only: when the game is over while players who are still in
 *     it have no connection (they missed the end), first the epilogue: the
 *     connected are flushed and closed, and for at most --timeout seconds
 *     the server goes on listening so that those players can reconnect for
 *     their history, which ends with the end (docs/protocol.md, "After the
 *     end"); it stops as soon as every one of them has.
 */
#ifndef SOPRA_NET_H
#define SOPRA_NET_H

#include <stdio.h>

struct event_base;
struct sockaddr;

#include "sopra/core.h"

/* Output a player that does not read may have waiting before it is
 * dropped (plus the Config line; a stranger gets 64 KiB). A player that
 * reads is never dropped for its backlog. */
#define NET_MAX_OUTPUT ((size_t)8 << 20)
/* All buffered input plus the output waiting for connections that do not
 * read: beyond it the worst of those is dropped (docs/robustness.md). */
#define NET_BUDGET ((size_t)64 << 20)

/* How a server listens and what it tolerates. */
struct server_opts {
	const char *bind;  /* address or name to listen on; NULL: dual-stack [::] */
	int port;          /* 0..65535; 0 = an ephemeral port */
	int timeout_sec;   /* >= 1: the --timeout, also the idle limit of strangers */
	int max_strangers; /* >= 1: connections that have not registered, at once */
	/* strangers from one address (an IPv6 /64) at once (0: the default,
	 * server_default_max_strangers_per_address) */
	int max_strangers_per_address;
	bool watch;       /* open a port for read-only watchers */
	int watch_port;   /* its port (0: ephemeral) */
	int max_watchers; /* watchers at once (0: NET_MAX_WATCHERS) */
	/* watchers from one address at once (0: NET_WATCHERS_PER_ADDRESS) */
	int max_watchers_per_address;
	/* watchers also come through server_adopt (the HTTP port): keep the
	 * lines sent to all for the late ones even without a watch port */
	bool adopted_watchers;
	/* the game: its configuration (borrowed; also sent to watchers as
	 * Config), seed, rules and sessions (docs/protocol.md, "Reconnecting":
	 * .sessions.secret non-NULL turns them on; .grace_sec > 0: a player
	 * whose connection is lost may reconnect within that many seconds
	 * before the game is told). The server fills in the grace timers and
	 * the log. */
	struct core_params core;
};

/* Watchers at once, and from one address (an IPv6 /64) at once, unless
 * the server_opts say otherwise (--max-watchers-per-address). */
#define NET_MAX_WATCHERS         64
#define NET_WATCHERS_PER_ADDRESS 16

/* The default --max-strangers for a game of max_players. */
int server_default_max_strangers(int max_players);
/* The default --max-strangers-per-address for a stranger list of
 * max_strangers: a quarter of it (rounded up). */
int server_default_max_strangers_per_address(int max_strangers);

struct server;

/*
 * Create a server with a new game (opts->core; its rule edition decides
 * the wire format), bind and listen (see struct server_opts; port 0 = an
 * ephemeral port, reported in the log line "listening on ...") with
 * SO_REUSEADDR, and install the signal handlers on its event base.
 * Connection state changes and errors are logged tersely to `log` (NULL:
 * silent). Returns NULL on failure (e.g. the port is in use), after logging
 * why. The process should ignore SIGPIPE (main does).
 */
struct server *server_new(const struct server_opts *opts, FILE *log);

/* The server's core: its game (read it), and for a resume the core to feed
 * the journal into (before server_run). Valid until server_free. */
struct core *server_core(const struct server *srv);

/* Called with every line the broadcaster delivers to a connection, also one
 * lost a moment ago: the connection, the player on it (or -1 for a
 * connection that has not registered), the event and its encoded line with
 * its "\n". The journal digests the event stream with it. */
typedef void (*server_line_tap)(void *ctx, int comm_id, int player, const struct game_event *ev,
                                const char *line, size_t len);

/* Watch the dispatcher (write-ahead) and every line sent; call before
 * server_run. Either may be NULL. ctx is borrowed. */
void server_set_taps(struct server *srv, const struct dispatch_hooks *hooks,
                     server_line_tap on_line, void *line_ctx);

/* The server's libevent loop, for modules that add their own events to it
 * (e.g. the Agones SDK client). Valid until server_free. */
struct event_base *server_base(const struct server *srv);

/* The port the players' listener got (the one --port 0 picked). */
int server_port(const struct server *srv);

/* The port the listening socket fd is bound to (IPv4 or IPv6), or -1 if
 * getsockname fails: what a listener opened on port 0 got. */
int net_bound_port(int fd);

/*
 * A connection made inside the process (the HTTP port, http.h): take fd,
 * one end of a connected socketpair, as if it had been accepted -- on the
 * watch port when watch is true, else on the players' port -- so that it
 * meets the same framing, queue, checks, limits and budgets as a TCP
 * client; peer names it in the log. from is the address the connection
 * stands for (the browser's, an IPv4 or IPv6 one), which it counts against
 * like an accepted one when the stranger list makes room; NULL (or another
 * family): it is an address of its own. Returns its commId, or 0 when it
 * is refused (the watcher limit is reached, or the server is stopping) and
 * fd was closed.
 */
int server_adopt(struct server *srv, int fd, bool watch, const char *peer,
                 const struct sockaddr *from);

/* Whether one more watcher would be taken now (the limit shared by the
 * watch port and the adopted watchers). */
bool server_watcher_room(const struct server *srv);

/* Milliseconds until the --timeout of the game's current wait expires (a
 * turn, a selection, the registration), or -1 when no such timer runs (the
 * game is over, or the server is stopping). For the page's countdown. */
int server_timeout_left_ms(const struct server *srv);

/*
 * Run the loop until the game is over (and every connection has been flushed
 * and closed, at most ~2 s later; with sessions after the epilogue, at most
 * --timeout seconds more) or a SIGINT/SIGTERM arrives. Returns the
 * process exit code: 0 for both of those, 1 if the event loop itself failed
 * or the core halted (an entry could not be journaled: the server flushed
 * what had gone out before it, closed every connection and stopped).
 * Call at most once.
 */
int server_run(struct server *srv);

/* A resume, after the journal was fed into server_core (no connection
 * exists yet: what it delivers goes nowhere, but the players' histories are
 * kept) and before server_run: new connections get commIds above max_comm,
 * and every player still in the game is away with a grace of grace_sec
 * seconds (core_resume). */
void server_resume(struct server *srv, int max_comm, int grace_sec);

/* Close every connection and free the server and its core (not the
 * config). NULL is fine. */
void server_free(struct server *srv);

#endif
