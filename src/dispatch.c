/* dispatch: apply queue entries to the game, route the events
 * (include/sopra/dispatch.h). */
#include "sopra/dispatch.h"
#include "sopra/log.h"

#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sopra/game_event.h"
#include "sopra/xalloc.h"

/* One log line (log.h). */
#define dispatch_log(d, ...) sopra_log((d)->log, "", __VA_ARGS__)

void dispatch_init(struct dispatcher *d, struct game *game, struct bcast *bcast,
                   struct session *sessions, FILE *log)
{
	assert(game && bcast && sessions);
	*d = (struct dispatcher){.game = game,
	                         .bcast = bcast,
	                         .sessions = sessions,
	                         .log = log,
	                         .wait = game_waiting_for(game)};
	game_event_list_init(&d->events);
}

void dispatch_set_failure_budget(struct dispatcher *d, int budget)
{
	assert(budget >= 0);
	d->failure_budget = budget;
}

void dispatch_set_hooks(struct dispatcher *d, const struct dispatch_hooks *hooks)
{
	d->hooks = hooks ? *hooks : (struct dispatch_hooks){0};
}

void dispatch_free(struct dispatcher *d)
{
	game_event_list_free(&d->events);
	free(d->failures);
}

/* A decoded command from connection comm_id. Returns whether it restarts
 * the --timeout: during registration any command does; afterwards only one
 * from a player still in the game (behaviour.md section 1), so a stranger
 * cannot keep a stalled game waiting. */
static bool apply_command(struct dispatcher *d, const struct cmdq_entry *e, int player)
{
	bool registration = game_waiting_for(d->game) == GAME_WAIT_ANY;
	int p = game_apply(d->game, player, &e->pc.cmd, &d->events);
	if (p >= 0 && p != player) {
		bcast_join(d->bcast, p, e->comm_id);
		dispatch_log(d, "conn %d: registered as player %d", e->comm_id, p);
	}
	return registration || bcast_in_game(d->bcast, player);
}

/* A line that did not decode: CommandFailed to its sender, nothing else. */
static void answer_bad_line(struct dispatcher *d, const struct cmdq_entry *e)
{
	struct game_event *ev = game_event_list_push(&d->events, GEV_COMMAND_FAILED, GEV_TO_SENDER);
	ev->str = e->error;
}

static void apply_timeout(struct dispatcher *d)
{
	int w = game_waiting_for(d->game);
	if (w == GAME_WAIT_NONE)
		return;
	if (w == GAME_WAIT_ANY)
		dispatch_log(d, "timeout during registration");
	else
		dispatch_log(d, "timeout waiting for player %d", w);
	game_timeout(d->game, &d->events);
}

/* The connection is gone (or closes after draining): its player, if still
 * in the game, is reported to the game. */
static void apply_lost(struct dispatcher *d, const struct cmdq_entry *e)
{
	int p = bcast_conn_lost(d->bcast, e->comm_id);
	if (e->drain)
		bcast_close_conn(d->bcast, e->comm_id);
	if (p < 0)
		return;
	if (session_keeps_seat(d->sessions)) {
		dispatch_log(d, "player %d: connection lost; away, may reconnect", p);
		session_away(d->sessions, p);
		return;
	}
	dispatch_log(d, "player %d: connection lost", p);
	game_disconnect(d->game, p, &d->events);
}

/* A Reconnect (sessions): the sender takes over the away player whose
 * secret it names; it gets the player's history first. Returns the player,
 * or -1 after a CommandFailed to the sender. */
static int apply_reconnect(struct dispatcher *d, const struct cmdq_entry *e, int player)
{
	int p = session_reconnect(d->sessions, e->comm_id, player, e->pc.secret, d->msg,
	                          sizeof d->msg);
	if (p >= 0) {
		dispatch_log(d, "conn %d: reconnected as player %d", e->comm_id, p);
		return p;
	}
	struct game_event *ev = game_event_list_push(&d->events, GEV_COMMAND_FAILED, GEV_TO_SENDER);
	ev->str = d->msg;
	return -1;
}

