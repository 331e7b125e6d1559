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
 * The file has three parts: the server and the clients of one case (the runner
 * finishes the server and closes every connection after the case), the steps
 * the cases share (register, select, play the game out), and the cases, each a
 * function of a few lines listed in g_cases at the end.
 *
 * See docs/robustness.md for what each case proves.
 */
#define _DEFAULT_SOURCE 1
#include <assert.h>
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

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sopra/xalloc.h"
#include "srvproc.h"
#include "toolutil.h"

#if defined(__GNUC__)
#define PRINTF_LIKE(a, b) __attribute__((format(printf, a, b)))
#else
#define PRINTF_LIKE(a, b)
#endif

#define WAIT_MS 5000   /* default wait for one event */
#define PLAY_MS 8000   /* default time to play a game out */
#define EXIT_MS 4000   /* default wait for the server's exit after the game */
#define MAX_LINE 65536 /* PROTO_MAX_LINE */
#define RSS_LIMIT_KB (64 * 1024)
#define MAX_CONNS 128 /* connections of one case */

#define END_TURN "{\"command\":\"EndTurn\"}\n"

static bool g_verbose;
static char g_tmpdir[1024];
static const char *g_server;
static char g_cfg2[PATH_MAX], g_cfg3[PATH_MAX]; /* 2 and 3 players */

static void die(const char *what)
{
    perror(what);
    exit(2);
}

/* ---- one case: its server and its connections ------------------------------ */

typedef struct {
    struct srvproc proc; /* pid 0: no server */
    char errpath[PATH_MAX];
} server;

typedef struct {
    int fd;
    char *buf; /* received, not yet consumed */
    size_t len, cap;
    bool eof;        /* EOF or connection reset seen */
    bool reset;      /* it was a reset */
    size_t total_in; /* bytes received in all */
    char seen[2048]; /* play_out: names of the events it saw */
    bool gameend;    /* play_out: saw GameEnd or RegistrationAborted */
    bool in_game;    /* play_out: answers Characters/ActNow */
    char name[8];
} client;

typedef struct {
    char msg[1024]; /* first failure */
    bool failed;
    server s;                 /* the case's server; the runner finishes it */
    client *conns[MAX_CONNS]; /* every connection; the runner closes them */
    int nconns;
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

#define CHECK(t, cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return fail((t), __VA_ARGS__);                                                         \
    } while (0)

/* ---- the server process ------------------------------------------------- */

/* Start the case's server with cfg, --timeout timeout_s, seed 56 and the
 * options of extra (NULL-terminated, at most 6; NULL: none); nofile > 0
 * lowers its RLIMIT_NOFILE. Waits until it reports the port it listens on. */
