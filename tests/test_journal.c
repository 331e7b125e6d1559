/*
 * Unit tests for the journal (src/journal.c, docs/journal.md): a game is
 * driven through a real core (the queue, the dispatcher, the broadcaster and
 * the session layer) with a sink that records every line as the server
 * would send it ("PLAYER\tLINE") and feeds the journal's tap; the journal is then read back and
 * replayed, and the replay must print the same bytes. Also: every record kind, odd strings, a torn
 * or corrupt last line, a wrong configuration hash, a digest that does not match, and a journal
 * that cannot be written (existing file, missing directory, file size limit).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "journal_int.h"
#include "sopra/bcast.h"
#include "sopra/cmdq.h"
#include "sopra/config.h"
#include "sopra/core.h"
#include "sopra/game.h"
#include "sopra/journal.h"
#include "sopra/proto.h"

/* ---- a growable byte string ------------------------------------------- */

struct str {
	char *s;
	size_t n, cap;
};

static void str_add(struct str *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		assert_non_null(b->s);
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

/* ---- a server without sockets ------------------------------------------ */

struct srv {
	struct config *cfg;
	struct core *core;
	struct game *game;         /* the core's */
	const struct bcast *bcast; /* the core's */
	struct cmdq *q;            /* the core's */
	struct proto_buf line;
	struct journal *j;
	struct str sent; /* "PLAYER\tLINE" of every line, as sopra-replay prints them */
	int closed[16];  /* connections told to close (like net: nothing more is sent) */
	int nclosed;
	size_t scanned; /* bytes of sent the scripted players have read */
	char path[256];
};

static void srv_encode(void *ctx, const struct game_event *ev)
{
	struct srv *s = ctx;
	proto_buf_reset(&s->line);
	proto_encode(ev, game_rules_of(s->game), &s->line);
}

/* Like net.c's sink: the tap sees every delivery, the wire only those to
 * connections that were not told to close. */
static void srv_send(void *ctx, int comm_id, int player, const struct game_event *ev)
{
	struct srv *s = ctx;
	if (s->j)
		journal_on_line(s->j, comm_id, player, ev, s->line.data, s->line.len);
	for (int i = 0; i < s->nclosed; i++)
		if (s->closed[i] == comm_id)
			return;
	char pre[JOURNAL_PREFIX_MAX];
	size_t pn = journal_line_prefix(player, pre);
	str_add(&s->sent, pre, pn);
	str_add(&s->sent, s->line.data, s->line.len);
}

static void srv_close(void *ctx, int comm_id)
{
	struct srv *s = ctx;
	assert_true(s->nclosed < 16);
	s->closed[s->nclosed++] = comm_id;
}

static void srv_left(void *ctx, int comm_id, int player)
{
	(void)player;
	srv_close(ctx, comm_id);
}

static void temp_path(char *buf, size_t len, const char *tag)
{
	static int k;
	const char *dir = getenv("TMPDIR");
	snprintf(buf, len, "%s/test_journal_%d_%d_%s.jnl", dir && *dir ? dir : "/tmp",
	         (int)getpid(), k++, tag);
	unlink(buf);
}

/* The failure budget of the next server (dispatch.h, "What is recorded"):
 * 0 records every entry, as servers before the budget did. */
static int srv_budget = DISPATCH_FAILURE_BUDGET;

/* A server of a new game without a journal yet (s->path: a fresh name). */
static struct srv *srv_bare(const char *cfg_file, int64_t seed, enum game_rules rules,
                            const char *tag)
{
	struct srv *s = calloc(1, sizeof *s);
	assert_non_null(s);
	struct config_errors errs = {0};
	s->cfg = config_load(cfg_file, &errs);
	assert_non_null(s->cfg);
	struct core_params p = {
	        .cfg = s->cfg, .seed = seed, .rules = rules, .failure_budget = srv_budget};
	s->core = core_new(&p, (struct bcast_sink){.encode = srv_encode,
	                                           .send = srv_send,
	                                           .left = srv_left,
	                                           .close = srv_close,
	                                           .ctx = s});
	s->game = core_game(s->core);
	s->bcast = core_bcast(s->core);
	s->q = core_queue(s->core);
	proto_buf_init(&s->line);
	temp_path(s->path, sizeof s->path, tag);
	return s;
}

static struct srv *srv_new_cfg(const char *cfg_file, int64_t seed, enum game_rules rules,
                               enum journal_sync sync, const char *tag)
{
	struct srv *s = srv_bare(cfg_file, seed, rules, tag);
	char err[256];
	struct journal_params p = {.path = s->path,
	                           .sync = sync,
	                           .cfg = s->cfg,
	                           .config_path = cfg_file,
	                           .seed = seed,
	                           .rules = rules,
	                           .timeout_sec = 30,
	                           .failure_budget = srv_budget};
	s->j = journal_open(&p, NULL, err, sizeof err);
	if (!s->j)
		fail_msg("journal_open: %s", err);
	struct dispatch_hooks hooks = journal_hooks(s->j, s->game);
	core_set_hooks(s->core, &hooks);
	return s;
}

static struct srv *srv_new(enum journal_sync sync, const char *tag)
{
	return srv_new_cfg(SOPRA_SOURCE_DIR "/resources/example.json", 42, RULES_BASE, sync, tag);
}

static void srv_drain(struct srv *s)
{
	core_drain(s->core);
}

static void srv_line(struct srv *s, int comm, const char *line)
{
	cmdq_push_line(s->q, comm, line, strlen(line));
	srv_drain(s);
}

static void srv_free(struct srv *s, bool keep_file)
{
	if (s->j)
		journal_close(s->j, game_is_over(s->game) ? "game over" : "stopped");
	if (!keep_file)
		unlink(s->path);
	core_free(s->core);
	config_free(s->cfg);
	proto_buf_free(&s->line);
	free(s->sent.s);
	free(s);
}

/* ---- scripted players: pick the first two characters, end every turn,
 * barricade now and then ---------------------------------------------- */

static int json_int(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) ? v->valueint : -1;
}

