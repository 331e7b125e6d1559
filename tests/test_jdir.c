/*
 * Unit tests for the journal directory (src/jdir.c, include/sopra/jdir.h):
 * which journal jdir_choose resumes and which it leaves for a new game, the
 * numbering of new journals, the rotation (--journal-keep), files it must
 * not touch, and a directory it cannot use. The journals are real ones,
 * written through journal_open and a core's dispatcher; a crashed server's
 * journal is one whose end record was cut off again, as a kill leaves it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sopra/cmdq.h"
#include "sopra/config.h"
#include "sopra/core.h"
#include "sopra/game.h"
#include "sopra/jdir.h"
#include "sopra/journal.h"

/* How a test journal ends. */
enum ending {
	CLOSED,      /* an end record ("game over") */
	STOPPED,     /* an end record ("stopped": SIGTERM) */
	CRASHED,     /* no end record: the server was killed */
	NO_SESSIONS, /* killed, but written without --reconnect-grace */
	NO_ENTRY,    /* killed before any entry */
};

static char dir[256];

static void sink_send(void *ctx, int comm_id, int player, const struct game_event *ev)
{
	(void)ctx;
	(void)comm_id;
	(void)player;
	(void)ev;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *buf = malloc(1 << 20);
	assert_non_null(buf);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

static void write_all(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void name_of(int64_t number, char *path, size_t len)
{
	snprintf(path, len, "%s/game-%06lld.jnl", dir, (long long)number);
}

/* Write the journal game-NUMBER.jnl into dir, ending as `how`. */
static void make_journal(int64_t number, enum ending how)
{
	char path[512];
	name_of(number, path, sizeof path);
	struct config_errors errs = {0};
	struct config *cfg = config_load(SOPRA_SOURCE_DIR "/resources/example.json", &errs);
	assert_non_null(cfg);
	struct core_params cp = {.cfg = cfg, .seed = 7, .rules = RULES_BASE};
	struct core *core = core_new(&cp, (struct bcast_sink){.send = sink_send});
	uint8_t key[JOURNAL_KEY_BYTES] = {1, 2, 3};
	struct journal_params p = {.path = path,
	                           .sync = JOURNAL_SYNC_NEVER,
	                           .cfg = cfg,
	                           .config_path = "example.json",
	                           .seed = 7,
	                           .rules = RULES_BASE,
	                           .timeout_sec = 30,
	                           .session_key = how == NO_SESSIONS ? NULL : key,
	                           .grace_sec = 0};
	char err[256];
	struct journal *j = journal_open(&p, NULL, err, sizeof err);
	if (!j)
		fail_msg("journal_open: %s", err);
	struct dispatch_hooks hooks = journal_hooks(j, core_game(core));
	core_set_hooks(core, &hooks);
	if (how != NO_ENTRY) {
		const char *reg = "{\"command\":\"Register\",\"playerName\":\"Anna\"}";
		cmdq_push_line(core_queue(core), 1, reg, strlen(reg));
		core_drain(core);
	}
	/* what a kill leaves: the content so far, without an end record */
	size_t len;
	char *text = read_all(path, &len);
	char *nul = memchr(text, '\0', len);
	if (nul)
		len = (size_t)(nul - text);
	journal_close(j, how == STOPPED ? "stopped" : "game over");
	if (how == CRASHED || how == NO_SESSIONS || how == NO_ENTRY)
		write_all(path, text, len);
	free(text);
	core_free(core);
	config_free(cfg);
}

static void make_file(const char *name, const char *content)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	write_all(path, content, strlen(content));
}

static bool exists_in_dir(const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static bool journal_exists(int64_t number)
{
	char name[64];
	snprintf(name, sizeof name, "game-%06lld.jnl", (long long)number);
	return exists_in_dir(name);
}

static int setup(void **state)
{
	(void)state;
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/test_jdir_XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* jdir_choose on dir with keep; must succeed. */
static struct jdir_choice choose(int keep)
{
	struct jdir_choice c;
	char err[256];
	if (!jdir_choose(dir, keep, NULL, &c, err, sizeof err))
		fail_msg("jdir_choose: %s", err);
	return c;
}

static void expect(const struct jdir_choice *c, enum jdir_action action, int64_t number)
{
	char path[512];
	name_of(number, path, sizeof path);
	assert_int_equal(c->action, action);
	assert_int_equal(c->number, number);
	assert_string_equal(c->path, path);
}

static void test_empty_dir_starts_game_one(void **state)
{
	(void)state;
	struct jdir_choice c = choose(JDIR_DEFAULT_KEEP);
	expect(&c, JDIR_NEW, 1);
	assert_int_equal(c.removed, 0);
	assert_false(journal_exists(1)); /* the server creates it */
}

static void test_missing_dir_is_created_private(void **state)
{
	(void)state;
	strcat(dir, "/tables");
	struct jdir_choice c = choose(3);
	expect(&c, JDIR_NEW, 1);
	struct stat st;
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	dir[strlen(dir) - strlen("/tables")] = '\0';
}

static void test_unusable_dir_is_an_error(void **state)
{
	(void)state;
	make_file("plain", "x");
	char path[512], err[256] = "";
	struct jdir_choice c;
	snprintf(path, sizeof path, "%s/plain", dir);
	assert_false(jdir_choose(path, 1, NULL, &c, err, sizeof err));
	assert_non_null(strstr(err, "not a directory"));
	snprintf(path, sizeof path, "%s/no/such/parent", dir);
	assert_false(jdir_choose(path, 1, NULL, &c, err, sizeof err));
	assert_non_null(strstr(err, "No such file or directory"));
}

static void test_crashed_game_is_resumed(void **state)
{
	(void)state;
	make_journal(1, CLOSED);
	make_journal(2, CRASHED);
	struct jdir_choice c = choose(JDIR_DEFAULT_KEEP);
	expect(&c, JDIR_RESUME, 2);
	assert_true(journal_exists(1) && journal_exists(2));
	/* the same again: nothing changed (a second crash before any entry) */
	c = choose(JDIR_DEFAULT_KEEP);
	expect(&c, JDIR_RESUME, 2);
}

static void test_closed_games_give_a_new_one(void **state)
{
	(void)state;
	make_journal(4, CLOSED);
	struct jdir_choice c = choose(JDIR_DEFAULT_KEEP);
	expect(&c, JDIR_NEW, 5);
	make_journal(5, STOPPED);
	c = choose(JDIR_DEFAULT_KEEP);
	expect(&c, JDIR_NEW, 6);
	assert_int_equal(c.removed, 0);
	assert_true(journal_exists(4) && journal_exists(5));
}

static void test_only_the_newest_counts(void **state)
{
	(void)state;
	make_journal(1, CRASHED); /* an older unfinished game is history */
	make_journal(2, CLOSED);
	struct jdir_choice c = choose(JDIR_DEFAULT_KEEP);
	expect(&c, JDIR_NEW, 3);
}

static void test_unresumable_journals_give_a_new_game(void **state)
{
	(void)state;
	make_journal(1, NO_SESSIONS);
	struct jdir_choice c = choose(JDIR_DEFAULT_KEEP);
	expect(&c, JDIR_NEW, 2);
	make_journal(2, NO_ENTRY);
	c = choose(JDIR_DEFAULT_KEEP);
	expect(&c, JDIR_NEW, 3);
	make_file("game-000003.jnl", "not a journal\n");
	c = choose(JDIR_DEFAULT_KEEP);
	expect(&c, JDIR_NEW, 4);
	make_file("game-000004.jnl", ""); /* killed before its header */
	c = choose(JDIR_DEFAULT_KEEP);
	expect(&c, JDIR_NEW, 5);
	/* all kept for a look */
	for (int n = 1; n <= 4; n++)
		assert_true(journal_exists(n));
}

static void test_rotation_keeps_the_newest(void **state)
{
	(void)state;
	for (int n = 1; n <= 5; n++)
		make_journal(n, CLOSED);
	struct jdir_choice c = choose(2);
	expect(&c, JDIR_NEW, 6);
	assert_int_equal(c.removed, 3);
	assert_false(journal_exists(1) || journal_exists(2) || journal_exists(3));
	assert_true(journal_exists(4) && journal_exists(5));
	/* keep 0: no old journal stays */
	c = choose(0);
	expect(&c, JDIR_NEW, 6);
	assert_int_equal(c.removed, 2);
	assert_false(journal_exists(4) || journal_exists(5));
}

static void test_rotation_spares_the_resumed_game(void **state)
{
	(void)state;
	make_journal(1, CLOSED);
	make_journal(2, CLOSED);
	make_journal(3, CRASHED);
	struct jdir_choice c = choose(1);
	expect(&c, JDIR_RESUME, 3);
	assert_int_equal(c.removed, 1);
	assert_false(journal_exists(1));
	assert_true(journal_exists(2) && journal_exists(3));
	c = choose(0);
	expect(&c, JDIR_RESUME, 3);
	assert_false(journal_exists(2));
	assert_true(journal_exists(3));
}

static void test_other_files_are_left_alone(void **state)
{
	(void)state;
	const char *others[] = {"notes.txt",         "game-.jnl",
	                        "game-12a.jnl",      "game-7.jnl.gz",
	                        "game-0000001.jnl~", "xgame-000009.jnl",
	                        "game--1.jnl",       "game-1234567890123456789.jnl"};
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
		make_file(others[i], "keep me\n");
	make_journal(7, CLOSED);
	struct jdir_choice c = choose(0);
	expect(&c, JDIR_NEW, 8); /* 7 is the newest journal; the others are no journals */
	assert_false(journal_exists(7));
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
		assert_true(exists_in_dir(others[i]));
}

static void test_numbers_grow_past_the_padding(void **state)
{
	(void)state;
	make_journal(999999, CLOSED);
	struct jdir_choice c = choose(5);
	assert_int_equal(c.action, JDIR_NEW);
	assert_int_equal(c.number, 1000000);
	char path[512];
	snprintf(path, sizeof path, "%s/game-1000000.jnl", dir);
	assert_string_equal(c.path, path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_empty_dir_starts_game_one, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_missing_dir_is_created_private, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_unusable_dir_is_an_error, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_crashed_game_is_resumed, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_closed_games_give_a_new_one, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_only_the_newest_counts, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_unresumable_journals_give_a_new_game, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_rotation_keeps_the_newest, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_rotation_spares_the_resumed_game, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_other_files_are_left_alone, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_numbers_grow_past_the_padding, setup,
	                                        teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
