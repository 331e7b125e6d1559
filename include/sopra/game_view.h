/*
 * game_view: what one player has been told, as plain data, and full games
 * built from it.
 *
 * A bot that searches the future, or a client that lists the commands it
 * may send, must reason only about what its player knows: the events it
 * received (docs/protocol.md says which go to whom). game_view_of extracts
 * exactly that from a game; game_from_view builds a complete game that
 * agrees with it, drawing everything the player was not told at random
 * (determinization: the order of every pile, the crises still to come, who
 * of the characters not in play appears next, the characters offered to
 * another player, and through a fresh generator every future die and
 * infection roll). The game module stays pure: no I/O, nothing global.
 *
 * What a player is told (protocol.md's "to" column): every event but Config,
 * ActNow, Characters and CommandFailed goes to all players, so the board,
 * every character, every hand (CardDrawn, CardUsed and Contributed name the
 * cards), the waste pile, the crises drawn and the dice rolled are public.
 * Private are the four characters offered to the player choosing (known to
 * that player only) and, not told to anyone, the order of the piles, of the
 * crises to come and of the characters not in play. One more thing is not
 * public: whose turn it is. Ending a turn sends nothing, so while one player acts
 * the others cannot always tell whether the turn before it has ended, nor,
 * after an anonymous cleaning of the waste, which character cleaned. The view therefore
 * holds the facts of the turn running now -- the dice left, which
 * characters moved or used their ability, the equipment used, whether the
 * waste was cleaned -- only when the game waits for the viewer (turn_known);
 * otherwise they are zero and waiting_for is GAME_VIEW_SOMEONE_ELSE. When
 * the game waits for the viewer all of it is known exactly: the players
 * before it have ended their turns (no dice), those after it still hold the
 * dice they rolled.
 *
 * Conventions: indices into the configuration's arrays (file order), never
 * ids; -1 for "none". Before the turns the board is as the engine keeps it
 * (no zombies, morale 0, no children: the end of the character selection
 * sets them up, behaviour.md 3.5). Crises with the same id cannot be told
 * apart by a player: the view takes them in file order.
 *
 * A player who has left is told nothing more; its view of a later state is
 * the watcher's (the public facts now), not what it knew when it left.
 */
#ifndef SOPRA_GAME_VIEW_H
#define SOPRA_GAME_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sopra/config.h"
#include "sopra/game.h"

enum game_view_phase {
	VIEW_REGISTRATION,
	VIEW_SELECTION,
	VIEW_TURNS,
	VIEW_OVER,
};

enum game_view_result {
	VIEW_RUNNING,
	VIEW_WON,
	VIEW_LOST,
	VIEW_ABORTED, /* the registration was aborted */
};

/* waiting_for during the turns when another player acts (which one is not
 * always told). */
#define GAME_VIEW_SOMEONE_ELSE (-3)

enum game_view_place {
	VIEW_PILE,     /* in the pile of location `holder` (the colony's: the start pile) */
	VIEW_HAND,     /* in the hand of player `holder` */
	VIEW_WASTE,    /* on the waste pile (its order: game_view.waste) */
	VIEW_GONE,     /* out of the game (also a card in no pile of the configuration) */
	VIEW_EQUIPPED, /* on character `holder`, the order-th item it was given */
};

struct game_view_card {
	enum game_view_place place;
	int holder; /* location index, player id or character index; -1 for WASTE and GONE */
	int order;  /* EQUIPPED: 0 for the item equipped first, ...; else 0 */
	bool spent; /* EQUIPPED and turn_known: used this turn */
};

enum game_view_life {
	VIEW_UNSPAWNED, /* not in play yet (or offered to the player choosing) */
	VIEW_ALIVE,
	VIEW_DEAD,
};

struct game_view_character {
	enum game_view_life life;
	int owner;      /* alive: the player id; else -1 */
	int loc;        /* alive: the location index; else -1 */
	int wounds;     /* alive; else 0 */
	int frostbites; /* alive; else 0 */
	bool moved;     /* turn_known and alive: moved this turn */
	int uses;       /* turn_known and alive: ability activations this turn */
};

