/*
 * dispatch: the one place where the game changes. It takes the entries of
 * the command queue in arrival order, applies each to the game
 * (game_apply, game_timeout, game_disconnect; nothing else calls them) and
 * hands the resulting events to the broadcaster.
 *
 *   net --lines, timeouts, losses--> cmdq --> dispatch --> game
 *                                                 `--events--> bcast --> session --> sink
 *
 * With sessions (session.h) a lost player may keep its seat, a Reconnect
 * hands it a new connection, and after the end of the game the entries that
 * still come are answered without changing the game.
 *
 * No sockets, clocks or globals: tests, the benchmark and a replay drive it
 * with a recording sink. core.h assembles it with the game, the
 * broadcaster and the session layer.
 */
#ifndef SOPRA_DISPATCH_H
#define SOPRA_DISPATCH_H

#include <stdbool.h>
#include <stdio.h>

#include "sopra/bcast.h"
#include "sopra/cmdq.h"
#include "sopra/game.h"
#include "sopra/session.h"

/* What a drain did, for whoever runs the --timeout timer. */
struct dispatch_result {
	int entries;        /* how many entries were dispatched */
	bool restart_timer; /* a command was applied: the wait starts afresh */
	bool game_over;     /* the game is over; undispatched entries were dropped */
	bool halted;        /* an entry could not be recorded: see dispatch_hooks.record */
};

/* How many failures of one player in one wait are recorded (journaled and
 * kept in its history) when the core is made with a budget (docs/journal.md,
 * "What is recorded"). */
#define DISPATCH_FAILURE_BUDGET 16

/* Called with an entry and the player it comes from (or GAME_NO_PLAYER, as
 * resolved when the entry was taken). */
typedef void (*dispatch_observer)(void *ctx, const struct cmdq_entry *e, int player);

/* Told, after the entry was applied and before any of its events is
 * routed, whether the entry is recorded (dispatch_entry). Returns false if
 * a recorded entry could not be recorded (the journal cannot be written):
 * then none of its events is routed and the dispatcher halts. */
typedef bool (*dispatch_recorder)(void *ctx, const struct cmdq_entry *e, int player, bool recorded);

/* Who watches the dispatcher (e.g. the journal). Any member may be NULL. */
struct dispatch_hooks {
	dispatch_observer before; /* before the entry is applied */
	dispatch_recorder record; /* applied, nothing of it routed yet (write-ahead) */
	dispatch_observer after;  /* after its events were handed to the broadcaster */
	void *ctx;
};

struct dispatcher {
	struct game *game;        /* borrowed */
	struct bcast *bcast;      /* borrowed */
	struct session *sessions; /* borrowed */
	FILE *log;                /* borrowed; NULL: silent */
	struct dispatch_hooks hooks;
	struct game_event_list events; /* owned scratch, reused */
	char msg[128];                 /* a Reconnect's CommandFailed message */
	/* after the end: the connection closed after its Reconnect's history,
	 * whose further entries are dropped (0: none) */
	int closed_comm;
	/* the failure budget (0: every entry is recorded) and each player's
	 * recorded failures in the current wait, which began when
	 * game_waiting_for became `wait` */
	int failure_budget;
	int *failures; /* owned, indexed by player id */
	int cap_failures;
	int wait;
	bool halted; /* an entry could not be recorded: nothing more is applied */
};

/* A dispatcher for game, whose events go to bcast, with the session layer
 * of that broadcaster (all borrowed; they must outlive it). */
void dispatch_init(struct dispatcher *d, struct game *game, struct bcast *bcast,
                   struct session *sessions, FILE *log);
void dispatch_free(struct dispatcher *d);

/* Who watches (the journal); replaces the hooks before. */
void dispatch_set_hooks(struct dispatcher *d, const struct dispatch_hooks *hooks);

/* Record at most budget (>= 0; 0: no limit) failures per player and wait
 * (below). Set before the first entry. */
void dispatch_set_failure_budget(struct dispatcher *d, int budget);

/*
 * What is recorded. With a failure budget, an entry whose whole effect is
 * a CommandFailed to its sender (and the ActNow that prompts the active
 * player again after it) -- the game is exactly as it was -- is recorded
 * only if it comes from a player that has had fewer than the budget of
 * recorded failures since the game last changed whom it waits for; a
 * stranger's failures and a lost stranger's connection are never
 * recorded. An entry that is not recorded is still answered, but the
 * record hook is told so (the journal leaves it out) and the session layer
 * keeps none of its deliveries. A replay of the recorded entries therefore
 * rebuilds the same game, the same budgets and the same histories.
 * Without a budget every entry is recorded (journals written before it).
 */

/* Apply one entry. Returns true if it restarts the --timeout wait.
 * With sessions, entries after the end of the game change the game no
 * more; only a Reconnect does something: it delivers the player's history
 * (ending with the end) and closes the connection after it (docs/protocol.md,
 * "After the end"). When an entry ends the game, the session layer is told
 * (session_note_end). */
bool dispatch_entry(struct dispatcher *d, const struct cmdq_entry *e);

/* Apply and remove the queue's entries in order until it is empty, the
 * dispatcher halted (the rest stays queued) or the game is over (then the
 * rest is dropped: nobody may act after GameEnd).
 * With sessions, a drain that starts after the end applies every entry. */
struct dispatch_result dispatch_drain(struct dispatcher *d, struct cmdq *q);

#endif
