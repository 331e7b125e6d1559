/* Unit tests for json: the strict parser's tree (decoding of strings and
 * numbers, order, duplicates, arena growth), its errors (the same as
 * json_check's), and a differential check against cJSON on real documents. */
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

/* Parses text, which must be valid; the caller frees doc. */
static const struct json_value *parse_ok(struct json_doc *doc, const char *text)
{
	struct json_error e = {0, NULL};
	if (!json_parse(text, strlen(text), doc, &e))
		fail_msg("parse of <%s> failed at %zu: %s", text, e.pos, e.why);
	assert_non_null(doc->root);
	return doc->root;
}

/* text must fail in json_parse and json_check alike, at byte pos with why. */
static void parse_fails(const char *text, size_t len, size_t pos, const char *why)
{
	struct json_doc doc;
	struct json_error e = {0, NULL}, c = {0, NULL};
	assert_false(json_parse(text, len, &doc, &e));
	assert_false(doc.oom);
	assert_null(doc.root);
	json_doc_free(&doc);
	assert_false(json_check(text, len, &c));
	assert_string_equal(e.why, why);
	assert_string_equal(c.why, why);
	assert_int_equal(e.pos, pos);
	assert_int_equal(c.pos, pos);
}

static void test_scalars(void **state)
{
	(void)state;
	struct json_doc doc;
	const struct json_value *v = parse_ok(&doc, " true ");
	assert_int_equal(v->type, JSON_TRUE);
	assert_null(v->key);
	json_doc_free(&doc);
	assert_int_equal(parse_ok(&doc, "false")->type, JSON_FALSE);
	json_doc_free(&doc);
	assert_int_equal(parse_ok(&doc, "null")->type, JSON_NULL);
	json_doc_free(&doc);
	v = parse_ok(&doc, "\"\"");
	assert_int_equal(v->type, JSON_STRING);
	assert_string_equal(v->str, "");
	json_doc_free(&doc);
}

/* Every escape decodes to its character; \u escapes to UTF-8, surrogate
 * pairs to one 4-byte sequence; raw UTF-8 is copied. */
static void test_string_decoding(void **state)
{
	(void)state;
	struct json_doc doc;
	const struct json_value *v =
	        parse_ok(&doc, "\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\\u0041\\u00e9\\u20ac"
	                       "\\ud83d\\ude00\xc3\xbc\"");
	assert_string_equal(v->str, "a\"b\\c/d\be\ff\ng\rh\tiA\xc3\xa9\xe2\x82\xac"
	                            "\xf0\x9f\x98\x80\xc3\xbc");
	json_doc_free(&doc);
	v = parse_ok(&doc, "\"\\u007f\\u0080\\u07FF\\u0800\\uFFFF\"");
	assert_string_equal(v->str, "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf");
	json_doc_free(&doc);
}

static void check_number(const char *text, double want)
{
	struct json_doc doc;
	const struct json_value *v = parse_ok(&doc, text);
	assert_int_equal(v->type, JSON_NUMBER);
	if (v->num != want || signbit(v->num) != signbit(want))
		fail_msg("%s: got %.17g, want %.17g", text, v->num, want);
	json_doc_free(&doc);
}

/* Numbers read as strtod reads them, on the integer fast path and off it. */
static void test_numbers(void **state)
{
	(void)state;
	check_number("0", 0.0);
	check_number("-0", -0.0);
	check_number("7", 7.0);
	check_number("-2147483648", -2147483648.0);
	check_number("999999999999999", 999999999999999.0);      /* 15 digits: fast path */
	check_number("9007199254740993", 9007199254740992.0);    /* 16 digits: rounds */
	check_number("-9223372036854775809", -9223372036854775808.0);
	check_number("2001.0000000000001", 2001.0);
	check_number("1.5e3", 1500.0);
	check_number("1E-2", 0.01);
	check_number("1e400", HUGE_VAL);
	check_number("-1e400", -HUGE_VAL);
	check_number("1e-400", 0.0);
	/* longer than any fixed buffer: 1 followed by 80 zeros and ".5" */
	char big[128] = "1";
	memset(big + 1, '0', 80);
	strcpy(big + 81, ".5");
	check_number(big, 1e80);
}

