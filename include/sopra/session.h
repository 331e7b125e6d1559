/*
 * session: who may come back, and what they get back (docs/protocol.md,
 * "Reconnecting" and "After the end").
 *
 * With sessions on, every player has a secret (derived when it registers)
 * and a history: every event routed to it, also while it has no
 * connection, and its Session event, which follows its Config. A player
 * whose connection is lost may keep its seat ("away") for a grace; a
 * Reconnect naming its secret makes the sender's connection the player's,
 * and the player's whole history goes out on it first. When the game ends,
 * every player still in it without a connection has missed the end, until
 * it comes back for its history; a resume puts every player away.
 *
 * The session layer sits between the broadcaster and the outside world:
 * session_new makes it the broadcaster's sink (bcast.h). It keeps each
 * player's deliveries and passes on to its own sink (`out`) every delivery
 * that has a connection, and who joined and left. Without sessions it only
 * passes them on. It owns no timers: it asks for a player's grace timer
 * (session_timer_fn), and the grace's end comes back as a queue entry
 * (CMDQ_GRACE_OVER).
 *
 *   dispatch --events--> bcast --(comm, player, event)--> session --> out (net, a replay)
 */
#ifndef SOPRA_SESSION_H
#define SOPRA_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "sopra/bcast.h"
#include "sopra/proto.h"

/* Writes player's secret (PROTO_SECRET_HEX lowercase hex digits and a NUL)
 * into hex; the same player always gets the same secret. */
typedef void (*session_secret_fn)(void *ctx, int player, char *hex);

/* Start player's grace timer of sec (> 0) seconds, replacing a running
 * one, or stop it (sec 0). When it expires, its owner queues
 * CMDQ_GRACE_OVER for the player (cmdq.h). */
typedef void (*session_timer_fn)(void *ctx, int player, int sec);

struct session_opts {
	session_secret_fn secret; /* NULL: sessions are off (and so is the rest) */
	void *secret_ctx;         /* borrowed */
	int grace_sec;            /* >= 0: how long a lost player's seat is kept (0: not) */
	session_timer_fn timer;   /* NULL: none (a replay: graces end as entries) */
	void *timer_ctx;          /* borrowed */
};

struct session;

/* The session layer for broadcaster b (borrowed; it must outlive the
 * session layer): from now on b delivers to it, and it to out. Aborts on
 * out of memory. */
struct session *session_new(const struct session_opts *o, struct bcast *b, struct bcast_sink out);
void session_free(struct session *s);

/* Whether sessions are on. */
bool session_on(const struct session *s);

/* Whether the deliveries from now on go into the histories (true, as
 * after session_new) or only out (an entry the dispatcher does not record:
 * dispatch.h, "What is recorded"). */
void session_keep(struct session *s, bool keep);
/* Whether a player whose connection is lost keeps its seat (sessions with a
 * grace): then the game is not told, session_away is. */
bool session_keeps_seat(const struct session *s);

/* player (in the game) lost its connection and keeps its seat: its grace
 * starts. */
void session_away(struct session *s, int player);

/* Whether player is in the game without a connection. */
bool session_is_away(const struct session *s, int player);

/*
 * A Reconnect with secret (as decoded: PROTO_SECRET_HEX digits or "") on
 * connection comm_id (> 0), which is player sender (-1: none). If it names
 * a player in the game that has no connection and whose grace has not run
 * out, and the sender is no player: that player speaks through comm_id
 * from now on, its grace stops, its whole history goes out on comm_id (to
 * out.history if the sink has it, which may write it as the connection
 * drains; else entry by entry), and the player is returned. Else -1, with
 * why in msg (len bytes; e.g. "Reconnect: wrong secret").
 */
int session_reconnect(struct session *s, int comm_id, int sender, const char *secret, char *msg,
                      size_t len);

/* The number of entries in player's history (0 for a player without
 * one: not registered, left, or sessions off). */
size_t session_history_len(const struct session *s, int player);

/* Entry i (< session_history_len) of player's history as it goes out
 * again: addressed to the player alone, a Session event with its secret. */
struct game_event session_history_at(const struct session *s, int player, size_t i);

/* player (away) did not come back within its grace: the game is told, and
 * a Reconnect for it is refused from now on ("Reconnect: player N's grace
 * is over"), also while the game has not removed it yet. */
void session_grace_over(struct session *s, int player);
/* The game is over (its last event routed): every player still in the game
 * without a connection has missed the end; every grace stops. */
void session_note_end(struct session *s);
/* Whether player is in the game and has missed the end (no Reconnect has
 * delivered its history, which ends with the end, since). */
bool session_missed_end(const struct session *s, int player);

/* A resume record (and what a resume starts with): every player in the
 * game keeps its seat without a connection; if the game is over, each of
 * them has missed its end (who had received it is unknown). */
void session_all_away(struct session *s, bool game_over);

/* A resume after the journal was fed: session_all_away, every grace
 * stopped, and, while the game goes on, every player in it gets a grace of
 * grace_sec seconds to come back. */
void session_resume(struct session *s, bool game_over, int grace_sec);

#endif
