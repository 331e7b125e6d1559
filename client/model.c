/*
 * model: the client's board, folded from the server's events (model.h).
 *
 * One handler per event, in a table keyed by the event's name: the table
 * also lists each event's parameters (protocol.md), which model_decode()
 * checks. model_fold() first checks what must come next (the immediate
 * consequences of earlier events, then the colony phase step by step,
 * behaviour.md 8), then calls the event's handler.
 */
#include "model.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const model_card_type_names[MODEL_CARD_TYPES] = {
        "food",   "fuel",       "stuff", "medicine", "lock",     "scissors",
        "hammer", "snow_boots", "colt",  "swab",     "blueprint"};
const char *const model_ability_names[MODEL_ABILITIES] = {
        "wound", "no_infection", "search", "trash", "heal", "feed", "barricade", "kill"};
#define REASON_NAME(id, name) name,
const char *const model_food_reasons[MODEL_FOOD_REASON_COUNT] = {SOPRA_FOOD_REASONS(REASON_NAME)};
const char *const model_moral_reasons[MODEL_MORAL_REASON_COUNT] = {
        SOPRA_MORAL_REASONS(REASON_NAME)};
#undef REASON_NAME

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int
fail_code(struct model *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->chk.err, sizeof m->chk.err, fmt, ap);
	va_end(ap);
	return MODEL_VIOLATION;
}

/* Report a contradiction from a function that returns an int status. */
#define FAIL(...) return fail_code(m, __VA_ARGS__)

static int internal(struct model *m, const char *what)
{
	snprintf(m->chk.err, sizeof m->chk.err, "%s", what);
	return MODEL_INTERNAL;
}

/* ---- reading ---------------------------------------------------------------------------- */

/* A respawn still queued for a player who has left or has a character. */
static bool moot_respawn(const struct model *m, const struct model_expect *x)
{
	int q = x->a[0];
	return x->kind == MODEL_EXP_RESPAWN &&
	       !(q >= 0 && q < m->nplayers && m->player_in[q] && model_living_of(m, q) == 0);
}

bool model_settled(const struct model *m)
{
	const struct model_checks *k = &m->chk;
	for (int i = 0; i < k->nexq; i++)
		if (!moot_respawn(m, &k->exq[i]))
			return false;
	return k->cp == MODEL_CP_OFF && !k->expect_waste_inc && !k->expect_game_lost;
}

bool model_is_equipment(enum model_card_type t)
{
	return t >= MODEL_CARD_HAMMER;
}

/* The index of the element of v (n of them, each size bytes with an int id
 * at offset off) whose id is id, or -1. */
static int index_of_id(const void *v, int n, size_t size, size_t off, int id)
{
	const char *p = v;
	for (int i = 0; i < n; i++) {
		int x;
		memcpy(&x, p + (size_t)i * size + off, sizeof x);
		if (x == id)
			return i;
	}
	return -1;
}

/* The index in v (n elements of type) of the one whose id is key, or -1. */
#define INDEX_OF_ID(type, v, n, key) index_of_id((v), (n), sizeof(type), offsetof(type, id), (key))

int model_find_card(const struct model *m, int id)
{
	return INDEX_OF_ID(struct model_card, m->cards, m->ncards, id);
}

int model_find_char(const struct model *m, int id)
{
	return INDEX_OF_ID(struct model_character, m->chars, m->nchars, id);
}

int model_find_loc(const struct model *m, int id)
{
	return INDEX_OF_ID(struct model_location, m->locs, m->nlocs, id);
}

int model_find_crisis(const struct model *m, int id)
{
	return INDEX_OF_ID(struct model_crisis, m->crises, m->ncrises, id);
}

int model_chars_at(const struct model *m, int l)
{
	int n = 0;
	for (int i = 0; i < m->nchars; i++)
		if (m->chars[i].alive && m->chars[i].loc == l)
			n++;
	return n;
}

bool model_has_room(const struct model *m, int l)
{
	return m->locs[l].colony || model_chars_at(m, l) < m->locs[l].spaces;
}

int model_living_of(const struct model *m, int p)
{
	int n = 0;
	for (int i = 0; i < m->nchars; i++)
		if (m->chars[i].alive && m->chars[i].owner == p)
			n++;
	return n;
}

int model_hand_size(const struct model *m, int p)
{
	int n = 0;
	for (int i = 0; i < m->ncards; i++)
		if (m->cards[i].holder == p)
			n++;
	return n;
}

int model_max_die(const struct model *m)
{
	int best = 0;
	for (int i = 0; i < m->ndice; i++)
		if (m->dice[i] > best)
			best = m->dice[i];
	return best;
}

int model_unspent_equip(const struct model *m, int c, enum model_card_type t)
{
	const struct model_character *ch = &m->chars[c];
	for (int i = ch->nequip - 1; i >= 0; i--)
		if (m->cards[ch->equip[i]].type == t && !ch->equip_spent[i])
			return i;
	return -1;
}

bool model_crisis_accepts(const struct model *m, enum model_card_type t)
{
	if (m->crisis < 0)
		return false;
	enum model_card_type want = m->crises[m->crisis].type;
	if (want == MODEL_CARD_STUFF)
		return t == MODEL_CARD_STUFF || t == MODEL_CARD_LOCK || t == MODEL_CARD_SCISSORS ||
		       model_is_equipment(t);
	return t == want;
}

int model_food_need(const struct model *m)
{
	return (m->children + model_chars_at(m, m->colony) + 1) / 2;
}

/* ---- life cycle ------------------------------------------------------------------------- */

void model_init(struct model *m, const char *my_name, bool revised)
{
	memset(m, 0, sizeof *m);
	m->my_name = my_name ? strdup(my_name) : NULL;
	m->revised = revised;
	m->me = -1;
	m->colony = -1;
	m->crisis = -1;
	m->chk.searched_loc = -1;
	m->chk.pend = MODEL_PEND_NONE;
}

void model_free(struct model *m)
{
	for (int l = 0; l < m->nlocs; l++) {
		free(m->locs[l].zombies);
		free(m->locs[l].barricades);
	}
	free(m->locs);
	free(m->cards);
	free(m->chars);
	free(m->crises);
	free(m->drawn);
	free(m->waste_pile);
	free(m->spawn_order);
	free(m->config_text);
	free(m->chk.zorder);
	for (int p = 0; p < m->nplayers; p++)
		free(m->player_names[p]);
	free(m->my_name);
	cJSON_Delete(m->config);
	memset(m, 0, sizeof *m);
	m->me = -1;
}

void model_set_pending(struct model *m, enum model_pending what, int char_index)
{
	m->chk.pend = what;
	m->chk.pend_char = char_index;
}

void model_other_failure_next(struct model *m)
{
	m->chk.other_failure = true;
}

void model_end_my_turn(struct model *m)
{
	m->my_turn = false;
}

/* ---- configuration ---------------------------------------------------------------------- */

static int jint(const cJSON *o, const char *key, int def)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(it) ? it->valueint : def;
}

static const char *jstr(const cJSON *o, const char *key, const char *def)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(it) && it->valuestring ? it->valuestring : def;
}

/* the single key of a polymorphic entry and its value */
static const cJSON *poly(const cJSON *entry, const char **key)
{
	if (!cJSON_IsObject(entry) || !entry->child)
		return NULL;
	*key = entry->child->string;
	return entry->child;
}

static void *zalloc(size_t n, size_t size)
{
	return calloc(n ? n : 1, size ? size : 1);
}

static int load_cards(struct model *m, const cJSON *arr)
{
	m->ncards = cJSON_GetArraySize(arr);
	m->cards = zalloc((size_t)m->ncards, sizeof *m->cards);
	if (!m->cards)
		return internal(m, "out of memory");
	int i = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, arr)
	{
		const char *k = "";
		const cJSON *v = poly(e, &k);
		struct model_card *c = &m->cards[i++];
		c->id = v ? jint(v, "identifier", -1) : -1;
		c->type = MODEL_CARD_STUFF;
		for (int t = 0; t < MODEL_CARD_TYPES; t++)
			if (k && strcmp(k, model_card_type_names[t]) == 0)
				c->type = (enum model_card_type)t;
		c->deck = -1;
		c->holder = -1;
		c->amount = v ? jint(v, "amount", 0) : 0;
		c->bp_loc =
		        v ? jint(v, "location", -1) : -1; /* an id until the locations are read */
	}
	return MODEL_OK;
}

