/* json: a strict RFC 8259 parser (see include/sopra/json.h). One scanner
 * serves both json_check (doc == NULL: nothing is built) and json_parse
 * (nodes and decoded strings go to the document's arena). */
#include "sopra/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct json_block {
	struct json_block *next;
	_Alignas(16) char data[];
};

struct jscan {
	const unsigned char *s;
	size_t n, i;          /* text, length, position */
	const char *why;      /* set on error; i is then the error position */
	struct json_doc *doc; /* NULL: check only */
};

#define JSON_BLOCK_MIN 16384u

/* size bytes from the document's arena (8-byte aligned), or NULL. */
static void *arena_alloc(struct json_doc *d, size_t size)
{
	size = (size + 7u) & ~(size_t)7u;
	if (d->cap - d->used < size) {
		size_t cap = d->cap < JSON_BLOCK_MIN ? JSON_BLOCK_MIN : d->cap * 2;
		if (cap < size)
			cap = size;
		if (cap > SIZE_MAX - sizeof(struct json_block))
			return NULL;
		struct json_block *b = malloc(sizeof *b + cap);
		if (!b)
			return NULL;
		b->next = d->blocks;
		d->blocks = b;
		d->cur = b->data;
		d->cap = cap;
		d->used = 0;
	}
	void *p = d->cur + d->used;
	d->used += size;
	return p;
}

/* Marks a syntax error at the current position; always returns false. */
static bool js_fail(struct jscan *j, const char *why)
{
	j->why = why;
	return false;
}

/* Skips JSON whitespace. */
static void js_ws(struct jscan *j)
{
	while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' ||
	                       j->s[j->i] == '\r'))
		j->i++;
}

