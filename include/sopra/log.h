/*
 * log: the server's one way of writing a log line.
 *
 * Every line goes to one stream (the server's stderr, or NULL for silence),
 * starts with "sopra-server: " and the module's prefix, ends with "\n" and
 * is flushed at once, so a line is in the log before anything it reports
 * can have further consequences.
 */
#ifndef SOPRA_LOG_H
#define SOPRA_LOG_H

#include <stdio.h>

/* Write "sopra-server: <prefix><message>\n" to out (nothing if out is
 * NULL). prefix may be "" (e.g. "agones: "). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void sopra_log(FILE *out, const char *prefix, const char *fmt, ...);

#endif
