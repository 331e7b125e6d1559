/*
 * net_int.h: what the parts of the net module share. Private to
 * src/net*.c; the module's interface is include/sopra/net.h.
 *
 *   net.c         the server: its event loop and the core it serves, the
 *                 --timeout, the reconnect graces, signals, settling after
 *                 every step, the end's epilogue and the shutdown
 *   net_conn.c    connections: their life cycle, framing their input into
 *                 queue entries (paced for pipelined failures), their
 *                 output (the core's sink), the limits on what they hold
 *                 (idle strangers, stalls, the budget)
 *   net_listen.c  listeners and admission: the listening sockets, accepting
 *                 (the stranger and watcher limits, the spare descriptor)
 *   net_watch.c   watchers: their stream (the Config line, then every line
 *                 to all players) kept once for all of them, each watcher's
 *                 place in it, written after the players' output
 *   net_config.c  the Config line: kept deflated, inflated into one shared
 *                 copy while some connection has it waiting
 *   net_pace.c    pacing of pipelined failures: each connection's token
 *                 bucket, and the strangers' shared one with its queue
 */
#ifndef SOPRA_NET_INT_H
#define SOPRA_NET_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <event2/util.h>

#include "sopra/core.h"
#include "sopra/log.h"
#include "sopra/net.h"
#include "sopra/proto.h"

struct event;
struct evbuffer;
struct evconnlistener;
struct server;
struct config;

/* A line queued by reference for several connections (a long event, the
 * Config line): freed with its last reference. */
struct shared_line {
	struct server *srv;
	size_t refs; /* evbuffer references, plus one per holder (srv->shared) */
	size_t len;
	bool counted; /* in srv->shared_bytes (the output budget) */
	char data[];
};

/* The Config line (net_config.c): deflated while nobody has it waiting. */
struct config_store {
	size_t len;              /* the line's bytes; 0: the configuration has no text */
	unsigned char *deflated; /* zlib's stream of the line; NULL: kept whole in live */
	size_t deflated_len;
	struct shared_line *live; /* the line itself while referenced (or always) */
};

/* How long a closing connection may take to flush before it is cut off. */
#define NET_DRAIN_MS 5000
/* After the write side is shut down: how long to wait for the peer. */
#define NET_LINGER_MS      2000
#define NET_LINGER_POLL_MS 10
/* Shutdown caps: the whole server stops within these. */
#define NET_SHUTDOWN_GAME_OVER_MS 2000
#define NET_SHUTDOWN_SIGNAL_MS    1000
/* Retry delay after accept() fails for lack of resources. */
#define NET_ACCEPT_RETRY_MS 100
/* Bytes read from a socket per readable event, at most. The first read
 * asks for NET_READ_FIRST (a command line fits; libevent's chain for it
 * is 1 KiB), and only a read that fills it is followed by one for the
 * rest: a 32 KiB chain per read would stay in the heap of every game. */
#define NET_READ_BYTES 16384
#define NET_READ_FIRST 512
/* Lines taken from one connection per readable event (fairness). */
#define NET_LINES_PER_EVENT 16
/* Pacing (net_pace.c): a connection that pipelines failing
 * commands is read more slowly, never cut off. Each CommandFailed answered
 * while more of its input waits costs a token; a connection holds at most
 * NET_PACE_BURST, and gets NET_PACE_RATE back a second. With none left, no
 * more of its lines are taken until NET_PACE_RESUME are back (one wake-up
 * per batch, ~NET_PACE_RATE / NET_PACE_RESUME a second). A client that
 * waits for each answer is never charged, however fast it is (sopra-bench
 * rtt fails over half of ~20,000 round trips a second); a scripted client
 * pipelining a turn's worth of mistakes stays within the burst; a flood
 * of junk is answered line for line at a rate that costs the server a few
 * per cent of a CPU, not all of it. */
#define NET_PACE_BURST  256
#define NET_PACE_RATE   4096
#define NET_PACE_RESUME 16
/* A batch of accepts ends after this many connections or this many
 * microseconds, whichever comes first; then the loop turns to the
 * connections it has: a burst of connects cannot starve their first lines
 * nor delay a player's command by more than about one batch. */
