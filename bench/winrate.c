/*
 * sopra-winrate: how often teams of bots win, by strategy (docs/bots.md).
 *
 *   sopra-winrate [--config FILE]... [--generated] [--players LIST]
 *                 [--rules LIST] [--strategies LIST] [--games N] [--seed S]
 *                 [--iterations N | --think-ms MS] [--quiet] [--each]
 *
 * A cell is one configuration, number of players, edition and strategy;
 * every seat of a game plays that strategy. Each cell plays N games with
 * the game seeds S, S+1, ..., S+N-1, so every strategy meets the same deals.
 * The games run in this process (bots/table.h): every command and event
 * takes the server's path (queue, dispatcher, broadcaster) and every bot
 * decides from the client model its events built, as sopra-bot would. The
 * strategy "oracle" is the search deciding with the real game (it sees the
 * piles and every roll to come): the ceiling for the honest bots on those
 * deals.
 *
 * Per cell: games won with a 95% Wilson interval, the mean rounds
 * survived (a game won survives all; one lost in round r, r - 1), and the
 * time per decision (mean and longest over the decisions with more than
 * one choice) twice: on the clock, which on a shared machine depends on
 * what else runs (compare ratios, not values), and in this thread's CPU
 * time, which is what a decision costs on a core of its own.
 * Progress (games done / total) goes to stderr, the table to stdout; with
 * --each also one line per game (its seed, won or lost, and in which
 * round), so that two builds can be compared deal by deal.
 *
 * Exit: 0, 1 on bad usage or a configuration that does not load, 2 when a
 * game could not be played through (a bug: a model rejecting an event, a
 * bot with nothing to send) or a bot's command was refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bot_table.h"

#define MAX_LIST 16

struct options {
	const char *configs[MAX_LIST];
	int nconfigs;
	bool generated;
	int players[MAX_LIST], nplayers;
	enum game_rules rules[2];
	int nrules;
	char strategies[MAX_LIST][16];
	int nstrategies;
	int games;
	int64_t seed;
	long iterations;
	int think_ms;
	bool quiet;
	bool each; /* a line per game on stdout, for paired comparisons */
};

struct cell {
	char config[64];
	int players;
	enum game_rules rules;
	const char *strategy;
	int games, won;
	long rounds_survived;
	long failed;
	struct strategy_stats stats;
};

static void usage(FILE *f)
{
	fputs("usage: sopra-winrate [--config FILE]... [--generated] [--players 1,2,3,4]\n"
	      "                     [--rules base,revised] [--strategies "
	      "random,greedy,search,oracle]\n"
	      "                     [--games N] [--seed S] [--iterations N | --think-ms MS] "
	      "[--quiet] [--each]\n"
	      "defaults: resources/example.json, 3 players, both editions, all four strategies,\n"
	      "20 games from seed 1001, the search's default time per decision\n",
	      f);
}

/* "a,b,c" into at most MAX_LIST items of size n each */
static int split(const char *s, char items[][16], int max)
{
	int n = 0;
	while (*s && n < max) {
		size_t len = strcspn(s, ",");
		snprintf(items[n++], 16, "%.*s", (int)len, s);
		s += len;
		if (*s == ',')
			s++;
	}
	return n;
}

static void parse(int argc, char **argv, struct options *o)
{
	char items[MAX_LIST][16];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--help") == 0) {
			usage(stdout);
			exit(0);
		} else if (strcmp(a, "--generated") == 0) {
			o->generated = true;
			continue;
		} else if (strcmp(a, "--quiet") == 0) {
			o->quiet = true;
			continue;
		} else if (strcmp(a, "--each") == 0) {
			o->each = true;
			continue;
		}
		if (!val) {
			usage(stderr);
			exit(1);
		}
		i++;
		if (strcmp(a, "--config") == 0 && o->nconfigs < MAX_LIST) {
			o->configs[o->nconfigs++] = val;
		} else if (strcmp(a, "--players") == 0) {
			int n = split(val, items, MAX_LIST);
			o->nplayers = 0;
			for (int k = 0; k < n; k++)
				o->players[o->nplayers++] = atoi(items[k]);
		} else if (strcmp(a, "--rules") == 0) {
			int n = split(val, items, 2);
			o->nrules = 0;
			for (int k = 0; k < n; k++)
				if (!game_rules_parse(items[k], &o->rules[o->nrules++]))
					die("--rules: %s is no edition", items[k]);
		} else if (strcmp(a, "--strategies") == 0) {
			o->nstrategies = split(val, o->strategies, MAX_LIST);
		} else if (strcmp(a, "--games") == 0) {
			o->games = atoi(val);
		} else if (strcmp(a, "--seed") == 0) {
			o->seed = strtoll(val, NULL, 0);
		} else if (strcmp(a, "--iterations") == 0) {
			o->iterations = atol(val);
		} else if (strcmp(a, "--think-ms") == 0) {
			o->think_ms = atoi(val);
		} else {
			usage(stderr);
			exit(1);
		}
	}
}

