/*
 * agones: the Agones SDK lifecycle over the sidecar's REST interface
 * (include/sopra/agones.h, docs/deployment.md).
 *
 * One keep-alive evhttp connection to 127.0.0.1:$AGONES_SDK_HTTP_PORT and at
 * most one request in flight. What is still to be sent is a set of wishes
 * (annotate, health, ready, shutdown); pump() sends the most important one
 * whenever nothing is in flight and no backoff is running: shutdown before
 * ready before health before the annotations (oldest first). Callbacks only
 * record results and re-arm the pump through an event, so nothing is sent
 * from inside libevent's own callbacks.
 *
 * The address is numeric and resolved by an evdns base without name
 * servers: evdns answers a numeric host at once and never asks the C
 * library, whose getaddrinfo the static build replaces with a failing stub
 * (src/static_nss.c).
 */
#include "sopra/agones.h"
#include "sopra/log.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <cjson/cJSON.h>

#include "sopra/xalloc.h"

/* The requests, least important first (pump sends the last wished one). An
 * annotation goes last: it may neither hold back Ready nor starve the
 * health pings while it is retried. */
enum req_kind {
	REQ_ANNOTATE,
	REQ_HEALTH,
	REQ_READY,
	REQ_SHUTDOWN,
	REQ_COUNT,
	REQ_NONE = REQ_COUNT
};

static const struct {
	enum evhttp_cmd_type method;
	const char *name; /* for the log */
	const char *path;
} req_def[REQ_COUNT] = {
        [REQ_ANNOTATE] = {EVHTTP_REQ_PUT, "PUT", "/metadata/annotation"},
        [REQ_HEALTH] = {EVHTTP_REQ_POST, "POST", "/health"},
        [REQ_READY] = {EVHTTP_REQ_POST, "POST", "/ready"},
        [REQ_SHUTDOWN] = {EVHTTP_REQ_POST, "POST", "/shutdown"},
};

struct agones {
	struct event_base *base;
	FILE *log;
	int port;
	struct evdns_base *dns;
	struct evhttp_connection *conn;
	struct event *health_ev;   /* persistent, every AGONES_HEALTH_INTERVAL_MS */
	struct event *retry_ev;    /* one-shot: the backoff before a retry */
	struct event *pump_ev;     /* activated to send what is wished for */
	struct event *deadline_ev; /* the end of agones_shutdown_and_wait */
	bool want[REQ_COUNT];
	/* the bodies of the annotations still to be sent, oldest first
	 * (want[REQ_ANNOTATE] while there is one) */
	char *annotations[AGONES_MAX_ANNOTATIONS];
	int nannotations;
	enum req_kind inflight;
	const char *error;    /* why the request in flight failed, if it did */
	int backoff_ms;       /* the next retry's delay */
	int fails[REQ_COUNT]; /* failures in a row, per kind (for the log) */
	bool stopping, shutdown_done, wait_over;
};

/* One log line: "sopra-server: agones: ...". */
#define agones_log(a, ...) sopra_log((a)->log, "agones: ", __VA_ARGS__)

static struct timeval ms_tv(int ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};
	return tv;
}

static void pump_soon(struct agones *a)
{
	event_active(a->pump_ev, EV_TIMEOUT, 0);
}

/* The request's outcome: only its reason, for the log (the status comes with
 * the request itself). */
static void req_error_cb(enum evhttp_request_error err, void *arg)
{
	struct agones *a = arg;
	switch (err) {
	case EVREQ_HTTP_TIMEOUT:
		a->error = "timed out";
		break;
	case EVREQ_HTTP_EOF:
		a->error = "connection closed";
		break;
	case EVREQ_HTTP_INVALID_HEADER:
	case EVREQ_HTTP_DATA_TOO_LONG:
		a->error = "invalid answer";
		break;
	case EVREQ_HTTP_BUFFER_ERROR:
	case EVREQ_HTTP_REQUEST_CANCEL:
		a->error = "request failed";
		break;
	}
}

/* Ping now and then every interval from now (a no-op once stopping). */
static void start_health(struct agones *a)
{
	if (a->stopping)
		return;
	a->want[REQ_HEALTH] = true;
	struct timeval tv = ms_tv(AGONES_HEALTH_INTERVAL_MS);
	event_add(a->health_ev, &tv);
}

/* The oldest annotation was accepted: on to the next, if any. */
static void annotation_sent(struct agones *a)
{
	assert(a->nannotations > 0);
	free(a->annotations[0]);
	a->nannotations--;
	memmove(a->annotations, a->annotations + 1, (size_t)a->nannotations * sizeof(char *));
	a->want[REQ_ANNOTATE] = a->nannotations > 0;
}

