/* sopra-faults: fault injection against the real sopra-server over real sockets.
 *
 *   sopra-faults --server PATH --config PATH [--only SUBSTRING] [--verbose] [--list]
 *
 * --config names a valid 2-player configuration whose goal is one round
 * (systemtests/scenarios/h_basic.json); variants with more players are written
 * into a temporary directory. Every case starts its own server on a free port
 * (--port 0; the port is read from the server's log) and drives it with plain
 * TCP clients: over-long lines, 1-byte writes, pipelined commands, idle and
 * vanishing clients, a client that never reads, extra connections, descriptor
 * exhaustion, timeouts in every phase, SIGTERM/SIGINT. Each case prints
 * "PASS name" or "FAIL name: reason" (plus the server's log tail), and the run
 * ends with "N passed, M failed"; the exit code is 0 only if nothing failed.
 *
 * After every case the server must have exited by itself with code 0 (the game
 * is over, or a signal was sent), and its stderr must contain no sanitizer
 * report ("Sanitizer", "runtime error") and no invariant violation (debug and
 * SANITIZE builds check game_check_invariants after every command).
 *
 * See docs/robustness.md for what each case proves.
 */
#define _DEFAULT_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cjson/cJSON.h>

#if defined(__GNUC__)
#define PRINTF_LIKE(a, b) __attribute__((format(printf, a, b)))
#else
#define PRINTF_LIKE(a, b)
#endif

#define WAIT_MS 5000        /* default wait for one event */
#define MAX_LINE 65536      /* PROTO_MAX_LINE */
#define RSS_LIMIT_KB (64 * 1024)

/* ---- small utilities ---------------------------------------------------- */

static bool g_verbose;
static char g_tmpdir[1024];
static const char *g_server;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("malloc");
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("realloc");
	return p;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap);
	size_t k;
	while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += k;
		if (cap - n < 2)
			buf = xrealloc(buf, cap *= 2);
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* ---- the case context ----------------------------------------------------- */

typedef struct {
	char msg[1024]; /* first failure */
	bool failed;
} ctx;

static bool fail(ctx *t, const char *fmt, ...) PRINTF_LIKE(2, 3);
static bool fail(ctx *t, const char *fmt, ...)
{
	if (!t->failed) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(t->msg, sizeof t->msg, fmt, ap);
		va_end(ap);
		t->failed = true;
	}
	return false;
}

#define CHECK(t, cond, ...)                      \
	do {                                     \
		if (!(cond))                     \
			return fail((t), __VA_ARGS__); \
	} while (0)

/* ---- the server process ------------------------------------------------- */

typedef struct {
	pid_t pid;
	int port;
	char errpath[PATH_MAX];
	bool reaped;
	int status;
} server;

/* Start the server with cfg, --timeout timeout_s, seed 56; nofile > 0 lowers
 * its RLIMIT_NOFILE. Waits until it reports the port it listens on. */
static bool srv_start(ctx *t, server *s, const char *cfg, int timeout_s, const char *rules,
		      long nofile)
{
	static int serial;
	memset(s, 0, sizeof *s);
	snprintf(s->errpath, sizeof s->errpath, "%s/server-%d.log", g_tmpdir, ++serial);
	int efd = open(s->errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (efd < 0)
		die("open server log");
	char tbuf[16];
	snprintf(tbuf, sizeof tbuf, "%d", timeout_s);
	const char *argv[16];
	int n = 0;
	argv[n++] = g_server;
	argv[n++] = "--config";
	argv[n++] = cfg;
	argv[n++] = "--port";
	argv[n++] = "0";
	argv[n++] = "--seed";
	argv[n++] = "56";
	argv[n++] = "--timeout";
	argv[n++] = tbuf;
	if (rules) {
		argv[n++] = "--rules";
		argv[n++] = rules;
	}
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
#ifdef __linux__
		prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(efd, 2);
		if (nofile > 0) {
			struct rlimit rl = { (rlim_t)nofile, (rlim_t)nofile };
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		signal(SIGPIPE, SIG_DFL);
		execv(g_server, (char *const *)argv);
		perror("exec sopra-server");
		_exit(127);
	}
	close(efd);
	s->pid = pid;
	int64_t until = now_ms() + 10000;
	while (now_ms() < until) {
		char *log = read_file(s->errpath, NULL);
		const char *p = log ? strstr(log, "listening on 0.0.0.0:") : NULL;
		if (p) {
			s->port = atoi(p + strlen("listening on 0.0.0.0:"));
			free(log);
			return true;
		}
		free(log);
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			s->reaped = true;
			s->status = st;
			return fail(t, "the server exited before listening");
		}
		sleep_ms(5);
	}
	return fail(t, "the server did not report its port within 10 s");
}

/* Wait up to ms for the server to exit. */
static bool srv_wait(server *s, int ms)
{
	if (s->reaped)
		return true;
	int64_t until = now_ms() + ms;
	for (;;) {
		int st;
		pid_t r = waitpid(s->pid, &st, WNOHANG);
		if (r == s->pid) {
			s->reaped = true;
			s->status = st;
			return true;
		}
		if (now_ms() >= until)
			return false;
		sleep_ms(5);
	}
}

/* The server must exit by itself with code 0 within ms. */
static bool srv_expect_exit0(ctx *t, server *s, int ms)
{
	if (!srv_wait(s, ms))
		return fail(t, "the server did not exit within %d ms", ms);
	if (WIFSIGNALED(s->status))
		return fail(t, "the server was killed by signal %d", WTERMSIG(s->status));
	if (WEXITSTATUS(s->status) != 0)
		return fail(t, "the server exited with code %d, expected 0", WEXITSTATUS(s->status));
	return true;
}

static long proc_status_kb(pid_t pid, const char *key)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	char *txt = read_file(path, NULL);
	if (!txt)
		return -1;
	long v = -1;
	const char *p = strstr(txt, key);
	if (p)
		v = atol(p + strlen(key) + 1);
	free(txt);
	return v;
}

/* CPU time (user + system) of pid in clock ticks, or -1. */
static long proc_cpu_ticks(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	char *txt = read_file(path, NULL);
	if (!txt)
		return -1;
	const char *p = strrchr(txt, ')');
	long v = -1;
	if (p) {
		/* fields after the command: state(3) ... utime(14) stime(15) */
		unsigned long ut = 0, st = 0;
		if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
			v = (long)(ut + st);
	}
	free(txt);
	return v;
}

/* Finish a case: kill a server that is still running (a failure unless the
 * case failed already), then scan its log for sanitizer reports. */
static void srv_finish(ctx *t, server *s)
{
	if (s->pid <= 0)
		return;
	if (!srv_wait(s, 0)) {
		fail(t, "the server was still running at the end of the case");
		kill(s->pid, SIGKILL);
		srv_wait(s, 5000);
	}
	char *log = read_file(s->errpath, NULL);
	if (log) {
		if (strstr(log, "Sanitizer") || strstr(log, "runtime error"))
			fail(t, "sanitizer report in the server's stderr");
		else if (strstr(log, "invariant violated"))
			fail(t, "game invariant violated (server's stderr)");
	}
	if (t->failed) {
		const char *tail = log ? log : "";
		size_t n = strlen(tail);
		int lines = 0;
		const char *p = tail + n;
		while (p > tail && lines < 16) {
			p--;
			if (*p == '\n' && p != tail + n - 1)
				lines++;
		}
		if (p != tail)
			p++;
		printf("  server stderr (tail):\n");
		for (const char *q = p; *q;) {
			const char *e = strchr(q, '\n');
			size_t len = e ? (size_t)(e - q) : strlen(q);
			printf("    %.*s\n", (int)(len > 200 ? 200 : len), q);
			q += len + (e ? 1 : 0);
		}
	} else if (g_verbose && log) {
		printf("  server stderr:\n%s", log);
	}
	free(log);
	unlink(s->errpath);
	s->pid = 0;
}

/* ---- clients ---------------------------------------------------------- */

typedef struct {
	int fd;
	char *buf; /* received, not yet consumed */
	size_t len, cap;
	bool eof;           /* EOF or connection reset seen */
	bool reset;         /* it was a reset */
	size_t total_in;    /* bytes received in all */
	char seen[2048];    /* play_out: names of the events it saw */
	bool gameend;       /* play_out: saw GameEnd or RegistrationAborted */
	bool in_game;       /* play_out: answers Characters/ActNow */
	char name[8];
} client;

static bool cl_connect(ctx *t, client *c, const server *s, const char *name, int rcvbuf)
{
	memset(c, 0, sizeof *c);
	snprintf(c->name, sizeof c->name, "%s", name);
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (c->fd < 0)
		die("socket");
	if (rcvbuf > 0)
		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	struct sockaddr_in sin;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)s->port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(c->fd, (struct sockaddr *)&sin, sizeof sin) != 0)
		return fail(t, "client %s: connect: %s", name, strerror(errno));
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
	return true;
}

static void cl_close(client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
}

/* Read what is there (one read). Returns bytes read, 0 if nothing, -1 at EOF. */
static long cl_read_once(client *c)
{
	if (c->eof)
		return -1;
	if (c->cap - c->len < 65536) {
		c->cap = c->cap ? c->cap * 2 : 131072;
		while (c->cap - c->len < 65536)
			c->cap *= 2;
		c->buf = xrealloc(c->buf, c->cap);
	}
	ssize_t k = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
	if (k > 0) {
		c->len += (size_t)k;
		c->total_in += (size_t)k;
		return k;
	}
	if (k == 0) {
		c->eof = true;
		return -1;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return 0;
	c->eof = true;
	c->reset = true;
	return -1;
}

/* Wait up to ms for input; 1 = got bytes, 0 = timeout, -1 = EOF. */
static int cl_fill(client *c, int ms)
{
	if (c->eof)
		return -1;
	struct pollfd p = { c->fd, POLLIN, 0 };
	int r = poll(&p, 1, ms);
	if (r <= 0)
		return 0;
	long k = cl_read_once(c);
	return k > 0 ? 1 : (k < 0 ? -1 : 0);
}

/*
 * Send all of data. Unless no_read, input arriving meanwhile is read into the
 * buffer (so a server that answers while we send cannot deadlock us). Returns
 * true if everything was sent, false if the peer closed or reset, or nothing
 * could be sent for 10 s (*stalled is set then).
 */
static bool cl_send_ex(client *c, const void *data, size_t len, bool no_read, bool *stalled)
{
	const char *p = data;
	if (stalled)
		*stalled = false;
	while (len > 0) {
		struct pollfd pf = { c->fd, (short)(POLLOUT | (no_read ? 0 : POLLIN)), 0 };
		int r = poll(&pf, 1, 10000);
		if (r == 0) {
			if (stalled)
				*stalled = true;
			return false;
		}
		if (r < 0)
			continue;
		if (!no_read && (pf.revents & POLLIN))
			cl_read_once(c);
		if (pf.revents & (POLLOUT | POLLERR | POLLHUP)) {
			ssize_t k = send(c->fd, p, len, MSG_NOSIGNAL);
			if (k > 0) {
				p += k;
				len -= (size_t)k;
			} else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
				   errno != EINTR) {
				return false;
			}
		}
	}
	return true;
}

