/*
 * pace: holding back the others' moves (pace.h).
 */
#include "pace.h"

#include <stdlib.h>
#include <string.h>

void pace_init(struct pace *p, int ms)
{
	memset(p, 0, sizeof *p);
	p->ms = ms < 0 ? 0 : ms;
}

void pace_free(struct pace *p)
{
	for (int i = 0; i < p->n; i++)
		free(p->q[(p->head + i) % p->cap].text);
	free(p->q);
	memset(p, 0, sizeof *p);
}

static int grow(struct pace *p)
{
	int cap = p->cap ? 2 * p->cap : 64;
	struct pace_line *q = malloc((size_t)cap * sizeof *q);
	if (!q)
		return -1;
	for (int i = 0; i < p->n; i++)
		q[i] = p->q[(p->head + i) % p->cap];
	free(p->q);
	p->q = q;
	p->cap = cap;
	p->head = 0;
	return 0;
}

int pace_push(struct pace *p, const char *line, size_t len, double now)
{
	if (p->n == p->cap && grow(p) != 0)
		return -1;
	char *copy = malloc(len + 1);
	if (!copy)
		return -1;
	memcpy(copy, line, len);
	copy[len] = '\0';
	p->q[(p->head + p->n) % p->cap] = (struct pace_line){copy, len, now};
	p->n++;
	return 0;
}

bool pace_is_others_move(const struct app *a, const char *line, size_t len)
{
	struct model_event ev;
	char err[200];
	if (model_decode(&a->m, line, len, &ev, err, sizeof err) != MODEL_OK)
		return false;
	bool move = false;
	switch (ev.type) {
	case MEV_MOVED:
	case MEV_SEARCHED:
	case MEV_BARRICADED:
	case MEV_ZOMBIE_KILLED:
	case MEV_ABILITY_USED:
	case MEV_CONTRIBUTED:
	case MEV_CARD_USED: {
		int actor = app_actor(&a->m, &ev);
		move = actor >= 0 && actor != a->m.me;
		break;
	}
	default:
		break;
	}
	model_event_free(&ev);
	return move;
}

int pace_release(struct pace *p, double now, bool (*is_move)(void *ctx, const struct pace_line *),
                 pace_feed_fn *feed, void *ctx)
{
	while (p->n > 0) {
		struct pace_line *l = &p->q[p->head];
		if (p->ms > 0 && is_move(ctx, l)) {
			if (now < p->next_ms)
				return (int)(p->next_ms - now) + 1;
			p->next_ms = now + p->ms;
		}
		struct pace_line taken = *l;
		p->head = (p->head + 1) % p->cap;
		p->n--;
		feed(ctx, &taken);
		free(taken.text);
	}
	return -1;
}
