/*
 * bot_policy: a fast rule of thumb for which command to send, without looking
 * ahead.
 *
 * Each legal command gets a score from the acting player's view: what it
 * does for the colony's needs (food for the colony phase, cards for the
 * crisis, zombies at a crowded entrance, waste near ten, wounds to heal)
 * less what it risks (an infection roll) and spends (a die, a card).
 * Ending the turn scores 0: a command worth less is not sent. The search plays
 * every player's rest of the round with this policy (its rollouts) and
 * tries the commands it rates best first; it never peeks at the future, so
 * it plays alike in a sampled and in the real game.
 */
#ifndef SOPRA_BOTS_POLICY_H
#define SOPRA_BOTS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bot_board.h"
#include "sopra/game.h"
#include "sopra/game_view.h"

/* The scores of sending legal[0..n) now for player v->me (v: its view,
 * turn_known in its turn) into score[0..n). Leaving scores far below
 * everything. */
void bot_policy_scores(const struct bot_ids *ids, const struct game_view *v,
                       const struct cmd *legal, size_t n, double *score);

/* The index in legal[0..n) of the best command by bot_policy_scores (n > 0).
 * With noise > 0 each score gets a uniform random bonus in [0, noise) from
 * *rng first, so that rollouts vary; with 0 the first best wins. */
size_t bot_policy_pick(const struct bot_ids *ids, const struct game_view *v,
                       const struct cmd *legal, size_t n, double noise, uint64_t *rng);

/* Whether a bot never sends c: a command whose row in the client's words
 * (client/command_words.h) has no score -- leaving the game (a bot stays to
 * the end) -- and a command without a row (a test build's example command,
 * which a client's model need not follow). */
bool bot_never_sends(const struct cmd *c);

/* Whether c ends the player's turn and nothing else (its row's roles in
 * the client's words: CLIENT_ENDS_TURN without CLIENT_LEAVES). */
bool bot_ends_turn(const struct cmd *c);

/* Whether c is a choice of two characters (CLIENT_UNORDERED) given in the
 * order a search does not try: the higher id first. */
bool bot_other_order(const struct cmd *c);

/* A splitmix64 step: the bots' own generator (never the game's). */
uint64_t bot_rand(uint64_t *state);

/* A uniform double in [0, 1) from bot_rand. */
double bot_rand_unit(uint64_t *state);

#endif
