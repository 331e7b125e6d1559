/* game_event: the event list container and the wire names of events and commands. */
#include "sopra/game_event.h"

#include <stdlib.h>
#include <string.h>

#include "sopra/xalloc.h"

static const char *const event_names[GAME_EVENT_TYPE_COUNT] = {
#define SOPRA_GEV_NAME(id, name, params) [GEV_##id] = (name),
        SOPRA_EVENTS(SOPRA_GEV_NAME)
#undef SOPRA_GEV_NAME
};

static const char *const cmd_names[CMD_TYPE_COUNT] = {
#define SOPRA_CMD_NAME(id, name, ...) [CMD_##id] = (name),
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

XGROWABLE_FUNCTIONS(game_event_list, clear, v, n)

/* Grows geometrically; running out of memory aborts (xalloc.h: the server
 * cannot continue a game whose events it cannot record). */
struct game_event *game_event_list_push(struct game_event_list *l, enum game_event_type type,
                                        int to)
{
	l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof *l->v, 64);
	struct game_event *e = &l->v[l->n++];
	memset(e, 0, sizeof *e);
	e->type = type;
	e->to = to;
	return e;
}
