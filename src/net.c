/*
 * net: listener, connections, line framing, the --timeout timer and orderly
 * shutdown, on libevent 2.1 (see include/sopra/net.h).
 *
 * The data path:
 *
 *   socket --evbuffer--> lines --proto_decode--> cmdq --> dispatch --> game
 *   socket <--evbuffer-- encoded lines <-- sink <-- bcast <--events--'
 *
 * net only frames and decodes: every complete line becomes a queue entry,
 * and so do timeouts and lost connections; the dispatcher (dispatch.c) is
 * the only caller of the game. Every callback that queues entries ends with
 * serve_queue, which drains the queue (run_queue) and flushes output
 * (flush_dirty): a command is answered within the callback that read it.
 *
 * Fairness: a readable event takes at most NET_LINES_PER_EVENT lines from
 * its connection (memcached's reqs_per_event). If more complete lines are
 * buffered, the connection stops reading and resumes from a zero-delay
 * timer, which libevent runs only after the sockets that became readable
 * meanwhile: one client pipelining thousands of commands delays another
 * client's command by at most one batch.
 *
 * Connection life cycle (logged on every transition):
 *
 *   OPEN --(Left, bad framing, shutdown)--> DRAINING --(output empty)-->
 *   LINGERING --(peer EOF, all output acknowledged, or 2 s)--> CLOSED
 *   any state --(peer EOF/error, output overflow, deadline)--> CLOSED
 *
 * DRAINING and LINGERING read and discard input so that closing the socket
 * never resets it while the peer still has our last lines in flight: after
 * the output buffer is empty we shut down the write side and wait until the
 * kernel reports everything acknowledged (TIOCOUTQ) or the peer closes.
 * CLOSED connections are freed by a deferred "reaper" callback, never in the
 * middle of a callback chain that may still hold a pointer to them.
 *
 * Output: the sink appends encoded lines to the connection's evbuffer (the
 * Config line by reference: it carries the whole configuration and is the
 * same for everybody) and marks the connection dirty; flush_dirty writes
 * each dirty connection once per callback. Only when the kernel does not
 * take everything is the connection's write event added. The connection
 * just prompted with ActNow is flushed first.
 */
#include "sopra/net.h"
#include "sopra/log.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include <netdb.h>

#include "sopra/core.h"
#include "sopra/proto.h"
#include "sopra/xalloc.h"

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
/* Bytes read from a socket per readable event. */
#define NET_READ_BYTES 16384
/* Lines taken from one connection per readable event (fairness). */
#define NET_LINES_PER_EVENT 16
/* Connections accepted per listener event before the loop turns to the
 * connections it has: a burst of connects cannot starve their first lines. */
#define NET_ACCEPTS_PER_EVENT 8
/* A connection whose output made no progress for this long does not read
 * (see conn_stalled). */
#define NET_STALL_MS 200
/* Output allowed to wait for a connection that has not registered (it only
 * ever gets answers to its own lines). */
#define NET_STRANGER_MAX_OUTPUT ((size_t)64 << 10)
/* Lines longer than this go out by reference to one shared copy instead of
 * a copy per recipient. */
#define NET_COPY_MAX 1024
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

static const char *const conn_state_names[] = {
        [CONN_OPEN] = "open",
        [CONN_DRAINING] = "draining",
        [CONN_LINGERING] = "lingering",
        [CONN_CLOSED] = "closed",
};

struct server;

/* A listening socket: for players (and strangers) or for watchers. */
struct listener {
	struct server *srv;
	struct evconnlistener *ev; /* owned */
	bool watch;
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
	bool registered;     /* got its Config: a player, not a stranger */
	bool watcher;        /* came in on the watch port: read-only */
	bool framing_broken; /* sent an over-long line: no more lines taken */
	bool paused;         /* a stranger whose answers pile up: not read */
	long opened_ms;      /* when it was accepted */
	long line_ms;        /* when its last complete line arrived (or opened_ms) */
	long partial_ms;     /* since when a partial line waits in `in`, or 0 */
	long progress_ms;    /* last time its output moved (or became non-empty) */
	size_t out_shared;   /* bytes of `out` that are references to shared lines */
	bool dirty;          /* in srv->dirty: output queued, not yet flushed */
	int linger_polls;
	char peer[64];
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
	FILE *log;
	int reserve_fd; /* a spare descriptor, given up to accept when none are left */
	int accepts_this_event;
	long accept_log_ms; /* when "accept failed" was last logged */
	int accept_errors;  /* accept failures not logged since then */

	struct conn *conns;    /* not CLOSED */
	struct conn *dead;     /* CLOSED, not yet freed */
	struct conn *dirty;    /* output queued since the last flush_dirty (any state) */
	struct conn *prompted; /* got an ActNow since the last flush: flushed first */
	int nconns;            /* length of conns */
	int nstrangers;        /* OPEN connections that have not registered */
	int nwatchers;         /* OPEN watch connections */
	int max_watchers;
	bool keep_history; /* a watch port is open: lines to all are kept */
	/* every line sent to all players so far, for watchers who join late */
	struct evbuffer *history;
	const char *config_text; /* borrowed; the Config watchers get first */
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

