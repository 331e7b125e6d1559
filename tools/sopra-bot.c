/*
 * sopra-bot: a client that registers with a sopra-server, plays random but
 * mostly legal moves until the game ends, and checks what the server says.
 *
 *   sopra-bot --port N [--host H] [--seed S] [--name NAME] [--start]
 *             [--invalid PERCENT] [--leave PERCENT] [--disconnect PERCENT]
 *             [--rules base|revised]
 *             [--quiet] [--max-events N] [--idle SECONDS] [--log FILE]
 *             [--stream FILE] [--reconnect SECONDS]
 *
 * It speaks the NDJSON protocol of ../shared/spec/protocol.md over one plain
 * blocking socket (poll for the optional idle timer). Every event goes
 * through the client model (client/model.c): it is checked against the
 * protocol (known name, exactly the documented parameters with the right
 * types) and folded into the model's board (zombies and barricades per
 * entrance, characters and their places, every player's hand, waste, food,
 * morale, children, round numbers), which rejects anything the server must
 * never do; the bot reports that as a protocol violation. Then the bot
 * reacts to the event: one handler per event it answers (see reactions[]).
 *
 * Decisions come from the bot's own splitmix64 generators seeded by --seed
 * (never the game's), drawn from only in reaction to events: the same seed
 * and the same events give the same commands, also when the bot re-reads the
 * events after a reconnect. On Characters it selects two of the four
 * offered, on ActNow it sends one plausible command (or, with --invalid, a
 * deliberately bad one: malformed JSON, wrong types, unknown ids, commands
 * not allowed in the phase; plus now and then a command out of turn).
 *
 * With --reconnect it comes back when the connection drops before the end
 * (the server was restarted with --resume, say): it connects again, sends
 * Reconnect with the secret of its Session line, re-reads the history the
 * server sends (it must begin with every line received before) into a fresh
 * model, and decides whether the command it had sent last was lost (see
 * "coming back" below).
 *
 * stdout: one line "registered NAME" once the Config event arrived (tools
 * such as soak wait for it before starting the next bot); with --lurk
 * "connected NAME" once connected. stderr: the trace
 * (unless --quiet), errors, with --reconnect one line per return, and
 * finally one summary line:
 *   bot NAME: events=N commands=M failed=K result=R
 * (with --reconnect followed by " reconnects=N resent=N answered=N cut=N").
 * with R one of win, lose (GameEnd), left (Left for us), aborted
 * (RegistrationAborted), closed (the server closed first), disconnected (we
 * hung up, --disconnect), dropped (closed after our over-long line).
 *
 * Exit codes: 0 the game ended (GameEnd, RegistrationAborted, Left, or the
 * server closed the connection); 1 usage or connection error (also: no way
 * back within --reconnect SECONDS); 2 protocol
 * violation (unparseable line, unknown event, bad parameters, an event after
 * GameEnd / Left, an impossible board); 3 stall (--max-events exceeded or no
 * event for --idle seconds); 4 the server accepted a command that must fail
 * or removed this bot without a reason (e.g. its --timeout fired).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "toolutil.h" /* splitmix64, now_sec, tcp_connect_host */
#include "sopra/usage.h"
#include "sopra/xalloc.h"
#include "model.h"

#define EXIT_OK       0
#define EXIT_USAGE    1
#define EXIT_PROTOCOL 2
#define EXIT_STALL    3
#define EXIT_SERVER   4

#define MAX_LINE_IN       ((size_t)32 << 20) /* longest event line we accept */
#define MAX_CMDS_PER_TURN 25
#define MAX_CANDS         512

/* ---- small helpers -------------------------------------------------------- */

static int rnd(uint64_t *s, int n)
{
	return n <= 0 ? 0 : (int)(splitmix64(s) % (uint64_t)n);
}

/* true with probability pct percent */
static bool chance(uint64_t *s, double pct)
{
	if (pct <= 0)
		return false;
	return (double)(splitmix64(s) >> 11) / 9007199254740992.0 * 100.0 < pct;
}

/* ---- the bot ------------------------------------------------------------------------------- */

/* The commands the bot sent (or would send) in reaction to one event. */
struct outbox {
	char *data;
	size_t len, cap;
	bool silent; /* an EndTurn: when the server takes it, we may hear nothing */
};

/* The lines received, as the server re-sends them on Reconnect: the history
 * of the last Reconnect and every line after it. */
struct seen_lines {
	char **line;
	size_t *len;
	long n, cap;
};

/* one command the bot may send on ActNow, with its weight */
struct cand {
	double w;
	char cmd[256];
	enum model_pending pend;
	int pend_char;
};

struct bot {
	/* options */
	const char *host, *name, *log_path;
	char namebuf[64];
	int port;
	uint64_t seed;
	bool start, quiet, revised;
	double invalid_pct, leave_pct, disconnect_pct, stall_pct;
	bool lurk;
	long max_events;
	double idle_sec;      /* 0: no limit of our own */
	double reconnect_sec; /* --reconnect: 0 never comes back */
	const char *stream_path;

	int fd;
	FILE *log, *stream;
	/* decisions draw from rng and rng_oot (and only in reaction to events:
	 * see "coming back"); rng_net only cuts writes in two */
	uint64_t rng, rng_oot, rng_net;
	uint64_t rng_start, rng_oot_start; /* as they were before the first event */
	char *rbuf;
	size_t rlen, rcap;

	long events, commands, failed;
	const char *result; /* NULL while playing */
	bool conn_broken;
	bool quit;          /* we hung up: stop reading */
	bool overlong_sent; /* we sent an over-long line: expect CommandFailed, then EOF */
	bool overlong_answered;
	bool stalled;   /* --stall: we stopped answering, the server's --timeout must remove us */
	bool oot_leave; /* we sent Leave out of turn: it may have been judged in our turn */

	/* the board, folded from the events */
	struct model m;

	int cmds_this_turn;
	bool sent_leave;
	/* strict check: the next event to us must be CommandFailed */
	bool expect_fail;
	char expect_fail_what[160];
	int oot_pending;     /* out-of-turn commands whose CommandFailed has not come yet */
	bool act_after_fail; /* our bad input in turn: act again on its CommandFailed */
	/* Out-of-turn lines are bad input (CommandFailed, nothing else, even if
	 * one is judged in our turn) unless this bot also sends well-formed
	 * commands out of turn: one of those judged in our turn gets its own
	 * ActNow, which we cannot tell from a real one, so two of our commands
	 * can be in flight from then on and the strict checks are off. */
	bool oot_commands, strict_off;

	struct cand cands[MAX_CANDS];
	int ncands;

	/* coming back (--reconnect) */
	char secret[65];         /* from our Session line; "" before it */
	bool announced;          /* "registered NAME" is printed once */
	struct seen_lines seen;  /* every line received (kept with --reconnect) */
	long pos;                /* lines received on this connection */
	bool muted;              /* re-reading lines seen before: commands go to pending */
	struct outbox last_sent; /* sent in reaction to the last event */
	struct outbox pending;   /* the same, re-decided while re-reading the history */
	bool reconnecting;       /* Reconnect sent, no answer yet */
	bool awaiting;           /* is pending answered by the next line? (until await_until) */
	double await_since, await_until, drop_deadline, history_until;
	long lines_at_drop; /* seen.n when the connection dropped while playing */
	bool cut_line;      /* the connection dropped inside a line */
	bool drop_now;      /* give up this connection (Reconnect: "is connected") */
	long reconnects, resent, answered, cuts;
};

/* ---- reporting ------------------------------------------------------------ */

static void summary(const struct bot *b)
{
	fprintf(stderr, "bot %s: events=%ld commands=%ld failed=%ld result=%s", b->name, b->events,
	        b->commands, b->failed, b->result ? b->result : "closed");
	if (b->reconnect_sec > 0)
		fprintf(stderr, " reconnects=%ld resent=%ld answered=%ld cut=%ld", b->reconnects,
		        b->resent, b->answered, b->cuts);
	fputc('\n', stderr);
	fflush(stderr);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4), noreturn))
#endif
static void
die(struct bot *b, int code, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "bot %s: %s: %s\n", b->name,
	        code == EXIT_PROTOCOL ? "protocol violation"
	        : code == EXIT_STALL  ? "stall"
	        : code == EXIT_SERVER ? "server misbehaved"
	                              : "error",
	        msg);
	if (b->log) {
		fprintf(b->log, "! %s\n", msg);
		fflush(b->log);
	}
	if (code == EXIT_PROTOCOL || code == EXIT_SERVER)
		b->result = "error";
	else if (code == EXIT_STALL)
		b->result = "stalled";
	summary(b);
	exit(code);
}

#define VIOLATION(b, ...) die(b, EXIT_PROTOCOL, __VA_ARGS__)

