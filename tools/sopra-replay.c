/*
 * sopra-replay: re-run a game offline from its journal (docs/journal.md).
 *
 *   sopra-replay [--player N | --conn N] [--quiet] [--stats] JOURNAL
 *   sopra-replay --at N JOURNAL
 *   sopra-replay --scn OUT.scn JOURNAL
 *   sopra-replay --watch JOURNAL
 *
 * Default: print every line the server sent, in order, as PLAYER<TAB>LINE
 * (PLAYER "-" for a connection that had not registered), byte for byte as
 * it went over the wire. --player N / --conn N print only what player N /
 * connection N received, as bare lines (exactly that client's stream).
 * Every digest in the journal is checked on the way.
 *
 * --at N: a summary of the game after the first N entries.
 * --watch: what a watcher got (docs/protocol.md, "Watching"): the Config
 * line, then every event sent to all, each journal entry's followed by a
 * line {"entry":N} -- the file the page of the HTTP port replays
 * (docs/web.md). The digests are not checked in this mode.
 * --scn OUT.scn: the game as a scenario (../shared/spec/scenarios.md), with
 * its configuration next to it (OUT.json), for the scenario runner.
 *
 * Exit status: 0 replayed (every digest matched), 1 a digest or an entry's
 * player did not match, 2 the journal cannot be read or is invalid (also: a
 * configuration whose hash does not match), 64 usage error.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "sopra/bcast.h"
#include "sopra/core.h"
#include "sopra/journal.h"
#include "sopra/proto.h"
#include "sopra/usage.h"
#include "sopra/xalloc.h"

#include "scntoken.h"

#define EXIT_MISMATCH 1
#define EXIT_BAD      2
#define EXIT_USAGE    64

/* The scn timeout when the game had timeouts: short enough for the
 * runner's 5 s wait for an event, long enough not to fire by itself. */
#define SCN_TIMEOUT_SEC 2

static const char usage_text[] =
        "Usage: sopra-replay [--player N | --conn N] [--quiet] [--stats] JOURNAL\n"
        "       sopra-replay --at N JOURNAL\n"
        "       sopra-replay --scn OUT.scn JOURNAL\n"
        "       sopra-replay --watch JOURNAL\n"
        "\n"
        "Re-runs the game recorded in JOURNAL (sopra-server --journal) and prints\n"
        "every line the server sent as PLAYER<TAB>LINE (\"-\" for a connection that\n"
        "had not registered), checking the journal's digests.\n"
        "\n"
        "  --player N   only the lines player N received, without the prefix\n"
        "  --conn N     only the lines connection N (the N-th accepted) received\n"
        "  --quiet      print nothing; only check (exit status)\n"
        "  --stats      entries, lines, digests and time on stderr\n"
        "  --at N       a summary of the state after the first N entries\n"
        "  --scn FILE   write the game as a scenario (and FILE's .json config)\n"
        "  --watch      what a watcher got, an {\"entry\":N} line after each\n"
        "               entry's events (for the browser page's replay)\n"
        "\n"
        "Exit status: 0 ok, 1 a digest did not match, 2 unreadable or invalid\n"
        "journal, 64 usage error.\n";

enum mode { MODE_PRINT, MODE_AT, MODE_SCN, MODE_WATCH };

struct opts {
	enum mode mode;
	int player; /* -2: all */
	int conn;   /* 0: all */
	bool quiet, stats;
	long long at;
	const char *scn;
	const char *path;
};

/* ---- printing ----------------------------------------------------------- */

static void print_line(void *ctx, int comm_id, int player, const char *line, size_t len)
{
	const struct opts *o = ctx;
	if (o->quiet)
		return;
	if (o->player != -2 || o->conn != 0) {
		if ((o->player != -2 && player != o->player) ||
		    (o->conn != 0 && comm_id != o->conn))
			return;
		fwrite(line, 1, len, stdout);
		return;
	}
	char pre[JOURNAL_PREFIX_MAX];
	size_t pn = journal_line_prefix(player, pre);
	fwrite(pre, 1, pn, stdout);
	fwrite(line, 1, len, stdout);
}

/* ---- --watch: a watcher's stream ----------------------------------------- */

struct watch_out {
	struct proto_buf b;
	enum game_rules rules;
};

