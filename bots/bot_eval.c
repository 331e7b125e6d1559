/*
 * bot_eval: the chance to win from a state (bot_eval.h): the features of
 * the board, weighed by bot_eval_weights.h.
 */
#include "bot_eval.h"

#include <math.h>

#include "bot_board.h"

/* What the terms need to know about the moment. */
struct outlook {
	const struct game_view *v;
	int first;       /* first_to_act */
	bool round_open; /* this round's colony phase is still ahead */
	int phases;      /* colony phases ahead, this round's included */
};

static bool acts(const struct outlook *o, int p)
{
	return o->round_open && p >= o->first && p < o->v->nplayers && o->v->players[p].in_game;
}

/* Food player p can still add this round: its FOOD cards, and its FEED
 * abilities not used yet. */
static int food_to_come(const struct outlook *o, int p)
{
	const struct game_view *v = o->v;
	int food = bot_hand_food(v, p);
	for (int c = 0; c < v->cfg->ncharacters; c++) {
		const struct game_view_character *ch = &v->characters[c];
		const struct config_ability *ab = &v->cfg->characters[c].ability;
		if (ch->life == VIEW_ALIVE && ch->owner == p && ab->type == ABILITY_FEED &&
		    ch->uses == 0)
			food += ab->num_food;
	}
	return food;
}

/* Food: whether the coming colony phase is short of food (a starvation
 * token, which costs a point of morale in that phase and every later
 * one), and the food the rounds after it still lack. */
static void food_features(const struct outlook *o, double *short_now, double *short_later)
{
	const struct game_view *v = o->v;
	int need = bot_food_need(v);
	int later = o->round_open ? o->phases - 1 : o->phases;
	int left = v->food; /* after this round's colony phase */
	*short_now = 0;
	if (o->round_open) {
		int supply = v->food;
		for (int p = 0; p < v->nplayers; p++)
			if (acts(o, p))
				supply += food_to_come(o, p);
		if (supply < need)
			*short_now = 1;
		left = supply >= need ? supply - need : supply;
	}
	for (int p = 0; p < v->nplayers; p++)
		if (!acts(o, p))
			left += bot_hand_food(v, p);
	int long_need = need * later;
	*short_later = left < long_need ? long_need - left : 0;
}

/* Zombies: the deaths the next colony phase brings at every location as
 * the board stands, and the further deaths of the one after it. */
static void zombie_features(const struct outlook *o, double *next, double *after)
{
	const struct game_view *v = o->v;
	*next = *after = 0;
	for (int l = 0; l < v->cfg->nlocations; l++) {
		int arrivals = bot_zombie_arrivals(v, l);
		if (arrivals == 0)
			continue;
		int one = bot_zombie_deaths(v, l, arrivals);
		int two = bot_zombie_deaths(v, l, 2 * arrivals);
		*next += one;
		*after += two - one;
	}
}

/* The crisis of this round, while its colony phase is ahead. Cards
 * contributed count fully, cards that fit it in the hands of the players
 * still to act three quarters (they may be needed elsewhere). */
static double crisis_term(const struct outlook *o)
{
	const struct game_view *v = o->v;
	if (!o->round_open || v->crisis < 0)
		return 0;
	const struct config_crisis *cr = &v->cfg->crises[v->crisis];
	int req = cr->required_cards, bonus = req + 2;
	int fitting = 0;
	for (int k = 0; k < v->cfg->ncards; k++)
		fitting += v->cards[k].place == VIEW_HAND && acts(o, v->cards[k].holder) &&
		           bot_card_fits_crisis(v, k);
	int room = bonus - v->contributed;
	double eff = v->contributed + 0.75 * (fitting < room ? fitting : room);
	if (eff >= bonus)
		return 1.0;
	if (eff >= req)
		return 0.5 * (eff - req);
	return -(double)cr->moral_change * (req - eff) / req;
}

/* The crises still to come: each crisis not drawn yet comes with the same
 * chance. The cards in hand of each kind they take are worth the morale
 * at stake in proportion to how much of the expected demand they cover. */
static double future_crises_term(const struct game_view *v)
{
	const struct config *cfg = v->cfg;
	int rem = bot_rounds_after(v);
	int undrawn = cfg->ncrises - v->round;
	if (rem <= 0 || undrawn <= 0)
		return 0;
	enum { KINDS = 4 };
	double demand[KINDS] = {0}, stake[KINDS] = {0};
	int held[KINDS] = {0};
	double p = (double)rem / undrawn;
	for (int i = 0; i < cfg->ncrises; i++) {
		bool drawn = false;
		for (int r = 0; r < v->round && !drawn; r++)
			drawn = v->crises[r] == i;
		if (drawn)
			continue;
		demand[cfg->crises[i].type] += p * cfg->crises[i].required_cards;
		stake[cfg->crises[i].type] += p * (cfg->crises[i].moral_change + 0.5);
	}
	for (int k = 0; k < cfg->ncards; k++)
		if (v->cards[k].place == VIEW_HAND)
			held[bot_card_crisis_kind(cfg->cards[k].type)]++;
	double s = 0;
	for (int t = 0; t < KINDS; t++)
		if (demand[t] > 0)
			s += stake[t] * (held[t] < demand[t] ? held[t] / demand[t] : 1.0);
	return s;
}

