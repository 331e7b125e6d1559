/*
 * local: sopra-client --local plays a game of its own. It starts a
 * sopra-server on the default game (the example configuration built into
 * the server) on a free port of the loopback interface, with the server's
 * log and a journal of the game in the state directory, and stops it when
 * the client ends. The server ends by itself with the game; it also dies
 * with the client when the client is killed (spawn(): PR_SET_PDEATHSIG).
 */
#ifndef SOPRA_CLIENT_LOCAL_H
#define SOPRA_CLIENT_LOCAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "srvproc.h"

struct local_server {
	struct srvproc proc; /* proc.pid 0: not running (never started, or stopped) */
	int port;            /* where it listens, on 127.0.0.1 */
	int log_fd;          /* the log file, open while the server runs; -1 */
	char log_path[PATH_MAX];
	char journal_path[PATH_MAX];
};

/*
 * Start the server program exe (a path, or a name looked up in PATH) with
 * --port 0 --bind 127.0.0.1 --timeout timeout_sec [--rules revised]
 * --journal DIR/local-TIME-PID.jnl, its stderr to DIR/local-TIME-PID.log
 * (DIR: toolutil's state_dir("sopra-server")), and wait until it listens (srvproc). Returns 0
 * with ls->port set, or -1 with the reason in err (the server is gone then).
 */
int local_start(struct local_server *ls, const char *exe, int timeout_sec, bool revised, char *err,
                size_t errlen);

/* Stop the server unless it has ended by itself (SIGTERM: it closes the
 * journal; SIGKILL if it is still there after a few seconds), and reap it.
 * ending: the game is over, so the server is ending by itself: give it a
 * few seconds first. Safe to call when it was never started or is gone. */
void local_stop(struct local_server *ls, bool ending);

#endif
