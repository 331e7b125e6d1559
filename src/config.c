/*
 * config: load and validate a game configuration (docs/configuration.md).
 *
 * Three passes over the text:
 *   1. json_check (src/json.c) checks it strictly (RFC 8259: no leading
 *      zeros, no "1.", no raw control characters, valid UTF-8 only -- the
 *      text is sent verbatim to clients whose parsers may be strict), then
 *      cJSON parses it into a tree;
 *   2. the tree is walked against the schema, filling a struct config and
 *      reporting every type/key/minimum problem (duplicate keys and numbers
 *      beyond a double, which cJSON accepts, among them);
 *   3. cross-checks on what parsed (counts, duplicates, references, zombies,
 *      goal), skipping values that already failed in pass 2.
 *
 * A value that failed to parse is stored as 0 where 0 can never be valid
 * (ids and references are >= 1, entrances >= 1, maxPlayers >= 1, rounds >= 1),
 * so pass 3 skips it without reporting it twice; other values carry an
 * explicit "ok" flag.
 *
 * Running out of memory is reported as a problem ("(root): out of memory"),
 * not fatal: this file allocates with malloc and checks every result
 * instead of using xalloc's aborting helpers.
 */
/* glibc's feature test macro: mmap's MAP_ANONYMOUS and madvise's
 * MADV_HUGEPAGE (the tree block, below) are not in POSIX. */
// NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
#define _DEFAULT_SOURCE 1

#include "sopra/config.h"
#include "sopra/json.h"
#include "sopra/xalloc.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Largest accepted file / text, in bytes. */
#define CONFIG_MAX_BYTES ((size_t)16 << 20)
/* Entrances of all locations together: the game keeps two counters per
 * entrance and walks every entrance each round, so a single number must not
 * be able to ask for gigabytes (an implementation limit; a board has a few). */
#define CONFIG_MAX_ENTRANCES 1000000
/* Children in the colony at the start: every colony phase spawns half as
 * many zombies as there are children (and survivors) in the colony, and each
 * may cost a child and a morale point, two events per zombie; at this limit
 * that is ~100,000 events per colony phase, within every buffer and cap. */
#define CONFIG_MAX_CHILDREN 100000
/* Messages stored per config_parse call; one more says the rest were cut. */
#define CONFIG_MAX_ERRORS 1000
/* (Nesting deeper than JSON_MAX_DEPTH, json.h, fails the syntax check; a
 * valid config needs 5 levels.) */

/* Room for a JSON path such as "characters[12].ability.kill.locationId". */
#define PATH_LEN 256

/* ------------------------------------------------------------------------ */
/* Error list                                                               */
/* ------------------------------------------------------------------------ */

/* Appends an owned copy of msg to errs; returns false when out of memory. */
static bool errs_push(struct config_errors *errs, char *msg)
{
	if (errs->n == errs->cap) {
		int ncap = errs->cap ? errs->cap * 2 : 8;
		char **m = realloc(errs->msgs, (size_t)ncap * sizeof *m);
		if (!m)
			return false;
		errs->msgs = m;
		errs->cap = ncap;
	}
	errs->msgs[errs->n++] = msg;
	return true;
}

/* Frees every message and resets errs to empty; NULL is a no-op. */
void config_errors_free(struct config_errors *errs)
{
	if (!errs)
		return;
	for (int i = 0; i < errs->n; i++)
		free(errs->msgs[i]);
	free(errs->msgs);
	errs->msgs = NULL;
	errs->n = 0;
	errs->cap = 0;
}

/* State of one config_parse call. */
struct ctx {
	struct config_errors *errs;
	int nerr; /* problems found (including ones not stored) */
	bool oom; /* an allocation failed: the result is invalid */
	/* per-character: status parsed (any integer is a valid status) */
	unsigned char *status_ok;
	/* per-location: its card list parsed (an array) */
	unsigned char *cards_ok;
	bool chars_ok, locs_ok, crises_ok, cards_list_ok;
	/* goal fields that parsed */
	bool zc_ok, zl_ok;
	bool goal_present; /* "goal" is an object */
	int nconditions;   /* survive / barricades / locationWithZombies present */
	bool value_ok;     /* the present condition's value parsed */
};

/* Formats "path: message" and appends it to the context's error list.
 * Counts the problem even when the message cannot be stored. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 0)))
#endif
static void
vperr(struct ctx *c, const char *path, const char *fmt, va_list ap)
{
	c->nerr++;
	if (c->nerr > CONFIG_MAX_ERRORS + 1)
		return;
	char body[512];
	if (c->nerr == CONFIG_MAX_ERRORS + 1) {
		snprintf(body, sizeof body,
		         "(root): too many problems; only the first %d are reported",
		         CONFIG_MAX_ERRORS);
	} else {
		char reason[400];
		vsnprintf(reason, sizeof reason, fmt, ap);
		/* cut where path (< PATH_LEN) and reason do not fit; < 0 is an
		 * output error, which %s cannot cause */
		if (snprintf(body, sizeof body, "%s: %s", path, reason) < 0)
			body[0] = '\0';
	}
	char *msg = strdup(body);
	if (!msg || !errs_push(c->errs, msg)) {
		free(msg);
		c->oom = true;
	}
}

/* vperr at a path given as a string. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
perr(struct ctx *c, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vperr(c, path, fmt, ap);
	va_end(ap);
}

/* Records an allocation failure (once). */
static void report_oom(struct ctx *c)
{
	if (!c->oom)
		perr(c, "(root)", "out of memory");
	c->oom = true;
}

/* ------------------------------------------------------------------------ */
/* Paths                                                                    */
/* ------------------------------------------------------------------------ */

/* Appends s to out[PATH_LEN] at offset n (truncating; paths are far shorter
 * than PATH_LEN) and returns the new length. */
static size_t path_put(char *out, size_t n, const char *s)
{
	size_t len = strlen(s);
	if (n >= PATH_LEN - 1)
		return n;
	if (len > PATH_LEN - 1 - n)
		len = PATH_LEN - 1 - n;
	memcpy(out + n, s, len);
	out[n + len] = '\0';
	return n + len;
}

/* Appends ".key" (or "key" when out is still empty) to out[PATH_LEN] at
 * offset n. Keys from the file are shortened and stripped of control
 * characters so the message stays one readable line. */
static size_t path_put_key(char *out, size_t n, const char *key)
{
	char clean[72];
	size_t k = 0;
	for (const unsigned char *p = (const unsigned char *)key; *p && k < 64; p++)
		clean[k++] = (char)((*p < 0x20 || *p == 0x7f) ? '?' : *p);
	if (k == 64 && key[64] != '\0') {
		while (k > 0 && ((unsigned char)clean[k - 1] & 0xC0) == 0x80)
			k--; /* do not cut a UTF-8 sequence in half */
		if (k > 0 && ((unsigned char)clean[k - 1] & 0xC0) == 0xC0)
			k--;
		memcpy(clean + k, "...", 3);
		k += 3;
	}
	clean[k] = '\0';
	if (n > 0)
		n = path_put(out, n, ".");
	return path_put(out, n, clean);
}

/* Appends "[i]" to out[PATH_LEN] at offset n. */
static size_t path_put_idx(char *out, size_t n, int i)
{
	char num[16];
	size_t k = sizeof num;
	unsigned v = (unsigned)i; /* indexes are >= 0 */
	num[--k] = '\0';
	do
		num[--k] = (char)('0' + v % 10);
	while ((v /= 10) != 0 && k > 0);
	n = path_put(out, n, "[");
	n = path_put(out, n, num + k);
	return path_put(out, n, "]");
}

/* Writes "base.key" (or "key" when base is empty) into out[PATH_LEN]. */
static void path_key(char *out, const char *base, const char *key)
{
	path_put_key(out, path_put(out, 0, base), key);
}

/* Where a value is in the file, for messages: a chain of steps on the
 * stack of the schema walk, written out (path_write) only when a problem is
 * reported there -- most values have none, and writing every value's path
 * was a third of the walk. up == NULL is the root (""); otherwise member
 * `key` of up or, key == NULL, element `idx` of up. */
