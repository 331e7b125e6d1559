/*
 * journal_int.h: what the parts of the journal module share. Private to
 * src/journal*.c; the module's interface is include/sopra/journal.h.
 *
 *   journal.c         what the others share: the sync policies' names, hex
 *                     and SHA-256, the session secrets, and the event
 *                     stream's digest (what the server sent, as the digest
 *                     lines cover it)
 *   journal_write.c   the writer: the file, its lines, the dispatcher's
 *                     hooks and the line tap, the sync thread; reopening a
 *                     journal for a resume
 *   journal_read.c    the reader: a file into a struct journal_file
 *   journal_replay.c  a journal's records fed into a core: the offline
 *                     replay (digests checked) and a resume's restore
 */
#ifndef SOPRA_JOURNAL_INT_H
#define SOPRA_JOURNAL_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nettle/sha2.h>

#include "sopra/game_event.h"
#include "sopra/journal.h"
#include "sopra/proto.h"

/* A set of connections (a few: see journal_stream_deliver). */
struct comm_set {
	int *v;
	size_t n, cap;
};

/* The event stream so far: SHA-256 over "PLAYER\tLINE" of every line sent
 * (journal_line_prefix), and how many lines and bytes went into it.
 *
 * Lines gather in `pending` and are hashed together when a digest is taken
 * or a batch has gathered. On a command's path a line then costs a copy
 * into a warm buffer, not a run of the hash, whose code and state a round
 * trip on a shared core finds cold. The digests are the same. */
struct journal_stream {
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

/* How the journal starts its sync thread (pthread_create; a test puts a
 * failing one here to exercise the fallback on the loop's thread). */
extern int (*journal_thread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

void journal_stream_init(struct journal_stream *d);
void journal_stream_free(struct journal_stream *d);
/* Moves src's stream into dst (initialised); src stays valid and empty. */
void journal_stream_move(struct journal_stream *dst, struct journal_stream *src);
/* A line the broadcaster delivered to comm_id (player on it, -1: none),
 * the encoded event ev: into the stream, unless the connection closes
 * after its player's Left. Returns whether it went into the stream. */
bool journal_stream_deliver(struct journal_stream *d, int comm_id, int player,
                            const struct game_event *ev, const char *line, size_t len);
/* The SHA-256 of the stream so far; the stream goes on. */
void journal_stream_sha256(struct journal_stream *d, uint8_t out[SHA256_DIGEST_SIZE]);

/* dst[2n + 1]: the n bytes of src in lower-case hex, NUL-terminated. */
void journal_hex_encode(const uint8_t *src, size_t n, char *dst);
/* Whether s[len] is exactly n bytes in hex (into dst). */
bool journal_hex_decode(const char *s, size_t len, uint8_t *dst, size_t n);
void journal_sha256_of(const char *data, size_t len, uint8_t out[SHA256_DIGEST_SIZE]);

/* The header's last member (version 3 on): "headerSha256", the SHA-256
 * (hex) of the header line's bytes before its ",". */
#define JOURNAL_HEADER_HASH_KEY "headerSha256"

/* Hand the replay's event stream over to dst (journal_reopen continues it). */
void journal_replay_take_stream(struct journal_replay *r, struct journal_stream *dst);

#endif