/* The characters alive, and how many of them their injuries will likely
 * kill before long (one more injury kills at two; every frostbite brings
 * a wound each round). */
static void character_features(const struct outlook *o, double *alive, double *doomed)
{
	const struct game_view *v = o->v;
	*alive = *doomed = 0;
	for (int c = 0; c < v->cfg->ncharacters; c++) {
		const struct game_view_character *ch = &v->characters[c];
		if (ch->life != VIEW_ALIVE)
			continue;
		int hurt = ch->wounds + ch->frostbites;
		double doom = hurt >= 2 ? 0.35 : 0.1 * hurt;
		if (ch->frostbites > 0)
			doom += hurt >= 2 ? 0.45 : 0.15;
		*alive += 1;
		*doomed += doom;
	}
}

static int cards_held(const struct game_view *v)
{
	int n = 0;
	for (int k = 0; k < v->cfg->ncards; k++)
		n += v->cards[k].place == VIEW_HAND;
	return n;
}

const char *bot_eval_feature_name(int feature)
{
	static const char *const names[BOT_EVAL_FEATURES] = {
	        [BOT_F_BIAS] = "bias",
	        [BOT_F_MORALE] = "morale",
	        [BOT_F_STARVATION] = "starvation tokens x phases",
	        [BOT_F_SHORT_NOW] = "short of food now x phases",
	        [BOT_F_SHORT_LATER] = "food lacking later",
	        [BOT_F_WASTE_TENS] = "waste / 10",
	        [BOT_F_WASTE] = "waste",
	        [BOT_F_DEATHS_NEXT] = "deaths next colony phase",
	        [BOT_F_DEATHS_AFTER] = "deaths the one after",
	        [BOT_F_CRISIS] = "crisis outlook",
	        [BOT_F_FUTURE_CRISES] = "crises to come covered",
	        [BOT_F_ALIVE] = "characters alive",
	        [BOT_F_ALIVE_PHASES] = "characters alive x phases",
	        [BOT_F_DOOMED] = "characters doomed",
	        [BOT_F_CARDS] = "cards held",
	        [BOT_F_PHASES] = "colony phases ahead",
	};
	return feature >= 0 && feature < BOT_EVAL_FEATURES ? names[feature] : "?";
}

void bot_eval_features(const struct game_view *v, int first_to_act, double *f)
{
	struct outlook o = {
	        .v = v,
	        .first = first_to_act,
	        .round_open = v->phase == VIEW_TURNS,
	        .phases = bot_rounds_after(v) + (v->phase == VIEW_TURNS ? 1 : 0),
	};
	double short_now, short_later, next, after, alive, doomed;
	food_features(&o, &short_now, &short_later);
	zombie_features(&o, &next, &after);
	character_features(&o, &alive, &doomed);
	f[BOT_F_BIAS] = 1;
	f[BOT_F_MORALE] = v->moral;
	f[BOT_F_STARVATION] = (double)v->starvation * o.phases;
	f[BOT_F_SHORT_NOW] = short_now * o.phases;
	f[BOT_F_SHORT_LATER] = short_later;
	f[BOT_F_WASTE_TENS] = v->nwaste / 10;
	f[BOT_F_WASTE] = v->nwaste;
	f[BOT_F_DEATHS_NEXT] = next;
	f[BOT_F_DEATHS_AFTER] = after;
	f[BOT_F_CRISIS] = crisis_term(&o);
	f[BOT_F_FUTURE_CRISES] = future_crises_term(v);
	f[BOT_F_ALIVE] = alive;
	f[BOT_F_ALIVE_PHASES] = alive * o.phases;
	f[BOT_F_DOOMED] = doomed;
	f[BOT_F_CARDS] = cards_held(v);
	f[BOT_F_PHASES] = o.phases;
}

/* Fitted by sopra-evalfit (bench/evalfit.c): the log-odds of a win as the
 * rule-of-thumb policy plays on, one weight per feature. */
static const double weights[BOT_EVAL_FEATURES] = {
#include "bot_eval_weights.h"
};

double bot_evaluate(const struct game_view *v, int first_to_act)
{
	if (v->result == VIEW_WON)
		return BOT_EVAL_WON;
	if (v->result != VIEW_RUNNING)
		return BOT_EVAL_LOST;
	double f[BOT_EVAL_FEATURES];
	bot_eval_features(v, first_to_act, f);
	double z = 0;
	for (int i = 0; i < BOT_EVAL_FEATURES; i++)
		z += weights[i] * f[i];
	return 1.0 / (1.0 + exp(-z));
}