static void trace(const struct bot *b, char dir, const char *line, size_t len)
{
	if (b->log) {
		fprintf(b->log, "%c ", dir);
		for (size_t i = 0; i < len; i++) {
			unsigned char ch = (unsigned char)line[i];
			if (ch == '\n')
				fputs("\\n", b->log);
			else if (ch == '\r')
				fputs("\\r", b->log);
			else if (ch < 0x20 || ch >= 0x7f)
				fprintf(b->log, "\\x%02x", ch);
			else
				fputc(ch, b->log);
		}
		fputc('\n', b->log);
	}
	if (!b->quiet) {
		int shown = len > 300 ? 300 : (int)len;
		while (shown > 0 && (line[shown - 1] == '\n' || line[shown - 1] == '\r'))
			shown--;
		fprintf(stderr, "[%s] %c %.*s%s\n", b->name, dir, shown, line,
		        len > 300 ? "..." : "");
	}
}

/* ---- sending ------------------------------------------------------------------ */

static void outbox_clear(struct outbox *o)
{
	o->len = 0;
	o->silent = false;
}

static void outbox_add(struct outbox *o, const char *data, size_t len)
{
	if (o->len + len > o->cap) {
		o->cap = (o->len + len) * 2;
		o->data = xrealloc(o->data, o->cap);
	}
	memcpy(o->data + o->len, data, len);
	o->len += len;
}

