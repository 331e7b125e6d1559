/* Unit tests for json: the strict check in front of cJSON. What json_check
 * accepts, cJSON parses to the expected values (decoding of strings and
 * numbers, order, duplicates, large documents); json_check's errors; one
 * test per kind of input cJSON alone accepts although the protocol must
 * reject it; and both on every JSON document in resources/ and ../shared. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sopra/json.h"

/* text must pass json_check; returns cJSON's tree of it (the caller
 * deletes it). */
static cJSON *check_ok_n(const char *text, size_t len)
{
	struct json_error e = {0, NULL};
	if (!json_check(text, len, &e))
		fail_msg("check of <%.*s> failed at %zu: %s", (int)len, text, e.pos, e.why);
	cJSON *c = cJSON_ParseWithLength(text, len);
	if (!c)
		fail_msg("cJSON refuses <%.*s>, which json_check accepts", (int)len, text);
	return c;
}

static cJSON *check_ok(const char *text)
{
	return check_ok_n(text, strlen(text));
}

/* text must fail json_check at byte pos with why. */
static void check_fails(const char *text, size_t len, size_t pos, const char *why)
{
	struct json_error c = {0, NULL};
	assert_false(json_check(text, len, &c));
	assert_string_equal(c.why, why);
	assert_int_equal(c.pos, pos);
}

static void test_scalars(void **state)
{
	(void)state;
	cJSON *v = check_ok(" true ");
	assert_true(cJSON_IsTrue(v));
	assert_null(v->string);
	cJSON_Delete(v);
	v = check_ok("false");
	assert_true(cJSON_IsFalse(v));
	cJSON_Delete(v);
	v = check_ok("null");
	assert_true(cJSON_IsNull(v));
	cJSON_Delete(v);
	v = check_ok("\"\"");
	assert_true(cJSON_IsString(v));
	assert_string_equal(v->valuestring, "");
	cJSON_Delete(v);
}

/* Every escape decodes to its character; \u escapes to UTF-8, surrogate
 * pairs to one 4-byte sequence; raw UTF-8 is copied. */
static void test_string_decoding(void **state)
{
	(void)state;
	cJSON *v = check_ok("\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\\u0041\\u00e9\\u20ac"
	                    "\\ud83d\\ude00\xc3\xbc\"");
	assert_string_equal(v->valuestring, "a\"b\\c/d\be\ff\ng\rh\tiA\xc3\xa9\xe2\x82\xac"
	                                    "\xf0\x9f\x98\x80\xc3\xbc");
	cJSON_Delete(v);
	v = check_ok("\"\\u007f\\u0080\\u07FF\\u0800\\uFFFF\"");
	assert_string_equal(v->valuestring, "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf");
	cJSON_Delete(v);
}

static void check_number(const char *text, double want)
{
	cJSON *v = check_ok(text);
	assert_true(cJSON_IsNumber(v));
	if (v->valuedouble != want || signbit(v->valuedouble) != signbit(want))
		fail_msg("%s: got %.17g, want %.17g", text, v->valuedouble, want);
	cJSON_Delete(v);
}

/* Numbers read as strtod reads them, whatever their length. */
static void test_numbers(void **state)
{
	(void)state;
	check_number("0", 0.0);
	check_number("-0", -0.0);
	check_number("7", 7.0);
	check_number("-2147483648", -2147483648.0);
	check_number("999999999999999", 999999999999999.0);
	check_number("9007199254740993", 9007199254740992.0); /* 16 digits: rounds */
	check_number("-9223372036854775809", -9223372036854775808.0);
	check_number("2001.0000000000001", 2001.0);
	check_number("1.5e3", 1500.0);
	check_number("1E-2", 0.01);
	check_number("1e400", HUGE_VAL);
	check_number("-1e400", -HUGE_VAL);
	check_number("1e-400", 0.0);
	/* longer than any fixed buffer (cJSON 1.7.15 as released read at most
	 * 63 characters of a number and then failed on the rest; Debian's
	 * 1.7.15-1+deb12u4 reads all): 1 followed by 80 zeros and ".5" */
	char big[128] = "1";
	memset(big + 1, '0', 80);
	strcpy(big + 81, ".5");
	check_number(big, 1e80);
}

/* Members keep their text order and keys; duplicates are all kept (the
 * callers decide what a duplicate means); cJSON's lookup finds the first. */
