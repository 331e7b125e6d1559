/*
 * fuzz_proto_decode: proto_decode and proto_encode.
 *
 * Decoding: the whole input is one client line, decoded with both rules
 * editions. Checked:
 *   - failure: a non-empty, valid UTF-8 message and a cleared proto_cmd;
 *   - success: a known command; one with a string parameter (Register) has
 *     a valid UTF-8 name owned by the proto_cmd, other commands none; fuel
 *     only on a command that has it, and a base-only one only in base;
 *     has_target only on a command with a target parameter (all from the
 *     command table, proto_cmd_params);
 *   - the editions agree (they differ in base-only parameters, Move.fuel);
 *   - re-encoding the command as canonical JSON (cJSON) decodes to the same
 *     command; a trailing "\r" changes nothing; decoding into a reused
 *     proto_cmd gives the same result.
 * Encoding: the same bytes are read as up to 16 events (type, nargs, rules,
 * arguments, string), encoded back to back into one proto_buf; each line
 * must be one valid JSON object with the right name, the arguments in order
 * (as many as the protocol table and nargs say) and the string intact
 * (invalid UTF-8 bytes as U+FFFD).
 */
#include "fuzz_common.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* ---- decoding -------------------------------------------------------------- */

/* A strict RFC 8259 syntax check, independent of cJSON (which also takes
 * leading zeros, "1.", raw control characters in strings and any byte <= 0x20
 * as whitespace). The spec calls a line that is not JSON bad input. Returns
 * false on a syntax error; nesting deeper than cJSON's limit counts as valid
 * (the decoder rejects it anyway). */
struct js {
	const unsigned char *s;
	size_t n, i;
};

static void js_ws(struct js *j)
{
	while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' ||
	                       j->s[j->i] == '\r'))
		j->i++;
}

static bool js_digit(const struct js *j)
{
	return j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9';
}

static bool js_lit(struct js *j, const char *w)
{
	size_t l = strlen(w);
	if (j->n - j->i < l || memcmp(j->s + j->i, w, l) != 0)
		return false;
	j->i += l;
	return true;
}

static bool js_number(struct js *j)
{
	if (j->i < j->n && j->s[j->i] == '-')
		j->i++;
	if (!js_digit(j))
		return false;
	if (j->s[j->i++] != '0')
		while (js_digit(j))
			j->i++;
	if (j->i < j->n && j->s[j->i] == '.') {
		j->i++;
		if (!js_digit(j))
			return false;
		while (js_digit(j))
			j->i++;
	}
	if (j->i < j->n && (j->s[j->i] == 'e' || j->s[j->i] == 'E')) {
		j->i++;
		if (j->i < j->n && (j->s[j->i] == '+' || j->s[j->i] == '-'))
			j->i++;
		if (!js_digit(j))
			return false;
		while (js_digit(j))
			j->i++;
	}
	return true;
}

static bool js_string(struct js *j)
{
	j->i++; /* the opening quote */
	while (j->i < j->n) {
		unsigned char c = j->s[j->i++];
		if (c == '"')
			return true;
		if (c < 0x20)
			return false;
		if (c != '\\')
			continue;
		if (j->i >= j->n)
			return false;
		c = j->s[j->i++];
		if (c == 'u') {
			for (int k = 0; k < 4; k++, j->i++)
				if (j->i >= j->n || !strchr("0123456789abcdefABCDEF", j->s[j->i]) ||
				    j->s[j->i] == '\0')
					return false;
		} else if (!strchr("\"\\/bfnrt", c) || c == '\0') {
			return false;
		}
	}
	return false;
}

#define JS_DEPTH_LIMIT 1000 /* cJSON's CJSON_NESTING_LIMIT */

static bool js_value(struct js *j, int depth, bool *too_deep)
{
	js_ws(j);
	if (j->i >= j->n)
		return false;
	unsigned char c = j->s[j->i];
	bool ok;
	if (c == '{' || c == '[') {
		if (depth >= JS_DEPTH_LIMIT) {
			*too_deep = true;
			return false;
		}
		unsigned char close = c == '{' ? '}' : ']';
		j->i++;
		js_ws(j);
		if (j->i < j->n && j->s[j->i] == close) {
			j->i++;
			ok = true;
		} else {
			for (;;) {
				if (c == '{') {
					js_ws(j);
					if (j->i >= j->n || j->s[j->i] != '"' || !js_string(j))
						return false;
					js_ws(j);
					if (j->i >= j->n || j->s[j->i] != ':')
						return false;
					j->i++;
				}
				if (!js_value(j, depth + 1, too_deep))
					return false;
				if (j->i >= j->n)
					return false;
				if (j->s[j->i] == ',') {
					j->i++;
					continue;
				}
				if (j->s[j->i] != close)
					return false;
				j->i++;
				break;
			}
			ok = true;
		}
	} else if (c == '"') {
		ok = js_string(j);
	} else if (c == 't') {
		ok = js_lit(j, "true");
	} else if (c == 'f') {
		ok = js_lit(j, "false");
	} else if (c == 'n') {
		ok = js_lit(j, "null");
	} else {
		ok = js_number(j);
	}
	if (ok)
		js_ws(j);
	return ok;
}