static int load_locations(struct model *m, const cJSON *arr)
{
	m->nlocs = cJSON_GetArraySize(arr);
	m->locs = zalloc((size_t)m->nlocs, sizeof *m->locs);
	if (!m->locs)
		return internal(m, "out of memory");
	int i = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, arr)
	{
		struct model_location *l = &m->locs[i];
		const cJSON *body = e;
		const cJSON *col = cJSON_GetObjectItemCaseSensitive(e, "colony");
		if (col) {
			body = col;
			l->colony = true;
			m->colony = i;
		}
		l->id = jint(body, "identifier", -1);
		l->name = col ? "colony" : jstr(body, "name", "");
		l->entrances = jint(body, "entrances", 1);
		if (l->entrances < 1)
			l->entrances = 1;
		l->spaces = col ? 0 : jint(body, "survivorSpaces", 0);
		l->zombies = zalloc((size_t)l->entrances, sizeof(int));
		l->barricades = zalloc((size_t)l->entrances, sizeof(int));
		if (!l->zombies || !l->barricades)
			return internal(m, "out of memory");
		const cJSON *cl =
		        cJSON_GetObjectItemCaseSensitive(body, col ? "startCards" : "cards");
		const cJSON *ce;
		cJSON_ArrayForEach(ce, cl)
		{
			int ci = cJSON_IsNumber(ce) ? model_find_card(m, ce->valueint) : -1;
			if (ci >= 0) {
				m->cards[ci].deck = i;
				if (!col)
					l->deck_left++;
			}
		}
		l->deck_size = l->deck_left;
		i++;
	}
	if (m->colony < 0)
		FAIL("the Config has no colony");
	for (int k = 0; k < m->ncards; k++)
		if (m->cards[k].type == MODEL_CARD_BLUEPRINT)
			m->cards[k].bp_loc = model_find_loc(m, m->cards[k].bp_loc);
	/* zombie order of the colony phase: the colony, then ascending id */
	int *zorder = zalloc((size_t)m->nlocs, sizeof(int));
	if (!zorder)
		return internal(m, "out of memory");
	m->chk.zorder = zorder;
	zorder[0] = m->colony;
	for (int l = 0, n = 1; l < m->nlocs; l++) {
		if (l == m->colony)
			continue;
		int j = n++;
		while (j > 1 && m->locs[zorder[j - 1]].id > m->locs[l].id) {
			zorder[j] = zorder[j - 1];
			j--;
		}
		zorder[j] = l;
	}
	return MODEL_OK;
}

static int load_characters(struct model *m, const cJSON *arr)
{
	m->nchars = cJSON_GetArraySize(arr);
	m->chars = zalloc((size_t)m->nchars, sizeof *m->chars);
	if (!m->chars)
		return internal(m, "out of memory");
	int i = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, arr)
	{
		struct model_character *c = &m->chars[i++];
		c->id = jint(e, "identifier", -1);
		c->name = jstr(e, "name", "");
		c->status = jint(e, "status", 0);
		c->attack = jint(e, "attack", 6);
		c->search = jint(e, "search", 6);
		c->owner = -1;
		c->loc = -1;
		c->ab_loc = -1;
		const char *k = "";
		const cJSON *v = poly(cJSON_GetObjectItemCaseSensitive(e, "ability"), &k);
		c->ability = MODEL_AB_WOUND;
		for (int t = 0; t < MODEL_ABILITIES; t++)
			if (k && strcmp(k, model_ability_names[t]) == 0)
				c->ability = (enum model_ability)t;
		if (v) {
			if (c->ability == MODEL_AB_SEARCH)
				c->ab_loc = model_find_loc(m, jint(v, "location", -1));
			if (c->ability == MODEL_AB_KILL)
				c->ab_loc = model_find_loc(m, jint(v, "locationId", -1));
			c->ab_num = jint(v,
			                 c->ability == MODEL_AB_FEED        ? "numFood"
			                 : c->ability == MODEL_AB_BARRICADE ? "numBarricades"
			                 : c->ability == MODEL_AB_KILL      ? "numZombies"
			                                                    : "numCards",
			                 0);
			c->ab_max = jint(v, "maxActivations", 1);
			c->ab_die = jint(v, "dieValue", 1);
			c->ab_children =
			        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "children"));
		}
	}
	return MODEL_OK;
}

static int load_crises(struct model *m, const cJSON *arr)
{
	m->ncrises = cJSON_GetArraySize(arr);
	m->crises = zalloc((size_t)m->ncrises, sizeof *m->crises);
	if (!m->crises)
		return internal(m, "out of memory");
	int i = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, arr)
	{
		const char *k = "";
		const cJSON *v = poly(e, &k);
		struct model_crisis *c = &m->crises[i++];
		c->id = v ? jint(v, "identifier", -1) : -1;
		c->required = v ? jint(v, "requiredCards", 1) : 1;
		c->moral = v ? jint(v, "moralChange", 1) : 1;
		c->type = !k                           ? MODEL_CARD_STUFF
		          : strcmp(k, "food") == 0     ? MODEL_CARD_FOOD
		          : strcmp(k, "fuel") == 0     ? MODEL_CARD_FUEL
		          : strcmp(k, "medicine") == 0 ? MODEL_CARD_MEDICINE
		                                       : MODEL_CARD_STUFF;
	}
	return MODEL_OK;
}

static int load_config(struct model *m, const char *text)
{
	cJSON *root = cJSON_Parse(text);
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		FAIL("the Config event's text is not a JSON object");
	}
	m->config = root;
	m->max_players = jint(root, "maxPlayers", 0);
	m->config_text = strdup(text);
	if (!m->config_text)
		return internal(m, "out of memory");
	int rc = load_cards(m, cJSON_GetObjectItemCaseSensitive(root, "cards"));
	if (rc == MODEL_OK)
		rc = load_locations(m, cJSON_GetObjectItemCaseSensitive(root, "locations"));
	if (rc == MODEL_OK)
		rc = load_characters(m, cJSON_GetObjectItemCaseSensitive(root, "characters"));
	if (rc == MODEL_OK)
		rc = load_crises(m, cJSON_GetObjectItemCaseSensitive(root, "crises"));
	if (rc != MODEL_OK)
		return rc;
	m->drawn = zalloc((size_t)m->ncrises, sizeof(int));
	m->waste_pile = zalloc((size_t)m->ncards, sizeof(int));
	m->spawn_order = zalloc((size_t)m->nchars, sizeof(int));
	if (!m->drawn || !m->waste_pile || !m->spawn_order)
		return internal(m, "out of memory");

	const cJSON *goal = cJSON_GetObjectItemCaseSensitive(root, "goal");
	m->rounds = jint(goal, "rounds", 1);
	m->start_moral = jint(goal, "moral", 1);
	m->goal = cJSON_GetObjectItemCaseSensitive(goal, "barricades") ? MODEL_GOAL_BARRICADES
	          : cJSON_GetObjectItemCaseSensitive(goal, "locationWithZombies")
	                  ? MODEL_GOAL_ZOMBIES
	                  : MODEL_GOAL_SURVIVE;
	m->goal_value = jint(
	        goal, m->goal == MODEL_GOAL_BARRICADES ? "barricades" : "locationWithZombies", 0);
	m->moral = m->start_moral;
	m->children = jint(goal, "childrenInColony", 0);
	/* the initial board (behaviour.md 3.5), announced by no event */
	for (int l = 0; l < m->nlocs; l++) {
		struct model_location *L = &m->locs[l];
		int n = jint(goal, L->colony ? "zombiesColony" : "zombiesLocations", 0);
		for (int z = 0; z < n; z++)
			L->zombies[z % L->entrances]++;
	}
	m->crisis = -1;
	m->chk.searched_loc = -1;
	return MODEL_OK;
}

/* ---- checks shared by the handlers ------------------------------------------------------- */

static int need_chr(struct model *m, const struct model_event *ev, int id, bool alive)
{
	int c = model_find_char(m, id);
	if (c < 0)
		FAIL("%s: unknown character %d", ev->name, id);
	if (alive && !m->chars[c].alive)
		FAIL("%s: character %d is not alive", ev->name, id);
	return c;
}

static int need_loc(struct model *m, const struct model_event *ev, int id)
{
	int l = model_find_loc(m, id);
	if (l < 0)
		FAIL("%s: unknown location %d", ev->name, id);
	return l;
}

static int need_entrance(struct model *m, const struct model_event *ev, int l, int e)
{
	if (e < 0 || e >= m->locs[l].entrances)
		FAIL("%s: location %d has no entrance %d", ev->name, m->locs[l].id, e);
	return MODEL_OK;
}

static int need_card(struct model *m, const struct model_event *ev, int id)
{
	int c = model_find_card(m, id);
	if (c < 0)
		FAIL("%s: unknown card %d", ev->name, id);
	return c;
}

static int need_player(struct model *m, const struct model_event *ev, int p)
{
	if (p < 0 || p >= m->nplayers)
		FAIL("%s: unknown player %d", ev->name, p);
	return MODEL_OK;
}

static int check_entrance(struct model *m, const struct model_event *ev, int l, int e)
{
	const struct model_location *L = &m->locs[l];
	if (L->zombies[e] < 0 || L->barricades[e] < 0 || L->zombies[e] + L->barricades[e] > 3)
		FAIL("%s: location %d entrance %d now has %d zombies and %d barricades", ev->name,
		     L->id, e, L->zombies[e], L->barricades[e]);
	return MODEL_OK;
}

static int check_capacity(struct model *m, const struct model_event *ev, int l)
{
	if (!m->locs[l].colony && model_chars_at(m, l) > m->locs[l].spaces)
		FAIL("%s: location %d holds %d characters, it has %d spaces", ev->name,
		     m->locs[l].id, model_chars_at(m, l), m->locs[l].spaces);
	return MODEL_OK;
}

static void drop_hand(struct model *m, int p)
{
	for (int i = 0; i < m->ncards; i++)
		if (m->cards[i].holder == p)
			m->cards[i].holder = -1;
}

