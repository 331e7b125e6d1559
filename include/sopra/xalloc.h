/*
 * xalloc: the one out-of-memory policy of the server.
 *
 * Code that cannot go on without the memory (the game's state, the event
 * list, encoding buffers, the command queue) allocates through these
 * helpers. When memory runs out they print one line naming the program and
 * the size to stderr ("sopra-server: out of memory (N bytes)"; a tool that
 * links them gives its own name) and abort(): a game whose
 * state cannot be recorded must not continue, and the abort leaves a core
 * for the host to inspect. Nothing fails silently.
 *
 * Code that can refuse politely instead (loading a configuration reports
 * "out of memory" as a configuration error; a new connection that cannot be
 * set up is closed) uses malloc and checks the result; it says so where it
 * does.
 *
 * xrealloc never loses the old block on failure (it aborts), so
 * `p = xrealloc(p, n)` is safe where `p = realloc(p, n)` is not.
 */
#ifndef SOPRA_XALLOC_H
#define SOPRA_XALLOC_H

#include <stddef.h>

/* Never return NULL. n == 0 is treated as 1. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* xrealloc for n elements of size bytes, with the multiplication checked. */
void *xreallocarray(void *p, size_t n, size_t size);
/* Make the array p of *cap elements (size bytes each) hold element
 * `index` (>= 0): it grows by doubling, from 8, and the new elements are
 * zeroed; *cap is updated. Returns the (maybe moved) array. */
void *xgrow_zeroed(void *p, int *cap, int index, size_t size);
/* A NUL-terminated copy of s[0..n). */
char *xmemdup0(const char *s, size_t n);
char *xstrdup(const char *s);

/* Print the out-of-memory line for a request of n bytes and abort(). */
_Noreturn void xalloc_die(size_t n);

/* The number of elements of an array (not a pointer). */
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

#endif
