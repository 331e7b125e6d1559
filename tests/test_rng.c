/* Unit tests for rng: every vector of tests/data/java_random_vectors.json
 * (OpenJDK 17 output, a copy of ../shared/data/'s; see tests/data/README.md),
 * plus a few values checked by hand. A missing or unreadable vector file
 * fails the vector tests: it is part of the repository. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sopra/rng.h"
#include "toolutil.h" /* read_file */


static int64_t seed_of(const cJSON *item)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(item, "seed");
	assert_true(cJSON_IsString(s));
	return strtoll(s->valuestring, NULL, 10);
}

#define VECTORS_PATH SOPRA_SOURCE_DIR "/tests/data/java_random_vectors.json"

static cJSON *vectors;
static char load_error[512]; /* why vectors is NULL */

static int load_vectors(void **state)
{
	(void)state;
	char *text = read_file(VECTORS_PATH, NULL);
	if (!text) {
		snprintf(load_error, sizeof load_error, "cannot read %s: %s", VECTORS_PATH,
		         strerror(errno));
		return 0;
	}
	vectors = cJSON_Parse(text);
	free(text);
	if (!vectors)
		snprintf(load_error, sizeof load_error, "%s is not valid JSON", VECTORS_PATH);
	return 0;
}

/* Every vector test needs the file: a missing one fails, never skips. */
static void need_vectors(void)
{
	if (!vectors)
		fail_msg("%s", load_error);
}

static int free_vectors(void **state)
{
	(void)state;
	cJSON_Delete(vectors);
	return 0;
}

static void test_next_int_vectors(void **state)
{
	(void)state;
	need_vectors();
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(vectors, "nextInt");
	int checked = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, list)
	{
		struct rng r;
		rng_init(&r, seed_of(item));
		int bound = cJSON_GetObjectItemCaseSensitive(item, "bound")->valueint;
		const cJSON *v;
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(item, "values"))
		{
			assert_int_equal(rng_next_int(&r, bound), v->valueint);
			checked++;
		}
	}
	assert_true(checked > 100);
}

static void test_mixed_vectors(void **state)
{
	(void)state;
	need_vectors();
	const cJSON *item;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(vectors, "mixed"))
	{
		struct rng r;
		rng_init(&r, seed_of(item));
		const cJSON *call;
		cJSON_ArrayForEach(call, cJSON_GetObjectItemCaseSensitive(item, "calls"))
		{
			int bound = cJSON_GetArrayItem(call, 0)->valueint;
			int want = cJSON_GetArrayItem(call, 1)->valueint;
			assert_int_equal(rng_next_int(&r, bound), want);
		}
	}
}

static void test_shuffle_vectors(void **state)
{
	(void)state;
	need_vectors();
	const cJSON *item;
	int checked = 0;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(vectors, "shuffle"))
	{
		struct rng r;
		rng_init(&r, seed_of(item));
		int n = cJSON_GetObjectItemCaseSensitive(item, "n")->valueint;
		int *v = calloc((size_t)n + 1, sizeof(int));
		assert_non_null(v);
		for (int i = 0; i < n; i++)
			v[i] = i;
		rng_shuffle_ints(&r, v, (size_t)n);
		const cJSON *want = cJSON_GetObjectItemCaseSensitive(item, "result");
		assert_int_equal(cJSON_GetArraySize(want), n);
		for (int i = 0; i < n; i++)
			assert_int_equal(v[i], cJSON_GetArrayItem(want, i)->valueint);
		/* the generator's state after the shuffle must match too */
		const cJSON *after = cJSON_GetObjectItemCaseSensitive(item, "nextInt1000_after");
		if (after)
			assert_int_equal(rng_next_int(&r, 1000), after->valueint);
		free(v);
		checked++;
	}
	assert_true(checked > 0);
}

/* Known Java values: new Random(42).nextInt(10) == 0, then 3;
 * new Random(0).nextInt(6) == 0 and new Random(0).nextInt(100) == 60. */
static void test_known_values(void **state)
{
	(void)state;
	struct rng r;
	rng_init(&r, 42);
	assert_int_equal(rng_next_int(&r, 10), 0);
	assert_int_equal(rng_next_int(&r, 10), 3);
	rng_init(&r, 0);
	assert_int_equal(rng_next_int(&r, 100), 60);
	rng_init(&r, 0);
	assert_int_equal(rng_next_int(&r, 6), 0);
}

/* Extreme seeds are accepted and deterministic. */
static void test_extreme_seeds(void **state)
{
	(void)state;
	int64_t seeds[] = {-1, INT64_MIN, INT64_MAX, 0};
	for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
		struct rng a, b;
		rng_init(&a, seeds[i]);
		rng_init(&b, seeds[i]);
		for (int k = 0; k < 100; k++) {
			int x = rng_next_int(&a, 12);
			assert_true(x >= 0 && x < 12);
			assert_int_equal(x, rng_next_int(&b, 12));
		}
	}
}

/* The rejection path: with a bound just above 2^30 most draws are rejected;
 * every value must stay in range. */
static void test_large_bound(void **state)
{
	(void)state;
	struct rng r;
	rng_init(&r, 7);
	for (int k = 0; k < 1000; k++) {
		int32_t x = rng_next_int(&r, (1 << 30) + 1);
		assert_true(x >= 0 && x <= (1 << 30));
	}
	assert_int_equal(rng_next_int(&r, 0), 0);
	assert_int_equal(rng_next_int(&r, 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_next_int_vectors), cmocka_unit_test(test_mixed_vectors),
	        cmocka_unit_test(test_shuffle_vectors),  cmocka_unit_test(test_known_values),
	        cmocka_unit_test(test_extreme_seeds),    cmocka_unit_test(test_large_bound),
	};
	return cmocka_run_group_tests(tests, load_vectors, free_vectors);
}