/* The broadcaster's encode hook: an event for all is what a watcher gets. */
static void watch_encode(void *ctx, const struct game_event *ev)
{
	struct watch_out *w = ctx;
	if (ev->to != GEV_TO_ALL)
		return;
	proto_buf_reset(&w->b);
	proto_encode(ev, w->rules, &w->b);
	fwrite(w->b.data, 1, w->b.len, stdout);
}

static void watch_send(void *ctx, int comm_id, int player, const struct game_event *ev)
{
	(void)ctx;
	(void)comm_id;
	(void)player;
	(void)ev;
}

/* Replay jf through a core of its own and print what a watcher got (the
 * Config, each event for all), an {"entry":N} line after each entry. */
static int write_watch(const struct journal_file *jf)
{
	struct config_errors errs = {0};
	struct config *cfg = config_parse(jf->config_text, jf->config_len, &errs);
	if (!cfg) {
		fprintf(stderr, "sopra-replay: the journal's configuration does not load\n");
		config_errors_free(&errs);
		return EXIT_BAD;
	}
	struct watch_out w = {.rules = jf->rules};
	proto_buf_init(&w.b);
	struct game_event config_ev = {.type = GEV_CONFIG, .to = GEV_TO_SENDER, .str = cfg->text};
	proto_encode(&config_ev, jf->rules, &w.b);
	fwrite(w.b.data, 1, w.b.len, stdout);
	struct core_params cp = {.cfg = cfg, .seed = jf->seed, .rules = jf->rules};
	if (jf->sessions)
		cp.sessions = (struct session_opts){.secret = journal_session_secret,
		                                    .secret_ctx = (void *)jf->session_key,
		                                    .grace_sec = jf->grace_sec};
	struct core *core = core_new(
	        &cp, (struct bcast_sink){.encode = watch_encode, .send = watch_send, .ctx = &w});
	for (size_t i = 0; i < jf->nrec; i++) {
		const struct journal_record *rec = &jf->rec[i];
		struct cmdq_entry e;
		if (rec->kind == JOURNAL_RESUME)
			core_all_away(core);
		if (!journal_record_entry(rec, &e))
			continue;
		core_feed(core, &e);
		printf("{\"entry\":%lld}\n", (long long)rec->n);
	}
	core_free(core);
	proto_buf_free(&w.b);
	config_free(cfg);
	return 0;
}

/* ---- --scn: the game as a scenario --------------------------------------- */

struct delivery {
	int comm;
	char *line; /* without "\n" */
};

struct scn_state {
	struct delivery *d; /* the current entry's deliveries */
	size_t nd, cap;
	int max_comm;
};

static void collect_line(void *ctx, int comm_id, int player, const char *line, size_t len)
{
	(void)player;
	struct scn_state *s = ctx;
	s->d = xgrow(s->d, &s->cap, s->nd + 1, sizeof *s->d, 64);
	s->d[s->nd++] = (struct delivery){comm_id, xmemdup0(line, len ? len - 1 : 0)};
	if (comm_id > s->max_comm)
		s->max_comm = comm_id;
}

static void clear_deliveries(struct scn_state *s)
{
	for (size_t i = 0; i < s->nd; i++)
		free(s->d[i].line);
	s->nd = 0;
}

/* The expectation for one line sent, into buf ("Event args" or "?"). */
static char *event_step(const char *line)
{
	cJSON *obj = cJSON_Parse(line);
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "event");
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	bool ok = m && cJSON_IsString(name);
	if (ok) {
		fputs(name->valuestring, m);
		/* Config without arguments: compared with the config file */
		if (strcmp(name->valuestring, "Config") != 0) {
			for (const cJSON *v = obj->child; v && ok; v = v->next) {
				if (v == name)
					continue;
				if (cJSON_IsBool(v))
					fprintf(m, " %s", cJSON_IsTrue(v) ? "true" : "false");
				else if (cJSON_IsNumber(v))
					fprintf(m, " %.0f", v->valuedouble);
				else if (cJSON_IsString(v))
					ok = scn_put_token(m, v->valuestring);
				else
					ok = false;
			}
		}
	}
	if (m)
		fclose(m);
	cJSON_Delete(obj);
	if (!ok) {
		free(text);
		return xstrdup("?");
	}
	return text;
}

