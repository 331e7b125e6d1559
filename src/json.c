/* json: the strict RFC 8259 check in front of cJSON (see
 * include/sopra/json.h). One pass over the text, nothing allocated, no tree
 * built: cJSON builds the tree of what passes. */
#include "sopra/json.h"

#include <string.h>

struct jscan {
	const unsigned char *s;
	size_t n, i;     /* text, length, position */
	const char *why; /* set on error; i is then the error position */
};

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

/* Well-formed UTF-8 (RFC 3629, table 3-7 of Unicode): for each range of
 * lead bytes, the sequence length and the allowed range of the second byte
 * (narrower after E0, ED, F0 and F4: no overlongs, no surrogates, nothing
 * above U+10FFFF). Later bytes are always 80..BF. */
static const struct utf8_lead {
	unsigned char first, last, len, lo, hi;
} utf8_leads[] = {
        {0xC2, 0xDF, 2, 0x80, 0xBF}, {0xE0, 0xE0, 3, 0xA0, 0xBF}, {0xE1, 0xEC, 3, 0x80, 0xBF},
        {0xED, 0xED, 3, 0x80, 0x9F}, {0xEE, 0xEF, 3, 0x80, 0xBF}, {0xF0, 0xF0, 4, 0x90, 0xBF},
        {0xF1, 0xF3, 4, 0x80, 0xBF}, {0xF4, 0xF4, 4, 0x80, 0x8F},
};

/* See json.h. */
size_t json_utf8_len(const unsigned char *s, size_t n)
{
	if (s[0] < 0x80)
		return 1;
	const struct utf8_lead *lead = NULL;
	for (size_t k = 0; k < sizeof utf8_leads / sizeof utf8_leads[0]; k++)
		if (s[0] >= utf8_leads[k].first && s[0] <= utf8_leads[k].last)
			lead = &utf8_leads[k];
	if (!lead || n < lead->len || s[1] < lead->lo || s[1] > lead->hi)
		return 0;
	for (size_t i = 2; i < lead->len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return lead->len;
}

/* See json.h. */
bool json_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	while (n > 0) {
		size_t k = json_utf8_len(p, n);
		if (k == 0)
			return false;
		p += k;
		n -= k;
	}
	return true;
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

/* Checks a string starting at the opening quote and advances past it.
 * Rejects control characters, bad escapes, lone surrogates and \u0000. */
static bool js_string(struct jscan *j)
{
	j->i++; /* the opening quote */
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
	j->i++; /* the closing quote */
	return true;
}

/* Checks a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?. Its
 * value is cJSON's business (strtod; 1e400 is valid JSON and becomes
 * infinity there). */
static bool js_number(struct jscan *j)
{
	const unsigned char *s = j->s;
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
	return true;
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

static bool js_value(struct jscan *j, int depth);

/* Checks an object or array starting at its opening bracket. The recursion
 * through js_value is bounded by JSON_MAX_DEPTH. */
// NOLINTNEXTLINE(misc-no-recursion)
static bool js_container(struct jscan *j, int depth)
{
	bool obj = j->s[j->i] == '{';
	unsigned char close = obj ? '}' : ']';
	if (depth >= JSON_MAX_DEPTH)
		return js_fail(j, "nesting too deep");
	j->i++;
	js_ws(j);
	if (j->i < j->n && j->s[j->i] == close) {
		j->i++;
		return true;
	}
	for (;;) {
		if (obj) {
			js_ws(j);
			if (j->i >= j->n)
				return js_fail(j, "unexpected end of input");
			if (j->s[j->i] != '"')
				return js_fail(j, "expected a string key");
			if (!js_string(j))
				return false;
			js_ws(j);
			if (j->i >= j->n || j->s[j->i] != ':')
				return js_fail(j, j->i >= j->n ? "unexpected end of input"
				                               : "expected ':'");
			j->i++;
		}
		if (!js_value(j, depth + 1))
			return false;
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

/* Checks one value with the whitespace around it. */
// NOLINTNEXTLINE(misc-no-recursion): bounded by JSON_MAX_DEPTH
static bool js_value(struct jscan *j, int depth)
{
	js_ws(j);
	if (j->i >= j->n)
		return js_fail(j, "unexpected end of input");
	bool ok;
	switch (j->s[j->i]) {
	case '{':
	case '[':
		ok = js_container(j, depth);
		break;
	case '"':
		ok = js_string(j);
		break;
	case 't':
		ok = js_word(j, "true");
		break;
	case 'f':
		ok = js_word(j, "false");
		break;
	case 'n':
		ok = js_word(j, "null");
		break;
	default:
		if (j->s[j->i] != '-' && (j->s[j->i] < '0' || j->s[j->i] > '9'))
			return js_fail(j, "unexpected character");
		ok = js_number(j);
	}
	if (ok)
		js_ws(j);
	return ok;
}

bool json_check(const char *text, size_t len, struct json_error *err)
{
	struct jscan j = {(const unsigned char *)text, len, 0, NULL};
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		j.i = (size_t)(nul - text);
		j.why = "NUL byte";
	} else if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		j.why = "byte order mark not allowed";
	} else {
		js_ws(&j);
		if (j.i >= j.n)
			j.why = "empty input";
		else if (js_value(&j, 0) && j.i < j.n)
			j.why = "unexpected text after the JSON value";
	}
	if (j.why) {
		err->pos = j.i;
		err->why = j.why;
		return false;
	}
	return true;
}
