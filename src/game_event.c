/* game_event: the event list container and the wire names of events and commands. */
#include "sopra/game_event.h"

#include <stdlib.h>
#include <string.h>

#include "sopra/xalloc.h"

static const char *const event_names[GAME_EVENT_TYPE_COUNT] = {
#define SOPRA_GEV_NAME(id, name) [GEV_##id] = (name),
        SOPRA_EVENTS(SOPRA_GEV_NAME)
#undef SOPRA_GEV_NAME
};

static const char *const cmd_names[CMD_TYPE_COUNT] = {
#define SOPRA_CMD_NAME(id, name) [CMD_##id] = (name),
        SOPRA_COMMANDS(SOPRA_CMD_NAME)
#undef SOPRA_CMD_NAME
};

const char *game_event_name(enum game_event_type type)
{
	return (unsigned)type < GAME_EVENT_TYPE_COUNT ? event_names[type] : "?";
}

const char *cmd_name(enum cmd_type type)
{
	return (unsigned)type < CMD_TYPE_COUNT ? cmd_names[type] : "?";
}

void game_event_list_init(struct game_event_list *l)
{
	*l = (struct game_event_list){0};
}

void game_event_list_clear(struct game_event_list *l)
{
	l->n = 0;
}

void game_event_list_free(struct game_event_list *l)
{
	free(l->v);
	game_event_list_init(l);
}

/* Grows geometrically; running out of memory aborts (xalloc.h: the server
 * cannot continue a game whose events it cannot record). */
struct game_event *game_event_list_push(struct game_event_list *l, enum game_event_type type,
                                        int to)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = xreallocarray(l->v, l->cap, sizeof *l->v);
	}
	struct game_event *e = &l->v[l->n++];
	memset(e, 0, sizeof *e);
	e->type = type;
	e->to = to;
	return e;
}