#define NET_ACCEPTS_PER_EVENT 8
#define NET_ACCEPT_BATCH_US   200
/* Lines about strangers logged one by one: at most NET_QUIET_BURST at
 * once, refilled at NET_QUIET_RATE a second; the rest is counted and
 * summed up at most every NET_QUIET_SUMMARY_MS (net_quiet.c). */
#define NET_QUIET_BURST      256
#define NET_QUIET_RATE       64
#define NET_QUIET_SUMMARY_MS 1000
/* A connection whose output made no progress for this long does not read
 * (see conn_stalled). */
#define NET_STALL_MS 200
/* Output allowed to wait for a connection that has not registered (it only
 * ever gets answers to its own lines). */
#define NET_STRANGER_MAX_OUTPUT ((size_t)64 << 10)
/* Lines longer than this go out by reference to one shared copy instead of
 * a copy per recipient. */
#define NET_COPY_MAX 1024
/* What a connection is streamed (a Reconnect's history, a watcher's
 * stream) goes into its output as it drains: topped up whenever fewer than
 * this many bytes wait, so that none of it is ever queued whole. */
#define NET_REFILL_LOW ((size_t)64 << 10)
/* One turn of the loop sends a streamed connection (a watcher, a history
 * going out) at most this many bytes: a copy into the kernel of a few MB
 * at once (a 15 MB Config to a fresh loopback socket) would hold up a
 * player's command that arrives meanwhile by a millisecond or more. */
#define NET_STREAM_SEND_MAX ((size_t)64 << 10)
/* The watchers' log is kept in blocks of this size (a longer line gets a
 * block of its own); blocks never move, so watchers send them by
 * reference. */
#define NET_LOG_BLOCK ((size_t)64 << 10)
/* Watchers are written at most this often, at the lowest priority: the
 * lines to all of a command cost its players one copy into the log, and
 * the writes to watchers come after the players' (see net_watch.c). */
#define NET_WATCH_FLUSH_MS 20
/* How often the housekeeping sweep runs (idle limits, the budget). */
#define NET_SWEEP_MS 250
/* libevent priorities (lower runs first): a registered player's input is
 * taken before anything else that is ready, a stranger's after everything
 * else, so a crowd of strangers cannot hold up a game's commands. */
#define NET_PRIO_PLAYER   0
#define NET_PRIO_DEFAULT  1 /* timers, the listeners, signals */
#define NET_PRIO_STRANGER 2
#define NET_PRIOS         3
/* At most one "accept failed" log line per this many ms. */
#define NET_ACCEPT_LOG_MS 1000
/* Listening sockets per port (one per address --bind resolves to). */
#define NET_MAX_LISTENERS 4

enum conn_state {
	CONN_OPEN,      /* reading commands, receiving events */
	CONN_DRAINING,  /* flushing its output; input discarded */
	CONN_LINGERING, /* write side shut down; waiting for the peer */
	CONN_CLOSED,    /* waiting for the reaper */
};

struct listener {
	struct server *srv;
	struct evconnlistener *ev; /* owned */
	bool watch;
};

/* Where a connection comes from, for fairness between addresses: its IPv4
 * address (also one mapped into IPv6), or the /64 prefix of its IPv6
 * address (a host usually has a whole /64). A connection adopted without
 * an address (server_adopt of a socketpair) is an origin of its own: own
 * set, prefix a number no other connection has. */
struct net_origin {
	uint64_t prefix;
	bool v6;
	bool own;
};

/* Admission by origin (net_listen.c): a new stranger from an origin that
 * holds --max-strangers-per-address strangers replaces that origin's
 * idlest; when the stranger list (--max-strangers) is full, the origin with
 * the most strangers gives up its idlest one. A flood from one address so
 * evicts its own connections and never crowds out a client from another.
 * Watchers likewise, per --max-watchers-per-address and the watch port's
 * limit, but only a silent watcher is ever replaced. */

/* The strangers of one origin, idlest first (net_origin.c). */
struct stranger_group {
	struct net_origin origin;
	int n;                    /* strangers in the list */
	size_t slot;              /* index in srv->groups */
	struct conn *head, *tail; /* head: the idlest */
};

/* What a line about a connection reports, for the summary of those not
 * logged (net_quiet.c). */
enum net_quiet_kind { NET_QUIET_OPENED, NET_QUIET_CLOSED, NET_QUIET_EVICTED, NET_QUIET_OTHER };

