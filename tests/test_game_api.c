/*
 * Unit tests for the game module's API for bots and clients: game_clone,
 * game_legal_commands and the player's view (game_view.h), over thousands
 * of states reached by random legal play -- many seeds, every example
 * configuration (and the shared conformance configuration when present),
 * 1 to maxPlayers players, both editions, now and then a timeout, a lost
 * connection or a Leave.
 *
 * At each state:
 *   - every command game_legal_commands lists is accepted by game_apply (on
 *     a clone), and every other command of the parameter space is refused
 *     (the space: every command type with every id of the configuration and
 *     one unknown id, every entrance and one past each end, with and without
 *     targets; UseCard's cards and characters are those of the player plus
 *     a few others, which fail on their own);
 *   - for every viewer (each player, a watcher): the game built from the
 *     view has the same view, keeps its invariants, and lists the same
 *     legal commands for the player the game waits for;
 * and now and then a clone is made that must then play on exactly as the
 * original (the same events for the same commands, the same state at the
 * end).
 *
 * SOPRA_TEST_GAMES (default 10) sets the number of games per
 * configuration and edition; every state checks the views, every
 * SOPRA_TEST_SCAN-th (default 4) also the refused commands.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sopra/config.h"
#include "sopra/game.h"
#include "sopra/game_view.h"
#include "sopra/proto.h"
#include "sopra/rng.h"

/* ---- configurations --------------------------------------------------------------- */

#define MAX_CONFIGS 8

static struct config *configs[MAX_CONFIGS];
static int nconfigs;

static void load(const char *dir, const char *name, bool required)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	struct config_errors e = {0};
	struct config *cfg = config_load(path, &e);
	if (!cfg && required)
		fail_msg("%s: %s", path, e.n ? e.msgs[0] : "?");
	config_errors_free(&e);
	if (cfg)
		configs[nconfigs++] = cfg;
}

/* The same configuration with goal.moral raised to `moral`: random play
 * loses by the third round or so; with more morale the games go on into
 * states with full waste piles, spent equipment, starvation tokens. */
static void load_with_moral(const struct config *base, int moral)
{
	cJSON *root = cJSON_Parse(base->text);
	assert_non_null(root);
	cJSON *goal = cJSON_GetObjectItemCaseSensitive(root, "goal");
	cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(goal, "moral"), moral);
	char *text = cJSON_Print(root);
	struct config_errors e = {0};
	struct config *cfg = config_parse(text, strlen(text), &e);
	if (!cfg)
		fail_msg("%s", e.n ? e.msgs[0] : "?");
	configs[nconfigs++] = cfg;
	config_errors_free(&e);
	free(text);
	cJSON_Delete(root);
}

static int setup(void **state)
{
	(void)state;
	load(SOPRA_SOURCE_DIR "/resources", "example.json", true);
	load_with_moral(configs[0], 60);
	load(SOPRA_SOURCE_DIR "/resources", "example-barricades.json", true);
	load(SOPRA_SOURCE_DIR "/resources", "example-zombies.json", true);
	load_with_moral(configs[nconfigs - 1], 40);
	/* 5 players, 31 characters, every card type and ability */
	load(SOPRA_SHARED_DIR "/conformance/base", "configuration.json", false);
	if (nconfigs == 6)
		load_with_moral(configs[5], 60);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < nconfigs; i++)
		config_free(configs[i]);
	return 0;
}

static int env_int(const char *name, int def)
{
	const char *s = getenv(name);
	return s && atoi(s) > 0 ? atoi(s) : def;
}

/* ---- events ------------------------------------------------------------------------ */

static bool has_event(const struct game_event_list *l, enum game_event_type t)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].type == t)
			return true;
	return false;
}

/* game_apply refused the command: CommandFailed, or the registration's abort */
static bool refused(const struct game_event_list *l)
{
	return has_event(l, GEV_COMMAND_FAILED) || has_event(l, GEV_REGISTRATION_ABORTED);
}

static void assert_same_events(const struct game_event_list *a, const struct game_event_list *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct game_event *x = &a->v[i], *y = &b->v[i];
		assert_int_equal(x->type, y->type);
		assert_int_equal(x->to, y->to);
		assert_int_equal(x->nargs, y->nargs);
		for (int k = 0; k < x->nargs; k++)
			assert_int_equal(x->arg[k], y->arg[k]);
		assert_string_equal(x->str ? x->str : "", y->str ? y->str : "");
	}
}

