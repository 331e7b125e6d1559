/*
 * sopra-bot: a client that registers with a sopra-server, plays random legal
 * moves until the game ends, and checks what the server says.
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
 * events after a reconnect. The commands are the legal ones of the client's
 * command layer (client/command.h: the engine's game_legal_commands on the
 * bot's view) and their wire lines: on Characters it selects one of the
 * pairs offered, on ActNow it sends one legal command (or, with --invalid, a
 * deliberately bad line -- a command broken on purpose, or one the engine
 * refuses, whose CommandFailed message the bot then expects; plus now and
 * then a line out of turn).
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
 * event for --idle seconds); 4 the server accepted a command that must fail,
 * refused it with another message than the engine's, or removed this bot
 * without a reason (e.g. its --timeout fired).
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
#include "command.h"
#include "model.h"
#include "strategy.h"
#include "sopra/proto.h"
#include "sopra/usage.h"
#include "sopra/xalloc.h"

#define EXIT_OK       0
#define EXIT_USAGE    1
#define EXIT_PROTOCOL 2
#define EXIT_STALL    3
#define EXIT_SERVER   4

#define MAX_LINE_IN       ((size_t)32 << 20) /* longest event line we accept */
#define MAX_CMDS_PER_TURN 25

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
	bool silent; /* ending the turn: when the server takes it, we may hear nothing */
};

/* The lines received, as the server re-sends them on Reconnect: the history
 * of the last Reconnect and every line after it. */
struct seen_lines {
	char **line;
	size_t *len;
	long n, cap;
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
	struct strategy_options strategy_opt; /* --strategy, --think-ms, --iterations */
	struct strategy *strategy;            /* made once the Config came; NULL: random */
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
	bool oot_leave; /* we left out of turn: it may have been judged in our turn */

	/* the board, folded from the events, and the commands legal on it */
	struct model m;
	struct client_cmds cc;

	int cmds_this_turn;
	bool sent_leave;
	/* strict check: the next event to us must be CommandFailed */
	bool expect_fail;
	char expect_fail_what[160];
	const char *expect_fail_msg; /* its message as the engine has it, or NULL: any */
	int oot_pending;             /* out-of-turn commands whose CommandFailed has not come yet */
	bool act_after_fail;         /* our bad input in turn: act again on its CommandFailed */
	/* Out-of-turn lines are bad input (CommandFailed, nothing else, even if
	 * one is judged in our turn) unless this bot also sends well-formed
	 * commands out of turn: one of those judged in our turn gets its own
	 * ActNow, which we cannot tell from a real one, so two of our commands
	 * can be in flight from then on and the strict checks are off. */
	bool oot_commands, strict_off;

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

/* ---- decisions ------------------------------------------------------------------ */

/*
 * Every command the bot plays comes from the command layer (client/command.h):
 * the legal commands of its player now, as the engine lists them from the
 * bot's view of the game, and their wire lines. The bad lines of --invalid
 * are made the same way and then broken (see "bad input" below), so no
 * command is written out by hand here.
 */

/* The legal commands now, after the event just folded (empty on error). */
static void update_legal(struct bot *b)
{
	char err[300];
	if (client_cmds_update(&b->cc, &b->m, err, sizeof err) != 0)
		die(b, EXIT_PROTOCOL, "%s", err);
}

/* The wire line of c into a static buffer (with "\n"). */
static const char *line_of(const struct bot *b, const struct cmd *c)
{
	static char line[1024];
	if (client_cmd_line(c, b->revised, line, sizeof line) < 0)
		snprintf(line, sizeof line, "{}\n");
	return line;
}

/* Send c (sometimes with an unknown member, a CRLF ending or spaces around
 * it: all must be accepted) and tell the model it is in flight. */
static void send_cmd(struct bot *b, const struct cmd *c)
{
	char body[1024], line[1200];
	snprintf(body, sizeof body, "%s", line_of(b, c));
	size_t n = strlen(body);
	if (n > 0 && body[n - 1] == '\n')
		body[--n] = '\0';
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
	client_sent(&b->m, c);
	send_raw(b, line, strlen(line));
}

/* The legal command of the row with `flag` (ending the turn: CLIENT_SILENT,
 * leaving: CLIENT_LEAVES, starting the game: CLIENT_STARTS), or NULL. */
static const struct cmd *legal_with(const struct bot *b, unsigned flag)
{
	for (size_t i = 0; i < b->cc.legal.n; i++)
		if (client_command(b->cc.legal.v[i].type)->flags & flag)
			return &b->cc.legal.v[i];
	return NULL;
}

/* A random legal command: a kind by its weight (client_command's), then
 * one of its commands. NULL when no kind has a weight. */
static const struct cmd *pick_legal(struct bot *b)
{
	const struct game_cmd_list *l = &b->cc.legal;
	double total = 0;
	int count[CMD_TYPE_COUNT] = {0};
	for (size_t i = 0; i < l->n; i++)
		if (count[l->v[i].type]++ == 0)
			total += client_command(l->v[i].type)->weight;
	if (total <= 0)
		return NULL;
	double x = (double)(splitmix64(&b->rng) >> 11) / 9007199254740992.0 * total;
	int kind = -1;
	for (int t = 0; t < CMD_TYPE_COUNT && kind < 0; t++) {
		double w = count[t] ? client_command((enum cmd_type)t)->weight : 0;
		if (x < w)
			kind = t;
		x -= w;
	}
	for (int t = CMD_TYPE_COUNT - 1; kind < 0 && t >= 0; t--)
		if (count[t] && client_command((enum cmd_type)t)->weight > 0)
			kind = t; /* rounding */
	int k = rnd(&b->rng, count[kind]);
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].type == (enum cmd_type)kind && k-- == 0)
			return &l->v[i];
	return NULL;
}