/* Answer the new lines; returns false when nothing was asked. */
static bool srv_play_step(struct srv *s, int turn_no)
{
	bool acted = false;
	while (s->scanned < s->sent.n && !acted) {
		char *line = s->sent.s + s->scanned;
		char *nl = strchr(line, '\n');
		assert_non_null(nl);
		s->scanned = (size_t)(nl - s->sent.s) + 1;
		if (line[0] == '-')
			continue;
		int player = atoi(line);
		char *tab = strchr(line, '\t');
		*nl = '\0';
		cJSON *o = cJSON_Parse(tab + 1);
		*nl = '\n';
		assert_non_null(o);
		const char *ev = cJSON_GetObjectItemCaseSensitive(o, "event")->valuestring;
		char cmd[160];
		cmd[0] = '\0';
		if (strcmp(ev, "Characters") == 0) {
			snprintf(cmd, sizeof cmd,
			         "{\"command\":\"SelectCharacters\",\"characterId0\":%d,"
			         "\"characterId1\":%d}",
			         json_int(o, "characterId0"), json_int(o, "characterId1"));
		} else if (strcmp(ev, "ActNow") == 0) {
			if (turn_no % 3 == 1)
				snprintf(cmd, sizeof cmd,
				         "{\"command\":\"Search\",\"characterId\":0}");
			else
				snprintf(cmd, sizeof cmd, "{\"command\":\"EndTurn\"}");
		}
		cJSON_Delete(o);
		if (cmd[0]) {
			srv_line(s, bcast_comm_of(s->bcast, player), cmd);
			acted = true;
		}
	}
	return acted;
}

/* Register n players on connections 1..n (the last start), then play. */
static void srv_play_game(struct srv *s, int n)
{
	static const char *const names[] = {"Ada", "Bo \"the\" \\ Brave", "Cy\tTab", "Dí 🧟"};
	for (int p = 0; p < n; p++) {
		char line[128];
		cJSON *name = cJSON_CreateString(names[p]);
		char *js = cJSON_PrintUnformatted(name);
		snprintf(line, sizeof line, "{\"command\":\"Register\",\"playerName\":%s}", js);
		free(js);
		cJSON_Delete(name);
		srv_line(s, p + 1, line);
	}
	if (!game_is_over(s->game) && game_waiting_for(s->game) == GAME_WAIT_ANY)
		srv_line(s, 1, "{\"command\":\"StartGame\"}");
	for (int i = 0; i < 5000 && !game_is_over(s->game); i++)
		if (!srv_play_step(s, i))
			break;
}

/* ---- replay ------------------------------------------------------------ */

static void collect(void *ctx, int comm_id, int player, const char *line, size_t len)
{
	(void)comm_id;
	struct str *b = ctx;
	char pre[JOURNAL_PREFIX_MAX];
	size_t pn = journal_line_prefix(player, pre);
	str_add(b, pre, pn);
	str_add(b, line, len);
}

/* Load and replay path; the replay's lines into out. Returns false with
 * err on a load error or mismatch. */
static bool replay_file(const char *path, struct str *out, struct journal_file *jf, char *err,
                        size_t errlen, int *digests)
{
	if (!journal_load(path, jf, err, errlen))
		return false;
	struct journal_replay *r = journal_replay_new(jf, collect, out, err, errlen);
	if (!r) {
		journal_file_free(jf);
		return false;
	}
	bool ok = true;
	for (size_t i = 0; i < jf->nrec && ok; i++)
		ok = journal_replay_step(r, &jf->rec[i], err, errlen);
	if (digests)
		*digests = journal_replay_digests(r);
	journal_replay_free(r);
	return ok;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	struct str b = {0};
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		str_add(&b, chunk, n);
	fclose(f);
	*len = b.n;
	if (!b.s)
		str_add(&b, "", 0);
	return b.s;
}

/* Free s (keeping its journal), with what outlives it: the journal's path
 * in path (256 bytes) and, unless sent is NULL, a copy of every line it
 * sent. */
static void srv_end(struct srv *s, char *path, struct str *sent)
{
	if (sent) {
		*sent = (struct str){0};
		str_add(sent, s->sent.s, s->sent.n);
	}
	snprintf(path, 256, "%s", s->path);
	srv_free(s, true);
}

/* The journal of a game of 2 played to its end by a server named name:
 * its text (*len bytes; the caller frees it), its path in path. */
static char *played_journal(const char *name, char *path, size_t *len)
{
	struct srv *s = srv_new(JOURNAL_SYNC_NEVER, name);
	srv_play_game(s, 2);
	srv_end(s, path, NULL);
	return slurp(path, len);
}

static void spit(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* ---- tests -------------------------------------------------------------- */

static void test_sync_names(void **state)
{
	(void)state;
	enum journal_sync s;
	assert_true(journal_sync_parse("always", &s));
	assert_int_equal(s, JOURNAL_SYNC_ALWAYS);
	assert_true(journal_sync_parse("turn", &s));
	assert_int_equal(s, JOURNAL_SYNC_TURN);
	assert_true(journal_sync_parse("never", &s));
	assert_int_equal(s, JOURNAL_SYNC_NEVER);
	assert_false(journal_sync_parse("Turn", &s));
	assert_false(journal_sync_parse("", &s));
	assert_string_equal(journal_sync_name(JOURNAL_SYNC_TURN), "turn");
	char pre[JOURNAL_PREFIX_MAX];
	assert_int_equal(journal_line_prefix(-1, pre), 2);
	assert_memory_equal(pre, "-\t", 2);
	assert_int_equal(journal_line_prefix(12, pre), 3);
	assert_memory_equal(pre, "12\t", 3);
	assert_int_equal(journal_line_prefix(INT_MAX, pre), 11);
	assert_string_equal(pre, "2147483647\t");
}

/* A whole 4-player game: the replay prints exactly what was sent, every
 * digest matches, and the journal of a typical game stays small. */
static void check_full_game(enum journal_sync sync, enum game_rules rules)
{
	struct srv *s =
	        srv_new_cfg(SOPRA_SOURCE_DIR "/resources/example.json", 7, rules, sync, "full");
	srv_play_game(s, 4);
	assert_true(game_is_over(s->game));
	assert_false(journal_failed(s->j));
	char path[256];
	struct str sent;
	srv_end(s, path, &sent);

	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size < 64 * 1024);

	struct str out = {0};
	struct journal_file jf;
	char err[512];
	int digests = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!replay_file(path, &out, &jf, err, sizeof err, &digests))
		fail_msg("%s", err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	print_message("full game (%s, %s): %lld entries, %zu bytes of journal, %zu bytes sent, "
	              "%d digests, replay %.2f ms\n",
	              journal_sync_name(sync), game_rules_name(rules), (long long)jf.entries,
	              (size_t)st.st_size, sent.n, digests, ms);
	assert_true(jf.ended);
	assert_false(jf.torn);
	assert_true(digests >= 2);
	assert_int_equal(out.n, sent.n);
	assert_memory_equal(out.s, sent.s, sent.n);
	assert_int_equal(jf.rec[jf.nrec - 1].kind, JOURNAL_END);
	assert_string_equal(jf.rec[jf.nrec - 1].reason, "game over");
	journal_file_free(&jf);
	free(out.s);
	free(sent.s);
	unlink(path);
}

