/*
 * net: listener, connections, line framing, event routing, the --timeout
 * timer and orderly shutdown, on libevent 2.1 (see include/sopra/net.h).
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
 * Each connection has its own two flat buffers and plain libevent events
 * (no bufferevents: their chains, locks and callbacks, and the FIONREAD
 * ioctl before every read, cost more than the work per command;
 * docs/performance.md). Input: one recv per readable event into `in`,
 * then every complete line is handled in place. Output: conn_write only
 * appends to `out` and marks the connection dirty; every callback that may
 * queue output ends with flush_dirty(), which writes each dirty connection
 * with one sendmsg (all events of all commands of that callback at once). Only
 * when the kernel does not take everything is the connection's write event
 * added, until `out` is empty again. The connection that was just prompted
 * with ActNow is flushed first: the player who must act next should not
 * wait for the copies sent to everyone else.
 */
#include "sopra/net.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "sopra/proto.h"

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
/* Input buffer: first size, and the most it grows to (a line of
 * PROTO_MAX_LINE bytes, its "\r\n", and room for one more read). */
#define NET_IN_FIRST 4096u
#define NET_IN_MAX   ((size_t)PROTO_MAX_LINE + 2u + NET_IN_FIRST)
/* Buffers above this size are released once they are empty again (a long
 * line, the Config event of a large configuration). */
#define NET_KEEP_BYTES 16384u

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

/* A flat byte buffer: data[off..len) is pending. An output buffer may also
 * hold one block by reference (the Config line, which lives as long as the
 * server and may be megabytes: not copied for every player): it goes out
 * after data[off..ref_at) and before data[ref_at..len). */
struct buf {
	char *data;
	size_t off, len, cap;
	const char *ref; /* the unsent rest of the block, or NULL */
	size_t ref_len, ref_at;
};

/* Bytes b still has to send, the block by reference included. */
static size_t buf_pending(const struct buf *b)
{
	return b->len - b->off + (b->ref ? b->ref_len : 0);
}

struct conn {
	struct server *srv;
	evutil_socket_t fd;  /* owned */
	struct event *rev;   /* owned; EV_READ, added while not CLOSED */
	struct event *wev;   /* owned; EV_WRITE, added only while out does not drain */
	struct event *timer; /* owned; drain deadline / linger poll */
	struct buf in, out;
	int id;     /* commId, for the log */
	int player; /* GAME_NO_PLAYER until Register succeeds */
	enum conn_state state;
	int linger_polls;
	bool dirty; /* in srv->dirty: output queued, not yet flushed */
	char peer[64];
	struct conn *prev, *next; /* in srv->conns, or srv->dead once CLOSED */
	struct conn *dirty_next;
};

/* What net knows about player p. */
struct player_slot {
	struct conn *conn;       /* the OPEN connection of p, or NULL */
	bool in_game;            /* registered and no Left(p) delivered yet */
	bool disconnect_pending; /* conn lost while in the game: tell the game */
};

struct server {
	struct event_base *base;
	struct evconnlistener *listener;
	struct event *sig_int, *sig_term;
	struct event *timeout_ev;   /* the --timeout */
	struct event *reaper;       /* frees CLOSED connections */
	struct event *shutdown_cap; /* ends the loop if flushing takes too long */
	struct event *accept_retry; /* re-enables the listener after EMFILE etc. */

	struct game *game; /* borrowed */
	enum game_rules rules;
	int timeout_sec;
	int port;
	FILE *log;

	struct conn *conns;    /* not CLOSED */
	struct conn *dead;     /* CLOSED, not yet freed */
	struct conn *dirty;    /* output queued since the last flush_dirty (any state) */
	struct conn *prompted; /* got an ActNow since the last flush: flushed first */
	int nconns;            /* length of conns */
	int next_comm_id;

	struct player_slot *players; /* owned; indexed by player id */
	int nplayers;                /* slots in use (max id + 1) */
	int players_cap;

