/*
 * bot_search: information-set Monte Carlo tree search over one player's
 * commands, with the game engine as the forward model.
 *
 * Each iteration takes a fresh full game from a sampler -- for a bot, a
 * game built from its view with the hidden parts drawn at random
 * (game_from_view); for the benchmark's oracle, a copy of the real game --
 * and walks down one tree shared by every sample: a node is a sequence of
 * the player's own commands this turn, its children the commands tried
 * after it. A command that is legal in only some samples (after a search
 * drew other cards, say) competes only in those (availability counts,
 * Cowling, Powley & Whitehouse's SO-ISMCTS). Below the tree the iteration
 * plays on with the rule-of-thumb policy (bot_policy.h) for every player until
 * the horizon -- the end of the round's colony phase -- and scores the
 * state it reaches (bot_eval.h), a chance of winning. Commands are tried in
 * the order the policy rates them, a few at first and more as a node is
 * visited (progressive widening). The command sent is the policy's own
 * first choice unless another is clearly better (bot_search_run).
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
 * seed; the choice into *out. Returns the iterations run: 0 when there
 * was one command to choose (it is chosen without a search), -1 when there
 * is none (the sample is not waiting for me; *out is untouched). The
 * choice is the policy's first, unless another root command, visited at
 * least a third as often as the most visited, has a mean score better by
 * more than two standard errors of the difference. Commands a bot never
 * sends (bot_never_sends) are not tried, and of SelectCharacters' two
 * orders only one is.
 */
long bot_search_run(struct bot_search *s, const struct bot_sampler *smp, int me,
                    const struct bot_search_budget *budget, uint64_t seed, struct cmd *out);

#endif
