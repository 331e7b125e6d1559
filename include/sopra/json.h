/*
 * json: a strict RFC 8259 parser of our own, used for the configuration file
 * and for every client line.
 *
 * Strict where common parsers are lenient: it rejects leading zeros and "1."
 * in numbers, raw control characters in strings, invalid \\u escapes,
 * \\u0000 and lone surrogates, invalid UTF-8, NUL bytes, a byte order mark,
 * nesting deeper than JSON_MAX_DEPTH and any text after the value. What it
 * accepts it turns into a tree of json_value nodes in one arena: no
 * allocation per node, one free for the whole document, and none at all for
 * documents that fit the inline block of struct json_doc (every client
 * command but one with a player name of more than a kilobyte or so).
 */
#ifndef SOPRA_JSON_H
#define SOPRA_JSON_H

#include <stdbool.h>
#include <stddef.h>

#define JSON_MAX_DEPTH 64

struct json_error {
	size_t pos;      /* byte offset of the problem */
	const char *why; /* static description, e.g. "leading zero in number" */
};

enum json_type {
	JSON_NULL,
	JSON_FALSE,
	JSON_TRUE,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT
};

struct json_value {
	enum json_type type;
	const char *key;          /* member name when inside an object, else NULL */
	const char *str;          /* JSON_STRING: decoded UTF-8, NUL-terminated */
	double num;               /* JSON_NUMBER: as strtod reads the text */
	struct json_value *child; /* JSON_ARRAY/OBJECT: first element or member */
	struct json_value *next;  /* next element or member of the parent */
};

struct json_block; /* an arena block (json.c) */

/* A parsed document. Zero-initialise or let json_parse do it; release with
 * json_doc_free (also after a failed parse). */
struct json_doc {
	struct json_value *root;
	bool oom;                  /* json_parse failed because memory ran out */
	struct json_block *blocks; /* arena blocks beyond the inline one */
	size_t used;               /* bytes used of the current block */
	size_t cap;                /* size of the current block */
	char *cur;                 /* the current block's memory */
	_Alignas(16) char inline_block[2048];
};

/* Check that text[0..len) is exactly one JSON value with optional
 * whitespace around it. Returns true if so; else fills err and returns
 * false. Allocates nothing. */
bool json_check(const char *text, size_t len, struct json_error *err);

/* Parse text[0..len) (the same grammar as json_check) into doc. Returns
 * true with doc->root set, or false with err filled (err->why is "out of
 * memory" and doc->oom set when that was the cause). */
bool json_parse(const char *text, size_t len, struct json_doc *doc, struct json_error *err);

/* Release what json_parse allocated; doc may be reused afterwards. */
void json_doc_free(struct json_doc *doc);

/* Length of the well-formed UTF-8 sequence starting at s (n >= 1 bytes
 * left), or 0 when the bytes there are not one (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF). Also used by proto. */
size_t json_utf8_len(const unsigned char *s, size_t n);

/* Type tests that accept NULL (a missing member). */
static inline bool json_is(const struct json_value *v, enum json_type t)
{
	return v && v->type == t;
}
static inline bool json_is_bool(const struct json_value *v)
{
	return v && (v->type == JSON_TRUE || v->type == JSON_FALSE);
}

/* The first member of obj named key (case-sensitive), or NULL. */
const struct json_value *json_member(const struct json_value *obj, const char *key);

#endif
