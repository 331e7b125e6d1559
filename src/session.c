/* session: secrets, histories, graces and the end's epilogue
 * (include/sopra/session.h). */
#include "sopra/session.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_log.h"
#include "sopra/xalloc.h"

struct session_player {
	char secret[PROTO_SECRET_HEX + 1]; /* "" until it registered (or sessions off) */
	/* the game ended while the player had no connection, and no Reconnect
	 * has delivered its history (with the end) since */
	bool missed_end;
	/* its grace ran out while it was away (the game was told): it cannot
	 * come back */
	bool grace_over;
	/* every event routed to the player, in order; a Session event here
	 * has no str: its secret is added when it is sent */
	struct event_log hist;
};

struct session {
	struct session_opts o;
	struct bcast *b;       /* borrowed */
	struct bcast_sink out; /* where deliveries with a connection go */
	char **strs;           /* owned copies of transient strings in histories */
	size_t nstrs, cap_strs;
	struct session_player *p; /* owned; indexed by player id */
	int n, cap;               /* ids in use (max id + 1), slots allocated */
	bool drop;                /* the deliveries now are not kept (session_keep) */
};

/* ---- the broadcaster's sink ------------------------------------------------ */

static void record(struct session *s, int p, const struct game_event *ev)
{
	struct game_event h = *ev;
	if (ev->type == GEV_COMMAND_FAILED && ev->str) {
		/* a bad line's message lives in its queue entry: keep a copy */
		s->strs = xgrow(s->strs, &s->cap_strs, s->nstrs + 1, sizeof *s->strs, 16);
		s->strs[s->nstrs] = xstrdup(ev->str);
		h.str = s->strs[s->nstrs++];
	}
	event_log_add(&s->p[p].hist, &h);
}

/* ev (encoded by out already, if it has an encoder) to comm_id. */
static void pass_on(const struct session *s, int comm_id, int player, const struct game_event *ev)
{
	if (comm_id > 0)
		s->out.send(s->out.ctx, comm_id, player, ev);
}

/* Encode ev and send it to comm_id. */
static void resend(const struct session *s, int comm_id, int player, const struct game_event *ev)
{
	if (comm_id <= 0)
		return;
	if (s->out.encode)
		s->out.encode(s->out.ctx, ev);
	s->out.send(s->out.ctx, comm_id, player, ev);
}

/* Player p's Session event: its id and its secret. */
static struct game_event session_event(const struct session *s, int p)
{
	return (struct game_event){
	        .type = GEV_SESSION, .to = p, .nargs = 1, .arg = {p}, .str = s->p[p].secret};
}

static void sink_encode(void *ctx, const struct game_event *ev)
{
	const struct session *s = ctx;
	if (s->out.encode)
		s->out.encode(s->out.ctx, ev);
}

/* Every delivery: kept in the player's history (sessions), passed on if it
 * has a connection. A player's Config is followed by its Session. */
static void sink_send(void *ctx, int comm_id, int player, const struct game_event *ev)
{
	struct session *s = ctx;
	bool keep = s->o.secret && player >= 0 && !s->drop;
	if (keep)
		record(s, player, ev);
	pass_on(s, comm_id, player, ev);
	if (keep && ev->type == GEV_CONFIG) {
		/* the Config has no other recipient: out may encode over it */
		assert(ev->to == player);
		struct game_event mark = {
		        .type = GEV_SESSION, .to = player, .nargs = 1, .arg = {player}};
		record(s, player, &mark);
		struct game_event sev = session_event(s, player);
		resend(s, comm_id, player, &sev);
	}
}

/* A player registered (its slot is new: its secret is made) or came back. */
static void sink_joined(void *ctx, int comm_id, int player)
{
	struct session *s = ctx;
	s->p = xgrow_zeroed(s->p, &s->cap, player, sizeof *s->p);
	if (player >= s->n)
		s->n = player + 1;
	struct session_player *sp = &s->p[player];
	if (s->o.secret && !sp->secret[0]) {
		s->o.secret(s->o.secret_ctx, player, sp->secret);
		assert(strlen(sp->secret) == PROTO_SECRET_HEX);
	}
	if (s->out.joined)
		s->out.joined(s->out.ctx, comm_id, player);
}

/* A player left: its history goes (its secret stays, so that a Reconnect
 * with it is told the player has left), after out was told (a history
 * still going out on comm_id is read to its end first). */
static void sink_left(void *ctx, int comm_id, int player)
{
	struct session *s = ctx;
	if (comm_id > 0 && s->out.left)
		s->out.left(s->out.ctx, comm_id, player);
	if (player < s->n) {
		struct session_player *sp = &s->p[player];
		event_log_free(&sp->hist);
		sp->missed_end = false;
	}
}

static void sink_close(void *ctx, int comm_id)
{
	struct session *s = ctx;
	if (s->out.close)
		s->out.close(s->out.ctx, comm_id);
}

/* ---- the session layer ----------------------------------------------------- */