static void test_full_game_turn(void **state)
{
	(void)state;
	check_full_game(JOURNAL_SYNC_TURN, RULES_BASE);
}

static void test_full_game_always_revised(void **state)
{
	(void)state;
	check_full_game(JOURNAL_SYNC_ALWAYS, RULES_REVISED);
}

static void test_full_game_never(void **state)
{
	(void)state;
	check_full_game(JOURNAL_SYNC_NEVER, RULES_BASE);
}

/* Lines of sent ("PLAYER\tLINE") without those of player tag (e.g. "-")
 * that hold a CommandFailed, beyond the first keep of them. */
static void drop_failures(struct str *out, const struct str *sent, const char *tag, int keep)
{
	size_t tlen = strlen(tag);
	for (size_t pos = 0; pos < sent->n;) {
		const char *line = sent->s + pos;
		const char *nl = memchr(line, '\n', sent->n - pos);
		assert_non_null(nl);
		size_t n = (size_t)(nl - line) + 1;
		char copy[1024];
		snprintf(copy, sizeof copy, "%.*s", (int)n, line);
		bool failed = strncmp(line, tag, tlen) == 0 && line[tlen] == '\t' &&
		              strstr(copy, "\"CommandFailed\"");
		if (!failed || keep-- > 0)
			str_add(out, line, n);
		pos += n;
	}
}

/* What one client's failures can add: nothing from a stranger, at most the
 * failure budget per player and wait; the replay gives back what was sent
 * without the answers that were not recorded. */
static void test_failures_are_bounded(void **state)
{
	(void)state;
	struct srv *s = srv_new(JOURNAL_SYNC_NEVER, "failures");
	srv_line(s, 1, "{\"command\":\"Register\",\"playerName\":\"Ada\"}");
	srv_line(s, 2, "{\"command\":\"Register\",\"playerName\":\"Bo\"}");
	srv_line(s, 1, "{\"command\":\"StartGame\"}");
	assert_int_equal(game_waiting_for(s->game), 0); /* player 0 selects */
	for (int i = 0; i < 1000; i++) {
		cmdq_push_line(s->q, 3, "not json", 8);
		cmdq_push_line(s->q, 3, "{\"command\":\"Register\",\"playerName\":\"Eve\"}", 41);
		cmdq_push_line(s->q, 3, "{\"command\":\"EndTurn\"}", 21);
	}
	cmdq_push_lost(s->q, 3, false);
	for (int i = 0; i < 100; i++) /* player 1, in player 0's wait */
		cmdq_push_line(s->q, 2, "{\"command\":\"EndTurn\"}", 21);
	srv_drain(s);
	char path[256];
	struct str sent;
	srv_end(s, path, &sent);

	struct journal_file jf;
	struct str out = {0};
	char err[512];
	if (!replay_file(path, &out, &jf, err, sizeof err, NULL))
		fail_msg("%s", err);
	assert_int_equal(jf.failure_budget, DISPATCH_FAILURE_BUDGET);
	int from_stranger = 0, player_failures = 0;
	for (size_t i = 0; i < jf.nrec; i++) {
		from_stranger += jf.rec[i].comm_id == 3;
		player_failures += jf.rec[i].comm_id == 2 && jf.rec[i].kind == JOURNAL_COMMAND &&
		                   jf.rec[i].cmd.type == CMD_END_TURN;
	}
	assert_int_equal(from_stranger, 0);
	assert_int_equal(player_failures, DISPATCH_FAILURE_BUDGET);
	assert_int_equal(jf.entries, 3 + DISPATCH_FAILURE_BUDGET);
	assert_true(jf.valid_bytes < 16 * 1024);
	struct str want = {0}, tmp = {0};
	drop_failures(&tmp, &sent, "-", 0);
	drop_failures(&want, &tmp, "1", DISPATCH_FAILURE_BUDGET);
	assert_true(want.n < sent.n);
	assert_int_equal(out.n, want.n);
	assert_memory_equal(out.s, want.s, want.n);
	free(want.s);
	free(tmp.s);
	free(out.s);
	free(sent.s);
	journal_file_free(&jf);
	unlink(path);
}

/* One writer per journal: while a server holds it, a resume of the same
 * file is refused and changes nothing; once it is closed, it may. */
static void test_one_writer(void **state)
{
	(void)state;
	struct srv *s = srv_new(JOURNAL_SYNC_NEVER, "locked");
	srv_line(s, 1, "{\"command\":\"Register\",\"playerName\":\"Ada\"}");
	assert_true(journal_in_use(s->path));
	size_t before_len;
	char *before = slurp(s->path, &before_len);
	struct journal_file jf;
	char err[512];
	if (!journal_load(s->path, &jf, err, sizeof err))
		fail_msg("%s", err);
	assert_null(journal_reopen(s->path, &jf, JOURNAL_SYNC_NEVER, NULL, err, sizeof err));
	assert_non_null(strstr(err, JOURNAL_IN_USE));
	size_t after_len;
	char *after = slurp(s->path, &after_len);
	assert_int_equal(after_len, before_len);
	assert_memory_equal(after, before, before_len);
	char path[256];
	srv_end(s, path, NULL);
	assert_false(journal_in_use(path));
	struct stat st; /* its owner's only */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	journal_file_free(&jf);
	if (!journal_load(path, &jf, err, sizeof err))
		fail_msg("%s", err);
	struct journal *j = journal_reopen(path, &jf, JOURNAL_SYNC_NEVER, NULL, err, sizeof err);
	assert_non_null(j);
	assert_true(journal_in_use(path));
	journal_close(j, "stopped");
	journal_file_free(&jf);
	free(before);
	free(after);
	unlink(path);
}

