/* Unit tests for proto: decoding of every command and its failures, exact
 * encoding of every event, string escaping, round trips. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sopra/proto.h"

/* ---- helpers ------------------------------------------------------------- */

/* Decode n bytes (so tests can embed NULs); the command must succeed. */
static void dec_ok_n(struct proto_cmd *pc, const char *line, size_t n, enum game_rules rules)
{
	const char *err = NULL;
	bool ok = proto_decode(line, n, rules, pc, &err);
	if (!ok)
		fail_msg("decode of <%.*s> failed: %s", (int)n, line, err);
}

static void dec_ok(struct proto_cmd *pc, const char *line, enum game_rules rules)
{
	dec_ok_n(pc, line, strlen(line), rules);
}

/* Decode n bytes; it must fail with exactly `want`. */
static void dec_fail_n(const char *line, size_t n, enum game_rules rules, const char *want)
{
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	const char *err = NULL;
	bool ok = proto_decode(line, n, rules, &pc, &err);
	if (ok)
		fail_msg("decode of <%.*s> unexpectedly succeeded", (int)n, line);
	assert_non_null(err);
	assert_true(err[0] != '\0');
	assert_string_equal(err, want);
	/* a failed decode leaves nothing behind */
	assert_null(pc.name_storage);
	assert_null(pc.cmd.name);
	proto_cmd_clear(&pc);
}

static void dec_fail(const char *line, enum game_rules rules, const char *want)
{
	dec_fail_n(line, strlen(line), rules, want);
}

static struct game_event ev_make(enum game_event_type t, int nargs, int a0, int a1, int a2, int a3,
			    const char *str)
{
	struct game_event e = { .type = t, .to = GEV_TO_ALL, .nargs = nargs, .str = str };
	e.arg[0] = a0;
	e.arg[1] = a1;
	e.arg[2] = a2;
	e.arg[3] = a3;
	return e;
}

/* Event types whose exact line some test_encode_* test has checked. */
static bool enc_checked[GAME_EVENT_TYPE_COUNT];

/* Encode ev and compare with want (which includes the trailing newline). */
static void enc_is(const struct game_event *ev, enum game_rules rules, const char *want)
{
	enc_checked[ev->type] = true;
	struct proto_buf b;
	proto_buf_init(&b);
	proto_encode(ev, rules, &b);
	if (b.len != strlen(want) || memcmp(b.data, want, b.len) != 0)
		fail_msg("encoded <%.*s>, want <%s>", (int)b.len, b.data, want);
	proto_buf_free(&b);
}

#define EV(t, n, a0, a1, a2, a3, s) ev_make(GEV_##t, n, a0, a1, a2, a3, s)
#define ENC(rules, want, t, n, a0, a1, a2, a3, s)                 \
	do {                                                     \
		struct game_event e_ = EV(t, n, a0, a1, a2, a3, s);   \
		enc_is(&e_, rules, want "\n");                   \
	} while (0)

/* ---- decoding: every command -------------------------------------------- */

static void test_decode_register(void **state)
{
	(void)state;
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"Register\",\"playerName\":\"Anna\"}", RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_REGISTER);
	assert_string_equal(pc.cmd.name, "Anna");
	assert_ptr_equal(pc.cmd.name, pc.name_storage);
	/* any name is accepted, also the empty one, and escapes are decoded */
	dec_ok(&pc, "{\"command\":\"Register\",\"playerName\":\"\"}", RULES_REVISED);
	assert_string_equal(pc.cmd.name, "");
	dec_ok(&pc, "{\"command\":\"Register\",\"playerName\":\"J\\u00f6rg \\\"x\\\" \\ud83d\\ude00\"}",
	       RULES_BASE);
	assert_string_equal(pc.cmd.name, "J\xc3\xb6rg \"x\" \xf0\x9f\x98\x80");
	proto_cmd_clear(&pc);
	assert_null(pc.name_storage);
	assert_null(pc.cmd.name);
}

static void test_decode_register_errors(void **state)
{
	(void)state;
	dec_fail("{\"command\":\"Register\"}", RULES_BASE, "Register.playerName: missing");
	dec_fail("{\"command\":\"Register\",\"playerName\":5}", RULES_BASE,
		 "Register.playerName: expected a string");
	dec_fail("{\"command\":\"Register\",\"playerName\":null}", RULES_BASE,
		 "Register.playerName: expected a string");
	dec_fail("{\"command\":\"Register\",\"playerName\":[\"a\"]}", RULES_BASE,
		 "Register.playerName: expected a string");
	dec_fail("{\"command\":\"Register\",\"PlayerName\":\"a\"}", RULES_BASE,
		 "Register.playerName: missing");
}

static void test_decode_no_param_commands(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		enum cmd_type type;
	} cases[] = {
		{ "{\"command\":\"StartGame\"}", CMD_START_GAME },
		{ "{\"command\":\"Leave\"}", CMD_LEAVE },
		{ "{\"command\":\"EndTurn\"}", CMD_END_TURN },
	};
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		dec_ok(&pc, cases[i].line, RULES_BASE);
		assert_int_equal(pc.cmd.type, cases[i].type);
		assert_null(pc.cmd.name);
		dec_ok(&pc, cases[i].line, RULES_REVISED);
		assert_int_equal(pc.cmd.type, cases[i].type);
	}
	proto_cmd_clear(&pc);
}

static void test_decode_select_characters(void **state)
{
	(void)state;
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"SelectCharacters\",\"characterId0\":2000,\"characterId1\":2001}",
	       RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_SELECT_CHARACTERS);
	assert_int_equal(pc.cmd.character, 2000);
	assert_int_equal(pc.cmd.character2, 2001);
	proto_cmd_clear(&pc);
	dec_fail("{\"command\":\"SelectCharacters\",\"characterId1\":2001}", RULES_BASE,
		 "SelectCharacters.characterId0: missing");
	dec_fail("{\"command\":\"SelectCharacters\",\"characterId0\":2001}", RULES_BASE,
		 "SelectCharacters.characterId1: missing");
	dec_fail("{\"command\":\"SelectCharacters\",\"characterId0\":\"2000\",\"characterId1\":2001}",
		 RULES_BASE, "SelectCharacters.characterId0: expected an integer");
	dec_fail("{\"command\":\"SelectCharacters\",\"characterId0\":2000,\"characterId1\":true}",
		 RULES_BASE, "SelectCharacters.characterId1: expected an integer");
}

static void test_decode_move_base(void **state)
{
	(void)state;
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"Move\",\"characterId\":2004,\"locationId\":3001,\"fuel\":true}",
	       RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_MOVE);
	assert_int_equal(pc.cmd.character, 2004);
	assert_int_equal(pc.cmd.location, 3001);
	assert_true(pc.cmd.fuel);
	dec_ok(&pc, "{\"command\":\"Move\",\"characterId\":2004,\"locationId\":3001,\"fuel\":false}",
	       RULES_BASE);
	assert_false(pc.cmd.fuel);
	/* fuel is optional, default false */
	dec_ok(&pc, "{\"command\":\"Move\",\"characterId\":2004,\"locationId\":3001}", RULES_BASE);
	assert_false(pc.cmd.fuel);
	proto_cmd_clear(&pc);
	dec_fail("{\"command\":\"Move\",\"characterId\":2004,\"locationId\":3001,\"fuel\":1}",
		 RULES_BASE, "Move.fuel: expected a boolean");
	dec_fail("{\"command\":\"Move\",\"characterId\":2004,\"locationId\":3001,\"fuel\":\"true\"}",
		 RULES_BASE, "Move.fuel: expected a boolean");
	dec_fail("{\"command\":\"Move\",\"locationId\":3001}", RULES_BASE,
		 "Move.characterId: missing");
	dec_fail("{\"command\":\"Move\",\"characterId\":2004}", RULES_BASE,
		 "Move.locationId: missing");
	dec_fail("{\"command\":\"Move\",\"characterId\":\"x\",\"locationId\":3001}", RULES_BASE,
		 "Move.characterId: expected an integer");
}