/* A token bucket: milli thousandths of a token as of at_ms (below zero: a
 * debt, what one batch took beyond the tokens there were). */
struct token_bucket {
	long milli;
	long at_ms;
};

/* The budget of lines about strangers, and what it left out since since_ms. */
struct net_quiet {
	struct token_bucket tokens; /* lines that may be logged */
	long since_ms;              /* when the first line left out was */
	unsigned long left_out, opened, closed, evicted;
};

struct conn {
	struct server *srv;
	evutil_socket_t fd;   /* owned */
	struct event *rev;    /* owned; EV_READ, added while reading */
	struct event *wev;    /* owned; EV_WRITE, added only while out does not drain */
	struct event *timer;  /* owned; drain deadline / linger poll */
	struct event *resume; /* owned; takes more buffered lines (fairness) */
	struct evbuffer *in;  /* owned; bytes not yet framed */
	struct evbuffer *out; /* owned; encoded lines not yet sent */
	int id;               /* commId */
	enum conn_state state;
	bool registered;     /* a player's (sink.joined), not a stranger's */
	bool watcher;        /* came in on the watch port: read-only */
	bool framing_broken; /* sent an over-long line: no more lines taken */
	bool paused;         /* a stranger whose answers pile up: not read */
	long opened_ms;      /* when it was accepted */
	long line_ms;        /* when its last complete line arrived (or opened_ms) */
	long partial_ms;     /* since when bytes wait in `in` with no line taken, or 0 */
	long progress_ms;    /* last time its output moved (or became non-empty) */
	size_t out_shared;   /* bytes of `out` and `later` that are references */
	bool dirty;          /* in srv->dirty: output queued, not yet flushed */
	int linger_polls;
	char peer[64];
	struct net_origin origin; /* its address, for the stranger list's eviction */
	/* a stranger: its origin's group, and its neighbours there in idle
	 * order (net_origin.c); NULL otherwise */
	struct stranger_group *group;
	struct conn *group_prev, *group_next;
	/* pacing (net_pace.c): its bucket; the failures charged, and how often
	 * its reading was paced (both logged when it closes); a stranger held
	 * for the shared bucket is in srv's queue of them (pace_held), and one
	 * let go from it takes a batch without asking again (pace_granted) */
	struct token_bucket pace;
	unsigned long pace_charged;
	unsigned long paced;
	bool pace_held, pace_granted;
	struct conn *held_prev, *held_next;
	/* a Reconnect's history not written yet (hist_player >= 0): entries
	 * [hist_next, hist_end) of that player's history, encoded into `out` as
	 * it drains (conn_refill in net_conn.c); what is sent to c meanwhile waits in
	 * `later`, which exists only while a history goes out */
	int hist_player;
	size_t hist_next, hist_end;
	struct evbuffer *later;
	/* a watcher: the next bytes of the watchers' log it gets (block index,
	 * offset in that block) */
	size_t log_block, log_off;
	struct conn *prev, *next; /* in srv->conns, or srv->dead once CLOSED */
	struct conn *dirty_next;
};

struct server {
	struct event_base *base;
	struct listener listeners[2 * NET_MAX_LISTENERS]; /* players', then watchers' */
	int nlisteners;
	struct event *signals[7];   /* one per entry of net_signals */
	struct event *timeout_ev;   /* the --timeout */
	struct event *reaper;       /* frees CLOSED connections */
	struct event *shutdown_cap; /* ends the loop if flushing takes too long */
	struct event *accept_retry; /* re-enables the listener after EMFILE etc. */
	struct event *sweep;        /* housekeeping: idle limits and the budget */

	struct core *core;  /* owned: the game, the queue, the dispatcher, ... */
	struct game *game;  /* core's */
	struct cmdq *queue; /* core's */
	enum game_rules rules;
	int timeout_sec;
	int port;
	int max_strangers;
	int max_strangers_per_origin; /* --max-strangers-per-address */
	FILE *log;
	int reserve_fd; /* a spare descriptor, given up to accept when none are left */
	int accepts_this_event;
	long accept_batch_us; /* when the current batch of accepts began */
	long accept_log_ms;   /* when "accept failed" was last logged */
	int accept_errors;    /* accept failures not logged since then */

