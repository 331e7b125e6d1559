/*
 * journal: what the writer, the reader and the replay share
 * (include/sopra/journal.h, src/journal_int.h, docs/journal.md).
 *
 * The digest is SHA-256 (nettle) over "PLAYER\tLINE" of every line sent, in
 * order: exactly sopra-replay's output, so `sopra-replay FILE | sha256sum`
 * gives the last digest of a complete journal. The live journal (the
 * server's line tap) and the replay (its core's sink) feed the same stream
 * with the same rule, journal_stream_deliver.
 */
#include "journal_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/base16.h>

#include "sopra/xalloc.h"

/* Lines gather in a stream's pending buffer up to this many bytes; a line
 * that would take it past them is hashed where it is, after the pending
 * ones (the same bytes in the same order: the same digest). */
#define STREAM_BATCH 2048

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
void journal_hex_encode(const uint8_t *src, size_t n, char *dst)
{
	base16_encode_update(dst, n, src);
	dst[BASE16_ENCODE_LENGTH(n)] = '\0';
}

/* Whether s[len] is exactly n bytes in hex (either case, nothing else: the
 * decoder's skipping of blanks would leave fewer than n bytes). */
bool journal_hex_decode(const char *s, size_t len, uint8_t *dst, size_t n)
{
	struct base16_decode_ctx c;
	size_t got = 0;
	if (len != BASE16_ENCODE_LENGTH(n))
		return false;
	base16_decode_init(&c);
	return base16_decode_update(&c, &got, dst, len, s) && base16_decode_final(&c) && got == n;
}

void journal_sha256_of(const char *data, size_t len, uint8_t out[SHA256_DIGEST_SIZE])
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
	journal_hex_encode(d, sizeof d, hex);
}

bool journal_kind_is_entry(enum journal_kind k)
{
	return k != JOURNAL_DIGEST && k != JOURNAL_END && k != JOURNAL_RESUME;
}

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

void journal_stream_init(struct journal_stream *d)
{
	*d = (struct journal_stream){0};
	sha256_init(&d->sha);
	proto_buf_init(&d->pending);
}

void journal_stream_free(struct journal_stream *d)
{
	proto_buf_free(&d->pending);
	free(d->closed.v);
	d->closed = (struct comm_set){0};
}

/* Moves src's stream into dst (initialised and empty); src stays valid. */
void journal_stream_move(struct journal_stream *dst, struct journal_stream *src)
{
	journal_stream_free(dst);
	*dst = *src;
	proto_buf_init(&src->pending);
	src->closed = (struct comm_set){0};
}

static void stream_hash_pending(struct journal_stream *d)
{
	if (d->pending.len)
		sha256_update(&d->sha, d->pending.len, (const uint8_t *)d->pending.data);
	proto_buf_reset(&d->pending);
}

static void journal_stream_add(struct journal_stream *d, int player, const char *line, size_t len)
{
	struct proto_buf *b = &d->pending;
	size_t pn;
	if (b->len + JOURNAL_PREFIX_MAX + len > STREAM_BATCH) {
		char pre[JOURNAL_PREFIX_MAX];
		stream_hash_pending(d);
		pn = journal_line_prefix(player, pre);
		sha256_update(&d->sha, pn, (const uint8_t *)pre);
		sha256_update(&d->sha, len, (const uint8_t *)line);
	} else {
		pn = journal_line_prefix(player, proto_buf_room(b, JOURNAL_PREFIX_MAX + len));
		b->len += pn;
		proto_buf_add(b, line, len);
	}
	d->lines++;
	d->bytes += (int64_t)(pn + len);
}

/* A line the broadcaster delivered to comm_id (player on it, -1: none),
 * the encoded event ev: into the stream, unless the connection closes
 * after its player's Left. Returns whether it went into the stream. */
bool journal_stream_deliver(struct journal_stream *d, int comm_id, int player,
                            const struct game_event *ev, const char *line, size_t len)
{
	assert(comm_id > 0 && ev && line && len > 0);
	if (d->closed.n && comm_set_has(&d->closed, comm_id))
		return false;
	journal_stream_add(d, player, line, len);
	if (ev->type == GEV_LEFT && player >= 0 && ev->arg[0] == player)
		comm_set_add(&d->closed, comm_id);
	return true;
}

/* The SHA-256 of the stream so far; the stream goes on. */
void journal_stream_sha256(struct journal_stream *d, uint8_t out[SHA256_DIGEST_SIZE])
{
	stream_hash_pending(d);
	struct sha256_ctx c = d->sha;
	sha256_digest(&c, SHA256_DIGEST_SIZE, out);
}
