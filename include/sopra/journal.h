/*
 * journal: an append-only record of one game (docs/journal.md), and its
 * replay.
 *
 * The game is deterministic: the configuration, the seed, the rule edition
 * and the sequence of dispatched queue entries fix every event. So the
 * journal stores exactly those -- a header, then one NDJSON line per queue
 * entry as the dispatcher took it (the command as decoded, a bad line's
 * message, a timeout, a lost connection) -- and no events. Digest lines
 * (SHA-256 of the event stream so far) let a replay prove that it produced
 * the same bytes the server sent.
 *
 * Writing (the server, --journal FILE): journal_open creates the file and
 * writes the header; server_set_taps(srv, &hooks, journal_on_line, j) with
 * hooks = journal_hooks(j, game) then writes every recorded entry BEFORE any
 * of its events is routed (write-ahead: the entry is in the kernel, and with
 * --journal-sync always on disk, before any of its events can go out) and
 * digests every line sent. The durability policy (enum journal_sync)
 * decides when fdatasync runs. A journal that cannot be written stops the
 * game where it is: the failure is logged loudly, the file is cut back to
 * its last whole line, the entry that could not be written has no effect
 * that anyone sees, and the server stops so that --resume continues it
 * (docs/journal.md, "When the journal cannot be written").
 *
 * Reading: journal_load parses a file into a struct journal_file (dropping
 * a torn or corrupt last line, which a crash can leave); a journal_replay
 * re-runs the game over its records through a core of its own (core.h:
 * the same dispatcher, broadcaster and session layer as the server's) and
 * reports every line the server sent, checking each digest on the way.
 * sopra-replay is built on these. A resume feeds the records into the new
 * server's core (journal_restore) and continues the file (journal_reopen).
 */
#ifndef SOPRA_JOURNAL_H
#define SOPRA_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sopra/config.h"
#include "sopra/core.h"
#include "sopra/game.h"

#define JOURNAL_FORMAT        "sopra-journal" /* the header's "journal" value */
#define JOURNAL_VERSION       3               /* the header's "version" this build writes */
#define JOURNAL_VERSION_2     2  /* read: sessions, no failure budget, no header hash */
#define JOURNAL_VERSION_PLAIN 1  /* read: no sessions either */
#define JOURNAL_KEY_BYTES     32 /* the session key */

/* When the journal is forced to disk (fdatasync). Every entry is in the
 * page cache (copied into the file's mapping, src/mapfile.c) before its
 * events go out under every policy. */
enum journal_sync {
	JOURNAL_SYNC_ALWAYS, /* before each entry's events go out: nothing is ever lost */
	JOURNAL_SYNC_TURN,   /* when a player's turn ends, in the background; at game end */
	JOURNAL_SYNC_NEVER,  /* never: the kernel writes back when it likes */
};

/* Parse "always" / "turn" / "never"; false for anything else. */
bool journal_sync_parse(const char *s, enum journal_sync *out);
const char *journal_sync_name(enum journal_sync s);

/* ---- writing ----------------------------------------------------------- */

struct journal_params {
	const char *path;         /* the journal file; must not exist yet */
	enum journal_sync sync;   /* durability policy */
	const struct config *cfg; /* its verbatim text goes into the header */
	const char *config_path;  /* as given on the command line (informative) */
	int64_t seed;
	enum game_rules rules;
	int timeout_sec;
	const uint8_t *session_key; /* JOURNAL_KEY_BYTES, or NULL: no sessions */
	int grace_sec;              /* --reconnect-grace (sessions only) */
	int failure_budget;         /* the core's (core_params.failure_budget) */
};

struct journal;

/* A session_secret_fn: ctx is the JOURNAL_KEY_BYTES session key; the
 * secret is the hex SHA-256 of the key followed by the player id (4 bytes,
 * big endian). */
void journal_session_secret(void *ctx, int player, char *hex);

/*
 * Create p->path (O_EXCL: an existing journal is never overwritten), write
 * the header and, unless the policy is never, sync it and its directory.
 * log (NULL: stderr) gets the loud messages. Returns NULL on failure with a
 * one-line reason in err (the server then refuses to start).
 */
struct journal *journal_open(const struct journal_params *p, FILE *log, char *err, size_t errlen);

/* The dispatcher hooks that write each recorded entry of game g (record:
 * after it was applied, before any of its events is routed; false when it
 * cannot be written) and digests and syncs at turn ends (after). ctx is
 * j; g is borrowed (read only: whose turn it is, whether the game is over)
 * and must outlive j. */