/* ---- statistics ---------------------------------------------------------------- */

/* The 95% Wilson score interval of k successes in n. */
static void wilson(int k, int n, double *lo, double *hi)
{
	if (n == 0) {
		*lo = 0;
		*hi = 1;
		return;
	}
	const double z = 1.959964;
	double p = (double)k / n, z2n = z * z / n;
	double center = (p + z2n / 2) / (1 + z2n);
	double half = z / (1 + z2n) * sqrt(p * (1 - p) / n + z2n / (4.0 * n));
	*lo = center - half < 0 ? 0 : center - half;
	*hi = center + half > 1 ? 1 : center + half;
}

/* ---- playing --------------------------------------------------------------------- */

static uint64_t seat_seed(int64_t game_seed, int seat)
{
	uint64_t x = (uint64_t)game_seed * 0x9E3779B97F4A7C15ULL +
	             (uint64_t)seat * 0xBF58476D1CE4E5B9ULL;
	return x ^ (x >> 29);
}

static void play_cell(const struct options *o, const struct config *cfg, struct cell *c, long *done,
                      long total)
{
	bool oracle = strcmp(c->strategy, "oracle") == 0;
	enum strategy_kind kind = STRATEGY_SEARCH;
	if (!oracle && !strategy_kind_parse(c->strategy, &kind))
		die("--strategies: %s is no strategy", c->strategy);
	for (int i = 0; i < o->games; i++) {
		int64_t seed = o->seed + i;
		struct table_seat seats[MAX_LIST];
		for (int k = 0; k < c->players; k++)
			seats[k] = (struct table_seat){
			        .strategy = {.kind = kind,
			                     .seed = seat_seed(seed, k),
			                     .think_ms = o->think_ms,
			                     .iterations = o->iterations},
			        .oracle = oracle,
			};
		struct table_result r;
		char err[700];
		if (table_play(cfg, c->rules, seed, c->players, seats, NULL, &r, err, sizeof err) !=
		    0) {
			fprintf(stderr, "sopra-winrate: %s, %d players, %s, %s, seed %lld: %s\n",
			        c->config, c->players, game_rules_name(c->rules), c->strategy,
			        (long long)seed, err);
			exit(2);
		}
		c->games++;
		c->won += r.won;
		c->rounds_survived += r.won ? r.rounds : r.rounds - 1;
		c->failed += r.failed;
		c->stats.decisions += r.stats.decisions;
		c->stats.deliberate += r.stats.deliberate;
		c->stats.seconds += r.stats.seconds;
		c->stats.iterations += r.stats.iterations;
		if (r.stats.max_seconds > c->stats.max_seconds)
			c->stats.max_seconds = r.stats.max_seconds;
		c->stats.cpu_seconds += r.stats.cpu_seconds;
		if (r.stats.max_cpu_seconds > c->stats.max_cpu_seconds)
			c->stats.max_cpu_seconds = r.stats.max_cpu_seconds;
		++*done;
		if (o->each)
			printf("game %s %dp %s %s seed %lld: %s in round %d\n", c->config,
			       c->players, game_rules_name(c->rules), c->strategy, (long long)seed,
			       r.won ? "won" : "lost", r.rounds);
		if (!o->quiet)
			fprintf(stderr, "\r%ld / %ld games (%s, %dp, %s, %s: %d of %d won)   ",
			        *done, total, c->config, c->players, game_rules_name(c->rules),
			        c->strategy, c->won, c->games);
	}
}

