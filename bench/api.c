/*
 * bench: the game API a search bot is built on (game_legal_commands,
 * game_clone, game_view_of, game_from_view) on the states of random games.
 *
 * Random legal play (game_legal_commands, a random command) records a clone
 * of every state where the game waits for a player; then each operation is
 * timed over all recorded states, the operations interleaved and repeated so
 * that a noisy neighbour hurts them alike. The floor is game_apply itself,
 * measured in the same run on the same states (each recorded command applied
 * to a clone of its state), so the rows can be read as "an enumeration costs
 * N commands".
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sopra/game_view.h"
#include "sopra/rng.h"

struct recorded {
	struct game **state; /* clones; each waits for player[i] */
	int *player;
	struct cmd *cmd; /* the command played there */
	size_t n, cap;
};

static void record(struct recorded *r, const struct game *g, int p, const struct cmd *c)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 1024;
		r->state = xreallocarray(r->state, r->cap, sizeof *r->state);
		r->player = xreallocarray(r->player, r->cap, sizeof *r->player);
		r->cmd = xreallocarray(r->cmd, r->cap, sizeof *r->cmd);
	}
	r->state[r->n] = game_clone(g);
	r->player[r->n] = p;
	r->cmd[r->n] = *c;
	r->n++;
}

/* One game of random legal play by `players` players; every state recorded. */
static void play(const struct config *cfg, enum game_rules rules, int players, int64_t seed,
                 struct rng *r, struct recorded *rec)
{
	struct game *g = game_new(cfg, seed, rules);
	struct game_event_list ev;
	struct game_cmd_list legal;
	game_event_list_init(&ev);
	game_cmd_list_init(&legal);
	struct cmd reg = {.type = CMD_REGISTER, .name = "bench"};
	for (int i = 0; i < players && game_waiting_for(g) == GAME_WAIT_ANY; i++)
		game_apply(g, GAME_NO_PLAYER, &reg, &ev);
	if (game_waiting_for(g) == GAME_WAIT_ANY) {
		struct cmd start = {.type = CMD_START_GAME};
		game_apply(g, 0, &start, &ev);
	}
	for (int steps = 0; steps < 20000 && game_waiting_for(g) >= 0; steps++) {
		int p = game_waiting_for(g);
		size_t n = game_legal_commands(g, p, &legal);
		if (n == 0)
			die("no legal command for the player the game waits for");
		const struct cmd *c = &legal.v[rng_next_int(r, (int)n)];
		if (c->type == CMD_LEAVE) /* keep the players in */
			c = &legal.v[(size_t)(c - legal.v + 1) % n];
		record(rec, g, p, c);
		game_event_list_clear(&ev);
		game_apply(g, p, c, &ev);
	}
	game_cmd_list_free(&legal);
	game_event_list_free(&ev);
	game_free(g);
}

void api_bench(const struct config *cfg, enum game_rules rules, int games, int reps,
               struct api_result *out)
{
	memset(out, 0, sizeof *out);
	struct recorded rec = {0};
	struct rng r;
	rng_init(&r, 7);
	for (int i = 0; i < games; i++)
		play(cfg, rules, 1 + i % cfg->max_players, 9000 + i, &r, &rec);
	out->states = (long)rec.n;

	struct game_cmd_list legal;
	game_cmd_list_init(&legal);
	struct game_event_list ev;
	game_event_list_init(&ev);
	struct game_view *view = game_view_new(cfg);
	struct game **copies = xcalloc(rec.n, sizeof *copies);
	/* rep 0 warms the caches up and is not counted */
	for (int rep = 0; rep <= reps; rep++) {
		double w = rep > 0 ? 1e-9 : 0;
		uint64_t t0 = now_ns();
		for (size_t i = 0; i < rec.n; i++)
			out->listed +=
			        (long)game_legal_commands(rec.state[i], rec.player[i], &legal);
		uint64_t t1 = now_ns();
		for (size_t i = 0; i < rec.n; i++)
			game_free(game_clone(rec.state[i]));
		uint64_t t2 = now_ns();
		for (size_t i = 0; i < rec.n; i++)
			copies[i] = game_clone(rec.state[i]);
		uint64_t t3 = now_ns();
		for (size_t i = 0; i < rec.n; i++) {
			game_event_list_clear(&ev);
			game_apply(copies[i], rec.player[i], &rec.cmd[i], &ev);
		}
		uint64_t t4 = now_ns();
		for (size_t i = 0; i < rec.n; i++)
			game_free(copies[i]);
		uint64_t t5 = now_ns();
		for (size_t i = 0; i < rec.n; i++)
			game_view_of(rec.state[i], rec.player[i], view);
		uint64_t t6 = now_ns();
		for (size_t i = 0; i < rec.n; i++) {
			struct game *g = game_from_view(view, (int64_t)i);
			if (!g)
				die("a view no game can have");
			game_free(g);
		}
		uint64_t t7 = now_ns();
		if (rep == 0)
			out->listed = 0;
		out->legal_s += w * (double)(t1 - t0);
		out->clone_s += w * (double)(t2 - t1);
		out->apply_s += w * (double)(t4 - t3);
		out->view_s += w * (double)(t6 - t5);
		out->from_view_s += w * (double)(t7 - t6);
	}
	free(copies);
	out->ops = (long)rec.n * reps;

	/* rollouts: from every 8th state, random legal play to the end */
	uint64_t t0 = now_ns();
	for (size_t i = 0; i < rec.n; i += 8) {
		struct game *c = game_clone(rec.state[i]);
		for (int p = game_waiting_for(c); p >= 0; p = game_waiting_for(c)) {
			size_t n = game_legal_commands(c, p, &legal);
			game_event_list_clear(&ev);
			game_apply(c, p, &legal.v[rng_next_int(&r, (int)n)], &ev);
			out->rollout_commands++;
		}
		game_free(c);
		out->rollouts++;
	}
	out->rollout_s = (double)(now_ns() - t0) / 1e9;
	game_view_free(view);
	game_event_list_free(&ev);
	game_cmd_list_free(&legal);
	for (size_t i = 0; i < rec.n; i++)
		game_free(rec.state[i]);
	free(rec.state);
	free(rec.player);
	free(rec.cmd);
}