	/* the event being routed, encoded once (bcast_sink.encode) */
	struct proto_buf out;
	const struct proto_buf *line; /* &out or &config_line */
	/* the Config line, encoded once and queued by reference: it must
	 * outlive every connection (server_free frees it last) */
	struct proto_buf config_line;
	const char *config_src; /* the ev->str it was encoded from */
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

static void flush_dirty(struct server *s);
static void serve_queue(struct server *s);
static void sweep_arm(struct server *s);
static void listeners_enable(struct server *s, bool on);

/* ---- logging ------------------------------------------------------------- */

/* One log line (log.h). */
#define net_log(s, ...) sopra_log((s)->log, "", __VA_ARGS__)

static void conn_set_state(struct conn *c, enum conn_state st, const char *why)
{
	net_log(c->srv, "conn %d: %s -> %s (%s)", c->id, conn_state_names[c->state],
	        conn_state_names[st], why);
	if (c->state == CONN_OPEN && c->watcher)
		c->srv->nwatchers--;
	else if (c->state == CONN_OPEN && !c->registered)
		c->srv->nstrangers--;
	c->state = st;
}

static struct timeval ms_tv(int ms)
{
	struct timeval tv = {ms / 1000, (suseconds_t)(ms % 1000) * 1000};
	return tv;
}

/* Milliseconds on a monotonic clock. */
static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- connection lists ---------------------------------------------------- */

static void list_unlink(struct conn **head, struct conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		*head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
}

/* Removes and returns the first connection of a list (NULL if empty). */
static struct conn *list_pop(struct conn **head)
{
	struct conn *c = *head;
	if (c) {
		*head = c->next;
		if (c->next)
			c->next->prev = NULL;
		c->prev = c->next = NULL;
	}
	return c;
}

static void list_push(struct conn **head, struct conn *c)
{
	c->prev = NULL;
	c->next = *head;
	if (*head)
		(*head)->prev = c;
	*head = c;
}

/* Index in s->by_id of the first connection with id >= comm_id. */
static size_t by_id_lower(const struct server *s, int comm_id)
{
	size_t lo = 0, hi = s->nby_id;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->by_id[mid]->id < comm_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The connection with this commId that is not CLOSED, or NULL. */
static struct conn *conn_find(const struct server *s, int comm_id)
{
	size_t i = by_id_lower(s, comm_id);
	return i < s->nby_id && s->by_id[i]->id == comm_id ? s->by_id[i] : NULL;
}

static void by_id_append(struct server *s, struct conn *c)
{
	if (s->nby_id == s->cap_by_id) {
		s->cap_by_id = s->cap_by_id ? s->cap_by_id * 2 : 64;
		s->by_id = xreallocarray(s->by_id, s->cap_by_id, sizeof(struct conn *));
	}
	s->by_id[s->nby_id++] = c;
}

static void by_id_remove(struct server *s, const struct conn *c)
{
	size_t i = by_id_lower(s, c->id);
	if (i < s->nby_id && s->by_id[i] == c) {
		memmove(&s->by_id[i], &s->by_id[i + 1],
		        (s->nby_id - i - 1) * sizeof(struct conn *));
		s->nby_id--;
	}
}

/* ---- connection teardown ----------------------------------------------- */

/* Close c now (whatever is unsent is lost) and hand it to the reaper.
 * Safe to call from any callback, also c's own. The game is not told:
 * see conn_lost. */
static void conn_close(struct conn *c, const char *why)
{
	struct server *s = c->srv;
	if (c->state == CONN_CLOSED)
		return;
	conn_set_state(c, CONN_CLOSED, why);
	event_del(c->rev);
	event_del(c->wev);
	evtimer_del(c->timer);
	evtimer_del(c->resume);
	/* give the descriptor back now: under descriptor pressure the next
	 * accept needs it (the events on it are deleted) */
	evutil_closesocket(c->fd);
	c->fd = -1;
	list_unlink(&s->conns, c);
	by_id_remove(s, c);
	s->nconns--;
	list_push(&s->dead, c);
	event_active(s->reaper, EV_TIMEOUT, 0);
}

/* c is gone (EOF, a socket error, a client that does not read): close it,
 * and if it was taking commands, queue the loss for the game. */
static void conn_lost(struct conn *c, const char *why)
{
	struct server *s = c->srv;
	bool was_open = c->state == CONN_OPEN;
	conn_close(c, why);
	if (was_open && !s->stopping)
		cmdq_push_lost(s->queue, c->id, false);
}

static void conn_free(struct conn *c)
{
	struct event *evs[] = {c->rev, c->wev, c->timer, c->resume};
	for (size_t i = 0; i < COUNT_OF(evs); i++)
		if (evs[i])
			event_free(evs[i]);
	if (c->in)
		evbuffer_free(c->in);
	if (c->out)
		evbuffer_free(c->out);
	if (c->fd >= 0)
		evutil_closesocket(c->fd);
	free(c);
}

static void reaper_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct server *s = arg;
	flush_dirty(s); /* normally empty: no dead connection may stay listed */
	for (struct conn *c; (c = list_pop(&s->dead)) != NULL;)
		conn_free(c);
	if (s->stopping && s->nconns == 0)
		event_base_loopbreak(s->base);
}

/* Bytes the kernel still holds for the peer (unsent or unacknowledged), or
 * -1 if unknown. */
static int socket_outq(evutil_socket_t fd)
{
#ifdef TIOCOUTQ
	int n = 0;
	if (ioctl(fd, TIOCOUTQ, &n) == 0)
		return n;
#else
	(void)fd;
#endif
	return -1;
}

/* The output buffer is empty: send FIN and wait for the peer. */
static void conn_linger(struct conn *c)
{
	conn_set_state(c, CONN_LINGERING, "flushed");
	shutdown(c->fd, SHUT_WR);
	c->linger_polls = 0;
	struct timeval tv = ms_tv(NET_LINGER_POLL_MS);
	evtimer_add(c->timer, &tv);
}

static void conn_mark_dirty(struct conn *c)
{
	if (c->dirty)
		return;
	c->dirty = true;
	c->dirty_next = c->srv->dirty;
	c->srv->dirty = c;
}

/* Stop taking commands from c, flush its output, then close it. Input is
 * read and discarded meanwhile. */
static void conn_start_drain(struct conn *c, const char *why)
{
	if (c->state != CONN_OPEN)
		return;
	conn_set_state(c, CONN_DRAINING, why);
	evtimer_del(c->resume);
	event_add(c->rev, NULL);
	if (evbuffer_get_length(c->out) == 0) {
		conn_linger(c);
	} else {
		struct timeval tv = ms_tv(NET_DRAIN_MS);
		evtimer_add(c->timer, &tv);
		conn_mark_dirty(c); /* flush_dirty writes it and then lingers */
	}
}

static void conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct conn *c = arg;
	switch (c->state) {
	case CONN_DRAINING:
		conn_close(c, "peer does not read; gave up flushing");
		return;
	case CONN_LINGERING: {
		int q = socket_outq(c->fd);
		if (q == 0) {
			conn_close(c, "all output acknowledged");
			return;
		}
		if (++c->linger_polls * NET_LINGER_POLL_MS >= NET_LINGER_MS) {
			conn_close(c, "linger time over");
			return;
		}
		struct timeval tv = ms_tv(NET_LINGER_POLL_MS);
		evtimer_add(c->timer, &tv);
		return;
	}
	case CONN_OPEN:
	case CONN_CLOSED:
		return;
	}
}

/* ---- output -------------------------------------------------------------- */

/* One encoded line shared by every connection it is queued for (by
 * evbuffer reference): a 60 KB Player event for 150 players is one copy,
 * not 150. */
struct shared_line {
	struct server *srv;
	size_t refs; /* evbuffer references, plus one while it is srv->shared */
	size_t len;
	char data[];
};

static void shared_unref(struct shared_line *b)
{
	if (--b->refs > 0)
		return;
	b->srv->shared_bytes -= b->len;
	free(b);
}

/* One connection's reference to a shared line (b NULL: the Config line,
 * which lives as long as the server). */
struct shared_ref {
	struct conn *c;
	struct shared_line *b;
	size_t len;
};

/* evbuffer's cleanup callback: a reference has been sent or dropped. */
static void shared_cleanup(const void *data, size_t len, void *arg)
{
	(void)data;
	(void)len;
	struct shared_ref *r = arg;
	r->c->out_shared -= r->len;
	if (r->b)
		shared_unref(r->b);
	free(r);
}

/* Queue len bytes at data for c by reference (b: the shared line they
 * belong to, or NULL for the Config line). Returns evbuffer's result. */
static int conn_add_shared(struct conn *c, const char *data, size_t len, struct shared_line *b)
{
	struct shared_ref *r = xmalloc(sizeof *r);
	*r = (struct shared_ref){.c = c, .b = b, .len = len};
	if (evbuffer_add_reference(c->out, data, len, shared_cleanup, r) != 0) {
		free(r);
		return -1;
	}
	c->out_shared += len;
	if (b)
		b->refs++;
	return 0;
}

/* Bytes waiting for c that are its own copies (not shared lines). A
 * shared line counts as shared until it is sent whole, so this may
 * undercount by the unsent rest of one line. */
static size_t conn_private_out(const struct conn *c)
{
	size_t n = evbuffer_get_length(c->out);
	return n > c->out_shared ? n - c->out_shared : 0;
}

/* The shared copy of the line being routed (made on first use). */
static struct shared_line *shared_current(struct server *s)
{
	if (!s->shared) {
		struct shared_line *b = xmalloc(sizeof *b + s->out.len);
		b->srv = s;
		b->refs = 1;
		b->len = s->out.len;
		memcpy(b->data, s->out.data, s->out.len);
		s->shared = b;
		s->shared_bytes += b->len;
	}
	return s->shared;
}

/* The line being routed is done with: drop the server's own reference. */
static void shared_release(struct server *s)
{
	if (s->shared) {
		shared_unref(s->shared);
		s->shared = NULL;
	}
}

/* Whether c's output has not moved for NET_STALL_MS although bytes wait:
 * the client does not read (or its network is gone). A reader that keeps
 * up is never stalled, however large one command's burst is. */