static bool outbox_equal(const struct outbox *a, const struct outbox *b)
{
	return a->len == b->len && a->silent == b->silent &&
	       (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* where a command goes: re-decided while re-reading, or sent */
static struct outbox *outbox_of(struct bot *b)
{
	return b->muted ? &b->pending : &b->last_sent;
}

/* Write the bytes, now and then in two writes: the server must frame by
 * "\n" only. */
static void write_all(struct bot *b, const char *data, size_t len)
{
	if (b->conn_broken)
		return;
	size_t cut = len > 2 && rnd(&b->rng_net, 10) == 0
	                     ? 1 + (size_t)rnd(&b->rng_net, (int)(len - 1))
	                     : len;
	size_t off = 0;
	while (off < len) {
		size_t upto = off < cut ? cut : len;
		ssize_t n = send(b->fd, data + off, upto - off, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* the server closed on us; reading will tell the rest */
			b->conn_broken = true;
			return;
		}
		off += (size_t)n;
	}
}

/* Send (or, while re-reading the history, only note) one or more lines. */
static void send_raw(struct bot *b, const char *data, size_t len)
{
	outbox_add(outbox_of(b), data, len);
	if (b->muted)
		return;
	trace(b, '>', data, len);
	b->commands++;
	write_all(b, data, len);
}

static void send_str(struct bot *b, const char *s)
{
	send_raw(b, s, strlen(s));
}

/* Send one JSON object built from fmt; sometimes with an extra unknown field
 * or a CRLF ending (both must be accepted). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
sendf(struct bot *b, const char *fmt, ...)
{
	char body[1024], line[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(body, sizeof body, fmt, ap);
	va_end(ap);
	size_t n = strlen(body);
	int variant = rnd(&b->rng_oot, 20);
	if (variant == 0 && n > 2 && body[n - 1] == '}') {
		body[n - 1] = '\0';
		snprintf(line, sizeof line, "%s,\"botNote\":{\"x\":[1,2.5,null]}}\n", body);
	} else if (variant == 1) {
		snprintf(line, sizeof line, "%s\r\n", body);
	} else if (variant == 2) {
		snprintf(line, sizeof line, "  %s \t\n", body);
	} else {
		snprintf(line, sizeof line, "%s\n", body);
	}
	send_raw(b, line, strlen(line));
}

/* ---- decisions ------------------------------------------------------------------ */

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static void
cand(struct bot *b, double w, enum model_pending pend, int pend_char, const char *fmt, ...)
{
	if (b->ncands >= MAX_CANDS)
		return;
	struct cand *c = &b->cands[b->ncands++];
	c->w = w;
	c->pend = pend;
	c->pend_char = pend_char;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->cmd, sizeof c->cmd, fmt, ap);
	va_end(ap);
}

/* a random entrance of location l passing the filter: 0 zombie, 1 space */
static int pick_entrance(struct bot *b, int l, int want)
{
	const struct model_location *L = &b->m.locs[l];
	int opts[256], n = 0;
	for (int e = 0; e < L->entrances && n < 256; e++) {
		int z = L->zombies[e], bar = L->barricades[e];
		if ((want == 0 && z > 0) || (want == 1 && z + bar < 3))
			opts[n++] = e;
	}
	return n ? opts[rnd(&b->rng, n)] : -1;
}

static int pick_other_location(struct bot *b, int from)
{
	int opts[256], n = 0;
	for (int l = 0; l < b->m.nlocs && n < 256; l++)
		if (l != from && model_has_room(&b->m, l))
			opts[n++] = l;
	return n ? opts[rnd(&b->rng, n)] : -1;
}

/* a living character at location l, preferring injured ones when injured */
static int pick_char_at(struct bot *b, int l, bool injured)
{
	int opts[256], n = 0;
	for (int i = 0; i < b->m.nchars && n < 256; i++) {
		const struct model_character *c = &b->m.chars[i];
		if (c->alive && c->loc == l && (!injured || c->wounds + c->frost > 0))
			opts[n++] = i;
	}
	return n ? opts[rnd(&b->rng, n)] : -1;
}

static bool holds_type(const struct bot *b, enum model_card_type t)
{
	for (int i = 0; i < b->m.ncards; i++)
		if (b->m.cards[i].holder == b->m.me && b->m.cards[i].type == t)
			return true;
	return false;
}

/* Moves, searches, attacks, barricades, cleaning and abilities of our
 * character i. */
static void character_candidates(struct bot *b, int i, int md)
{
	const struct model *m = &b->m;
	const struct model_character *c = &m->chars[i];
	int l = c->loc;
	const struct model_location *L = &m->locs[l];
	if (!c->moved) {
		int to = pick_other_location(b, l);
		if (to >= 0) {
			if (!b->revised && holds_type(b, MODEL_CARD_FUEL) && rnd(&b->rng, 3) == 0)
				cand(b, 2, MODEL_PEND_NONE, -1,
				     "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d,"
				     "\"fuel\":true}",
				     c->id, m->locs[to].id);
			else if (!b->revised && rnd(&b->rng, 2))
				cand(b, 2, MODEL_PEND_NONE, -1,
				     "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d,"
				     "\"fuel\":false}",
				     c->id, m->locs[to].id);
			else
				cand(b, 2, MODEL_PEND_NONE, -1,
				     "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d}",
				     c->id, m->locs[to].id);
		}
	}
	if (!L->colony && L->deck_left > 0 && md >= c->search)
		cand(b, 4, MODEL_PEND_SEARCH, i, "{\"command\":\"Search\",\"characterId\":%d}",
		     c->id);
	if (md >= c->attack) {
		int e = pick_entrance(b, l, 0);
		if (e >= 0)
			cand(b, 4, MODEL_PEND_ATTACK, i,
			     "{\"command\":\"Attack\",\"characterId\":%d,\"entrance\":%d}", c->id,
			     e);
	}
	if (m->ndice > 0 || (b->revised && model_unspent_equip(m, i, MODEL_CARD_HAMMER) >= 0)) {
		int e = pick_entrance(b, l, 1);
		if (e >= 0)
			cand(b, 1.5, MODEL_PEND_BARRICADE, i,
			     "{\"command\":\"Barricade\",\"characterId\":%d,\"entrance\":%d}",
			     c->id, e);
	}
	if (L->colony && m->waste > 0 && m->ndice > 0 && (b->revised || !m->cleaned_this_round))
		cand(b, m->waste >= 8 ? 5 : 1, MODEL_PEND_CLEAN, i,
		     "{\"command\":\"CleanWaste\",\"characterId\":%d}", c->id);
	switch (c->ability) {
	case MODEL_AB_FEED:
		if (c->uses == 0)
			cand(b, 6, MODEL_PEND_NONE, -1,
			     "{\"command\":\"UseAbility\",\"characterId\":%d}", c->id);
		break;
	case MODEL_AB_HEAL:
		if (c->uses == 0) {
			int t = pick_char_at(b, l, true);
			if (t >= 0)
				cand(b, 3, MODEL_PEND_NONE, -1,
				     "{\"command\":\"UseAbility\",\"characterId\":%d,\"target\":%"
				     "d}",
				     c->id, m->chars[t].id);
		}
		break;
	case MODEL_AB_BARRICADE:
		if (c->uses < c->ab_max) {
			int e = pick_entrance(b, l, 1);
			if (e >= 0)
				cand(b, 2, MODEL_PEND_NONE, -1,
				     "{\"command\":\"UseAbility\",\"characterId\":%d,\"target\":%"
				     "d}",
				     c->id, e);
		}
		break;
	case MODEL_AB_KILL:
		if (c->uses < c->ab_max && l == c->ab_loc && md >= c->ab_die &&
		    (!c->ab_children || m->children > 0)) {
			int e = pick_entrance(b, l, 0);
			if (e >= 0)
				cand(b, 4, MODEL_PEND_KILL, i,
				     "{\"command\":\"UseAbility\",\"characterId\":%d,\"target\":%"
				     "d}",
				     c->id, e);
		}
		break;
	default:
		break;
	}
}

/* Our card k: contributed, or played through our character c where needed. */
static void card_candidates(struct bot *b, int k, const int *mine, int nmine, bool hungry,
                            bool crisis_open)
{
	const struct model *m = &b->m;
	const struct model_card *cd = &m->cards[k];
	if (model_crisis_accepts(m, cd->type) && !(cd->type == MODEL_CARD_FOOD && hungry))
		cand(b, crisis_open ? 5 : 0.3, MODEL_PEND_NONE, -1,
		     "{\"command\":\"ContributeCard\",\"cardId\":%d}", cd->id);
	if (nmine == 0)
		return;
	const struct model_character *c = &m->chars[mine[rnd(&b->rng, nmine)]];
	int l = c->loc;
	switch (cd->type) {
	case MODEL_CARD_FOOD:
		cand(b, hungry ? 8 : 0.5, MODEL_PEND_NONE, -1,
		     "{\"command\":\"UseCard\",\"cardId\":%d}", cd->id);
		break;
	case MODEL_CARD_STUFF:
		if (m->ndice > 0)
			cand(b, 0.7, MODEL_PEND_NONE, -1, "{\"command\":\"UseCard\",\"cardId\":%d}",
			     cd->id);
		break;
	case MODEL_CARD_MEDICINE: {
		int t = pick_char_at(b, l, true);
		if (t >= 0)
			cand(b, 2, MODEL_PEND_NONE, -1,
			     "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,\"target\":"
			     "%d}",
			     cd->id, c->id, m->chars[t].id);
		break;
	}
	case MODEL_CARD_LOCK: {
		int e = pick_entrance(b, l, 1);
		if (e >= 0)
			cand(b, 1, MODEL_PEND_NONE, -1,
			     "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,\"target\":"
			     "%d}",
			     cd->id, c->id, e);
		break;
	}
	case MODEL_CARD_SCISSORS: {
		int e = pick_entrance(b, l, 0);
		if (e >= 0)
			cand(b, 2, MODEL_PEND_NONE, -1,
			     "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,\"target\":"
			     "%d}",
			     cd->id, c->id, e);
		break;
	}
	case MODEL_CARD_FUEL:
		if (b->revised && !c->moved) {
			int to = pick_other_location(b, l);
			if (to >= 0)
				cand(b, 1.5, MODEL_PEND_NONE, -1,
				     "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,"
				     "\"target\":%d}",
				     cd->id, c->id, m->locs[to].id);
		}
		break;
	default: /* equipment */
		if (b->revised) {
			int t = pick_char_at(b, l, false);
			if (t >= 0)
				cand(b, 1.5, MODEL_PEND_NONE, -1,
				     "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,"
				     "\"target\":%d}",
				     cd->id, c->id, m->chars[t].id);
		}
		break;
	}
}

static void build_candidates(struct bot *b)
{
	const struct model *m = &b->m;
	b->ncands = 0;
	int md = model_max_die(m);
	bool hungry = m->food < model_food_need(m);
	bool crisis_open = m->crisis >= 0 && m->contributed < m->crises[m->crisis].required + 2;
	for (int i = 0; i < m->nchars; i++)
		if (m->chars[i].alive && m->chars[i].owner == m->me)
			character_candidates(b, i, md);

	/* cards in hand, played through one of our characters where needed */
	int mine[64], nmine = 0;
	for (int i = 0; i < m->nchars && nmine < 64; i++)
		if (m->chars[i].alive && m->chars[i].owner == m->me)
			mine[nmine++] = i;
	for (int k = 0; k < m->ncards; k++)
		if (m->cards[k].holder == m->me)
			card_candidates(b, k, mine, nmine, hungry, crisis_open);
}

/* A plausible command with random arguments: may well fail. */
static void chaos_command(struct bot *b)
{
	const struct model *m = &b->m;
	int ci = rnd(&b->rng, m->nchars);
	int cid = m->chars[ci].id;
	int li = rnd(&b->rng, m->nlocs);
	int e = rnd(&b->rng, m->locs[li].entrances + 1);
	int card = m->cards[rnd(&b->rng, m->ncards)].id;
	switch (rnd(&b->rng, 9)) {
	case 0:
		sendf(b, "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d}", cid,
		      m->locs[li].id);
		break;
	case 1:
		sendf(b, "{\"command\":\"Search\",\"characterId\":%d}", cid);
		break;
	case 2:
		sendf(b, "{\"command\":\"Attack\",\"characterId\":%d,\"entrance\":%d}", cid, e);
		break;
	case 3:
		sendf(b, "{\"command\":\"Barricade\",\"characterId\":%d,\"entrance\":%d}", cid, e);
		break;
	case 4:
		sendf(b, "{\"command\":\"CleanWaste\",\"characterId\":%d}", cid);
		break;
	case 5:
		sendf(b, "{\"command\":\"ContributeCard\",\"cardId\":%d}", card);
		break;
	case 6:
		sendf(b, "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,\"target\":%d}",
		      card, cid, rnd(&b->rng, 2) ? e : m->chars[rnd(&b->rng, m->nchars)].id);
		break;
	case 7:
		sendf(b, "{\"command\":\"UseAbility\",\"characterId\":%d,\"target\":%d}", cid, e);
		break;
	default:
		sendf(b, "{\"command\":\"UseAbility\",\"characterId\":%d}", cid);
		break;
	}
}

static int unknown_char_id(struct bot *b)
{
	int mx = 0;
	for (int i = 0; i < b->m.nchars; i++)
		if (b->m.chars[i].id > mx)
			mx = b->m.chars[i].id;
	return mx + 1000 + rnd(&b->rng_oot, 1000);
}

static int unknown_card_id(struct bot *b)
{
	int mx = 0;
	for (int i = 0; i < b->m.ncards; i++)
		if (b->m.cards[i].id > mx)
			mx = b->m.cards[i].id;
	return mx + 1000 + rnd(&b->rng_oot, 1000);
}

static int my_char_index(const struct bot *b, uint64_t *r)
{
	int opts[64], n = 0;
	for (int i = 0; i < b->m.nchars && n < 64; i++)
		if (b->m.chars[i].alive && b->m.chars[i].owner == b->m.me)
			opts[n++] = i;
	return n ? opts[rnd(r, n)] : -1;
}

/* How the server answers an invalid line (protocol.md, behaviour.md and the
 * project's systemtests/scenarios/h_bytes.scn): */
enum inv_kind {
	INV_BAD,     /* does not decode into a command: CommandFailed, nothing else */
	INV_DECODED, /* a command that fails its checks: CommandFailed (+ ActNow in turn) */
	INV_BLANK,   /* empty / blank line: no answer at all */
};

/*
 * One line that must fail whatever the state: bad framing or JSON, bad
 * types, unknown ids, someone else's character, a card we do not hold, a
 * command of another phase (only lines that do not decode when bad_only).
 * Uses generator r. Returns a description and stores how the server answers
 * it in *kind.
 */
static const char *send_invalid(struct bot *b, uint64_t *r, enum inv_kind *kind, bool bad_only)
{
	static const int bad_cases[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 18, 19, 20, 21};
	const struct model *m = &b->m;
	*kind = INV_BAD;
	char buf[512];
	int mc = my_char_index(b, r);
	int myid = mc >= 0 ? m->chars[mc].id : unknown_char_id(b);
	int which = bad_only ? bad_cases[rnd(r, (int)(sizeof bad_cases / sizeof bad_cases[0]))]
	                     : rnd(r, 23);
	switch (which) {
	case 0:
		send_str(b, "{\"command\":\"Move\",\"characterId\":\n");
		return "truncated JSON";
	case 1:
		send_str(b, "[1,2,3]\n");
		return "a JSON array";
	case 2:
		send_str(b, "\"EndTurn\"\n");
		return "a JSON string";
	case 3:
		send_str(b, "{}\n");
		return "an object without command";
	case 4:
		send_str(b, "{\"command\":\"Dance\",\"characterId\":1}\n");
		return "an unknown command";
	case 5:
		send_str(b, "{\"command\":42}\n");
		return "a numeric command name";
	case 6:
		send_str(b, "{\"command\":\"Search\"}\n");
		return "a missing parameter";
	case 7:
		snprintf(buf, sizeof buf,
		         "{\"command\":\"Attack\",\"characterId\":\"%d\",\"entrance\":0}\n", myid);
		send_raw(b, buf, strlen(buf));
		return "a string id";
	case 8:
		snprintf(buf, sizeof buf,
		         "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d.5}\n", myid,
		         m->locs[rnd(r, m->nlocs)].id);
		send_raw(b, buf, strlen(buf));
		return "a fractional id";
	case 9:
		snprintf(buf, sizeof buf,
		         "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":1e300}\n", myid);
		send_raw(b, buf, strlen(buf));
		return "an id out of range";
	case 10:
		snprintf(buf, sizeof buf,
		         "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d}\n",
		         m->cards[rnd(r, m->ncards)].id, myid);
		send_raw(b, buf, strlen(buf));
		return "characterId without target";
	case 11:
		snprintf(buf, sizeof buf, "{\"command\":\"Search\",\"characterId\":%d}\n",
		         unknown_char_id(b));
		send_raw(b, buf, strlen(buf));
		*kind = INV_DECODED;
		return "an unknown character";
	case 12: {
		/* someone else's or an unspawned character */
		int opts[256], n = 0;
		for (int i = 0; i < m->nchars && n < 256; i++)
			if (!(m->chars[i].alive && m->chars[i].owner == m->me))
				opts[n++] = i;
		int ci = n ? opts[rnd(r, n)] : -1;
		int cid = ci >= 0 ? m->chars[ci].id : unknown_char_id(b);
		snprintf(buf, sizeof buf,
		         "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d}\n", cid,
		         m->locs[rnd(r, m->nlocs)].id);
		send_raw(b, buf, strlen(buf));
		*kind = INV_DECODED;
		return "a character we do not own";
	}
	case 13: {
		int mx = 0;
		for (int i = 0; i < m->nlocs; i++)
			if (m->locs[i].id > mx)
				mx = m->locs[i].id;
		snprintf(buf, sizeof buf,
		         "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d}\n", myid,
		         mx + 1 + rnd(r, 100));
		send_raw(b, buf, strlen(buf));
		*kind = INV_DECODED;
		return "an unknown location";
	}
	case 14: {
		int e = rnd(r, 2)
		                ? -1 - rnd(r, 5)
		                : (mc >= 0 ? m->locs[m->chars[mc].loc].entrances : 50) + rnd(r, 5);
		snprintf(buf, sizeof buf,
		         "{\"command\":\"%s\",\"characterId\":%d,\"entrance\":%d}\n",
		         rnd(r, 2) ? "Attack" : "Barricade", myid, e);
		send_raw(b, buf, strlen(buf));
		*kind = INV_DECODED;
		return "an entrance out of range";
	}
	case 15: {
		int opts[1024], n = 0;
		for (int i = 0; i < m->ncards && n < 1024; i++)
			if (m->cards[i].holder != m->me)
				opts[n++] = m->cards[i].id;
		int card = n && rnd(r, 2) ? opts[rnd(r, n)] : unknown_card_id(b);
		snprintf(buf, sizeof buf, "{\"command\":\"%s\",\"cardId\":%d}\n",
		         rnd(r, 2) ? "ContributeCard" : "UseCard", card);
		send_raw(b, buf, strlen(buf));
		*kind = INV_DECODED;
		return "a card we do not hold";
	}
	case 16:
		switch (rnd(r, 3)) {
		case 0:
			send_str(b, "{\"command\":\"Register\",\"playerName\":\"again\"}\n");
			break;
		case 1:
			send_str(b, "{\"command\":\"StartGame\"}\n");
			break;
		default:
			snprintf(buf, sizeof buf,
			         "{\"command\":\"SelectCharacters\",\"characterId0\":%d,"
			         "\"characterId1\":%d}\n",
			         m->chars[0].id, m->chars[m->nchars > 1 ? 1 : 0].id);
			send_raw(b, buf, strlen(buf));
			break;
		}
		*kind = INV_DECODED;
		return "a command of another phase";
	case 17:
		if (rnd(r, 2))
			send_str(b, "\n");
		else
			send_str(b, "   \r\n");
		*kind = INV_BLANK;
		return "an empty line";
	case 18:
		snprintf(buf, sizeof buf,
		         "{\"command\":\"Search\",\"characterId\":%d,\"x\":\"\xff\xfe\"}\n",
		         unknown_char_id(b));
		send_raw(b, buf, strlen(buf));
		return "invalid UTF-8";
	case 19:
		send_raw(b, "{\"command\":\"EndTurn\"\0}\n",
		         sizeof "{\"command\":\"EndTurn\"\0}\n" - 1);
		return "a NUL byte";
	case 20: {
		/* deep nesting (cJSON's limit is 1000), ~12 KB */
		int depth = 3000 + rnd(r, 3000);
		size_t cap = (size_t)depth * 2 + 128, n = 0;
		char *p = xcalloc(cap, 1);
		n += (size_t)snprintf(p, cap, "{\"command\":\"Search\",\"characterId\":%d,\"x\":",
		                      unknown_char_id(b));
		for (int i = 0; i < depth; i++)
			p[n++] = '[';
		for (int i = 0; i < depth; i++)
			p[n++] = ']';
		p[n++] = '}';
		p[n++] = '\n';
		send_raw(b, p, n);
		free(p);
		return "deeply nested JSON";
	}
	case 21:
		send_str(b, "{\"command\":\"EndTurn\"} x\n");
		return "trailing garbage";
	default: {
		/* a long line within the 64 KiB limit */
		size_t len = 30000 + (size_t)rnd(r, 30000), n = 0;
		char *p = xcalloc(len + 128, 1);
		n += (size_t)snprintf(p, 128,
		                      "{\"command\":\"Search\",\"characterId\":%d,\"pad\":\"",
		                      unknown_char_id(b));
		memset(p + n, 'a', len);
		n += len;
		memcpy(p + n, "\"}\n", 3);
		n += 3;
		send_raw(b, p, n);
		free(p);
		*kind = INV_DECODED;
		return "a long line";
	}
	}
}

/* --stall: stop answering for good; the server's --timeout removes us */
static bool maybe_stall(struct bot *b)
{
	if (b->stalled || !chance(&b->rng, b->stall_pct))
		return b->stalled;
	b->stalled = true;
	if (b->log)
		fprintf(b->log, "! stalling: no more commands\n");
	return true;
}

/* --disconnect: hang up (close the socket), or send a line over the 64 KiB
 * limit, which the server answers with CommandFailed before it closes. */
static bool maybe_disconnect(struct bot *b, uint64_t *r, double pct)
{
	if (b->overlong_sent || b->quit || b->stalled || !chance(r, pct))
		return false;
	if (rnd(r, 2)) {
		if (b->log)
			fprintf(b->log, "! hanging up\n");
		b->quit = true;
		b->result = "disconnected";
		return true;
	}
	size_t len = 65537 + (size_t)rnd(r, 40000), n = 0;
	char *p = xcalloc(len + 64, 1);
	n += (size_t)snprintf(p, 64, "{\"command\":\"EndTurn\",\"pad\":\"");
	memset(p + n, 'z', len);
	n += len;
	memcpy(p + n, "\"}\n", 3);
	n += 3;
	send_raw(b, p, n);
	free(p);
	b->overlong_sent = true;
	return true;
}

static void end_turn(struct bot *b)
{
	sendf(b, "{\"command\":\"EndTurn\"}");
	outbox_of(b)->silent = true;
	b->cmds_this_turn = 0;
	model_end_my_turn(&b->m);
}

/* One command on ActNow. */
static void act(struct bot *b)
{
	if (b->overlong_sent || b->stalled)
		return;
	model_set_pending(&b->m, MODEL_PEND_NONE, -1);
	if (b->cmds_this_turn++ >= MAX_CMDS_PER_TURN) {
		end_turn(b);
		return;
	}
	if (chance(&b->rng, b->leave_pct)) {
		b->sent_leave = true;
		model_end_my_turn(&b->m);
		sendf(b, "{\"command\":\"Leave\"}");
		return;
	}
	if (chance(&b->rng, b->invalid_pct)) {
		bool strict = b->oot_pending == 0 && !b->strict_off;
		enum inv_kind kind;
		const char *what = send_invalid(b, &b->rng, &kind, false);
		if (kind != INV_BLANK) {
			if (strict) {
				b->expect_fail = true;
				snprintf(b->expect_fail_what, sizeof b->expect_fail_what,
				         "%s (in turn)", what);
			}
			/* bad input gets no new ActNow: go on after its CommandFailed */
			b->act_after_fail = kind == INV_BAD;
			return;
		}
		/* a blank line gets no answer at all: go on with a real command */
	}
	build_candidates(b);
	double end_w = b->ncands == 0 ? 1.0 : (b->m.ndice == 0 ? 0.4 : 0.12);
	if (chance(&b->rng, end_w * 100.0)) {
		end_turn(b);
		return;
	}
	if (chance(&b->rng, 4)) {
		chaos_command(b);
		return;
	}
	double total = 0;
	for (int i = 0; i < b->ncands; i++)
		total += b->cands[i].w;
	double x = (double)(splitmix64(&b->rng) >> 11) / 9007199254740992.0 * total;
	int pick = b->ncands - 1;
	for (int i = 0; i < b->ncands; i++) {
		if (x < b->cands[i].w) {
			pick = i;
			break;
		}
		x -= b->cands[i].w;
	}
	model_set_pending(&b->m, b->cands[pick].pend, b->cands[pick].pend_char);
	sendf(b, "%s", b->cands[pick].cmd);
}

static void select_characters(struct bot *b)
{
	const struct model *m = &b->m;
	if (chance(&b->rng, b->invalid_pct)) {
		char buf[256];
		int a = m->offered[rnd(&b->rng, 4)], b2 = a;
		if (rnd(&b->rng, 2)) {
			/* one of them not offered */
			for (int i = 0; i < m->nchars; i++) {
				int id = m->chars[i].id;
				if (id != m->offered[0] && id != m->offered[1] &&
				    id != m->offered[2] && id != m->offered[3]) {
					b2 = id;
					break;
				}
			}
			if (b2 == a)
				b2 = unknown_char_id(b);
		}
		snprintf(buf, sizeof buf,
		         "{\"command\":\"SelectCharacters\",\"characterId0\":%d,\"characterId1\":%"
		         "d}\n",
		         a, b2);
		send_raw(b, buf, strlen(buf));
		if (b->oot_pending == 0 && !b->strict_off) {
			b->expect_fail = true;
			snprintf(b->expect_fail_what, sizeof b->expect_fail_what,
			         "SelectCharacters %d %d", a, b2);
		}
	}
	int i = rnd(&b->rng, 4), j = rnd(&b->rng, 3);
	if (j >= i)
		j++;
	sendf(b, "{\"command\":\"SelectCharacters\",\"characterId0\":%d,\"characterId1\":%d}",
	      m->offered[i], m->offered[j]);
}

/* Now and then, while the game runs and it is probably not our turn, a
 * command out of turn. It must fail either way (it may arrive in our turn). */
static void maybe_out_of_turn(struct bot *b)
{
	if (!b->m.game_started || b->result || b->invalid_pct <= 0 || b->sent_leave ||
	    b->overlong_sent || b->stalled)
		return;
	if (!chance(&b->rng_oot, b->invalid_pct * 0.05))
		return;
	enum inv_kind kind;
	if (b->oot_commands && rnd(&b->rng_oot, 4) == 0 && rnd(&b->rng_oot, 10) == 0) {
		/* Leave is only for the active player (it may be judged in our
		 * turn, then we leave for real) */
		send_str(b, "{\"command\":\"Leave\"}\n");
		b->oot_leave = true;
		kind = INV_DECODED;
	} else if (b->oot_commands && rnd(&b->rng_oot, 4) == 0) {
		/* a plausible command: out of turn, or else with an id no one owns */
		char buf[160];
		snprintf(buf, sizeof buf,
		         "{\"command\":\"%s\",\"characterId\":%d,\"entrance\":0}\n",
		         rnd(&b->rng_oot, 2) ? "Attack" : "Barricade", unknown_char_id(b));
		send_raw(b, buf, strlen(buf));
		kind = INV_DECODED;
	} else {
		send_invalid(b, &b->rng_oot, &kind, !b->oot_commands);
	}
	if (kind == INV_BLANK)
		return; /* no answer to wait for */
	if (kind == INV_DECODED && !b->strict_off) {
		b->strict_off = true;
		if (b->log)
			fprintf(b->log,
			        "# a well-formed command sent out of turn: strict checks off\n");
	}
	b->oot_pending++;
}

/* ---- events: the model folds them, then the bot reacts ---------------------------------- */

static void on_config(struct bot *b, const struct model_event *ev)
{
	(void)ev;
	if (!b->announced) {
		printf("registered %s\n", b->name);
		fflush(stdout);
		b->announced = true;
	}
	if (b->invalid_pct > 0 && chance(&b->rng, b->invalid_pct * 3)) {
		send_str(b, "{\"command\":\"Register\",\"playerName\":\"twice\"}\n");
		b->oot_pending++; /* its CommandFailed may come at any time */
	}
	if (b->start)
		sendf(b, "{\"command\":\"StartGame\"}");
}

static void on_act_now(struct bot *b, const struct model_event *ev)
{
	(void)ev;
	if (maybe_stall(b) || maybe_disconnect(b, &b->rng, b->disconnect_pct))
		return;
	act(b);
}

static void on_characters(struct bot *b, const struct model_event *ev)
{
	(void)ev;
	if (maybe_stall(b) || maybe_disconnect(b, &b->rng, b->disconnect_pct))
		return;
	select_characters(b);
}

static void on_command_failed(struct bot *b, const struct model_event *ev)
{
	(void)ev;
	b->failed++;
	if (b->overlong_sent)
		b->overlong_answered = true;
	/* answers come in the order we sent: earlier out-of-turn lines first */
	if (b->oot_pending > 0) {
		b->oot_pending--;
	} else if (b->act_after_fail) {
		b->act_after_fail = false;
		act(b);
	}
}

static void on_registration_aborted(struct bot *b, const struct model_event *ev)
{
	(void)ev;
	b->result = "aborted";
}

static void on_game_end(struct bot *b, const struct model_event *ev)
{
	b->result = ev->v[0] ? "win" : "lose";
}

static void on_next_round(struct bot *b, const struct model_event *ev)
{
	(void)ev;
	b->cmds_this_turn = 0;
}

static void on_left(struct bot *b, const struct model_event *ev)
{
	const struct model *m = &b->m;
	if (ev->v[0] != m->me)
		return;
	if (!b->sent_leave && !b->oot_leave && !b->stalled && model_living_of(m, m->me) > 0 &&
	    !m->selecting)
		die(b, EXIT_SERVER,
		    "we were removed (Left) while we still had %d living characters "
		    "and never sent Leave (server --timeout?)",
		    model_living_of(m, m->me));
	b->result = "left";
}

/* What the bot does on an event, after the model folded it; NULL: nothing. */
static void (*const reactions[MEV_COUNT])(struct bot *, const struct model_event *) = {
        [MEV_CONFIG] = on_config,
        [MEV_ACT_NOW] = on_act_now,
        [MEV_CHARACTERS] = on_characters,
        [MEV_COMMAND_FAILED] = on_command_failed,
        [MEV_REGISTRATION_ABORTED] = on_registration_aborted,
        [MEV_GAME_END] = on_game_end,
        [MEV_NEXT_ROUND] = on_next_round,
        [MEV_LEFT] = on_left,
};

static void handle_event(struct bot *b, const struct model_event *ev)
{
	if (b->result)
		VIOLATION(b, "event %s after the end (%s)", ev->name, b->result);
	if (b->expect_fail && ev->type != MEV_COMMAND_FAILED)
		die(b, EXIT_SERVER,
		    "the server accepted %s: answered with %s instead of CommandFailed",
		    b->expect_fail_what, ev->name);
	b->expect_fail = false;
	char err[600];
	int rc = model_fold(&b->m, ev, err, sizeof err);
	if (rc == MODEL_INTERNAL)
		die(b, EXIT_USAGE, "%s", err);
	if (rc != MODEL_OK)
		VIOLATION(b, "%s", err);
	if (reactions[ev->type])
		reactions[ev->type](b, ev);
}

static void process_line(struct bot *b, char *line, size_t len)
{
	trace(b, '<', line, len);
	b->events++;
	if (b->max_events > 0 && b->events > b->max_events)
		die(b, EXIT_STALL, "more than %ld events (--max-events)", b->max_events);
	if (b->result)
		VIOLATION(b, "an event after the end (%s): %.200s", b->result, line);
	struct model_event ev;
	char err[600];
	if (model_decode(&b->m, line, len, &ev, err, sizeof err) != MODEL_OK)
		VIOLATION(b, "%s", err);
	handle_event(b, &ev);
	model_event_free(&ev);
	/* out of turn only where the event sequence is the same in every run
	 * (not on our own CommandFailed answers) and not while we must answer */
	if (!b->result && !b->m.my_turn && !b->m.selecting && ev.type != MEV_ACT_NOW &&
	    ev.type != MEV_COMMAND_FAILED && ev.type != MEV_CHARACTERS) {
		maybe_out_of_turn(b);
		if (b->m.game_started)
			maybe_disconnect(b, &b->rng_oot, b->disconnect_pct * 0.02);
	}
}

/* ---- connection ------------------------------------------------------------------ */

static int connect_to(const char *host, int port, double wait_sec)
{
	char err[256];
	int fd = tcp_connect_host(host, port, wait_sec, 5, err, sizeof err);
	if (fd < 0)
		fprintf(stderr, "sopra-bot: %s\n", err);
	return fd;
}

/* poll timeout in ms until --idle runs out since `last` (-1: no limit);
 * dies when it has run out */
static int idle_wait_ms(struct bot *b, double last)
{
	if (b->idle_sec <= 0)
		return -1;
	double left = b->idle_sec - (now_sec() - last);
	if (left <= 0) {
		if (b->result)
			die(b, EXIT_STALL,
			    "the server did not close the connection %.0f s after the end (%s)",
			    b->idle_sec, b->result);
		die(b, EXIT_STALL, "no event for %.0f s", b->idle_sec);
	}
	return (int)(left * 1000) + 1;
}

/* ---- coming back (--reconnect) ------------------------------------------------------------ */

/*
 * On Reconnect the server re-sends the player's whole history; the lines
 * received before must be an exact prefix of it (checked). The bot re-reads
 * that prefix "muted": every line is folded into a fresh model and reacted to
 * as the first time, but the commands only go to `pending`. The generators
 * start again from their state before the first event, and decisions depend
 * on nothing but them and the events, so every draw repeats and pending must
 * equal what was sent in reaction to the last line before the drop (checked
 * as well).
 *
 * Was that command lost in the drop? The bot has one command in flight at a
 * time (it answers prompts; not so with --invalid's lines out of turn), and
 * the server answers every command but EndTurn with a line to its sender
 * before anything else reaches it. So the next line that is not a Session
 * line, from the history or after it, shows the command was taken. If none
 * comes, it was lost: send it again, after RESEND_WAIT s for a command that
 * must draw a line. A taken EndTurn may draw nothing until another player
 * acts or the round ends, so its wait is longer, and the longer the lower
 * our id: when several players' EndTurns are in doubt after one restart,
 * they are consecutive turns of one round, the game waits for the last of
 * them (the highest id), whose wait is the shortest, and what its re-sent
 * EndTurn sets off reaches the others before their waits are over.
 */
#define RESEND_WAIT       0.5 /* s: the history has arrived by then */
#define SILENT_WAIT_FIRST 1.0 /* s, for an EndTurn, plus SILENT_WAIT_STEP per higher id */
#define SILENT_WAIT_STEP  0.5

static bool is_session(const char *line, size_t len)
{
	static const char head[] = "{\"event\":\"Session\",";
	return len >= sizeof head - 1 && memcmp(line, head, sizeof head - 1) == 0;
}

/* {"event":"Session","player":P,"secret":"<64 hex digits>"}: keep the secret */
static void take_session(struct bot *b, const char *line)
{
	cJSON *root = cJSON_Parse(line);
	const cJSON *player = cJSON_GetObjectItemCaseSensitive(root, "player");
	const cJSON *secret = cJSON_GetObjectItemCaseSensitive(root, "secret");
	bool ok = cJSON_GetArraySize(root) == 3 && cJSON_IsNumber(player) &&
	          cJSON_IsString(secret) && strlen(secret->valuestring) == 64 &&
	          strspn(secret->valuestring, "0123456789abcdef") == 64;
	if (ok)
		snprintf(b->secret, sizeof b->secret, "%s", secret->valuestring);
	cJSON_Delete(root);
	if (!ok)
		VIOLATION(b, "a malformed Session line: %.200s", line);
}

/* a line received for the first time: kept (--reconnect) and streamed (--stream) */
static void remember_line(struct bot *b, const char *line, size_t len)
{
	if (b->stream) {
		fwrite(line, 1, len, b->stream);
		fputc('\n', b->stream);
		fflush(b->stream);
	}
	if (b->reconnect_sec <= 0)
		return;
	struct seen_lines *sl = &b->seen;
	if (sl->n == sl->cap) {
		sl->cap = sl->cap ? sl->cap * 2 : 256;
		sl->line = xreallocarray(sl->line, (size_t)sl->cap, sizeof *sl->line);
		sl->len = xreallocarray(sl->len, (size_t)sl->cap, sizeof *sl->len);
	}
	sl->line[sl->n] = xmalloc(len + 1);
	memcpy(sl->line[sl->n], line, len);
	sl->line[sl->n][len] = '\0';
	sl->len[sl->n++] = len;
}

/* One line per return on stderr (and in the log): how the command in doubt
 * was settled. */
static void report_return(struct bot *b, const char *how)
{
	char msg[256];
	snprintf(msg, sizeof msg, "reconnect %ld: lines=%ld cut=%d last-command=%s wait=%.2f",
	         b->reconnects, b->lines_at_drop, b->cut_line, how,
	         b->await_since > 0 ? now_sec() - b->await_since : 0.0);
	fprintf(stderr, "bot %s: %s\n", b->name, msg);
	if (b->log) {
		fprintf(b->log, "! %s\n", msg);
		fflush(b->log);
	}
	b->cut_line = false;
	b->await_since = 0;
}

/* The prefix is re-read: compare the re-decided reaction, then settle it. */
static void history_caught_up(struct bot *b)
{
	b->muted = false;
	if (!outbox_equal(&b->pending, &b->last_sent))
		die(b, EXIT_USAGE,
		    "not deterministic: re-reading line %ld draws \"%.*s\" (%zu bytes), it had "
		    "drawn \"%.*s\" (%zu bytes)",
		    b->pos, (int)(b->pending.len > 200 ? 200 : b->pending.len),
		    b->pending.data ? b->pending.data : "", b->pending.len,
		    (int)(b->last_sent.len > 200 ? 200 : b->last_sent.len),
		    b->last_sent.data ? b->last_sent.data : "", b->last_sent.len);
	if (b->pending.len == 0) {
		report_return(b, "none");
		return;
	}
	int later = b->m.me >= 0 ? b->m.nplayers - 1 - b->m.me : 0;
	b->awaiting = true;
	b->await_since = now_sec();
	b->await_until =
	        b->await_since +
	        (b->pending.silent ? SILENT_WAIT_FIRST + SILENT_WAIT_STEP * later : RESEND_WAIT);
}

/* No line came in time: the command in doubt was lost, send it again (the
 * same bytes: last_sent already holds them). */
static void resend_pending(struct bot *b)
{
	b->awaiting = false;
	trace(b, '>', b->pending.data, b->pending.len);
	for (size_t i = 0; i < b->pending.len; i++)
		b->commands += b->pending.data[i] == '\n';
	write_all(b, b->pending.data, b->pending.len);
	b->resent++;
	report_return(b, "resent");
}

/* The first line after Reconnect: false when it is a refusal (handled). */
static bool reconnect_accepted(struct bot *b, const char *line, size_t len)
{
	static const char failed[] = "{\"event\":\"CommandFailed\",";
	if (len < sizeof failed - 1 || memcmp(line, failed, sizeof failed - 1) != 0)
		return true;
	trace(b, '<', line, len);
	if (strstr(line, " is connected")) {
		b->drop_now = true; /* the server has not seen the old connection go yet */
	} else if (strstr(line, " has left the game")) {
		if (b->log)
			fprintf(b->log, "! we left the game while away\n");
		b->result = "left";
		b->quit = true;
	} else {
		die(b, EXIT_SERVER, "Reconnect refused: %.200s", line);
	}
	return false;
}

/* Every line received goes through here. */
static void take_line(struct bot *b, char *line, size_t len)
{
	if (b->reconnecting) {
		b->reconnecting = false;
		if (!reconnect_accepted(b, line, len))
			return;
	}
	long idx = b->pos++;
	bool again = idx < b->seen.n;
	if (again && (b->seen.len[idx] != len || memcmp(b->seen.line[idx], line, len) != 0))
		VIOLATION(b,
		          "line %ld of the history after Reconnect differs from the one received "
		          "before: %.200s",
		          idx + 1, line);
	if (!again)
		remember_line(b, line, len);
	if (is_session(line, len)) {
		trace(b, '<', line, len);
		b->events++;
		take_session(b, line);
	} else {
		if (b->awaiting) {
			b->awaiting = false;
			b->answered++;
			report_return(b, "answered");
		}
		outbox_clear(outbox_of(b));
		process_line(b, line, len);
	}
	if (again && idx == b->seen.n - 1)
		history_caught_up(b);
}

/* Back to the state before the first line, for the history. */
static void restart_model(struct bot *b)
{
	model_free(&b->m);
	model_init(&b->m, b->name, b->revised);
	b->pos = 0;
	b->rng = b->rng_start;
	b->rng_oot = b->rng_oot_start;
	b->events = b->failed = 0;
	b->result = NULL;
	b->conn_broken = b->quit = b->overlong_sent = b->overlong_answered = false;
	b->stalled = b->oot_leave = b->sent_leave = b->expect_fail = false;
	b->act_after_fail = b->strict_off = false;
	b->oot_pending = b->cmds_this_turn = 0;
	b->rlen = 0;
	b->muted = true;
	b->awaiting = false;
	outbox_clear(&b->pending);
}

static bool may_come_back(const struct bot *b)
{
	return b->reconnect_sec > 0 && b->secret[0] && !b->result && !b->quit && !b->overlong_sent;
}

/* Connect again (retrying until --reconnect SECONDS after the drop) and
 * send Reconnect; the history follows. */
static void come_back(struct bot *b)
{
	close(b->fd);
	b->fd = -1;
	if (b->drop_now) {
		sleep_ms(50); /* "is connected": give the server time to see the old one go */
	} else {
		b->drop_deadline = now_sec() + b->reconnect_sec;
		if (!b->muted)
			b->lines_at_drop = b->seen.n;
	}
	b->drop_now = false;
	if (b->log) {
		fprintf(b->log, "! connection lost after %ld lines: reconnecting\n", b->seen.n);
		fflush(b->log); /* the bot may wait here until it is killed */
	}
	b->fd = connect_to(b->host, b->port, b->drop_deadline - now_sec());
	if (b->fd < 0)
		die(b, EXIT_USAGE, "no way back within %g s (--reconnect)", b->reconnect_sec);
	restart_model(b);
	char line[128];
	snprintf(line, sizeof line, "{\"command\":\"Reconnect\",\"secret\":\"%s\"}\n", b->secret);
	trace(b, '>', line, strlen(line));
	b->commands++;
	write_all(b, line, strlen(line));
	b->reconnecting = true;
	b->reconnects++;
	b->history_until = now_sec() + b->reconnect_sec;
}

/* poll timeout in ms: --idle, or the wait for the history or for an answer */
static int wait_ms(struct bot *b, double last)
{
	int ms = idle_wait_ms(b, last);
	double until = b->awaiting ? b->await_until : b->muted ? b->history_until : 0;
	if (until > 0) {
		double left = until - now_sec();
		int lms = left > 0 ? (int)(left * 1000) + 1 : 0;
		if (ms < 0 || lms < ms)
			ms = lms;
	}
	return ms;
}

/* poll timed out */
static void on_quiet(struct bot *b)
{
	double now = now_sec();
	if (b->awaiting && now >= b->await_until)
		resend_pending(b);
	else if (b->muted && now >= b->history_until)
		VIOLATION(b,
		          "the history after Reconnect ended after %ld of the %ld lines "
		          "received before",
		          b->pos, b->seen.n);
}

/* The connection ended (EOF or reset): true when the bot comes back. */
static bool connection_ended(struct bot *b)
{
	if (may_come_back(b)) {
		if (b->rlen > 0) {
			if (b->log)
				fprintf(b->log,
				        "! the connection dropped inside a line (%zu bytes)\n",
				        b->rlen);
			b->cut_line = true;
			b->cuts++;
		}
		return true;
	}
	if (b->rlen > 0)
		VIOLATION(b, "the connection closed inside a line: %.200s", b->rbuf);
	if (b->log)
		fprintf(b->log, "! closed\n");
	if (b->overlong_sent && !b->result) {
		if (!b->overlong_answered)
			VIOLATION(b, "closed without a CommandFailed for our "
			             "over-long line");
		b->result = "dropped";
	}
	if (!b->result)
		b->result = "closed";
	return false;
}

/* Read and handle lines until the connection ends: true when it dropped and
 * the bot comes back. */
static bool read_events(struct bot *b)
{
	double last = now_sec();
	for (;;) {
		struct pollfd pfd = {.fd = b->fd, .events = POLLIN, .revents = 0};
		int pr = poll(&pfd, 1, wait_ms(b, last));
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			die(b, EXIT_USAGE, "poll: %s", strerror(errno));
		}
		if (pr == 0) {
			on_quiet(b);
			continue;
		}
		if (b->rcap - b->rlen < 65536) {
			if (b->rcap >= MAX_LINE_IN)
				VIOLATION(b, "an event line longer than %zu bytes", MAX_LINE_IN);
			b->rcap *= 2;
			b->rbuf = xrealloc(b->rbuf, b->rcap);
		}
		ssize_t got = recv(b->fd, b->rbuf + b->rlen, b->rcap - b->rlen - 1, 0);
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (errno != ECONNRESET)
				die(b, EXIT_USAGE, "recv: %s", strerror(errno));
			if (b->log)
				fprintf(b->log, "! connection reset by the server\n");
			got = 0;
		}
		if (got == 0)
			return connection_ended(b);
		last = now_sec();
		b->rlen += (size_t)got;
		size_t start = 0;
		for (size_t i = b->rlen - (size_t)got; i < b->rlen; i++) {
			if (b->rbuf[i] != '\n')
				continue;
			b->rbuf[i] = '\0';
			take_line(b, b->rbuf + start, i - start);
			start = i + 1;
			if (b->quit)
				return false;
			if (b->drop_now)
				return true;
		}
		memmove(b->rbuf, b->rbuf + start, b->rlen - start);
		b->rlen -= start;
	}
}

