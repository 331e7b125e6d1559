/* bcast: route game events to connections (include/sopra/bcast.h). */
#include "sopra/bcast.h"

#include <stdlib.h>
#include <string.h>

#include "sopra/xalloc.h"

struct bcast_player {
	int comm_id;  /* 0: no connection (lost) */
	bool in_game; /* registered, no Left delivered yet */
	/* sessions: the game ended while the player had no connection, and no
	 * Reconnect has delivered its history (with the end) since */
	bool missed_end;
	/* sessions: every event routed to the player, in order (owned) */
	struct game_event *hist;
	size_t nhist, cap_hist;
};

struct bcast {
	struct bcast_sink sink;
	bcast_secret_fn secret_fn; /* non-NULL: sessions are on */
	void *secret_ctx;
	char **strs; /* owned copies of transient strings in histories */
	size_t nstrs, cap_strs;
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
	for (int i = 0; i < b->n; i++)
		free(b->p[i].hist);
	for (size_t i = 0; i < b->nstrs; i++)
		free(b->strs[i]);
	free(b->strs);
	free(b->p);
	free(b);
}

void bcast_join(struct bcast *b, int player, int comm_id)
{
	if (player < 0)
		return;
	b->p = xgrow_zeroed(b->p, &b->cap, player, sizeof *b->p);
	if (player >= b->n)
		b->n = player + 1;
	free(b->p[player].hist);
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
	free(b->p[p].hist);
	b->p[p] = (struct bcast_player){0};
	bcast_close_conn(b, comm);
}

/* ---- sessions ------------------------------------------------------------ */

void bcast_enable_sessions(struct bcast *b, bcast_secret_fn fn, void *ctx)
{
	b->secret_fn = fn;
	b->secret_ctx = ctx;
}

bool bcast_sessions(const struct bcast *b)
{
	return b->secret_fn != NULL;
}

static void record(struct bcast *b, int p, const struct game_event *ev)
{
	struct bcast_player *bp = &b->p[p];
	if (bp->nhist == bp->cap_hist) {
		bp->cap_hist = bp->cap_hist ? bp->cap_hist * 2 : 64;
		bp->hist = xreallocarray(bp->hist, bp->cap_hist, sizeof *bp->hist);
	}
	bp->hist[bp->nhist] = *ev;
	if (ev->type == GEV_COMMAND_FAILED && ev->str) {
		/* a bad line's message lives in its queue entry: keep a copy */
		if (b->nstrs == b->cap_strs) {
			b->cap_strs = b->cap_strs ? b->cap_strs * 2 : 16;
			b->strs = xreallocarray(b->strs, b->cap_strs, sizeof *b->strs);
		}
		b->strs[b->nstrs] = xstrdup(ev->str);
		bp->hist[bp->nhist].str = b->strs[b->nstrs++];
	}
	bp->nhist++;
}

/* The Session event of p to comm_id: p's id and secret. */
static void send_session(struct bcast *b, int p, int comm_id)
{
	if (comm_id <= 0)
		return;
	char hex[PROTO_SECRET_HEX + 1];
	b->secret_fn(b->secret_ctx, p, hex);
	struct game_event ev = {.type = GEV_SESSION, .to = p, .nargs = 1, .arg = {p}, .str = hex};
	if (b->sink.encode)
		b->sink.encode(b->sink.ctx, &ev);
	deliver(b, comm_id, &ev);
}

int bcast_find_secret(const struct bcast *b, const char *secret, size_t len)
{
	if (!b->secret_fn || len != PROTO_SECRET_HEX)
		return -1;
	for (int p = 0; p < b->n; p++) {
		char hex[PROTO_SECRET_HEX + 1];
		b->secret_fn(b->secret_ctx, p, hex);
		unsigned diff = 0; /* no early exit: the time says nothing */
		for (size_t i = 0; i < PROTO_SECRET_HEX; i++)
			diff |= (unsigned)(unsigned char)(hex[i] ^ secret[i]);
		if (diff == 0)
			return p;
	}
	return -1;
}

bool bcast_rejoin(struct bcast *b, int player, int comm_id)
{
	if (!bcast_in_game(b, player) || b->p[player].comm_id != 0 || comm_id <= 0)
		return false;
	b->p[player].comm_id = comm_id;
	b->p[player].missed_end = false; /* the history ends with the end, if any */
	/* by index: a delivery never adds to the history */
	for (size_t i = 0; i < b->p[player].nhist; i++) {
		struct game_event ev = b->p[player].hist[i];
		if (ev.type == GEV_SESSION) {
			send_session(b, player, comm_id);
			continue;
		}
		ev.to = player; /* a private copy: no watcher sees it again */
		if (b->sink.encode)
			b->sink.encode(b->sink.ctx, &ev);
		deliver(b, comm_id, &ev);
	}
	return true;
}

void bcast_set_away(struct bcast *b, int player)
{
	if (bcast_in_game(b, player))
		b->p[player].comm_id = 0;
}

void bcast_note_end(struct bcast *b)
{
	if (!b->secret_fn)
		return;
	for (int p = 0; p < b->n; p++)
		if (b->p[p].in_game && b->p[p].comm_id == 0)
			b->p[p].missed_end = true;
}

bool bcast_missed_end(const struct bcast *b, int player)
{
	return bcast_in_game(b, player) && b->p[player].missed_end;
}

/* ev goes to player p (in the game): recorded with sessions, delivered
 * when p has a connection; p's Config is followed by its Session line. */
static void to_player(struct bcast *b, int p, const struct game_event *ev)
{
	int comm = b->p[p].comm_id;
	if (b->secret_fn)
		record(b, p, ev);
	deliver(b, comm, ev);
	if (b->secret_fn && ev->type == GEV_CONFIG) {
		struct game_event mark = {.type = GEV_SESSION, .to = p}; /* the secret when sent */
		record(b, p, &mark);
		send_session(b, p, comm);
	}
}

void bcast_route(struct bcast *b, int sender_comm, const struct game_event_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct game_event *ev = &l->v[i];
		if (b->sink.encode)
			b->sink.encode(b->sink.ctx, ev);
		if (ev->to == GEV_TO_SENDER) {
			int p = b->secret_fn ? bcast_player_of(b, sender_comm) : -1;
			if (p >= 0)
				record(b, p, ev);
			deliver(b, sender_comm, ev);
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
