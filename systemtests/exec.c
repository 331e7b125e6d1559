/* Runs one scenario: starts the server, connects the clients, executes the
 * steps and judges the server's exit. Single-threaded, poll() based. */
#define _DEFAULT_SOURCE 1
#include "exec.h"

#include "scenario.h"
#include "srvproc.h"
#include "toolutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAIT_EVENT_MS 5000
#define WAIT_EXIT_MS 5000
#define WAIT_CONNECT_MS 5000
#define WAIT_TERM_MS 2000
#define RING 20
#define SHOW_BYTES 200
#define MAX_LINE (64u << 20)
#define START_ATTEMPTS 3
#define VALGRIND_SLOWDOWN 4

typedef struct {
    int num;
    int fd; /* -1 once closed by us */
    bool eof;
    bool reset;
    char *buf; /* bytes not yet split into lines */
    size_t len, cap, scanned;
    char **q; /* complete lines not yet consumed by a step */
    size_t qh, qn, qcap;
    char *ring[RING]; /* last received lines (shortened) */
    size_t nrecv;
    strbuf got; /* --journal-dir: every received byte, in lines */
} client;

typedef struct {
    const scenario *sc;
    const run_opts *o;
    struct srvproc srv;
    bool running; /* started, and not seen to exit yet */
    bool term_sent, kill_sent;
    int port;
    int errfd;
    client *cl;
    size_t ncl;
    cJSON *config_json;
    bool config_loaded;
    char config_err[256];
    strbuf log;
    strbuf fail;    /* first failure, one line */
    strbuf details; /* extra lines for the report */
    long long t0;
    int slow;
    char *journal; /* --journal-dir: this scenario's journal file */
} run;