static void run(struct bot *b)
{
	b->rcap = 1 << 16;
	b->rbuf = xcalloc(b->rcap, 1);
	if (b->invalid_pct > 0 && chance(&b->rng, b->invalid_pct * 3)) {
		/* before registering: must fail, must not abort the registration */
		if (rnd(&b->rng, 2))
			send_str(b, "{\"command\":\"StartGame\"}\n");
		else
			send_str(b, "{\"command\":\"Register\"}\n");
		b->expect_fail = true;
		snprintf(b->expect_fail_what, sizeof b->expect_fail_what,
		         "a command before Register");
	}
	char reg[512];
	cJSON *nm = cJSON_CreateString(b->name);
	char *enc = cJSON_PrintUnformatted(nm);
	snprintf(reg, sizeof reg, "{\"command\":\"Register\",\"playerName\":%s}\n",
	         enc ? enc : "\"bot\"");
	free(enc);
	cJSON_Delete(nm);
	send_raw(b, reg, strlen(reg));
	b->rng_start = b->rng;
	b->rng_oot_start = b->rng_oot;
	while (read_events(b))
		come_back(b);
}

/* --lurk: an unregistered connection next to the game. It hears nothing but
 * the CommandFailed answers to its own lines, until the server closes. The
 * lines do not decode: they must not restart the server's --timeout
 * ("restarted by every decoded command") nor abort the registration. */