static void test_decode_move_revised_ignores_fuel(void **state)
{
	(void)state;
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"Move\",\"characterId\":2004,\"locationId\":3001,\"fuel\":true}",
	       RULES_REVISED);
	assert_false(pc.cmd.fuel);
	/* an unknown field in revised: not even its type matters */
	dec_ok(&pc, "{\"command\":\"Move\",\"characterId\":2004,\"locationId\":3001,\"fuel\":\"x\"}",
	       RULES_REVISED);
	assert_false(pc.cmd.fuel);
	assert_int_equal(pc.cmd.location, 3001);
	dec_ok(&pc, "{\"command\":\"Move\",\"characterId\":2004,\"locationId\":3001}", RULES_REVISED);
	assert_false(pc.cmd.fuel);
	proto_cmd_clear(&pc);
	dec_fail("{\"command\":\"Move\",\"characterId\":2004}", RULES_REVISED,
		 "Move.locationId: missing");
}

static void test_decode_single_character_commands(void **state)
{
	(void)state;
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"Search\",\"characterId\":2001}", RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_SEARCH);
	assert_int_equal(pc.cmd.character, 2001);
	dec_ok(&pc, "{\"command\":\"CleanWaste\",\"characterId\":2002}", RULES_REVISED);
	assert_int_equal(pc.cmd.type, CMD_CLEAN_WASTE);
	assert_int_equal(pc.cmd.character, 2002);
	proto_cmd_clear(&pc);
	dec_fail("{\"command\":\"Search\"}", RULES_BASE, "Search.characterId: missing");
	dec_fail("{\"command\":\"Search\",\"characterId\":null}", RULES_BASE,
		 "Search.characterId: expected an integer");
	dec_fail("{\"command\":\"CleanWaste\",\"characterId\":{}}", RULES_BASE,
		 "CleanWaste.characterId: expected an integer");
	dec_fail("{\"command\":\"CleanWaste\"}", RULES_REVISED, "CleanWaste.characterId: missing");
}

static void test_decode_attack_barricade(void **state)
{
	(void)state;
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"Attack\",\"characterId\":2001,\"entrance\":0}", RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_ATTACK);
	assert_int_equal(pc.cmd.character, 2001);
	assert_int_equal(pc.cmd.entrance, 0);
	dec_ok(&pc, "{\"entrance\":2,\"characterId\":2003,\"command\":\"Barricade\"}", RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_BARRICADE);
	assert_int_equal(pc.cmd.character, 2003);
	assert_int_equal(pc.cmd.entrance, 2);
	/* negative values are the game's business, not the decoder's */
	dec_ok(&pc, "{\"command\":\"Attack\",\"characterId\":2001,\"entrance\":-1}", RULES_BASE);
	assert_int_equal(pc.cmd.entrance, -1);
	proto_cmd_clear(&pc);
	dec_fail("{\"command\":\"Attack\",\"characterId\":2001}", RULES_BASE,
		 "Attack.entrance: missing");
	dec_fail("{\"command\":\"Barricade\",\"entrance\":1}", RULES_BASE,
		 "Barricade.characterId: missing");
	dec_fail("{\"command\":\"Barricade\",\"characterId\":2001,\"entrance\":false}", RULES_BASE,
		 "Barricade.entrance: expected an integer");
}

static void test_decode_contribute_card(void **state)
{
	(void)state;
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"ContributeCard\",\"cardId\":10003}", RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_CONTRIBUTE_CARD);
	assert_int_equal(pc.cmd.card, 10003);
	proto_cmd_clear(&pc);
	dec_fail("{\"command\":\"ContributeCard\"}", RULES_BASE, "ContributeCard.cardId: missing");
	dec_fail("{\"command\":\"ContributeCard\",\"cardId\":[1]}", RULES_BASE,
		 "ContributeCard.cardId: expected an integer");
}

static void test_decode_use_card(void **state)
{
	(void)state;
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"UseCard\",\"cardId\":10003}", RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_USE_CARD);
	assert_int_equal(pc.cmd.card, 10003);
	assert_false(pc.cmd.has_target);
	dec_ok(&pc, "{\"command\":\"UseCard\",\"cardId\":10003,\"characterId\":2001,\"target\":0}",
	       RULES_REVISED);
	assert_int_equal(pc.cmd.card, 10003);
	assert_int_equal(pc.cmd.character, 2001);
	assert_int_equal(pc.cmd.target, 0);
	assert_true(pc.cmd.has_target);
	/* a reused proto_cmd does not keep has_target */
	dec_ok(&pc, "{\"command\":\"UseCard\",\"cardId\":10004}", RULES_BASE);
	assert_false(pc.cmd.has_target);
	proto_cmd_clear(&pc);
	dec_fail("{\"command\":\"UseCard\"}", RULES_BASE, "UseCard.cardId: missing");
	dec_fail("{\"command\":\"UseCard\",\"cardId\":1.25}", RULES_BASE,
		 "UseCard.cardId: expected an integer, got a fraction");
	dec_fail("{\"command\":\"UseCard\",\"cardId\":\"10003\",\"characterId\":2001,\"target\":0}",
		 RULES_BASE, "UseCard.cardId: expected an integer");
	dec_fail("{\"command\":\"UseCard\",\"cardId\":10003,\"characterId\":2001,\"target\":\"a\"}",
		 RULES_BASE, "UseCard.target: expected an integer");
}

static void test_decode_use_card_pair(void **state)
{
	(void)state;
	dec_fail("{\"command\":\"UseCard\",\"cardId\":10003,\"characterId\":2001}", RULES_BASE,
		 "UseCard: characterId and target must be given together");
	dec_fail("{\"command\":\"UseCard\",\"cardId\":10003,\"target\":2001}", RULES_REVISED,
		 "UseCard: characterId and target must be given together");
}

static void test_decode_use_ability(void **state)
{
	(void)state;
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"UseAbility\",\"characterId\":2005}", RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_USE_ABILITY);
	assert_int_equal(pc.cmd.character, 2005);
	assert_false(pc.cmd.has_target);
	dec_ok(&pc, "{\"command\":\"UseAbility\",\"characterId\":2005,\"target\":2001}", RULES_BASE);
	assert_int_equal(pc.cmd.target, 2001);
	assert_true(pc.cmd.has_target);
	proto_cmd_clear(&pc);
	dec_fail("{\"command\":\"UseAbility\",\"target\":2001}", RULES_BASE,
		 "UseAbility.characterId: missing");
	dec_fail("{\"command\":\"UseAbility\",\"characterId\":2005,\"target\":null}", RULES_BASE,
		 "UseAbility.target: expected an integer");
}

/* ---- decoding: numbers ------------------------------------------------- */

static void test_decode_int_limits(void **state)
{
	(void)state;
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"Search\",\"characterId\":2147483647}", RULES_BASE);
	assert_int_equal(pc.cmd.character, INT_MAX);
	dec_ok(&pc, "{\"command\":\"Search\",\"characterId\":-2147483648}", RULES_BASE);
	assert_int_equal(pc.cmd.character, INT_MIN);
	dec_ok(&pc, "{\"command\":\"Search\",\"characterId\":0}", RULES_BASE);
	assert_int_equal(pc.cmd.character, 0);
	proto_cmd_clear(&pc);
}

static void test_decode_int_out_of_range(void **state)
{
	(void)state;
	dec_fail("{\"command\":\"Search\",\"characterId\":2147483648}", RULES_BASE,
		 "Search.characterId: integer out of range");
	dec_fail("{\"command\":\"Search\",\"characterId\":-2147483649}", RULES_BASE,
		 "Search.characterId: integer out of range");
	dec_fail("{\"command\":\"Search\",\"characterId\":99999999999999999999}", RULES_BASE,
		 "Search.characterId: integer out of range");
	dec_fail("{\"command\":\"Search\",\"characterId\":1e400}", RULES_BASE,
		 "Search.characterId: integer out of range");
	dec_fail("{\"command\":\"Search\",\"characterId\":-1e400}", RULES_BASE,
		 "Search.characterId: integer out of range");
}