static void kill_char(struct model *m, int c)
{
	struct model_character *ch = &m->chars[c];
	ch->alive = false;
	ch->loc = -1;
	ch->nequip = 0;
	/* a last character's owner loses the hand with the respawn (or Left)
	 * that follows its MoralChanged -- unless that ends the game first */
}

static int move_char(struct model *m, const struct model_event *ev, int c, int l)
{
	struct model_character *ch = &m->chars[c];
	if (ch->loc == l)
		FAIL("%s: character %d is already at location %d", ev->name, ch->id, m->locs[l].id);
	if (ch->moved)
		FAIL("%s: character %d moves a second time this round", ev->name, ch->id);
	ch->loc = l;
	ch->moved = true;
	return check_capacity(m, ev, l);
}

static void heal(struct model *m, int t)
{
	struct model_character *ch = &m->chars[t];
	if (ch->frost > 0)
		ch->frost--;
	else if (ch->wounds > 0)
		ch->wounds--;
}

/* card k was played onto the waste pile: WasteChanged(+1) must come next */
static void expect_to_waste(struct model *m, int k)
{
	m->chk.expect_waste_inc = true;
	m->chk.waste_card = k;
}

/* remove our smallest die >= v (v = 1: the lowest die) */
static void use_die(struct model *m, int v)
{
	int best = -1;
	for (int i = 0; i < m->ndice; i++)
		if (m->dice[i] >= v && (best < 0 || m->dice[i] < m->dice[best]))
			best = i;
	if (best >= 0)
		m->dice[best] = m->dice[--m->ndice];
}

/* ---- what must come next ---------------------------------------------------------------- */

static struct model_expect X(const char *name, int nargs, int a0, int a1, int a2) {
	struct model_expect x;
	memset(&x, 0, sizeof x);
	x.kind = MODEL_EXP_EXACT;
	x.name = name;
	x.nargs = nargs;
	x.a[0] = a0;
	x.a[1] = a1;
	x.a[2] = a2;
	return x;
}

static struct model_expect
RESPAWN(int owner) {
	struct model_expect x = X("CharacterSpawned", 1, owner, 0, 0);
	x.kind = MODEL_EXP_RESPAWN;
	return x;
}

/* Insert n expectations, in order, before the ones already queued: they are
 * the immediate consequences of the event just handled. */
static int
expect_front(struct model *m, const struct model_expect *xs, int n)
{
	struct model_checks *k = &m->chk;
	if (k->nexq + n > MODEL_MAX_EXPECT)
		return internal(m, "internal: expectation queue full");
	memmove(&k->exq[n], &k->exq[0], sizeof(struct model_expect) * (size_t)k->nexq);
	memcpy(k->exq, xs, sizeof(struct model_expect) * (size_t)n);
	k->nexq += n;
	return MODEL_OK;
}

static int expect1(struct model *m, struct model_expect x)
{
	return expect_front(m, &x, 1);
}

static int expect2(struct model *m, struct model_expect x, struct model_expect y)
{
	struct model_expect xs[2] = {x, y};
	return expect_front(m, xs, 2);
}

static void pop_expect(struct model *m)
{
	struct model_checks *k = &m->chk;
	memmove(&k->exq[0], &k->exq[1], sizeof(struct model_expect) * (size_t)--k->nexq);
}

static bool unused_exists(const struct model *m)
{
	for (int i = 0; i < m->nchars; i++)
		if (!m->chars[i].spawned)
			return true;
	return false;
}

static void describe_expect(const struct model_expect *x, char *buf, size_t n)
{
	int k = snprintf(buf, n, "%s", x->name);
	for (int i = 0; i < x->nargs && k > 0 && (size_t)k < n; i++)
		k += snprintf(buf + k, n - (size_t)k, " %d", x->a[i]);
	if (x->any_gt && k > 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, " >%d", x->a[x->nargs]);
}

/* "Name v0 v1 ...": the integer parameters (the string one left out) */
static void describe_args(const struct model_event *ev, char *buf, size_t n)
{
	int k = snprintf(buf, n, "%s", ev->name);
	for (int i = 0; i < 4 && k > 0 && (size_t)k < n; i++)
		if (ev->has[i] && !(ev->s && i == 0 && ev->type != MEV_PLAYER))
			k += snprintf(buf + k, n - (size_t)k, " %d", ev->v[i]);
}

static int match(struct model *m, const struct model_event *ev, const struct model_expect *x,
                 const char *ctx)
{
	bool ok = strcmp(ev->name, x->name) == 0;
	for (int i = 0; ok && i < x->nargs; i++)
		ok = ev->has[i] && ev->v[i] == x->a[i];
	if (ok && x->any_gt)
		ok = ev->v[x->nargs] > x->a[x->nargs];
	if (!ok) {
		char want[128], got[128];
		describe_expect(x, want, sizeof want);
		describe_args(ev, got, sizeof got);
		FAIL("%s: expected %s, got %s", ctx, want, got);
	}
	return MODEL_OK;
}

static bool is_last_round(const struct model *m)
{
	return m->revised ? m->round == 1 : m->round == m->rounds;
}

static bool goal_reached(const struct model *m)
{
	int bars = 0, zlocs = 0;
	for (int l = 0; l < m->nlocs; l++) {
		bool z = false;
		for (int e = 0; e < m->locs[l].entrances; e++) {
			bars += m->locs[l].barricades[e];
			z = z || m->locs[l].zombies[e] > 0;
		}
		zlocs += z;
	}
	switch (m->goal) {
	case MODEL_GOAL_BARRICADES:
		return bars >= m->goal_value;
	case MODEL_GOAL_ZOMBIES:
		return zlocs <= m->goal_value;
	default:
		return is_last_round(m);
	}
}

/* The next event of the colony phase (behaviour.md 8), skipping steps that
 * send nothing. Deaths' consequences are in the queue, not here. */
static struct model_expect cp_expect(struct model *m)
{
	struct model_checks *k = &m->chk;
	for (;;) {
		switch (k->cp) {
		case MODEL_CP_FOOD:
			if (k->cp_need > 0 && m->food >= k->cp_need)
				return X("FoodChanged", 2, -k->cp_need, MODEL_FOOD_CONSUMED, 0);
			if (m->food < k->cp_need)
				return X("StarvationTokenAdded", 0, 0, 0, 0);
			k->cp = MODEL_CP_STARV;
			continue;
		case MODEL_CP_STARV:
			if (m->tokens > 0)
				return X("MoralChanged", 2, -m->tokens,
				         MODEL_MORAL_STARVATION_TOKEN, 0);
			k->cp = MODEL_CP_WASTE;
			continue;
		case MODEL_CP_WASTE:
			if (m->waste / 10 >= 1)
				return X("MoralChanged", 2, -(m->waste / 10), MODEL_MORAL_WASTE, 0);
			k->cp = MODEL_CP_CRISIS;
			continue;
		case MODEL_CP_CRISIS:
			if (m->crisis >= 0) {
				int req = m->crises[m->crisis].required;
				if (m->contributed >= req + 2)
					return X("MoralChanged", 2, 1, MODEL_MORAL_CRISIS, 0);
				if (m->contributed < req)
					return X("MoralChanged", 2, -m->crises[m->crisis].moral,
					         MODEL_MORAL_CRISIS, 0);
			}
			k->cp = MODEL_CP_ZOMBIES;
			k->zi = 0;
			k->zn = -1;
			continue;
		case MODEL_CP_ZOMBIES: {
			if (k->zi >= m->nlocs) {
				k->cp = MODEL_CP_GOAL;
				continue;
			}
			int l = k->zorder[k->zi];
			const struct model_location *L = &m->locs[l];
			if (k->zn < 0) {
				k->zn = L->colony ? (m->children + model_chars_at(m, l) + 1) / 2
				                  : model_chars_at(m, l);
				k->zk = 0;
			}
			if (k->zk >= k->zn) {
				k->zi++;
				k->zn = -1;
				continue;
			}
			int e = k->zk % L->entrances;
			if (L->zombies[e] + L->barricades[e] < 3)
				return X("ZombieSpawned", 2, L->id, e, 0);
			if (L->barricades[e] > 0)
				return X("BarricadeDestroyed", 2, L->id, e, 0);
			if (L->colony && m->children > 0)
				return X("ChildKilled", 0, 0, 0, 0);
			int low = -1;
			for (int i = 0; i < m->nchars; i++)
				if (m->chars[i].alive && m->chars[i].loc == l &&
				    (low < 0 || m->chars[i].status < m->chars[low].status))
					low = i;
			if (low >= 0)
				return X("SurvivorKilled", 1, m->chars[low].id, 0, 0);
			k->zk++; /* nothing happens */
			continue;
		}
		case MODEL_CP_GOAL:
			if (goal_reached(m))
				return X("GameEnd", 1, 1, 0, 0);
			if (is_last_round(m))
				return X("GameEnd", 1, 0, 0, 0);
			return X("NextRound", 1, m->revised ? m->round - 1 : m->round + 1, 0, 0);
		default:
			return X("(nothing)", 0, 0, 0, 0);
		}
	}
}

