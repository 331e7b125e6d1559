/*
 * journal_replay: a journal's records fed into a core (include/sopra/
 * journal.h, docs/journal.md): the offline replay, whose own core reports
 * every line the server sent and checks each digest, and a resume's
 * restore into the new server's core. Both feed the records the same way
 * (journal_feed): an entry through the dispatcher, a resume record as the
 * session layer's resume step.
 */
#include "journal_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sopra/cmdq.h"
#include "sopra/config.h"
#include "sopra/core.h"
#include "sopra/xalloc.h"

struct journal_replay {
	const struct journal_file *jf;
	struct config *cfg;    /* owned: parsed from the journal's text */
	struct core *core;     /* owned: the game as the server ran it */
	struct proto_buf line; /* the event being routed, encoded once */
	journal_line_fn on_line;
	void *ctx;
	struct journal_stream stream;
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
	if (journal_stream_deliver(&r->stream, comm_id, player, ev, r->line.data, r->line.len) &&
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
	journal_stream_init(&r->stream);
	proto_buf_init(&r->line);
	struct core_params cp = {.cfg = cfg,
	                         .seed = jf->seed,
	                         .rules = jf->rules,
	                         .failure_budget = jf->failure_budget};
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
	int player = core_player_of(c, rec->comm_id);
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
	journal_stream_sha256(&r->stream, d);
	if (rec->lines != r->stream.lines || rec->bytes != r->stream.bytes ||
	    memcmp(d, rec->sha256, sizeof d) != 0) {
		char want[2 * SHA256_DIGEST_SIZE + 1], got[2 * SHA256_DIGEST_SIZE + 1];
		journal_hex_encode(rec->sha256, sizeof d, want);
		journal_hex_encode(d, sizeof d, got);
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
	journal_stream_free(&r->stream);
	free(r);
}

void journal_replay_take_stream(struct journal_replay *r, struct journal_stream *dst)
{
	journal_stream_move(dst, &r->stream);
}
