/*
 * usage: how every program of the project reports a usage error (an
 * unknown, missing or invalid option): one line saying what is wrong, the
 * program's synopsis, and where the whole help is, e.g.
 *
 *   sopra-server: unknown option '--frobnicate'
 *   Usage: sopra-server [--config PATH] [--port N] [--timeout SECONDS] ...
 *          sopra-server --check --config PATH
 *   Try 'sopra-server --help' for more information.
 *
 * The synopsis is the beginning of the program's --help text, up to its
 * first empty line; --help prints the whole text.
 */
#ifndef SOPRA_USAGE_H
#define SOPRA_USAGE_H

#include <stdarg.h>

/* The exit status of a usage error (sysexits.h's EX_USAGE). */
#define SOPRA_EXIT_USAGE 64

/* Write the usage error above to stderr: "PROG: " and the printf-style
 * message, the synopsis of help_text (the lines before its first empty
 * line, or all of it) and the pointer to PROG --help. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void sopra_usage_error(const char *prog, const char *help_text, const char *fmt, ...);

/* The same with a va_list. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 0)))
#endif
void sopra_usage_verror(const char *prog, const char *help_text, const char *fmt, va_list ap);

#endif