/* Members keep their text order and keys; duplicates are all kept (the
 * callers decide what a duplicate means); json_member finds the first. */
static void test_containers(void **state)
{
	(void)state;
	struct json_doc doc;
	const struct json_value *v =
	        parse_ok(&doc, "{\"b\":1,\"a\":[true,{},[]],\"b\":\"x\",\"\\u0063\":null}");
	assert_int_equal(v->type, JSON_OBJECT);
	const struct json_value *m = v->child;
	assert_string_equal(m->key, "b");
	assert_int_equal(m->type, JSON_NUMBER);
	m = m->next;
	assert_string_equal(m->key, "a");
	assert_int_equal(m->type, JSON_ARRAY);
	const struct json_value *e = m->child;
	assert_int_equal(e->type, JSON_TRUE);
	assert_null(e->key);
	assert_int_equal(e->next->type, JSON_OBJECT);
	assert_null(e->next->child);
	assert_int_equal(e->next->next->type, JSON_ARRAY);
	assert_null(e->next->next->child);
	assert_null(e->next->next->next);
	m = m->next;
	assert_string_equal(m->key, "b");
	assert_string_equal(m->str, "x");
	m = m->next;
	assert_string_equal(m->key, "c");
	assert_int_equal(m->type, JSON_NULL);
	assert_null(m->next);

	assert_ptr_equal(json_member(v, "b"), v->child);
	assert_ptr_equal(json_member(v, "c"), m);
	assert_null(json_member(v, "B"));
	assert_null(json_member(NULL, "b"));
	assert_true(json_is(v, JSON_OBJECT));
	assert_false(json_is(NULL, JSON_OBJECT));
	assert_true(json_is_bool(e));
	assert_false(json_is_bool(NULL));
	json_doc_free(&doc);
}

/* A document far larger than the inline block spills into heap blocks. */
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
	struct json_doc doc;
	struct json_error e;
	assert_true(json_parse(text, len, &doc, &e));
	assert_non_null(doc.blocks);
	size_t i = 0;
	char key[32];
	for (const struct json_value *v = doc.root->child; v; v = v->next, i++) {
		snprintf(key, sizeof key, "k%zu", i);
		assert_string_equal(v->child->key, key);
		assert_true(v->child->num == (double)i);
	}
	assert_int_equal(i, n);
	json_doc_free(&doc);
	assert_null(doc.blocks);
	free(text);
}

/* json_parse fails exactly where and why json_check does. */
static void test_errors(void **state)
{
	(void)state;
	parse_fails("", 0, 0, "empty input");
	parse_fails("  ", 2, 2, "empty input");
	parse_fails("01", 2, 1, "leading zero in number");
	parse_fails("1.", 2, 2, "invalid number");
	parse_fails("-", 1, 1, "invalid number");
	parse_fails("[1,]", 4, 3, "unexpected character");
	parse_fails("{\"a\" 1}", 7, 5, "expected ':'");
	parse_fails("{1:2}", 5, 1, "expected a string key");
	parse_fails("[1 2]", 5, 3, "expected ',' or ']'");
	parse_fails("\"a\\x\"", 5, 2, "invalid escape in string");
	parse_fails("\"\\u12G4\"", 8, 1, "invalid \\u escape in string");
	parse_fails("\"\\u0000\"", 8, 1, "\\u0000 is not allowed in strings");
	parse_fails("\"\\ud800\"", 8, 1, "lone surrogate in \\u escape");
	parse_fails("\"\\udc00\"", 8, 1, "lone surrogate in \\u escape");
	parse_fails("\"\x01\"", 3, 1, "control character in string");
	parse_fails("\"\xc3\"", 3, 1, "invalid UTF-8");
	parse_fails("\"\xed\xa0\x80\"", 5, 1, "invalid UTF-8");
	parse_fails("\"abc", 4, 4, "unterminated string");
	parse_fails("tru", 3, 0, "unexpected character");
	parse_fails("{} x", 4, 3, "unexpected text after the JSON value");
	parse_fails("\xEF\xBB\xBF{}", 5, 0, "byte order mark not allowed");
	parse_fails("[\0]", 3, 1, "NUL byte");
	char deep[JSON_MAX_DEPTH + 2];
	memset(deep, '[', sizeof deep);
	parse_fails(deep, sizeof deep, JSON_MAX_DEPTH, "nesting too deep");
	/* a failure after some nodes were built frees them (checked by the
	 * sanitizer and valgrind runs) */
	parse_fails("[[1,2,{\"a\":\"b\"}],[3,", 20, 20, "unexpected end of input");
}

