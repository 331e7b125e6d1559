/*
 * net_config.c: the Config line. Every Config event a server sends is the
 * same line (one configuration per server), so it is encoded once, when
 * the server is made, and it is the only copy of the configuration's text
 * the server keeps (main drops the text).
 *
 * It is needed only while some connection has it waiting: a player gets
 * it when it registers, a watcher when it arrives, a returning player in
 * its history. In between, for nearly the whole game, the server keeps it
 * deflated with zlib (the benchmark's 12.6 KiB line: 1.3 KiB; docs/
 * performance.md, "Memory per game"). Whoever queues it takes the live
 * copy: inflated on demand, one for every connection that has it waiting
 * (a shared line, by reference), freed with its last reference.
 *
 * A line longer than NET_CONFIG_DEFLATE_MAX, or one that does not shrink,
 * stays whole and live for the server's life: inflating megabytes for
 * each watcher that arrives would hold up the loop for milliseconds.
 */
#include <assert.h>
#include <stdlib.h>

#include <zlib.h>

#include "net_int.h"
#include "sopra/game_event.h"
#include "sopra/xalloc.h"

/* The longest Config line kept deflated: inflating it takes the loop well
 * under a millisecond (a 64 KiB line: about 0.1 ms here). */
#define NET_CONFIG_DEFLATE_MAX ((size_t)64 << 10)

/* The deflated stream of line (NULL when it would not be shorter). */
static unsigned char *deflate_line(const struct proto_buf *line, size_t *out_len)
{
	uLongf n = compressBound((uLong)line->len);
	unsigned char *z = xmalloc(n);
	if (compress2(z, &n, (const Bytef *)line->data, (uLong)line->len, Z_BEST_COMPRESSION) !=
	            Z_OK ||
	    n >= line->len) {
		free(z);
		return NULL;
	}
	*out_len = n;
	return xrealloc(z, n);
}

void net_config_init(struct server *s, const struct config *cfg)
{
	struct config_store *cs = &s->config;
	*cs = (struct config_store){0};
	if (!cfg->text)
		return;
	struct proto_buf line;
	proto_buf_init(&line);
	struct game_event ev = {.type = GEV_CONFIG, .to = GEV_TO_SENDER, .str = cfg->text};
	proto_encode(&ev, s->rules, &line);
	cs->len = line.len;
	if (line.len <= NET_CONFIG_DEFLATE_MAX)
		cs->deflated = deflate_line(&line, &cs->deflated_len);
	if (!cs->deflated) /* whole, with the server's reference for ever */
		cs->live = net_shared_new(s, line.data, line.len, false);
	proto_buf_free(&line);
}

/* The line inflated into a new shared line (one reference). Inflating
 * what deflate_line made cannot fail but for memory, which xmalloc
 * handles; anything else is a broken invariant. */
static struct shared_line *inflate_line(struct server *s)
{
	const struct config_store *cs = &s->config;
	struct shared_line *b = net_shared_new(s, NULL, cs->len, false);
	uLongf n = (uLongf)cs->len;
	int rc = uncompress((Bytef *)b->data, &n, cs->deflated, (uLong)cs->deflated_len);
	if (rc != Z_OK || n != cs->len)
		abort();
	return b;
}

struct shared_line *net_config_take(struct server *s)
{
	struct config_store *cs = &s->config;
	assert(cs->len > 0);
	if (cs->live) {
		cs->live->refs++;
		return cs->live;
	}
	cs->live = inflate_line(s);
	return cs->live;
}

int net_conn_add_config(struct conn *c, struct evbuffer *buf)
{
	struct shared_line *b = net_config_take(c->srv);
	int rc = net_conn_add_shared(c, buf, b);
	net_shared_unref(b);
	return rc;
}

void net_config_forget(struct server *s, const struct shared_line *b)
{
	if (s->config.live == b)
		s->config.live = NULL;
}

void net_config_free(struct server *s)
{
	struct config_store *cs = &s->config;
	if (!cs->deflated && cs->live)
		net_shared_unref(cs->live); /* the server's own reference */
	free(cs->deflated);
	*cs = (struct config_store){0};
}