static void tlog(run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tlog(run *r, const char *fmt, ...)
{
    long long t = now_ms() - r->t0;
    sb_printf(&r->log, "[%3lld.%03lld] ", t / 1000, t % 1000);
    va_list ap;
    va_start(ap, fmt);
    char tmp[1024];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    sb_puts(&r->log, tmp);
    sb_add(&r->log, "\n", 1);
}

static void failf(run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void failf(run *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[2048];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    for (char *p = tmp; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    tlog(r, "FAIL: %s", tmp);
    if (r->fail.n == 0)
        sb_puts(&r->fail, tmp);
    else
        sb_printf(&r->details, "  also: %s\n", tmp);
}

static bool failed(const run *r) { return r->fail.n > 0; }

/* Printable, shortened copy of received bytes. */
static char *shorten(const char *s, size_t n)
{
    strbuf b = {0};
    sb_add(&b, "", 0);
    size_t lim = n > SHOW_BYTES ? SHOW_BYTES : n;
    for (size_t i = 0; i < lim; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            sb_printf(&b, "\\x%02x", c);
        else
            sb_add(&b, (const char *)&c, 1);
    }
    if (n > lim)
        sb_printf(&b, "... (%zu bytes)", n);
    return b.s;
}

/* Shorten a rendered expectation/event in place for one-line messages. */
static char *clip(char *s)
{
    if (s && strlen(s) > 160)
        strcpy(s + 150, " ...");
    return s;
}

static const char *status_str(int st, char *buf, size_t len)
{
    if (WIFEXITED(st))
        snprintf(buf, len, "exited with code %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        snprintf(buf, len, "status 0x%x", (unsigned)st);
    return buf;
}

/* ---- server process ------------------------------------------------------- */

/* Log the server's exit once srvproc has seen it. */
static void note_exit(run *r)
{
    if (r->running && r->srv.exited) {
        char b[128];
        r->running = false;
        tlog(r, "server %s", status_str(r->srv.status, b, sizeof b));
    }
}

static void reap(run *r)
{
    if (r->running)
        srvproc_reap(&r->srv, 0);
    note_exit(r);
}

static void reap_blocking(run *r)
{
    if (r->running)
        srvproc_reap(&r->srv, -1);
    note_exit(r);
}

/*
 * A free port for the next server. Ports are drawn at random from
 * 20000-32767, below Linux's ephemeral range (32768-60999), so the kernel
 * never hands one of them to a client socket or to another worker's probe;
 * the bind probe skips ports in use. Two workers can then only collide if
 * they draw the same port within the few milliseconds before the server
 * binds it (the kernel's sequential ephemeral ports made that common).
 */
static int pick_port(void)
{
    static uint64_t x;
    if (x == 0)
        x = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
    for (int tries = 0; tries < 200; tries++) {
        int port = 20000 + (int)(splitmix64(&x) % 12768);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
            return -1;
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        a.sin_port = htons((uint16_t)port);
        int ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
        close(fd);
        if (ok)
            return port;
    }
    errno = EADDRINUSE;
    return -1;
}

static int spawn_server(run *r)
{
    char port[16], seed[32], timeout[32];
    snprintf(port, sizeof port, "%d", r->port);
    snprintf(seed, sizeof seed, "%lld", r->sc->seed);
    snprintf(timeout, sizeof timeout, "%ld", r->sc->timeout);
    const char *argv[32];
    int n = 0;
    if (r->o->valgrind) {
        argv[n++] = "valgrind";
        argv[n++] = "-q";
        argv[n++] = "--leak-check=full";
        argv[n++] = "--show-leak-kinds=definite";
        argv[n++] = "--errors-for-leak-kinds=definite";
        argv[n++] = "--error-exitcode=99";
    }
    argv[n++] = r->o->server;
    argv[n++] = "--config";
    argv[n++] = r->sc->config_path;
    argv[n++] = "--port";
    argv[n++] = port;
    argv[n++] = "--seed";
    argv[n++] = seed;
    argv[n++] = "--timeout";
    argv[n++] = timeout;
    if (r->sc->rules) {
        argv[n++] = "--rules";
        argv[n++] = r->sc->rules;
    }
    if (r->journal) {
        unlink(r->journal); /* a retry starts a new journal */
        argv[n++] = "--journal";
        argv[n++] = r->journal;
    }
    argv[n] = NULL;

    strbuf cmd = {0};
    for (int i = 0; i < n; i++)
        sb_printf(&cmd, "%s%s", i ? " " : "", argv[i]);
    tlog(r, "start: %s", cmd.s);
    sb_free(&cmd);

    if (ftruncate(r->errfd, 0) < 0) {
        /* ignore: only affects the stderr report */
    }
    /* stdin and stdout /dev/null, stderr the temp file; -1: not started */
    const struct spawn_opts so = {.search_path = true};
    const struct srvproc_opts o = {.out = SPAWN_NULL, .log = r->errfd, .spawn = &so};
    if (srvproc_launch(&r->srv, argv, &o) != 0) {
        failf(r, "cannot execute %s: %s", argv[0], strerror(errno));
        return -1;
    }
    r->running = true;
    r->term_sent = r->kill_sent = false;
    return 0;
}

static char *read_stderr(run *r, size_t *len)
{
    strbuf b = {0};
    sb_add(&b, "", 0);
    char chunk[8192];
    off_t off = 0;
    ssize_t n;
    while ((n = pread(r->errfd, chunk, sizeof chunk, off)) > 0) {
        sb_add(&b, chunk, (size_t)n);
        off += n;
        if (b.n > (16u << 20))
            break;
    }
    *len = b.n;
    return b.s;
}

/* ---- clients -------------------------------------------------------------- */

static void push_line(run *r, client *c, const char *s, size_t n)
{
    if (r->journal) {
        sb_add(&c->got, s, n);
        sb_add(&c->got, "\n", 1);
    }
    if (n && s[n - 1] == '\r')
        n--;
    if (c->qh + c->qn == c->qcap) {
        if (c->qh > 0) {
            memmove(c->q, c->q + c->qh, c->qn * sizeof *c->q);
            c->qh = 0;
        } else {
            c->qcap = c->qcap ? c->qcap * 2 : 64;
            c->q = xrealloc(c->q, c->qcap * sizeof *c->q);
        }
    }
    c->q[c->qh + c->qn++] = xmemdup0(s, n);
    char *sh = shorten(s, n);
    tlog(r, "%d < %s", c->num, sh);
    free(c->ring[c->nrecv % RING]);
    c->ring[c->nrecv % RING] = sh;
    c->nrecv++;
}

static void client_read(run *r, client *c)
{
    for (;;) {
        if (c->cap - c->len < 65536) {
            c->cap = c->cap ? c->cap * 2 : 131072;
            c->buf = xrealloc(c->buf, c->cap);
        }
        ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len);
        if (n > 0) {
            c->len += (size_t)n;
            continue;
        }
        if (n == 0) {
            c->eof = true;
            tlog(r, "%d: EOF", c->num);
        } else if (errno == EINTR) {
            continue;
        } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
            c->eof = true;
            c->reset = true;
            tlog(r, "%d: read error: %s", c->num, strerror(errno));
        }
        break;
    }
    size_t start = 0;
    for (size_t i = c->scanned; i < c->len; i++) {
        if (c->buf[i] == '\n') {
            push_line(r, c, c->buf + start, i - start);
            start = i + 1;
        }
    }
    if (start > 0)
        memmove(c->buf, c->buf + start, c->len - start);
    c->len -= start;
    c->scanned = c->len;
    if (c->len > MAX_LINE && !c->eof) {
        failf(r, "client %d: received a line longer than %u bytes", c->num, MAX_LINE);
        c->eof = true;
    }
}

/* Wait up to timeout_ms for input on any open client and read it. */
static void pump(run *r, int timeout_ms)
{
    struct pollfd pf[64];
    client *who[64];
    nfds_t n = 0;
    for (size_t i = 0; i < r->ncl && n < 64; i++) {
        client *c = &r->cl[i];
        if (c->fd >= 0 && !c->eof) {
            pf[n].fd = c->fd;
            pf[n].events = POLLIN;
            pf[n].revents = 0;
            who[n++] = c;
        }
    }
    if (timeout_ms < 0)
        timeout_ms = 0;
    int rc = poll(n ? pf : NULL, n, timeout_ms);
    if (rc > 0) {
        for (nfds_t i = 0; i < n; i++)
            if (pf[i].revents)
                client_read(r, who[i]);
    }
    reap(r);
}

static client *get_client(run *r, int num)
{
    for (size_t i = 0; i < r->ncl; i++)
        if (r->cl[i].num == num)
            return &r->cl[i];
    return NULL;
}

/* 1: *line set (caller frees), 0: EOF, -1: timeout. */
static int wait_line(run *r, client *c, long long deadline, char **line)
{
    for (;;) {
        if (c->qn > 0) {
            *line = c->q[c->qh++];
            c->qn--;
            if (c->qn == 0)
                c->qh = 0;
            return 1;
        }
        if (c->eof || c->fd < 0)
            return 0;
        long long left = deadline - now_ms();
        if (left <= 0)
            return -1;
        pump(r, left > 1000 ? 1000 : (int)left);
    }
}

static void send_bytes(run *r, client *c, const char *data, size_t len, int line)
{
    if (c->fd < 0) {
        tlog(r, "%d: not sending, connection already closed", c->num);
        return;
    }
    long long deadline = now_ms() + (long long)WAIT_EVENT_MS * r->slow;
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(c->fd, data + off, len - off);
        if (n > 0) {
            off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (now_ms() > deadline) {
                failf(r, "line %d: client %d: could not send within %d s (server not reading)",
                      line, c->num, WAIT_EVENT_MS / 1000);
                return;
            }
            pump(r, 10);
            continue;
        }
        /* connection closed by the server: not an error by itself, later
         * expectations decide */
        tlog(r, "%d: send failed: %s", c->num, n < 0 ? strerror(errno) : "short write");
        return;
    }
}

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -1;
    return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* One connect attempt: fd >= 0 on success, -1 with errno otherwise. */
static int try_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
        return fd;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

static void close_clients(run *r)
{
    for (size_t i = 0; i < r->ncl; i++) {
        client *c = &r->cl[i];
        if (c->fd >= 0)
            close(c->fd);
        c->fd = -1;
    }
}

enum { CONNECT_OK, CONNECT_START_FAILED, CONNECT_ERROR };

/*
 * With --port 0 the server binds a port the kernel picks and reports it on
 * stderr ("listening on 0.0.0.0:N"); waiting for that line makes sure the
 * clients talk to this scenario's server and no other (a port probed free
 * and handed over can be taken by a parallel run in between).
 */
static int await_reported_port(run *r, long long deadline)
{
    long long left = deadline - now_ms();
    int port = srvproc_await_port(&r->srv, left > 0 ? (int)left : 0);
    note_exit(r);
    if (port > 0) {
        r->port = port;
        tlog(r, "server reported port %d", port);
        return CONNECT_OK;
    }
    if (port == SRVPROC_EXITED)
        return CONNECT_START_FAILED;
    failf(r, "the server did not report its port (\"listening on ADDR:PORT\") within %d s",
          WAIT_CONNECT_MS * r->slow / 1000);
    return CONNECT_ERROR;
}

static int connect_all(run *r)
{
    long long deadline = now_ms() + (long long)WAIT_CONNECT_MS * r->slow;
    if (r->port == 0) {
        int rc = await_reported_port(r, deadline);
        if (rc != CONNECT_OK)
            return rc;
    }
    for (size_t i = 0; i < r->ncl; i++) {
        client *c = &r->cl[i];
        for (;;) {
            int fd = try_connect(r->port);
            if (fd >= 0) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                set_nonblock(fd);
                c->fd = fd;
                tlog(r, "%d: connected", c->num);
                break;
            }
            int e = errno;
            if (e != ECONNREFUSED && e != EINTR && e != EAGAIN && e != ETIMEDOUT) {
                failf(r, "client %d: connect to 127.0.0.1:%d: %s", c->num, r->port, strerror(e));
                return CONNECT_ERROR;
            }
            reap(r);
            if (!r->running)
                return CONNECT_START_FAILED;
            if (now_ms() > deadline) {
                failf(r, "client %d: could not connect to 127.0.0.1:%d within %d s (%s)", c->num,
                      r->port, WAIT_CONNECT_MS * r->slow / 1000, strerror(e));
                return CONNECT_ERROR;
            }
            sleep_ms(10);
        }
    }
    return CONNECT_OK;
}