static bool srv_start_with(ctx *t, const char *cfg, int timeout_s, long nofile,
                           const char *const *extra)
{
    static int serial;
    server *s = &t->s;
    memset(s, 0, sizeof *s);
    snprintf(s->errpath, sizeof s->errpath, "%s/server-%d.log", g_tmpdir, ++serial);
    int efd = open(s->errpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (efd < 0)
        die("open server log");
    char tbuf[16];
    snprintf(tbuf, sizeof tbuf, "%d", timeout_s);
    const char *argv[16] = {g_server, "--config", cfg,         "--port", "0",
                            "--seed", "56",       "--timeout", tbuf};
    for (int i = 9, k = 0; extra && extra[k]; k++, i++) {
        assert(i < 15);
        argv[i] = extra[k];
    }
    const struct spawn_opts so = {.nofile = nofile};
    const struct srvproc_opts o = {.out = SPAWN_NULL, .log = efd, .spawn = &so};
    int port = srvproc_start(&s->proc, argv, &o, 10000);
    int e = errno;
    close(efd);
    switch (port) {
    case SRVPROC_NOT_STARTED:
        return fail(t, "cannot start %s: %s", g_server, strerror(e));
    case SRVPROC_EXITED:
        return fail(t, "the server exited before listening");
    case SRVPROC_TIMEOUT:
        return fail(t, "the server did not report its port within 10 s");
    default:
        return true;
    }
}

/* srv_start_with no extra options: the server as a host starts it. */
static bool srv_start(ctx *t, const char *cfg, int timeout_s, long nofile)
{
    return srv_start_with(t, cfg, timeout_s, nofile, NULL);
}

/* Options for the cases that open many strangers from 127.0.0.1 (players
 * behind one address, or a crowd that must exhaust descriptors rather than
 * the per-address limit). */
static const char *const g_one_address_crowd[] = {"--max-strangers-per-address", "1000", NULL};

/* The server must exit by itself with code 0 within ms. */
static bool srv_expect_exit0(ctx *t, int ms)
{
    struct srvproc *s = &t->s.proc;
    if (!srvproc_reap(s, ms))
        return fail(t, "the server did not exit within %d ms", ms);
    if (WIFSIGNALED(s->status))
        return fail(t, "the server was killed by signal %d", WTERMSIG(s->status));
    if (WEXITSTATUS(s->status) != 0)
        return fail(t, "the server exited with code %d, expected 0", WEXITSTATUS(s->status));
    return true;
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

/* After a case: kill a server that is still running (a failure unless the
 * case failed already), then scan its log for sanitizer reports. */
static void srv_finish(ctx *t)
{
    server *s = &t->s;
    if (s->proc.pid <= 0)
        return;
    if (!srvproc_reap(&s->proc, 0)) {
        fail(t, "the server was still running at the end of the case");
        kill(s->proc.pid, SIGKILL);
        srvproc_reap(&s->proc, 5000);
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
    s->proc.pid = 0;
}

/* ---- clients ---------------------------------------------------------- */

/* A new connection to the case's server (TCP_NODELAY, non-blocking; rcvbuf >
 * 0: its SO_RCVBUF). A failed connect is recorded; check t->failed. */
static client *conn(ctx *t, const char *name, int rcvbuf)
{
    if (t->nconns == MAX_CONNS) {
        fprintf(stderr, "sopra-faults: more than %d connections in one case\n", MAX_CONNS);
        exit(2);
    }
    client *c = xcalloc(1, sizeof *c);
    t->conns[t->nconns++] = c;
    snprintf(c->name, sizeof c->name, "%s", name);
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0)
        die("socket");
    if (rcvbuf > 0)
        setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons((unsigned short)t->s.proc.port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(c->fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
        fail(t, "client %s: connect: %s", name, strerror(errno));
        c->eof = true;
        return c;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    return c;
}

/* n new connections named name: cls[0..n). False if one failed. */
static bool conn_n(ctx *t, client **cls, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        cls[i] = conn(t, name, 0);
    return !t->failed;
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
    struct pollfd p = {c->fd, POLLIN, 0};
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
    if (c->fd < 0)
        return false;
    while (len > 0) {
        struct pollfd pf = {c->fd, (short)(POLLOUT | (no_read ? 0 : POLLIN)), 0};
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
            } else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
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
            *out = xmemdup0(c->buf, n);
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

/* ---- what the clients send ------------------------------------------------- */

static void register_as(client *c, const char *player_name)
{
    cl_sendf(c, "{\"command\":\"Register\",\"playerName\":\"%s\"}\n", player_name);
}

static void end_turn(client *c)
{
    cl_sendf(c, END_TURN);
}

/* n bytes of fill followed by tail (malloc'd). */
static char *make_line(size_t n, char fill, const char *tail)
{
    char *p = xmalloc(n + strlen(tail) + 1);
    memset(p, fill, n);
    strcpy(p + n, tail);
    return p;
}

/* The JSON object text head padded with blanks to n bytes, the last one its
 * closing '}', then tail ("\n" or "\r\n"). */
static char *padded_line(const char *head, size_t n, const char *tail)
{
    char *line = make_line(n, ' ', tail);
    memcpy(line, head, strlen(head));
    line[n - 1] = '}';
    return line;
}

/* line repeated n times in one buffer (malloc'd); *len gets its length. */
static char *repeat_line(const char *line, size_t n, size_t *len)
{
    size_t l = strlen(line);
    char *buf = xmalloc(n * l + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(buf + i * l, line, l);
    buf[n * l] = '\0';
    *len = n * l;
    return buf;
}

/* ---- what the clients receive ---------------------------------------------- */

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

/* Next event is CommandFailed with a non-empty message: exactly msg (unless
 * msg is NULL), or, with prefix, one starting with msg. */
static bool expect_failed_msg(ctx *t, client *c, const char *msg, bool prefix)
{
    cJSON *ev = expect_ev(t, c, "CommandFailed");
    if (!ev)
        return false;
    const char *m = ev_str(ev, "message");
    bool ok = m && *m && (!msg || (prefix ? strncmp(m, msg, strlen(msg)) : strcmp(m, msg)) == 0);
    if (!ok)
        fail(t, "client %s: CommandFailed message \"%s\", expected \"%s%s\"", c->name,
             m ? m : "(none)", msg ? msg : "(non-empty)", prefix ? "..." : "");
    cJSON_Delete(ev);
    return ok;
}

static bool expect_failed(ctx *t, client *c, const char *msg)
{
    return expect_failed_msg(t, c, msg, false);
}

static bool expect_failed_prefix(ctx *t, client *c, const char *prefix)
{
    return expect_failed_msg(t, c, prefix, true);
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
        return fail(t, "client %s: expected silence, got %.*s", c->name, n > 200 ? 200 : n, c->buf);
    }
    CHECK(t, !c->eof, "client %s: expected silence, but the connection closed", c->name);
    return true;
}

/* The events play_out logged for c start with prefix. */
static bool expect_seen_first(ctx *t, client *c, const char *prefix)
{
    CHECK(t, strncmp(c->seen, prefix, strlen(prefix)) == 0,
          "client %s: saw %.300s, expected it to start with %s", c->name, c->seen, prefix);
    return true;
}

/* ---- playing a game out ---------------------------------------------------- */

static void seen_add(client *c, const char *s)
{
    size_t n = strlen(c->seen);
    if (n + strlen(s) + 2 < sizeof c->seen) {
        if (n)
            c->seen[n++] = ' ';
        strcpy(c->seen + n, s);
    }
}

/* Read and log every complete line c has: "Left:1" style for player events;
 * an in-game client answers Characters with its first two offers and ActNow
 * with EndTurn. */
static bool play_lines(ctx *t, client *c)
{
    char *line = NULL;
    while (cl_line(c, 0, &line) > 0) {
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
                     cJSON_IsTrue(cJSON_GetObjectItem(ev, "win")) ? "true" : "false");
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
            end_turn(c);
        cJSON_Delete(ev);
    }
    return true;
}

/* Play the game out (play_lines for every client) until every client has
 * seen EOF; fails after ms. */
static bool play_out(ctx *t, client **cls, int n, int ms)
{
    int64_t until = now_ms() + ms;
    for (;;) {
        bool all_eof = true;
        for (int i = 0; i < n; i++) {
            if (!play_lines(t, cls[i]))
                return false;
            if (!cls[i]->eof)
                all_eof = false;
        }
        if (all_eof)
            return true;
        if (now_ms() >= until) {
            for (int i = 0; i < n; i++)
                if (!cls[i]->eof)
                    return fail(t, "client %s: not closed after %d ms; saw: %.300s", cls[i]->name,
                                ms, cls[i]->seen);
            return true;
        }
        struct pollfd pf[MAX_CONNS];
        int np = 0;
        for (int i = 0; i < n && np < MAX_CONNS; i++)
            if (!cls[i]->eof)
                pf[np++] = (struct pollfd){cls[i]->fd, POLLIN, 0};
        poll(pf, (nfds_t)np, 20);
        for (int i = 0; i < n; i++)
            if (!cls[i]->eof)
                cl_read_once(cls[i]);
    }
}

/* The game's end: play_out within play_ms, then the server exits 0 within
 * exit_ms; every in-game client saw GameEnd (or RegistrationAborted) and
 * every other connection received nothing at all. */
static bool play_to_end_ms(ctx *t, client **cls, int n, int play_ms, int exit_ms)
{
    if (!play_out(t, cls, n, play_ms) || !srv_expect_exit0(t, exit_ms))
        return false;
    for (int i = 0; i < n; i++) {
        const client *c = cls[i];
        CHECK(t, !c->in_game || c->gameend, "client %s: no GameEnd: %.300s", c->name, c->seen);
        CHECK(t, c->in_game || !c->seen[0],
              "connection %d (%s) is not a player but received %.200s", i, c->name, c->seen);
    }
    return true;
}

static bool play_to_end(ctx *t, client **cls, int n)
{
    return play_to_end_ms(t, cls, n, PLAY_MS, EXIT_MS);
}

/* c is the last player: it plays the game to its end alone (after an EndTurn
 * first, with end_turn_first). */
static bool play_alone(ctx *t, client *c, bool end_turn_first)
{
    c->in_game = true;
    if (end_turn_first)
        end_turn(c);
    return play_to_end(t, &c, 1);
}

/* ---- the steps of a 2-player game -------------------------------------------- */

typedef struct {
    client *a, *b; /* player 0 and player 1 */
    int a_chars[2], b_chars[2];
} game2;

/* c registers with its own name and gets Config. */
static bool join(ctx *t, client *c)
{
    register_as(c, c->name);
    return expect_name(t, c, "Config");
}

/* The game starts for c: GameStarted, then Player 0 .. nplayers-1. */
static bool expect_start(ctx *t, client *c, int nplayers)
{
    if (!expect_name(t, c, "GameStarted"))
        return false;
    for (int p = 0; p < nplayers; p++)
        if (!expect_int(t, c, "Player", "player", p))
            return false;
    return true;
}

/* Connect A and B (B with SO_RCVBUF b_rcvbuf when > 0) and register both
 * (2-player config); both see the start (A's Characters is A's next event). */
static bool reg_two(ctx *t, game2 *g, int b_rcvbuf)
{
    memset(g, 0, sizeof *g);
    g->a = conn(t, "A", 0);
    g->b = conn(t, "B", b_rcvbuf);
    return !t->failed && join(t, g->a) && join(t, g->b) && expect_start(t, g->a, 2) &&
           expect_start(t, g->b, 2);
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

/* After reg_two: both select, the round starts, A's ActNow is consumed (it is
 * A's turn); B has seen everything up to the dice. */
static bool begin_round(ctx *t, game2 *g)
{
    client *both[2] = {g->a, g->b};
    return select_two(t, g->a, 0, g->a_chars, both, 2) &&
           select_two(t, g->b, 1, g->b_chars, both, 2) && round_start(t, g->a, 6) &&
           round_start(t, g->b, 6) && expect_name(t, g->a, "ActNow");
}

/* A server with --timeout timeout_s, two registered players, A's turn. */
static bool start_turn(ctx *t, game2 *g, int timeout_s, int b_rcvbuf)
{
    return srv_start(t, g_cfg2, timeout_s, 0) && reg_two(t, g, b_rcvbuf) && begin_round(t, g);
}

/* A's Barricade went through: Barricaded and ActNow to A, Barricaded to B. */
static bool expect_barricaded(ctx *t, game2 *g)
{
    return expect_name(t, g->a, "Barricaded") && expect_name(t, g->a, "ActNow") &&
           expect_name(t, g->b, "Barricaded");
}

/* Player p left in its turn, as c sees it: Left(p), its two characters die
 * (SurvivorKilled, MoralChanged each), and c's turn starts. */
static bool expect_left_in_turn(ctx *t, client *c, int p)
{
    return expect_int(t, c, "Left", "player", p) && expect_name(t, c, "SurvivorKilled") &&
           expect_name(t, c, "MoralChanged") && expect_name(t, c, "SurvivorKilled") &&
           expect_name(t, c, "MoralChanged") && expect_name(t, c, "ActNow");
}

/* B's connection is gone (closed, reset or dropped) in A's turn: A hears
 * nothing of it for quiet_ms; A's EndTurn finds B gone (Left 1), and A plays
 * the game to its end alone. */
static bool b_found_gone(ctx *t, game2 *g, int quiet_ms)
{
    if (!expect_quiet(t, g->a, quiet_ms))
        return false;
    end_turn(g->a);
    return expect_int(t, g->a, "Left", "player", 1) && play_alone(t, g->a, false);
}

/* A (active) ends its turn, B ends its turn; both see the colony phase and
 * GameEnd, then EOF; the server exits 0. */
static bool finish_two(ctx *t, game2 *g)
{
    g->a->in_game = g->b->in_game = true;
    end_turn(g->a);
    client *both[2] = {g->a, g->b};
    return play_to_end(t, both, 2);
}

/* Send sig (and sig2 unless 0) to the server: it exits 0 within 2 s, then
 * each of cls[0..n) sees EOF within 1 s; with timed, all of that within 2 s. */
static bool stop_by_signal(ctx *t, int sig, int sig2, client **cls, int n, bool timed)
{
    int64_t t0 = now_ms();
    kill(t->s.proc.pid, sig);
    if (sig2)
        kill(t->s.proc.pid, sig2);
    if (!srv_expect_exit0(t, 2000))
        return false;
    for (int i = 0; i < n; i++)
        if (!expect_eof(t, cls[i], 1000))
            return false;
    int64_t dt = now_ms() - t0;
    CHECK(t, !timed || dt <= 2000, "took %lld ms", (long long)dt);
    return true;
}

/* ---- the cases -------------------------------------------------------- */

/* A 10 MiB line from the player who is not active: CommandFailed("line too
 * long"), then the connection is closed; the active player hears nothing;
 * the game goes on and skips the lost player as Left when it waits for it;
 * the server's memory stays small. */
static bool case_line_10mib(ctx *t)
{
    game2 g;
    if (!start_turn(t, &g, 30, 0))
        return false;
    size_t n = (size_t)10 << 20;
    char *big = make_line(n, 'a', "\n");
    cl_send(g.b, big, n + 1); /* may fail half-way: the server cuts us off */
    free(big);
    if (!expect_failed(t, g.b, "line too long") || !expect_eof(t, g.b, WAIT_MS) ||
        !expect_quiet(t, g.a, 200))
        return false;
    long rss = proc_status_kib(t->s.proc.pid, "VmHWM");
    if (g_verbose)
        printf("    server VmHWM after the 10 MiB line: %ld kB\n", rss);
    CHECK(t, rss <= RSS_LIMIT_KB, "server VmHWM %ld kB after the 10 MiB line", rss);
    end_turn(g.a);
    return expect_int(t, g.a, "Left", "player", 1) && expect_name(t, g.a, "SurvivorKilled") &&
           play_alone(t, g.a, false);
}

/* 70 000 bytes without a newline from an unregistered connection during
 * registration: answered and closed without waiting for the end of the
 * line; registration is unaffected (ids 0 and 1 go to the next two). */
static bool case_line_70k_unterminated(ctx *t)
{
    if (!srv_start(t, g_cfg2, 30, 0))
        return false;
    client *c = conn(t, "C", 0), *a = conn(t, "A", 0), *b = conn(t, "B", 0);
    if (t->failed)
        return false;
    char *big = make_line(70000, '{', "");
    cl_send(c, big, 70000);
    free(big);
    if (!expect_failed(t, c, "line too long") || !expect_eof(t, c, WAIT_MS))
        return false;
    register_as(a, "A");
    register_as(b, "B");
    a->in_game = b->in_game = true;
    client *both[2] = {a, b};
    return play_to_end(t, both, 2) &&
           expect_seen_first(t, a, "Config GameStarted Player:0 Player:1") &&
           expect_seen_first(t, b, "Config GameStarted Player:0 Player:1");
}

/* 70 000 bytes without a newline from the player who is not active, and the
 * client closes at once: the game loses the player (Left when it waits for
 * it) and plays on. */
static bool case_line_70k_then_close(ctx *t)
{
    game2 g;
    if (!start_turn(t, &g, 30, 0))
        return false;
    char *big = make_line(70000, 'x', "");
    cl_send(g.b, big, 70000);
    free(big);
    cl_close(g.b);
    return b_found_gone(t, &g, 200);
}

/* Exactly 65536 bytes (plus "\n" or "\r\n") is a line; 65537 is too long and
 * costs the active player its connection: it leaves at once. */
static bool case_line_limit_boundary(ctx *t)
{
    game2 g;
    if (!start_turn(t, &g, 30, 0))
        return false;
    const char *tails[2] = {"\n", "\r\n"};
    for (int i = 0; i < 2; i++) {
        char head[128];
        snprintf(head, sizeof head, "{\"command\":\"Barricade\",\"characterId\":%d,\"entrance\":%d",
                 g.a_chars[0], i + 1);
        char *line = padded_line(head, MAX_LINE, tails[i]);
        cl_send(g.a, line, strlen(line));
        free(line);
        if (!expect_barricaded(t, &g))
            return false;
    }
    char *line = padded_line("{\"command\":\"EndTurn\"", MAX_LINE + 1, "\n");
    cl_send(g.a, line, strlen(line));
    free(line);
    return expect_failed(t, g.a, "line too long") && expect_eof(t, g.a, WAIT_MS) &&
           expect_left_in_turn(t, g.b, 0) && play_alone(t, g.b, true);
}

/* A command sent one byte per write (1 ms apart, TCP_NODELAY), while the other
 * player sends complete lines in between: both are framed independently. */
static bool case_split_1byte(ctx *t)
{
    game2 g;
    if (!start_turn(t, &g, 30, 0))
        return false;
    char line[160];
    int n = snprintf(line, sizeof line,
                     "{\"command\":\"Barricade\",\"x\":\"\xc3\xa9\xf0\x9f\xa7\x9f\","
                     "\"characterId\":%d,\"entrance\":1}\r\n",
                     g.a_chars[0]);
    for (int i = 0; i < n; i++) {
        cl_send(g.a, line + i, 1);
        sleep_ms(1);
        if (i % 20 == 10) {
            end_turn(g.b);
            if (!expect_failed(t, g.b, NULL))
                return false;
        }
    }
    return expect_barricaded(t, &g) && finish_two(t, &g);
}

/* 1000 lines in one write from the active player, alternating bad input
 * (numbered unknown commands: CommandFailed naming the number) and failing
 * game commands (CommandFailed + ActNow), ending with EndTurn: every answer
 * comes in order; the other player hears only its ActNow. Then 4352
 * numbered bad lines from the other player in one write (more than its
 * socket buffers hold; paced, a second's worth): answered in order. */
static bool case_pipeline_1000(ctx *t)
{
    game2 g;
    if (!start_turn(t, &g, 30, 0))
        return false;
    size_t cap = 1000 * 80, len = 0;
    char *buf = xmalloc(cap);
    for (int i = 0; i < 1000; i++) {
        if (i == 999)
            len += (size_t)snprintf(buf + len, cap - len, END_TURN);
        else if (i % 2 == 0)
            len += (size_t)snprintf(buf + len, cap - len, "{\"command\":\"N%d\"}\n", i);
        else
            len += (size_t)snprintf(buf + len, cap - len,
                                    "{\"command\":\"Barricade\",\"characterId\":9999%d,"
                                    "\"entrance\":0}\n",
                                    i);
    }
    bool sent = cl_send(g.a, buf, len);
    free(buf);
    CHECK(t, sent, "sending the 1000 lines failed");
    for (int i = 0; i < 999; i++) {
        char msg[64];
        snprintf(msg, sizeof msg, "unknown command \"N%d\"", i);
        if (i % 2 == 0 ? !expect_failed(t, g.a, msg)
                       : !expect_failed(t, g.a, NULL) || !expect_name(t, g.a, "ActNow"))
            return false;
    }
    if (!expect_name(t, g.b, "ActNow") || !expect_quiet(t, g.a, 100))
        return false;

    int n = 4352;
    cap = (size_t)n * 32, len = 0;
    buf = xmalloc(cap);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, cap - len, "{\"command\":\"M%d\"}\n", i);
    sent = cl_send(g.b, buf, len);
    free(buf);
    if (!sent)
        return false;
    for (int i = 0; i < n; i++) {
        char msg[64];
        snprintf(msg, sizeof msg, "unknown command \"M%d\"", i);
        cJSON *ev = next_event(t, g.b, WAIT_MS);
        const char *m = ev ? ev_str(ev, "message") : NULL;
        bool ok = ev && m && strcmp(m, msg) == 0;
        if (ev && !ok)
            fail(t, "client B: answer %d is %s, expected %s", i, m ? m : "?", msg);
        cJSON_Delete(ev);
        if (!ok)
            return false;
    }
    if (!expect_quiet(t, g.a, 100))
        return false;
    g.a->in_game = g.b->in_game = true;
    end_turn(g.b);
    client *both[2] = {g.a, g.b};
    return play_to_end(t, both, 2);
}

/* Deeply nested JSON: 20000 levels in an ignored key is malformed (cJSON's
 * nesting limit; no stack overflow), 500 levels are fine and ignored, and a
 * line of 65536 '[' is malformed. Only bad-input answers (no ActNow) except
 * for the valid command. */
static bool case_deep_nesting(ctx *t)
{
    game2 g;
    if (!start_turn(t, &g, 30, 0))
        return false;
    /* far too deep, and deep but within the limit (64 levels) */
    int depths[2] = {20000, 60};
    for (int k = 0; k < 2; k++) {
        int d = depths[k];
        char *line = xmalloc((size_t)d * 2 + 200);
        int n = sprintf(line, "{\"command\":\"Barricade\",\"characterId\":%d,\"entrance\":1,\"x\":",
                        g.a_chars[0]);
        memset(line + n, '[', (size_t)d);
        memset(line + n + d, ']', (size_t)d);
        strcpy(line + n + 2 * d, "}\n");
        cl_send(g.a, line, strlen(line));
        free(line);
        if (k == 0 ? !expect_failed_prefix(t, g.a, "malformed JSON at byte ")
                   : !expect_barricaded(t, &g))
            return false;
    }
    char *line = make_line(MAX_LINE, '[', "\n");
    cl_send(g.a, line, strlen(line));
    free(line);
    return expect_failed_prefix(t, g.a, "malformed JSON at byte ") && expect_quiet(t, g.a, 100) &&
           expect_quiet(t, g.b, 0) && finish_two(t, &g);
}

/* A 65000-byte player name (32500 x U+00E9, as raw UTF-8) and one with
 * escaped control characters round-trip exactly through Player events. */
static bool case_long_name(ctx *t)
{
    if (!srv_start(t, g_cfg2, 30, 0))
        return false;
    client *a = conn(t, "A", 0), *b = conn(t, "B", 0), *both[2] = {a, b};
    if (t->failed)
        return false;
    size_t nl = 65000;
    char *name = xmalloc(nl + 1);
    for (size_t i = 0; i < nl; i += 2) {
        name[i] = (char)0xc3;
        name[i + 1] = (char)0xa9;
    }
    name[nl] = '\0';
    char *line = xmalloc(nl + 64);
    int n = sprintf(line, "{\"command\":\"Register\",\"playerName\":\"%s\"}\n", name);
    bool ok =
        (size_t)n <= MAX_LINE + 1 && cl_send(a, line, (size_t)n) && expect_name(t, a, "Config");
    free(line);
    if (ok) {
        register_as(b, "\\u0001\\t\\n\\\"\\\\\\u001f");
        ok = expect_name(t, b, "Config");
    }
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
            ok = fail(t, "client %s: the control-character name did not round-trip", both[i]->name);
        cJSON_Delete(p0);
        cJSON_Delete(p1);
    }
    free(name);
    if (!ok)
        return false;
    a->in_game = b->in_game = true;
    return play_to_end(t, both, 2);
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
    if (!close) {
        free(txt);
        return fail(t, "%s has no \"name\" string", g_cfg2);
    }
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

    client *both[2] = {NULL, NULL};
    bool ok = srv_start(t, path, 30, 0);
    if (ok) {
        both[0] = conn(t, "A", 0);
        both[1] = conn(t, "B", 0);
        ok = !t->failed;
    }
    for (int i = 0; ok && i < 2; i++) {
        register_as(both[i], both[i]->name);
        cJSON *ev = expect_ev(t, both[i], "Config");
        const char *got = ev ? ev_str(ev, "config") : NULL;
        if (!ev)
            ok = false;
        else if (!got || strlen(got) != len || memcmp(got, want, len) != 0)
            ok = fail(t, "client %s: Config is not the file's text (%zu of %zu bytes)",
                      both[i]->name, got ? strlen(got) : 0, len);
        cJSON_Delete(ev);
    }
    free(want);
    unlink(path);
    if (!ok || !expect_start(t, both[0], 2) || !expect_start(t, both[1], 2))
        return false;
    both[0]->in_game = both[1]->in_game = true;
    return play_to_end(t, both, 2);
}

/* Connections that never say anything, opened before registration and after
 * the start: the game is played to the end around them; they receive nothing
 * but the final EOF, and do not delay the server's exit. */
static bool case_idle_clients(ctx *t)
{
    if (!srv_start(t, g_cfg2, 2, 0))
        return false;
    client *all[12]; /* A, B and 10 idle connections */
    conn_n(t, all + 2, 5, "I");
    client *a = all[0] = conn(t, "A", 0), *b = all[1] = conn(t, "B", 0);
    if (t->failed || !join(t, a) || !join(t, b) || !expect_name(t, a, "GameStarted"))
        return false;
    if (!conn_n(t, all + 7, 5, "I"))
        return false;
    int64_t t0 = now_ms();
    a->in_game = b->in_game = true;
    if (!play_to_end_ms(t, all, 12, PLAY_MS, 3000))
        return false;
    int64_t dt = now_ms() - t0;
    CHECK(t, dt <= 4000, "the game took %lld ms with idle clients around", (long long)dt);
    return true;
}

/* Commands from a connection that is not a player: each gets exactly one
 * CommandFailed, nothing else. */
static bool extras_try(ctx *t, client **ex, int n)
{
    static const char *const cmds[] = {
        "{\"command\":\"Register\",\"playerName\":\"X\"}\n",
        "{\"command\":\"StartGame\"}\n",
        "{\"command\":\"SelectCharacters\",\"characterId0\":2000,\"characterId1\":2001}\n",
        "{\"command\":\"Leave\"}\n",
        END_TURN,
        "{\"command\":\"Move\",\"characterId\":2000,\"locationId\":3001}\n",
        "{\"command\":\"Barricade\",\"characterId\":2000,\"entrance\":1}\n",
        "{\"command\":\"UseAbility\",\"characterId\":2000}\n",
        "not json\n",
    };
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
            cl_send(ex[k], cmds[i], strlen(cmds[i]));
            if (!expect_failed(t, ex[k], NULL))
                return false;
        }
    /* and 100 pipelined in one write */
    size_t len;
    char *buf = repeat_line("{\"command\":\"Leave\"}\n", 100, &len);
    cl_send(ex[0], buf, len);
    free(buf);
    for (int i = 0; i < 100; i++)
        if (!expect_failed(t, ex[0], NULL))
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
    game2 g;
    client *all[45]; /* A, B, the 3 extras, the 40 idle connections */
    client **ex = all + 2, **idle = all + 5;
    if (!srv_start_with(t, g_cfg2, 30, 0, g_one_address_crowd))
        return false;
    ex[0] = conn(t, "E0", 0);
    if (!conn_n(t, idle, 20, "I") || !reg_two(t, &g, 0))
        return false;
    ex[1] = conn(t, "E1", 0);
    ex[2] = conn(t, "E2", 0);
    conn_n(t, idle + 20, 20, "I");
    /* selection phase: A is choosing */
    if (t->failed || !extras_try(t, ex, 3) || !begin_round(t, &g))
        return false;
    /* A's turn */
    if (!extras_try(t, ex, 3) || !expect_quiet(t, g.a, 50) || !expect_quiet(t, g.b, 0))
        return false;
    cl_sendf(g.a, "{\"command\":\"Barricade\",\"characterId\":%d,\"entrance\":1}\n", g.a_chars[0]);
    if (!expect_barricaded(t, &g))
        return false;
    all[0] = g.a;
    all[1] = g.b;
    g.a->in_game = g.b->in_game = true;
    end_turn(g.a);
    return play_to_end_ms(t, all, 45, 10000, EXIT_MS);
}

/* 50 connections send Register at (nearly) the same time to a 2-player game:
 * each gets exactly one first answer, exactly two get Config, the other 48
 * CommandFailed and nothing else; the two play to the end. */
static bool case_register_flood(ctx *t)
{
    enum { N = 50 };
    if (!srv_start_with(t, g_cfg2, 30, 0, g_one_address_crowd))
        return false;
    client *c[N];
    if (!conn_n(t, c, N, "R"))
        return false;
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "R%d", i);
        register_as(c[i], name);
    }
    int configs = 0;
    for (int i = 0; i < N; i++) {
        cJSON *ev = next_event(t, c[i], WAIT_MS);
        if (!ev)
            return false;
        bool config = !strcmp(ev_name(ev), "Config");
        bool refused = !strcmp(ev_name(ev), "CommandFailed");
        if (!config && !refused)
            fail(t, "client %d: first answer %s", i, ev_name(ev));
        cJSON_Delete(ev);
        if (!config && !refused)
            return false;
        configs += config;
        c[i]->in_game = config;
    }
    CHECK(t, configs == 2, "%d connections got Config, expected 2", configs);
    return play_to_end_ms(t, c, N, 10000, EXIT_MS);
}

