/*
 * http: the page, the event streams and the commands of browser seats on
 * libevent's evhttp (see include/sopra/http.h and docs/web.md).
 *
 * A stream is an HTTP response that never ends while the game runs
 * (Server-Sent Events: "data: LINE\n\n" per protocol line) and, behind it,
 * one end of a socketpair whose other end the server adopted as a client
 * connection (server_adopt). Lines the server sends on it are read here and
 * framed as events; a seat's command posted over HTTP is written into it
 * as one line. When the browser goes away the socketpair is closed, which
 * the server sees as a lost connection (with sessions: the player is away
 * for the grace); when the server closes its end (the game is over, or the
 * watcher was dropped) the response ends.
 *
 * Flow control: a stream whose browser has more than HTTP_STREAM_HIGH bytes
 * unsent stops reading its socketpair until they are sent. The server then
 * sees a client that does not read and applies its own limits to it.
 */
#include "sopra/http.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/queue.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "sopra/game_view.h"
#include "sopra/json.h"
#include "sopra/log.h"
#include "sopra/proto.h"
#include "sopra/web_assets.h"
#include "sopra/xalloc.h"

/* A request body (one command line) may be as long as a protocol line. */
#define HTTP_MAX_BODY    PROTO_MAX_LINE
#define HTTP_MAX_HEADERS 8192
/* Unsent bytes of a stream beyond which it stops reading its connection. */
#define HTTP_STREAM_HIGH ((size_t)256 << 10)
/* A comment line on every stream this often: a browser that went away is
 * noticed (the write fails) and proxies keep the stream open. */
#define HTTP_KEEPALIVE_SEC 15
/* A watcher's stream takes its lines in batches this often, not at each
 * command: the players' round trips do not wait for the browsers. Every
 * stream's "turn" event is checked as often. */
#define HTTP_WATCH_BATCH_MS 50
/* A "turn" event's deadline moved by less than this: not sent again. */
#define HTTP_TURN_SLACK_MS 500
/* The "turn" event's player before the first one was sent. */
#define HTTP_TURN_UNSENT (-3)
/* How long an ended stream's browser gets to take its last bytes. */
#define HTTP_LINGER_SEC 5
/* A request must arrive whole within this many seconds (or --timeout,
 * if shorter): a slow client cannot hold a connection open. */
#define HTTP_REQUEST_SEC 10
/* After accept() failed for lack of descriptors: retry after this long. */
#define HTTP_ACCEPT_RETRY_MS 100
/* A player's name from the page: at most this many bytes. */
#define HTTP_MAX_NAME 64

extern char **environ;

struct http;

struct stream {
	struct http *h;
	struct evhttp_request *req;        /* NULL once the response ended */
	struct evhttp_connection *evcon;   /* the browser's connection */
	struct bufferevent *bev;           /* our end of the socketpair; NULL once closed */
	bool play;                         /* a seat's stream, else a watcher's */
	int player;                        /* play: from its Session line, -1 before */
	char secret[PROTO_SECRET_HEX + 1]; /* play: "" before its Session line */
	char *me;                          /* play: the last "me" event sent */
	int turn_player;                   /* the last "turn" event's player */
	long long turn_deadline_ms;        /* its deadline (ms, gettimeofday), -1: none */
	struct stream *prev, *next;
	/* a watcher's: the last event's line has not come whole yet */
	bool midline;
};

struct bot {
	pid_t pid;
};

struct http {
	struct server *srv;       /* borrowed */
	const struct game *game;  /* borrowed */
	const struct config *cfg; /* borrowed */
	struct event_base *base;  /* srv's */
	struct evhttp *evh;
	struct event *keepalive;
	struct event *watch_batch;  /* the streams' tick: watchers read, turns */
	struct event *accept_retry; /* re-enables the listener after EMFILE */
	struct evconnlistener *listener;
	struct event *sigchld;
	FILE *log;
	int port;
	int timeout_sec;
	int max_play;
	int nplay;
	struct stream *streams;
	struct game_view *view; /* scratch for the seats' "me" */
	struct game_cmd_list legal;
	struct proto_buf buf;
	/* bots */
	const char *bot_program;
	int max_bots;
	int nbots; /* started so far */
	struct bot *bots;
	int bot_seq;
};

#define http_log(h, ...) sopra_log((h)->log, "http: ", __VA_ARGS__)

/* ---- answers ----------------------------------------------------------- */

/* Answer req with status and a JSON body {"error":message}. */
static void reply_error(struct evhttp_request *req, int status, const char *reason,
                        const char *message)
{
	struct evbuffer *b = evbuffer_new();
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "error", message);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (b && text) {
		evbuffer_add_printf(b, "%s\n", text);
		struct evkeyvalq *hd = evhttp_request_get_output_headers(req);
		evhttp_add_header(hd, "Content-Type", "application/json");
		evhttp_add_header(hd, "Cache-Control", "no-store");
		/* a refused client does not keep the connection */
		evhttp_add_header(hd, "Connection", "close");
	}
	evhttp_send_reply(req, status, reason, b);
	free(text);
	if (b)
		evbuffer_free(b);
}