/* ---- steps ---------------------------------------------------------------- */

static const cJSON *config_json(run *r)
{
    if (r->config_loaded)
        return r->config_json;
    r->config_loaded = true;
    size_t len;
    char *text = read_file(r->sc->config_path, &len);
    if (!text) {
        snprintf(r->config_err, sizeof r->config_err, "cannot open %s: %s", r->sc->config_path,
                 strerror(errno));
        return NULL;
    }
    r->config_json = cJSON_ParseWithLength(text, len);
    free(text);
    if (!r->config_json)
        snprintf(r->config_err, sizeof r->config_err, "%s is not valid JSON",
                 r->sc->config_path);
    return r->config_json;
}

static void do_expect(run *r, const step *st)
{
    client *c = get_client(r, st->client);
    char *want = st->kind == STEP_ANY ? xstrdup("?") : clip(scn_render(st->name, &st->args));
    char *line = NULL;
    int rc = wait_line(r, c, now_ms() + (long long)WAIT_EVENT_MS * r->slow, &line);
    if (rc < 0) {
        failf(r, "line %d: client %d: expected `%s`, got nothing within %d s", st->line, c->num,
              want, WAIT_EVENT_MS * r->slow / 1000);
        free(want);
        return;
    }
    if (rc == 0) {
        char *part = c->len ? shorten(c->buf, c->len) : NULL;
        failf(r, "line %d: client %d: expected `%s`, got EOF (connection %s)%s%s", st->line,
              c->num, want, c->reset ? "reset" : "closed by the server",
              part ? "; unterminated data before EOF: " : "", part ? part : "");
        free(part);
        free(want);
        return;
    }
    size_t len = strlen(line);
    cJSON *obj = cJSON_ParseWithLength(line, len);
    toklist got = {0};
    const char *gname = NULL;
    char err[256];
    if (!obj || scn_event_tokens(obj, &gname, &got, err, sizeof err) < 0) {
        char *sh = shorten(line, len);
        failf(r, "line %d: client %d: expected `%s`, got a line that is not a JSON event (%s): %s",
              st->line, c->num, want, obj ? err : "invalid JSON", sh);
        free(sh);
        goto out;
    }
    if (st->kind == STEP_ANY)
        goto out;
    bool special = st->args.n == 0 &&
                   (!strcmp(st->name, "Config") || !strcmp(st->name, "CommandFailed"));
    if (strcmp(gname, st->name) != 0 || (!special && !scn_tokens_equal(&st->args, &got))) {
        char *gs = clip(scn_render(gname, &got));
        char *sh = shorten(line, len);
        failf(r, "line %d: client %d: expected `%s`, got `%s`", st->line, c->num, want, gs);
        sb_printf(&r->details, "  received line: %s\n", sh);
        free(sh);
        free(gs);
        goto out;
    }
    if (!special)
        goto out;
    if (!strcmp(st->name, "CommandFailed")) {
        if (got.n != 1 || got.v[0].kind != TOK_STR || !got.v[0].text[0]) {
            char *gs = clip(scn_render(gname, &got));
            failf(r, "line %d: client %d: expected CommandFailed with a non-empty message, got `%s`",
                  st->line, c->num, gs);
            free(gs);
        }
        goto out;
    }
    /* Config: compare as JSON with the scenario's config file */
    {
        const cJSON *cv = cJSON_GetObjectItemCaseSensitive(obj, "config");
        const cJSON *want_cfg = config_json(r);
        if (got.n != 1 || !cJSON_IsString(cv)) {
            char *gs = clip(scn_render(gname, &got));
            failf(r, "line %d: client %d: expected Config with a string \"config\", got `%s`",
                  st->line, c->num, gs);
            free(gs);
        } else if (!want_cfg) {
            failf(r, "line %d: client %d: cannot compare Config: %s", st->line, c->num,
                  r->config_err);
        } else {
            cJSON *gc = cJSON_Parse(cv->valuestring);
            char diff[400];
            if (!gc) {
                failf(r, "line %d: client %d: Config's \"config\" string is not valid JSON",
                      st->line, c->num);
            } else if (scn_json_diff(want_cfg, gc, diff, sizeof diff)) {
                failf(r, "line %d: client %d: Config differs from %s: %s", st->line, c->num,
                      r->sc->config_name, diff);
            }
            cJSON_Delete(gc);
        }
    }
out:
    cJSON_Delete(obj);
    toklist_free(&got);
    free(line);
    free(want);
}