/* A player's grace is over: if still away, the game is told now. */
static void apply_grace_over(struct dispatcher *d, const struct cmdq_entry *e)
{
	int p = e->player;
	if (!session_is_away(d->sessions, p))
		return;
	dispatch_log(d, "player %d: did not reconnect in time", p);
	session_grace_over(d->sessions, p);
	game_disconnect(d->game, p, &d->events);
}

/* An entry after the end of the game (sessions only; docs/protocol.md,
 * "After the end"). The game changes no more: a command is answered by it
 * ("the game is over"), a bad line by its message, a lost connection is
 * only forgotten, timeouts and graces are void. A Reconnect of a player
 * still in the game delivers its history, which ends with the end; then
 * the connection closes after flushing, and the rest of what it sent
 * (queued right behind the Reconnect) is dropped. The seat is free again:
 * the player may come back once more. */
static void apply_after_end(struct dispatcher *d, const struct cmdq_entry *e, int player)
{
	if (e->comm_id != 0 && e->comm_id == d->closed_comm)
		return;
	switch (e->kind) {
	case CMDQ_COMMAND:
		apply_command(d, e, player);
		break;
	case CMDQ_BAD_LINE:
		answer_bad_line(d, e);
		break;
	case CMDQ_LOST:
		bcast_conn_lost(d->bcast, e->comm_id);
		if (e->drain)
			bcast_close_conn(d->bcast, e->comm_id);
		break;
	case CMDQ_RECONNECT:
		if (apply_reconnect(d, e, player) >= 0) {
			dispatch_log(d, "conn %d: the game is over; closing it after the history",
			             e->comm_id);
			bcast_conn_lost(d->bcast, e->comm_id);
			bcast_close_conn(d->bcast, e->comm_id);
			d->closed_comm = e->comm_id;
		}
		break;
	case CMDQ_TIMEOUT:
	case CMDQ_GRACE_OVER:
		break;
	}
}

/* An entry while the game runs. Returns whether it restarts the --timeout
 * wait. */
static bool apply_entry(struct dispatcher *d, const struct cmdq_entry *e, int player)
{
	switch (e->kind) {
	case CMDQ_COMMAND:
		return apply_command(d, e, player);
	case CMDQ_BAD_LINE:
		answer_bad_line(d, e);
		return false;
	case CMDQ_TIMEOUT:
		apply_timeout(d);
		return true;
	case CMDQ_LOST:
		apply_lost(d, e);
		return false;
	case CMDQ_RECONNECT:
		apply_reconnect(d, e, player);
		return false;
	case CMDQ_GRACE_OVER:
		apply_grace_over(d, e);
		return false;
	}
	return false;
}

static void check_invariants(const struct dispatcher *d)
{
#ifdef SOPRA_CHECK_INVARIANTS
	const char *bad = game_check_invariants(d->game);
	if (bad) {
		fprintf(d->log ? d->log : stderr, "sopra-server: invariant violated: %s\n", bad);
		abort();
	}
#else
	(void)d;
#endif
}

/* The game ended with entry e: say how, and who or what caused it. */
static void log_outcome(const struct dispatcher *d, const struct cmdq_entry *e, int player)
{
	const char *why = game_end_reason(d->game);
	if (!why)
		why = "over";
	char cause[96] = "";
	if (e->kind == CMDQ_TIMEOUT)
		snprintf(cause, sizeof cause, " by the timeout");
	else if (e->kind == CMDQ_COMMAND && player >= 0)
		snprintf(cause, sizeof cause, " by player %d's %s", player,
		         cmd_name(e->pc.cmd.type));
	else if (e->kind == CMDQ_COMMAND)
		snprintf(cause, sizeof cause, " by conn %d's %s (not registered)", e->comm_id,
		         cmd_name(e->pc.cmd.type));
	else if (e->kind == CMDQ_LOST)
		snprintf(cause, sizeof cause, " after conn %d was lost", e->comm_id);
	else if (e->kind == CMDQ_GRACE_OVER)
		snprintf(cause, sizeof cause, " after player %d's grace", e->player);
	dispatch_log(d, "game over: %s%s; round %d, %d player(s) registered", why, cause,
	             game_round(d->game), game_player_count(d->game));
}

