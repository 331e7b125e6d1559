/*
 * bench: the floor. A trivial line echo over a libevent bufferevent, set up
 * like sopra-server's connections (evconnlistener, one bufferevent per
 * client, TCP_NODELAY, EV_READ|EV_WRITE enabled), in its own process. Every
 * round trip to it costs what any libevent server on this loopback costs at
 * least: two context switches, two syscalls per side, one loop iteration.
 */
#include "bench.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

static void echo_read_cb(struct bufferevent *bev, void *arg)
{
	(void)arg;
	evbuffer_add_buffer(bufferevent_get_output(bev), bufferevent_get_input(bev));
}

static void echo_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)arg;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		bufferevent_free(bev);
}

static void echo_accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
			   int socklen, void *arg)
{
	(void)sa;
	(void)socklen;
	(void)arg;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct bufferevent *bev =
		bufferevent_socket_new(evconnlistener_get_base(l), fd, BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(bev, echo_read_cb, NULL, echo_event_cb, NULL);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
}

/* Listens on an ephemeral loopback port with accept callback cb, whose
 * argument init() makes from the event base (init may be NULL: no
 * argument), writes the port to fd and runs the loop until it is broken.
 * Returns an exit code. */
static int loop_run(int fd, evconnlistener_cb cb, void *(*init)(struct event_base *))
{
	signal(SIGPIPE, SIG_IGN);
	struct event_base *base = event_base_new();
	if (!base)
		return 1;
	void *arg = init ? init(base) : NULL;
	struct sockaddr_in sin;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct evconnlistener *l =
		evconnlistener_new_bind(base, cb, arg, LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE, -1,
					(struct sockaddr *)&sin, sizeof sin);
	if (!l)
		return 1;
	struct sockaddr_in bound;
	socklen_t blen = sizeof bound;
	getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&bound, &blen);
	int port = ntohs(bound.sin_port);
	if (write(fd, &port, sizeof port) != sizeof port)
		return 1;
	close(fd);
	event_base_dispatch(base);
	return 0;
}

/* Starts a floor process and returns its port: forked from the bench and
 * running loop_run(cb, init), or, with self, a fresh process: self run
 * with "flag FD", which must end up in loop_run too. */
static int loop_spawn(pid_t *pid, const char *what, evconnlistener_cb cb,
		      void *(*init)(struct event_base *), const char *self, const char *flag)
{
	int p[2];
	if (pipe(p) != 0)
		die("pipe: %s", strerror(errno));
	pid_t c = fork();
	if (c < 0)
		die("fork: %s", strerror(errno));
	if (c == 0) {
		child_setup();
		close(p[0]);
		if (self) {
			char fdbuf[16];
			snprintf(fdbuf, sizeof fdbuf, "%d", p[1]);
			execl(self, self, flag, fdbuf, (char *)NULL);
			_exit(127);
		}
		_exit(loop_run(p[1], cb, init));
	}
	child_started(c);
	close(p[1]);
	int port = 0;
	if (read(p[0], &port, sizeof port) != sizeof port)
		die("%s did not start", what);
	close(p[0]);
	*pid = c;
	return port;
}

int echo_spawn(pid_t *pid)
{
	return loop_spawn(pid, "echo server", echo_accept_cb, NULL, NULL, NULL);
}

/* ---- the fan-out floor ------------------------------------------------------------- */

/*
 * The floor for many games at once: a server process that does what
 * sopra-server does per command on the wire and nothing else. Its clients
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

int fanout_spawn(pid_t *pid, const char *self)
{
	return loop_spawn(pid, "fan-out floor", fanout_accept_cb, fanout_init, self,
			  "--fanout-floor");
}

int fanout_main(int fd)
{
	return loop_run(fd, fanout_accept_cb, fanout_init);
}