	struct conn *conns;     /* not CLOSED */
	struct conn *dead;      /* CLOSED, not yet freed */
	struct conn *dirty;     /* output queued since the last flush_dirty (any state) */
	struct conn *prompted;  /* got an ActNow since the last flush: flushed first */
	int nconns;             /* length of conns */
	int nstrangers;         /* OPEN connections that have not registered */
	struct net_quiet quiet; /* the log's budget for lines about strangers */
	/* pacing (net_pace.c): the bucket all strangers pay into, the
	 * strangers held for it (first come, first let go), the timer that
	 * lets them go, and how often one was held */
	struct token_bucket strangers_pace;
	struct conn *held_first, *held_last;
	struct event *pace_release;
	unsigned long strangers_held;
	/* the strangers by origin, one group per origin that has any */
	struct stranger_group **groups;
	size_t ngroups, cap_groups;
	uint64_t own_origins; /* the origins given to adopted connections so far */
	int nwatchers;        /* OPEN watch connections */
	int max_watchers;
	int max_watchers_per_origin; /* --max-watchers-per-address */
	bool keep_history;           /* watchers may come: lines to all are kept */
	/* every line sent to all players so far, once for all watchers */
	struct watch_log *watch_log;
	struct event *watch_flush; /* writes the watchers (NET_WATCH_FLUSH_MS) */
	int next_comm_id;

	/* the connections that are not CLOSED, by ascending commId (ids only
	 * grow, so accepting appends) */
	struct conn **by_id;
	size_t nby_id, cap_by_id;

	int timer_for; /* game_waiting_for() when the --timeout was last armed */
	/* sessions: the game is over, but players who missed its end may still
	 * come back for it (settle_after_end); the --timeout bounds the wait */
	bool epilogue;
	bool stopping;
	bool loop_failed;
	bool halted;  /* the core halted: an entry could not be recorded */
	bool trimmed; /* the set-up's freed heap was given back (net.c) */

	/* the event being routed, encoded once (bcast_sink.encode) */
	struct proto_buf out;
	const struct proto_buf *line; /* &out or &config_view */
	/* the Config line (net_config.c): the only copy of the configuration's
	 * text the server keeps (main drops the text) */
	struct config_store config;
	/* the Config line being routed: its shared copy's bytes (not owned) */
	struct proto_buf config_view;
	/* a history entry encoded as a connection drains (not the event being
	 * routed) */
	struct proto_buf aside;
	/* the shared copy of the current event's line, made when the first
	 * recipient gets a line longer than NET_COPY_MAX (see shared_line) */
	struct shared_line *shared;
	size_t shared_bytes; /* bytes in every shared copy still referenced */

	server_line_tap line_tap; /* every line sent, or NULL */
	void *line_tap_ctx;

	/* sessions: each away player's reconnect grace, by player id (each
	 * allocated on its own: its address is the timer's argument) */
	struct grace_timer **graces;
	int ngraces;
};

struct grace_timer {
	struct server *srv;
	struct event *ev; /* owned; NULL until first needed */
	int player;
};

/* One log line (log.h). */
#define net_log(s, ...) sopra_log((s)->log, "", __VA_ARGS__)

static inline struct timeval ms_tv(int ms)
{
	struct timeval tv = {ms / 1000, (suseconds_t)(ms % 1000) * 1000};
	return tv;
}

/* Milliseconds on a monotonic clock. */
static inline long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Microseconds on a monotonic clock. */
static inline long now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- net.c ----------------------------------------------------------------- */

/* The end of every callback: dispatch what it queued, then send what that
 * produced. */
void net_serve_queue(struct server *s);

/* ---- net_conn.c ------------------------------------------------------------ */

/* A new OPEN connection for accepted socket fd (it owns fd from now on:
 * closed if the connection cannot be set up) from origin, with the next
 * commId, counted as a stranger (and put in its origin's group) or a
 * watcher. NULL when its resources cannot be had. */
struct conn *net_conn_open(struct server *s, evutil_socket_t fd, bool watch,
                           const struct net_origin *origin);
/* Close c now (whatever is unsent is lost) and hand it to the reaper.
 * Safe to call from any callback, also c's own. The game is not told. */
void net_conn_close(struct conn *c, const char *why);
/* c is gone (EOF, a socket error, a client that does not read): close it,
 * and if it was taking commands, queue the loss for the game. */