struct session *session_new(const struct session_opts *o, struct bcast *b, struct bcast_sink out)
{
	assert(o && b && out.send);
	assert(o->grace_sec >= 0);
	struct session *s = xcalloc(1, sizeof *s);
	s->o = *o;
	s->b = b;
	s->out = out;
	bcast_set_sink(b, (struct bcast_sink){.encode = sink_encode,
	                                      .send = sink_send,
	                                      .joined = sink_joined,
	                                      .left = sink_left,
	                                      .close = sink_close,
	                                      .ctx = s});
	return s;
}

void session_free(struct session *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++)
		event_log_free(&s->p[i].hist);
	for (size_t i = 0; i < s->nstrs; i++)
		free(s->strs[i]);
	free(s->strs);
	free(s->p);
	free(s);
}

bool session_on(const struct session *s)
{
	return s->o.secret != NULL;
}

void session_keep(struct session *s, bool keep)
{
	s->drop = !keep;
}

bool session_keeps_seat(const struct session *s)
{
	return s->o.secret && s->o.grace_sec > 0;
}

static void timer(const struct session *s, int player, int sec)
{
	if (s->o.timer)
		s->o.timer(s->o.timer_ctx, player, sec);
}

void session_away(struct session *s, int player)
{
	assert(session_keeps_seat(s) && session_is_away(s, player));
	timer(s, player, s->o.grace_sec);
}

bool session_is_away(const struct session *s, int player)
{
	return bcast_in_game(s->b, player) && bcast_comm_of(s->b, player) == 0;
}

/* The player ever registered whose secret is the PROTO_SECRET_HEX bytes at
 * secret, or -1. Every secret is compared whole: the time says nothing. */
static int find_secret(const struct session *s, const char *secret)
{
	int found = -1;
	for (int p = 0; p < s->n; p++) {
		unsigned diff = 0;
		for (size_t i = 0; i < PROTO_SECRET_HEX; i++)
			diff |= (unsigned)(unsigned char)(s->p[p].secret[i] ^ secret[i]);
		if (diff == 0 && s->p[p].secret[0] && found < 0)
			found = p;
	}
	return found;
}

size_t session_history_len(const struct session *s, int player)
{
	return player >= 0 && player < s->n ? s->p[player].hist.n : 0;
}

struct game_event session_history_at(const struct session *s, int player, size_t i)
{
	assert(i < session_history_len(s, player));
	struct game_event ev = event_log_at(&s->p[player].hist, i);
	if (ev.type == GEV_SESSION)
		ev = session_event(s, player);
	ev.to = player; /* a private copy: no watcher sees it again */
	return ev;
}

/* Deliver player p's whole history to comm_id: to out.history, which may
 * write it as the connection drains, or entry by entry (by index: a
 * delivery never adds to the history). */
static void send_history(const struct session *s, int p, int comm_id)
{
	size_t n = session_history_len(s, p);
	if (s->out.history) {
		s->out.history(s->out.ctx, comm_id, p, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct game_event ev = session_history_at(s, p, i);
		resend(s, comm_id, p, &ev);
	}
}

int session_reconnect(struct session *s, int comm_id, int sender, const char *secret, char *msg,
                      size_t len)
{
	assert(comm_id > 0 && secret);
	int p = s->o.secret && strlen(secret) == PROTO_SECRET_HEX ? find_secret(s, secret) : -1;
	if (sender >= 0)
		snprintf(msg, len, "Reconnect: this connection is player %d already", sender);
	else if (p < 0)
		snprintf(msg, len, "Reconnect: wrong secret");
	else if (!bcast_in_game(s->b, p))
		snprintf(msg, len, "Reconnect: player %d has left the game", p);
	else if (bcast_comm_of(s->b, p) != 0)
		snprintf(msg, len, "Reconnect: player %d is connected", p);
	else if (s->p[p].grace_over)
		snprintf(msg, len, "Reconnect: player %d's grace is over", p);
	else {
		bcast_rejoin(s->b, p, comm_id);
		timer(s, p, 0);
		s->p[p].missed_end = false; /* the history ends with the end, if any */
		send_history(s, p, comm_id);
		return p;
	}
	return -1;
}

void session_grace_over(struct session *s, int player)
{
	assert(session_is_away(s, player) && player < s->n);
	s->p[player].grace_over = true;
}

void session_note_end(struct session *s)
{
	if (!s->o.secret)
		return;
	for (int p = 0; p < s->n; p++) {
		timer(s, p, 0);
		if (session_is_away(s, p))
			s->p[p].missed_end = true;
	}
}

bool session_missed_end(const struct session *s, int player)
{
	return bcast_in_game(s->b, player) && player < s->n && s->p[player].missed_end;
}

void session_all_away(struct session *s, bool game_over)
{
	for (int p = 0; p < s->n; p++)
		bcast_set_away(s->b, p);
	if (game_over)
		session_note_end(s);
}

void session_resume(struct session *s, bool game_over, int grace_sec)
{
	assert(grace_sec > 0);
	for (int p = 0; p < s->n; p++)
		timer(s, p, 0);
	session_all_away(s, game_over);
	for (int p = 0; !game_over && p < s->n; p++)
		if (bcast_in_game(s->b, p))
			timer(s, p, grace_sec);
}