static bool conn_stalled(const struct conn *c, long now)
{
	return evbuffer_get_length(c->out) > 0 && now - c->progress_ms >= NET_STALL_MS;
}

/* The backlog of its own copies beyond which a stalled connection is
 * dropped: small for a stranger (it only gets answers to its own lines),
 * NET_MAX_OUTPUT for a player. Shared lines (the Config line, long events)
 * do not count here: they cost one copy for everybody and are held to the
 * budget instead. */
static size_t conn_cap(const struct conn *c)
{
	return c->registered ? NET_MAX_OUTPUT : NET_STRANGER_MAX_OUTPUT;
}

/* Queue one encoded line for c if it is OPEN: the Config line and long
 * lines by reference, short ones as a copy. A client that is stalled with
 * more than its cap waiting is dropped instead. */
static void conn_queue(struct conn *c, const struct proto_buf *line)
{
	struct server *s = c->srv;
	if (c->state != CONN_OPEN)
		return;
	long now = now_ms();
	if (evbuffer_get_length(c->out) == 0) {
		c->progress_ms = now; /* the stall clock starts with the backlog */
	} else if (conn_private_out(c) + line->len > conn_cap(c) && conn_stalled(c, now)) {
		conn_lost(c, "output buffer overflow (client does not read)");
		return;
	}
	int rc;
	if (line == &s->config_line) {
		rc = conn_add_shared(c, line->data, line->len, NULL);
	} else if (line->len > NET_COPY_MAX) {
		struct shared_line *b = shared_current(s);
		rc = conn_add_shared(c, b->data, b->len, b);
	} else {
		rc = evbuffer_add(c->out, line->data, line->len);
	}
	if (rc != 0) {
		conn_lost(c, "cannot queue output");
		return;
	}
	conn_mark_dirty(c);
}

/* Sends what c has pending, as much as the kernel takes now. Returns 0 or
 * the errno of a failed send (EAGAIN and EINTR are not failures). */
static int conn_send_pending(struct conn *c)
{
	while (evbuffer_get_length(c->out) > 0) {
		int n = evbuffer_write(c->out, c->fd);
		if (n > 0) {
			c->progress_ms = now_ms();
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK ? errno : 0;
	}
	return 0;
}

/* Output of c is all sent: stop waiting for the socket; a draining
 * connection goes on to linger. */
static void conn_drained(struct conn *c)
{
	event_del(c->wev);
	if (c->paused && c->state == CONN_OPEN) {
		c->paused = false;
		event_add(c->rev, NULL);
		struct timeval zero = {0, 0};
		evtimer_add(c->resume, &zero); /* lines may wait in c->in */
	}
	if (c->state == CONN_DRAINING) {
		evtimer_del(c->timer);
		conn_linger(c);
	}
}

/* Write what c has queued, now. What the kernel does not take -- and a
 * send error, which conn_write_cb then meets again and handles like the
 * loss of the connection -- is left to the write event. */
static void conn_flush(struct conn *c)
{
	if (c->state != CONN_OPEN && c->state != CONN_DRAINING)
		return;
	if (event_pending(c->wev, EV_WRITE, NULL))
		return; /* already waiting for the socket to take more */
	int err = conn_send_pending(c);
	if (err == 0 && evbuffer_get_length(c->out) == 0)
		conn_drained(c);
	else {
		event_add(c->wev, NULL);
		sweep_arm(c->srv); /* output waits: watch for a stall */
	}
}

/* Flush every connection that got output since the last flush: the one
 * prompted with ActNow first, then the others in the order they got output.
 * Called at the end of every callback that may queue output, before any
 * other callback (the reaper included) can run. */
static void flush_dirty(struct server *s)
{
	struct conn *first = s->prompted;
	s->prompted = NULL;
	if (first && first->dirty) {
		first->dirty = false; /* still linked below, but skipped */
		conn_flush(first);
	}
	/* the list is built by pushing: reverse it to flush in queueing order */
	struct conn *rev = NULL;
	while (s->dirty) {
		struct conn *c = s->dirty;
		s->dirty = c->dirty_next;
		c->dirty_next = rev;
		rev = c;
	}
	while (rev) {
		struct conn *c = rev;
		rev = c->dirty_next;
		c->dirty_next = NULL;
		if (!c->dirty)
			continue;
		c->dirty = false;
		conn_flush(c);
	}
}

/* ---- the broadcaster's sink ---------------------------------------------- */

/* c has registered: its newly arrived input is taken before other
 * connections'. An event that is running or queued to run keeps its
 * priority until it is added again, so the read event is re-added. */
static void conn_promote(struct conn *c)
{
	bool reading = event_pending(c->rev, EV_READ, NULL);
	event_del(c->rev);
	event_priority_set(c->rev, NET_PRIO_PLAYER);
	if (reading)
		event_add(c->rev, NULL);
	/* c->resume keeps the lowest priority: a player's own backlog (more
	 * than NET_LINES_PER_EVENT lines at once) is taken when nothing else
	 * waits, so a player pipelining thousands of lines cannot starve the
	 * signals, the timers or the other connections */
}

/* A line for every player: into the history, and to every watcher. */
static void watchers_send(struct server *s)
{
	if (!s->keep_history)
		return;
	evbuffer_add(s->history, s->out.data, s->out.len);
	for (int i = 0; s->nwatchers > 0 && i < (int)s->nby_id; i++)
		if (s->by_id[i]->watcher)
			conn_queue(s->by_id[i], &s->out);
}

/* Encode ev once for all its recipients; the Config line only once ever. */
static void sink_encode(void *ctx, const struct game_event *ev)
{
	struct server *s = ctx;
	shared_release(s);
	if (ev->type == GEV_CONFIG && ev->str && (!s->config_src || s->config_src == ev->str)) {
		if (!s->config_src) {
			proto_encode(ev, s->rules, &s->config_line);
			s->config_src = ev->str;
		}
		s->line = &s->config_line;
		return;
	}
	proto_buf_reset(&s->out);
	proto_encode(ev, s->rules, &s->out);
	s->line = &s->out;
	if (ev->to == GEV_TO_ALL)
		watchers_send(s);
}

/* Queue the encoded event for comm_id. The tap sees every delivery the
 * broadcaster makes, also to a connection that was lost a moment ago: that
 * keeps the tapped stream a function of the queue entries alone. */
static void sink_send(void *ctx, int comm_id, int player, const struct game_event *ev)
{
	struct server *s = ctx;
	if (s->line_tap)
		s->line_tap(s->line_tap_ctx, comm_id, player, ev, s->line->data, s->line->len);
	struct conn *c = conn_find(s, comm_id);
	if (!c)
		return;
	conn_queue(c, s->line);
	if (ev->type == GEV_ACT_NOW && ev->to >= 0 && c->state == CONN_OPEN)
		s->prompted = c;
}

/* A player registered on comm_id, or came back on it: from now on its
 * input is taken first, and its output may wait longer. */
static void sink_joined(void *ctx, int comm_id, int player)
{
	(void)player;
	struct server *s = ctx;
	struct conn *c = conn_find(s, comm_id);
	if (!c || c->registered)
		return;
	if (c->state == CONN_OPEN)
		s->nstrangers--;
	c->registered = true;
	conn_promote(c);
}

/* A player left: its connection closes once it is flushed. */
static void sink_left(void *ctx, int comm_id, int player)
{
	(void)player;
	struct conn *c = conn_find(ctx, comm_id);
	if (c)
		conn_start_drain(c, "player left");
}

static void sink_close(void *ctx, int comm_id)
{
	struct conn *c = conn_find(ctx, comm_id);
	if (c)
		conn_start_drain(c,
		                 c->framing_broken ? "line too long" : "closed after its history");
}

/* ---- sessions: reconnect graces ------------------------------------------ */

static void grace_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct grace_timer *g = arg;
	struct server *s = g->srv;
	if (s->stopping)
		return;
	cmdq_push_grace_over(s->queue, g->player);
	serve_queue(s);
}