static void do_closed(run *r, const step *st)
{
    client *c = get_client(r, st->client);
    char *line = NULL;
    int rc = wait_line(r, c, now_ms() + (long long)WAIT_EVENT_MS * r->slow, &line);
    if (rc > 0) {
        char *sh = shorten(line, strlen(line));
        failf(r, "line %d: client %d: expected EOF (closed), got %s", st->line, c->num, sh);
        free(sh);
        free(line);
    } else if (rc < 0) {
        failf(r, "line %d: client %d: expected EOF (closed), connection still open after %d s",
              st->line, c->num, WAIT_EVENT_MS * r->slow / 1000);
    } else if (c->len > 0) {
        char *sh = shorten(c->buf, c->len);
        failf(r, "line %d: client %d: EOF after an unterminated line: %s", st->line, c->num, sh);
        free(sh);
    } else if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
}

static bool probe_accepts(run *r)
{
    if (r->port == 0) {
        /* --port 0: the server says when it listens */
        size_t n;
        char *log = read_stderr(r, &n);
        bool listening = srvproc_port_in(log) > 0;
        free(log);
        if (listening)
            tlog(r, "probe: the server reports that it is listening");
        return listening;
    }
    int fd = try_connect(r->port);
    if (fd < 0)
        return false;
    close(fd);
    tlog(r, "probe: a connection to port %d was accepted", r->port);
    return true;
}

