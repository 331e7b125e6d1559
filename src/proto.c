/*
 * proto: decode client lines into struct cmd, encode struct game_event into lines.
 *
 * Decoding is table-driven: each command's row in cmd_table.h lists its
 * parameters (JSON key, type, destination field, flags); a generic loop
 * validates them all before the game ever sees the command. Encoding is
 * table-driven too: each event's row in event_table.h lists its
 * parameters; tests/test_proto.c checks the exact line of every event type.
 * A line is checked by json_check (src/json.c: strict RFC 8259) and then
 * parsed by cJSON; the output JSON is written by hand.
 */
#include "sopra/proto.h"
#include "sopra/json.h"
#include "sopra/xalloc.h"

#include <cjson/cJSON.h>

#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- decoding ------------------------------------------------------------ */

/* One array of parameters per command, from cmd_table.h's PARAM lists, each
 * ended by a row with key == NULL (a command may have none). */
#define PARAM(type, key, field, domain, flags) \
	{key, PROTO_##type, offsetof(struct cmd, field), PROTO_DOMAIN_##domain, flags},
#define PARAM_ARRAY(id, name, phase, needs, handler, legal, params) \
	static const struct proto_param params_##id[] = {SOPRA_UNPAREN params{0}};
SOPRA_COMMANDS(PARAM_ARRAY)
#undef PARAM_ARRAY
#undef PARAM

struct cmd_spec {
	const struct proto_param *p;
	size_t n;
};

static const struct cmd_spec cmd_specs[CMD_TYPE_COUNT] = {
#define SPEC_ROW(id, ...) [CMD_##id] = {params_##id, COUNT_OF(params_##id) - 1},
        SOPRA_COMMANDS(SPEC_ROW)
#undef SPEC_ROW
};

const struct proto_param *proto_cmd_params(enum cmd_type t, size_t *n)
{
	*n = 0;
	if ((unsigned)t >= CMD_TYPE_COUNT)
		return NULL;
	*n = cmd_specs[t].n;
	return cmd_specs[t].p;
}

bool proto_param_with_target(const struct proto_param *p)
{
	return (p->flags & (PROTO_TARGET | PROTO_PAIR)) != 0;
}

bool proto_param_carried(const struct cmd *c, const struct proto_param *p)
{
	return c->has_target || !proto_param_with_target(p);
}

int proto_param_get(const struct cmd *c, const struct proto_param *p)
{
	const char *src = (const char *)c + p->offset;
	if (p->type == PROTO_BOOL) {
		bool b;
		memcpy(&b, src, sizeof b);
		return b;
	}
	int v;
	memcpy(&v, src, sizeof v);
	return v;
}

void proto_param_set(struct cmd *c, const struct proto_param *p, int v)
{
	char *dst = (char *)c + p->offset;
	if (p->type == PROTO_BOOL) {
		bool b = v != 0;
		memcpy(dst, &b, sizeof b);
	} else {
		memcpy(dst, &v, sizeof v);
	}
}

void proto_cmd_init(struct proto_cmd *pc)
{
	memset(pc, 0, sizeof *pc);
}

void proto_cmd_clear(struct proto_cmd *pc)
{
	free(pc->name_storage);
	pc->name_storage = NULL;
	memset(&pc->cmd, 0, sizeof pc->cmd);
	pc->reconnect = false;
	pc->secret[0] = '\0';
}

/* Format a decode error into pc->err_buf. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static const char *
errf(struct proto_cmd *pc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(pc->err_buf, sizeof pc->err_buf, fmt, ap);
	va_end(ap);
	return pc->err_buf;
}

/* How many bytes of the UTF-8 string s fit in max bytes without splitting a
 * character (s is known to be valid UTF-8). */
static int utf8_prefix(const char *s, int max)
{
	int n = (int)strlen(s);
	if (n <= max)
		return n;
	while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	return max;
}

static const char *decode_param(const struct proto_param *ps, const cJSON *item, const char *cname,
                                struct proto_cmd *out)
{
	switch (ps->type) {
	case PROTO_INT: {
		if (!cJSON_IsNumber(item))
			return errf(out, "%s.%s: expected an integer", cname, ps->key);
		/* +-infinity for a number beyond a double (1e400): out of range */
		double d = item->valuedouble;
		if (!isfinite(d) || d < (double)INT_MIN || d > (double)INT_MAX)
			return errf(out, "%s.%s: integer out of range", cname, ps->key);
		int v = (int)d;
		if ((double)v != d)
			return errf(out, "%s.%s: expected an integer, got a fraction", cname,
			            ps->key);
		proto_param_set(&out->cmd, ps, v);
		return NULL;
	}
	case PROTO_BOOL:
		if (!cJSON_IsBool(item))
			return errf(out, "%s.%s: expected a boolean", cname, ps->key);
		proto_param_set(&out->cmd, ps, cJSON_IsTrue(item));
		return NULL;
	case PROTO_STRING: {
		if (!cJSON_IsString(item))
			return errf(out, "%s.%s: expected a string", cname, ps->key);
		out->name_storage = xstrdup(item->valuestring);
		out->cmd.name = out->name_storage;
		return NULL;
	}
	}
	return errf(out, "%s.%s: unsupported parameter type", cname, ps->key);
}

/* The member of obj named key, or NULL; a key given twice is ambiguous
 * (cJSON, like most parsers, would silently take the first), reported
 * through *dup. */
static const cJSON *unique_member(const cJSON *obj, const char *key, bool *dup)
{
	const cJSON *found = NULL;
	for (const cJSON *it = obj->child; it; it = it->next) {
		if (it->string && strcmp(it->string, key) == 0) {
			if (found) {
				*dup = true;
				return NULL;
			}
			found = it;
		}
	}
	return found;
}

/* Decode the parameters of a command object; returns NULL or an error. */
static const char *decode_params(const cJSON *root, enum cmd_type type, enum game_rules rules,
                                 struct proto_cmd *out)
{
	size_t nparams;
	const struct proto_param *params = proto_cmd_params(type, &nparams);
	const char *cname = cmd_name(type);
	const char *pair_key[2] = {NULL, NULL};
	int npair = 0, npair_present = 0;

	for (size_t i = 0; i < nparams; i++) {
		const struct proto_param *ps = &params[i];
		if ((ps->flags & PROTO_BASE_ONLY) && rules != RULES_BASE)
			continue;
		bool dup = false;
		const cJSON *item = unique_member(root, ps->key, &dup);
		if (dup)
			return errf(out, "%s.%s: given more than once", cname, ps->key);
		if (ps->flags & PROTO_PAIR) {
			if (npair < 2)
				pair_key[npair] = ps->key;
			npair++;
			if (item)
				npair_present++;
		}
		if (!item) {
			if (ps->flags & PROTO_OPTIONAL)
				continue;
			return errf(out, "%s.%s: missing", cname, ps->key);
		}
		const char *err = decode_param(ps, item, cname, out);
		if (err)
			return err;
		if (ps->flags & PROTO_TARGET)
			out->cmd.has_target = true;
	}
	if (npair_present != 0 && npair_present != npair)
		return errf(out, "%s: %s and %s must be given together", cname, pair_key[0],
		            pair_key[1] ? pair_key[1] : "?");
	return NULL;
}

/* {"command":"Reconnect","secret":S}: the session layer's command (with
 * sessions only). The secret is kept as sent when it has the length of
 * one; any other string is kept as "" (no secret matches it). Like the
 * game's commands it may carry other members, which are ignored. */
static const char *decode_reconnect(const cJSON *root, struct proto_cmd *out)
{
	const cJSON *sec = cJSON_GetObjectItemCaseSensitive(root, "secret");
	if (!cJSON_IsString(sec))
		return "Reconnect.secret: expected a string";
	out->reconnect = true;
	if (strlen(sec->valuestring) == PROTO_SECRET_HEX)
		memcpy(out->secret, sec->valuestring, PROTO_SECRET_HEX + 1);
	return NULL;
}

static const char *decode_root(const cJSON *root, enum game_rules rules, bool sessions,
                               struct proto_cmd *out)
{
	if (!cJSON_IsObject(root))
		return "not a JSON object";
	bool dup = false;
	const cJSON *jc = unique_member(root, "command", &dup);
	if (dup)
		return "\"command\" given more than once";
	if (!jc)
		return "missing \"command\"";
	if (!cJSON_IsString(jc))
		return "\"command\" must be a string";
	const char *name = jc->valuestring;
	for (int t = 0; t < CMD_TYPE_COUNT; t++) {
		if (strcmp(name, cmd_name((enum cmd_type)t)) == 0) {
			out->cmd.type = (enum cmd_type)t;
			return decode_params(root, (enum cmd_type)t, rules, out);
		}
	}
	if (sessions && strcmp(name, PROTO_RECONNECT) == 0)
		return decode_reconnect(root, out);
	/* Echo at most 64 bytes of the client's name, cut at a character boundary
	 * (the line was checked to be valid UTF-8, so this stays valid). */
	return errf(out, "unknown command \"%.*s\"%s", utf8_prefix(name, 64), name,
	            strlen(name) > 64 ? "..." : "");
}

/* ---- cJSON's memory while a line is decoded -----------------------------
 *
 * cJSON allocates every value and every string on its own: 8-10 malloc and
 * free pairs for a command line. While a line is parsed and decoded,
 * cJSON's hooks hand out memory from a small static arena instead (a bump
 * pointer, reset for every line; free does nothing there), and the tree is
 * dropped with the arena rather than freed node by node. What does not fit
 * comes from malloc and goes back with cJSON_Delete.
 *
 * The hooks are process-global: they are installed for one parse + decode
 * only and reset to malloc/free before proto_decode returns, so other users
 * of cJSON in the process (the tests, the tools) are unaffected as long as
 * none runs at the same time (the server is single-threaded). The hook also
 * tells an allocation failure apart from a text cJSON refuses.
 */

#define LINE_ARENA_SIZE 4096 /* a command line takes 300-700 bytes */

static struct {
	_Alignas(max_align_t) unsigned char mem[LINE_ARENA_SIZE];
	size_t used;
	size_t spilled; /* blocks from malloc not yet freed */
	bool oom;       /* malloc failed for a block that did not fit */
} line_arena;

static bool in_line_arena(const void *p)
{
	uintptr_t a = (uintptr_t)p, lo = (uintptr_t)line_arena.mem;
	return a >= lo && a - lo < sizeof line_arena.mem;
}

static void *line_arena_alloc(size_t n)
{
	size_t align = _Alignof(max_align_t);
	size_t need = (n + align - 1) & ~(align - 1);
	if (need >= n && need <= sizeof line_arena.mem - line_arena.used) {
		void *p = line_arena.mem + line_arena.used;
		line_arena.used += need;
		return p;
	}
	void *p = malloc(n);
	if (p)
		line_arena.spilled++;
	else
		line_arena.oom = true;
	return p;
}

static void line_arena_free(void *p)
{
	if (p && !in_line_arena(p)) {
		line_arena.spilled--;
		free(p);
	}
}

/* Parses the checked line with cJSON in the line arena and decodes the
 * command; returns NULL or the error. */
static const char *parse_and_decode(const char *line, size_t len, enum game_rules rules,
                                    bool sessions, struct proto_cmd *out)
{
	cJSON_Hooks hooks = {line_arena_alloc, line_arena_free};
	cJSON_InitHooks(&hooks);
	line_arena.used = 0;
	line_arena.spilled = 0;
	line_arena.oom = false;
	const char *e;
	cJSON *root = cJSON_ParseWithLength(line, len);
	if (root) {
		e = decode_root(root, rules, sessions, out);
	} else {
		if (line_arena.oom)
			xalloc_die(len);
		/* Not reached with the cJSON of Debian 12, which parses whatever
		 * json_check accepts (tests/test_json.c, fuzz/fuzz_json.c); one that
		 * does not (1.7.15 as released stopped numbers at 63 characters)
		 * must not bring the server down. */
		e = "malformed JSON: the JSON decoder (cJSON) refuses it";
	}
	if (line_arena.spilled)
		cJSON_Delete(root); /* the rest goes with the arena */
	cJSON_InitHooks(NULL);
	return e;
}

/* proto_decode, and with sessions proto_decode_session. */
static bool decode_line(const char *line, size_t len, enum game_rules rules, bool sessions,
                        struct proto_cmd *out, const char **err)
{
	proto_cmd_clear(out);
	const char *e = NULL;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len == 0) {
		e = "empty line";
		goto fail;
	}
	if (len > PROTO_MAX_LINE) {
		e = PROTO_ERR_LINE_TOO_LONG;
		goto fail;
	}
	struct json_error je;
	if (!json_check(line, len, &je)) {
		/* the line's own problems come first */
		if (memchr(line, '\0', len))
			e = "line contains a NUL byte";
		else if (!json_utf8_valid(line, len))
			e = "invalid UTF-8";
		else
			e = errf(out, "malformed JSON at byte %zu: %s", je.pos + 1, je.why);
		goto fail;
	}
	/* json_check passed: no NUL byte, and valid UTF-8 throughout (outside
	 * strings it allows ASCII only) */
	e = parse_and_decode(line, len, rules, sessions, out);
	if (e)
		goto fail;
	return true;

fail:
	proto_cmd_clear(out);
	*err = e;
	return false;
}

