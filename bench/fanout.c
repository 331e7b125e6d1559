/*
 * sopra-fanout-floor FD [PORT]: the floor for many games at once (bench.c,
 * section "concurrent"; density.c --floor, one per game). It listens on
 * loopback port PORT (default: an ephemeral one), writes the port (an int)
 * to FD and serves until a connection closes. Built like
 * sopra-server (Release, libevent_core linked the same way: statically by
 * default, SOPRA_STATIC_DEPS), so that the comparison is the traffic and
 * not the linking.
 *
 * It does what sopra-server does per command on the wire and nothing
 * else. Its clients
 * (4 connections, numbered in accept order) send one-byte commands:
 *
 *   "S\n"   a failing command: the sender gets two lines in one send
 *           (like CommandFailed + ActNow);
 *   "B<t>\n" a working command: every connection gets an event line, and
 *           connection t (the player who acts next) gets it followed by an
 *           "A" line, in one send -- t first, like sopra-server's ActNow.
 *
 * Plain libevent read events and direct sends, like sopra-server's net.c;
 * no JSON, no game. Line sizes are those of the real events.
 */
#include "floor.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#define FANOUT_CONNS 4

struct fanout {
	struct event_base *base;
	evutil_socket_t fd[FANOUT_CONNS];
	int n;
};

static const char fail_lines[] =
	"{\"event\":\"CommandFailed\",\"message\":\"Move: the character is there already\"}\n"
	"{\"event\":\"ActNow\",\"player\":0}\n";
static const char event_line[] = "{\"event\":\"Barricaded\",\"player\":0,\"characterId\":3,"
				 "\"locationId\":2,\"entrance\":1}\n";
static const char event_act_lines[] = "{\"event\":\"Barricaded\",\"player\":0,\"characterId\":3,"
				      "\"locationId\":2,\"entrance\":1}\n"
				      "{\"event\":\"ActNow\",\"player\":0}\n";

static void fanout_send(evutil_socket_t fd, const char *s, size_t n)
{
	/* the client always reads: a short send does not happen with lines this
	 * small; if it does, the bench notices a missing ActNow and waits */
	(void)!send(fd, s, n, MSG_NOSIGNAL);
}

static void fanout_read_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct fanout *f = arg;
	char buf[4096];
	ssize_t n = recv(fd, buf, sizeof buf, 0);
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			event_base_loopbreak(f->base);
		return;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == 'S') {
			fanout_send(fd, fail_lines, sizeof fail_lines - 1);
		} else if (buf[i] == 'B' && i + 1 < n) {
			int t = buf[i + 1] - '0';
			if (t >= 0 && t < f->n)
				fanout_send(f->fd[t], event_act_lines, sizeof event_act_lines - 1);
			for (int k = 0; k < f->n; k++)
				if (k != t)
					fanout_send(f->fd[k], event_line, sizeof event_line - 1);
		}
	}
}

static void fanout_accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
			     int socklen, void *arg)
{
	(void)sa;
	(void)socklen;
	struct fanout *f = arg;
	if (f->n == FANOUT_CONNS) {
		evutil_closesocket(fd);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	f->fd[f->n++] = fd;
	struct event *ev =
		event_new(evconnlistener_get_base(l), fd, EV_READ | EV_PERSIST, fanout_read_cb, f);
	event_add(ev, NULL);
}

static void *fanout_init(struct event_base *base)
{
	static struct fanout f;
	f.base = base;
	return &f;
}

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 3) {
		fputs("usage: sopra-fanout-floor FD [PORT]  (started by sopra-bench, "
		      "sopra-density)\n",
		      stderr);
		return 64;
	}
	return floor_loop_run(atoi(argv[1]), argc == 3 ? atoi(argv[2]) : 0, fanout_accept_cb,
			      fanout_init);
}