static void describe_cmd(const struct cmd *c, enum game_rules rules, char *buf, size_t n)
{
	struct proto_buf b;
	proto_buf_init(&b);
	proto_encode_cmd(c, rules, &b);
	snprintf(buf, n, "%.*s", (int)(b.len ? b.len - 1 : 0), b.data ? b.data : "");
	proto_buf_free(&b);
}

static bool same_cmd(const struct cmd *a, const struct cmd *b)
{
	if (a->type != b->type)
		return false;
	size_t n;
	const struct proto_param *ps = proto_cmd_params(a->type, &n);
	for (size_t i = 0; i < n; i++) {
		const struct proto_param *p = &ps[i];
		if (p->type == PROTO_STRING)
			continue;
		if (proto_param_carried(a, p) != proto_param_carried(b, p))
			return false;
		if (proto_param_carried(a, p) && proto_param_get(a, p) != proto_param_get(b, p))
			return false;
	}
	return true;
}

static bool listed(const struct game_cmd_list *l, const struct cmd *c)
{
	for (size_t i = 0; i < l->n; i++)
		if (same_cmd(&l->v[i], c))
			return true;
	return false;
}

/* ---- the parameter space ------------------------------------------------------------ */

/* The values a parameter takes in the scan. */
struct domain {
	int v[2048];
	int n;
};

static void dom_add(struct domain *d, int x)
{
	for (int i = 0; i < d->n; i++)
		if (d->v[i] == x)
			return;
	if (d->n < (int)(sizeof d->v / sizeof d->v[0]))
		d->v[d->n++] = x;
}

struct space {
	struct domain chars, locs, entrances, cards, targets;
	struct domain few_chars, few_cards; /* UseCard: the player's and a few others */
};

static void build_space(const struct game *g, const struct config *cfg, int p, struct rng *r,
                        struct space *s)
{
	memset(s, 0, sizeof *s);
	int max_char = 0, max_loc = 0, max_card = 0, max_e = 0;
	for (int c = 0; c < cfg->ncharacters; c++) {
		dom_add(&s->chars, cfg->characters[c].id);
		if (cfg->characters[c].id > max_char)
			max_char = cfg->characters[c].id;
	}
	dom_add(&s->chars, max_char + 1);
	for (int l = 0; l < cfg->nlocations; l++) {
		dom_add(&s->locs, cfg->locations[l].id);
		if (cfg->locations[l].id > max_loc)
			max_loc = cfg->locations[l].id;
		if (cfg->locations[l].entrances > max_e)
			max_e = cfg->locations[l].entrances;
	}
	dom_add(&s->locs, max_loc + 1);
	for (int e = -1; e <= max_e; e++)
		dom_add(&s->entrances, e);
	for (int k = 0; k < cfg->ncards; k++) {
		dom_add(&s->cards, cfg->cards[k].id);
		if (cfg->cards[k].id > max_card)
			max_card = cfg->cards[k].id;
	}
	dom_add(&s->cards, max_card + 1);
	for (int i = 0; i < s->chars.n; i++)
		dom_add(&s->targets, s->chars.v[i]);
	for (int i = 0; i < s->locs.n; i++)
		dom_add(&s->targets, s->locs.v[i]);
	for (int i = 0; i < s->entrances.n; i++)
		dom_add(&s->targets, s->entrances.v[i]);

	/* UseCard: the player's cards and characters (read through a view:
	 * the test sees the game only through the API) and a few others */
	struct game_view *v = game_view_new(cfg);
	game_view_of(g, p, v);
	for (int k = 0; k < cfg->ncards; k++)
		if (v->cards[k].place == VIEW_HAND && v->cards[k].holder == p)
			dom_add(&s->few_cards, cfg->cards[k].id);
	for (int c = 0; c < cfg->ncharacters; c++)
		if (v->characters[c].life == VIEW_ALIVE && v->characters[c].owner == p)
			dom_add(&s->few_chars, cfg->characters[c].id);
	game_view_free(v);
	for (int i = 0; i < 2; i++) {
		dom_add(&s->few_cards, s->cards.v[rng_next_int(r, s->cards.n)]);
		dom_add(&s->few_chars, s->chars.v[rng_next_int(r, s->chars.n)]);
	}
	dom_add(&s->few_cards, max_card + 1);
	dom_add(&s->few_chars, max_char + 1);
}