static void test_containers(void **state)
{
	(void)state;
	cJSON *v = check_ok("{\"b\":1,\"a\":[true,{},[]],\"b\":\"x\",\"\\u0063\":null}");
	assert_true(cJSON_IsObject(v));
	const cJSON *m = v->child;
	assert_string_equal(m->string, "b");
	assert_true(cJSON_IsNumber(m));
	m = m->next;
	assert_string_equal(m->string, "a");
	assert_true(cJSON_IsArray(m));
	const cJSON *e = m->child;
	assert_true(cJSON_IsTrue(e));
	assert_null(e->string);
	assert_true(cJSON_IsObject(e->next));
	assert_null(e->next->child);
	assert_true(cJSON_IsArray(e->next->next));
	assert_null(e->next->next->child);
	assert_null(e->next->next->next);
	m = m->next;
	assert_string_equal(m->string, "b");
	assert_string_equal(m->valuestring, "x");
	m = m->next;
	assert_string_equal(m->string, "c");
	assert_true(cJSON_IsNull(m));
	assert_null(m->next);

	assert_ptr_equal(cJSON_GetObjectItemCaseSensitive(v, "b"), v->child);
	assert_ptr_equal(cJSON_GetObjectItemCaseSensitive(v, "c"), m);
	assert_null(cJSON_GetObjectItemCaseSensitive(v, "B"));
	assert_null(cJSON_GetObjectItemCaseSensitive(NULL, "b"));
	assert_false(cJSON_IsObject(NULL));
	assert_true(cJSON_IsBool(e));
	assert_false(cJSON_IsBool(NULL));
	cJSON_Delete(v);
}

/* A large document passes as a whole. */
static void test_large_document(void **state)
{
	(void)state;
	size_t n = 20000;
	char *text = malloc(n * 16 + 16);
	assert_non_null(text);
	size_t len = 0;
	text[len++] = '[';
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(text + len, "%s{\"k%zu\":%zu}", i ? "," : "", i, i);
	text[len++] = ']';
	cJSON *root = check_ok_n(text, len);
	size_t i = 0;
	char key[32];
	for (const cJSON *v = root->child; v; v = v->next, i++) {
		snprintf(key, sizeof key, "k%zu", i);
		assert_string_equal(v->child->string, key);
		assert_true(v->child->valuedouble == (double)i);
	}
	assert_int_equal(i, n);
	cJSON_Delete(root);
	free(text);
}

/* json_check's errors: where and why. */
static void test_errors(void **state)
{
	(void)state;
	check_fails("", 0, 0, "empty input");
	check_fails("  ", 2, 2, "empty input");
	check_fails("01", 2, 1, "leading zero in number");
	check_fails("1.", 2, 2, "invalid number");
	check_fails("-", 1, 1, "invalid number");
	check_fails("[1,]", 4, 3, "unexpected character");
	check_fails("{\"a\" 1}", 7, 5, "expected ':'");
	check_fails("{1:2}", 5, 1, "expected a string key");
	check_fails("[1 2]", 5, 3, "expected ',' or ']'");
	check_fails("\"a\\x\"", 5, 2, "invalid escape in string");
	check_fails("\"\\u12G4\"", 8, 1, "invalid \\u escape in string");
	check_fails("\"\\u0000\"", 8, 1, "\\u0000 is not allowed in strings");
	check_fails("\"\\ud800\"", 8, 1, "lone surrogate in \\u escape");
	check_fails("\"\\udc00\"", 8, 1, "lone surrogate in \\u escape");
	check_fails("\"\x01\"", 3, 1, "control character in string");
	check_fails("\"\xc3\"", 3, 1, "invalid UTF-8");
	check_fails("\"\xed\xa0\x80\"", 5, 1, "invalid UTF-8");
	check_fails("\"abc", 4, 4, "unterminated string");
	check_fails("tru", 3, 0, "unexpected character");
	check_fails("{} x", 4, 3, "unexpected text after the JSON value");
	check_fails("\xEF\xBB\xBF{}", 5, 0, "byte order mark not allowed");
	check_fails("[\0]", 3, 1, "NUL byte");
	char deep[JSON_MAX_DEPTH + 2];
	memset(deep, '[', sizeof deep);
	check_fails(deep, sizeof deep, JSON_MAX_DEPTH, "nesting too deep");
	check_fails("[[1,2,{\"a\":\"b\"}],[3,", 20, 20, "unexpected end of input");
}

/* ---- what cJSON alone accepts and the protocol rejects -------------------
 *
 * One test per kind of input. Each shows what cJSON makes of it (why the
 * check in front of it exists) and the exact rejection: json_check's for
 * syntax; for the two kinds that are valid JSON (duplicate keys, numbers
 * beyond a double) what the callers see on cJSON's tree -- proto and config
 * reject them (tests/test_proto.c test_decode_rejects_what_cjson_accepts,
 * tests/test_config.c). */

