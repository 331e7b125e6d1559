/*
 * Unit tests for src/net_quiet.c: the log's budget for lines about
 * strangers, on a clock the test sets (milliseconds).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "net_int.h"

/* How many of n lines of kind at now are allowed. */
static int allowed(struct net_quiet *q, long now, int n, enum net_quiet_kind kind)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		k += net_quiet_allow(q, now, kind);
	return k;
}

static void test_a_burst_then_the_rate(void **state)
{
	(void)state;
	struct net_quiet q;
	net_quiet_init(&q, 1000);
	assert_int_equal(allowed(&q, 1000, NET_QUIET_BURST + 10, NET_QUIET_OPENED),
	                 NET_QUIET_BURST);
	assert_int_equal(q.left_out, 10);
	/* 250 ms later a quarter of a second's rate is back */
	assert_int_equal(allowed(&q, 1250, 100, NET_QUIET_CLOSED), NET_QUIET_RATE / 4);
	/* an hour later: the burst, not an hour's worth */
	assert_int_equal(allowed(&q, 3601250, 10000, NET_QUIET_OTHER), NET_QUIET_BURST);
}

static void test_the_summary_counts_what_was_left_out(void **state)
{
	(void)state;
	struct net_quiet q;
	char line[256];
	net_quiet_init(&q, 0);
	assert_false(net_quiet_summary(&q, 5000, true, line, sizeof line)); /* nothing left out */
	allowed(&q, 0, NET_QUIET_BURST, NET_QUIET_OPENED);
	allowed(&q, 0, 3, NET_QUIET_OPENED);
	allowed(&q, 0, 2, NET_QUIET_CLOSED);
	allowed(&q, 0, 4, NET_QUIET_EVICTED);
	allowed(&q, 0, 1, NET_QUIET_OTHER);
	assert_false(net_quiet_summary(&q, NET_QUIET_SUMMARY_MS - 1, false, line, sizeof line));
	assert_true(net_quiet_summary(&q, 1500, false, line, sizeof line));
	assert_string_equal(line,
	                    "not logged: 10 lines about strangers in 1.5 s (over 64 a second): "
	                    "3 opened, 6 closed (4 evicted)");
	assert_int_equal(q.left_out, 0);
	assert_false(net_quiet_summary(&q, 9000, true, line, sizeof line)); /* said once */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_a_burst_then_the_rate),
	        cmocka_unit_test(test_the_summary_counts_what_was_left_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