struct game_view_player {
	const char *name; /* borrowed from the game or model the view was taken from */
	bool in_game;     /* registered and not left */
	bool cleaned;     /* turn_known (base): cleaned waste this turn */
	int ndice;        /* turn_known: the dice left this round; else 0 */
	int *dice;        /* ascending, capacity ncharacters + 1 */
	int offered[4];   /* the selection: the characters offered to the viewer, when it
	                     chooses now; -1 for everyone else */
};

struct game_view_location {
	int *zombies;    /* per entrance */
	int *barricades; /* per entrance */
};

struct game_view {
	const struct config *cfg; /* the configuration it is sized for (borrowed) */
	enum game_rules rules;
	int me;          /* the viewer: a player id; GAME_NO_PLAYER for a watcher, a connection
	                    that has not registered, or any viewer during the registration
	                    (nobody is told its id before GameStarted) */
	bool registered; /* the registration: the viewer has registered */
	enum game_view_phase phase;
	enum game_view_result result;
	int waiting_for; /* GAME_WAIT_ANY (registration), the player choosing (selection),
	                    me or GAME_VIEW_SOMEONE_ELSE (turns), GAME_WAIT_NONE (over) */
	bool turn_known; /* the turns, waiting for the viewer: dice, moved, uses, spent
	                    and cleaned are known (else all zero) */
	int round;       /* rounds started */
	int food, moral, starvation, children, contributed;
	int crisis;   /* the current crisis (index), -1 before the first round */
	int *crises;  /* the crises drawn, round by round (`round` of them) */
	int nplayers; /* told by the Player events at GameStarted: 0 before */
	struct game_view_player *players;       /* capacity cfg->max_players */
	struct game_view_character *characters; /* parallel to cfg->characters */
	int *spawn_order; /* character indices in the order they came into play */
	int nspawned;
	struct game_view_card *cards; /* parallel to cfg->cards */
	int *waste;                   /* the waste pile, bottom first */
	int nwaste;
	struct game_view_location *locations; /* parallel to cfg->locations */
};

/* A view sized for cfg (borrowed: it must outlive the view), in one
 * allocation; its contents are set by game_view_of or by a client filling
 * it from its events. Never NULL (out of memory aborts). */
struct game_view *game_view_new(const struct config *cfg);
void game_view_free(struct game_view *v);

/* What `player` (or GAME_NO_PLAYER: a watcher) has been told of g, into v
 * (sized for g's configuration). v borrows the players' names from g. */
void game_view_of(const struct game *g, int player, struct game_view *v);

/* The player id the viewer has in game_from_view's games: v->me, or during
 * the registration 0 for a viewer that has registered (the built game has
 * that one player). */
int game_view_seat(const struct game_view *v);

/*
 * A full game, in v->rules, agreeing with everything in v:
 * game_view_of(result, game_view_seat(v)) equals v, and
 * game_legal_commands(result, game_view_seat(v)) lists what the real game
 * lists for the viewer. What v does not hold is drawn from a generator
 * seeded with sample_seed, which then goes on as the game's own (its future
 * dice and infection rolls): the order of each pile, the crises to come, the
 * characters not in play and their order, the characters offered to
 * another player, and -- when the turn is not the viewer's -- whose turn it
 * is (the first player in the game but the viewer) and the dice left (a
 * fresh roll for that player and everyone after it). v must be one a game
 * can have (game_view_check) whose pile cards each lie in the pile they
 * were dealt to; NULL when it is not. The game borrows v->cfg; free it
 * with game_free.
 */
struct game *game_from_view(const struct game_view *v, int64_t sample_seed);

/* NULL when v is a view a game can have (every index in range, every card
 * in one place it can be, the turn's facts known only for the viewer's own
 * turn, someone to wait for, ...; only whether each card in a pile was
 * dealt to that pile is left to game_from_view), else what is wrong,
 * written into buf.
 * game_view_of's views always are; a view filled in by a client half way
 * through a step (an event whose consequences have not come yet) need not be. */
const char *game_view_check(const struct game_view *v, char *buf, size_t n);

/* NULL when a and b hold the same facts (names compared as strings), else
 * a description of the first difference, written into buf. a and b may be
 * sized for two parses of one configuration (a client's and a server's).
 * For tests and for clients that check their own view against a server's. */
const char *game_view_diff(const struct game_view *a, const struct game_view *b, char *buf,
                           size_t n);

#endif
