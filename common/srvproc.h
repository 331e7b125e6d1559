/*
 * srvproc: a sopra-server child process for the system tests, the tools and
 * the benchmark. The caller gives the whole command line, normally with
 * "--port 0" so that the kernel picks a port no other process holds (it may
 * also start the server under valgrind, or on a fixed port); srvproc starts
 * it with its stderr in a file or a pipe, reads the port from the server's
 * "listening on ADDR:PORT ..." line (docs/protocol.md), and reaps and stops
 * it.
 *
 *     struct srvproc srv;
 *     const char *argv[] = {server, "--config", cfg, "--port", "0", NULL};
 *     struct srvproc_opts o = {.out = SPAWN_NULL, .log = SRVPROC_LOG_PIPE};
 *     if (srvproc_start(&srv, argv, &o, 10000) <= 0) ... not listening ...
 *     ... connect to srv.port ...
 *     int status = srvproc_stop(&srv, 2000);
 *
 * Nothing here keeps state outside the struct srvproc.
 */
#ifndef SOPRA_SRVPROC_H
#define SOPRA_SRVPROC_H

#include <stdbool.h>
#include <sys/types.h>

#include "toolutil.h" /* spawn(), SPAWN_NULL, SPAWN_INHERIT */

/* srvproc_opts.log: the server's stderr goes to a pipe srvproc makes. */
#define SRVPROC_LOG_PIPE (-3)

/* What srvproc_await_port and srvproc_start return instead of a port. */
#define SRVPROC_EXITED      (-1) /* the server exited first (exited, status) */
#define SRVPROC_TIMEOUT     (-2) /* no listening line in time; it still runs */
#define SRVPROC_NOT_STARTED (-3) /* it could not be started (errno) */

struct srvproc {
	pid_t pid;   /* the child; 0 when it was not started */
	int port;    /* the port it reported listening on; 0 until then */
	int log_fd;  /* SRVPROC_LOG_PIPE: the read end of the server's stderr,
	              * positioned after the listening line (the caller may go
	              * on reading it, and closes it); else the caller's log */
	bool pipe;   /* log_fd is the pipe srvproc made */
	bool exited; /* it has been reaped: status is its wait status (-1 when
	              * it could not be waited for) */
	int status;
};

struct srvproc_opts {
	/* The server's stdout: a descriptor, SPAWN_NULL or SPAWN_INHERIT. */
	int out;
	/* The server's stderr: SRVPROC_LOG_PIPE, or a descriptor of a regular
	 * file open for reading and writing, which is read back from offset 0
	 * with pread (O_APPEND lets others write to it too). */
	int log;
	/* Passed to spawn() (search_path, nofile, setup); may be NULL. */
	const struct spawn_opts *spawn;
};

/*
 * Start argv (NULL-terminated; argv[0] the server or e.g. valgrind) with
 * stdin /dev/null and stdout and stderr as o says; does not wait for
 * anything. Returns 0, or -1 with errno set when it cannot be started
 * (s->pid is then 0).
 */
int srvproc_launch(struct srvproc *s, const char *const argv[], const struct srvproc_opts *o);

/*
 * Wait up to wait_ms milliseconds for the server's listening line. Returns
 * the port (> 0, also in s->port), SRVPROC_EXITED when the server exited
 * before it listened (it has been reaped), or SRVPROC_TIMEOUT (it still
 * runs: stop it).
 */
int srvproc_await_port(struct srvproc *s, int wait_ms);

/*
 * srvproc_launch, then srvproc_await_port: returns the port, or
 * SRVPROC_NOT_STARTED (errno set), SRVPROC_EXITED or SRVPROC_TIMEOUT.
 */
int srvproc_start(struct srvproc *s, const char *const argv[], const struct srvproc_opts *o,
                  int wait_ms);

/*
 * Whether the server has exited, waiting up to wait_ms for it (0: just
 * look, -1: as long as it takes). Once true, s->status holds its wait
 * status.
 */
bool srvproc_reap(struct srvproc *s, int wait_ms);

/*
 * Stop the server: SIGTERM, up to wait_ms for it to exit, then SIGKILL
 * (wait_ms -1: no SIGKILL). Returns its wait status. A server that has
 * exited already is not signalled. Does not close a log pipe.
 */
int srvproc_stop(struct srvproc *s, int wait_ms);

/*
 * The port of the first complete line of log (NUL-terminated) that says
 * "listening on ADDR:PORT" (ADDR "0.0.0.0", "[::1]", ...: the port is
 * after its last colon), or 0 when there is none yet.
 */
int srvproc_port_in(const char *log);

#endif
