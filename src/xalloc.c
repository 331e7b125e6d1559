/* xalloc: allocation helpers that abort loudly instead of returning NULL
 * (see include/sopra/xalloc.h for the policy). */
#include "sopra/xalloc.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void xalloc_die(size_t n)
{
#ifdef __GLIBC__
	extern char *program_invocation_short_name; /* glibc: the server or a tool */
	const char *prog = program_invocation_short_name;
#else
	const char *prog = "sopra";
#endif
	fprintf(stderr, "%s: out of memory (%zu bytes)\n", prog, n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		xalloc_die(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		xalloc_die(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		xalloc_die(n);
	return q;
}

void *xreallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		xalloc_die(SIZE_MAX);
	return xrealloc(p, n * size);
}

void *xgrow(void *p, size_t *cap, size_t need, size_t size, size_t first)
{
	if (need <= *cap)
		return p;
	size_t n = *cap ? *cap : first;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			xalloc_die(SIZE_MAX);
		n *= 2;
	}
	p = xreallocarray(p, n, size);
	*cap = n;
	return p;
}

void *xgrow_zeroed(void *p, int *cap, int index, size_t size)
{
	size_t old = (size_t)*cap, n = old;
	char *q = xgrow(p, &n, (size_t)index + 1, size, 8);
	if (n > INT_MAX)
		xalloc_die(n * size);
	memset(q + old * size, 0, (n - old) * size);
	*cap = (int)n;
	return q;
}

char *xmemdup0(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *xstrdup(const char *s)
{
	return xmemdup0(s, strlen(s));
}
