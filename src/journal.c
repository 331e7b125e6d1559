/*
 * journal: write, read and replay a game's journal (include/sopra/journal.h,
 * docs/journal.md).
 *
 * Writing happens on the server's one thread, inside the dispatcher's
 * hooks: the entry's line is formatted into a reused buffer and appended
 * to the file before the entry is applied, by a copy into a shared mapping
 * of it (src/mapfile.c: in the page cache at once, without a system call). Only the
 * "turn" policy's fdatasync runs on a second thread (sync_thread), so that
 * a turn's end does not wait for the disk: the next player's ActNow goes
 * out while the disk catches up (the loss window this opens is stated in
 * docs/journal.md). The same thread, under "never" too, faults in the pages
 * the next entries go to, so the loop's thread takes no page fault.
 *
 * The digest is SHA-256 (nettle) over "PLAYER\tLINE" of every line sent, in
 * order: exactly sopra-replay's output, so `sopra-replay FILE | sha256sum`
 * gives the last digest of a complete journal.
 */
#include "sopra/journal.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nettle/base16.h>
#include <nettle/base64.h>
#include <nettle/sha2.h>

#include <cjson/cJSON.h>

#include "sopra/cmdq.h"
#include "sopra/core.h"
#include "sopra/json.h"
#include "sopra/mapfile.h"
#include "sopra/proto.h"
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
#define JOURNAL_PREFAULT_MIN ((off_t)16 * 1024)
/* Fields in one journal line (the header has the most: 13). */
#define JOURNAL_MAX_FIELDS 32

/* ---- small helpers ----------------------------------------------------- */

bool journal_sync_parse(const char *s, enum journal_sync *out)
{
	static const struct {
		const char *name;
		enum journal_sync v;
	} t[] = {{"always", JOURNAL_SYNC_ALWAYS},
	         {"turn", JOURNAL_SYNC_TURN},
	         {"never", JOURNAL_SYNC_NEVER}};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(s, t[i].name) == 0) {
			*out = t[i].v;
			return true;
		}
	return false;
}

const char *journal_sync_name(enum journal_sync s)
{
	switch (s) {
	case JOURNAL_SYNC_ALWAYS:
		return "always";
	case JOURNAL_SYNC_TURN:
		return "turn";
	case JOURNAL_SYNC_NEVER:
		break;
	}
	return "never";
}

size_t journal_line_prefix(int player, char buf[JOURNAL_PREFIX_MAX])
{
	if (player < 0) {
		memcpy(buf, "-\t", 3);
		return 2;
	}
	size_t n = proto_format_int(player, buf); /* an int: 11 bytes at most */
	memcpy(buf + n, "\t", 2);
	return n + 1;
}

/* dst[2n + 1]: the n bytes of src in lower-case hex, NUL-terminated. */
static void hex_encode(const uint8_t *src, size_t n, char *dst)
{
	base16_encode_update(dst, n, src);
	dst[BASE16_ENCODE_LENGTH(n)] = '\0';
}

/* Whether s[len] is exactly n bytes in hex (either case, nothing else: the
 * decoder's skipping of blanks would leave fewer than n bytes). */
static bool hex_decode(const char *s, size_t len, uint8_t *dst, size_t n)
{
	struct base16_decode_ctx c;
	size_t got = 0;
	if (len != BASE16_ENCODE_LENGTH(n))
		return false;
	base16_decode_init(&c);
	return base16_decode_update(&c, &got, dst, len, s) && base16_decode_final(&c) && got == n;
}

static void sha256_of(const char *data, size_t len, uint8_t out[SHA256_DIGEST_SIZE])
{
	struct sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, len, (const uint8_t *)data);
	sha256_digest(&c, SHA256_DIGEST_SIZE, out);
}

void journal_session_secret(void *ctx, int player, char *hex)
{
	const uint8_t *key = ctx;
	uint8_t id[4] = {(uint8_t)((unsigned)player >> 24), (uint8_t)((unsigned)player >> 16),
	                 (uint8_t)((unsigned)player >> 8), (uint8_t)player};
	struct sha256_ctx c;
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_init(&c);
	sha256_update(&c, JOURNAL_KEY_BYTES, key);
	sha256_update(&c, sizeof id, id);
	sha256_digest(&c, sizeof d, d);
	hex_encode(d, sizeof d, hex);
}

bool journal_kind_is_entry(enum journal_kind k)
{
	return k != JOURNAL_DIGEST && k != JOURNAL_END && k != JOURNAL_RESUME;
}

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
	size_t k = strlen(key);
	assert(k + 3 <= sizeof k64);
	memcpy(k64, key, k);
	memcpy(k64 + k, "64", 3);
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

/* A set of connections (a few: see stream_deliver). */
struct comm_set {
	int *v;
	size_t n, cap;
};

static bool comm_set_has(const struct comm_set *s, int comm)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == comm)
			return true;
	return false;
}