bool proto_decode(const char *line, size_t len, enum game_rules rules, struct proto_cmd *out,
                  const char **err)
{
	return decode_line(line, len, rules, false, out, err);
}

bool proto_decode_session(const char *line, size_t len, enum game_rules rules,
                          struct proto_cmd *out, const char **err)
{
	return decode_line(line, len, rules, true, out, err);
}

/* ---- encoding ------------------------------------------------------------ */

XGROWABLE_FUNCTIONS(proto_buf, reset, data, len)

/* See proto.h. Aborts on OOM (an event we cannot encode would
 * desynchronise every client). */
char *proto_buf_grow(struct proto_buf *b, size_t n)
{
	if (n > SIZE_MAX - b->len)
		xalloc_die(SIZE_MAX);
	b->data = xgrow(b->data, &b->cap, b->len + n, 1, 256);
	return b->data + b->len;
}

/* See proto.h. */
void proto_buf_shrink(struct proto_buf *b)
{
	if (b->len == 0 || b->len == b->cap)
		return;
	b->data = xrealloc(b->data, b->len);
	b->cap = b->len;
}

/* See proto.h. */
size_t proto_format_int(int64_t v, char out[PROTO_INT_DIGITS])
{
	char tmp[PROTO_INT_DIGITS];
	char *p = tmp + sizeof tmp;
	/* the magnitude as unsigned, so INT64_MIN is fine */
	uint64_t u = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	size_t n = (size_t)(tmp + sizeof tmp - p);
	memcpy(out, p, n);
	return n;
}

