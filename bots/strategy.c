/*
 * strategy: the three levels behind one interface (strategy.h).
 */
#include "strategy.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot_board.h"
#include "bot_policy.h"
#include "bot_search.h"
#include "sopra/xalloc.h"

struct strategy {
	const struct config *cfg;
	struct strategy_options opt;
	struct bot_ids *ids;
	struct bot_search *search;
	struct game_view *view; /* scratch: the player's view in a sampled game */
	struct game_cmd_list legal;
	struct strategy_stats stats;
};

static const char *const kind_names[] = {
        [STRATEGY_RANDOM] = "random",
        [STRATEGY_GREEDY] = "greedy",
        [STRATEGY_SEARCH] = "search",
};

bool strategy_kind_parse(const char *s, enum strategy_kind *out)
{
	for (size_t k = 0; k < sizeof kind_names / sizeof kind_names[0]; k++)
		if (strcmp(s, kind_names[k]) == 0) {
			*out = (enum strategy_kind)k;
			return true;
		}
	return false;
}

const char *strategy_kind_name(enum strategy_kind k)
{
	return (unsigned)k < sizeof kind_names / sizeof kind_names[0] ? kind_names[k] : "?";
}

struct strategy *strategy_new(const struct config *cfg, const struct strategy_options *o)
{
	struct strategy *s = xcalloc(1, sizeof *s);
	s->cfg = cfg;
	s->opt = *o;
	if (s->opt.think_ms <= 0)
		s->opt.think_ms = STRATEGY_DEFAULT_THINK_MS;
	s->ids = bot_ids_new(cfg);
	s->search = bot_search_new(cfg, s->ids);
	s->view = game_view_new(cfg);
	game_cmd_list_init(&s->legal);
	return s;
}

void strategy_free(struct strategy *s)
{
	if (!s)
		return;
	bot_search_free(s->search);
	bot_ids_free(s->ids);
	game_view_free(s->view);
	game_cmd_list_free(&s->legal);
	free(s);
}

const struct strategy_stats *strategy_stats(const struct strategy *s)
{
	return &s->stats;
}

static double seconds_of(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_seconds(void)
{
	return seconds_of(CLOCK_MONOTONIC);
}

/* This thread's CPU time. */
static double cpu_now_seconds(void)
{
	return seconds_of(CLOCK_THREAD_CPUTIME_ID);
}

/* ---- the seed of one decision ------------------------------------------------------ */

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
	return h;
}

/* A hash of everything in v, so that one seed and one view always give
 * one decision (also when a bot re-reads its events after a reconnect). */
static uint64_t view_hash(const struct game_view *v)
{
	const struct config *cfg = v->cfg;
	uint64_t h = 0xCBF29CE484222325ULL;
	int head[] = {v->rules,       v->me,     v->phase,    v->waiting_for, v->turn_known,
	              v->round,       v->food,   v->moral,    v->starvation,  v->children,
	              v->contributed, v->crisis, v->nplayers, v->nspawned,    v->nwaste};
	for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
		h = mix(h, head[i]);
	for (int p = 0; p < v->nplayers; p++) {
		const struct game_view_player *vp = &v->players[p];
		h = mix(h, vp->in_game * 2 + vp->cleaned);
		for (int i = 0; i < vp->ndice; i++)
			h = mix(h, vp->dice[i]);
		for (int i = 0; i < 4; i++)
			h = mix(h, vp->offered[i]);
	}
	for (int c = 0; c < cfg->ncharacters; c++) {
		const struct game_view_character *ch = &v->characters[c];
		int f[] = {ch->life,       ch->owner, ch->loc, ch->wounds,
		           ch->frostbites, ch->moved, ch->uses};
		for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
			h = mix(h, f[i]);
	}
	for (int k = 0; k < cfg->ncards; k++) {
		const struct game_view_card *cd = &v->cards[k];
		/* ints become uint64_t modulo 2^64: -1 is all ones */
		h = mix(h, ((uint64_t)cd->place << 40) ^ ((uint64_t)cd->holder << 20) ^
		                   ((uint64_t)cd->order << 1) ^ (uint64_t)cd->spent);
	}
	for (int l = 0; l < cfg->nlocations; l++)
		for (int e = 0; e < cfg->locations[l].entrances; e++)
			h = mix(h, v->locations[l].zombies[e] * 8 + v->locations[l].barricades[e]);
	return h;
}

/* ---- random --------------------------------------------------------------------- */