static void do_exit(run *r, const step *st)
{
    long long deadline = now_ms() + (long long)WAIT_EXIT_MS * r->slow;
    bool no_clients = !r->sc->have_clients;
    bool accepted = false;
    long long next_probe = 0;
    for (;;) {
        reap(r);
        if (!r->running)
            break;
        long long t = now_ms();
        if (t >= deadline)
            break;
        if (no_clients && t >= next_probe) {
            if (probe_accepts(r)) {
                accepted = true;
                break;
            }
            next_probe = t + 50;
        }
        pump(r, 10);
    }
    char want[64];
    if (st->emode == EXIT_NONZERO)
        snprintf(want, sizeof want, "exit nonzero");
    else
        snprintf(want, sizeof want, "exit %d", st->ecode);
    if (no_clients && accepted)
        failf(r, "line %d: the server accepted a connection on port %d (an invalid config must "
                 "be rejected before listening)",
              st->line, r->port);
    if (accepted)
        return;
    if (r->running) {
        failf(r, "line %d: expected `%s` within %d s, the server is still running", st->line,
              want, WAIT_EXIT_MS * r->slow / 1000);
        return;
    }
    char b[128];
    int s = r->srv.status;
    if (!WIFEXITED(s) || (st->emode == EXIT_NONZERO && WEXITSTATUS(s) == 0) ||
        (st->emode == EXIT_CODE && WEXITSTATUS(s) != st->ecode)) {
        failf(r, "line %d: expected `%s`, the server %s", st->line, want,
              status_str(s, b, sizeof b));
        return;
    }
    if (no_clients) {
        if (!accepted && probe_accepts(r))
            failf(r, "line %d: the server accepted a connection on port %d after exiting?!",
                  st->line, r->port);
        size_t n;
        char *err = read_stderr(r, &n);
        bool blank = true;
        for (size_t i = 0; i < n; i++)
            if (err[i] != ' ' && err[i] != '\n' && err[i] != '\t' && err[i] != '\r')
                blank = false;
        free(err);
        if (blank && WEXITSTATUS(s) != 0)
            failf(r, "line %d: the server exited with code %d but printed nothing on stderr",
                  st->line, WEXITSTATUS(s));
    }
}