/* Whether the commands of type t are many: a hand card with a target (the
 * scan then takes the player's cards and characters and a few others: one
 * not the player's fails whatever the rest). */
static bool many(enum cmd_type t)
{
	size_t n;
	const struct proto_param *ps = proto_cmd_params(t, &n);
	bool card = false, target = false;
	for (size_t i = 0; i < n; i++) {
		card |= ps[i].domain == PROTO_DOMAIN_HAND_CARD;
		target |= ps[i].domain == PROTO_DOMAIN_TARGET;
	}
	return card && target;
}

/* The domain of parameter p of a command of type t. */
static const struct domain *domain_of(const struct space *s, enum cmd_type t,
                                      const struct proto_param *p)
{
	static const struct domain bools = {{0, 1}, 2};
	switch (p->domain) {
	case PROTO_DOMAIN_FLAG:
	case PROTO_DOMAIN_NAME:
		return &bools;
	case PROTO_DOMAIN_OFFERED_CHARACTER:
	case PROTO_DOMAIN_OWN_CHARACTER:
		return many(t) ? &s->few_chars : &s->chars;
	case PROTO_DOMAIN_LOCATION:
		return &s->locs;
	case PROTO_DOMAIN_ENTRANCE:
		return &s->entrances;
	case PROTO_DOMAIN_HAND_CARD:
		return many(t) ? &s->few_cards : &s->cards;
	case PROTO_DOMAIN_TARGET:
		return &s->targets;
	}
	fail_msg("a parameter of an unknown kind");
	return NULL;
}

typedef void visit_fn(struct cmd *c, void *ctx);

/* Every command of type t from parameter i on (c holds the earlier ones). */
static void each_param(const struct space *s, enum game_rules rules, struct cmd *c,
                       const struct proto_param *ps, size_t n, size_t i, visit_fn *visit, void *ctx)
{
	if (i == n) {
		visit(c, ctx);
		return;
	}
	const struct proto_param *p = &ps[i];
	if (p->type == PROTO_STRING) {
		c->name = "x";
		each_param(s, rules, c, ps, n, i + 1, visit, ctx);
		return;
	}
	if (!proto_param_carried(c, p) || ((p->flags & PROTO_BASE_ONLY) && rules != RULES_BASE)) {
		proto_param_set(c, p, 0);
		each_param(s, rules, c, ps, n, i + 1, visit, ctx);
		return;
	}
	const struct domain *d = domain_of(s, c->type, p);
	for (int k = 0; k < d->n; k++) {
		proto_param_set(c, p, d->v[k]);
		each_param(s, rules, c, ps, n, i + 1, visit, ctx);
	}
}

/* Every command of the parameter space. */
static void each_command(const struct space *s, enum game_rules rules, visit_fn *visit, void *ctx)
{
	for (int t = 0; t < CMD_TYPE_COUNT; t++) {
		size_t n;
		const struct proto_param *ps = proto_cmd_params((enum cmd_type)t, &n);
		bool with_target = false;
		for (size_t i = 0; i < n; i++)
			with_target |= proto_param_with_target(&ps[i]);
		for (int target = 0; target <= (with_target ? 1 : 0); target++) {
			struct cmd c = {.type = (enum cmd_type)t, .has_target = target};
			each_param(s, rules, &c, ps, n, 0, visit, ctx);
		}
	}
}

/* ---- checking one state ----------------------------------------------------------------- */

struct scan {
	const struct game *g;
	struct game *scratch; /* a clone of g; refused commands leave it as it is */
	int player;
	const struct game_cmd_list *legal;
	struct game_event_list ev;
	long tried;
};

static void scan_one(struct cmd *c, void *ctx)
{
	struct scan *sc = ctx;
	if (listed(sc->legal, c))
		return;
	sc->tried++;
	game_event_list_clear(&sc->ev);
	game_apply(sc->scratch, sc->player, c, &sc->ev);
	if (!refused(&sc->ev)) {
		char line[256];
		describe_cmd(c, game_rules_of(sc->g), line, sizeof line);
		fail_msg("player %d: %s is accepted but not listed", sc->player, line);
	}
	if (has_event(&sc->ev, GEV_REGISTRATION_ABORTED)) {
		game_free(sc->scratch); /* the abort changed it */
		sc->scratch = game_clone(sc->g);
	}
}