/* Answer req 200 with a JSON text. */
static void reply_json(struct evhttp_request *req, const char *text)
{
	struct evbuffer *b = evbuffer_new();
	if (!b)
		xalloc_die(64);
	evbuffer_add_printf(b, "%s\n", text);
	struct evkeyvalq *hd = evhttp_request_get_output_headers(req);
	evhttp_add_header(hd, "Content-Type", "application/json");
	evhttp_add_header(hd, "Cache-Control", "no-store");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

/* ---- the page ------------------------------------------------------------ */

static const struct asset {
	const char *path;
	const char *type;
	const unsigned char *data;
	const size_t *len;
} assets[] = {
        {"/", "text/html; charset=utf-8", sopra_web_index_html, &sopra_web_index_html_len},
        {"/index.html", "text/html; charset=utf-8", sopra_web_index_html,
         &sopra_web_index_html_len},
        {"/app.js", "text/javascript; charset=utf-8", sopra_web_app_js, &sopra_web_app_js_len},
        {"/style.css", "text/css; charset=utf-8", sopra_web_style_css, &sopra_web_style_css_len},
};

static void serve_asset(struct evhttp_request *req, const struct asset *a)
{
	struct evbuffer *b = evbuffer_new();
	if (!b)
		xalloc_die(64);
	evbuffer_add_reference(b, a->data, *a->len, NULL, NULL);
	struct evkeyvalq *hd = evhttp_request_get_output_headers(req);
	evhttp_add_header(hd, "Content-Type", a->type);
	evhttp_add_header(hd, "Cache-Control", "no-cache");
	/* nothing from elsewhere: scripts, styles and connections of this server only */
	evhttp_add_header(hd, "Content-Security-Policy",
	                  "default-src 'self'; img-src 'self' data:; style-src 'self'");
	evhttp_add_header(hd, "X-Content-Type-Options", "nosniff");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

/* GET /api/info */
static void serve_info(struct http *h, struct evhttp_request *req)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "rules", game_rules_name(game_rules_of(h->game)));
	cJSON_AddNumberToObject(o, "timeout", h->timeout_sec);
	cJSON_AddNumberToObject(o, "maxPlayers", h->cfg->max_players);
	cJSON_AddNumberToObject(o, "players", game_player_count(h->game));
	cJSON_AddBoolToObject(o, "registration", game_waiting_for(h->game) == GAME_WAIT_ANY);
	cJSON_AddBoolToObject(o, "over", game_is_over(h->game));
	cJSON_AddNumberToObject(o, "botsLeft", h->bot_program ? h->max_bots - h->nbots : 0);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!text)
		xalloc_die(256);
	reply_json(req, text);
	free(text);
}

/* ---- streams --------------------------------------------------------------- */

static void stream_unlink(struct stream *st)
{
	struct http *h = st->h;
	if (st->prev)
		st->prev->next = st->next;
	else
		h->streams = st->next;
	if (st->next)
		st->next->prev = st->prev;
	st->prev = st->next = NULL;
	if (st->play)
		h->nplay--;
}

/* Close our end of the socketpair: the server sees the connection lost. */
static void stream_close_conn(struct stream *st)
{
	if (st->bev) {
		bufferevent_free(st->bev);
		st->bev = NULL;
	}
}

static void stream_free(struct stream *st)
{
	stream_close_conn(st);
	free(st->me);
	free(st);
}

/* The browser's connection closes: forget the stream and close its
 * connection to the server. A response that had not ended is ours to free
 * if evhttp let go of it (the browser went away or timed out mid-stream:
 * evhttp detaches such a request from the connection and leaves it to its
 * user); one still attached (the server shuts down, or cut the browser off)
 * is freed with the connection. */
static void stream_browser_gone(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	struct stream *st = arg;
	if (st->req && !evhttp_request_get_connection(st->req))
		evhttp_request_free(st->req);
	st->req = NULL;
	stream_unlink(st);
	stream_free(st);
}

/* End the response (the server closed its end): what is queued still goes
 * out; evhttp then closes the browser's connection, which frees the stream
 * (stream_browser_gone). */
static void stream_end(struct stream *st)
{
	stream_close_conn(st);
	if (st->req) {
		struct evhttp_request *req = st->req;
		st->req = NULL;
		evhttp_send_reply_end(req);
	}
}

/* Bytes the browser has not taken yet. */
static size_t stream_unsent(const struct stream *st)
{
	struct bufferevent *b = evhttp_connection_get_bufferevent(st->evcon);
	return b ? evbuffer_get_length(bufferevent_get_output(b)) : 0;
}

/* A chunk went out: below the mark, a seat reads the server's lines
 * again (a watcher at its next batch). */
