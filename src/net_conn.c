/*
 * net_conn: the server's connections (src/net_int.h, include/sopra/net.h).
 *
 *   socket --evbuffer--> lines --cmdq_push_line--> the core's queue
 *   socket <--evbuffer-- encoded lines <-- net_sink <-- the core
 *
 * Fairness: a readable event takes at most NET_LINES_PER_EVENT lines from
 * its connection (memcached's reqs_per_event). If more complete lines are
 * buffered, the connection stops reading and resumes from a zero-delay
 * timer, which libevent runs only after the sockets that became readable
 * meanwhile: one client pipelining thousands of commands delays another
 * client's command by at most one batch.
 *
 * Pacing (net_pace.c): a connection that pipelines failing commands is
 * read more slowly, strangers all together as slowly as one; every line
 * is still answered, in order, and nothing is closed.
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
 * Output: the sink encodes each event once and appends the line to each
 * recipient's evbuffer (the Config line by reference: it carries the whole
 * configuration and is the same for everybody) and marks the connection
 * dirty; net_flush_dirty writes each dirty connection once per callback.
 * Only when the kernel does not take everything is the connection's write
 * event added. The connection just prompted with ActNow is flushed first.
 * The sink is told which connection is a player's (joined) and which to
 * close (left, close) by calls: it never looks at what it sends.
 *
 * Streams: a Reconnect's history is not queued whole. The connection keeps
 * a cursor into the player's history (the session layer's) and encodes the
 * next entries into its output whenever fewer than NET_REFILL_LOW bytes
 * wait (conn_refill, before every write); what is sent to it meanwhile
 * waits behind, in `later`. A player whose history is long can always
 * come back: it costs the server a refill's worth of output, as long as it
 * reads. Watchers are streamed the same way from their log (net_watch.c).
 */
#include "net_int.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/ioctl.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "sopra/xalloc.h"

static const char *const conn_state_names[] = {
        [CONN_OPEN] = "open",
        [CONN_DRAINING] = "draining",
        [CONN_LINGERING] = "lingering",
        [CONN_CLOSED] = "closed",
};

/* A listening socket: for players (and strangers) or for watchers. */

static void conn_set_state(struct conn *c, enum conn_state st, const char *why)
{
	enum net_quiet_kind kind = st != CONN_CLOSED                 ? NET_QUIET_OTHER
	                           : strncmp(why, "evicted", 7) == 0 ? NET_QUIET_EVICTED
	                                                             : NET_QUIET_CLOSED;
	net_log_conn(c, kind, "conn %d: %s -> %s (%s)", c->id, conn_state_names[c->state],
	             conn_state_names[st], why);
	if (c->state == CONN_OPEN && c->watcher)
		c->srv->nwatchers--;
	else if (c->state == CONN_OPEN && !c->registered)
		c->srv->nstrangers--;
	net_stranger_remove(c->srv, c);
	c->state = st;
}

/* ---- connection lists ----------------------------------------------------- */

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
struct conn *net_list_pop(struct conn **head)
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

/* ---- life cycle ----------------------------------------------------------- */

/* Close c now (whatever is unsent is lost) and hand it to the reaper.
 * Safe to call from any callback, also c's own. The game is not told:
 * see net_conn_lost. */