/* A session_timer_fn: start (sec > 0) or stop player's grace timer. */
static void grace_timer(void *ctx, int player, int sec)
{
	struct server *s = ctx;
	assert(player >= 0 && sec >= 0);
	if (player >= s->ngraces) {
		if (sec == 0)
			return;
		s->graces =
		        xgrow_zeroed(s->graces, &s->ngraces, player, sizeof(struct grace_timer *));
	}
	struct grace_timer *g = s->graces[player];
	if (!g) {
		if (sec == 0)
			return;
		g = s->graces[player] = xcalloc(1, sizeof *g);
		g->srv = s;
		g->player = player;
		g->ev = evtimer_new(s->base, grace_cb, g);
		if (!g->ev)
			xalloc_die(sizeof *g);
	}
	if (sec > 0) {
		struct timeval tv = {sec, 0};
		evtimer_add(g->ev, &tv);
	} else {
		evtimer_del(g->ev);
	}
}

struct core *server_core(const struct server *s)
{
	return s->core;
}

void server_resume(struct server *s, int max_comm, int grace_sec)
{
	if (s->next_comm_id < max_comm)
		s->next_comm_id = max_comm;
	core_resume(s->core, grace_sec);
	net_log(s, "resumed: players may reconnect within %d s", grace_sec);
}

/* ---- shutdown ------------------------------------------------------------ */

static void shutdown_cap_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct server *s = arg;
	net_log(s, "shutdown: %d connection(s) still flushing; closing them", s->nconns);
	while (s->conns)
		conn_close(s->conns, "shutdown time over");
	event_base_loopbreak(s->base);
}

/* Stop accepting and reading, flush and close every connection, then leave
 * the loop (at the latest after cap_ms). */
static void begin_shutdown(struct server *s, int cap_ms, const char *why)
{
	if (s->stopping)
		return;
	s->stopping = true;
	net_log(s, "shutting down (%s)", why);
	cmdq_clear(s->queue);
	listeners_enable(s, false);
	evtimer_del(s->accept_retry);
	evtimer_del(s->timeout_ev);
	event_del(s->sweep);
	for (struct conn *c = s->conns, *next; c; c = next) {
		next = c->next;
		conn_start_drain(c, "shutdown");
	}
	struct timeval tv = ms_tv(cap_ms);
	evtimer_add(s->shutdown_cap, &tv);
	/* the reaper ends the loop as soon as no connection is left */
	event_active(s->reaper, EV_TIMEOUT, 0);
}

/* SIGUSR1: one status line in the log. */
static void log_status(const struct server *s)
{
	size_t in = 0, out = 0;
	for (const struct conn *c = s->conns; c; c = c->next) {
		in += evbuffer_get_length(c->in);
		out += evbuffer_get_length(c->out);
	}
	int w = game_waiting_for(s->game);
	char waiting[32];
	if (w >= 0)
		snprintf(waiting, sizeof waiting, "player %d", w);
	else
		snprintf(waiting, sizeof waiting, "%s",
		         w == GAME_WAIT_ANY ? "registration" : "nobody");
	net_log(s,
	        "status: %d player(s) registered, round %d, waiting for %s; %d connection(s) "
	        "(%d stranger(s)); %zu bytes queued out, %zu in, %zu shared",
	        game_player_count(s->game), game_round(s->game), waiting, s->nconns, s->nstrangers,
	        out, in, s->shared_bytes);
}

/* What each signal does (docs/robustness.md). Every one is caught: none
 * ends the process without flushing. */
enum sig_action { SIG_STOP, SIG_STATUS, SIG_IGNORE };
static const struct {
	int sig;
	const char *name;
	enum sig_action action;
} net_signals[] = {
        {SIGINT, "SIGINT", SIG_STOP},     {SIGTERM, "SIGTERM", SIG_STOP},
        {SIGQUIT, "SIGQUIT", SIG_STOP},   {SIGUSR1, "SIGUSR1", SIG_STATUS},
        {SIGHUP, "SIGHUP", SIG_IGNORE},   {SIGUSR2, "SIGUSR2", SIG_IGNORE},
        {SIGALRM, "SIGALRM", SIG_IGNORE},
};
#define NET_NSIGNALS COUNT_OF(net_signals)
_Static_assert(COUNT_OF(net_signals) == COUNT_OF(((struct server *)0)->signals),
               "one libevent event per handled signal");

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	struct server *s = arg;
	size_t k = 0;
	while (k < NET_NSIGNALS && net_signals[k].sig != (int)sig)
		k++;
	if (k == NET_NSIGNALS)
		return;
	switch (net_signals[k].action) {
	case SIG_STATUS:
		log_status(s);
		return;
	case SIG_IGNORE:
		net_log(s, "%s ignored", net_signals[k].name);
		return;
	case SIG_STOP:
		break;
	}
	if (s->stopping) {
		net_log(s, "%s during shutdown: stopping now", net_signals[k].name);
		event_base_loopbreak(s->base);
		return;
	}
	begin_shutdown(s, NET_SHUTDOWN_SIGNAL_MS, net_signals[k].name);
	flush_dirty(s);
}

/* ---- after the end: the epilogue (sessions) ----------------------------- */

/* The number of players who missed the end of the game (session_missed_end);
 * their ids, comma-separated, into who (len > 0). */
static int players_missing_end(const struct server *s, char *who, size_t len)
{
	int n = 0;
	who[0] = '\0';
	for (int p = 0; p < game_player_count(s->game); p++) {
		if (!session_missed_end(core_sessions(s->core), p))
			continue;
		size_t used = strlen(who);
		snprintf(who + used, len - used, "%s%d", n++ ? ", " : "", p);
	}
	return n;
}

/* The game is over and players listed in who missed its end: keep
 * listening for their Reconnects for at most --timeout seconds. Whoever is
 * connected (players, watchers) is flushed and closed as at any end;
 * strangers stay (one may be a player coming back). */
static void epilogue_begin(struct server *s, const char *who)
{
	s->epilogue = true;
	net_log(s,
	        "game over; player(s) %s had no connection: waiting up to %d s for them to "
	        "reconnect and receive the end",
	        who, s->timeout_sec);
	struct timeval tv = {s->timeout_sec, 0};
	evtimer_add(s->timeout_ev, &tv);
	for (struct conn *c = s->conns; c; c = c->next)
		if (c->registered || c->watcher)
			conn_start_drain(c, "game over");
}

/* The --timeout of the epilogue expired. */
static void epilogue_timeout(struct server *s)
{
	char who[256];
	players_missing_end(s, who, sizeof who);
	net_log(s, "epilogue over: player(s) %s did not come back within %d s", who,
	        s->timeout_sec);
	begin_shutdown(s, NET_SHUTDOWN_GAME_OVER_MS, "game over");
	flush_dirty(s);
}

/* The game is over: shut down once nobody who missed the end is left to
 * wait for (without sessions: at once); else begin or go on with the
 * epilogue. */
static void settle_after_end(struct server *s)
{
	char who[256];
	if (players_missing_end(s, who, sizeof who) > 0) {
		if (!s->epilogue)
			epilogue_begin(s, who);
		return;
	}
	if (s->epilogue)
		net_log(s, "epilogue over: every player who had missed the end has received it");
	begin_shutdown(s, NET_SHUTDOWN_GAME_OVER_MS, "game over");
}

/* ---- after every step ---------------------------------------------------- */