static void test_decode_int_fractions(void **state)
{
	(void)state;
	dec_fail("{\"command\":\"Search\",\"characterId\":1.5}", RULES_BASE,
		 "Search.characterId: expected an integer, got a fraction");
	dec_fail("{\"command\":\"Search\",\"characterId\":-0.5}", RULES_BASE,
		 "Search.characterId: expected an integer, got a fraction");
	dec_fail("{\"command\":\"Search\",\"characterId\":1e-3}", RULES_BASE,
		 "Search.characterId: expected an integer, got a fraction");
	/* integral values in other notations are integers */
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"Search\",\"characterId\":2e3}", RULES_BASE);
	assert_int_equal(pc.cmd.character, 2000);
	dec_ok(&pc, "{\"command\":\"Search\",\"characterId\":2001.0}", RULES_BASE);
	assert_int_equal(pc.cmd.character, 2001);
	proto_cmd_clear(&pc);
}

/* ---- decoding: bytes and JSON shape ------------------------------------ */

static void test_decode_embedded_nul_escape(void **state)
{
	(void)state;
	dec_fail("{\"command\":\"Register\",\"playerName\":\"An\\u0000na\"}", RULES_BASE,
		 "malformed JSON at byte 39: \\u0000 is not allowed in strings");
	dec_fail("{\"command\":\"End\\u0000Turn\"}", RULES_BASE,
		 "malformed JSON at byte 16: \\u0000 is not allowed in strings");
	/* an escaped backslash followed by "u0000" is just text */
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"Register\",\"playerName\":\"a\\\\u0000\"}", RULES_BASE);
	assert_string_equal(pc.cmd.name, "a\\u0000");
	proto_cmd_clear(&pc);
}

static void test_decode_raw_nul_byte(void **state)
{
	(void)state;
	static const char line[] = "{\"command\":\"Register\",\"playerName\":\"A\0B\"}";
	dec_fail_n(line, sizeof line - 1, RULES_BASE, "line contains a NUL byte");
	static const char line2[] = "{\"command\":\"EndTurn\"}\0";
	dec_fail_n(line2, sizeof line2 - 1, RULES_BASE, "line contains a NUL byte");
}

static void test_decode_invalid_utf8(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"{\"command\":\"Register\",\"playerName\":\"\xff\"}",         /* never valid */
		"{\"command\":\"Register\",\"playerName\":\"\xc0\x80\"}",     /* overlong NUL */
		"{\"command\":\"Register\",\"playerName\":\"\xe0\x80\xaf\"}", /* overlong */
		"{\"command\":\"Register\",\"playerName\":\"\xed\xa0\x80\"}", /* surrogate */
		"{\"command\":\"Register\",\"playerName\":\"\xf4\x90\x80\x80\"}", /* > U+10FFFF */
		"{\"command\":\"Register\",\"playerName\":\"\xe2\x82\"}",     /* truncated */
		"{\"command\":\"Register\",\"playerName\":\"\x80\"}",         /* lone continuation */
		"{\"command\":\"EndTurn\",\"x\":\"\xf5\x80\x80\x80\"}",       /* even in ignored fields */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		dec_fail(bad[i], RULES_BASE, "invalid UTF-8");
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"Register\",\"playerName\":\"\xe2\x82\xac\xf0\x9f\x98\x80\xc3\xa9\"}",
	       RULES_BASE);
	assert_string_equal(pc.cmd.name, "\xe2\x82\xac\xf0\x9f\x98\x80\xc3\xa9");
	proto_cmd_clear(&pc);
}

static void test_decode_lone_surrogate_escape(void **state)
{
	(void)state;
	/* a lone UTF-16 surrogate cannot become UTF-8 */
	dec_fail("{\"command\":\"Register\",\"playerName\":\"\\ud800\"}", RULES_BASE,
		 "malformed JSON at byte 37: lone surrogate in \\u escape");
}

static void test_decode_not_an_object(void **state)
{
	(void)state;
	dec_fail("[]", RULES_BASE, "not a JSON object");
	dec_fail("[{\"command\":\"EndTurn\"}]", RULES_BASE, "not a JSON object");
	dec_fail("\"EndTurn\"", RULES_BASE, "not a JSON object");
	dec_fail("42", RULES_BASE, "not a JSON object");
	dec_fail("null", RULES_BASE, "not a JSON object");
	dec_fail("true", RULES_BASE, "not a JSON object");
}

static void test_decode_malformed(void **state)
{
	(void)state;
	dec_fail("{", RULES_BASE, "malformed JSON at byte 2: unexpected end of input");
	dec_fail("{\"command\":\"EndTurn\"", RULES_BASE,
		 "malformed JSON at byte 21: unexpected end of input");
	dec_fail("{command:EndTurn}", RULES_BASE, "malformed JSON at byte 2: expected a string key");
	dec_fail("Register Anna", RULES_BASE, "malformed JSON at byte 1: unexpected character");
	dec_fail("{\"command\":\"EndTurn\",}", RULES_BASE,
		 "malformed JSON at byte 22: expected a string key");
	dec_fail("{\"command\":\"EndTurn\"} x", RULES_BASE,
		 "malformed JSON at byte 23: unexpected text after the JSON value");
	dec_fail("{\"command\":\"EndTurn\"}{\"command\":\"EndTurn\"}", RULES_BASE,
		 "malformed JSON at byte 22: unexpected text after the JSON value");
	/* duplicate keys are ambiguous */
	dec_fail("{\"command\":\"Barricade\",\"command\":\"Leave\"}", RULES_BASE,
		 "\"command\" given more than once");
	dec_fail("{\"command\":\"Search\",\"characterId\":1,\"characterId\":2}", RULES_BASE,
		 "Search.characterId: given more than once");
	/* what cJSON alone would accept (found by fuzzing): */
	dec_fail("{\"command\":\"EndTurn\\uXYZW\"}", RULES_BASE,
		 "malformed JSON at byte 20: invalid \\u escape in string");
	dec_fail("{\"command\":\"Search\",\"characterId\":007}", RULES_BASE,
		 "malformed JSON at byte 36: leading zero in number");
	dec_fail("{\"command\":\"Search\",\"characterId\":1.}", RULES_BASE,
		 "malformed JSON at byte 37: invalid number");
	dec_fail("{\"command\":\"Register\",\"playerName\":\"a\tb\"}", RULES_BASE,
		 "malformed JSON at byte 38: control character in string");
	dec_fail("\x02{\"command\":\"EndTurn\"}", RULES_BASE,
		 "malformed JSON at byte 1: unexpected character");
	dec_fail("{\"command\":\"EndTurn\"\x0b}", RULES_BASE,
		 "malformed JSON at byte 21: expected ',' or '}'");
	dec_fail("\xef\xbb\xbf{\"command\":\"EndTurn\"}", RULES_BASE,
		 "malformed JSON at byte 1: byte order mark not allowed");
}

/* cJSON alone accepts line (so the check in front of it is what rejects). */
static void cjson_accepts(const char *line)
{
	cJSON *c = cJSON_ParseWithLength(line, strlen(line));
	if (!c)
		fail_msg("cJSON now refuses <%s>: update this test", line);
	cJSON_Delete(c);
}

/* One case per kind of input cJSON alone accepts and the protocol rejects
 * (tests/test_json.c shows what cJSON makes of each): the exact
 * CommandFailed message, also for a Register whose name is such a value. */