static void cp_advance(struct model *m)
{
	struct model_checks *k = &m->chk;
	switch (k->cp) {
	case MODEL_CP_FOOD:
		k->cp = MODEL_CP_STARV;
		break;
	case MODEL_CP_STARV:
		k->cp = MODEL_CP_WASTE;
		break;
	case MODEL_CP_WASTE:
		k->cp = MODEL_CP_CRISIS;
		break;
	case MODEL_CP_CRISIS:
		k->cp = MODEL_CP_ZOMBIES;
		k->zi = 0;
		k->zn = -1;
		break;
	case MODEL_CP_ZOMBIES:
		k->zk++;
		break;
	default:
		k->cp = MODEL_CP_OFF;
		break;
	}
}

/* Check ev against what must come next; sets chk.order to 1 when it was
 * queued, 2 when it was a colony phase step, 0 when it is free. */
static int check_order(struct model *m, const struct model_event *ev)
{
	struct model_checks *k = &m->chk;
	enum model_event_type t = ev->type;
	k->order = 0;
	if (t == MEV_COMMAND_FAILED || (t == MEV_GAME_END && m->moral <= 0))
		return MODEL_OK;
	while (k->nexq > 0 && moot_respawn(m, &k->exq[0]))
		pop_expect(m);
	if (k->nexq > 0) {
		struct model_expect x = k->exq[0];
		if (x.kind == MODEL_EXP_RESPAWN && !unused_exists(m))
			x = X("Left", 1, x.a[0], 0, 0);
		if (match(m, ev, &x, "order") != MODEL_OK)
			return MODEL_VIOLATION;
		if (k->exq[0].kind == MODEL_EXP_RESPAWN)
			drop_hand(m, x.a[0]); /* the last character's death took the hand */
		pop_expect(m);
		k->order = 1;
		return MODEL_OK;
	}
	if (k->cp != MODEL_CP_OFF) {
		struct model_expect x = cp_expect(m);
		if (match(m, ev, &x, "colony phase") != MODEL_OK)
			return MODEL_VIOLATION;
		k->order = 2;
		return MODEL_OK;
	}
	switch (t) {
	case MEV_ZOMBIE_SPAWNED:
	case MEV_BARRICADE_DESTROYED:
	case MEV_CHILD_KILLED:
	case MEV_STARVATION_TOKEN_ADDED:
	case MEV_FOOD_CHANGED:
	case MEV_MORAL_CHANGED:
	case MEV_CRISIS:
	case MEV_DIE_ROLLED: {
		char got[128];
		describe_args(ev, got, sizeof got);
		FAIL("%s out of place (not a consequence of the event before it)", got);
	}
	case MEV_NEXT_ROUND:
		if (m->rounds_seen > 0)
			FAIL("NextRound outside the colony phase");
		break;
	case MEV_GAME_END:
		FAIL("GameEnd(%s) outside the colony phase's goal check with morale %d",
		     ev->v[0] ? "true" : "false", m->moral);
	default:
		break;
	}
	return MODEL_OK;
}

/* ---- the handlers ----------------------------------------------------------------------- */

static int fold_config(struct model *m, const struct model_event *ev)
{
	if (m->got_config)
		FAIL("a second Config");
	if (!ev->s || !*ev->s)
		FAIL("Config with an empty text");
	m->got_config = true;
	return load_config(m, ev->s);
}

static int fold_act_now(struct model *m, const struct model_event *ev)
{
	(void)ev;
	if (!m->game_started || m->me < 0)
		FAIL("ActNow before the game started");
	if (model_living_of(m, m->me) == 0)
		FAIL("ActNow but we have no living character");
	m->my_turn = true;
	return MODEL_OK;
}

/* The player whose selection runs: the first one still in the game who
 * has no character yet (rules.md section 4), or -1. */
static int selecting_player(const struct model *m)
{
	for (int p = 0; p < m->nplayers; p++) {
		bool has = false;
		for (int i = 0; i < m->nchars && !has; i++)
			has = m->chars[i].spawned && m->chars[i].owner == p;
		if (m->player_in[p] && !has)
			return p;
	}
	return -1;
}

static int fold_characters(struct model *m, const struct model_event *ev)
{
	if (!m->game_started)
		FAIL("Characters before GameStarted");
	if (!m->me_sure && m->my_name) {
		/* the offer goes to the selecting player alone: that is us */
		m->me = selecting_player(m);
		m->me_sure = m->me >= 0;
		if (!m->me_sure)
			FAIL("Characters, but every player has chosen");
	}
	for (int i = 0; i < 4; i++) {
		int c = need_chr(m, ev, ev->v[i], false);
		if (c < 0)
			return c;
		if (m->chars[c].spawned)
			FAIL("Characters offers character %d, which is already in the game",
			     ev->v[i]);
		for (int j = 0; j < i; j++)
			if (ev->v[j] == ev->v[i])
				FAIL("Characters offers character %d twice", ev->v[i]);
		m->offered[i] = ev->v[i];
	}
	m->selecting = true;
	return MODEL_OK;
}

static int fold_command_failed(struct model *m, const struct model_event *ev)
{
	if (!ev->s || !*ev->s)
		FAIL("CommandFailed with an empty message");
	if (!m->chk.other_failure)
		m->chk.pend = MODEL_PEND_NONE;
	m->chk.other_failure = false;
	return MODEL_OK;
}

static int fold_registration_aborted(struct model *m, const struct model_event *ev)
{
	(void)ev;
	if (m->game_started)
		FAIL("RegistrationAborted after GameStarted");
	m->result = MODEL_ABORTED;
	return MODEL_OK;
}

static int fold_player(struct model *m, const struct model_event *ev)
{
	int p = ev->v[0];
	if (!m->game_started)
		FAIL("Player before GameStarted");
	if (p != m->nplayers || p >= MODEL_MAX_PLAYERS || p >= m->max_players)
		FAIL("Player %d out of order (expected %d of at most %d)", p, m->nplayers,
		     m->max_players);
	m->player_names[p] = strdup(ev->s ? ev->s : "");
	if (!m->player_names[p])
		return internal(m, "out of memory");
	m->player_in[p] = true;
	if (!m->me_sure && m->my_name && strcmp(m->player_names[p], m->my_name) == 0) {
		/* a name given twice says nothing: our Characters offer will */
		m->name_twice = m->name_twice || m->me >= 0;
		m->me = m->name_twice ? -1 : p;
	}
	m->nplayers++;
	return MODEL_OK;
}

static int fold_game_started(struct model *m, const struct model_event *ev)
{
	(void)ev;
	if (m->game_started)
		FAIL("a second GameStarted");
	m->game_started = true;
	return MODEL_OK;
}

static int fold_character_spawned(struct model *m, const struct model_event *ev)
{
	int p = ev->v[0];
	if (need_player(m, ev, p) != MODEL_OK)
		return MODEL_VIOLATION;
	int c = need_chr(m, ev, ev->v[1], false);
	if (c < 0)
		return c;
	if (m->me < 0 && m->my_name && !m->name_twice) /* without a name: a watcher's model */
		FAIL("CharacterSpawned before our own Player event");
	if (m->chars[c].spawned)
		FAIL("character %d spawned twice", ev->v[1]);
	if (!m->player_in[p])
		FAIL("character %d spawned for player %d, who left", ev->v[1], p);
	struct model_character *ch = &m->chars[c];
	ch->spawned = ch->alive = true;
	ch->owner = p;
	ch->loc = m->colony;
	if (m->nspawned < m->nchars)
		m->spawn_order[m->nspawned++] = c;
	if (p == m->me)
		m->selecting = false;
	/* a new character for our last one, in the turns: our turn (if it was
	 * ours) has ended (a search's new character comes unannounced) */
	if (p == m->me && m->chk.order == 1 && m->rounds_seen > 0)
		m->my_turn = false;
	if (m->chk.order == 0 && m->rounds_seen == 0) {
		/* a selection: the higher id next, then five start cards */
		struct model_expect xs[6];
		xs[0] = X("CharacterSpawned", 1, p, ev->v[1], 0);
		xs[0].any_gt = true;
		for (int i = 1; i < 6; i++)
			xs[i] = X("CardDrawn", 1, p, 0, 0);
		return expect_front(m, xs, 6);
	}
	return MODEL_OK;
}

static int fold_zombie_spawned(struct model *m, const struct model_event *ev)
{
	int l = need_loc(m, ev, ev->v[0]);
	if (l < 0 || need_entrance(m, ev, l, ev->v[1]) != MODEL_OK)
		return MODEL_VIOLATION;
	m->locs[l].zombies[ev->v[1]]++;
	return check_entrance(m, ev, l, ev->v[1]);
}

static int fold_child_spawned(struct model *m, const struct model_event *ev)
{
	(void)ev;
	m->children++;
	return MODEL_OK;
}

static int fold_card_drawn(struct model *m, const struct model_event *ev)
{
	struct model_checks *k = &m->chk;
	int p = ev->v[0];
	if (need_player(m, ev, p) != MODEL_OK)
		return MODEL_VIOLATION;
	int ci = need_card(m, ev, ev->v[1]);
	if (ci < 0)
		return ci;
	struct model_card *cd = &m->cards[ci];
	if (cd->drawn)
		FAIL("card %d drawn twice", ev->v[1]);
	cd->drawn = true;
	cd->holder = p;
	if (k->searched_loc >= 0) {
		if (p != m->chars[k->search_char].owner)
			FAIL("a search by character %d drew card %d for player %d",
			     m->chars[k->search_char].id, ev->v[1], p);
		if (cd->deck != k->searched_loc)
			FAIL("search of location %d drew card %d from another pile",
			     m->locs[k->searched_loc].id, ev->v[1]);
		m->locs[k->searched_loc].deck_left--;
		k->search_draws++;
	} else if (cd->deck != m->colony) {
		FAIL("card %d drawn without a search, but it is not a start card", ev->v[1]);
	}
	return MODEL_OK;
}

