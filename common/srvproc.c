/* srvproc: see srvproc.h. */
#define _GNU_SOURCE 1 /* pipe2 */
#include "srvproc.h"

#include "sopra/xalloc.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LISTENING_TAG "listening on "
#define LOG_READ_MAX  (1u << 20) /* of a log file, while waiting for the line */
#define PIPE_LINE_MAX 1024       /* of a line from a log pipe; the rest is dropped */
#define POLL_MS       5          /* between two looks at a log file */

int srvproc_port_in(const char *log)
{
	assert(log);
	const char *at = strstr(log, LISTENING_TAG);
	if (!at)
		return 0;
	const char *addr = at + strlen(LISTENING_TAG);
	const char *end = addr + strcspn(addr, " ,\n");
	if (!strchr(end, '\n'))
		return 0; /* the line is still being written */
	const char *colon = NULL;
	for (const char *p = addr; p < end; p++)
		if (*p == ':')
			colon = p;
	if (!colon)
		return 0;
	int port = atoi(colon + 1);
	return port > 0 && port <= 65535 ? port : 0;
}

int srvproc_launch(struct srvproc *s, const char *const argv[], const struct srvproc_opts *o)
{
	assert(s && argv && argv[0] && o);
	memset(s, 0, sizeof *s);
	s->log_fd = -1;
	int err = o->log;
	int p[2] = {-1, -1};
	if (o->log == SRVPROC_LOG_PIPE) {
		if (pipe2(p, O_CLOEXEC) != 0)
			return -1;
		err = p[1];
	}
	assert(err >= 0);
	pid_t pid = spawn(argv, SPAWN_NULL, o->out, err, o->spawn);
	int e = errno;
	if (p[1] >= 0)
		close(p[1]);
	if (pid < 0) {
		if (p[0] >= 0)
			close(p[0]);
		errno = e;
		return -1;
	}
	s->pid = pid;
	s->log_fd = o->log == SRVPROC_LOG_PIPE ? p[0] : o->log;
	s->pipe = o->log == SRVPROC_LOG_PIPE;
	return 0;
}

bool srvproc_reap(struct srvproc *s, int wait_ms)
{
	assert(s && s->pid > 0);
	int64_t until = now_ms() + wait_ms;
	while (!s->exited) {
		int st;
		pid_t r = waitpid(s->pid, &st, wait_ms < 0 ? 0 : WNOHANG);
		if (r == s->pid) {
			s->exited = true;
			s->status = st;
		} else if (r < 0 && errno != EINTR) {
			s->exited = true; /* not our child any more: lost */
			s->status = -1;
		} else if (r == 0) {
			if (now_ms() >= until)
				break;
			sleep_ms(POLL_MS);
		}
	}
	return s->exited;
}

/* The listening port from a log file: re-read until the line is there. */
static int await_in_file(struct srvproc *s, int64_t until)
{
	char *buf = xmalloc(LOG_READ_MAX + 1);
	int port = SRVPROC_TIMEOUT;
	for (;;) {
		size_t len = 0;
		ssize_t n;
		while (len < LOG_READ_MAX &&
		       ((n = pread(s->log_fd, buf + len, LOG_READ_MAX - len, (off_t)len)) > 0 ||
		        (n < 0 && errno == EINTR)))
			if (n > 0)
				len += (size_t)n;
		buf[len] = '\0';
		int p = srvproc_port_in(buf);
		if (p > 0) {
			port = p;
			break;
		}
		if (srvproc_reap(s, 0)) {
			port = SRVPROC_EXITED;
			break;
		}
		if (now_ms() >= until)
			break;
		sleep_ms(POLL_MS);
	}
	free(buf);
	return port;
}

/* The listening port from a log pipe, read a byte at a time so that
 * nothing after the line is taken from the caller. */
static int await_in_pipe(struct srvproc *s, int64_t until)
{
	char line[PIPE_LINE_MAX + 2];
	size_t len = 0;
	for (;;) {
		int64_t left = until - now_ms();
		if (left <= 0)
			return SRVPROC_TIMEOUT;
		struct pollfd pfd = {.fd = s->log_fd, .events = POLLIN};
		int r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno != EINTR)
			return SRVPROC_TIMEOUT;
		if (r <= 0)
			continue;
		char c;
		ssize_t n = read(s->log_fd, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) /* the server closed its stderr: it is exiting */
			return srvproc_reap(s, (int)(until - now_ms() > 0 ? until - now_ms() : 0))
			               ? SRVPROC_EXITED
			               : SRVPROC_TIMEOUT;
		if (len < PIPE_LINE_MAX || c == '\n')
			line[len++] = c;
		if (c != '\n')
			continue;
		line[len] = '\0';
		int port = srvproc_port_in(line);
		if (port > 0)
			return port;
		len = 0;
	}
}

int srvproc_await_port(struct srvproc *s, int wait_ms)
{
	assert(s && s->pid > 0 && s->log_fd >= 0);
	int64_t until = now_ms() + wait_ms;
	int port = s->pipe ? await_in_pipe(s, until) : await_in_file(s, until);
	if (port > 0)
		s->port = port;
	return port;
}

int srvproc_start(struct srvproc *s, const char *const argv[], const struct srvproc_opts *o,
                  int wait_ms)
{
	if (srvproc_launch(s, argv, o) != 0)
		return SRVPROC_NOT_STARTED;
	return srvproc_await_port(s, wait_ms);
}

int srvproc_stop(struct srvproc *s, int wait_ms)
{
	assert(s && s->pid > 0);
	if (!srvproc_reap(s, 0)) {
		kill(s->pid, SIGTERM);
		if (!srvproc_reap(s, wait_ms)) {
			kill(s->pid, SIGKILL);
			srvproc_reap(s, -1);
		}
	}
	return s->status;
}
