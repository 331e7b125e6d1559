/*
 * sopra-fairness: one client's flood must not hold up another client.
 *
 * A registered player measures the round trip of a command that fails
 * politely (a second Register: CommandFailed "already registered") while
 * idle, then while a stranger pipelines --lines StartGame commands (each
 * answered with CommandFailed "register first") and reads its answers.
 * The server paces pipelined failures (4,096 a second beyond a burst of
 * 256, src/net_int.h): the default 8,000 lines keep it busy for about two
 * seconds, and the flood's rate printed is that pace.
 *
 * It checks (exit 1 otherwise):
 *   - every flood line is answered, exactly once, and nothing else arrives;
 *   - at least --probes / 4 probes are answered while the flood is still
 *     being answered, i.e. the player is served between the flood's lines,
 *     not after them;
 *   - the player's p99 round trip during the flood stays below a tenth of
 *     the flood's duration (a ratio within the same run, not a time limit);
 *   - afterwards the game is unharmed: StartGame starts it.
 * and prints the numbers (idle and flooded p50/p99/max, flood rate).
 *
 * Usage: sopra-fairness --server PATH --config PATH [--lines N] [--probes K]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "srvproc.h"
#include "toolutil.h"

static void die(const char *what)
{
    fprintf(stderr, "sopra-fairness: %s\n", what);
    exit(1);
}

/* Start the server on a port the kernel picks, its log in an unlinked
 * temp file; returns the port. */
static int start_server(const char *server, const char *config, struct srvproc *srv)
{
    FILE *log = tmpfile();
    if (!log)
        die("cannot create a temp file for the server's log");
    const char *argv[] = {server,   "--config", config,      "--port", "0",
                          "--seed", "1",        "--timeout", "60",     NULL};
    const struct srvproc_opts o = {.out = SPAWN_INHERIT, .log = fileno(log)};
    int port = srvproc_start(srv, argv, &o, 10000);
    fclose(log); /* the server has its own descriptor */
    if (port == SRVPROC_NOT_STARTED)
        die("cannot start the server");
    if (port == SRVPROC_EXITED)
        die("server exited before listening");
    if (port <= 0) {
        srvproc_stop(srv, 1000);
        die("no 'listening on' line within 10 s");
    }
    return port;
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0)
        die("cannot connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void send_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, s, n);
        if (k <= 0)
            die("write failed");
        s += k;
        n -= (size_t)k;
    }
}

static void send_line(int fd, const char *s)
{
    send_all(fd, s, strlen(s));
}

/* Read one line (without "\n") into a growing buffer; blocking. */
static char *read_line(int fd)
{
    static char *buf;
    static size_t cap;
    size_t len = 0;
    for (;;) {
        if (len + 1 >= cap) {
            cap = cap ? cap * 2 : 65536;
            buf = realloc(buf, cap);
            if (!buf)
                die("out of memory");
        }
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n <= 0)
            die("connection closed while reading a line");
        if (c == '\n')
            break;
        buf[len++] = c;
    }
    buf[len] = '\0';
    return buf;
}

struct flood {
    int port;
    long lines;
    atomic_long answered; /* CommandFailed "register first" lines received */
    long other;           /* any other line */
    double t_start, t_end;
};

static const char flood_line[] = "{\"command\":\"StartGame\"}\n";
static const char flood_answer[] = "{\"event\":\"CommandFailed\",\"message\":\"register first\"}\n";

/* The stranger: writes all its lines as fast as the server takes them and
 * reads every answer. */