	int timer_for; /* game_waiting_for() when the --timeout was last armed */
	bool stopping;
	bool loop_failed;

	/* scratch, reused for every command */
	struct game_event_list events;
	struct proto_cmd cmd;
	struct proto_buf out;
	/* the Config line, encoded once (it carries the whole configuration
	 * file, the same for every player) and queued by reference: it must
	 * outlive every connection (server_free frees it last) */
	struct proto_buf config_line;
	const char *config_src; /* the ev->str it was encoded from */
};

static void flush_dirty(struct server *s);

/* ---- logging ------------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
net_log(const struct server *s, const char *fmt, ...)
{
	if (!s->log)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("sopra-server: ", s->log);
	vfprintf(s->log, fmt, ap);
	fputc('\n', s->log);
	va_end(ap);
	fflush(s->log);
}

static void conn_set_state(struct conn *c, enum conn_state st, const char *why)
{
	net_log(c->srv, "conn %d: %s -> %s (%s)", c->id, conn_state_names[c->state],
	        conn_state_names[st], why);
	c->state = st;
}

static struct timeval ms_tv(int ms)
{
	struct timeval tv = {ms / 1000, (suseconds_t)(ms % 1000) * 1000};
	return tv;
}

/* ---- connection teardown ----------------------------------------------- */

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

/* c stops being its player's connection. If the player is still in the game
 * the game must hear about it (done later, in settle). */
static void conn_detach(struct conn *c)
{
	struct server *s = c->srv;
	if (c->player < 0 || c->player >= s->nplayers)
		return;
	struct player_slot *ps = &s->players[c->player];
	if (ps->conn != c)
		return;
	ps->conn = NULL;
	if (ps->in_game && !s->stopping)
		ps->disconnect_pending = true;
}

/* Close c now (whatever is unsent is lost) and hand it to the reaper.
 * Safe to call from any callback, also c's own. */
static void conn_close(struct conn *c, const char *why)
{
	struct server *s = c->srv;
	if (c->state == CONN_CLOSED)
		return;
	conn_detach(c);
	conn_set_state(c, CONN_CLOSED, why);
	event_del(c->rev);
	event_del(c->wev);
	evtimer_del(c->timer);
	list_unlink(&s->conns, c);
	s->nconns--;
	list_push(&s->dead, c);
	event_active(s->reaper, EV_TIMEOUT, 0);
}