static void test_decode_rejects_what_cjson_accepts(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		const char *want;
	} cases[] = {
	        /* an invalid \u escape: cJSON would register "Anna" */
	        {"{\"command\":\"Register\",\"playerName\":\"Anna\\uZZZZ\"}",
	         "malformed JSON at byte 41: invalid \\u escape in string"},
	        {"{\"command\":\"EndTurn\\uXYZW\"}",
	         "malformed JSON at byte 20: invalid \\u escape in string"},
	        /* \u0000: cJSON would register "An" */
	        {"{\"command\":\"Register\",\"playerName\":\"An\\u0000na\"}",
	         "malformed JSON at byte 39: \\u0000 is not allowed in strings"},
	        /* duplicate keys: cJSON would take the first */
	        {"{\"command\":\"Register\",\"playerName\":\"A\",\"playerName\":\"B\"}",
	         "Register.playerName: given more than once"},
	        {"{\"command\":\"Register\",\"playerName\":\"A\",\"command\":\"Leave\"}",
	         "\"command\" given more than once"},
	        {"{\"command\":\"Search\",\"characterId\":1,\"characterId\":2}",
	         "Search.characterId: given more than once"},
	        /* leading zeros: cJSON reads 007 as 7 */
	        {"{\"command\":\"Search\",\"characterId\":007}",
	         "malformed JSON at byte 36: leading zero in number"},
	        {"{\"command\":\"Register\",\"playerName\":007}",
	         "malformed JSON at byte 37: leading zero in number"},
	        /* raw control characters: cJSON copies them into the name, or
	         * skips them as whitespace */
	        {"{\"command\":\"Register\",\"playerName\":\"a\tb\"}",
	         "malformed JSON at byte 38: control character in string"},
	        {"{\"command\":\"Register\",\"playerName\":\"a\x1f\"}",
	         "malformed JSON at byte 38: control character in string"},
	        {"\x0b{\"command\":\"EndTurn\"}", "malformed JSON at byte 1: unexpected character"},
	        /* 1e400: valid JSON that cJSON stores as infinity (printed as null) */
	        {"{\"command\":\"Search\",\"characterId\":1e400}",
	         "Search.characterId: integer out of range"},
	        {"{\"command\":\"Search\",\"characterId\":-1e400}",
	         "Search.characterId: integer out of range"},
	        {"{\"command\":\"Register\",\"playerName\":1e400}",
	         "Register.playerName: expected a string"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cjson_accepts(cases[i].line);
		dec_fail(cases[i].line, RULES_BASE, cases[i].want);
		dec_fail(cases[i].line, RULES_REVISED, cases[i].want);
	}
}

static void test_decode_empty_and_cr(void **state)
{
	(void)state;
	dec_fail("", RULES_BASE, "empty line");
	dec_fail("\r", RULES_BASE, "empty line");
	dec_fail("   ", RULES_BASE, "malformed JSON at byte 4: empty input");
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"EndTurn\"}\r", RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_END_TURN);
	dec_ok(&pc, "  {\"command\" : \"Search\" , \"characterId\" : 7 }  \r", RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_SEARCH);
	assert_int_equal(pc.cmd.character, 7);
	/* the decoder is given exactly len bytes; what follows is not read */
	dec_ok_n(&pc, "{\"command\":\"Leave\"}GARBAGE", 19, RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_LEAVE);
	proto_cmd_clear(&pc);
}

static void test_decode_command_field(void **state)
{
	(void)state;
	dec_fail("{}", RULES_BASE, "missing \"command\"");
	dec_fail("{\"Command\":\"EndTurn\"}", RULES_BASE, "missing \"command\"");
	dec_fail("{\"command\":5}", RULES_BASE, "\"command\" must be a string");
	dec_fail("{\"command\":null}", RULES_BASE, "\"command\" must be a string");
	dec_fail("{\"command\":[\"EndTurn\"]}", RULES_BASE, "\"command\" must be a string");
	dec_fail("{\"command\":\"Foo\"}", RULES_BASE, "unknown command \"Foo\"");
	dec_fail("{\"command\":\"endturn\"}", RULES_BASE, "unknown command \"endturn\"");
	dec_fail("{\"command\":\"\"}", RULES_BASE, "unknown command \"\"");
	dec_fail("{\"event\":\"ActNow\"}", RULES_BASE, "missing \"command\"");
}

/* Reconnect is the session layer's command: decoded by
 * proto_decode_session only, never a game command. */
static void test_decode_reconnect(void **state)
{
	(void)state;
	static const char secret[] =
	        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char line[160];
	snprintf(line, sizeof line, "{\"command\":\"Reconnect\",\"secret\":\"%s\",\"x\":1}", secret);
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	const char *err = NULL;
	assert_true(proto_decode_session(line, strlen(line), RULES_BASE, &pc, &err));
	assert_true(pc.reconnect);
	assert_string_equal(pc.secret, secret);
	/* a secret of another length is kept as "": it matches nobody */
	const char *shortl = "{\"command\":\"Reconnect\",\"secret\":\"abc\"}";
	assert_true(proto_decode_session(shortl, strlen(shortl), RULES_REVISED, &pc, &err));
	assert_true(pc.reconnect);
	assert_string_equal(pc.secret, "");
	const char *bad = "{\"command\":\"Reconnect\",\"secret\":5}";
	assert_false(proto_decode_session(bad, strlen(bad), RULES_BASE, &pc, &err));
	assert_string_equal(err, "Reconnect.secret: expected a string");
	assert_false(pc.reconnect);
	/* game commands decode as with proto_decode */
	const char *end = "{\"command\":\"EndTurn\"}";
	assert_true(proto_decode_session(end, strlen(end), RULES_BASE, &pc, &err));
	assert_false(pc.reconnect);
	assert_int_equal(pc.cmd.type, CMD_END_TURN);
	proto_cmd_clear(&pc);
	/* without sessions it is no command at all */
	dec_fail(line, RULES_BASE, "unknown command \"Reconnect\"");
}

/* The line a client reconnects with, exactly, and back again. */
static void test_encode_reconnect(void **state)
{
	(void)state;
	static const char secret[] =
	        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct proto_buf b;
	proto_buf_init(&b);
	proto_encode_reconnect(secret, &b);
	static const char want[] = "{\"command\":\"Reconnect\",\"secret\":\"0123456789abcdef0123456789"
	                           "abcdef0123456789abcdef0123456789abcdef\"}\n";
	assert_int_equal(b.len, strlen(want));
	assert_memory_equal(b.data, want, b.len);
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	const char *err = NULL;
	assert_true(proto_decode_session(b.data, b.len - 1, RULES_BASE, &pc, &err));
	assert_true(pc.reconnect);
	assert_string_equal(pc.secret, secret);
	proto_cmd_clear(&pc);
	/* whatever the string, the line stays JSON */
	proto_buf_reset(&b);
	proto_encode_reconnect("a\"b", &b);
	static const char quoted[] = "{\"command\":\"Reconnect\",\"secret\":\"a\\\"b\"}\n";
	assert_int_equal(b.len, strlen(quoted));
	assert_memory_equal(b.data, quoted, b.len);
	proto_buf_free(&b);
}

static void test_decode_unknown_command_truncated(void **state)
{
	(void)state;
	/* 70 x 'A' -> echoed as 64 plus "..." */
	char line[200];
	char name[71];
	memset(name, 'A', 70);
	name[70] = '\0';
	snprintf(line, sizeof line, "{\"command\":\"%s\"}", name);
	char want[120];
	snprintf(want, sizeof want, "unknown command \"%.64s\"...", name);
	dec_fail(line, RULES_BASE, want);

	/* the cut never splits a UTF-8 character: 63 x 'B' then a 2-byte char */
	char name2[80];
	memset(name2, 'B', 63);
	memcpy(name2 + 63, "\xc3\xa9zzzz", 7);
	name2[70] = '\0';
	snprintf(line, sizeof line, "{\"command\":\"%s\"}", name2);
	snprintf(want, sizeof want, "unknown command \"%.63s\"...", name2);
	dec_fail(line, RULES_BASE, want);
}

static void test_decode_extra_fields_ignored(void **state)
{
	(void)state;
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc,
	       "{\"command\":\"Attack\",\"characterId\":1,\"entrance\":2,\"x\":[1,{\"y\":null}],"
	       "\"target\":\"whatever\",\"playerName\":7,\"note\":\"\\u00e9\"}",
	       RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_ATTACK);
	assert_false(pc.cmd.has_target);
	assert_null(pc.cmd.name);
	dec_ok(&pc, "{\"command\":\"EndTurn\",\"characterId\":\"junk\"}", RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_END_TURN);
	proto_cmd_clear(&pc);
}