/* Every listed command is accepted. */
static void check_listed(const struct game *g, int player, const struct game_cmd_list *legal)
{
	struct game_event_list ev;
	game_event_list_init(&ev);
	for (size_t i = 0; i < legal->n; i++) {
		struct cmd c = legal->v[i];
		if (c.type == CMD_REGISTER)
			c.name = "someone";
		struct game *x = game_clone(g);
		game_event_list_clear(&ev);
		game_apply(x, player, &c, &ev);
		if (refused(&ev)) {
			char line[256];
			describe_cmd(&c, game_rules_of(g), line, sizeof line);
			fail_msg("player %d: %s is listed but refused", player, line);
		}
		assert_null(game_check_invariants(x));
		game_free(x);
	}
	game_event_list_free(&ev);
}

/* The views of a by pa and of b by pb hold the same facts. */
static void assert_same_views(const struct config *cfg, const struct game *a, int pa,
                              const struct game *b, int pb)
{
	struct game_view *va = game_view_new(cfg), *vb = game_view_new(cfg);
	game_view_of(a, pa, va);
	game_view_of(b, pb, vb);
	char buf[256];
	const char *d = game_view_diff(va, vb, buf, sizeof buf);
	if (d)
		fail_msg("views differ: %s", d);
	game_view_free(va);
	game_view_free(vb);
}

/* The commands of player now are exactly the listed ones. */
static void check_legal(const struct config *cfg, const struct game *g, int player, bool scan_all,
                        struct rng *r, long *tried)
{
	struct game_cmd_list legal;
	game_cmd_list_init(&legal);
	size_t n = game_legal_commands(g, player, &legal);
	assert_int_equal(n, legal.n);
	if (game_waiting_for(g) == GAME_WAIT_NONE ||
	    (game_waiting_for(g) >= 0 && game_waiting_for(g) != player))
		assert_int_equal(n, 0);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			assert_false(same_cmd(&legal.v[i], &legal.v[j]));
	check_listed(g, player, &legal);
	if (scan_all) {
		/* the reference, every command's domains tried, finds the same set */
		struct game_cmd_list ref;
		game_cmd_list_init(&ref);
		assert_int_equal(game_legal_commands_tried(g, player, &ref), n);
		for (size_t i = 0; i < n; i++)
			if (!listed(&legal, &ref.v[i])) {
				char line[256];
				describe_cmd(&ref.v[i], game_rules_of(g), line, sizeof line);
				fail_msg("player %d: %s found by trying, not listed", player, line);
			}
		game_cmd_list_free(&ref);
		struct space s;
		build_space(g, cfg, player, r, &s);
		struct scan sc = {
		        .g = g, .scratch = game_clone(g), .player = player, .legal = &legal};
		game_event_list_init(&sc.ev);
		each_command(&s, game_rules_of(g), scan_one, &sc);
		/* the refused commands changed nothing */
		assert_true(game_rng_peek(g).state == game_rng_peek(sc.scratch).state);
		assert_same_views(cfg, g, player < 0 ? GAME_NO_PLAYER : player, sc.scratch,
		                  player < 0 ? GAME_NO_PLAYER : player);
		for (int p = 0; p < game_player_count(g); p++)
			assert_same_views(cfg, g, p, sc.scratch, p);
		*tried += sc.tried;
		game_event_list_free(&sc.ev);
		game_free(sc.scratch);
	}
	game_cmd_list_free(&legal);
}

