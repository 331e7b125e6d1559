/*
 * journal_write: the journal's writer (include/sopra/journal.h,
 * docs/journal.md).
 *
 * Writing happens on the server's one thread, inside the dispatcher's
 * hooks: the entry's line is formatted into a reused buffer and appended
 * to the file before the entry is applied, by a copy into a shared mapping
 * of it (src/mapfile.c: in the page cache at once, without a system call).
 * Only the "turn" policy's fdatasync runs on a second thread (sync_thread),
 * so that a turn's end does not wait for the disk: the next player's ActNow
 * goes out while the disk catches up (the loss window this opens is stated
 * in docs/journal.md). The same thread, under "never" too, faults in the
 * pages the next entries go to, so the loop's thread takes no page fault.
 * The thread exists only while it has work: a turn end starts it (with a
 * small stack), it exits once nothing is pending for a gap, so that an idle
 * game holds no second task (its kernel stack, task and page tables). When
 * it cannot be started, the loop's thread does its work at once.
 */
#include "journal_int.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nettle/base64.h>

#include "sopra/cmdq.h"
#include "sopra/game.h"
#include "sopra/json.h"
#include "sopra/mapfile.h"
#include "sopra/xalloc.h"

/* A digest is written at least this often (entries), besides turn ends. */
#define JOURNAL_DIGEST_EVERY 256
/* The "turn" policy's background fdatasyncs start at least this far apart:
 * a human's turn takes seconds, so each turn end gets a sync of its own, but
 * bots that end a turn every fraction of a millisecond would otherwise keep
 * the disk (and a core) busy with back-to-back syncs. Turns that end within
 * the gap share the next sync (docs/journal.md, "Durability"). */
#define JOURNAL_SYNC_GAP_MS 50
/* The least the sync thread faults in ahead of the appends after a sync:
 * a human-paced game appends a few hundred bytes between two syncs. */
#define JOURNAL_PREFAULT_MIN ((off_t)8 * 1024)
/* The sync thread's stack: it calls no allocator and little of libc. */
#define JOURNAL_THREAD_STACK ((size_t)64 * 1024)
/* ---- formatting lines ---------------------------------------------------
 *
 * Every entry is formatted on the path of its command, so lines are built
 * with proto's JSON writer (proto.h: no printf, one reserve per member):
 * "{", the members, "}\n". */

static void put_int_member(struct proto_buf *b, const char *key, int64_t v)
{
	proto_put_key(b, key);
	proto_put_int(b, v);
}

static void put_bool_member(struct proto_buf *b, const char *key, bool v)
{
	proto_put_key(b, key);
	proto_put_bool(b, v);
}

/* Valid UTF-8 without NUL bytes: storable as a JSON string that any reader
 * (cJSON, jq, ours) gives back byte for byte. */
static bool plain_text(const char *s, size_t n)
{
	return !memchr(s, '\0', n) && json_utf8_valid(s, n);
}

/* "key":"text" -- or, for bytes that are not plain text, "key64":"base64" */
static void put_text_member(struct proto_buf *b, const char *key, const char *s, size_t n)
{
	if (plain_text(s, n)) {
		proto_put_key(b, key);
		proto_put_string(b, s, n);
		return;
	}
	char k64[64];
	snprintf(k64, sizeof k64, "%s64", key);
	proto_put_key(b, k64);
	size_t len = BASE64_ENCODE_RAW_LENGTH(n);
	char *p = proto_buf_room(b, len + 2);
	*p = '"';
	base64_encode_raw(p + 1, n, (const uint8_t *)s);
	p[len + 1] = '"';
	b->len += len + 2;
}

static void put_cstring_member(struct proto_buf *b, const char *key, const char *s)
{
	put_text_member(b, key, s, strlen(s));
}

/* The line {"what":"text","n":N,"ms":MS} (an end or a resume record) into
 * b. */