static void test_decode_reuse_frees_name(void **state)
{
	(void)state;
	/* valgrind/ASan check that nothing leaks across reuse */
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"Register\",\"playerName\":\"first\"}", RULES_BASE);
	dec_ok(&pc, "{\"command\":\"Register\",\"playerName\":\"second\"}", RULES_BASE);
	assert_string_equal(pc.cmd.name, "second");
	dec_ok(&pc, "{\"command\":\"EndTurn\"}", RULES_BASE);
	assert_null(pc.cmd.name);
	assert_null(pc.name_storage);
	dec_ok(&pc, "{\"command\":\"Register\",\"playerName\":\"third\"}", RULES_BASE);
	const char *err = NULL;
	assert_false(proto_decode("{", 1, RULES_BASE, &pc, &err));
	assert_null(pc.name_storage);
	proto_cmd_clear(&pc);
	proto_cmd_clear(&pc); /* idempotent */
}

static void test_decode_too_long(void **state)
{
	(void)state;
	size_t n = PROTO_MAX_LINE + 1;
	char *line = malloc(n);
	assert_non_null(line);
	memset(line, ' ', n);
	memcpy(line, "{\"command\":\"EndTurn\"}", 21);
	dec_fail_n(line, n, RULES_BASE, PROTO_ERR_LINE_TOO_LONG);
	/* exactly the maximum is fine (padding is whitespace) */
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok_n(&pc, line, PROTO_MAX_LINE, RULES_BASE);
	assert_int_equal(pc.cmd.type, CMD_END_TURN);
	/* ... also with a \r on top */
	line[PROTO_MAX_LINE] = '\r';
	dec_ok_n(&pc, line, PROTO_MAX_LINE + 1, RULES_BASE);
	proto_cmd_clear(&pc);
	free(line);
}

static void test_decode_deep_nesting(void **state)
{
	(void)state;
	/* deeper than cJSON's nesting limit: rejected, no crash */
	size_t depth = 5000;
	char *line = malloc(2 * depth + 40);
	assert_non_null(line);
	size_t n = 0;
	n += (size_t)sprintf(line, "{\"command\":\"EndTurn\",\"x\":");
	for (size_t i = 0; i < depth; i++)
		line[n++] = '[';
	for (size_t i = 0; i < depth; i++)
		line[n++] = ']';
	line[n++] = '}';
	dec_fail_n(line, n, RULES_BASE, "malformed JSON at byte 89: nesting too deep");
	free(line);
}

/* ---- encoding ------------------------------------------------------------ */

static void test_encode_setup_events(void **state)
{
	(void)state;
	ENC(RULES_BASE, "{\"event\":\"Config\",\"config\":\"{}\"}", CONFIG, 0, 0, 0, 0, 0, "{}");
	ENC(RULES_BASE, "{\"event\":\"ActNow\"}", ACT_NOW, 0, 0, 0, 0, 0, NULL);
	ENC(RULES_BASE,
	    "{\"event\":\"Characters\",\"characterId0\":2008,\"characterId1\":2000,"
	    "\"characterId2\":2005,\"characterId3\":2001}",
	    CHARACTERS, 4, 2008, 2000, 2005, 2001, NULL);
	ENC(RULES_BASE, "{\"event\":\"CommandFailed\",\"message\":\"not your turn\"}", COMMAND_FAILED,
	    0, 0, 0, 0, 0, "not your turn");
	ENC(RULES_BASE, "{\"event\":\"RegistrationAborted\"}", REGISTRATION_ABORTED, 0, 0, 0, 0, 0,
	    NULL);
	ENC(RULES_BASE, "{\"event\":\"Player\",\"player\":0,\"playerName\":\"Anna\"}", PLAYER, 1, 0, 0,
	    0, 0, "Anna");
	ENC(RULES_BASE, "{\"event\":\"GameStarted\"}", GAME_STARTED, 0, 0, 0, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"CharacterSpawned\",\"player\":1,\"characterId\":2000}",
	    CHARACTER_SPAWNED, 2, 1, 2000, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"ZombieSpawned\",\"locationId\":3001,\"entrance\":2}",
	    ZOMBIE_SPAWNED, 2, 3001, 2, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"ChildSpawned\"}", CHILD_SPAWNED, 0, 0, 0, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"CardDrawn\",\"player\":1,\"cardId\":10007}", CARD_DRAWN, 2, 1,
	    10007, 0, 0, NULL);
}