/* cJSON's verdict on text; its tree when it accepts (the caller deletes). */
static cJSON *cjson_alone(const char *text)
{
	cJSON *c = cJSON_ParseWithLength(text, strlen(text));
	if (!c)
		fail_msg("cJSON now refuses <%s>: update this test", text);
	return c;
}

/* An invalid \u escape: cJSON ends the string there ("ab"). */
static void test_lenient_invalid_u_escape(void **state)
{
	(void)state;
	static const char text[] = "[\"ab\\uZZZZcd\"]";
	cJSON *c = cjson_alone(text);
	assert_string_equal(c->child->valuestring, "ab");
	cJSON_Delete(c);
	check_fails(text, sizeof text - 1, 4, "invalid \\u escape in string");
	check_fails("\"\\u12\"", 6, 1, "invalid \\u escape in string");
}

/* \u0000: cJSON ends the C string there ("An"). */
static void test_lenient_u0000(void **state)
{
	(void)state;
	static const char text[] = "[\"An\\u0000na\"]";
	cJSON *c = cjson_alone(text);
	assert_string_equal(c->child->valuestring, "An");
	cJSON_Delete(c);
	check_fails(text, sizeof text - 1, 4, "\\u0000 is not allowed in strings");
}

/* Duplicate keys: valid JSON (RFC 8259 says names SHOULD be unique), so
 * json_check accepts them; cJSON keeps both and its lookup returns the
 * first. proto answers "<Command>.<key>: given more than once", config
 * "<path>: duplicate key". */
static void test_lenient_duplicate_keys(void **state)
{
	(void)state;
	static const char text[] = "{\"playerName\":\"A\",\"playerName\":\"B\"}";
	cJSON *c = check_ok(text);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(c, "playerName")->valuestring, "A");
	assert_int_equal(cJSON_GetArraySize(c), 2);
	assert_string_equal(c->child->next->string, "playerName");
	assert_string_equal(c->child->next->valuestring, "B");
	cJSON_Delete(c);
}

/* Leading zeros: cJSON reads 007 as 7. */
static void test_lenient_leading_zeros(void **state)
{
	(void)state;
	static const char text[] = "[007]";
	cJSON *c = cjson_alone(text);
	assert_true(c->child->valuedouble == 7.0);
	cJSON_Delete(c);
	check_fails(text, sizeof text - 1, 2, "leading zero in number");
	check_fails("[-00]", 5, 3, "leading zero in number");
}

/* Raw control characters: cJSON copies them into strings and skips them
 * (every byte up to 0x20) as whitespace. */
static void test_lenient_control_characters(void **state)
{
	(void)state;
	static const char tab[] = "[\"a\tb\"]";
	cJSON *c = cjson_alone(tab);
	assert_string_equal(c->child->valuestring, "a\tb");
	cJSON_Delete(c);
	check_fails(tab, sizeof tab - 1, 3, "control character in string");
	check_fails("[\"\n\"]", 5, 2, "control character in string");
	check_fails("[\"\x1f\"]", 5, 2, "control character in string");
	static const char ws[] = "\x0b[1]";
	c = cjson_alone(ws);
	assert_true(c->child->valuedouble == 1.0);
	cJSON_Delete(c);
	check_fails(ws, sizeof ws - 1, 0, "unexpected character");
	check_fails("[1\x0c]", 4, 2, "expected ',' or ']'");
}

/* 1e400: valid JSON, beyond a double. cJSON stores infinity (and would
 * print it as null); json_check accepts it, proto and config answer
 * "integer out of range". */
static void test_lenient_1e400(void **state)
{
	(void)state;
	cJSON *c = check_ok("[1e400,-1e400]");
	assert_true(isinf(c->child->valuedouble) && c->child->valuedouble > 0);
	assert_true(isinf(c->child->next->valuedouble) && c->child->next->valuedouble < 0);
	char *printed = cJSON_PrintUnformatted(c);
	assert_string_equal(printed, "[null,null]");
	cJSON_free(printed);
	cJSON_Delete(c);
}

/* The rest of the grammar cJSON is lenient about. */
static void test_lenient_other(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		size_t pos;
		const char *why;
	} cases[] = {
	        {"[1.]", 3, "invalid number"},
	        {"[1] x", 4, "unexpected text after the JSON value"},
	        {"\xEF\xBB\xBF[1]", 0, "byte order mark not allowed"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cJSON_Delete(cjson_alone(cases[i].text));
		check_fails(cases[i].text, strlen(cases[i].text), cases[i].pos, cases[i].why);
	}
}

