/*
 * net_pace: pacing of pipelined failures (src/net_int.h).
 *
 * A connection that pipelines failing commands is read more slowly; every
 * line is still answered, in order, and nothing is closed. Each
 * CommandFailed answered while more of a connection's input waits (more
 * of its lines in the queue, or bytes in its `in`) costs a token from its
 * own bucket (NET_PACE_BURST, NET_PACE_RATE): a client that waits for each
 * answer never pays. With its bucket empty no more of its lines are
 * taken: reading pauses, TCP's flow control pushes back on the sender,
 * and its resume timer takes the next batch once NET_PACE_RESUME tokens
 * are back.
 *
 * Strangers pay a second time, into one bucket for all of them (the same
 * size and rate): a crowd of strangers pipelining junk costs the server
 * what one such connection does, not that once per stranger (256 of them
 * kept one CPU busy and doubled a player's round trip). A stranger that
 * has been charged and finds the shared bucket empty is held: its reading
 * pauses and it joins the queue of held strangers. One timer lets them
 * go in the order they came, a batch (NET_LINES_PER_EVENT lines) each,
 * as the shared bucket refills. A stranger never charged (it waits for
 * its answers, or has not pipelined anything yet) is never held: a
 * newcomer's first line does not queue behind a flood. Players are never
 * held: each has only its own bucket.
 */
#include "net_int.h"

#include <event2/buffer.h>
#include <event2/event.h>

#define MILLI 1000L

/* ---- token buckets -------------------------------------------------------- */

long token_bucket_peek(const struct token_bucket *b, long burst, long rate, long now)
{
	long full = burst * MILLI;
	long elapsed = now - b->at_ms;
	if (elapsed <= 0 || b->milli >= full)
		return b->milli;
	/* rate tokens a second are as many thousandths a millisecond */
	if (elapsed > (full - b->milli) / rate)
		return full;
	return b->milli + elapsed * rate;
}

long token_bucket_refill(struct token_bucket *b, long burst, long rate, long now)
{
	b->milli = token_bucket_peek(b, burst, rate, now);
	if (now > b->at_ms)
		b->at_ms = now;
	return b->milli;
}

void token_bucket_fill(struct token_bucket *b, long burst, long now)
{
	*b = (struct token_bucket){.milli = burst * MILLI, .at_ms = now};
}

long token_bucket_wait_ms(long milli, long rate, long tokens)
{
	long short_by = tokens * MILLI - milli;
	return short_by <= 0 ? 0 : (short_by + rate - 1) / rate;
}

/* How long a bucket at milli thousandths waits for NET_PACE_RESUME tokens. */
static struct timeval resume_wait(long milli)
{
	long ms = token_bucket_wait_ms(milli, NET_PACE_RATE, NET_PACE_RESUME);
	struct timeval tv = {ms / 1000, (suseconds_t)(ms % 1000) * 1000};
	return tv;
}

/* ---- one connection's bucket ---------------------------------------------- */

static long own_refill(struct conn *c, long now)
{
	return token_bucket_refill(&c->pace, NET_PACE_BURST, NET_PACE_RATE, now);
}

void net_pace_start(struct conn *c, long now)
{
	token_bucket_fill(&c->pace, NET_PACE_BURST, now);
}

bool net_pace_pacing(const struct conn *c, long now)
{
	return c->paced > 0 && token_bucket_peek(&c->pace, NET_PACE_BURST, NET_PACE_RATE, now) <
	                               NET_PACE_BURST * MILLI;
}

/* ---- the strangers' queue ------------------------------------------------- */

static long shared_refill(struct server *s, long now)
{
	return token_bucket_refill(&s->strangers_pace, NET_PACE_BURST, NET_PACE_RATE, now);
}

static void held_append(struct server *s, struct conn *c)
{
	c->held_prev = s->held_last;
	c->held_next = NULL;
	if (s->held_last)
		s->held_last->held_next = c;
	else
		s->held_first = c;
	s->held_last = c;
	c->pace_held = true;
}