static void test_encode_round_events(void **state)
{
	(void)state;
	ENC(RULES_BASE, "{\"event\":\"GameEnd\",\"win\":true}", GAME_END, 1, 1, 0, 0, 0, NULL);
	ENC(RULES_REVISED, "{\"event\":\"GameEnd\",\"win\":false}", GAME_END, 1, 0, 0, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"NextRound\",\"round\":1}", NEXT_ROUND, 1, 1, 0, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"Crisis\",\"crisisId\":4000}", CRISIS, 1, 4000, 0, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"DieRolled\",\"player\":0,\"value\":6}", DIE_ROLLED, 2, 0, 6, 0,
	    0, NULL);
	ENC(RULES_BASE, "{\"event\":\"ColonyPhaseStarted\"}", COLONY_PHASE_STARTED, 0, 0, 0, 0, 0,
	    NULL);
	ENC(RULES_BASE, "{\"event\":\"StarvationTokenAdded\"}", STARVATION_TOKEN_ADDED, 0, 0, 0, 0, 0,
	    NULL);
	ENC(RULES_BASE, "{\"event\":\"Left\",\"player\":1}", LEFT, 1, 1, 0, 0, 0, NULL);
	/* the session layer's, the same in both editions */
	for (int r = RULES_BASE; r <= RULES_REVISED; r++)
		ENC((enum game_rules)r,
		    "{\"event\":\"Session\",\"player\":3,\"secret\":"
		    "\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}",
		    SESSION, 1, 3, 0, 0, 0,
		    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
}

static void test_encode_action_events(void **state)
{
	(void)state;
	ENC(RULES_BASE, "{\"event\":\"Barricaded\",\"characterId\":2000,\"locationId\":3000,\"entrance\":1}",
	    BARRICADED, 3, 2000, 3000, 1, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"Frostbitten\",\"characterId\":2002}", FROSTBITTEN, 1, 2002, 0, 0,
	    0, NULL);
	ENC(RULES_BASE, "{\"event\":\"Wounded\",\"characterId\":2002}", WOUNDED, 1, 2002, 0, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"Contributed\",\"player\":0,\"cardId\":10001}", CONTRIBUTED, 2, 0,
	    10001, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"SurvivorKilled\",\"characterId\":2003}", SURVIVOR_KILLED, 1,
	    2003, 0, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"ChildKilled\"}", CHILD_KILLED, 0, 0, 0, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"BarricadeDestroyed\",\"locationId\":3002,\"entrance\":0}",
	    BARRICADE_DESTROYED, 2, 3002, 0, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"WasteChanged\",\"amount\":-3}", WASTE_CHANGED, 1, -3, 0, 0, 0,
	    NULL);
	ENC(RULES_BASE, "{\"event\":\"ZombieKilled\",\"characterId\":2001,\"locationId\":3000,\"entrance\":2}",
	    ZOMBIE_KILLED, 3, 2001, 3000, 2, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"Searched\",\"characterId\":2001,\"locationId\":3001}", SEARCHED,
	    2, 2001, 3001, 0, 0, NULL);
}

static void test_encode_moved_editions(void **state)
{
	(void)state;
	ENC(RULES_BASE, "{\"event\":\"Moved\",\"characterId\":2004,\"locationId\":3001,\"fuel\":false}",
	    MOVED, 3, 2004, 3001, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"Moved\",\"characterId\":2004,\"locationId\":3001,\"fuel\":true}",
	    MOVED, 3, 2004, 3001, 1, 0, NULL);
	ENC(RULES_REVISED, "{\"event\":\"Moved\",\"characterId\":2004,\"locationId\":3001}", MOVED, 2,
	    2004, 3001, 0, 0, NULL);
	/* the edition decides, not nargs */
	ENC(RULES_REVISED, "{\"event\":\"Moved\",\"characterId\":2004,\"locationId\":3001}", MOVED, 3,
	    2004, 3001, 1, 0, NULL);
}

static void test_encode_optional_params(void **state)
{
	(void)state;
	ENC(RULES_BASE, "{\"event\":\"AbilityUsed\",\"characterId\":2001}", ABILITY_USED, 1, 2001, 0,
	    0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"AbilityUsed\",\"characterId\":2001,\"target\":0}", ABILITY_USED,
	    2, 2001, 0, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"Bitten\"}", BITTEN, 0, 0, 0, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"Bitten\",\"characterId\":2003}", BITTEN, 1, 2003, 0, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"CardUsed\",\"cardId\":10003}", CARD_USED, 1, 10003, 0, 0, 0,
	    NULL);
	ENC(RULES_REVISED, "{\"event\":\"CardUsed\",\"cardId\":10003,\"characterId\":2001,\"target\":3002}",
	    CARD_USED, 3, 10003, 2001, 3002, 0, NULL);
}

static void test_encode_reasons(void **state)
{
	(void)state;
	ENC(RULES_BASE, "{\"event\":\"FoodChanged\",\"amount\":3,\"reason\":\"FOOD_ADDED\"}",
	    FOOD_CHANGED, 2, 3, FOOD_ADDED, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"FoodChanged\",\"amount\":-2,\"reason\":\"FOOD_CONSUMED\"}",
	    FOOD_CHANGED, 2, -2, FOOD_CONSUMED, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"MoralChanged\",\"amount\":-1,\"reason\":\"CHARACTER_DIED\"}",
	    MORAL_CHANGED, 2, -1, MORAL_CHARACTER_DIED, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"MoralChanged\",\"amount\":1,\"reason\":\"CRISIS\"}",
	    MORAL_CHANGED, 2, 1, MORAL_CRISIS, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"MoralChanged\",\"amount\":-2,\"reason\":\"STARVATION_TOKEN\"}",
	    MORAL_CHANGED, 2, -2, MORAL_STARVATION_TOKEN, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"MoralChanged\",\"amount\":-1,\"reason\":\"WASTE\"}",
	    MORAL_CHANGED, 2, -1, MORAL_WASTE, 0, 0, NULL);
}

static void test_encode_int_extremes(void **state)
{
	(void)state;
	ENC(RULES_BASE, "{\"event\":\"WasteChanged\",\"amount\":-2147483648}", WASTE_CHANGED, 1,
	    INT_MIN, 0, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"WasteChanged\",\"amount\":2147483647}", WASTE_CHANGED, 1,
	    INT_MAX, 0, 0, 0, NULL);
	ENC(RULES_BASE, "{\"event\":\"WasteChanged\",\"amount\":0}", WASTE_CHANGED, 1, 0, 0, 0, 0,
	    NULL);
}

static void test_encode_string_escapes(void **state)
{
	(void)state;
	ENC(RULES_BASE, "{\"event\":\"Player\",\"player\":2,\"playerName\":\"a\\\"b\\\\c\"}", PLAYER, 1,
	    2, 0, 0, 0, "a\"b\\c");
	ENC(RULES_BASE,
	    "{\"event\":\"CommandFailed\",\"message\":\"\\n\\r\\t\\b\\f\\u0001\\u001f x\x7f/\"}",
	    COMMAND_FAILED, 0, 0, 0, 0, 0, "\n\r\t\b\f\x01\x1f x\x7f/");
	/* valid UTF-8 passes through unescaped */
	ENC(RULES_BASE, "{\"event\":\"Player\",\"player\":0,\"playerName\":\"J\xc3\xb6rg \xe2\x82\xac\xf0\x9f\x98\x80\"}",
	    PLAYER, 1, 0, 0, 0, 0, "J\xc3\xb6rg \xe2\x82\xac\xf0\x9f\x98\x80");
}

static void test_encode_invalid_utf8_replaced(void **state)
{
	(void)state;
	/* each byte that does not start a well-formed sequence becomes one U+FFFD */
	ENC(RULES_BASE, "{\"event\":\"Config\",\"config\":\"a\\ufffdb\\ufffd\\ufffdc\\ufffd\\ufffd\"}", CONFIG,
	    0, 0, 0, 0, 0, "a\xff" "b\xc0\x80" "c\xe2\x82");
}

/* The JSON writer the encoder and the journal share: a string of any bytes
 * (a NUL too), members separated by commas after the first. */
static void test_json_writer(void **state)
{
	(void)state;
	struct proto_buf b;
	proto_buf_init(&b);
	PROTO_BUF_LIT(&b, "{");
	proto_put_key(&b, "s");
	proto_put_string(&b, "\b\f\0\x7f\"\\\xc3", 7);
	proto_put_key(&b, "i");
	proto_put_int(&b, INT64_MIN);
	proto_put_key(&b, "t");
	proto_put_bool(&b, true);
	proto_put_key(&b, "f");
	proto_put_bool(&b, false);
	proto_put_key(&b, "e");
	proto_put_string(&b, NULL, 0);
	PROTO_BUF_LIT(&b, "}");
	assert_int_equal(b.len, strlen("{\"s\":\"\\b\\f\\u0000\x7f\\\"\\\\\\ufffd\","
	                                      "\"i\":-9223372036854775808,\"t\":true,\"f\":false,\"e\":\"\"}"));
	assert_memory_equal(b.data,
	                    "{\"s\":\"\\b\\f\\u0000\x7f\\\"\\\\\\ufffd\","
	                    "\"i\":-9223372036854775808,\"t\":true,\"f\":false,\"e\":\"\"}",
	                    b.len);
	proto_buf_free(&b);
}

static void test_encode_empty_and_null_strings(void **state)
{
	(void)state;
	ENC(RULES_BASE, "{\"event\":\"Player\",\"player\":0,\"playerName\":\"\"}", PLAYER, 1, 0, 0, 0,
	    0, "");
	ENC(RULES_BASE, "{\"event\":\"Player\",\"player\":0,\"playerName\":\"\"}", PLAYER, 1, 0, 0, 0,
	    0, NULL);
	ENC(RULES_BASE, "{\"event\":\"Config\",\"config\":\"\"}", CONFIG, 0, 0, 0, 0, 0, NULL);
	/* CommandFailed's message is never empty on the wire */
	ENC(RULES_BASE, "{\"event\":\"CommandFailed\",\"message\":\"command failed\"}", COMMAND_FAILED,
	    0, 0, 0, 0, 0, "");
	ENC(RULES_BASE, "{\"event\":\"CommandFailed\",\"message\":\"command failed\"}", COMMAND_FAILED,
	    0, 0, 0, 0, 0, NULL);
}

static void test_encode_appends(void **state)
{
	(void)state;
	struct proto_buf b;
	proto_buf_init(&b);
	struct game_event e1 = EV(ACT_NOW, 0, 0, 0, 0, 0, NULL);
	struct game_event e2 = EV(LEFT, 1, 3, 0, 0, 0, NULL);
	proto_encode(&e1, RULES_BASE, &b);
	proto_encode(&e2, RULES_BASE, &b);
	const char *want = "{\"event\":\"ActNow\"}\n{\"event\":\"Left\",\"player\":3}\n";
	assert_int_equal(b.len, strlen(want));
	assert_memory_equal(b.data, want, b.len);
	size_t cap = b.cap;
	proto_buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, cap);
	proto_encode(&e2, RULES_BASE, &b);
	assert_memory_equal(b.data, "{\"event\":\"Left\",\"player\":3}\n", b.len);
	proto_buf_free(&b);
	assert_null(b.data);
}

/* Parse one encoded line with cJSON (an independent JSON implementation). */
static cJSON *parse_line(const struct proto_buf *b)
{
	assert_true(b->len > 0);
	assert_int_equal(b->data[b->len - 1], '\n');
	assert_null(memchr(b->data, '\n', b->len - 1)); /* exactly one line */
	cJSON *j = cJSON_ParseWithLength(b->data, b->len - 1);
	assert_non_null(j);
	return j;
}