struct dispatch_hooks journal_hooks(struct journal *j, const struct game *g);

/* A server_line_tap: digests one line sent (ctx is the journal). A line to
 * a connection after its player's Left is not sent (the server closes it)
 * and so not digested; nor is a line of an entry that is not recorded
 * (dispatch.h, "What is recorded"). */
void journal_on_line(void *ctx, int comm_id, int player, const struct game_event *ev,
                     const char *line, size_t len);

/* Whether writing failed (journaling stopped; the dispatcher halts at the
 * next recorded entry). */
bool journal_failed(const struct journal *j);

/* Write a last digest and the end record ({"end":reason,...}), sync (unless
 * the policy is never), stop the sync thread, close and free. reason: e.g.
 * "game over", "stopped". NULL is fine. Returns false if the journal is
 * incomplete (writing failed at some point; already logged). */
bool journal_close(struct journal *j, const char *reason);

/* The server did not start after all (e.g. the port is in use): close and
 * remove the file, which holds nothing but the header. NULL is fine. */
void journal_discard(struct journal *j);

/* ---- resuming ---------------------------------------------------------- */

/* One writer per journal: a server holds an exclusive lock on its journal
 * file for its whole life (mapfile.h). What a second one is told. */
#define JOURNAL_IN_USE "the journal is in use: another sopra-server holds its lock"

/* Whether a running server holds path's lock (checked before a resume
 * starts; journal_reopen takes the lock itself and fails with
 * JOURNAL_IN_USE, changing nothing, when it cannot). */
bool journal_in_use(const char *path);

struct journal_file;

/*
 * Reopen the journal jf was loaded from (path) for appending: cut it back
 * to jf->resume_bytes (a torn last line and an end record go), rebuild the
 * digest state by replaying jf (checking its digests), continue the entry
 * numbering and write a resume record. NULL with err on failure. Its hooks
 * then watch the resumed game (journal_hooks).
 */
struct journal *journal_reopen(const char *path, const struct journal_file *jf,
                               enum journal_sync sync, FILE *log, char *err, size_t errlen);

/* ---- reading ----------------------------------------------------------- */

enum journal_kind {
	JOURNAL_COMMAND, /* a decoded command: cmd */
	JOURNAL_BAD,     /* a line that did not decode: error */
	JOURNAL_TIMEOUT, /* the --timeout expired */
	JOURNAL_LOST,    /* a connection was lost (drain: closed after flushing) */
	JOURNAL_DIGEST,  /* the event stream after entry n: lines, bytes, sha256 */
	JOURNAL_END,     /* the server closed the journal: reason */
	/* version 2 (sessions): */
	JOURNAL_RECONNECT,  /* a Reconnect: secret */
	JOURNAL_GRACE_OVER, /* target's reconnect grace expired */
	JOURNAL_RESUME,     /* the server was resumed here: every player is away */
};

/* Whether records of this kind are queue entries (numbered n = 1, 2, ...). */
bool journal_kind_is_entry(enum journal_kind k);

/* One line of a journal after the header. Owns its strings. */
struct journal_record {
	enum journal_kind kind;
	int64_t n;  /* entries: the entry's number (1, 2, ...); digest/end: entries so far */
	int64_t ms; /* entries, end: milliseconds since the journal was opened */
	int comm_id;
	int player;     /* as resolved when the entry was taken; -1: none */
	struct cmd cmd; /* JOURNAL_COMMAND; cmd.name points into name */
	char *name;     /* owned: the registration's playerName */
	char *error;    /* owned: JOURNAL_BAD's message (NUL-terminated) */
	bool drain;     /* JOURNAL_LOST */
	int64_t lines;  /* JOURNAL_DIGEST: lines sent so far */
	int64_t bytes;  /* JOURNAL_DIGEST: bytes digested so far */
	uint8_t sha256[32];
	char *reason;   /* owned: JOURNAL_END */
	char *secret;   /* owned: JOURNAL_RECONNECT */
	int target;     /* JOURNAL_GRACE_OVER: the player */
	size_t line_no; /* 1-based line in the file */
};