static void stream_chunk_sent(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	struct stream *st = arg;
	if (st->play && st->bev && stream_unsent(st) < HTTP_STREAM_HIGH)
		bufferevent_enable(st->bev, EV_READ);
}

/* Send b (emptied) on the stream; above the mark stop reading its
 * connection until the browser took it. */
static void stream_send(struct stream *st, struct evbuffer *b)
{
	if (!st->req || evbuffer_get_length(b) == 0)
		return;
	evhttp_send_reply_chunk_with_cb(st->req, b, stream_chunk_sent, st);
	if (st->bev && stream_unsent(st) >= HTTP_STREAM_HIGH)
		bufferevent_disable(st->bev, EV_READ);
}

/* Whose turn it is and how long it has left, as an event "turn" into out:
 * {"player":P,"msLeft":M} (P: the player the game waits for, -1 during the
 * registration, -2 once it is over; M: milliseconds until the --timeout
 * expires, -1 when none runs) -- when P changed or the deadline moved since
 * the stream's last one. */
static void stream_turn(struct stream *st, struct evbuffer *out)
{
	struct http *h = st->h;
	if (st->midline) /* not inside a line being relayed: at a later batch */
		return;
	int player = game_waiting_for(h->game);
	int left = server_timeout_left_ms(h->srv);
	long long deadline = -1;
	if (left >= 0) {
		struct timeval now;
		evutil_gettimeofday(&now, NULL);
		deadline = (long long)now.tv_sec * 1000 + now.tv_usec / 1000 + left;
	}
	long long moved = deadline - st->turn_deadline_ms;
	if (player == st->turn_player && (deadline < 0) == (st->turn_deadline_ms < 0) &&
	    moved < HTTP_TURN_SLACK_MS && moved > -HTTP_TURN_SLACK_MS)
		return;
	st->turn_player = player;
	st->turn_deadline_ms = deadline;
	evbuffer_add_printf(out, "event: turn\ndata: {\"player\":%d,\"msLeft\":%d}\n\n", player,
	                    left);
}

/* Every HTTP_WATCH_BATCH_MS while streams are open: each watcher reads what
 * the server sent it meanwhile (unless its browser is behind), and every
 * stream gets a "turn" event when the turn changed (a turn can pass with no
 * line to a seat or a watcher). */
static void watch_batch_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct http *h = arg;
	bool any = false;
	struct evbuffer *out = evbuffer_new();
	if (!out)
		xalloc_die(64);
	for (struct stream *st = h->streams; st; st = st->next) {
		if (!st->bev)
			continue;
		any = true;
		if (stream_unsent(st) >= HTTP_STREAM_HIGH)
			continue;
		stream_turn(st, out);
		stream_send(st, out);
		if (!st->play)
			bufferevent_enable(st->bev, EV_READ);
	}
	evbuffer_free(out);
	if (!any)
		event_del(h->watch_batch);
}

/* A seat's Session line: {"event":"Session","player":P,"secret":"..."}. */
static void note_session(struct stream *st, const char *line, size_t len)
{
	static const char prefix[] = "{\"event\":\"Session\"";
	if (len < sizeof prefix - 1 || memcmp(line, prefix, sizeof prefix - 1) != 0)
		return;
	cJSON *o = cJSON_ParseWithLength(line, len);
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "player");
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "secret"));
	if (cJSON_IsNumber(p) && s && strlen(s) == PROTO_SECRET_HEX) {
		st->player = p->valueint;
		memcpy(st->secret, s, PROTO_SECRET_HEX + 1);
	}
	cJSON_Delete(o);
}

/* The seat's "me" event: what its player may do now (the legal commands
 * as wire objects) and what only it knows (its dice, the characters it is
 * offered), as JSON into h->buf. */
static void encode_me(struct http *h, int player)
{
	struct proto_buf *b = &h->buf;
	proto_buf_reset(b);
	game_view_of(h->game, player, h->view);
	int w = game_waiting_for(h->game);
	char num[PROTO_INT_DIGITS];
	PROTO_BUF_LIT(b, "{\"player\":");
	proto_buf_add(b, num, proto_format_int(player, num));
	PROTO_BUF_LIT(b, ",\"yourTurn\":");
	if (w == player)
		PROTO_BUF_LIT(b, "true");
	else
		PROTO_BUF_LIT(b, "false");
	PROTO_BUF_LIT(b, ",\"dice\":[");
	const struct game_view_player *vp =
	        player < h->view->nplayers ? &h->view->players[player] : NULL;
	for (int i = 0; vp && i < vp->ndice; i++) {
		if (i)
			PROTO_BUF_LIT(b, ",");
		proto_buf_add(b, num, proto_format_int(vp->dice[i], num));
	}
	PROTO_BUF_LIT(b, "],\"offered\":[");
	for (int i = 0, n = 0; vp && i < 4; i++) {
		if (vp->offered[i] < 0)
			continue;
		if (n++)
			PROTO_BUF_LIT(b, ",");
		proto_buf_add(b, num, proto_format_int(h->cfg->characters[vp->offered[i]].id, num));
	}
	PROTO_BUF_LIT(b, "],\"legal\":[");
	game_legal_commands(h->game, player, &h->legal);
	for (size_t i = 0; i < h->legal.n; i++) {
		if (i)
			PROTO_BUF_LIT(b, ",");
		size_t at = b->len;
		proto_encode_cmd(&h->legal.v[i], game_rules_of(h->game), b);
		if (b->len > at && b->data[b->len - 1] == '\n')
			b->len--;
	}
	PROTO_BUF_LIT(b, "]}");
}

