/*
 * pace: the server's lines held back so that a person can follow the
 * other players' moves (sopra-client --pace MS). Lines are queued as they
 * arrive and released in order; a move of another player (an action event
 * whose actor is not us: Moved, Searched, an attack's ZombieKilled, ...) is
 * released at least MS after the one before it, together with everything
 * that follows up to the next such move. With MS 0 every line is released
 * at once. The queue keeps each line's arrival time, for the countdown of
 * the server's timeout.
 */
#ifndef SOPRA_CLIENT_PACE_H
#define SOPRA_CLIENT_PACE_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"

struct pace_line {
	char *text; /* without "\n" */
	size_t len;
	double arrived; /* ms, the caller's clock */
};

struct pace {
	int ms;
	struct pace_line *q; /* a ring of cap lines, n of them from head */
	int head, n, cap;
	double next_ms; /* the next move is not released before this time */
};

void pace_init(struct pace *p, int ms);
void pace_free(struct pace *p);
/* Queue a line that arrived at `now`. 0, or -1 when out of memory. */
int pace_push(struct pace *p, const char *line, size_t len, double now);

/* Whether line is a move of another player than a's (an action event by a
 * player who is not a's own, folded into a's model as it is now). */
bool pace_is_others_move(const struct app *a, const char *line, size_t len);

typedef void pace_feed_fn(void *ctx, const struct pace_line *line);

/* Release the lines that are due at `now`, in order, through feed(ctx,
 * line): all of them, up to the first move of another player (is_move)
 * that comes less than p->ms after the last move released. Returns the ms
 * to wait before calling again, or -1 when nothing is queued. */
int pace_release(struct pace *p, double now, bool (*is_move)(void *ctx, const struct pace_line *),
                 pace_feed_fn *feed, void *ctx);

#endif
