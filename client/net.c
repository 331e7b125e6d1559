/*
 * net: the connection to the server (net.h).
 */
#include "net.h"

#include "toolutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int net_connect(struct conn *c, const char *host, int port, double wait_sec, char *err,
                size_t errlen)
{
	memset(c, 0, sizeof *c);
	c->fd = tcp_connect_host(host, port, wait_sec, 100, err, errlen);
	if (c->fd < 0)
		return -1;
	c->cap = 1 << 16;
	c->buf = malloc(c->cap);
	return c->buf ? 0 : -1;
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
