/*
 * bench: the scripted client. It plays a generated "feed" configuration
 * (cfggen.c) over real connections with a fixed mix of commands per turn:
 *
 *   UseCard(unknown card)        fails  -> CommandFailed, ActNow
 *   Move(to its own location)    fails  -> CommandFailed, ActNow
 *   Barricade(own entrance)      works  -> Barricaded, ActNow
 *   UseAbility(FEED)             works  -> AbilityUsed, ActNow
 *   Attack(entrance 99)          fails  -> CommandFailed, ActNow
 *   Search(in the colony)        fails  -> CommandFailed, ActNow
 *   EndTurn                      works  -> next turn (or colony phase, next
 *                                          round, dice), ActNow to the next
 *
 * A command is complete when the ActNow that follows it arrives (on whatever
 * connection), or GameEnd.
 */
#include "bench.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const mix_names[SCRIPT_MIX_LEN] = {
	"UseCard (fails)", "Move (fails)",   "Barricade (ok)", "UseAbility FEED (ok)",
	"Attack (fails)",  "Search (fails)", "EndTurn",
};

const char *script_mix_name(int i)
{
	return i >= 0 && i < SCRIPT_MIX_LEN ? mix_names[i] : "setup";
}

void script_open(struct script *s, int port, int nplayers)
{
	memset(s, 0, sizeof *s);
	if (nplayers > SCRIPT_MAX_PLAYERS)
		die("too many players");
	s->nplayers = nplayers;
	s->pending_on = -1;
	s->act_now_for = -1;
	for (int i = 0; i < nplayers; i++) {
		s->fds[i] = tcp_connect(port);
		if (s->fds[i] < 0)
			die("connect to port %d: %s", port, strerror(errno));
	}
	s->sel_for = -1;
}

void script_close(struct script *s)
{
	for (int i = 0; i < s->nplayers; i++) {
		if (s->fds[i] >= 0)
			close(s->fds[i]);
		s->fds[i] = -1;
		linebuf_free(&s->in[i]);
	}
}

static void complete(struct script *s)
{
	if (s->pending_kind >= 0) {
		s->commands++;
		if (s->pending_failed)
			s->failed++;
	}
	s->pending_on = -1;
}

bool script_feed(struct script *s, int i, const char *line)
{
	char name[48];
	if (!wire_event_name(line, name, sizeof name))
		return false;
	int v = 0, p = 0;
	switch (name[0]) {
	case 'A':
		if (strcmp(name, "ActNow") == 0) {
			s->act_now_for = i;
			if (s->pending_on >= 0) {
				complete(s);
				return true;
			}
		}
		return false;
	case 'C':
		if (strcmp(name, "Config") == 0) {
			s->registered++;
			if (s->pending_on == i && s->pending_kind == -1) {
				complete(s);
				return true;
			}
		} else if (strcmp(name, "Characters") == 0) {
			wire_int(line, "characterId0", &s->offer[0]);
			wire_int(line, "characterId1", &s->offer[1]);
			s->sel_for = i;
			if (s->pending_on >= 0 && s->pending_kind == -2) {
				complete(s);
				return true;
			}
		} else if (strcmp(name, "CharacterSpawned") == 0) {
			if (wire_int(line, "player", &p) && wire_int(line, "characterId", &v) &&
			    p >= 0 && p < s->nplayers && s->nchars[p] < 2)
				s->chars[p][s->nchars[p]++] = v;
		} else if (strcmp(name, "CommandFailed") == 0) {
			if (s->pending_on == i)
				s->pending_failed = true;
		}
		return false;
	case 'G':
	case 'R':
		if (strcmp(name, "GameEnd") == 0 || strcmp(name, "RegistrationAborted") == 0) {
			s->over = true;
			if (s->pending_on >= 0) {
				complete(s);
				return true;
			}
		}
		return false;
	default:
		return false;
	}
}

static void send_cmd(struct script *s, int i, int kind, const struct cmd *c)
{
	char buf[256];
	size_t n = wire_encode_cmd(c, RULES_BASE, buf, sizeof buf);
	s->pending_on = i;
	s->pending_kind = kind;
	s->pending_failed = false;
	s->sent_ns = now_ns();
	write_all(s->fds[i], buf, n);
}

