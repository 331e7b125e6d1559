/* The example command Wait (docs/design.md, "Adding a command"; a build with
 * -DSOPRA_EXAMPLE_COMMAND=ON only): proto decodes and encodes it from its
 * row alone, with the usual errors. Applying it, the journal and the replay
 * are checked over the wire by wire_test.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "sopra/proto.h"

static const char line[] = "{\"command\":\"Wait\",\"characterId\":101}";

static void test_decodes(void **state)
{
	(void)state;
	for (int rules = RULES_BASE; rules <= RULES_REVISED; rules++) {
		struct proto_cmd pc;
		proto_cmd_init(&pc);
		const char *err = NULL;
		assert_true(proto_decode(line, strlen(line), (enum game_rules)rules, &pc, &err));
		assert_int_equal(pc.cmd.type, CMD_WAIT);
		assert_int_equal(pc.cmd.character, 101);
		assert_false(pc.cmd.has_target);
		proto_cmd_clear(&pc);
	}
}

static void expect_error(const char *bad, const char *want)
{
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	const char *err = NULL;
	assert_false(proto_decode(bad, strlen(bad), RULES_BASE, &pc, &err));
	assert_string_equal(err, want);
	proto_cmd_clear(&pc);
}

static void test_decode_errors(void **state)
{
	(void)state;
	expect_error("{\"command\":\"Wait\"}", "Wait.characterId: missing");
	expect_error("{\"command\":\"Wait\",\"characterId\":\"101\"}",
	             "Wait.characterId: expected an integer");
}

static void test_encodes(void **state)
{
	(void)state;
	struct cmd c = {.type = CMD_WAIT, .character = 101};
	for (int rules = RULES_BASE; rules <= RULES_REVISED; rules++) {
		struct proto_buf b;
		proto_buf_init(&b);
		proto_encode_cmd(&c, (enum game_rules)rules, &b);
		assert_int_equal(b.len, strlen(line) + 1);
		assert_memory_equal(b.data, line, strlen(line));
		assert_int_equal(b.data[b.len - 1], '\n');
		proto_buf_free(&b);
	}
	assert_string_equal(cmd_name(CMD_WAIT), "Wait");
	assert_int_equal(CMD_WAIT, CMD_TYPE_COUNT - 1); /* the last row */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_decodes),
	        cmocka_unit_test(test_decode_errors),
	        cmocka_unit_test(test_encodes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