/* ---- the JSON writer ------------------------------------------------------ */

/* A byte that a JSON string holds as it is: printable ASCII but for '"'
 * and '\\' (bytes from 0x80 on are checked as UTF-8 sequences). */
static bool json_plain_byte(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* Append the escape of byte c (below 0x80, not json_plain_byte): one of the
 * two-character escapes JSON has, else \u00XX. */
static void put_escape(struct proto_buf *b, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	static const char *const short_escape[0x60] = {
	        ['"'] = "\\\"", ['\\'] = "\\\\", ['\b'] = "\\b", ['\f'] = "\\f",
	        ['\n'] = "\\n", ['\r'] = "\\r",  ['\t'] = "\\t"};
	assert(c < 0x80 && !json_plain_byte(c));
	if (c < 0x60 && short_escape[c]) {
		proto_buf_add(b, short_escape[c], 2);
	} else {
		char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
		proto_buf_add(b, u, sizeof u);
	}
}

void proto_put_string(struct proto_buf *b, const char *s, size_t n)
{
	assert(s || n == 0);
	const unsigned char *p = (const unsigned char *)s;
	PROTO_BUF_LIT(b, "\"");
	while (n > 0) {
		/* copy the longest run that needs no escaping in one go */
		size_t run = 0;
		while (run < n && json_plain_byte(p[run]))
			run++;
		if (run) {
			proto_buf_add(b, (const char *)p, run);
			p += run;
			n -= run;
			continue;
		}
		size_t k = 1;
		if (*p < 0x80) {
			put_escape(b, *p);
		} else if ((k = json_utf8_len(p, n)) != 0) {
			proto_buf_add(b, (const char *)p, k);
		} else {
			PROTO_BUF_LIT(b, "\\ufffd");
			k = 1;
		}
		p += k;
		n -= k;
	}
	PROTO_BUF_LIT(b, "\"");
}

void proto_put_key(struct proto_buf *b, const char *key)
{
	assert(b->len > 0 && key);
	if (b->data[b->len - 1] == '{')
		PROTO_BUF_LIT(b, "\"");
	else
		PROTO_BUF_LIT(b, ",\"");
	proto_buf_add(b, key, strlen(key));
	PROTO_BUF_LIT(b, "\":");
}

void proto_put_int(struct proto_buf *b, int64_t v)
{
	b->len += proto_format_int(v, proto_buf_room(b, PROTO_INT_DIGITS));
}

void proto_put_bool(struct proto_buf *b, bool v)
{
	if (v)
		PROTO_BUF_LIT(b, "true");
	else
		PROTO_BUF_LIT(b, "false");
}

/* A NUL-terminated string (NULL: ""). */
static void put_cstring(struct proto_buf *b, const char *s)
{
	s = s ? s : "";
	proto_put_string(b, s, strlen(s));
}

/* One parameter of an event: its row in event_table.h. */
struct event_param {
	const char *key;
	enum sopra_event_kind kind;
	enum sopra_event_presence presence;
};

/* One array of parameters per event, from event_table.h's EPARAM lists,
 * each ended by a row with key == NULL (an event may have none). */
#define EPARAM(kind, key, presence) {key, SOPRA_EVENT_##kind, presence},
#define EVENT_PARAM_ARRAY(id, name, params) \
	static const struct event_param event_params_##id[] = {SOPRA_EVENT_PARAMS params{0}};
SOPRA_EVENTS(EVENT_PARAM_ARRAY)
#undef EVENT_PARAM_ARRAY
#undef EPARAM

static const struct event_param *const event_params[GAME_EVENT_TYPE_COUNT] = {
#define EVENT_PARAMS_ROW(id, ...) [GEV_##id] = event_params_##id,
        SOPRA_EVENTS(EVENT_PARAMS_ROW)
#undef EVENT_PARAMS_ROW
};

static const char *const food_reason_names[] = {
#define REASON_NAME(id, name) name,
        SOPRA_FOOD_REASONS(REASON_NAME)};
static const char *const moral_reason_names[] = {SOPRA_MORAL_REASONS(REASON_NAME)};
#undef REASON_NAME

/* names[v], or "UNKNOWN" when v is out of range. */
static const char *reason_name(const char *const *names, size_t n, int v)
{
	return v >= 0 && (size_t)v < n ? names[v] : "UNKNOWN";
}

/* The string parameter of ev: ev->str, or for a CommandFailed without a
 * message a general one (a client always gets a message). */
static const char *event_string(const struct game_event *ev)
{
	if (ev->type == GEV_COMMAND_FAILED && (!ev->str || !*ev->str))
		return "command failed";
	return ev->str;
}

/* Write parameter p of ev, the integer-like ones from arg[i]. */
static void put_event_param(struct proto_buf *b, const struct event_param *p,
                            const struct game_event *ev, int i)
{
	proto_put_key(b, p->key);
	switch (p->kind) {
	case SOPRA_EVENT_INT:
		proto_put_int(b, ev->arg[i]);
		return;
	case SOPRA_EVENT_BOOL:
		proto_put_bool(b, ev->arg[i]);
		return;
	case SOPRA_EVENT_STRING:
		put_cstring(b, event_string(ev));
		return;
	case SOPRA_EVENT_FOOD_REASON:
		put_cstring(
		        b, reason_name(food_reason_names, COUNT_OF(food_reason_names), ev->arg[i]));
		return;
	case SOPRA_EVENT_MORAL_REASON:
		put_cstring(b, reason_name(moral_reason_names, COUNT_OF(moral_reason_names),
		                           ev->arg[i]));
		return;
	}
}

/*
 * The parameters of the event's row in order: EVENT_ALWAYS ones always,
 * EVENT_BASE_ONLY ones in base (never in revised), the optional ones
 * (EVENT_OPTIONAL, EVENT_PAIR) as a group, when ev->nargs counts more
 * integer-like parameters than come before the first of them. The
 * integer-like parameters are arg[0..] in row order, the STRING one ev->str.
 */
void proto_encode(const struct game_event *ev, enum game_rules rules, struct proto_buf *out)
{
	const char *name = game_event_name(ev->type);
	PROTO_BUF_LIT(out, "{\"event\":\"");
	proto_buf_add(out, name, strlen(name));
	PROTO_BUF_LIT(out, "\"");
	const struct event_param *p =
	        (unsigned)ev->type < GAME_EVENT_TYPE_COUNT ? event_params[ev->type] : NULL;
	int i = 0; /* the index in arg[] of the next integer-like parameter */
	int optional_from = -1;
	for (; p && p->key; p++) {
		bool put = true;
		if (p->presence == EVENT_BASE_ONLY) {
			put = rules == RULES_BASE;
		} else if (p->presence != EVENT_ALWAYS) {
			if (optional_from < 0)
				optional_from = i;
			put = ev->nargs > optional_from;
		}
		if (put)
			put_event_param(out, p, ev, i);
		if (p->kind != SOPRA_EVENT_STRING)
			i++;
	}
	PROTO_BUF_LIT(out, "}\n");
}

void proto_put_cmd(struct proto_buf *b, const struct cmd *c, enum game_rules rules)
{
	const char *name = cmd_name(c->type);
	proto_put_key(b, "command");
	proto_put_string(b, name, strlen(name));
	size_t n;
	const struct proto_param *params = proto_cmd_params(c->type, &n);
	for (size_t i = 0; i < n; i++) {
		const struct proto_param *p = &params[i];
		if (!proto_param_carried(c, p) ||
		    (rules != RULES_BASE && (p->flags & PROTO_BASE_ONLY)))
			continue;
		proto_put_key(b, p->key);
		switch (p->type) {
		case PROTO_INT:
			proto_put_int(b, proto_param_get(c, p));
			break;
		case PROTO_BOOL:
			proto_put_bool(b, proto_param_get(c, p));
			break;
		case PROTO_STRING:
			put_cstring(b, c->name);
			break;
		}
	}
}

void proto_encode_cmd(const struct cmd *c, enum game_rules rules, struct proto_buf *out)
{
	PROTO_BUF_LIT(out, "{");
	proto_put_cmd(out, c, rules);
	PROTO_BUF_LIT(out, "}\n");
}

void proto_encode_reconnect(const char *secret, struct proto_buf *out)
{
	assert(secret && out);
	PROTO_BUF_LIT(out, "{");
	proto_put_key(out, "command");
	proto_put_string(out, PROTO_RECONNECT, strlen(PROTO_RECONNECT));
	proto_put_key(out, "secret");
	proto_put_string(out, secret, strlen(secret));
	PROTO_BUF_LIT(out, "}\n");
}
