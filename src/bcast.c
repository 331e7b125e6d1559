/* bcast: route game events to connections (include/sopra/bcast.h). */
#include "sopra/bcast.h"

#include <stdlib.h>
#include <string.h>

#include "sopra/xalloc.h"

struct bcast_player {
	int comm_id;  /* 0: no connection (lost) */
	bool in_game; /* registered, no Left delivered yet */
};

struct bcast {
	struct bcast_sink sink;
	struct bcast_player *p; /* owned; indexed by player id */
	int n, cap;             /* ids in use (max id + 1), slots allocated */
};

struct bcast *bcast_new(struct bcast_sink sink)
{
	struct bcast *b = xcalloc(1, sizeof *b);
	b->sink = sink;
	return b;
}

void bcast_free(struct bcast *b)
{
	if (!b)
		return;
	free(b->p);
	free(b);
}

void bcast_join(struct bcast *b, int player, int comm_id)
{
	if (player < 0)
		return;
	if (player >= b->cap) {
		int cap = b->cap ? b->cap : 8;
		while (cap <= player)
			cap *= 2;
		b->p = xreallocarray(b->p, (size_t)cap, sizeof *b->p);
		memset(b->p + b->cap, 0, (size_t)(cap - b->cap) * sizeof *b->p);
		b->cap = cap;
	}
	if (player >= b->n)
		b->n = player + 1;
	b->p[player] = (struct bcast_player){.comm_id = comm_id, .in_game = true};
}

int bcast_player_of(const struct bcast *b, int comm_id)
{
	if (comm_id <= 0)
		return -1;
	for (int i = 0; i < b->n; i++)
		if (b->p[i].in_game && b->p[i].comm_id == comm_id)
			return i;
	return -1;
}

int bcast_comm_of(const struct bcast *b, int player)
{
	return bcast_in_game(b, player) ? b->p[player].comm_id : 0;
}

bool bcast_in_game(const struct bcast *b, int player)
{
	return player >= 0 && player < b->n && b->p[player].in_game;
}

int bcast_conn_lost(struct bcast *b, int comm_id)
{
	int p = bcast_player_of(b, comm_id);
	if (p >= 0)
		b->p[p].comm_id = 0;
	return p;
}

static void deliver(struct bcast *b, int comm_id, const struct game_event *ev)
{
	if (comm_id > 0)
		b->sink.send(b->sink.ctx, comm_id, ev);
}

void bcast_close_conn(struct bcast *b, int comm_id)
{
	if (comm_id > 0 && b->sink.close)
		b->sink.close(b->sink.ctx, comm_id);
}

/* p has received its Left: it leaves the set, its connection closes. */
static void player_left(struct bcast *b, int p)
{
	if (!bcast_in_game(b, p))
		return;
	int comm = b->p[p].comm_id;
	b->p[p] = (struct bcast_player){0};
	bcast_close_conn(b, comm);
}

void bcast_route(struct bcast *b, int sender_comm, const struct game_event_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct game_event *ev = &l->v[i];
		if (b->sink.encode)
			b->sink.encode(b->sink.ctx, ev);
		if (ev->to == GEV_TO_SENDER) {
			deliver(b, sender_comm, ev);
		} else if (ev->to == GEV_TO_ALL) {
			for (int p = 0; p < b->n; p++)
				if (b->p[p].in_game)
					deliver(b, b->p[p].comm_id, ev);
		} else if (bcast_in_game(b, ev->to)) {
			deliver(b, b->p[ev->to].comm_id, ev);
		}
		if (ev->type == GEV_LEFT)
			player_left(b, ev->arg[0]);
	}
}
