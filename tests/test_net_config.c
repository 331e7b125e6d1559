/*
 * Unit tests for src/net_config.c: the server's Config line, kept deflated
 * while no connection has it waiting and inflated into one shared copy
 * while some do; a long line stays whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_int.h"
#include "sopra/config.h"
#include "sopra/game_event.h"

/* A configuration-like JSON text of about n bytes (repetitive, as card
 * lists are). */
static char *config_text(size_t n)
{
	char *t = malloc(n + 64);
	assert_non_null(t);
	size_t len = 0;
	len += (size_t)sprintf(t, "{\"maxPlayers\":4,\n\"cards\":[");
	for (int i = 0; len < n; i++)
		len += (size_t)sprintf(t + len, "{\"id\":%d,\"kind\":\"food\"},\n", i);
	strcpy(t + len, "]}");
	return t;
}

/* The line every Config event of a server with text is. */
static struct proto_buf expected_line(const char *text)
{
	struct proto_buf b;
	proto_buf_init(&b);
	struct game_event ev = {.type = GEV_CONFIG, .to = GEV_TO_SENDER, .str = text};
	proto_encode(&ev, RULES_BASE, &b);
	return b;
}

static struct server *server_with(const char *text)
{
	struct server *s = calloc(1, sizeof *s);
	assert_non_null(s);
	s->rules = RULES_BASE;
	struct config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.text = (char *)text;
	net_config_init(s, &cfg);
	return s;
}

static void assert_is_line(const struct shared_line *b, const struct proto_buf *want)
{
	assert_int_equal(b->len, want->len);
	assert_memory_equal(b->data, want->data, want->len);
}

static void test_deflated_while_nobody_has_it(void **state)
{
	(void)state;
	char *text = config_text(12000);
	struct proto_buf want = expected_line(text);
	struct server *s = server_with(text);
	free(text); /* the server keeps its own copy */

	assert_int_equal(s->config.len, want.len);
	assert_null(s->config.live);
	assert_non_null(s->config.deflated);
	assert_true(s->config.deflated_len < want.len / 4);

	/* two holders share one copy */
	struct shared_line *a = net_config_take(s);
	struct shared_line *b = net_config_take(s);
	assert_ptr_equal(a, b);
	assert_ptr_equal(s->config.live, a);
	assert_int_equal(a->refs, 2);
	assert_is_line(a, &want);
	net_shared_unref(a);
	assert_ptr_equal(s->config.live, b);
	net_shared_unref(b);
	assert_null(s->config.live); /* the last one freed it */

	/* the next holder gets the same bytes again; not in the output budget */
	struct shared_line *c = net_config_take(s);
	assert_is_line(c, &want);
	assert_int_equal(s->shared_bytes, 0);
	net_shared_unref(c);
	assert_null(s->config.live);

	net_config_free(s);
	proto_buf_free(&want);
	free(s);
}

static void test_a_long_line_stays_whole(void **state)
{
	(void)state;
	char *text = config_text(100000); /* over NET_CONFIG_DEFLATE_MAX */
	struct proto_buf want = expected_line(text);
	struct server *s = server_with(text);
	free(text);

	assert_null(s->config.deflated);
	assert_non_null(s->config.live);
	assert_is_line(s->config.live, &want);
	struct shared_line *a = net_config_take(s);
	assert_ptr_equal(a, s->config.live);
	assert_int_equal(a->refs, 2); /* the server's own and this */
	net_shared_unref(a);
	assert_ptr_equal(s->config.live, a); /* the server's reference keeps it */

	net_config_free(s);
	assert_null(s->config.live);
	proto_buf_free(&want);
	free(s);
}

static void test_a_line_that_does_not_shrink_stays_whole(void **state)
{
	(void)state;
	struct proto_buf want = expected_line("{}");
	struct server *s = server_with("{}");
	assert_null(s->config.deflated);
	assert_non_null(s->config.live);
	assert_is_line(s->config.live, &want);
	net_config_free(s);
	proto_buf_free(&want);
	free(s);
}

static void test_no_text_no_line(void **state)
{
	(void)state;
	struct server *s = server_with(NULL);
	assert_int_equal(s->config.len, 0);
	assert_null(s->config.live);
	assert_null(s->config.deflated);
	net_config_free(s);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_deflated_while_nobody_has_it),
	        cmocka_unit_test(test_a_long_line_stays_whole),
	        cmocka_unit_test(test_a_line_that_does_not_shrink_stays_whole),
	        cmocka_unit_test(test_no_text_no_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