static bool cl_send(client *c, const void *data, size_t len)
{
	return cl_send_ex(c, data, len, false, NULL);
}

static bool cl_sendf(client *c, const char *fmt, ...) PRINTF_LIKE(2, 3);
static bool cl_sendf(client *c, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return cl_send(c, buf, (size_t)n);
}

/* Next line (without "\n", malloc'd) within ms: 1, 0 = timeout, -1 = EOF. */
static int cl_line(client *c, int ms, char **out)
{
	int64_t until = now_ms() + ms;
	for (;;) {
		char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		if (nl) {
			size_t n = (size_t)(nl - c->buf);
			*out = xmalloc(n + 1);
			memcpy(*out, c->buf, n);
			(*out)[n] = '\0';
			memmove(c->buf, nl + 1, c->len - n - 1);
			c->len -= n + 1;
			return 1;
		}
		if (c->eof)
			return -1;
		int left = (int)(until - now_ms());
		if (left <= 0)
			return 0;
		cl_fill(c, left);
	}
}

static const char *ev_name(const cJSON *ev)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(ev, "event");
	return cJSON_IsString(n) ? n->valuestring : "?";
}

static int ev_int(const cJSON *ev, const char *key)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(ev, key);
	return cJSON_IsNumber(n) ? n->valueint : INT_MIN;
}

static const char *ev_str(const cJSON *ev, const char *key)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(ev, key);
	return cJSON_IsString(n) ? n->valuestring : NULL;
}

/* The next event within ms, or NULL after recording why. */
static cJSON *next_event(ctx *t, client *c, int ms)
{
	char *line = NULL;
	int r = cl_line(c, ms, &line);
	if (r == 0) {
		fail(t, "client %s: no event within %d ms", c->name, ms);
		return NULL;
	}
	if (r < 0) {
		fail(t, "client %s: connection closed while waiting for an event", c->name);
		return NULL;
	}
	cJSON *ev = cJSON_Parse(line);
	if (!ev || !cJSON_IsObject(ev) || !cJSON_IsString(cJSON_GetObjectItem(ev, "event"))) {
		fail(t, "client %s: not an event line: %.200s", c->name, line);
		cJSON_Delete(ev);
		free(line);
		return NULL;
	}
	if (g_verbose)
		printf("    %s < %.160s\n", c->name, line);
	free(line);
	return ev;
}

/* The next event must be `name`; returned for inspection (free it) or NULL. */
static cJSON *expect_ev(ctx *t, client *c, const char *name)
{
	cJSON *ev = next_event(t, c, WAIT_MS);
	if (!ev)
		return NULL;
	if (strcmp(ev_name(ev), name) != 0) {
		char *txt = cJSON_PrintUnformatted(ev);
		fail(t, "client %s: expected %s, got %.200s", c->name, name, txt);
		free(txt);
		cJSON_Delete(ev);
		return NULL;
	}
	return ev;
}

static bool expect_name(ctx *t, client *c, const char *name)
{
	cJSON *ev = expect_ev(t, c, name);
	cJSON_Delete(ev);
	return ev != NULL;
}

/* Next event is `name` with integer key == v. */
static bool expect_int(ctx *t, client *c, const char *name, const char *key, int v)
{
	cJSON *ev = expect_ev(t, c, name);
	if (!ev)
		return false;
	int got = ev_int(ev, key);
	cJSON_Delete(ev);
	CHECK(t, got == v, "client %s: %s.%s = %d, expected %d", c->name, name, key, got, v);
	return true;
}

/* Next event is CommandFailed (with exactly msg, unless msg is NULL). */
static bool expect_failed(ctx *t, client *c, const char *msg)
{
	cJSON *ev = expect_ev(t, c, "CommandFailed");
	if (!ev)
		return false;
	const char *m = ev_str(ev, "message");
	bool ok = m && *m && (!msg || strcmp(m, msg) == 0);
	if (!ok)
		fail(t, "client %s: CommandFailed message \"%s\", expected \"%s\"", c->name,
		     m ? m : "(none)", msg ? msg : "(non-empty)");
	cJSON_Delete(ev);
	return ok;
}

/* The next event of c is CommandFailed with a message starting with prefix. */
static bool expect_failed_prefix(ctx *t, client *c, const char *prefix)
{
	cJSON *ev = expect_ev(t, c, "CommandFailed");
	if (!ev)
		return false;
	const char *m = ev_str(ev, "message");
	bool ok = m && strncmp(m, prefix, strlen(prefix)) == 0;
	if (!ok)
		fail(t, "client %s: CommandFailed message \"%s\", expected \"%s...\"", c->name,
		     m ? m : "(none)", prefix);
	cJSON_Delete(ev);
	return ok;
}

/* Nothing but EOF (or a reset) within ms. */
static bool expect_eof(ctx *t, client *c, int ms)
{
	char *line = NULL;
	int r = cl_line(c, ms, &line);
	if (r > 0) {
		fail(t, "client %s: expected the connection to close, got %.200s", c->name, line);
		free(line);
		return false;
	}
	CHECK(t, r < 0, "client %s: connection not closed within %d ms", c->name, ms);
	return true;
}

/* No bytes at all within ms (EOF counts as something). */
static bool expect_quiet(ctx *t, client *c, int ms)
{
	if (c->len == 0)
		cl_fill(c, ms);
	if (c->len > 0) {
		char *nl = memchr(c->buf, '\n', c->len);
		int n = nl ? (int)(nl - c->buf) : (int)c->len;
		return fail(t, "client %s: expected silence, got %.*s", c->name, n > 200 ? 200 : n,
			    c->buf);
	}
	CHECK(t, !c->eof, "client %s: expected silence, but the connection closed", c->name);
	return true;
}

static void seen_add(client *c, const char *s)
{
	size_t n = strlen(c->seen);
	if (n + strlen(s) + 2 < sizeof c->seen) {
		if (n)
			c->seen[n++] = ' ';
		strcpy(c->seen + n, s);
	}
}

/*
 * Play the game out: in-game clients answer Characters with their first two
 * offers and ActNow with EndTurn; every client's events are logged in
 * c->seen ("Left:1" style for player events). Returns when every client has
 * seen EOF, or fails after ms.
 */
static bool play_out(ctx *t, client **cls, int n, int ms)
{
	int64_t until = now_ms() + ms;
	for (;;) {
		bool all_eof = true;
		for (int i = 0; i < n; i++) {
			client *c = cls[i];
			for (;;) {
				char *line = NULL;
				int r = cl_line(c, 0, &line);
				if (r <= 0)
					break;
				cJSON *ev = cJSON_Parse(line);
				if (g_verbose)
					printf("    %s < %.160s\n", c->name, line);
				free(line);
				if (!ev)
					return fail(t, "client %s: unparsable line", c->name);
				const char *nm = ev_name(ev);
				char tag[64];
				if (!strcmp(nm, "Left") || !strcmp(nm, "Player"))
					snprintf(tag, sizeof tag, "%s:%d", nm, ev_int(ev, "player"));
				else if (!strcmp(nm, "GameEnd"))
					snprintf(tag, sizeof tag, "GameEnd:%s",
						 cJSON_IsTrue(cJSON_GetObjectItem(ev, "win")) ? "true"
											      : "false");
				else
					snprintf(tag, sizeof tag, "%s", nm);
				seen_add(c, tag);
				if (!strcmp(nm, "GameEnd") || !strcmp(nm, "RegistrationAborted"))
					c->gameend = true;
				if (c->in_game && !strcmp(nm, "Characters"))
					cl_sendf(c,
						 "{\"command\":\"SelectCharacters\",\"characterId0\":%d,"
						 "\"characterId1\":%d}\n",
						 ev_int(ev, "characterId0"), ev_int(ev, "characterId1"));
				else if (c->in_game && !strcmp(nm, "ActNow"))
					cl_sendf(c, "{\"command\":\"EndTurn\"}\n");
				cJSON_Delete(ev);
			}
			if (!c->eof)
				all_eof = false;
		}
		if (all_eof)
			return true;
		if (now_ms() >= until) {
			for (int i = 0; i < n; i++)
				if (!cls[i]->eof)
					return fail(t, "client %s: not closed after %d ms; saw: %.300s",
						    cls[i]->name, ms, cls[i]->seen);
			return true;
		}
		struct pollfd pf[128];
		int np = 0;
		for (int i = 0; i < n && np < 128; i++)
			if (!cls[i]->eof)
				pf[np++] = (struct pollfd){ cls[i]->fd, POLLIN, 0 };
		poll(pf, (nfds_t)np, 20);
		for (int i = 0; i < n; i++)
			if (!cls[i]->eof)
				cl_read_once(cls[i]);
	}
}

/* ---- configurations ------------------------------------------------------ */

static char g_cfg2[PATH_MAX], g_cfg3[PATH_MAX];

