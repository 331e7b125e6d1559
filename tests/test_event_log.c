/* event_log: packed histories read back as they were written. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "event_log.h"

static void assert_same(const struct game_event *want, const struct game_event *got)
{
	assert_int_equal(got->type, want->type);
	assert_int_equal(got->to, GEV_TO_ALL);
	assert_int_equal(got->nargs, want->nargs);
	for (int a = 0; a < want->nargs; a++)
		assert_int_equal(got->arg[a], want->arg[a]);
	for (int a = want->nargs; a < 4; a++)
		assert_int_equal(got->arg[a], 0);
	assert_ptr_equal(got->str, want->str);
}

/* The sizes the header promises: type, flags, a byte per small parameter. */
static void test_sizes(void **state)
{
	(void)state;
	struct event_log l = EVENT_LOG_EMPTY;
	struct game_event ev = {.type = GEV_DIE_ROLLED, .to = 3, .nargs = 2, .arg = {1, -1}};
	event_log_add(&l, &ev);
	assert_int_equal(l.len, 4);
	struct game_event none = {.type = GEV_GAME_STARTED, .to = GEV_TO_ALL};
	event_log_add(&l, &none);
	assert_int_equal(l.len, 6);
	static const char name[] = "Ann";
	struct game_event named = {.type = GEV_PLAYER, .nargs = 1, .arg = {63}, .str = name};
	event_log_add(&l, &named);
	assert_int_equal(l.len, 6 + 2 + 1 + sizeof(const char *));
	struct game_event big = {.type = GEV_DIE_ROLLED, .nargs = 2, .arg = {INT_MAX, INT_MIN}};
	event_log_add(&l, &big);
	assert_int_equal(l.len, 6 + 2 + 1 + sizeof(const char *) + 2 + 5 + 5);
	assert_int_equal(l.n, 4);
	struct game_event got = event_log_at(&l, 0);
	assert_same(&ev, &got);
	got = event_log_at(&l, 1);
	assert_same(&none, &got);
	got = event_log_at(&l, 2);
	assert_same(&named, &got);
	assert_string_equal(got.str, "Ann");
	got = event_log_at(&l, 3);
	assert_same(&big, &got);
	event_log_free(&l);
	assert_int_equal(l.n, 0);
	assert_null(l.bytes);
}

/* Thousands of random events, read back in order, backwards and at random
 * (across the marks), then the log emptied and used again. */
static void test_round_trip(void **state)
{
	(void)state;
	static const char strs[3][4] = {"a", "bc", "def"};
	enum { N = 5000 };
	struct game_event *want = calloc(N, sizeof *want);
	assert_non_null(want);
	srand(7);
	struct event_log l = EVENT_LOG_EMPTY;
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < N; i++) {
			struct game_event *e = &want[i];
			*e = (struct game_event){.type = (enum game_event_type)(rand() %
			                                                        GAME_EVENT_TYPE_COUNT),
			                         .to = rand() % 4,
			                         .nargs = rand() % 5};
			for (int a = 0; a < e->nargs; a++) {
				int r = rand();
				e->arg[a] = r % 3 == 0   ? r % 200 - 100
				            : r % 3 == 1 ? (int)((unsigned)r * 2654435761u)
				                         : (r & 1 ? INT_MIN : INT_MAX);
			}
			e->str = rand() % 4 == 0 ? strs[rand() % 3] : NULL;
			event_log_add(&l, e);
		}
		assert_int_equal(l.n, N);
		assert_int_equal(l.nmarks, (N + EVENT_LOG_MARK_EVERY - 1) / EVENT_LOG_MARK_EVERY);
		for (size_t i = 0; i < N; i++) {
			struct game_event got = event_log_at(&l, i);
			assert_same(&want[i], &got);
		}
		for (size_t i = N; i-- > 0;) {
			struct game_event got = event_log_at(&l, i);
			assert_same(&want[i], &got);
		}
		for (int k = 0; k < 1000; k++) {
			size_t i = (size_t)rand() % N;
			struct game_event got = event_log_at(&l, i);
			assert_same(&want[i], &got);
		}
		event_log_free(&l);
	}
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_sizes),
	        cmocka_unit_test(test_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