static bool json_strict(const char *s, size_t n)
{
	struct js j = {(const unsigned char *)s, n, 0};
	if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
		j.i = 3; /* RFC 8259 8.1: a parser MAY ignore a byte order mark */
	bool too_deep = false;
	bool ok = js_value(&j, 0, &too_deep) && j.i == n;
	return ok || too_deep;
}

/* Whether commands of type t have a parameter with one of these flags, or
 * of this type (proto's table). */
static bool has_param_flag(enum cmd_type t, unsigned flags)
{
	size_t n;
	const struct proto_param *params = proto_cmd_params(t, &n);
	for (size_t i = 0; i < n; i++)
		if (params[i].flags & flags)
			return true;
	return false;
}

static bool has_param_type(enum cmd_type t, enum proto_param_type type)
{
	size_t n;
	const struct proto_param *params = proto_cmd_params(t, &n);
	for (size_t i = 0; i < n; i++)
		if (params[i].type == type)
			return true;
	return false;
}

/* The parameter of t that fills the struct cmd member at offset, or NULL. */
static const struct proto_param *param_at(enum cmd_type t, size_t offset)
{
	size_t n;
	const struct proto_param *params = proto_cmd_params(t, &n);
	for (size_t i = 0; i < n; i++)
		if (params[i].offset == offset)
			return &params[i];
	return NULL;
}

/* Whether err names a parameter that only base reads (Move.fuel), of any
 * command or of type t (t < 0: any). */
static bool names_base_only_param(const char *err, int t)
{
	for (int k = 0; k < CMD_TYPE_COUNT; k++) {
		size_t n;
		const struct proto_param *params = proto_cmd_params((enum cmd_type)k, &n);
		for (size_t i = 0; i < n; i++)
			if ((t < 0 || t == k) && (params[i].flags & PROTO_BASE_ONLY) &&
			    strstr(err, params[i].key))
				return true;
	}
	return false;
}

static void check_result(const struct proto_cmd *pc, bool ok, const char *err,
                         enum game_rules rules)
{
	const char *ed = game_rules_name(rules);
	if (!ok) {
		FUZZ_CHECK(err && *err, "%s: proto_decode failed without a message", ed);
		FUZZ_CHECK(fuzz_utf8_valid(err, strlen(err)), "%s: error is not UTF-8: %s", ed,
		           err);
		struct cmd zero;
		memset(&zero, 0, sizeof zero);
		FUZZ_CHECK(pc->name_storage == NULL && memcmp(&pc->cmd, &zero, sizeof zero) == 0,
		           "%s: proto_decode failed (%s) but left the command set", ed, err);
		return;
	}
	const struct cmd *c = &pc->cmd;
	FUZZ_CHECK((unsigned)c->type < CMD_TYPE_COUNT, "%s: command type %d", ed, (int)c->type);
	if (has_param_type(c->type, PROTO_STRING)) {
		FUZZ_CHECK(c->name && c->name == pc->name_storage,
		           "%s: %s name is not owned by the proto_cmd", ed, cmd_name(c->type));
		FUZZ_CHECK(fuzz_utf8_valid(c->name, strlen(c->name)),
		           "%s: %s name is not valid UTF-8", ed, cmd_name(c->type));
	} else {
		FUZZ_CHECK(c->name == NULL && pc->name_storage == NULL, "%s: %s carries a name", ed,
		           cmd_name(c->type));
	}
	if (c->fuel) {
		const struct proto_param *fuel = param_at(c->type, offsetof(struct cmd, fuel));
		FUZZ_CHECK(fuel && (rules == RULES_BASE || !(fuel->flags & PROTO_BASE_ONLY)),
		           "%s: fuel set on %s", ed, cmd_name(c->type));
	}
	if (c->has_target)
		FUZZ_CHECK(has_param_flag(c->type, PROTO_TARGET), "%s: has_target on %s", ed,
		           cmd_name(c->type));
}

