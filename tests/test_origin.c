/*
 * Unit tests for src/net_origin.c: the strangers grouped by origin, each
 * group idlest first, and the choice of the stranger to evict. Connections
 * here are bare structs (no sockets, no loop): only the fields the groups
 * read (origin, id, line_ms) are set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "net_int.h"

static struct net_origin v4(uint32_t addr)
{
	return (struct net_origin){.prefix = addr};
}

static void open_stranger(struct server *s, struct conn *c, int id, struct net_origin o,
                          long line_ms)
{
	memset(c, 0, sizeof *c);
	c->id = id;
	c->origin = o;
	c->line_ms = line_ms;
	net_stranger_add(s, c);
}

/* The ids of group g's strangers, head first, as "1,2,3". */
static const char *order(const struct stranger_group *g)
{
	static char buf[128];
	buf[0] = '\0';
	for (const struct conn *c = g->head; c; c = c->group_next)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%d", buf[0] ? "," : "",
		         c->id);
	return buf;
}

static void test_groups_follow_origins(void **state)
{
	(void)state;
	struct server s = {0};
	struct conn c[4];
	open_stranger(&s, &c[0], 1, v4(0x7f000002), 10);
	open_stranger(&s, &c[1], 2, v4(0x7f000003), 11);
	open_stranger(&s, &c[2], 3, v4(0x7f000002), 12);
	struct net_origin v6 = {.prefix = 0x7f000002, .v6 = true};
	open_stranger(&s, &c[3], 4, v6, 13); /* same bits, other family */
	assert_int_equal(s.ngroups, 3);
	const struct stranger_group *g = net_strangers_from(&s, &c[0].origin);
	assert_non_null(g);
	assert_int_equal(g->n, 2);
	assert_string_equal(order(g), "1,3");
	assert_int_equal(net_strangers_from(&s, &v6)->n, 1);
	assert_null(net_strangers_from(&s, &(struct net_origin){.prefix = 9}));

	net_stranger_remove(&s, &c[1]); /* its group goes with it */
	assert_int_equal(s.ngroups, 2);
	assert_null(net_strangers_from(&s, &c[1].origin));
	assert_null(c[1].group);
	net_stranger_remove(&s, &c[1]); /* no longer a stranger: nothing */
	assert_int_equal(s.ngroups, 2);
	assert_ptr_equal(net_strangers_from(&s, &v6)->head, &c[3]);
	net_strangers_free(&s);
	assert_int_equal(s.ngroups, 0);
}

static void test_a_line_moves_a_stranger_to_the_tail(void **state)
{
	(void)state;
	struct server s = {0};
	struct conn c[3];
	for (int i = 0; i < 3; i++)
		open_stranger(&s, &c[i], i + 1, v4(1), 100 + i);
	const struct stranger_group *g = c[0].group;
	assert_string_equal(order(g), "1,2,3");
	c[0].line_ms = 200;
	net_stranger_had_line(&c[0]);
	assert_string_equal(order(g), "2,3,1");
	/* two lines in the same millisecond: the older connection is idler */
	c[2].line_ms = 200;
	net_stranger_had_line(&c[2]);
	assert_string_equal(order(g), "2,1,3");
	c[1].line_ms = 200;
	net_stranger_had_line(&c[1]);
	assert_string_equal(order(g), "1,2,3");
	assert_ptr_equal(g->tail, &c[2]);
	net_stranger_remove(&s, &c[1]);
	assert_string_equal(order(g), "1,3");
	assert_ptr_equal(c[0].group_next, &c[2]);
	assert_ptr_equal(c[2].group_prev, &c[0]);
	net_strangers_free(&s);
}

static void test_the_largest_origin_gives_up_its_idlest(void **state)
{
	(void)state;
	struct server s = {0};
	assert_null(net_stranger_to_evict(&s));
	struct conn c[6];
	open_stranger(&s, &c[0], 1, v4(3), 5); /* the idlest of all, but alone */
	open_stranger(&s, &c[1], 2, v4(2), 20);
	open_stranger(&s, &c[2], 3, v4(2), 10);
	open_stranger(&s, &c[3], 4, v4(4), 7);
	open_stranger(&s, &c[4], 5, v4(4), 30);
	assert_ptr_equal(net_stranger_to_evict(&s), &c[3]); /* a tie: 4's head is idler */
	open_stranger(&s, &c[5], 6, v4(2), 40);
	assert_ptr_equal(net_stranger_to_evict(&s), &c[2]); /* origin 2 holds 3 */
	net_stranger_remove(&s, &c[2]);
	net_stranger_remove(&s, &c[5]);
	net_stranger_remove(&s, &c[3]);
	net_stranger_remove(&s, &c[4]);
	assert_ptr_equal(net_stranger_to_evict(&s), &c[0]); /* a tie of ones: the idlest */
	net_stranger_remove(&s, &c[0]);
	net_stranger_remove(&s, &c[1]);
	assert_null(net_stranger_to_evict(&s));
	assert_int_equal(s.ngroups, 0);
	assert_null(s.groups);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_groups_follow_origins),
	        cmocka_unit_test(test_a_line_moves_a_stranger_to_the_tail),
	        cmocka_unit_test(test_the_largest_origin_gives_up_its_idlest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