/* Reads 4 hex digits at s[i..]; returns the value or -1. */
static long js_hex4(const struct jscan *j, size_t i)
{
	if (j->n - i < 4)
		return -1;
	long v = 0;
	for (size_t k = 0; k < 4; k++) {
		unsigned char ch = j->s[i + k];
		int d;
		if (ch >= '0' && ch <= '9')
			d = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			d = ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			d = ch - 'A' + 10;
		else
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* See json.h. */
size_t json_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

/* Checks one well-formed UTF-8 sequence (non-ASCII) at the position and
 * advances past it. */
static bool js_utf8(struct jscan *j)
{
	size_t len = json_utf8_len(j->s + j->i, j->n - j->i);
	if (len == 0)
		return js_fail(j, "invalid UTF-8");
	j->i += len;
	return true;
}

/* Encodes code point cp as UTF-8 at *o and advances *o. */
static void put_utf8(char **o, uint32_t cp)
{
	unsigned char *p = (unsigned char *)*o;
	if (cp < 0x80) {
		*p++ = (unsigned char)cp;
	} else if (cp < 0x800) {
		*p++ = (unsigned char)(0xC0 | (cp >> 6));
		*p++ = (unsigned char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*p++ = (unsigned char)(0xE0 | (cp >> 12));
		*p++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		*p++ = (unsigned char)(0x80 | (cp & 0x3F));
	} else {
		*p++ = (unsigned char)(0xF0 | (cp >> 18));
		*p++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
		*p++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		*p++ = (unsigned char)(0x80 | (cp & 0x3F));
	}
	*o = (char *)p;
}

/* Decodes the checked string body s[0..n) (between the quotes) into out,
 * which has room for n + 1 bytes: no escape grows. */
static void decode_string(const unsigned char *s, size_t n, char *out)
{
	static const char simple[][2] = {{'"', '"'},  {'\\', '\\'}, {'/', '/'},  {'b', '\b'},
	                                 {'f', '\f'}, {'n', '\n'},  {'r', '\r'}, {'t', '\t'}};
	char *o = out;
	const struct jscan hex = {s, n, 0, NULL, NULL};
	for (size_t i = 0; i < n;) {
		if (s[i] != '\\') {
			*o++ = (char)s[i++];
			continue;
		}
		unsigned char e = s[i + 1];
		if (e != 'u') {
			for (size_t k = 0; k < sizeof simple / sizeof simple[0]; k++)
				if (simple[k][0] == (char)e)
					*o++ = simple[k][1];
			i += 2;
			continue;
		}
		uint32_t cp = (uint32_t)js_hex4(&hex, i + 2);
		i += 6;
		if (cp >= 0xD800 && cp <= 0xDBFF) { /* checked: a low surrogate follows */
			uint32_t lo = (uint32_t)js_hex4(&hex, i + 2);
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			i += 6;
		}
		put_utf8(&o, cp);
	}
	*o = '\0';
}

/* Checks a string starting at the opening quote. Rejects control
 * characters, bad escapes, lone surrogates and \u0000. When out is given
 * (building), stores the decoded string from the arena there. */
static bool js_string(struct jscan *j, const char **out)
{
	size_t start = ++j->i; /* after the opening quote */
	for (;;) {
		if (j->i >= j->n)
			return js_fail(j, "unterminated string");
		unsigned char ch = j->s[j->i];
		if (ch == '"')
			break;
		if (ch < 0x20)
			return js_fail(j, "control character in string");
		if (ch >= 0x80) {
			if (!js_utf8(j))
				return false;
			continue;
		}
		if (ch != '\\') {
			j->i++;
			continue;
		}
		if (j->i + 1 >= j->n)
			return js_fail(j, "unterminated string");
		unsigned char e = j->s[j->i + 1];
		if (strchr("\"\\/bfnrt", e) && e != '\0') {
			j->i += 2;
			continue;
		}
		if (e != 'u')
			return js_fail(j, "invalid escape in string");
		long u = js_hex4(j, j->i + 2);
		if (u < 0)
			return js_fail(j, "invalid \\u escape in string");
		if (u == 0)
			return js_fail(j, "\\u0000 is not allowed in strings");
		if (u >= 0xDC00 && u <= 0xDFFF)
			return js_fail(j, "lone surrogate in \\u escape");
		if (u >= 0xD800 && u <= 0xDBFF) {
			size_t k = j->i + 6;
			long lo = (k + 1 < j->n && j->s[k] == '\\' && j->s[k + 1] == 'u')
			                  ? js_hex4(j, k + 2)
			                  : -1;
			if (lo < 0xDC00 || lo > 0xDFFF)
				return js_fail(j, "lone surrogate in \\u escape");
			j->i += 12;
			continue;
		}
		j->i += 6;
	}
	size_t len = j->i - start;
	j->i++; /* closing quote */
	if (out) {
		char *dst = arena_alloc(j->doc, len + 1);
		if (!dst)
			return js_fail(j, "out of memory");
		decode_string(j->s + start, len, dst);
		*out = dst;
	}
	return true;
}

/* Converts the checked number text s[0..n) as strtod does. Up to 15 digits
 * without fraction or exponent are exact integers in a double, so those
 * skip strtod; the rest go through a NUL-terminated copy. */
static bool number_value(struct jscan *j, const unsigned char *s, size_t n, double *out)
{
	size_t k = s[0] == '-';
	if (n - k <= 15) {
		int64_t v = 0;
		size_t d = k;
		while (d < n && s[d] >= '0' && s[d] <= '9')
			v = v * 10 + (s[d++] - '0');
		if (d == n) {
			*out = k ? -(double)v : (double)v;
			return true;
		}
	}
	char small[64];
	char *buf = n < sizeof small ? small : malloc(n + 1);
	if (!buf)
		return js_fail(j, "out of memory");
	memcpy(buf, s, n);
	buf[n] = '\0';
	*out = strtod(buf, NULL);
	if (buf != small)
		free(buf);
	return true;
}

/* Checks a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; when out
 * is given, converts it. */
static bool js_number(struct jscan *j, double *out)
{
	const unsigned char *s = j->s;
	size_t start = j->i;
	if (j->i < j->n && s[j->i] == '-')
		j->i++;
	if (j->i >= j->n || s[j->i] < '0' || s[j->i] > '9')
		return js_fail(j, "invalid number");
	if (s[j->i] == '0') {
		j->i++;
		if (j->i < j->n && s[j->i] >= '0' && s[j->i] <= '9')
			return js_fail(j, "leading zero in number");
	} else {
		while (j->i < j->n && s[j->i] >= '0' && s[j->i] <= '9')
			j->i++;
	}
	if (j->i < j->n && s[j->i] == '.') {
		j->i++;
		if (j->i >= j->n || s[j->i] < '0' || s[j->i] > '9')
			return js_fail(j, "invalid number");
		while (j->i < j->n && s[j->i] >= '0' && s[j->i] <= '9')
			j->i++;
	}
	if (j->i < j->n && (s[j->i] == 'e' || s[j->i] == 'E')) {
		j->i++;
		if (j->i < j->n && (s[j->i] == '+' || s[j->i] == '-'))
			j->i++;
		if (j->i >= j->n || s[j->i] < '0' || s[j->i] > '9')
			return js_fail(j, "invalid number");
		while (j->i < j->n && s[j->i] >= '0' && s[j->i] <= '9')
			j->i++;
	}
	return out ? number_value(j, s + start, j->i - start, out) : true;
}

/* Checks the literal word at the position (true, false, null). */
static bool js_word(struct jscan *j, const char *w)
{
	size_t len = strlen(w);
	if (j->n - j->i < len || memcmp(j->s + j->i, w, len) != 0)
		return js_fail(j, "unexpected character");
	j->i += len;
	return true;
}

/* A new node of type t from the arena (building), or NULL after js_fail. */
static struct json_value *new_node(struct jscan *j, enum json_type t)
{
	struct json_value *v = arena_alloc(j->doc, sizeof *v);
	if (!v) {
		js_fail(j, "out of memory");
		return NULL;
	}
	*v = (struct json_value){.type = t};
	return v;
}

static bool js_value(struct jscan *j, int depth, struct json_value **out);

/* Checks an object or array starting at its opening bracket; v is its node
 * when building (elements and members are appended in text order). The
 * recursion through js_value is bounded by JSON_MAX_DEPTH. */
// NOLINTNEXTLINE(misc-no-recursion)
static bool js_container(struct jscan *j, int depth, struct json_value *v)
{
	bool obj = j->s[j->i] == '{';
	unsigned char close = obj ? '}' : ']';
	struct json_value **tail = v ? &v->child : NULL;
	if (depth >= JSON_MAX_DEPTH)
		return js_fail(j, "nesting too deep");
	j->i++;
	js_ws(j);
	if (j->i < j->n && j->s[j->i] == close) {
		j->i++;
		return true;
	}
	for (;;) {
		const char *key = NULL;
		if (obj) {
			js_ws(j);
			if (j->i >= j->n)
				return js_fail(j, "unexpected end of input");
			if (j->s[j->i] != '"')
				return js_fail(j, "expected a string key");
			if (!js_string(j, v ? &key : NULL))
				return false;
			js_ws(j);
			if (j->i >= j->n || j->s[j->i] != ':')
				return js_fail(j, j->i >= j->n ? "unexpected end of input"
				                               : "expected ':'");
			j->i++;
		}
		if (!js_value(j, depth + 1, tail))
			return false;
		if (tail) {
			(*tail)->key = key;
			tail = &(*tail)->next;
		}
		js_ws(j);
		if (j->i >= j->n)
			return js_fail(j, "unexpected end of input");
		if (j->s[j->i] == ',') {
			j->i++;
			continue;
		}
		if (j->s[j->i] == close) {
			j->i++;
			return true;
		}
		return js_fail(j, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

/* Checks one value with surrounding whitespace; when out is given
 * (building), stores its node there. */
// NOLINTNEXTLINE(misc-no-recursion): bounded by JSON_MAX_DEPTH
static bool js_value(struct jscan *j, int depth, struct json_value **out)
{
	js_ws(j);
	if (j->i >= j->n)
		return js_fail(j, "unexpected end of input");
	unsigned char ch = j->s[j->i];
	enum json_type t;
	switch (ch) {
	case '{':
		t = JSON_OBJECT;
		break;
	case '[':
		t = JSON_ARRAY;
		break;
	case '"':
		t = JSON_STRING;
		break;
	case 't':
		t = JSON_TRUE;
		break;
	case 'f':
		t = JSON_FALSE;
		break;
	case 'n':
		t = JSON_NULL;
		break;
	default:
		if (ch != '-' && (ch < '0' || ch > '9'))
			return js_fail(j, "unexpected character");
		t = JSON_NUMBER;
	}
	struct json_value *v = NULL;
	if (out && !(v = *out = new_node(j, t)))
		return false;
	bool ok;
	switch (t) {
	case JSON_OBJECT:
	case JSON_ARRAY:
		ok = js_container(j, depth, v);
		break;
	case JSON_STRING:
		ok = js_string(j, v ? &v->str : NULL);
		break;
	case JSON_TRUE:
		ok = js_word(j, "true");
		break;
	case JSON_FALSE:
		ok = js_word(j, "false");
		break;
	case JSON_NULL:
		ok = js_word(j, "null");
		break;
	default:
		ok = js_number(j, v ? &v->num : NULL);
	}
	if (ok)
		js_ws(j);
	return ok;
}

/* The whole text: one value, nothing else. */
static bool js_document(struct jscan *j, struct json_value **root, struct json_error *err)
{
	const char *nul = memchr(j->s, '\0', j->n);
	if (nul) {
		j->i = (size_t)(nul - (const char *)j->s);
		j->why = "NUL byte";
	} else if (j->n >= 3 && memcmp(j->s, "\xEF\xBB\xBF", 3) == 0) {
		j->why = "byte order mark not allowed";
	} else {
		js_ws(j);
		if (j->i >= j->n)
			j->why = "empty input";
		else if (js_value(j, 0, root) && j->i < j->n)
			j->why = "unexpected text after the JSON value";
	}
	if (j->why) {
		err->pos = j->i;
		err->why = j->why;
		return false;
	}
	return true;
}

bool json_check(const char *text, size_t len, struct json_error *err)
{
	struct jscan j = {(const unsigned char *)text, len, 0, NULL, NULL};
	return js_document(&j, NULL, err);
}

bool json_parse(const char *text, size_t len, struct json_doc *doc, struct json_error *err)
{
	doc->root = NULL;
	doc->oom = false;
	doc->blocks = NULL;
	doc->cur = doc->inline_block;
	doc->cap = sizeof doc->inline_block;
	doc->used = 0;
	struct jscan j = {(const unsigned char *)text, len, 0, NULL, doc};
	struct json_value *root = NULL;
	if (!js_document(&j, &root, err)) {
		doc->oom = strcmp(err->why, "out of memory") == 0;
		return false;
	}
	doc->root = root;
	return true;
}

void json_doc_free(struct json_doc *doc)
{
	struct json_block *b = doc->blocks;
	while (b) {
		struct json_block *next = b->next;
		free(b);
		b = next;
	}
	doc->blocks = NULL;
	doc->root = NULL;
	doc->cur = doc->inline_block;
	doc->cap = sizeof doc->inline_block;
	doc->used = 0;
}

const struct json_value *json_member(const struct json_value *obj, const char *key)
{
	if (!obj)
		return NULL;
	for (const struct json_value *m = obj->child; m; m = m->next)
		if (m->key && strcmp(m->key, key) == 0)
			return m;
	return NULL;
}