/* After a batch of lines on a seat's stream: a "me" event if it changed. */
static void send_me(struct stream *st, struct evbuffer *out)
{
	struct http *h = st->h;
	if (!st->play || st->player < 0 || st->player >= game_player_count(h->game))
		return;
	encode_me(h, st->player);
	if (st->me && strlen(st->me) == h->buf.len && memcmp(st->me, h->buf.data, h->buf.len) == 0)
		return;
	free(st->me);
	st->me = xmemdup0(h->buf.data, h->buf.len);
	evbuffer_add_printf(out, "event: me\ndata: %s\n\n", st->me);
}

/* A watcher's bytes from the server, framed as events as they come: a
 * line is relayed in pieces (its "data: " first, its "\n\n" when its end
 * arrives), so that a long line (a large configuration's Config) is never
 * held whole here, once per watcher. */
static void relay_pieces(struct stream *st, struct evbuffer *in, struct evbuffer *out)
{
	while (evbuffer_get_length(in) > 0) {
		struct evbuffer_ptr nl = evbuffer_search_eol(in, NULL, NULL, EVBUFFER_EOL_LF);
		size_t n = nl.pos < 0 ? evbuffer_get_length(in) : (size_t)nl.pos;
		if (!st->midline)
			evbuffer_add(out, "data: ", 6);
		evbuffer_remove_buffer(in, out, n);
		st->midline = nl.pos < 0;
		if (nl.pos >= 0) {
			evbuffer_drain(in, 1);
			evbuffer_add(out, "\n\n", 2);
		}
	}
}

/* The server sent lines on a stream's connection: frame each as an event
 * (a seat's whole lines: it reads its Session line). */
static void stream_read_cb(struct bufferevent *bev, void *arg)
{
	struct stream *st = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer *out = evbuffer_new();
	if (!out)
		xalloc_die(64);
	if (!st->play)
		relay_pieces(st, in, out);
	size_t len;
	char *line;
	while (st->play && (line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) != NULL) {
		note_session(st, line, len);
		evbuffer_add(out, "data: ", 6);
		evbuffer_add(out, line, len);
		evbuffer_add(out, "\n\n", 2);
		free(line);
	}
	stream_turn(st, out);
	send_me(st, out);
	stream_send(st, out);
	evbuffer_free(out);
	/* a watcher: until the next batch, unless a line is still incomplete
	 * (a long Config line goes on before the next batch, as far as its
	 * browser takes it: stream_send stops reading above the mark) */
	if (!st->play && st->bev && !st->midline)
		bufferevent_disable(st->bev, EV_READ);
}

/* The server closed its end (or it broke): the stream is over. A browser
 * that stopped taking its bytes (the server dropped its connection for
 * that) is cut off; else it gets the rest, then the end. */
static void stream_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct stream *st = arg;
	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	if (st->req && stream_unsent(st) >= HTTP_STREAM_HIGH) {
		http_log(st->h, "a browser does not read its stream: closing it");
		stream_close_conn(st);
		evhttp_connection_free(st->evcon); /* its close callback frees st */
		return;
	}
	stream_read_cb(bev, st); /* whatever came before the end */
	stream_end(st);
}

/* Start an SSE response on req and a connection the server adopts for
 * it. Returns the stream, or NULL after answering req. */
