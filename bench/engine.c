/*
 * bench: the in-process engine rate. A seeded random player -- who, like a
 * client, knows only what the events told it (its characters, its hand, the
 * locations of the config) -- plays `games` games against the game API; its
 * commands are recorded, then the same streams are replayed for timing:
 *
 *   apply: game_new, game_apply for every command, game_free;
 *   full:  the same, but every command starts as its JSON line
 *          (proto_decode) and every event is encoded once (proto_encode):
 *          all the server does per command except the sockets.
 *
 * The replay checks that it reproduces the recorded number of events.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sopra/proto.h"
#include "sopra/rng.h"

#define MAX_CMDS_PER_GAME 4000

struct rec {
	int player;
	struct cmd cmd;
};

struct stream {
	int64_t seed;
	struct rec *v;
	size_t n;
	char **lines; /* wire form, for the full replay */
	size_t *lens;
	long events; /* produced while recording */
};

struct view {
	int chars[16][16];
	int nchars[16];
	int hand[16][64];
	int nhand[16];
	int offered[16][4];
	bool spawned[16]; /* has selected (or been given) characters */
};

static void view_forget_char(struct view *v, int id)
{
	for (int p = 0; p < 16; p++)
		for (int i = 0; i < v->nchars[p]; i++)
			if (v->chars[p][i] == id) {
				v->chars[p][i] = v->chars[p][--v->nchars[p]];
				return;
			}
}

static void view_forget_card(struct view *v, int p, int id)
{
	for (int q = 0; q < 16; q++) {
		if (p >= 0 && q != p)
			continue;
		for (int i = 0; i < v->nhand[q]; i++)
			if (v->hand[q][i] == id) {
				v->hand[q][i] = v->hand[q][--v->nhand[q]];
				return;
			}
	}
}

/* What a client learns from the events of one command. */
static void view_update(struct view *v, const struct game_event_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct game_event *e = &l->v[i];
		switch (e->type) {
		case GEV_CHARACTERS:
			if (e->to >= 0 && e->to < 16)
				memcpy(v->offered[e->to], e->arg, sizeof v->offered[0]);
			break;
		case GEV_CHARACTER_SPAWNED:
			if (e->arg[0] < 16 && v->nchars[e->arg[0]] < 16) {
				v->chars[e->arg[0]][v->nchars[e->arg[0]]++] = e->arg[1];
				v->spawned[e->arg[0]] = true;
			}
			break;
		case GEV_SURVIVOR_KILLED:
			view_forget_char(v, e->arg[0]);
			break;
		case GEV_BITTEN:
			if (e->nargs > 0)
				view_forget_char(v, e->arg[0]);
			break;
		case GEV_CARD_DRAWN:
			if (e->arg[0] < 16 && v->nhand[e->arg[0]] < 64)
				v->hand[e->arg[0]][v->nhand[e->arg[0]]++] = e->arg[1];
			break;
		case GEV_CARD_USED:
			view_forget_card(v, -1, e->arg[0]);
			break;
		case GEV_CONTRIBUTED:
			view_forget_card(v, e->arg[0], e->arg[1]);
			break;
		case GEV_LEFT:
			if (e->arg[0] < 16)
				v->nhand[e->arg[0]] = v->nchars[e->arg[0]] = 0;
			break;
		default:
			break;
		}
	}
}

static int pick(struct rng *r, int n)
{
	return n > 0 ? rng_next_int(r, n) : 0;
}

/* A random, legal-looking command of player p in a running game. */
static void choose(struct rng *r, const struct config *cfg, const struct view *v, int p,
		   bool selecting, struct cmd *c)
{
	memset(c, 0, sizeof *c);
	if (selecting) {
		int a = pick(r, 4), b = (a + 1 + pick(r, 3)) % 4;
		c->type = CMD_SELECT_CHARACTERS;
		c->character = v->offered[p][a];
		c->character2 = v->offered[p][b];
		return;
	}
	int ch = v->nchars[p] ? v->chars[p][pick(r, v->nchars[p])] : 0;
	int card = v->nhand[p] ? v->hand[p][pick(r, v->nhand[p])] : 0;
	int loc = cfg->locations[pick(r, cfg->nlocations)].id;
	int roll = pick(r, 100);
	c->character = ch;
	if (roll < 12) {
		c->type = CMD_END_TURN;
	} else if (roll < 24) {
		c->type = CMD_MOVE;
		c->location = loc;
		c->fuel = pick(r, 4) == 0;
	} else if (roll < 40) {
		c->type = CMD_SEARCH;
	} else if (roll < 54) {
		c->type = CMD_ATTACK;
		c->entrance = pick(r, 3);
	} else if (roll < 66) {
		c->type = CMD_BARRICADE;
		c->entrance = pick(r, 3);
	} else if (roll < 71) {
		c->type = CMD_CLEAN_WASTE;
	} else if (roll < 79) {
		c->type = CMD_CONTRIBUTE_CARD;
		c->card = card;
	} else if (roll < 92) {
		c->type = CMD_USE_CARD;
		c->card = card;
		if (pick(r, 2)) {
			c->has_target = true;
			int t = pick(r, 3);
			c->target = t == 0 ? pick(r, 3) : t == 1 ? loc : ch;
		}
	} else {
		c->type = CMD_USE_ABILITY;
		if (pick(r, 2)) {
			c->has_target = true;
			c->target = pick(r, 2) ? pick(r, 3) : ch;
		}
	}
}

static const char *const names[] = { "Ann", "Bob", "Cid", "Dee", "Eve", "Fay", "Gus", "Hal" };

