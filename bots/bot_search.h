/*
 * bot_search: information-set Monte Carlo tree search over one player's
 * commands, with the game engine as the forward model.
 *
 * The root's candidates are the policy's best few commands (ROOT_WIDTH).
 * Each sample -- for a bot, a game built from its view with the hidden
 * parts drawn at random (game_from_view); for the benchmark's oracle, a
 * copy of the real game -- is played once from every candidate still in
 * the running, each on its own copy: the candidates meet the same piles,
 * crises and rolls (common random numbers), so the difference of their
 * scores on one sample measures the commands, not the luck. The budget is
 * spent in equal parts; after each part the worse half of the candidates
 * by their mean difference to the policy's first choice drops out
 * (sequential halving), so the last parts go to the policy's choice and
 * its strongest rival.
 *
 * Below a candidate, one tree per candidate shared by every sample holds
 * the player's further commands this turn: a command that is legal in
 * only some samples (after a search drew other cards, say) competes only
 * in those (availability counts, Cowling, Powley & Whitehouse's
 * SO-ISMCTS), commands are tried in the order the policy rates them, a
 * few at first and more as a node is visited (progressive widening). Below
 * the tree the iteration plays on with the rule-of-thumb policy
 * (bot_policy.h) for every player until the horizon -- the end of the
 * round's colony phase -- and scores the state it reaches (bot_eval.h), a
 * chance of winning. The command sent is the policy's own first choice
 * unless its rival is clearly better (bot_search_run).
 */
#ifndef SOPRA_BOTS_SEARCH_H
#define SOPRA_BOTS_SEARCH_H

#include <stdint.h>

#include "bot_board.h"
#include "sopra/config.h"
#include "sopra/game.h"

/* Where the iterations' games come from: sample(ctx, seed) returns a new
 * game (the search frees it) in which the searching player must act now;
 * different seeds should give different hidden parts. */
struct bot_sampler {
	struct game *(*sample)(void *ctx, uint64_t seed);
	void *ctx;
};

struct bot_search_budget {
	long iterations; /* > 0: exactly this many, and no clock */
	double seconds;  /* else: until this much time has passed (at least one) */
};

struct bot_search;

struct bot_search *bot_search_new(const struct config *cfg, const struct bot_ids *ids);
void bot_search_free(struct bot_search *s);

/*
 * Choose player me's command in the games smp gives (me must be the one
 * they wait for), within budget, drawing from a generator seeded with
 * seed; the choice into *out. Returns the iterations run (a candidate
 * played on a sample is one): 0 when there was one command to choose (it
 * is chosen without a search), -1 when there is none (the sample is not
 * waiting for me; *out is untouched). The choice is the policy's first,
 * unless the candidate left beside it at the end has a mean score better
 * on the same samples by more than two standard errors of that mean
 * difference. With a budget in seconds every part of it ends on the
 * clock; with one in iterations each part plays whole samples until the
 * next would pass its share (at least one sample). Commands a bot never
 * sends (bot_never_sends) are not tried, and of a choice of two characters'
 * two orders only one is (bot_other_order).
 */
long bot_search_run(struct bot_search *s, const struct bot_sampler *smp, int me,
                    const struct bot_search_budget *budget, uint64_t seed, struct cmd *out);

#endif