void net_conn_lost(struct conn *c, const char *why);
/* Stop taking commands from c, flush its output, then close it. */
void net_conn_start_drain(struct conn *c, const char *why);
/* c has output to flush at the end of the callback. */
void net_conn_mark_dirty(struct conn *c);
/* Free a connection that is in no list any more. */
void net_conn_free(struct conn *c);
/* Removes and returns the first connection of a list (NULL if empty). */
struct conn *net_list_pop(struct conn **head);
/* Write every connection that got output since the last flush. */
void net_flush_dirty(struct server *s);
/* The line being routed is done with: drop the server's reference to its
 * shared copy. */
void net_shared_release(struct server *s);
/* Run the housekeeping sweep NET_SWEEP_MS from now, unless it is due. */
void net_sweep_arm(struct server *s);
/* The events' callbacks: the sweep, the reaper of CLOSED connections. */
void net_sweep_cb(evutil_socket_t fd, short what, void *arg);
void net_reaper_cb(evutil_socket_t fd, short what, void *arg);
/* The core's sink: deliveries, who joined, what to close, a Reconnect's
 * history (bcast.h). */
struct bcast_sink net_sink(struct server *s);
/* A shared line of len bytes (copied from data unless NULL) with one
 * reference, the caller's; counted: in s->shared_bytes while it lives. */
struct shared_line *net_shared_new(struct server *s, const void *data, size_t len, bool counted);
/* Drop one reference to b; the last frees it. */
void net_shared_unref(struct shared_line *b);
/* Queue shared line b for c by reference (one more reference to b), into
 * buf (c's `out` or `later`). Returns evbuffer's result. */
int net_conn_add_shared(struct conn *c, struct evbuffer *buf, struct shared_line *b);
/* Queue len bytes at data for c by reference, into buf (c's `out` or
 * `later`); data must outlive c (the watchers' log). Returns evbuffer's
 * result. */
int net_conn_add_ref(struct conn *c, struct evbuffer *buf, const void *data, size_t len);

/* ---- net_config.c ---------------------------------------------------------- */

/* Keep cfg's Config line (encoded once: every Config event a server sends
 * is this line); nothing for a configuration without text. */
void net_config_init(struct server *s, const struct config *cfg);
/* The Config line as a shared line, with one reference for the caller
 * (net_shared_unref): the live copy, inflated first if nobody held one.
 * The configuration has text. */
struct shared_line *net_config_take(struct server *s);
/* Queue the Config line for c by reference, into buf. Returns evbuffer's
 * result. */
int net_conn_add_config(struct conn *c, struct evbuffer *buf);
/* b is being freed: if it is the live Config line, there is none now. */
void net_config_forget(struct server *s, const struct shared_line *b);
/* Free what net_config_init kept (after every connection is gone). */
void net_config_free(struct server *s);
/* Write what c has (topped up from what it is streamed), now; what the
 * kernel does not take is left to the write event. */
void net_conn_flush(struct conn *c);

/* ---- net_origin.c ---------------------------------------------------------- */

/* Whether a and b are the same origin. */
bool net_same_origin(const struct net_origin *a, const struct net_origin *b);
/* Whether stranger a has gone longer without a complete line than b (the
 * older connection when both last had one in the same millisecond). */
bool net_idler(const struct conn *a, const struct conn *b);
/* New stranger c (OPEN, its origin set): into its origin's group. */
void net_stranger_add(struct server *s, struct conn *c);
/* c stops being a stranger (registered, or no longer OPEN); nothing if it
 * was none. */
void net_stranger_remove(struct server *s, struct conn *c);
/* Stranger c sent a complete line (its line_ms is now): it is the least
 * idle of its group. Nothing if c is no stranger. */
void net_stranger_had_line(struct conn *c);
/* The group of origin o's strangers, NULL if it has none. */
struct stranger_group *net_strangers_from(const struct server *s, const struct net_origin *o);
/* The stranger to drop for a newcomer: of the origin with the most
 * strangers, the idlest (an origin's idlest breaks a tie between origins);
 * NULL if there is no stranger. */
struct conn *net_stranger_to_evict(const struct server *s);
/* Free the groups (at the server's end: the connections are gone). */
void net_strangers_free(struct server *s);

/* ---- net_pace.c ------------------------------------------------------------ */

/* b's tokens at now (in thousandths): what it had, plus rate a second
 * earned since, at most burst. */
