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

#include "sopra/game_event.h"

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

/* Route every event of l in order. sender_comm is the connection whose
 * entry produced them, or 0. */
void bcast_route(struct bcast *b, int sender_comm, const struct game_event_list *l);

#endif
