/* bcast: route game events to connections (include/sopra/bcast.h). */
#include "sopra/bcast.h"

#include <assert.h>
#include <stdlib.h>

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
	bcast_set_sink(b, sink);
	return b;
}

void bcast_free(struct bcast *b)
{
	if (!b)
		return;
	free(b->p);
	free(b);
}

void bcast_set_sink(struct bcast *b, struct bcast_sink sink)
{
	assert(sink.send);
	b->sink = sink;
}

void bcast_join(struct bcast *b, int player, int comm_id)
{
	assert(player >= 0 && comm_id > 0);
	assert(!bcast_in_game(b, player));
	b->p = xgrow_zeroed(b->p, &b->cap, player, sizeof *b->p);
	if (player >= b->n)
		b->n = player + 1;
	b->p[player] = (struct bcast_player){.comm_id = comm_id, .in_game = true};
	if (b->sink.joined)
		b->sink.joined(b->sink.ctx, comm_id, player);
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

void bcast_rejoin(struct bcast *b, int player, int comm_id)
{
	assert(bcast_in_game(b, player) && b->p[player].comm_id == 0);
	assert(comm_id > 0 && bcast_player_of(b, comm_id) < 0);
	b->p[player].comm_id = comm_id;
	if (b->sink.joined)
		b->sink.joined(b->sink.ctx, comm_id, player);
}

void bcast_set_away(struct bcast *b, int player)
{
	if (bcast_in_game(b, player))
		b->p[player].comm_id = 0;
}

void bcast_close_conn(struct bcast *b, int comm_id)
{
	assert(comm_id > 0);
	if (b->sink.close)
		b->sink.close(b->sink.ctx, comm_id);
}

/* p has received its Left: it leaves the set, its connection closes. */
static void player_left(struct bcast *b, int p)
{
	if (!bcast_in_game(b, p))
		return;
	int comm = b->p[p].comm_id;
	b->p[p] = (struct bcast_player){0};
	if (b->sink.left)
		b->sink.left(b->sink.ctx, comm, p);
}

/* ev goes to player p, who is in the game. */
static void to_player(struct bcast *b, int p, const struct game_event *ev)
{
	b->sink.send(b->sink.ctx, b->p[p].comm_id, p, ev);
}

void bcast_route(struct bcast *b, int sender_comm, const struct game_event_list *l)
{
	assert(sender_comm >= 0);
	for (size_t i = 0; i < l->n; i++) {
		const struct game_event *ev = &l->v[i];
		if (b->sink.encode)
			b->sink.encode(b->sink.ctx, ev);
		if (ev->to == GEV_TO_SENDER) {
			if (sender_comm > 0)
				b->sink.send(b->sink.ctx, sender_comm,
				             bcast_player_of(b, sender_comm), ev);
		} else if (ev->to == GEV_TO_ALL) {
			for (int p = 0; p < b->n; p++)
				if (b->p[p].in_game)
					to_player(b, p, ev);
		} else if (bcast_in_game(b, ev->to)) {
			to_player(b, ev->to, ev);
		}
		if (ev->type == GEV_LEFT)
			player_left(b, ev->arg[0]);
	}
}