static void *flood_run(void *arg)
{
    struct flood *f = arg;
    int fd = connect_to(f->port);
    fcntl(fd, F_SETFL, O_NONBLOCK);
    size_t unit = sizeof flood_line - 1, total = (size_t)f->lines * unit, sent = 0;
    char *out = malloc(total);
    char in[65536];
    size_t in_len = 0;
    if (!out)
        die("out of memory");
    for (long i = 0; i < f->lines; i++)
        memcpy(out + (size_t)i * unit, flood_line, unit);
    f->t_start = 1e3 * now_sec();
    while (atomic_load(&f->answered) + f->other < f->lines) {
        struct pollfd p = {fd, POLLIN | (sent < total ? POLLOUT : 0), 0};
        if (poll(&p, 1, 10000) <= 0)
            die("flood: server stopped answering");
        if ((p.revents & POLLOUT) && sent < total) {
            ssize_t k = write(fd, out + sent, total - sent);
            if (k > 0)
                sent += (size_t)k;
        }
        if (p.revents & (POLLIN | POLLHUP)) {
            ssize_t k = read(fd, in + in_len, sizeof in - in_len);
            if (k <= 0)
                die("flood: connection closed");
            in_len += (size_t)k;
            char *line = in, *nl;
            while ((nl = memchr(line, '\n', in_len - (size_t)(line - in))) != NULL) {
                size_t n = (size_t)(nl - line) + 1;
                if (n == sizeof flood_answer - 1 && memcmp(line, flood_answer, n) == 0)
                    atomic_fetch_add(&f->answered, 1);
                else
                    f->other++;
                line = nl + 1;
            }
            in_len -= (size_t)(line - in);
            memmove(in, line, in_len);
        }
    }
    f->t_end = 1e3 * now_sec();
    free(out);
    close(fd);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sort v and print its percentiles; returns the p99. */
static double report(const char *what, double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double p50 = v[(int)(0.50 * (n - 1) + 0.5)], p99 = v[(int)(0.99 * (n - 1) + 0.5)];
    printf("%-14s n=%d p50 %.3f ms p99 %.3f ms max %.3f ms\n", what, n, p50, p99, v[n - 1]);
    return p99;
}

/* One probe: a failing Register; returns its round trip in ms. */
static double probe(int fd)
{
    static const char cmd[] = "{\"command\":\"Register\",\"playerName\":\"again\"}\n";
    double t0 = 1e3 * now_sec();
    send_all(fd, cmd, sizeof cmd - 1);
    const char *l = read_line(fd);
    double rtt = 1e3 * now_sec() - t0;
    if (!strstr(l, "already registered")) {
        fprintf(stderr, "sopra-fairness: unexpected answer %s\n", l);
        exit(1);
    }
    return rtt;
}

int main(int argc, char **argv)
{
    const char *server = NULL, *config = NULL;
    long lines = 8000;
    int probes = 200;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--server"))
            server = argv[i + 1];
        else if (!strcmp(argv[i], "--config"))
            config = argv[i + 1];
        else if (!strcmp(argv[i], "--lines"))
            lines = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--probes"))
            probes = atoi(argv[i + 1]);
    }
    if (!server || !config || lines < 1000 || probes < 8) {
        fputs("usage: sopra-fairness --server PATH --config PATH [--lines N>=1000] "
              "[--probes K>=8]\n",
              stderr);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct srvproc srv;
    int port = start_server(server, config, &srv);
    int fd = connect_to(port);
    send_line(fd, "{\"command\":\"Register\",\"playerName\":\"Honest\"}\n");
    if (!strstr(read_line(fd), "\"event\":\"Config\""))
        die("no Config after Register");

    double *idle = calloc((size_t)probes, sizeof *idle);
    double *busy = calloc((size_t)probes, sizeof *busy);
    for (int i = 0; i < probes; i++)
        idle[i] = probe(fd);

    struct flood f = {.port = port, .lines = lines};
    pthread_t th;
    pthread_create(&th, NULL, flood_run, &f);
    while (atomic_load(&f.answered) < 100) /* the flood is under way */
        usleep(100);
    int during = 0;
    for (int i = 0; i < probes && atomic_load(&f.answered) < lines; i++) {
        double r = probe(fd);
        if (atomic_load(&f.answered) < lines)
            busy[during++] = r;
        usleep(1000);
    }
    pthread_join(th, NULL);

    send_line(fd, "{\"command\":\"StartGame\"}\n");
    bool started = strstr(read_line(fd), "\"event\":\"GameStarted\"") != NULL;
    srvproc_stop(&srv, 5000);

    double flood_ms = f.t_end - f.t_start;
    printf("flood: %ld lines answered in %.1f ms (%.0f lines/s, paced), %ld unexpected lines\n",
           (long)atomic_load(&f.answered), flood_ms, (double)lines / flood_ms * 1e3, f.other);
    report("idle:", idle, probes);
    double p99 = during ? report("during flood:", busy, during) : 0;
    int rc = 0;
    if (atomic_load(&f.answered) != lines || f.other != 0) {
        puts("FAIL: the flood was not answered line for line");
        rc = 1;
    }
    if (during < probes / 4) {
        printf("FAIL: only %d of %d probes were answered while the flood was served\n", during,
               probes);
        rc = 1;
    }
    if (during && p99 >= flood_ms / 10) {
        printf("FAIL: p99 %.3f ms during the flood is not below a tenth of the flood "
               "(%.1f ms)\n",
               p99, flood_ms);
        rc = 1;
    }
    if (!started) {
        puts("FAIL: StartGame after the flood did not start the game");
        rc = 1;
    }
    puts(rc ? "fairness: FAILED" : "fairness: passed");
    free(idle);
    free(busy);
    return rc;
}
