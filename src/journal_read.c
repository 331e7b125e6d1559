/*
 * journal_read: the journal's reader (include/sopra/journal.h,
 * docs/journal.md): a file of flat JSON objects, one per line, checked by
 * the strict check in front of cJSON (json.h), into a struct journal_file.
 */
#include "journal_int.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/base64.h>

#include <cjson/cJSON.h>

#include "sopra/game.h"
#include "sopra/json.h"
#include "sopra/xalloc.h"

/* Fields in one journal line (the header has the most: 16). */
#define JOURNAL_MAX_FIELDS 32
/* Bytes journal_load reads at a time. */
#define JOURNAL_LOAD_CHUNK 65536

/* ---- one flat JSON object per line ---------------------------------------- */

enum jv_type { JV_STR, JV_INT, JV_BOOL, JV_NULL };

/* One member of a journal line. key and s point into the line's cJSON
 * tree (struct jobj owns it). */
struct jfield {
	const char *key;
	size_t klen;
	enum jv_type type;
	const char *s; /* JV_STR: NUL-terminated, slen bytes */
	size_t slen;
	int64_t i;
	bool b;
};

struct jobj {
	struct jfield f[JOURNAL_MAX_FIELDS];
	int n;
	cJSON *tree; /* owned */
};

static void jobj_free(struct jobj *o)
{
	cJSON_Delete(o->tree);
	o->tree = NULL;
	o->n = 0;
}

/* The largest integer a double (cJSON's number) holds exactly: journal
 * integers stay below it; the seed, a full 64-bit value, is a string. */
#define JOURNAL_MAX_EXACT ((int64_t)1 << 53)

/* Member m of a line as a field; false with *why for what the format does
 * not have (nested values, fractions, integers beyond 2^53). */
static bool take_field(const cJSON *m, struct jfield *f, const char **why)
{
	*f = (struct jfield){.key = m->string, .klen = strlen(m->string)};
	if (cJSON_IsString(m)) {
		f->type = JV_STR;
		f->s = m->valuestring;
		f->slen = strlen(m->valuestring);
	} else if (cJSON_IsBool(m)) {
		f->type = JV_BOOL;
		f->b = cJSON_IsTrue(m);
	} else if (cJSON_IsNull(m)) {
		f->type = JV_NULL;
	} else if (cJSON_IsNumber(m)) {
		double d = m->valuedouble;
		if (d != d || d < -(double)JOURNAL_MAX_EXACT || d > (double)JOURNAL_MAX_EXACT ||
		    (double)(int64_t)d != d) {
			*why = "not an integer of the format";
			return false;
		}
		f->type = JV_INT;
		f->i = (int64_t)d;
	} else {
		*why = "nested values are not part of the format";
		return false;
	}
	return true;
}

/* Parse one line (without its "\n") as a flat object -- string keys;
 * string, integer, boolean or null values -- with the strict check in
 * front of cJSON (json.h) and no key twice. */
static bool parse_object(const char *line, size_t len, struct jobj *o, const char **why)
{
	struct json_error je;
	o->n = 0;
	o->tree = NULL;
	if (!json_check(line, len, &je)) {
		*why = je.why;
		return false;
	}
	o->tree = cJSON_ParseWithLength(line, len);
	if (!o->tree)
		xalloc_die(len); /* json_check accepted it: only memory can fail */
	if (!cJSON_IsObject(o->tree)) {
		*why = "not a JSON object";
		goto fail;
	}
	for (const cJSON *m = o->tree->child; m; m = m->next) {
		if (o->n == JOURNAL_MAX_FIELDS) {
			*why = "too many fields";
			goto fail;
		}
		struct jfield *f = &o->f[o->n];
		if (!take_field(m, f, why))
			goto fail;
		for (int k = 0; k < o->n; k++)
			if (o->f[k].klen == f->klen && memcmp(o->f[k].key, f->key, f->klen) == 0) {
				*why = "a key given twice";
				goto fail;
			}
		o->n++;
	}
	return true;
fail:
	jobj_free(o);
	return false;
}