static int fold_game_end(struct model *m, const struct model_event *ev)
{
	if (!m->game_started)
		FAIL("GameEnd before GameStarted");
	if (m->chk.expect_game_lost && ev->v[0])
		FAIL("morale is %d but the game is won", m->moral);
	m->chk.expect_game_lost = false;
	m->chk.nexq = 0;
	m->chk.cp = MODEL_CP_OFF;
	m->colony_phase = false;
	m->my_turn = false;
	m->result = ev->v[0] ? MODEL_WON : MODEL_LOST;
	return MODEL_OK;
}

static int fold_next_round(struct model *m, const struct model_event *ev)
{
	int want = m->revised ? m->rounds - m->rounds_seen : m->rounds_seen + 1;
	if (ev->v[0] != want)
		FAIL("NextRound %d, expected %d", ev->v[0], want);
	m->rounds_seen++;
	m->round = ev->v[0];
	if (m->round < 1 || m->round > m->rounds)
		FAIL("NextRound %d of %d", m->round, m->rounds);
	int rc = expect1(m, X("Crisis", 0, 0, 0, 0));
	if (rc != MODEL_OK)
		return rc;
	m->ndice = 0;
	memset(m->nrolled, 0, sizeof m->nrolled);
	m->my_turn = false;
	m->crisis = -1;
	m->cleaned_this_round = false;
	m->colony_phase = false;
	for (int i = 0; i < m->nchars; i++) {
		struct model_character *ch = &m->chars[i];
		ch->moved = false;
		ch->uses = 0;
		for (int k = 0; k < ch->nequip; k++)
			ch->equip_spent[k] = false;
	}
	return MODEL_OK;
}

static int fold_crisis(struct model *m, const struct model_event *ev)
{
	/* crisis ids need not be unique: the first with that id not drawn yet */
	m->crisis = -1;
	for (int i = 0; i < m->ncrises && m->crisis < 0; i++) {
		bool drawn = false;
		for (int r = 0; r < m->rounds_seen - 1; r++)
			drawn |= m->drawn[r] == i;
		if (m->crises[i].id == ev->v[0] && !drawn)
			m->crisis = i;
	}
	if (m->crisis < 0)
		FAIL("unknown crisis %d (or drawn before)", ev->v[0]);
	if (m->rounds_seen < 1 || m->rounds_seen > m->ncrises)
		FAIL("Crisis %d in round %d of %d crises", ev->v[0], m->rounds_seen, m->ncrises);
	m->drawn[m->rounds_seen - 1] = m->crisis;
	m->contributed = 0;
	/* the dice of the round: living characters + 1 per player in the game */
	struct model_expect dice[MODEL_MAX_EXPECT];
	int nd = 0;
	for (int p = 0; p < m->nplayers; p++) {
		if (!m->player_in[p])
			continue;
		for (int k = model_living_of(m, p) + 1; k > 0 && nd < MODEL_MAX_EXPECT - 8; k--)
			dice[nd++] = X("DieRolled", 1, p, 0, 0);
	}
	m->chk.round_dice = nd;
	return expect_front(m, dice, nd);
}

static int fold_die_rolled(struct model *m, const struct model_event *ev)
{
	if (need_player(m, ev, ev->v[0]) != MODEL_OK)
		return MODEL_VIOLATION;
	if (ev->v[1] < 1 || ev->v[1] > 6)
		FAIL("DieRolled value %d", ev->v[1]);
	if (ev->v[0] == m->me && m->ndice < MODEL_MAX_DICE)
		m->dice[m->ndice++] = ev->v[1];
	int p = ev->v[0];
	if (m->chk.round_dice > 0) {
		m->chk.round_dice--;
		if (m->nrolled[p] < MODEL_MAX_DICE)
			m->rolled[p][m->nrolled[p]++] = ev->v[1];
	}
	return MODEL_OK;
}

static int fold_ability_used(struct model *m, const struct model_event *ev)
{
	int c = need_chr(m, ev, ev->v[0], true);
	if (c < 0)
		return c;
	struct model_character *ch = &m->chars[c];
	int rc = MODEL_OK;
	ch->uses++;
	switch (ch->ability) {
	case MODEL_AB_FEED:
		if (ev->has[1])
			FAIL("AbilityUsed FEED with a target");
		m->food += ch->ab_num;
		break;
	case MODEL_AB_HEAL: {
		if (!ev->has[1])
			FAIL("AbilityUsed HEAL without a target");
		int t = need_chr(m, ev, ev->v[1], true);
		if (t < 0)
			return t;
		if (m->chars[t].loc != ch->loc)
			FAIL("HEAL of character %d at another location", ev->v[1]);
		if (m->chars[t].wounds + m->chars[t].frost == 0)
			FAIL("HEAL of uninjured character %d", ev->v[1]);
		heal(m, t);
		break;
	}
	case MODEL_AB_BARRICADE: {
		if (!ev->has[1])
			FAIL("AbilityUsed BARRICADE without a target");
		int l = ch->loc, e = ev->v[1];
		if (need_entrance(m, ev, l, e) != MODEL_OK)
			return MODEL_VIOLATION;
		int space = 3 - m->locs[l].zombies[e] - m->locs[l].barricades[e];
		if (space <= 0)
			FAIL("BARRICADE ability at a full entrance");
		m->locs[l].barricades[e] += space < ch->ab_num ? space : ch->ab_num;
		break;
	}
	case MODEL_AB_KILL: {
		if (!ev->has[1])
			FAIL("AbilityUsed KILL without a target");
		int e = ev->v[1];
		if (need_entrance(m, ev, ch->loc, e) != MODEL_OK)
			return MODEL_VIOLATION;
		if (ch->loc != ch->ab_loc)
			FAIL("KILL ability used away from its location");
		if (m->locs[ch->loc].zombies[e] == 0)
			FAIL("KILL ability at an entrance without zombies");
		if (ch->ab_children && m->children == 0)
			FAIL("KILL ability (children) used without a child in the colony");
		int z = m->locs[ch->loc].zombies[e];
		if (z > ch->ab_num)
			z = ch->ab_num;
		struct model_expect xs[3];
		for (int i = 0; i < z && i < 3; i++)
			xs[i] = X("ZombieKilled", 3, ch->id, m->locs[ch->loc].id, e);
		rc = expect_front(m, xs, z < 3 ? z : 3);
		if (m->chk.pend == MODEL_PEND_KILL && m->chk.pend_char == c)
			use_die(m, ch->ab_die);
		break;
	}
	default:
		FAIL("AbilityUsed for character %d, whose ability is passive", ev->v[0]);
	}
	m->chk.pend = MODEL_PEND_NONE;
	return rc;
}

static int fold_barricaded(struct model *m, const struct model_event *ev)
{
	int c = need_chr(m, ev, ev->v[0], true);
	if (c < 0)
		return c;
	int l = need_loc(m, ev, ev->v[1]);
	if (l < 0 || need_entrance(m, ev, l, ev->v[2]) != MODEL_OK)
		return MODEL_VIOLATION;
	if (m->chars[c].loc != l)
		FAIL("Barricaded at location %d, character %d is elsewhere", ev->v[1], ev->v[0]);
	m->locs[l].barricades[ev->v[2]]++;
	if (check_entrance(m, ev, l, ev->v[2]) != MODEL_OK)
		return MODEL_VIOLATION;
	if (m->chk.pend == MODEL_PEND_BARRICADE && m->chk.pend_char == c) {
		int h = m->revised ? model_unspent_equip(m, c, MODEL_CARD_HAMMER) : -1;
		if (h >= 0)
			m->chars[c].equip_spent[h] = true;
		else
			use_die(m, 1);
	}
	m->chk.pend = MODEL_PEND_NONE;
	return MODEL_OK;
}

static int fold_moved(struct model *m, const struct model_event *ev)
{
	int c = need_chr(m, ev, ev->v[0], true);
	if (c < 0)
		return c;
	int l = need_loc(m, ev, ev->v[1]);
	if (l < 0 || move_char(m, ev, c, l) != MODEL_OK)
		return MODEL_VIOLATION;
	if (!m->revised && ev->v[2]) {
		/* base: the fuel card with the lowest id goes to the waste */
		int owner = m->chars[c].owner, best = -1;
		for (int i = 0; i < m->ncards; i++)
			if (m->cards[i].holder == owner && m->cards[i].type == MODEL_CARD_FUEL &&
			    (best < 0 || m->cards[i].id < m->cards[best].id))
				best = i;
		if (best < 0)
			FAIL("Moved with fuel, but player %d holds no fuel card", owner);
		m->cards[best].holder = -1;
		expect_to_waste(m, best);
		return expect1(m, X("WasteChanged", 0, 0, 0, 0));
	}
	return MODEL_OK;
}

