/* bench: time, statistics, the table, processes, sockets, line framing. */
#define _GNU_SOURCE 1 /* sched_setaffinity */
#include "bench.h"
#include "srvproc.h"
#include "toolutil.h"

#include "sopra/proto.h"

#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long a server may take to report its port (a loaded machine). */
#define SERVER_START_MS 60000

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Children to kill if the bench dies (servers, the echo server, bots). */
static pid_t children[1024];
static int nchildren;

void child_started(pid_t pid)
{
	for (int i = 0; i < nchildren; i++)
		if (children[i] == 0) {
			children[i] = pid;
			return;
		}
	if (nchildren < (int)(sizeof children / sizeof children[0]))
		children[nchildren++] = pid;
}

void child_reaped(pid_t pid)
{
	for (int i = 0; i < nchildren; i++)
		if (children[i] == pid)
			children[i] = 0;
}

int child_cpu = -1;

void pin_cpu(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	if (cpu < 0) {
		for (int i = 0; i < CPU_SETSIZE && i < 64; i++)
			CPU_SET(i, &set);
	} else {
		CPU_SET(cpu, &set);
	}
	sched_setaffinity(0, sizeof set, &set);
}

void child_setup(void)
{
	/* a bench that dies takes its servers with it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (child_cpu >= 0)
		pin_cpu(child_cpu);
}

void die(const char *fmt, ...)
{
	for (int i = 0; i < nchildren; i++)
		if (children[i] > 0)
			kill(children[i], SIGKILL);
	va_list ap;
	va_start(ap, fmt);
	fputs("sopra-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* ---- statistics ------------------------------------------------------------ */

void samples_add(struct samples *s, uint64_t ns)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = ns;
}

void samples_free(struct samples *s)
{
	free(s->v);
	memset(s, 0, sizeof *s);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

uint64_t samples_q(struct samples *s, double q)
{
	if (s->n == 0)
		return 0;
	qsort(s->v, s->n, sizeof *s->v, cmp_u64);
	size_t i = (size_t)(q * (double)(s->n - 1) + 0.5);
	if (i >= s->n)
		i = s->n - 1;
	return s->v[i];
}

uint64_t samples_max(const struct samples *s)
{
	uint64_t m = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] > m)
			m = s->v[i];
	return m;
}

/* ---- the table --------------------------------------------------------------- */

struct row {
	char what[96], value[64], target[24], note[112];
};
static struct row rows[64];
static int nrows;

void table_row(const char *what, const char *value, const char *target, const char *note)
{
	if (nrows < (int)(sizeof rows / sizeof rows[0])) {
		struct row *r = &rows[nrows++];
		snprintf(r->what, sizeof r->what, "%s", what);
		snprintf(r->value, sizeof r->value, "%s", value);
		snprintf(r->target, sizeof r->target, "%s", target ? target : "");
		snprintf(r->note, sizeof r->note, "%s", note ? note : "");
	}
	fprintf(stderr, "  %-56s %s\n", what, value);
}

void table_print(void)
{
	int w0 = 4, w1 = 5, w2 = 6;
	for (int i = 0; i < nrows; i++) {
		int a = (int)strlen(rows[i].what), b = (int)strlen(rows[i].value),
		    c = (int)strlen(rows[i].target);
		w0 = a > w0 ? a : w0;
		w1 = b > w1 ? b : w1;
		w2 = c > w2 ? c : w2;
	}
	printf("| %-*s | %-*s | %-*s | %s\n", w0, "what", w1, "value", w2, "target", "note |");
	int w[3] = {w0, w1, w2};
	for (int k = 0; k < 3; k++) {
		fputs("|-", stdout);
		for (int i = 0; i < w[k]; i++)
			putchar('-');
		putchar('-');
	}
	puts("|------|");
	for (int i = 0; i < nrows; i++)
		printf("| %-*s | %-*s | %-*s | %s |\n", w0, rows[i].what, w1, rows[i].value, w2,
		       rows[i].target, rows[i].note);
	fflush(stdout);
}

/* ---- processes --------------------------------------------------------------- */

void pipe_cloexec(int p[2])
{
	if (pipe2(p, O_CLOEXEC) != 0)
		die("pipe: %s", strerror(errno));
}

pid_t spawn_argv(const char *const *argv, int in, int out, int err)
{
	const struct spawn_opts so = {.setup = child_setup};
	pid_t c = spawn(argv, in, out, err, &so);
	if (c < 0)
		die("cannot start %s: %s", argv[0], strerror(errno));
	child_started(c);
	return c;
}