/* Write the expectations for the current entry's deliveries: one `* <` for
 * a line every client got, `N <` for each recipient otherwise. */
static void expect_deliveries(FILE *out, const struct scn_state *s, int nclients)
{
	for (size_t i = 0; i < s->nd;) {
		/* a run of the same line to distinct connections: one event */
		size_t j = i + 1;
		bool distinct = true;
		while (j < s->nd && distinct && strcmp(s->d[j].line, s->d[i].line) == 0) {
			for (size_t k = i; k < j; k++)
				if (s->d[k].comm == s->d[j].comm)
					distinct = false;
			if (distinct)
				j++;
		}
		char *ev = event_step(s->d[i].line);
		if ((int)(j - i) == nclients) {
			fprintf(out, "* < %s\n", ev);
		} else {
			for (size_t k = i; k < j; k++)
				fprintf(out, "%d < %s\n", s->d[k].comm, ev);
		}
		free(ev);
		i = j;
	}
}

/* Whether a `>` step leaves p out of c: an optional bool that is false
 * (positional, it is the last word, and absent means false). */
static bool step_omits(const struct cmd *c, const struct proto_param *p)
{
	return p->type == PROTO_BOOL && (p->flags & PROTO_OPTIONAL) && !proto_param_get(c, p);
}

/* One parameter's value as a `>` step's token, with the blank before it. */
static void put_param(FILE *out, const struct cmd *c, const struct proto_param *p)
{
	if (p->type == PROTO_STRING) {
		scn_put_token(out, c->name ? c->name : "");
		return;
	}
	int v = proto_param_get(c, p);
	fputc(' ', out);
	if (p->type == PROTO_BOOL)
		fputs(v ? "true" : "false", out);
	else
		fprintf(out, "%d", v);
}