static bool cmd_equal(const struct cmd *a, const struct cmd *b, bool ignore_fuel)
{
	if (a->type != b->type || a->character != b->character || a->character2 != b->character2 ||
	    a->location != b->location || a->entrance != b->entrance || a->card != b->card ||
	    a->target != b->target || a->has_target != b->has_target ||
	    (!ignore_fuel && a->fuel != b->fuel))
		return false;
	if (!a->name || !b->name)
		return a->name == b->name;
	return strcmp(a->name, b->name) == 0;
}

static cJSON *param_value(const struct cmd *c, const struct proto_param *p)
{
	if (p->type == PROTO_STRING)
		return cJSON_CreateString(c->name);
	int v = proto_param_get(c, p);
	return p->type == PROTO_BOOL ? cJSON_CreateBool(v) : cJSON_CreateNumber(v);
}

/* The command as canonical JSON, with the parameters it carries (proto's
 * table; Move.fuel in revised is ignored like any unknown key). */
static char *to_json(const struct cmd *c)
{
	cJSON *o = cJSON_CreateObject();
	FUZZ_CHECK(o != NULL, "out of memory");
	cJSON_AddStringToObject(o, "command", cmd_name(c->type));
	size_t n;
	const struct proto_param *params = proto_cmd_params(c->type, &n);
	for (size_t i = 0; i < n; i++)
		if (proto_param_carried(c, &params[i]))
			cJSON_AddItemToObject(o, params[i].key, param_value(c, &params[i]));
	char *s = cJSON_PrintUnformatted(o);
	FUZZ_CHECK(s != NULL, "out of memory");
	cJSON_Delete(o);
	return s;
}

static void check_round_trip(const struct cmd *c, enum game_rules rules)
{
	char *json = to_json(c);
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	const char *err = NULL;
	bool ok = proto_decode(json, strlen(json), rules, &pc, &err);
	FUZZ_CHECK(ok, "%s: canonical form %s does not decode: %s", game_rules_name(rules), json,
	           err);
	FUZZ_CHECK(cmd_equal(c, &pc.cmd, false), "%s: canonical form %s decodes differently",
	           game_rules_name(rules), json);
	proto_cmd_clear(&pc);
	cJSON_free(json);
}

static void check_decode(const char *line, size_t len)
{
	struct proto_cmd base, rev;
	proto_cmd_init(&base);
	proto_cmd_init(&rev);
	const char *eb = NULL, *er = NULL;
	bool ob = proto_decode(line, len, RULES_BASE, &base, &eb);
	check_result(&base, ob, eb, RULES_BASE);
	bool orv = proto_decode(line, len, RULES_REVISED, &rev, &er);
	check_result(&rev, orv, er, RULES_REVISED);

	/* Only JSON is accepted (spec/protocol.md: a line that is not a JSON
	 * object is bad input; docs/protocol.md: "malformed JSON..."). */
	if (ob || orv) {
		size_t n = len > 0 && line[len - 1] == '\r' ? len - 1 : len;
		FUZZ_CHECK(json_strict(line, n),
		           "proto_decode accepted a line that is not JSON (RFC 8259): %s",
		           fuzz_printable(line, n));
	}

	/* The editions differ only in the base-only parameters (Move.fuel): read
	 * in base, ignored in revised. */
	if (ob && orv)
		FUZZ_CHECK(cmd_equal(&base.cmd, &rev.cmd, true),
		           "base and revised decode the line differently");
	else if (ob)
		FUZZ_CHECK(false, "revised rejects (%s) a line base accepts", er);
	else if (orv)
		FUZZ_CHECK(names_base_only_param(eb, (int)rev.cmd.type),
		           "base rejects (%s) a revised %s that is not about a base-only parameter",
		           eb, cmd_name(rev.cmd.type));
	else
		FUZZ_CHECK(strcmp(eb, er) == 0 || names_base_only_param(eb, -1),
		           "the editions reject the line differently: \"%s\" / \"%s\"", eb, er);

	if (ob)
		check_round_trip(&base.cmd, RULES_BASE);
	if (orv)
		check_round_trip(&rev.cmd, RULES_REVISED);

	/* A trailing "\r" is stripped (when the line does not already end in one). */
	if (len == 0 || line[len - 1] != '\r') {
		char *cr = xmalloc(len + 1);
		if (len)
			memcpy(cr, line, len);
		cr[len] = '\r';
		struct proto_cmd pc;
		proto_cmd_init(&pc);
		const char *e = NULL;
		bool o = proto_decode(cr, len + 1, RULES_BASE, &pc, &e);
		FUZZ_CHECK(o == ob, "a trailing \\r changes the result");
		if (o)
			FUZZ_CHECK(cmd_equal(&pc.cmd, &base.cmd, false),
			           "a trailing \\r changes the command");
		else
			FUZZ_CHECK(strcmp(e, eb) == 0, "a trailing \\r changes the error: %s / %s",
			           e, eb);
		proto_cmd_clear(&pc);
		free(cr);
	}

	/* Decoding into a used proto_cmd releases the old contents first. */
	struct cmd saved = rev.cmd;
	char *saved_name = saved.name ? strdup(saved.name) : NULL;
	saved.name = saved_name;
	const char *e2 = NULL;
	bool o2 = proto_decode(line, len, RULES_REVISED, &rev, &e2);
	FUZZ_CHECK(o2 == orv && (o2 ? cmd_equal(&rev.cmd, &saved, false) : strcmp(e2, er) == 0),
	           "decoding the same line twice into one proto_cmd differs");
	free(saved_name);

	proto_cmd_clear(&base);
	proto_cmd_clear(&rev);
}