static struct stream *stream_open(struct http *h, struct evhttp_request *req, bool play)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) {
		reply_error(req, 503, "Service Unavailable", "no descriptors left for a stream");
		return NULL;
	}
	char *host = NULL;
	ev_uint16_t port = 0;
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	evhttp_connection_get_peer(evcon, &host, &port);
	char peer[64];
	snprintf(peer, sizeof peer, "http %s:%u", host ? host : "?", (unsigned)port);
	int id = server_adopt(h->srv, sv[0], !play, peer, evhttp_connection_get_addr(evcon));
	if (id == 0) {
		close(sv[1]);
		reply_error(req, 503, "Service Unavailable",
		            play ? "the server does not take players now"
		                 : "too many watchers: try again later");
		return NULL;
	}
	struct stream *st = xcalloc(1, sizeof *st);
	st->h = h;
	st->req = req;
	st->evcon = evcon;
	st->play = play;
	st->player = -1;
	st->turn_player = HTTP_TURN_UNSENT;
	st->turn_deadline_ms = -1;
	st->bev = bufferevent_socket_new(h->base, sv[1], BEV_OPT_CLOSE_ON_FREE);
	if (!st->bev) {
		close(sv[1]);
		free(st);
		reply_error(req, 503, "Service Unavailable", "out of resources");
		return NULL;
	}
	bufferevent_setcb(st->bev, stream_read_cb, NULL, stream_event_cb, st);
	/* a batch takes what came since the last one (libevent's default is
	 * 16 KiB a read; the mark bounds what waits for the browser anyway) */
	bufferevent_set_max_single_read(st->bev, HTTP_STREAM_HIGH);
	bufferevent_enable(st->bev, EV_READ | EV_WRITE);
	if (!event_pending(h->watch_batch, EV_TIMEOUT, NULL)) {
		struct timeval tv = {0, (suseconds_t)HTTP_WATCH_BATCH_MS * 1000};
		event_add(h->watch_batch, &tv);
	}
	st->next = h->streams;
	if (h->streams)
		h->streams->prev = st;
	h->streams = st;
	if (play)
		h->nplay++;
	evhttp_connection_set_closecb(evcon, stream_browser_gone, st);
	/* a stream is long: only a write that cannot go out ends it early */
	evhttp_connection_set_timeout(evcon, 24 * 3600);
	struct evkeyvalq *hd = evhttp_request_get_output_headers(req);
	evhttp_add_header(hd, "Content-Type", "text/event-stream");
	evhttp_add_header(hd, "Cache-Control", "no-store");
	evhttp_add_header(hd, "X-Accel-Buffering", "no");
	/* the connection closes after the stream: that frees it here */
	evhttp_add_header(hd, "Connection", "close");
	evhttp_send_reply_start(req, 200, "OK");
	struct evbuffer *first = evbuffer_new();
	if (!first)
		xalloc_die(64);
	evbuffer_add_printf(first, ": %s stream, connection %d\n\n", play ? "seat" : "watch", id);
	stream_send(st, first);
	evbuffer_free(first);
	return st;
}

/* GET /api/watch */
static void serve_watch(struct http *h, struct evhttp_request *req)
{
	if (!server_watcher_room(h->srv)) {
		reply_error(req, 503, "Service Unavailable", "too many watchers: try again later");
		return;
	}
	stream_open(h, req, false);
}

/* The live seat stream whose secret is s, or NULL. */
static struct stream *seat_of(struct http *h, const char *s)
{
	if (!s || strlen(s) != PROTO_SECRET_HEX)
		return NULL;
	for (struct stream *st = h->streams; st; st = st->next)
		if (st->play && st->bev && strcmp(st->secret, s) == 0)
			return st;
	return NULL;
}

/* Whether s is 64 lowercase hex digits. */
static bool is_secret(const char *s)
{
	if (strlen(s) != PROTO_SECRET_HEX)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

/* Write one command line (len bytes, no "\n") on a seat's connection. */
static void seat_write(struct stream *st, const char *line, size_t len)
{
	struct evbuffer *o = bufferevent_get_output(st->bev);
	evbuffer_add(o, line, len);
	evbuffer_add(o, "\n", 1);
}

/* GET /api/play?name=NAME (register) or ?secret=S (take the seat back). */
static void serve_play(struct http *h, struct evhttp_request *req, const struct evkeyvalq *q)
{
	const char *name = evhttp_find_header(q, "name");
	const char *secret = evhttp_find_header(q, "secret");
	if (!name == !secret) {
		reply_error(req, 400, "Bad Request", "give either name=NAME or secret=SECRET");
		return;
	}
	if (name && strlen(name) > HTTP_MAX_NAME) {
		reply_error(req, 400, "Bad Request", "the name is longer than 64 bytes");
		return;
	}
	if (secret && !is_secret(secret)) {
		reply_error(req, 400, "Bad Request", "the secret is not 64 lowercase hex digits");
		return;
	}
	if (h->nplay >= h->max_play) {
		reply_error(req, 503, "Service Unavailable", "too many seats' streams at once");
		return;
	}
	/* a reload: the old stream of the seat gives way (its connection
	 * closes first, so the Reconnect finds the seat free) */
	struct stream *old = secret ? seat_of(h, secret) : NULL;
	if (old)
		stream_end(old);
	struct stream *st = stream_open(h, req, true);
	if (!st)
		return;
	proto_buf_reset(&h->buf);
	if (name) {
		struct cmd c = game_registration(name);
		proto_encode_cmd(&c, game_rules_of(h->game), &h->buf);
	} else {
		proto_encode_reconnect(secret, &h->buf);
		memcpy(st->secret, secret, PROTO_SECRET_HEX + 1);
	}
	seat_write(st, h->buf.data, h->buf.len - 1); /* without its "\n" */
}

/* The request's body as a NUL-terminated copy (*len its length), or NULL
 * after answering req. */
static char *read_body(struct evhttp_request *req, size_t *len)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t n = evbuffer_get_length(in);
	char *body = xmalloc(n + 1);
	evbuffer_copyout(in, body, n);
	body[n] = '\0';
	*len = n;
	return body;
}