/* Whether s can be a `>` step's token: no control character at all. */
static bool step_text(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/* Raw bytes for a `>>` step: \n \r \t \0 \\ \xHH escaped. */
static void put_raw(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\\')
			fputs("\\\\", out);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\r')
			fputs("\\r", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c == 0)
			fputs("\\0", out);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
}

/* The command as a `>` step with its parameters in protocol order (proto's
 * table), or as a raw `>>` line, proto_encode_cmd's, when its name cannot
 * be a token. */
static void send_command(FILE *out, int comm, const struct cmd *c, enum game_rules rules)
{
	if (c->name && !step_text(c->name)) {
		struct proto_buf line;
		proto_buf_init(&line);
		proto_encode_cmd(c, rules, &line);
		fprintf(out, "%d >> ", comm);
		put_raw(out, line.data, line.len);
		fputc('\n', out);
		proto_buf_free(&line);
		return;
	}
	fprintf(out, "%d > %s", comm, cmd_name(c->type));
	size_t n;
	const struct proto_param *params = proto_cmd_params(c->type, &n);
	for (size_t i = 0; i < n; i++)
		if (proto_param_carried(c, &params[i]) && !step_omits(c, &params[i]))
			put_param(out, c, &params[i]);
	fputc('\n', out);
}

/* Whether line decodes to exactly the error message msg. */
static bool gives_error(const char *line, size_t len, enum game_rules rules, const char *msg)
{
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	const char *err = NULL;
	bool ok = !proto_decode(line, len, rules, &pc, &err) && err && strcmp(err, msg) == 0;
	proto_cmd_clear(&pc);
	return ok;
}

/* The command type named by the first n bytes of s, or -1. */
static int cmd_type_named(const char *s, size_t n)
{
	for (int t = 0; t < CMD_TYPE_COUNT; t++) {
		const char *name = cmd_name((enum cmd_type)t);
		if (strlen(name) == n && memcmp(name, s, n) == 0)
			return t;
	}
	return -1;
}

/* Appends ,"key":value for parameter p to buf (of size n, holding *len
 * bytes): `value`, or a valid one of p's type when NULL. */
static void put_member(char *buf, size_t n, size_t *len, const struct proto_param *p,
                       const char *value)
{
	if (!value)
		value = p->type == PROTO_STRING ? "\"x\"" : p->type == PROTO_BOOL ? "false" : "0";
	if (*len < n)
		*len += (size_t)snprintf(buf + *len, n - *len, ",\"%s\":%s", p->key, value);
}

/* Into buf: a line of command `type` with every parameter of its row
 * (proto's table) valid but parameter `broken`, which has `value` (is
 * missing when value is NULL), and parameter `skip` (>= 0), which is left
 * out. */
static void param_line(char *buf, size_t n, enum cmd_type type, size_t broken, const char *value,
                       long skip)
{
	size_t np;
	const struct proto_param *ps = proto_cmd_params(type, &np);
	size_t len = (size_t)snprintf(buf, n, "{\"command\":\"%s\"", cmd_name(type));
	for (size_t i = 0; i < np; i++) {
		if ((long)i == skip || (i == broken && !value))
			continue;
		put_member(buf, n, &len, &ps[i], i == broken ? value : NULL);
	}
	if (len < n)
		snprintf(buf + len, n - len, "}");
}

/* A line for the decoder's messages about one command's parameters:
 * "Cmd.param: reason" (the others valid, this one broken or missing) and
 * "Cmd: A and B must be given together" (one of a pair left out), or NULL. */
static char *line_for_param_error(const char *msg, enum game_rules rules)
{
	const char *colon = strstr(msg, ": ");
	const char *dot = memchr(msg, '.', colon ? (size_t)(colon - msg) : 0);
	int type = colon ? cmd_type_named(msg, (size_t)((dot ? dot : colon) - msg)) : -1;
	if (type < 0)
		return NULL;
	static const char *const broken[] = {"\"x\"", "0.5", "1e10", "true", "null", "1"};
	size_t np;
	proto_cmd_params((enum cmd_type)type, &np);
	char buf[512];
	for (size_t i = 0; i < np; i++) {
		for (size_t b = 0; b <= sizeof broken / sizeof broken[0]; b++) {
			const char *value = b < sizeof broken / sizeof broken[0] ? broken[b] : NULL;
			param_line(buf, sizeof buf, (enum cmd_type)type, i, value, -1);
			if (gives_error(buf, strlen(buf), rules, msg))
				return xstrdup(buf);
		}
		param_line(buf, sizeof buf, (enum cmd_type)type, np, NULL, (long)i);
		if (gives_error(buf, strlen(buf), rules, msg))
			return xstrdup(buf);
	}
	return NULL;
}

/* A line that draws the same CommandFailed message as the recorded bad
 * line (the journal keeps the message, not the line), or NULL. */
static char *line_for_error(const char *msg, enum game_rules rules)
{
	static const char *const fixed[] = {
	        "[]",   "{}", "{\"command\":1}", "{\"command\":\"x\",\"command\":\"x\"}",
	        "\xff", "{",  "\"x\"",
	};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		if (gives_error(fixed[i], strlen(fixed[i]), rules, msg))
			return xstrdup(fixed[i]);
	if (gives_error("\0", 1, rules, msg))
		return xmemdup0("\0", 1);
	/* unknown command "X" (a long name is cut and gets "...") */
	char buf[256];
	const char *q = strchr(msg, '"');
	const char *qe = q ? strrchr(msg, '"') : NULL;
	if (q && qe > q && strncmp(msg, "unknown command", 15) == 0 && qe - q < 100) {
		for (int more = 0; more < 2; more++) {
			snprintf(buf, sizeof buf, "{\"command\":\"%.*s%s\"}", (int)(qe - q - 1),
			         q + 1, more ? "xxxxxxxx" : "");
			if (gives_error(buf, strlen(buf), rules, msg))
				return xstrdup(buf);
		}
	}
	/* malformed JSON at byte N: the same problem, moved to byte N */
	static const char *const families[][2] = {
	        {"", "x"},
	        {"{}", "x"},
	        {"{\"", ""},
	        {"{", "1"},
	        {"{\"", "\\ud800\"}"},
	        {"{\"", "\\q\"}"},
	        {"{\"", "\\u0000\"}"},
	        {"[", "}"},
	        {"{\"a\":", "}"},
	        {"{", ""},
	        {"{\"a\":", ""},
	        {"[", ""},
	};
	long at = -1;
	if (strncmp(msg, "malformed JSON at byte ", 23) == 0)
		at = strtol(msg + 23, NULL, 10);
	for (size_t f = 0; at >= 0 && at < 200 && f < sizeof families / sizeof families[0]; f++) {
		for (long pad = 0; pad <= at + 1; pad++) {
			int n = snprintf(buf, sizeof buf, "%s%*s%s", families[f][0], (int)pad, "",
			                 families[f][1]);
			/* inside a string the padding is letters, elsewhere blanks */
			if (families[f][0][0] == '{' && families[f][0][1] == '"')
				memset(buf + 2, 'a', (size_t)pad);
			if (gives_error(buf, (size_t)n, rules, msg))
				return xstrdup(buf);
		}
	}
	/* Cmd.param: reason, Cmd: A and B must be given together */
	return line_for_param_error(msg, rules);
}

static void send_bad_line(FILE *out, const struct journal_record *rec, enum game_rules rules,
                          bool *exact)
{
	*exact = true;
	if (strcmp(rec->error, PROTO_ERR_LINE_TOO_LONG) == 0) {
		fprintf(out, "# a line of %d bytes: too long\n%d >> ", PROTO_MAX_LINE + 1,
		        rec->comm_id);
		for (int i = 0; i <= PROTO_MAX_LINE; i++)
			fputc('x', out);
		fputs("\\n\n", out);
		return;
	}
	char *line = line_for_error(rec->error, rules);
	if (!line) {
		*exact = false;
		fputs("# the journal keeps a bad line's message, not its bytes:\n# ", out);
		put_raw(out, rec->error, strlen(rec->error));
		fputs("\n# any bad line draws a CommandFailed and changes nothing else\n", out);
		line = xstrdup("{}");
	}
	fprintf(out, "%d >> ", rec->comm_id);
	put_raw(out, line, line[0] ? strlen(line) : 1);
	fputs("\\n\n", out);
	free(line);
}

/* The path of the config file written next to the scenario, and its name
 * relative to it. */
static char *config_path_for(const char *scn)
{
	size_t n = strlen(scn);
	if (n > 4 && strcmp(scn + n - 4, ".scn") == 0)
		n -= 4;
	assert(n <= INT_MAX);
	size_t size = n + sizeof ".json";
	char *p = xmalloc(size);
	snprintf(p, size, "%.*s.json", (int)n, scn);
	return p;
}

static int write_scenario(const struct opts *o, const struct journal_file *jf)
{
	char err[512];
	struct scn_state st = {0};
	struct journal_replay *r = journal_replay_new(jf, collect_line, &st, err, sizeof err);
	if (!r) {
		fprintf(stderr, "sopra-replay: %s: %s\n", o->path, err);
		return EXIT_BAD;
	}
	/* First pass: whether the game timed out */
	int max_comm = jf->max_comm;
	bool timeouts = false;
	for (size_t i = 0; i < jf->nrec; i++)
		if (jf->rec[i].kind == JOURNAL_TIMEOUT)
			timeouts = true;
	char *cfg_path = config_path_for(o->scn);
	const char *cfg_name = strrchr(cfg_path, '/') ? strrchr(cfg_path, '/') + 1 : cfg_path;
	FILE *cf = fopen(cfg_path, "wb");
	if (!cf || fwrite(jf->config_text, 1, jf->config_len, cf) != jf->config_len ||
	    fclose(cf) != 0) {
		fprintf(stderr, "sopra-replay: cannot write %s: %s\n", cfg_path, strerror(errno));
		free(cfg_path);
		journal_replay_free(r);
		return EXIT_BAD;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	fprintf(out,
	        "# Generated by sopra-replay from %s\n# (server %s, started %s, %lld entries).\n"
	        "# Clients are the server's connections in the order it accepted them.\n",
	        o->path, jf->server, jf->start, (long long)jf->entries);
	fprintf(out, "config  %s\nseed    %lld\n", cfg_name, (long long)jf->seed);
	/* without any: one silent client (no clients header would mean a
	 * configuration the server must reject) */
	fputs("clients", out);
	for (int c = 1; c <= (max_comm > 0 ? max_comm : 1); c++)
		fprintf(out, " %d", c);
	fputc('\n', out);
	fprintf(out, "rules   %s\ntimeout %d\n", game_rules_name(jf->rules),
	        timeouts && jf->timeout_sec > SCN_TIMEOUT_SEC ? SCN_TIMEOUT_SEC : jf->timeout_sec);
	if (timeouts && jf->timeout_sec > SCN_TIMEOUT_SEC)
		fprintf(out,
		        "# (the game ran with --timeout %d; its timeouts happen after %d s here)\n",
		        jf->timeout_sec, SCN_TIMEOUT_SEC);
	int rc = 0;
	int approx = 0;
	bool cut = false;
	for (size_t i = 0; i < jf->nrec && !cut; i++) {
		const struct journal_record *rec = &jf->rec[i];
		bool exact = true;
		switch (rec->kind) {
		case JOURNAL_COMMAND:
			fputc('\n', out);
			send_command(out, rec->comm_id, &rec->cmd, jf->rules);
			break;
		case JOURNAL_BAD:
			fputc('\n', out);
			send_bad_line(out, rec, jf->rules, &exact);
			break;
		case JOURNAL_TIMEOUT:
			fputs("\n# the --timeout expires\n", out);
			break;
		case JOURNAL_LOST:
			if (rec->drain)
				break; /* after a line too long: the server closes it */
			if (rec->player < 0) {
				fprintf(out,
				        "\n# connection %d (not registered) closed here; it stays "
				        "open in the scenario, which changes nothing\n",
				        rec->comm_id);
				break;
			}
			fprintf(out,
			        "\n# entry %lld: player %d's connection was lost here; a "
			        "scenario cannot close a client, so it ends here\n",
			        (long long)rec->n, rec->player);
			fprintf(stderr,
			        "sopra-replay: note: the scenario stops before entry %lld (player "
			        "%d's connection lost)\n",
			        (long long)rec->n, rec->player);
			cut = true;
			continue;
		case JOURNAL_RECONNECT:
		case JOURNAL_GRACE_OVER:
		case JOURNAL_RESUME:
			fprintf(out,
			        "\n# entry %lld: a session record (reconnect, grace or resume); a "
			        "scenario cannot express it, so it ends here\n",
			        (long long)rec->n);
			cut = true;
			continue;
		case JOURNAL_DIGEST:
		case JOURNAL_END:
			break;
		}
		if (!exact)
			approx++;
		clear_deliveries(&st);
		if (!journal_replay_step(r, rec, err, sizeof err)) {
			fprintf(stderr, "sopra-replay: %s: %s\n", o->path, err);
			rc = EXIT_MISMATCH;
			break;
		}
		if (!exact) {
			/* the message differs: expect any CommandFailed */
			for (size_t k = 0; k < st.nd; k++)
				fprintf(out, "%d < CommandFailed\n", st.d[k].comm);
		} else {
			expect_deliveries(out, &st, max_comm);
		}
	}
	if (!cut && rc == 0 && game_is_over(journal_replay_game(r)))
		fputs("\nexit 0\n", out);
	fclose(out);
	clear_deliveries(&st);
	free(st.d);
	journal_replay_free(r);
	if (rc == 0) {
		FILE *f = fopen(o->scn, "wb");
		if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
			fprintf(stderr, "sopra-replay: cannot write %s: %s\n", o->scn,
			        strerror(errno));
			rc = EXIT_BAD;
		} else if (approx) {
			fprintf(stderr,
			        "sopra-replay: note: %d bad line(s) are sent as another bad line "
			        "(see the comments in %s)\n",
			        approx, o->scn);
		}
	}
	free(text);
	free(cfg_path);
	return rc;
}

/* ---- main ---------------------------------------------------------------- */

static bool parse_num(const char *s, long long min, long long max, long long *out)
{
	char *end = NULL;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (!*s || *end || errno || v < min || v > max)
		return false;
	*out = v;
	return true;
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int
usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sopra_usage_verror("sopra-replay", usage_text, fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		long long n;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage_text, stdout);
			return 0;
		} else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
			o->quiet = true;
		} else if (strcmp(a, "--stats") == 0) {
			o->stats = true;
		} else if (strcmp(a, "--player") == 0 || strcmp(a, "--conn") == 0 ||
		           strcmp(a, "--at") == 0) {
			if (!v || !parse_num(v, a[2] == 'c' ? 1 : 0, INT32_MAX, &n))
				return usage("%s needs a number", a);
			i++;
			if (a[2] == 'p')
				o->player = (int)n;
			else if (a[2] == 'c')
				o->conn = (int)n;
			else {
				o->mode = MODE_AT;
				o->at = n;
			}
		} else if (strcmp(a, "--watch") == 0) {
			o->mode = MODE_WATCH;
		} else if (strcmp(a, "--scn") == 0) {
			if (!v || !*v)
				return usage("%s needs a file name", a);
			o->mode = MODE_SCN;
			o->scn = argv[++i];
		} else if (a[0] == '-' && a[1] != '\0') {
			return usage("unknown option '%s'", a);
		} else if (o->path) {
			return usage("more than one journal ('%s')", a);
		} else {
			o->path = a;
		}
	}
	if (!o->path)
		return usage("no journal given");
	return -1;
}

