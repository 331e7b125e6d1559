/*
 * proto: the wire format (docs/protocol.md). One client line -> one
 * struct cmd; one struct game_event -> one server line.
 *
 * No I/O. The decoder checks a line with json_check (json.h: what cJSON
 * alone would accept but the protocol rejects) and parses it with cJSON --
 * in the server, cJSON is used only here and in config. While proto_decode
 * runs, cJSON's process-global allocation hooks point at a static per-line
 * arena (proto.c), so proto_decode is neither reentrant nor thread-safe,
 * and nothing else may use cJSON at the same time; the server is
 * single-threaded. The encoder writes JSON by hand.
 */
#ifndef SOPRA_PROTO_H
#define SOPRA_PROTO_H

#include <stdbool.h>
#include <stddef.h>

#include "sopra/game_event.h"
#include "sopra/game.h"

/* The longest client line accepted, in bytes, not counting the terminating
 * "\n" (or "\r\n"). Longer lines cannot be framed: net answers
 * CommandFailed(PROTO_ERR_LINE_TOO_LONG) and closes the connection. */
#define PROTO_MAX_LINE          65536
#define PROTO_ERR_LINE_TOO_LONG "line too long"

/*
 * A decoded command plus the storage its borrowed pointers point into.
 * cmd.name (Register) points into name_storage, owned by this struct.
 * Initialise with proto_cmd_init (or zero it); release with proto_cmd_clear,
 * which leaves it ready for reuse.
 */
struct proto_cmd {
	struct cmd cmd;
	char *name_storage; /* owned, NULL unless the command carries a name */
	char err_buf[192];  /* backing store for decode errors that name something */
};

void proto_cmd_init(struct proto_cmd *pc);
void proto_cmd_clear(struct proto_cmd *pc);

/*
 * Decode one line (len bytes, without its "\n"; a trailing "\r" is
 * stripped here; the bytes need not be NUL-terminated) into out->cmd.
 * out's previous contents are released first.
 *
 * Returns true on success. On failure returns false, leaves out cleared and
 * sets *err to a non-empty, human-readable, valid UTF-8 message naming the
 * problem (e.g. "Move.characterId: expected an integer"). *err is either a
 * static string or points into out->err_buf: it stays valid until the next
 * proto_decode on the same out.
 *
 * `rules` matters for Move.fuel only: read in base, ignored (like any unknown
 * field) in revised.
 */
bool proto_decode(const char *line, size_t len, enum game_rules rules, struct proto_cmd *out,
                  const char **err);

/* A growable byte buffer for encoded lines. Owned by whoever initialised it;
 * proto_buf_reset keeps the capacity so steady-state encoding does not
 * allocate. Allocation failure aborts (like game_event_list_push). */
struct proto_buf {
	char *data; /* owned; not NUL-terminated */
	size_t len;
	size_t cap;
};

void proto_buf_init(struct proto_buf *b);
void proto_buf_reset(struct proto_buf *b);
void proto_buf_free(struct proto_buf *b);

/*
 * Append the wire form of ev -- one JSON object plus "\n" -- to out.
 * Parameters appear in protocol.md's order with its names, no spaces.
 * Optional parameters are written as ev->nargs says (AbilityUsed, CardUsed,
 * Bitten); Moved carries fuel in base and never in revised. ev->to is
 * ignored (routing is net's business). A NULL ev->str encodes as "".
 * Strings are escaped as JSON; invalid UTF-8 bytes become U+FFFD so the
 * output is always valid UTF-8.
 */
void proto_encode(const struct game_event *ev, enum game_rules rules, struct proto_buf *out);

#endif
