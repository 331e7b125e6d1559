/*
 * sopra-evalfit: fit the bots' evaluation (bots/bot_eval.h) to games.
 *
 *   sopra-evalfit [--games N] [--seed S] CONFIG...
 *
 * Plays N games on every configuration (1 to 4 players in turn, both
 * editions) with every seat playing the bots' rule-of-thumb policy
 * (bots/bot_policy.h, each from its own view), and records, at the start
 * of every turn, the evaluation's features of the public view and whether
 * the game was won in the end. A logistic regression of the outcome on the
 * features (Newton's method, a little ridge) gives the evaluation's
 * weights: the log-odds that the team wins as the policy plays on. They
 * are printed as the C initializer of bots/bot_eval_weights.h.
 *
 * The search then compares its futures by that chance. The seeds (default
 * from 900000) are apart from the win-rate benchmark's (from 1001).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot_eval.h"
#include "bot_policy.h"
#include "sopra/config.h"
#include "sopra/game.h"
#include "sopra/game_view.h"
#include "sopra/xalloc.h"

#define K BOT_EVAL_FEATURES

struct data {
	double *x; /* n rows of K */
	double *y;
	size_t n, cap;
};

static void add_row(struct data *d, const double *f, double y)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 4096;
		d->x = xreallocarray(d->x, d->cap * K, sizeof *d->x);
		d->y = xreallocarray(d->y, d->cap, sizeof *d->y);
	}
	memcpy(d->x + d->n * K, f, K * sizeof *f);
	d->y[d->n++] = y;
}

/* One game of the policy; its turn-start features go to d with the
 * outcome. */
static void play(const struct config *cfg, const struct bot_ids *ids, enum game_rules rules,
                 int players, int64_t seed, struct data *d, int *won)
{
	struct game *g = game_new(cfg, seed, rules);
	struct game_event_list ev;
	struct game_cmd_list legal;
	game_event_list_init(&ev);
	game_cmd_list_init(&legal);
	struct game_view *v = game_view_new(cfg);
	struct cmd reg = {.type = CMD_REGISTER, .name = "fit"}, start = {.type = CMD_START_GAME};
	for (int k = 0; k < players && game_waiting_for(g) == GAME_WAIT_ANY; k++)
		game_apply(g, GAME_NO_PLAYER, &reg, &ev);
	if (game_waiting_for(g) == GAME_WAIT_ANY)
		game_apply(g, 0, &start, &ev);
	size_t first_row = d->n;
	int last = -1, last_round = -1;
	uint64_t rng = (uint64_t)seed;
	while (!game_is_over(g)) {
		int p = game_waiting_for(g);
		if (game_round(g) > 0 && (p != last || game_round(g) != last_round)) {
			double f[K];
			game_view_of(g, GAME_NO_PLAYER, v);
			bot_eval_features(v, p, f);
			add_row(d, f, 0);
		}
		last = p;
		last_round = game_round(g);
		game_legal_commands(g, p, &legal);
		size_t n = 0;
		for (size_t i = 0; i < legal.n; i++)
			if (!bot_never_sends(&legal.v[i]))
				legal.v[n++] = legal.v[i];
		game_view_of(g, p, v);
		struct cmd c = legal.v[bot_policy_pick(ids, v, legal.v, n, 0, &rng)];
		game_event_list_clear(&ev);
		game_apply(g, p, &c, &ev);
	}
	game_view_of(g, GAME_NO_PLAYER, v);
	double y = v->result == VIEW_WON;
	*won += v->result == VIEW_WON;
	for (size_t i = first_row; i < d->n; i++)
		d->y[i] = y;
	game_view_free(v);
	game_cmd_list_free(&legal);
	game_event_list_free(&ev);
	game_free(g);
}

