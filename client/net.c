/*
 * net: the connection to the server (net.h).
 */
#include "net.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int try_connect(const char *host, int port, int *err)
{
	char portbuf[16];
	snprintf(portbuf, sizeof portbuf, "%d", port);
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	int rc = getaddrinfo(host, portbuf, &hints, &res);
	if (rc != 0) {
		*err = -rc;
		return -2;
	}
	int fd = -1;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd < 0) {
			*err = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
			*err = errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd;
}

int net_connect(struct conn *c, const char *host, int port, double wait_sec, char *err,
                size_t errlen)
{
	memset(c, 0, sizeof *c);
	c->fd = -1;
	double deadline = now_sec() + wait_sec;
	for (;;) {
		int e = 0;
		int fd = try_connect(host, port, &e);
		if (fd == -2) {
			snprintf(err, errlen, "%s: %s", host, gai_strerror(-e));
			return -1;
		}
		if (fd >= 0) {
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
			c->fd = fd;
			c->cap = 1 << 16;
			c->buf = malloc(c->cap);
			return c->buf ? 0 : -1;
		}
		if (now_sec() >= deadline) {
			snprintf(err, errlen, "cannot connect to %s:%d: %s", host, port,
			         strerror(e));
			return -1;
		}
		struct timespec ts = {0, 100L * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

int net_read(struct conn *c, void (*fn)(void *ctx, const char *line, size_t len), void *ctx)
{
	if (c->cap - c->len < 4096) {
		char *nb = realloc(c->buf, c->cap * 2);
		if (!nb)
			return -1;
		c->buf = nb;
		c->cap *= 2;
	}
	ssize_t got = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
	if (got < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : (errno == ECONNRESET ? 1 : -1);
	if (got == 0)
		return 1;
	size_t start = 0, from = c->len;
	c->len += (size_t)got;
	for (size_t i = from; i < c->len; i++) {
		if (c->buf[i] != '\n')
			continue;
		fn(ctx, c->buf + start, i - start);
		start = i + 1;
	}
	memmove(c->buf, c->buf + start, c->len - start);
	c->len -= start;
	return 0;
}

int net_send_line(struct conn *c, const char *line)
{
	size_t n = strlen(line);
	char *buf = malloc(n + 2);
	if (!buf)
		return -1;
	memcpy(buf, line, n + 1);
	buf[n] = '\n';
	size_t off = 0;
	int rc = 0;
	while (off < n + 1) {
		ssize_t w = send(c->fd, buf + off, n + 1 - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = -1;
			break;
		}
		off += (size_t)w;
	}
	free(buf);
	return rc;
}

void net_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	c->fd = -1;
	c->buf = NULL;
}
