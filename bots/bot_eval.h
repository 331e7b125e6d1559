/*
 * bot_eval: how likely the team is to win from a state, from public facts.
 *
 * The search (bot_search.h) plays each future it tries up to a horizon and
 * scores the state it reaches here. The score is the chance of a win if
 * every player goes on with the rule of thumb (bot_policy.h): a logistic
 * regression on a few facts of the board -- the morale; what the coming
 * colony phase will cost as the board stands (a food shortfall, a crisis
 * the hands cannot answer, waste, zombies that overrun an entrance),
 * counting the hands, abilities and turns of the players who still act
 * before it; the losses already certain (starvation tokens for every colony
 * phase left); and what the team holds for the rounds after it
 * (characters, cards of the kinds the crises still to come take, food).
 * Its weights (bot_eval_weights.h) are fitted to games of the rule of
 * thumb by sopra-evalfit (bench/evalfit.c). A game won scores BOT_EVAL_WON,
 * one lost BOT_EVAL_LOST.
 */
#ifndef SOPRA_BOTS_EVAL_H
#define SOPRA_BOTS_EVAL_H

#include "sopra/game_view.h"

#define BOT_EVAL_WON  1.0
#define BOT_EVAL_LOST 0.0

/* The facts the score weighs (bot_eval_features). */
enum bot_eval_feature {
	BOT_F_BIAS,          /* 1 */
	BOT_F_MORALE,        /* the morale */
	BOT_F_STARVATION,    /* starvation tokens x colony phases ahead */
	BOT_F_SHORT_NOW,     /* the coming colony phase short of food x phases ahead */
	BOT_F_SHORT_LATER,   /* the food the later colony phases lack */
	BOT_F_WASTE_TENS,    /* the waste pile / 10 (rounded down) */
	BOT_F_WASTE,         /* the waste pile */
	BOT_F_DEATHS_NEXT,   /* deaths the next colony phase's zombies bring */
	BOT_F_DEATHS_AFTER,  /* and the one after it */
	BOT_F_CRISIS,        /* the crisis's outlook in morale (-change .. +1) */
	BOT_F_FUTURE_CRISES, /* morale at stake in crises to come that the hands cover */
	BOT_F_ALIVE,         /* characters alive */
	BOT_F_ALIVE_PHASES,  /* x colony phases ahead */
	BOT_F_DOOMED,        /* characters their injuries will likely kill */
	BOT_F_CARDS,         /* cards in hand */
	BOT_F_PHASES,        /* colony phases ahead */
	BOT_EVAL_FEATURES
};

/* A feature's name ("morale"), for the fit's output. */
const char *bot_eval_feature_name(int feature);

/* The features of the state v shows (first_to_act as bot_evaluate's)
 * into f[BOT_EVAL_FEATURES]: for the evaluation and for fitting it. */
void bot_eval_features(const struct game_view *v, int first_to_act, double *f);

/*
 * The score of the state v shows -- an estimate of the chance the team
 * wins, 0 .. 1 -- when the players in the game with ids
 * from first_to_act up still have their turn before this round's colony
 * phase (first_to_act: the player whose turn runs, or the next to come;
 * beyond the last id when the colony phase comes next). Reads only what
 * every player is told, so any player's view of one state scores the same.
 */
double bot_evaluate(const struct game_view *v, int first_to_act);

#endif
