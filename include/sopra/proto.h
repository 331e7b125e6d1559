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
#include <stdint.h>
#include <string.h>

#include "sopra/game_event.h"
#include "sopra/game.h"

/* The longest client line accepted, in bytes, not counting the terminating
 * "\n" (or "\r\n"). Longer lines cannot be framed: net answers
 * CommandFailed(PROTO_ERR_LINE_TOO_LONG) and closes the connection. */
#define PROTO_MAX_LINE          65536
#define PROTO_ERR_LINE_TOO_LONG "line too long"

/* The session layer's one command (docs/protocol.md, "Reconnecting"): not
 * a game command, so not in the game's list (game_event.h). */
#define PROTO_RECONNECT "Reconnect"
/* A session secret: 64 lowercase hex digits. */
#define PROTO_SECRET_HEX 64

/*
 * A decoded command plus the storage its borrowed pointers point into.
 * cmd.name (a NAME parameter) points into name_storage, owned by this struct.
 * Initialise with proto_cmd_init (or zero it); release with proto_cmd_clear,
 * which leaves it ready for reuse.
 */
struct proto_cmd {
	struct cmd cmd;
	char *name_storage; /* owned, NULL unless the command carries a name */
	char err_buf[192];  /* backing store for decode errors that name something */
	/* proto_decode_session: a Reconnect (cmd is then unused) and its secret
	 * as sent, or "" when the string sent is not PROTO_SECRET_HEX bytes long */
	bool reconnect;
	char secret[PROTO_SECRET_HEX + 1];
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
 * problem (e.g. "<command>.characterId: expected an integer"). *err is either a
 * static string or points into out->err_buf: it stays valid until the next
 * proto_decode on the same out.
 *
 * `rules` matters for a PROTO_BASE_ONLY parameter (fuel) only: read in
 * base, ignored (like any unknown field) in revised.
 */
bool proto_decode(const char *line, size_t len, enum game_rules rules, struct proto_cmd *out,
                  const char **err);

/*
 * proto_decode for a game with sessions: a line naming the command
 * PROTO_RECONNECT is the session layer's {"command":"Reconnect","secret":S}
 * (out->reconnect, out->secret; S not a string: false with "Reconnect.secret:
 * expected a string"); any other line decodes as with proto_decode. Without
 * sessions (proto_decode) "Reconnect" is an unknown command.
 */
bool proto_decode_session(const char *line, size_t len, enum game_rules rules,
                          struct proto_cmd *out, const char **err);

/* ---- a command's parameters ----------------------------------------------
 *
 * The parameters of each command, one row per parameter in protocol order,
 * made from the command table (cmd_table.h, protocol.md's commands table).
 * proto_decode reads a line by them; whoever else writes or reads a struct
 * cmd (proto_encode_cmd, the journal, sopra-replay, the fuzzers, the
 * benchmarks) walks the same rows, so a new command is a row in cmd_table.h
 * and nothing elsewhere.
 */
enum proto_param_type { PROTO_INT, PROTO_BOOL, PROTO_STRING };

/* What a parameter's value names: where a client (or a fuzzer) that makes up
 * a command picks it from. The game decides what is valid; this is a hint,
 * never checked by the decoder. */
enum proto_param_domain {
	PROTO_DOMAIN_NAME,              /* a player name (PROTO_STRING) */
	PROTO_DOMAIN_OFFERED_CHARACTER, /* one of the characters offered to the sender */
	PROTO_DOMAIN_OWN_CHARACTER,     /* a living character of the sender */
	PROTO_DOMAIN_LOCATION,          /* a location id */
	PROTO_DOMAIN_ENTRANCE,          /* an entrance number at the character's location */
	PROTO_DOMAIN_HAND_CARD,         /* a card in the sender's hand */
	PROTO_DOMAIN_TARGET,            /* what a card or ability aims at: an entrance,
	                                   a character id or a location id */
	PROTO_DOMAIN_FLAG,              /* a yes/no choice (PROTO_BOOL) */
};

/* Flags. A command's PROTO_PAIR parameters come all or none, and the pair
 * includes its PROTO_TARGET parameter. */
#define PROTO_OPTIONAL  0x1u /* may be absent (a bool then reads as false) */
#define PROTO_BASE_ONLY 0x2u /* read in base only; in revised ignored like any unknown key */
#define PROTO_TARGET    0x4u /* its presence sets cmd.has_target */
#define PROTO_PAIR      0x8u /* all or none (see above) */

struct proto_param {
	const char *key; /* the wire name, e.g. "characterId" */
	enum proto_param_type type;
	size_t offset; /* of its field in struct cmd; PROTO_STRING is always cmd.name */
	enum proto_param_domain domain;
	unsigned flags;
};

/* The parameters of command type t, in protocol order; *n gets their number
 * (0 for a command without any, or a type out of range). */
const struct proto_param *proto_cmd_params(enum cmd_type t, size_t *n);

/* Whether p comes and goes with the command's target: a decoded command has
 * it exactly when cmd.has_target (PROTO_TARGET, or PROTO_PAIR with it). */
bool proto_param_with_target(const struct proto_param *p);

/* Whether c carries p: false only for a target parameter of a command
 * without a target. (An absent optional bool, such as fuel, is carried
 * as false.) */
bool proto_param_carried(const struct cmd *c, const struct proto_param *p);

/* An int or bool parameter's value in c (a bool as 0 or 1), and setting it.
 * Not for PROTO_STRING: that is c->name. */
int proto_param_get(const struct cmd *c, const struct proto_param *p);
void proto_param_set(struct cmd *c, const struct proto_param *p, int v);

/* Writes v in decimal (a '-' first if negative, no NUL) to out, which
 * holds PROTO_INT_DIGITS bytes, and returns the length. What the encoder and
 * the journal write numbers with: no printf on the path of every line. */
#define PROTO_INT_DIGITS 20
size_t proto_format_int(int64_t v, char out[PROTO_INT_DIGITS]);

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
/* Gives back the capacity beyond b->len: for a line kept for long. */
void proto_buf_shrink(struct proto_buf *b);
/* Grows b to hold n more bytes after b->len; proto_buf_room's slow path. */
char *proto_buf_grow(struct proto_buf *b, size_t n);

/* Room for n > 0 more bytes after b->len (the caller writes them, then adds
 * n to b->len); returns where they go. Inline, like proto_buf_add: the
 * encoder and the journal append a few bytes at a time on the path of every
 * command, where a call per append would cost more than the copy. */
static inline char *proto_buf_room(struct proto_buf *b, size_t n)
{
	return b->cap - b->len >= n ? b->data + b->len : proto_buf_grow(b, n);
}

/* Append s[0..n). With n a constant the copy compiles to a few moves. */
static inline void proto_buf_add(struct proto_buf *b, const char *s, size_t n)
{
	if (n == 0)
		return; /* b->data may still be NULL */
	memcpy(proto_buf_room(b, n), s, n);
	b->len += n;
}

/* Append a string literal. */
#define PROTO_BUF_LIT(b, lit) proto_buf_add((b), (lit), sizeof(lit) - 1)

/*
 * Append the wire form of ev -- one JSON object plus "\n" -- to out.
 * Parameters appear in protocol.md's order with its names, no spaces.
 * Optional parameters are written as ev->nargs says (AbilityUsed, CardUsed,
 * Bitten); Moved carries fuel in base and never in revised. ev->to is
 * ignored (routing is the broadcaster's business). A NULL ev->str encodes
 * as "". Strings are written by proto_put_string.
 */
void proto_encode(const struct game_event *ev, enum game_rules rules, struct proto_buf *out);

/*
 * Append the wire form of command c as a client sends it -- one JSON object
 * plus "\n", {"command":"Name",...} -- to out: proto_put_cmd's members.
 * proto_decode(line, rules) gives c back. What every client (sopra-bot,
 * sopra-client) and tool sends commands with.
 */
void proto_encode_cmd(const struct cmd *c, enum game_rules rules, struct proto_buf *out);

/*
 * Append the session layer's command, {"command":"Reconnect","secret":S}
 * plus "\n", to out (secret: a NUL-terminated string, the one a Session
 * event gave). proto_decode_session gives it back. What a client that
 * reconnects sends.
 */
void proto_encode_reconnect(const char *secret, struct proto_buf *out);

/* ---- the JSON writer ------------------------------------------------------
 *
 * The server's one writer of JSON: proto's lines and the journal's are
 * written with these, into a proto_buf, without printf. An object is "{",
 * its members (proto_put_key and a value each), then "}" (and "\n" for a
 * line); proto_put_key writes the "," between members itself. */

/* Append s[0..n) as a JSON string, quotes included: '"' and '\\'
 * escaped, the control characters as \b \f \n \r \t or else \u00XX,
 * well-formed UTF-8 as it is, and every byte that is not part of
 * well-formed UTF-8 as \ufffd, so the output is always valid UTF-8. A
 * NUL byte becomes \u0000 (which proto_decode refuses: text with one
 * cannot come back). s may be NULL when n is 0. */
void proto_put_string(struct proto_buf *b, const char *s, size_t n);

/* Append "key": -- after a "," unless b ends with the object's "{" (b
 * holds at least that "{"). key needs no escaping (a member name of ours). */
void proto_put_key(struct proto_buf *b, const char *key);

/* Append v in decimal (proto_format_int), or true/false. */
void proto_put_int(struct proto_buf *b, int64_t v);
void proto_put_bool(struct proto_buf *b, bool v);

/* Append the members of command c as a client sends them: "command":"Name"
 * and the parameters of proto's table in protocol order, each that c
 * carries (proto_param_carried); a PROTO_BASE_ONLY one (fuel) only in
 * base, where it is always written. A NULL c->name is written as "". */
void proto_put_cmd(struct proto_buf *b, const struct cmd *c, enum game_rules rules);

#endif
