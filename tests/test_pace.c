/*
 * Unit tests for src/net_pace.c: the token buckets on a clock the test
 * sets, and the queue of strangers held for the shared bucket on a real
 * libevent loop (its release timer waits a few milliseconds).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "net_int.h"

static void test_a_bucket_earns_its_rate_up_to_its_burst(void **state)
{
	(void)state;
	struct token_bucket b;
	token_bucket_fill(&b, 256, 1000);
	assert_int_equal(token_bucket_peek(&b, 256, 4096, 5000), 256000);
	b.milli = -16000; /* a batch's debt */
	/* 4096 a second are 4,096 thousandths a millisecond */
	assert_int_equal(token_bucket_peek(&b, 256, 4096, 1001), -16000 + 4096);
	assert_int_equal(token_bucket_refill(&b, 256, 4096, 1010), -16000 + 40960);
	assert_int_equal(b.at_ms, 1010);
	/* an hour later: the burst, not an hour's worth */
	assert_int_equal(token_bucket_refill(&b, 256, 4096, 3601010), 256000);
	/* a clock that went back earns nothing and keeps the bucket's time */
	assert_int_equal(token_bucket_refill(&b, 256, 4096, 5), 256000);
	assert_int_equal(b.at_ms, 3601010);
}

static void test_the_wait_for_tokens_rounds_up(void **state)
{
	(void)state;
	assert_int_equal(token_bucket_wait_ms(16000, 4096, 16), 0);
	assert_int_equal(token_bucket_wait_ms(20000, 4096, 16), 0);
	assert_int_equal(token_bucket_wait_ms(0, 4096, 16), 4);      /* 16000 / 4096 = 3.9 */
	assert_int_equal(token_bucket_wait_ms(-16000, 4096, 16), 8); /* 32000 / 4096 = 7.8 */
	assert_int_equal(token_bucket_wait_ms(15999, 4096, 16), 1);
}

/* ---- the queue of held strangers ------------------------------------------ */

#define NCONNS 4

struct fixture {
	struct server s;
	struct conn c[NCONNS];
	int order[NCONNS * 2]; /* the conns' ids as their resume timers ran */
	int nresumed, want;
};

static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct conn *c = arg;
	struct fixture *f = (struct fixture *)((char *)c->srv - offsetof(struct fixture, s));
	/* let go from the queue: it takes its batch without asking again */
	assert_true(net_pace_allows(c));
	f->order[f->nresumed++] = c->id;
	if (f->nresumed == f->want)
		event_base_loopexit(c->srv->base, NULL);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	assert_non_null(f);
	struct server *s = &f->s;
	s->base = event_base_new();
	assert_non_null(s->base);
	assert_int_equal(event_base_priority_init(s->base, NET_PRIOS), 0);
	s->log = fopen("/dev/null", "w");
	assert_non_null(s->log);
	net_quiet_init(&s->quiet, now_ms());
	assert_true(net_pace_setup(s));
	for (int i = 0; i < NCONNS; i++) {
		struct conn *c = &f->c[i];
		c->srv = s;
		c->id = i + 1;
		c->state = CONN_OPEN;
		c->in = evbuffer_new();
		assert_non_null(c->in);
		evbuffer_add(c->in, "x\nx\n", 4); /* more input waits: charges count */
		c->rev = event_new(s->base, -1, EV_READ, resume_cb, c);
		c->resume = evtimer_new(s->base, resume_cb, c);
		assert_true(c->rev && c->resume);
		net_pace_start(c, now_ms());
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	for (int i = 0; i < NCONNS; i++) {
		event_free(f->c[i].rev);
		event_free(f->c[i].resume);
		evbuffer_free(f->c[i].in);
	}
	event_free(f->s.pace_release);
	event_base_free(f->s.base);
	fclose(f->s.log);
	free(f);
	return 0;
}

/* Tokens of debt a test runs up: a bucket earns 4 a millisecond, so it
 * stays empty for the 25 ms a test takes on a slow machine. */
#define DEBT 100

