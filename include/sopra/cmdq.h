/*
 * cmdq: the command queue between the network and the game.
 *
 * net frames client input into lines; each becomes a queue entry, decoded
 * by proto; the --timeout timer, lost connections and expired reconnect
 * graces are entries too. The dispatcher (dispatch.h) takes the entries out
 * in arrival order and is the only code that changes the game. Nothing here
 * does I/O or reads JSON.
 *
 * An entry names its connection by commId (the number net gave it when it
 * was accepted), not by player: a registration still in the queue decides which
 * player the connection's later lines come from, so the player is looked up
 * when the entry is dispatched.
 */
#ifndef SOPRA_CMDQ_H
#define SOPRA_CMDQ_H

#include <stdbool.h>
#include <stddef.h>

#include "sopra/game.h"
#include "sopra/proto.h"

enum cmdq_kind {
	CMDQ_COMMAND,  /* a line that decoded: cmd holds the command */
	CMDQ_BAD_LINE, /* a line that did not decode: error says why */
	CMDQ_TIMEOUT,  /* the --timeout expired while the game waited */
	CMDQ_LOST,     /* the connection is gone, or must close (drain) */
	/* sessions only (docs/protocol.md, "Reconnecting"): */
	CMDQ_RECONNECT,  /* {"command":"Reconnect","secret":...}: pc.secret */
	CMDQ_GRACE_OVER, /* player's reconnect grace expired */
};

struct cmdq_entry {
	enum cmdq_kind kind;
	int comm_id; /* the connection (0 for CMDQ_TIMEOUT) */
	/* CMDQ_COMMAND: the decoded command (owns its name); CMDQ_RECONNECT:
	 * pc.secret */
	struct proto_cmd pc;
	const char *error; /* CMDQ_BAD_LINE: static or in pc.err_buf */
	bool drain;        /* CMDQ_LOST: the connection is still open; flush it, then close */
	int player;        /* CMDQ_GRACE_OVER: whose grace */
};

/* A FIFO of entries. It grows as needed (xalloc policy) and reuses the
 * entries' storage, so a steady state allocates nothing. */
struct cmdq {
	struct cmdq_entry *v; /* owned ring of cap entries */
	size_t head, n, cap;
	enum game_rules rules; /* how lines are decoded (proto_decode) */
	bool sessions;         /* ... and whether Reconnect is a command */
};

/* An empty queue whose lines are decoded for the rule edition `rules`,
 * with Reconnect when `sessions` (proto_decode_session). */
void cmdq_init(struct cmdq *q, enum game_rules rules, bool sessions);
void cmdq_free(struct cmdq *q);
static inline bool cmdq_empty(const struct cmdq *q)
{
	return q->n == 0;
}

/* Decode one line (len bytes without its "\n"; see proto_decode) from
 * connection comm_id (> 0) and queue it as CMDQ_COMMAND, CMDQ_RECONNECT or
 * CMDQ_BAD_LINE. */
void cmdq_push_line(struct cmdq *q, int comm_id, const char *line, size_t len);
/* Queue a CMDQ_BAD_LINE from comm_id (> 0) with a static message (e.g.
 * "line too long"). */
void cmdq_push_error(struct cmdq *q, int comm_id, const char *static_msg);
void cmdq_push_timeout(struct cmdq *q);
/* Connection comm_id (> 0) is gone, or (drain) must close after flushing. */
void cmdq_push_lost(struct cmdq *q, int comm_id, bool drain);
/* player's (>= 0) reconnect grace expired. */
void cmdq_push_grace_over(struct cmdq *q, int player);

/* The oldest entry, or NULL when empty. It stays valid until cmdq_pop. */
const struct cmdq_entry *cmdq_front(const struct cmdq *q);
/* Whether an entry behind the oldest one comes from connection comm_id
 * (while the oldest is dispatched: more of that connection's input waits).
 * Scans the queue: it holds one callback's entries. */
bool cmdq_more_from(const struct cmdq *q, int comm_id);
/* Remove the oldest entry (releasing what its command owned); the queue
 * must not be empty. */
void cmdq_pop(struct cmdq *q);
/* Remove every entry. */
void cmdq_clear(struct cmdq *q);

#endif
