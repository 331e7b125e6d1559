/*
 * strategy: how a bot chooses the command its player sends, from what the
 * player has been told (sopra/game_view.h) and nothing else.
 *
 * Three levels:
 *   random  a legal command drawn uniformly (never leaving the game);
 *   greedy  the legal command the rule-of-thumb policy (bot_policy.h)
 *           rates best now -- what the colony needs this round, less what
 *           the command risks and spends -- with no look-ahead; ending
 *           the turn when nothing is worth its cost;
 *   search  information-set Monte Carlo tree search (bot_search.h): every
 *           iteration samples a full game agreeing with the view
 *           (game_from_view), plays the player's own commands down a tree
 *           shared by all samples and the rest of the round with the
 *           rule-of-thumb policy (bot_policy.h) to the end of the round's
 *           colony phase, and scores where it ends (bot_eval.h).
 *
 * Decisions are reproducible: each draws from a generator seeded by the
 * strategy's seed and a hash of the view, so the same seed and the same
 * view give the same command -- with the search, when its budget is a
 * number of iterations (options.iterations) rather than time.
 *
 * The engine is the forward model: the game module's pure functions
 * (game_from_view, game_clone, game_legal_commands, game_apply); a
 * strategy keeps no other picture of the rules.
 */
#ifndef SOPRA_BOTS_STRATEGY_H
#define SOPRA_BOTS_STRATEGY_H

#include <stdbool.h>
#include <stdint.h>

#include "sopra/config.h"
#include "sopra/game.h"
#include "sopra/game_view.h"

enum strategy_kind {
	STRATEGY_RANDOM,
	STRATEGY_GREEDY,
	STRATEGY_SEARCH,
};

/* "random" / "greedy" / "search"; false for anything else. */
bool strategy_kind_parse(const char *s, enum strategy_kind *out);
const char *strategy_kind_name(enum strategy_kind k);

/* The search's time per decision when none is given: short enough that a
 * person playing with search bots is not kept waiting. */
#define STRATEGY_DEFAULT_THINK_MS 300

struct strategy_options {
	enum strategy_kind kind;
	uint64_t seed;
	int think_ms;    /* search: time per decision; <= 0: the default */
	long iterations; /* search: > 0: exactly this many iterations per decision
	                    and no clock (reproducible); else think_ms decides */
};

struct strategy_stats {
	long decisions;     /* commands chosen */
	long deliberate;    /* of them, with more than one to choose from */
	double seconds;     /* on the clock, all decisions together */
	double max_seconds; /* the longest decision */
	/* the same in this thread's CPU time: what a decision costs on one core
	 * of its own, whatever else the machine runs meanwhile */
	double cpu_seconds, max_cpu_seconds;
	long iterations; /* search iterations, all decisions together */
};

struct strategy;

/* A strategy for games of cfg (borrowed: it must outlive the strategy).
 * Never NULL (out of memory aborts). */
struct strategy *strategy_new(const struct config *cfg, const struct strategy_options *o);
void strategy_free(struct strategy *s);

/*
 * The command player v->me sends now, into *out: one that
 * game_legal_commands lists for it in any game built from v. Only the
 * character selection and the turns are a strategy's (registering and
 * starting are the client's). False when there is nothing to send (not
 * its turn, the game is over, a view no game has). v must be sized for
 * the strategy's configuration.
 */
bool strategy_choose(struct strategy *s, const struct game_view *v, struct cmd *out);

/*
 * The oracle: the same choice made with the real game g as the only future
 * the search considers (it knows the piles and every roll to come). Not
 * for play: the benchmark's ceiling of what any bot could reach on a deal.
 */
bool strategy_choose_oracle(struct strategy *s, const struct game *g, int player, struct cmd *out);

const struct strategy_stats *strategy_stats(const struct strategy *s);

#endif