int server_spawn(const char *server, const char *config, int64_t seed, const char *rules,
                 pid_t *pid, int *errfd)
{
	return server_spawn_with(server, config, seed, rules, NULL, NULL, pid, errfd);
}

int server_spawn_with(const char *server, const char *config, int64_t seed, const char *rules,
                      const char *opt, const char *value, pid_t *pid, int *errfd)
{
	char seedbuf[32];
	snprintf(seedbuf, sizeof seedbuf, "%lld", (long long)seed);
	const char *argv[] = {server,    "--config", config, "--port", "0",   "--seed", seedbuf,
	                      "--timeout", "3600",   "--rules", rules, opt, value, NULL};
	const struct spawn_opts so = {.setup = child_setup};
	const struct srvproc_opts o = {.out = SPAWN_NULL, .log = SRVPROC_LOG_PIPE, .spawn = &so};
	struct srvproc srv;
	if (srvproc_launch(&srv, argv, &o) != 0)
		die("cannot start %s: %s", server, strerror(errno));
	child_started(srv.pid);
	/* the rest of the log stays in the pipe */
	int port = srvproc_await_port(&srv, SERVER_START_MS);
	if (port <= 0)
		die("%s did not start (config %s)", server, config);
	*pid = srv.pid;
	*errfd = srv.log_fd;
	return port;
}

int proc_wait(pid_t pid, int ms)
{
	int st = 0;
	for (int i = 0; i < ms; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid) {
			child_reaped(pid);
			return st;
		}
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	return proc_stop(pid);
}

int proc_stop(pid_t pid)
{
	int st = 0;
	kill(pid, SIGTERM);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	child_reaped(pid);
	return st;
}

/* ---- sockets ------------------------------------------------------------------ */

int tcp_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	struct sockaddr_in sin;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((unsigned short)port);
	if (connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
		close(fd);
		return -1;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

void write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pf = {fd, POLLOUT, 0};
				poll(&pf, 1, 1000);
				continue;
			}
			die("write: %s", strerror(errno));
		}
		buf += w;
		n -= (size_t)w;
	}
}

void linebuf_free(struct linebuf *lb)
{
	free(lb->data);
	memset(lb, 0, sizeof *lb);
}

ssize_t linebuf_fill(struct linebuf *lb, int fd)
{
	if (lb->start > 0 && lb->start == lb->len) {
		lb->start = lb->len = 0;
	} else if (lb->start > 65536) {
		memmove(lb->data, lb->data + lb->start, lb->len - lb->start);
		lb->len -= lb->start;
		lb->start = 0;
	}
	if (lb->cap - lb->len < 65536) {
		lb->cap = lb->cap ? lb->cap * 2 : 262144;
		lb->data = xrealloc(lb->data, lb->cap);
	}
	ssize_t n;
	do
		n = read(fd, lb->data + lb->len, lb->cap - lb->len - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return -1;
		if (errno == ECONNRESET)
			return 0;
		die("read: %s", strerror(errno));
	}
	lb->len += (size_t)n;
	return n;
}

char *linebuf_next(struct linebuf *lb, size_t *len)
{
	if (lb->start >= lb->len)
		return NULL;
	char *s = lb->data + lb->start;
	char *nl = memchr(s, '\n', lb->len - lb->start);
	if (!nl)
		return NULL;
	*nl = '\0';
	*len = (size_t)(nl - s);
	lb->start += *len + 1;
	return s;
}

/* ---- the wire ------------------------------------------------------------------ */

bool wire_event_name(const char *line, char *buf, size_t n)
{
	static const char pre[] = "{\"event\":\"";
	if (strncmp(line, pre, sizeof pre - 1) != 0)
		return false;
	const char *s = line + sizeof pre - 1;
	size_t i = 0;
	while (s[i] && s[i] != '"' && i + 1 < n) {
		buf[i] = s[i];
		i++;
	}
	buf[i] = '\0';
	return true;
}

bool wire_int(const char *line, const char *key, int *out)
{
	char pat[64];
	int pl = snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *at = strstr(line, pat);
	if (!at)
		return false;
	*out = (int)strtol(at + pl, NULL, 10);
	return true;
}

size_t wire_encode_cmd(const struct cmd *c, enum game_rules rules, char *buf, size_t n)
{
	struct proto_buf b;
	proto_buf_init(&b);
	proto_encode_cmd(c, rules, &b);
	size_t len = b.len;
	if (len >= n)
		die("command line too long");
	memcpy(buf, b.data, len);
	buf[len] = '\0';
	proto_buf_free(&b);
	return len;
}