static void run_lurker(struct bot *b)
{
	static const char *const lines[] = {
	        "not json\n",
	        "{\"command\":\"Move\"}\n",
	        "[]\n",
	        "{\"command\":\"Register\"}\n",
	        "{\"command\":\"Register\",\"playerName\":5}\n",
	        "{\"command\":\"SelectCharacters\",\"characterId0\":\"a\"}\n",
	        "\xff\xfe\n",
	        "{\"command\":\"EndTurn\",\"x\":1} trailing\n",
	};
	const int nlines = (int)(sizeof lines / sizeof lines[0]);
	char buf[65536];
	size_t len = 0;
	long sent = 0, answered = 0;
	double last = now_sec();
	for (;;) {
		if (b->idle_sec > 0 && now_sec() - last > b->idle_sec)
			die(b, EXIT_STALL, "no answer for %.0f s", b->idle_sec);
		/* one line every ~20 ms, at most one unanswered at a time */
		if (sent == answered && sent < 5000)
			send_str(b, lines[(sent++) % nlines]);
		struct pollfd pfd = {.fd = b->fd, .events = POLLIN, .revents = 0};
		int pr = poll(&pfd, 1, 20);
		if (pr < 0 && errno != EINTR)
			die(b, EXIT_USAGE, "poll: %s", strerror(errno));
		if (pr <= 0)
			continue;
		ssize_t got = recv(b->fd, buf + len, sizeof buf - 1 - len, 0);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0) {
			if (len > 0)
				VIOLATION(b, "the connection closed inside a line");
			b->result = "closed";
			return;
		}
		last = now_sec();
		len += (size_t)got;
		size_t start = 0;
		for (size_t i = 0; i < len; i++) {
			if (buf[i] != '\n')
				continue;
			buf[i] = '\0';
			trace(b, '<', buf + start, i - start);
			b->events++;
			cJSON *root = cJSON_Parse(buf + start);
			const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "event");
			if (!cJSON_IsString(e) || strcmp(e->valuestring, "CommandFailed") != 0)
				VIOLATION(b, "an unregistered connection received %.200s",
				          buf + start);
			cJSON_Delete(root);
			b->failed++;
			answered++;
			start = i + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		if (len >= sizeof buf - 1)
			VIOLATION(b, "an over-long line to an unregistered connection");
	}
}

