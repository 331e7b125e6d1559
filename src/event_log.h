/* event_log: a player's history of events, packed (session.c).
 *
 * A session keeps every event routed to a player for as long as the game
 * runs (a Reconnect replays them), a few hundred per player in a short
 * game and thousands in a long one. As struct game_event each costs 40
 * bytes; here an event costs 3-8: its type, a byte with its number of
 * parameters and whether it has a string, each parameter as a zigzag
 * varint, the string's pointer as is. The recipient is not kept (a history
 * goes to its player alone). Every EVENT_LOG_MARK_EVERY-th event's offset
 * is noted, so that event_log_at reads at most that many events to find
 * one.
 */
#ifndef SOPRA_EVENT_LOG_H
#define SOPRA_EVENT_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "sopra/game_event.h"

#define EVENT_LOG_MARK_EVERY 16

struct event_log {
	uint8_t *bytes; /* the packed events (owned) */
	size_t len, cap;
	size_t *marks; /* marks[k]: offset of event k * EVENT_LOG_MARK_EVERY (owned) */
	size_t nmarks, cap_marks;
	size_t n; /* events */
};

/* An empty log; event_log_free empties it again, ready for reuse. */
#define EVENT_LOG_EMPTY ((struct event_log){0})

/* Append ev (its type, parameters and string pointer; not its `to`). The
 * string it points to must outlive the log's use of it, as for
 * struct game_event. Aborts on out-of-memory, as xalloc does. */
void event_log_add(struct event_log *l, const struct game_event *ev);

/* Event i (< l->n), with `to` set to GEV_TO_ALL (the caller addresses it). */
struct game_event event_log_at(const struct event_log *l, size_t i);

void event_log_free(struct event_log *l);

#endif