static void conn_free(struct conn *c)
{
	struct event *evs[] = {c->rev, c->wev, c->timer};
	for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
		if (evs[i])
			event_free(evs[i]);
	if (c->fd >= 0)
		evutil_closesocket(c->fd);
	free(c->in.data);
	free(c->out.data);
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

/* Stop taking commands from c, flush its output, then close it. */
static void conn_start_drain(struct conn *c, const char *why)
{
	if (c->state != CONN_OPEN)
		return;
	conn_detach(c);
	conn_set_state(c, CONN_DRAINING, why);
	if (buf_pending(&c->out) == 0) {
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

/* Moves the pending bytes of b to its front. */
static void buf_compact(struct buf *b)
{
	memmove(b->data, b->data + b->off, b->len - b->off);
	b->len -= b->off;
	if (b->ref)
		b->ref_at -= b->off; /* off <= ref_at while a block is pending */
	b->off = 0;
}

/* Makes room for n more bytes at the end of b; false if memory runs out.
 * The pending bytes are moved to the front only when that moves no more
 * than it frees, so a slow reader's backlog is not copied again and again
 * (amortised O(1) per byte; b grows to at most about twice its backlog). */
static bool buf_reserve(struct buf *b, size_t n)
{
	if (b->cap - b->len >= n)
		return true;
	if (b->off > 0 && b->off >= b->len - b->off) {
		buf_compact(b);
		if (b->cap - b->len >= n)
			return true;
	}
	size_t cap = b->cap ? b->cap : NET_IN_FIRST;
	while (cap - b->len < n)
		cap *= 2;
	char *d = realloc(b->data, cap);
	if (!d)
		return false;
	b->data = d;
	b->cap = cap;
	return true;
}

/* n bytes of b were sent: the bytes before the block, the block, the bytes
 * after it, in that order. */
static void buf_consume(struct buf *b, size_t n)
{
	if (b->ref) {
		size_t before = b->ref_at - b->off, k = n < before ? n : before;
		b->off += k;
		n -= k;
		k = n < b->ref_len ? n : b->ref_len;
		b->ref += k;
		b->ref_len -= k;
		n -= k;
		if (b->ref_len == 0)
			b->ref = NULL;
	}
	b->off += n;
}

/* b holds nothing pending any more: start over at the front, and give a
 * large buffer back. */
static void buf_empty(struct buf *b)
{
	b->off = b->len = 0;
	b->ref = NULL;
	if (b->cap > NET_KEEP_BYTES) {
		free(b->data);
		b->data = NULL;
		b->cap = 0;
	}
}

/* Whether c may queue len more bytes; if not, c is closed. A client whose
 * backlog grows beyond NET_MAX_OUTPUT is dropped (it would otherwise grow
 * without bound); the Config line carries the whole configuration file and
 * may be larger than that by itself. */
static bool conn_room_for(struct conn *c, size_t len)
{
	if (buf_pending(&c->out) + len > NET_MAX_OUTPUT + c->srv->config_line.len) {
		conn_close(c, "output buffer overflow (client does not read)");
		return false;
	}
	return true;
}

/* Queue a copy of len bytes for c if it is OPEN. */
static void conn_write(struct conn *c, const char *data, size_t len)
{
	if (c->state != CONN_OPEN || !conn_room_for(c, len))
		return;
	if (!buf_reserve(&c->out, len)) {
		conn_close(c, "cannot queue output");
		return;
	}
	memcpy(c->out.data + c->out.len, data, len);
	c->out.len += len;
	conn_mark_dirty(c);
}

/* Queue len bytes for c by reference; data must stay until the server is
 * freed (s->config_line). A second block while one is pending (never with
 * one Config per connection) is copied instead. */
static void conn_write_ref(struct conn *c, const char *data, size_t len)
{
	if (c->out.ref) {
		conn_write(c, data, len);
		return;
	}
	if (c->state != CONN_OPEN || !conn_room_for(c, len))
		return;
	c->out.ref = data;
	c->out.ref_len = len;
	c->out.ref_at = c->out.len;
	conn_mark_dirty(c);
}

/* Sends what c has pending, as much as the kernel takes now. Returns 0 or
 * the errno of a failed send (EAGAIN and EINTR are not failures). */
static int conn_send_pending(struct conn *c)
{
	struct buf *b = &c->out;
	while (buf_pending(b) > 0) {
		struct iovec iov[3];
		size_t niov = 0, before = b->ref ? b->ref_at : b->len;
		if (before > b->off)
			iov[niov++] = (struct iovec){b->data + b->off, before - b->off};
		if (b->ref) {
			iov[niov++] =
			        (struct iovec){(void *)b->ref, b->ref_len}; /* sendmsg only reads */
			if (b->len > b->ref_at)
				iov[niov++] =
				        (struct iovec){b->data + b->ref_at, b->len - b->ref_at};
		}
		struct msghdr msg = {.msg_iov = iov, .msg_iovlen = niov};
		ssize_t n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
		if (n > 0) {
			buf_consume(b, (size_t)n);
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
	buf_empty(&c->out);
	event_del(c->wev);
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
	if (err == 0 && buf_pending(&c->out) == 0)
		conn_drained(c);
	else
		event_add(c->wev, NULL);
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

/* Send CommandFailed(msg) to c alone. */
static void conn_send_failed(struct conn *c, const char *msg)
{
	struct server *s = c->srv;
	struct game_event ev = {.type = GEV_COMMAND_FAILED, .to = GEV_TO_SENDER, .str = msg};
	proto_buf_reset(&s->out);
	proto_encode(&ev, s->rules, &s->out);
	conn_write(c, s->out.data, s->out.len);
}

/* p has left the game: nothing more is routed to p, and p's connection is
 * closed once its output (ending with Left) is flushed. */
static void player_left(struct server *s, int p)
{
	if (p < 0 || p >= s->nplayers)
		return;
	struct player_slot *ps = &s->players[p];
	ps->in_game = false;
	ps->disconnect_pending = false;
	if (ps->conn) {
		struct conn *c = ps->conn;
		ps->conn = NULL;
		conn_start_drain(c, "player left");
	}
	net_log(s, "player %d: left the game", p);
}

/* Queue one encoded event for c: the Config line by reference, others as
 * a copy. */
static void conn_queue(struct conn *c, const struct proto_buf *line)
{
	if (line == &c->srv->config_line)
		conn_write_ref(c, line->data, line->len);
	else
		conn_write(c, line->data, line->len);
}

/* Deliver every event of l, each encoded once. sender is the connection whose
 * command produced them (NULL for timeouts and disconnects). */
static void deliver(struct server *s, struct conn *sender, const struct game_event_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct game_event *ev = &l->v[i];
		const struct proto_buf *line = &s->out;
		if (ev->type == GEV_CONFIG && ev->str &&
		    (!s->config_src || s->config_src == ev->str)) {
			if (!s->config_src) {
				proto_encode(ev, s->rules, &s->config_line);
				s->config_src = ev->str;
			}
			line = &s->config_line;
		} else {
			proto_buf_reset(&s->out);
			proto_encode(ev, s->rules, &s->out);
		}
		if (ev->to == GEV_TO_SENDER) {
			if (sender)
				conn_queue(sender, line);
		} else if (ev->to == GEV_TO_ALL) {
			for (int p = 0; p < s->nplayers; p++)
				if (s->players[p].in_game && s->players[p].conn)
					conn_queue(s->players[p].conn, line);
		} else if (ev->to >= 0 && ev->to < s->nplayers) {
			struct player_slot *ps = &s->players[ev->to];
			if (ps->in_game && ps->conn) {
				conn_queue(ps->conn, line);
				if (ev->type == GEV_ACT_NOW)
					s->prompted = ps->conn;
			}
		}
		if (ev->type == GEV_LEFT)
			player_left(s, ev->arg[0]);
	}
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
	if (s->listener)
		evconnlistener_disable(s->listener);
	evtimer_del(s->accept_retry);
	evtimer_del(s->timeout_ev);
	for (struct conn *c = s->conns, *next; c; c = next) {
		next = c->next;
		conn_start_drain(c, "shutdown");
	}
	struct timeval tv = ms_tv(cap_ms);
	evtimer_add(s->shutdown_cap, &tv);
	/* the reaper ends the loop as soon as no connection is left */
	event_active(s->reaper, EV_TIMEOUT, 0);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	struct server *s = arg;
	if (s->stopping) {
		net_log(s, "signal %d during shutdown: stopping now", (int)sig);
		event_base_loopbreak(s->base);
		return;
	}
	begin_shutdown(s, NET_SHUTDOWN_SIGNAL_MS, sig == SIGINT ? "SIGINT" : "SIGTERM");
	flush_dirty(s);
}

/* ---- after every step ---------------------------------------------------- */

/*
 * Called after each command, timeout or lost connection: tell the game about
 * connections lost meanwhile (in player order), check invariants, then
 * either shut down (game over) or (re)arm the --timeout while the game waits.
 * restart_timer: a command was decoded (or the timer fired), so the wait
 * starts afresh.
 */
static void settle(struct server *s, bool restart_timer)
{
	if (s->stopping)
		return;
	for (int p = 0; p < s->nplayers; p++) {
		struct player_slot *ps = &s->players[p];
		if (!ps->disconnect_pending)
			continue;
		ps->disconnect_pending = false;
		if (!ps->in_game)
			continue;
		net_log(s, "player %d: connection lost", p);
		game_event_list_clear(&s->events);
		game_disconnect(s->game, p, &s->events);
		deliver(s, NULL, &s->events);
		p = -1; /* delivering may have lost more connections: rescan */
	}
#ifdef SOPRA_CHECK_INVARIANTS
	const char *bad = game_check_invariants(s->game);
	if (bad) {
		fprintf(s->log ? s->log : stderr, "sopra-server: invariant violated: %s\n", bad);
		abort();
	}
#endif
	if (game_is_over(s->game)) {
		begin_shutdown(s, NET_SHUTDOWN_GAME_OVER_MS, "game over");
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

static void timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct server *s = arg;
	if (s->stopping)
		return;
	int w = game_waiting_for(s->game);
	if (w == GAME_WAIT_ANY)
		net_log(s, "timeout during registration");
	else
		net_log(s, "timeout waiting for player %d", w);
	game_event_list_clear(&s->events);
	game_timeout(s->game, &s->events);
	deliver(s, NULL, &s->events);
	settle(s, true);
	flush_dirty(s);
}

/* ---- input --------------------------------------------------------------- */

/* Make room for player ids 0..n-1 (new slots zeroed). */
static void players_grow(struct server *s, int n)
{
	if (n <= s->players_cap)
		return;
	int cap = s->players_cap ? s->players_cap : 8;
	while (cap < n)
		cap *= 2;
	struct player_slot *v = realloc(s->players, (size_t)cap * sizeof *v);
	if (!v) {
		fputs("sopra-server: out of memory\n", stderr);
		abort();
	}
	memset(v + s->players_cap, 0, (size_t)(cap - s->players_cap) * sizeof *v);
	s->players = v;
	s->players_cap = cap;
}

/* One complete line (no "\n", "\r" already stripped) from OPEN connection c. */
static void conn_handle_line(struct conn *c, const char *line, size_t len)
{
	struct server *s = c->srv;
	const char *err = NULL;
	if (!proto_decode(line, len, s->rules, &s->cmd, &err)) {
		/* bad input: an answer to the sender, nothing else happens */
		conn_send_failed(c, err);
		return;
	}
	game_event_list_clear(&s->events);
	int p = game_apply(s->game, c->player, &s->cmd.cmd, &s->events);
	if (p >= 0 && p != c->player) {
		players_grow(s, p + 1);
		if (p >= s->nplayers)
			s->nplayers = p + 1;
		s->players[p].conn = c;
		s->players[p].in_game = true;
		s->players[p].disconnect_pending = false;
		c->player = p;
		net_log(s, "conn %d: registered as player %d", c->id, p);
	}
	deliver(s, c, &s->events);
	proto_cmd_clear(&s->cmd);
	settle(s, true);
}

/* Only JSON whitespace: such a line is skipped without an answer (a line of
 * just "\r" included, i.e. "\r\r\n"). */
static bool is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

static void conn_line_too_long(struct conn *c)
{
	net_log(c->srv, "conn %d: line longer than %d bytes", c->id, PROTO_MAX_LINE);
	conn_send_failed(c, PROTO_ERR_LINE_TOO_LONG);
	conn_start_drain(c, "line too long");
	settle(c->srv, false);
}

/* c is gone (EOF or a socket error): close it; if it was taking commands,
 * the game hears about it. */
static void conn_lost(struct conn *c, int err)
{
	struct server *s = c->srv;
	if (err)
		net_log(s, "conn %d: socket error: %s", c->id, evutil_socket_error_to_string(err));
	bool was_open = c->state == CONN_OPEN;
	conn_close(c, err ? "socket error" : "peer closed");
	if (was_open)
		settle(s, false);
}

/* Handles every complete line in c->in, in order: none may stay behind,
 * since no further read event comes unless more bytes arrive. Lines are
 * decoded in place. */
static void conn_handle_input(struct conn *c)
{
	struct buf *in = &c->in;
	while (c->state == CONN_OPEN && in->off < in->len) {
		char *line = in->data + in->off;
		size_t avail = in->len - in->off;
		char *nl = memchr(line, '\n', avail);
		if (!nl) {
			/* a partial line: one byte of slack for a "\r" */
			if (avail > PROTO_MAX_LINE + 1)
				conn_line_too_long(c);
			break;
		}
		size_t n = (size_t)(nl - line);
		if (n > PROTO_MAX_LINE + 1) {
			conn_line_too_long(c);
			break;
		}
		in->off += n + 1;
		if (n > 0 && line[n - 1] == '\r')
			n--;
		if (n > PROTO_MAX_LINE) {
			conn_line_too_long(c);
			break;
		}
		if (is_blank(line, n))
			continue;
		conn_handle_line(c, line, n);
	}
	if (c->state != CONN_OPEN || in->off == in->len) {
		buf_empty(in); /* all handled, or input is discarded from now on */
	} else if (in->off > 0) {
		buf_compact(in); /* a partial line stays: at the front */
	}
}

static void conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct conn *c = arg;
	struct server *s = c->srv;
	/* Between reads c->in holds at most a partial line of up to
	 * PROTO_MAX_LINE + 1 bytes, at its front (conn_handle_input); reading
	 * at most up to NET_IN_MAX leaves room for at least NET_IN_FIRST more. */
	if (!buf_reserve(&c->in, NET_IN_FIRST / 4)) {
		conn_lost(c, ENOMEM);
		flush_dirty(s);
		return;
	}
	size_t room = c->in.cap - c->in.len;
	if (c->in.len + room > NET_IN_MAX)
		room = NET_IN_MAX - c->in.len;
	ssize_t n = recv(fd, c->in.data + c->in.len, room, 0);
	if (n > 0) {
		c->in.len += (size_t)n;
		conn_handle_input(c);
	} else if (n == 0) {
		conn_lost(c, 0);
	} else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
		conn_lost(c, errno);
	}
	flush_dirty(s);
}

static void conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct conn *c = arg;
	int err = conn_send_pending(c);
	if (err) {
		conn_lost(c, err);
		flush_dirty(c->srv);
	} else if (buf_pending(&c->out) == 0) {
		conn_drained(c);
	}
}

/* ---- accepting ----------------------------------------------------------- */

static void format_peer(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	int port = 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
		port = ntohs(in->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
		port = ntohs(in6->sin6_port);
	}
	snprintf(buf, len, "%s:%d", host, port);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                      int socklen, void *arg)
{
	(void)l;
	(void)socklen;
	struct server *s = arg;
	if (s->stopping) {
		evutil_closesocket(fd);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

	struct conn *c = calloc(1, sizeof *c);
	if (!c)
		goto fail;
	c->fd = -1;
	c->srv = s;
	c->player = GAME_NO_PLAYER;
	c->state = CONN_OPEN;
	c->fd = fd;
	fd = -1; /* owned by c now */
	c->rev = event_new(s->base, c->fd, EV_READ | EV_PERSIST, conn_read_cb, c);
	c->wev = event_new(s->base, c->fd, EV_WRITE | EV_PERSIST, conn_write_cb, c);
	c->timer = evtimer_new(s->base, conn_timer_cb, c);
	if (!c->rev || !c->wev || !c->timer || event_add(c->rev, NULL) != 0)
		goto fail;
	c->id = ++s->next_comm_id;
	format_peer(sa, c->peer, sizeof c->peer);
	list_push(&s->conns, c);
	s->nconns++;
	net_log(s, "conn %d: open (%s)", c->id, c->peer);
	return;

fail:
	net_log(s, "cannot set up a new connection: out of resources");
	if (c)
		conn_free(c);
	if (fd >= 0)
		evutil_closesocket(fd);
}

static void accept_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct server *s = arg;
	if (!s->stopping)
		evconnlistener_enable(s->listener);
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct server *s = arg;
	int e = EVUTIL_SOCKET_ERROR();
	net_log(s, "accept failed: %s", evutil_socket_error_to_string(e));
	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
		/* do not spin on a listener that stays readable */
		evconnlistener_disable(l);
		struct timeval tv = ms_tv(NET_ACCEPT_RETRY_MS);
		evtimer_add(s->accept_retry, &tv);
	}
}

/* ---- public API ---------------------------------------------------------- */

struct server *server_new(const struct config *cfg, struct game *game, enum game_rules rules,
                          int port, int timeout_sec, FILE *log)
{
	struct server *s = calloc(1, sizeof *s);
	if (!s) {
		if (log)
			fputs("sopra-server: out of memory\n", log);
		return NULL;
	}
	s->game = game;
	s->rules = rules;
	s->timeout_sec = timeout_sec > 0 ? timeout_sec : 1;
	s->log = log;
	game_event_list_init(&s->events);
	proto_cmd_init(&s->cmd);
	proto_buf_init(&s->out);
	proto_buf_init(&s->config_line);
	if (cfg && cfg->max_players > 0)
		players_grow(s, cfg->max_players);

	s->base = event_base_new();
	if (!s->base) {
		net_log(s, "cannot create the event loop");
		goto fail;
	}
	s->sig_int = evsignal_new(s->base, SIGINT, signal_cb, s);
	s->sig_term = evsignal_new(s->base, SIGTERM, signal_cb, s);
	s->timeout_ev = evtimer_new(s->base, timeout_cb, s);
	s->reaper = event_new(s->base, -1, 0, reaper_cb, s);
	s->shutdown_cap = evtimer_new(s->base, shutdown_cap_cb, s);
	s->accept_retry = evtimer_new(s->base, accept_retry_cb, s);
	if (!s->sig_int || !s->sig_term || !s->timeout_ev || !s->reaper || !s->shutdown_cap ||
	    !s->accept_retry || evsignal_add(s->sig_int, NULL) != 0 ||
	    evsignal_add(s->sig_term, NULL) != 0) {
		net_log(s, "cannot set up the event loop");
		goto fail;
	}

	struct sockaddr_in sin;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	sin.sin_port = htons((unsigned short)port);
	s->listener = evconnlistener_new_bind(s->base, accept_cb, s,
	                                      LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE |
	                                              LEV_OPT_CLOSE_ON_EXEC,
	                                      -1, (struct sockaddr *)&sin, sizeof sin);
	if (!s->listener) {
		int e = EVUTIL_SOCKET_ERROR();
		net_log(s, "cannot listen on port %d: %s", port, evutil_socket_error_to_string(e));
		goto fail;
	}
	evconnlistener_set_error_cb(s->listener, accept_error_cb);

	struct sockaddr_in bound;
	socklen_t blen = sizeof bound;
	if (getsockname(evconnlistener_get_fd(s->listener), (struct sockaddr *)&bound, &blen) == 0)
		s->port = ntohs(bound.sin_port);
	else
		s->port = port;
	net_log(s, "listening on 0.0.0.0:%d (rules %s, timeout %d s)", s->port,
	        game_rules_name(rules), s->timeout_sec);
	return s;

fail:
	server_free(s);
	return NULL;
}

int server_port(const struct server *s)
{
	return s->port;
}

struct event_base *server_base(const struct server *s)
{
	return s->base;
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
	for (struct conn *c; (c = list_pop(&s->dead)) != NULL;)
		conn_free(c);
	if (s->listener)
		evconnlistener_free(s->listener);
	struct event *evs[] = {s->sig_int, s->sig_term,     s->timeout_ev,
	                       s->reaper,  s->shutdown_cap, s->accept_retry};
	for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
		if (evs[i])
			event_free(evs[i]);
	if (s->base)
		event_base_free(s->base);
	free(s->players);
	game_event_list_free(&s->events);
	proto_cmd_clear(&s->cmd);
	proto_buf_free(&s->out);
	proto_buf_free(&s->config_line);
	free(s);
}