/* The game built from player's view of g agrees with it; returns it. */
static struct game *check_view(const struct config *cfg, const struct game *g, int player,
                               int64_t seed)
{
	struct game_view *v = game_view_new(cfg), *w = game_view_new(cfg);
	game_view_of(g, player, v);
	char why[160];
	const char *wrong = game_view_check(v, why, sizeof why);
	if (wrong)
		fail_msg("player %d's view: %s", player, wrong);
	struct game *h = game_from_view(v, seed);
	assert_non_null(h);
	const char *bad = game_check_invariants(h);
	if (bad)
		fail_msg("the game built from player %d's view: %s", player, bad);
	int seat = game_view_seat(v);
	game_view_of(h, seat, w);
	char buf[256];
	const char *d = game_view_diff(v, w, buf, sizeof buf);
	if (d)
		fail_msg("player %d: the game built from the view differs: %s", player, d);
	assert_int_equal(game_waiting_for(h) == seat, game_waiting_for(g) == player);
	/* what the player may send is the same in both */
	struct game_cmd_list a, b;
	game_cmd_list_init(&a);
	game_cmd_list_init(&b);
	game_legal_commands(g, player, &a);
	game_legal_commands(h, seat, &b);
	assert_int_equal(a.n, b.n);
	for (size_t i = 0; i < a.n; i++)
		if (!same_cmd(&a.v[i], &b.v[i])) {
			char x[256], y[256];
			describe_cmd(&a.v[i], game_rules_of(g), x, sizeof x);
			describe_cmd(&b.v[i], game_rules_of(g), y, sizeof y);
			fail_msg("player %d: legal command %zu is %s, from the view %s", player, i,
			         x, y);
		}
	game_cmd_list_free(&a);
	game_cmd_list_free(&b);
	game_view_free(v);
	game_view_free(w);
	return h;
}

/* ---- random legal play ------------------------------------------------------------------ */

struct play {
	const struct config *cfg;
	enum game_rules rules;
	struct game *g;
	struct game *follower; /* a clone that must play on exactly like g, or NULL */
	struct rng r;          /* the test's choices */
	struct game_event_list ev, fev;
	struct game_cmd_list legal;
	long states, scanned, tried, clones;
	int scan_every;
};

/* One random legal command of the list: a type first (Leave rarely), then
 * one of its commands. */
static const struct cmd *pick(struct play *pl)
{
	const struct game_cmd_list *l = &pl->legal;
	enum cmd_type types[CMD_TYPE_COUNT];
	int nt = 0;
	for (size_t i = 0; i < l->n; i++) {
		bool seen = false;
		for (int k = 0; k < nt; k++)
			seen |= types[k] == l->v[i].type;
		if (!seen && (l->v[i].type != CMD_LEAVE || rng_next_int(&pl->r, 200) == 0))
			types[nt++] = l->v[i].type;
	}
	assert_true(nt > 0);
	enum cmd_type t = types[rng_next_int(&pl->r, nt)];
	int n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += l->v[i].type == t;
	int k = rng_next_int(&pl->r, n);
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].type == t && k-- == 0)
			return &l->v[i];
	return NULL;
}

/* game_describe's text of g (every hand, pile size, character...). */
static char *describe(const struct game *g)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	game_describe(g, f);
	fclose(f);
	return text;
}

/* Apply to the game and its follower; the follower's events must match. */
static void step_apply(struct play *pl, int player, const struct cmd *c)
{
	game_event_list_clear(&pl->ev);
	game_apply(pl->g, player, c, &pl->ev);
	if (pl->follower) {
		game_event_list_clear(&pl->fev);
		game_apply(pl->follower, player, c, &pl->fev);
		assert_same_events(&pl->ev, &pl->fev);
	}
}

static void step_timeout(struct play *pl)
{
	game_event_list_clear(&pl->ev);
	game_timeout(pl->g, &pl->ev);
	if (pl->follower) {
		game_event_list_clear(&pl->fev);
		game_timeout(pl->follower, &pl->fev);
		assert_same_events(&pl->ev, &pl->fev);
	}
}

static void step_disconnect(struct play *pl, int p)
{
	game_event_list_clear(&pl->ev);
	game_disconnect(pl->g, p, &pl->ev);
	if (pl->follower) {
		game_event_list_clear(&pl->fev);
		game_disconnect(pl->follower, p, &pl->fev);
		assert_same_events(&pl->ev, &pl->fev);
	}
}

