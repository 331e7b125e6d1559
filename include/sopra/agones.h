/*
 * agones: the server's side of the Agones SDK lifecycle (docs/deployment.md).
 *
 * Under Agones every game server pod has an SDK sidecar that listens on
 * localhost; its REST interface is on the port in $AGONES_SDK_HTTP_PORT.
 * This module speaks to it with libevent's HTTP client (evhttp), on the
 * server's own event loop, and never blocks the game:
 *
 *   POST /ready     once the server listens (agones_ready) -- but not for a
 *                   resumed game (agones_resumed), whose GameServer was past
 *                   Ready already and must not be offered for allocation;
 *   POST /health    right after /ready was accepted (a resumed game: at
 *                   once), then every AGONES_HEALTH_INTERVAL_MS from then on
 *                   while the loop runs (none before Ready);
 *   PUT /metadata/annotation  {"key":K,"value":V}: the GameServer gets the
 *                   annotation agones.dev/sdk-K = V (agones_annotate; the
 *                   server reports the game's seed so), after /ready and
 *                   the first /health: it never holds those back;
 *   POST /shutdown  when the game is over, after the last flush
 *                   (agones_shutdown_and_wait).
 *
 * Every request but the annotations is a POST of the body "{}"; all are
 * Content-Type application/json, to 127.0.0.1:$AGONES_SDK_HTTP_PORT, one
 * request at a time on one keep-alive connection, AGONES_REQUEST_TIMEOUT_MS
 * each. A 2xx answer is success. /ready and /shutdown are retried after
 * any failure (no connection, a timeout, a non-2xx status) with exponential
 * backoff from AGONES_RETRY_MIN_MS to AGONES_RETRY_MAX_MS, since the
 * sidecar may start after the server; an annotation likewise, but at most
 * AGONES_ANNOTATE_TRIES times; a failed /health is not repeated (the next
 * tick sends the next one). Failures are logged (the first of a run of
 * failures and the recovery, not every retry), never fatal.
 *
 * Without $AGONES_SDK_HTTP_PORT (unset or empty) agones_new returns NULL and
 * nothing else happens: no socket, no timer, no allocation; every function
 * here accepts NULL and then does nothing.
 */
#ifndef SOPRA_AGONES_H
#define SOPRA_AGONES_H

#include <stdio.h>

struct event_base;

/* How often /health is sent while the loop runs. The GameServer's
 * health.periodSeconds must be at least twice this (deploy/ manifests use
 * 5 s; the manifest check in test.sh --full compares them). */
#define AGONES_HEALTH_INTERVAL_MS 2000
/* One request's connect + answer time limit. libevent also closes an idle
 * keep-alive connection after this long, so it is above the ping interval:
 * the connection then stays open from ping to ping. */
#define AGONES_REQUEST_TIMEOUT_MS 5000
/* The most of a sidecar's answer that is read: its headers, and its body
 * (the SDK answers "{}"); a longer one fails the request (retried like any
 * failure), so a broken or hostile sidecar cannot grow the server. */
#define AGONES_MAX_HEADERS_BYTES 16384
#define AGONES_MAX_BODY_BYTES    65536
/* Backoff between retries of /ready and /shutdown: doubling, capped. */
#define AGONES_RETRY_MIN_MS 100
#define AGONES_RETRY_MAX_MS 1000
/* How long main waits for /shutdown after the game (retries included). */
#define AGONES_SHUTDOWN_WAIT_MS 3000
/* Annotations queued at once (agones_annotate), and the tries of one. */
#define AGONES_MAX_ANNOTATIONS 4
#define AGONES_ANNOTATE_TRIES  5

struct agones;

/*
 * The SDK client for the loop `base` (borrowed; must outlive the client),
 * logging to `log` (NULL: silent), if $AGONES_SDK_HTTP_PORT is set and not
 * empty; NULL otherwise. An invalid value (not 1..65535) is logged and also
 * gives NULL: the server then runs as if outside Agones. Sends nothing yet.
 */
struct agones *agones_new(struct event_base *base, FILE *log);

/*
 * Mark the server Ready: queue POST /ready (retried until accepted; its
 * acceptance starts the health timer on the loop). Call once the server
 * listens. The requests go out while the loop runs (server_run).
 */
void agones_ready(struct agones *a);

/*
 * The server resumed a game after a crash (--resume, --journal-dir): its
 * GameServer was Ready or Allocated before, so there is no POST /ready
 * (which would offer a running game for allocation again); the health
 * pings start at once. Call instead of agones_ready, once the server
 * listens.
 */
void agones_resumed(struct agones *a);

/*
 * Queue PUT /metadata/annotation {"key":key,"value":value}: the GameServer
 * gets the annotation "agones.dev/sdk-<key>" (the sidecar adds the prefix).
 * key: a Kubernetes name of at most 59 characters (alphanumerics and
 * "-_.", alphanumeric at both ends; a programming error otherwise); value:
 * any text (it is JSON-escaped). Sent when nothing more important is
 * due, retried at most AGONES_ANNOTATE_TRIES times; dropped (and logged)
 * beyond AGONES_MAX_ANNOTATIONS waiting at once, and by
 * agones_shutdown_and_wait.
 */
void agones_annotate(struct agones *a, const char *key, const char *value);

/*
 * Stop the health pings and ready retries, send POST /shutdown and run the
 * loop (EVLOOP_ONCE at a time, so other callbacks that break the loop do not
 * end the wait) until the sidecar accepted it or timeout_ms passed, retrying
 * with backoff meanwhile. Call after server_run returned, before
 * server_free. Returns 1 if /shutdown was accepted, 0 if not (timed out,
 * already called or a is NULL).
 */
int agones_shutdown_and_wait(struct agones *a, int timeout_ms);

/* Drop any request in flight, close the connection, free. NULL is fine.
 * Call before the event base is freed. */
void agones_free(struct agones *a);

#endif
