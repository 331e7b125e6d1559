/*
 * net_listen: listening sockets and admission (src/net_int.h,
 * include/sopra/net.h).
 *
 * Players (and strangers, the connections that have not registered yet)
 * come in on the game's port, read-only watchers on the watch port; a
 * connection made inside the process (server_adopt: the HTTP port's
 * streams) is admitted as if it had been accepted on one of them.
 * Fairness between addresses (an IPv6 /64 counts as one): a new stranger
 * from an address at --max-strangers-per-address replaces that address's
 * idlest stranger, and a full stranger list drops the idlest stranger of
 * the address that holds the most. A new watcher from an address at
 * --max-watchers-per-address, or on a full watch port, replaces the
 * watcher silent longest (of its address, or of all), or is refused when
 * none is silent. The strangers are kept grouped by origin, idlest first
 * (net_origin.c), so that admitting one costs a look among the origins,
 * not a walk over every connection. When no descriptor is left, a spare
 * one is given up to accept the waiting connection and make room. A burst
 * of connects is taken in batches (NET_ACCEPTS_PER_EVENT connections or
 * NET_ACCEPT_BATCH_US), so that the connections the server has are read in
 * between.
 */
/* glibc's feature test macro: accept4(2) is not in POSIX */
// NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
#define _GNU_SOURCE 1

#include "net_int.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "sopra/xalloc.h"

/* ---- admission ------------------------------------------------------------ */

/* "1.2.3.4:port" or "[::1]:port". */
static void format_addr(const struct sockaddr *sa, int port, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
		snprintf(buf, len, "%s:%d", host, port);
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
		snprintf(buf, len, "[%s]:%d", host, port);
	}
}

/* The peer's address for the log. */
static void format_peer(const struct sockaddr *sa, char *buf, size_t len)
{
	int port = 0;
	if (sa->sa_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)(const void *)sa)->sin_port);
	else if (sa->sa_family == AF_INET6)
		port = ntohs(((const struct sockaddr_in6 *)(const void *)sa)->sin6_port);
	format_addr(sa, port, buf, len);
}

/* Enable or disable every listening socket. */
void net_listeners_enable(struct server *s, bool on)
{
	for (int k = 0; k < s->nlisteners; k++) {
		if (on)
			evconnlistener_enable(s->listeners[k].ev);
		else
			evconnlistener_disable(s->listeners[k].ev);
	}
}

/* The origin of address sa (net_origin). */
static struct net_origin origin_of(const struct sockaddr *sa)
{
	struct net_origin o = {0};
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
		o.prefix = ntohl(in->sin_addr.s_addr);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
		const uint8_t *b = in6->sin6_addr.s6_addr;
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			o.prefix = (uint64_t)b[12] << 24 | (uint64_t)b[13] << 16 |
			           (uint64_t)b[14] << 8 | b[15];
		} else {
			o.v6 = true;
			for (int i = 0; i < 8; i++)
				o.prefix = o.prefix << 8 | b[i];
		}
	}
	return o;
}

/* Drop a stranger (net_stranger_to_evict) to make room for a new
 * connection; false if there is none. */
static bool evict_stranger(struct server *s, const char *why)
{
	struct conn *c = net_stranger_to_evict(s);
	if (!c)
		return false;
	net_conn_lost(c, why);
	return true;
}

/* Room for one more stranger from origin o: an origin at
 * --max-strangers-per-address gives up its own idlest stranger; else a
 * full list gives up the idlest of the origin with the most. */
static void make_room_for_stranger(struct server *s, const struct net_origin *o)
{
	const struct stranger_group *own = net_strangers_from(s, o);
	if (own && own->n >= s->max_strangers_per_origin)
		net_conn_lost(own->head, "evicted: too many strangers from its address");
	else if (s->nstrangers >= s->max_strangers)
		evict_stranger(s, "evicted: stranger limit reached");
}

/* Bytes the kernel holds for c's peer that it has not acknowledged (sent
 * and not yet acked, or not sent for a closed window); 0 where the kernel
 * cannot tell. */
static int unacked_bytes(const struct conn *c)
{
	int n = 0;
#ifdef SIOCOUTQ
	if (ioctl(c->fd, SIOCOUTQ, &n) != 0)
		n = 0;
#endif
	return n;
}

/* Whether watcher c is silent at now: none of its output has moved for
 * NET_STALL_MS, and what it was sent still waits -- in the server (its
 * socket takes no more) or in the kernel (the peer has not acknowledged
 * it: its receive window is closed because it does not read). It has been
 * silent since progress_ms, the last time its output moved. A watcher that
 * has taken everything sent to it is never silent, however long ago that
 * was. */