/* Checks of the state reached: views, legal commands, sometimes a clone. */
static void check_state(struct play *pl)
{
	const struct game *g = pl->g;
	assert_null(game_check_invariants(g));
	pl->states++;
	bool scan = pl->states % pl->scan_every == 0;
	pl->scanned += scan;
	int w = game_waiting_for(g);
	if (w == GAME_WAIT_ANY) {
		check_legal(pl->cfg, g, GAME_NO_PLAYER, scan, &pl->r, &pl->tried);
		if (game_player_count(g) > 0)
			check_legal(pl->cfg, g, rng_next_int(&pl->r, game_player_count(g)), scan,
			            &pl->r, &pl->tried);
	} else if (w >= 0) {
		check_legal(pl->cfg, g, w, scan, &pl->r, &pl->tried);
	} else {
		check_legal(pl->cfg, g, 0, scan, &pl->r, &pl->tried);
	}
	int64_t seed = rng_next_int(&pl->r, 1000000);
	game_free(check_view(pl->cfg, g, GAME_NO_PLAYER, seed));
	for (int p = 0; p < game_player_count(g); p++) {
		struct game *h = check_view(pl->cfg, g, p, seed + p);
		/* the built game plays on */
		if (game_waiting_for(h) >= 0) {
			struct game_cmd_list l;
			game_cmd_list_init(&l);
			if (game_legal_commands(h, game_waiting_for(h), &l) > 0) {
				struct game_event_list ev;
				game_event_list_init(&ev);
				game_apply(h, game_waiting_for(h),
				           &l.v[rng_next_int(&pl->r, (int)l.n)], &ev);
				assert_false(refused(&ev));
				assert_null(game_check_invariants(h));
				game_event_list_free(&ev);
			}
			game_cmd_list_free(&l);
		}
		game_free(h);
	}
	if (!pl->follower && rng_next_int(&pl->r, 60) == 0) {
		/* a clone of a clone, the middle one freed at once */
		struct game *mid = game_clone(g);
		pl->follower = game_clone(mid);
		game_free(mid);
		pl->clones++;
	}
}

/* Registration: n players (the first of them maybe after a refused
 * command), then StartGame when the game is not full; now and then the
 * registration is aborted instead. */
static void register_players(struct play *pl, int n)
{
	for (int i = 0; i < n && game_waiting_for(pl->g) == GAME_WAIT_ANY; i++) {
		check_state(pl);
		struct cmd reg = {.type = CMD_REGISTER, .name = i % 2 ? "Ann" : "Bo"};
		step_apply(pl, GAME_NO_PLAYER, &reg);
	}
	if (game_waiting_for(pl->g) != GAME_WAIT_ANY)
		return;
	check_state(pl);
	if (rng_next_int(&pl->r, 25) == 0) {
		step_timeout(pl); /* aborts */
		return;
	}
	struct cmd start = {.type = CMD_START_GAME};
	step_apply(pl, rng_next_int(&pl->r, game_player_count(pl->g)), &start);
}

static void play_game(struct play *pl, int64_t seed)
{
	pl->g = game_new(pl->cfg, seed, pl->rules);
	pl->follower = NULL;
	register_players(pl, 1 + rng_next_int(&pl->r, pl->cfg->max_players));
	for (int steps = 0; steps < 5000; steps++) {
		check_state(pl);
		int w = game_waiting_for(pl->g);
		if (w == GAME_WAIT_NONE)
			break;
		int roll = rng_next_int(&pl->r, 1000);
		if (roll < 3) {
			step_timeout(pl);
		} else if (roll < 6) {
			step_disconnect(pl, rng_next_int(&pl->r, game_player_count(pl->g)));
		} else {
			game_legal_commands(pl->g, w, &pl->legal);
			step_apply(pl, w, pick(pl));
			assert_false(refused(&pl->ev));
		}
	}
	assert_true(game_is_over(pl->g));
	if (getenv("SOPRA_TEST_DEBUG"))
		printf("game %lld: %d players, round %d, %s\n", (long long)seed,
		       game_player_count(pl->g), game_round(pl->g), game_end_reason(pl->g));
	if (pl->follower) {
		for (int p = 0; p < game_player_count(pl->g); p++)
			assert_same_views(pl->cfg, pl->g, p, pl->follower, p);
		assert_true(game_rng_peek(pl->g).state == game_rng_peek(pl->follower).state);
		char *a = describe(pl->g), *b = describe(pl->follower);
		assert_string_equal(a, b);
		free(a);
		free(b);
		game_free(pl->follower);
	}
	game_free(pl->g);
}