/* Write a copy of the base configuration with "maxPlayers" set to n. */
static void write_config(const char *base, int n, char *out, size_t outlen)
{
	size_t len;
	char *txt = read_file(base, &len);
	if (!txt) {
		fprintf(stderr, "sopra-faults: cannot read %s\n", base);
		exit(2);
	}
	char *p = strstr(txt, "\"maxPlayers\"");
	char *colon = p ? strchr(p, ':') : NULL;
	if (!colon) {
		fprintf(stderr, "sopra-faults: %s has no \"maxPlayers\"\n", base);
		exit(2);
	}
	char *q = colon + 1;
	while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
		q++;
	char *e = q;
	while (*e >= '0' && *e <= '9')
		e++;
	snprintf(out, outlen, "%s/config-%d.json", g_tmpdir, n);
	FILE *f = fopen(out, "wb");
	if (!f)
		die("write config");
	fwrite(txt, 1, (size_t)(q - txt), f);
	fprintf(f, "%d", n);
	fwrite(e, 1, len - (size_t)(e - txt), f);
	fclose(f);
	free(txt);
}

/* ---- common game steps --------------------------------------------------- */

typedef struct {
	server s;
	client a, b; /* player 0 and player 1 */
	int a_chars[2], b_chars[2];
	int b_rcvbuf; /* > 0: B's SO_RCVBUF (the slow reader) */
} game2;

#define CLIENT_INIT { .fd = -1 }
#define GAME2_INIT { .a = { .fd = -1 }, .b = { .fd = -1 } }

/* Register a and b (2-player config): both get Config, GameStarted, Player 0,
 * Player 1 (A's Characters is the next event for A). */
static bool reg_two(ctx *t, game2 *g)
{
	CHECK(t, cl_connect(t, &g->a, &g->s, "A", 0), "connect");
	CHECK(t, cl_connect(t, &g->b, &g->s, "B", g->b_rcvbuf), "connect");
	cl_sendf(&g->a, "{\"command\":\"Register\",\"playerName\":\"A\"}\n");
	if (!expect_name(t, &g->a, "Config"))
		return false;
	cl_sendf(&g->b, "{\"command\":\"Register\",\"playerName\":\"B\"}\n");
	if (!expect_name(t, &g->b, "Config"))
		return false;
	client *both[2] = { &g->a, &g->b };
	for (int i = 0; i < 2; i++) {
		if (!expect_name(t, both[i], "GameStarted") ||
		    !expect_int(t, both[i], "Player", "player", 0) ||
		    !expect_int(t, both[i], "Player", "player", 1))
			return false;
	}
	return true;
}

/* Player p (client c) gets Characters and selects the first two offered;
 * every client in all[] then sees the two CharacterSpawned and five CardDrawn. */
static bool select_two(ctx *t, client *c, int p, int chars[2], client **all, int n)
{
	cJSON *ev = expect_ev(t, c, "Characters");
	if (!ev)
		return false;
	chars[0] = ev_int(ev, "characterId0");
	chars[1] = ev_int(ev, "characterId1");
	cJSON_Delete(ev);
	cl_sendf(c, "{\"command\":\"SelectCharacters\",\"characterId0\":%d,\"characterId1\":%d}\n",
		 chars[0], chars[1]);
	for (int i = 0; i < n; i++) {
		if (!expect_int(t, all[i], "CharacterSpawned", "player", p) ||
		    !expect_int(t, all[i], "CharacterSpawned", "player", p))
			return false;
		for (int k = 0; k < 5; k++)
			if (!expect_int(t, all[i], "CardDrawn", "player", p))
				return false;
	}
	return true;
}

/* The round's start as seen by one client: NextRound, Crisis, then ndice x
 * DieRolled (each player rolls one die per living character plus one). */
static bool round_start(ctx *t, client *c, int ndice)
{
	if (!expect_name(t, c, "NextRound") || !expect_name(t, c, "Crisis"))
		return false;
	for (int i = 0; i < ndice; i++)
		if (!expect_name(t, c, "DieRolled"))
			return false;
	return true;
}

/* Register two players, both select, the round starts: A's ActNow is
 * consumed (it is A's turn); B has seen everything up to the dice. */
static bool start_turn(ctx *t, game2 *g, int timeout_s)
{
	int rcv = g->b_rcvbuf;
	memset(g, 0, sizeof *g);
	g->a.fd = g->b.fd = -1;
	g->b_rcvbuf = rcv;
	if (!srv_start(t, &g->s, g_cfg2, timeout_s, NULL, 0))
		return false;
	client *both[2] = { &g->a, &g->b };
	if (!reg_two(t, g))
		return false;
	if (!select_two(t, &g->a, 0, g->a_chars, both, 2))
		return false;
	if (!select_two(t, &g->b, 1, g->b_chars, both, 2))
		return false;
	if (!round_start(t, &g->a, 6) || !round_start(t, &g->b, 6))
		return false;
	return expect_name(t, &g->a, "ActNow");
}

static void game2_close(game2 *g)
{
	cl_close(&g->a);
	cl_close(&g->b);
}

/* A (active) ends its turn, B ends its turn; both see the colony phase and
 * GameEnd, then EOF; the server exits 0. */
static bool finish_two(ctx *t, game2 *g)
{
	g->a.in_game = g->b.in_game = true;
	cl_sendf(&g->a, "{\"command\":\"EndTurn\"}\n");
	client *both[2] = { &g->a, &g->b };
	if (!play_out(t, both, 2, 8000))
		return false;
	CHECK(t, g->a.gameend && g->b.gameend, "GameEnd not seen by both (A: %s | B: %s)",
	      g->a.seen, g->b.seen);
	return srv_expect_exit0(t, &g->s, 4000);
}

static char *make_line(size_t n, char fill, const char *tail)
{
	char *p = xmalloc(n + strlen(tail) + 1);
	memset(p, fill, n);
	strcpy(p + n, tail);
	return p;
}

/* ---- the cases -------------------------------------------------------- */

/* A 10 MiB line from the player who is not active: CommandFailed("line too
 * long"), then the connection is closed; the active player hears nothing;
 * the game goes on and skips the lost player as Left when it waits for it;
 * the server's memory stays small. */