static void request_failed(struct agones *a, enum req_kind k, const char *why)
{
	a->fails[k]++;
	if (k == REQ_HEALTH) {
		/* not repeated: the next tick sends the next ping */
		a->want[k] = false;
		if (a->fails[k] == 1)
			agones_log(a, "POST %s failed (%s); pinging on", req_def[k].path, why);
		pump_soon(a);
		return;
	}
	if (k == REQ_ANNOTATE && a->fails[k] >= AGONES_ANNOTATE_TRIES) {
		agones_log(a, "PUT %s failed %d times (%s); %s dropped", req_def[k].path,
		           a->fails[k], why, a->annotations[0]);
		a->fails[k] = 0;
		annotation_sent(a);
	} else if (a->fails[k] == 1) {
		agones_log(a, "%s %s failed (%s); retrying with backoff", req_def[k].name,
		           req_def[k].path, why);
	}
	struct timeval tv = ms_tv(a->backoff_ms);
	evtimer_add(a->retry_ev, &tv);
	a->backoff_ms =
	        a->backoff_ms * 2 > AGONES_RETRY_MAX_MS ? AGONES_RETRY_MAX_MS : a->backoff_ms * 2;
}

static void request_succeeded(struct agones *a, enum req_kind k)
{
	if (a->fails[k] > 0 || k != REQ_HEALTH)
		agones_log(a, "%s %s accepted%s%s%s", req_def[k].name, req_def[k].path,
		           k == REQ_ANNOTATE ? ": " : "",
		           k == REQ_ANNOTATE ? a->annotations[0] : "",
		           a->fails[k] > 0 ? " after failures" : "");
	a->fails[k] = 0;
	a->want[k] = false;
	a->backoff_ms = AGONES_RETRY_MIN_MS;
	if (k == REQ_READY)
		start_health(a);
	else if (k == REQ_ANNOTATE)
		annotation_sent(a);
	else if (k == REQ_SHUTDOWN)
		a->shutdown_done = true;
	pump_soon(a);
}

static void req_done_cb(struct evhttp_request *req, void *arg)
{
	struct agones *a = arg;
	enum req_kind k = a->inflight;
	a->inflight = REQ_NONE;
	if (k == REQ_NONE)
		return;
	int code = req ? evhttp_request_get_response_code(req) : 0;
	if (code >= 200 && code <= 299) {
		request_succeeded(a, k);
		return;
	}
	char why[64];
	if (code > 0)
		snprintf(why, sizeof why, "HTTP %d", code);
	else
		snprintf(why, sizeof why, "%s", a->error ? a->error : "no connection");
	request_failed(a, k, why);
}

static void send_request(struct agones *a, enum req_kind k)
{
	struct evhttp_request *req = evhttp_request_new(req_done_cb, a);
	if (!req) {
		request_failed(a, k, "out of memory");
		return;
	}
	evhttp_request_set_error_cb(req, req_error_cb);
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct evbuffer *body = evhttp_request_get_output_buffer(req);
	const char *json = k == REQ_ANNOTATE ? a->annotations[0] : "{}";
	if (evhttp_add_header(h, "Host", "localhost") != 0 ||
	    evhttp_add_header(h, "Content-Type", "application/json") != 0 ||
	    evbuffer_add(body, json, strlen(json)) != 0) {
		evhttp_request_free(req);
		request_failed(a, k, "out of memory");
		return;
	}
	a->inflight = k;
	a->error = NULL;
	/* A connection failure found at once completes the request (callback
	 * included) before this returns 0; a nonzero result means the request
	 * was neither sent nor completed. */
	if (evhttp_make_request(a->conn, req, req_def[k].method, req_def[k].path) != 0 &&
	    a->inflight == k) {
		a->inflight = REQ_NONE;
		evhttp_request_free(req);
		request_failed(a, k, "cannot connect");
	}
}

static void pump(struct agones *a)
{
	if (a->inflight != REQ_NONE || evtimer_pending(a->retry_ev, NULL))
		return;
	for (int k = REQ_COUNT - 1; k >= 0; k--) {
		if (a->want[k]) {
			send_request(a, (enum req_kind)k);
			return;
		}
	}
}

/* The one callback of the client's events: the pump's activation and the
 * retry timer send what is wished for, the health tick wishes for a ping
 * first, and the deadline ends agones_shutdown_and_wait's wait. */
static void on_event(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct agones *a = arg;
	const struct event *fired = event_base_get_running_event(a->base);
	if (fired == a->deadline_ev) {
		a->wait_over = true;
		return;
	}
	if (fired == a->health_ev && !a->stopping)
		a->want[REQ_HEALTH] = true;
	pump(a);
}

/* $AGONES_SDK_HTTP_PORT's value v as a port, or 0 (logged) if it is none. */
static int sdk_port(const char *v, FILE *log)
{
	char *end = NULL;
	errno = 0;
	long port = strtol(v, &end, 10);
	if (errno || end == v || *end || port < 1 || port > 65535) {
		sopra_log(log, "agones: ",
		          "AGONES_SDK_HTTP_PORT='%s' is not a port (1..65535); "
		          "running without the SDK",
		          v);
		return 0;
	}
	return (int)port;
}

