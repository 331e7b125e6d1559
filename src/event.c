/* event: the event list container and the wire names of events and commands. */
#include "sopra/event.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const event_names[EVENT_TYPE_COUNT] = {
#define SOPRA_EV_NAME(id, name) [EV_##id] = (name),
        SOPRA_EVENTS(SOPRA_EV_NAME)
#undef SOPRA_EV_NAME
};

static const char *const cmd_names[CMD_TYPE_COUNT] = {
#define SOPRA_CMD_NAME(id, name) [CMD_##id] = (name),
        SOPRA_COMMANDS(SOPRA_CMD_NAME)
#undef SOPRA_CMD_NAME
};

const char *event_name(enum event_type type)
{
	return (unsigned)type < EVENT_TYPE_COUNT ? event_names[type] : "?";
}

const char *cmd_name(enum cmd_type type)
{
	return (unsigned)type < CMD_TYPE_COUNT ? cmd_names[type] : "?";
}

void event_list_init(struct event_list *l)
{
	l->v = NULL;
	l->n = 0;
	l->cap = 0;
}

void event_list_clear(struct event_list *l)
{
	l->n = 0;
}

void event_list_free(struct event_list *l)
{
	free(l->v);
	event_list_init(l);
}

/* Grows geometrically; an allocation failure is fatal (the server cannot
 * continue a game whose events it cannot record). */
struct event *event_list_push(struct event_list *l, enum event_type type, int to)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct event *v = realloc(l->v, cap * sizeof *v);
		if (!v) {
			fputs("sopra-server: out of memory\n", stderr);
			abort();
		}
		l->v = v;
		l->cap = cap;
	}
	struct event *e = &l->v[l->n++];
	memset(e, 0, sizeof *e);
	e->type = type;
	e->to = to;
	return e;
}