/* Every kind of entry and every command shape, odd strings included, is
 * read back as it was written. */
static void test_every_record_kind(void **state)
{
	(void)state;
	srv_budget = 0; /* a stranger's failures are recorded too */
	struct srv *s = srv_new(JOURNAL_SYNC_NEVER, "kinds");
	srv_budget = DISPATCH_FAILURE_BUDGET;
	srv_line(s, 1, "{\"command\":\"Register\",\"playerName\":\"A\\u0001\\n\\\"é\"}");
	srv_line(s, 2, "{\"command\":\"Register\",\"playerName\":\"\"}");
	srv_line(s, 1, "{\"command\":\"StartGame\"}");
	/* from here on a connection that did not register: each fails alone */
	srv_line(s, 3,
	         "{\"command\":\"Move\",\"characterId\":-5,\"locationId\":2147483647,"
	         "\"fuel\":true}");
	srv_line(s, 3, "{\"command\":\"UseCard\",\"cardId\":1,\"characterId\":2,\"target\":3}");
	srv_line(s, 3, "{\"command\":\"UseCard\",\"cardId\":-2147483648}");
	srv_line(s, 3, "{\"command\":\"UseAbility\",\"characterId\":4,\"target\":5}");
	srv_line(s, 3, "{\"command\":\"UseAbility\",\"characterId\":4}");
	srv_line(s, 3, "{\"command\":\"Attack\",\"characterId\":4,\"entrance\":1}");
	srv_line(s, 3, "{\"command\":\"SelectCharacters\",\"characterId0\":4,\"characterId1\":9}");
	srv_line(s, 3, "{\"command\":\"ContributeCard\",\"cardId\":77}");
	srv_line(s, 3, "not json");
	cmdq_push_error(s->q, 3, "a message with \xff invalid UTF-8");
	cmdq_push_error(s->q, 3, PROTO_ERR_LINE_TOO_LONG);
	cmdq_push_lost(s->q, 3, true);
	cmdq_push_lost(s->q, 2, false);
	cmdq_push_timeout(s->q);
	srv_drain(s);
	/* JSON's escapes, one at each end of the name; backspace and form feed
	 * in their short forms, as proto writes them on the wire (journals
	 * written before spelled them \u0008 and \u000c; both read back the same) */
	srv_line(s, 4,
	         "{\"command\":\"Register\",\"playerName\":\"\\t\\\\x\\r\\u001f\\b\\u000c\"}");
	char path[256];
	struct str sent;
	srv_end(s, path, &sent);

	size_t len;
	char *text = slurp(path, &len);
	assert_non_null(strstr(text, "\"bad64\":\"YSBtZXNzYWdlIHdpdGgg/yBpbnZhbGlkIFVURi04\"}\n"));
	assert_non_null(strstr(text, "\"playerName\":\"\\t\\\\x\\r\\u001f\\b\\f\"}\n"));
	assert_non_null(strstr(text, "\"playerName\":\"A\\u0001\\n\\\"é\""));
	free(text);

	struct journal_file jf;
	struct str out = {0};
	char err[512];
	if (!replay_file(path, &out, &jf, err, sizeof err, NULL))
		fail_msg("%s", err);
	assert_int_equal(jf.entries, 18);
	const struct journal_record *r[32];
	size_t nr = 0;
	for (size_t i = 0; i < jf.nrec && nr < 32; i++)
		if (jf.rec[i].kind != JOURNAL_DIGEST && jf.rec[i].kind != JOURNAL_END)
			r[nr++] = &jf.rec[i];
	assert_int_equal(nr, 18);
	assert_int_equal(r[0]->kind, JOURNAL_COMMAND);
	assert_int_equal(r[0]->cmd.type, CMD_REGISTER);
	assert_string_equal(r[0]->cmd.name, "A\x01\n\"\xc3\xa9");
	assert_int_equal(r[0]->comm_id, 1);
	assert_int_equal(r[0]->player, -1);
	assert_string_equal(r[1]->cmd.name, "");
	assert_int_equal(r[3]->cmd.type, CMD_MOVE);
	assert_int_equal(r[3]->cmd.character, -5);
	assert_int_equal(r[3]->cmd.location, 2147483647);
	assert_true(r[3]->cmd.fuel);
	assert_true(r[4]->cmd.has_target);
	assert_int_equal(r[4]->cmd.character, 2);
	assert_int_equal(r[4]->cmd.target, 3);
	assert_false(r[5]->cmd.has_target);
	assert_int_equal(r[5]->cmd.card, INT32_MIN);
	assert_true(r[6]->cmd.has_target);
	assert_false(r[7]->cmd.has_target);
	assert_int_equal(r[8]->cmd.entrance, 1);
	assert_int_equal(r[9]->cmd.character2, 9);
	assert_int_equal(r[10]->cmd.card, 77);
	assert_int_equal(r[11]->kind, JOURNAL_BAD);
	assert_int_equal(r[12]->kind, JOURNAL_BAD);
	assert_string_equal(r[12]->error, "a message with \xff invalid UTF-8");
	assert_string_equal(r[13]->error, PROTO_ERR_LINE_TOO_LONG);
	assert_int_equal(r[14]->kind, JOURNAL_LOST);
	assert_true(r[14]->drain);
	assert_int_equal(r[15]->kind, JOURNAL_LOST);
	assert_false(r[15]->drain);
	assert_int_equal(r[16]->kind, JOURNAL_TIMEOUT);
	assert_int_equal(r[16]->comm_id, 0);
	assert_string_equal(r[17]->cmd.name, "\t\\x\r\x1f\b\f");
	assert_int_equal(out.n, sent.n);
	assert_memory_equal(out.s, sent.s, sent.n);
	journal_file_free(&jf);
	free(out.s);
	free(sent.s);
	unlink(path);
}

/* Lines the broadcaster still routes to a connection after its player's
 * Left (pipelined commands) never go over the wire: neither the digest nor
 * the replay has them. */