/* The server runs out of file descriptors (RLIMIT_NOFILE 32) while 100
 * clients connect: it must neither crash nor spin (CPU use over one second
 * of exhaustion stays low), and once the crowd is gone, two players connect,
 * register and play to the end. */
static bool case_fd_exhaustion(ctx *t)
{
    enum { N = 100 };
    if (!srv_start_with(t, g_cfg2, 30, 32, g_one_address_crowd))
        return false;
    client *c[N];
    if (!conn_n(t, c, N, "F"))
        return false;
    sleep_ms(300);
    long cpu0 = proc_cpu_ticks(t->s.proc.pid);
    sleep_ms(1000);
    long cpu1 = proc_cpu_ticks(t->s.proc.pid);
    long hz = sysconf(_SC_CLK_TCK);
    if (g_verbose)
        printf("    CPU while out of descriptors: %ld ticks in 1 s (%ld/s)\n", cpu1 - cpu0, hz);
    CHECK(t, cpu0 >= 0 && cpu1 >= 0, "cannot read the server's CPU time");
    CHECK(t, (cpu1 - cpu0) * 10 <= hz,
          "the server used %ld of %ld ticks in 1 s while out of descriptors", cpu1 - cpu0, hz);
    char *log = read_file(t->s.errpath, NULL);
    bool ran_out = log && strstr(log, "accept failed");
    free(log);
    CHECK(t, ran_out, "no \"accept failed\" in the log: descriptors never ran out?");
    for (int i = 0; i < N; i++)
        cl_close(c[i]);
    sleep_ms(300);
    client *a = conn(t, "A", 0), *b = conn(t, "B", 0), *both[2] = {a, b};
    if (t->failed || !join(t, a) || !join(t, b))
        return false;
    a->in_game = b->in_game = true;
    return play_to_end(t, both, 2);
}

