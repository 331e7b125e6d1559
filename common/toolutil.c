/* toolutil: see toolutil.h. */
#define _GNU_SOURCE 1 /* pipe2 */
#include "toolutil.h"

#include "sopra/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double now_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void sleep_ms(int ms)
{
	if (ms <= 0)
		return;
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
}

int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One attempt at every address of host:port: the connected descriptor,
 * -1 with errno's value in *err, or -2 with getaddrinfo's code in *err. */
static int connect_once(const char *host, const char *port, int *err)
{
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		*err = rc;
		return -2;
	}
	int fd = -1;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd < 0) {
			*err = errno;
		} else if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
			*err = errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd;
}

int tcp_connect_host(const char *host, int port, double wait_sec, int retry_ms, char *err,
                     size_t errlen)
{
	char portbuf[16];
	snprintf(portbuf, sizeof portbuf, "%d", port);
	double deadline = now_sec() + wait_sec;
	for (;;) {
		int e = 0;
		int fd = connect_once(host, portbuf, &e);
		if (fd == -2) {
			snprintf(err, errlen, "%s: %s", host, gai_strerror(e));
			return -1;
		}
		if (fd >= 0) {
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
			return fd;
		}
		if (now_sec() >= deadline) {
			snprintf(err, errlen, "cannot connect to %s:%d: %s", host, port,
			         strerror(e));
			return -1;
		}
		sleep_ms(retry_ms);
	}
}

/* mkdir -p of path (a copy is cut at each '/'); 0 or -1 (errno set). */
static int make_dirs(const char *path)
{
	char buf[4096];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = buf + 1;; p++) {
		bool end = *p == '\0';
		if (*p != '/' && !end)
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -1;
		if (end)
			return 0;
		*p = '/';
	}
}

int state_dir(const char *sub, char *out, size_t outlen, char *err, size_t errlen)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	int n;
	if (state && state[0] == '/')
		n = snprintf(out, outlen, "%s/%s", state, sub);
	else if (home && *home)
		n = snprintf(out, outlen, "%s/.local/state/%s", home, sub);
	else {
		snprintf(err, errlen, "neither $XDG_STATE_HOME nor $HOME is set: no place for %s",
		         sub);
		return -1;
	}
	if (n < 0 || (size_t)n >= outlen) {
		snprintf(err, errlen, "the state directory's name is too long");
		return -1;
	}
	if (make_dirs(out) != 0) {
		snprintf(err, errlen, "cannot create %s: %s", out, strerror(errno));
		return -1;
	}
	return 0;
}

char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0, k;
	char *buf = xmalloc(cap);
	while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += k;
		if (cap - n < 2)
			buf = xrealloc(buf, cap *= 2);
	}
	if (ferror(f)) {
		int e = errno;
		fclose(f);
		free(buf);
		errno = e ? e : EIO;
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

long proc_status_kib(pid_t pid, const char *field)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	char *text = read_file(path, NULL);
	if (!text)
		return -1;
	size_t fl = strlen(field);
	long v = -1;
	for (const char *line = text; *line;) {
		if (strncmp(line, field, fl) == 0 && line[fl] == ':') {
			v = strtol(line + fl + 1, NULL, 10);
			break;
		}
		const char *nl = strchr(line, '\n');
		if (!nl)
			break;
		line = nl + 1;
	}
	free(text);
	return v;
}

/* In the child: make fd (an fd, SPAWN_NULL or SPAWN_INHERIT) descriptor to. */
static void child_fd(int fd, int to, int devnull)
{
	if (fd == SPAWN_INHERIT)
		return;
	if (fd == SPAWN_NULL)
		fd = devnull;
	if (fd < 0)
		return;
	if (fd == to) /* dup2 would keep a close-on-exec flag */
		fcntl(fd, F_SETFD, 0);
	else
		dup2(fd, to);
}

pid_t spawn(const char *const argv[], int in, int out, int err, const struct spawn_opts *opts)
{
	static const struct spawn_opts none;
	if (!opts)
		opts = &none;
	/* the exec's errno comes back through a close-on-exec pipe; EOF means
	 * the exec succeeded */
	int ep[2];
	if (pipe2(ep, O_CLOEXEC) != 0)
		return -1;
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(ep[0]);
		close(ep[1]);
		errno = e;
		return -1;
	}
	if (pid == 0) {
#ifdef __linux__
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) /* the parent died before prctl */
			_exit(127);
#else
		(void)parent;
#endif
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		sigset_t empty;
		sigemptyset(&empty);
		sigprocmask(SIG_SETMASK, &empty, NULL);
		int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		child_fd(in, 0, devnull);
		child_fd(out, 1, devnull);
		child_fd(err, 2, devnull);
		if (opts->nofile > 0) {
			struct rlimit rl = {(rlim_t)opts->nofile, (rlim_t)opts->nofile};
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		if (opts->setup)
			opts->setup();
		if (opts->search_path)
			execvp(argv[0], (char *const *)argv);
		else
			execv(argv[0], (char *const *)argv);
		int e = errno;
		if (write(ep[1], &e, sizeof e) < 0) {
			/* nothing more to do */
		}
		_exit(127);
	}
	close(ep[1]);
	int e = 0;
	ssize_t got;
	while ((got = read(ep[0], &e, sizeof e)) < 0 && errno == EINTR) {
	}
	close(ep[0]);
	if (got == (ssize_t)sizeof e) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
		}
		errno = e;
		return -1;
	}
	return pid;
}
