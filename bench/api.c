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
	/* each kind's time per call: the best of the repetitions (rep 0 only
	 * warms up); game_apply is (clone + apply + free) - (clone + free) */
	double best[5] = {1e9, 1e9, 1e9, 1e9, 1e9}, n = (double)rec.n;
	for (int rep = 0; rep <= reps; rep++) {
		uint64_t t[7];
		t[0] = now_ns();
		long listed = 0;
		for (size_t i = 0; i < rec.n; i++)
			listed += (long)game_legal_commands(rec.state[i], rec.player[i], &legal);
		t[1] = now_ns();
		for (size_t i = 0; i < rec.n; i++)
			game_free(game_clone(rec.state[i]));
		t[2] = now_ns();
		for (size_t i = 0; i < rec.n; i++) {
			struct game *c = game_clone(rec.state[i]);
			game_event_list_clear(&ev);
			game_apply(c, rec.player[i], &rec.cmd[i], &ev);
			game_free(c);
		}
		t[3] = now_ns();
		for (size_t i = 0; i < rec.n; i++)
			game_view_of(rec.state[i], rec.player[i], view);
		t[4] = now_ns();
		for (size_t i = 0; i < rec.n; i++) {
			game_view_of(rec.state[i], rec.player[i], view);
			struct game *g = game_from_view(view, (int64_t)i);
			if (!g)
				die("a view no game can have");
			game_free(g);
		}
		t[5] = now_ns();
		if (rep == 0)
			continue;
		out->listed = listed;
		double legal_s = (double)(t[1] - t[0]) / 1e9 / n;
		double clone_s = (double)(t[2] - t[1]) / 1e9 / n;
		double clone_apply_s = (double)(t[3] - t[2]) / 1e9 / n;
		double view_s = (double)(t[4] - t[3]) / 1e9 / n;
		double view_build_s = (double)(t[5] - t[4]) / 1e9 / n;
		double now[5] = {legal_s, clone_s, clone_apply_s, view_s, view_build_s};
		for (int k = 0; k < 5; k++)
			if (now[k] < best[k])
				best[k] = now[k];
	}
	out->legal_s = best[0];
	out->clone_s = best[1];
	out->apply_s = best[2] - best[1];
	out->view_s = best[3];
	out->from_view_s = best[4] - best[3];
	out->ops = (long)rec.n;

	/* rollouts: from every 8th state, random legal play to the end */
	uint64_t t0 = now_ns();
	for (size_t i = 0; i < rec.n; i += 8) {
		struct game *c = game_clone(rec.state[i]);
		for (int p = game_waiting_for(c); p >= 0; p = game_waiting_for(c)) {
			size_t listed = game_legal_commands(c, p, &legal);
			game_event_list_clear(&ev);
			game_apply(c, p, &legal.v[rng_next_int(&r, (int)listed)], &ev);
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