/* ---- main -------------------------------------------------------------------------- */

static const char usage_text[] =
        "Usage: sopra-bot --port N [--host HOST] [--seed S] [--name NAME] [--start] [options]\n"
        "\n"
        "Plays one game of SoPra of the Dead against a sopra-server with random moves.\n"
        "  --port N           server port (required)\n"
        "  --host HOST        server host (default 127.0.0.1)\n"
        "  --seed S           seed of the bot's own generator (default 1)\n"
        "  --name NAME        player name (default bot-SEED)\n"
        "  --start            send StartGame once the Config arrived\n"
        "  --rules E          base (default) or revised: must match the server\n"
        "  --invalid PCT      send a deliberately invalid command instead of a move\n"
        "                     with PCT % probability (and now and then one out of turn)\n"
        "  --leave PCT        send Leave instead of a move with PCT % probability\n"
        "  --disconnect PCT   instead of a move or a selection, with PCT % probability\n"
        "                     (and rarely at any time), hang up or send a line over\n"
        "                     the 64 KiB limit (result disconnected / dropped)\n"
        "  --stall PCT        instead of a move or a selection, with PCT % probability,\n"
        "                     stop answering; the server's --timeout must remove us\n"
        "  --lurk             never register: connect, send lines that do not decode\n"
        "                     (bad JSON, missing parameters) until the server closes;\n"
        "                     any event but CommandFailed is a violation\n"
        "  --max-events N     fail (exit 3) after more than N events (default 1000000)\n"
        "  --idle SECONDS     fail (exit 3) after SECONDS without an event (default: no\n"
        "                     limit; the server's --timeout decides how long a wait lasts)\n"
        "  --log FILE         write every line sent (>) and received (<) to FILE\n"
        "  --stream FILE      write every line received, as received, to FILE; after a\n"
        "                     reconnect: the history of the last Reconnect and what\n"
        "                     followed it\n"
        "  --reconnect SECONDS  when the connection drops before the end (a Session\n"
        "                     line came), connect again for up to SECONDS, send\n"
        "                     Reconnect, re-read the history and play on (default 0:\n"
        "                     the game is over for the bot)\n"
        "  --quiet            no trace on stderr, only errors and the summary\n"
        "Exit: 0 game over, 1 usage/connection, 2 protocol violation, 3 stall,\n"
        "      4 the server accepted an invalid command or dropped us.\n";

