/*
 * bot_search: information-set MCTS over one player's commands (bot_search.h).
 */
#include "bot_search.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot_eval.h"
#include "bot_policy.h"
#include "sopra/game_view.h"
#include "sopra/xalloc.h"

#define UCB_C         0.1 /* exploration, in the evaluation's units (chances to win) */
#define MAX_DEPTH     14  /* own commands in the tree; below it the policy plays */
#define ROLLOUT_NOISE 0.0 /* random bonus on the policy's scores in rollouts */
#define MAX_TURN_CMDS 40  /* a rollout ends a turn after this many commands */
#define SURE_BY       2.0 /* standard errors a command must beat the rule of thumb's by */
#define ROOT_WIDTH    8   /* the root considers the policy's best this many */
#define WIDEN_FIRST   3   /* commands a node considers from its first visit */
#define WIDEN_RATE    1.0 /* and more with the square root of its visits */

struct node {
	struct cmd cmd; /* the command that leads here (the root: none) */
	int child;      /* first child, -1 */
	int sibling;    /* next sibling, -1 */
	int visits;
	int avail; /* iterations in which its command was legal here */
	double total;
	/* a root child: its score less the rule of thumb's choice's on the same
	 * samples (common random numbers), summed, squared and counted */
	double edge, edge_squares;
	int pairs;
};

struct bot_search {
	const struct config *cfg;
	const struct bot_ids *ids;
	struct node *nodes;
	int policy_child;             /* the root's child for the rule of thumb's first choice */
	int arms[ROOT_WIDTH];         /* the root children still in the running, policy's first */
	double arm_score[ROOT_WIDTH]; /* their scores on the sample being played */
	int narms;
	int nnodes, cap;
	struct game_cmd_list legal;
	struct game_event_list ev;
	struct game_view *view;
	double *scores;
	size_t nscores;
	size_t *order; /* s->legal's indices, best first by the policy */
	size_t norder;
	int *path;
	int npath, path_cap;
	uint64_t rng;
};

struct bot_search *bot_search_new(const struct config *cfg, const struct bot_ids *ids)
{
	struct bot_search *s = xcalloc(1, sizeof *s);
	s->cfg = cfg;
	s->ids = ids;
	game_cmd_list_init(&s->legal);
	game_event_list_init(&s->ev);
	s->view = game_view_new(cfg);
	return s;
}