/* A journal read into memory. */
struct journal_file {
	int version;
	char *server; /* the writing server's version */
	enum game_rules rules;
	int64_t seed;
	int timeout_sec;
	enum journal_sync sync;
	char *config_path; /* as the server was given it */
	char *config_text; /* owned, NUL-terminated, config_len bytes */
	size_t config_len;
	uint8_t config_sha256[32]; /* checked against config_text by journal_load */
	char *start;               /* ISO 8601 UTC start time */
	int64_t start_unix_ms;
	struct journal_record *rec; /* records in file order */
	size_t nrec;
	int64_t entries;     /* number of entry records */
	int max_comm;        /* the highest connection an entry names */
	size_t valid_bytes;  /* length of the whole, good lines */
	size_t resume_bytes; /* valid_bytes without a last end record (a resume cuts here) */
	bool sessions;       /* a session key (version 2, or 3 with one) */
	uint8_t session_key[JOURNAL_KEY_BYTES];
	int grace_sec;
	int failure_budget; /* version 3; 0 before: every entry was recorded */
	bool torn;          /* a torn or corrupt last line was dropped */
	char torn_why[160];
	bool ended; /* the last record is JOURNAL_END */
};

/*
 * Read and check the journal at path: the header (format, version, a
 * config whose SHA-256 matches), then every line up to the first NUL byte
 * (the zero tail a killed writer leaves; any bytes after it that are not
 * zero are dropped and said in jf->torn_why). A last line without its
 * "\n" or that does not parse is dropped (jf->torn, jf->torn_why); any
 * other bad line, an entry number out of sequence or a config hash
 * mismatch is an error. Returns false with a reason ("FILE:LINE: ...") in
 * err; jf is then empty.
 */
bool journal_load(const char *path, struct journal_file *jf, char *err, size_t errlen);
/* The same for bytes in memory (name is used in messages). */
bool journal_parse(const char *data, size_t len, const char *name, struct journal_file *jf,
                   char *err, size_t errlen);
void journal_file_free(struct journal_file *jf);

/* ---- replay ------------------------------------------------------------ */

struct cmdq_entry;
/* The queue entry an entry record stands for (borrowing rec's strings);
 * false for a record that is no entry. */
bool journal_record_entry(const struct journal_record *rec, struct cmdq_entry *e);

/* Apply one record to core c as the server did: an entry is dispatched
 * (core_feed), a resume record puts every player away (core_all_away);
 * digests and the end record do nothing here. False with err when the
 * entry's connection is not the player the journal names (a journal of
 * another game, or another build). */
bool journal_feed(struct core *c, const struct journal_record *rec, char *err, size_t errlen);

/* journal_feed every record of jf up to an end record into c, a new core
 * of jf's game (configuration, seed, rules and sessions): the state the
 * server had when it stopped. What c delivers goes to its sink (a resumed
 * server has no connections yet). False with err as journal_feed. */
bool journal_restore(const struct journal_file *jf, struct core *c, char *err, size_t errlen);

/* Called with every line the server sent, in order: the connection, its
 * player at send time (-1: unregistered) and the line with its "\n". */
typedef void (*journal_line_fn)(void *ctx, int comm_id, int player, const char *line, size_t len);

struct journal_replay;

/* A fresh game from jf's header (its config parsed from the stored text).
 * jf is borrowed and must outlive the replay. NULL with err on failure. */
struct journal_replay *journal_replay_new(const struct journal_file *jf, journal_line_fn on_line,
                                          void *ctx, char *err, size_t errlen);
/* Apply one record: an entry is dispatched (its lines reported), a digest
 * is compared with the lines so far. Returns false with err on a mismatch
 * (a digest, or the player an entry names). */
bool journal_replay_step(struct journal_replay *r, const struct journal_record *rec, char *err,
                         size_t errlen);
/* The replayed game and its core (read them; do not dispatch). */
const struct game *journal_replay_game(const struct journal_replay *r);
const struct core *journal_replay_core(const struct journal_replay *r);
/* Entries applied, and lines/bytes reported so far. */
int64_t journal_replay_entries(const struct journal_replay *r);
int64_t journal_replay_lines(const struct journal_replay *r);
/* Number of digests checked so far. */
int journal_replay_digests(const struct journal_replay *r);
void journal_replay_free(struct journal_replay *r);

/* The digest's input for one line sent, exactly as sopra-replay prints it:
 * "PLAYER\tLINE" (PLAYER "-" for -1). Writes the prefix, NUL-terminated,
 * into buf and returns its length. */
#define JOURNAL_PREFIX_MAX 24
size_t journal_line_prefix(int player, char buf[JOURNAL_PREFIX_MAX]);

#endif