static void test_lines_after_left(void **state)
{
	(void)state;
	struct srv *s = srv_new(JOURNAL_SYNC_NEVER, "left");
	srv_line(s, 1, "{\"command\":\"Register\",\"playerName\":\"A\"}");
	srv_line(s, 2, "{\"command\":\"Register\",\"playerName\":\"B\"}");
	srv_line(s, 3, "{\"command\":\"Register\",\"playerName\":\"C\"}");
	srv_line(s, 1, "{\"command\":\"StartGame\"}");
	/* player 0 selects first: the timeout makes it leave; its pipelined
	 * lines are still dispatched, their answers go nowhere */
	cmdq_push_timeout(s->q);
	static const char *const pipelined[] = {
	        "{\"command\":\"EndTurn\"}", "x",
	        "{\"command\":\"Register\",\"playerName\":\"again\"}"};
	for (size_t i = 0; i < 3; i++)
		cmdq_push_line(s->q, 1, pipelined[i], strlen(pipelined[i]));
	srv_drain(s);
	assert_int_equal(s->nclosed, 1);
	assert_false(game_is_over(s->game));
	char path[256];
	struct str sent;
	srv_end(s, path, &sent);
	struct journal_file jf;
	struct str out = {0};
	char err[512];
	int digests = 0;
	if (!replay_file(path, &out, &jf, err, sizeof err, &digests))
		fail_msg("%s", err);
	assert_true(digests > 0);
	assert_int_equal(out.n, sent.n);
	assert_memory_equal(out.s, sent.s, sent.n);
	assert_null(strstr(out.s, "register first"));
	journal_file_free(&jf);
	free(out.s);
	free(sent.s);
	unlink(path);
}

/* A crash mid-write leaves a torn last line: it is dropped, the rest
 * replays. A bad line anywhere else is an error. */
static void test_torn_and_corrupt(void **state)
{
	(void)state;
	char path[256];
	size_t len;
	char *text = played_journal("torn", path, &len);
	struct journal_file jf;
	char err[512];
	assert_true(journal_parse(text, len, "j", &jf, err, sizeof err));
	int64_t entries = jf.entries;
	size_t nrec = jf.nrec;
	journal_file_free(&jf);

	/* cut in the middle of the last line */
	assert_true(journal_parse(text, len - 5, "j", &jf, err, sizeof err));
	assert_true(jf.torn);
	assert_false(jf.ended);
	assert_int_equal(jf.nrec, nrec - 1);
	size_t last_nl = len - 6;
	while (text[last_nl] != '\n')
		last_nl--;
	assert_int_equal(jf.valid_bytes, last_nl + 1);
	journal_file_free(&jf);

	/* cut right after an entry's line, then garbage: the garbage goes */
	const char *e5 = strstr(text, "\n{\"n\":5,");
	assert_non_null(e5);
	const char *e6 = strstr(text, "\n{\"n\":6,");
	assert_non_null(e6);
	struct str b = {0};
	str_add(&b, text, (size_t)(e6 - text) + 1);
	str_add(&b, "{\"n\":6,\"ms\":1,\"co\x00\x01", 18);
	assert_true(journal_parse(b.s, b.n, "j", &jf, err, sizeof err));
	assert_true(jf.torn);
	assert_int_equal(jf.valid_bytes, (size_t)(e6 - text) + 1);
	assert_true(jf.entries <= 5);
	journal_file_free(&jf);

	/* the same garbage as a whole line in the middle: an error */
	b.n = 0;
	str_add(&b, text, (size_t)(e6 - text) + 1);
	str_add(&b, "{\"n\":6,oops}\n", 13);
	str_add(&b, e6 + 1, len - (size_t)(e6 + 1 - text));
	assert_false(journal_parse(b.s, b.n, "j", &jf, err, sizeof err));
	assert_non_null(strstr(err, "j:"));

	/* an entry missing: an error */
	b.n = 0;
	str_add(&b, text, (size_t)(e5 - text) + 1);
	str_add(&b, e6 + 1, len - (size_t)(e6 + 1 - text));
	assert_false(journal_parse(b.s, b.n, "j", &jf, err, sizeof err));
	assert_non_null(strstr(err, "follows entry"));

	/* the zero tail a killed writer leaves (src/mapfile.c): the journal
	 * ends at it, whole */
	static const char zeros[8192];
	b.n = 0;
	str_add(&b, text, len);
	str_add(&b, zeros, sizeof zeros);
	assert_true(journal_parse(b.s, b.n, "j", &jf, err, sizeof err));
	assert_false(jf.torn);
	assert_int_equal(jf.nrec, nrec);
	assert_int_equal(jf.valid_bytes, len);
	journal_file_free(&jf);

	/* a line cut off by the kill, then the zero tail: that line goes */
	b.n = 0;
	str_add(&b, text, (size_t)(e6 - text) + 1);
	str_add(&b, "{\"n\":6,\"ms\"", 11);
	str_add(&b, zeros, sizeof zeros);
	assert_true(journal_parse(b.s, b.n, "j", &jf, err, sizeof err));
	assert_true(jf.torn);
	assert_non_null(strstr(jf.torn_why, "torn write"));
	assert_int_equal(jf.valid_bytes, (size_t)(e6 - text) + 1);
	journal_file_free(&jf);

	/* lines after zeros (after a power loss, a page written back behind
	 * one that was not): dropped, and said */
	b.n = 0;
	str_add(&b, text, (size_t)(e6 - text) + 1);
	str_add(&b, zeros, 4096);
	str_add(&b, e6 + 1, len - (size_t)(e6 + 1 - text));
	assert_true(journal_parse(b.s, b.n, "j", &jf, err, sizeof err));
	assert_true(jf.torn);
	assert_non_null(strstr(jf.torn_why, "after a NUL byte at offset"));
	assert_int_equal(jf.valid_bytes, (size_t)(e6 - text) + 1);
	assert_int_equal(jf.entries, 5);
	journal_file_free(&jf);

	/* a torn journal replays its prefix, digests included */
	spit(path, text, len - 5);
	struct str out = {0};
	int digests = 0;
	if (!replay_file(path, &out, &jf, err, sizeof err, &digests))
		fail_msg("%s", err);
	assert_true(jf.torn);
	assert_int_equal(jf.entries, entries);
	journal_file_free(&jf);
	free(out.s);
	free(b.s);
	free(text);
	unlink(path);
}