/* ---- bad input (--invalid) -------------------------------------------------------- */

static int max_id(const int *ids, int n, size_t stride)
{
	int mx = 0;
	for (int i = 0; i < n; i++) {
		int id = *(const int *)((const char *)ids + (size_t)i * stride);
		if (id > mx)
			mx = id;
	}
	return mx;
}

/* An id no character of the configuration has. */
static int unknown_char_id(struct bot *b, uint64_t *r)
{
	if (!b->m.got_config)
		return 1000 + rnd(r, 1000);
	return max_id(&b->m.chars[0].id, b->m.nchars, sizeof b->m.chars[0]) + 1000 + rnd(r, 1000);
}

/* A value for parameter p of c: mostly an id of the configuration (any
 * character, location, card; an entrance of any location), now and then
 * one that does not exist. Without a configuration (the lurker) small
 * numbers. */
static int random_value(struct bot *b, uint64_t *r, const struct proto_param *p)
{
	const struct model *m = &b->m;
	bool odd = rnd(r, 6) == 0 || !m->got_config;
	int e = m->got_config ? m->locs[rnd(r, m->nlocs)].entrances : 2;
	switch (p->domain) {
	case PROTO_DOMAIN_NAME:
	case PROTO_DOMAIN_FLAG:
		return rnd(r, 2);
	case PROTO_DOMAIN_TARGET:
		if (m->got_config && rnd(r, 2))
			return rnd(r, 2) ? m->chars[rnd(r, m->nchars)].id
			                 : m->locs[rnd(r, m->nlocs)].id;
		return odd ? e + rnd(r, 3) - (rnd(r, 2) ? 0 : e + 3) : rnd(r, e);
	case PROTO_DOMAIN_ENTRANCE:
		return odd ? e + rnd(r, 3) - (rnd(r, 2) ? 0 : e + 3) : rnd(r, e);
	case PROTO_DOMAIN_LOCATION:
		return odd ? 1 + rnd(r, 100000) : m->locs[rnd(r, m->nlocs)].id;
	case PROTO_DOMAIN_HAND_CARD:
		return odd ? 1 + rnd(r, 100000) : m->cards[rnd(r, m->ncards)].id;
	case PROTO_DOMAIN_OFFERED_CHARACTER:
	case PROTO_DOMAIN_OWN_CHARACTER:
		break;
	}
	return odd ? unknown_char_id(b, r) : m->chars[rnd(r, m->nchars)].id;
}

/* A command of type t with random parameters (a name for the registration). */
static void random_command(struct bot *b, uint64_t *r, enum cmd_type t, struct cmd *c)
{
	memset(c, 0, sizeof *c);
	c->type = t;
	c->name = "again";
	size_t n;
	const struct proto_param *ps = proto_cmd_params(t, &n);
	c->has_target = rnd(r, 2);
	for (size_t i = 0; i < n; i++)
		if (ps[i].type != PROTO_STRING)
			proto_param_set(c, &ps[i], random_value(b, r, &ps[i]));
}

