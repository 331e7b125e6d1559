/*
 * bcast: the event broadcaster. It knows which connection (commId) each
 * player speaks through and routes every event the game produces to its
 * recipients, in the order of ../shared/spec/behaviour.md and
 * docs/protocol.md:
 *
 *   - GEV_TO_SENDER: the connection whose entry produced the events (also an
 *     unregistered one); nothing when there is none (timeouts, losses);
 *   - GEV_TO_ALL: every player still in the game, in ascending player id;
 *   - a player id p: p alone, if p is still in the game;
 *   - Left(p) goes out like any event; then p leaves the set: p gets nothing
 *     more, and p's connection is to be closed once its output is flushed.
 *
 * It owns no sockets and no JSON: every delivery goes to a sink as
 * (connection, player, event), and who joins and leaves reaches the sink as
 * a call, so every routing rule can be tested with a sink that records
 * them (tests/test_bcast.c). A player still in the game that has no
 * connection at the moment (its connection was lost, and the session layer
 * keeps its seat) gets its deliveries with connection 0: the session layer
 * (session.h), which is the broadcaster's sink in the server, keeps them in
 * the player's history and passes on only what has a connection.
 */
#ifndef SOPRA_BCAST_H
#define SOPRA_BCAST_H

#include <stdbool.h>
#include <stddef.h>

#include "sopra/game_event.h"

/* Where the broadcaster delivers. Every member but send may be NULL. */
struct bcast_sink {
	/* Once per event, before any send of it: lets the sink encode the event
	 * once for all its recipients. */
	void (*encode)(void *ctx, const struct game_event *ev);
	/* Deliver ev to connection comm_id (0: the recipient is a player without
	 * a connection). player is the recipient, or -1 for a sender's
	 * connection that is no player's. */
	void (*send)(void *ctx, int comm_id, int player, const struct game_event *ev);
	/* player (>= 0) speaks through connection comm_id (> 0) from now on: it
	 * registered, or came back (bcast_rejoin). */
	void (*joined)(void *ctx, int comm_id, int player);
	/* player has left the game (its Left was delivered); its connection
	 * comm_id (0: it had none) is to be flushed, then closed. */
	void (*left)(void *ctx, int comm_id, int player);
	/* Connection comm_id (> 0) is to be flushed, then closed; no player
	 * leaves the game. */
	void (*close)(void *ctx, int comm_id);
	/* Only the session layer calls it (a Reconnect; session.h): the first n
	 * entries of player's history are delivered to connection comm_id (> 0)
	 * now, ahead of anything sent to it later. The sink may write them as
	 * the connection drains, reading them with session_history_at while the
	 * player is in the game (left is called before its history goes).
	 * NULL: the session layer sends each entry (encode, then send). */
	void (*history)(void *ctx, int comm_id, int player, size_t n);
	void *ctx;
};

struct bcast;

/* A broadcaster with no players that delivers to sink. Aborts on out of
 * memory (xalloc). */
struct bcast *bcast_new(struct bcast_sink sink);
void bcast_free(struct bcast *b);

/* Deliver to sink from now on (before anything is routed: the session
 * layer puts itself in front of the sink it was made with). */
void bcast_set_sink(struct bcast *b, struct bcast_sink sink);

/* Player `player` (>= 0, not in the game) registered on connection comm_id
 * (> 0). The sink is told (joined). */
void bcast_join(struct bcast *b, int player, int comm_id);

/* The player still in the game on connection comm_id, or -1. */
int bcast_player_of(const struct bcast *b, int comm_id);
/* The connection of a player still in the game, or 0 (none or lost). */
int bcast_comm_of(const struct bcast *b, int player);
/* Whether player is still in the game (no Left delivered yet). */
bool bcast_in_game(const struct bcast *b, int player);

/* Connection comm_id is gone. Returns the player that was in the game on
 * it (the game, or the session layer, must be told), or -1. From now on
 * that player gets its deliveries with connection 0, until its Left or a
 * bcast_rejoin. */
int bcast_conn_lost(struct bcast *b, int comm_id);

/* Player (in the game, without a connection) speaks through comm_id (> 0,
 * no player's connection) from now on. The sink is told (joined). */
void bcast_rejoin(struct bcast *b, int player, int comm_id);

/* Player, if in the game, keeps its seat but has no connection (a resume:
 * the old connections are gone). */
void bcast_set_away(struct bcast *b, int player);

/* Tell the sink to flush connection comm_id (> 0) and close it (a
 * connection that broke the framing rules, or a visit after the end). */
void bcast_close_conn(struct bcast *b, int comm_id);

/* Route every event of l in order. sender_comm is the connection whose
 * entry produced them, or 0. */
void bcast_route(struct bcast *b, int sender_comm, const struct game_event_list *l);

#endif