/* ---- judging the end ------------------------------------------------------ */

static void stop_server(run *r)
{
    if (!r->running)
        return;
    if (failed(r)) {
        tlog(r, "killing the server (SIGKILL) after the failure");
        kill(r->srv.pid, SIGKILL);
        r->kill_sent = true;
        reap_blocking(r);
        return;
    }
    tlog(r, "sending SIGTERM");
    kill(r->srv.pid, SIGTERM);
    r->term_sent = true;
    long long deadline = now_ms() + (long long)WAIT_TERM_MS * r->slow;
    while (r->running && now_ms() < deadline)
        pump(r, 10);
    if (r->running) {
        kill(r->srv.pid, SIGKILL);
        r->kill_sent = true;
        reap_blocking(r);
        failf(r, "the server did not exit within %d s after SIGTERM", WAIT_TERM_MS * r->slow / 1000);
    }
}

static void check_status(run *r)
{
    int s = r->srv.status;
    char b[128];
    if (r->kill_sent)
        return;
    if (WIFSIGNALED(s) && !(r->term_sent && WTERMSIG(s) == SIGTERM))
        failf(r, "the server crashed: %s", status_str(s, b, sizeof b));
    if (r->o->valgrind && WIFEXITED(s) && WEXITSTATUS(s) == 99)
        failf(r, "valgrind reported errors (exit code 99)");
}

static void check_stderr(run *r)
{
    static const char *const pats[] = {"AddressSanitizer", "UndefinedBehaviorSanitizer",
                                       "runtime error:", "LeakSanitizer", "ThreadSanitizer",
                                       "MemorySanitizer"};
    size_t n;
    char *err = read_stderr(r, &n);
    for (char *l = err; l < err + n;) {
        char *nl = memchr(l, '\n', (size_t)(err + n - l));
        size_t ll = nl ? (size_t)(nl - l) : (size_t)(err + n - l);
        char *line = xmemdup0(l, ll);
        bool bad = false;
        for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++)
            if (strstr(line, pats[i]))
                bad = true;
        if (r->o->valgrind && line[0] == '=' && line[1] == '=') {
            const char *p = line + 2;
            while (*p >= '0' && *p <= '9')
                p++;
            if (p > line + 2 && p[0] == '=' && p[1] == '=')
                bad = true;
        }
        if (bad) {
            failf(r, "server stderr has a sanitizer/valgrind report: %.300s", line);
            free(line);
            break;
        }
        free(line);
        l = nl ? nl + 1 : err + n;
    }
    free(err);
}

static void report(run *r, const char *name, FILE *out)
{
    if (!failed(r)) {
        fprintf(out, "PASS %s\n", name);
    } else {
        fprintf(out, "FAIL %s: %s\n", name, r->fail.s);
        if (r->details.n)
            fputs(r->details.s, out);
        for (size_t i = 0; i < r->ncl; i++) {
            client *c = &r->cl[i];
            size_t first = c->nrecv > RING ? c->nrecv - RING : 0;
            if (c->nrecv == 0)
                fprintf(out, "  client %d: received nothing\n", c->num);
            else
                fprintf(out, "  client %d: last %zu of %zu received line(s):\n", c->num,
                        c->nrecv - first, c->nrecv);
            for (size_t k = first; k < c->nrecv; k++)
                fprintf(out, "    < %s\n", c->ring[k % RING]);
            if (c->qn)
                fprintf(out, "    (the last %zu not consumed by any step)\n", c->qn);
        }
    }
    if (failed(r) || r->o->verbose) {
        size_t n;
        char *err = read_stderr(r, &n);
        /* last 20 lines */
        size_t end = n;
        if (end && err[end - 1] == '\n')
            end--;
        size_t start = end;
        int lines = 0;
        while (start > 0) {
            if (err[start - 1] == '\n' && ++lines == 20)
                break;
            start--;
        }
        n = end;
        if (n) {
            fprintf(out, "  server stderr%s:\n", start ? " (last 20 lines)" : "");
            for (char *l = err + start; l < err + n;) {
                char *nl = memchr(l, '\n', (size_t)(err + n - l));
                size_t ll = nl ? (size_t)(nl - l) : (size_t)(err + n - l);
                fprintf(out, "    %.*s\n", (int)(ll > 1000 ? 1000 : ll), l);
                l = nl ? nl + 1 : err + n;
            }
        } else {
            fprintf(out, "  server stderr: (empty)\n");
        }
        free(err);
    }
    if (r->o->verbose) {
        fprintf(out, "  transcript:\n");
        for (char *l = r->log.s; l && *l;) {
            char *nl = strchr(l, '\n');
            size_t ll = nl ? (size_t)(nl - l) : strlen(l);
            fprintf(out, "    %.*s\n", (int)ll, l);
            l = nl ? nl + 1 : l + ll;
        }
    }
}