/* ---- encoding -------------------------------------------------------------- */

struct reader {
	const uint8_t *p;
	size_t n, i;
};

static uint8_t rd_u8(struct reader *r)
{
	return r->i < r->n ? r->p[r->i++] : 0;
}

static int rd_int(struct reader *r)
{
	/* mostly small values, sometimes the extremes */
	uint8_t b = rd_u8(r);
	switch (b) {
	case 0xFF: {
		uint32_t u = 0;
		for (int k = 0; k < 4; k++)
			u |= (uint32_t)rd_u8(r) << (8 * k);
		int v;
		memcpy(&v, &u, sizeof v);
		return v;
	}
	case 0xFE:
		return INT_MIN;
	case 0xFD:
		return INT_MAX;
	default:
		return (int)b - 0x40;
	}
}

/* Integer-like parameters written for ev (protocol.md's table; optional ones
 * only when nargs says so). */
static int expected_params(const struct game_event *ev, enum game_rules rules)
{
	static const signed char fixed[GAME_EVENT_TYPE_COUNT] = {
	        [GEV_CHARACTERS] = 4,
	        [GEV_PLAYER] = 1,
	        [GEV_CHARACTER_SPAWNED] = 2,
	        [GEV_ZOMBIE_SPAWNED] = 2,
	        [GEV_CARD_DRAWN] = 2,
	        [GEV_GAME_END] = 1,
	        [GEV_NEXT_ROUND] = 1,
	        [GEV_CRISIS] = 1,
	        [GEV_DIE_ROLLED] = 2,
	        [GEV_BARRICADED] = 3,
	        [GEV_FROSTBITTEN] = 1,
	        [GEV_WOUNDED] = 1,
	        [GEV_CONTRIBUTED] = 2,
	        [GEV_FOOD_CHANGED] = 2,
	        [GEV_MORAL_CHANGED] = 2,
	        [GEV_SURVIVOR_KILLED] = 1,
	        [GEV_BARRICADE_DESTROYED] = 2,
	        [GEV_WASTE_CHANGED] = 1,
	        [GEV_ZOMBIE_KILLED] = 3,
	        [GEV_SEARCHED] = 2,
	        [GEV_LEFT] = 1,
	        [GEV_SESSION] = 1,
	};
	switch (ev->type) {
	case GEV_ABILITY_USED:
		return ev->nargs > 1 ? 2 : 1;
	case GEV_BITTEN:
		return ev->nargs > 0 ? 1 : 0;
	case GEV_CARD_USED:
		return ev->nargs > 1 ? 3 : 1;
	case GEV_MOVED:
		return rules == RULES_BASE ? 3 : 2;
	default:
		return fixed[ev->type];
	}
}

static const char *str_key_of(enum game_event_type t)
{
	switch (t) {
	case GEV_CONFIG:
		return "config";
	case GEV_COMMAND_FAILED:
		return "message";
	case GEV_PLAYER:
		return "playerName";
	case GEV_SESSION:
		return "secret";
	default:
		return NULL;
	}
}

static const char *reason_name(enum game_event_type t, int v)
{
	static const char *const food[] = {"FOOD_ADDED", "FOOD_CONSUMED"};
	static const char *const moral[] = {"CHARACTER_DIED", "CRISIS", "STARVATION_TOKEN",
	                                    "WASTE"};
	if (t == GEV_FOOD_CHANGED)
		return v >= 0 && v < 2 ? food[v] : "UNKNOWN";
	return v >= 0 && v < 4 ? moral[v] : "UNKNOWN";
}

