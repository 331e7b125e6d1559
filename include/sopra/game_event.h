/*
 * game_event: what the game tells the players, and the commands it is given.
 *
 * The game module produces `struct game_event`s into a `game_event_list` owned
 * by the caller; proto encodes each into one JSON line; net delivers it.
 * The event table (event_table.h) and the command table (cmd_table.h) are
 * the single source of the names and parameters: the enums, the wire names,
 * the encoder and the decoders are all generated from them.
 */
#ifndef SOPRA_GAME_EVENT_H
#define SOPRA_GAME_EVENT_H

#include <stdbool.h>
#include <stddef.h>

#include "sopra/cmd_table.h"
#include "sopra/event_table.h"

enum game_event_type {
#define SOPRA_GEV_ENUM(id, ...) GEV_##id,
	SOPRA_EVENTS(SOPRA_GEV_ENUM)
#undef SOPRA_GEV_ENUM
};
#define GAME_EVENT_TYPE_COUNT (GEV_SESSION + 1)

/* FoodChanged's and MoralChanged's reasons, from event_table.h */
enum food_reason {
#define SOPRA_FOOD_ENUM(id, name) id,
	SOPRA_FOOD_REASONS(SOPRA_FOOD_ENUM)
#undef SOPRA_FOOD_ENUM
};
enum moral_reason {
#define SOPRA_MORAL_ENUM(id, name) MORAL_##id,
	SOPRA_MORAL_REASONS(SOPRA_MORAL_ENUM)
#undef SOPRA_MORAL_ENUM
};

/* Recipients. Any value >= 0 is one player id. */
#define GEV_TO_ALL    (-1) /* every player still in the game, ascending id */
#define GEV_TO_SENDER (-2) /* the connection that sent the command (may be unregistered) */

/*
 * One event. `arg` holds the parameters in protocol.md order: integers as is,
 * booleans as 0/1, enum reasons as enum food_reason / enum moral_reason.
 * `nargs` is how many of them are present (optional parameters are simply
 * absent: AbilityUsed 1 or 2, CardUsed 1 or 3, Bitten 0 or 1, Moved 2 in
 * revised or 3 in base). `str` is the one string parameter (Config's text,
 * CommandFailed's message, Player's name, Session's secret), a borrowed
 * pointer that stays valid until the game is freed (Session's: until its
 * delivery).
 *
 * Delivery rule: Left(p) is the last event p's connection receives; the
 * broadcaster delivers it to all (p included), then drops p from "all".
 */
struct game_event {
	enum game_event_type type;
	int to;
	int nargs;
	int arg[4];
	const char *str;
};

/* A growable array of events owned by the caller; clearing keeps capacity so
 * a reused list allocates nothing in steady state. */
struct game_event_list {
	struct game_event *v;
	size_t n;
	size_t cap;
};

void game_event_list_init(struct game_event_list *l);
void game_event_list_clear(struct game_event_list *l);
void game_event_list_free(struct game_event_list *l);
/* Append; returns the new slot (zeroed but for type/to) or aborts on OOM. */
struct game_event *game_event_list_push(struct game_event_list *l, enum game_event_type type,
                                        int to);

/* The wire name of an event type ("ActNow"). */
const char *game_event_name(enum game_event_type type);

/* ---- commands ---------------------------------------------------------- */

/* One CMD_ID per row of cmd_table.h, in its order. */
enum cmd_type {
#define SOPRA_CMD_ENUM(id, ...) CMD_##id,
	SOPRA_COMMANDS(SOPRA_CMD_ENUM)
#undef SOPRA_CMD_ENUM
};
/* The number of command types, counted by an enum of its own so that
 * enum cmd_type has no value besides the commands (a switch over it lists
 * just those). */
enum sopra_cmd_counter {
#define SOPRA_CMD_COUNTER(id, ...) SOPRA_CMD_COUNTER_##id,
	SOPRA_COMMANDS(SOPRA_CMD_COUNTER) SOPRA_CMD_COUNTER_END
#undef SOPRA_CMD_COUNTER
};
#define CMD_TYPE_COUNT ((int)SOPRA_CMD_COUNTER_END)

/*
 * A decoded, well-typed command. The fields a command uses are the `field`
 * column of its parameters in cmd_table.h; the others stay 0. `name` (a
 * STRING parameter) is borrowed: the game copies what it keeps. has_target
 * says whether the optional target parameters (PROTO_TARGET, PROTO_PAIR)
 * were given; a BOOL parameter that was absent reads as false.
 */
struct cmd {
	enum cmd_type type;
	const char *name;
	int character;
	int character2;
	int location;
	int entrance;
	int card;
	int target;
	bool has_target;
	bool fuel;
};

const char *cmd_name(enum cmd_type type);

#endif