/* Empty the shared bucket the way strangers do: by being charged. */
static void empty_shared_bucket(struct fixture *f)
{
	struct conn *c = &f->c[0];
	while (f->s.strangers_pace.milli >= -DEBT * 1000)
		net_pace_charge(c);
	c->pace_charged = 0;
	net_pace_start(c, now_ms());
	for (int i = 0; i < NCONNS; i++)
		f->c[i].pace_charged = 1; /* each has pipelined before */
}

static void test_held_strangers_are_let_go_in_the_order_they_came(void **state)
{
	struct fixture *f = *state;
	empty_shared_bucket(f);
	int came[NCONNS] = {2, 0, 3, 1};
	for (int i = 0; i < NCONNS; i++) {
		struct conn *c = &f->c[came[i]];
		assert_false(net_pace_allows(c));
		assert_true(c->pace_held);
		assert_false(net_pace_allows(c)); /* asked again: still held, not queued twice */
	}
	assert_int_equal(f->s.strangers_held, NCONNS);
	f->want = NCONNS;
	assert_int_equal(event_base_dispatch(f->s.base), 0);
	for (int i = 0; i < NCONNS; i++) {
		assert_int_equal(f->order[i], f->c[came[i]].id);
		assert_false(f->c[came[i]].pace_held);
	}
}

static void test_a_stranger_that_leaves_is_not_let_go(void **state)
{
	struct fixture *f = *state;
	empty_shared_bucket(f);
	for (int i = 0; i < NCONNS; i++)
		assert_false(net_pace_allows(&f->c[i]));
	net_pace_forget(&f->c[1]); /* it closed */
	net_pace_forget(&f->c[3]); /* it registered */
	assert_null(f->c[2].held_next);
	assert_ptr_equal(f->s.held_last, &f->c[2]);
	f->want = 2;
	assert_int_equal(event_base_dispatch(f->s.base), 0);
	assert_int_equal(f->order[0], 1);
	assert_int_equal(f->order[1], 3);
	assert_null(f->s.held_first);
	assert_false(evtimer_pending(f->c[1].resume, NULL));
	assert_false(evtimer_pending(f->c[3].resume, NULL));
}

static void test_who_is_never_held(void **state)
{
	struct fixture *f = *state;
	empty_shared_bucket(f);
	f->c[0].pace_charged = 0; /* waits for its answers: never charged */
	assert_true(net_pace_allows(&f->c[0]));
	f->c[1].registered = true; /* a player: its own bucket only */
	assert_true(net_pace_allows(&f->c[1]));
	struct token_bucket before = f->s.strangers_pace;
	net_pace_charge(&f->c[1]); /* players do not pay into the shared bucket */
	assert_int_equal(f->s.strangers_pace.milli, before.milli);
	assert_int_equal(f->s.strangers_pace.at_ms, before.at_ms);
	assert_int_equal(f->c[1].pace_charged, 2);
	assert_int_equal(f->s.strangers_held, 0);
	assert_false(net_pace_allows(&f->c[2])); /* a stranger that pipelined is */
	assert_int_equal(f->s.strangers_held, 1);
}

static void test_an_empty_own_bucket_pauses_before_the_shared_one(void **state)
{
	struct fixture *f = *state;
	struct conn *c = &f->c[0];
	for (int i = 0; i < NET_PACE_BURST + DEBT; i++)
		net_pace_charge(c);
	assert_false(net_pace_allows(c));
	assert_false(c->pace_held); /* its own resume timer takes it on */
	assert_true(evtimer_pending(c->resume, NULL));
	assert_int_equal(c->paced, 1);
	assert_true(net_pace_pacing(c, now_ms()));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_a_bucket_earns_its_rate_up_to_its_burst),
	        cmocka_unit_test(test_the_wait_for_tokens_rounds_up),
	        cmocka_unit_test_setup_teardown(
	                test_held_strangers_are_let_go_in_the_order_they_came, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_a_stranger_that_leaves_is_not_let_go, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_who_is_never_held, setup, teardown),
	        cmocka_unit_test_setup_teardown(
	                test_an_empty_own_bucket_pauses_before_the_shared_one, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
