/*
 * game: the rules of SoPra of the Dead as a pure state machine.
 *
 * No I/O, no clock, no sockets, no JSON: commands go in, events come out
 * (appended to a caller-owned event_list), in the exact order of
 * ../shared/spec/behaviour.md. All randomness comes from one seeded rng in
 * the order of spec section 4.2.
 *
 * The game is always in one of these situations, which net uses to run the
 * --timeout timer:
 *   waiting for anyone (registration), waiting for one player (character
 *   selection or a turn), or over (nothing more will happen).
 *
 * For bots and clients the module also copies a game cheaply (game_clone),
 * lists the commands a player may send now (game_legal_commands), and takes
 * a player's view and builds games from one (game_view.h).
 */
#ifndef SOPRA_GAME_H
#define SOPRA_GAME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sopra/config.h"
#include "sopra/game_event.h"
#include "sopra/rng.h"

enum game_rules {
	RULES_BASE,
	RULES_REVISED,
};

/* Parse "base" / "revised"; returns false for anything else. */
bool game_rules_parse(const char *s, enum game_rules *out);
const char *game_rules_name(enum game_rules r);

#define GAME_NO_PLAYER (-1) /* sender is an unregistered connection */
#define GAME_WAIT_ANY  (-1) /* game_waiting_for: registration, anyone may speak */
#define GAME_WAIT_NONE (-2) /* game_waiting_for: the game is over */

struct game;

/* Create a game in its registration phase. cfg is borrowed and must outlive
 * the game. Never returns NULL: running out of memory aborts (xalloc.h). */
struct game *game_new(const struct config *cfg, int64_t seed, enum game_rules rules);
void game_free(struct game *g);

/* A deep copy of g that plays on exactly as g would: the same commands give
 * the same events and states (the generator is copied too). One allocation
 * and a copy of g's memory, so cheap enough for a search that tries many
 * futures of one state. The copy borrows g's cfg and owns everything else;
 * free it with game_free, before or after g. Never NULL. */
struct game *game_clone(const struct game *g);

/*
 * Apply one command sent by `player` (GAME_NO_PLAYER for a connection that
 * has not registered). Validates, mutates, and appends the resulting events
 * to out (it does not clear out). A failing command appends exactly one
 * CommandFailed (to the sender) -- or, during registration, the abort --
 * plus the ActNow that re-prompts the active player, and changes nothing else.
 * Whole colony phases and following rounds run inside the call until the
 * game next waits for a player.
 * Returns the sender's player id after the command: the new id after a
 * successful registration, otherwise `player` unchanged.
 */
int game_apply(struct game *g, int player, const struct cmd *cmd, struct game_event_list *out);

/* The command that registers a connection as a player named name (name is
 * borrowed, as in any struct cmd): for code that registers on someone's
 * behalf, such as a browser's seat or a view's rebuilt game. */
struct cmd game_registration(const char *name);

/* The --timeout expired while waiting: registration aborts; otherwise the
 * player waited for leaves (as if they had sent the command to leave). No-op when the game is over.
 */
void game_timeout(struct game *g, struct game_event_list *out);

/* The connection of registered player p is gone. The player leaves the game
 * when the game next waits for them (at once if it is waiting for them now);
 * until then nothing changes. */
void game_disconnect(struct game *g, int player, struct game_event_list *out);

/* ---- the commands a player may send now ------------------------------------ */

/* A growable array of commands owned by the caller, like game_event_list:
 * clearing keeps the capacity, so a reused list allocates nothing in steady
 * state. */
struct game_cmd_list {
	struct cmd *v;
	size_t n;
	size_t cap;
};

void game_cmd_list_init(struct game_cmd_list *l);
void game_cmd_list_clear(struct game_cmd_list *l);
void game_cmd_list_free(struct game_cmd_list *l);
/* Append; returns the new command, zeroed but for its type (aborts on OOM). */
struct cmd *game_cmd_list_push(struct game_cmd_list *l, enum cmd_type type);

/*
 * Replace out's contents with every fully parameterised command that
 * game_apply would accept from `player` (GAME_NO_PLAYER: a connection that
 * has not registered) now -- accept: no CommandFailed and, during the
 * registration, no abort -- and return their number. Nothing when the
 * game is over or it is not the player's turn; the registration, the only
 * command with a free parameter (a NAME), is listed once with name NULL
 * (any name is accepted). The choice of two offered characters is listed in
 * both orders of each pair (both are accepted, and both spawn the lower id
 * first). A FLAG parameter (fuel) is true only in base, where the wire has
 * it (PROTO_BASE_ONLY).
 *
 * The order is deterministic: command types in enum cmd_type order, then
 * characters, cards, targets and locations in configuration order,
 * entrances ascending. It depends only on what the player has been told,
 * so a game built from the player's view (game_view.h) lists the same
 * commands in the same order. Reads g only; cheap enough for a search's
 * rollouts (no allocation once out has grown).
 */
size_t game_legal_commands(const struct game *g, int player, struct game_cmd_list *out);

/* The same commands found the slow way, the reference for the above: every
 * command of the table (cmd_table.h) with every combination of its
 * parameters' domains (proto.h: the player's characters and cards, every
 * location, entrance and living character, ...), each tried on a copy of g
 * with game_apply. In type order, then the domains' order (not necessarily
 * game_legal_commands' order within a type). game_legal_commands itself
 * does this only for a command that has no enumerator of its own. */
size_t game_legal_commands_tried(const struct game *g, int player, struct game_cmd_list *out);

/* GAME_WAIT_ANY, GAME_WAIT_NONE, or the player id the game waits for. */
int game_waiting_for(const struct game *g);
bool game_is_over(const struct game *g);

/* The rule edition the game plays. */
enum game_rules game_rules_of(const struct game *g);

/* Why the game is over ("won: the goal was reached", "lost: morale fell to
 * 0", "lost: the last round ended", "registration aborted"), or NULL while
 * it runs. A static string. */
const char *game_end_reason(const struct game *g);

/* The number of rounds started so far (0 before the first). */
int game_round(const struct game *g);

/* Number of players registered so far (ids are 0 .. n-1). */
int game_player_count(const struct game *g);

/* A copy of the game's generator, for tests and tools that predict the next
 * roll; drawing from the copy does not affect the game. */
struct rng game_rng_peek(const struct game *g);

/* Debug builds: check every invariant of the state (zombies+barricades <= 3
 * per entrance, capacities, each card in exactly one place, ...). Returns
 * NULL when all hold, else a static description of the first violation. */
const char *game_check_invariants(const struct game *g);

/* A readable summary of the state for people (sopra-replay --at): phase,
 * round, food, morale, waste, the crisis, each player's dice and hand, each
 * location's zombies and barricades per entrance, each character's place,
 * injuries and equipment. Read only; the format may change. */
void game_describe(const struct game *g, FILE *out);

#endif
