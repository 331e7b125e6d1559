/*
 * sopra-accept-floor FD: the floor for a connect flood (bench/flood_floor.py;
 * docs/robustness.md, "The honest round trip during floods"). It listens
 * on an ephemeral loopback port, writes the port (an int) to FD and serves
 * until its player's connection closes.
 *
 * The first connection from 127.0.0.1 is the player: every line it sends
 * is answered with one CommandFailed line, as sopra-server answers the
 * probe's line. Every other connection is closed as soon as it is
 * accepted: less than sopra-server does for a stranger (it keeps 16 per
 * address and reads them), so a round trip measured here under a flood is
 * what the machine costs, with no server work in it. Plain libevent, one
 * thread, like sopra-server's loop.
 */
#include "floor.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

static const char ANSWER[] = "{\"event\":\"CommandFailed\",\"message\":\"floor\"}\n";

struct floor_state {
	struct event_base *base;
	struct bufferevent *player; /* NULL until it connects */
};

static void *floor_init(struct event_base *base)
{
	struct floor_state *f = calloc(1, sizeof *f);
	if (f)
		f->base = base;
	return f;
}

/* Every whole line of the player's gets one answer. */
static void player_read_cb(struct bufferevent *bev, void *arg)
{
	(void)arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer_ptr nl;
	while ((nl = evbuffer_search_eol(in, NULL, NULL, EVBUFFER_EOL_LF)).pos >= 0) {
		evbuffer_drain(in, (size_t)nl.pos + 1);
		bufferevent_write(bev, ANSWER, sizeof ANSWER - 1);
	}
}

/* The player has gone: the measurement is over. */
static void player_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	struct floor_state *f = arg;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		event_base_loopbreak(f->base);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                      int socklen, void *arg)
{
	(void)l;
	(void)socklen;
	struct floor_state *f = arg;
	const struct sockaddr_in *from = (const struct sockaddr_in *)sa;
	bool player = !f->player && sa->sa_family == AF_INET &&
	              from->sin_addr.s_addr == htonl(INADDR_LOOPBACK);
	if (!player) {
		close(fd);
		return;
	}
	f->player = bufferevent_socket_new(f->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!f->player) {
		close(fd);
		return;
	}
	bufferevent_setcb(f->player, player_read_cb, NULL, player_event_cb, f);
	bufferevent_enable(f->player, EV_READ);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		static const char usage[] = "usage: sopra-accept-floor FD\n";
		(void)!write(2, usage, sizeof usage - 1);
		return 2;
	}
	return floor_loop_run(atoi(argv[1]), 0, accept_cb, floor_init);
}