static int injure(struct model *m, const struct model_event *ev, bool frost)
{
	int c = need_chr(m, ev, ev->v[0], true);
	if (c < 0)
		return c;
	struct model_character *ch = &m->chars[c];
	if (ch->wounds + ch->frost >= 3)
		FAIL("%s: character %d already has 3 injuries and should be dead", ev->name,
		     ch->id);
	if (frost)
		ch->frost++;
	else
		ch->wounds++;
	if (ch->wounds + ch->frost >= 3)
		return expect1(m, X("SurvivorKilled", 1, ch->id, 0, 0));
	return MODEL_OK;
}

static int fold_frostbitten(struct model *m, const struct model_event *ev)
{
	return injure(m, ev, true);
}

static int fold_wounded(struct model *m, const struct model_event *ev)
{
	return injure(m, ev, false);
}

static int fold_bitten(struct model *m, const struct model_event *ev)
{
	if (ev->has[0]) {
		int c = need_chr(m, ev, ev->v[0], true);
		if (c < 0)
			return c;
		int q = m->chars[c].owner;
		kill_char(m, c);
		m->chars[c].bitten = true;
		return expect2(m, X("MoralChanged", 2, -1, MODEL_MORAL_CHARACTER_DIED, 0),
		               RESPAWN(q));
	}
	int rc = expect1(m, X("MoralChanged", 2, -1, MODEL_MORAL_CHARACTER_DIED, 0));
	if (rc != MODEL_OK)
		return rc;
	if (!m->revised)
		FAIL("a child was bitten in the base edition");
	if (--m->children < 0)
		FAIL("a child was bitten, but there is none");
	return MODEL_OK;
}

static int fold_contributed(struct model *m, const struct model_event *ev)
{
	if (need_player(m, ev, ev->v[0]) != MODEL_OK)
		return MODEL_VIOLATION;
	int k = need_card(m, ev, ev->v[1]);
	if (k < 0)
		return k;
	if (m->cards[k].holder != ev->v[0])
		FAIL("player %d contributed card %d, which it does not hold", ev->v[0], ev->v[1]);
	if (!model_crisis_accepts(m, m->cards[k].type))
		FAIL("card %d (%s) does not match the crisis", ev->v[1],
		     model_card_type_names[m->cards[k].type]);
	m->cards[k].holder = -1;
	m->contributed++;
	return MODEL_OK;
}

static int fold_card_used(struct model *m, const struct model_event *ev)
{
	const int *v = ev->v;
	int k = need_card(m, ev, v[0]);
	if (k < 0)
		return k;
	struct model_card *cd = &m->cards[k];
	int holder = cd->holder;
	if (holder < 0)
		FAIL("card %d used, but no one holds it", v[0]);
	cd->holder = -1;
	bool target = ev->has[1];
	int c = -1;
	if (target) {
		c = need_chr(m, ev, v[1], true);
		if (c < 0)
			return c;
		if (m->chars[c].owner != holder)
			FAIL("card %d used with character %d of another player", v[0], v[1]);
	}
	const char *tname = model_card_type_names[cd->type];
	switch (cd->type) {
	case MODEL_CARD_FOOD:
	case MODEL_CARD_STUFF:
		if (target)
			FAIL("%s card %d used with a target", tname, v[0]);
		if (cd->type == MODEL_CARD_STUFF && holder == m->me)
			use_die(m, 1);
		expect_to_waste(m, k);
		return expect2(m, X("WasteChanged", 0, 0, 0, 0),
		               cd->type == MODEL_CARD_FOOD
		                       ? X("FoodChanged", 2, cd->amount, MODEL_FOOD_ADDED, 0)
		                       : X("DieRolled", 1, holder, 0, 0));
	case MODEL_CARD_MEDICINE: {
		if (!target)
			FAIL("medicine %d used without a target", v[0]);
		int t = need_chr(m, ev, v[2], true);
		if (t < 0)
			return t;
		if (m->chars[t].loc != m->chars[c].loc ||
		    m->chars[t].wounds + m->chars[t].frost == 0)
			FAIL("medicine %d on character %d, not injured or elsewhere", v[0], v[2]);
		heal(m, t);
		expect_to_waste(m, k);
		return expect1(m, X("WasteChanged", 0, 0, 0, 0));
	}
	case MODEL_CARD_LOCK:
	case MODEL_CARD_SCISSORS: {
		if (!target)
			FAIL("%s %d used without a target", tname, v[0]);
		int l = m->chars[c].loc;
		if (need_entrance(m, ev, l, v[2]) != MODEL_OK)
			return MODEL_VIOLATION;
		if (cd->type == MODEL_CARD_LOCK) {
			m->locs[l].barricades[v[2]]++;
			if (check_entrance(m, ev, l, v[2]) != MODEL_OK)
				return MODEL_VIOLATION;
		} else if (m->locs[l].zombies[v[2]] == 0) {
			FAIL("scissors at an entrance without zombies");
		}
		expect_to_waste(m, k);
		if (cd->type == MODEL_CARD_LOCK)
			return expect1(m, X("WasteChanged", 0, 0, 0, 0));
		return expect2(m, X("WasteChanged", 0, 0, 0, 0),
		               X("ZombieKilled", 3, v[1], m->locs[l].id, v[2]));
	}
	case MODEL_CARD_FUEL: {
		if (!m->revised)
			FAIL("fuel card %d played in the base edition", v[0]);
		if (!target)
			FAIL("fuel %d used without a target", v[0]);
		int l = need_loc(m, ev, v[2]);
		if (l < 0 || move_char(m, ev, c, l) != MODEL_OK)
			return MODEL_VIOLATION;
		expect_to_waste(m, k);
		return expect1(m, X("WasteChanged", 0, 0, 0, 0));
	}
	default: {
		if (!m->revised)
			FAIL("equipment card %d played in the base edition", v[0]);
		if (!target)
			FAIL("equipment %d used without a target", v[0]);
		int t = need_chr(m, ev, v[2], true);
		if (t < 0)
			return t;
		if (m->chars[t].loc != m->chars[c].loc)
			FAIL("equipment %d given to character %d at another location", v[0], v[2]);
		struct model_character *tc = &m->chars[t];
		if (tc->nequip < MODEL_MAX_EQUIP) {
			tc->equip[tc->nequip] = k;
			tc->equip_spent[tc->nequip] = false;
			tc->nequip++;
		}
		return MODEL_OK;
	}
	}
}

static int fold_food_changed(struct model *m, const struct model_event *ev)
{
	int amount = ev->v[0], reason = ev->v[1];
	if ((reason == MODEL_FOOD_ADDED && amount <= 0) ||
	    (reason == MODEL_FOOD_CONSUMED && amount >= 0))
		FAIL("FoodChanged %d with reason %s", amount, model_food_reasons[reason]);
	m->food += amount;
	if (m->food < 0)
		FAIL("food dropped to %d", m->food);
	return MODEL_OK;
}

static int fold_colony_phase_started(struct model *m, const struct model_event *ev)
{
	(void)ev;
	if (m->chk.cp != MODEL_CP_OFF || m->chk.order != 0)
		FAIL("ColonyPhaseStarted inside the colony phase");
	m->chk.cp = MODEL_CP_FOOD;
	m->chk.cp_need = model_food_need(m);
	m->colony_phase = true;
	m->ndice = 0;
	m->my_turn = false;
	return MODEL_OK;
}

static int fold_starvation_token_added(struct model *m, const struct model_event *ev)
{
	(void)ev;
	m->tokens++;
	return MODEL_OK;
}

static int fold_moral_changed(struct model *m, const struct model_event *ev)
{
	m->moral += ev->v[0];
	if (m->moral <= 0)
		m->chk.expect_game_lost = true;
	return MODEL_OK;
}

static int fold_survivor_killed(struct model *m, const struct model_event *ev)
{
	int c = need_chr(m, ev, ev->v[0], true);
	if (c < 0)
		return c;
	int q = m->chars[c].owner;
	kill_char(m, c);
	return expect2(m, X("MoralChanged", 2, -1, MODEL_MORAL_CHARACTER_DIED, 0), RESPAWN(q));
}

static int fold_child_killed(struct model *m, const struct model_event *ev)
{
	(void)ev;
	int rc = expect1(m, X("MoralChanged", 2, -1, MODEL_MORAL_CHARACTER_DIED, 0));
	if (rc != MODEL_OK)
		return rc;
	if (--m->children < 0)
		FAIL("a child was killed, but there is none");
	return MODEL_OK;
}

static int fold_barricade_destroyed(struct model *m, const struct model_event *ev)
{
	int l = need_loc(m, ev, ev->v[0]);
	if (l < 0 || need_entrance(m, ev, l, ev->v[1]) != MODEL_OK)
		return MODEL_VIOLATION;
	m->locs[l].barricades[ev->v[1]]--;
	return check_entrance(m, ev, l, ev->v[1]);
}