/* Whether the entry's whole effect is its sender's CommandFailed, and the
 * ActNow that prompts the active player again after a failed command: the
 * game refuses a command without changing anything (game.h). */
static bool only_failed(const struct dispatcher *d, const struct cmdq_entry *e, int player)
{
	if (e->kind != CMDQ_COMMAND && e->kind != CMDQ_BAD_LINE && e->kind != CMDQ_RECONNECT)
		return false;
	const struct game_event_list *l = &d->events;
	if (l->n == 0 || l->v[0].type != GEV_COMMAND_FAILED || l->v[0].to != GEV_TO_SENDER)
		return false;
	for (size_t i = 1; i < l->n; i++)
		if (l->v[i].type != GEV_ACT_NOW || player < 0 || l->v[i].to != player)
			return false;
	return true;
}

/* Whether the applied entry e of player (GAME_NO_PLAYER: a stranger) is
 * recorded (dispatch.h, "What is recorded"); a recorded failure is counted
 * against the player's budget. */
static bool decide_recorded(struct dispatcher *d, const struct cmdq_entry *e, int player)
{
	if (d->failure_budget == 0)
		return true;
	if (e->kind == CMDQ_LOST && player < 0)
		return false; /* a stranger's: the game never knew it */
	if (!only_failed(d, e, player))
		return true;
	if (player < 0)
		return false;
	d->failures = xgrow_zeroed(d->failures, &d->cap_failures, player, sizeof *d->failures);
	if (d->failures[player] >= d->failure_budget)
		return false;
	d->failures[player]++;
	return true;
}

/* A new wait begins whenever whom the game waits for changes: every
 * player's failure budget is whole again. */
static void note_wait(struct dispatcher *d)
{
	int w = game_waiting_for(d->game);
	if (w == d->wait)
		return;
	d->wait = w;
	if (d->failures)
		memset(d->failures, 0, (size_t)d->cap_failures * sizeof *d->failures);
}

bool dispatch_entry(struct dispatcher *d, const struct cmdq_entry *e)
{
	assert(e && e->comm_id >= 0 && !d->halted);
	bool was_over = game_is_over(d->game);
	int player = bcast_player_of(d->bcast, e->comm_id);
	if (player < 0)
		player = GAME_NO_PLAYER;
	if (d->hooks.before)
		d->hooks.before(d->hooks.ctx, e, player);
	game_event_list_clear(&d->events);
	bool restart = false;
	if (was_over && session_on(d->sessions))
		apply_after_end(d, e, player);
	else
		restart = apply_entry(d, e, player);
	bool recorded = decide_recorded(d, e, player);
	if (d->hooks.record && !d->hooks.record(d->hooks.ctx, e, player, recorded)) {
		/* nothing of it leaves: the game in memory is past the record */
		dispatch_log(d, "halted: conn %d's entry could not be recorded", e->comm_id);
		d->halted = true;
		return false;
	}
	bool has_sender =
	        e->kind == CMDQ_COMMAND || e->kind == CMDQ_BAD_LINE || e->kind == CMDQ_RECONNECT;
	session_keep(d->sessions, recorded);
	bcast_route(d->bcast, has_sender ? e->comm_id : 0, &d->events);
	session_keep(d->sessions, true);
	note_wait(d);
	check_invariants(d);
	if (!was_over && game_is_over(d->game)) {
		log_outcome(d, e, player);
		session_note_end(d->sessions);
	}
	if (d->hooks.after)
		d->hooks.after(d->hooks.ctx, e, player);
	return restart;
}

struct dispatch_result dispatch_drain(struct dispatcher *d, struct cmdq *q)
{
	struct dispatch_result r = {0};
	/* sessions, the game over already: every entry goes to apply_after_end */
	bool after_end = game_is_over(d->game) && session_on(d->sessions);
	for (const struct cmdq_entry *e;
	     !d->halted && (after_end || !r.game_over) && (e = cmdq_front(q)) != NULL;) {
		if (dispatch_entry(d, e))
			r.restart_timer = true;
		cmdq_pop(q);
		r.entries++;
		r.game_over = !d->halted && game_is_over(d->game);
	}
	r.halted = d->halted;
	if (r.game_over && !after_end)
		cmdq_clear(q);
	return r;
}