/* A random type whose table row has a parameter that `want` accepts
 * (NULL: any type); -1 when none. *param gets that parameter. */
static int type_with(uint64_t *r, bool (*want)(const struct proto_param *), size_t *param)
{
	int found = -1, seen = 0;
	for (int t = 0; t < CMD_TYPE_COUNT; t++) {
		size_t n;
		const struct proto_param *ps = proto_cmd_params((enum cmd_type)t, &n);
		for (size_t i = 0; i < n; i++)
			if (want(&ps[i]) && rnd(r, ++seen) == 0) {
				found = t;
				*param = i;
			}
	}
	return found;
}

static bool is_required(const struct proto_param *p)
{
	return !(p->flags & (PROTO_OPTIONAL | PROTO_PAIR | PROTO_BASE_ONLY));
}

static bool is_int(const struct proto_param *p)
{
	return p->type == PROTO_INT && !(p->flags & PROTO_BASE_ONLY);
}

static bool is_pair(const struct proto_param *p)
{
	return (p->flags & PROTO_PAIR) != 0;
}

static bool is_character(const struct proto_param *p)
{
	return is_required(p) && (p->domain == PROTO_DOMAIN_OWN_CHARACTER ||
	                          p->domain == PROTO_DOMAIN_OFFERED_CHARACTER);
}

/* line (a command's wire line) with the value of member `key` replaced by
 * `value` (NULL: the member removed), into a new string. */
static char *with_member(const char *line, const char *key, const char *value)
{
	char pat[64];
	snprintf(pat, sizeof pat, ",\"%s\":", key);
	const char *at = strstr(line, pat);
	size_t len = strlen(line);
	char *out = xcalloc(len + (value ? strlen(value) : 0) + 64, 1);
	if (!at) {
		memcpy(out, line, len);
		return out;
	}
	const char *end = at + strlen(pat);
	while (*end && *end != ',' && *end != '}')
		end++;
	memcpy(out, line, (size_t)(at - line));
	if (value)
		sprintf(out + strlen(out), "%s%s", pat, value);
	strcat(out, end);
	return out;
}

/* line with `extra` ("\"x\":1") added as its last member. */
static char *with_extra(const char *line, const char *extra, size_t extra_len)
{
	size_t len = strlen(line);
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '}'))
		len--;
	char *out = xcalloc(len + extra_len + 8, 1);
	memcpy(out, line, len);
	out[len] = ',';
	memcpy(out + len + 1, extra, extra_len);
	memcpy(out + len + 1 + extra_len, "}\n", 2);
	return out;
}

/* Send c's line with an unknown member "pad" of `len` letters added. */
static void send_padded(struct bot *b, const struct cmd *c, size_t len)
{
	char *member = xcalloc(len + 16, 1);
	memcpy(member, "\"pad\":\"", 7);
	memset(member + 7, 'a', len);
	member[7 + len] = '"';
	char *line = with_extra(line_of(b, c), member, len + 8);
	send_raw(b, line, strlen(line));
	free(line);
	free(member);
}

/* How the server answers an invalid line (protocol.md, behaviour.md and the
 * project's systemtests/scenarios/h_bytes.scn): */
enum inv_kind {
	INV_BAD,     /* does not decode into a command: CommandFailed, nothing else */
	INV_DECODED, /* a command that fails its checks: CommandFailed (+ ActNow in turn) */
	INV_BLANK,   /* empty / blank line: no answer at all */
};

/* One line that does not decode, whatever the state: a command's wire line
 * broken (cut, a member missing, a value of the wrong type, a pair half
 * given, bytes that are not UTF-8, ...) or no command at all. Returns the
 * line (owned by the caller; its length in *len) and says what it is. */