/* ---- --journal-dir: the journal replays every client's stream ---------------- */

/* Run `replay --conn N journal`; its stdout into out. Returns its wait status. */
static int run_replay(run *r, int conn, strbuf *out)
{
    char connbuf[16];
    snprintf(connbuf, sizeof connbuf, "%d", conn);
    int p[2];
    if (pipe(p) < 0)
        return -1;
    fcntl(p[0], F_SETFD, FD_CLOEXEC);
    fcntl(p[1], F_SETFD, FD_CLOEXEC);
    const char *argv[] = {r->o->replay, "--conn", connbuf, r->journal, NULL};
    const struct spawn_opts so = {.search_path = true};
    pid_t pid = spawn(argv, SPAWN_NULL, p[1], r->errfd, &so);
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        return -1;
    }
    char chunk[8192];
    ssize_t n;
    while ((n = read(p[0], chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            sb_add(out, chunk, (size_t)n);
    close(p[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return st;
}

/* Whether the line at s[0..n) (with its "\n") is the event ev (e.g.
 * "CommandFailed"). */
static bool is_event_line(const char *s, size_t n, const char *ev)
{
    static const char pre[] = "{\"event\":\"";
    size_t elen = strlen(ev);
    return n > sizeof pre - 1 + elen && memcmp(s, pre, sizeof pre - 1) == 0 &&
           memcmp(s + sizeof pre - 1, ev, elen) == 0 && s[sizeof pre - 1 + elen] == '"';
}

/* After a PASS: client i (connection i+1, as the clients connected in order)
 * received exactly what the replay prints for that connection, but for the
 * CommandFailed answers the journal does not record (a stranger's failures,
 * a player's beyond its budget: docs/journal.md, "What is recorded") -- all
 * of it when the server closed the connection, a prefix when the runner
 * stopped reading first. */
static void check_journal(run *r)
{
    for (int rounds = 0; rounds < 20; rounds++)
        pump(r, rounds ? 10 : 0); /* what the server flushed before it exited */
    for (size_t i = 0; i < r->ncl && !failed(r); i++) {
        client *c = &r->cl[i];
        strbuf want = {0};
        int st = run_replay(r, (int)i + 1, &want);
        if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            failf(r, "journal %s: %s --conn %zu failed (status %d; see the server stderr)",
                  r->journal, r->o->replay, i + 1, st);
        } else {
            /* in got, in want: whole lines that match; whether the line
             * before was an answer left out (an ActNow that prompts again
             * after it is left out with it) */
            size_t k = 0, w = 0;
            bool left_out = false;
            while (k < c->got.n) {
                const char *line = c->got.s + k;
                const char *nl = memchr(line, '\n', c->got.n - k);
                size_t n = nl ? (size_t)(nl - line) + 1 : c->got.n - k;
                if (w + n <= want.n && memcmp(line, want.s + w, n) == 0) {
                    w += n;
                    left_out = false;
                } else if (nl && (is_event_line(line, n, "CommandFailed") ||
                                  (left_out && is_event_line(line, n, "ActNow")))) {
                    left_out = true;
                } else {
                    break;
                }
                k += n;
            }
            bool complete = c->eof && !c->reset && c->len == 0;
            if (k < c->got.n || (complete && w < want.n))
                failf(r, "journal %s: client %d received %zu bytes, the replay of connection "
                         "%zu gives %zu; they differ from byte %zu on",
                      r->journal, c->num, c->got.n, i + 1, want.n, k);
        }
        sb_free(&want);
    }
}

static void run_steps(run *r)
{
    for (size_t i = 0; i < r->sc->nsteps && !failed(r); i++) {
        const step *st = &r->sc->steps[i];
        client *c = st->client >= 0 ? get_client(r, st->client) : NULL;
        switch (st->kind) {
        case STEP_SEND: {
            char *sh = shorten(st->data, st->len - 1);
            tlog(r, "%d > %s", c->num, sh);
            free(sh);
            send_bytes(r, c, st->data, st->len, st->line);
            break;
        }
        case STEP_RAW: {
            char *sh = shorten(st->data, st->len);
            tlog(r, "%d >> %s", c->num, sh);
            free(sh);
            send_bytes(r, c, st->data, st->len, st->line);
            break;
        }
        case STEP_EXPECT:
        case STEP_ANY:
            do_expect(r, st);
            break;
        case STEP_CLOSED:
            do_closed(r, st);
            break;
        case STEP_EXIT:
            do_exit(r, st);
            break;
        }
    }
}

static void start(run *r)
{
    for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
        r->port = r->o->fixed_ports ? pick_port() : 0;
        if (r->port < 0) {
            failf(r, "cannot find a free port: %s", strerror(errno));
            return;
        }
        if (spawn_server(r) < 0)
            return;
        if (!r->sc->have_clients)
            return;
        int rc = connect_all(r);
        if (rc == CONNECT_OK || rc == CONNECT_ERROR)
            return;
        char b[128];
        status_str(r->srv.status, b, sizeof b);
        close_clients(r);
        if (WIFEXITED(r->srv.status) && attempt < START_ATTEMPTS) {
            tlog(r, "server %s before accepting connections; retrying with another port", b);
            continue;
        }
        failf(r, "the server %s before accepting connections on port %d%s", b, r->port,
              attempt > 1 ? " (after retries)" : "");
        return;
    }
}

int run_scenario_file(const char *path, const char *name, const run_opts *o, FILE *out)
{
    scenario sc;
    char err[SCN_ERRLEN];
    if (scn_load(path, &sc, err, sizeof err) < 0) {
        fprintf(out, "FAIL %s: %s\n", name, err);
        return 1;
    }
    run r;
    memset(&r, 0, sizeof r);
    r.sc = &sc;
    r.o = o;
    r.t0 = now_ms();
    r.slow = o->valgrind ? VALGRIND_SLOWDOWN : 1;
    r.errfd = -1;
    if (o->journal_dir) {
        strbuf jp = {0};
        sb_printf(&jp, "%s/", o->journal_dir);
        for (const char *p = name; *p; p++)
            sb_add(&jp, *p == '/' ? "_" : p, 1);
        sb_puts(&jp, ".jnl");
        r.journal = jp.s;
    }
    r.ncl = sc.nclients;
    r.cl = xmalloc((sc.nclients ? sc.nclients : 1) * sizeof *r.cl);
    memset(r.cl, 0, (sc.nclients ? sc.nclients : 1) * sizeof *r.cl);
    for (size_t i = 0; i < sc.nclients; i++) {
        r.cl[i].num = sc.clients[i];
        r.cl[i].fd = -1;
    }

    const char *tmpdir = getenv("TMPDIR");
    strbuf tpl = {0};
    sb_printf(&tpl, "%s/sopra-scenario-stderr-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    r.errfd = mkstemp(tpl.s);
    if (r.errfd < 0) {
        failf(&r, "cannot create a temp file %s: %s", tpl.s, strerror(errno));
    } else {
        unlink(tpl.s); /* nothing to clean up later, even after a crash */
        fcntl(r.errfd, F_SETFD, FD_CLOEXEC);
        int fl = fcntl(r.errfd, F_GETFL);
        fcntl(r.errfd, F_SETFL, fl | O_APPEND);
    }
    sb_free(&tpl);

    if (!failed(&r))
        start(&r);
    if (!failed(&r))
        run_steps(&r);
    stop_server(&r);
    if (r.srv.pid > 0) {
        check_status(&r);
        check_stderr(&r);
    }
    if (r.journal && r.srv.pid > 0 && sc.have_clients && !failed(&r))
        check_journal(&r);
    report(&r, name, out);
    int rc = failed(&r) ? 1 : 0;

    close_clients(&r);
    for (size_t i = 0; i < r.ncl; i++) {
        client *c = &r.cl[i];
        for (size_t k = 0; k < c->qn; k++)
            free(c->q[c->qh + k]);
        free(c->q);
        free(c->buf);
        for (size_t k = 0; k < RING; k++)
            free(c->ring[k]);
        sb_free(&c->got);
    }
    free(r.journal);
    free(r.cl);
    if (r.errfd >= 0)
        close(r.errfd);
    cJSON_Delete(r.config_json);
    sb_free(&r.log);
    sb_free(&r.fail);
    sb_free(&r.details);
    scn_free(&sc);
    return rc;
}
