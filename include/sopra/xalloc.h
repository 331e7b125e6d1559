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
/* Make the array p of *cap elements (size bytes each) hold at least `need`
 * elements: its capacity doubles, starting from `first` (> 0), until it
 * does; *cap is updated. Returns the (maybe moved) array: p itself when it
 * already held `need`. The growth policy of every growable array here. */
void *xgrow(void *p, size_t *cap, size_t need, size_t size, size_t first);
/* xgrow for element `index` (>= 0) of an array counted in int, from 8, with
 * the new elements zeroed. */
void *xgrow_zeroed(void *p, int *cap, int index, size_t size);
/* A NUL-terminated copy of s[0..n). */
char *xmemdup0(const char *s, size_t n);
char *xstrdup(const char *s);

/* Print the out-of-memory line for a request of n bytes and abort(). */
_Noreturn void xalloc_die(size_t n);

/*
 * The three plain functions of a growable array `struct NAME { T *ITEMS;
 * size_t COUNT; size_t cap; }` that grows by xgrow, for NAME's own .c file
 * (its header declares them):
 *   void NAME_init(struct NAME *a)   empty, nothing allocated (so is a zeroed one);
 *   void NAME_CLEAR(struct NAME *a)  empty, the capacity kept: a reused array
 *                                    allocates nothing in steady state;
 *   void NAME_free(struct NAME *a)   the storage released; empty again.
 */
#define XGROWABLE_FUNCTIONS(NAME, CLEAR, ITEMS, COUNT) \
	void NAME##_init(struct NAME *a)               \
	{                                              \
		*a = (struct NAME){0};                 \
	}                                              \
	void NAME##_##CLEAR(struct NAME *a)            \
	{                                              \
		a->COUNT = 0;                          \
	}                                              \
	void NAME##_free(struct NAME *a)               \
	{                                              \
		free(a->ITEMS);                        \
		NAME##_init(a);                        \
	}

/* The number of elements of an array (not a pointer). */
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

#endif