static void put_mark(struct proto_buf *b, const char *what, const char *text, int64_t n, int64_t ms)
{
	proto_buf_reset(b);
	PROTO_BUF_LIT(b, "{");
	put_cstring_member(b, what, text);
	put_int_member(b, "n", n);
	put_int_member(b, "ms", ms);
	PROTO_BUF_LIT(b, "}\n");
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct journal {
	struct mapfile file; /* .len: bytes of whole lines written */
	char *path;          /* owned */
	enum journal_sync sync;
	const struct game *game; /* borrowed */
	FILE *log;
	int64_t t0_ms;

	struct proto_buf line; /* the line being written, reused */
	int64_t n;             /* entries written */
	int64_t kept;          /* entries whose lines were written whole */
	int wait_before;       /* game_waiting_for before the current entry */
	bool over_before;      /* whether the game was over before it */

	struct journal_stream stream;
	int64_t digest_n, digest_lines; /* at the last digest written */

	bool failed;
	bool skip_lines; /* the entry being routed is not recorded */

	/* the background thread: "turn"'s fdatasyncs, and the prefaults */
	bool thread_started; /* j->thread is to be joined */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t sync_req, sync_done; /* requests made / served */
	int sync_err;                 /* errno of a failed background fdatasync */
	bool running;                 /* the thread serves requests (under mu) */
	bool idle;                    /* the thread waits for a request */
	bool stop;
	int64_t last_started; /* ms at the start of the last sync; -1: none */
	off_t prefaulted_at;  /* j->file.len at the last prefault */
};

int (*journal_thread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                             void *) = pthread_create;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
jlog(const struct journal *j, const char *fmt, ...)
{
	FILE *out = j->log ? j->log : stderr;
	va_list ap;
	va_start(ap, fmt);
	fputs("sopra-server: ", out);
	vfprintf(out, fmt, ap);
	fputc('\n', out);
	va_end(ap);
	fflush(out);
}

/* Waits on j->cv until the monotonic clock reaches until_ms or the journal
 * stops; j->mu is held. */
static void wait_until(struct journal *j, int64_t until_ms)
{
	struct timespec ts = {.tv_sec = until_ms / 1000, .tv_nsec = (until_ms % 1000) * 1000000};
	while (!j->stop && mono_ms() < until_ms)
		pthread_cond_timedwait(&j->cv, &j->mu, &ts);
}

/* Fault in, on the sync thread, the pages the loop is to append to next:
 * twice what it appended since the last call, at least
 * JOURNAL_PREFAULT_MIN. A sync leaves the pages it wrote clean and
 * write-protected, so this runs after each one (docs/journal.md,
 * "Guarantees"). */
static void prefault_next(struct journal *j)
{
	off_t len = __atomic_load_n(&j->file.len, __ATOMIC_RELAXED);
	off_t ahead = 2 * (len - j->prefaulted_at);
	j->prefaulted_at = len;
	mapfile_prefault(&j->file, ahead > JOURNAL_PREFAULT_MIN ? ahead : JOURNAL_PREFAULT_MIN);
}

/* The "turn" policy's syncs: each one covers every request made before it
 * starts; consecutive syncs start JOURNAL_SYNC_GAP_MS apart at least. On
 * stop, a pending request is still served. Only an idle thread is woken by
 * a request (request_sync); a busy one finds it when its sync ends. The gap
 * is waited out before a sync, not after one. With nothing pending for a
 * gap after its last sync (a person's turns, seconds apart) the thread
 * exits; the next request starts another. Each sync is followed by a
 * prefault; under "never" a request gets the prefault alone. */
static void *sync_thread(void *arg)
{
	struct journal *j = arg;
	pthread_mutex_lock(&j->mu);
	for (;;) {
		j->idle = true;
		int64_t linger = j->last_started + JOURNAL_SYNC_GAP_MS;
		struct timespec ts = {.tv_sec = linger / 1000,
		                      .tv_nsec = (linger % 1000) * 1000000};
		while (!j->stop && j->sync_done == j->sync_req && mono_ms() < linger)
			pthread_cond_timedwait(&j->cv, &j->mu, &ts);
		j->idle = false;
		if (j->sync_done == j->sync_req)
			break; /* stop, or nothing pending for a gap */
		if (j->last_started >= 0)
			wait_until(j, j->last_started + JOURNAL_SYNC_GAP_MS);
		uint64_t target = j->sync_req;
		int64_t started = mono_ms();
		pthread_mutex_unlock(&j->mu);
		int rc = j->sync == JOURNAL_SYNC_TURN ? fdatasync(j->file.fd) : 0;
		int e = errno;
		prefault_next(j);
		pthread_mutex_lock(&j->mu);
		if (rc != 0 && j->sync_err == 0)
			j->sync_err = e;
		j->sync_done = target;
		j->last_started = started;
	}
	j->running = false;
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

/* Join a thread that exited (or is exiting: it has stopped serving). */
static void join_thread(struct journal *j)
{
	if (j->thread_started) {
		pthread_join(j->thread, NULL);
		j->thread_started = false;
	}
}

static void stop_thread(struct journal *j)
{
	if (!j->thread_started)
		return;
	pthread_mutex_lock(&j->mu);
	j->stop = true;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	join_thread(j);
	j->stop = false;
}

/*
 * Writing failed: say so loudly, cut the file back to its last whole line
 * (so that it stays a valid, shorter journal) and stop journaling. The
 * dispatcher halts at the next recorded entry (journal_record) and the
 * server stops: the game is not lost, --resume continues it from the file
 * once there is room again.
 */
static void journal_fail(struct journal *j, const char *what, int err)
{
	if (j->failed)
		return;
	j->failed = true;
	jlog(j, "JOURNAL FAILED: %s %s: %s", what, j->path, strerror(err));
	jlog(j,
	     "JOURNAL FAILED: the server stops; %s keeps entries 1..%lld (cut back to %lld "
	     "bytes), from which --resume continues the game",
	     j->path, (long long)j->kept, (long long)j->file.len);
	int e = mapfile_cut(&j->file);
	if (e != 0)
		jlog(j, "JOURNAL FAILED: cannot cut %s back: %s", j->path, strerror(e));
}

/* Append j->line to the file; false (failed) on error. */
static bool put_line(struct journal *j, const char *what)
{
	int e = mapfile_append(&j->file, j->line.data, j->line.len);
	if (e != 0) {
		journal_fail(j, what, e);
		return false;
	}
	return true;
}

static bool sync_now(struct journal *j)
{
	if (fdatasync(j->file.fd) != 0) {
		/* after a failed fsync the page cache cannot be trusted to
		 * still hold the data: no retry (docs/journal.md) */
		journal_fail(j, "fdatasync of", errno);
		return false;
	}
	return true;
}

/* Start the sync thread, with a small stack; false when it cannot be. */
static bool start_thread(struct journal *j)
{
	pthread_attr_t a;
	if (pthread_attr_init(&a) != 0)
		return false;
	(void)pthread_attr_setstacksize(&a, JOURNAL_THREAD_STACK);
	bool ok = journal_thread_create(&j->thread, &a, sync_thread, j) == 0;
	pthread_attr_destroy(&a);
	j->thread_started = ok;
	return ok;
}

/* Asks for a background sync. A running thread is woken only when it is
 * idle: waking it during its gap would cost the loop's core a context
 * switch per turn end (two per command with bots) for nothing. Without a
 * running thread one is started; if none can be, the sync and the prefault
 * are done here, on the loop's thread. */
static void request_sync(struct journal *j)
{
	pthread_mutex_lock(&j->mu);
	j->sync_req++;
	bool running = j->running;
	if (running && j->idle)
		pthread_cond_signal(&j->cv);
	if (!running)
		j->running = true; /* the thread started below serves it */
	pthread_mutex_unlock(&j->mu);
	if (running)
		return;
	join_thread(j); /* the previous one, which stopped serving */
	if (start_thread(j))
		return;
	pthread_mutex_lock(&j->mu);
	j->running = false;
	j->sync_done = j->sync_req;
	pthread_mutex_unlock(&j->mu);
	if (j->sync != JOURNAL_SYNC_TURN || sync_now(j))
		prefault_next(j);
}

/* A background fdatasync that failed is reported on the loop's thread. */
static void check_sync_error(struct journal *j)
{
	if (j->sync == JOURNAL_SYNC_ALWAYS)
		return;
	pthread_mutex_lock(&j->mu);
	int e = j->sync_err;
	pthread_mutex_unlock(&j->mu);
	if (e)
		journal_fail(j, "background fdatasync of", e);
}

static void write_digest(struct journal *j)
{
	uint8_t d[SHA256_DIGEST_SIZE];
	char hex[2 * SHA256_DIGEST_SIZE + 1];
	journal_stream_sha256(&j->stream, d);
	journal_hex_encode(d, sizeof d, hex);
	struct proto_buf *b = &j->line;
	proto_buf_reset(b);
	PROTO_BUF_LIT(b, "{");
	put_cstring_member(b, "digest", hex);
	put_int_member(b, "n", j->n);
	put_int_member(b, "lines", j->stream.lines);
	put_int_member(b, "bytes", j->stream.bytes);
	PROTO_BUF_LIT(b, "}\n");
	if (put_line(j, "write to")) {
		j->digest_n = j->n;
		j->digest_lines = j->stream.lines;
	}
}

/* The command and the parameters it carries, as protocol.md names them
 * (proto's table: a new command needs nothing here). Every parameter it
 * carries is written, a base-only flag (fuel) also in revised (where it
 * is false). A
 * decoded command's strings are valid UTF-8 without NUL (proto_decode). */
static void put_command(struct proto_buf *b, const struct cmd *c)
{
	assert(!c->name || plain_text(c->name, strlen(c->name)));
	proto_put_cmd(b, c, RULES_BASE);
}

/* dispatch_hooks.before: what the after hook compares with. */
static void journal_before(void *ctx, const struct cmdq_entry *e, int player)
{
	(void)e;
	(void)player;
	struct journal *j = ctx;
	j->wait_before = game_waiting_for(j->game);
	j->over_before = game_is_over(j->game);
}

/* Whether the entry being dispatched ended the game (journal_before noted
 * whether it was over before). */
static bool entry_ended_game(const struct journal *j)
{
	return game_is_over(j->game) && !j->over_before;
}

/* The entry's line into j->line. */
static void format_entry(struct journal *j, const struct cmdq_entry *e, int player)
{
	struct proto_buf *b = &j->line;
	proto_buf_reset(b);
	PROTO_BUF_LIT(b, "{");
	put_int_member(b, "n", j->n);
	put_int_member(b, "ms", mono_ms() - j->t0_ms);
	put_int_member(b, "comm", e->comm_id);
	put_int_member(b, "player", player < 0 ? -1 : player);
	switch (e->kind) {
	case CMDQ_COMMAND:
		put_command(b, &e->pc.cmd);
		break;
	case CMDQ_BAD_LINE: {
		put_cstring_member(b, "bad", e->error ? e->error : "");
		break;
	}
	case CMDQ_TIMEOUT:
		put_bool_member(b, "timeout", true);
		break;
	case CMDQ_LOST:
		put_bool_member(b, "lost", true);
		put_bool_member(b, "drain", e->drain);
		break;
	case CMDQ_RECONNECT:
		put_cstring_member(b, "reconnect", e->pc.secret);
		break;
	case CMDQ_GRACE_OVER:
		put_int_member(b, "graceOver", e->player);
		break;
	}
	PROTO_BUF_LIT(b, "}\n");
}

/* dispatch_hooks.record: write a recorded entry before any of its events
 * goes out (write-ahead); the lines of one that is not recorded are not
 * digested. False when the entry could not be written (or writing failed
 * before): the dispatcher halts. */
static bool journal_record(void *ctx, const struct cmdq_entry *e, int player, bool recorded)
{
	struct journal *j = ctx;
	check_sync_error(j);
	if (j->failed)
		return false;
	j->skip_lines = !recorded;
	if (!recorded)
		return true;
	j->n++;
	format_entry(j, e, player);
	if (!put_line(j, "write to"))
		return false;
	j->kept = j->n;
	/* the entry that ends the game is on disk before its GameEnd goes out:
	 * a failed sync here halts the dispatcher before any event of it */
	bool sync = j->sync == JOURNAL_SYNC_ALWAYS ||
	            (entry_ended_game(j) && j->sync == JOURNAL_SYNC_TURN);
	return !sync || sync_now(j);
}

/* dispatch_hooks.after: digests and syncs where a turn ends. */
static void journal_after(void *ctx, const struct cmdq_entry *e, int player)
{
	(void)e;
	(void)player;
	struct journal *j = ctx;
	bool skipped = j->skip_lines;
	j->skip_lines = false;
	if (j->failed || skipped)
		return;
	check_sync_error(j);
	if (j->failed)
		return;
	bool over = game_is_over(j->game);
	bool ended = entry_ended_game(j);
	/* after the end (the epilogue), every entry counts as a wait's end */
	bool turn_end = over || game_waiting_for(j->game) != j->wait_before;
	if ((turn_end && j->stream.lines > j->digest_lines) ||
	    j->n - j->digest_n >= JOURNAL_DIGEST_EVERY)
		write_digest(j);
	if (j->failed)
		return;
	if (ended && j->sync != JOURNAL_SYNC_NEVER)
		sync_now(j); /* its digest too (the entry was synced in journal_record) */
	else if (turn_end && j->sync != JOURNAL_SYNC_ALWAYS)
		request_sync(j); /* in the background, JOURNAL_SYNC_GAP_MS apart */
}

struct dispatch_hooks journal_hooks(struct journal *j, const struct game *g)
{
	assert(j && g);
	j->game = g;
	return (struct dispatch_hooks){.before = journal_before,
	                               .record = journal_record,
	                               .after = journal_after,
	                               .ctx = j};
}

void journal_on_line(void *ctx, int comm_id, int player, const struct game_event *ev,
                     const char *line, size_t len)
{
	struct journal *j = ctx;
	if (!j->failed && !j->skip_lines)
		journal_stream_deliver(&j->stream, comm_id, player, ev, line, len);
}

bool journal_in_use(const char *path)
{
	return mapfile_locked(path);
}

bool journal_failed(const struct journal *j)
{
	return j->failed;
}

/* fsync the directory holding path, so that the new file's name is
 * durable too. */
static int sync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xmemdup0(path, slash == path ? 1 : (size_t)(slash - path)) : NULL;
	int fd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = fd >= 0 && fsync(fd) == 0 ? 0 : errno;
	if (fd >= 0)
		close(fd);
	free(dir);
	return rc;
}

/* The wall-clock time now, also written into when in ISO 8601 UTC with
 * milliseconds ("2026-11-26T07:30:00.123Z"). */
static struct timespec utc_now(char *when, size_t len)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct tm tm;
	gmtime_r(&now.tv_sec, &tm);
	char stamp[40];
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when, len, "%s.%03ldZ", stamp, now.tv_nsec / 1000000);
	return now;
}