struct path {
	const struct path *up;
	const char *key;
	int idx;
};

static const struct path root_path = {NULL, NULL, 0};

/* Writes the path at into out[PATH_LEN] ("cards[3].food.amount") and
 * returns its length. Outermost step first: a path has a few steps, so
 * each is found from at again rather than by recursion. */
static size_t path_write(char *out, const struct path *at)
{
	int depth = 0;
	for (const struct path *p = at; p->up; p = p->up)
		depth++;
	size_t n = 0;
	out[0] = '\0';
	for (int d = depth - 1; d >= 0; d--) { /* the step d steps up from at */
		const struct path *p = at;
		for (int k = 0; k < d; k++)
			p = p->up;
		n = p->key ? path_put_key(out, n, p->key) : path_put_idx(out, n, p->idx);
	}
	return n;
}

/* perr at the path at. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
perr_at(struct ctx *c, const struct path *at, const char *fmt, ...)
{
	char p[PATH_LEN];
	path_write(p, at);
	va_list ap;
	va_start(ap, fmt);
	vperr(c, p, fmt, ap);
	va_end(ap);
}

/* Reports a syntax error at byte offset `at` of text as
 * "(root): not valid JSON at line L column C: why". Columns count
 * characters (UTF-8 sequences), both from 1. */
static void report_syntax(struct ctx *c, const char *text, size_t len, size_t at, const char *why)
{
	unsigned long line = 1, col = 1;
	if (at > len)
		at = len;
	for (size_t k = 0; k < at; k++) {
		unsigned char ch = (unsigned char)text[k];
		if (ch == '\n') {
			line++;
			col = 1;
		} else if ((ch & 0xC0) != 0x80) {
			col++;
		}
	}
	perr(c, "(root)", "not valid JSON at line %lu column %lu: %s", line, col, why);
}

/* ------------------------------------------------------------------------ */
/* Schema helpers                                                           */
/* ------------------------------------------------------------------------ */

