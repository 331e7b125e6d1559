/*
 * fuzz_json: the strict check (src/json.c) in front of cJSON, on arbitrary
 * bytes.
 *
 * Checked on every input:
 *   - json_check is deterministic and, on failure, points into the text;
 *   - what json_check accepts, cJSON parses too, and cJSON's tree is the
 *     text: walked in document order it matches the text's tokens one by
 *     one (containers, keys, values), every string and key decoded byte for
 *     byte as written here independently (escapes, surrogate pairs; nothing
 *     cut off at an escape), valid UTF-8 without NUL, every number bit for
 *     bit what strtod reads from its text (+-infinity beyond a double);
 *   - what cJSON accepts and json_check rejects is rejected for one of the
 *     strict rules (leading zeros, "1.", control characters, invalid or
 *     NUL \u escapes, invalid UTF-8, NUL bytes, a byte order mark, text
 *     after the value, nesting) or contains a control character that cJSON
 *     skipped as whitespace: cJSON accepts nothing else json_check rejects.
 */
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sopra/json.h"

/* A cursor over text that json_check accepted: yields its tokens. */
struct toks {
	const unsigned char *s;
	size_t n, i;
};

/* The next token: one of "{}[]" (returned as that character), 's' a string
 * (*a, *b: its body between the quotes), 'd' a number (*a, *b: its text),
 * 't', 'f', 'z' (null); 0 at the end. Skips whitespace, ',' and ':'. */
static int next_tok(struct toks *t, size_t *a, size_t *b)
{
	while (t->i < t->n && strchr(" \t\r\n,:", t->s[t->i]))
		t->i++;
	if (t->i >= t->n)
		return 0;
	unsigned char c = t->s[t->i];
	if (strchr("{}[]", c)) {
		t->i++;
		return c;
	}
	if (c == '"') {
		*a = ++t->i;
		while (t->s[t->i] != '"')
			t->i += t->s[t->i] == '\\' ? 2 : 1;
		*b = t->i++;
		return 's';
	}
	if (c == 't' || c == 'f' || c == 'n') {
		t->i += c == 'f' ? 5 : 4;
		return c == 'n' ? 'z' : c;
	}
	*a = t->i;
	while (t->i < t->n && strchr("0123456789+-.eE", t->s[t->i]))
		t->i++;
	*b = t->i;
	return 'd';
}

static unsigned hex4(const unsigned char *p)
{
	unsigned v = 0;
	for (int k = 0; k < 4; k++)
		v = v * 16 + (unsigned)(p[k] <= '9' ? p[k] - '0' : (p[k] | 0x20) - 'a' + 10);
	return v;
}

/* Decodes the checked string body s[0..n) into out (room for n + 1). */
static size_t decode(const unsigned char *s, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		if (s[i] != '\\') {
			out[o++] = (char)s[i++];
			continue;
		}
		unsigned char e = s[i + 1];
		if (e != 'u') {
			const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
			out[o++] = to[strchr(from, e) - from];
			i += 2;
			continue;
		}
		unsigned long cp = hex4(s + i + 2);
		i += 6;
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4(s + i + 2) - 0xDC00);
			i += 6;
		}
		if (cp < 0x80) {
			out[o++] = (char)cp;
		} else if (cp < 0x800) {
			out[o++] = (char)(0xC0 | (cp >> 6));
			out[o++] = (char)(0x80 | (cp & 0x3F));
		} else if (cp < 0x10000) {
			out[o++] = (char)(0xE0 | (cp >> 12));
			out[o++] = (char)(0x80 | ((cp >> 6) & 0x3F));
			out[o++] = (char)(0x80 | (cp & 0x3F));
		} else {
			out[o++] = (char)(0xF0 | (cp >> 18));
			out[o++] = (char)(0x80 | ((cp >> 12) & 0x3F));
			out[o++] = (char)(0x80 | ((cp >> 6) & 0x3F));
			out[o++] = (char)(0x80 | (cp & 0x3F));
		}
	}
	out[o] = '\0';
	return o;
}

/* The next token must be a string that decodes to got (a key or value). */
static void same_string(struct toks *t, const char *got, const char *what)
{
	size_t a = 0, b = 0;
	int k = next_tok(t, &a, &b);
	FUZZ_CHECK(k == 's', "%s: cJSON has a string, the text token '%c'", what, k);
	char *want = xmalloc(b - a + 1);
	size_t wn = decode(t->s + a, b - a, want);
	FUZZ_CHECK(strlen(got) == wn && memcmp(got, want, wn) == 0, "%s <%s> vs the text's <%s>",
	           what, got, fuzz_printable(want, wn));
	FUZZ_CHECK(strlen(want) == wn, "%s with a NUL", what);
	FUZZ_CHECK(fuzz_utf8_valid(got, strlen(got)), "%s not UTF-8", what);
	free(want);
}