static bool watcher_silent(const struct conn *c, long now)
{
	if (now - c->progress_ms < NET_STALL_MS)
		return false;
	return evbuffer_get_length(c->out) > 0 || unacked_bytes(c) > 0;
}

/* Whether silent watcher a has been silent longer than b (or b is NULL). */
static bool more_silent(const struct conn *a, const struct conn *b)
{
	return !b || a->progress_ms < b->progress_ms ||
	       (a->progress_ms == b->progress_ms && a->id < b->id);
}

/*
 * Room for one more watcher from origin o, or false to refuse it. An
 * origin at --max-watchers-per-address gives up its own watcher that has
 * been silent longest; a full watch port (max_watchers) gives up the one of
 * all. When the watchers that hold the slots all read, the newcomer is the
 * one refused: a reconnecting loop never displaces a reader.
 */
static bool make_room_for_watcher(struct server *s, const struct net_origin *o)
{
	int own = 0;
	for (struct conn *c = s->conns; c; c = c->next)
		own += c->state == CONN_OPEN && c->watcher && net_same_origin(&c->origin, o);
	bool own_full = own >= s->max_watchers_per_origin;
	if (!own_full && s->nwatchers < s->max_watchers)
		return true;
	long now = now_ms();
	struct conn *victim = NULL;
	for (struct conn *c = s->conns; c; c = c->next) {
		bool candidate = c->state == CONN_OPEN && c->watcher &&
		                 (!own_full || net_same_origin(&c->origin, o));
		if (candidate && more_silent(c, victim) && watcher_silent(c, now))
			victim = c;
	}
	if (!victim) {
		net_log(s, "refused a watcher: %d watch, %d from its address, none silent",
		        s->nwatchers, own);
		return false;
	}
	net_log(s, "conn %d: silent for %ld ms, %zu bytes waiting", victim->id,
	        now - victim->progress_ms, evbuffer_get_length(victim->out));
	bool port_full = s->nwatchers >= s->max_watchers;
	net_conn_lost(victim, port_full ? "evicted: the watch port is full; silent longest"
	                                : "evicted: its address is at its limit; silent longest");
	return true;
}

/* Set up accepted socket fd as a new OPEN connection (it owns fd from now
 * on); peer names it in the log, origin is where it comes from. A stranger
 * gets room (make_room_for_stranger), a watcher gets it or is refused
 * (make_room_for_watcher). Returns the new commId, or 0 when refused. */
static int admit_peer(struct server *s, evutil_socket_t fd, const char *peer,
                      const struct net_origin *origin, bool watch)
{
	if (watch && !make_room_for_watcher(s, origin)) {
		evutil_closesocket(fd);
		return 0;
	}
	if (!watch)
		make_room_for_stranger(s, origin);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct conn *c = net_conn_open(s, fd, watch, origin);
	if (!c) {
		net_log(s, "cannot set up a new connection: out of resources");
		return 0;
	}
	snprintf(c->peer, sizeof c->peer, "%s", peer);
	net_log_conn(c, NET_QUIET_OPENED, "conn %d: open (%s%s)", c->id, c->peer,
	             watch ? ", watching" : "");
	net_sweep_arm(s); /* a stranger's idle limit runs from now */
	if (watch)        /* the Config, then every line sent to all so far */
		net_watch_start(c);
	if (watch && s->epilogue) /* the game so far is all there is */
		net_conn_start_drain(c, "game over");
	return c->id;
}

/* admit_peer for a socket accepted from the peer at sa. */
static void admit(struct server *s, evutil_socket_t fd, const struct sockaddr *sa, bool watch)
{
	char peer[64];
	format_peer(sa, peer, sizeof peer);
	struct net_origin origin = origin_of(sa);
	admit_peer(s, fd, peer, &origin, watch);
}

int server_adopt(struct server *s, int fd, bool watch, const char *peer,
                 const struct sockaddr *from)
{
	assert(fd >= 0 && peer);
	if (s->stopping) {
		evutil_closesocket(fd);
		return 0;
	}
	evutil_make_socket_nonblocking(fd);
	evutil_make_socket_closeonexec(fd);
	/* the socketpair itself has no IP address: the browser's counts, so
	 * that a flood through the HTTP port evicts its own strangers first;
	 * without one, the connection is an origin of its own */
	struct net_origin origin = {.own = true, .prefix = ++s->own_origins};
	if (from && (from->sa_family == AF_INET || from->sa_family == AF_INET6))
		origin = origin_of(from);
	int id = admit_peer(s, fd, peer, &origin, watch);
	net_flush_dirty(s);
	return id;
}