struct agones *agones_new(struct event_base *base, FILE *log)
{
	const char *v = getenv("AGONES_SDK_HTTP_PORT");
	int port = v && *v ? sdk_port(v, log) : 0;
	if (!port)
		return NULL;
	struct agones *a = xmalloc(sizeof *a);
	*a = (struct agones){.base = base,
	                     .log = log,
	                     .port = port,
	                     .inflight = REQ_NONE,
	                     .backoff_ms = AGONES_RETRY_MIN_MS};
	a->dns = evdns_base_new(base, 0); /* no name servers: numeric hosts only */
	a->conn = a->dns ? evhttp_connection_base_new(base, a->dns, "127.0.0.1",
	                                              (unsigned short)a->port)
	                 : NULL;
	a->health_ev = event_new(base, -1, EV_PERSIST, on_event, a);
	a->retry_ev = evtimer_new(base, on_event, a);
	a->pump_ev = event_new(base, -1, 0, on_event, a);
	a->deadline_ev = evtimer_new(base, on_event, a);
	if (!a->conn || !a->health_ev || !a->retry_ev || !a->pump_ev || !a->deadline_ev) {
		agones_log(a, "cannot set up the SDK client; running without it");
		agones_free(a);
		return NULL;
	}
	struct timeval tv = ms_tv(AGONES_REQUEST_TIMEOUT_MS);
	evhttp_connection_set_timeout_tv(a->conn, &tv);
	evhttp_connection_set_retries(a->conn, 0); /* the backoff here does it */
	evhttp_connection_set_max_headers_size(a->conn, AGONES_MAX_HEADERS_BYTES);
	evhttp_connection_set_max_body_size(a->conn, AGONES_MAX_BODY_BYTES);
	agones_log(a, "SDK at 127.0.0.1:%d", a->port);
	return a;
}

void agones_ready(struct agones *a)
{
	if (!a || a->stopping)
		return;
	a->want[REQ_READY] = true;
	pump_soon(a);
}

void agones_resumed(struct agones *a)
{
	if (!a || a->stopping)
		return;
	start_health(a);
	pump_soon(a);
}

/* Whether s is a valid annotation key for the SDK: a Kubernetes name
 * (alphanumerics, '-', '_', '.'; alphanumeric at both ends), at most 63
 * characters with Agones' "agones.dev/sdk-" prefix in front. */
static bool annotation_key_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 63 - strlen("sdk-"))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum =
		        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && ((i == 0 || i == n - 1) || (c != '-' && c != '_' && c != '.')))
			return false;
	}
	return true;
}

void agones_annotate(struct agones *a, const char *key, const char *value)
{
	assert(key && value);
	bool key_ok = annotation_key_ok(key);
	assert(key_ok); /* a programming error; without asserts it is dropped */
	if (!a || a->stopping || !key_ok)
		return;
	if (a->nannotations == AGONES_MAX_ANNOTATIONS) {
		agones_log(a, "too many annotations queued; %s dropped", key);
		return;
	}
	/* {"key":KEY,"value":VALUE}, the value escaped as JSON wants it */
	cJSON *o = cJSON_CreateObject();
	char *body = NULL;
	if (o && cJSON_AddStringToObject(o, "key", key) &&
	    cJSON_AddStringToObject(o, "value", value))
		body = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!body)
		xalloc_die(strlen(key) + strlen(value) + 32);
	a->annotations[a->nannotations++] = xstrdup(body);
	cJSON_free(body);
	a->want[REQ_ANNOTATE] = true;
	pump_soon(a);
}

int agones_shutdown_and_wait(struct agones *a, int timeout_ms)
{
	if (!a || a->stopping)
		return 0;
	a->stopping = true;
	event_del(a->health_ev);
	evtimer_del(a->retry_ev); /* a pending ready retry: shutdown goes first */
	a->want[REQ_READY] = a->want[REQ_HEALTH] = a->want[REQ_ANNOTATE] = false;
	a->want[REQ_SHUTDOWN] = true;
	a->backoff_ms = AGONES_RETRY_MIN_MS;
	struct timeval tv = ms_tv(timeout_ms > 0 ? timeout_ms : 0);
	evtimer_add(a->deadline_ev, &tv);
	pump(a);
	/* EVLOOP_ONCE at a time: the server's own leftover events may break the
	 * loop, which must not end this wait; the deadline bounds it. */
	while (!a->shutdown_done && !a->wait_over)
		if (event_base_loop(a->base, EVLOOP_ONCE) < 0)
			break;
	evtimer_del(a->deadline_ev);
	evtimer_del(a->retry_ev);
	if (!a->shutdown_done)
		agones_log(a, "POST /shutdown not accepted within %d ms; exiting anyway",
		           timeout_ms);
	return a->shutdown_done ? 1 : 0;
}

void agones_free(struct agones *a)
{
	if (!a)
		return;
	if (a->conn)
		evhttp_connection_free(a->conn); /* drops a request in flight, no callback */
	if (a->dns)
		evdns_base_free(a->dns, 0);
	struct event *evs[] = {a->health_ev, a->retry_ev, a->pump_ev, a->deadline_ev};
	for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
		if (evs[i])
			event_free(evs[i]);
	for (int i = 0; i < a->nannotations; i++)
		free(a->annotations[i]);
	free(a);
}
