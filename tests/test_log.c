/*
 * Unit tests of the log line (src/log.c): the exact text of short lines,
 * of lines around the one-write buffer's size and of a long line written
 * in pieces; nothing for a NULL stream.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sopra/log.h"

/* Everything written to f, as a NUL-terminated string (caller frees). */
static char *contents(FILE *f)
{
	long n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	return buf;
}

static void test_short_line(void **state)
{
	(void)state;
	FILE *f = tmpfile();
	assert_non_null(f);
	sopra_log(f, "", "conn %d: open (%s)", 7, "127.0.0.1:5");
	sopra_log(f, "agones: ", "ready");
	char *got = contents(f);
	assert_string_equal(got, "sopra-server: conn 7: open (127.0.0.1:5)\n"
	                         "sopra-server: agones: ready\n");
	free(got);
	fclose(f);
}

/* A message of n 'x' after the prefix comes out whole whatever n, below,
 * at and beyond the size of the one-write buffer. */
static void test_lengths(void **state)
{
	(void)state;
	static const size_t lengths[] = {0,    1,    990,  1000, 1007, 1008, 1009,
	                                 1010, 1023, 1024, 1025, 5000, 70000};
	for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
		size_t n = lengths[i];
		char *msg = malloc(n + 1);
		assert_non_null(msg);
		memset(msg, 'x', n);
		msg[n] = '\0';
		FILE *f = tmpfile();
		assert_non_null(f);
		sopra_log(f, "p: ", "%s", msg);
		char *got = contents(f);
		size_t head = strlen("sopra-server: p: ");
		assert_int_equal(strlen(got), head + n + 1);
		assert_memory_equal(got, "sopra-server: p: ", head);
		assert_memory_equal(got + head, msg, n);
		assert_int_equal(got[head + n], '\n');
		free(got);
		free(msg);
		fclose(f);
	}
}

static void test_null_stream(void **state)
{
	(void)state;
	sopra_log(NULL, "", "nothing %d", 1); /* must not crash */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_short_line),
	        cmocka_unit_test(test_lengths),
	        cmocka_unit_test(test_null_stream),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