/* The header's hash must match the stored configuration. */
static void test_wrong_config_hash(void **state)
{
	(void)state;
	char path[256];
	size_t len;
	char *text = played_journal("hash", path, &len);
	struct journal_file jf;
	char err[512];

	/* one hex digit of the hash changed */
	char *h = strstr(text, "\"configSha256\":\"");
	assert_non_null(h);
	h += strlen("\"configSha256\":\"");
	char saved = *h;
	*h = *h == '0' ? '1' : '0';
	assert_false(journal_parse(text, len, "j", &jf, err, sizeof err));
	assert_non_null(strstr(err, "configuration hash mismatch"));
	assert_non_null(strstr(err, "j:1:"));
	*h = saved;

	/* the configuration's text changed (the same length) */
	char *c = strstr(text, "\"config\":\"");
	assert_non_null(c);
	char *digit = strpbrk(c + 10, "123456789");
	assert_non_null(digit);
	char was = *digit;
	*digit = *digit == '9' ? '8' : (char)(*digit + 1);
	assert_false(journal_parse(text, len, "j", &jf, err, sizeof err));
	assert_non_null(strstr(err, "configuration hash mismatch"));
	*digit = was;

	/* every other field of the header is covered by its own hash: the
	 * timeout, the rules, the failure budget edited */
	static const char *const edits[][2] = {{"\"timeout\":30", "\"timeout\":31"},
	                                       {"\"rules\":\"base\"", "\"rules\":\"revised\""},
	                                       {"\"failureBudget\":16", "\"failureBudget\":99"}};
	for (size_t k = 0; k < sizeof edits / sizeof edits[0]; k++) {
		char *at = strstr(text, edits[k][0]);
		assert_non_null(at);
		size_t olen = strlen(edits[k][0]), nlen = strlen(edits[k][1]);
		char *edited = malloc(len + nlen);
		size_t pre = (size_t)(at - text);
		memcpy(edited, text, pre);
		memcpy(edited + pre, edits[k][1], nlen);
		memcpy(edited + pre + nlen, at + olen, len - pre - olen);
		assert_false(journal_parse(edited, len - olen + nlen, "j", &jf, err, sizeof err));
		assert_non_null(strstr(err, "header hash mismatch"));
		free(edited);
	}
	assert_true(journal_parse(text, len, "j", &jf, err, sizeof err));
	journal_file_free(&jf);

	/* not a journal at all; another version */
	assert_false(journal_parse("{\"hello\":1}\n", 12, "j", &jf, err, sizeof err));
	assert_non_null(strstr(err, "not a sopra journal"));
	const char *v4 = "{\"journal\":\"sopra-journal\",\"version\":4}\n";
	assert_false(journal_parse(v4, strlen(v4), "j", &jf, err, sizeof err));
	assert_non_null(strstr(err, "version 4"));
	assert_false(journal_parse("", 0, "j", &jf, err, sizeof err));
	free(text);
	unlink(path);
}

/* A changed event stream is caught by the next digest, and a changed
 * player by the entry itself. */
static void test_digest_mismatch(void **state)
{
	(void)state;
	char path[256];
	size_t len;
	char *text = played_journal("digest", path, &len);
	char *d = strstr(text, "{\"digest\":\"");
	assert_non_null(d);
	d += strlen("{\"digest\":\"");
	*d = *d == 'a' ? 'b' : 'a';
	spit(path, text, len);
	struct journal_file jf;
	struct str out = {0};
	char err[512];
	assert_false(replay_file(path, &out, &jf, err, sizeof err, NULL));
	assert_non_null(strstr(err, "digest mismatch"));
	journal_file_free(&jf);

	/* a Register on connection 2 that says it came from player 0 */
	*d = *d == 'a' ? 'b' : 'a';
	char *p = strstr(text, "\"comm\":2,\"player\":-1");
	assert_non_null(p);
	memcpy(p, "\"comm\":2,\"player\": 0", 20); /* same length */
	spit(path, text, len);
	out.n = 0;
	assert_false(replay_file(path, &out, &jf, err, sizeof err, NULL));
	assert_non_null(strstr(err, "is player -1 in the replay, 0 in the journal"));
	journal_file_free(&jf);
	free(out.s);
	free(text);
	unlink(path);
}

/* The reader's JSON: escapes, surrogate pairs, keys in any order; no
 * duplicate keys, nesting or fractions. */
static void test_reader_json(void **state)
{
	(void)state;
	struct srv *s = srv_new(JOURNAL_SYNC_NEVER, "json");
	char path[256];
	srv_end(s, path, NULL);
	size_t len;
	char *head = slurp(path, &len);
	len = (size_t)(strchr(head, '\n') - head) + 1; /* the header alone */
	struct journal_file jf;
	char err[512];
	struct str b = {0};
	str_add(&b, head, len);
	const char *ok = "{\"player\":-1, \"comm\":1,\"ms\":0,\"n\":1,\"command\":\"Register\","
	                 "\"playerName\":\"\\ud83e\\udddf\\u00e9\\/\"}\n";
	str_add(&b, ok, strlen(ok));
	assert_true(journal_parse(b.s, b.n, "j", &jf, err, sizeof err));
	assert_int_equal(jf.entries, 1);
	assert_string_equal(jf.rec[0].cmd.name, "\xf0\x9f\xa7\x9f\xc3\xa9/");
	journal_file_free(&jf);

	static const char *const bad[] = {
	        "{\"n\":1,\"n\":1,\"ms\":0,\"comm\":0,\"player\":-1,\"timeout\":true}\n",
	        "{\"n\":1,\"ms\":0,\"comm\":0,\"player\":-1,\"timeout\":{}}\n",
	        "{\"n\":1.5,\"ms\":0,\"comm\":0,\"player\":-1,\"timeout\":true}\n",
	        "{\"n\":1,\"ms\":0,\"comm\":0,\"player\":-1,\"command\":\"Dance\"}\n",
	        "{\"n\":1,\"ms\":0,\"comm\":0,\"player\":-1,\"command\":\"Move\"}\n",
	        "{\"n\":1,\"ms\":0,\"comm\":0,\"player\":-1,\"bad\":\"\\ud800\"}\n",
	        "{\"n\":1,\"ms\":0,\"comm\":0,\"player\":-1}\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		/* as the last line: dropped as torn; followed by an end record: error */
		b.n = len;
		str_add(&b, bad[i], strlen(bad[i]));
		assert_true(journal_parse(b.s, b.n, "j", &jf, err, sizeof err));
		assert_true(jf.torn);
		assert_int_equal(jf.entries, 0);
		journal_file_free(&jf);
		str_add(&b, "{\"end\":\"stopped\",\"n\":0,\"ms\":1}\n", 31);
		assert_false(journal_parse(b.s, b.n, "j", &jf, err, sizeof err));
		assert_non_null(strstr(err, "j:2:"));
	}
	free(b.s);
	free(head);
	unlink(path);
}