/* Returns the first member of obj named key (case-sensitive), or NULL. */
static const cJSON *member(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* The most names an object of the schema allows (goal's). */
#define MAX_ALLOWED 8

/* Reports every member of obj (at path at) whose name is not in allowed[]
 * as unknown, in member order, then every allowed name that occurs more
 * than once as a duplicate key, in allowed[] order. One pass over the
 * members; nallowed <= MAX_ALLOWED. With found, found[k] gets the first
 * member named allowed[k] (what member() would find) or NULL. */
static void check_keys(struct ctx *c, const cJSON *obj, const struct path *at,
                       const char *const *allowed, int nallowed, const cJSON **found)
{
	unsigned char seen[MAX_ALLOWED] = {0};
	for (int k = 0; found && k < nallowed; k++)
		found[k] = NULL;
	for (const cJSON *m = obj->child; m; m = m->next) {
		const char *key = m->string ? m->string : "";
		int k = 0;
		while (k < nallowed && strcmp(allowed[k], key) != 0)
			k++;
		if (k == nallowed) {
			perr_at(c, &(struct path){at, key, 0}, "unknown key");
			continue;
		}
		if (found && seen[k] == 0)
			found[k] = m;
		if (m->string && seen[k] < 2)
			seen[k]++;
	}
	for (int k = 0; k < nallowed; k++)
		if (seen[k] == 2)
			perr_at(c, &(struct path){at, allowed[k], 0}, "duplicate key");
}

/* Whether the finite double d has no fractional part (without libm's floor:
 * one library less in every server process). Doubles of magnitude 2^53 and
 * above are all integral. */
static bool is_integral(double d)
{
	if (d > -9.0e15 && d < 9.0e15)
		return (double)(long long)d == d;
	return true;
}

/* Checks that v is an integral JSON number within int range; reports at
 * path at and returns false otherwise. A number beyond a double (1e400) is
 * valid JSON that cJSON stores as +-infinity: out of range. */
static bool as_int(struct ctx *c, const cJSON *v, const struct path *at, int *out)
{
	if (cJSON_IsNumber(v) && isinf(v->valuedouble)) {
		perr_at(c, at, "integer out of range");
		return false;
	}
	if (!cJSON_IsNumber(v) || isnan(v->valuedouble) || !is_integral(v->valuedouble)) {
		perr_at(c, at, "must be an integer");
		return false;
	}
	if (v->valuedouble < (double)INT_MIN || v->valuedouble > (double)INT_MAX) {
		perr_at(c, at, "integer out of range");
		return false;
	}
	*out = (int)v->valuedouble;
	return true;
}

/* Reads the required string member key of obj (at path at) into a new
 * copy in *out; reports a missing key, a wrong type or OOM. */
static void get_string(struct ctx *c, const cJSON *obj, const struct path *at, const char *key,
                       char **out)
{
	const struct path p = {at, key, 0};
	const cJSON *v = member(obj, key);
	if (!v) {
		perr_at(c, &p, "missing required key");
	} else if (!cJSON_IsString(v)) {
		perr_at(c, &p, "must be a string");
	} else {
		*out = strdup(v->valuestring);
		if (!*out)
			report_oom(c);
	}
}

/* Checks v is an integer in [min, max] (max == INT_MAX: no upper bound);
 * reports at path at. *out is written only on success. */
static bool int_range(struct ctx *c, const cJSON *v, const struct path *at, int min, int max,
                      int *out)
{
	int x;
	if (!as_int(c, v, at, &x))
		return false;
	if (x < min || x > max) {
		if (max == INT_MAX)
			perr_at(c, at, "must be >= %d", min);
		else
			perr_at(c, at, "must be between %d and %d", min, max);
		return false;
	}
	*out = x;
	return true;
}

/* Reads v, the member key of an object at path at (NULL: absent), as an
 * integer in [min, max]. A missing key is reported when required. *out is
 * written only on success. */
static bool int_member(struct ctx *c, const cJSON *v, const struct path *at, const char *key,
                       bool required, int min, int max, int *out)
{
	const struct path p = {at, key, 0};
	if (!v) {
		if (required)
			perr_at(c, &p, "missing required key");
		return false;
	}
	return int_range(c, v, &p, min, max, out);
}

/* int_member of the member key of obj. */
static bool get_int(struct ctx *c, const cJSON *obj, const struct path *at, const char *key,
                    bool required, int min, int max, int *out)
{
	return int_member(c, member(obj, key), at, key, required, min, max, out);
}

/* Reads v, the optional member key of an object at path at (NULL: absent),
 * as a boolean; leaves *out alone if absent. */
static bool bool_member(struct ctx *c, const cJSON *v, const struct path *at, const char *key,
                        bool *out)
{
	if (!v)
		return false;
	if (!cJSON_IsBool(v)) {
		perr_at(c, &(struct path){at, key, 0}, "must be a boolean");
		return false;
	}
	*out = cJSON_IsTrue(v);
	return true;
}

/* bool_member of the member key of obj. */
static bool get_bool(struct ctx *c, const cJSON *obj, const struct path *at, const char *key,
                     bool *out)
{
	return bool_member(c, member(obj, key), at, key, out);
}

/* Returns required member key of obj (at path at) if it is an array, else
 * reports and returns NULL. */
static const cJSON *get_array(struct ctx *c, const cJSON *obj, const struct path *at,
                              const char *key)
{
	const cJSON *v = member(obj, key);
	if (!v) {
		perr_at(c, &(struct path){at, key, 0}, "missing required key");
		return NULL;
	}
	if (!cJSON_IsArray(v)) {
		perr_at(c, &(struct path){at, key, 0}, "must be an array");
		return NULL;
	}
	return v;
}

/* Returns the number of members/elements of a JSON container. */
static int count_children(const cJSON *v)
{
	return cJSON_GetArraySize(v);
}

/* Joins names with ", " into out[size]. */
static void join_names(char *out, size_t size, const char *const *names, int n)
{
	size_t used = 0;
	out[0] = '\0';
	for (int k = 0; k < n && used < size; k++)
		used += (size_t)snprintf(out + used, size - used, "%s%s", k ? ", " : "", names[k]);
}

/* How a parameter of a polymorphic object is read (see parse_typed). */
enum param_type {
	PARAM_INT,    /* required, an integer in [min, max] (get_int) */
	PARAM_BOOL,   /* optional, a boolean (get_bool) */
	PARAM_INJURY, /* required, an injury's name (get_injury) */
};

/* A parameter: its key, how it is read, where it goes in the record (an
 * int, a bool or an enum injury) and, for integers, the range. */
struct param {
	const char *key;
	enum param_type type;
	size_t off;
	int min, max;
};

/* The parameters of one type, in the order they are checked. */
struct param_list {
	const struct param *params;
	int n; /* <= MAX_ALLOWED */
};

/* A polymorphic object {"type": {params}}: what it is ("card"), the names
 * of its types (index = type), how a record stores its type and the
 * params each type takes. */
struct poly_kind {
	const char *what;
	const char *const *names;
	int ntypes;
	void (*set_type)(void *rec, int type);
	const struct param_list *by_type;
};

/* What poly found: the params object, its path (a step below the
 * object's) and the index of its type in the kind's names. */
struct poly_value {
	const cJSON *params;
	struct path at;
	int type;
};

/* Decodes a polymorphic object of the kind at path at. On success stores
 * the type in rec (kind->set_type), fills *out and returns true; otherwise
 * reports and returns false. */
static bool poly(struct ctx *c, const cJSON *v, const struct path *at, const struct poly_kind *kind,
                 void *rec, struct poly_value *out)
{
	if (!cJSON_IsObject(v)) {
		perr_at(c, at, "must be an object");
		return false;
	}
	int n = count_children(v);
	char list[256]; /* the type names, joined only for a message */
	if (n != 1) {
		join_names(list, sizeof list, kind->names, kind->ntypes);
		perr_at(c, at, "must have exactly one key, the %s type (one of %s); has %d",
		        kind->what, list, n);
		return false;
	}
	const cJSON *m = v->child;
	const char *name = m->string ? m->string : "";
	out->at = (struct path){at, name, 0};
	int k = 0;
	while (k < kind->ntypes && strcmp(kind->names[k], name) != 0)
		k++;
	if (k == kind->ntypes) {
		join_names(list, sizeof list, kind->names, kind->ntypes);
		perr_at(c, &out->at, "unknown %s type (expected one of %s)", kind->what, list);
		return false;
	}
	if (!cJSON_IsObject(m)) {
		perr_at(c, &out->at, "must be an object");
		return false;
	}
	kind->set_type(rec, k);
	out->params = m;
	out->type = k;
	return true;
}

/* Allocates n zeroed elements of size sz (at least one); reports OOM. */
static void *zalloc(struct ctx *c, size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);
	if (!p)
		report_oom(c);
	return p;
}

/* ------------------------------------------------------------------------ */
/* Schema walk                                                              */
/* ------------------------------------------------------------------------ */

static const char *const card_names[CARD_TYPE_COUNT] = {
        "food",   "fuel",       "stuff", "medicine", "lock",      "scissors",
        "hammer", "snow_boots", "colt",  "swab",     "blueprint",
};

static const char *const ability_names[] = {
        "wound", "no_infection", "search", "trash", "heal", "feed", "barricade", "kill",
};

static const char *const crisis_names[] = {"food", "stuff", "medicine", "fuel"};

static const char *const injury_names[] = {"wound", "frostBite", "bite"};

/* Reads v, the required member key of an object at path at (NULL:
 * absent), as an injury's name into *out. */
static void injury_member(struct ctx *c, const cJSON *v, const struct path *at, const char *key,
                          enum injury *out)
{
	const struct path p = {at, key, 0};
	if (!v) {
		perr_at(c, &p, "missing required key");
		return;
	}
	for (int k = 0; k < (int)COUNT_OF(injury_names); k++)
		if (cJSON_IsString(v) && strcmp(v->valuestring, injury_names[k]) == 0) {
			*out = (enum injury)k;
			return;
		}
	perr_at(c, &p, "must be one of \"wound\", \"frostBite\", \"bite\"");
}

/* Parses a polymorphic object of the kind (at path at) into rec: its type,
 * then its keys (unknown, duplicate) and its params in their order. A param
 * that fails stays 0 (ids among them: the cross-checks skip those). */
static void parse_typed(struct ctx *c, const cJSON *v, const struct path *at,
                        const struct poly_kind *kind, void *rec)
{
	struct poly_value pv;
	if (!poly(c, v, at, kind, rec, &pv))
		return;
	const struct param_list *pl = &kind->by_type[pv.type];
	const char *keys[MAX_ALLOWED];
	const cJSON *found[MAX_ALLOWED];
	for (int k = 0; k < pl->n; k++)
		keys[k] = pl->params[k].key;
	check_keys(c, pv.params, &pv.at, keys, pl->n, found);
	for (int k = 0; k < pl->n; k++) {
		const struct param *p = &pl->params[k];
		char *field = (char *)rec + p->off;
		switch (p->type) {
		case PARAM_INT:
			int_member(c, found[k], &pv.at, p->key, true, p->min, p->max, (int *)field);
			break;
		case PARAM_BOOL:
			bool_member(c, found[k], &pv.at, p->key, (bool *)field);
			break;
		case PARAM_INJURY:
			injury_member(c, found[k], &pv.at, p->key, (enum injury *)field);
			break;
		}
	}
}

/* Table rows: a param of struct S, an integer >= 1 or in [lo, hi], a
 * boolean, an injury; and a row's list. */
/* clang-format off */
#define PARAM_ID(key, S, field)            {key, PARAM_INT, offsetof(S, field), 1, INT_MAX}
#define PARAM_RANGE(key, S, field, lo, hi) {key, PARAM_INT, offsetof(S, field), lo, hi}
#define PARAM_FLAG(key, S, field)          {key, PARAM_BOOL, offsetof(S, field), 0, 0}
#define PARAM_INJURY(key, S, field)        {key, PARAM_INJURY, offsetof(S, field), 0, 0}
#define PARAMS(a)                          {(a), (int)COUNT_OF(a)}
/* clang-format on */

static void set_card_type(void *rec, int type)
{
	((struct config_card *)rec)->type = (enum card_type)type;
}

static const struct param card_plain[] = {PARAM_ID("identifier", struct config_card, id)};
static const struct param card_food[] = {PARAM_ID("identifier", struct config_card, id),
                                         PARAM_ID("amount", struct config_card, amount)};
static const struct param card_blueprint[] = {PARAM_ID("identifier", struct config_card, id),
                                              PARAM_ID("location", struct config_card, location)};

static const struct param_list card_params[CARD_TYPE_COUNT] = {
        [CARD_FOOD] = PARAMS(card_food),           [CARD_FUEL] = PARAMS(card_plain),
        [CARD_STUFF] = PARAMS(card_plain),         [CARD_MEDICINE] = PARAMS(card_plain),
        [CARD_LOCK] = PARAMS(card_plain),          [CARD_SCISSORS] = PARAMS(card_plain),
        [CARD_HAMMER] = PARAMS(card_plain),        [CARD_SNOW_BOOTS] = PARAMS(card_plain),
        [CARD_COLT] = PARAMS(card_plain),          [CARD_SWAB] = PARAMS(card_plain),
        [CARD_BLUEPRINT] = PARAMS(card_blueprint),
};

static const struct poly_kind card_kind = {"card", card_names, CARD_TYPE_COUNT, set_card_type,
                                           card_params};

/* Parses card entry i (at path at) into rec, a struct config_card. */
static void parse_card(struct ctx *c, const cJSON *v, const struct path *at, void *rec, int i)
{
	(void)i;
	parse_typed(c, v, at, &card_kind, rec);
}

static const struct param ab_wound[] = {PARAM_INJURY("before", struct config_ability, before),
                                        PARAM_INJURY("after", struct config_ability, after)};
static const struct param ab_search[] = {
        PARAM_ID("location", struct config_ability, location),
        PARAM_ID("numCards", struct config_ability, num_cards),
        PARAM_ID("maxActivations", struct config_ability, max_activations)};
static const struct param ab_trash[] = {PARAM_ID("numCards", struct config_ability, num_cards)};
static const struct param ab_feed[] = {PARAM_ID("numFood", struct config_ability, num_food)};
static const struct param ab_barricade[] = {
        PARAM_ID("numBarricades", struct config_ability, num_barricades),
        PARAM_ID("maxActivations", struct config_ability, max_activations)};
static const struct param ab_kill[] = {
        PARAM_ID("locationId", struct config_ability, location),
        PARAM_RANGE("dieValue", struct config_ability, die_value, 0, 6),
        PARAM_ID("numZombies", struct config_ability, num_zombies),
        PARAM_ID("maxActivations", struct config_ability, max_activations),
        PARAM_FLAG("infectionDie", struct config_ability, infection_die),
        PARAM_FLAG("children", struct config_ability, children)};

static const struct param_list ability_params[] = {
        [ABILITY_WOUND] = PARAMS(ab_wound),
        [ABILITY_NO_INFECTION] = {NULL, 0},
        [ABILITY_SEARCH] = PARAMS(ab_search),
        [ABILITY_TRASH] = PARAMS(ab_trash),
        [ABILITY_HEAL] = {NULL, 0},
        [ABILITY_FEED] = PARAMS(ab_feed),
        [ABILITY_BARRICADE] = PARAMS(ab_barricade),
        [ABILITY_KILL] = PARAMS(ab_kill),
};

static void set_ability_type(void *rec, int type)
{
	((struct config_ability *)rec)->type = (enum ability_type)type;
}

static const struct poly_kind ability_kind = {
        "ability", ability_names, (int)COUNT_OF(ability_names), set_ability_type, ability_params};

/* Parses character i into rec, a struct config_character; sets
 * c->status_ok[i] when its status parsed. */
static void parse_character(struct ctx *c, const cJSON *v, const struct path *at, void *rec, int i)
{
	struct config_character *ch = rec;
	static const char *const keys[] = {"name",   "identifier", "status",
	                                   "attack", "search",     "ability"};
	if (!cJSON_IsObject(v)) {
		perr_at(c, at, "must be an object");
		return;
	}
	check_keys(c, v, at, keys, (int)COUNT_OF(keys), NULL);
	get_string(c, v, at, "name", &ch->name);
	get_int(c, v, at, "identifier", true, 1, INT_MAX, &ch->id);
	if (get_int(c, v, at, "status", true, INT_MIN, INT_MAX, &ch->status))
		c->status_ok[i] = 1;
	get_int(c, v, at, "attack", true, 1, 6, &ch->attack);
	get_int(c, v, at, "search", true, 1, 6, &ch->search);
	const struct path p = {at, "ability", 0};
	const cJSON *ab = member(v, "ability");
	if (!ab)
		perr_at(c, &p, "missing required key");
	else
		parse_typed(c, ab, &p, &ability_kind, &ch->ability);
}

/* Parses the goal object (required key "goal" of root). */
static void parse_goal(struct ctx *c, const cJSON *root, struct config_goal *g)
{
	static const char *const keys[] = {
	        "rounds",           "moral",   "zombiesColony", "zombiesLocations",
	        "childrenInColony", "survive", "barricades",    "locationWithZombies"};
	const struct path at = {&root_path, "goal", 0};
	const cJSON *o = member(root, "goal");
	if (!o) {
		perr(c, "goal", "missing required key");
		return;
	}
	if (!cJSON_IsObject(o)) {
		perr(c, "goal", "must be an object");
		return;
	}
	c->goal_present = true;
	check_keys(c, o, &at, keys, (int)COUNT_OF(keys), NULL);
	get_int(c, o, &at, "rounds", true, 1, INT_MAX, &g->rounds);
	get_int(c, o, &at, "moral", true, 1, INT_MAX, &g->moral);
	c->zc_ok = get_int(c, o, &at, "zombiesColony", true, 0, INT_MAX, &g->zombies_colony);
	c->zl_ok = get_int(c, o, &at, "zombiesLocations", true, 0, INT_MAX, &g->zombies_locations);
	get_int(c, o, &at, "childrenInColony", true, 0, CONFIG_MAX_CHILDREN,
	        &g->children_in_colony);

	bool dummy = false;
	if (member(o, "survive")) {
		c->nconditions++;
		g->type = GOAL_SURVIVE;
		g->value = 0;
		c->value_ok = get_bool(c, o, &at, "survive", &dummy);
	}
	if (member(o, "barricades")) {
		c->nconditions++;
		g->type = GOAL_BARRICADES;
		c->value_ok = get_int(c, o, &at, "barricades", true, 0, INT_MAX, &g->value);
	}
	if (member(o, "locationWithZombies")) {
		c->nconditions++;
		g->type = GOAL_LOCATION_WITH_ZOMBIES;
		c->value_ok =
		        get_int(c, o, &at, "locationWithZombies", true, 0, INT_MAX, &g->value);
	}
}

/* Parses a card-id list (array member key of obj at path at) into
 * loc->cards; entries that fail are stored as 0. Returns true if it was an
 * array. */
static bool parse_stack(struct ctx *c, const cJSON *obj, const struct path *at, const char *key,
                        struct config_location *loc)
{
	const cJSON *arr = get_array(c, obj, at, key);
	if (!arr)
		return false;
	int n = count_children(arr);
	loc->cards = zalloc(c, (size_t)n, sizeof *loc->cards);
	if (!loc->cards)
		return false;
	loc->ncards = n;
	const struct path p = {at, key, 0};
	int k = 0;
	for (const cJSON *e = arr->child; e; e = e->next, k++)
		int_range(c, e, &(struct path){&p, NULL, k}, 1, INT_MAX, &loc->cards[k]);
	return true;
}

/* Parses entry i of "locations" (a location or the colony wrapper) into
 * rec, a struct config_location; sets c->cards_ok[i] when its card list
 * parsed. */
static void parse_location(struct ctx *c, const cJSON *v, const struct path *at, void *rec, int i)
{
	struct config_location *loc = rec;
	if (!cJSON_IsObject(v)) {
		perr_at(c, at, "must be an object");
		return;
	}
	const cJSON *col = member(v, "colony");
	if (col) {
		static const char *const wrap[] = {"colony"};
		static const char *const keys[] = {"identifier", "entrances", "startCards"};
		loc->is_colony = true;
		loc->name = strdup("colony");
		if (!loc->name)
			report_oom(c);
		check_keys(c, v, at, wrap, (int)COUNT_OF(wrap), NULL);
		const struct path p = {at, "colony", 0};
		if (!cJSON_IsObject(col)) {
			perr_at(c, &p, "must be an object");
			return;
		}
		check_keys(c, col, &p, keys, (int)COUNT_OF(keys), NULL);
		get_int(c, col, &p, "identifier", true, 1, INT_MAX, &loc->id);
		get_int(c, col, &p, "entrances", true, 1, INT_MAX, &loc->entrances);
		c->cards_ok[i] = parse_stack(c, col, &p, "startCards", loc);
		return;
	}
	static const char *const keys[] = {"name", "identifier", "entrances", "survivorSpaces",
	                                   "cards"};
	check_keys(c, v, at, keys, (int)COUNT_OF(keys), NULL);
	get_string(c, v, at, "name", &loc->name);
	get_int(c, v, at, "identifier", true, 1, INT_MAX, &loc->id);
	get_int(c, v, at, "entrances", true, 1, INT_MAX, &loc->entrances);
	get_int(c, v, at, "survivorSpaces", true, 1, INT_MAX, &loc->survivor_spaces);
	c->cards_ok[i] = parse_stack(c, v, at, "cards", loc);
}

static void set_crisis_type(void *rec, int type)
{
	((struct config_crisis *)rec)->type = (enum crisis_type)type;
}

static const struct param crisis_params[] = {
        PARAM_ID("identifier", struct config_crisis, id),
        PARAM_ID("moralChange", struct config_crisis, moral_change),
        PARAM_ID("requiredCards", struct config_crisis, required_cards)};

static const struct param_list crisis_params_by_type[] = {
        PARAMS(crisis_params), PARAMS(crisis_params), PARAMS(crisis_params), PARAMS(crisis_params)};

_Static_assert(COUNT_OF(crisis_params_by_type) == COUNT_OF(crisis_names), "a row per type");
_Static_assert(COUNT_OF(ability_params) == COUNT_OF(ability_names), "a row per type");

static const struct poly_kind crisis_kind = {"crisis", crisis_names, (int)COUNT_OF(crisis_names),
                                             set_crisis_type, crisis_params_by_type};

/* Parses crisis entry i (at path at) into rec, a struct config_crisis. */
static void parse_crisis(struct ctx *c, const cJSON *v, const struct path *at, void *rec, int i)
{
	(void)i;
	parse_typed(c, v, at, &crisis_kind, rec);
}

/* One of the root's lists: its key, the size of a record and what parses
 * element i (at path at) into its record. */
struct list_spec {
	const char *key;
	size_t rec_size;
	void (*parse)(struct ctx *c, const cJSON *v, const struct path *at, void *rec, int i);
};

/* Parses the required array spec->key of root into new zeroed records, in
 * file order, and *n; with flags, also allocates a zeroed byte per element
 * in *flags for the element parser to set. Returns the records, or NULL
 * when it is not an array or memory ran out (both reported). */
static void *parse_list(struct ctx *c, const cJSON *root, const struct list_spec *spec, int *n,
                        unsigned char **flags)
{
	const cJSON *arr = get_array(c, root, &root_path, spec->key);
	if (!arr)
		return NULL;
	int count = count_children(arr);
	unsigned char *recs = zalloc(c, (size_t)count, spec->rec_size);
	if (flags)
		*flags = zalloc(c, (size_t)count, 1);
	if (!recs || (flags && !*flags)) {
		free(recs);
		return NULL;
	}
	*n = count;
	const struct path p = {&root_path, spec->key, 0};
	int k = 0;
	for (const cJSON *e = arr->child; e; e = e->next, k++)
		spec->parse(c, e, &(struct path){&p, NULL, k}, recs + (size_t)k * spec->rec_size,
		            k);
	return recs;
}

/* Walks the whole tree against the schema, filling cfg. */
static void parse_root(struct ctx *c, const cJSON *root, struct config *cfg)
{
	/* "$schema" lets an editor find resources/config.schema.json; it is
	 * not part of the game and otherwise ignored */
	static const char *const keys[] = {"maxPlayers", "cards",  "characters", "goal",
	                                   "locations",  "crises", "$schema"};
	static const struct list_spec cards = {"cards", sizeof *cfg->cards, parse_card};
	static const struct list_spec characters = {"characters", sizeof *cfg->characters,
	                                            parse_character};
	static const struct list_spec locations = {"locations", sizeof *cfg->locations,
	                                           parse_location};
	static const struct list_spec crises = {"crises", sizeof *cfg->crises, parse_crisis};

	if (!cJSON_IsObject(root)) {
		perr(c, "(root)", "must be an object");
		return;
	}
	check_keys(c, root, &root_path, keys, (int)COUNT_OF(keys), NULL);
	const cJSON *schema = member(root, "$schema");
	if (schema && !cJSON_IsString(schema))
		perr(c, "$schema", "must be a string (the URI or path of a JSON Schema)");
	get_int(c, root, &root_path, "maxPlayers", true, 1, INT_MAX, &cfg->max_players);

	/* in file-format order: the messages come in this order */
	cfg->cards = parse_list(c, root, &cards, &cfg->ncards, NULL);
	c->cards_list_ok = cfg->cards != NULL;
	cfg->characters = parse_list(c, root, &characters, &cfg->ncharacters, &c->status_ok);
	c->chars_ok = cfg->characters != NULL;
	parse_goal(c, root, &cfg->goal);
	cfg->locations = parse_list(c, root, &locations, &cfg->nlocations, &c->cards_ok);
	c->locs_ok = cfg->locations != NULL;
	cfg->crises = parse_list(c, root, &crises, &cfg->ncrises, NULL);
	c->crises_ok = cfg->crises != NULL;
}

/* ------------------------------------------------------------------------ */
/* cJSON's memory while the text is parsed                                  */
/* ------------------------------------------------------------------------ */

/* cJSON allocates every value, key and string on its own: for the largest
 * example configuration (184 KiB) some 19,000 malloc/free pairs, a quarter
 * of the server's start-up. While config_parse runs cJSON, its hooks take
 * memory from blocks instead, and the tree goes with the blocks (no
 * cJSON_Delete). The first block is sized from the text so that the tree
 * of a configuration fits in it: it takes 3.6 to 5.9 times the text's bytes
 * for every configuration in resources/, systemtests/ and ../shared (more
 * per byte only for unusually dense text, such as long lists of one-digit
 * numbers), so the first block is TREE_PER_TEXT_BYTE times the text, at
 * least TREE_BLOCK_MIN; pages of it that the tree does not reach are never
 * touched. A block that is full is followed by one twice its size.
 *
 * A first block of 1 MiB and more (a text of 128 KiB and more) is a mapping
 * of its own, 2 MiB-aligned, that the kernel is asked to back with huge
 * pages (MADV_HUGEPAGE): a 2 MiB page is one page fault where the tree of
 * the 184 KiB example touches some 170 pages of 4 KiB, and a first touch of
 * a page costs 15-25 us on the virtual machines the server is measured on
 * (docs/performance.md, "Start-up"): 3-4 ms of its start-up. Where there are
 * no huge pages (THP off, none free) the kernel gives small ones, as
 * before. The mapping is gone when the parse is (tree_release), so it costs
 * the running server nothing.
 *
 * Every other block is a mapping of its own too (whole 4 KiB pages), not
 * malloc's: the tree is gone before the game starts, but what the
 * configuration keeps is allocated while it exists, above it in the heap,
 * and the hole it would leave there is reused piece by piece by the game's
 * own allocations until every page of it is resident again (docs/
 * performance.md, "Density": memory per game).
 *
 * The hooks are process-global: installed for the one parse only and reset
 * to malloc/free right after it (so other users of cJSON are unaffected as
 * long as none runs at the same time; the server is single-threaded). A
 * block that cannot be allocated is reported as "out of memory", like every
 * allocation here. */

struct tree_block {
	struct tree_block *next;
	size_t used, cap;
	size_t mapped; /* 0: malloc's; else the length of its own mapping */
	_Alignas(cJSON) unsigned char mem[];
};

static struct {
	struct tree_block *head; /* the newest block */
	size_t first_cap;        /* the size of the first block */
	bool oom;
} tree_arena;

#define TREE_BLOCK_MIN     ((size_t)64 << 10)
#define TREE_PER_TEXT_BYTE 8

#define TREE_HUGE_PAGE ((size_t)2 << 20)

/* A first block of at least cap bytes (1 MiB to 1 GiB), a 2 MiB-aligned
 * mapping of whole 2 MiB pages that the kernel is asked to back with huge
 * pages; NULL for other sizes or where mmap fails or the system has no
 * such advice (the caller takes malloc's). */
static struct tree_block *tree_block_huge(size_t cap)
{
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
	const size_t page = TREE_HUGE_PAGE;
	if (cap < page / 2 || cap > ((size_t)1 << 30))
		return NULL;
	size_t len = (sizeof(struct tree_block) + cap + page - 1) & ~(page - 1);
	unsigned char *map =
	        mmap(NULL, len + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	size_t head = (page - (uintptr_t)map % page) % page; /* keep [head, head + len) */
	if (head > 0)
		munmap(map, head);
	munmap(map + head + len, page - head);
	struct tree_block *b = (struct tree_block *)(map + head);
	madvise(b, len, MADV_HUGEPAGE);
	b->mapped = len;
	b->cap = len - sizeof *b;
	return b;
#else
	(void)cap;
	return NULL;
#endif
}

/* A block of at least cap bytes: a mapping of its own (whole pages), or
 * malloc's where there is no anonymous mmap; NULL when out of memory. */
static struct tree_block *tree_block_plain(size_t cap)
{
	struct tree_block *b;
#ifdef MAP_ANONYMOUS
	long page = sysconf(_SC_PAGESIZE);
	size_t mask = page > 0 ? (size_t)page - 1 : 4095;
	if (cap > SIZE_MAX - sizeof *b - mask)
		return NULL;
	size_t len = (sizeof *b + cap + mask) & ~mask;
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	b = map;
	b->mapped = len;
	b->cap = len - sizeof *b;
#else
	if (cap > SIZE_MAX - sizeof *b || !(b = malloc(sizeof *b + cap)))
		return NULL;
	b->mapped = 0;
	b->cap = cap;
#endif
	b->used = 0;
	return b;
}

/* Allocates a block for at least `need` bytes after the block b (NULL:
 * the first); NULL when out of memory. A block that cannot have the size
 * it should settles for `need` bytes. */
static struct tree_block *tree_block_new(const struct tree_block *b, size_t need)
{
	const size_t most = SIZE_MAX - sizeof(struct tree_block);
	size_t cap = tree_arena.first_cap;
	if (b)
		cap = b->cap <= most / 2 ? b->cap * 2 : most;
	if (cap < need)
		cap = need;
	struct tree_block *nb = !b ? tree_block_huge(cap) : NULL;
	if (nb) {
		nb->used = 0;
		return nb;
	}
	nb = tree_block_plain(cap);
	if (!nb && cap > need)
		nb = tree_block_plain(need);
	return nb;
}

/* Takes `need` bytes from a new block (the newest one is full). */
static void *tree_alloc_new_block(size_t need)
{
	struct tree_block *nb = tree_block_new(tree_arena.head, need);
	if (!nb) {
		tree_arena.oom = true;
		return NULL;
	}
	nb->next = tree_arena.head;
	nb->used = need;
	tree_arena.head = nb;
	return nb->mem;
}

/* cJSON's malloc. It asks for its nodes and their strings only, so the
 * alignment of a node is all a piece needs (strings of up to 8 bytes, most
 * keys, then take 8 bytes, not 16). */
static void *tree_alloc(size_t n)
{
	size_t align = _Alignof(cJSON);
	size_t need = (n + align - 1) & ~(align - 1);
	struct tree_block *b = tree_arena.head;
	if (need < n) {
		tree_arena.oom = true;
		return NULL;
	}
	if (!b || b->cap - b->used < need)
		return tree_alloc_new_block(need);
	void *p = b->mem + b->used;
	b->used += need;
	return p;
}

static void tree_free(void *p)
{
	(void)p; /* released with the blocks */
}

/* Releases the blocks, and with them the tree parsed into them and the
 * cross-checks' scratch arrays. */
static void tree_release(void)
{
	while (tree_arena.head) {
		struct tree_block *b = tree_arena.head;
		tree_arena.head = b->next;
		if (b->mapped)
			munmap(b, b->mapped);
		else
			free(b);
	}
}

/* Parses the checked text into a tree in the blocks; NULL (reported) when
 * that fails. */
static const cJSON *parse_tree(struct ctx *c, const char *text, size_t len)
{
	cJSON_Hooks hooks = {tree_alloc, tree_free};
	tree_release();
	tree_arena.oom = false;
	tree_arena.first_cap = len < TREE_BLOCK_MIN / TREE_PER_TEXT_BYTE ? TREE_BLOCK_MIN
	                                                                 : len * TREE_PER_TEXT_BYTE;
	cJSON_InitHooks(&hooks);
	const cJSON *root = cJSON_ParseWithLength(text, len);
	cJSON_InitHooks(NULL);
	if (!root && tree_arena.oom)
		report_oom(c);
	else if (!root) /* see proto.c: not with the cJSON of Debian 12 */
		perr(c, "(root)", "not valid JSON: the JSON decoder (cJSON) refuses it");
	return root;
}

/* ------------------------------------------------------------------------ */
/* Cross-checks                                                             */
/* ------------------------------------------------------------------------ */

/* n zeroed elements of size sz (at least one) for a cross-check, taken from
 * the tree's blocks and released with them (tree_release), never on their
 * own: a large config's first block, on huge pages, has room to spare, so
 * the checks' arrays cost no page faults. Reports OOM. */
static void *scratch(struct ctx *c, size_t n, size_t sz)
{
	if (n == 0)
		n = 1;
	void *p = n <= SIZE_MAX / sz ? tree_alloc(n * sz) : NULL;
	if (!p) {
		report_oom(c);
		return NULL;
	}
	memset(p, 0, n * sz);
	return p;
}

struct idx_val {
	int val;
	int idx;
};

/* Orders by value, then by index (so the first occurrence comes first). */
static int cmp_idx_val(const void *a, const void *b)
{
	const struct idx_val *x = a, *y = b;
	if (x->val != y->val)
		return x->val < y->val ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* For n values with validity flags (NULL: all valid), sets first[i] to the
 * index of the first occurrence of vals[i] when i is a later duplicate, else
 * -1. O(n log n). Returns false (reporting OOM) if memory runs out. */
static bool find_dups(struct ctx *c, const int *vals, const unsigned char *valid, int n, int *first)
{
	struct idx_val *t = scratch(c, (size_t)n, sizeof *t);
	if (!t)
		return false;
	int m = 0;
	for (int i = 0; i < n; i++) {
		first[i] = -1;
		if (!valid || valid[i])
			t[m++] = (struct idx_val){vals[i], i};
	}
	qsort(t, (size_t)m, sizeof *t, cmp_idx_val);
	for (int k = 1, head = 0; k < m; k++) {
		if (t[k].val == t[head].val)
			first[t[k].idx] = t[head].idx;
		else
			head = k;
	}
	return true;
}

/* Orders ints ascending. */
static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Builds the sorted table of the ids of n records (`stride` bytes apart,
 * the id at byte `id_off`); *m gets the count. Returns NULL if some record's
 * id did not parse (0): that record might be the one a reference means, so
 * unknown references are then not reported (the file is invalid anyway).
 * Also NULL, reporting it, when memory runs out. */
static int *id_table(struct ctx *c, const void *recs, size_t stride, size_t id_off, int n, int *m)
{
	int *t = scratch(c, (size_t)n, sizeof *t);
	if (!t)
		return NULL;
	for (int i = 0; i < n; i++) {
		memcpy(&t[i], (const char *)recs + (size_t)i * stride + id_off, sizeof(int));
		if (t[i] == 0) {
			return NULL;
		}
	}
	qsort(t, (size_t)n, sizeof *t, cmp_int);
	*m = n;
	return t;
}

/* Returns whether id is in the sorted array t[m]. */
static bool has_id(const int *t, int m, int id)
{
	return bsearch(&id, t, (size_t)m, sizeof id, cmp_int) != NULL;
}

/* Writes the path of location i ("locations[i]" or "locations[i].colony"). */
static void loc_path(char *out, const struct config *cfg, int i)
{
	snprintf(out, PATH_LEN, "locations[%d]%s", i, cfg->locations[i].is_colony ? ".colony" : "");
}

/* Writes the path of card list entry k of location i. */
static void stack_path(char *out, const struct config *cfg, int i, int k)
{
	bool col = cfg->locations[i].is_colony;
	snprintf(out, PATH_LEN, "locations[%d]%s[%d]", i, col ? ".colony.startCards" : ".cards", k);
}

/* Writes the path of card i's parameter object ("cards[i].type"). */
static void card_path(char *out, const struct config *cfg, int i)
{
	snprintf(out, PATH_LEN, "cards[%d].%s", i, card_names[cfg->cards[i].type]);
}

/* Reports duplicate ids among n records, in file order. `stride` is the
 * record size and ids points at the first record's id; `path_of` writes
 * the record's base path. */
static void check_dup_ids(struct ctx *c, const struct config *cfg, const char *kind,
                          const void *recs, size_t stride, size_t id_off, int n,
                          void (*path_of)(char *, const struct config *, int))
{
	int *vals = scratch(c, (size_t)n, sizeof *vals);
	unsigned char *valid = scratch(c, (size_t)n, 1);
	int *first = scratch(c, (size_t)n, sizeof *first);
	if (vals && valid && first) {
		for (int i = 0; i < n; i++) {
			memcpy(&vals[i], (const char *)recs + (size_t)i * stride + id_off,
			       sizeof(int));
			valid[i] = vals[i] != 0;
		}
		if (find_dups(c, vals, valid, n, first)) {
			char p[PATH_LEN], q[PATH_LEN], r[PATH_LEN];
			for (int i = 0; i < n; i++) {
				if (first[i] < 0)
					continue;
				path_of(p, cfg, i);
				path_key(q, p, "identifier");
				path_of(r, cfg, first[i]);
				perr(c, q, "duplicate %s id %d (also %s)", kind, vals[i], r);
			}
		}
	}
}

/* Writes "characters[i]". */
static void char_path(char *out, const struct config *cfg, int i)
{
	(void)cfg;
	snprintf(out, PATH_LEN, "characters[%d]", i);
}

/* Checks social statuses are unique. */
static void check_status(struct ctx *c, const struct config *cfg)
{
	int n = cfg->ncharacters;
	int *vals = scratch(c, (size_t)n, sizeof *vals);
	int *first = scratch(c, (size_t)n, sizeof *first);
	if (vals && first) {
		for (int i = 0; i < n; i++)
			vals[i] = cfg->characters[i].status;
		if (find_dups(c, vals, c->status_ok, n, first))
			for (int i = 0; i < n; i++)
				if (first[i] >= 0) {
					char p[PATH_LEN];
					snprintf(p, PATH_LEN, "characters[%d].status", i);
					perr(c, p,
					     "duplicate social status %d (also characters[%d])",
					     vals[i], first[i]);
				}
	}
}

/* Checks every stack entry names a known card (skipped when card_ids is
 * NULL) and no card is in a stack twice or in two stacks. */
static void check_stacks(struct ctx *c, const struct config *cfg, const int *card_ids,
                         int ncard_ids)
{
	long total = 0;
	for (int i = 0; i < cfg->nlocations; i++)
		total += cfg->locations[i].ncards;
	if (total > INT_MAX)
		return; /* impossible within the size cap */
	int n = (int)total;
	int *vals = scratch(c, (size_t)n, sizeof *vals);
	unsigned char *valid = scratch(c, (size_t)n, 1);
	int *first = scratch(c, (size_t)n, sizeof *first);
	int *owner = scratch(c, (size_t)n, sizeof *owner);
	int *pos = scratch(c, (size_t)n, sizeof *pos);
	if (vals && valid && first && owner && pos) {
		int k = 0;
		for (int i = 0; i < cfg->nlocations; i++)
			for (int j = 0; j < cfg->locations[i].ncards; j++, k++) {
				vals[k] = cfg->locations[i].cards[j];
				valid[k] = vals[k] != 0;
				owner[k] = i;
				pos[k] = j;
			}
		char p[PATH_LEN], q[PATH_LEN];
		for (k = 0; k < n; k++)
			if (valid[k] && card_ids && !has_id(card_ids, ncard_ids, vals[k])) {
				stack_path(p, cfg, owner[k], pos[k]);
				perr(c, p, "unknown card %d", vals[k]);
			}
		if (find_dups(c, vals, valid, n, first))
			for (k = 0; k < n; k++)
				if (first[k] >= 0) {
					stack_path(p, cfg, owner[k], pos[k]);
					stack_path(q, cfg, owner[first[k]], pos[first[k]]);
					perr(c, p, "card %d is used more than once (also %s)",
					     vals[k], q);
				}
	}
}

/* Checks references to locations from blueprint cards and from the search
 * and kill abilities. */
static void check_location_refs(struct ctx *c, const struct config *cfg, const int *loc_ids,
                                int nloc_ids)
{
	char p[PATH_LEN], q[PATH_LEN];
	for (int i = 0; i < cfg->ncards; i++) {
		const struct config_card *cd = &cfg->cards[i];
		if (cd->type == CARD_BLUEPRINT && cd->location != 0 &&
		    !has_id(loc_ids, nloc_ids, cd->location)) {
			card_path(p, cfg, i);
			path_key(q, p, "location");
			perr(c, q, "unknown location %d", cd->location);
		}
	}
	for (int i = 0; i < cfg->ncharacters; i++) {
		const struct config_ability *a = &cfg->characters[i].ability;
		if ((a->type != ABILITY_SEARCH && a->type != ABILITY_KILL) || a->location == 0)
			continue;
		if (has_id(loc_ids, nloc_ids, a->location))
			continue;
		snprintf(p, PATH_LEN, "characters[%d].ability.%s", i,
		         a->type == ABILITY_SEARCH ? "search.location" : "kill.locationId");
		perr(c, p, "unknown location %d", a->location);
	}
}

/* Runs every rule that relates several parts of the file. */
static void cross_checks(struct ctx *c, struct config *cfg)
{
	char p[PATH_LEN];
	long long mp = cfg->max_players; /* 0: did not parse */

	if (c->chars_ok && mp > 0 && cfg->ncharacters < mp * 2 + 2)
		perr(c, "characters", "needs at least %lld characters (maxPlayers*2+2), has %d",
		     mp * 2 + 2, cfg->ncharacters);
	if (c->locs_ok && mp > 0)
		for (int i = 0; i < cfg->nlocations; i++) {
			const struct config_location *l = &cfg->locations[i];
			if (!c->cards_ok[i] || l->ncards >= mp * 5)
				continue;
			loc_path(p, cfg, i);
			char q[PATH_LEN];
			path_key(q, p, l->is_colony ? "startCards" : "cards");
			perr(c, q, "needs at least %lld cards (maxPlayers*5), has %d", mp * 5,
			     l->ncards);
		}
	if (c->crises_ok && cfg->goal.rounds > 0 && cfg->ncrises < cfg->goal.rounds)
		perr(c, "crises", "needs at least %d crises (one per round), has %d",
		     cfg->goal.rounds, cfg->ncrises);

	if (c->chars_ok) {
		check_status(c, cfg);
		check_dup_ids(c, cfg, "character", cfg->characters, sizeof *cfg->characters,
		              offsetof(struct config_character, id), cfg->ncharacters, char_path);
	}
	if (c->cards_list_ok)
		check_dup_ids(c, cfg, "card", cfg->cards, sizeof *cfg->cards,
		              offsetof(struct config_card, id), cfg->ncards, card_path);
	if (c->locs_ok)
		check_dup_ids(c, cfg, "location", cfg->locations, sizeof *cfg->locations,
		              offsetof(struct config_location, id), cfg->nlocations, loc_path);

	/* references */
	int ncid = 0, nlid = 0;
	int *card_ids = c->cards_list_ok
	                        ? id_table(c, cfg->cards, sizeof *cfg->cards,
	                                   offsetof(struct config_card, id), cfg->ncards, &ncid)
	                        : NULL;
	int *loc_ids =
	        c->locs_ok ? id_table(c, cfg->locations, sizeof *cfg->locations,
	                              offsetof(struct config_location, id), cfg->nlocations, &nlid)
	                   : NULL;
	if (c->locs_ok)
		check_stacks(c, cfg, card_ids, ncid);
	if (loc_ids)
		check_location_refs(c, cfg, loc_ids, nlid);

	/* colony, zombies, entrances */
	int ncolonies = 0;
	bool all_entrances = c->locs_ok;
	long long entrances = 0;
	if (c->locs_ok) {
		for (int i = 0; i < cfg->nlocations; i++) {
			const struct config_location *l = &cfg->locations[i];
			if (l->is_colony) {
				ncolonies++;
				cfg->colony = i;
			}
			if (l->entrances == 0) {
				all_entrances = false;
				continue;
			}
			entrances += l->entrances;
			long long spaces = 3LL * l->entrances;
			snprintf(p, PATH_LEN, "locations[%d]", i);
			if (l->is_colony && c->zc_ok && cfg->goal.zombies_colony > spaces)
				perr(c, "goal.zombiesColony",
				     "%d initial zombies exceed the %lld entrance spaces of the "
				     "colony (%s, 3 per entrance)",
				     cfg->goal.zombies_colony, spaces, p);
			if (!l->is_colony && c->zl_ok && cfg->goal.zombies_locations > spaces)
				perr(c, "goal.zombiesLocations",
				     "%d initial zombies exceed the %lld entrance spaces of %s (3 "
				     "per entrance)",
				     cfg->goal.zombies_locations, spaces, p);
		}
		if (ncolonies != 1)
			perr(c, "locations", "must contain exactly one colony, has %d", ncolonies);
		if (entrances > CONFIG_MAX_ENTRANCES)
			perr(c, "locations",
			     "%lld entrances in all locations together; at most %d are supported",
			     entrances, CONFIG_MAX_ENTRANCES);
	}

	/* goal condition */
	if (c->nconditions != 1 && c->goal_present)
		perr(c, "goal",
		     "must have exactly one of survive, barricades, locationWithZombies");
	if (c->nconditions == 1 && c->value_ok) {
		if (cfg->goal.type == GOAL_LOCATION_WITH_ZOMBIES && c->locs_ok &&
		    cfg->goal.value > cfg->nlocations)
			perr(c, "goal.locationWithZombies",
			     "%d exceeds the number of locations (%d, colony included)",
			     cfg->goal.value, cfg->nlocations);
		if (cfg->goal.type == GOAL_BARRICADES && all_entrances &&
		    cfg->goal.value > 3 * entrances)
			perr(c, "goal.barricades", "%d exceeds 3 per entrance in total (%lld)",
			     cfg->goal.value, 3 * entrances);
	}
}

/* ------------------------------------------------------------------------ */
/* Public API                                                               */
/* ------------------------------------------------------------------------ */

/* Frees cfg and everything it owns; NULL is a no-op. */
void config_free(struct config *cfg)
{
	if (!cfg)
		return;
	for (int i = 0; i < cfg->ncharacters; i++)
		free(cfg->characters[i].name);
	for (int i = 0; i < cfg->nlocations; i++) {
		free(cfg->locations[i].name);
		free(cfg->locations[i].cards);
	}
	/* the lists, the text and the struct itself */
	void *blocks[] = {cfg->cards, cfg->characters, cfg->locations, cfg->crises, cfg->text, cfg};
	for (size_t k = 0; k < COUNT_OF(blocks); k++)
		free(blocks[k]);
}

void config_drop_text(struct config *cfg)
{
	free(cfg->text);
	cfg->text = NULL;
}

/* Checks what config_parse and config_load hand over before anything is
 * allocated: a text at all, its size, its syntax (json_check). Reports and
 * returns false otherwise. */
static bool check_text(struct ctx *c, const char *text, size_t len)
{
	if (!text && len > 0) {
		perr(c, "(root)", "no text");
		return false;
	}
	if (len > CONFIG_MAX_BYTES) {
		perr(c, "(root)", "too large (%zu bytes, the limit is %zu)", len, CONFIG_MAX_BYTES);
		return false;
	}
	struct json_error e;
	if (!json_check(text ? text : "", len, &e)) {
		report_syntax(c, text ? text : "", len, e.pos, e.why);
		return false;
	}
	return true;
}

/* Parses the checked text, which this takes over: text[len] is '\0' and
 * the text becomes the config's (cfg->text) or is freed. The schema walk
 * and the cross-checks; any problem frees the partial config and returns
 * NULL. */
static struct config *parse_checked(struct ctx *c, char *text, size_t len)
{
	struct config *cfg = NULL;
	const cJSON *root = parse_tree(c, text, len);
	if (!root)
		goto fail;
	cfg = zalloc(c, 1, sizeof *cfg);
	if (!cfg)
		goto fail;
	cfg->text = text;
	cfg->text_len = len;
	text = NULL;

	parse_root(c, root, cfg);
	if (!c->oom)
		cross_checks(c, cfg);
	if (c->nerr == 0 && !c->oom) {
		tree_release();
		free(c->status_ok);
		free(c->cards_ok);
		return cfg;
	}
fail:
	if (c->nerr == 0)
		report_oom(c);
	tree_release();
	free(c->status_ok);
	free(c->cards_ok);
	free(text);
	config_free(cfg);
	return NULL;
}

/* See config.h. The text is checked where it is, then copied for the
 * config to keep. */
struct config *config_parse(const char *text, size_t len, struct config_errors *errs)
{
	struct ctx c = {.errs = errs};
	if (!check_text(&c, text, len))
		return NULL;
	char *copy = malloc(len + 1);
	if (!copy) {
		report_oom(&c);
		return NULL;
	}
	if (len > 0)
		memcpy(copy, text, len);
	copy[len] = '\0';
	return parse_checked(&c, copy, len);
}

/* Reads all of fd into a new buffer with a '\0' after the *len bytes read;
 * reports at path and returns NULL on failure. `size` is the expected
 * length (a regular file's, 0 when unknown): the buffer starts one byte
 * larger, so the file is read once into its final place and the read that
 * sees the end needs no more room; a file that grows meanwhile, or a pipe,
 * is read on into a buffer that doubles. */
static char *read_all(struct ctx *c, int fd, const char *path, size_t size, size_t *len)
{
	size_t cap = size > 0 ? size + 1 : (size_t)64 << 10, n = 0;
	char *buf = malloc(cap);
	if (!buf) {
		perr(c, path, "cannot read: out of memory");
		return NULL;
	}
	for (;;) {
		if (n == cap) {
			if (cap > CONFIG_MAX_BYTES) {
				perr(c, path, "file too large (more than %zu bytes)",
				     CONFIG_MAX_BYTES);
				goto fail;
			}
			size_t ncap = cap * 2;
			if (ncap > (size_t)CONFIG_MAX_BYTES + 1)
				ncap = (size_t)CONFIG_MAX_BYTES + 1;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				perr(c, path, "cannot read: out of memory");
				goto fail;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			perr(c, path, "cannot read: %s", strerror(errno));
			goto fail;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	/* n < cap <= CONFIG_MAX_BYTES + 1: the read that found the end had room */
	buf[n] = '\0';
	if (cap - n > ((size_t)4 << 10)) { /* a pipe's first 64 KiB: give back the rest */
		char *fit = realloc(buf, n + 1);
		if (fit)
			buf = fit;
	}
	*len = n;
	return buf;
fail:
	free(buf);
	return NULL;
}

/* See config.h. Reads at most CONFIG_MAX_BYTES bytes; errors name the path.
 * The buffer read into becomes the config's text (no copy). */
struct config *config_load(const char *path, struct config_errors *errs)
{
	struct ctx c = {.errs = errs};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perr(&c, path, "cannot read: %s", strerror(errno));
		return NULL;
	}
	struct stat st;
	size_t size = 0; /* unknown: not a regular file */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if ((uintmax_t)st.st_size > CONFIG_MAX_BYTES) {
			perr(&c, path, "file too large (more than %zu bytes)", CONFIG_MAX_BYTES);
			close(fd);
			return NULL;
		}
		size = (size_t)st.st_size;
	}
	size_t len = 0;
	char *text = read_all(&c, fd, path, size, &len);
	close(fd);
	if (!text || !check_text(&c, text, len)) {
		free(text);
		return NULL;
	}
	return parse_checked(&c, text, len);
}

/* See config.h. */
const struct config_card *config_find_card(const struct config *cfg, int id)
{
	for (int i = 0; i < cfg->ncards; i++)
		if (cfg->cards[i].id == id)
			return &cfg->cards[i];
	return NULL;
}

/* See config.h. */
int config_location_index(const struct config *cfg, int id)
{
	for (int i = 0; i < cfg->nlocations; i++)
		if (cfg->locations[i].id == id)
			return i;
	return -1;
}