static void record(const struct config *cfg, enum game_rules rules, int players, int64_t seed,
		   struct stream *st)
{
	struct game *g = game_new(cfg, seed, rules);
	struct game_event_list ev;
	game_event_list_init(&ev);
	struct view *v = calloc(1, sizeof *v);
	struct rng r;
	rng_init(&r, seed * 7919 + 1);
	size_t cap = 256;
	st->seed = seed;
	st->v = xmalloc(cap * sizeof *st->v);
	st->n = 0;
	st->events = 0;

	for (int i = 0; !game_is_over(g) && st->n < MAX_CMDS_PER_GAME; i++) {
		struct rec rc;
		memset(&rc, 0, sizeof rc);
		int w = game_waiting_for(g);
		if (i < players) {
			rc.player = GAME_NO_PLAYER;
			rc.cmd.type = CMD_REGISTER;
			rc.cmd.name = names[i % 8];
		} else if (w == GAME_WAIT_ANY) {
			rc.player = 0;
			rc.cmd.type = CMD_START_GAME;
		} else if (w >= 0) {
			rc.player = w;
			/* selection: the player was offered characters and has none yet */
			bool selecting = !v->spawned[w] && v->offered[w][0] != 0;
			choose(&r, cfg, v, w, selecting, &rc.cmd);
		} else {
			break;
		}
		if (st->n == cap) {
			cap *= 2;
			st->v = xrealloc(st->v, cap * sizeof *st->v);
		}
		st->v[st->n++] = rc;
		game_event_list_clear(&ev);
		game_apply(g, rc.player, &rc.cmd, &ev);
		st->events += (long)ev.n;
		view_update(v, &ev);
	}
	st->lines = xmalloc(st->n * sizeof *st->lines);
	st->lens = xmalloc(st->n * sizeof *st->lens);
	for (size_t i = 0; i < st->n; i++) {
		char buf[256];
		st->lens[i] = wire_encode_cmd(&st->v[i].cmd, rules, buf, sizeof buf) - 1;
		st->lines[i] = xmalloc(st->lens[i] + 1);
		memcpy(st->lines[i], buf, st->lens[i] + 1);
	}
	free(v);
	game_event_list_free(&ev);
	game_free(g);
}

void engine_bench(const struct config *cfg, enum game_rules rules, int players, int games,
		  int reps, struct engine_result *out)
{
	struct stream *st = calloc((size_t)games, sizeof *st);
	memset(out, 0, sizeof *out);
	out->cmds_per_game_min = MAX_CMDS_PER_GAME;
	for (int i = 0; i < games; i++) {
		record(cfg, rules, players, 1000 + i, &st[i]);
		out->commands += (long)st[i].n;
		out->events += st[i].events;
		if ((long)st[i].n < out->cmds_per_game_min)
			out->cmds_per_game_min = (long)st[i].n;
		if ((long)st[i].n > out->cmds_per_game_max)
			out->cmds_per_game_max = (long)st[i].n;
	}
	out->games = games;

	struct game_event_list ev;
	game_event_list_init(&ev);
	/* apply only */
	double best = 1e30;
	for (int rep = 0; rep < reps; rep++) {
		long events = 0;
		uint64_t t0 = now_ns();
		for (int i = 0; i < games; i++) {
			struct game *g = game_new(cfg, st[i].seed, rules);
			for (size_t k = 0; k < st[i].n; k++) {
				game_event_list_clear(&ev);
				game_apply(g, st[i].v[k].player, &st[i].v[k].cmd, &ev);
				events += (long)ev.n;
			}
			game_free(g);
		}
		double s = (double)(now_ns() - t0) / 1e9;
		if (events != out->events)
			die("engine replay diverged: %ld events, recorded %ld", events, out->events);
		best = s < best ? s : best;
	}
	out->apply_s = best;

	/* decode + apply + encode */
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	struct proto_buf buf;
	proto_buf_init(&buf);
	best = 1e30;
	double best_setup = 0, best_play = 0;
	for (int rep = 0; rep < reps; rep++) {
		long events = 0;
		size_t bytes = 0;
		uint64_t setup_ns = 0;
		uint64_t t0 = now_ns();
		for (int i = 0; i < games; i++) {
			uint64_t g0 = now_ns();
			struct game *g = game_new(cfg, st[i].seed, rules);
			for (size_t k = 0; k < st[i].n; k++) {
				/* game_new and the registrations (each with its Config
				 * event: the whole file, escaped) are the per-game setup */
				if (k == (size_t)players)
					setup_ns += now_ns() - g0;
				const char *err = NULL;
				if (!proto_decode(st[i].lines[k], st[i].lens[k], rules, &pc, &err))
					die("bench command does not decode: %s", err);
				game_event_list_clear(&ev);
				game_apply(g, st[i].v[k].player, &pc.cmd, &ev);
				events += (long)ev.n;
				for (size_t e = 0; e < ev.n; e++) {
					proto_buf_reset(&buf);
					proto_encode(&ev.v[e], rules, &buf);
					bytes += buf.len;
				}
			}
			game_free(g);
		}
		double s = (double)(now_ns() - t0) / 1e9;
		if (events != out->events || bytes == 0)
			die("engine replay (full) diverged");
		if (s < best) {
			best = s;
			best_setup = (double)setup_ns / 1e9;
			best_play = s - best_setup;
		}
	}
	out->full_s = best;
	out->setup_s = best_setup;
	out->play_s = best_play;
	out->play_commands = out->commands - (long)games * players;
	proto_cmd_clear(&pc);
	proto_buf_free(&buf);
	game_event_list_free(&ev);

	for (int i = 0; i < games; i++) {
		for (size_t k = 0; k < st[i].n; k++)
			free(st[i].lines[k]);
		free(st[i].lines);
		free(st[i].lens);
		free(st[i].v);
	}
	free(st);
}
