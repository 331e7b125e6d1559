/*
 * bot_eval: how good a state of the game is for the team, from public facts.
 *
 * The search (bot_search.h) plays each future it tries up to a horizon and
 * scores the state it reaches here; the greedy strategy scores the state
 * after each command it could send. The score is in morale points: the
 * morale now, less what the coming colony phase will cost as the board
 * stands (a food shortfall, a crisis the hands cannot answer, waste,
 * zombies that overrun an entrance) -- counting the hands, abilities and
 * turns of the players who still act before it -- and less the losses
 * already certain (starvation tokens for every colony phase left); plus
 * what the team holds for the rounds after it (characters, cards of the
 * kinds the crises still to come take, food). A game won scores
 * BOT_EVAL_WON, one lost BOT_EVAL_LOST plus the rounds it lasted, so a
 * later defeat is still better than an earlier one.
 */
#ifndef SOPRA_BOTS_EVAL_H
#define SOPRA_BOTS_EVAL_H

#include "sopra/game_view.h"

#define BOT_EVAL_WON  100.0
#define BOT_EVAL_LOST (-100.0)

/*
 * The score of the state v shows, when the players in the game with ids
 * from first_to_act up still have their turn before this round's colony
 * phase (first_to_act: the player whose turn runs, or the next to come;
 * beyond the last id when the colony phase comes next). Reads only what
 * every player is told, so any player's view of one state scores the same.
 */
double bot_evaluate(const struct game_view *v, int first_to_act);

#endif