/* POST /api/command: the body is one command line of the seat named by
 * the X-Sopra-Secret header. Its answer comes on the seat's stream. */
static void serve_command(struct http *h, struct evhttp_request *req)
{
	const char *secret =
	        evhttp_find_header(evhttp_request_get_input_headers(req), "X-Sopra-Secret");
	struct stream *st = seat_of(h, secret);
	if (!st) {
		reply_error(req, 403, "Forbidden",
		            secret ? "no seat with this secret has a stream open here"
		                   : "the X-Sopra-Secret header is missing");
		return;
	}
	size_t len;
	char *body = read_body(req, &len);
	while (len > 0 && (body[len - 1] == '\n' || body[len - 1] == '\r'))
		body[--len] = '\0';
	struct json_error je;
	char msg[160];
	if (len == 0) {
		reply_error(req, 400, "Bad Request", "the body is empty: send one JSON command");
	} else if (memchr(body, '\n', len) || memchr(body, '\r', len)) {
		reply_error(req, 400, "Bad Request",
		            "one command per request: the body has a line break");
	} else if (!json_check(body, len, &je)) {
		snprintf(msg, sizeof msg, "malformed JSON at byte %zu: %s", je.pos, je.why);
		reply_error(req, 400, "Bad Request", msg);
	} else {
		seat_write(st, body, len);
		reply_json(req, "{\"queued\":true}");
	}
	free(body);
}

/* ---- bots ------------------------------------------------------------------ */

/* Reap the bots that have exited. */
static void reap_bots(struct http *h)
{
	for (int i = 0; i < h->nbots; i++) {
		if (h->bots[i].pid <= 0)
			continue;
		int status;
		pid_t r = waitpid(h->bots[i].pid, &status, WNOHANG);
		if (r == h->bots[i].pid || (r < 0 && errno == ECHILD)) {
			http_log(h, "bot %d (pid %ld) exited", i + 1, (long)h->bots[i].pid);
			h->bots[i].pid = 0;
		}
	}
}

static void sigchld_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	reap_bots(arg);
}

