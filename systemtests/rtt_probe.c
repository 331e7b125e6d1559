/*
 * sopra-rtt-probe: an honest player's round trip, measured from a process
 * of its own (crowd_test.py, class Probe; docs/robustness.md "The honest
 * round trip during floods").
 *
 *   sopra-rtt-probe FD LINE [GROUP [REST_MS]]
 *
 * FD is an inherited socket of a registered player; LINE a command that
 * the server answers with one CommandFailed and nothing else. The probe
 * does GROUP (default 5) round trips -- send LINE, read the answer -- then
 * rests REST_MS (default 10) ms, over and over, until its standard input
 * becomes readable (a byte or EOF: the caller's stop, looked at between
 * groups). Then it prints one line per round trip, "START MS": the start
 * in seconds of CLOCK_MONOTONIC (the clock of Python's time.monotonic())
 * and the round trip in milliseconds, and exits 0.
 * An answer that is not a CommandFailed, EOF, or no answer within 60 s:
 * a message on standard error, exit 1. Bad arguments: exit 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ANSWER_PREFIX "{\"event\":\"CommandFailed\""
#define ANSWER_WAIT_MS 60000

struct sample {
    double start_s, ms;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Writes all of buf to fd; false on an error. */
static bool write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        buf += n;
        len -= (size_t)n;
    }
    return true;
}

/* Reads fd until a whole line is in buf (keeping what follows it for the
 * next call); checks it is a CommandFailed. false (with a message) on
 * anything else. */
static bool read_answer(int fd, char *buf, size_t cap, size_t *have)
{
    for (;;) {
        char *nl = memchr(buf, '\n', *have);
        if (nl) {
            size_t len = (size_t)(nl - buf) + 1;
            if (strncmp(buf, ANSWER_PREFIX, strlen(ANSWER_PREFIX)) != 0) {
                fprintf(stderr, "sopra-rtt-probe: answered %.*s\n", (int)(len - 1), buf);
                return false;
            }
            memmove(buf, buf + len, *have - len);
            *have -= len;
            return true;
        }
        if (*have == cap) {
            fprintf(stderr, "sopra-rtt-probe: an answer longer than %zu bytes\n", cap);
            return false;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, ANSWER_WAIT_MS);
        if (r == 0) {
            fprintf(stderr, "sopra-rtt-probe: no answer within %d ms\n", ANSWER_WAIT_MS);
            return false;
        }
        if (r < 0 && errno == EINTR)
            continue;
        ssize_t n = r < 0 ? -1 : read(fd, buf + *have, cap - *have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "sopra-rtt-probe: %s\n", n == 0 ? "EOF" : strerror(errno));
            return false;
        }
        *have += (size_t)n;
    }
}

/* Whether the caller asked to stop, waiting up to ms for it. */
static bool stop_asked(int ms)
{
    struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
    for (;;) {
        int r = poll(&p, 1, ms);
        if (r < 0 && errno == EINTR)
            continue;
        return r != 0;
    }
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: sopra-rtt-probe FD LINE [GROUP [REST_MS]]\n");
        return 2;
    }
    int fd = atoi(argv[1]);
    int group = argc > 3 ? atoi(argv[3]) : 5;
    int rest_ms = argc > 4 ? atoi(argv[4]) : 10;
    if (fd < 0 || group < 1 || rest_ms < 0) {
        fprintf(stderr, "sopra-rtt-probe: bad FD, GROUP or REST_MS\n");
        return 2;
    }
    size_t line_len = strlen(argv[2]) + 1;
    char *line = malloc(line_len);
    struct sample *v = NULL;
    size_t n = 0, cap = 0;
    static char buf[1 << 16];
    size_t have = 0;
    if (!line)
        return 1;
    memcpy(line, argv[2], line_len - 1);
    line[line_len - 1] = '\n';
    do {
        for (int i = 0; i < group; i++) {
            if (n == cap) {
                cap = cap ? 2 * cap : 4096;
                struct sample *w = realloc(v, cap * sizeof *v);
                if (!w)
                    return 1;
                v = w;
            }
            double t0 = now_s();
            if (!write_all(fd, line, line_len)) {
                fprintf(stderr, "sopra-rtt-probe: send: %s\n", strerror(errno));
                return 1;
            }
            if (!read_answer(fd, buf, sizeof buf, &have))
                return 1;
            v[n].start_s = t0;
            v[n].ms = (now_s() - t0) * 1e3;
            n++;
        }
    } while (!stop_asked(rest_ms));
    for (size_t i = 0; i < n; i++)
        printf("%.6f %.4f\n", v[i].start_s, v[i].ms);
    free(v);
    free(line);
    return fflush(stdout) == 0 ? 0 : 1;
}