/* The commands player me may send in g, into s->legal: the legal ones
 * but those a bot never sends (bot_never_sends). Returns their number. */
static size_t sendable(struct strategy *s, const struct game *g, int me)
{
	game_legal_commands(g, me, &s->legal);
	size_t n = 0;
	for (size_t i = 0; i < s->legal.n; i++)
		if (!bot_never_sends(&s->legal.v[i]))
			s->legal.v[n++] = s->legal.v[i];
	s->legal.n = n;
	return n;
}

static bool choose_random(struct strategy *s, const struct game *g, int me, uint64_t *rng,
                          struct cmd *out)
{
	size_t n = sendable(s, g, me);
	if (n == 0)
		return false;
	*out = s->legal.v[bot_rand(rng) % n];
	return true;
}

/* ---- greedy ------------------------------------------------------------------------ */

/* The command the rule-of-thumb policy rates best for the view's player
 * now (bot_policy.h): no look-ahead at all. */
static bool choose_greedy(struct strategy *s, const struct game *sample, int me,
                          const struct game_view *v, struct cmd *out)
{
	size_t n = sendable(s, sample, me);
	if (n == 0)
		return false;
	uint64_t unused = 0;
	*out = s->legal.v[bot_policy_pick(s->ids, v, s->legal.v, n, 0, &unused)];
	return true;
}

/* ---- search --------------------------------------------------------------------- */

static struct game *sample_view(void *ctx, uint64_t seed)
{
	return game_from_view(ctx, (int64_t)seed);
}

static struct game *sample_truth(void *ctx, uint64_t seed)
{
	(void)seed;
	return game_clone(ctx);
}

static bool choose_search(struct strategy *s, const struct bot_sampler *smp, int me, uint64_t seed,
                          struct cmd *out)
{
	struct bot_search_budget budget = {
	        .iterations = s->opt.iterations,
	        .seconds = s->opt.think_ms / 1000.0,
	};
	long n = bot_search_run(s->search, smp, me, &budget, seed, out);
	if (n > 0)
		s->stats.iterations += n;
	return n >= 0;
}

/* ---- choosing ------------------------------------------------------------------- */

static void count(struct strategy *s, double started, double cpu_started, bool deliberate)
{
	double t = now_seconds() - started, cpu = cpu_now_seconds() - cpu_started;
	s->stats.decisions++;
	s->stats.deliberate += deliberate;
	s->stats.seconds += t;
	if (t > s->stats.max_seconds)
		s->stats.max_seconds = t;
	s->stats.cpu_seconds += cpu;
	if (cpu > s->stats.max_cpu_seconds)
		s->stats.max_cpu_seconds = cpu;
}

static bool decide(struct strategy *s, const struct bot_sampler *smp, int me, uint64_t seed,
                   struct cmd *out)
{
	double started = now_seconds(), cpu_started = cpu_now_seconds();
	uint64_t rng = seed;
	struct game *first = smp->sample(smp->ctx, bot_rand(&rng));
	if (!first || game_waiting_for(first) != me) {
		game_free(first);
		return false;
	}
	size_t n = sendable(s, first, me);
	bool ok = false;
	if (n == 0) {
		ok = false;
	} else if (s->opt.kind == STRATEGY_RANDOM || n == 1) {
		ok = choose_random(s, first, me, &rng, out);
	} else if (s->opt.kind == STRATEGY_GREEDY) {
		game_view_of(first, me, s->view);
		ok = choose_greedy(s, first, me, s->view, out);
	} else {
		ok = choose_search(s, smp, me, bot_rand(&rng), out);
	}
	game_free(first);
	if (ok)
		count(s, started, cpu_started, n > 1);
	return ok;
}

bool strategy_choose(struct strategy *s, const struct game_view *v, struct cmd *out)
{
	int me = game_view_seat(v);
	if (me < 0 || (v->phase != VIEW_SELECTION && v->phase != VIEW_TURNS))
		return false;
	struct bot_sampler smp = {sample_view, (void *)v};
	return decide(s, &smp, me, s->opt.seed ^ view_hash(v), out);
}

bool strategy_choose_oracle(struct strategy *s, const struct game *g, int player, struct cmd *out)
{
	game_view_of(g, player, s->view);
	uint64_t seed = s->opt.seed ^ view_hash(s->view);
	struct bot_sampler smp = {sample_truth, (void *)g};
	return decide(s, &smp, player, seed, out);
}