static int fold_waste_changed(struct model *m, const struct model_event *ev)
{
	struct model_checks *k = &m->chk;
	int old = m->waste;
	m->waste = m->revised ? m->waste + ev->v[0] : ev->v[0];
	if (m->waste < 0)
		FAIL("the waste pile dropped to %d", m->waste);
	if (k->expect_waste_inc && m->waste != old + 1)
		FAIL("WasteChanged from %d to %d where one card was added", old, m->waste);
	if (!k->expect_waste_inc && m->waste >= old)
		FAIL("WasteChanged from %d to %d without a card played", old, m->waste);
	if (m->waste > m->ncards)
		FAIL("WasteChanged to %d, there are %d cards", m->waste, m->ncards);
	if (k->expect_waste_inc)
		m->waste_pile[old] = k->waste_card; /* a cleaning takes cards off the top */
	if (!k->expect_waste_inc && k->pend == MODEL_PEND_CLEAN) {
		int c = k->pend_char;
		int swab = m->revised ? model_unspent_equip(m, c, MODEL_CARD_SWAB) : -1;
		if (swab >= 0)
			m->chars[c].equip_spent[swab] = true;
		else if (!(m->revised && m->chars[c].ability == MODEL_AB_TRASH))
			use_die(m, 1);
		m->cleaned_this_round = true;
		k->pend = MODEL_PEND_NONE;
	}
	k->expect_waste_inc = false;
	return MODEL_OK;
}

static int fold_zombie_killed(struct model *m, const struct model_event *ev)
{
	int c = need_chr(m, ev, ev->v[0], true);
	if (c < 0)
		return c;
	int l = need_loc(m, ev, ev->v[1]);
	if (l < 0 || need_entrance(m, ev, l, ev->v[2]) != MODEL_OK)
		return MODEL_VIOLATION;
	if (m->chars[c].loc != l)
		FAIL("ZombieKilled at location %d, character %d is elsewhere", ev->v[1], ev->v[0]);
	m->locs[l].zombies[ev->v[2]]--;
	if (check_entrance(m, ev, l, ev->v[2]) != MODEL_OK)
		return MODEL_VIOLATION;
	if (m->chk.pend == MODEL_PEND_ATTACK && m->chk.pend_char == c) {
		use_die(m, m->chars[c].attack);
		int colt = m->revised ? model_unspent_equip(m, c, MODEL_CARD_COLT) : -1;
		if (colt >= 0)
			m->chars[c].equip_spent[colt] = true;
		m->chk.pend = MODEL_PEND_NONE;
	}
	return MODEL_OK;
}

static int fold_searched(struct model *m, const struct model_event *ev)
{
	struct model_checks *k = &m->chk;
	int c = need_chr(m, ev, ev->v[0], true);
	if (c < 0)
		return c;
	int l = need_loc(m, ev, ev->v[1]);
	if (l < 0)
		return l;
	if (m->chars[c].loc != l)
		FAIL("Searched at location %d, character %d is elsewhere", ev->v[1], ev->v[0]);
	if (m->locs[l].colony)
		FAIL("Searched in the colony");
	if (m->locs[l].deck_left <= 0)
		FAIL("Searched at location %d, whose pile is empty", ev->v[1]);
	k->searched_loc = l;
	k->search_draws = 0;
	k->search_char = c;
	k->search_bp = -1;
	k->search_ab = false;
	/* how many cards it must draw: blueprint, else the search ability, else 1 */
	const struct model_character *ch = &m->chars[c];
	int n = 1;
	for (int i = ch->nequip - 1; m->revised && i >= 0; i--) {
		const struct model_card *bp = &m->cards[ch->equip[i]];
		if (bp->type == MODEL_CARD_BLUEPRINT && !ch->equip_spent[i] && bp->bp_loc == l) {
			k->search_bp = i;
			break;
		}
	}
	if (k->search_bp >= 0) {
		n = 2;
	} else if (ch->ability == MODEL_AB_SEARCH && ch->ab_loc == l && ch->uses < ch->ab_max) {
		n = ch->ab_num + 1;
		k->search_ab = true;
	}
	k->search_k = n < m->locs[l].deck_left ? n : m->locs[l].deck_left;
	if (k->pend == MODEL_PEND_SEARCH && k->pend_char == c)
		use_die(m, ch->search);
	k->pend = MODEL_PEND_NONE;
	return MODEL_OK;
}

/* The end of a search (any event but CardDrawn after Searched's cards). */
static int finish_search(struct model *m, const struct model_event *ev)
{
	struct model_checks *k = &m->chk;
	struct model_character *sc = &m->chars[k->search_char];
	if (k->search_draws == 0) {
		if (ev->type != MEV_CHARACTER_SPAWNED || ev->v[0] != sc->owner)
			FAIL("Searched by character %d: neither a card nor a new character "
			     "followed (%s)",
			     sc->id, ev->name);
	} else if (k->search_draws != k->search_k) {
		FAIL("the search by character %d drew %d cards, expected %d", sc->id,
		     k->search_draws, k->search_k);
	} else if (k->search_bp >= 0) {
		sc->equip_spent[k->search_bp] = true;
	} else if (k->search_ab) {
		sc->uses++;
	}
	k->searched_loc = -1;
	return MODEL_OK;
}

static int fold_left(struct model *m, const struct model_event *ev)
{
	int p = ev->v[0];
	if (need_player(m, ev, p) != MODEL_OK)
		return MODEL_VIOLATION;
	if (!m->player_in[p])
		FAIL("player %d left twice", p);
	m->player_in[p] = false;
	drop_hand(m, p);
	/* its characters die in descending social status */
	struct model_expect xs[64];
	int nx = 0, above = INT_MAX;
	while (nx < 64) {
		int best = -1;
		for (int i = 0; i < m->nchars; i++) {
			const struct model_character *ch = &m->chars[i];
			if (ch->alive && ch->owner == p && ch->status < above &&
			    (best < 0 || ch->status > m->chars[best].status))
				best = i;
		}
		if (best < 0)
			break;
		above = m->chars[best].status;
		xs[nx++] = X("SurvivorKilled", 1, m->chars[best].id, 0, 0);
	}
	if (p == m->me)
		m->my_turn = false;
	return expect_front(m, xs, nx);
}

/* Our Session line (sent right after our Config): our player id. */
static int fold_session(struct model *m, const struct model_event *ev)
{
	int p = ev->v[0];
	if (!m->my_name)
		FAIL("Session on a watcher's connection");
	if (p < 0 || p >= m->max_players || p >= MODEL_MAX_PLAYERS)
		FAIL("Session: player %d, the game has at most %d", p, m->max_players);
	if (m->me_sure && m->me != p)
		FAIL("Session: player %d, but we are player %d", p, m->me);
	if (!ev->s || strlen(ev->s) != 64 || strspn(ev->s, "0123456789abcdef") != 64)
		FAIL("Session: the secret is not 64 lowercase hex digits");
	m->me = p;
	m->me_sure = true;
	return MODEL_OK;
}

/* ---- the table -------------------------------------------------------------------------- */

/* One parameter of an event, from its row in sopra/event_table.h. */
struct model_param {
	const char *key;
	enum sopra_event_kind kind;
	enum sopra_event_presence presence;
};

/* Every event's name and parameters in protocol order (ended by a NULL
 * key), from the server's event table. */
struct model_event_spec {
	const char *name;
	struct model_param p[5];
};

static const struct model_event_spec specs[MEV_COUNT] = {
#define EPARAM(kind, key, presence)        {key, SOPRA_EVENT_##kind, presence},
#define MODEL_EVENT_SPEC(id, name, params) [MEV_##id] = {name, {SOPRA_EVENT_PARAMS params{NULL}}},
        SOPRA_EVENTS(MODEL_EVENT_SPEC)
#undef MODEL_EVENT_SPEC
#undef EPARAM
};

/* The function that folds each event into the board. */
static int (*const folds[MEV_COUNT])(struct model *m, const struct model_event *ev) = {
        [MEV_CONFIG] = fold_config,
        [MEV_ACT_NOW] = fold_act_now,
        [MEV_CHARACTERS] = fold_characters,
        [MEV_COMMAND_FAILED] = fold_command_failed,
        [MEV_REGISTRATION_ABORTED] = fold_registration_aborted,
        [MEV_PLAYER] = fold_player,
        [MEV_GAME_STARTED] = fold_game_started,
        [MEV_CHARACTER_SPAWNED] = fold_character_spawned,
        [MEV_ZOMBIE_SPAWNED] = fold_zombie_spawned,
        [MEV_CHILD_SPAWNED] = fold_child_spawned,
        [MEV_CARD_DRAWN] = fold_card_drawn,
        [MEV_GAME_END] = fold_game_end,
        [MEV_NEXT_ROUND] = fold_next_round,
        [MEV_CRISIS] = fold_crisis,
        [MEV_DIE_ROLLED] = fold_die_rolled,
        [MEV_ABILITY_USED] = fold_ability_used,
        [MEV_BARRICADED] = fold_barricaded,
        [MEV_MOVED] = fold_moved,
        [MEV_FROSTBITTEN] = fold_frostbitten,
        [MEV_WOUNDED] = fold_wounded,
        [MEV_BITTEN] = fold_bitten,
        [MEV_CONTRIBUTED] = fold_contributed,
        [MEV_CARD_USED] = fold_card_used,
        [MEV_FOOD_CHANGED] = fold_food_changed,
        [MEV_COLONY_PHASE_STARTED] = fold_colony_phase_started,
        [MEV_STARVATION_TOKEN_ADDED] = fold_starvation_token_added,
        [MEV_MORAL_CHANGED] = fold_moral_changed,
        [MEV_SURVIVOR_KILLED] = fold_survivor_killed,
        [MEV_CHILD_KILLED] = fold_child_killed,
        [MEV_BARRICADE_DESTROYED] = fold_barricade_destroyed,
        [MEV_WASTE_CHANGED] = fold_waste_changed,
        [MEV_ZOMBIE_KILLED] = fold_zombie_killed,
        [MEV_SEARCHED] = fold_searched,
        [MEV_LEFT] = fold_left,
        [MEV_SESSION] = fold_session,
};