static void put_header(struct journal *j, const struct journal_params *p)
{
	uint8_t d[SHA256_DIGEST_SIZE];
	char hex[2 * SHA256_DIGEST_SIZE + 1];
	journal_sha256_of(p->cfg->text, p->cfg->text_len, d);
	journal_hex_encode(d, sizeof d, hex);

	char when[64];
	struct timespec now = utc_now(when, sizeof when);

	struct proto_buf *b = &j->line;
	proto_buf_reset(b);
	PROTO_BUF_LIT(b, "{");
	put_cstring_member(b, "journal", JOURNAL_FORMAT);
	put_int_member(b, "version", JOURNAL_VERSION);
	put_cstring_member(b, "server", SOPRA_VERSION);
	put_cstring_member(b, "rules", game_rules_name(p->rules));
	char seed[24]; /* a full 64-bit value: a string (JOURNAL_MAX_EXACT) */
	snprintf(seed, sizeof seed, "%lld", (long long)p->seed);
	put_cstring_member(b, "seed", seed);
	put_int_member(b, "timeout", p->timeout_sec);
	put_cstring_member(b, "sync", journal_sync_name(p->sync));
	put_cstring_member(b, "configPath", p->config_path ? p->config_path : "");
	put_int_member(b, "configBytes", (int64_t)p->cfg->text_len);
	put_cstring_member(b, "configSha256", hex);
	if (p->session_key) {
		char key[2 * JOURNAL_KEY_BYTES + 1];
		journal_hex_encode(p->session_key, JOURNAL_KEY_BYTES, key);
		put_cstring_member(b, "sessionKey", key);
		put_int_member(b, "grace", p->grace_sec);
	}
	put_int_member(b, "failureBudget", p->failure_budget);
	put_cstring_member(b, "start", when);
	put_int_member(b, "startUnixMs", (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000);
	put_text_member(b, "config", p->cfg->text, p->cfg->text_len);
	/* last: the SHA-256 of every byte before it (journal_header_hash) */
	journal_sha256_of(b->data, b->len, d);
	journal_hex_encode(d, sizeof d, hex);
	put_cstring_member(b, JOURNAL_HEADER_HASH_KEY, hex);
	PROTO_BUF_LIT(b, "}\n");
}

static void journal_free(struct journal *j)
{
	stop_thread(j);
	pthread_mutex_destroy(&j->mu);
	pthread_cond_destroy(&j->cv);
	mapfile_close(&j->file);
	proto_buf_free(&j->line);
	journal_stream_free(&j->stream);
	free(j->path);
	free(j);
}

/* A journal of path (its file not open yet) whose game has run for
 * elapsed_ms: the state that journal_open and journal_reopen share. */
static struct journal *journal_new(const char *path, enum journal_sync sync, FILE *log,
                                   int64_t elapsed_ms)
{
	struct journal *j = xcalloc(1, sizeof *j);
	j->file.fd = -1;
	j->path = xstrdup(path);
	j->sync = sync;
	j->log = log;
	j->t0_ms = mono_ms() - elapsed_ms;
	j->last_started = -1;
	journal_stream_init(&j->stream);
	pthread_mutex_init(&j->mu, NULL);
	pthread_condattr_t ca; /* the sync gap is timed on the monotonic clock */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->cv, &ca);
	pthread_condattr_destroy(&ca);
	return j;
}

