/*
 * bench: the scripted client's commands for the fan-out floor (fanout.c),
 * so that a floor game is paced and counted like a sopra-server game
 * (density.c). The connections and the lines that come back are script.c's:
 * the floor answers like sopra-server (an ActNow, first on the connection of
 * the player who acts next; CommandFailed on the sender's), so
 * script_on_readable() completes the commands. Only what is sent differs:
 * the per-turn mix of script.c as one-byte commands,
 *
 *   UseCard, Move, Attack, Search (fail)  "S\n"       the sender gets 2 lines
 *   Barricade, UseAbility (work)          "B<p>\n"    every connection gets
 *                                                      an event, p the ActNow
 *   EndTurn                               "B<p+1>\n"  the same, the next
 *                                                      player gets the ActNow
 *
 * and no registration or selection: the floor game starts at once.
 */
#include "bench.h"

#include <string.h>

/* Slot i of script.c's per-turn mix: 'S' fails, 'B' works, 'E' ends the turn. */
static const char floor_mix[SCRIPT_MIX_LEN] = {'S', 'S', 'B', 'B', 'S', 'S', 'E'};

void floor_script_start(struct script *s)
{
	s->registered = s->nplayers;
	s->act_now_for = 0; /* the first player (first connection) acts */
}

bool floor_script_send_next(struct script *s)
{
	if (s->over || s->pending_on >= 0 || s->act_now_for < 0)
		return false;
	int p = s->act_now_for;
	s->act_now_for = -1;
	int kind = s->step[p]++ % SCRIPT_MIX_LEN;
	char cmd[4] = "S\n";
	size_t n = 2;
	if (floor_mix[kind] != 'S') {
		int next = floor_mix[kind] == 'E' ? (p + 1) % s->nplayers : p;
		cmd[0] = 'B';
		cmd[1] = (char)('0' + next);
		cmd[2] = '\n';
		n = 3;
	}
	s->pending_on = p;
	s->pending_kind = kind;
	s->pending_failed = false;
	s->sent_ns = now_ns();
	write_all(s->fds[p], cmd, n);
	return true;
}