static char *bad_line(struct bot *b, uint64_t *r, size_t *len, const char **what)
{
	struct cmd c;
	size_t pi = 0, n;
	char *out = NULL;
	int t = type_with(r, is_int, &pi);
	random_command(b, r, (enum cmd_type)t, &c);
	c.has_target = true;
	const struct proto_param *p = &proto_cmd_params(c.type, &n)[pi];
	char line[1024];
	snprintf(line, sizeof line, "%s", line_of(b, &c));
	switch (rnd(r, 14)) {
	case 0: {
		size_t cut = 1 + (size_t)rnd(r, (int)strlen(line) - 3);
		out = xcalloc(cut + 2, 1);
		memcpy(out, line, cut);
		out[cut] = '\n';
		*what = "truncated JSON";
		break;
	}
	case 1:
		out = xstrdup("[1,2,3]\n");
		*what = "a JSON array";
		break;
	case 2:
		out = xcalloc(strlen(cmd_name(c.type)) + 8, 1);
		sprintf(out, "\"%s\"\n", cmd_name(c.type));
		*what = "a JSON string";
		break;
	case 3:
		out = xstrdup("{}\n");
		*what = "an object without command";
		break;
	case 4:
		out = xstrdup("{\"command\":\"Dance\",\"characterId\":1}\n");
		*what = "an unknown command";
		break;
	case 5:
		out = xstrdup("{\"command\":42}\n");
		*what = "a numeric command name";
		break;
	case 6: {
		t = type_with(r, is_required, &pi);
		random_command(b, r, (enum cmd_type)t, &c);
		snprintf(line, sizeof line, "%s", line_of(b, &c));
		out = with_member(line, proto_cmd_params(c.type, &n)[pi].key, NULL);
		*what = "a missing parameter";
		break;
	}
	case 7: {
		char v[32];
		snprintf(v, sizeof v, "\"%d\"", proto_param_get(&c, p));
		out = with_member(line, p->key, v);
		*what = "a string id";
		break;
	}
	case 8: {
		char v[32];
		snprintf(v, sizeof v, "%d.5", proto_param_get(&c, p));
		out = with_member(line, p->key, v);
		*what = "a fractional id";
		break;
	}
	case 9:
		out = with_member(line, p->key, "1e300");
		*what = "an id out of range";
		break;
	case 10: {
		t = type_with(r, is_pair, &pi);
		random_command(b, r, (enum cmd_type)t, &c);
		c.has_target = true;
		snprintf(line, sizeof line, "%s", line_of(b, &c));
		out = with_member(line, proto_cmd_params(c.type, &n)[pi].key, NULL);
		*what = "half of a pair";
		break;
	}
	case 11: {
		static const char not_utf8[] = "\"x\":\"\xff\xfe\"";
		out = with_extra(line, not_utf8, sizeof not_utf8 - 1);
		*what = "invalid UTF-8";
		break;
	}
	case 12: {
		/* deep nesting (the server's limit is 64), ~12 KB */
		int depth = 3000 + rnd(r, 3000);
		char *nest = xcalloc((size_t)depth * 2 + 8, 1);
		memcpy(nest, "\"x\":", 4);
		memset(nest + 4, '[', (size_t)depth);
		memset(nest + 4 + depth, ']', (size_t)depth);
		out = with_extra(line, nest, 4 + 2 * (size_t)depth);
		free(nest);
		*what = "deeply nested JSON";
		break;
	}
	default: {
		size_t ll = strlen(line);
		out = xcalloc(ll + 8, 1);
		memcpy(out, line, ll - 1);
		memcpy(out + ll - 1, " x\n", 3);
		*what = "trailing garbage";
		break;
	}
	}
	*len = strlen(out);
	if (rnd(r, 15) == 0) {
		/* a NUL byte before the end */
		char *nul = xcalloc(*len + 2, 1);
		memcpy(nul, out, *len - 2);
		memcpy(nul + *len - 1, out + *len - 2, 2);
		free(out);
		out = nul;
		(*len)++;
		*what = "a NUL byte";
	}
	return out;
}

/* A command the server must refuse now, as the engine says from the bot's
 * view: one parameter of a legal command changed, or a random command.
 * False when none was found in a few tries. *why: its CommandFailed. */
static bool refused_command(struct bot *b, uint64_t *r, struct cmd *c, const char **why)
{
	for (int tries = 0; tries < 64; tries++) {
		if (b->cc.legal.n > 0 && rnd(r, 2)) {
			*c = b->cc.legal.v[rnd(r, (int)b->cc.legal.n)];
			size_t n;
			const struct proto_param *ps = proto_cmd_params(c->type, &n);
			if (n > 0 && ps[0].type != PROTO_STRING) {
				const struct proto_param *p = &ps[rnd(r, (int)n)];
				proto_param_set(c, p, random_value(b, r, p));
			}
		} else {
			random_command(b, r, (enum cmd_type)rnd(r, CMD_TYPE_COUNT), c);
		}
		*why = client_cmds_refusal(&b->cc, c);
		if (*why && strcmp(*why, "aborts the registration") != 0)
			return true;
	}
	return false;
}