/* Writing problems: never overwrite, a missing directory, and a file size
 * limit hit in the middle of a game (the game goes on, the journal stays a
 * valid, shorter journal). */
static void test_cannot_write(void **state)
{
	(void)state;
	struct config_errors errs = {0};
	struct config *cfg = config_load(SOPRA_SOURCE_DIR "/resources/example.json", &errs);
	assert_non_null(cfg);
	char path[256], err[512];
	temp_path(path, sizeof path, "exists");
	spit(path, "precious", 8);
	struct journal_params p = {.path = path,
	                           .sync = JOURNAL_SYNC_TURN,
	                           .cfg = cfg,
	                           .config_path = "x",
	                           .seed = 1,
	                           .rules = RULES_BASE,
	                           .timeout_sec = 30};
	assert_null(journal_open(&p, NULL, err, sizeof err));
	assert_non_null(strstr(err, "never overwritten"));
	size_t len;
	char *text = slurp(path, &len);
	assert_string_equal(text, "precious");
	free(text);
	unlink(path);

	p.path = "/nonexistent-dir/x.jnl";
	assert_null(journal_open(&p, NULL, err, sizeof err));
	assert_non_null(strstr(err, "cannot create journal /nonexistent-dir/x.jnl"));
	config_free(cfg);

	/* the file size limit: first too small for the header (the server does
	 * not start, no file is left), then enough for the header and a few
	 * entries (the game goes on without a journal) */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigaction(SIGXFSZ, &ign, &old);
	struct rlimit saved;
	getrlimit(RLIMIT_FSIZE, &saved);
	struct rlimit lim = saved;
	lim.rlim_cur = 1000;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	cfg = config_load(SOPRA_SOURCE_DIR "/resources/example.json", &errs);
	temp_path(path, sizeof path, "fsize");
	p.path = path;
	p.cfg = cfg;
	assert_null(journal_open(&p, NULL, err, sizeof err));
	assert_non_null(strstr(err, "cannot write journal"));
	assert_int_not_equal(access(path, F_OK), 0);
	config_free(cfg);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);

	/* the header's length, from a journal opened without a limit (its
	 * file is longer: the writer takes a zero tail ahead, src/mapfile.c) */
	struct srv *s = srv_new(JOURNAL_SYNC_TURN, "full-disk");
	struct journal_file head;
	if (!journal_load(s->path, &head, err, sizeof err))
		fail_msg("%s", err);
	size_t header_bytes = head.valid_bytes;
	journal_file_free(&head);
	srv_free(s, false);
	/* a limit 900 bytes past the header: the tail taken ahead shrinks to
	 * what each entry needs, and the entry that crosses the limit fails */
	lim.rlim_cur = (rlim_t)header_bytes + 900;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	s = srv_new(JOURNAL_SYNC_TURN, "full-disk");
	/* the loud messages go to the journal's log: stderr here */
	srv_play_game(s, 4);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
	sigaction(SIGXFSZ, &old, NULL);
	/* the game stopped at the entry that could not be written: nothing of
	 * it went out, and nothing after it is applied */
	assert_false(game_is_over(s->game));
	assert_true(journal_failed(s->j));
	srv_line(s, 1, "{\"command\":\"EndTurn\"}");
	assert_false(cmdq_empty(s->q)); /* nothing is applied any more */
	assert_true(core_drain(s->core).halted);
	struct str sent;
	srv_end(s, path, &sent);
	struct journal_file jf;
	struct str out = {0};
	if (!replay_file(path, &out, &jf, err, sizeof err, NULL))
		fail_msg("%s", err);
	assert_false(jf.torn); /* cut back to whole lines */
	assert_false(jf.ended);
	assert_true(jf.entries > 0);
	assert_true(jf.valid_bytes <= header_bytes + 900);
	struct stat st; /* cut back to its content: no zero tail */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal((size_t)st.st_size, jf.valid_bytes);
	/* what the journal replays is exactly what went out: a resume
	 * continues every player's stream where it stopped */
	assert_int_equal(out.n, sent.n);
	assert_memory_equal(out.s, sent.s, sent.n);
	free(out.s);
	free(sent.s);
	journal_file_free(&jf);
	unlink(path);
}

/* A resume record after the end of the game (tests/data/journals: the game
 * ended while player 0 was away, the server was killed in the epilogue and
 * resumed): every player still in the game has missed the end, in a replay
 * as in the resumed server, which waited for both of them. Player 1 was
 * connected when the game ended: only the resume step marks it. */
static void test_resume_record_after_the_end(void **state)
{
	(void)state;
	struct journal_file jf;
	char err[512];
	if (!journal_load(SOPRA_SOURCE_DIR "/tests/data/journals/resumed_end.jnl", &jf, err,
	                  sizeof err))
		fail_msg("%s", err);
	struct journal_replay *r = journal_replay_new(&jf, NULL, NULL, err, sizeof err);
	assert_non_null(r);
	const struct session *ses = core_sessions(journal_replay_core(r));
	size_t i = 0;
	for (; jf.rec[i].kind != JOURNAL_RESUME; i++)
		assert_true(journal_replay_step(r, &jf.rec[i], err, sizeof err));
	assert_true(game_is_over(journal_replay_game(r)));
	assert_true(session_missed_end(ses, 0));
	assert_false(session_missed_end(ses, 1));
	assert_true(journal_replay_step(r, &jf.rec[i], err, sizeof err));
	assert_true(session_missed_end(ses, 0));
	assert_true(session_missed_end(ses, 1));
	journal_replay_free(r);
	journal_file_free(&jf);
}