/* ---- differential: the same tree as cJSON for every real document ------- */

static void same_tree(const struct json_value *v, const cJSON *c, const char *where)
{
	switch (v->type) {
	case JSON_NULL:
		assert_true(cJSON_IsNull(c));
		break;
	case JSON_FALSE:
		assert_true(cJSON_IsFalse(c));
		break;
	case JSON_TRUE:
		assert_true(cJSON_IsTrue(c));
		break;
	case JSON_NUMBER:
		assert_true(cJSON_IsNumber(c));
		if (v->num != c->valuedouble)
			fail_msg("%s: number %.17g vs cJSON %.17g", where, v->num, c->valuedouble);
		break;
	case JSON_STRING:
		assert_true(cJSON_IsString(c));
		assert_string_equal(v->str, c->valuestring);
		break;
	case JSON_ARRAY:
	case JSON_OBJECT: {
		assert_true(v->type == JSON_ARRAY ? cJSON_IsArray(c) : cJSON_IsObject(c));
		const struct json_value *m = v->child;
		const cJSON *k = c->child;
		for (; m && k; m = m->next, k = k->next) {
			if (v->type == JSON_OBJECT)
				assert_string_equal(m->key, k->string);
			same_tree(m, k, where);
		}
		assert_null(m);
		assert_null(k);
		break;
	}
	}
}

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

/* Parses path with both; both accept it (the files are valid) and agree. */
static int compare_file(const char *path)
{
	size_t len;
	char *text = read_file(path, &len);
	if (!text)
		return 0;
	struct json_doc doc;
	struct json_error e;
	if (!json_parse(text, len, &doc, &e)) {
		/* a deliberately broken file: cJSON is lenient, so only check the
		 * parser and the checker agree */
		struct json_error c;
		assert_false(json_check(text, len, &c));
		assert_int_equal(c.pos, e.pos);
		json_doc_free(&doc);
		free(text);
		return 1;
	}
	cJSON *c = cJSON_ParseWithLength(text, len);
	assert_non_null(c);
	same_tree(doc.root, c, path);
	cJSON_Delete(c);
	json_doc_free(&doc);
	free(text);
	return 1;
}

static int compare_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *de;
	char path[1024];
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		if (l < 5 || strcmp(de->d_name + l - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		n += compare_file(path);
	}
	closedir(d);
	return n;
}

static void test_same_as_cjson(void **state)
{
	(void)state;
	int n = compare_dir(SOPRA_SOURCE_DIR "/resources");
	assert_true(n >= 1);
	n += compare_dir(SOPRA_SHARED_DIR "/conformance/base");
	n += compare_dir(SOPRA_SHARED_DIR "/conformance/revised");
	n += compare_file(SOPRA_SHARED_DIR "/data/java_random_vectors.json");
	print_message("compared %d files with cJSON\n", n);
	/* commands as clients send them */
	static const char *const lines[] = {
	        "{\"command\":\"Move\",\"characterId\":3,\"locationId\":2}",
	        "{\"command\":\"Register\",\"name\":\"J\\u00fcrgen \\ud83e\\udddf\",\"x\":[1.25e2,-0.5]}",
	        "{ \"command\" : \"EndTurn\" , \"nested\" : { \"a\" : [ null , false , true ] } }",
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		struct json_doc doc;
		const struct json_value *v = parse_ok(&doc, lines[i]);
		cJSON *c = cJSON_Parse(lines[i]);
		assert_non_null(c);
		same_tree(v, c, lines[i]);
		cJSON_Delete(c);
		json_doc_free(&doc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_scalars),      cmocka_unit_test(test_string_decoding),
	        cmocka_unit_test(test_numbers),      cmocka_unit_test(test_containers),
	        cmocka_unit_test(test_large_document), cmocka_unit_test(test_errors),
	        cmocka_unit_test(test_same_as_cjson),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