void net_conn_close(struct conn *c, const char *why)
{
	struct server *s = c->srv;
	if (c->state == CONN_CLOSED)
		return;
	if (c->pace_charged)
		net_log_conn(c, NET_QUIET_OTHER,
		             "conn %d: %lu pipelined failures charged, reading paced %lu times",
		             c->id, c->pace_charged, c->paced);
	conn_set_state(c, CONN_CLOSED, why);
	net_pace_forget(c);
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
void net_conn_lost(struct conn *c, const char *why)
{
	struct server *s = c->srv;
	bool was_open = c->state == CONN_OPEN;
	net_conn_close(c, why);
	if (was_open && !s->stopping)
		cmdq_push_lost(s->queue, c->id, false);
}

void net_conn_free(struct conn *c)
{
	struct event *evs[] = {c->rev, c->wev, c->timer, c->resume};
	for (size_t i = 0; i < COUNT_OF(evs); i++)
		if (evs[i])
			event_free(evs[i]);
	if (c->in)
		evbuffer_free(c->in);
	if (c->out)
		evbuffer_free(c->out);
	if (c->later)
		evbuffer_free(c->later);
	if (c->fd >= 0)
		evutil_closesocket(c->fd);
	free(c);
}

void net_reaper_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct server *s = arg;
	net_flush_dirty(s); /* normally empty: no dead connection may stay listed */
	for (struct conn *c; (c = net_list_pop(&s->dead)) != NULL;)
		net_conn_free(c);
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

void net_conn_mark_dirty(struct conn *c)
{
	if (c->dirty)
		return;
	c->dirty = true;
	c->dirty_next = c->srv->dirty;
	c->srv->dirty = c;
}

/* Stop taking commands from c, flush its output, then close it. Input is
 * read and discarded meanwhile. */
void net_conn_start_drain(struct conn *c, const char *why)
{
	if (c->state != CONN_OPEN)
		return;
	conn_set_state(c, CONN_DRAINING, why);
	net_pace_forget(c);
	evtimer_del(c->resume);
	event_add(c->rev, NULL);
	if (evbuffer_get_length(c->out) == 0 && !net_watch_behind(c)) {
		conn_linger(c);
	} else {
		struct timeval tv = ms_tv(NET_DRAIN_MS);
		evtimer_add(c->timer, &tv);
		net_conn_mark_dirty(c); /* net_flush_dirty writes it and then lingers */
	}
}

static void conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct conn *c = arg;
	switch (c->state) {
	case CONN_DRAINING:
		net_conn_close(c, "peer does not read; gave up flushing");
		return;
	case CONN_LINGERING: {
		int q = socket_outq(c->fd);
		if (q == 0) {
			net_conn_close(c, "all output acknowledged");
			return;
		}
		if (++c->linger_polls * NET_LINGER_POLL_MS >= NET_LINGER_MS) {
			net_conn_close(c, "linger time over");
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

/* ---- output --------------------------------------------------------------- */

/* One encoded line shared by every connection it is queued for (by
 * evbuffer reference): a 60 KB Player event for 150 players is one copy,
 * not 150. */
struct shared_line *net_shared_new(struct server *s, const void *data, size_t len, bool counted)
{
	struct shared_line *b = xmalloc(sizeof *b + len);
	*b = (struct shared_line){.srv = s, .refs = 1, .len = len, .counted = counted};
	if (data)
		memcpy(b->data, data, len);
	if (counted)
		s->shared_bytes += len;
	return b;
}

void net_shared_unref(struct shared_line *b)
{
	if (--b->refs > 0)
		return;
	if (b->counted)
		b->srv->shared_bytes -= b->len;
	net_config_forget(b->srv, b);
	free(b);
}

/* One connection's reference to a shared line. */
struct shared_ref {
	struct conn *c;
	struct shared_line *b;
};

/* evbuffer's cleanup callback: a reference to a shared line has been sent
 * or dropped. */
static void shared_cleanup(const void *data, size_t len, void *arg)
{
	(void)data;
	struct shared_ref *r = arg;
	r->c->out_shared -= len;
	net_shared_unref(r->b);
	free(r);
}

int net_conn_add_shared(struct conn *c, struct evbuffer *buf, struct shared_line *b)
{
	struct shared_ref *r = xmalloc(sizeof *r);
	*r = (struct shared_ref){.c = c, .b = b};
	if (evbuffer_add_reference(buf, b->data, b->len, shared_cleanup, r) != 0) {
		free(r);
		return -1;
	}
	c->out_shared += b->len;
	b->refs++;
	return 0;
}

/* evbuffer's cleanup callback: a reference to data that outlives the
 * connection has been sent or dropped. */
static void ref_cleanup(const void *data, size_t len, void *arg)
{
	(void)data;
	struct conn *c = arg;
	c->out_shared -= len;
}

int net_conn_add_ref(struct conn *c, struct evbuffer *buf, const void *data, size_t len)
{
	assert(buf == c->out || buf == c->later);
	if (evbuffer_add_reference(buf, data, len, ref_cleanup, c) != 0)
		return -1;
	c->out_shared += len;
	return 0;
}

/* Bytes waiting for c (also behind a history). */
static size_t conn_out_len(const struct conn *c)
{
	return evbuffer_get_length(c->out) + (c->later ? evbuffer_get_length(c->later) : 0);
}

/* Bytes waiting for c that are its own copies (not shared lines). A
 * shared line counts as shared until it is sent whole, so this may
 * undercount by the unsent rest of one line. */
static size_t conn_private_out(const struct conn *c)
{
	size_t n = conn_out_len(c);
	return n > c->out_shared ? n - c->out_shared : 0;
}

/* The shared copy of the line being routed (made on first use). */
static struct shared_line *shared_current(struct server *s)
{
	if (!s->shared)
		s->shared = net_shared_new(s, s->out.data, s->out.len, true);
	return s->shared;
}

/* The line being routed is done with: drop the server's own reference. */
void net_shared_release(struct server *s)
{
	if (s->shared) {
		net_shared_unref(s->shared);
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
 * dropped: small for a stranger (it only gets answers to its own lines)
 * and for a connection being paced (what piles up is answers to its
 * pipelined failures), NET_MAX_OUTPUT for a player. Shared lines (the
 * Config line, long events) do not count here: they cost one copy for
 * everybody and are held to the budget instead. */
static size_t conn_cap(const struct conn *c, long now)
{
	return c->registered && !net_pace_pacing(c, now) ? NET_MAX_OUTPUT : NET_STRANGER_MAX_OUTPUT;
}

/* Queue one encoded line for c if it is OPEN, behind its history if one
 * is going out: long lines (the Config line among them) by reference to
 * the line's shared copy, short ones as a copy. A client that is stalled
 * with more than its cap waiting is dropped instead. */
static void conn_queue(struct conn *c, const struct proto_buf *line)
{
	struct server *s = c->srv;
	if (c->state != CONN_OPEN)
		return;
	long now = now_ms();
	if (evbuffer_get_length(c->out) == 0) {
		c->progress_ms = now; /* the stall clock starts with the backlog */
	} else if (conn_private_out(c) + line->len > conn_cap(c, now) && conn_stalled(c, now)) {
		net_conn_lost(c, "output buffer overflow (client does not read)");
		return;
	}
	struct evbuffer *buf = c->later ? c->later : c->out;
	int rc;
	if (line->len > NET_COPY_MAX)
		rc = net_conn_add_shared(c, buf, shared_current(s));
	else
		rc = evbuffer_add(buf, line->data, line->len);
	if (rc != 0) {
		net_conn_lost(c, "cannot queue output");
		return;
	}
	net_conn_mark_dirty(c);
}

/* ev (not the Config) encoded aside: not over the event being routed. */
static const struct proto_buf *encode_aside(struct server *s, const struct game_event *ev)
{
	proto_buf_reset(&s->aside);
	proto_encode(ev, s->rules, &s->aside);
	return &s->aside;
}

/* Queue history entry ev for c: the Config line by reference to its
 * shared copy, anything else encoded aside and copied. Returns evbuffer's
 * result. */
static int history_add(struct conn *c, const struct game_event *ev)
{
	if (ev->type == GEV_CONFIG)
		return net_conn_add_config(c, c->out);
	const struct proto_buf *line = encode_aside(c->srv, ev);
	return evbuffer_add(c->out, line->data, line->len);
}

/* The history is all in `out`: what waited behind it follows. */
static void history_done(struct conn *c)
{
	evbuffer_add_buffer(c->out, c->later);
	evbuffer_free(c->later);
	c->later = NULL;
	c->hist_player = -1;
}

/* Encode c's next history entries into its output while fewer than
 * `low` bytes wait there (all of them: SIZE_MAX). Returns evbuffer's
 * result. */
static int history_refill(struct conn *c, size_t low)
{
	struct server *s = c->srv;
	const struct session *ss = core_sessions(s->core);
	while (c->hist_next < c->hist_end && evbuffer_get_length(c->out) < low) {
		struct game_event ev = session_history_at(ss, c->hist_player, c->hist_next++);
		int rc = history_add(c, &ev);
		if (rc != 0)
			return rc;
	}
	if (c->hist_next == c->hist_end)
		history_done(c);
	return 0;
}

/* Top up c's output from what it is streamed: its history, or for a
 * watcher the watchers' log. Returns evbuffer's result. */
static int conn_refill(struct conn *c)
{
	if (c->watcher)
		return net_watch_refill(c);
	if (c->hist_player >= 0)
		return history_refill(c, NET_REFILL_LOW);
	return 0;
}

/* Whether c is streamed (a watcher, or a history going out): its sends are
 * cut into NET_STREAM_SEND_MAX pieces. */
static bool conn_streamed(const struct conn *c)
{
	return c->watcher || c->hist_player >= 0;
}

/* Sends what c has pending, topped up from what it is streamed, as much as
 * the kernel takes now -- but a streamed connection at most
 * NET_STREAM_SEND_MAX bytes (its write event, still pending, sends the
 * rest on a later turn of the loop, after the players' input). Returns 0
 * or the errno of a failed send (EAGAIN and EINTR are not failures;
 * ENOMEM: its output cannot be topped up). */
static int conn_send_pending(struct conn *c)
{
	size_t left = conn_streamed(c) ? NET_STREAM_SEND_MAX : SIZE_MAX;
	while (left > 0) {
		if (conn_refill(c) != 0)
			return ENOMEM;
		if (evbuffer_get_length(c->out) == 0)
			return 0;
		ev_ssize_t most = left > (size_t)EV_SSIZE_MAX ? -1 : (ev_ssize_t)left;
		int n = evbuffer_write_atmost(c->out, c->fd, most);
		if (n > 0) {
			c->progress_ms = now_ms();
			left -= (size_t)n < left ? (size_t)n : left;
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
void net_conn_flush(struct conn *c)
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
		net_sweep_arm(c->srv); /* output waits: watch for a stall */
	}
}

/* Flush every connection that got output since the last flush: the one
 * prompted with ActNow first, then the others in the order they got output.
 * Called at the end of every callback that may queue output, before any
 * other callback (the reaper included) can run. */
void net_flush_dirty(struct server *s)
{
	struct conn *first = s->prompted;
	s->prompted = NULL;
	if (first && first->dirty) {
		first->dirty = false; /* still linked below, but skipped */
		net_conn_flush(first);
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
		net_conn_flush(c);
	}
}

/* ---- the core's sink ------------------------------------------------------ */

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
	if (c->pace_held) { /* a player waits for no stranger: its lines are taken now */
		net_pace_forget(c);
		struct timeval zero = {0, 0};
		evtimer_add(c->resume, &zero);
	}
	/* c->resume keeps the lowest priority: a player's own backlog (more
	 * than NET_LINES_PER_EVENT lines at once) is taken when nothing else
	 * waits, so a player pipelining thousands of lines cannot starve the
	 * signals, the timers or the other connections */
}

/* The Config line's bytes, from its shared copy, which the server holds
 * as s->shared until the next event is routed (net_shared_release):
 * whoever queues it meanwhile shares that copy. s->shared is free or
 * already this copy. */
static const struct proto_buf *hold_config(struct server *s)
{
	if (!s->shared)
		s->shared = net_config_take(s);
	assert(s->shared == s->config.live);
	s->config_view = (struct proto_buf){.data = s->shared->data, .len = s->shared->len};
	return &s->config_view;
}

/* Encode ev once for all its recipients (the Config line never: it is
 * the server's shared copy, net_config.c); a line to all goes into the
 * watchers' log. */
static void sink_encode(void *ctx, const struct game_event *ev)
{
	struct server *s = ctx;
	net_shared_release(s);
	if (ev->type == GEV_CONFIG) {
		s->line = hold_config(s);
		return;
	}
	proto_buf_reset(&s->out);
	proto_encode(ev, s->rules, &s->out);
	s->line = &s->out;
	if (ev->to == GEV_TO_ALL && s->keep_history)
		net_watch_append(s, s->out.data, s->out.len);
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
	if (ev->type == GEV_COMMAND_FAILED && c->state == CONN_OPEN)
		net_pace_charge(c);
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
	net_stranger_remove(s, c);
	c->registered = true;
	conn_promote(c);
}

/* A player left: its connection closes once it is flushed. Its history
 * is about to go (session.h): what of it has not gone out yet is encoded
 * now. */
static void sink_left(void *ctx, int comm_id, int player)
{
	struct conn *c = conn_find(ctx, comm_id);
	if (!c)
		return;
	if (c->hist_player == player && history_refill(c, SIZE_MAX) != 0) {
		net_conn_lost(c, "cannot queue output");
		return;
	}
	net_conn_start_drain(c, "player left");
}

/* Show history entry ev, going to player on comm_id, to the line tap. The
 * Config line stays held (hold_config), so the history queued after the
 * tap shares the copy instead of inflating another. */
static void tap_aside(struct server *s, int comm_id, int player, const struct game_event *ev)
{
	const struct proto_buf *line =
	        ev->type == GEV_CONFIG ? hold_config(s) : encode_aside(s, ev);
	s->line_tap(s->line_tap_ctx, comm_id, player, ev, line->data, line->len);
}

/* A Reconnect: player's history (its first n entries) goes out on comm_id
 * ahead of what is sent to it later. The line tap sees every line of it
 * now, in order (so the tapped stream is the same as if it were queued
 * whole); the connection gets it as it drains (history_refill). */
static void sink_history(void *ctx, int comm_id, int player, size_t n)
{
	struct server *s = ctx;
	const struct session *ss = core_sessions(s->core);
	net_shared_release(s);
	for (size_t i = 0; s->line_tap && i < n; i++) {
		struct game_event ev = session_history_at(ss, player, i);
		tap_aside(s, comm_id, player, &ev);
	}
	struct conn *c = conn_find(s, comm_id);
	if (!c || c->state != CONN_OPEN || n == 0)
		return;
	assert(c->hist_player < 0 && !c->later && !c->watcher);
	c->later = evbuffer_new();
	if (!c->later) {
		net_conn_lost(c, "cannot queue output");
		return;
	}
	if (evbuffer_get_length(c->out) == 0)
		c->progress_ms = now_ms(); /* the stall clock starts with the backlog */
	c->hist_player = player;
	c->hist_next = 0;
	c->hist_end = n;
	if (history_refill(c, NET_REFILL_LOW) != 0) {
		net_conn_lost(c, "cannot queue output");
		return;
	}
	net_conn_mark_dirty(c);
}

static void sink_close(void *ctx, int comm_id)
{
	struct conn *c = conn_find(ctx, comm_id);
	if (c)
		net_conn_start_drain(c, c->framing_broken ? "line too long"
		                                          : "closed after its history");
}

/* ---- limits: stalls and the memory budget --------------------------------- */

/* Whether victim a is a better choice than b for eviction: strangers
 * before players, then the larger backlog. */
static bool worse_offender(const struct conn *a, const struct conn *b)
{
	if (!b)
		return true;
	if (a->registered != b->registered)
		return !a->registered;
	return conn_out_len(a) > conn_out_len(b);
}

/*
 * The budget (NET_BUDGET) counts what the server holds for its clients:
 * every connection's buffered input, the copies queued for connections
 * that do not read (stalled), every shared line still referenced (once,
 * however many connections it is queued for) and the watchers' log (once,
 * however many watchers there are). While the sum is over it,
 * the worst stalled connection is dropped: strangers first, then the one
 * holding the largest backlog. Connections that read are never dropped for
 * it.
 */
static void enforce_budget(struct server *s, long now)
{
	for (;;) {
		size_t total = s->shared_bytes + net_watch_log_bytes(s);
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
		        victim->id, conn_out_len(victim), total, (size_t)NET_BUDGET);
		net_conn_lost(victim, "over the memory budget (client does not read)");
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
		if (conn_stalled(c, now) && conn_private_out(c) > conn_cap(c, now))
			net_conn_lost(c, "output buffer overflow (client does not read)");
		else if (!c->registered && now - c->line_ms >= limit)
			net_conn_lost(c, "stranger idle: no command within the timeout");
		else if (c->partial_ms && now - c->partial_ms >= limit)
			net_conn_lost(c, "partial line not completed within the timeout");
	}
}

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
void net_sweep_arm(struct server *s)
{
	if (!s->stopping && !evtimer_pending(s->sweep, NULL)) {
		struct timeval tv = ms_tv(NET_SWEEP_MS);
		evtimer_add(s->sweep, &tv);
	}
}

void net_sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct server *s = arg;
	if (s->stopping)
		return;
	long now = now_ms();
	enforce_idle_limits(s, now);
	enforce_budget(s, now);
	net_log_quiet_summary(s, now, false);
	net_reserve_fd_open(s);
	net_serve_queue(s);
	if (sweep_needed(s))
		net_sweep_arm(s);
}

/* ---- input ---------------------------------------------------------------- */

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
	net_log_conn(c, NET_QUIET_OTHER, "conn %d: line longer than %d bytes", c->id,
	             PROTO_MAX_LINE);
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
	if (!net_pace_allows(c))
		return false;
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
			net_stranger_had_line(c);
			taken++;
		}
		evbuffer_drain(c->in, n + 1);
		c->partial_ms = 0; /* a line was completed: what follows waits anew */
	}
	return false;
}

/* Remember since when bytes wait in c->in without a line being taken
 * (idle limit): a partial line, or lines paced or paused meanwhile. */
static void conn_note_partial(struct conn *c)
{
	if (evbuffer_get_length(c->in) == 0)
		c->partial_ms = 0;
	else if (c->partial_ms == 0) {
		c->partial_ms = now_ms();
		net_sweep_arm(c->srv);
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
	if (!evtimer_pending(c->resume, NULL) && c->state != CONN_CLOSED && !c->paused &&
	    !c->pace_held)
		event_add(c->rev, NULL);
	net_serve_queue(s);
}

/* Appends to c->in what the socket has: at least `want` bytes of room are
 * reserved, and as much of the room as evbuffer gives, up to `max`, is
 * read into; *room is set to that amount. Returns read(2)'s result. */
static ssize_t conn_read_into(struct conn *c, evutil_socket_t fd, size_t want, size_t max,
                              size_t *room)
{
	assert(want <= max);
	struct evbuffer_iovec v;
	if (evbuffer_reserve_space(c->in, (ev_ssize_t)want, &v, 1) != 1) {
		errno = ENOMEM;
		return -1;
	}
	*room = v.iov_len < max ? v.iov_len : max;
	ssize_t n = read(fd, v.iov_base, *room);
	int e = errno;
	v.iov_len = n > 0 ? (size_t)n : 0;
	evbuffer_commit_space(c->in, &v, 1);
	errno = e;
	return n;
}

/* Appends what the socket has, up to NET_READ_BYTES, to c->in; returns
 * the bytes read, or the first read(2)'s result if it read nothing. A
 * command line comes in one small read; only a read that fills its room
 * is followed by a larger one (an error or the end that it meets is seen
 * at the next readable event). evbuffer_read would ask FIONREAD before
 * every read: one system call per command more. */
static ssize_t conn_read_some(struct conn *c, evutil_socket_t fd)
{
	size_t room;
	ssize_t n = conn_read_into(c, fd, NET_READ_FIRST, NET_READ_BYTES, &room);
	if (n > 0 && (size_t)n == room && room < NET_READ_BYTES) {
		size_t rest = NET_READ_BYTES - room;
		ssize_t more = conn_read_into(c, fd, rest, rest, &room);
		if (more > 0)
			n += more;
	}
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
		net_conn_lost(c, "peer closed");
	} else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
		net_log_conn(c, NET_QUIET_OTHER, "conn %d: socket error: %s", c->id,
		             evutil_socket_error_to_string(errno));
		net_conn_lost(c, "socket error");
	}
	net_serve_queue(s);
}