const char *model_event_name(enum model_event_type t)
{
	return (unsigned)t < MEV_COUNT ? specs[t].name : NULL;
}

/* ---- decoding --------------------------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
decode_fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return MODEL_VIOLATION;
}

/* The index in names[] (n of them) of the wire name s, or -1. */
static int reason_index(const char *const *names, int n, const char *s)
{
	for (int k = 0; k < n; k++)
		if (strcmp(names[k], s) == 0)
			return k;
	return -1;
}

/* Every member of root is a parameter of the event (or "event"). */
static int check_members(const cJSON *root, const struct model_event_spec *h, char *err,
                         size_t errlen)
{
	for (const cJSON *it = root->child; it; it = it->next) {
		if (!it->string)
			return decode_fail(err, errlen, "%s: a member without a name", h->name);
		if (strcmp(it->string, "event") == 0)
			continue;
		bool known = false;
		for (const struct model_param *ps = h->p; ps->key; ps++)
			if (strcmp(ps->key, it->string) == 0)
				known = true;
		if (!known)
			return decode_fail(err, errlen, "%s: unexpected parameter \"%.64s\"",
			                   h->name, it->string);
	}
	return MODEL_OK;
}

/* Decode the value it of parameter i (ps) into ev. */
static int decode_value(const cJSON *it, const struct model_event_spec *h, int i,
                        struct model_event *ev, char *err, size_t errlen)
{
	const struct model_param *ps = &h->p[i];
	switch (ps->kind) {
	case SOPRA_EVENT_INT:
		if (!cJSON_IsNumber(it) || !(it->valuedouble >= (double)INT_MIN) ||
		    !(it->valuedouble <= (double)INT_MAX) ||
		    it->valuedouble != (double)(int)it->valuedouble)
			return decode_fail(err, errlen, "%s: parameter %s is not an integer",
			                   h->name, ps->key);
		ev->v[i] = (int)it->valuedouble;
		return MODEL_OK;
	case SOPRA_EVENT_BOOL:
		if (!cJSON_IsBool(it))
			return decode_fail(err, errlen, "%s: parameter %s is not a boolean",
			                   h->name, ps->key);
		ev->v[i] = cJSON_IsTrue(it);
		return MODEL_OK;
	case SOPRA_EVENT_STRING:
	case SOPRA_EVENT_FOOD_REASON:
	case SOPRA_EVENT_MORAL_REASON:
		break;
	}
	if (!cJSON_IsString(it) || !it->valuestring)
		return decode_fail(err, errlen, "%s: parameter %s is not a string", h->name,
		                   ps->key);
	if (ps->kind == SOPRA_EVENT_STRING) {
		ev->s = it->valuestring;
		return MODEL_OK;
	}
	ev->v[i] =
	        ps->kind == SOPRA_EVENT_FOOD_REASON
	                ? reason_index(model_food_reasons, MODEL_FOOD_REASON_COUNT, it->valuestring)
	                : reason_index(model_moral_reasons, MODEL_MORAL_REASON_COUNT,
	                               it->valuestring);
	if (ev->v[i] < 0)
		return decode_fail(err, errlen, "%s: unknown %s \"%.64s\"", h->name, ps->key,
		                   it->valuestring);
	return MODEL_OK;
}

/* check the members of root against the event's row */
static int decode_params(const struct model *m, const cJSON *root, const struct model_event_spec *h,
                         struct model_event *ev, char *err, size_t errlen)
{
	if (check_members(root, h, err, errlen) != MODEL_OK)
		return MODEL_VIOLATION;
	int npair = 0, npair_has = 0;
	for (int i = 0; h->p[i].key; i++) {
		const struct model_param *ps = &h->p[i];
		const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, ps->key);
		if (ps->presence == EVENT_PAIR) {
			npair++;
			if (it)
				npair_has++;
		}
		if (ps->presence == EVENT_BASE_ONLY) {
			if (m->revised && it)
				return decode_fail(
				        err, errlen,
				        "%s: parameter %s must be absent in the revised edition",
				        h->name, ps->key);
			if (!m->revised && !it)
				return decode_fail(err, errlen,
				                   "%s: parameter %s missing (base edition)",
				                   h->name, ps->key);
		}
		if (!it) {
			if (ps->presence == EVENT_ALWAYS)
				return decode_fail(err, errlen, "%s: parameter %s missing", h->name,
				                   ps->key);
			continue;
		}
		ev->has[i] = true;
		if (decode_value(it, h, i, ev, err, errlen) != MODEL_OK)
			return MODEL_VIOLATION;
	}
	if (npair_has != 0 && npair_has != npair)
		return decode_fail(err, errlen, "%s: characterId and target must come together",
		                   h->name);
	return MODEL_OK;
}

int model_decode(const struct model *m, const char *line, size_t len, struct model_event *ev,
                 char *err, size_t errlen)
{
	memset(ev, 0, sizeof *ev);
	int shown = len > 200 ? 200 : (int)len;
	if (len > 0 && line[len - 1] == '\r')
		return decode_fail(err, errlen, "an event line ends with CRLF");
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(line, len, &end, 0);
	if (!root)
		return decode_fail(err, errlen, "unparseable event line: %.*s", shown, line);
	if (end != line + len) {
		cJSON_Delete(root);
		return decode_fail(err, errlen, "garbage after the JSON object: %.*s", shown, line);
	}
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return decode_fail(err, errlen, "event line is not a JSON object: %.*s", shown,
		                   line);
	}
	const cJSON *jn = cJSON_GetObjectItemCaseSensitive(root, "event");
	if (!cJSON_IsString(jn) || !jn->valuestring) {
		cJSON_Delete(root);
		return decode_fail(err, errlen, "an event line without a string \"event\"");
	}
	int t = -1;
	for (int i = 0; i < MEV_COUNT; i++)
		if (strcmp(specs[i].name, jn->valuestring) == 0)
			t = i;
	if (t < 0) {
		decode_fail(err, errlen, "unknown event \"%.64s\"", jn->valuestring);
		cJSON_Delete(root);
		return MODEL_UNKNOWN_EVENT;
	}
	ev->type = (enum model_event_type)t;
	ev->name = specs[t].name;
	ev->json = root;
	int rc = decode_params(m, root, &specs[t], ev, err, errlen);
	if (rc != MODEL_OK)
		model_event_free(ev);
	return rc;
}

void model_event_free(struct model_event *ev)
{
	cJSON_Delete(ev->json);
	ev->json = NULL;
	ev->s = NULL;
}

/* ---- folding ---------------------------------------------------------------------------- */

static const char *result_name(const struct model *m)
{
	switch (m->result) {
	case MODEL_WON:
		return "win";
	case MODEL_LOST:
		return "lose";
	case MODEL_ABORTED:
		return "aborted";
	default:
		return "left";
	}
}

static int fold(struct model *m, const struct model_event *ev)
{
	struct model_checks *k = &m->chk;
	const char *n = ev->name;
	if ((unsigned)ev->type >= MEV_COUNT)
		return internal(m, "internal: an event of unknown type");
	/* we have left (a Session line names us before our Player event) */
	if (m->result != MODEL_RUNNING ||
	    (m->me >= 0 && m->me < m->nplayers && !m->player_in[m->me]))
		FAIL("event %s after the end (%s)", n, result_name(m));
	if (k->expect_game_lost && ev->type != MEV_GAME_END)
		FAIL("morale is %d but %s came instead of GameEnd(false)", m->moral, n);
	if (k->expect_waste_inc && ev->type != MEV_WASTE_CHANGED)
		FAIL("%s came where WasteChanged(+1) was due", n);
	if (k->searched_loc >= 0 && ev->type != MEV_CARD_DRAWN && finish_search(m, ev) != MODEL_OK)
		return MODEL_VIOLATION;
	k->order = 0;
	if (m->got_config && check_order(m, ev) != MODEL_OK)
		return MODEL_VIOLATION;
	if (!m->got_config && ev->type != MEV_CONFIG && ev->type != MEV_COMMAND_FAILED &&
	    ev->type != MEV_REGISTRATION_ABORTED)
		FAIL("%s before Config", n);
	if (!folds[ev->type])
		return internal(m, "internal: an event the model does not fold");
	int rc = folds[ev->type](m, ev);
	if (rc != MODEL_OK)
		return rc;
	if (k->order == 2)
		cp_advance(m);
	return MODEL_OK;
}

int model_fold(struct model *m, const struct model_event *ev, char *err, size_t errlen)
{
	m->chk.err[0] = '\0';
	int rc = fold(m, ev);
	if (rc != MODEL_OK && err && errlen)
		snprintf(err, errlen, "%s", m->chk.err);
	return rc;
}

int model_fold_line(struct model *m, const char *line, size_t len, char *err, size_t errlen)
{
	struct model_event ev;
	int rc = model_decode(m, line, len, &ev, err, errlen);
	if (rc != MODEL_OK)
		return rc;
	rc = model_fold(m, &ev, err, errlen);
	model_event_free(&ev);
	return rc;
}