/*
 * Called after the queue was drained: either handle the end of the game
 * (settle_after_end) or (re)arm the --timeout while the game waits.
 * restart_timer: a command was applied (or the timer fired), so the wait
 * starts afresh.
 */
static void settle(struct server *s, bool restart_timer)
{
	if (s->stopping)
		return;
	if (game_is_over(s->game)) {
		settle_after_end(s);
		return;
	}
	/* each wait gets the full timeout: restart also when the game now waits
	 * for someone else (e.g. the awaited player's connection was lost) */
	int w = game_waiting_for(s->game);
	if (w == GAME_WAIT_NONE) {
		evtimer_del(s->timeout_ev);
	} else if (restart_timer || w != s->timer_for || !evtimer_pending(s->timeout_ev, NULL)) {
		struct timeval tv = {s->timeout_sec, 0};
		evtimer_add(s->timeout_ev, &tv);
	}
	s->timer_for = w;
}

/* Dispatch what the callbacks queued, then settle the timer and shutdown. */
static void run_queue(struct server *s)
{
	if (s->stopping) {
		cmdq_clear(s->queue);
		return;
	}
	if (cmdq_empty(s->queue))
		return;
	struct dispatch_result r = core_drain(s->core);
	shared_release(s);
	settle(s, r.restart_timer);
}

/* The end of every callback: dispatch what it queued, then send what that
 * produced. */
static void serve_queue(struct server *s)
{
	run_queue(s);
	flush_dirty(s);
}

static void timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct server *s = arg;
	if (s->stopping)
		return;
	if (s->epilogue) {
		epilogue_timeout(s);
		return;
	}
	cmdq_push_timeout(s->queue);
	serve_queue(s);
}

/* ---- limits: idle connections and the memory budget --------------------- */

/* The stranger that has gone longest without a complete line, or NULL. */
static struct conn *oldest_idle_stranger(const struct server *s)
{
	struct conn *best = NULL;
	for (struct conn *c = s->conns; c; c = c->next)
		if (c->state == CONN_OPEN && !c->registered &&
		    (!best || c->line_ms < best->line_ms))
			best = c;
	return best;
}

/* Drop the stranger that has waited longest, to make room for a new
 * connection; false if there is none. */
static bool evict_idle_stranger(struct server *s, const char *why)
{
	struct conn *c = oldest_idle_stranger(s);
	if (!c)
		return false;
	conn_lost(c, why);
	return true;
}

/* Whether victim a is a better choice than b for eviction: strangers
 * before players, then the larger backlog. */
static bool worse_offender(const struct conn *a, const struct conn *b)
{
	if (!b)
		return true;
	if (a->registered != b->registered)
		return !a->registered;
	return evbuffer_get_length(a->out) > evbuffer_get_length(b->out);
}

/*
 * The budget (NET_BUDGET) counts what the server holds for its clients:
 * every connection's buffered input, the copies queued for connections
 * that do not read (stalled), and every shared line still referenced (once,
 * however many connections it is queued for). While the sum is over it,
 * the worst stalled connection is dropped: strangers first, then the one
 * holding the largest backlog. Connections that read are never dropped for
 * it.
 */
static void enforce_budget(struct server *s, long now)
{
	for (;;) {
		size_t total = s->shared_bytes;
		struct conn *victim = NULL;
		for (struct conn *c = s->conns; c; c = c->next) {
			total += evbuffer_get_length(c->in);
			if (c->state == CONN_OPEN && conn_stalled(c, now)) {
				total += conn_private_out(c);
				if (worse_offender(c, victim))
					victim = c;
			}
		}
		if (total <= NET_BUDGET || !victim)
			return;
		net_log(s, "conn %d: %zu bytes wait, %zu in all: over the budget of %zu",
		        victim->id, evbuffer_get_length(victim->out), total, (size_t)NET_BUDGET);
		conn_lost(victim, "over the memory budget (client does not read)");
	}
}

/* Idle limits, both the --timeout: a stranger must send a complete line,
 * and a partial line must be completed, within it. */
static void enforce_idle_limits(struct server *s, long now)
{
	long limit = (long)s->timeout_sec * 1000;
	for (struct conn *c = s->conns, *next; c; c = next) {
		next = c->next;
		if (c->state != CONN_OPEN || c->watcher)
			continue;
		if (conn_stalled(c, now) && conn_private_out(c) > conn_cap(c))
			conn_lost(c, "output buffer overflow (client does not read)");
		else if (!c->registered && now - c->line_ms >= limit)
			conn_lost(c, "stranger idle: no command within the timeout");
		else if (c->partial_ms && now - c->partial_ms >= limit)
			conn_lost(c, "partial line not completed within the timeout");
	}
}

static bool reserve_fd_open(struct server *s);

/* Whether anything needs the sweep: a stranger or a partial line (idle
 * limits), output waiting (stalls, the budget), a spare descriptor to get
 * back. A game whose players read and wait costs no wake-ups. */
static bool sweep_needed(const struct server *s)
{
	if (s->stopping)
		return false;
	if (s->nstrangers > 0 || s->reserve_fd < 0)
		return true;
	for (const struct conn *c = s->conns; c; c = c->next)
		if (c->state == CONN_OPEN && (c->partial_ms || evbuffer_get_length(c->out) > 0))
			return true;
	return false;
}

/* Run the sweep NET_SWEEP_MS from now, unless it is due already. */
static void sweep_arm(struct server *s)
{
	if (!s->stopping && !evtimer_pending(s->sweep, NULL)) {
		struct timeval tv = ms_tv(NET_SWEEP_MS);
		evtimer_add(s->sweep, &tv);
	}
}

static void sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct server *s = arg;
	if (s->stopping)
		return;
	long now = now_ms();
	enforce_idle_limits(s, now);
	enforce_budget(s, now);
	reserve_fd_open(s);
	serve_queue(s);
	if (sweep_needed(s))
		sweep_arm(s);
}

/* ---- input --------------------------------------------------------------- */

/* Only JSON whitespace: such a line is skipped without an answer (a line of
 * just "\r" included, i.e. "\r\r\n"). */
static bool is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

/* c sent a line longer than PROTO_MAX_LINE: answer it, then close it after
 * flushing (the loss is queued, so the game hears of it in order). */
static void conn_line_too_long(struct conn *c)
{
	struct server *s = c->srv;
	net_log(s, "conn %d: line longer than %d bytes", c->id, PROTO_MAX_LINE);
	c->framing_broken = true;
	cmdq_push_error(s->queue, c->id, PROTO_ERR_LINE_TOO_LONG);
	cmdq_push_lost(s->queue, c->id, true);
}

/*
 * Frame and queue up to NET_LINES_PER_EVENT complete lines of c->in.
 * Returns true if complete lines are left for later (the caller pauses
 * reading and schedules c->resume). A partial line stays in c->in.
 */
static bool conn_take_lines(struct conn *c)
{
	struct server *s = c->srv;
	if (!c->registered && conn_private_out(c) > NET_STRANGER_MAX_OUTPUT) {
		/* a stranger that does not read its answers gets no more: its
		 * lines wait in the kernel until it reads (or the sweep drops it) */
		c->paused = true;
		event_del(c->rev);
		return false;
	}
	if (c->watcher) { /* read-only: what a watcher sends is discarded */
		evbuffer_drain(c->in, evbuffer_get_length(c->in));
		return false;
	}
	for (int taken = 0; c->state == CONN_OPEN && !c->framing_broken;) {
		size_t avail = evbuffer_get_length(c->in);
		if (avail == 0)
			return false;
		struct evbuffer_ptr nl = evbuffer_search_eol(c->in, NULL, NULL, EVBUFFER_EOL_LF);
		/* one byte of slack for a "\r" before the "\n" */
		if ((nl.pos < 0 && avail > PROTO_MAX_LINE + 1) ||
		    (nl.pos >= 0 && (size_t)nl.pos > PROTO_MAX_LINE + 1)) {
			conn_line_too_long(c);
			return false;
		}
		if (nl.pos < 0)
			return false;
		if (taken == NET_LINES_PER_EVENT)
			return true;
		size_t n = (size_t)nl.pos;
		const char *line = (const char *)evbuffer_pullup(c->in, (ev_ssize_t)n + 1);
		size_t len = n > 0 && line[n - 1] == '\r' ? n - 1 : n;
		if (len > PROTO_MAX_LINE) {
			conn_line_too_long(c);
			return false;
		}
		if (!is_blank(line, len)) {
			cmdq_push_line(s->queue, c->id, line, len);
			c->line_ms = now_ms();
			taken++;
		}
		evbuffer_drain(c->in, n + 1);
	}
	return false;
}

