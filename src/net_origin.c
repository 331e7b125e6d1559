/*
 * net_origin: the strangers grouped by origin (src/net_int.h).
 *
 * Every stranger (an OPEN connection that has neither registered nor come
 * in on the watch port) is in exactly one group, that of its origin; a
 * group lists its strangers idlest first (longest without a complete line;
 * of two with their last line in the same millisecond, the older
 * connection first). A connection joins its group's tail when it opens,
 * moves to the tail when it sends a line, and leaves when it registers or
 * stops being OPEN; a group goes when its last stranger does.
 *
 * So admission needs no walk over the connections: a newcomer's origin
 * count is one lookup among the groups (there are at most as many groups
 * as strangers, and a flood from few addresses makes few), and the
 * stranger to evict is the head of the largest group.
 */
#include "net_int.h"

#include <stdlib.h>

#include "sopra/xalloc.h"

bool net_same_origin(const struct net_origin *a, const struct net_origin *b)
{
	return a->prefix == b->prefix && a->v6 == b->v6 && a->own == b->own;
}

bool net_idler(const struct conn *a, const struct conn *b)
{
	return a->line_ms < b->line_ms || (a->line_ms == b->line_ms && a->id < b->id);
}

struct stranger_group *net_strangers_from(const struct server *s, const struct net_origin *o)
{
	for (size_t k = 0; k < s->ngroups; k++)
		if (net_same_origin(&s->groups[k]->origin, o))
			return s->groups[k];
	return NULL;
}

static struct stranger_group *group_new(struct server *s, const struct net_origin *o)
{
	s->groups = xgrow(s->groups, &s->cap_groups, s->ngroups + 1,
	                  sizeof(struct stranger_group *), 8);
	struct stranger_group *g = xcalloc(1, sizeof *g);
	g->origin = *o;
	g->slot = s->ngroups;
	s->groups[s->ngroups++] = g;
	return g;
}

/* g is empty: out of the server's groups (the last group takes its slot). */
static void group_free(struct server *s, struct stranger_group *g)
{
	struct stranger_group *last = s->groups[--s->ngroups];
	s->groups[g->slot] = last;
	last->slot = g->slot;
	free(g);
	if (s->ngroups == 0) { /* a flood's peak is not kept */
		free(s->groups);
		s->groups = NULL;
		s->cap_groups = 0;
	}
}

/* Link c into g in idle order: from the tail back past the strangers
 * that are not idler than c (only ever those with c's line_ms, as c's
 * last line is the newest). */
static void group_insert(struct stranger_group *g, struct conn *c)
{
	struct conn *after = g->tail;
	while (after && net_idler(c, after))
		after = after->group_prev;
	c->group_prev = after;
	c->group_next = after ? after->group_next : g->head;
	if (c->group_next)
		c->group_next->group_prev = c;
	else
		g->tail = c;
	if (after)
		after->group_next = c;
	else
		g->head = c;
}

static void group_unlink(struct stranger_group *g, struct conn *c)
{
	if (c->group_prev)
		c->group_prev->group_next = c->group_next;
	else
		g->head = c->group_next;
	if (c->group_next)
		c->group_next->group_prev = c->group_prev;
	else
		g->tail = c->group_prev;
	c->group_prev = c->group_next = NULL;
}

void net_stranger_add(struct server *s, struct conn *c)
{
	struct stranger_group *g = net_strangers_from(s, &c->origin);
	if (!g)
		g = group_new(s, &c->origin);
	group_insert(g, c);
	g->n++;
	c->group = g;
}

void net_stranger_remove(struct server *s, struct conn *c)
{
	struct stranger_group *g = c->group;
	if (!g)
		return;
	group_unlink(g, c);
	c->group = NULL;
	if (--g->n == 0)
		group_free(s, g);
}

void net_stranger_had_line(struct conn *c)
{
	struct stranger_group *g = c->group;
	if (!g)
		return;
	group_unlink(g, c);
	group_insert(g, c);
}

struct conn *net_stranger_to_evict(const struct server *s)
{
	const struct stranger_group *best = NULL;
	for (size_t k = 0; k < s->ngroups; k++) {
		const struct stranger_group *g = s->groups[k];
		if (!best || g->n > best->n || (g->n == best->n && net_idler(g->head, best->head)))
			best = g;
	}
	return best ? best->head : NULL;
}

void net_strangers_free(struct server *s)
{
	for (size_t k = 0; k < s->ngroups; k++)
		free(s->groups[k]);
	free(s->groups);
	s->groups = NULL;
	s->ngroups = s->cap_groups = 0;
}
