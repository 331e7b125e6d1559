/* The floors' event loop (floor.h). */
#include "floor.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

int floor_loop_run(int fd, int port, evconnlistener_cb cb, void *(*init)(struct event_base *))
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
	sin.sin_port = htons((uint16_t)port);
	struct evconnlistener *l =
		evconnlistener_new_bind(base, cb, arg, LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE, -1,
					(struct sockaddr *)&sin, sizeof sin);
	if (!l)
		return 1;
	struct sockaddr_in bound;
	socklen_t blen = sizeof bound;
	getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&bound, &blen);
	port = ntohs(bound.sin_port);
	if (write(fd, &port, sizeof port) != sizeof port)
		return 1;
	close(fd);
	event_base_dispatch(base);
	return 0;
}