/* Remember since when a partial line waits in c->in (idle limit). */
static void conn_note_partial(struct conn *c)
{
	if (evbuffer_get_length(c->in) == 0)
		c->partial_ms = 0;
	else if (c->partial_ms == 0) {
		c->partial_ms = now_ms();
		sweep_arm(c->srv);
	}
}

/* Take c's buffered lines; if some are left over, stop reading c until the
 * resume timer has taken them (other connections go first meanwhile). */
static void conn_handle_input(struct conn *c)
{
	if (conn_take_lines(c)) {
		event_del(c->rev);
		struct timeval now = {0, 0};
		evtimer_add(c->resume, &now);
	} else if (c->state != CONN_OPEN || c->framing_broken) {
		evbuffer_drain(c->in, evbuffer_get_length(c->in)); /* discarded from now on */
	}
	conn_note_partial(c);
}

static void conn_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct conn *c = arg;
	struct server *s = c->srv;
	if (c->state != CONN_OPEN)
		return;
	conn_handle_input(c);
	if (!evtimer_pending(c->resume, NULL) && c->state != CONN_CLOSED && !c->paused)
		event_add(c->rev, NULL);
	serve_queue(s);
}

/* Appends what the socket has, up to NET_READ_BYTES, to c->in; returns
 * read(2)'s result. evbuffer_read would do the same with an FIONREAD ioctl
 * before every read: one system call per command more. */
static ssize_t conn_read_some(struct conn *c, evutil_socket_t fd)
{
	struct evbuffer_iovec v;
	if (evbuffer_reserve_space(c->in, NET_READ_BYTES, &v, 1) != 1) {
		errno = ENOMEM;
		return -1;
	}
	ssize_t n = read(fd, v.iov_base, NET_READ_BYTES);
	int e = errno;
	v.iov_len = n > 0 ? (size_t)n : 0;
	evbuffer_commit_space(c->in, &v, 1);
	errno = e;
	return n;
}

static void conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct conn *c = arg;
	struct server *s = c->srv;
	ssize_t n = conn_read_some(c, fd);
	if (n > 0) {
		if (c->state == CONN_OPEN)
			conn_handle_input(c);
		else
			evbuffer_drain(c->in, evbuffer_get_length(c->in));
	} else if (n == 0) {
		conn_lost(c, "peer closed");
	} else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
		net_log(s, "conn %d: socket error: %s", c->id,
		        evutil_socket_error_to_string(errno));
		conn_lost(c, "socket error");
	}
	serve_queue(s);
}

static void conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct conn *c = arg;
	int err = conn_send_pending(c);
	if (err) {
		net_log(c->srv, "conn %d: socket error: %s", c->id,
		        evutil_socket_error_to_string(err));
		conn_lost(c, "socket error");
		serve_queue(c->srv);
	} else if (evbuffer_get_length(c->out) == 0) {
		conn_drained(c);
	}
}

/* ---- accepting ----------------------------------------------------------- */

/* "1.2.3.4:port" or "[::1]:port". */
static void format_addr(const struct sockaddr *sa, int port, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
		snprintf(buf, len, "%s:%d", host, port);
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
		snprintf(buf, len, "[%s]:%d", host, port);
	}
}

/* The peer's address for the log. */
static void format_peer(const struct sockaddr *sa, char *buf, size_t len)
{
	int port = 0;
	if (sa->sa_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)(const void *)sa)->sin_port);
	else if (sa->sa_family == AF_INET6)
		port = ntohs(((const struct sockaddr_in6 *)(const void *)sa)->sin6_port);
	format_addr(sa, port, buf, len);
}

/* A connection for accepted socket fd (owned by it from now on), or NULL
 * when its resources cannot be had (a polite refusal: the socket is
 * closed, the server goes on). */
static struct conn *conn_new(struct server *s, evutil_socket_t fd)
{
	struct conn *c = calloc(1, sizeof *c);
	if (!c) {
		evutil_closesocket(fd);
		return NULL;
	}
	c->srv = s;
	c->fd = fd;
	c->state = CONN_OPEN;
	c->rev = event_new(s->base, fd, EV_READ | EV_PERSIST, conn_read_cb, c);
	c->wev = event_new(s->base, fd, EV_WRITE | EV_PERSIST, conn_write_cb, c);
	c->timer = evtimer_new(s->base, conn_timer_cb, c);
	c->resume = evtimer_new(s->base, conn_resume_cb, c);
	c->in = evbuffer_new();
	c->out = evbuffer_new();
	if (!c->rev || !c->wev || !c->timer || !c->resume || !c->in || !c->out ||
	    event_priority_set(c->rev, NET_PRIO_STRANGER) != 0 ||
	    event_priority_set(c->resume, NET_PRIO_STRANGER) != 0 || event_add(c->rev, NULL) != 0) {
		conn_free(c);
		return NULL;
	}
	return c;
}

/* Enable or disable every listening socket. */
static void listeners_enable(struct server *s, bool on)
{
	for (int k = 0; k < s->nlisteners; k++) {
		if (on)
			evconnlistener_enable(s->listeners[k].ev);
		else
			evconnlistener_disable(s->listeners[k].ev);
	}
}

/* A watcher joining: the Config, then every line sent to all so far. */
static void watcher_catch_up(struct conn *c)
{
	struct server *s = c->srv;
	if (s->config_text) {
		struct proto_buf b;
		proto_buf_init(&b);
		struct game_event ev = {
		        .type = GEV_CONFIG, .to = GEV_TO_SENDER, .str = s->config_text};
		proto_encode(&ev, s->rules, &b);
		evbuffer_add(c->out, b.data, b.len);
		proto_buf_free(&b);
	}
	size_t n = evbuffer_get_length(s->history);
	if (n > 0) {
		char *copy = xmalloc(n);
		evbuffer_copyout(s->history, copy, n);
		evbuffer_add(c->out, copy, n);
		free(copy);
	}
	if (evbuffer_get_length(c->out) > 0)
		conn_mark_dirty(c);
}

/* Set up accepted socket fd as a new OPEN connection (it owns fd from now
 * on); peer names it in the log. A full stranger list makes room by
 * dropping its idlest member; a full watcher list refuses the newcomer.
 * Returns the new commId, or 0 when refused. */