/* POST /api/bots: start one sopra-bot that joins this game over TCP. */
static void serve_bots(struct http *h, struct evhttp_request *req)
{
	if (!h->bot_program || h->max_bots == 0) {
		reply_error(req, 403, "Forbidden",
		            "this server starts no bots (the host allows them with --http-bots N)");
		return;
	}
	if (h->nbots >= h->max_bots) {
		reply_error(req, 503, "Service Unavailable",
		            "no bots left: the host's limit is reached");
		return;
	}
	if (game_waiting_for(h->game) != GAME_WAIT_ANY) {
		reply_error(req, 409, "Conflict", "the registration is over");
		return;
	}
	char port[16], name[32], seed[16];
	snprintf(port, sizeof port, "%d", server_port(h->srv));
	snprintf(name, sizeof name, "Bot %d", h->nbots + 1);
	snprintf(seed, sizeof seed, "%d", h->nbots + 1);
	char *argv[] = {(char *)h->bot_program,
	                "--port",
	                port,
	                "--host",
	                "localhost",
	                "--name",
	                name,
	                "--seed",
	                seed,
	                "--rules",
	                (char *)game_rules_name(game_rules_of(h->game)),
	                "--strategy",
	                "greedy",
	                "--quiet",
	                NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int rc = posix_spawn(&pid, h->bot_program, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		http_log(h, "cannot start %s: %s", h->bot_program, strerror(rc));
		reply_error(req, 500, "Internal Server Error", "the bot could not be started");
		return;
	}
	h->bots[h->nbots++].pid = pid;
	http_log(h, "started %s (pid %ld, %d of %d)", name, (long)pid, h->nbots, h->max_bots);
	char text[64];
	snprintf(text, sizeof text, "{\"started\":\"%s\",\"botsLeft\":%d}", name,
	         h->max_bots - h->nbots);
	reply_json(req, text);
}

/* ---- routing --------------------------------------------------------------- */

enum route_kind { R_ASSET, R_INFO, R_WATCH, R_PLAY, R_COMMAND, R_BOTS };

static const struct route {
	const char *path;
	enum route_kind kind;
	enum evhttp_cmd_type method; /* GET routes take HEAD too */
} routes[] = {
        {"/api/info", R_INFO, EVHTTP_REQ_GET},  {"/api/watch", R_WATCH, EVHTTP_REQ_GET},
        {"/api/play", R_PLAY, EVHTTP_REQ_GET},  {"/api/command", R_COMMAND, EVHTTP_REQ_POST},
        {"/api/bots", R_BOTS, EVHTTP_REQ_POST},
};

static void dispatch_route(struct http *h, struct evhttp_request *req, enum route_kind k,
                           const char *query)
{
	struct evkeyvalq q;
	TAILQ_INIT(&q);
	switch (k) {
	case R_INFO:
		serve_info(h, req);
		break;
	case R_WATCH:
		serve_watch(h, req);
		break;
	case R_PLAY:
		if (query && evhttp_parse_query_str(query, &q) != 0)
			reply_error(req, 400, "Bad Request", "malformed query");
		else
			serve_play(h, req, &q);
		break;
	case R_COMMAND:
		serve_command(h, req);
		break;
	case R_BOTS:
		serve_bots(h, req);
		break;
	case R_ASSET:
		break;
	}
	evhttp_clear_headers(&q);
}

static void request_cb(struct evhttp_request *req, void *arg)
{
	struct http *h = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	enum evhttp_cmd_type m = evhttp_request_get_command(req);
	bool get = m == EVHTTP_REQ_GET || m == EVHTTP_REQ_HEAD;
	if (!path || !*path)
		path = "/";
	for (size_t i = 0; i < COUNT_OF(assets); i++) {
		if (strcmp(path, assets[i].path) != 0)
			continue;
		if (!get) {
			evhttp_add_header(evhttp_request_get_output_headers(req), "Allow",
			                  "GET, HEAD");
			reply_error(req, 405, "Method Not Allowed", "this path takes GET or HEAD");
		} else {
			serve_asset(req, &assets[i]);
		}
		return;
	}
	for (size_t i = 0; i < COUNT_OF(routes); i++) {
		if (strcmp(path, routes[i].path) != 0)
			continue;
		bool want_get = routes[i].method == EVHTTP_REQ_GET;
		bool streams = routes[i].kind == R_WATCH || routes[i].kind == R_PLAY;
		if (want_get ? !(m == EVHTTP_REQ_GET || (m == EVHTTP_REQ_HEAD && !streams))
		             : m != routes[i].method) {
			const char *allow = want_get ? (streams ? "GET" : "GET, HEAD") : "POST";
			char msg[64];
			snprintf(msg, sizeof msg, "this path takes %s", allow);
			evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", allow);
			reply_error(req, 405, "Method Not Allowed", msg);
			return;
		}
		dispatch_route(h, req, routes[i].kind, evhttp_uri_get_query(uri));
		return;
	}
	char msg[128];
	snprintf(msg, sizeof msg, "no such path: %.80s", path);
	reply_error(req, 404, "Not Found", msg);
}

/* ---- life cycle ------------------------------------------------------------ */

/* A comment on every stream (see HTTP_KEEPALIVE_SEC). */
static void keepalive_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct http *h = arg;
	struct evbuffer *b = evbuffer_new();
	if (!b)
		return;
	for (struct stream *st = h->streams; st; st = st->next) {
		if (st->midline) /* a comment inside a relayed line would be data */
			continue;
		evbuffer_add(b, ":\n\n", 3);
		stream_send(st, b);
		evbuffer_drain(b, evbuffer_get_length(b));
	}
	evbuffer_free(b);
}

static void accept_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct http *h = arg;
	evconnlistener_enable(h->listener);
}

/* accept() failed: out of descriptors, say. Pause the listener for a
 * moment instead of spinning on it. */
static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct http *h = arg;
	int e = EVUTIL_SOCKET_ERROR();
	http_log(h, "accept failed: %s; pausing for %d ms", evutil_socket_error_to_string(e),
	         HTTP_ACCEPT_RETRY_MS);
	evconnlistener_disable(l);
	struct timeval tv = {0, (suseconds_t)HTTP_ACCEPT_RETRY_MS * 1000};
	evtimer_add(h->accept_retry, &tv);
}

/* Listen on bind (NULL: every address, IPv6 dual-stack or else IPv4). */
static struct evhttp_bound_socket *http_listen(struct http *h, const char *bind, int port)
{
	struct evhttp_bound_socket *bs = NULL;
	if (bind)
		return evhttp_bind_socket_with_handle(h->evh, bind, (ev_uint16_t)port);
	bs = evhttp_bind_socket_with_handle(h->evh, "::", (ev_uint16_t)port);
	if (!bs)
		bs = evhttp_bind_socket_with_handle(h->evh, "0.0.0.0", (ev_uint16_t)port);
	return bs;
}