/* A registered player's connection drops during registration (3-player
 * config): it stays player 1, the game starts with C as player 2, and when
 * the game waits for player 1 (its selection) it leaves: Left(1) to A and C,
 * then C gets Characters; A and C play to the end. */
static bool case_disconnect_registration(ctx *t)
{
    if (!srv_start(t, g_cfg3, 30, 0))
        return false;
    client *a = conn(t, "A", 0), *b = conn(t, "B", 0), *c = conn(t, "C", 0);
    if (t->failed || !join(t, a) || !join(t, b))
        return false;
    cl_close(b);
    sleep_ms(100);
    client *ac[2] = {a, c};
    int chars[2];
    if (!expect_quiet(t, a, 0) || !join(t, c) || !expect_start(t, a, 3) || !expect_start(t, c, 3) ||
        !select_two(t, a, 0, chars, ac, 2) || !expect_int(t, a, "Left", "player", 1) ||
        !expect_int(t, c, "Left", "player", 1))
        return false;
    a->in_game = c->in_game = true;
    return play_to_end(t, ac, 2) && expect_seen_first(t, c, "Characters CharacterSpawned");
}

/* Disconnect in the middle of a line: the half line is never executed.
 * (1) an unregistered client with half a Register: the next two registrants
 * are players 0 and 1; (2) B with half an EndTurn in A's turn: A's EndTurn
 * then finds B gone (Left 1). */