static void comm_set_add(struct comm_set *s, int comm)
{
	if (comm <= 0 || comm_set_has(s, comm))
		return;
	s->v = xgrow(s->v, &s->cap, s->n + 1, sizeof *s->v, 8);
	s->v[s->n++] = comm;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- writing ------------------------------------------------------------ */

/* The event stream so far: SHA-256 over "PLAYER\tLINE" of every line sent
 * (journal_line_prefix), and how many lines and bytes went into it.
 *
 * Lines gather in `pending` and are hashed together when a digest is taken
 * or STREAM_BATCH bytes have gathered. On a command's path a line then
 * costs a copy into a warm buffer, not a run of the hash, whose code and
 * state a round trip on a shared core finds cold. The digests are the same. */
#define STREAM_BATCH 16384
struct stream_digest {
	struct sha256_ctx sha;
	struct proto_buf pending; /* lines not hashed yet */
	int64_t lines, bytes;
	/* the connections that got their player's Left: the server closes them
	 * (flush, then close) and sends them nothing more, so lines the
	 * broadcaster still routes to them (to a pipelined command's sender)
	 * never go over the wire and are not in the stream. At most one per
	 * player. */
	struct comm_set closed;
};

static void stream_init(struct stream_digest *d)
{
	*d = (struct stream_digest){0};
	sha256_init(&d->sha);
	proto_buf_init(&d->pending);
}

static void stream_free(struct stream_digest *d)
{
	proto_buf_free(&d->pending);
	free(d->closed.v);
	d->closed = (struct comm_set){0};
}

/* Moves src's stream into dst (initialised and empty); src stays valid. */
static void stream_move(struct stream_digest *dst, struct stream_digest *src)
{
	stream_free(dst);
	*dst = *src;
	proto_buf_init(&src->pending);
	src->closed = (struct comm_set){0};
}

static void stream_hash_pending(struct stream_digest *d)
{
	if (d->pending.len)
		sha256_update(&d->sha, d->pending.len, (const uint8_t *)d->pending.data);
	proto_buf_reset(&d->pending);
}

static void stream_add(struct stream_digest *d, int player, const char *line, size_t len)
{
	struct proto_buf *b = &d->pending;
	size_t pn = journal_line_prefix(player, proto_buf_room(b, JOURNAL_PREFIX_MAX + len));
	b->len += pn;
	proto_buf_add(b, line, len);
	d->lines++;
	d->bytes += (int64_t)(pn + len);
	if (b->len >= STREAM_BATCH)
		stream_hash_pending(d);
}

/* A line the broadcaster delivered to comm_id (player on it, -1: none),
 * the encoded event ev: into the stream, unless the connection closes
 * after its player's Left. Returns whether it went into the stream. */
static bool stream_deliver(struct stream_digest *d, int comm_id, int player,
                           const struct game_event *ev, const char *line, size_t len)
{
	if (d->closed.n && comm_set_has(&d->closed, comm_id))
		return false;
	stream_add(d, player, line, len);
	if (ev->type == GEV_LEFT && player >= 0 && ev->arg[0] == player)
		comm_set_add(&d->closed, comm_id);
	return true;
}

/* The SHA-256 of the stream so far; the stream goes on. */
static void stream_sha256(struct stream_digest *d, uint8_t out[SHA256_DIGEST_SIZE])
{
	stream_hash_pending(d);
	struct sha256_ctx c = d->sha;
	sha256_digest(&c, SHA256_DIGEST_SIZE, out);
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

	struct stream_digest stream;
	int64_t digest_n, digest_lines; /* at the last digest written */

	bool failed;

	/* the background thread: "turn"'s fdatasyncs, and the prefaults */
	bool thread_started;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t sync_req, sync_done; /* requests made / served */
	int sync_err;                 /* errno of a failed background fdatasync */
	bool idle;                    /* the thread waits for a request */
	bool stop;
};

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
static void prefault_next(struct journal *j, off_t *prefaulted_at)
{
	off_t len = __atomic_load_n(&j->file.len, __ATOMIC_RELAXED);
	off_t ahead = 2 * (len - *prefaulted_at);
	*prefaulted_at = len;
	mapfile_prefault(&j->file, ahead > JOURNAL_PREFAULT_MIN ? ahead : JOURNAL_PREFAULT_MIN);
}

/* The "turn" policy's syncs: each one covers every request made before it
 * starts; consecutive syncs start JOURNAL_SYNC_GAP_MS apart at least. On
 * stop, a pending request is still served. Only an idle thread is woken by
 * a request (request_sync); a busy one finds it when its sync and gap end.
 * Each sync is followed by a prefault; under "never" a request gets the
 * prefault alone. */
static void *sync_thread(void *arg)
{
	struct journal *j = arg;
	off_t prefaulted_at = 0;
	prefault_next(j, &prefaulted_at);
	pthread_mutex_lock(&j->mu);
	for (;;) {
		j->idle = true;
		while (!j->stop && j->sync_done == j->sync_req)
			pthread_cond_wait(&j->cv, &j->mu);
		j->idle = false;
		if (j->sync_done == j->sync_req)
			break; /* stop, nothing pending */
		uint64_t target = j->sync_req;
		int64_t started = mono_ms();
		pthread_mutex_unlock(&j->mu);
		int rc = j->sync == JOURNAL_SYNC_TURN ? fdatasync(j->file.fd) : 0;
		int e = errno;
		prefault_next(j, &prefaulted_at);
		pthread_mutex_lock(&j->mu);
		if (rc != 0 && j->sync_err == 0)
			j->sync_err = e;
		j->sync_done = target;
		wait_until(j, started + JOURNAL_SYNC_GAP_MS);
	}
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

static void stop_thread(struct journal *j)
{
	if (!j->thread_started)
		return;
	pthread_mutex_lock(&j->mu);
	j->stop = true;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	pthread_join(j->thread, NULL);
	j->thread_started = false;
}

/*
 * Writing failed: say so loudly, cut the file back to its last whole line
 * (so that it stays a valid, shorter journal) and stop journaling. The game
 * goes on: its players are not to lose a game because the disk is full.
 */
static void journal_fail(struct journal *j, const char *what, int err)
{
	if (j->failed)
		return;
	j->failed = true;
	jlog(j, "JOURNAL FAILED: %s %s: %s", what, j->path, strerror(err));
	jlog(j,
	     "JOURNAL FAILED: the game goes on WITHOUT a journal; %s keeps entries 1..%lld "
	     "(cut back to %lld bytes)",
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

/* Asks for a background sync. The thread is woken only when it is idle:
 * waking it during its gap would cost the loop's core a context switch per
 * turn end (two per command with bots) for nothing. */
static void request_sync(struct journal *j)
{
	pthread_mutex_lock(&j->mu);
	j->sync_req++;
	if (j->idle)
		pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

/* A background fdatasync that failed is reported on the loop's thread. */
static void check_sync_error(struct journal *j)
{
	if (!j->thread_started)
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
	stream_sha256(&j->stream, d);
	hex_encode(d, sizeof d, hex);
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
 * carries is written, Move.fuel also in revised (where it is false). A
 * decoded command's strings are valid UTF-8 without NUL (proto_decode). */
static void put_command(struct proto_buf *b, const struct cmd *c)
{
	assert(!c->name || plain_text(c->name, strlen(c->name)));
	proto_put_cmd(b, c, RULES_BASE);
}

/* dispatch_hooks.before: write the entry ahead of its effects. */
static void journal_before(void *ctx, const struct cmdq_entry *e, int player)
{
	struct journal *j = ctx;
	if (j->failed)
		return;
	j->wait_before = game_waiting_for(j->game);
	j->over_before = game_is_over(j->game);
	j->n++;
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
	if (!put_line(j, "write to"))
		return;
	j->kept = j->n;
	if (j->sync == JOURNAL_SYNC_ALWAYS)
		sync_now(j);
}

/* dispatch_hooks.after: digests and syncs where a turn ends. */
static void journal_after(void *ctx, const struct cmdq_entry *e, int player)
{
	(void)e;
	(void)player;
	struct journal *j = ctx;
	if (j->failed)
		return;
	check_sync_error(j);
	if (j->failed)
		return;
	bool over = game_is_over(j->game);
	bool ended = over && !j->over_before; /* this entry ended the game */
	/* after the end (the epilogue), every entry counts as a wait's end */
	bool turn_end = over || game_waiting_for(j->game) != j->wait_before;
	if ((turn_end && j->stream.lines > j->digest_lines) ||
	    j->n - j->digest_n >= JOURNAL_DIGEST_EVERY)
		write_digest(j);
	if (j->failed)
		return;
	if (ended && j->sync != JOURNAL_SYNC_NEVER)
		sync_now(j); /* the end of the game is on disk before GameEnd goes out */
	else if (turn_end && j->thread_started)
		request_sync(j); /* in the background, JOURNAL_SYNC_GAP_MS apart */
}

struct dispatch_hooks journal_hooks(struct journal *j, const struct game *g)
{
	assert(j && g);
	j->game = g;
	return (struct dispatch_hooks){.before = journal_before, .after = journal_after, .ctx = j};
}

void journal_on_line(void *ctx, int comm_id, int player, const struct game_event *ev,
                     const char *line, size_t len)
{
	struct journal *j = ctx;
	if (!j->failed)
		stream_deliver(&j->stream, comm_id, player, ev, line, len);
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
	sha256_of(p->cfg->text, p->cfg->text_len, d);
	hex_encode(d, sizeof d, hex);

	char when[64];
	struct timespec now = utc_now(when, sizeof when);

	struct proto_buf *b = &j->line;
	proto_buf_reset(b);
	PROTO_BUF_LIT(b, "{");
	put_cstring_member(b, "journal", JOURNAL_FORMAT);
	put_int_member(b, "version", p->session_key ? JOURNAL_VERSION : JOURNAL_VERSION_PLAIN);
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
		hex_encode(p->session_key, JOURNAL_KEY_BYTES, key);
		put_cstring_member(b, "sessionKey", key);
		put_int_member(b, "grace", p->grace_sec);
	}
	put_cstring_member(b, "start", when);
	put_int_member(b, "startUnixMs", (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000);
	put_text_member(b, "config", p->cfg->text, p->cfg->text_len);
	PROTO_BUF_LIT(b, "}\n");
}

static void journal_free(struct journal *j)
{
	stop_thread(j);
	pthread_mutex_destroy(&j->mu);
	pthread_cond_destroy(&j->cv);
	mapfile_close(&j->file);
	proto_buf_free(&j->line);
	stream_free(&j->stream);
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
	stream_init(&j->stream);
	pthread_mutex_init(&j->mu, NULL);
	pthread_condattr_t ca; /* the sync gap is timed on the monotonic clock */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->cv, &ca);
	pthread_condattr_destroy(&ca);
	return j;
}

/* The background thread of "turn" (fdatasyncs, each followed by a
 * prefault) and of "never" (the prefaults alone), started once the file is
 * written; false with err when it cannot be. "always" has none: it syncs
 * on the loop's thread. */
static bool start_sync_thread(struct journal *j, char *err, size_t errlen)
{
	if (j->sync == JOURNAL_SYNC_ALWAYS)
		return true;
	if (pthread_create(&j->thread, NULL, sync_thread, j) != 0) {
		snprintf(err, errlen, "cannot start the journal's sync thread");
		return false;
	}
	j->thread_started = true;
	return true;
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
	if (!start_sync_thread(j, err, errlen)) {
		unlink(p->path);
		journal_free(j);
		return NULL;
	}
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

/* ---- reading: one flat JSON object per line ------------------------------ */

enum jv_type { JV_STR, JV_INT, JV_BOOL, JV_NULL };

/* One member of a journal line. key and s point into the line's cJSON
 * tree (struct jobj owns it). */
struct jfield {
	const char *key;
	size_t klen;
	enum jv_type type;
	const char *s; /* JV_STR: NUL-terminated, slen bytes */
	size_t slen;
	int64_t i;
	bool b;
};

struct jobj {
	struct jfield f[JOURNAL_MAX_FIELDS];
	int n;
	cJSON *tree; /* owned */
};

static void jobj_free(struct jobj *o)
{
	cJSON_Delete(o->tree);
	o->tree = NULL;
	o->n = 0;
}

/* The largest integer a double (cJSON's number) holds exactly: journal
 * integers stay below it; the seed, a full 64-bit value, is a string. */
#define JOURNAL_MAX_EXACT ((int64_t)1 << 53)

/* Member m of a line as a field; false with *why for what the format does
 * not have (nested values, fractions, integers beyond 2^53). */
static bool take_field(const cJSON *m, struct jfield *f, const char **why)
{
	*f = (struct jfield){.key = m->string, .klen = strlen(m->string)};
	if (cJSON_IsString(m)) {
		f->type = JV_STR;
		f->s = m->valuestring;
		f->slen = strlen(m->valuestring);
	} else if (cJSON_IsBool(m)) {
		f->type = JV_BOOL;
		f->b = cJSON_IsTrue(m);
	} else if (cJSON_IsNull(m)) {
		f->type = JV_NULL;
	} else if (cJSON_IsNumber(m)) {
		double d = m->valuedouble;
		if (d != d || d < -(double)JOURNAL_MAX_EXACT || d > (double)JOURNAL_MAX_EXACT ||
		    (double)(int64_t)d != d) {
			*why = "not an integer of the format";
			return false;
		}
		f->type = JV_INT;
		f->i = (int64_t)d;
	} else {
		*why = "nested values are not part of the format";
		return false;
	}
	return true;
}

/* Parse one line (without its "\n") as a flat object -- string keys;
 * string, integer, boolean or null values -- with the strict check in
 * front of cJSON (json.h) and no key twice. */
static bool parse_object(const char *line, size_t len, struct jobj *o, const char **why)
{
	struct json_error je;
	o->n = 0;
	o->tree = NULL;
	if (!json_check(line, len, &je)) {
		*why = je.why;
		return false;
	}
	o->tree = cJSON_ParseWithLength(line, len);
	if (!o->tree)
		xalloc_die(len); /* json_check accepted it: only memory can fail */
	if (!cJSON_IsObject(o->tree)) {
		*why = "not a JSON object";
		goto fail;
	}
	for (const cJSON *m = o->tree->child; m; m = m->next) {
		if (o->n == JOURNAL_MAX_FIELDS) {
			*why = "too many fields";
			goto fail;
		}
		struct jfield *f = &o->f[o->n];
		if (!take_field(m, f, why))
			goto fail;
		for (int k = 0; k < o->n; k++)
			if (o->f[k].klen == f->klen && memcmp(o->f[k].key, f->key, f->klen) == 0) {
				*why = "a key given twice";
				goto fail;
			}
		o->n++;
	}
	return true;
fail:
	jobj_free(o);
	return false;
}

static const struct jfield *field(const struct jobj *o, const char *key)
{
	size_t n = strlen(key);
	for (int i = 0; i < o->n; i++)
		if (o->f[i].klen == n && memcmp(o->f[i].key, key, n) == 0)
			return &o->f[i];
	return NULL;
}

/* ---- reading: records ---------------------------------------------------- */

struct rd {
	const struct jobj *o;
	const char *why; /* first problem, static or in msg */
	char msg[128];
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
rd_fail(struct rd *r, const char *fmt, ...)
{
	if (r->why)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
	r->why = r->msg;
}

static int64_t rd_int(struct rd *r, const char *key, int64_t min, int64_t max)
{
	const struct jfield *f = field(r->o, key);
	if (!f || f->type != JV_INT) {
		rd_fail(r, "\"%s\": %s", key, f ? "expected an integer" : "missing");
		return 0;
	}
	if (f->i < min || f->i > max) {
		rd_fail(r, "\"%s\": out of range", key);
		return 0;
	}
	return f->i;
}

/* The header's seed: a decimal string (a 64-bit value does not fit a
 * JSON number as readers hold it). */
static int64_t rd_seed(struct rd *r)
{
	const struct jfield *f = field(r->o, "seed");
	char *end = NULL;
	errno = 0;
	long long v = f && f->type == JV_STR ? strtoll(f->s, &end, 10) : 0;
	if (!f || f->type != JV_STR || !f->slen || *end || errno == ERANGE ||
	    (f->s[0] != '-' && (f->s[0] < '0' || f->s[0] > '9'))) {
		rd_fail(r, "\"seed\": %s", f ? "expected a decimal string" : "missing");
		return 0;
	}
	return (int64_t)v;
}

static int rd_int32(struct rd *r, const char *key)
{
	return (int)rd_int(r, key, INT32_MIN, INT32_MAX);
}

static bool rd_has(const struct rd *r, const char *key)
{
	return field(r->o, key) != NULL;
}

static bool rd_bool(struct rd *r, const char *key)
{
	const struct jfield *f = field(r->o, key);
	if (!f || f->type != JV_BOOL) {
		rd_fail(r, "\"%s\": %s", key, f ? "expected true or false" : "missing");
		return false;
	}
	return f->b;
}

/* A string stored as "key" (text) or "key64" (base64). Returns an owned
 * copy (NUL-terminated) or NULL (problem recorded). */
static char *rd_str(struct rd *r, const char *key, size_t *len)
{
	const struct jfield *f = field(r->o, key);
	char k64[64];
	snprintf(k64, sizeof k64, "%s64", key);
	const struct jfield *f64 = field(r->o, k64);
	size_t dummy;
	if (!len)
		len = &dummy;
	if (f && f->type == JV_STR && !f64) {
		*len = f->slen;
		return xmemdup0(f->s, f->slen);
	}
	if (f64 && f64->type == JV_STR && !f) {
		struct base64_decode_ctx c;
		char *out = xmalloc(BASE64_DECODE_LENGTH(f64->slen) + 1);
		size_t n = 0;
		base64_decode_init(&c);
		if (base64_decode_update(&c, &n, (uint8_t *)out, f64->slen, f64->s) &&
		    base64_decode_final(&c)) {
			out[n] = '\0';
			*len = n;
			return out;
		}
		free(out);
		rd_fail(r, "\"%s\": bad base64", k64);
		return NULL;
	}
	rd_fail(r, "\"%s\": %s", key, f || f64 ? "expected one string" : "missing");
	return NULL;
}

static bool parse_cmd_type(const char *name, enum cmd_type *out)
{
	for (int t = 0; t < CMD_TYPE_COUNT; t++)
		if (strcmp(cmd_name((enum cmd_type)t), name) == 0) {
			*out = (enum cmd_type)t;
			return true;
		}
	return false;
}

static void read_param(struct rd *r, struct journal_record *rec, const struct proto_param *p)
{
	switch (p->type) {
	case PROTO_INT:
		proto_param_set(&rec->cmd, p, rd_int32(r, p->key));
		return;
	case PROTO_BOOL:
		proto_param_set(&rec->cmd, p, rd_bool(r, p->key));
		return;
	case PROTO_STRING:
		rec->name = rd_str(r, p->key, NULL);
		rec->cmd.name = rec->name;
		return;
	}
}

/* Whether the record holds p: a target parameter when any of the target's
 * parameters is there (then all must be), another optional one (fuel) when
 * it is there, a required one always. */
static bool record_has_param(const struct rd *r, const struct cmd *c, const struct proto_param *p)
{
	if (proto_param_with_target(p))
		return c->has_target;
	return !(p->flags & PROTO_OPTIONAL) || rd_has(r, p->key);
}

static void read_command(struct rd *r, struct journal_record *rec)
{
	char *name = rd_str(r, "command", NULL);
	if (!name)
		return;
	struct cmd *c = &rec->cmd;
	bool known = parse_cmd_type(name, &c->type);
	if (!known)
		rd_fail(r, "unknown command \"%.40s\"", name);
	free(name);
	if (!known)
		return;
	size_t n;
	const struct proto_param *params = proto_cmd_params(c->type, &n);
	for (size_t i = 0; i < n; i++)
		if (proto_param_with_target(&params[i]) && rd_has(r, params[i].key))
			c->has_target = true;
	for (size_t i = 0; i < n; i++)
		if (record_has_param(r, c, &params[i]))
			read_param(r, rec, &params[i]);
}

static void record_free(struct journal_record *rec)
{
	free(rec->name);
	free(rec->error);
	free(rec->reason);
	free(rec->secret);
	memset(rec, 0, sizeof *rec);
}

/* One line after the header. false: r->why says what is wrong. */
static bool read_record(struct rd *r, struct journal_record *rec)
{
	memset(rec, 0, sizeof *rec);
	if (rd_has(r, "digest")) {
		rec->kind = JOURNAL_DIGEST;
		char *hex = rd_str(r, "digest", NULL);
		if (hex && !hex_decode(hex, strlen(hex), rec->sha256, sizeof rec->sha256))
			rd_fail(r, "\"digest\": expected 64 hex digits");
		free(hex);
		rec->n = rd_int(r, "n", 0, INT64_MAX);
		rec->lines = rd_int(r, "lines", 0, INT64_MAX);
		rec->bytes = rd_int(r, "bytes", 0, INT64_MAX);
	} else if (rd_has(r, "resume")) {
		rec->kind = JOURNAL_RESUME;
		rec->reason = rd_str(r, "resume", NULL);
		rec->n = rd_int(r, "n", 0, INT64_MAX);
		rec->ms = rd_int(r, "ms", 0, INT64_MAX);
	} else if (rd_has(r, "end")) {
		rec->kind = JOURNAL_END;
		rec->reason = rd_str(r, "end", NULL);
		rec->n = rd_int(r, "n", 0, INT64_MAX);
		rec->ms = rd_int(r, "ms", 0, INT64_MAX);
	} else {
		rec->n = rd_int(r, "n", 1, INT64_MAX);
		rec->ms = rd_int(r, "ms", 0, INT64_MAX);
		rec->comm_id = (int)rd_int(r, "comm", 0, INT32_MAX);
		rec->player = (int)rd_int(r, "player", -1, INT32_MAX);
		if (rd_has(r, "command")) {
			rec->kind = JOURNAL_COMMAND;
			read_command(r, rec);
		} else if (rd_has(r, "bad") || rd_has(r, "bad64")) {
			rec->kind = JOURNAL_BAD;
			rec->error = rd_str(r, "bad", NULL);
		} else if (rd_has(r, "timeout")) {
			rec->kind = JOURNAL_TIMEOUT;
			if (!rd_bool(r, "timeout"))
				rd_fail(r, "\"timeout\": must be true");
		} else if (rd_has(r, "lost")) {
			rec->kind = JOURNAL_LOST;
			if (!rd_bool(r, "lost"))
				rd_fail(r, "\"lost\": must be true");
			rec->drain = rd_bool(r, "drain");
		} else if (rd_has(r, "reconnect")) {
			rec->kind = JOURNAL_RECONNECT;
			rec->secret = rd_str(r, "reconnect", NULL);
		} else if (rd_has(r, "graceOver")) {
			rec->kind = JOURNAL_GRACE_OVER;
			rec->target = (int)rd_int(r, "graceOver", 0, INT32_MAX);
		} else {
			rd_fail(r, "not a journal record (no command, bad, timeout, lost, digest "
			           "or end)");
		}
	}
	if (r->why) {
		record_free(rec);
		return false;
	}
	return true;
}

static bool read_header(struct rd *r, struct journal_file *jf)
{
	const struct jfield *f = field(r->o, "journal");
	char *fmt = f && f->type == JV_STR ? rd_str(r, "journal", NULL) : NULL;
	bool ours = fmt && strcmp(fmt, JOURNAL_FORMAT) == 0;
	free(fmt);
	if (!ours) {
		rd_fail(r, "not a sopra journal (the first line has no \"journal\":\"%s\")",
		        JOURNAL_FORMAT);
		return false;
	}
	jf->version = (int)rd_int(r, "version", 0, INT32_MAX);
	if (!r->why && jf->version != JOURNAL_VERSION && jf->version != JOURNAL_VERSION_PLAIN) {
		rd_fail(r, "journal format version %d; this build reads versions %d and %d",
		        jf->version, JOURNAL_VERSION_PLAIN, JOURNAL_VERSION);
		return false;
	}
	if (!r->why && jf->version == JOURNAL_VERSION) {
		char *key = rd_str(r, "sessionKey", NULL);
		if (key && !hex_decode(key, strlen(key), jf->session_key, sizeof jf->session_key))
			rd_fail(r, "\"sessionKey\": expected %d hex digits", 2 * JOURNAL_KEY_BYTES);
		free(key);
		jf->grace_sec = (int)rd_int(r, "grace", 0, INT32_MAX);
		jf->sessions = true;
	}
	jf->server = rd_str(r, "server", NULL);
	char *rules = rd_str(r, "rules", NULL);
	if (rules && !game_rules_parse(rules, &jf->rules))
		rd_fail(r, "\"rules\": unknown edition \"%.20s\"", rules);
	free(rules);
	jf->seed = rd_seed(r);
	jf->timeout_sec = (int)rd_int(r, "timeout", 1, INT32_MAX);
	char *sync = rd_str(r, "sync", NULL);
	if (sync && !journal_sync_parse(sync, &jf->sync))
		rd_fail(r, "\"sync\": unknown policy \"%.20s\"", sync);
	free(sync);
	jf->config_path = rd_str(r, "configPath", NULL);
	jf->config_text = rd_str(r, "config", &jf->config_len);
	int64_t bytes = rd_int(r, "configBytes", 0, INT64_MAX);
	char *hex = rd_str(r, "configSha256", NULL);
	if (hex && !hex_decode(hex, strlen(hex), jf->config_sha256, sizeof jf->config_sha256))
		rd_fail(r, "\"configSha256\": expected 64 hex digits");
	free(hex);
	jf->start = rd_str(r, "start", NULL);
	jf->start_unix_ms = rd_int(r, "startUnixMs", INT64_MIN, INT64_MAX);
	if (r->why)
		return false;
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_of(jf->config_text, jf->config_len, d);
	if ((int64_t)jf->config_len != bytes || memcmp(d, jf->config_sha256, sizeof d) != 0) {
		char want[2 * SHA256_DIGEST_SIZE + 1], got[2 * SHA256_DIGEST_SIZE + 1];
		hex_encode(jf->config_sha256, sizeof d, want);
		hex_encode(d, sizeof d, got);
		rd_fail(r,
		        "configuration hash mismatch: the header says %.12s... (%lld bytes), "
		        "the stored text is %.12s... (%zu bytes)",
		        want, (long long)bytes, got, jf->config_len);
		return false;
	}
	return true;
}

void journal_file_free(struct journal_file *jf)
{
	for (size_t i = 0; i < jf->nrec; i++)
		record_free(&jf->rec[i]);
	free(jf->rec);
	free(jf->server);
	free(jf->config_path);
	free(jf->config_text);
	free(jf->start);
	memset(jf, 0, sizeof *jf);
}

/* Whether rec may follow the records read so far; why otherwise. */
static const char *sequence_error(const struct journal_file *jf, const struct journal_record *rec,
                                  char *buf, size_t len)
{
	if (jf->ended)
		return "a record after the end record";
	switch (rec->kind) {
	case JOURNAL_DIGEST:
	case JOURNAL_END:
	case JOURNAL_RESUME:
		if (rec->n != jf->entries) {
			snprintf(buf, len, "%s after %lld entries names %lld",
			         rec->kind == JOURNAL_END ? "end record" : "digest",
			         (long long)jf->entries, (long long)rec->n);
			return buf;
		}
		return NULL;
	case JOURNAL_COMMAND:
	case JOURNAL_BAD:
	case JOURNAL_TIMEOUT:
	case JOURNAL_LOST:
	case JOURNAL_RECONNECT:
	case JOURNAL_GRACE_OVER:
		if (rec->n != jf->entries + 1) {
			snprintf(buf, len, "entry %lld follows entry %lld", (long long)rec->n,
			         (long long)jf->entries);
			return buf;
		}
		return NULL;
	}
	return NULL;
}

/* A journal ends at its first NUL byte: the zero tail the writer takes
 * ahead (src/mapfile.c) that a crash left in place. No line holds a NUL
 * (strings with one are base64). What follows the first NUL is dropped,
 * and said when it is not all zeros: after a power loss, a page written
 * back behind one that was not. Returns the content's length. */
static size_t content_length(const char *data, size_t len, struct journal_file *jf)
{
	const char *nul = memchr(data, '\0', len);
	if (!nul)
		return len;
	size_t end = (size_t)(nul - data), stray = 0;
	for (size_t i = end; i < len; i++)
		stray += data[i] != '\0';
	if (stray) {
		jf->torn = true;
		snprintf(jf->torn_why, sizeof jf->torn_why,
		         "%zu bytes after a NUL byte at offset %zu dropped (%zu not zero)",
		         len - end, end, stray);
	}
	return end;
}

bool journal_parse(const char *data, size_t len, const char *name, struct journal_file *jf,
                   char *err, size_t errlen)
{
	memset(jf, 0, sizeof *jf);
	len = content_length(data, len, jf);
	size_t cap = 0;
	size_t pos = 0;
	struct jobj o = {0};
	for (size_t line_no = 1; pos < len; line_no++) {
		const char *line = data + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		bool last = !nl || pos + n + 1 == len;
		const char *why = NULL;
		char seq[160];
		struct journal_record rec = {0};
		struct rd r = {.o = &o};
		if (!nl) {
			why = "no \"\\n\" at its end (torn write)";
		} else if (!parse_object(line, n, &o, &why)) {
			/* why set */
		} else if (line_no == 1) {
			if (!read_header(&r, jf))
				why = r.why;
			jobj_free(&o);
			if (why) {
				snprintf(err, errlen, "%s:1: %s", name, why);
				journal_file_free(jf);
				return false;
			}
			pos += n + 1;
			jf->valid_bytes = pos;
			jf->resume_bytes = pos;
			continue;
		} else {
			if (!read_record(&r, &rec))
				why = r.why;
			else if ((why = sequence_error(jf, &rec, seq, sizeof seq)) != NULL)
				record_free(&rec);
			jobj_free(&o);
		}
		if (why) {
			if (last && line_no > 1) {
				/* what a crash mid-write leaves: drop it */
				jf->torn = true;
				snprintf(jf->torn_why, sizeof jf->torn_why,
				         "line %zu (%zu bytes) dropped: %.100s", line_no, n, why);
				break;
			}
			snprintf(err, errlen, "%s:%zu: %s%s", name, line_no, why,
			         line_no == 1 ? " (the header)" : "");
			journal_file_free(jf);
			return false;
		}
		rec.line_no = line_no;
		jf->rec = xgrow(jf->rec, &cap, jf->nrec + 1, sizeof *jf->rec, 64);
		jf->rec[jf->nrec++] = rec;
		if (journal_kind_is_entry(rec.kind))
			jf->entries++;
		if (rec.comm_id > jf->max_comm)
			jf->max_comm = rec.comm_id;
		if (rec.kind == JOURNAL_END)
			jf->ended = true;
		pos += n + 1;
		jf->valid_bytes = pos;
		if (rec.kind != JOURNAL_END)
			jf->resume_bytes = pos;
	}
	if (jf->valid_bytes == 0) {
		snprintf(err, errlen, "%s: %s", name,
		         len ? "no complete header line" : "empty file (no header)");
		journal_file_free(jf);
		return false;
	}
	return true;
}

bool journal_load(const char *path, struct journal_file *jf, char *err, size_t errlen)
{
	memset(jf, 0, sizeof *jf);
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return false;
	}
	struct proto_buf b = {0};
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		proto_buf_add(&b, chunk, n);
	bool rerr = ferror(f) != 0;
	fclose(f);
	if (rerr) {
		snprintf(err, errlen, "cannot read %s", path);
		proto_buf_free(&b);
		return false;
	}
	bool ok = journal_parse(b.data ? b.data : "", b.len, path, jf, err, errlen);
	proto_buf_free(&b);
	return ok;
}

/* ---- replay ------------------------------------------------------------- */

struct journal_replay {
	const struct journal_file *jf;
	struct config *cfg;    /* owned: parsed from the journal's text */
	struct core *core;     /* owned: the game as the server ran it */
	struct proto_buf line; /* the event being routed, encoded once */
	journal_line_fn on_line;
	void *ctx;
	struct stream_digest stream;
	int64_t entries;
	int digests;
};

static void replay_encode(void *ctx, const struct game_event *ev)
{
	struct journal_replay *r = ctx;
	proto_buf_reset(&r->line);
	proto_encode(ev, r->jf->rules, &r->line);
}

/* sink.send: the event replay_encode encoded last, a line the server sent
 * (unless the connection was closing: the server drops it then). */
static void replay_send(void *ctx, int comm_id, int player, const struct game_event *ev)
{
	struct journal_replay *r = ctx;
	if (stream_deliver(&r->stream, comm_id, player, ev, r->line.data, r->line.len) &&
	    r->on_line)
		r->on_line(r->ctx, comm_id, player, r->line.data, r->line.len);
}

struct journal_replay *journal_replay_new(const struct journal_file *jf, journal_line_fn on_line,
                                          void *ctx, char *err, size_t errlen)
{
	struct config_errors errs = {0};
	struct config *cfg = config_parse(jf->config_text, jf->config_len, &errs);
	if (!cfg) {
		snprintf(err, errlen, "the journal's configuration does not load: %s",
		         errs.n ? errs.msgs[0] : "invalid");
		config_errors_free(&errs);
		return NULL;
	}
	struct journal_replay *r = xcalloc(1, sizeof *r);
	r->jf = jf;
	r->cfg = cfg;
	r->on_line = on_line;
	r->ctx = ctx;
	stream_init(&r->stream);
	proto_buf_init(&r->line);
	struct core_params cp = {.cfg = cfg, .seed = jf->seed, .rules = jf->rules};
	if (jf->sessions)
		cp.sessions = (struct session_opts){.secret = journal_session_secret,
		                                    .secret_ctx = (void *)jf->session_key,
		                                    .grace_sec = jf->grace_sec};
	r->core = core_new(
	        &cp, (struct bcast_sink){.encode = replay_encode, .send = replay_send, .ctx = r});
	return r;
}

bool journal_record_entry(const struct journal_record *rec, struct cmdq_entry *e)
{
	static const enum cmdq_kind entry_kind[] = {
	        [JOURNAL_COMMAND] = CMDQ_COMMAND,     [JOURNAL_BAD] = CMDQ_BAD_LINE,
	        [JOURNAL_TIMEOUT] = CMDQ_TIMEOUT,     [JOURNAL_LOST] = CMDQ_LOST,
	        [JOURNAL_RECONNECT] = CMDQ_RECONNECT, [JOURNAL_GRACE_OVER] = CMDQ_GRACE_OVER,
	};
	memset(e, 0, sizeof *e);
	if (!journal_kind_is_entry(rec->kind))
		return false;
	/* a record's fields that its kind does not use are zero (read_record) */
	e->kind = entry_kind[rec->kind];
	e->comm_id = rec->comm_id;
	e->pc.cmd = rec->cmd;
	e->error = rec->error;
	e->drain = rec->drain;
	e->player = rec->kind == JOURNAL_GRACE_OVER ? rec->target : -1;
	if (rec->kind == JOURNAL_RECONNECT) {
		e->pc.reconnect = true;
		if (rec->secret && strlen(rec->secret) == PROTO_SECRET_HEX)
			memcpy(e->pc.secret, rec->secret, PROTO_SECRET_HEX + 1);
	}
	return true;
}

bool journal_feed(struct core *c, const struct journal_record *rec, char *err, size_t errlen)
{
	if (rec->kind == JOURNAL_RESUME) {
		core_all_away(c);
		return true;
	}
	struct cmdq_entry e;
	if (!journal_record_entry(rec, &e))
		return true;
	int player = bcast_player_of(core_bcast(c), rec->comm_id);
	if (player != rec->player) {
		snprintf(err, errlen,
		         "line %zu: entry %lld: connection %d is player %d in the replay, %d in "
		         "the journal",
		         rec->line_no, (long long)rec->n, rec->comm_id, player, rec->player);
		return false;
	}
	core_feed(c, &e);
	return true;
}

bool journal_restore(const struct journal_file *jf, struct core *c, char *err, size_t errlen)
{
	for (size_t i = 0; i < jf->nrec && jf->rec[i].kind != JOURNAL_END; i++)
		if (!journal_feed(c, &jf->rec[i], err, errlen))
			return false;
	return true;
}

bool journal_replay_step(struct journal_replay *r, const struct journal_record *rec, char *err,
                         size_t errlen)
{
	if (rec->kind == JOURNAL_END)
		return true;
	if (rec->kind != JOURNAL_DIGEST) {
		if (!journal_feed(r->core, rec, err, errlen))
			return false;
		r->entries += journal_kind_is_entry(rec->kind);
		return true;
	}
	uint8_t d[SHA256_DIGEST_SIZE];
	stream_sha256(&r->stream, d);
	if (rec->lines != r->stream.lines || rec->bytes != r->stream.bytes ||
	    memcmp(d, rec->sha256, sizeof d) != 0) {
		char want[2 * SHA256_DIGEST_SIZE + 1], got[2 * SHA256_DIGEST_SIZE + 1];
		hex_encode(rec->sha256, sizeof d, want);
		hex_encode(d, sizeof d, got);
		snprintf(err, errlen,
		         "line %zu: digest mismatch after entry %lld: the server sent %lld lines "
		         "(%lld bytes, sha256 %.16s...), the replay %lld lines (%lld bytes, "
		         "sha256 %.16s...)",
		         rec->line_no, (long long)rec->n, (long long)rec->lines,
		         (long long)rec->bytes, want, (long long)r->stream.lines,
		         (long long)r->stream.bytes, got);
		return false;
	}
	r->digests++;
	return true;
}

const struct game *journal_replay_game(const struct journal_replay *r)
{
	return core_game(r->core);
}

const struct core *journal_replay_core(const struct journal_replay *r)
{
	return r->core;
}

int64_t journal_replay_entries(const struct journal_replay *r)
{
	return r->entries;
}

int64_t journal_replay_lines(const struct journal_replay *r)
{
	return r->stream.lines;
}

int journal_replay_digests(const struct journal_replay *r)
{
	return r->digests;
}

void journal_replay_free(struct journal_replay *r)
{
	if (!r)
		return;
	core_free(r->core);
	config_free(r->cfg);
	proto_buf_free(&r->line);
	stream_free(&r->stream);
	free(r);
}

/* ---- resuming ------------------------------------------------------------ */

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
	stream_move(&j->stream, &r->stream);
	journal_replay_free(r);
	j->n = j->kept = j->digest_n = jf->entries;
	j->digest_lines = j->stream.lines;
	int e = mapfile_open_at(&j->file, path, (off_t)jf->resume_bytes);
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
	if (!start_sync_thread(j, err, errlen)) {
		journal_free(j);
		return NULL;
	}
	return j;
}