static double clock_sec(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct opts o = {.mode = MODE_PRINT, .player = -2};
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);

	double t0 = clock_sec(CLOCK_MONOTONIC), cpu0 = clock_sec(CLOCK_PROCESS_CPUTIME_ID);
	char err[512];
	struct journal_file jf;
	if (!journal_load(o.path, &jf, err, sizeof err)) {
		fprintf(stderr, "sopra-replay: %s\n", err);
		return EXIT_BAD;
	}
	if (jf.torn)
		fprintf(stderr, "sopra-replay: %s: %s\n", o.path, jf.torn_why);
	if (o.mode == MODE_SCN || o.mode == MODE_WATCH) {
		rc = o.mode == MODE_SCN ? write_scenario(&o, &jf) : write_watch(&jf);
		journal_file_free(&jf);
		return rc;
	}
	if (o.mode == MODE_AT && o.at > jf.entries) {
		fprintf(stderr, "sopra-replay: %s has %lld entries, not %lld\n", o.path,
		        (long long)jf.entries, o.at);
		journal_file_free(&jf);
		return EXIT_USAGE;
	}
	struct journal_replay *r = journal_replay_new(&jf, o.mode == MODE_PRINT ? print_line : NULL,
	                                              &o, err, sizeof err);
	if (!r) {
		fprintf(stderr, "sopra-replay: %s: %s\n", o.path, err);
		journal_file_free(&jf);
		return EXIT_BAD;
	}
	rc = 0;
	int64_t at_ms = 0;
	for (size_t i = 0; i < jf.nrec; i++) {
		const struct journal_record *rec = &jf.rec[i];
		bool entry = journal_kind_is_entry(rec->kind);
		if (o.mode == MODE_AT && entry && rec->n > o.at)
			break;
		if (!journal_replay_step(r, rec, err, sizeof err)) {
			fflush(stdout);
			fprintf(stderr, "sopra-replay: %s: %s\n", o.path, err);
			rc = EXIT_MISMATCH;
			break;
		}
		if (entry)
			at_ms = rec->ms;
	}
	if (rc == 0 && o.mode == MODE_AT) {
		printf("after entry %lld of %lld (%lld ms into the game)\n", o.at,
		       (long long)jf.entries, (long long)at_ms);
		const struct bcast *b = core_bcast(journal_replay_core(r));
		fputs("connections:", stdout);
		int shown = 0;
		for (int p = 0; p < game_player_count(journal_replay_game(r)); p++)
			if (bcast_in_game(b, p)) {
				int c = bcast_comm_of(b, p);
				if (c > 0)
					printf(" %d=player %d", c, p);
				else
					printf(" (player %d: lost)", p);
				shown++;
			}
		fputs(shown ? "\n" : " none\n", stdout);
		game_describe(journal_replay_game(r), stdout);
	}
	if (fflush(stdout) != 0 && rc == 0) {
		fprintf(stderr, "sopra-replay: cannot write the output: %s\n", strerror(errno));
		rc = EXIT_BAD;
	}
	if (o.stats)
		fprintf(stderr,
		        "sopra-replay: %lld entries, %lld lines, %d digest(s) checked%s, %.2f ms "
		        "(read and replay; cpu %.2f ms)\n",
		        (long long)journal_replay_entries(r), (long long)journal_replay_lines(r),
		        journal_replay_digests(r), jf.ended ? "" : ", no end record",
		        (clock_sec(CLOCK_MONOTONIC) - t0) * 1e3,
		        (clock_sec(CLOCK_PROCESS_CPUTIME_ID) - cpu0) * 1e3);
	journal_replay_free(r);
	journal_file_free(&jf);
	return rc;
}