static bool case_disconnect_mid_line(ctx *t)
{
    game2 g;
    if (!srv_start(t, g_cfg2, 30, 0))
        return false;
    client *c = conn(t, "C", 0);
    if (t->failed)
        return false;
    cl_sendf(c, "{\"command\":\"Register\",\"playerName\":\"C\"");
    sleep_ms(50);
    cl_close(c);
    sleep_ms(50);
    if (!reg_two(t, &g, 0) || !begin_round(t, &g))
        return false;
    cl_sendf(g.b, "{\"command\":\"EndTu");
    sleep_ms(50);
    cl_close(g.b);
    return b_found_gone(t, &g, 200);
}

/* The choosing player's connection drops during selection: Left(0) to B at
 * once, then B's Characters; B plays alone to the end. */
static bool case_disconnect_selection_chooser(ctx *t)
{
    game2 g;
    if (!srv_start(t, g_cfg2, 30, 0) || !reg_two(t, &g, 0) || !expect_name(t, g.a, "Characters"))
        return false;
    cl_close(g.a);
    return expect_int(t, g.b, "Left", "player", 0) && play_alone(t, g.b, false) &&
           expect_seen_first(t, g.b, "Characters CharacterSpawned");
}

/* The other player's connection drops while A chooses: nothing happens until
 * A has chosen; then the game waits for B, B leaves (Left(1) to A), and the
 * round starts with A alone. */