static int admit_peer(struct server *s, evutil_socket_t fd, const char *peer, bool watch)
{
	if (watch && s->nwatchers >= s->max_watchers) {
		net_log(s, "refused a watcher: %d watch already", s->nwatchers);
		evutil_closesocket(fd);
		return 0;
	}
	if (!watch && s->nstrangers >= s->max_strangers)
		evict_idle_stranger(s, "evicted: stranger limit reached");
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct conn *c = conn_new(s, fd);
	if (!c) {
		net_log(s, "cannot set up a new connection: out of resources");
		return 0;
	}
	c->id = ++s->next_comm_id;
	c->watcher = watch;
	c->opened_ms = c->line_ms = c->progress_ms = now_ms();
	snprintf(c->peer, sizeof c->peer, "%s", peer);
	list_push(&s->conns, c);
	by_id_append(s, c);
	s->nconns++;
	if (watch)
		s->nwatchers++;
	else
		s->nstrangers++;
	net_log(s, "conn %d: open (%s%s)", c->id, c->peer, watch ? ", watching" : "");
	sweep_arm(s); /* a stranger's idle limit runs from now */
	if (watch)
		watcher_catch_up(c);
	if (watch && s->epilogue) /* the game so far is all there is */
		conn_start_drain(c, "game over");
	return c->id;
}

/* admit_peer for a socket accepted from the peer at sa. */
static void admit(struct server *s, evutil_socket_t fd, const struct sockaddr *sa, bool watch)
{
	char peer[64];
	format_peer(sa, peer, sizeof peer);
	admit_peer(s, fd, peer, watch);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                      int socklen, void *arg)
{
	(void)l;
	(void)socklen;
	struct listener *L = arg;
	struct server *s = L->srv;
	if (s->stopping) {
		evutil_closesocket(fd);
		return;
	}
	admit(s, fd, sa, L->watch);
	/* a burst of connects: let the loop read the new connections' first
	 * lines before accepting more (a zero timer runs after the I/O) */
	if (s->accepts_this_event++ == 0) {
		struct timeval zero = {0, 0};
		evtimer_add(s->accept_retry, &zero);
	}
	if (s->accepts_this_event >= NET_ACCEPTS_PER_EVENT)
		listeners_enable(s, false);
	flush_dirty(s);
}

static void accept_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct server *s = arg;
	s->accepts_this_event = 0;
	if (!s->stopping)
		listeners_enable(s, true);
}

/* A spare descriptor to give up when accept() finds none left. */
static bool reserve_fd_open(struct server *s)
{
	if (s->reserve_fd < 0)
		s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return s->reserve_fd >= 0;
}

/*
 * No descriptor is left for a waiting connection: give up the spare one,
 * accept, and make room by dropping the idlest stranger -- or, when there
 * is none, close the new connection at once (it learns it was refused
 * instead of hanging in the backlog). Returns true if a connection was
 * taken from the backlog.
 */
static bool accept_with_reserve(struct server *s, const struct listener *L)
{
	if (s->reserve_fd < 0)
		return false;
	close(s->reserve_fd);
	s->reserve_fd = -1;
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	evutil_socket_t fd = accept(evconnlistener_get_fd(L->ev), (struct sockaddr *)&ss, &len);
	if (fd < 0) {
		reserve_fd_open(s);
		return false;
	}
	evutil_make_socket_nonblocking(fd);
	evutil_make_socket_closeonexec(fd);
	if (evict_idle_stranger(s, "evicted: no descriptors left for a new connection")) {
		admit(s, fd, (struct sockaddr *)&ss, L->watch);
	} else {
		net_log(s, "refused a connection: no descriptors left and no stranger to evict");
		evutil_closesocket(fd);
	}
	reserve_fd_open(s);
	return true;
}

/* Log accept failures at most once per NET_ACCEPT_LOG_MS, with a count. */
static void log_accept_error(struct server *s, int e)
{
	long now = now_ms();
	s->accept_errors++;
	if (s->accept_log_ms && now - s->accept_log_ms < NET_ACCEPT_LOG_MS)
		return;
	net_log(s, "accept failed: %s (%d time(s) since the last report)",
	        evutil_socket_error_to_string(e), s->accept_errors);
	s->accept_errors = 0;
	s->accept_log_ms = now;
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct listener *L = arg;
	struct server *s = L->srv;
	int e = EVUTIL_SOCKET_ERROR();
	log_accept_error(s, e);
	if ((e == EMFILE || e == ENFILE) && accept_with_reserve(s, L)) {
		serve_queue(s);
		return; /* the listener stays readable if more wait: called again */
	}
	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
		/* do not spin on a listener that stays readable */
		(void)l;
		listeners_enable(s, false);
		struct timeval tv = ms_tv(NET_ACCEPT_RETRY_MS);
		evtimer_add(s->accept_retry, &tv);
	}
	serve_queue(s);
}

/* ---- public API ---------------------------------------------------------- */

/* The loop with its priorities. After NET_LOW_PRIO_BURST callbacks of the
 * default or a lower priority, libevent looks for new events again before
 * it runs more: a player's command that arrives meanwhile waits for at
 * most that many strangers' batches, not for all of them. */
#define NET_LOW_PRIO_BURST 8
static struct event_base *new_event_base(void)
{
	struct event_config *cfg = event_config_new();
	if (!cfg)
		return NULL;
	event_config_set_max_dispatch_interval(cfg, NULL, NET_LOW_PRIO_BURST, NET_PRIO_DEFAULT);
	struct event_base *base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (base && event_base_priority_init(base, NET_PRIOS) != 0) {
		event_base_free(base);
		return NULL;
	}
	return base;
}

/* The loop's own events: signals, timers, the reaper. */
static bool server_add_events(struct server *s)
{
	for (size_t k = 0; k < NET_NSIGNALS; k++) {
		s->signals[k] = evsignal_new(s->base, net_signals[k].sig, signal_cb, s);
		if (!s->signals[k] || evsignal_add(s->signals[k], NULL) != 0)
			return false;
	}
	s->timeout_ev = evtimer_new(s->base, timeout_cb, s);
	s->reaper = event_new(s->base, -1, 0, reaper_cb, s);
	s->shutdown_cap = evtimer_new(s->base, shutdown_cap_cb, s);
	s->accept_retry = evtimer_new(s->base, accept_retry_cb, s);
	s->sweep = evtimer_new(s->base, sweep_cb, s); /* armed while needed: sweep_arm */
	return s->timeout_ev && s->reaper && s->shutdown_cap && s->accept_retry && s->sweep;
}

/* A listening socket for sa, or -1 (errno set). An IPv6 socket is
 * dual-stack (IPv4 clients too) when dual, else IPv6 only. */