long token_bucket_peek(const struct token_bucket *b, long burst, long rate, long now);
/* b brought up to now; returns its thousandths. */
long token_bucket_refill(struct token_bucket *b, long burst, long rate, long now);
/* b full (burst tokens) as of now. */
void token_bucket_fill(struct token_bucket *b, long burst, long now);
/* Milliseconds until a bucket at milli thousandths earning rate a second
 * holds `tokens` (0: it does). */
long token_bucket_wait_ms(long milli, long rate, long tokens);
/* The shared bucket full, its release timer made. false: out of memory. */
bool net_pace_setup(struct server *s);
/* c's own bucket full as of now (it was just accepted). */
void net_pace_start(struct conn *c, long now);
/* Whether c is being paced: its reading was paced and its own bucket has
 * not filled up since (it pipelines failures faster than NET_PACE_RATE). */
bool net_pace_pacing(const struct conn *c, long now);
/* c was answered CommandFailed: a token from its bucket, and a stranger's
 * from the shared one too, if more of its input waits (it pipelines). */
void net_pace_charge(struct conn *c);
/* Whether c may have more lines taken now; if not, its reading is paused
 * (event_del of its read event) and it is resumed by its resume timer,
 * armed here, or, held for the shared bucket, by the release timer. */
bool net_pace_allows(struct conn *c);
/* c leaves the queue of held strangers (it closes, drains or registered);
 * its reading is the caller's to resume. */
void net_pace_forget(struct conn *c);

/* ---- net_quiet.c ----------------------------------------------------------- */

/* A full budget at now. */
void net_quiet_init(struct net_quiet *q, long now);
/* Whether a line of this kind may be logged at now (it takes one from the
 * budget); false: it was counted as left out. */
bool net_quiet_allow(struct net_quiet *q, long now, enum net_quiet_kind kind);
/* The summary of the lines left out into buf, and true, when there are any
 * and the first is NET_QUIET_SUMMARY_MS old (or force); the count starts
 * anew. */
bool net_quiet_summary(struct net_quiet *q, long now, bool force, char *buf, size_t len);
/* Whether a line of this kind about c may be logged: always for a player
 * or a watcher; for a connection that never registered, net_quiet_allow
 * on the server's budget (after logging a summary that is due). */
bool net_log_conn_allowed(struct conn *c, enum net_quiet_kind kind);
/* Log the summary of s's lines left out, if it is due (or force). */
void net_log_quiet_summary(struct server *s, long now, bool force);
/* net_log for a line about connection c, within the budget for strangers. */
#define net_log_conn(c, kind, ...)                      \
	do {                                            \
		if (net_log_conn_allowed((c), (kind)))  \
			net_log((c)->srv, __VA_ARGS__); \
	} while (0)

/* ---- net_watch.c ----------------------------------------------------------- */

struct watch_log;

/* The watchers' log and its flush timer (lowest priority); false when they
 * cannot be had. */
bool net_watch_setup(struct server *s);
/* Free the log (after every connection: they may reference it). */
void net_watch_free(struct server *s);
/* A line sent to all players: into the log (one copy for every watcher),
 * written to the watchers at the next flush. */
void net_watch_append(struct server *s, const char *line, size_t len);
/* A new watcher c: its stream starts with the Config line and the log from
 * its first line; it is written at the next flush. */
void net_watch_start(struct conn *c);
/* Top up watcher c's output from the log (by reference) while fewer than
 * NET_REFILL_LOW bytes wait. Returns evbuffer's result. */
int net_watch_refill(struct conn *c);
/* Whether watcher c has not been given the whole log yet. */
bool net_watch_behind(const struct conn *c);
/* The bytes the log holds (counted once in the budget). */
size_t net_watch_log_bytes(const struct server *s);

/* ---- net_listen.c ---------------------------------------------------------- */

/* Listen on addr:port for players (watch false) or watchers; the port, or
 * -1 after logging why. where gets the addresses for the log. */
int net_listen(struct server *s, const char *addr, int port, bool watch, char *where,
               size_t where_len);
/* Enable or disable every listening socket. */
void net_listeners_enable(struct server *s, bool on);
/* The accept_retry timer: listen again after a burst or a failure. */
void net_accept_retry_cb(evutil_socket_t fd, short what, void *arg);
/* Get the spare descriptor back if it was given up; false if it cannot. */
bool net_reserve_fd_open(struct server *s);

#endif
