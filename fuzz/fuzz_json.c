/*
 * fuzz_json: the strict JSON parser (src/json.c) on arbitrary bytes.
 *
 * Checked on every input:
 *   - json_check and json_parse agree: the same verdict and, on failure, the
 *     same error position and reason; json_parse fails only for "out of
 *     memory" with doc.oom set;
 *   - parsing again into the freed document gives the same verdict;
 *   - what json_parse accepts, cJSON (more lenient) accepts too and builds
 *     the same tree: the same types, member order and keys, the same decoded
 *     strings byte for byte, the same numbers (both read them with strtod),
 *     and every string is valid UTF-8 without NUL. cJSON reads at most 63
 *     characters of a number, so an input with a longer run of number
 *     characters may be refused by cJSON; it is then only checked against
 *     json_check.
 */
#include "fuzz_common.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "sopra/json.h"

static void same_tree(const struct json_value *v, const cJSON *c)
{
	FUZZ_CHECK(c != NULL, "cJSON has fewer values");
	switch (v->type) {
	case JSON_NULL:
		FUZZ_CHECK(cJSON_IsNull(c), "null vs cJSON type %d", c->type);
		break;
	case JSON_FALSE:
		FUZZ_CHECK(cJSON_IsFalse(c), "false vs cJSON type %d", c->type);
		break;
	case JSON_TRUE:
		FUZZ_CHECK(cJSON_IsTrue(c), "true vs cJSON type %d", c->type);
		break;
	case JSON_NUMBER:
		FUZZ_CHECK(cJSON_IsNumber(c), "number vs cJSON type %d", c->type);
		/* both NaN-free: JSON has no NaN; compare bits of +-0 too */
		FUZZ_CHECK(v->num == c->valuedouble && (v->num != 0 || memcmp(&v->num, &c->valuedouble,
		                                                              sizeof v->num) == 0),
		           "number %.17g vs cJSON %.17g", v->num, c->valuedouble);
		break;
	case JSON_STRING:
		FUZZ_CHECK(cJSON_IsString(c), "string vs cJSON type %d", c->type);
		FUZZ_CHECK(strcmp(v->str, c->valuestring) == 0, "string <%s> vs cJSON <%s>",
		           fuzz_printable(v->str, strlen(v->str)), c->valuestring);
		FUZZ_CHECK(fuzz_utf8_valid(v->str, strlen(v->str)), "string not UTF-8");
		break;
	case JSON_ARRAY:
	case JSON_OBJECT: {
		FUZZ_CHECK(v->type == JSON_ARRAY ? cJSON_IsArray(c) : cJSON_IsObject(c),
		           "container type %d vs cJSON type %d", (int)v->type, c->type);
		const cJSON *k = c->child;
		for (const struct json_value *m = v->child; m; m = m->next, k = k->next) {
			FUZZ_CHECK(k != NULL, "cJSON has fewer members");
			if (v->type == JSON_OBJECT) {
				FUZZ_CHECK(m->key && k->string && strcmp(m->key, k->string) == 0,
				           "key <%s> vs cJSON <%s>", m->key ? m->key : "(null)",
				           k->string ? k->string : "(null)");
				FUZZ_CHECK(fuzz_utf8_valid(m->key, strlen(m->key)), "key not UTF-8");
			} else {
				FUZZ_CHECK(m->key == NULL, "array element with a key");
			}
			same_tree(m, k);
		}
		FUZZ_CHECK(k == NULL, "cJSON has more members");
		break;
	}
	}
}

/* A run of 64 or more characters that cJSON's number reader takes. */
static bool has_long_number_run(const uint8_t *d, size_t n)
{
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		bool num = (d[i] >= '0' && d[i] <= '9') || d[i] == '-' || d[i] == '+' || d[i] == '.' ||
		           d[i] == 'e' || d[i] == 'E';
		run = num ? run + 1 : 0;
		if (run >= 64)
			return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct json_error ce = {0, NULL}, pe = {0, NULL};
	bool checked = json_check(text, size, &ce);
	struct json_doc doc;
	bool parsed = json_parse(text, size, &doc, &pe);
	if (!parsed && doc.oom) {
		json_doc_free(&doc);
		return 0; /* not reachable with libFuzzer's limits; nothing to compare */
	}
	FUZZ_CHECK(parsed == checked, "json_parse %d, json_check %d", parsed, checked);
	if (!parsed) {
		FUZZ_CHECK(doc.root == NULL, "a root after a failed parse");
		FUZZ_CHECK(pe.pos == ce.pos && strcmp(pe.why, ce.why) == 0,
		           "parse: %zu %s; check: %zu %s", pe.pos, pe.why, ce.pos, ce.why);
		FUZZ_CHECK(pe.pos <= size, "error position %zu past the end %zu", pe.pos, size);
		json_doc_free(&doc);
		return 0;
	}
	FUZZ_CHECK(doc.root != NULL && doc.root->key == NULL && doc.root->next == NULL,
	           "a bad root");
	cJSON *c = cJSON_ParseWithLength(text, size);
	if (!c) {
		FUZZ_CHECK(has_long_number_run(data, size), "cJSON refuses what json_parse took");
	} else {
		same_tree(doc.root, c);
		cJSON_Delete(c);
	}
	json_doc_free(&doc);
	struct json_doc again;
	FUZZ_CHECK(json_parse(text, size, &again, &pe), "a second parse fails");
	json_doc_free(&again);
	return 0;
}