void bot_search_free(struct bot_search *s)
{
	if (!s)
		return;
	free(s->nodes);
	game_cmd_list_free(&s->legal);
	game_event_list_free(&s->ev);
	game_view_free(s->view);
	free(s->scores);
	free(s->order);
	free(s->path);
	free(s);
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool same_cmd(const struct cmd *a, const struct cmd *b)
{
	return a->type == b->type && a->character == b->character &&
	       a->character2 == b->character2 && a->location == b->location &&
	       a->entrance == b->entrance && a->card == b->card && a->target == b->target &&
	       a->has_target == b->has_target && a->fuel == b->fuel;
}

/* Commands a bot never sends, or tries in one form only. */
static bool skipped(const struct cmd *c)
{
	return bot_never_sends(c) || bot_other_order(c);
}

/* The legal commands of player p in g, less the skipped ones. */
static size_t legal_of(struct bot_search *s, const struct game *g, int p)
{
	game_legal_commands(g, p, &s->legal);
	size_t n = 0;
	for (size_t i = 0; i < s->legal.n; i++)
		if (!skipped(&s->legal.v[i]))
			s->legal.v[n++] = s->legal.v[i];
	s->legal.n = n;
	return n;
}

static int new_node(struct bot_search *s, const struct cmd *c)
{
	if (s->nnodes == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4096;
		s->nodes = xreallocarray(s->nodes, (size_t)s->cap, sizeof *s->nodes);
	}
	struct node *n = &s->nodes[s->nnodes];
	memset(n, 0, sizeof *n);
	if (c)
		n->cmd = *c;
	n->child = n->sibling = -1;
	return s->nnodes++;
}

static int find_child(const struct bot_search *s, int parent, const struct cmd *c)
{
	for (int k = s->nodes[parent].child; k >= 0; k = s->nodes[k].sibling)
		if (same_cmd(&s->nodes[k].cmd, c))
			return k;
	return -1;
}

static void apply(struct bot_search *s, struct game *g, int p, const struct cmd *c)
{
	game_event_list_clear(&s->ev);
	game_apply(g, p, c, &s->ev);
}

/* The policy's scores of s->legal for player p in g, into s->scores. */
static void score_legal(struct bot_search *s, const struct game *g, int p)
{
	if (s->nscores < s->legal.n) {
		s->nscores = s->legal.n;
		s->scores = xreallocarray(s->scores, s->nscores, sizeof *s->scores);
	}
	game_view_of(g, p, s->view);
	bot_policy_scores(s->ids, s->view, s->legal.v, s->legal.n, s->scores);
}

/* The order of s->legal by the policy's scores, best first, into s->order. */
static void rank_legal(struct bot_search *s, const struct game *g, int p)
{
	score_legal(s, g, p);
	size_t n = s->legal.n;
	if (s->norder < n) {
		s->norder = n;
		s->order = xreallocarray(s->order, n, sizeof *s->order);
	}
	for (size_t i = 0; i < n; i++) {
		size_t j = i;
		for (; j > 0 && s->scores[s->order[j - 1]] < s->scores[i]; j--)
			s->order[j] = s->order[j - 1];
		s->order[j] = i;
	}
}

/* How many of a node's best commands (by the policy) it considers after
 * `visits` visits: a few at first, more as it is visited more
 * (progressive widening), so that the iterations go to plausible
 * commands. */
static size_t widening(int visits)
{
	return WIDEN_FIRST + (size_t)(WIDEN_RATE * sqrt((double)visits));
}

/* One step down from node `at` in g (legal commands in s->legal): of the
 * commands the widening lets in, the best untried one by the policy gets
 * a new child; when all have been tried, the legal child with the best
 * upper confidence bound is taken. Returns the child. */
static int select_child(struct bot_search *s, int at, const struct game *g, int me)
{
	rank_legal(s, g, me);
	size_t allowed = widening(s->nodes[at].visits);
	int best = -1;
	double best_ucb = -INFINITY;
	for (size_t r = 0; r < s->legal.n && r < allowed; r++) {
		const struct cmd *c = &s->legal.v[s->order[r]];
		int k = find_child(s, at, c);
		if (k < 0) {
			k = new_node(s, c);
			s->nodes[k].sibling = s->nodes[at].child;
			s->nodes[at].child = k;
			s->nodes[k].avail = 1;
			return k;
		}
		struct node *n = &s->nodes[k];
		n->avail++;
		double ucb = n->total / n->visits + UCB_C * sqrt(log((double)n->avail) / n->visits);
		if (ucb > best_ucb) {
			best_ucb = ucb;
			best = k;
		}
	}
	return best;
}

static void push_path(struct bot_search *s, int k)
{
	if (s->npath == s->path_cap) {
		s->path_cap = s->path_cap ? 2 * s->path_cap : 64;
		s->path = xreallocarray(s->path, (size_t)s->path_cap, sizeof *s->path);
	}
	s->path[s->npath++] = k;
}

/* Whether g has reached the horizon: over, or past round `horizon`. */
static bool at_horizon(const struct game *g, int horizon)
{
	return game_is_over(g) || game_round(g) > horizon;
}

/* Every player plays the policy until the horizon. */
static void rollout(struct bot_search *s, struct game *g, int horizon)
{
	int turn_of = -2, turn_cmds = 0;
	while (!at_horizon(g, horizon)) {
		int p = game_waiting_for(g);
		if (p < 0)
			break; /* registration: nothing for a bot to play */
		if (p != turn_of) {
			turn_of = p;
			turn_cmds = 0;
		}
		size_t n = legal_of(s, g, p);
		if (n == 0)
			break;
		size_t pick = 0;
		const struct cmd *end = NULL;
		for (size_t i = 0; i < n && !end; i++)
			if (bot_ends_turn(&s->legal.v[i]))
				end = &s->legal.v[i];
		if (end && ++turn_cmds > MAX_TURN_CMDS) {
			pick = (size_t)(end - s->legal.v);
		} else if (n > 1) {
			game_view_of(g, p, s->view);
			pick = bot_policy_pick(s->ids, s->view, s->legal.v, n, ROLLOUT_NOISE,
			                       &s->rng);
		}
		struct cmd c = s->legal.v[pick];
		apply(s, g, p, &c);
	}
}

static double score(struct bot_search *s, const struct game *g)
{
	game_view_of(g, GAME_NO_PLAYER, s->view);
	int first = game_waiting_for(g);
	return bot_evaluate(s->view, first >= 0 ? first : game_player_count(g));
}

/* One iteration on game g from the root's child `arm` (its command is
 * applied first): down the tree below it, the rollout, and the score back
 * up the path. Returns the score. */
static double iterate(struct bot_search *s, struct game *g, int me, int horizon, int arm)
{
	int at = arm;
	s->npath = 0;
	push_path(s, 0);
	push_path(s, arm);
	struct cmd first = s->nodes[arm].cmd;
	apply(s, g, me, &first);
	for (int depth = 1; depth < MAX_DEPTH && !at_horizon(g, horizon); depth++) {
		if (game_waiting_for(g) != me || legal_of(s, g, me) == 0)
			break;
		at = select_child(s, at, g, me);
		push_path(s, at);
		struct cmd c = s->nodes[at].cmd;
		apply(s, g, me, &c);
	}
	rollout(s, g, horizon);
	double value = score(s, g);
	for (int i = 0; i < s->npath; i++) {
		s->nodes[s->path[i]].visits++;
		s->nodes[s->path[i]].total += value;
	}
	return value;
}

/* A root child's mean edge over the rule of thumb's choice on the samples
 * both played (0 for that choice itself). */
static double edge_of(const struct node *n)
{
	return n->pairs ? n->edge / n->pairs : 0;
}

/* The variance of a root child's mean edge. */
static double edge_spread_of(const struct node *n)
{
	if (n->pairs == 0)
		return INFINITY;
	double m = edge_of(n);
	double var = n->edge_squares / n->pairs - m * m;
	return (var > 0 ? var : 0) / n->pairs;
}

/* The root's children: the best ROOT_WIDTH of the legal commands in
 * s->legal (of the first sample) by the policy, its first choice first. */
static void open_root(struct bot_search *s, const struct game *g, int me)
{
	rank_legal(s, g, me);
	size_t n = s->legal.n < ROOT_WIDTH ? s->legal.n : ROOT_WIDTH;
	int last = -1;
	for (size_t r = 0; r < n; r++) {
		int k = new_node(s, &s->legal.v[s->order[r]]);
		if (last < 0)
			s->nodes[0].child = k;
		else
			s->nodes[last].sibling = k;
		last = k;
		s->arms[r] = k;
	}
	s->narms = (int)n;
	s->policy_child = s->arms[0];
}

/* Whether c is among the commands in s->legal. */
static bool is_legal(const struct bot_search *s, const struct cmd *c)
{
	for (size_t i = 0; i < s->legal.n; i++)
		if (same_cmd(&s->legal.v[i], c))
			return true;
	return false;
}

/* Play one sample g (consumed) from every arm still in the running, each on
 * its own copy, and add each arm's edge over the policy's choice. Returns
 * the iterations played. */
static long play_sample(struct bot_search *s, struct game *g, int me, int horizon)
{
	assert(s->narms >= 1);
	legal_of(s, g, me);
	bool ok[ROOT_WIDTH] = {false};
	int nok = 0;
	for (int a = 0; a < s->narms; a++) {
		ok[a] = is_legal(s, &s->nodes[s->arms[a]].cmd);
		nok += ok[a];
	}
	long played = 0;
	for (int a = 0; a < s->narms; a++) {
		if (!ok[a])
			continue;
		struct game *copy = --nok > 0 ? game_clone(g) : g;
		s->arm_score[a] = iterate(s, copy, me, horizon, s->arms[a]);
		if (copy != g)
			game_free(copy);
		played++;
	}
	if (ok[0])
		for (int a = 1; a < s->narms; a++) {
			if (!ok[a])
				continue;
			struct node *n = &s->nodes[s->arms[a]];
			double d = s->arm_score[a] - s->arm_score[0];
			n->edge += d;
			n->edge_squares += d * d;
			n->pairs++;
		}
	game_free(g);
	return played;
}

/* Keep the better half of the arms by their edge (the policy's choice
 * always stays, first). */
static void halve_arms(struct bot_search *s)
{
	for (int i = 2; i < s->narms; i++) {
		int k = s->arms[i], j = i;
		for (; j > 1 && edge_of(&s->nodes[s->arms[j - 1]]) < edge_of(&s->nodes[k]); j--)
			s->arms[j] = s->arms[j - 1];
		s->arms[j] = k;
	}
	s->narms = (s->narms + 1) / 2;
}

/* The command to send: the rule of thumb's first choice
 * (s->policy_child), unless an arm still in the running has an edge over
 * it by more than SURE_BY standard errors -- the search overrules the rule
 * of thumb only on evidence, not on noise. */
static int best_root_child(const struct bot_search *s)
{
	int best = s->policy_child;
	double best_edge = 0;
	for (int a = 1; a < s->narms; a++) {
		const struct node *n = &s->nodes[s->arms[a]];
		double edge = edge_of(n);
		if (edge > SURE_BY * sqrt(edge_spread_of(n)) && edge > best_edge) {
			best_edge = edge;
			best = s->arms[a];
		}
	}
	return best;
}

/* The number of halvings that leave one arm of n. */
static int halvings(int n)
{
	int r = 0;
	for (; n > 1; n = (n + 1) / 2)
		r++;
	return r;
}

long bot_search_run(struct bot_search *s, const struct bot_sampler *smp, int me,
                    const struct bot_search_budget *budget, uint64_t seed, struct cmd *out)
{
	s->rng = seed;
	struct game *first = smp->sample(smp->ctx, bot_rand(&s->rng));
	if (!first || game_waiting_for(first) != me || legal_of(s, first, me) == 0) {
		game_free(first);
		return -1;
	}
	if (s->legal.n == 1) {
		*out = s->legal.v[0];
		game_free(first);
		return 0;
	}
	/* the horizon: the end of this round's colony phase (of the first
	 * round's, during the selection) */
	int round = game_round(first);
	int horizon = round > 0 ? round : 1;
	s->nnodes = 0;
	new_node(s, NULL);
	open_root(s, first, me);
	/* sequential halving: the budget in equal parts, one per halving (and
	 * one more for the last two arms); in each part every arm in the
	 * running plays the same samples */
	int parts = halvings(s->narms) + 1;
	double started = now_seconds();
	long done = 0;
	struct game *g = first;
	for (int part = 0; part < parts; part++) {
		bool last = part == parts - 1;
		long until = budget->iterations > 0 ? budget->iterations * (part + 1) / parts : 0;
		double deadline = started + budget->seconds * (part + 1) / parts;
		do {
			if (!g)
				g = smp->sample(smp->ctx, bot_rand(&s->rng));
			assert(g);
			done += play_sample(s, g, me, horizon);
			g = NULL;
		} while (budget->iterations > 0 ? done + s->narms <= until
		                                : now_seconds() < deadline);
		if (!last && s->narms > 2)
			halve_arms(s);
	}
	int best = best_root_child(s);
	assert(best >= 0);
	*out = s->nodes[best].cmd;
	return done;
}