static bool case_disconnect_selection_other(ctx *t)
{
    game2 g;
    if (!srv_start(t, g_cfg2, 30, 0) || !reg_two(t, &g, 0))
        return false;
    cl_close(g.b);
    sleep_ms(100);
    return select_two(t, g.a, 0, g.a_chars, &g.a, 1) && expect_int(t, g.a, "Left", "player", 1) &&
           expect_name(t, g.a, "NextRound") && play_alone(t, g.a, false);
}

/* The active player's connection drops mid-turn: as Leave (Left(0), its
 * characters die with their morale losses), B's turn starts at once. */
static bool case_disconnect_mid_turn(ctx *t)
{
    game2 g;
    if (!start_turn(t, &g, 30, 0))
        return false;
    cl_close(g.a);
    return expect_left_in_turn(t, g.b, 0) && play_alone(t, g.b, true);
}

/* The player who is not active resets its connection (SO_LINGER 0) while
 * thousands of answers are queued for it: the server survives the reset on
 * read and write, A hears nothing, and A's EndTurn finds B gone (Left 1). */
static bool case_reset_by_peer(ctx *t)
{
    game2 g;
    if (!start_turn(t, &g, 30, 16384))
        return false;
    size_t len;
    char *buf = repeat_line("x\n", 20000, &len);
    cl_send_ex(g.b, buf, len, true, NULL);
    free(buf);
    struct linger lg = {1, 0};
    setsockopt(g.b->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    cl_close(g.b);
    return b_found_gone(t, &g, 200);
}

/* The active player sends EndTurn and at once shuts down its sending side:
 * the EndTurn still counts (B gets ActNow), A's connection is then lost
 * (closed by the server), and B plays the game to its end. */
static bool case_half_close(ctx *t)
{
    game2 g;
    if (!start_turn(t, &g, 30, 0))
        return false;
    end_turn(g.a);
    shutdown(g.a->fd, SHUT_WR);
    if (!expect_name(t, g.b, "ActNow"))
        return false;
    /* A may or may not see anything more; its connection must end */
    int64_t until = now_ms() + WAIT_MS;
    while (!g.a->eof && now_ms() < until)
        cl_fill(g.a, 50);
    CHECK(t, g.a->eof, "A's half-closed connection was never closed");
    return play_alone(t, g.b, true);
}

/*
 * A registered player that never reads (B, small receive buffer) pipelines
 * up to 4 million bad lines ("x\n" -> 53-byte CommandFailed each: 200+ MiB of
 * answers if nothing stopped it). The server paces B (4,096 answers a
 * second) and, once the kernel's buffers are full (a few MiB on loopback:
 * some seconds at that pace) and B's answers wait unread, holds them to
 * 64 KiB: it drops B (our sends then fail), its memory stays bounded (VmHWM
 * grows by less than 64 MiB), A hears nothing, and the game treats B as
 * gone: A's EndTurn finds Left(1), and the game ends normally.
 */
static bool case_slow_reader(ctx *t)
{
    game2 g;
    if (!start_turn(t, &g, 30, 16384))
        return false;
    long rss0 = proc_status_kib(t->s.proc.pid, "VmRSS");
    size_t chunk_lines = 32768, chunk_len, sent_lines = 0;
    char *chunk = repeat_line("x\n", chunk_lines, &chunk_len);
    bool dropped = false, stalled = false;
    while (sent_lines < 4000000) {
        if (!cl_send_ex(g.b, chunk, chunk_len, true, &stalled)) {
            dropped = !stalled;
            break;
        }
        sent_lines += chunk_lines;
    }
    free(chunk);
    long hwm = proc_status_kib(t->s.proc.pid, "VmHWM");
    if (g_verbose)
        printf("    slow reader: %zu lines sent before the drop; server VmRSS before "
               "%ld kB, VmHWM %ld kB\n",
               sent_lines, rss0, hwm);
    CHECK(t, !stalled, "the server stopped reading the slow reader without dropping it");
    CHECK(t, dropped, "the slow reader was never dropped (%zu lines sent)", sent_lines);
    CHECK(t, hwm >= 0 && rss0 >= 0, "cannot read the server's memory use");
    CHECK(t, hwm - rss0 <= RSS_LIMIT_KB, "the server's memory grew by %ld kB (limit %d kB)",
          hwm - rss0, RSS_LIMIT_KB);
    /* what B got before the cut: answers only, far less than it asked for */
    while (cl_fill(g.b, 200) > 0) {
    }
    size_t got = g.b->total_in;
    if (g_verbose)
        printf("    slow reader received %zu bytes in all\n", got);
    CHECK(t, g.b->eof, "the slow reader's connection is still open");
    CHECK(t, got < sent_lines * 53, "the slow reader got every answer (%zu bytes)", got);
    return b_found_gone(t, &g, 100);
}

/* Registration with one registered player and an idle unregistered
 * connection: the registration timeout (1 s) aborts it: RegistrationAborted
 * to the registered player only, both closed, exit 0. */
static bool case_timeout_registration(ctx *t)
{
    if (!srv_start(t, g_cfg2, 1, 0))
        return false;
    client *idle = conn(t, "I", 0), *a = conn(t, "A", 0);
    if (t->failed)
        return false;
    int64_t t0 = now_ms();
    if (!join(t, a) || !expect_name(t, a, "RegistrationAborted") || !expect_eof(t, a, WAIT_MS) ||
        !expect_eof(t, idle, WAIT_MS))
        return false;
    int64_t dt = now_ms() - t0;
    if (!srv_expect_exit0(t, 3000))
        return false;
    CHECK(t, dt >= 800 && dt <= 3000, "aborted after %lld ms, expected about 1000", (long long)dt);
    return true;
}

/* Nobody ever connects: the registration times out all the same; exit 0. */
static bool case_timeout_nobody(ctx *t)
{
    return srv_start(t, g_cfg2, 1, 0) && srv_expect_exit0(t, 4000);
}

/* Bad input does not restart the timer (docs/protocol.md "Timeout"): garbage
 * every 250 ms from the registered player; the abort still comes ~2 s after
 * the Register. */
static bool case_timeout_garbage_no_restart(ctx *t)
{
    if (!srv_start(t, g_cfg2, 2, 0))
        return false;
    client *a = conn(t, "A", 0);
    if (t->failed)
        return false;
    int64_t t0 = now_ms();
    if (!join(t, a))
        return false;
    int sent = 0;
    while (now_ms() - t0 < 4000) {
        cl_sendf(a, "garbage\n");
        sent++;
        cJSON *ev = next_event(t, a, 1000);
        if (!ev)
            return false;
        bool aborted = strcmp(ev_name(ev), "RegistrationAborted") == 0;
        bool cf = strcmp(ev_name(ev), "CommandFailed") == 0;
        cJSON_Delete(ev);
        if (aborted)
            break;
        CHECK(t, cf, "unexpected event");
        sleep_ms(250);
    }
    int64_t dt = now_ms() - t0;
    CHECK(t, dt >= 1800 && dt <= 3000,
          "aborted after %lld ms (%d garbage lines), expected about 2000", (long long)dt, sent);
    return srv_expect_exit0(t, 4000);
}

/* Every decoded command restarts the timer, also a failing one from the
 * player who is not active: with --timeout 2, B keeps A's turn alive for
 * 3 s; then A times out ~2 s after B's last command (as a Leave). */
static bool case_timeout_restarted_by_commands(ctx *t)
{
    game2 g;
    if (!start_turn(t, &g, 2, 0))
        return false;
    int64_t t0 = now_ms(), last = t0;
    while (now_ms() - t0 < 3000) {
        end_turn(g.b);
        last = now_ms();
        if (!expect_failed(t, g.b, NULL))
            return false;
        sleep_ms(500);
    }
    if (!expect_quiet(t, g.a, 0) || !expect_int(t, g.a, "Left", "player", 0) ||
        !expect_eof(t, g.a, WAIT_MS) || !expect_int(t, g.b, "Left", "player", 0))
        return false;
    int64_t dt = now_ms() - last;
    CHECK(t, dt >= 1500 && dt <= 3500, "A left %lld ms after B's last command, expected about 2000",
          (long long)dt);
    if (!play_alone(t, g.b, false))
        return false;
    CHECK(t, strstr(g.b->seen, "ActNow"), "B: %s", g.b->seen);
    return true;
}

/* Timeout during character selection (--timeout 1): Left(0) to both, A
 * closed, B gets Characters and plays alone to the end. */
static bool case_timeout_selection(ctx *t)
{
    game2 g;
    if (!srv_start(t, g_cfg2, 1, 0) || !reg_two(t, &g, 0) || !expect_name(t, g.a, "Characters"))
        return false;
    int64_t t0 = now_ms();
    if (!expect_int(t, g.a, "Left", "player", 0) || !expect_eof(t, g.a, WAIT_MS) ||
        !expect_int(t, g.b, "Left", "player", 0))
        return false;
    int64_t dt = now_ms() - t0;
    CHECK(t, dt <= 2500, "Left after %lld ms", (long long)dt);
    return play_alone(t, g.b, false) && expect_seen_first(t, g.b, "Characters");
}

/* Timeout in a turn (--timeout 1): as Leave: Left(0) to both (A closed),
 * A's characters die, B's turn starts. */
static bool case_timeout_turn(ctx *t)
{
    game2 g;
    return start_turn(t, &g, 1, 0) && expect_int(t, g.a, "Left", "player", 0) &&
           expect_eof(t, g.a, WAIT_MS) && expect_left_in_turn(t, g.b, 0) &&
           play_alone(t, g.b, true);
}

/* SIGTERM during registration: exit 0, the registered and the unregistered
 * connection both see EOF. */
static bool case_sigterm_registration(ctx *t)
{
    if (!srv_start(t, g_cfg2, 30, 0))
        return false;
    client *a = conn(t, "A", 0), *u = conn(t, "U", 0), *au[2] = {a, u};
    return !t->failed && join(t, a) && stop_by_signal(t, SIGTERM, 0, au, 2, false);
}

/* A signal in the middle of a turn: exit 0 within 2 s, every client sees EOF. */
static bool signal_in_turn(ctx *t, int sig, int sig2)
{
    game2 g;
    if (!start_turn(t, &g, 30, 0))
        return false;
    client *both[2] = {g.a, g.b};
    return stop_by_signal(t, sig, sig2, both, 2, true);
}

static bool case_sigterm_turn(ctx *t)
{
    return signal_in_turn(t, SIGTERM, 0);
}

static bool case_sigint_turn(ctx *t)
{
    return signal_in_turn(t, SIGINT, 0);
}

static bool case_sigterm_twice(ctx *t)
{
    return signal_in_turn(t, SIGTERM, SIGINT);
}

/* SIGTERM while a client that does not read has output waiting (answers to
 * its pipelined bad lines, paced): the flush is capped, the server still
 * exits 0 within 2 s. */
static bool case_sigterm_unread_output(ctx *t)
{
    game2 g;
    if (!start_turn(t, &g, 30, 16384))
        return false;
    size_t len; /* ~5 MB of answers if all were answered: more than 300 ms' worth */
    char *buf = repeat_line("x\n", 100000, &len);
    bool stalled = false;
    bool sent = cl_send_ex(g.b, buf, len, true, &stalled);
    free(buf);
    CHECK(t, sent, "sending failed (stalled: %d)", stalled);
    sleep_ms(300);
    return stop_by_signal(t, SIGTERM, 0, &g.a, 1, true);
}

/* ---- the list of cases and the runner ----------------------------------- */

typedef struct {
    const char *name;
    bool (*fn)(ctx *);
} fault_case;

static const fault_case g_cases[] = {
    {"line_10mib", case_line_10mib},
    {"line_70k_unterminated", case_line_70k_unterminated},
    {"line_70k_then_close", case_line_70k_then_close},
    {"line_limit_boundary", case_line_limit_boundary},
    {"split_1byte_writes", case_split_1byte},
    {"pipeline_1000", case_pipeline_1000},
    {"deep_nesting", case_deep_nesting},
    {"long_name", case_long_name},
    {"config_9mib", case_config_9mib},
    {"idle_clients", case_idle_clients},
    {"extra_connections", case_extra_connections},
    {"register_flood", case_register_flood},
    {"disconnect_mid_line", case_disconnect_mid_line},
    {"disconnect_registration", case_disconnect_registration},
    {"disconnect_selection_chooser", case_disconnect_selection_chooser},
    {"disconnect_selection_other", case_disconnect_selection_other},
    {"disconnect_mid_turn", case_disconnect_mid_turn},
    {"reset_by_peer", case_reset_by_peer},
    {"half_close", case_half_close},
    {"slow_reader", case_slow_reader},
    {"fd_exhaustion", case_fd_exhaustion},
    {"timeout_registration", case_timeout_registration},
    {"timeout_nobody", case_timeout_nobody},
    {"timeout_garbage_no_restart", case_timeout_garbage_no_restart},
    {"timeout_restarted_by_commands", case_timeout_restarted_by_commands},
    {"timeout_selection", case_timeout_selection},
    {"timeout_turn", case_timeout_turn},
    {"sigterm_registration", case_sigterm_registration},
    {"sigterm_turn", case_sigterm_turn},
    {"sigint_turn", case_sigint_turn},
    {"sigterm_twice", case_sigterm_twice},
    {"sigterm_unread_output", case_sigterm_unread_output},
};

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

/* Run one case; the server is finished and every connection closed after it. */
static bool run_case(const fault_case *fc)
{
    static ctx t;
    memset(&t, 0, sizeof t);
    if (g_verbose)
        printf("---- %s\n", fc->name);
    fflush(stdout);
    int64_t t0 = now_ms();
    bool ok = fc->fn(&t);
    srv_finish(&t);
    for (int i = 0; i < t.nconns; i++) {
        cl_close(t.conns[i]);
        free(t.conns[i]);
    }
    ok = ok && !t.failed;
    int64_t dt = now_ms() - t0;
    if (ok)
        printf("PASS %s (%lld ms)\n", fc->name, (long long)dt);
    else
        printf("FAIL %s: %s\n", fc->name, t.msg[0] ? t.msg : "(no reason)");
    fflush(stdout);
    return ok;
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
    size_t ncases = sizeof g_cases / sizeof g_cases[0];
    if (list) {
        for (size_t i = 0; i < ncases; i++)
            puts(g_cases[i].name);
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
        if (only && !strstr(g_cases[i].name, only))
            continue;
        if (run_case(&g_cases[i]))
            passed++;
        else
            failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    unlink(g_cfg2);
    unlink(g_cfg3);
    rmdir(g_tmpdir);
    return failed ? 1 : 0;
}