/* ---- every real document ------------------------------------------------- */

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0, r;
	do {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			char *nb = realloc(buf, cap + 1);
			assert_non_null(nb);
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Checks path: when json_check accepts it, cJSON parses it too, and what
 * cJSON prints of its tree passes json_check and parses to an equal tree
 * (nothing cut off or changed on the way). A deliberately broken file is
 * only checked to fail within the text. Returns 1 when the file was read. */
static int check_file(const char *path)
{
	size_t len;
	char *text = read_file(path, &len);
	if (!text)
		return 0;
	struct json_error e;
	if (!json_check(text, len, &e)) {
		assert_true(e.pos <= len);
		free(text);
		return 1;
	}
	cJSON *c = cJSON_ParseWithLength(text, len);
	if (!c)
		fail_msg("%s: cJSON refuses what json_check accepts", path);
	char *printed = cJSON_PrintUnformatted(c);
	assert_non_null(printed);
	if (!json_check(printed, strlen(printed), &e))
		fail_msg("%s: cJSON's output fails json_check at %zu: %s", path, e.pos, e.why);
	cJSON *again = cJSON_Parse(printed);
	assert_non_null(again);
	if (!cJSON_Compare(c, again, 1))
		fail_msg("%s: cJSON's tree changes on a round trip", path);
	cJSON_Delete(again);
	cJSON_free(printed);
	cJSON_Delete(c);
	free(text);
	return 1;
}

/* Checks every *.json in dir; returns how many, or -1 when dir is missing. */
static int check_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *de;
	char path[1024];
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		if (l < 5 || strcmp(de->d_name + l - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		n += check_file(path);
	}
	closedir(d);
	return n;
}

static void test_real_documents(void **state)
{
	(void)state;
	int n = check_dir(SOPRA_SOURCE_DIR "/resources");
	assert_true(n >= 1);
	/* ../shared is another repository next to this one: without it the
	 * conformance configurations are not checked. Say so loudly; in CI
	 * (CI=true) it is an error. */
	static const char *const shared_dirs[] = {
	        SOPRA_SHARED_DIR "/conformance/base",
	        SOPRA_SHARED_DIR "/conformance/revised",
	};
	static const char shared_file[] = SOPRA_SHARED_DIR "/data/java_random_vectors.json";
	int missing = 0, sources = 0;
	for (size_t i = 0; i < sizeof shared_dirs / sizeof shared_dirs[0]; i++, sources++) {
		int k = check_dir(shared_dirs[i]);
		if (k >= 0) {
			n += k;
			continue;
		}
		missing++;
		print_message("*** SKIPPED: directory %s not found: none of its JSON files "
		              "were checked\n",
		              shared_dirs[i]);
	}
	sources++;
	if (check_file(shared_file)) {
		n++;
	} else {
		missing++;
		print_message("*** SKIPPED: %s not found: not checked\n", shared_file);
	}
	if (missing) {
		print_message("*** SKIPPED %d of %d sources under %s (is the shared repository "
		              "checked out next to this one?); checked only %d files\n",
		              missing, sources, SOPRA_SHARED_DIR, n);
		const char *ci = getenv("CI");
		if (ci && strcmp(ci, "true") == 0)
			fail_msg("CI=true: %d of %d sources under %s are missing", missing, sources,
			         SOPRA_SHARED_DIR);
	}
	print_message("checked %d files with json_check and cJSON\n", n);
	/* commands as clients send them */
	static const char *const lines[] = {
	        "{\"command\":\"Move\",\"characterId\":3,\"locationId\":2}",
	        "{\"command\":\"Register\",\"name\":\"J\\u00fcrgen \\ud83e\\udddf\",\"x\":[1.25e2,-0.5]}",
	        "{ \"command\" : \"EndTurn\" , \"nested\" : { \"a\" : [ null , false , true ] } }",
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
		cJSON_Delete(check_ok(lines[i]));
	cJSON *c = check_ok(lines[1]);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring,
	                    "J\xc3\xbcrgen \xf0\x9f\xa7\x9f");
	cJSON_Delete(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_scalars),
	        cmocka_unit_test(test_string_decoding),
	        cmocka_unit_test(test_numbers),
	        cmocka_unit_test(test_containers),
	        cmocka_unit_test(test_large_document),
	        cmocka_unit_test(test_errors),
	        cmocka_unit_test(test_lenient_invalid_u_escape),
	        cmocka_unit_test(test_lenient_u0000),
	        cmocka_unit_test(test_lenient_duplicate_keys),
	        cmocka_unit_test(test_lenient_leading_zeros),
	        cmocka_unit_test(test_lenient_control_characters),
	        cmocka_unit_test(test_lenient_1e400),
	        cmocka_unit_test(test_lenient_other),
	        cmocka_unit_test(test_real_documents),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
