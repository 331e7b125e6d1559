/*
 * net_quiet: the log's budget for lines about strangers (src/net_int.h).
 *
 * A connection that never registered gets its lines (opened, closed,
 * evicted, a socket error, ...) logged one by one while they are few: up
 * to NET_QUIET_BURST at once, refilled at NET_QUIET_RATE a second. Beyond
 * that they are only counted, and one summary line a second at most says
 * how many were left out and of which kind. A connect flood so costs the
 * log about NET_QUIET_RATE lines a second, not two per connect (thousands
 * a second, megabytes a minute). Lines about players and watchers are
 * never held back.
 */
#include "net_int.h"

#include <stdio.h>

#define MILLI 1000L

void net_quiet_init(struct net_quiet *q, long now)
{
	*q = (struct net_quiet){0};
	token_bucket_fill(&q->tokens, NET_QUIET_BURST, now);
}

bool net_quiet_allow(struct net_quiet *q, long now, enum net_quiet_kind kind)
{
	if (token_bucket_refill(&q->tokens, NET_QUIET_BURST, NET_QUIET_RATE, now) >= MILLI) {
		q->tokens.milli -= MILLI;
		return true;
	}
	if (q->left_out == 0)
		q->since_ms = now;
	q->left_out++;
	q->opened += kind == NET_QUIET_OPENED;
	q->closed += kind == NET_QUIET_CLOSED || kind == NET_QUIET_EVICTED;
	q->evicted += kind == NET_QUIET_EVICTED;
	return false;
}

bool net_quiet_summary(struct net_quiet *q, long now, bool force, char *buf, size_t len)
{
	if (q->left_out == 0 || (!force && now - q->since_ms < NET_QUIET_SUMMARY_MS))
		return false;
	snprintf(buf, len,
	         "not logged: %lu lines about strangers in %.1f s (over %d a second): "
	         "%lu opened, %lu closed (%lu evicted)",
	         q->left_out, (double)(now - q->since_ms) / 1000.0, NET_QUIET_RATE, q->opened,
	         q->closed, q->evicted);
	q->left_out = q->opened = q->closed = q->evicted = 0;
	return true;
}

bool net_log_conn_allowed(struct conn *c, enum net_quiet_kind kind)
{
	if (c->registered || c->watcher)
		return true;
	struct server *s = c->srv;
	long now = now_ms();
	net_log_quiet_summary(s, now, false);
	return net_quiet_allow(&s->quiet, now, kind);
}

void net_log_quiet_summary(struct server *s, long now, bool force)
{
	char line[256];
	if (net_quiet_summary(&s->quiet, now, force, line, sizeof line))
		net_log(s, "%s", line);
}
