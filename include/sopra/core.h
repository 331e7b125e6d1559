/*
 * core: one game and everything that serves it, without sockets: the game,
 * the command queue, the dispatcher, the broadcaster and the session layer,
 * assembled in one place for the live server (net.h), for a journal's
 * replay and resume (journal.h) and for the bots' in-process table alike.
 *
 *   entries --> cmdq --> dispatch --> game
 *                            `--events--> bcast --> session --> out (the sink it is given)
 *
 * What the outside needs from the core it gets through the sink given at
 * construction (deliveries, who joined, what to close) and the session
 * layer's timer (graces); what the core needs from the outside it is told
 * by calls: entries into the queue, core_drain.
 */
#ifndef SOPRA_CORE_H
#define SOPRA_CORE_H

#include <stdint.h>
#include <stdio.h>

#include "sopra/bcast.h"
#include "sopra/cmdq.h"
#include "sopra/config.h"
#include "sopra/dispatch.h"
#include "sopra/game.h"
#include "sopra/session.h"

struct core_params {
	const struct config *cfg; /* borrowed; must outlive the core */
	int64_t seed;
	enum game_rules rules;
	struct session_opts sessions; /* .secret NULL: no sessions */
	/* failures recorded per player and wait (dispatch_set_failure_budget;
	 * DISPATCH_FAILURE_BUDGET for a new game, 0: all, as journals written
	 * before the budget were) */
	int failure_budget;
	FILE *log; /* borrowed; NULL: silent */
};

struct core;

/* A new game of p's configuration, seed and rules, whose deliveries go to
 * out (out.send required). Aborts on out of memory; never NULL. */
struct core *core_new(const struct core_params *p, struct bcast_sink out);
/* NULL is fine. */
void core_free(struct core *c);

/* The parts, for reading (the game also for the journal's hooks). */
struct game *core_game(const struct core *c);
const struct bcast *core_bcast(const struct core *c);
const struct session *core_sessions(const struct core *c);

/* The player still in the game on connection comm_id, or -1
 * (bcast_player_of). */
int core_player_of(const struct core *c, int comm_id);

/* The queue, for its owner to push entries into (cmdq.h). */
struct cmdq *core_queue(struct core *c);

/* Who watches the dispatcher (the journal); NULL: nobody. */
void core_set_hooks(struct core *c, const struct dispatch_hooks *hooks);

/* Dispatch the queued entries (dispatch_drain). */
struct dispatch_result core_drain(struct core *c);

/* Dispatch one entry now, past the queue (a journal's entries). */
void core_feed(struct core *c, const struct cmdq_entry *e);

/* A journal's resume record: every player in the game keeps its seat
 * without a connection (session_all_away). */
void core_all_away(struct core *c);

/* Resume after the journal was fed: every player away, with grace_sec (> 0)
 * seconds to come back while the game goes on (session_resume). */
void core_resume(struct core *c, int grace_sec);

#endif