/* The CPU time the whole process used so far, in ms. */
static double process_cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A resumed journal's sync thread waits out its 50 ms gap asleep, as a new
 * journal's does: its condition variable runs on the monotonic clock too
 * (it once ran on the wall clock, so every deadline lay in the past and
 * the thread spun through the gap after each sync). */
static void test_resumed_sync_gap(void **state)
{
	(void)state;
	const char *cfg = SOPRA_SOURCE_DIR "/resources/example.json";
	struct srv *first = srv_new_cfg(cfg, 42, RULES_BASE, JOURNAL_SYNC_TURN, "gap");
	char path[256];
	snprintf(path, sizeof path, "%s", first->path);
	srv_free(first, true); /* a header, nothing played: a fresh game resumes it */

	struct journal_file jf;
	char err[512];
	if (!journal_load(path, &jf, err, sizeof err))
		fail_msg("%s", err);
	struct srv *s = srv_bare(cfg, 42, RULES_BASE, "gap-resumed");
	snprintf(s->path, sizeof s->path, "%s", path);
	s->j = journal_reopen(path, &jf, JOURNAL_SYNC_TURN, NULL, err, sizeof err);
	if (!s->j)
		fail_msg("journal_reopen: %s", err);
	journal_file_free(&jf);
	struct dispatch_hooks hooks = journal_hooks(s->j, s->game);
	core_set_hooks(s->core, &hooks);
	srv_line(s, 1, "{\"command\":\"Register\",\"playerName\":\"Ada\"}");
	srv_line(s, 2, "{\"command\":\"Register\",\"playerName\":\"Bo\"}");
	double before = process_cpu_ms();
	/* the wait ends: a background sync, then its gap */
	srv_line(s, 1, "{\"command\":\"StartGame\"}");
	struct timespec nap = {0, 150 * 1000000L};
	while (nanosleep(&nap, &nap) != 0)
		;
	double used = process_cpu_ms() - before;
	/* asleep through the gap: a few ms for the game, the sync and its
	 * system calls; spinning through it costs the gap (~50 ms) */
	if (used >= 25.0)
		fail_msg("%.1f ms of CPU while the sync thread waited out its gap", used);
	srv_free(s, false);
}

/* The threads of this process (/proc/self/task). */
static int tasks(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	assert_non_null(f);
	char line[256];
	int n = -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* Waits (up to 10 s: a bound for a loaded machine, not a timing) until the
 * process has n threads; the count then. */
static int tasks_become(int n)
{
	for (int i = 0; i < 1000 && tasks() != n; i++) {
		struct timespec nap = {0, 10 * 1000000L};
		nanosleep(&nap, NULL);
	}
	return tasks();
}

static int creates; /* calls of the hooks below */

static int counting_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	creates++;
	return pthread_create(t, a, fn, arg);
}

static int failing_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	(void)t;
	(void)a;
	(void)fn;
	(void)arg;
	creates++;
	return EAGAIN;
}

/* The sync thread exists only while it has work: opening a journal starts
 * none, a turn end starts one, which exits once idle; the next turn end
 * starts another. */
static void test_sync_thread_comes_and_goes(void **state)
{
	(void)state;
	const char *cfg = SOPRA_SOURCE_DIR "/resources/example.json";
	creates = 0;
	journal_thread_create = counting_create;
	struct srv *s = srv_new_cfg(cfg, 42, RULES_BASE, JOURNAL_SYNC_TURN, "comes");
	assert_int_equal(tasks(), 1);
	assert_int_equal(creates, 0);
	srv_play_game(s, 4);
	assert_true(game_is_over(s->game));
	assert_false(journal_failed(s->j));
	assert_true(creates >= 1);
	assert_int_equal(tasks_become(1), 1); /* idle: it exits */
	int idle = creates;
	/* after the end every entry ends a wait: a sync, on a new thread */
	srv_line(s, 1, "{\"command\":\"StartGame\"}");
	assert_int_equal(creates, idle + 1);
	assert_int_equal(tasks_become(1), 1);
	srv_free(s, false);
	assert_int_equal(tasks(), 1); /* closing joins it */
	journal_thread_create = pthread_create;
}

/* When no thread can be started, the loop's thread syncs and prefaults at
 * once: the game is journaled whole, with no second thread. */
static void test_sync_thread_fallback(void **state)
{
	(void)state;
	creates = 0;
	journal_thread_create = failing_create;
	check_full_game(JOURNAL_SYNC_TURN, RULES_BASE);
	assert_true(creates > 0);
	int turn_creates = creates;
	check_full_game(JOURNAL_SYNC_NEVER, RULES_REVISED);
	assert_true(creates > turn_creates);
	assert_int_equal(tasks(), 1);
	journal_thread_create = pthread_create;
}

/* The state summary names what matters. */
static void test_describe(void **state)
{
	(void)state;
	struct srv *s = srv_new(JOURNAL_SYNC_NEVER, "describe");
	srv_play_game(s, 2);
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	game_describe(s->game, m);
	fclose(m);
	assert_non_null(strstr(text, "phase: over"));
	assert_non_null(strstr(text, "morale"));
	assert_non_null(strstr(text, "players:\n  0 Ada"));
	assert_non_null(strstr(text, "locations"));
	assert_non_null(strstr(text, "colony"));
	assert_non_null(strstr(text, "characters in play:"));
	free(text);
	srv_free(s, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_sync_names),
	        cmocka_unit_test(test_full_game_turn),
	        cmocka_unit_test(test_full_game_always_revised),
	        cmocka_unit_test(test_full_game_never),
	        cmocka_unit_test(test_every_record_kind),
	        cmocka_unit_test(test_failures_are_bounded),
	        cmocka_unit_test(test_one_writer),
	        cmocka_unit_test(test_lines_after_left),
	        cmocka_unit_test(test_torn_and_corrupt),
	        cmocka_unit_test(test_wrong_config_hash),
	        cmocka_unit_test(test_digest_mismatch),
	        cmocka_unit_test(test_reader_json),
	        cmocka_unit_test(test_cannot_write),
	        cmocka_unit_test(test_resumed_sync_gap),
	        cmocka_unit_test(test_resume_record_after_the_end),
	        cmocka_unit_test(test_sync_thread_comes_and_goes),
	        cmocka_unit_test(test_sync_thread_fallback),
	        cmocka_unit_test(test_describe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