static void test_encode_every_event_is_valid_json(void **state)
{
	(void)state;
	struct proto_buf b;
	proto_buf_init(&b);
	for (int t = 0; t < GAME_EVENT_TYPE_COUNT; t++) {
		for (int rules = RULES_BASE; rules <= RULES_REVISED; rules++) {
			struct game_event e = EV(CONFIG, 4, 1, -2, 1, 4, "s\"\n");
			e.type = (enum game_event_type)t;
			proto_buf_reset(&b);
			proto_encode(&e, (enum game_rules)rules, &b);
			cJSON *j = parse_line(&b);
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "event");
			assert_true(cJSON_IsString(name));
			assert_string_equal(name->valuestring, game_event_name((enum game_event_type)t));
			assert_null(memchr(b.data, ' ', b.len)); /* no spaces anywhere */
			cJSON_Delete(j);
		}
	}
	proto_buf_free(&b);
}

/* Runs after the test_encode_* tests: each event type's exact line was
 * checked there (proto.c's event table has no compiler check that every
 * event has its row). */
static void test_encode_every_event_checked(void **state)
{
	(void)state;
	for (int t = 0; t < GAME_EVENT_TYPE_COUNT; t++)
		if (!enc_checked[t])
			fail_msg("no exact encoding test for %s", game_event_name((enum game_event_type)t));
}

static void test_encode_config_round_trip(void **state)
{
	(void)state;
	/* a config file's text: newlines, tabs, quotes, backslashes, unicode */
	const char *text = "{\n\t\"maxPlayers\": 2,\n\t\"name\": \"K\\u00f6ln \\\"Nord\\\"\",\n"
			   "\t\"x\": \"caf\xc3\xa9 \xf0\x9f\xa7\x9f\"\r\n}\n";
	struct game_event e = EV(CONFIG, 0, 0, 0, 0, 0, text);
	struct proto_buf b;
	proto_buf_init(&b);
	proto_encode(&e, RULES_BASE, &b);
	cJSON *j = parse_line(&b);
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(j, "config");
	assert_true(cJSON_IsString(cfg));
	assert_string_equal(cfg->valuestring, text);
	cJSON_Delete(j);
	proto_buf_free(&b);
}

static void test_round_trip_register_to_player(void **state)
{
	(void)state;
	/* a name decoded from Register comes back out unchanged in Player */
	static const char *const lines[] = {
		"{\"command\":\"Register\",\"playerName\":\"Anna\"}",
		"{\"command\":\"Register\",\"playerName\":\"\\t\\\"\\\\\\/\\u001b[31m\\u2028\"}",
		"{\"command\":\"Register\",\"playerName\":\"\\ud83e\\udddf Zed \xc3\xa9\"}",
	};
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	struct proto_buf b;
	proto_buf_init(&b);
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		dec_ok(&pc, lines[i], RULES_BASE);
		struct game_event e = EV(PLAYER, 1, 5, 0, 0, 0, pc.cmd.name);
		proto_buf_reset(&b);
		proto_encode(&e, RULES_BASE, &b);
		cJSON *j = parse_line(&b);
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(j, "playerName");
		assert_true(cJSON_IsString(nm));
		assert_string_equal(nm->valuestring, pc.cmd.name);
		assert_int_equal(cJSON_GetObjectItemCaseSensitive(j, "player")->valueint, 5);
		cJSON_Delete(j);
	}
	proto_buf_free(&b);
	proto_cmd_clear(&pc);
}

static void test_round_trip_command_failed_message(void **state)
{
	(void)state;
	/* every decode error is itself a valid CommandFailed message */
	static const char *const bad[] = {
		"{\"command\":\"Fo\\\"o\\\\\"}",
		"{\"command\":\"\xc3\xa9\xc3\xa9\"}",
		"{\"command\":\"UseCard\",\"cardId\":1,\"target\":2}",
		"[",
	};
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	struct proto_buf b;
	proto_buf_init(&b);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *err = NULL;
		assert_false(proto_decode(bad[i], strlen(bad[i]), RULES_BASE, &pc, &err));
		struct game_event e = EV(COMMAND_FAILED, 0, 0, 0, 0, 0, err);
		proto_buf_reset(&b);
		proto_encode(&e, RULES_BASE, &b);
		cJSON *j = parse_line(&b);
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "message")->valuestring, err);
		cJSON_Delete(j);
	}
	proto_buf_free(&b);
	proto_cmd_clear(&pc);
}

static void test_round_trip_commands(void **state)
{
	(void)state;
	/* build command lines with cJSON from random-ish values and decode them */
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	static const int vals[] = { 0, 1, -1, 42, 2000, INT_MAX, INT_MIN, 123456789 };
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "command", "UseCard");
		cJSON_AddNumberToObject(o, "cardId", vals[i]);
		cJSON_AddNumberToObject(o, "characterId", vals[(i + 1) % 8]);
		cJSON_AddNumberToObject(o, "target", vals[(i + 2) % 8]);
		char *s = cJSON_PrintUnformatted(o);
		dec_ok(&pc, s, RULES_REVISED);
		assert_int_equal(pc.cmd.card, vals[i]);
		assert_int_equal(pc.cmd.character, vals[(i + 1) % 8]);
		assert_int_equal(pc.cmd.target, vals[(i + 2) % 8]);
		assert_true(pc.cmd.has_target);
		cJSON_free(s);
		cJSON_Delete(o);
	}
	proto_cmd_clear(&pc);
}

/* proto_encode_cmd writes what a client sends: exact lines for the shapes
 * the table has (no parameter, a string, ints, the base-only fuel, a
 * target pair present and absent), and proto_decode gives every command
 * type back field for field in both editions. */
static void expect_cmd_line(const struct cmd *c, enum game_rules rules, const char *want)
{
	struct proto_buf b;
	proto_buf_init(&b);
	proto_encode_cmd(c, rules, &b);
	assert_int_equal(b.len, strlen(want));
	assert_memory_equal(b.data, want, b.len);
	proto_buf_free(&b);
}

static void test_encode_commands(void **state)
{
	(void)state;
	expect_cmd_line(&(struct cmd){.type = CMD_END_TURN}, RULES_BASE,
	                "{\"command\":\"EndTurn\"}\n");
	expect_cmd_line(&(struct cmd){.type = CMD_REGISTER, .name = "A\"n\n"}, RULES_BASE,
	                "{\"command\":\"Register\",\"playerName\":\"A\\\"n\\n\"}\n");
	expect_cmd_line(&(struct cmd){.type = CMD_REGISTER}, RULES_BASE,
	                "{\"command\":\"Register\",\"playerName\":\"\"}\n");
	expect_cmd_line(&(struct cmd){.type = CMD_MOVE, .character = 3, .location = -7, .fuel = true},
	                RULES_BASE,
	                "{\"command\":\"Move\",\"characterId\":3,\"locationId\":-7,\"fuel\":true}\n");
	expect_cmd_line(&(struct cmd){.type = CMD_MOVE, .character = 3, .location = 4, .fuel = true},
	                RULES_REVISED, "{\"command\":\"Move\",\"characterId\":3,\"locationId\":4}\n");
	expect_cmd_line(&(struct cmd){.type = CMD_USE_CARD, .card = 9}, RULES_REVISED,
	                "{\"command\":\"UseCard\",\"cardId\":9}\n");
	expect_cmd_line(&(struct cmd){.type = CMD_USE_CARD, .card = 9, .character = 2, .target = 5,
	                              .has_target = true},
	                RULES_REVISED,
	                "{\"command\":\"UseCard\",\"cardId\":9,\"characterId\":2,\"target\":5}\n");
	expect_cmd_line(&(struct cmd){.type = CMD_USE_ABILITY, .character = 1, .target = INT_MIN,
	                              .has_target = true},
	                RULES_BASE,
	                "{\"command\":\"UseAbility\",\"characterId\":1,\"target\":-2147483648}\n");

	struct proto_cmd pc;
	proto_cmd_init(&pc);
	struct proto_buf b;
	proto_buf_init(&b);
	for (int rules = RULES_BASE; rules <= RULES_REVISED; rules++) {
		for (int t = 0; t < CMD_TYPE_COUNT; t++) {
			for (int with_target = 0; with_target < 2; with_target++) {
				struct cmd c = {.type = (enum cmd_type)t, .name = "Bo",
				                .character = 11, .character2 = 12, .location = 13,
				                .entrance = 2, .card = 15, .target = 16,
				                .has_target = with_target, .fuel = true};
				size_t n;
				const struct proto_param *ps = proto_cmd_params(c.type, &n);
				bool has_target_param = false;
				for (size_t i = 0; i < n; i++)
					has_target_param |= proto_param_with_target(&ps[i]);
				proto_buf_reset(&b);
				proto_encode_cmd(&c, (enum game_rules)rules, &b);
				const char *err = NULL;
				assert_true(b.len > 0 && b.data[b.len - 1] == '\n');
				assert_true(proto_decode(b.data, b.len - 1, (enum game_rules)rules, &pc,
				                         &err));
				assert_int_equal(pc.cmd.type, c.type);
				assert_int_equal(pc.cmd.has_target, has_target_param && with_target);
				for (size_t i = 0; i < n; i++) {
					if (ps[i].type == PROTO_STRING) {
						assert_string_equal(pc.cmd.name, "Bo");
					} else if (!proto_param_carried(&pc.cmd, &ps[i])) {
						continue;
					} else if ((ps[i].flags & PROTO_BASE_ONLY) && rules != RULES_BASE) {
						assert_int_equal(proto_param_get(&pc.cmd, &ps[i]), 0);
					} else {
						assert_int_equal(proto_param_get(&pc.cmd, &ps[i]),
						                 proto_param_get(&c, &ps[i]));
					}
				}
			}
		}
	}
	proto_buf_free(&b);
	proto_cmd_clear(&pc);
}