struct http *http_new(struct server *srv, const struct config *cfg, const struct http_opts *opts,
                      FILE *log)
{
	assert(srv && cfg && opts);
	struct http *h = xcalloc(1, sizeof *h);
	h->srv = srv;
	h->game = core_game(server_core(srv));
	h->cfg = cfg;
	h->base = server_base(srv);
	h->log = log;
	h->timeout_sec = opts->timeout_sec > 0 ? opts->timeout_sec : 1;
	h->max_play = opts->max_play_streams > 0 ? opts->max_play_streams : 1;
	h->bot_program = opts->bot_program;
	h->max_bots = opts->bot_program ? opts->max_bots : 0;
	h->bots = xcalloc((size_t)h->max_bots + 1, sizeof *h->bots);
	h->view = game_view_new(cfg);
	game_cmd_list_init(&h->legal);
	proto_buf_init(&h->buf);
	h->evh = evhttp_new(h->base);
	if (!h->evh) {
		http_log(h, "cannot set up the HTTP server");
		goto fail;
	}
	evhttp_set_max_body_size(h->evh, HTTP_MAX_BODY);
	/* a body over the limit is read and thrown away before the 413 and
	 * the close: closing with bytes unread would reset the connection,
	 * and the client could lose the answer (a lingering close) */
	evhttp_set_flags(h->evh, EVHTTP_SERVER_LINGERING_CLOSE);
	evhttp_set_max_headers_size(h->evh, HTTP_MAX_HEADERS);
	evhttp_set_timeout(h->evh,
	                   h->timeout_sec < HTTP_REQUEST_SEC ? h->timeout_sec : HTTP_REQUEST_SEC);
	evhttp_set_allowed_methods(h->evh, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
	                                           EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	                                           EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
	evhttp_set_gencb(h->evh, request_cb, h);
	struct evhttp_bound_socket *bs = http_listen(h, opts->bind, opts->port);
	if (!bs) {
		http_log(h, "cannot listen on %s port %d: %s",
		         opts->bind ? opts->bind : "any address", opts->port,
		         strerror(errno ? errno : EADDRINUSE));
		goto fail;
	}
	h->port = net_bound_port(evhttp_bound_socket_get_fd(bs));
	h->listener = evhttp_bound_socket_get_listener(bs);
	h->accept_retry = evtimer_new(h->base, accept_retry_cb, h);
	if (!h->accept_retry)
		goto fail;
	evconnlistener_set_error_cb(h->listener, accept_error_cb);
	h->watch_batch = event_new(h->base, -1, EV_PERSIST, watch_batch_cb, h);
	if (!h->watch_batch)
		goto fail;
	h->keepalive = event_new(h->base, -1, EV_PERSIST, keepalive_cb, h);
	struct timeval ka = {HTTP_KEEPALIVE_SEC, 0};
	if (!h->keepalive || event_add(h->keepalive, &ka) != 0)
		goto fail;
	if (h->max_bots > 0) {
		h->sigchld = evsignal_new(h->base, SIGCHLD, sigchld_cb, h);
		if (!h->sigchld || evsignal_add(h->sigchld, NULL) != 0)
			goto fail;
	}
	http_log(h, "the page on %s:%d (at most %d bot(s))", opts->bind ? opts->bind : "[::]",
	         h->port, h->max_bots);
	return h;
fail:
	http_free(h);
	return NULL;
}

int http_port(const struct http *h)
{
	return h->port;
}

static void finish_cap_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

static void finish_poll_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct http *h = arg;
	for (struct stream *st = h->streams; st; st = st->next)
		if (st->req && !st->bev)
			stream_end(st);
	if (!h->streams) /* each is freed once its browser has it all */
		event_base_loopbreak(h->base);
}

void http_finish(struct http *h, int cap_ms)
{
	if (!h || !h->streams)
		return;
	/* the server's connections are closed: each stream reads its last
	 * lines and ends (stream_event_cb); then the browsers take them */
	event_del(h->keepalive);
	struct event *cap = evtimer_new(h->base, finish_cap_cb, h->base);
	struct event *poll = event_new(h->base, -1, EV_PERSIST, finish_poll_cb, h);
	struct timeval tv = {cap_ms / 1000, (suseconds_t)(cap_ms % 1000) * 1000};
	struct timeval every = {0, (suseconds_t)20 * 1000};
	if (cap && poll && evtimer_add(cap, &tv) == 0 && event_add(poll, &every) == 0)
		event_base_dispatch(h->base);
	if (cap)
		event_free(cap);
	if (poll)
		event_free(poll);
}

void http_free(struct http *h)
{
	if (!h)
		return;
	for (int i = 0; i < h->nbots; i++)
		if (h->bots[i].pid > 0)
			kill(h->bots[i].pid, SIGTERM);
	for (int i = 0; i < h->nbots; i++)
		if (h->bots[i].pid > 0)
			waitpid(h->bots[i].pid, NULL, 0);
	/* evhttp_free closes every browser's connection (their close
	 * callbacks free the streams) */
	if (h->evh)
		evhttp_free(h->evh);
	for (struct stream *st = h->streams, *next; st; st = next) {
		next = st->next;
		stream_free(st);
	}
	h->streams = NULL;
	if (h->keepalive)
		event_free(h->keepalive);
	if (h->watch_batch)
		event_free(h->watch_batch);
	if (h->accept_retry)
		event_free(h->accept_retry);
	if (h->sigchld)
		event_free(h->sigchld);
	free(h->bots);
	game_view_free(h->view);
	game_cmd_list_free(&h->legal);
	proto_buf_free(&h->buf);
	free(h);
}