/* Solve a x = b (K x K, Gaussian elimination with partial pivoting). */
static void solve(double a[K][K], double *b, double *x)
{
	for (int c = 0; c < K; c++) {
		int piv = c;
		for (int r = c + 1; r < K; r++)
			if (fabs(a[r][c]) > fabs(a[piv][c]))
				piv = r;
		for (int j = 0; j < K; j++) {
			double t = a[c][j];
			a[c][j] = a[piv][j];
			a[piv][j] = t;
		}
		double t = b[c];
		b[c] = b[piv];
		b[piv] = t;
		for (int r = c + 1; r < K; r++) {
			double m = a[r][c] / a[c][c];
			for (int j = c; j < K; j++)
				a[r][j] -= m * a[c][j];
			b[r] -= m * b[c];
		}
	}
	for (int r = K - 1; r >= 0; r--) {
		double s = b[r];
		for (int j = r + 1; j < K; j++)
			s -= a[r][j] * x[j];
		x[r] = s / a[r][r];
	}
}

/* Logistic regression by Newton's method with a small ridge. */
static void fit(const struct data *d, double *w)
{
	const double ridge = 1e-3 * (double)d->n;
	memset(w, 0, K * sizeof *w);
	for (int it = 0; it < 30; it++) {
		double h[K][K] = {{0}}, grad[K] = {0}, step[K];
		double loglik = 0;
		for (size_t i = 0; i < d->n; i++) {
			const double *x = d->x + i * K;
			double z = 0;
			for (int j = 0; j < K; j++)
				z += w[j] * x[j];
			double p = 1 / (1 + exp(-z));
			loglik += d->y[i] ? log(p + 1e-12) : log(1 - p + 1e-12);
			for (int j = 0; j < K; j++) {
				grad[j] += (d->y[i] - p) * x[j];
				for (int k = 0; k < K; k++)
					h[j][k] += p * (1 - p) * x[j] * x[k];
			}
		}
		for (int j = 1; j < K; j++) {
			grad[j] -= ridge * w[j];
			h[j][j] += ridge;
		}
		solve(h, grad, step);
		double size = 0;
		for (int j = 0; j < K; j++) {
			w[j] += step[j];
			size += fabs(step[j]);
		}
		fprintf(stderr, "iteration %d: log-likelihood per state %.5f\n", it,
		        loglik / (double)d->n);
		if (size < 1e-7)
			break;
	}
}

int main(int argc, char **argv)
{
	int games = 2000;
	int64_t seed = 900000;
	struct data d = {0};
	int won = 0, played = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--games") == 0 && i + 1 < argc) {
			games = atoi(argv[++i]);
			continue;
		}
		if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
			seed = strtoll(argv[++i], NULL, 0);
			continue;
		}
		struct config_errors e = {0};
		struct config *cfg = config_load(argv[i], &e);
		if (!cfg) {
			fprintf(stderr, "sopra-evalfit: %s: %s\n", argv[i], e.n ? e.msgs[0] : "?");
			return 1;
		}
		struct bot_ids *ids = bot_ids_new(cfg);
		for (int k = 0; k < games; k++) {
			int players = 1 + k % (cfg->max_players < 4 ? cfg->max_players : 4);
			enum game_rules rules = (k / 4) % 2 ? RULES_REVISED : RULES_BASE;
			play(cfg, ids, rules, players, seed + k, &d, &won);
			played++;
		}
		bot_ids_free(ids);
		config_free(cfg);
	}
	if (d.n == 0) {
		fprintf(stderr, "usage: sopra-evalfit [--games N] [--seed S] CONFIG...\n");
		return 1;
	}
	fprintf(stderr, "%d games (%d won), %zu states\n", played, won, d.n);
	double w[K];
	fit(&d, w);
	printf("/* clang-format off */\n");
	printf("/* sopra-evalfit --games %d --seed %lld: %d games, %zu states */\n", games,
	       (long long)seed, played, d.n);
	for (int j = 0; j < K; j++)
		printf("        %.6g, /* %s */\n", w[j], bot_eval_feature_name(j));
	free(d.x);
	free(d.y);
	return 0;
}
