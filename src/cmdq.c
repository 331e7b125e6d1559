/* cmdq: a growable ring of queue entries (include/sopra/cmdq.h). */
#include "sopra/cmdq.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "sopra/xalloc.h"

void cmdq_init(struct cmdq *q, enum game_rules rules, bool sessions)
{
	*q = (struct cmdq){.rules = rules, .sessions = sessions};
}

void cmdq_free(struct cmdq *q)
{
	cmdq_clear(q);
	free(q->v);
	cmdq_init(q, q->rules, q->sessions);
}

/* The first ring's entries. A game at human pace holds one or two entries
 * at a time, and an entry is ~350 bytes: a first ring of 32 would hold
 * 11 KiB of zeroed (so resident) memory in every game process. A burst
 * doubles the ring. */
#define CMDQ_FIRST_CAP 4

/* Double the ring, keeping the entries in order from index 0. */
static void cmdq_grow(struct cmdq *q)
{
	size_t cap = q->cap ? q->cap * 2 : CMDQ_FIRST_CAP;
	struct cmdq_entry *v = xcalloc(cap, sizeof *v);
	for (size_t i = 0; i < q->n; i++) {
		const struct cmdq_entry *old = &q->v[(q->head + i) % q->cap];
		v[i] = *old;
		/* a decode error may point into the entry's own err_buf */
		if (old->error >= old->pc.err_buf &&
		    old->error < old->pc.err_buf + sizeof old->pc.err_buf)
			v[i].error = v[i].pc.err_buf + (old->error - old->pc.err_buf);
	}
	free(q->v);
	q->v = v;
	q->cap = cap;
	q->head = 0;
}

/* A fresh entry at the back of the queue. */
static struct cmdq_entry *cmdq_push(struct cmdq *q, enum cmdq_kind kind, int comm_id)
{
	if (q->n == q->cap)
		cmdq_grow(q);
	struct cmdq_entry *e = &q->v[(q->head + q->n++) % q->cap];
	proto_cmd_clear(&e->pc);
	e->kind = kind;
	e->comm_id = comm_id;
	e->error = NULL;
	e->drain = false;
	e->player = -1;
	return e;
}

void cmdq_push_line(struct cmdq *q, int comm_id, const char *line, size_t len)
{
	assert(comm_id > 0);
	struct cmdq_entry *e = cmdq_push(q, CMDQ_COMMAND, comm_id);
	bool ok = q->sessions ? proto_decode_session(line, len, q->rules, &e->pc, &e->error)
	                      : proto_decode(line, len, q->rules, &e->pc, &e->error);
	if (!ok)
		e->kind = CMDQ_BAD_LINE;
	else if (e->pc.reconnect)
		e->kind = CMDQ_RECONNECT;
}

void cmdq_push_error(struct cmdq *q, int comm_id, const char *static_msg)
{
	assert(comm_id > 0 && static_msg);
	cmdq_push(q, CMDQ_BAD_LINE, comm_id)->error = static_msg;
}

void cmdq_push_timeout(struct cmdq *q)
{
	cmdq_push(q, CMDQ_TIMEOUT, 0);
}

void cmdq_push_lost(struct cmdq *q, int comm_id, bool drain)
{
	assert(comm_id > 0);
	cmdq_push(q, CMDQ_LOST, comm_id)->drain = drain;
}

void cmdq_push_grace_over(struct cmdq *q, int player)
{
	assert(player >= 0);
	cmdq_push(q, CMDQ_GRACE_OVER, 0)->player = player;
}

const struct cmdq_entry *cmdq_front(const struct cmdq *q)
{
	return q->n ? &q->v[q->head] : NULL;
}

bool cmdq_more_from(const struct cmdq *q, int comm_id)
{
	for (size_t i = 1; i < q->n; i++)
		if (q->v[(q->head + i) % q->cap].comm_id == comm_id)
			return true;
	return false;
}

void cmdq_pop(struct cmdq *q)
{
	assert(q->n > 0);
	proto_cmd_clear(&q->v[q->head].pc);
	q->head = (q->head + 1) % q->cap;
	q->n--;
}

void cmdq_clear(struct cmdq *q)
{
	while (q->n)
		cmdq_pop(q);
}