static bool parse_num(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (errno || end == s || *end || d < lo || d > hi)
		return false;
	*out = d;
	return true;
}

/* The options into b; returns -1 to go on, else the exit code. */
static int parse_args(struct bot *b, int argc, char **argv, const char **rules)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		double d;
#define NEEDVAL()                                                                          \
	do {                                                                               \
		if (!val) {                                                                \
			sopra_usage_error("sopra-bot", usage_text, "%s needs a value", a); \
			return EXIT_USAGE;                                                 \
		}                                                                          \
		i++;                                                                       \
	} while (0)
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage_text, stdout);
			return EXIT_OK;
		} else if (strcmp(a, "--port") == 0) {
			NEEDVAL();
			if (!parse_num(val, 1, 65535, &d))
				goto bad;
			b->port = (int)d;
		} else if (strcmp(a, "--host") == 0) {
			NEEDVAL();
			b->host = val;
		} else if (strcmp(a, "--seed") == 0) {
			NEEDVAL();
			char *end;
			errno = 0;
			long long s = strtoll(val, &end, 0);
			if (errno || end == val || *end)
				goto bad;
			b->seed = (uint64_t)s;
		} else if (strcmp(a, "--name") == 0) {
			NEEDVAL();
			b->name = val;
		} else if (strcmp(a, "--start") == 0) {
			b->start = true;
		} else if (strcmp(a, "--quiet") == 0) {
			b->quiet = true;
		} else if (strcmp(a, "--rules") == 0) {
			NEEDVAL();
			*rules = val;
			if (strcmp(val, "base") != 0 && strcmp(val, "revised") != 0)
				goto bad;
		} else if (strcmp(a, "--invalid") == 0) {
			NEEDVAL();
			if (!parse_num(val, 0, 100, &b->invalid_pct))
				goto bad;
		} else if (strcmp(a, "--leave") == 0) {
			NEEDVAL();
			if (!parse_num(val, 0, 100, &b->leave_pct))
				goto bad;
		} else if (strcmp(a, "--stall") == 0) {
			NEEDVAL();
			if (!parse_num(val, 0, 100, &b->stall_pct))
				goto bad;
		} else if (strcmp(a, "--lurk") == 0) {
			b->lurk = true;
		} else if (strcmp(a, "--disconnect") == 0) {
			NEEDVAL();
			if (!parse_num(val, 0, 100, &b->disconnect_pct))
				goto bad;
		} else if (strcmp(a, "--max-events") == 0) {
			NEEDVAL();
			if (!parse_num(val, 1, 1e15, &d))
				goto bad;
			b->max_events = (long)d;
		} else if (strcmp(a, "--idle") == 0) {
			NEEDVAL();
			if (!parse_num(val, 0.1, 86400, &b->idle_sec))
				goto bad;
		} else if (strcmp(a, "--log") == 0) {
			NEEDVAL();
			b->log_path = val;
		} else if (strcmp(a, "--stream") == 0) {
			NEEDVAL();
			b->stream_path = val;
		} else if (strcmp(a, "--reconnect") == 0) {
			NEEDVAL();
			if (!parse_num(val, 0, 3600, &b->reconnect_sec))
				goto bad;
		} else {
			sopra_usage_error("sopra-bot", usage_text, "unknown option '%s'", a);
			return EXIT_USAGE;
		}
		continue;
	bad:
		sopra_usage_error("sopra-bot", usage_text, "invalid value '%s' for %s", val, a);
		return EXIT_USAGE;
