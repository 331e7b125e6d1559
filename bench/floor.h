/*
 * The floors' event loop, shared by sopra-bench (the echo floor, forked) and
 * sopra-fanout-floor (its own executable, linked like sopra-server).
 */
#ifndef SOPRA_BENCH_FLOOR_H
#define SOPRA_BENCH_FLOOR_H

#include <event2/event.h>
#include <event2/listener.h>

/* Listens on loopback port `port` (0: an ephemeral one) with accept
 * callback cb, whose argument init() makes from the event base (init may
 * be NULL: no argument), writes the port (an int) to fd and runs the loop
 * until it is broken. Returns an exit code. */
int floor_loop_run(int fd, int port, evconnlistener_cb cb, void *(*init)(struct event_base *));

#endif