static evutil_socket_t listen_socket(const struct sockaddr *sa, socklen_t len, bool dual)
{
	evutil_socket_t fd = socket(sa->sa_family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	int one = 1, v6only = dual ? 0 : 1;
	evutil_make_socket_closeonexec(fd);
	evutil_make_socket_nonblocking(fd);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
	if (bind(fd, sa, len) != 0 || listen(fd, 128) != 0) {
		int e = errno;
		evutil_closesocket(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The port fd is bound to. */
static int bound_port(evutil_socket_t fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return -1;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)(void *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)(void *)&ss)->sin_port);
}

/* Wrap a listening socket into the next listener. */
static bool add_listener(struct server *s, evutil_socket_t fd, bool watch)
{
	struct listener *L = &s->listeners[s->nlisteners];
	L->srv = s;
	L->watch = watch;
	L->ev = evconnlistener_new(s->base, accept_cb, L,
	                           LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (!L->ev) {
		evutil_closesocket(fd);
		return false;
	}
	evconnlistener_set_error_cb(L->ev, accept_error_cb);
	s->nlisteners++;
	return true;
}

/* The addresses to listen on: addr (a name or numeric address) or, when
 * NULL, the IPv6 and IPv4 wildcards (the IPv6 one dual-stack, tried first). */
static struct addrinfo *listen_addresses(const char *addr, int port)
{
	char service[16];
	snprintf(service, sizeof service, "%d", port);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	                         .ai_family = addr ? AF_UNSPEC : AF_INET6};
	struct addrinfo *res = NULL;
	if (getaddrinfo(addr, service, &hints, &res) != 0)
		return NULL;
	return res;
}

/*
 * Listen on addr:port for players (watch false) or watchers. addr NULL: one
 * dual-stack IPv6 socket ("[::]", IPv4 clients too), or 0.0.0.0 where the
 * machine has no IPv6. A name may stand for several addresses: each gets a
 * socket, all on the same port (port 0: the one the first was given).
 * Returns the port, or -1 after logging why.
 */
static int server_listen(struct server *s, const char *addr, int port, bool watch, char *where,
                         size_t where_len)
{
	struct addrinfo *res = listen_addresses(addr, port);
	int first = s->nlisteners, err = 0;
	where[0] = '\0';
	for (struct addrinfo *ai = res; ai && s->nlisteners < first + NET_MAX_LISTENERS;
	     ai = ai->ai_next) {
		if (s->nlisteners > first) /* later ones take the port the first got */
			((struct sockaddr_in *)(void *)ai->ai_addr)->sin_port =
			        htons((unsigned short)port);
		evutil_socket_t fd = listen_socket(ai->ai_addr, ai->ai_addrlen, !addr);
		if (fd < 0) {
			err = errno;
			continue;
		}
		port = bound_port(fd);
		char host[INET6_ADDRSTRLEN + 16];
		format_addr(ai->ai_addr, port, host, sizeof host);
		if (!add_listener(s, fd, watch))
			continue;
		size_t n = strlen(where);
		snprintf(where + n, where_len - n, "%s%s", n ? ", " : "", host);
	}
	if (res)
		freeaddrinfo(res);
	if (s->nlisteners == first && !addr) { /* no IPv6: plain IPv4 */
		struct sockaddr_in sin = {.sin_family = AF_INET,
		                          .sin_port = htons((unsigned short)port)};
		sin.sin_addr.s_addr = htonl(INADDR_ANY);
		evutil_socket_t fd = listen_socket((struct sockaddr *)&sin, sizeof sin, false);
		int p = fd >= 0 ? bound_port(fd) : -1;
		if (fd >= 0 && add_listener(s, fd, watch)) {
			port = p;
			snprintf(where, where_len, "0.0.0.0:%d", port);
		} else {
			err = errno;
		}
	}
	if (s->nlisteners == first) {
		net_log(s, "cannot listen on %s port %d: %s", addr ? addr : "any address", port,
		        strerror(err ? err : EADDRNOTAVAIL));
		return -1;
	}
	if (!addr && strstr(where, "[::]"))
		snprintf(where, where_len, "0.0.0.0:%d and [::]:%d", port, port);
	return port;
}

struct server *server_new(const struct server_opts *opts, FILE *log)
{
	assert(opts && opts->core.cfg);
	struct server *s = calloc(1, sizeof *s);
	if (!s) {
		if (log)
			fputs("sopra-server: out of memory\n", log);
		return NULL;
	}
	s->rules = opts->core.rules;
	s->timeout_sec = opts->timeout_sec > 0 ? opts->timeout_sec : 1;
	s->max_strangers = opts->max_strangers > 0 ? opts->max_strangers : 1;
	s->max_watchers = opts->max_watchers > 0 ? opts->max_watchers : 64;
	s->config_text = opts->core.cfg->text;
	s->log = log;
	s->reserve_fd = -1;
	s->history = evbuffer_new();
	if (!s->history)
		xalloc_die(sizeof *s);
	proto_buf_init(&s->out);
	proto_buf_init(&s->config_line);
	/* the core's services: our sink, our timers, our log */
	struct core_params cp = opts->core;
	cp.sessions.timer = grace_timer;
	cp.sessions.timer_ctx = s;
	cp.log = log;
	s->core = core_new(&cp, (struct bcast_sink){.encode = sink_encode,
	                                            .send = sink_send,
	                                            .joined = sink_joined,
	                                            .left = sink_left,
	                                            .close = sink_close,
	                                            .ctx = s});
	s->game = core_game(s->core);
	s->queue = core_queue(s->core);

	s->base = new_event_base();
	if (!s->base) {
		net_log(s, "cannot create the event loop");
		goto fail;
	}
	if (!server_add_events(s)) {
		net_log(s, "cannot set up the event loop");
		goto fail;
	}
	char where[512];
	s->port = server_listen(s, opts->bind, opts->port, false, where, sizeof where);
	if (s->port < 0)
		goto fail;
	if (!reserve_fd_open(s))
		net_log(s, "no spare descriptor: connections are refused once none are left");
	net_log(s, "listening on %s (rules %s, timeout %d s, at most %d stranger(s))", where,
	        game_rules_name(s->rules), s->timeout_sec, s->max_strangers);
	s->keep_history = opts->watch || opts->adopted_watchers;
	if (opts->watch) {
		int wp = server_listen(s, opts->bind, opts->watch_port, true, where, sizeof where);
		if (wp < 0)
			goto fail;
		net_log(s, "watchers on %s (at most %d)", where, s->max_watchers);
	}
	return s;

fail:
	server_free(s);
	return NULL;
}

int server_default_max_strangers(int max_players)
{
	int n = 16 * max_players;
	return n < 64 ? 64 : n;
}

void server_set_taps(struct server *s, const struct dispatch_hooks *hooks, server_line_tap on_line,
                     void *line_ctx)
{
	core_set_hooks(s->core, hooks);
	s->line_tap = on_line;
	s->line_tap_ctx = line_ctx;
}

struct event_base *server_base(const struct server *s)
{
	return s->base;
}

int server_port(const struct server *s)
{
	return s->port;
}

int server_adopt(struct server *s, int fd, bool watch, const char *peer)
{
	assert(fd >= 0 && peer);
	if (s->stopping) {
		evutil_closesocket(fd);
		return 0;
	}
	evutil_make_socket_nonblocking(fd);
	evutil_make_socket_closeonexec(fd);
	int id = admit_peer(s, fd, peer, watch);
	flush_dirty(s);
	return id;
}

bool server_watcher_room(const struct server *s)
{
	return !s->stopping && s->nwatchers < s->max_watchers;
}

int server_run(struct server *s)
{
	/* registration is a wait too: it can time out before anyone connects */
	settle(s, true);
	flush_dirty(s);
	if (event_base_dispatch(s->base) < 0) {
		net_log(s, "event loop failed");
		s->loop_failed = true;
	}
	/* whatever is left (signal during shutdown, cap reached) is cut off */
	while (s->conns)
		conn_close(s->conns, "server stopped");
	net_log(s, "stopped");
	return s->loop_failed ? 1 : 0;
}

void server_free(struct server *s)
{
	if (!s)
		return;
	for (struct conn *c; (c = list_pop(&s->conns)) != NULL;)
		conn_free(c);
	for (int p = 0; p < s->ngraces; p++) {
		if (s->graces[p])
			event_free(s->graces[p]->ev);
		free(s->graces[p]);
	}
	free(s->graces);
	for (struct conn *c; (c = list_pop(&s->dead)) != NULL;)
		conn_free(c);
	for (int k = 0; k < s->nlisteners; k++)
		evconnlistener_free(s->listeners[k].ev);
	if (s->history)
		evbuffer_free(s->history);
	for (size_t k = 0; k < NET_NSIGNALS; k++)
		if (s->signals[k])
			event_free(s->signals[k]);
	struct event *evs[] = {s->timeout_ev, s->reaper, s->shutdown_cap, s->accept_retry,
	                       s->sweep};
	for (size_t i = 0; i < COUNT_OF(evs); i++)
		if (evs[i])
			event_free(evs[i]);
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	if (s->base)
		event_base_free(s->base);
	free(s->by_id);
	shared_release(s);
	core_free(s->core);
	proto_buf_free(&s->out);
	proto_buf_free(&s->config_line);
	free(s);
}