/* A command no state accepts: one that names a character by an id no
 * character has (the only commands without such a parameter are those of
 * the registration, leaving and ending the turn). */
static void unknown_character_command(struct bot *b, uint64_t *r, struct cmd *c)
{
	size_t pi = 0;
	int t = type_with(r, is_character, &pi);
	random_command(b, r, (enum cmd_type)t, c);
	c->character = unknown_char_id(b, r);
}

/*
 * One line that must fail whatever the state (only lines that do not decode
 * when bad_only): a broken line, a blank line, a command the engine refuses
 * (from the bot's view, which is exact when the game waits for it: the
 * server's CommandFailed message must be the engine's, *expect), or one
 * over a long padding. Uses generator r. Returns a description and stores
 * how the server answers in *kind.
 */
static const char *send_invalid(struct bot *b, uint64_t *r, enum inv_kind *kind, bool bad_only,
                                const char **expect)
{
	*expect = NULL;
	*kind = INV_BAD;
	int which = bad_only ? 0 : rnd(r, 23);
	if (which < 15) {
		size_t len;
		const char *what;
		char *line = bad_line(b, r, &len, &what);
		send_raw(b, line, len);
		free(line);
		return what;
	}
	if (which == 15) {
		send_str(b, rnd(r, 2) ? "\n" : "   \r\n");
		*kind = INV_BLANK;
		return "an empty line";
	}
	struct cmd c;
	const char *why = NULL;
	if (!refused_command(b, r, &c, &why))
		unknown_character_command(b, r, &c);
	*kind = INV_DECODED;
	*expect = why;
	if (which == 22) {
		/* a long line within the 64 KiB limit */
		send_padded(b, &c, 30000 + (size_t)rnd(r, 30000));
		return "a long line";
	}
	send_str(b, line_of(b, &c));
	return why ? why : "a command with an unknown character";
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
	/* any command with an unknown member of 64 KiB and more */
	struct cmd c;
	random_command(b, r, (enum cmd_type)rnd(r, CMD_TYPE_COUNT), &c);
	send_padded(b, &c, 65537 + (size_t)rnd(r, 40000));
	b->overlong_sent = true;
	return true;
}

static void end_turn(struct bot *b)
{
	struct cmd end;
	if (!client_command_with(CLIENT_SILENT, &end))
		return;
	send_cmd(b, &end);
	outbox_of(b)->silent = true;
	b->cmds_this_turn = 0;
}

/* Expect CommandFailed for the bad line just sent (strict checks only). */
static void expect_failure(struct bot *b, const char *what, const char *where, const char *msg)
{
	if (b->oot_pending != 0 || b->strict_off || b->overlong_sent)
		return; /* another answer of ours may come first */
	b->expect_fail = true;
	b->expect_fail_msg = msg;
	snprintf(b->expect_fail_what, sizeof b->expect_fail_what, "%s%s", what, where);
}

/* --strategy greedy or search: the command the strategy chooses from the
 * bot's view (bots/strategy.h); the first legal one should it have none
 * (it always has one when the view lists any). */
static void play_strategy(struct bot *b)
{
	if (b->cc.legal.n == 0 || !b->cc.view)
		return;
	if (!b->strategy)
		b->strategy = strategy_new(b->cc.cfg, &b->strategy_opt);
	struct cmd c = b->cc.legal.v[0];
	if (!strategy_choose(b->strategy, b->cc.view, &c) &&
	    (client_command(c.type)->flags & CLIENT_LEAVES))
		return;
	send_cmd(b, &c);
	if (client_command(c.type)->flags & CLIENT_SILENT)
		outbox_of(b)->silent = true;
}