bool server_watcher_room(const struct server *s)
{
	if (s->stopping)
		return false;
	if (s->nwatchers < s->max_watchers)
		return true;
	long now = now_ms();
	for (const struct conn *c = s->conns; c; c = c->next)
		if (c->state == CONN_OPEN && c->watcher && watcher_silent(c, now))
			return true;
	return false;
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                      int socklen, void *arg)
{
	(void)l;
	(void)socklen;
	struct listener *L = arg;
	struct server *s = L->srv;
	if (s->stopping) {
		evutil_closesocket(fd);
		return;
	}
	/* a burst of connects: let the loop read the new connections' first
	 * lines before accepting more (a zero timer runs after the I/O) */
	if (s->accepts_this_event++ == 0) {
		struct timeval zero = {0, 0};
		evtimer_add(s->accept_retry, &zero);
		s->accept_batch_us = now_us();
	}
	admit(s, fd, sa, L->watch);
	if (s->accepts_this_event >= NET_ACCEPTS_PER_EVENT ||
	    now_us() - s->accept_batch_us >= NET_ACCEPT_BATCH_US)
		net_listeners_enable(s, false);
	net_flush_dirty(s);
}

void net_accept_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct server *s = arg;
	s->accepts_this_event = 0;
	if (!s->stopping)
		net_listeners_enable(s, true);
}

/* A spare descriptor to give up when accept() finds none left. */
bool net_reserve_fd_open(struct server *s)
{
	if (s->reserve_fd < 0)
		s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return s->reserve_fd >= 0;
}

/*
 * No descriptor is left for a waiting connection: give up the spare one,
 * accept, and make room by dropping the idlest stranger -- or, when there
 * is none, close the new connection at once (it learns it was refused
 * instead of hanging in the backlog). Returns true if a connection was
 * taken from the backlog.
 */
static bool accept_with_reserve(struct server *s, const struct listener *L)
{
	if (s->reserve_fd < 0)
		return false;
	close(s->reserve_fd);
	s->reserve_fd = -1;
	struct sockaddr_storage ss = {0}; /* the analyzer cannot see accept4 fill it */
	socklen_t len = sizeof ss;
	evutil_socket_t fd = accept4(evconnlistener_get_fd(L->ev), (struct sockaddr *)&ss, &len,
	                             SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		net_reserve_fd_open(s);
		return false;
	}
	if (evict_stranger(s, "evicted: no descriptors left for a new connection")) {
		admit(s, fd, (struct sockaddr *)&ss, L->watch);
	} else {
		net_log(s, "refused a connection: no descriptors left and no stranger to evict");
		evutil_closesocket(fd);
	}
	net_reserve_fd_open(s);
	return true;
}

/* Log accept failures at most once per NET_ACCEPT_LOG_MS, with a count. */
static void log_accept_error(struct server *s, int e)
{
	long now = now_ms();
	s->accept_errors++;
	if (s->accept_log_ms && now - s->accept_log_ms < NET_ACCEPT_LOG_MS)
		return;
	net_log(s, "accept failed: %s (%d time(s) since the last report)",
	        evutil_socket_error_to_string(e), s->accept_errors);
	s->accept_errors = 0;
	s->accept_log_ms = now;
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct listener *L = arg;
	struct server *s = L->srv;
	int e = EVUTIL_SOCKET_ERROR();
	log_accept_error(s, e);
	if ((e == EMFILE || e == ENFILE) && accept_with_reserve(s, L)) {
		net_serve_queue(s);
		return; /* the listener stays readable if more wait: called again */
	}
	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
		/* do not spin on a listener that stays readable */
		(void)l;
		net_listeners_enable(s, false);
		struct timeval tv = ms_tv(NET_ACCEPT_RETRY_MS);
		evtimer_add(s->accept_retry, &tv);
	}
	net_serve_queue(s);
}

/* ---- listening sockets ---------------------------------------------------- */

/* A listening socket for sa, or -1 (errno set). An IPv6 socket is
 * dual-stack (IPv4 clients too) when dual, else IPv6 only. */
