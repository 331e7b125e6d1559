/*
 * json: strict JSON syntax checking (RFC 8259), ahead of cJSON.
 *
 * Rejects what cJSON lets through: leading zeros and "1." in numbers, raw
 * control characters in strings, invalid \\u escapes (cJSON reads them as
 * U+0000 and cuts the string), \\u0000 and lone surrogates, invalid UTF-8,
 * NUL bytes, a byte order mark, nesting deeper than JSON_MAX_DEPTH and any
 * text after the value.
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

/* Check that text[0..len) is exactly one JSON value with optional
 * whitespace around it. Returns true if so; else fills err and returns
 * false. */
bool json_check(const char *text, size_t len, struct json_error *err);

#endif