/* One command on ActNow. */
static void act(struct bot *b)
{
	if (b->overlong_sent || b->stalled)
		return;
	model_set_pending(&b->m, MODEL_PEND_NONE, -1);
	update_legal(b);
	if (b->cc.legal.n == 0) {
		/* in our turn ending it and leaving always are legal, unless
		 * another of our commands in flight (strict checks off) has
		 * answered this prompt already on our board: then ending the
		 * turn may just fail */
		if (b->oot_pending == 0 && !b->strict_off)
			VIOLATION(b, "ActNow, but our board gives no legal command: %s",
			          b->cc.why_none);
		end_turn(b);
		return;
	}
	if (b->strategy_opt.kind != STRATEGY_RANDOM && b->invalid_pct <= 0 && b->leave_pct <= 0) {
		play_strategy(b);
		return;
	}
	if (b->cmds_this_turn++ >= MAX_CMDS_PER_TURN) {
		end_turn(b);
		return;
	}
	if (chance(&b->rng, b->leave_pct)) {
		b->sent_leave = true;
		send_cmd(b, legal_with(b, CLIENT_LEAVES));
		return;
	}
	if (chance(&b->rng, b->invalid_pct)) {
		enum inv_kind kind;
		const char *msg;
		const char *what = send_invalid(b, &b->rng, &kind, false, &msg);
		if (kind != INV_BLANK) {
			expect_failure(b, what, " (in turn)", msg);
			/* bad input gets no new ActNow: go on after its CommandFailed */
			b->act_after_fail = kind == INV_BAD;
			return;
		}
		/* a blank line gets no answer at all: go on with a real command */
	}
	const struct cmd *c = pick_legal(b);
	double end_w = !c ? 1.0 : (b->m.ndice == 0 ? 0.4 : 0.12);
	if (chance(&b->rng, end_w * 100.0)) {
		end_turn(b);
		return;
	}
	if (chance(&b->rng, 4)) {
		/* a plausible command with random parameters: may well fail */
		struct cmd any;
		do
			random_command(b, &b->rng, (enum cmd_type)rnd(&b->rng, CMD_TYPE_COUNT),
			               &any);
		while (client_command(any.type)->flags & (CLIENT_ENDS_TURN | CLIENT_NO_PROMPT));
		send_cmd(b, &any);
		return;
	}
	send_cmd(b, c);
}