static void play_all(enum game_rules rules)
{
	int games = env_int("SOPRA_TEST_GAMES", 10);
	struct play pl = {.rules = rules, .scan_every = env_int("SOPRA_TEST_SCAN", 4)};
	game_event_list_init(&pl.ev);
	game_event_list_init(&pl.fev);
	game_cmd_list_init(&pl.legal);
	rng_init(&pl.r, rules == RULES_BASE ? 17 : 23);
	for (int c = 0; c < nconfigs; c++) {
		pl.cfg = configs[c];
		for (int i = 0; i < games; i++)
			play_game(&pl, 1000 * c + i);
	}
	printf("%s: %ld states, %ld scanned (%ld refused commands), %ld clones followed\n",
	       game_rules_name(rules), pl.states, pl.scanned, pl.tried, pl.clones);
	assert_true(pl.states > 1000);
	assert_true(pl.clones > 5);
	game_event_list_free(&pl.ev);
	game_event_list_free(&pl.fev);
	game_cmd_list_free(&pl.legal);
}

static void test_random_play_base(void **state)
{
	(void)state;
	play_all(RULES_BASE);
}

static void test_random_play_revised(void **state)
{
	(void)state;
	play_all(RULES_REVISED);
}

/* A view no game can have is refused, whatever is wrong with it. */
static void test_inconsistent_views(void **state)
{
	(void)state;
	const struct config *cfg = configs[0];
	struct game *g = game_new(cfg, 3, RULES_REVISED);
	struct game_event_list ev;
	struct game_cmd_list l;
	game_event_list_init(&ev);
	game_cmd_list_init(&l);
	struct cmd reg = {.type = CMD_REGISTER, .name = "x"};
	for (int i = 0; i < 2; i++)
		game_apply(g, GAME_NO_PLAYER, &reg, &ev);
	struct cmd start = {.type = CMD_START_GAME};
	game_apply(g, 0, &start, &ev);
	while (game_round(g) == 0 || game_waiting_for(g) != 1) { /* player 1's turn */
		int w = game_waiting_for(g);
		game_legal_commands(g, w, &l);
		game_apply(g, w, &l.v[l.n - 1], &ev); /* selections, then EndTurn or the like */
		assert_false(game_is_over(g));
	}
	struct game_view *v = game_view_new(cfg);
	char why[160];
	for (int broken = 0; broken < 9; broken++) {
		game_view_of(g, 1, v);
		assert_null(game_view_check(v, why, sizeof why));
		switch (broken) {
		case 0: /* another player's turn, the other one left */
			v->waiting_for = GAME_VIEW_SOMEONE_ELSE;
			v->turn_known = false;
			v->players[0].in_game = false;
			break;
		case 1: /* dice, the turn not known */
			v->turn_known = false;
			v->waiting_for = GAME_VIEW_SOMEONE_ELSE;
			break;
		case 2:
			v->cards[0] = (struct game_view_card){VIEW_HAND, 7, 0, false};
			break;
		case 3: /* equipment on a character not in play */
			v->cards[0] = (struct game_view_card){VIEW_EQUIPPED, 0, 0, false};
			v->characters[0].life = VIEW_DEAD;
			break;
		case 4:
			v->nwaste = 1;
			break;
		case 5:
			v->locations[0].zombies[0] = 4;
			break;
		case 6:
			v->crisis = (v->crisis + 1) % cfg->ncrises;
			break;
		case 7:
			v->players[1].dice[0] = 7;
			break;
		case 8:
			v->nspawned--;
			break;
		}
		const char *bad = game_view_check(v, why, sizeof why);
		if (!bad)
			fail_msg("broken view %d passes the check", broken);
		assert_null(game_from_view(v, 1));
	}
	/* a card in a pile it was never dealt to: only game_from_view can tell */
	game_view_of(g, 1, v);
	int k = 0;
	while (v->cards[k].place != VIEW_PILE)
		k++;
	v->cards[k].holder = (v->cards[k].holder + 1) % cfg->nlocations;
	if (v->cards[k].holder == cfg->colony)
		v->cards[k].holder = (v->cards[k].holder + 1) % cfg->nlocations;
	assert_null(game_view_check(v, why, sizeof why));
	assert_null(game_from_view(v, 1));
	game_view_free(v);
	game_cmd_list_free(&l);
	game_event_list_free(&ev);
	game_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_random_play_base),
	        cmocka_unit_test(test_random_play_revised),
	        cmocka_unit_test(test_inconsistent_views),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
