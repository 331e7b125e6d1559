/*
 * json: the strict RFC 8259 check in front of cJSON.
 *
 * cJSON decodes every JSON document the server reads (the configuration
 * file and every client line), but it accepts what the protocol must
 * reject: it cuts a string at an invalid \\u escape or at \\u0000, reads
 * leading zeros, "1." and raw control characters in strings, skips any
 * byte up to 0x20 as whitespace and ignores text after the value. So every
 * document passes json_check first, which rejects leading zeros and "1." in
 * numbers, raw control characters in strings, invalid \\u escapes,
 * \\u0000 and lone surrogates, invalid UTF-8, NUL bytes, a byte order mark,
 * whitespace other than space, tab, CR and LF, nesting deeper than
 * JSON_MAX_DEPTH and any text after the value. Whatever it accepts, cJSON
 * parses to the same values (tests/test_json.c, fuzz/fuzz_json.c).
 *
 * Two things valid JSON may contain are left to the callers, which check
 * them on cJSON's tree: a key given twice in one object (proto and config
 * report the keys they read) and a number beyond the range of a double
 * (1e400: cJSON stores +-infinity, which proto and config report as an
 * integer out of range).
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
 * false. Allocates nothing. */
bool json_check(const char *text, size_t len, struct json_error *err);

/* Length of the well-formed UTF-8 sequence starting at s (n >= 1 bytes
 * left), or 0 when the bytes there are not one (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF). Also used by proto. */
size_t json_utf8_len(const unsigned char *s, size_t n);

/* Whether s[0..n) is well-formed UTF-8 throughout (json_utf8_len). */
bool json_utf8_valid(const char *s, size_t n);

#endif