static void select_characters(struct bot *b)
{
	update_legal(b);
	if (b->cc.legal.n == 0)
		VIOLATION(b, "Characters, but our board gives no selection: %s", b->cc.why_none);
	if (b->strategy_opt.kind != STRATEGY_RANDOM && b->invalid_pct <= 0) {
		play_strategy(b);
		return;
	}
	if (chance(&b->rng, b->invalid_pct)) {
		struct cmd c;
		const char *why = NULL;
		if (!refused_command(b, &b->rng, &c, &why))
			unknown_character_command(b, &b->rng, &c);
		send_str(b, line_of(b, &c));
		expect_failure(b, why ? why : "a character we were not offered", " (selection)",
		               why);
	}
	if (b->cc.legal.n > 0)
		send_cmd(b, &b->cc.legal.v[rnd(&b->rng, (int)b->cc.legal.n)]);
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
		/* leaving is only for the active player (it may be judged in our
		 * turn, then we leave for real) */
		struct cmd leave;
		client_command_with(CLIENT_LEAVES, &leave);
		send_str(b, line_of(b, &leave));
		b->oot_leave = true;
		kind = INV_DECODED;
	} else if (b->oot_commands && rnd(&b->rng_oot, 4) == 0) {
		/* a plausible command, out of turn, with an id no one owns */
		struct cmd c;
		unknown_character_command(b, &b->rng_oot, &c);
		send_str(b, line_of(b, &c));
		kind = INV_DECODED;
	} else {
		const char *msg;
		send_invalid(b, &b->rng_oot, &kind, true, &msg);
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
	update_legal(b);
	struct cmd again;
	const char *why;
	if (b->invalid_pct > 0 && chance(&b->rng, b->invalid_pct * 3) &&
	    refused_command(b, &b->rng, &again, &why)) {
		send_str(b,
		         line_of(b,
		                 &again)); /* registering again: the only one that does not abort */
		b->oot_pending++;          /* its CommandFailed may come at any time */
	}
	const struct cmd *start = legal_with(b, CLIENT_STARTS);
	if (b->start && start)
		send_cmd(b, start);
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
		    "and never left (server --timeout?)",
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
	if (b->expect_fail && b->expect_fail_msg && ev->s && strcmp(ev->s, b->expect_fail_msg) != 0)
		die(b, EXIT_SERVER, "the server refused %s with \"%s\", the engine says \"%s\"",
		    b->expect_fail_what, ev->s, b->expect_fail_msg);
	b->expect_fail = false;
	if (ev->type == MEV_COMMAND_FAILED && b->oot_pending > 0)
		model_other_failure_next(&b->m); /* the answer to a line out of turn */
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
 * the server answers every command but the end of a turn with a line to its sender
 * before anything else reaches it. So the next line that is not a Session
 * line, from the history or after it, shows the command was taken. If none
 * comes, it was lost: send it again, after RESEND_WAIT s for a command that
 * must draw a line. A turn's end, taken, may draw nothing until another player
 * acts or the round ends, so its wait is longer, and the longer the lower
 * our id: when several players' EndTurns are in doubt after one restart,
 * they are consecutive turns of one round, the game waits for the last of
 * them (the highest id), whose wait is the shortest, and what its re-sent
 * the end of a turn sets off reaches the others before their waits are over.
 */
#define RESEND_WAIT       0.5 /* s: the history has arrived by then */
#define SILENT_WAIT_FIRST 1.0 /* s, for ending a turn, plus SILENT_WAIT_STEP per higher id */
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
	client_cmds_free(&b->cc);
	client_cmds_init(&b->cc);
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
	if (client_reconnect_line(b->secret, line, sizeof line) < 0)
		die(b, EXIT_USAGE, "cannot write the Reconnect line");
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
	update_legal(b); /* before the Config: registering with our name */
	struct cmd reg = b->cc.legal.v[0];
	if (b->invalid_pct > 0 && chance(&b->rng, b->invalid_pct * 3)) {
		/* before registering: must fail, must not abort the registration:
		 * starting the game ("register first"), or registering without
		 * its name */
		struct cmd start;
		if (rnd(&b->rng, 2) && client_command_with(CLIENT_STARTS, &start)) {
			send_str(b, line_of(b, &start));
		} else {
			size_t n;
			char *bad = with_member(line_of(b, &reg),
			                        proto_cmd_params(reg.type, &n)[0].key, NULL);
			send_str(b, bad);
			free(bad);
		}
		b->expect_fail = true;
		b->expect_fail_msg = NULL;
		snprintf(b->expect_fail_what, sizeof b->expect_fail_what,
		         "a command before registering");
	}
	send_str(b, line_of(b, &reg));
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
	char buf[65536];
	size_t len = 0;
	long sent = 0, answered = 0;
	double last = now_sec();
	for (;;) {
		if (b->idle_sec > 0 && now_sec() - last > b->idle_sec)
			die(b, EXIT_STALL, "no answer for %.0f s", b->idle_sec);
		/* one line every ~20 ms, at most one unanswered at a time */
		if (sent == answered && sent < 5000) {
			size_t n;
			const char *what;
			char *line = bad_line(b, &b->rng, &n, &what);
			send_raw(b, line, n);
			free(line);
			sent++;
		}
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
        "  --start            start the game once the Config arrived\n"
        "  --strategy S       how to play: random (default: random legal commands),\n"
        "                     greedy or search (docs/bots.md); --invalid and --leave\n"
        "                     play random\n"
        "  --think-ms MS      search: time per decision (default 300)\n"
        "  --iterations N     search: N iterations per decision instead of a time:\n"
        "                     the same seed and the same game give the same commands\n"
        "  --rules E          base (default) or revised: must match the server\n"
        "  --invalid PCT      send a deliberately invalid command instead of a move\n"
        "                     with PCT % probability (and now and then one out of turn)\n"
        "  --leave PCT        leave the game instead of a move with PCT % probability\n"
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
		} else if (strcmp(a, "--strategy") == 0) {
			NEEDVAL();
			if (!strategy_kind_parse(val, &b->strategy_opt.kind))
				goto bad;
		} else if (strcmp(a, "--think-ms") == 0) {
			NEEDVAL();
			if (!parse_num(val, 1, 600000, &d))
				goto bad;
			b->strategy_opt.think_ms = (int)d;
		} else if (strcmp(a, "--iterations") == 0) {
			NEEDVAL();
			if (!parse_num(val, 1, 1e9, &d))
				goto bad;
			b->strategy_opt.iterations = (long)d;
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
	client_cmds_init(&b->cc);
	uint64_t s = b->seed;
	b->rng = splitmix64(&s);
	b->rng_oot = splitmix64(&s) ^ 0x5DEECE66DULL;
	b->oot_commands = splitmix64(&s) % 2 == 0;
	b->rng_net = splitmix64(&s);
	b->strategy_opt.seed = splitmix64(&s);
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
	client_cmds_free(&b->cc);
	strategy_free(b->strategy);
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