static evutil_socket_t listen_socket(const struct sockaddr *sa, socklen_t len, bool dual)
{
	evutil_socket_t fd = socket(sa->sa_family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	int one = 1, v6only = dual ? 0 : 1;
	evutil_make_socket_closeonexec(fd);
	evutil_make_socket_nonblocking(fd);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
	if (bind(fd, sa, len) != 0 || listen(fd, 128) != 0) {
		int e = errno;
		evutil_closesocket(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int net_bound_port(int fd)
{
	union {
		struct sockaddr any;
		struct sockaddr_in in4;
		struct sockaddr_in6 in6;
	} a;
	memset(&a, 0, sizeof a);
	socklen_t len = sizeof a;
	if (getsockname(fd, &a.any, &len) != 0)
		return -1;
	return ntohs(a.any.sa_family == AF_INET6 ? a.in6.sin6_port : a.in4.sin_port);
}

/* Wrap a listening socket into the next listener. */
static bool add_listener(struct server *s, evutil_socket_t fd, bool watch)
{
	struct listener *L = &s->listeners[s->nlisteners];
	L->srv = s;
	L->watch = watch;
	L->ev = evconnlistener_new(s->base, accept_cb, L,
	                           LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (!L->ev) {
		evutil_closesocket(fd);
		return false;
	}
	evconnlistener_set_error_cb(L->ev, accept_error_cb);
	s->nlisteners++;
	return true;
}

/* The addresses to listen on: addr (a name or numeric address) or, when
 * NULL, the IPv6 and IPv4 wildcards (the IPv6 one dual-stack, tried first).
 * NULL with *gai_err (getaddrinfo's code) when addr does not resolve. */
static struct addrinfo *listen_addresses(const char *addr, int port, int *gai_err)
{
	char service[16];
	snprintf(service, sizeof service, "%d", port);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	                         .ai_family = addr ? AF_UNSPEC : AF_INET6};
	struct addrinfo *res = NULL;
	*gai_err = getaddrinfo(addr, service, &hints, &res);
	return *gai_err == 0 ? res : NULL;
}

/*
 * Listen on addr:port for players (watch false) or watchers. addr NULL: one
 * dual-stack IPv6 socket ("[::]", IPv4 clients too), or 0.0.0.0 where the
 * machine has no IPv6. A name may stand for several addresses: each gets a
 * socket, all on the same port (port 0: the one the first was given).
 * Returns the port, or -1 after logging why.
 */
int net_listen(struct server *s, const char *addr, int port, bool watch, char *where,
               size_t where_len)
{
	int gai_err = 0;
	struct addrinfo *res = listen_addresses(addr, port, &gai_err);
	int first = s->nlisteners, err = 0;
	where[0] = '\0';
	if (addr && !res) {
		net_log(s, "cannot listen on %s: the name does not resolve (%s)", addr,
		        gai_strerror(gai_err));
		return -1;
	}
	for (struct addrinfo *ai = res; ai && s->nlisteners < first + NET_MAX_LISTENERS;
	     ai = ai->ai_next) {
		if (s->nlisteners > first) /* later ones take the port the first got */
			((struct sockaddr_in *)(void *)ai->ai_addr)->sin_port =
			        htons((unsigned short)port);
		evutil_socket_t fd = listen_socket(ai->ai_addr, ai->ai_addrlen, !addr);
		if (fd < 0) {
			err = errno;
			continue;
		}
		port = net_bound_port(fd);
		char host[INET6_ADDRSTRLEN + 16];
		format_addr(ai->ai_addr, port, host, sizeof host);
		if (!add_listener(s, fd, watch))
			continue;
		size_t n = strlen(where);
		snprintf(where + n, where_len - n, "%s%s", n ? ", " : "", host);
	}
	if (res)
		freeaddrinfo(res);
	if (s->nlisteners == first && !addr) { /* no IPv6: plain IPv4 */
		struct sockaddr_in sin = {.sin_family = AF_INET,
		                          .sin_port = htons((unsigned short)port)};
		sin.sin_addr.s_addr = htonl(INADDR_ANY);
		evutil_socket_t fd = listen_socket((struct sockaddr *)&sin, sizeof sin, false);
		int p = fd >= 0 ? net_bound_port(fd) : -1;
		if (fd >= 0 && add_listener(s, fd, watch)) {
			port = p;
			snprintf(where, where_len, "0.0.0.0:%d", port);
		} else {
			err = errno;
		}
	}
	if (s->nlisteners == first) {
		net_log(s, "cannot listen on %s port %d: %s", addr ? addr : "any address", port,
		        strerror(err ? err : EADDRNOTAVAIL));
		return -1;
	}
	if (!addr && strstr(where, "[::]"))
		snprintf(where, where_len, "0.0.0.0:%d and [::]:%d", port, port);
	return port;
}
