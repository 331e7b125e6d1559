/*
 * fuzz_journal: a journal file (arbitrary bytes) read and replayed, as
 * sopra-replay and sopra-server --resume do (docs/journal.md).
 *
 * journal_parse: on failure a non-empty message naming the input, and
 * nothing kept (LeakSanitizer); on success the lengths are consistent
 * (resume_bytes <= valid_bytes <= the bytes before the first NUL), the
 * records are in file order, the entries counted, an end record only last.
 * Then the replay: journal_replay_new either refuses with a message or
 * gives a game; each record is stepped through the real dispatcher and
 * broadcaster until one is refused (with a message); after every step
 * game_check_invariants() holds and every line reported is one line
 * ending in "\n". At the end the state summary of `sopra-replay --at` is
 * written (to /dev/null).
 */
#include "fuzz_common.h"

#include <stdio.h>
#include <string.h>

#include "sopra/journal.h"

struct lines {
	long n;
};

static void on_line(void *ctx, int comm_id, int player, const char *line, size_t len)
{
	struct lines *l = ctx;
	FUZZ_CHECK(comm_id > 0, "a line for connection %d", comm_id);
	FUZZ_CHECK(player >= -1, "a line for player %d", player);
	FUZZ_CHECK(len > 0 && line[len - 1] == '\n' && memchr(line, '\n', len) == line + len - 1,
	           "not one line: %s", fuzz_printable(line, len));
	l->n++;
}

static void check_file(const struct journal_file *jf, const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t content = nul ? (size_t)(nul - data) : size;
	FUZZ_CHECK(jf->resume_bytes <= jf->valid_bytes && jf->valid_bytes <= content,
	           "resume %zu, valid %zu, content %zu", jf->resume_bytes, jf->valid_bytes,
	           content);
	FUZZ_CHECK(jf->valid_bytes > 0 && data[jf->valid_bytes - 1] == '\n',
	           "valid_bytes %zu does not end a line", jf->valid_bytes);
	FUZZ_CHECK(jf->config_text != NULL, "no configuration text");
	int64_t entries = 0;
	size_t prev_line = 1; /* the header */
	for (size_t i = 0; i < jf->nrec; i++) {
		const struct journal_record *r = &jf->rec[i];
		FUZZ_CHECK(r->line_no > prev_line, "record %zu on line %zu after line %zu", i,
		           r->line_no, prev_line);
		prev_line = r->line_no;
		if (journal_kind_is_entry(r->kind))
			entries++;
		FUZZ_CHECK(r->kind != JOURNAL_END || i + 1 == jf->nrec, "an end record at %zu of %zu",
		           i, jf->nrec);
	}
	FUZZ_CHECK(entries == jf->entries, "%lld entries counted, %lld said", (long long)entries,
	           (long long)jf->entries);
	FUZZ_CHECK(jf->ended == (jf->nrec > 0 && jf->rec[jf->nrec - 1].kind == JOURNAL_END),
	           "ended %d", jf->ended);
}

static void replay(const struct journal_file *jf)
{
	char err[512] = "";
	struct lines lines = {0};
	struct journal_replay *r = journal_replay_new(jf, on_line, &lines, err, sizeof err);
	if (!r) {
		FUZZ_CHECK(err[0] != '\0', "replay refused without a message");
		return;
	}
	for (size_t i = 0; i < jf->nrec; i++) {
		err[0] = '\0';
		bool ok = journal_replay_step(r, &jf->rec[i], err, sizeof err);
		const char *bad = game_check_invariants(journal_replay_game(r));
		FUZZ_CHECK(bad == NULL, "after record %zu: %s", i, bad);
		if (!ok) {
			FUZZ_CHECK(err[0] != '\0', "record %zu refused without a message", i);
			break;
		}
	}
	FUZZ_CHECK(journal_replay_lines(r) == lines.n, "%lld lines counted, %ld reported",
	           (long long)journal_replay_lines(r), lines.n);
	static FILE *devnull;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (devnull)
		game_describe(journal_replay_game(r), devnull);
	journal_replay_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct journal_file jf;
	char err[512] = "";
	if (!journal_parse((const char *)data, size, "fuzz", &jf, err, sizeof err)) {
		FUZZ_CHECK(strncmp(err, "fuzz", 4) == 0, "message without the name: %s", err);
		return 0;
	}
	check_file(&jf, data, size);
	replay(&jf);
	journal_file_free(&jf);
	return 0;
}