/* The parameters of the encoded line match ev, in order. */
static void check_params(const char *line, size_t len, const struct game_event *ev,
                         enum game_rules rules)
{
	const char *name = game_event_name(ev->type);
	const char *skey = str_key_of(ev->type);
	cJSON *root = cJSON_ParseWithLength(line, len);
	FUZZ_CHECK(root, "%s: does not parse", name);
	int j = 0;
	for (const cJSON *it = root->child->next; it; it = it->next) {
		if (skey && strcmp(it->string, skey) == 0) {
			FUZZ_CHECK(it->next == NULL, "%s: the string parameter is not last", name);
			if (ev->type == GEV_COMMAND_FAILED)
				FUZZ_CHECK(it->valuestring[0] != '\0',
				           "CommandFailed: empty message");
			continue;
		}
		FUZZ_CHECK(j < 4, "%s: more than 4 parameters", name);
		int want = ev->arg[j];
		if (cJSON_IsBool(it)) {
			FUZZ_CHECK(cJSON_IsTrue(it) == (want != 0), "%s.%s: boolean is not %d",
			           name, it->string, want);
		} else if (cJSON_IsString(it)) {
			FUZZ_CHECK(
			        (ev->type == GEV_FOOD_CHANGED || ev->type == GEV_MORAL_CHANGED) &&
			                strcmp(it->valuestring, reason_name(ev->type, want)) == 0,
			        "%s.%s: string \"%s\" for %d", name, it->string, it->valuestring,
			        want);
		} else {
			FUZZ_CHECK(cJSON_IsNumber(it) && it->valuedouble == (double)want,
			           "%s.%s: %g instead of %d", name, it->string, it->valuedouble,
			           want);
		}
		j++;
	}
	FUZZ_CHECK(j == expected_params(ev, rules), "%s (nargs %d, %s): %d parameters, expected %d",
	           name, ev->nargs, game_rules_name(rules), j, expected_params(ev, rules));
	if (skey)
		FUZZ_CHECK(cJSON_GetObjectItemCaseSensitive(root, skey), "%s: no %s", name, skey);
	cJSON_Delete(root);
}

#define MAX_EVENTS 16

static void check_encode(const uint8_t *data, size_t size)
{
	struct reader r = {data, size, 0};
	struct game_event evs[MAX_EVENTS];
	enum game_rules rules[MAX_EVENTS];
	char *strs[MAX_EVENTS];
	size_t off[MAX_EVENTS + 1];
	int n = 0;
	struct proto_buf buf;
	proto_buf_init(&buf);
	off[0] = 0;
	while (r.i < r.n && n < MAX_EVENTS) {
		struct game_event *ev = &evs[n];
		memset(ev, 0, sizeof *ev);
		ev->type = (enum game_event_type)(rd_u8(&r) % GAME_EVENT_TYPE_COUNT);
		uint8_t f = rd_u8(&r);
		ev->nargs = f % 5;
		rules[n] = (f & 0x80) ? RULES_REVISED : RULES_BASE;
		ev->to = (f & 0x40) ? GEV_TO_ALL : (int)(f & 0x3) - 2;
		for (int k = 0; k < 4; k++)
			ev->arg[k] = rd_int(&r);
		uint8_t sl = rd_u8(&r);
		strs[n] = NULL;
		if (sl != 0xFF) {
			size_t len = sl;
			if (len > r.n - r.i)
				len = r.n - r.i;
			strs[n] = xmalloc(len + 1);
			memcpy(strs[n], r.p + r.i, len);
			strs[n][len] = '\0'; /* an embedded NUL shortens it */
			r.i += len;
		}
		ev->str = strs[n];
		proto_encode(ev, rules[n], &buf);
		off[++n] = buf.len;
	}
	for (int i = 0; i < n; i++) {
		const char *line = buf.data + off[i];
		size_t len = off[i + 1] - off[i];
		const char *skey = str_key_of(evs[i].type);
		char *want = NULL;
		if (skey && !(evs[i].type == GEV_COMMAND_FAILED && (!strs[i] || !strs[i][0])))
			want = fuzz_wire_string(strs[i] ? strs[i] : "");
		fuzz_check_event_line(line, len, &evs[i], skey, want);
		check_params(line, len - 1, &evs[i], rules[i]);
		free(want);
		free(strs[i]);
	}
	proto_buf_free(&buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_decode((const char *)data, size);
	check_encode(data, size);
	return 0;
}