/* cJSON's tree c matches the next tokens of t. The recursion is bounded by
 * JSON_MAX_DEPTH (the text passed json_check). */
// NOLINTNEXTLINE(misc-no-recursion)
static void same_tree(const cJSON *c, struct toks *t)
{
	size_t a = 0, b = 0;
	if (c->string)
		same_string(t, c->string, "key");
	if (cJSON_IsString(c)) {
		same_string(t, c->valuestring, "string");
		return;
	}
	int k = next_tok(t, &a, &b);
	if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
		bool obj = cJSON_IsObject(c);
		FUZZ_CHECK(k == (obj ? '{' : '['), "container vs the text token '%c'", k);
		for (const cJSON *m = c->child; m; m = m->next) {
			FUZZ_CHECK(obj == (m->string != NULL),
			           "a key in an array or none in an object");
			same_tree(m, t);
		}
		k = next_tok(t, &a, &b);
		FUZZ_CHECK(k == (obj ? '}' : ']'), "cJSON has fewer members: text token '%c'", k);
	} else if (cJSON_IsNumber(c)) {
		FUZZ_CHECK(k == 'd', "number vs the text token '%c'", k);
		char *num = xmalloc(b - a + 1);
		memcpy(num, t->s + a, b - a);
		num[b - a] = '\0';
		double want = strtod(num, NULL);
		FUZZ_CHECK(memcmp(&want, &c->valuedouble, sizeof want) == 0,
		           "number %s: cJSON %.17g, strtod %.17g", num, c->valuedouble, want);
		free(num);
	} else if (cJSON_IsTrue(c)) {
		FUZZ_CHECK(k == 't', "true vs the text token '%c'", k);
	} else if (cJSON_IsFalse(c)) {
		FUZZ_CHECK(k == 'f', "false vs the text token '%c'", k);
	} else {
		FUZZ_CHECK(cJSON_IsNull(c), "cJSON type %d", c->type);
		FUZZ_CHECK(k == 'z', "null vs the text token '%c'", k);
	}
}

/* json_check's reasons that only the strict rules give (cJSON is lenient
 * there). */
static bool strict_rule(const char *why)
{
	static const char *const rules[] = {
	        "leading zero in number",
	        "invalid number",
	        "control character in string",
	        "invalid \\u escape in string",
	        "\\u0000 is not allowed in strings",
	        "invalid UTF-8",
	        "NUL byte",
	        "byte order mark not allowed",
	        "unexpected text after the JSON value",
	        "nesting too deep",
	};
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
		if (strcmp(why, rules[i]) == 0)
			return true;
	return false;
}

/* A byte below 0x20 that JSON does not allow as whitespace. */
static bool has_control(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (d[i] < 0x20 && d[i] != '\t' && d[i] != '\n' && d[i] != '\r')
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct json_error e = {0, NULL}, e2 = {0, NULL};
	bool ok = json_check(text, size, &e);
	FUZZ_CHECK(json_check(text, size, &e2) == ok, "json_check changes its verdict");
	cJSON *c = size ? cJSON_ParseWithLength(text, size) : NULL;
	if (!ok) {
		FUZZ_CHECK(e.why && e.pos == e2.pos && strcmp(e.why, e2.why) == 0,
		           "json_check changes its error");
		FUZZ_CHECK(e.pos <= size, "error position %zu past the end %zu", e.pos, size);
		if (c)
			FUZZ_CHECK(strict_rule(e.why) || has_control(data, size),
			           "cJSON accepts what json_check rejects at %zu: %s", e.pos,
			           e.why);
		cJSON_Delete(c);
		return 0;
	}
	FUZZ_CHECK(c != NULL, "cJSON refuses what json_check accepts");
	FUZZ_CHECK(c->string == NULL && c->next == NULL, "a bad root");
	struct toks t = {data, size, 0};
	same_tree(c, &t);
	size_t a, b;
	int k = next_tok(&t, &a, &b);
	FUZZ_CHECK(k == 0, "the text has more after cJSON's tree: '%c'", k);
	cJSON_Delete(c);
	return 0;
}