static const struct jfield *field(const struct jobj *o, const char *key)
{
	size_t n = strlen(key);
	for (int i = 0; i < o->n; i++)
		if (o->f[i].klen == n && memcmp(o->f[i].key, key, n) == 0)
			return &o->f[i];
	return NULL;
}

/* ---- records ------------------------------------------------------------- */

struct rd {
	const struct jobj *o;
	const char *why; /* first problem, static or in msg */
	char msg[128];
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
rd_fail(struct rd *r, const char *fmt, ...)
{
	if (r->why)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
	r->why = r->msg;
}

static int64_t rd_int(struct rd *r, const char *key, int64_t min, int64_t max)
{
	const struct jfield *f = field(r->o, key);
	if (!f || f->type != JV_INT) {
		rd_fail(r, "\"%s\": %s", key, f ? "expected an integer" : "missing");
		return 0;
	}
	if (f->i < min || f->i > max) {
		rd_fail(r, "\"%s\": out of range", key);
		return 0;
	}
	return f->i;
}

/* The header's seed: a decimal string (a 64-bit value does not fit a
 * JSON number as readers hold it). */
static int64_t rd_seed(struct rd *r)
{
	const struct jfield *f = field(r->o, "seed");
	char *end = NULL;
	errno = 0;
	long long v = f && f->type == JV_STR ? strtoll(f->s, &end, 10) : 0;
	if (!f || f->type != JV_STR || !f->slen || *end || errno == ERANGE ||
	    (f->s[0] != '-' && (f->s[0] < '0' || f->s[0] > '9'))) {
		rd_fail(r, "\"seed\": %s", f ? "expected a decimal string" : "missing");
		return 0;
	}
	return (int64_t)v;
}

static int rd_int32(struct rd *r, const char *key)
{
	return (int)rd_int(r, key, INT32_MIN, INT32_MAX);
}

static bool rd_has(const struct rd *r, const char *key)
{
	return field(r->o, key) != NULL;
}

static bool rd_bool(struct rd *r, const char *key)
{
	const struct jfield *f = field(r->o, key);
	if (!f || f->type != JV_BOOL) {
		rd_fail(r, "\"%s\": %s", key, f ? "expected true or false" : "missing");
		return false;
	}
	return f->b;
}

/* A string stored as "key" (text) or "key64" (base64). Returns an owned
 * copy (NUL-terminated) or NULL (problem recorded). */
static char *rd_str(struct rd *r, const char *key, size_t *len)
{
	const struct jfield *f = field(r->o, key);
	char k64[64];
	snprintf(k64, sizeof k64, "%s64", key);
	const struct jfield *f64 = field(r->o, k64);
	size_t dummy;
	if (!len)
		len = &dummy;
	if (f && f->type == JV_STR && !f64) {
		*len = f->slen;
		return xmemdup0(f->s, f->slen);
	}
	if (f64 && f64->type == JV_STR && !f) {
		struct base64_decode_ctx c;
		char *out = xmalloc(BASE64_DECODE_LENGTH(f64->slen) + 1);
		size_t n = 0;
		base64_decode_init(&c);
		if (base64_decode_update(&c, &n, (uint8_t *)out, f64->slen, f64->s) &&
		    base64_decode_final(&c)) {
			out[n] = '\0';
			*len = n;
			return out;
		}
		free(out);
		rd_fail(r, "\"%s\": bad base64", k64);
		return NULL;
	}
	rd_fail(r, "\"%s\": %s", key, f || f64 ? "expected one string" : "missing");
	return NULL;
}

static bool parse_cmd_type(const char *name, enum cmd_type *out)
{
	for (int t = 0; t < CMD_TYPE_COUNT; t++)
		if (strcmp(cmd_name((enum cmd_type)t), name) == 0) {
			*out = (enum cmd_type)t;
			return true;
		}
	return false;
}

static void read_param(struct rd *r, struct journal_record *rec, const struct proto_param *p)
{
	switch (p->type) {
	case PROTO_INT:
		proto_param_set(&rec->cmd, p, rd_int32(r, p->key));
		return;
	case PROTO_BOOL:
		proto_param_set(&rec->cmd, p, rd_bool(r, p->key));
		return;
	case PROTO_STRING:
		rec->name = rd_str(r, p->key, NULL);
		rec->cmd.name = rec->name;
		return;
	}
}

/* Whether the record holds p: a target parameter when any of the target's
 * parameters is there (then all must be), another optional one (fuel) when
 * it is there, a required one always. */
static bool record_has_param(const struct rd *r, const struct cmd *c, const struct proto_param *p)
{
	if (proto_param_with_target(p))
		return c->has_target;
	return !(p->flags & PROTO_OPTIONAL) || rd_has(r, p->key);
}

static void read_command(struct rd *r, struct journal_record *rec)
{
	char *name = rd_str(r, "command", NULL);
	if (!name)
		return;
	struct cmd *c = &rec->cmd;
	bool known = parse_cmd_type(name, &c->type);
	if (!known)
		rd_fail(r, "unknown command \"%.40s\"", name);
	free(name);
	if (!known)
		return;
	size_t n;
	const struct proto_param *params = proto_cmd_params(c->type, &n);
	for (size_t i = 0; i < n; i++)
		if (proto_param_with_target(&params[i]) && rd_has(r, params[i].key))
			c->has_target = true;
	for (size_t i = 0; i < n; i++)
		if (record_has_param(r, c, &params[i]))
			read_param(r, rec, &params[i]);
}

static void journal_record_free(struct journal_record *rec)
{
	free(rec->name);
	free(rec->error);
	free(rec->reason);
	free(rec->secret);
	memset(rec, 0, sizeof *rec);
}

/* One line after the header. false: r->why says what is wrong. */
static bool read_record(struct rd *r, struct journal_record *rec)
{
	memset(rec, 0, sizeof *rec);
	if (rd_has(r, "digest")) {
		rec->kind = JOURNAL_DIGEST;
		char *hex = rd_str(r, "digest", NULL);
		if (hex && !journal_hex_decode(hex, strlen(hex), rec->sha256, sizeof rec->sha256))
			rd_fail(r, "\"digest\": expected 64 hex digits");
		free(hex);
		rec->n = rd_int(r, "n", 0, INT64_MAX);
		rec->lines = rd_int(r, "lines", 0, INT64_MAX);
		rec->bytes = rd_int(r, "bytes", 0, INT64_MAX);
	} else if (rd_has(r, "resume")) {
		rec->kind = JOURNAL_RESUME;
		rec->reason = rd_str(r, "resume", NULL);
		rec->n = rd_int(r, "n", 0, INT64_MAX);
		rec->ms = rd_int(r, "ms", 0, INT64_MAX);
	} else if (rd_has(r, "end")) {
		rec->kind = JOURNAL_END;
		rec->reason = rd_str(r, "end", NULL);
		rec->n = rd_int(r, "n", 0, INT64_MAX);
		rec->ms = rd_int(r, "ms", 0, INT64_MAX);
	} else {
		rec->n = rd_int(r, "n", 1, INT64_MAX);
		rec->ms = rd_int(r, "ms", 0, INT64_MAX);
		rec->comm_id = (int)rd_int(r, "comm", 0, INT32_MAX);
		rec->player = (int)rd_int(r, "player", -1, INT32_MAX);
		if (rd_has(r, "command")) {
			rec->kind = JOURNAL_COMMAND;
			read_command(r, rec);
			if (rec->comm_id < 1) /* the server numbers connections from 1 */
				rd_fail(r, "\"comm\": a command's connection is 1 or more");
		} else if (rd_has(r, "bad") || rd_has(r, "bad64")) {
			rec->kind = JOURNAL_BAD;
			rec->error = rd_str(r, "bad", NULL);
		} else if (rd_has(r, "timeout")) {
			rec->kind = JOURNAL_TIMEOUT;
			if (!rd_bool(r, "timeout"))
				rd_fail(r, "\"timeout\": must be true");
		} else if (rd_has(r, "lost")) {
			rec->kind = JOURNAL_LOST;
			if (!rd_bool(r, "lost"))
				rd_fail(r, "\"lost\": must be true");
			rec->drain = rd_bool(r, "drain");
		} else if (rd_has(r, "reconnect")) {
			rec->kind = JOURNAL_RECONNECT;
			rec->secret = rd_str(r, "reconnect", NULL);
		} else if (rd_has(r, "graceOver")) {
			rec->kind = JOURNAL_GRACE_OVER;
			rec->target = (int)rd_int(r, "graceOver", 0, INT32_MAX);
		} else {
			rd_fail(r, "not a journal record (no command, bad, timeout, lost, digest "
			           "or end)");
		}
	}
	if (r->why) {
		journal_record_free(rec);
		return false;
	}
	return true;
}

/* Version 3 on: the header line (len bytes without its "\n") ends with
 * ,"headerSha256":"<hex>"} and the hash is that of every byte before the
 * ",". False with why otherwise. */
static bool header_hash_holds(const char *line, size_t len, const char **why)
{
	static const char key[] = ",\"" JOURNAL_HEADER_HASH_KEY "\":\"";
	size_t klen = sizeof key - 1, hlen = (size_t)2 * SHA256_DIGEST_SIZE;
	size_t tail = klen + hlen + 2; /* the key, the hex, "} */
	uint8_t want[SHA256_DIGEST_SIZE], got[SHA256_DIGEST_SIZE];
	if (len < tail || memcmp(line + len - tail, key, klen) != 0 ||
	    memcmp(line + len - 2, "\"}", 2) != 0 ||
	    !journal_hex_decode(line + len - tail + klen, hlen, want, sizeof want)) {
		*why = "the header does not end with its \"" JOURNAL_HEADER_HASH_KEY "\"";
		return false;
	}
	journal_sha256_of(line, len - tail, got);
	if (memcmp(want, got, sizeof got) != 0) {
		*why = "header hash mismatch: the header was edited or damaged";
		return false;
	}
	return true;
}

static bool read_header(struct rd *r, struct journal_file *jf)
{
	const struct jfield *f = field(r->o, "journal");
	char *fmt = f && f->type == JV_STR ? rd_str(r, "journal", NULL) : NULL;
	bool ours = fmt && strcmp(fmt, JOURNAL_FORMAT) == 0;
	free(fmt);
	if (!ours) {
		rd_fail(r, "not a sopra journal (the first line has no \"journal\":\"%s\")",
		        JOURNAL_FORMAT);
		return false;
	}
	jf->version = (int)rd_int(r, "version", 0, INT32_MAX);
	if (!r->why && (jf->version < JOURNAL_VERSION_PLAIN || jf->version > JOURNAL_VERSION)) {
		rd_fail(r, "journal format version %d; this build reads versions %d to %d",
		        jf->version, JOURNAL_VERSION_PLAIN, JOURNAL_VERSION);
		return false;
	}
	if (!r->why && (jf->version == JOURNAL_VERSION_2 ||
	                (jf->version >= JOURNAL_VERSION && rd_has(r, "sessionKey")))) {
		char *key = rd_str(r, "sessionKey", NULL);
		if (key &&
		    !journal_hex_decode(key, strlen(key), jf->session_key, sizeof jf->session_key))
			rd_fail(r, "\"sessionKey\": expected %d hex digits", 2 * JOURNAL_KEY_BYTES);
		free(key);
		jf->grace_sec = (int)rd_int(r, "grace", 0, INT32_MAX);
		jf->sessions = true;
	}
	if (!r->why && jf->version >= JOURNAL_VERSION)
		jf->failure_budget = (int)rd_int(r, "failureBudget", 0, INT32_MAX);
	jf->server = rd_str(r, "server", NULL);
	char *rules = rd_str(r, "rules", NULL);
	if (rules && !game_rules_parse(rules, &jf->rules))
		rd_fail(r, "\"rules\": unknown edition \"%.20s\"", rules);
	free(rules);
	jf->seed = rd_seed(r);
	jf->timeout_sec = (int)rd_int(r, "timeout", 1, INT32_MAX);
	char *sync = rd_str(r, "sync", NULL);
	if (sync && !journal_sync_parse(sync, &jf->sync))
		rd_fail(r, "\"sync\": unknown policy \"%.20s\"", sync);
	free(sync);
	jf->config_path = rd_str(r, "configPath", NULL);
	jf->config_text = rd_str(r, "config", &jf->config_len);
	int64_t bytes = rd_int(r, "configBytes", 0, INT64_MAX);
	char *hex = rd_str(r, "configSha256", NULL);
	if (hex &&
	    !journal_hex_decode(hex, strlen(hex), jf->config_sha256, sizeof jf->config_sha256))
		rd_fail(r, "\"configSha256\": expected 64 hex digits");
	free(hex);
	jf->start = rd_str(r, "start", NULL);
	jf->start_unix_ms = rd_int(r, "startUnixMs", INT64_MIN, INT64_MAX);
	if (r->why)
		return false;
	uint8_t d[SHA256_DIGEST_SIZE];
	journal_sha256_of(jf->config_text, jf->config_len, d);
	if ((int64_t)jf->config_len != bytes || memcmp(d, jf->config_sha256, sizeof d) != 0) {
		char want[2 * SHA256_DIGEST_SIZE + 1], got[2 * SHA256_DIGEST_SIZE + 1];
		journal_hex_encode(jf->config_sha256, sizeof d, want);
		journal_hex_encode(d, sizeof d, got);
		rd_fail(r,
		        "configuration hash mismatch: the header says %.12s... (%lld bytes), "
		        "the stored text is %.12s... (%zu bytes)",
		        want, (long long)bytes, got, jf->config_len);
		return false;
	}
	return true;
}

void journal_file_free(struct journal_file *jf)
{
	for (size_t i = 0; i < jf->nrec; i++)
		journal_record_free(&jf->rec[i]);
	free(jf->rec);
	free(jf->server);
	free(jf->config_path);
	free(jf->config_text);
	free(jf->start);
	memset(jf, 0, sizeof *jf);
}

/* Whether rec may follow the records read so far; why otherwise. */
static const char *sequence_error(const struct journal_file *jf, const struct journal_record *rec,
                                  char *buf, size_t len)
{
	if (jf->ended)
		return "a record after the end record";
	switch (rec->kind) {
	case JOURNAL_DIGEST:
	case JOURNAL_END:
	case JOURNAL_RESUME:
		if (rec->n != jf->entries) {
			snprintf(buf, len, "%s after %lld entries names %lld",
			         rec->kind == JOURNAL_END ? "end record" : "digest",
			         (long long)jf->entries, (long long)rec->n);
			return buf;
		}
		return NULL;
	case JOURNAL_COMMAND:
	case JOURNAL_BAD:
	case JOURNAL_TIMEOUT:
	case JOURNAL_LOST:
	case JOURNAL_RECONNECT:
	case JOURNAL_GRACE_OVER:
		if (rec->n != jf->entries + 1) {
			snprintf(buf, len, "entry %lld follows entry %lld", (long long)rec->n,
			         (long long)jf->entries);
			return buf;
		}
		return NULL;
	}
	return NULL;
}

/* A journal ends at its first NUL byte: the zero tail the writer takes
 * ahead (src/mapfile.c) that a crash left in place. No line holds a NUL
 * (strings with one are base64). What follows the first NUL is dropped,
 * and said when it is not all zeros: after a power loss, a page written
 * back behind one that was not. Returns the content's length. */
static size_t content_length(const char *data, size_t len, struct journal_file *jf)
{
	const char *nul = memchr(data, '\0', len);
	if (!nul)
		return len;
	size_t end = (size_t)(nul - data), stray = 0;
	for (size_t i = end; i < len; i++)
		stray += data[i] != '\0';
	if (stray) {
		jf->torn = true;
		snprintf(jf->torn_why, sizeof jf->torn_why,
		         "%zu bytes after a NUL byte at offset %zu dropped (%zu not zero)",
		         len - end, end, stray);
	}
	return end;
}

bool journal_parse(const char *data, size_t len, const char *name, struct journal_file *jf,
                   char *err, size_t errlen)
{
	memset(jf, 0, sizeof *jf);
	len = content_length(data, len, jf);
	size_t cap = 0;
	size_t pos = 0;
	struct jobj o = {0};
	for (size_t line_no = 1; pos < len; line_no++) {
		const char *line = data + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		bool last = !nl || pos + n + 1 == len;
		const char *why = NULL;
		char seq[160];
		struct journal_record rec = {0};
		struct rd r = {.o = &o};
		if (!nl) {
			why = "no \"\\n\" at its end (torn write)";
		} else if (!parse_object(line, n, &o, &why)) {
			/* why set */
		} else if (line_no == 1) {
			if (!read_header(&r, jf))
				why = r.why;
			else if (jf->version >= JOURNAL_VERSION)
				header_hash_holds(line, n, &why);
			jobj_free(&o);
			if (why) {
				snprintf(err, errlen, "%s:1: %s", name, why);
				journal_file_free(jf);
				return false;
			}
			pos += n + 1;
			jf->valid_bytes = pos;
			jf->resume_bytes = pos;
			continue;
		} else {
			if (!read_record(&r, &rec))
				why = r.why;
			else if ((why = sequence_error(jf, &rec, seq, sizeof seq)) != NULL)
				journal_record_free(&rec);
			jobj_free(&o);
		}
		if (why) {
			if (last && line_no > 1) {
				/* what a crash mid-write leaves: drop it */
				jf->torn = true;
				snprintf(jf->torn_why, sizeof jf->torn_why,
				         "line %zu (%zu bytes) dropped: %.100s", line_no, n, why);
				break;
			}
			snprintf(err, errlen, "%s:%zu: %s%s", name, line_no, why,
			         line_no == 1 ? " (the header)" : "");
			journal_file_free(jf);
			return false;
		}
		rec.line_no = line_no;
		jf->rec = xgrow(jf->rec, &cap, jf->nrec + 1, sizeof *jf->rec, 64);
		jf->rec[jf->nrec++] = rec;
		if (journal_kind_is_entry(rec.kind))
			jf->entries++;
		if (rec.comm_id > jf->max_comm)
			jf->max_comm = rec.comm_id;
		if (rec.kind == JOURNAL_END)
			jf->ended = true;
		pos += n + 1;
		jf->valid_bytes = pos;
		if (rec.kind != JOURNAL_END)
			jf->resume_bytes = pos;
	}
	if (jf->valid_bytes == 0) {
		snprintf(err, errlen, "%s: %s", name,
		         len ? "no complete header line" : "empty file (no header)");
		journal_file_free(jf);
		return false;
	}
	return true;
}

bool journal_load(const char *path, struct journal_file *jf, char *err, size_t errlen)
{
	memset(jf, 0, sizeof *jf);
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return false;
	}
	/* read straight into the heap: a chunk on the stack would stay
	 * resident under the whole game that follows (a journal directory's
	 * previous journal is loaded at every start) */
	struct proto_buf b = {0};
	size_t n;
	while ((n = fread(proto_buf_room(&b, JOURNAL_LOAD_CHUNK), 1, JOURNAL_LOAD_CHUNK, f)) > 0)
		b.len += n;
	bool rerr = ferror(f) != 0;
	fclose(f);
	if (rerr) {
		snprintf(err, errlen, "cannot read %s", path);
		proto_buf_free(&b);
		return false;
	}
	bool ok = journal_parse(b.data ? b.data : "", b.len, path, jf, err, errlen);
	proto_buf_free(&b);
	return ok;
}
