/*
 * bench: the floor. A trivial line echo over a libevent bufferevent, set up
 * like sopra-server's connections (evconnlistener, one bufferevent per
 * client, TCP_NODELAY, EV_READ|EV_WRITE enabled), in its own process. Every
 * round trip to it costs what any libevent server on this loopback costs at
 * least: two context switches, two syscalls per side, one loop iteration.
 */
#include "bench.h"
#include "floor.h"

#include <errno.h>
#include <fcntl.h>
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

/* Starts a floor process and returns its port: forked from the bench and
 * running floor_loop_run(cb, init), or, with exe, a fresh process: exe
 * run with the argument FD, which must end up in floor_loop_run too. */
static int loop_spawn(pid_t *pid, const char *what, evconnlistener_cb cb,
		      void *(*init)(struct event_base *), const char *exe)
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
		if (exe) {
			char fdbuf[16];
			snprintf(fdbuf, sizeof fdbuf, "%d", p[1]);
			execl(exe, exe, fdbuf, (char *)NULL);
			_exit(127);
		}
		_exit(floor_loop_run(p[1], 0, cb, init));
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
	return loop_spawn(pid, "echo server", echo_accept_cb, NULL, NULL);
}

/* The blocking echo: accept one connection, then read() and write() back
 * until EOF. With a journal file open (jfd >= 0), what was read is first
 * appended to it with one write(2): the least a write-ahead journal costs. */
static int blocking_echo_run(int listen_fd, int jfd)
{
	int fd = accept(listen_fd, NULL, NULL);
	if (fd < 0)
		return 1;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n <= 0)
			return 0;
		if (jfd >= 0 && write(jfd, buf, (size_t)n) != n)
			return 1;
		for (ssize_t off = 0; off < n;) {
			ssize_t k = write(fd, buf + off, (size_t)(n - off));
			if (k <= 0)
				return 0;
			off += k;
		}
	}
}

int blocking_echo_spawn(pid_t *pid, const char *journal)
{
	int jfd = -1;
	if (journal && (jfd = open(journal, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644)) < 0)
		die("blocking echo: cannot open %s: %s", journal, strerror(errno));
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof sin;
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sin, sizeof sin) != 0 || listen(lfd, 1) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &len) != 0)
		die("blocking echo: cannot listen: %s", strerror(errno));
	pid_t c = fork();
	if (c < 0)
		die("fork: %s", strerror(errno));
	if (c == 0) {
		child_setup();
		_exit(blocking_echo_run(lfd, jfd));
	}
	child_started(c);
	close(lfd);
	if (jfd >= 0)
		close(jfd);
	*pid = c;
	return ntohs(sin.sin_port);
}

int fanout_spawn(pid_t *pid, const char *exe)
{
	return loop_spawn(pid, "fan-out floor", NULL, NULL, exe);
}