static bool case_line_10mib(ctx *t)
{
	game2 g = GAME2_INIT;
	bool ok = start_turn(t, &g, 30);
	if (ok) {
		size_t n = (size_t)10 << 20;
		char *big = make_line(n, 'a', "\n");
		cl_send(&g.b, big, n + 1); /* may fail half-way: the server cuts us off */
		free(big);
		ok = expect_failed(t, &g.b, "line too long") && expect_eof(t, &g.b, WAIT_MS) &&
		     expect_quiet(t, &g.a, 200);
	}
	if (ok) {
		long rss = proc_status_kb(g.s.pid, "VmHWM:");
		if (g_verbose)
			printf("    server VmHWM after the 10 MiB line: %ld kB\n", rss);
		if (rss > RSS_LIMIT_KB)
			ok = fail(t, "server VmHWM %ld kB after the 10 MiB line", rss);
		cl_sendf(&g.a, "{\"command\":\"EndTurn\"}\n");
		ok = ok && expect_int(t, &g.a, "Left", "player", 1) &&
		     expect_name(t, &g.a, "SurvivorKilled");
		g.a.in_game = true;
		client *one[1] = { &g.a };
		ok = ok && play_out(t, one, 1, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && !g.a.gameend)
			ok = fail(t, "no GameEnd: %s", g.a.seen);
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* 70 000 bytes without a newline from an unregistered connection during
 * registration: answered and closed without waiting for the end of the
 * line; registration is unaffected (ids 0 and 1 go to the next two). */
static bool case_line_70k_unterminated(ctx *t)
{
	server s;
	client c = CLIENT_INIT, a = CLIENT_INIT, b = CLIENT_INIT;
	bool ok = srv_start(t, &s, g_cfg2, 30, NULL, 0) && cl_connect(t, &c, &s, "C", 0) &&
		  cl_connect(t, &a, &s, "A", 0) && cl_connect(t, &b, &s, "B", 0);
	if (ok) {
		char *big = make_line(70000, '{', "");
		cl_send(&c, big, 70000);
		free(big);
		ok = expect_failed(t, &c, "line too long") && expect_eof(t, &c, WAIT_MS);
	}
	if (ok) {
		cl_sendf(&a, "{\"command\":\"Register\",\"playerName\":\"A\"}\n");
		cl_sendf(&b, "{\"command\":\"Register\",\"playerName\":\"B\"}\n");
		a.in_game = b.in_game = true;
		client *both[2] = { &a, &b };
		ok = play_out(t, both, 2, 8000);
	}
	if (ok) {
		ok = strstr(a.seen, "Config GameStarted Player:0 Player:1") == a.seen &&
		     strstr(b.seen, "Config GameStarted Player:0 Player:1") == b.seen;
		if (!ok)
			fail(t, "unexpected start: A: %.200s | B: %.200s", a.seen, b.seen);
		else if (!a.gameend || !b.gameend)
			ok = fail(t, "no GameEnd (A: %s)", a.seen);
		else
			ok = srv_expect_exit0(t, &s, 4000);
	}
	srv_finish(t, &s);
	cl_close(&a);
	cl_close(&b);
	cl_close(&c);
	return ok;
}

/* 70 000 bytes without a newline from the player who is not active, and the
 * client closes at once: the game loses the player (Left when it waits for
 * it) and plays on. */
static bool case_line_70k_then_close(ctx *t)
{
	game2 g = GAME2_INIT;
	bool ok = start_turn(t, &g, 30);
	if (ok) {
		char *big = make_line(70000, 'x', "");
		cl_send(&g.b, big, 70000);
		free(big);
		close(g.b.fd);
		g.b.fd = -1;
		ok = expect_quiet(t, &g.a, 200);
	}
	if (ok) {
		cl_sendf(&g.a, "{\"command\":\"EndTurn\"}\n");
		ok = expect_int(t, &g.a, "Left", "player", 1);
	}
	if (ok) {
		client *one[1] = { &g.a };
		g.a.in_game = true;
		ok = play_out(t, one, 1, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && !g.a.gameend)
			ok = fail(t, "no GameEnd: %s", g.a.seen);
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* Exactly 65536 bytes (plus "\n" or "\r\n") is a line; 65537 is too long and
 * costs the active player its connection: it leaves at once. */
static bool case_line_limit_boundary(ctx *t)
{
	game2 g = GAME2_INIT;
	bool ok = start_turn(t, &g, 30);
	const char *tails[2] = { "\n", "\r\n" };
	for (int i = 0; ok && i < 2; i++) {
		char head[128];
		int hn = snprintf(head, sizeof head,
				  "{\"command\":\"Barricade\",\"characterId\":%d,\"entrance\":%d",
				  g.a_chars[0], i + 1);
		char *line = make_line(MAX_LINE, ' ', tails[i]);
		memcpy(line, head, (size_t)hn);
		line[MAX_LINE - 1] = '}';
		cl_send(&g.a, line, strlen(line));
		free(line);
		ok = expect_name(t, &g.a, "Barricaded") && expect_name(t, &g.a, "ActNow") &&
		     expect_name(t, &g.b, "Barricaded");
	}
	if (ok) {
		char *line = make_line(MAX_LINE + 1, ' ', "\n");
		memcpy(line, "{\"command\":\"EndTurn\"", 20);
		line[MAX_LINE] = '}';
		cl_send(&g.a, line, strlen(line));
		free(line);
		ok = expect_failed(t, &g.a, "line too long") && expect_eof(t, &g.a, WAIT_MS) &&
		     expect_int(t, &g.b, "Left", "player", 0) &&
		     expect_name(t, &g.b, "SurvivorKilled") &&
		     expect_name(t, &g.b, "MoralChanged") &&
		     expect_name(t, &g.b, "SurvivorKilled") &&
		     expect_name(t, &g.b, "MoralChanged") && expect_name(t, &g.b, "ActNow");
	}
	if (ok) {
		g.b.in_game = true;
		cl_sendf(&g.b, "{\"command\":\"EndTurn\"}\n");
		client *one[1] = { &g.b };
		ok = play_out(t, one, 1, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && !g.b.gameend)
			ok = fail(t, "no GameEnd: %s", g.b.seen);
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* A command sent one byte per write (1 ms apart, TCP_NODELAY), while the other
 * player sends complete lines in between: both are framed independently. */
static bool case_split_1byte(ctx *t)
{
	game2 g = GAME2_INIT;
	bool ok = start_turn(t, &g, 30);
	if (ok) {
		char line[160];
		int n = snprintf(line, sizeof line,
				 "{\"command\":\"Barricade\",\"x\":\"\xc3\xa9\xf0\x9f\xa7\x9f\","
				 "\"characterId\":%d,\"entrance\":1}\r\n",
				 g.a_chars[0]);
		for (int i = 0; ok && i < n; i++) {
			cl_send(&g.a, line + i, 1);
			sleep_ms(1);
			if (i % 20 == 10) {
				cl_sendf(&g.b, "{\"command\":\"EndTurn\"}\n");
				ok = expect_failed(t, &g.b, NULL);
			}
		}
		ok = ok && expect_name(t, &g.a, "Barricaded") && expect_name(t, &g.a, "ActNow") &&
		     expect_name(t, &g.b, "Barricaded");
	}
	ok = ok && finish_two(t, &g);
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* 1000 lines in one write from the active player, alternating bad input
 * (numbered unknown commands: CommandFailed naming the number) and failing
 * game commands (CommandFailed + ActNow), ending with EndTurn: every answer
 * comes in order; the other player hears only its ActNow. Then 20000
 * numbered bad lines from the other player in one write: answered in order. */
static bool case_pipeline_1000(ctx *t)
{
	game2 g = GAME2_INIT;
	bool ok = start_turn(t, &g, 30);
	if (ok) {
		size_t cap = 1000 * 80, len = 0;
		char *buf = xmalloc(cap);
		for (int i = 0; i < 1000; i++) {
			if (i == 999)
				len += (size_t)snprintf(buf + len, cap - len, "{\"command\":\"EndTurn\"}\n");
			else if (i % 2 == 0)
				len += (size_t)snprintf(buf + len, cap - len, "{\"command\":\"N%d\"}\n", i);
			else
				len += (size_t)snprintf(buf + len, cap - len,
							"{\"command\":\"Barricade\",\"characterId\":9999%d,"
							"\"entrance\":0}\n",
							i);
		}
		ok = cl_send(&g.a, buf, len);
		free(buf);
		if (!ok)
			fail(t, "sending the 1000 lines failed");
		for (int i = 0; ok && i < 999; i++) {
			if (i % 2 == 0) {
				char msg[64];
				snprintf(msg, sizeof msg, "unknown command \"N%d\"", i);
				ok = expect_failed(t, &g.a, msg);
			} else {
				ok = expect_failed(t, &g.a, NULL) && expect_name(t, &g.a, "ActNow");
			}
		}
		ok = ok && expect_name(t, &g.b, "ActNow") && expect_quiet(t, &g.a, 100);
	}
	if (ok) {
		int n = 20000;
		size_t cap = (size_t)n * 32, len = 0;
		char *buf = xmalloc(cap);
		for (int i = 0; i < n; i++)
			len += (size_t)snprintf(buf + len, cap - len, "{\"command\":\"M%d\"}\n", i);
		ok = cl_send(&g.b, buf, len);
		free(buf);
		for (int i = 0; ok && i < n; i++) {
			char msg[64];
			snprintf(msg, sizeof msg, "unknown command \"M%d\"", i);
			cJSON *ev = next_event(t, &g.b, WAIT_MS);
			const char *m = ev ? ev_str(ev, "message") : NULL;
			if (ev && (!m || strcmp(m, msg) != 0))
				fail(t, "client B: answer %d is %s, expected %s", i, m ? m : "?", msg);
			ok = ev && m && strcmp(m, msg) == 0;
			cJSON_Delete(ev);
		}
		ok = ok && expect_quiet(t, &g.a, 100);
	}
	if (ok) {
		g.a.in_game = g.b.in_game = true;
		cl_sendf(&g.b, "{\"command\":\"EndTurn\"}\n");
		client *both[2] = { &g.a, &g.b };
		ok = play_out(t, both, 2, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && !(g.a.gameend && g.b.gameend))
			ok = fail(t, "no GameEnd");
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* Connections that never say anything, opened before registration and after
 * the start: the game is played to the end around them; they receive nothing
 * but the final EOF, and do not delay the server's exit. */
static bool case_idle_clients(ctx *t)
{
	server s;
	client idle[10], a = CLIENT_INIT, b = CLIENT_INIT;
	for (int i = 0; i < 10; i++)
		idle[i] = (client)CLIENT_INIT;
	bool ok = srv_start(t, &s, g_cfg2, 2, NULL, 0);
	for (int i = 0; ok && i < 5; i++)
		ok = cl_connect(t, &idle[i], &s, "I", 0);
	ok = ok && cl_connect(t, &a, &s, "A", 0) && cl_connect(t, &b, &s, "B", 0);
	if (ok) {
		cl_sendf(&a, "{\"command\":\"Register\",\"playerName\":\"A\"}\n");
		ok = expect_name(t, &a, "Config");
		cl_sendf(&b, "{\"command\":\"Register\",\"playerName\":\"B\"}\n");
		ok = ok && expect_name(t, &b, "Config") && expect_name(t, &a, "GameStarted");
	}
	for (int i = 5; ok && i < 10; i++)
		ok = cl_connect(t, &idle[i], &s, "I", 0);
	int64_t t0 = now_ms();
	if (ok) {
		a.in_game = b.in_game = true;
		client *all[12] = { &a, &b };
		for (int i = 0; i < 10; i++)
			all[2 + i] = &idle[i];
		ok = play_out(t, all, 12, 8000);
	}
	if (ok) {
		for (int i = 0; ok && i < 10; i++)
			if (idle[i].seen[0])
				ok = fail(t, "idle client %d received: %.200s", i, idle[i].seen);
		if (ok && !(a.gameend && b.gameend))
			ok = fail(t, "no GameEnd (A: %s)", a.seen);
		ok = ok && srv_expect_exit0(t, &s, 3000);
		int64_t dt = now_ms() - t0;
		if (ok && dt > 4000)
			ok = fail(t, "the game took %lld ms with idle clients around",
				  (long long)dt);
	}
	srv_finish(t, &s);
	for (int i = 0; i < 10; i++)
		cl_close(&idle[i]);
	cl_close(&a);
	cl_close(&b);
	return ok;
}

/* Registration with one registered player and an idle unregistered
 * connection: the registration timeout (1 s) aborts it: RegistrationAborted
 * to the registered player only, both closed, exit 0. */
static bool case_timeout_registration(ctx *t)
{
	server s;
	client a = CLIENT_INIT, idle = CLIENT_INIT;
	bool ok = srv_start(t, &s, g_cfg2, 1, NULL, 0) && cl_connect(t, &idle, &s, "I", 0) &&
		  cl_connect(t, &a, &s, "A", 0);
	int64_t t0 = now_ms();
	if (ok) {
		cl_sendf(&a, "{\"command\":\"Register\",\"playerName\":\"A\"}\n");
		ok = expect_name(t, &a, "Config") && expect_name(t, &a, "RegistrationAborted") &&
		     expect_eof(t, &a, WAIT_MS) && expect_eof(t, &idle, WAIT_MS);
	}
	int64_t dt = now_ms() - t0;
	ok = ok && srv_expect_exit0(t, &s, 3000);
	if (ok && (dt < 800 || dt > 3000))
		ok = fail(t, "aborted after %lld ms, expected about 1000", (long long)dt);
	srv_finish(t, &s);
	cl_close(&a);
	cl_close(&idle);
	return ok;
}

/* Nobody ever connects: the registration times out all the same; exit 0. */
static bool case_timeout_nobody(ctx *t)
{
	server s;
	bool ok = srv_start(t, &s, g_cfg2, 1, NULL, 0) && srv_expect_exit0(t, &s, 4000);
	srv_finish(t, &s);
	return ok;
}

/* Bad input does not restart the timer (docs/protocol.md "Timeout"): garbage
 * every 250 ms from the registered player; the abort still comes ~2 s after
 * the Register. */
static bool case_timeout_garbage_no_restart(ctx *t)
{
	server s;
	client a = CLIENT_INIT;
	bool ok = srv_start(t, &s, g_cfg2, 2, NULL, 0) && cl_connect(t, &a, &s, "A", 0);
	int64_t t0 = now_ms();
	if (ok) {
		cl_sendf(&a, "{\"command\":\"Register\",\"playerName\":\"A\"}\n");
		ok = expect_name(t, &a, "Config");
	}
	int sent = 0;
	while (ok && now_ms() - t0 < 4000) {
		cl_sendf(&a, "garbage\n");
		sent++;
		cJSON *ev = next_event(t, &a, 1000);
		if (!ev) {
			ok = false;
			break;
		}
		bool aborted = strcmp(ev_name(ev), "RegistrationAborted") == 0;
		bool cf = strcmp(ev_name(ev), "CommandFailed") == 0;
		cJSON_Delete(ev);
		if (aborted)
			break;
		if (!cf)
			ok = fail(t, "unexpected event");
		sleep_ms(250);
	}
	int64_t dt = now_ms() - t0;
	if (ok && (dt < 1800 || dt > 3000))
		ok = fail(t, "aborted after %lld ms (%d garbage lines), expected about 2000",
			  (long long)dt, sent);
	ok = ok && srv_expect_exit0(t, &s, 4000);
	srv_finish(t, &s);
	cl_close(&a);
	return ok;
}

/* Every decoded command restarts the timer, also a failing one from the
 * player who is not active: with --timeout 2, B keeps A's turn alive for
 * 3 s; then A times out ~2 s after B's last command (as a Leave). */
static bool case_timeout_restarted_by_commands(ctx *t)
{
	game2 g = GAME2_INIT;
	bool ok = start_turn(t, &g, 2);
	int64_t t0 = now_ms(), last = t0;
	while (ok && now_ms() - t0 < 3000) {
		cl_sendf(&g.b, "{\"command\":\"EndTurn\"}\n");
		last = now_ms();
		ok = expect_failed(t, &g.b, NULL);
		sleep_ms(500);
	}
	ok = ok && expect_quiet(t, &g.a, 0);
	if (ok) {
		ok = expect_int(t, &g.a, "Left", "player", 0) && expect_eof(t, &g.a, WAIT_MS) &&
		     expect_int(t, &g.b, "Left", "player", 0);
		int64_t dt = now_ms() - last;
		if (ok && (dt < 1500 || dt > 3500))
			ok = fail(t, "A left %lld ms after B's last command, expected about 2000",
				  (long long)dt);
	}
	if (ok) {
		g.b.in_game = true;
		client *one[1] = { &g.b };
		ok = play_out(t, one, 1, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && (!g.b.gameend || !strstr(g.b.seen, "ActNow")))
			ok = fail(t, "B: %s", g.b.seen);
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* Timeout during character selection (--timeout 1): Left(0) to both, A
 * closed, B gets Characters and plays alone to the end. */
static bool case_timeout_selection(ctx *t)
{
	game2 g = GAME2_INIT;
	bool ok = srv_start(t, &g.s, g_cfg2, 1, NULL, 0) && reg_two(t, &g) &&
		  expect_name(t, &g.a, "Characters");
	int64_t t0 = now_ms();
	ok = ok && expect_int(t, &g.a, "Left", "player", 0) && expect_eof(t, &g.a, WAIT_MS) &&
	     expect_int(t, &g.b, "Left", "player", 0);
	int64_t dt = now_ms() - t0;
	if (ok && dt > 2500)
		ok = fail(t, "Left after %lld ms", (long long)dt);
	if (ok) {
		g.b.in_game = true;
		client *one[1] = { &g.b };
		ok = play_out(t, one, 1, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && (!g.b.gameend || strstr(g.b.seen, "Characters") != g.b.seen))
			ok = fail(t, "B: %s", g.b.seen);
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* Timeout in a turn (--timeout 1): as Leave: Left(0) to both (A closed),
 * A's characters die, B's turn starts. */
static bool case_timeout_turn(ctx *t)
{
	game2 g = GAME2_INIT;
	bool ok = start_turn(t, &g, 1);
	ok = ok && expect_int(t, &g.a, "Left", "player", 0) && expect_eof(t, &g.a, WAIT_MS) &&
	     expect_int(t, &g.b, "Left", "player", 0) && expect_name(t, &g.b, "SurvivorKilled") &&
	     expect_name(t, &g.b, "MoralChanged") && expect_name(t, &g.b, "SurvivorKilled") &&
	     expect_name(t, &g.b, "MoralChanged") && expect_name(t, &g.b, "ActNow");
	if (ok) {
		g.b.in_game = true;
		cl_sendf(&g.b, "{\"command\":\"EndTurn\"}\n");
		client *one[1] = { &g.b };
		ok = play_out(t, one, 1, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && !g.b.gameend)
			ok = fail(t, "no GameEnd: %s", g.b.seen);
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* Disconnect in the middle of a line: the half line is never executed.
 * (1) an unregistered client with half a Register: the next two registrants
 * are players 0 and 1; (2) B with half an EndTurn in A's turn: A's EndTurn
 * then finds B gone (Left 1). */
static bool case_disconnect_mid_line(ctx *t)
{
	game2 g = GAME2_INIT;
	client c = CLIENT_INIT;
	bool ok = srv_start(t, &g.s, g_cfg2, 30, NULL, 0) && cl_connect(t, &c, &g.s, "C", 0);
	if (ok) {
		cl_sendf(&c, "{\"command\":\"Register\",\"playerName\":\"C\"");
		sleep_ms(50);
		cl_close(&c);
		sleep_ms(50);
		client *both[2] = { &g.a, &g.b };
		ok = reg_two(t, &g) && select_two(t, &g.a, 0, g.a_chars, both, 2) &&
		     select_two(t, &g.b, 1, g.b_chars, both, 2) && round_start(t, &g.a, 6) &&
		     round_start(t, &g.b, 6) && expect_name(t, &g.a, "ActNow");
	}
	if (ok) {
		cl_sendf(&g.b, "{\"command\":\"EndTu");
		sleep_ms(50);
		cl_close(&g.b);
		ok = expect_quiet(t, &g.a, 200);
	}
	if (ok) {
		cl_sendf(&g.a, "{\"command\":\"EndTurn\"}\n");
		ok = expect_int(t, &g.a, "Left", "player", 1);
		g.a.in_game = true;
		client *one[1] = { &g.a };
		ok = ok && play_out(t, one, 1, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && !g.a.gameend)
			ok = fail(t, "no GameEnd: %s", g.a.seen);
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	cl_close(&c);
	return ok;
}


/* A registered player's connection drops during registration (3-player
 * config): it stays player 1, the game starts with C as player 2, and when
 * the game waits for player 1 (its selection) it leaves: Left(1) to A and C,
 * then C gets Characters; A and C play to the end. */
static bool case_disconnect_registration(ctx *t)
{
	server s;
	client a = CLIENT_INIT, b = CLIENT_INIT, c = CLIENT_INIT;
	bool ok = srv_start(t, &s, g_cfg3, 30, NULL, 0) && cl_connect(t, &a, &s, "A", 0) &&
		  cl_connect(t, &b, &s, "B", 0) && cl_connect(t, &c, &s, "C", 0);
	if (ok) {
		cl_sendf(&a, "{\"command\":\"Register\",\"playerName\":\"A\"}\n");
		ok = expect_name(t, &a, "Config");
		cl_sendf(&b, "{\"command\":\"Register\",\"playerName\":\"B\"}\n");
		ok = ok && expect_name(t, &b, "Config");
	}
	if (ok) {
		cl_close(&b);
		sleep_ms(100);
		ok = expect_quiet(t, &a, 0);
		cl_sendf(&c, "{\"command\":\"Register\",\"playerName\":\"C\"}\n");
		ok = ok && expect_name(t, &c, "Config");
	}
	client *ac[2] = { &a, &c };
	for (int i = 0; ok && i < 2; i++)
		ok = expect_name(t, ac[i], "GameStarted") &&
		     expect_int(t, ac[i], "Player", "player", 0) &&
		     expect_int(t, ac[i], "Player", "player", 1) &&
		     expect_int(t, ac[i], "Player", "player", 2);
	int chars[2];
	ok = ok && select_two(t, &a, 0, chars, ac, 2);
	ok = ok && expect_int(t, &a, "Left", "player", 1) && expect_int(t, &c, "Left", "player", 1);
	if (ok) {
		a.in_game = c.in_game = true;
		ok = play_out(t, ac, 2, 8000) && srv_expect_exit0(t, &s, 4000);
		if (ok && strncmp(c.seen, "Characters CharacterSpawned", 27) != 0)
			ok = fail(t, "C after Left(1): %.200s", c.seen);
		if (ok && !(a.gameend && c.gameend))
			ok = fail(t, "no GameEnd (A: %.300s)", a.seen);
	}
	srv_finish(t, &s);
	cl_close(&a);
	cl_close(&b);
	cl_close(&c);
	return ok;
}

/* The choosing player's connection drops during selection: Left(0) to B at
 * once, then B's Characters; B plays alone to the end. */
static bool case_disconnect_selection_chooser(ctx *t)
{
	game2 g = GAME2_INIT;
	bool ok = srv_start(t, &g.s, g_cfg2, 30, NULL, 0) && reg_two(t, &g) &&
		  expect_name(t, &g.a, "Characters");
	if (ok) {
		cl_close(&g.a);
		ok = expect_int(t, &g.b, "Left", "player", 0);
		g.b.in_game = true;
		client *one[1] = { &g.b };
		ok = ok && play_out(t, one, 1, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && (strncmp(g.b.seen, "Characters CharacterSpawned", 27) != 0 ||
			   !g.b.gameend))
			ok = fail(t, "B after Left(0): %.300s", g.b.seen);
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* The other player's connection drops while A chooses: nothing happens until
 * A has chosen; then the game waits for B, B leaves (Left(1) to A), and the
 * round starts with A alone. */
static bool case_disconnect_selection_other(ctx *t)
{
	game2 g = GAME2_INIT;
	bool ok = srv_start(t, &g.s, g_cfg2, 30, NULL, 0) && reg_two(t, &g);
	if (ok) {
		cl_close(&g.b);
		sleep_ms(100);
		client *one[1] = { &g.a };
		ok = select_two(t, &g.a, 0, g.a_chars, one, 1) &&
		     expect_int(t, &g.a, "Left", "player", 1) && expect_name(t, &g.a, "NextRound");
		g.a.in_game = true;
		ok = ok && play_out(t, one, 1, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && !g.a.gameend)
			ok = fail(t, "A: %.300s", g.a.seen);
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* The active player's connection drops mid-turn: as Leave (Left(0), its
 * characters die with their morale losses), B's turn starts at once. */
static bool case_disconnect_mid_turn(ctx *t)
{
	game2 g = GAME2_INIT;
	bool ok = start_turn(t, &g, 30);
	if (ok) {
		cl_close(&g.a);
		ok = expect_int(t, &g.b, "Left", "player", 0) &&
		     expect_name(t, &g.b, "SurvivorKilled") &&
		     expect_name(t, &g.b, "MoralChanged") &&
		     expect_name(t, &g.b, "SurvivorKilled") &&
		     expect_name(t, &g.b, "MoralChanged") && expect_name(t, &g.b, "ActNow");
	}
	if (ok) {
		g.b.in_game = true;
		cl_sendf(&g.b, "{\"command\":\"EndTurn\"}\n");
		client *one[1] = { &g.b };
		ok = play_out(t, one, 1, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && !g.b.gameend)
			ok = fail(t, "B: %.300s", g.b.seen);
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* The player who is not active resets its connection (SO_LINGER 0) while
 * thousands of answers are queued for it: the server survives the reset on
 * read and write, A hears nothing, and A's EndTurn finds B gone (Left 1). */
static bool case_reset_by_peer(ctx *t)
{
	game2 g = GAME2_INIT;
	g.b_rcvbuf = 16384;
	bool ok = start_turn(t, &g, 30);
	if (ok) {
		size_t n = 20000;
		char *buf = xmalloc(n * 2);
		for (size_t i = 0; i < n; i++) {
			buf[2 * i] = 'x';
			buf[2 * i + 1] = '\n';
		}
		cl_send_ex(&g.b, buf, n * 2, true, NULL);
		free(buf);
		struct linger lg = { 1, 0 };
		setsockopt(g.b.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
		cl_close(&g.b);
		ok = expect_quiet(t, &g.a, 200);
	}
	if (ok) {
		cl_sendf(&g.a, "{\"command\":\"EndTurn\"}\n");
		ok = expect_int(t, &g.a, "Left", "player", 1);
		g.a.in_game = true;
		client *one[1] = { &g.a };
		ok = ok && play_out(t, one, 1, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && !g.a.gameend)
			ok = fail(t, "A: %.300s", g.a.seen);
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* The active player sends EndTurn and at once shuts down its sending side:
 * the EndTurn still counts (B gets ActNow), A's connection is then lost
 * (closed by the server), and B plays the game to its end. */
static bool case_half_close(ctx *t)
{
	game2 g = GAME2_INIT;
	bool ok = start_turn(t, &g, 30);
	if (ok) {
		cl_sendf(&g.a, "{\"command\":\"EndTurn\"}\n");
		shutdown(g.a.fd, SHUT_WR);
		ok = expect_name(t, &g.b, "ActNow");
		/* A may or may not see anything more; its connection must end */
		int64_t until = now_ms() + WAIT_MS;
		while (ok && !g.a.eof && now_ms() < until)
			cl_fill(&g.a, 50);
		if (ok && !g.a.eof)
			ok = fail(t, "A's half-closed connection was never closed");
	}
	if (ok) {
		g.b.in_game = true;
		cl_sendf(&g.b, "{\"command\":\"EndTurn\"}\n");
		client *one[1] = { &g.b };
		ok = play_out(t, one, 1, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && !g.b.gameend)
			ok = fail(t, "B: %.300s", g.b.seen);
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/*
 * A registered player that never reads (B, small receive buffer) pipelines
 * up to 4 million bad lines ("x\n" -> 53-byte CommandFailed each: 200+ MiB of
 * answers if nothing stopped it). The server must drop B once more than
 * 8 MiB wait for it (our sends then fail), its memory must stay bounded
 * (VmHWM grows by less than 64 MiB), A hears nothing, and the game treats B
 * as gone: A's EndTurn finds Left(1), and the game ends normally.
 */
static bool case_slow_reader(ctx *t)
{
	game2 g = GAME2_INIT;
	g.b_rcvbuf = 16384;
	bool ok = start_turn(t, &g, 30);
	long rss0 = -1, hwm = -1;
	size_t sent_lines = 0;
	if (ok) {
		rss0 = proc_status_kb(g.s.pid, "VmRSS:");
		size_t chunk_lines = 32768;
		char *chunk = xmalloc(chunk_lines * 2);
		for (size_t i = 0; i < chunk_lines; i++) {
			chunk[2 * i] = 'x';
			chunk[2 * i + 1] = '\n';
		}
		bool dropped = false, stalled = false;
		while (sent_lines < 4000000) {
			if (!cl_send_ex(&g.b, chunk, chunk_lines * 2, true, &stalled)) {
				dropped = !stalled;
				break;
			}
			sent_lines += chunk_lines;
		}
		free(chunk);
		hwm = proc_status_kb(g.s.pid, "VmHWM:");
		if (g_verbose)
			printf("    slow reader: %zu lines sent before the drop; server VmRSS before "
			       "%ld kB, VmHWM %ld kB\n",
			       sent_lines, rss0, hwm);
		if (stalled)
			ok = fail(t, "the server stopped reading the slow reader without dropping it");
		else if (!dropped)
			ok = fail(t, "the slow reader was never dropped (%zu lines sent)", sent_lines);
		else if (hwm < 0 || rss0 < 0)
			ok = fail(t, "cannot read the server's memory use");
		else if (hwm - rss0 > RSS_LIMIT_KB)
			ok = fail(t, "the server's memory grew by %ld kB (limit %d kB)", hwm - rss0,
				  RSS_LIMIT_KB);
	}
	if (ok) {
		/* what B got before the cut: answers only, far less than it asked for */
		while (cl_fill(&g.b, 200) > 0) {
		}
		size_t got = g.b.total_in;
		if (g_verbose)
			printf("    slow reader received %zu bytes in all\n", got);
		if (!g.b.eof)
			ok = fail(t, "the slow reader's connection is still open");
		else if (got >= sent_lines * 53)
			ok = fail(t, "the slow reader got every answer (%zu bytes)", got);
	}
	ok = ok && expect_quiet(t, &g.a, 100);
	if (ok) {
		cl_sendf(&g.a, "{\"command\":\"EndTurn\"}\n");
		ok = expect_int(t, &g.a, "Left", "player", 1);
		g.a.in_game = true;
		client *one[1] = { &g.a };
		ok = ok && play_out(t, one, 1, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && !g.a.gameend)
			ok = fail(t, "A: %.300s", g.a.seen);
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* Commands from a connection that is not a player: each gets exactly one
 * CommandFailed, nothing else. */
static bool extras_try(ctx *t, client *ex, int n)
{
	static const char *const cmds[] = {
		"{\"command\":\"Register\",\"playerName\":\"X\"}\n",
		"{\"command\":\"StartGame\"}\n",
		"{\"command\":\"SelectCharacters\",\"characterId0\":2000,\"characterId1\":2001}\n",
		"{\"command\":\"Leave\"}\n",
		"{\"command\":\"EndTurn\"}\n",
		"{\"command\":\"Move\",\"characterId\":2000,\"locationId\":3001}\n",
		"{\"command\":\"Barricade\",\"characterId\":2000,\"entrance\":1}\n",
		"{\"command\":\"UseAbility\",\"characterId\":2000}\n",
		"not json\n",
	};
	for (int k = 0; k < n; k++)
		for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
			cl_send(&ex[k], cmds[i], strlen(cmds[i]));
			if (!expect_failed(t, &ex[k], NULL))
				return false;
		}
	/* and 100 pipelined in one write */
	char buf[100 * 24];
	size_t len = 0;
	for (int i = 0; i < 100; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "{\"command\":\"Leave\"}\n");
	cl_send(&ex[0], buf, len);
	for (int i = 0; i < 100; i++)
		if (!expect_failed(t, &ex[0], NULL))
			return false;
	return true;
}

/* More connections than players: one extra connected before registration,
 * two after the start, 40 idle ones. During selection and during a turn,
 * every command from an extra (Register/StartGame after the start, in-game
 * commands, SelectCharacters, Leave, bad input, 100 pipelined Leaves) gets
 * exactly one CommandFailed and nothing else; the players hear nothing of it,
 * the active player's turn goes on, and the game ends normally. */
static bool case_extra_connections(ctx *t)
{
	game2 g = GAME2_INIT;
	client ex[3] = { CLIENT_INIT, CLIENT_INIT, CLIENT_INIT };
	client idle[40];
	for (int i = 0; i < 40; i++)
		idle[i] = (client)CLIENT_INIT;
	bool ok = srv_start(t, &g.s, g_cfg2, 30, NULL, 0) && cl_connect(t, &ex[0], &g.s, "E0", 0);
	for (int i = 0; ok && i < 20; i++)
		ok = cl_connect(t, &idle[i], &g.s, "I", 0);
	ok = ok && reg_two(t, &g);
	ok = ok && cl_connect(t, &ex[1], &g.s, "E1", 0) && cl_connect(t, &ex[2], &g.s, "E2", 0);
	for (int i = 20; ok && i < 40; i++)
		ok = cl_connect(t, &idle[i], &g.s, "I", 0);
	/* selection phase: A is choosing */
	ok = ok && extras_try(t, ex, 3);
	client *both[2] = { &g.a, &g.b };
	ok = ok && select_two(t, &g.a, 0, g.a_chars, both, 2) &&
	     select_two(t, &g.b, 1, g.b_chars, both, 2) && round_start(t, &g.a, 6) &&
	     round_start(t, &g.b, 6) && expect_name(t, &g.a, "ActNow");
	/* A's turn */
	ok = ok && extras_try(t, ex, 3) && expect_quiet(t, &g.a, 50) && expect_quiet(t, &g.b, 0);
	if (ok) {
		cl_sendf(&g.a, "{\"command\":\"Barricade\",\"characterId\":%d,\"entrance\":1}\n",
			 g.a_chars[0]);
		ok = expect_name(t, &g.a, "Barricaded") && expect_name(t, &g.a, "ActNow") &&
		     expect_name(t, &g.b, "Barricaded");
	}
	if (ok) {
		g.a.in_game = g.b.in_game = true;
		cl_sendf(&g.a, "{\"command\":\"EndTurn\"}\n");
		client *all[45] = { &g.a, &g.b, &ex[0], &ex[1], &ex[2] };
		for (int i = 0; i < 40; i++)
			all[5 + i] = &idle[i];
		ok = play_out(t, all, 45, 10000) && srv_expect_exit0(t, &g.s, 4000);
		for (int k = 0; ok && k < 3; k++)
			if (ex[k].seen[0])
				ok = fail(t, "extra connection %d received %.200s", k, ex[k].seen);
		for (int i = 0; ok && i < 40; i++)
			if (idle[i].seen[0])
				ok = fail(t, "idle connection received %.200s", idle[i].seen);
		if (ok && !(g.a.gameend && g.b.gameend))
			ok = fail(t, "no GameEnd (A: %.300s)", g.a.seen);
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	for (int k = 0; k < 3; k++)
		cl_close(&ex[k]);
	for (int i = 0; i < 40; i++)
		cl_close(&idle[i]);
	return ok;
}

/* 50 connections send Register at (nearly) the same time to a 2-player game:
 * each gets exactly one first answer, exactly two get Config, the other 48
 * CommandFailed and nothing else; the two play to the end. */
static bool case_register_flood(ctx *t)
{
	enum { N = 50 };
	server s;
	client c[N];
	for (int i = 0; i < N; i++)
		c[i] = (client)CLIENT_INIT;
	bool ok = srv_start(t, &s, g_cfg2, 30, NULL, 0);
	for (int i = 0; ok && i < N; i++)
		ok = cl_connect(t, &c[i], &s, "R", 0);
	for (int i = 0; ok && i < N; i++)
		cl_sendf(&c[i], "{\"command\":\"Register\",\"playerName\":\"R%d\"}\n", i);
	int configs = 0;
	for (int i = 0; ok && i < N; i++) {
		cJSON *ev = next_event(t, &c[i], WAIT_MS);
		if (!ev) {
			ok = false;
			break;
		}
		if (!strcmp(ev_name(ev), "Config")) {
			configs++;
			c[i].in_game = true;
		} else if (strcmp(ev_name(ev), "CommandFailed") != 0) {
			ok = fail(t, "client %d: first answer %s", i, ev_name(ev));
		}
		cJSON_Delete(ev);
	}
	if (ok && configs != 2)
		ok = fail(t, "%d connections got Config, expected 2", configs);
	if (ok) {
		client *all[N];
		for (int i = 0; i < N; i++)
			all[i] = &c[i];
		ok = play_out(t, all, N, 10000) && srv_expect_exit0(t, &s, 4000);
		for (int i = 0; ok && i < N; i++) {
			if (c[i].in_game && !c[i].gameend)
				ok = fail(t, "player connection %d: %.200s", i, c[i].seen);
			else if (!c[i].in_game && c[i].seen[0])
				ok = fail(t, "refused connection %d received %.200s", i, c[i].seen);
		}
	}
	srv_finish(t, &s);
	for (int i = 0; i < N; i++)
		cl_close(&c[i]);
	return ok;
}

/* The server runs out of file descriptors (RLIMIT_NOFILE 32) while 100
 * clients connect: it must neither crash nor spin (CPU use over one second
 * of exhaustion stays low), and once the crowd is gone, two players connect,
 * register and play to the end. */
static bool case_fd_exhaustion(ctx *t)
{
	enum { N = 100 };
	server s;
	client c[N], a = CLIENT_INIT, b = CLIENT_INIT;
	for (int i = 0; i < N; i++)
		c[i] = (client)CLIENT_INIT;
	bool ok = srv_start(t, &s, g_cfg2, 30, NULL, 32);
	for (int i = 0; ok && i < N; i++)
		ok = cl_connect(t, &c[i], &s, "F", 0);
	if (ok) {
		sleep_ms(300);
		long cpu0 = proc_cpu_ticks(s.pid);
		sleep_ms(1000);
		long cpu1 = proc_cpu_ticks(s.pid);
		long hz = sysconf(_SC_CLK_TCK);
		if (g_verbose)
			printf("    CPU while out of descriptors: %ld ticks in 1 s (%ld/s)\n",
			       cpu1 - cpu0, hz);
		if (cpu0 < 0 || cpu1 < 0)
			ok = fail(t, "cannot read the server's CPU time");
		else if ((cpu1 - cpu0) * 10 > hz)
			ok = fail(t, "the server used %ld of %ld ticks in 1 s while out of descriptors",
				  cpu1 - cpu0, hz);
		char *log = read_file(s.errpath, NULL);
		if (ok && (!log || !strstr(log, "accept failed")))
			ok = fail(t, "no \"accept failed\" in the log: descriptors never ran out?");
		free(log);
	}
	for (int i = 0; i < N; i++)
		cl_close(&c[i]);
	if (ok) {
		sleep_ms(300);
		ok = cl_connect(t, &a, &s, "A", 0) && cl_connect(t, &b, &s, "B", 0);
	}
	if (ok) {
		cl_sendf(&a, "{\"command\":\"Register\",\"playerName\":\"A\"}\n");
		ok = expect_name(t, &a, "Config");
		cl_sendf(&b, "{\"command\":\"Register\",\"playerName\":\"B\"}\n");
		ok = ok && expect_name(t, &b, "Config");
		a.in_game = b.in_game = true;
		client *both[2] = { &a, &b };
		ok = ok && play_out(t, both, 2, 8000) && srv_expect_exit0(t, &s, 4000);
		if (ok && !(a.gameend && b.gameend))
			ok = fail(t, "no GameEnd (A: %.300s)", a.seen);
	}
	srv_finish(t, &s);
	cl_close(&a);
	cl_close(&b);
	return ok;
}

/* A signal in the middle of a turn: exit 0 within 2 s, every client sees EOF. */
static bool signal_case(ctx *t, int sig, int sig2)
{
	game2 g = GAME2_INIT;
	bool ok = start_turn(t, &g, 30);
	if (ok) {
		int64_t t0 = now_ms();
		kill(g.s.pid, sig);
		if (sig2)
			kill(g.s.pid, sig2);
		ok = srv_expect_exit0(t, &g.s, 2000) && expect_eof(t, &g.a, 1000) &&
		     expect_eof(t, &g.b, 1000);
		if (ok && now_ms() - t0 > 2000)
			ok = fail(t, "took %lld ms", (long long)(now_ms() - t0));
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

static bool case_sigterm_turn(ctx *t)
{
	return signal_case(t, SIGTERM, 0);
}

static bool case_sigint_turn(ctx *t)
{
	return signal_case(t, SIGINT, 0);
}

static bool case_sigterm_twice(ctx *t)
{
	return signal_case(t, SIGTERM, SIGINT);
}

/* SIGTERM during registration: exit 0, the registered and the unregistered
 * connection both see EOF. */
static bool case_sigterm_registration(ctx *t)
{
	server s;
	client a = CLIENT_INIT, u = CLIENT_INIT;
	bool ok = srv_start(t, &s, g_cfg2, 30, NULL, 0) && cl_connect(t, &a, &s, "A", 0) &&
		  cl_connect(t, &u, &s, "U", 0);
	if (ok) {
		cl_sendf(&a, "{\"command\":\"Register\",\"playerName\":\"A\"}\n");
		ok = expect_name(t, &a, "Config");
		kill(s.pid, SIGTERM);
		ok = ok && srv_expect_exit0(t, &s, 2000) && expect_eof(t, &a, 1000) &&
		     expect_eof(t, &u, 1000);
	}
	srv_finish(t, &s);
	cl_close(&a);
	cl_close(&u);
	return ok;
}

/* SIGTERM while a client that does not read has megabytes of output queued:
 * the flush is capped, the server still exits 0 within 2 s. */
static bool case_sigterm_unread_output(ctx *t)
{
	game2 g = GAME2_INIT;
	g.b_rcvbuf = 16384;
	bool ok = start_turn(t, &g, 30);
	if (ok) {
		size_t n = 100000; /* ~5 MB of answers: below the cap, above socket buffers */
		char *buf = xmalloc(n * 2);
		for (size_t i = 0; i < n; i++) {
			buf[2 * i] = 'x';
			buf[2 * i + 1] = '\n';
		}
		bool stalled = false;
		ok = cl_send_ex(&g.b, buf, n * 2, true, &stalled);
		free(buf);
		if (!ok)
			fail(t, "sending failed (stalled: %d)", stalled);
	}
	if (ok) {
		sleep_ms(300);
		int64_t t0 = now_ms();
		kill(g.s.pid, SIGTERM);
		ok = srv_expect_exit0(t, &g.s, 2000) && expect_eof(t, &g.a, 1000);
		if (ok && now_ms() - t0 > 2000)
			ok = fail(t, "took %lld ms", (long long)(now_ms() - t0));
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* Deeply nested JSON: 20000 levels in an ignored key is malformed (cJSON's
 * nesting limit; no stack overflow), 500 levels are fine and ignored, and a
 * line of 65536 '[' is malformed. Only bad-input answers (no ActNow) except
 * for the valid command. */
static bool case_deep_nesting(ctx *t)
{
	game2 g = GAME2_INIT;
	bool ok = start_turn(t, &g, 30);
	/* far too deep, and deep but within the limit (64 levels) */
	int depths[2] = { 20000, 60 };
	for (int k = 0; ok && k < 2; k++) {
		int d = depths[k];
		char *line = xmalloc((size_t)d * 2 + 200);
		int n = sprintf(line, "{\"command\":\"Barricade\",\"characterId\":%d,\"entrance\":1,\"x\":",
				g.a_chars[0]);
		memset(line + n, '[', (size_t)d);
		memset(line + n + d, ']', (size_t)d);
		strcpy(line + n + 2 * d, "}\n");
		cl_send(&g.a, line, strlen(line));
		free(line);
		if (k == 0)
			ok = expect_failed_prefix(t, &g.a, "malformed JSON at byte ");
		else
			ok = expect_name(t, &g.a, "Barricaded") && expect_name(t, &g.a, "ActNow") &&
			     expect_name(t, &g.b, "Barricaded");
	}
	if (ok) {
		char *line = make_line(MAX_LINE, '[', "\n");
		cl_send(&g.a, line, strlen(line));
		free(line);
		ok = expect_failed_prefix(t, &g.a, "malformed JSON at byte ") && expect_quiet(t, &g.a, 100) &&
		     expect_quiet(t, &g.b, 0);
	}
	ok = ok && finish_two(t, &g);
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* A 65000-byte player name (32500 x U+00E9, as raw UTF-8) and one with
 * escaped control characters round-trip exactly through Player events. */
static bool case_long_name(ctx *t)
{
	game2 g = GAME2_INIT;
	bool ok = srv_start(t, &g.s, g_cfg2, 30, NULL, 0) && cl_connect(t, &g.a, &g.s, "A", 0) &&
		  cl_connect(t, &g.b, &g.s, "B", 0);
	size_t nl = 65000;
	char *name = xmalloc(nl + 1);
	for (size_t i = 0; i < nl; i += 2) {
		name[i] = (char)0xc3;
		name[i + 1] = (char)0xa9;
	}
	name[nl] = '\0';
	if (ok) {
		char *line = xmalloc(nl + 64);
		int n = sprintf(line, "{\"command\":\"Register\",\"playerName\":\"%s\"}\n", name);
		ok = (size_t)n <= MAX_LINE + 1 && cl_send(&g.a, line, (size_t)n);
		free(line);
		ok = ok && expect_name(t, &g.a, "Config");
		cl_sendf(&g.b, "{\"command\":\"Register\",\"playerName\":\"\\u0001\\t\\n\\\"\\\\\\u001f\"}\n");
		ok = ok && expect_name(t, &g.b, "Config");
	}
	client *both[2] = { &g.a, &g.b };
	for (int i = 0; ok && i < 2; i++) {
		ok = expect_name(t, both[i], "GameStarted");
		cJSON *p0 = ok ? expect_ev(t, both[i], "Player") : NULL;
		cJSON *p1 = p0 ? expect_ev(t, both[i], "Player") : NULL;
		const char *n0 = p0 ? ev_str(p0, "playerName") : NULL;
		const char *n1 = p1 ? ev_str(p1, "playerName") : NULL;
		if (!p1)
			ok = false;
		else if (!n0 || strcmp(n0, name) != 0)
			ok = fail(t, "client %s: the long name did not round-trip", both[i]->name);
		else if (!n1 || strcmp(n1, "\x01\t\n\"\\\x1f") != 0)
			ok = fail(t, "client %s: the control-character name did not round-trip",
				  both[i]->name);
		cJSON_Delete(p0);
		cJSON_Delete(p1);
	}
	free(name);
	if (ok) {
		g.a.in_game = g.b.in_game = true;
		ok = play_out(t, both, 2, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && !(g.a.gameend && g.b.gameend))
			ok = fail(t, "no GameEnd");
	}
	srv_finish(t, &g.s);
	game2_close(&g);
	return ok;
}

/* A configuration of over 9 MiB (one location name that long): its Config
 * event alone is larger than the 8 MiB output cap. Both players still get it
 * whole, with the file's exact text, and the game goes on (the cap used to
 * count it as a client that does not read and drop every player). */
static bool case_config_9mib(ctx *t)
{
	size_t len;
	char *txt = read_file(g_cfg2, &len);
	char *key = txt ? strstr(txt, "\"name\"") : NULL;
	char *open = key ? strchr(key + 6, '"') : NULL;
	char *close = open ? strchr(open + 1, '"') : NULL;
	if (!close)
		return fail(t, "%s has no \"name\" string", g_cfg2);
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/config-9mib.json", g_tmpdir);
	FILE *f = fopen(path, "wb");
	if (!f)
		die("write config");
	size_t nl = (size_t)9 << 20;
	fwrite(txt, 1, (size_t)(open + 1 - txt), f);
	for (size_t i = 0; i < nl; i++)
		fputc('N', f);
	fwrite(close, 1, len - (size_t)(close - txt), f);
	fclose(f);
	free(txt);
	char *want = read_file(path, &len);

	game2 g = GAME2_INIT;
	bool ok = srv_start(t, &g.s, path, 30, NULL, 0) && cl_connect(t, &g.a, &g.s, "A", 0) &&
		  cl_connect(t, &g.b, &g.s, "B", 0);
	client *both[2] = { &g.a, &g.b };
	for (int i = 0; ok && i < 2; i++) {
		cl_sendf(both[i], "{\"command\":\"Register\",\"playerName\":\"%c\"}\n",
			 'A' + i);
		cJSON *ev = expect_ev(t, both[i], "Config");
		const char *got = ev ? ev_str(ev, "config") : NULL;
		if (!ev)
			ok = false;
		else if (!got || strlen(got) != len || memcmp(got, want, len) != 0)
			ok = fail(t, "client %s: Config is not the file's text (%zu of %zu bytes)",
				  both[i]->name, got ? strlen(got) : 0, len);
		cJSON_Delete(ev);
	}
	for (int i = 0; ok && i < 2; i++)
		ok = expect_name(t, both[i], "GameStarted") &&
		     expect_int(t, both[i], "Player", "player", 0) &&
		     expect_int(t, both[i], "Player", "player", 1);
	if (ok) {
		g.a.in_game = g.b.in_game = true;
		ok = play_out(t, both, 2, 8000) && srv_expect_exit0(t, &g.s, 4000);
		if (ok && !(g.a.gameend && g.b.gameend))
			ok = fail(t, "no GameEnd");
	}
	free(want);
	srv_finish(t, &g.s);
	game2_close(&g);
	unlink(path);
	return ok;
}

typedef struct {
	const char *name;
	bool (*fn)(ctx *);
} fault_case;

static const fault_case g_cases[] = {
	{ "line_10mib", case_line_10mib },
	{ "line_70k_unterminated", case_line_70k_unterminated },
	{ "line_70k_then_close", case_line_70k_then_close },
	{ "line_limit_boundary", case_line_limit_boundary },
	{ "split_1byte_writes", case_split_1byte },
	{ "pipeline_1000", case_pipeline_1000 },
	{ "deep_nesting", case_deep_nesting },
	{ "long_name", case_long_name },
	{ "config_9mib", case_config_9mib },
	{ "idle_clients", case_idle_clients },
	{ "extra_connections", case_extra_connections },
	{ "register_flood", case_register_flood },
	{ "disconnect_mid_line", case_disconnect_mid_line },
	{ "disconnect_registration", case_disconnect_registration },
	{ "disconnect_selection_chooser", case_disconnect_selection_chooser },
	{ "disconnect_selection_other", case_disconnect_selection_other },
	{ "disconnect_mid_turn", case_disconnect_mid_turn },
	{ "reset_by_peer", case_reset_by_peer },
	{ "half_close", case_half_close },
	{ "slow_reader", case_slow_reader },
	{ "fd_exhaustion", case_fd_exhaustion },
	{ "timeout_registration", case_timeout_registration },
	{ "timeout_nobody", case_timeout_nobody },
	{ "timeout_garbage_no_restart", case_timeout_garbage_no_restart },
	{ "timeout_restarted_by_commands", case_timeout_restarted_by_commands },
	{ "timeout_selection", case_timeout_selection },
	{ "timeout_turn", case_timeout_turn },
	{ "sigterm_registration", case_sigterm_registration },
	{ "sigterm_turn", case_sigterm_turn },
	{ "sigint_turn", case_sigint_turn },
	{ "sigterm_twice", case_sigterm_twice },
	{ "sigterm_unread_output", case_sigterm_unread_output },
};

static const fault_case *cases_table(size_t *n)
{
	*n = sizeof g_cases / sizeof g_cases[0];
	return g_cases;
}

int main(int argc, char **argv)
{
	const char *config = NULL, *only = NULL;
	bool list = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--server") && i + 1 < argc)
			g_server = argv[++i];
		else if (!strcmp(argv[i], "--config") && i + 1 < argc)
			config = argv[++i];
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v"))
			g_verbose = true;
		else if (!strcmp(argv[i], "--list"))
			list = true;
		else {
			fprintf(stderr, "usage: sopra-faults --server PATH --config PATH "
					"[--only SUBSTRING] [--verbose] [--list]\n");
			return 2;
		}
	}
	size_t ncases;
	const fault_case *cases = cases_table(&ncases);
	if (list) {
		for (size_t i = 0; i < ncases; i++)
			puts(cases[i].name);
		return 0;
	}
	if (!g_server || !config) {
		fprintf(stderr, "sopra-faults: --server and --config are required\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	const char *tmp = getenv("TMPDIR");
	snprintf(g_tmpdir, sizeof g_tmpdir, "%s/sopra-faults-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(g_tmpdir))
		die("mkdtemp");
	write_config(config, 2, g_cfg2, sizeof g_cfg2);
	write_config(config, 3, g_cfg3, sizeof g_cfg3);

	int passed = 0, failed = 0;
	for (size_t i = 0; i < ncases; i++) {
		if (only && !strstr(cases[i].name, only))
			continue;
		ctx t;
		memset(&t, 0, sizeof t);
		if (g_verbose)
			printf("---- %s\n", cases[i].name);
		fflush(stdout);
		int64_t t0 = now_ms();
		bool ok = cases[i].fn(&t) && !t.failed;
		int64_t dt = now_ms() - t0;
		if (ok) {
			printf("PASS %s (%lld ms)\n", cases[i].name, (long long)dt);
			passed++;
		} else {
			printf("FAIL %s: %s\n", cases[i].name, t.msg[0] ? t.msg : "(no reason)");
			failed++;
		}
		fflush(stdout);
	}
	printf("%d passed, %d failed\n", passed, failed);
	unlink(g_cfg2);
	unlink(g_cfg3);
	rmdir(g_tmpdir);
	return failed ? 1 : 0;
}
