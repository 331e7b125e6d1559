/*
 * jdir: a game table's journal directory (include/sopra/jdir.h): which
 * journal to resume or to start, and the rotation of the old ones.
 */
#include "sopra/jdir.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sopra/journal.h"
#include "sopra/log.h"
#include "sopra/xalloc.h"

#define JDIR_PREFIX  "game-"
#define JDIR_SUFFIX  ".jnl"
#define JDIR_DIGITS  6  /* zero-padded to at least this many digits: names sort */
#define JDIR_MAX_LEN 18 /* digits of a number: fits an int64_t */

#define jdir_log(log, ...) sopra_log((log), "journal-dir: ", __VA_ARGS__)

/* The journal numbers found in a directory, ascending. */
struct jdir_list {
	int64_t *v;
	size_t n, cap;
};

/* NUMBER of a name "game-NUMBER.jnl" (digits only), or -1 for any other
 * name. */
static int64_t jdir_number(const char *name)
{
	size_t plen = strlen(JDIR_PREFIX), slen = strlen(JDIR_SUFFIX), len = strlen(name);
	if (len <= plen + slen || strncmp(name, JDIR_PREFIX, plen) != 0 ||
	    strcmp(name + len - slen, JDIR_SUFFIX) != 0)
		return -1;
	size_t digits = len - plen - slen;
	if (digits > JDIR_MAX_LEN)
		return -1;
	int64_t n = 0;
	for (size_t i = plen; i < plen + digits; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -1;
		n = n * 10 + (name[i] - '0');
	}
	return n;
}

static int cmp_number(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* DIR/game-NUMBER.jnl into buf; false if it does not fit. */
static bool jdir_path(const char *dir, int64_t number, char *buf, size_t len)
{
	size_t dlen = strlen(dir);
	const char *sep = dlen > 0 && dir[dlen - 1] == '/' ? "" : "/";
	int n = snprintf(buf, len, "%s%s" JDIR_PREFIX "%0*" PRId64 JDIR_SUFFIX, dir, sep,
	                 JDIR_DIGITS, number);
	return n > 0 && (size_t)n < len;
}

/* Make sure dir is a directory: create it (0700) if it is missing. */
static bool jdir_ensure(const char *dir, FILE *log, char *err, size_t errlen)
{
	struct stat st;
	if (stat(dir, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return true;
		snprintf(err, errlen, "journal directory %s: not a directory", dir);
		return false;
	}
	if (errno != ENOENT || mkdir(dir, 0700) != 0) {
		snprintf(err, errlen, "journal directory %s: %s", dir, strerror(errno));
		return false;
	}
	jdir_log(log, "created %s", dir);
	return true;
}

/* The journal numbers in dir, sorted. */
static bool jdir_scan(const char *dir, struct jdir_list *list, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "journal directory %s: %s", dir, strerror(errno));
		return false;
	}
	const struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		int64_t n = jdir_number(e->d_name);
		if (n < 0)
			continue;
		list->v = xgrow(list->v, &list->cap, list->n + 1, sizeof *list->v, 16);
		list->v[list->n++] = n;
	}
	closedir(d);
	if (list->n > 1)
		qsort(list->v, list->n, sizeof *list->v, cmp_number);
	return true;
}

/* Whether the journal at path holds a game to resume; if not, why not
 * (for the log). */
static bool jdir_resumable(const char *path, char *why, size_t whylen)
{
	struct journal_file jf;
	char err[512];
	if (!journal_load(path, &jf, err, sizeof err)) {
		snprintf(why, whylen, "it does not load (%s)", err);
		return false;
	}
	bool ok = false;
	if (jf.ended)
		snprintf(why, whylen, "its game was closed (%s)",
		         jf.rec[jf.nrec - 1].reason ? jf.rec[jf.nrec - 1].reason : "end");
	else if (!jf.sessions)
		snprintf(why, whylen,
		         "it was written without sessions (--reconnect-grace): its players "
		         "cannot come back");
	else if (jf.entries == 0)
		snprintf(why, whylen, "it holds no entry: nobody had done anything yet");
	else
		ok = true;
	journal_file_free(&jf);
	return ok;
}

/* Delete the oldest of the first n journals (numbers, ascending) until at
 * most keep of them are left. Returns how many were deleted. */
static int jdir_rotate(const char *dir, const int64_t *numbers, size_t n, int keep, FILE *log)
{
	int removed = 0;
	char path[JDIR_PATH_MAX];
	for (size_t i = 0; i + (size_t)keep < n; i++) {
		if (!jdir_path(dir, numbers[i], path, sizeof path))
			continue;
		if (unlink(path) == 0) {
			removed++;
			jdir_log(log, "removed %s (--journal-keep %d)", path, keep);
		} else if (errno != ENOENT) {
			jdir_log(log, "cannot remove %s: %s", path, strerror(errno));
		}
	}
	return removed;
}

bool jdir_choose(const char *dir, int keep, FILE *log, struct jdir_choice *out, char *err,
                 size_t errlen)
{
	assert(dir && out && err);
	assert(keep >= 0 && keep <= JDIR_MAX_KEEP);
	*out = (struct jdir_choice){.action = JDIR_NEW};
	if (!jdir_ensure(dir, log, err, errlen))
		return false;
	struct jdir_list list = {0};
	if (!jdir_scan(dir, &list, err, errlen))
		return false;
	int64_t newest = list.n ? list.v[list.n - 1] : 0;
	bool ok = true;
	char why[600];
	if (list.n && !jdir_path(dir, newest, out->path, sizeof out->path)) {
		ok = false;
	} else if (list.n && jdir_resumable(out->path, why, sizeof why)) {
		out->action = JDIR_RESUME;
		out->number = newest;
		jdir_log(log, "resuming %s: its game was not closed (a crash or a kill)",
		         out->path);
	} else {
		if (list.n)
			jdir_log(log, "not resuming %s: %s", out->path, why);
		out->number = newest + 1;
		ok = jdir_path(dir, out->number, out->path, sizeof out->path);
		if (ok)
			jdir_log(log, "a new game, journaled in %s", out->path);
	}
	if (!ok)
		snprintf(err, errlen, "journal directory %s: the path is too long", dir);
	else if (list.n > 0) /* the resumed journal is the current game's, not an old one */
		out->removed =
		        jdir_rotate(dir, list.v, list.n - (out->action == JDIR_RESUME), keep, log);
	free(list.v);
	return ok;
}