static void held_unlink(struct server *s, struct conn *c)
{
	if (c->held_prev)
		c->held_prev->held_next = c->held_next;
	else
		s->held_first = c->held_next;
	if (c->held_next)
		c->held_next->held_prev = c->held_prev;
	else
		s->held_last = c->held_prev;
	c->held_prev = c->held_next = NULL;
	c->pace_held = false;
}

/* Arm the release timer for when the shared bucket, at milli, has
 * NET_PACE_RESUME tokens again; nothing if nobody is held or it is armed. */
static void release_arm(struct server *s, long milli)
{
	if (!s->held_first || evtimer_pending(s->pace_release, NULL))
		return;
	struct timeval tv = resume_wait(milli);
	evtimer_add(s->pace_release, &tv);
}

/* Let held strangers go, first come first, while the shared bucket has
 * tokens: each takes one batch, whose charges come as it is answered, so
 * a batch's worth is set aside per stranger let go. */
static void release_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct server *s = arg;
	long budget = shared_refill(s, now_ms());
	while (s->held_first && budget >= MILLI) {
		struct conn *c = s->held_first;
		held_unlink(s, c);
		c->pace_granted = true;
		/* made active, not a zero timer: active events run in the order
		 * they were made so, timers due at once in any order */
		event_active(c->resume, EV_TIMEOUT, 1);
		budget -= NET_LINES_PER_EVENT * MILLI;
	}
	release_arm(s, budget);
}

bool net_pace_setup(struct server *s)
{
	token_bucket_fill(&s->strangers_pace, NET_PACE_BURST, now_ms());
	s->pace_release = evtimer_new(s->base, release_cb, s);
	return s->pace_release && event_priority_set(s->pace_release, NET_PRIO_STRANGER) == 0;
}

void net_pace_forget(struct conn *c)
{
	if (c->pace_held)
		held_unlink(c->srv, c);
	c->pace_granted = false;
}

/* ---- charging and allowing ------------------------------------------------ */

void net_pace_charge(struct conn *c)
{
	struct server *s = c->srv;
	if (evbuffer_get_length(c->in) == 0 && !cmdq_more_from(s->queue, c->id))
		return;
	long now = now_ms();
	own_refill(c, now);
	c->pace.milli -= MILLI;
	c->pace_charged++;
	if (!c->registered) {
		shared_refill(s, now);
		s->strangers_pace.milli -= MILLI;
	}
}

/* Whether stranger c must wait for the shared bucket: it has pipelined
 * failures, was not just let go, and the bucket is empty. */
static bool shared_holds(struct conn *c, long now)
{
	if (c->registered || c->pace_charged == 0)
		return false;
	if (c->pace_granted) {
		c->pace_granted = false;
		return false;
	}
	return shared_refill(c->srv, now) < MILLI;
}

/* Pause c's reading until its own bucket has NET_PACE_RESUME tokens. */
static void own_pause(struct conn *c)
{
	if (c->paced++ == 0)
		net_log_conn(c, NET_QUIET_OTHER,
		             "conn %d: pipelines failing commands faster than %d a second: "
		             "read more slowly",
		             c->id, NET_PACE_RATE);
	event_del(c->rev);
	struct timeval tv = resume_wait(c->pace.milli);
	evtimer_add(c->resume, &tv);
}

/* Pause stranger c's reading and queue it for the shared bucket. */
static void shared_hold(struct conn *c)
{
	struct server *s = c->srv;
	c->paced++;
	if (s->strangers_held++ == 0)
		net_log(s,
		        "strangers pipeline failing commands faster than %d a second together: "
		        "read in turn",
		        NET_PACE_RATE);
	event_del(c->rev);
	held_append(s, c);
	release_arm(s, s->strangers_pace.milli);
}

bool net_pace_allows(struct conn *c)
{
	if (c->pace_held) { /* queued already: the release timer resumes it */
		event_del(c->rev);
		return false;
	}
	long now = now_ms();
	if (own_refill(c, now) < MILLI) {
		own_pause(c);
		return false;
	}
	if (shared_holds(c, now)) {
		shared_hold(c);
		return false;
	}
	return true;
}