static void conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct conn *c = arg;
	int err = conn_send_pending(c);
	if (err) {
		net_log_conn(c, NET_QUIET_OTHER, "conn %d: socket error: %s", c->id,
		             evutil_socket_error_to_string(err));
		net_conn_lost(c, "socket error");
		net_serve_queue(c->srv);
	} else if (evbuffer_get_length(c->out) == 0) {
		conn_drained(c);
	}
}

/* ---- opening -------------------------------------------------------------- */

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
	c->hist_player = -1;
	c->rev = event_new(s->base, fd, EV_READ | EV_PERSIST, conn_read_cb, c);
	c->wev = event_new(s->base, fd, EV_WRITE | EV_PERSIST, conn_write_cb, c);
	c->timer = evtimer_new(s->base, conn_timer_cb, c);
	c->resume = evtimer_new(s->base, conn_resume_cb, c);
	c->in = evbuffer_new();
	c->out = evbuffer_new();
	if (!c->rev || !c->wev || !c->timer || !c->resume || !c->in || !c->out ||
	    event_priority_set(c->rev, NET_PRIO_STRANGER) != 0 ||
	    event_priority_set(c->resume, NET_PRIO_STRANGER) != 0 || event_add(c->rev, NULL) != 0) {
		net_conn_free(c);
		return NULL;
	}
	return c;
}

struct conn *net_conn_open(struct server *s, evutil_socket_t fd, bool watch,
                           const struct net_origin *origin)
{
	struct conn *c = conn_new(s, fd);
	if (!c)
		return NULL;
	c->id = ++s->next_comm_id;
	c->watcher = watch;
	c->origin = *origin;
	/* a watcher is written after everything else (net_watch.c) */
	if (watch && event_priority_set(c->wev, NET_PRIO_STRANGER) != 0) {
		net_conn_free(c);
		return NULL;
	}
	c->opened_ms = c->line_ms = c->progress_ms = now_ms();
	net_pace_start(c, c->opened_ms);
	list_push(&s->conns, c);
	by_id_append(s, c);
	s->nconns++;
	if (watch) {
		s->nwatchers++;
	} else {
		s->nstrangers++;
		net_stranger_add(s, c);
	}
	return c;
}

struct bcast_sink net_sink(struct server *s)
{
	return (struct bcast_sink){.encode = sink_encode,
	                           .send = sink_send,
	                           .joined = sink_joined,
	                           .left = sink_left,
	                           .close = sink_close,
	                           .history = sink_history,
	                           .ctx = s};
}
