/* event_log: a player's history of events, packed (src/event_log.h). */
#include "event_log.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sopra/xalloc.h"

_Static_assert(GAME_EVENT_TYPE_COUNT <= 256, "an event's type is kept in one byte");

/* The byte after the type: the number of parameters, and a string flag. */
#define NARGS_MASK 0x07u
#define HAS_STR    0x08u

/* An event at most: type, flags, 4 varints of 5 bytes, a pointer. */
#define EVENT_MAX_BYTES (2 + 4 * 5 + sizeof(const char *))

static uint32_t zigzag(int v)
{
	return ((uint32_t)v << 1) ^ (0u - ((uint32_t)v >> 31));
}

static int unzigzag(uint32_t u)
{
	return (int)((u >> 1) ^ (0u - (u & 1u)));
}

static size_t put_varint(uint8_t *p, uint32_t u)
{
	size_t n = 0;
	while (u >= 0x80u) {
		p[n++] = (uint8_t)(u | 0x80u);
		u >>= 7;
	}
	p[n++] = (uint8_t)u;
	return n;
}

static uint32_t get_varint(const uint8_t **p)
{
	uint32_t u = 0;
	for (unsigned shift = 0;; shift += 7) {
		uint8_t b = *(*p)++;
		u |= (uint32_t)(b & 0x7fu) << shift;
		if (!(b & 0x80u))
			return u;
	}
}

void event_log_add(struct event_log *l, const struct game_event *ev)
{
	assert(ev->nargs >= 0 && ev->nargs <= 4);
	if (l->n % EVENT_LOG_MARK_EVERY == 0) {
		l->marks = xgrow(l->marks, &l->cap_marks, l->nmarks + 1, sizeof *l->marks, 4);
		l->marks[l->nmarks++] = l->len;
	}
	l->bytes = xgrow(l->bytes, &l->cap, l->len + EVENT_MAX_BYTES, 1, 256);
	uint8_t *p = l->bytes + l->len;
	*p++ = (uint8_t)ev->type;
	*p++ = (uint8_t)((unsigned)ev->nargs | (ev->str ? HAS_STR : 0u));
	for (int a = 0; a < ev->nargs; a++)
		p += put_varint(p, zigzag(ev->arg[a]));
	if (ev->str) {
		memcpy(p, &ev->str, sizeof ev->str);
		p += sizeof ev->str;
	}
	l->len = (size_t)(p - l->bytes);
	l->n++;
}

/* Decode the event at *p and move *p past it. */
static struct game_event decode(const uint8_t **p)
{
	struct game_event ev = {.type = (enum game_event_type)(*p)[0], .to = GEV_TO_ALL};
	uint8_t flags = (*p)[1];
	*p += 2;
	ev.nargs = (int)(flags & NARGS_MASK);
	for (int a = 0; a < ev.nargs; a++)
		ev.arg[a] = unzigzag(get_varint(p));
	if (flags & HAS_STR) {
		memcpy(&ev.str, *p, sizeof ev.str);
		*p += sizeof ev.str;
	}
	return ev;
}

struct game_event event_log_at(const struct event_log *l, size_t i)
{
	assert(i < l->n);
	const uint8_t *p = l->bytes + l->marks[i / EVENT_LOG_MARK_EVERY];
	for (size_t k = i % EVENT_LOG_MARK_EVERY; k > 0; k--)
		(void)decode(&p);
	return decode(&p);
}

void event_log_free(struct event_log *l)
{
	free(l->bytes);
	free(l->marks);
	*l = EVENT_LOG_EMPTY;
}
