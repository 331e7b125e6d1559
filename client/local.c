/*
 * local: a sopra-server of the client's own (local.h).
 */
#include "local.h"

#include "toolutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOCAL_START_WAIT_MS 15000 /* a loaded machine: generous */
#define LOCAL_STOP_WAIT_MS  5000  /* the server flushes and closes in ~1 s */

/* Why the server did not start: the log's last line, into err. */
static void last_log_line(const char *log_path, char *err, size_t errlen)
{
	char *text = read_file(log_path, NULL);
	const char *line = "";
	if (text) {
		size_t n = strlen(text);
		while (n > 0 && text[n - 1] == '\n')
			text[--n] = '\0';
		const char *nl = strrchr(text, '\n');
		line = nl ? nl + 1 : text;
	}
	snprintf(err, errlen, "the local server did not start: %s (log: %s)",
	         *line ? line : "no message", log_path);
	free(text);
}

/* The names of the log and the journal in the state directory, and the log
 * opened for the server's stderr (and for srvproc to read back). 0 or -1. */
static int local_files(struct local_server *ls, char *err, size_t errlen)
{
	char dir[PATH_MAX - 64], stamp[32];
	if (state_dir("sopra-server", dir, sizeof dir, err, errlen) != 0)
		return -1;
	time_t now = time(NULL);
	struct tm tm;
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
	snprintf(ls->log_path, sizeof ls->log_path, "%s/local-%s-%d.log", dir, stamp,
	         (int)getpid());
	snprintf(ls->journal_path, sizeof ls->journal_path, "%s/local-%s-%d.jnl", dir, stamp,
	         (int)getpid());
	ls->log_fd = open(ls->log_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (ls->log_fd < 0) {
		snprintf(err, errlen, "%s: %s", ls->log_path, strerror(errno));
		return -1;
	}
	return 0;
}

int local_start(struct local_server *ls, const char *exe, int timeout_sec, bool revised, char *err,
                size_t errlen)
{
	memset(ls, 0, sizeof *ls);
	ls->log_fd = -1;
	if (local_files(ls, err, errlen) != 0)
		return -1;
	char timeout[16];
	snprintf(timeout, sizeof timeout, "%d", timeout_sec);
	const char *argv[] = {exe,
	                      "--port",
	                      "0",
	                      "--bind",
	                      "127.0.0.1",
	                      "--timeout",
	                      timeout,
	                      "--journal",
	                      ls->journal_path,
	                      "--rules",
	                      revised ? "revised" : "base",
	                      NULL};
	struct spawn_opts so = {.search_path = strchr(exe, '/') == NULL};
	struct srvproc_opts o = {.out = SPAWN_NULL, .log = ls->log_fd, .spawn = &so};
	int port = srvproc_start(&ls->proc, argv, &o, LOCAL_START_WAIT_MS);
	if (port > 0) {
		ls->port = port;
		return 0;
	}
	if (port == SRVPROC_NOT_STARTED)
		snprintf(err, errlen, "cannot start %s: %s", exe, strerror(errno));
	else if (port == SRVPROC_EXITED)
		last_log_line(ls->log_path, err, errlen);
	else
		snprintf(err, errlen, "the local server does not listen after %d s (log: %s)",
		         LOCAL_START_WAIT_MS / 1000, ls->log_path);
	local_stop(ls, false);
	return -1;
}

void local_stop(struct local_server *ls, bool ending)
{
	if (ls->proc.pid > 0) {
		if (!ending || !srvproc_reap(&ls->proc, LOCAL_STOP_WAIT_MS))
			srvproc_stop(&ls->proc, LOCAL_STOP_WAIT_MS);
		ls->proc.pid = 0;
	}
	if (ls->log_fd >= 0)
		close(ls->log_fd);
	ls->log_fd = -1;
}