/* Once the file is written: fault in the pages the first entries go to.
 * "always" does not: it syncs, and each sync write-protects the pages, on
 * the loop's thread anyway. */
static void first_prefault(struct journal *j)
{
	if (j->sync == JOURNAL_SYNC_ALWAYS)
		return;
	j->prefaulted_at = j->file.len; /* JOURNAL_PREFAULT_MIN ahead */
	prefault_next(j);
}

struct journal *journal_open(const struct journal_params *p, FILE *log, char *err, size_t errlen)
{
	struct journal *j = journal_new(p->path, p->sync, log, 0);
	int e = mapfile_create(&j->file, p->path);
	if (e != 0) {
		snprintf(err, errlen, "cannot create journal %s: %s%s", p->path, strerror(e),
		         e == EEXIST ? " (a journal is never overwritten)" : "");
		journal_free(j);
		return NULL;
	}
	put_header(j, p);
	e = mapfile_append(&j->file, j->line.data, j->line.len);
	if (e == 0 && p->sync != JOURNAL_SYNC_NEVER && fdatasync(j->file.fd) != 0)
		e = errno;
	if (e == 0 && p->sync != JOURNAL_SYNC_NEVER)
		e = sync_dir_of(p->path);
	if (e != 0) {
		snprintf(err, errlen, "cannot write journal %s: %s", p->path, strerror(e));
		unlink(p->path); /* nothing of this game is in it */
		journal_free(j);
		return NULL;
	}
	/* the header's buffer holds the configuration's text: an entry's
	 * line needs a fraction of it */
	proto_buf_free(&j->line);
	proto_buf_init(&j->line);
	first_prefault(j);
	return j;
}

