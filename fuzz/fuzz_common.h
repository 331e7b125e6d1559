/*
 * Shared code of the fuzz targets (see fuzz/README.md).
 *
 * Every target defines LLVMFuzzerTestOneInput. It is linked either with
 * libFuzzer (clang, -fsanitize=fuzzer,address,undefined) or with
 * replay_main.c (any compiler) to run saved inputs as regression tests.
 *
 * A property that does not hold is reported with FUZZ_CHECK, which prints
 * what went wrong (and which input, when replaying) and aborts, so libFuzzer
 * saves the input as a crash.
 */
#ifndef SOPRA_FUZZ_COMMON_H
#define SOPRA_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sopra/config.h"
#include "sopra/game_event.h"
#include "sopra/game.h"
#include "sopra/proto.h"
#include "sopra/xalloc.h" /* xmalloc, xcalloc, xrealloc: abort when out of memory */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Set by replay_main.c to the file being replayed (printed on failure). */
extern const char *fuzz_current_input;
/* True when FUZZ_VERBOSE is set in the environment: the game driver prints
 * every step and every encoded event to stderr. */
bool fuzz_verbose(void);

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
_Noreturn void
fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...);

#define FUZZ_CHECK(cond, ...)                                              \
	do {                                                               \
		if (!(cond))                                               \
			fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
	} while (0)

/* s[0..n) for a message: bytes < 0x20 and 0x7f as \xNN, cut at about
 * 1200 bytes. Returns a static buffer (valid until the next call). */
const char *fuzz_printable(const char *s, size_t n);

/* Strict RFC 3629 UTF-8 (no overlongs, surrogates or values > U+10FFFF);
 * written independently of proto.c's so the two check each other. */
bool fuzz_utf8_valid(const char *s, size_t n);
/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if none. */
size_t fuzz_utf8_seq(const unsigned char *s, size_t n);

/* What a client decodes from proto_encode's JSON string for s: s with each
 * byte that does not start a valid UTF-8 sequence replaced by U+FFFD.
 * Caller frees. */
char *fuzz_wire_string(const char *s);

/* Check that line[0..len) is exactly what proto_encode promises for ev: one
 * JSON object, valid UTF-8, no whitespace outside strings, "\n" only at the
 * end, "event" first with game_event_name(ev->type), every other value an
 * integer / boolean / string. If want_str is non-NULL, the event's string
 * parameter `str_key` must decode to it. */
void fuzz_check_event_line(const char *line, size_t len, const struct game_event *ev,
                           const char *str_key, const char *want_str);

/* ---- a client-side view of one game ------------------------------------
 *
 * fuzz_session drives a game the way net.c does: only registered, connected
 * players who have not left send commands (plus unregistered connections,
 * GAME_NO_PLAYER); game_disconnect only for such players; nothing after the
 * game is over. After every step it checks the events (types, argument
 * counts, recipients, ids, nothing after GameEnd, Left is p's last event, a
 * failed command changes nothing -- not even the RNG), encodes each with
 * proto_encode and checks the line, and calls game_check_invariants().
 */
struct fuzz_player {
	bool left;         /* Left(p) was emitted */
	bool disconnected; /* game_disconnect(p) was called */
	bool offered_valid;
	int offered[4]; /* the last Characters(...) sent to p */
	int *chars;     /* character ids spawned for p and not dead */
	int nchars;
	int *cards; /* card ids drawn by p and not seen leaving its hand */
	int ncards;
};

struct fuzz_session {
	const struct config *cfg;
	enum game_rules rules;
	struct game *g;
	struct game_event_list ev;
	struct proto_buf buf;
	struct fuzz_player *pl; /* cfg->max_players */
	int nplayers;
	bool over; /* GameEnd or RegistrationAborted was emitted */
	int steps;
	/* cached config ids for the pick helpers */
	int *char_ids, *card_ids, *loc_ids;
	unsigned char *drawn; /* per card index: a CardDrawn was seen */
	bool config_static;   /* cfg lives as long as the process (set by the caller):
	                       * its Config event is encoded and checked only once */
};

void fuzz_session_init(struct fuzz_session *s, const struct config *cfg, int64_t seed,
                       enum game_rules rules);
void fuzz_session_free(struct fuzz_session *s);

/* The steps. fuzz_apply returns the sender's id after the command (as
 * game_apply does). player must be GAME_NO_PLAYER or a connected player. */
int fuzz_apply(struct fuzz_session *s, int player, const struct cmd *cmd);
void fuzz_timeout(struct fuzz_session *s);
void fuzz_disconnect(struct fuzz_session *s, int player);

/* p is registered, has not left and is still connected. */
bool fuzz_connected(const struct fuzz_session *s, int p);
/* Number of connected players and the i-th of them (i modulo the count);
 * -1 when there is none. */
int fuzz_connected_count(const struct fuzz_session *s);
int fuzz_connected_nth(const struct fuzz_session *s, int i);
/* Who a well-behaved client would send `type` as: the player the game waits
 * for; during registration a new connection for Register, else the last
 * connected player (or a new connection when there is none). */
int fuzz_auto_sender(const struct fuzz_session *s, enum cmd_type type);

/* ---- commands made up from bytes -----------------------------------------
 *
 * fuzz_game reads its commands' arguments from its input, fuzz_config from
 * a pseudo-random stream; both the same way, from the command's parameters
 * in the command table (proto_cmd_params), one after the other by their
 * domain. The byte layout is described at the top of fuzz_game.c. Bytes
 * past the end read as 0.
 */
struct fuzz_reader {
	const uint8_t *p;
	size_t n, i;
};

bool fuzz_rd_eof(const struct fuzz_reader *r);
uint8_t fuzz_rd_u8(struct fuzz_reader *r);

/* Fill c with a command of type t from `sender` (a player or
 * GAME_NO_PLAYER), its arguments read from r; ids are picked mostly from
 * what the sender has seen (its offered and living characters, its cards).
 * A name is stored in name[] (c->name points to it). */
void fuzz_read_cmd(struct fuzz_reader *r, const struct fuzz_session *s, int sender, enum cmd_type t,
                   struct cmd *c, char name[17]);

/* Check a proto_encode'd line of ev (used by the session and fuzz_proto_decode).
 * rules matters for Moved. */
void fuzz_encode_and_check(const struct game_event *ev, enum game_rules rules,
                           struct proto_buf *buf, const char *str_key, const char *want_str);

#endif