static void print_header(void)
{
	printf("| configuration | players | rules | strategy | won | 95%% interval | rounds "
	       "survived | ms per decision (mean / max) | CPU ms per decision (mean / max) | "
	       "iterations per decision |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
}

static void print_cell(const struct cell *c)
{
	double lo, hi;
	wilson(c->won, c->games, &lo, &hi);
	double ms = c->stats.deliberate ? 1000.0 * c->stats.seconds / c->stats.deliberate : 0;
	double cpu_ms =
	        c->stats.deliberate ? 1000.0 * c->stats.cpu_seconds / c->stats.deliberate : 0;
	double its = c->stats.deliberate ? (double)c->stats.iterations / c->stats.deliberate : 0;
	printf("| %s | %d | %s | %s | %d / %d (%.0f%%) | %.0f%% - %.0f%% | %.2f | %.1f / %.0f | "
	       "%.1f / %.0f | %.0f |\n",
	       c->config, c->players, game_rules_name(c->rules), c->strategy, c->won, c->games,
	       100.0 * c->won / (c->games ? c->games : 1), 100 * lo, 100 * hi,
	       (double)c->rounds_survived / (c->games ? c->games : 1), ms,
	       1000.0 * c->stats.max_seconds, cpu_ms, 1000.0 * c->stats.max_cpu_seconds, its);
	fflush(stdout);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int main(int argc, char **argv)
{
	struct options o = {.games = 20, .seed = 1001};
	parse(argc, argv, &o);
	if (o.nconfigs == 0 && !o.generated)
		o.configs[o.nconfigs++] = "resources/example.json";
	if (o.nplayers == 0)
		o.players[o.nplayers++] = 3;
	if (o.nrules == 0) {
		o.rules[0] = RULES_BASE;
		o.rules[1] = RULES_REVISED;
		o.nrules = 2;
	}
	if (o.nstrategies == 0)
		o.nstrategies = split("random,greedy,search,oracle", o.strategies, MAX_LIST);

	struct config *cfgs[MAX_LIST + 1];
	const char *names[MAX_LIST + 1];
	int ncfg = 0;
	for (int i = 0; i < o.nconfigs; i++) {
		struct config_errors e = {0};
		cfgs[ncfg] = config_load(o.configs[i], &e);
		if (!cfgs[ncfg]) {
			fprintf(stderr, "sopra-winrate: %s: %s\n", o.configs[i],
			        e.n ? e.msgs[0] : "?");
			return 1;
		}
		config_errors_free(&e);
		names[ncfg++] = base_name(o.configs[i]);
	}
	if (o.generated) {
		struct cfg_params p = {
		        .players = 4, .locations = 3, .cards_per_deck = 20, .rounds = 8};
		char *text = cfg_generate(&p);
		struct config_errors e = {0};
		cfgs[ncfg] = config_parse(text, strlen(text), &e);
		free(text);
		if (!cfgs[ncfg])
			die("the generated configuration: %s", e.n ? e.msgs[0] : "?");
		names[ncfg++] = "generated";
	}

	long total = 0;
	for (int i = 0; i < ncfg; i++)
		for (int p = 0; p < o.nplayers; p++)
			if (o.players[p] >= 1 && o.players[p] <= cfgs[i]->max_players)
				total += (long)o.nrules * o.nstrategies * o.games;
	long done = 0, failed = 0;
	print_header();
	for (int i = 0; i < ncfg; i++)
		for (int p = 0; p < o.nplayers; p++) {
			if (o.players[p] < 1 || o.players[p] > cfgs[i]->max_players)
				continue;
			for (int r = 0; r < o.nrules; r++)
				for (int s = 0; s < o.nstrategies; s++) {
					struct cell c = {.players = o.players[p],
					                 .rules = o.rules[r],
					                 .strategy = o.strategies[s]};
					snprintf(c.config, sizeof c.config, "%s", names[i]);
					play_cell(&o, cfgs[i], &c, &done, total);
					if (!o.quiet)
						fprintf(stderr, "\n");
					print_cell(&c);
					failed += c.failed;
				}
		}
	for (int i = 0; i < ncfg; i++)
		config_free(cfgs[i]);
	if (failed) {
		fprintf(stderr, "sopra-winrate: the server refused %ld of the bots' commands\n",
		        failed);
		return 2;
	}
	return 0;
}
