/*
 * bcast: the event broadcaster. It knows which connection (commId) each
 * player speaks through and routes every event the game produces to the
 * right connections, in the order of ../shared/spec/behaviour.md and
 * docs/protocol.md:
 *
 *   - GEV_TO_SENDER: the connection whose entry produced the events (also an
 *     unregistered one); nothing when there is none (timeouts, losses);
 *   - GEV_TO_ALL: every player still in the game that has a connection, in
 *     ascending player id;
 *   - a player id p: p alone, if p is still in the game and connected;
 *   - Left(p) goes out like any event; then p leaves the set: p gets nothing
 *     more, and p's connection is told to close once its output is flushed.
 *
 * It owns no sockets: deliveries go to a sink, so every routing rule can be
 * tested with a sink that records them (tests/test_bcast.c) and the journal
 * replay can print them.
 */
#ifndef SOPRA_BCAST_H
#define SOPRA_BCAST_H

#include <stdbool.h>
#include <stddef.h>

#include "sopra/game_event.h"
#include "sopra/proto.h"

/* Writes player's secret (PROTO_SECRET_HEX digits and a NUL) into hex. */
typedef void (*bcast_secret_fn)(void *ctx, int player, char *hex);

/* Where the broadcaster delivers. encode and close may be NULL. */
struct bcast_sink {
	/* Once per event, before any send of it: lets the sink encode the event
	 * once for all its recipients. */
	void (*encode)(void *ctx, const struct game_event *ev);
	/* Deliver ev to connection comm_id. */
	void (*send)(void *ctx, int comm_id, const struct game_event *ev);
	/* The player on comm_id has left: flush its connection, then close it. */
	void (*close)(void *ctx, int comm_id);
	void *ctx;
};

struct bcast;

/* A broadcaster with no players. Aborts on out of memory (xalloc). */
struct bcast *bcast_new(struct bcast_sink sink);
void bcast_free(struct bcast *b);

/* Player `player` (>= 0, a new id) registered on connection comm_id (> 0). */
void bcast_join(struct bcast *b, int player, int comm_id);

/* The player still in the game on connection comm_id, or -1. */
int bcast_player_of(const struct bcast *b, int comm_id);
/* The connection of a player still in the game, or 0 (none or lost). */
int bcast_comm_of(const struct bcast *b, int player);
/* Whether player is still in the game (no Left delivered yet). */
bool bcast_in_game(const struct bcast *b, int player);

/* Connection comm_id is gone. Returns the player that was in the game on
 * it (the game must be told), or -1. Routing skips that player from now on;
 * the player stays in the game until its Left. */
int bcast_conn_lost(struct bcast *b, int comm_id);

/* Tell the sink to flush connection comm_id and close it (a connection that
 * broke the framing rules). */
void bcast_close_conn(struct bcast *b, int comm_id);

/* ---- sessions (docs/protocol.md, "Reconnecting") -------------------------
 *
 * Off unless enabled. Then every player's Config is followed, to that
 * player alone, by the event Session (its id and secret), and the
 * broadcaster keeps each player's history: every event routed to the player
 * (also while it has no connection) and its Session line. */

/* Turn sessions on (before any player joins). fn derives the secrets. */
void bcast_enable_sessions(struct bcast *b, bcast_secret_fn fn, void *ctx);
bool bcast_sessions(const struct bcast *b);

/* The player ever registered whose secret is the len bytes at secret, or -1. */
int bcast_find_secret(const struct bcast *b, const char *secret, size_t len);

/* Player (in the game, no connection) speaks through comm_id from now on:
 * its whole history is delivered to comm_id first. False if the player is
 * not in the game or is connected. */
bool bcast_rejoin(struct bcast *b, int player, int comm_id);

/* Player keeps its seat but has no connection (a resume: the old ones are
 * gone). */
void bcast_set_away(struct bcast *b, int player);

/* The game is over (its last event routed): every player still in the game
 * that has no connection now has missed the end, until a bcast_rejoin
 * delivers its history. Called again after bcast_set_away (a resume of a
 * finished game), it marks the players set away. Nothing without
 * sessions. */
void bcast_note_end(struct bcast *b);
/* Whether player is still in the game and has missed the end. */
bool bcast_missed_end(const struct bcast *b, int player);

/* Route every event of l in order. sender_comm is the connection whose
 * entry produced them, or 0. */
void bcast_route(struct bcast *b, int sender_comm, const struct game_event_list *l);

#endif