bool script_send_next(struct script *s)
{
	if (s->over || s->pending_on >= 0)
		return false;
	struct cmd c;
	memset(&c, 0, sizeof c);
	if (s->registered < s->nplayers) {
		char name[32];
		snprintf(name, sizeof name, "bench%d", s->registered);
		c.type = CMD_REGISTER;
		c.name = name;
		send_cmd(s, s->registered, -1, &c);
		return true;
	}
	if (s->sel_for >= 0) {
		int i = s->sel_for;
		s->sel_for = -1;
		c.type = CMD_SELECT_CHARACTERS;
		c.character = s->offer[0];
		c.character2 = s->offer[1];
		send_cmd(s, i, -2, &c);
		return true;
	}
	if (s->act_now_for < 0)
		return false;
	int p = s->act_now_for;
	s->act_now_for = -1;
	int kind = s->step[p]++ % SCRIPT_MIX_LEN;
	int ch = s->nchars[p] > 0 ? s->chars[p][0] : 0;
	switch (kind) {
	case 0:
		c.type = CMD_USE_CARD;
		c.card = 999999;
		break;
	case 1:
		c.type = CMD_MOVE;
		c.character = ch;
		c.location = CFG_COLONY_ID;
		break;
	case 2:
		c.type = CMD_BARRICADE;
		c.character = ch;
		c.entrance = p;
		break;
	case 3:
		c.type = CMD_USE_ABILITY;
		c.character = ch;
		break;
	case 4:
		c.type = CMD_ATTACK;
		c.character = ch;
		c.entrance = 99;
		break;
	case 5:
		c.type = CMD_SEARCH;
		c.character = ch;
		break;
	default:
		c.type = CMD_END_TURN;
		break;
	}
	send_cmd(s, p, kind, &c);
	return true;
}

bool script_on_readable(struct script *s, int i, uint64_t *done_ns)
{
	ssize_t n = linebuf_fill(&s->in[i], s->fds[i]);
	if (n == 0) {
		bool had = s->pending_on >= 0;
		s->over = true;
		close(s->fds[i]);
		s->fds[i] = -1;
		if (had) {
			complete(s);
			*done_ns = now_ns();
			return true;
		}
		return false;
	}
	bool done = false;
	size_t len;
	char *line;
	while ((line = linebuf_next(&s->in[i], &len)) != NULL) {
		if (script_feed(s, i, line) && !done) {
			done = true;
			*done_ns = now_ns();
		}
	}
	return done;
}

uint64_t script_wait_blocking(struct script *s)
{
	struct pollfd pf[SCRIPT_MAX_PLAYERS];
	uint64_t t0 = s->sent_ns, t1 = 0;
	bool done = false;
	/* lines already buffered first */
	for (int i = 0; i < s->nplayers && !done; i++) {
		size_t len;
		char *line;
		while ((line = linebuf_next(&s->in[i], &len)) != NULL)
			if (script_feed(s, i, line) && !done) {
				done = true;
				t1 = now_ns();
			}
	}
	while (!done) {
		for (int i = 0; i < s->nplayers; i++) {
			pf[i].fd = s->fds[i];
			pf[i].events = POLLIN;
			pf[i].revents = 0;
		}
		int r = poll(pf, (nfds_t)s->nplayers, 10000);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("server did not answer within 10 s");
		for (int i = 0; i < s->nplayers; i++)
			if (pf[i].revents && s->fds[i] >= 0 && script_on_readable(s, i, &t1))
				done = true;
	}
	/* read what the other players' connections got for this command, so
	 * that the next round trip starts with nothing stale to read */
	for (;;) {
		for (int i = 0; i < s->nplayers; i++) {
			pf[i].fd = s->fds[i];
			pf[i].events = POLLIN;
			pf[i].revents = 0;
		}
		if (poll(pf, (nfds_t)s->nplayers, 0) <= 0)
			break;
		uint64_t t;
		for (int i = 0; i < s->nplayers; i++)
			if (pf[i].revents && s->fds[i] >= 0)
				script_on_readable(s, i, &t);
	}
	return t1 - t0;
}

/* Wait (at most 10 s) for input on any connection and feed it. */
static void pump_blocking(struct script *s)
{
	struct pollfd pf[SCRIPT_MAX_PLAYERS];
	for (int i = 0; i < s->nplayers; i++) {
		pf[i].fd = s->fds[i];
		pf[i].events = POLLIN;
		pf[i].revents = 0;
	}
	int r = poll(pf, (nfds_t)s->nplayers, 10000);
	if (r == 0)
		die("server did not answer within 10 s");
	uint64_t t;
	for (int i = 0; i < s->nplayers && r > 0; i++)
		if (pf[i].revents && s->fds[i] >= 0)
			script_on_readable(s, i, &t);
}

void script_setup_blocking(struct script *s)
{
	while (!s->over) {
		/* the first ActNow after the selections: the game runs */
		if (s->registered == s->nplayers && s->act_now_for >= 0 && s->pending_on < 0)
			return;
		if (script_send_next(s))
			script_wait_blocking(s);
		else
			pump_blocking(s);
	}
	die("game over during setup");
}