/* The contract proto.h states for the parameter table, which the journal
 * and the tools rely on: target parameters are optional and a pair holds
 * its target; only Register's name is a string; get/set reach the field. */
/* A kept line gives its spare capacity back and keeps its bytes. */
static void test_buf_shrink(void **state)
{
	(void)state;
	struct proto_buf b;
	proto_buf_init(&b);
	proto_buf_shrink(&b); /* empty: nothing to do */
	assert_null(b.data);
	proto_buf_add(&b, "{\"event\":\"Config\"}\n", 19);
	assert_true(b.cap > b.len);
	proto_buf_shrink(&b);
	assert_int_equal(b.cap, 19);
	assert_int_equal(b.len, 19);
	assert_memory_equal(b.data, "{\"event\":\"Config\"}\n", 19);
	proto_buf_add(&b, "x", 1); /* grows again */
	assert_int_equal(b.len, 20);
	assert_true(b.cap >= 20);
	proto_buf_free(&b);
}

static void test_param_table_contract(void **state)
{
	(void)state;
	for (int t = 0; t < CMD_TYPE_COUNT; t++) {
		size_t n;
		const struct proto_param *ps = proto_cmd_params((enum cmd_type)t, &n);
		bool pair = false, pair_target = false;
		for (size_t i = 0; i < n; i++) {
			assert_non_null(ps[i].key);
			if (proto_param_with_target(&ps[i]))
				assert_true(ps[i].flags & PROTO_OPTIONAL);
			pair |= (ps[i].flags & PROTO_PAIR) != 0;
			pair_target |= (ps[i].flags & PROTO_PAIR) && (ps[i].flags & PROTO_TARGET);
			if (ps[i].type == PROTO_STRING) {
				assert_int_equal(t, CMD_REGISTER);
				assert_int_equal(ps[i].offset, offsetof(struct cmd, name));
				continue;
			}
			struct cmd c = {.type = (enum cmd_type)t};
			proto_param_set(&c, &ps[i], 1);
			assert_int_equal(proto_param_get(&c, &ps[i]), 1);
		}
		assert_true(pair == pair_target);
	}
	size_t n = 99;
	assert_null(proto_cmd_params(CMD_TYPE_COUNT, &n));
	assert_int_equal(n, 0);

	/* UseCard without a target carries its card only */
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	dec_ok(&pc, "{\"command\":\"UseCard\",\"cardId\":7}", RULES_BASE);
	const struct proto_param *ps = proto_cmd_params(CMD_USE_CARD, &n);
	assert_int_equal(n, 3);
	assert_true(proto_param_carried(&pc.cmd, &ps[0]));
	assert_int_equal(proto_param_get(&pc.cmd, &ps[0]), 7);
	assert_false(proto_param_carried(&pc.cmd, &ps[1]));
	assert_false(proto_param_carried(&pc.cmd, &ps[2]));
	proto_cmd_clear(&pc);
}

/* proto_format_int: the decimal form of every int64, as printf writes it. */
static void test_format_int(void **state)
{
	(void)state;
	const int64_t vals[] = {0, 7, -1, 10, -10, 2147483647, INT_MIN, INT64_MAX, INT64_MIN};
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		char got[PROTO_INT_DIGITS + 1], want[32];
		size_t n = proto_format_int(vals[i], got);
		got[n] = '\0';
		snprintf(want, sizeof want, "%lld", (long long)vals[i]);
		assert_string_equal(got, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_int),
		cmocka_unit_test(test_encode_commands),
		cmocka_unit_test(test_decode_register),
		cmocka_unit_test(test_decode_register_errors),
		cmocka_unit_test(test_decode_no_param_commands),
		cmocka_unit_test(test_decode_select_characters),
		cmocka_unit_test(test_decode_move_base),
		cmocka_unit_test(test_decode_move_revised_ignores_fuel),
		cmocka_unit_test(test_decode_single_character_commands),
		cmocka_unit_test(test_decode_attack_barricade),
		cmocka_unit_test(test_decode_contribute_card),
		cmocka_unit_test(test_decode_use_card),
		cmocka_unit_test(test_decode_use_card_pair),
		cmocka_unit_test(test_decode_use_ability),
		cmocka_unit_test(test_decode_int_limits),
		cmocka_unit_test(test_decode_int_out_of_range),
		cmocka_unit_test(test_decode_int_fractions),
		cmocka_unit_test(test_decode_embedded_nul_escape),
		cmocka_unit_test(test_decode_raw_nul_byte),
		cmocka_unit_test(test_decode_invalid_utf8),
		cmocka_unit_test(test_decode_lone_surrogate_escape),
		cmocka_unit_test(test_decode_not_an_object),
		cmocka_unit_test(test_decode_malformed),
		cmocka_unit_test(test_decode_rejects_what_cjson_accepts),
		cmocka_unit_test(test_decode_empty_and_cr),
		cmocka_unit_test(test_decode_command_field),
		cmocka_unit_test(test_decode_unknown_command_truncated),
		cmocka_unit_test(test_decode_reconnect),
		cmocka_unit_test(test_encode_reconnect),
		cmocka_unit_test(test_decode_extra_fields_ignored),
		cmocka_unit_test(test_decode_reuse_frees_name),
		cmocka_unit_test(test_decode_too_long),
		cmocka_unit_test(test_decode_deep_nesting),
		cmocka_unit_test(test_encode_setup_events),
		cmocka_unit_test(test_encode_round_events),
		cmocka_unit_test(test_encode_action_events),
		cmocka_unit_test(test_encode_moved_editions),
		cmocka_unit_test(test_encode_optional_params),
		cmocka_unit_test(test_encode_reasons),
		cmocka_unit_test(test_encode_int_extremes),
		cmocka_unit_test(test_encode_string_escapes),
		cmocka_unit_test(test_json_writer),
		cmocka_unit_test(test_encode_invalid_utf8_replaced),
		cmocka_unit_test(test_encode_empty_and_null_strings),
		cmocka_unit_test(test_encode_appends),
		cmocka_unit_test(test_encode_every_event_is_valid_json),
		cmocka_unit_test(test_encode_every_event_checked),
		cmocka_unit_test(test_encode_config_round_trip),
		cmocka_unit_test(test_round_trip_register_to_player),
		cmocka_unit_test(test_round_trip_command_failed_message),
		cmocka_unit_test(test_round_trip_commands),
		cmocka_unit_test(test_param_table_contract),
		cmocka_unit_test(test_buf_shrink),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
