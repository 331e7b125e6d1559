/*
 * net_watch: the watchers' stream (src/net_int.h, docs/protocol.md
 * "Watching").
 *
 * Every watcher gets the same stream: the Config line, then every line sent
 * to all players so far and from now on. It is kept once, however many
 * watchers there are: the Config line is the server's (net_config.c),
 * the lines to all go into the log, a list of blocks that never move.
 * Each watcher holds only its place in the log; its output is topped up
 * from there by reference (no copy) whenever fewer than NET_REFILL_LOW
 * bytes wait for it. A watcher that does not read therefore costs its
 * place and nothing more, whatever the length of the game or of the
 * configuration, and one that joins late is given the game so far as it
 * reads it.
 *
 * Watchers are written after the players: appending to the log only arms
 * the flush timer (NET_WATCH_FLUSH_MS, lowest priority), and their write
 * events have the lowest priority too. A command's answer is written to
 * its players in the callback that read it; the watchers get its lines to
 * all at most NET_WATCH_FLUSH_MS later, in one write for all the commands
 * of that time.
 */
#include "net_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "sopra/xalloc.h"

struct log_block {
	size_t len, cap;
	char data[];
};

struct watch_log {
	struct log_block **v; /* owned */
	size_t n, cap;
	size_t bytes; /* the lines in it */
};

/* The flush timer: write every watcher that has something to take. */
static void watch_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct server *s = arg;
	for (size_t i = 0; i < s->nby_id; i++) {
		struct conn *c = s->by_id[i];
		if (c->watcher)
			net_conn_flush(c);
	}
}

/* Write the watchers at the next flush (unless one is due). */
static void watch_schedule(struct server *s)
{
	if (s->nwatchers > 0 && !evtimer_pending(s->watch_flush, NULL)) {
		struct timeval tv = ms_tv(NET_WATCH_FLUSH_MS);
		evtimer_add(s->watch_flush, &tv);
	}
}

bool net_watch_setup(struct server *s)
{
	s->watch_log = xcalloc(1, sizeof *s->watch_log);
	s->watch_flush = evtimer_new(s->base, watch_flush_cb, s);
	return s->watch_flush && event_priority_set(s->watch_flush, NET_PRIO_STRANGER) == 0;
}

void net_watch_free(struct server *s)
{
	if (s->watch_flush)
		event_free(s->watch_flush);
	s->watch_flush = NULL;
	if (!s->watch_log)
		return;
	for (size_t i = 0; i < s->watch_log->n; i++)
		free(s->watch_log->v[i]);
	free(s->watch_log->v);
	free(s->watch_log);
	s->watch_log = NULL;
}

void net_watch_append(struct server *s, const char *line, size_t len)
{
	struct watch_log *l = s->watch_log;
	struct log_block *b = l->n ? l->v[l->n - 1] : NULL;
	if (!b || b->cap - b->len < len) {
		size_t cap = len > NET_LOG_BLOCK ? len : NET_LOG_BLOCK;
		b = xmalloc(sizeof *b + cap);
		b->len = 0;
		b->cap = cap;
		l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof(struct log_block *), 16);
		l->v[l->n++] = b;
	}
	memcpy(b->data + b->len, line, len);
	b->len += len;
	l->bytes += len;
	watch_schedule(s);
}

void net_watch_start(struct conn *c)
{
	struct server *s = c->srv;
	assert(c->watcher && c->log_block == 0 && c->log_off == 0);
	if (s->config.len > 0) {
		if (net_conn_add_config(c, c->out) != 0) {
			net_conn_lost(c, "cannot queue output");
			return;
		}
	}
	watch_schedule(s);
}

int net_watch_refill(struct conn *c)
{
	const struct watch_log *l = c->srv->watch_log;
	while (evbuffer_get_length(c->out) < NET_REFILL_LOW && c->log_block < l->n) {
		const struct log_block *b = l->v[c->log_block];
		if (c->log_off < b->len) {
			if (net_conn_add_ref(c, c->out, b->data + c->log_off,
			                     b->len - c->log_off) != 0)
				return -1;
			c->log_off = b->len;
		} else if (c->log_block + 1 < l->n) {
			c->log_block++;
			c->log_off = 0;
		} else {
			break;
		}
	}
	return 0;
}

bool net_watch_behind(const struct conn *c)
{
	const struct watch_log *l = c->srv->watch_log;
	if (!c->watcher || l->n == 0)
		return false;
	return c->log_block + 1 < l->n || c->log_off < l->v[c->log_block]->len;
}

size_t net_watch_log_bytes(const struct server *s)
{
	return s->watch_log ? s->watch_log->bytes : 0;
}