#undef NEEDVAL
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct bot *b = xcalloc(1, sizeof *b);
	b->host = "127.0.0.1";
	b->port = -1;
	b->seed = 1;
	b->max_events = 1000000;
	b->idle_sec = 0; /* no limit of our own: the server's --timeout decides */
	const char *rules = "base";
	int rc = parse_args(b, argc, argv, &rules);
	if (rc >= 0) {
		free(b);
		return rc;
	}
	if (!b->name) {
		snprintf(b->namebuf, sizeof b->namebuf, "bot-%llu", (unsigned long long)b->seed);
		b->name = b->namebuf;
	}
	if (b->port < 0) {
		sopra_usage_error("sopra-bot", usage_text, "--port is required");
		free(b);
		return EXIT_USAGE;
	}
	b->revised = strcmp(rules, "revised") == 0;
	model_init(&b->m, b->name, b->revised);
	uint64_t s = b->seed;
	b->rng = splitmix64(&s);
	b->rng_oot = splitmix64(&s) ^ 0x5DEECE66DULL;
	b->oot_commands = splitmix64(&s) % 2 == 0;
	b->rng_net = splitmix64(&s);
	signal(SIGPIPE, SIG_IGN);
	if (b->log_path) {
		b->log = fopen(b->log_path, "w");
		if (!b->log) {
			fprintf(stderr, "sopra-bot: %s: %s\n", b->log_path, strerror(errno));
			return EXIT_USAGE;
		}
		fprintf(b->log,
		        "# sopra-bot --port %d --seed %llu --name %s --rules %s --invalid %g "
		        "--leave %g "
		        "--disconnect %g%s\n",
		        b->port, (unsigned long long)b->seed, b->name, rules, b->invalid_pct,
		        b->leave_pct, b->disconnect_pct, b->start ? " --start" : "");
	}
	if (b->stream_path) {
		b->stream = fopen(b->stream_path, "w");
		if (!b->stream) {
			fprintf(stderr, "sopra-bot: %s: %s\n", b->stream_path, strerror(errno));
			return EXIT_USAGE;
		}
	}
	b->fd = connect_to(b->host, b->port, 5.0);
	if (b->fd < 0) {
		b->result = "closed";
		summary(b);
		return EXIT_USAGE;
	}
	if (b->lurk) {
		printf("connected %s\n", b->name);
		fflush(stdout);
		run_lurker(b);
	} else {
		run(b);
	}
	close(b->fd);
	if (b->log)
		fclose(b->log);
	if (b->stream)
		fclose(b->stream);
	summary(b);
	model_free(&b->m);
	for (long i = 0; i < b->seen.n; i++)
		free(b->seen.line[i]);
	free(b->seen.line);
	free(b->seen.len);
	free(b->pending.data);
	free(b->last_sent.data);
	free(b->rbuf);
	free(b);
	return EXIT_OK;
}
