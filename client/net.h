/*
 * net: the client's TCP connection to sopra-server: connect, split what
 * arrives into lines, send a line. Reads only when poll() said so.
 */
#ifndef SOPRA_CLIENT_NET_H
#define SOPRA_CLIENT_NET_H

#include <stddef.h>

struct conn {
	int fd;
	char *buf;
	size_t len, cap;
};

/* Connect (retrying for wait_sec while refused); 0, or -1 with err set. */
int net_connect(struct conn *c, const char *host, int port, double wait_sec, char *err,
                size_t errlen);
/* One read: each complete line (without "\n") goes to fn. 0 read something,
 * 1 end of file, -1 error. */
int net_read(struct conn *c, void (*fn)(void *ctx, const char *line, size_t len), void *ctx);
/* Send line and "\n"; 0 or -1. */
int net_send_line(struct conn *c, const char *line);
void net_close(struct conn *c);

#endif
