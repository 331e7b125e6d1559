/*
 * scntoken: the scenario format's rules for one argument token
 * (../shared/spec/scenarios.md, "Arguments"; systemtests/README.md), for
 * the programs that read or write scenarios.
 *
 * A token is a bare word or a "double quoted" string whose only escapes are
 * \" and \\. A bare word that looks like an integer reads as an integer,
 * true and false as booleans, anything else as a string; `#` starts a
 * comment and blanks end a word, so a string holding them, one that would
 * read as another kind, the empty string and the wildcard "?" must be
 * quoted. A quoted string lives on one line: it cannot hold a line break
 * or another control character but a tab.
 */
#ifndef SOPRA_SCNTOKEN_H
#define SOPRA_SCNTOKEN_H

#include <stdbool.h>
#include <stdio.h>

/* Whether a bare word reads as an integer: an optional sign, then one or
 * more ASCII digits. */
bool scn_looks_int(const char *word);

/* Whether the string s, written as a bare word, reads back as the string
 * s (not an integer, a boolean, the wildcard, a comment or several words). */
bool scn_bare_ok(const char *s);

/* Write " " and s as one token (bare when it may be, else quoted) to out.
 * False, writing nothing, when no token can hold s. */
bool scn_put_token(FILE *out, const char *s);

#endif