bool journal_close(struct journal *j, const char *reason)
{
	if (!j)
		return true;
	stop_thread(j);
	check_sync_error(j);
	if (!j->failed) {
		if (j->stream.lines > j->digest_lines || j->n > j->digest_n)
			write_digest(j);
	}
	if (!j->failed) {
		const char *r = reason ? reason : "closed";
		put_mark(&j->line, "end", r, j->n, mono_ms() - j->t0_ms);
		if (put_line(j, "write to")) {
			int e = mapfile_cut(&j->file);
			if (e != 0) /* a reader stops at the zero tail anyway */
				jlog(j, "journal %s: cannot cut off its preallocated zero tail: %s",
				     j->path, strerror(e));
			if (j->sync != JOURNAL_SYNC_NEVER)
				sync_now(j);
		}
	}
	bool ok = !j->failed;
	if (!ok)
		jlog(j, "JOURNAL FAILED: %s is incomplete: it stops before the failure (see above)",
		     j->path);
	journal_free(j);
	return ok;
}

void journal_discard(struct journal *j)
{
	if (!j)
		return;
	unlink(j->path);
	journal_free(j);
}

struct journal *journal_reopen(const char *path, const struct journal_file *jf,
                               enum journal_sync sync, FILE *log, char *err, size_t errlen)
{
	struct journal_replay *r = journal_replay_new(jf, NULL, NULL, err, errlen);
	if (!r)
		return NULL;
	int64_t last_ms = 0;
	for (size_t i = 0; i < jf->nrec; i++) {
		if (jf->rec[i].kind == JOURNAL_END)
			break;
		if (!journal_replay_step(r, &jf->rec[i], err, errlen)) {
			journal_replay_free(r);
			return NULL;
		}
		if (jf->rec[i].kind != JOURNAL_DIGEST)
			last_ms = jf->rec[i].ms;
	}
	struct journal *j = journal_new(path, sync, log, last_ms);
	journal_replay_take_stream(r, &j->stream);
	journal_replay_free(r);
	j->n = j->kept = j->digest_n = jf->entries;
	j->digest_lines = j->stream.lines;
	int e = mapfile_open_at(&j->file, path, (off_t)jf->resume_bytes);
	if (e == EWOULDBLOCK) {
		snprintf(err, errlen, "%s: %s", path, JOURNAL_IN_USE);
		journal_free(j);
		return NULL;
	}
	if (e != 0) {
		snprintf(err, errlen, "cannot reopen journal %s: %s", path, strerror(e));
		journal_free(j);
		return NULL;
	}
	/* the resume record */
	char when[64];
	utc_now(when, sizeof when);
	put_mark(&j->line, "resume", when, j->n, last_ms);
	if (!put_line(j, "write to") || (sync != JOURNAL_SYNC_NEVER && !sync_now(j))) {
		snprintf(err, errlen, "cannot write journal %s", path);
		journal_free(j);
		return NULL;
	}
	first_prefault(j);
	return j;
}
