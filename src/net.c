/*
 * net: the server's loop around one game (include/sopra/net.h; the parts
 * are in src/net_int.h).
 *
 *   socket --net_conn--> queue entries --> the core (dispatcher, game,
 *   broadcaster, sessions) --net_sink--> net_conn --> socket
 *
 * net only frames: every complete line becomes a queue entry, and so do
 * timeouts, lost connections and expired graces; the core's dispatcher is
 * the only caller of the game. Every callback that queues entries ends with
 * net_serve_queue, which drains the queue (run_queue), settles the timers
 * and the end (settle) and flushes the output (net_flush_dirty): a command
 * is answered within the callback that read it.
 */
#include "net_int.h"

#include <assert.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "sopra/xalloc.h"

/* ---- sessions: reconnect graces ------------------------------------------- */

/* A player's grace expired: the core decides whether it is still away. */
static void grace_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct grace_timer *g = arg;
	struct server *s = g->srv;
	if (s->stopping)
		return;
	cmdq_push_grace_over(s->queue, g->player);
	net_serve_queue(s);
}

/* A session_timer_fn: start (sec > 0) or stop player's grace timer. */
static void grace_timer(void *ctx, int player, int sec)
{
	struct server *s = ctx;
	assert(player >= 0 && sec >= 0);
	if (player >= s->ngraces) {
		if (sec == 0)
			return;
		s->graces =
		        xgrow_zeroed(s->graces, &s->ngraces, player, sizeof(struct grace_timer *));
	}
	struct grace_timer *g = s->graces[player];
	if (!g) {
		if (sec == 0)
			return;
		g = s->graces[player] = xcalloc(1, sizeof *g);
		g->srv = s;
		g->player = player;
		g->ev = evtimer_new(s->base, grace_cb, g);
		if (!g->ev)
			xalloc_die(sizeof *g);
	}
	if (sec > 0) {
		struct timeval tv = {sec, 0};
		evtimer_add(g->ev, &tv);
	} else {
		evtimer_del(g->ev);
	}
}

struct core *server_core(const struct server *s)
{
	return s->core;
}

void server_resume(struct server *s, int max_comm, int grace_sec)
{
	if (s->next_comm_id < max_comm)
		s->next_comm_id = max_comm;
	core_resume(s->core, grace_sec);
	net_log(s, "resumed: players may reconnect within %d s", grace_sec);
}

/* ---- shutdown and signals ------------------------------------------------- */

static void shutdown_cap_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct server *s = arg;
	net_log(s, "shutdown: %d connection(s) still flushing; closing them", s->nconns);
	while (s->conns)
		net_conn_close(s->conns, "shutdown time over");
	event_base_loopbreak(s->base);
}

/* Stop accepting and reading, flush and close every connection, then leave
 * the loop (at the latest after cap_ms). */
static void begin_shutdown(struct server *s, int cap_ms, const char *why)
{
	if (s->stopping)
		return;
	s->stopping = true;
	net_log_quiet_summary(s, now_ms(), true);
	net_log(s, "shutting down (%s)", why);
	cmdq_clear(s->queue);
	net_listeners_enable(s, false);
	evtimer_del(s->accept_retry);
	evtimer_del(s->timeout_ev);
	event_del(s->sweep);
	evtimer_del(s->pace_release);
	for (struct conn *c = s->conns, *next; c; c = next) {
		next = c->next;
		net_conn_start_drain(c, "shutdown");
	}
	struct timeval tv = ms_tv(cap_ms);
	evtimer_add(s->shutdown_cap, &tv);
	/* the reaper ends the loop as soon as no connection is left */
	event_active(s->reaper, EV_TIMEOUT, 0);
}

/* SIGUSR1: one status line in the log. */
static void log_status(const struct server *s)
{
	size_t in = 0, out = 0;
	for (const struct conn *c = s->conns; c; c = c->next) {
		in += evbuffer_get_length(c->in);
		out += evbuffer_get_length(c->out) + (c->later ? evbuffer_get_length(c->later) : 0);
	}
	int w = game_waiting_for(s->game);
	char waiting[32];
	if (w >= 0)
		snprintf(waiting, sizeof waiting, "player %d", w);
	else
		snprintf(waiting, sizeof waiting, "%s",
		         w == GAME_WAIT_ANY ? "registration" : "nobody");
	net_log(s,
	        "status: %d player(s) registered, round %d, waiting for %s; %d connection(s) "
	        "(%d stranger(s)); %zu bytes queued out, %zu in, %zu shared",
	        game_player_count(s->game), game_round(s->game), waiting, s->nconns, s->nstrangers,
	        out, in, s->shared_bytes);
}

/* What each signal does (docs/robustness.md). Every one is caught: none
 * ends the process without flushing. */
enum sig_action { SIG_STOP, SIG_STATUS, SIG_IGNORE };
static const struct {
	int sig;
	const char *name;
	enum sig_action action;
} net_signals[] = {
        {SIGINT, "SIGINT", SIG_STOP},     {SIGTERM, "SIGTERM", SIG_STOP},
        {SIGQUIT, "SIGQUIT", SIG_STOP},   {SIGUSR1, "SIGUSR1", SIG_STATUS},
        {SIGHUP, "SIGHUP", SIG_IGNORE},   {SIGUSR2, "SIGUSR2", SIG_IGNORE},
        {SIGALRM, "SIGALRM", SIG_IGNORE},
};
#define NET_NSIGNALS COUNT_OF(net_signals)
_Static_assert(COUNT_OF(net_signals) == COUNT_OF(((struct server *)0)->signals),
               "one libevent event per handled signal");

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	struct server *s = arg;
	size_t k = 0;
	while (k < NET_NSIGNALS && net_signals[k].sig != (int)sig)
		k++;
	if (k == NET_NSIGNALS)
		return;
	switch (net_signals[k].action) {
	case SIG_STATUS:
		log_status(s);
		return;
	case SIG_IGNORE:
		net_log(s, "%s ignored", net_signals[k].name);
		return;
	case SIG_STOP:
		break;
	}
	if (s->stopping) {
		net_log(s, "%s during shutdown: stopping now", net_signals[k].name);
		event_base_loopbreak(s->base);
		return;
	}
	begin_shutdown(s, NET_SHUTDOWN_SIGNAL_MS, net_signals[k].name);
	net_flush_dirty(s);
}

/* ---- after the end: the epilogue (sessions) ------------------------------- */

/* The number of players who missed the end of the game (session_missed_end);
 * their ids, comma-separated, into who (len > 0). */
static int players_missing_end(const struct server *s, char *who, size_t len)
{
	int n = 0;
	who[0] = '\0';
	for (int p = 0; p < game_player_count(s->game); p++) {
		if (!session_missed_end(core_sessions(s->core), p))
			continue;
		size_t used = strlen(who);
		snprintf(who + used, len - used, "%s%d", n++ ? ", " : "", p);
	}
	return n;
}

/* The game is over and players listed in who missed its end: keep
 * listening for their Reconnects for at most --timeout seconds. Whoever is
 * connected (players, watchers) is flushed and closed as at any end;
 * strangers stay (one may be a player coming back). */
static void epilogue_begin(struct server *s, const char *who)
{
	s->epilogue = true;
	net_log(s,
	        "game over; player(s) %s had no connection: waiting up to %d s for them to "
	        "reconnect and receive the end",
	        who, s->timeout_sec);
	struct timeval tv = {s->timeout_sec, 0};
	evtimer_add(s->timeout_ev, &tv);
	for (struct conn *c = s->conns; c; c = c->next)
		if (c->registered || c->watcher)
			net_conn_start_drain(c, "game over");
}

/* The --timeout of the epilogue expired. */
static void epilogue_timeout(struct server *s)
{
	char who[256];
	players_missing_end(s, who, sizeof who);
	net_log(s, "epilogue over: player(s) %s did not come back within %d s", who,
	        s->timeout_sec);
	begin_shutdown(s, NET_SHUTDOWN_GAME_OVER_MS, "game over");
	net_flush_dirty(s);
}

/* The game is over: shut down once nobody who missed the end is left to
 * wait for (without sessions: at once); else begin or go on with the
 * epilogue. */
static void settle_after_end(struct server *s)
{
	char who[256];
	if (players_missing_end(s, who, sizeof who) > 0) {
		if (!s->epilogue)
			epilogue_begin(s, who);
		return;
	}
	if (s->epilogue)
		net_log(s, "epilogue over: every player who had missed the end has received it");
	begin_shutdown(s, NET_SHUTDOWN_GAME_OVER_MS, "game over");
}

/* ---- after every step ----------------------------------------------------- */

/*
 * Called after the queue was drained: either handle the end of the game
 * (settle_after_end) or (re)arm the --timeout while the game waits.
 * restart_timer: a command was applied (or the timer fired), so the wait
 * starts afresh.
 */
static void settle(struct server *s, bool restart_timer)
{
	if (s->stopping)
		return;
	if (game_is_over(s->game)) {
		settle_after_end(s);
		return;
	}
	/* each wait gets the full timeout: restart also when the game now waits
	 * for someone else (e.g. the awaited player's connection was lost) */
	int w = game_waiting_for(s->game);
	if (w == GAME_WAIT_NONE) {
		evtimer_del(s->timeout_ev);
	} else if (restart_timer || w != s->timer_for || !evtimer_pending(s->timeout_ev, NULL)) {
		struct timeval tv = {s->timeout_sec, 0};
		evtimer_add(s->timeout_ev, &tv);
	}
	s->timer_for = w;
}

int server_timeout_left_ms(const struct server *s)
{
	assert(s);
	struct timeval at;
	if (s->stopping || s->epilogue || !evtimer_pending(s->timeout_ev, &at))
		return -1;
	/* event_pending gives the expiry on the gettimeofday clock */
	struct timeval now;
	evutil_gettimeofday(&now, NULL);
	long long ms =
	        ((long long)at.tv_sec - now.tv_sec) * 1000 + (at.tv_usec - now.tv_usec) / 1000;
	return ms < 0 ? 0 : ms > INT_MAX ? INT_MAX : (int)ms;
}

/* Dispatch what the callbacks queued, then settle the timer and shutdown. */
static void run_queue(struct server *s)
{
	if (s->stopping) {
		cmdq_clear(s->queue);
		return;
	}
	if (cmdq_empty(s->queue))
		return;
	struct dispatch_result r = core_drain(s->core);
	net_shared_release(s);
	if (r.halted) {
		/* the journal cannot be written: what went out stays true, the
		 * entry that could not be written had no visible effect; stop
		 * here so that --resume continues from the journal */
		s->halted = true;
		begin_shutdown(s, NET_SHUTDOWN_SIGNAL_MS, "the journal cannot be written");
		return;
	}
	settle(s, r.restart_timer);
}

/* Once, when the first round has started and what that produced is sent:
 * give the heap's free pages back (glibc's malloc_trim). The registrations
 * (the Config line inflated for each player, the output chain behind each
 * player's Config) and the set-up's bursts of events free memory that
 * would otherwise stay resident all game: 4 KiB of a game's 64-72 KiB of
 * heap (docs/performance.md, "Density"). Once per game, never per
 * command. */
static void trim_after_setup(struct server *s)
{
#ifdef __GLIBC__
	if (s->trimmed || game_round(s->game) < 1)
		return;
	s->trimmed = true;
	malloc_trim(0);
#else
	(void)s;
#endif
}

/* The end of every callback: dispatch what it queued, then send what that
 * produced. */
void net_serve_queue(struct server *s)
{
	run_queue(s);
	net_flush_dirty(s);
	trim_after_setup(s);
}

static void timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct server *s = arg;
	if (s->stopping)
		return;
	if (s->epilogue) {
		epilogue_timeout(s);
		return;
	}
	cmdq_push_timeout(s->queue);
	net_serve_queue(s);
}

/* ---- the server ----------------------------------------------------------- */

/* The loop with its priorities. After NET_LOW_PRIO_BURST callbacks of the
 * default or a lower priority, or NET_LOW_PRIO_BURST_US of them, libevent
 * looks for new events again before it runs more: a player's command that
 * arrives meanwhile waits for at most that many strangers' batches, not for
 * all of them. */
#define NET_LOW_PRIO_BURST    8
#define NET_LOW_PRIO_BURST_US 200
static struct event_base *new_event_base(void)
{
	struct event_config *cfg = event_config_new();
	if (!cfg)
		return NULL;
	struct timeval burst = {0, NET_LOW_PRIO_BURST_US};
	event_config_set_max_dispatch_interval(cfg, &burst, NET_LOW_PRIO_BURST, NET_PRIO_DEFAULT);
	struct event_base *base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (base && event_base_priority_init(base, NET_PRIOS) != 0) {
		event_base_free(base);
		return NULL;
	}
	return base;
}

/* The loop's own events: signals, timers, the reaper. */
static bool server_add_events(struct server *s)
{
	for (size_t k = 0; k < NET_NSIGNALS; k++) {
		s->signals[k] = evsignal_new(s->base, net_signals[k].sig, signal_cb, s);
		if (!s->signals[k] || evsignal_add(s->signals[k], NULL) != 0)
			return false;
	}
	s->timeout_ev = evtimer_new(s->base, timeout_cb, s);
	s->reaper = event_new(s->base, -1, 0, net_reaper_cb, s);
	s->shutdown_cap = evtimer_new(s->base, shutdown_cap_cb, s);
	s->accept_retry = evtimer_new(s->base, net_accept_retry_cb, s);
	s->sweep = evtimer_new(s->base, net_sweep_cb, s); /* armed while needed: net_sweep_arm */
	return s->timeout_ev && s->reaper && s->shutdown_cap && s->accept_retry && s->sweep &&
	       net_pace_setup(s) && net_watch_setup(s);
}

struct server *server_new(const struct server_opts *opts, FILE *log)
{
	assert(opts && opts->core.cfg);
	struct server *s = calloc(1, sizeof *s);
	if (!s) {
		if (log)
			fputs("sopra-server: out of memory\n", log);
		return NULL;
	}
	s->rules = opts->core.rules;
	s->timeout_sec = opts->timeout_sec > 0 ? opts->timeout_sec : 1;
	s->max_strangers = opts->max_strangers > 0 ? opts->max_strangers : 1;
	int per_address = opts->max_strangers_per_address;
	s->max_strangers_per_origin =
	        per_address > 0 ? per_address
	                        : server_default_max_strangers_per_address(s->max_strangers);
	s->max_watchers = opts->max_watchers > 0 ? opts->max_watchers : NET_MAX_WATCHERS;
	per_address = opts->max_watchers_per_address;
	s->max_watchers_per_origin = per_address > 0 ? per_address : NET_WATCHERS_PER_ADDRESS;
	s->log = log;
	s->reserve_fd = -1;
	net_quiet_init(&s->quiet, now_ms());
	proto_buf_init(&s->out);
	net_config_init(s, opts->core.cfg); /* config_drop_text may follow */
	proto_buf_init(&s->aside);
	/* the core's services: our sink, our timers, our log */
	struct core_params cp = opts->core;
	cp.sessions.timer = grace_timer;
	cp.sessions.timer_ctx = s;
	cp.log = log;
	s->core = core_new(&cp, net_sink(s));
	s->game = core_game(s->core);
	s->queue = core_queue(s->core);

	s->base = new_event_base();
	if (!s->base) {
		net_log(s, "cannot create the event loop");
		goto fail;
	}
	if (!server_add_events(s)) {
		net_log(s, "cannot set up the event loop");
		goto fail;
	}
	char where[512];
	s->port = net_listen(s, opts->bind, opts->port, false, where, sizeof where);
	if (s->port < 0)
		goto fail;
	if (!net_reserve_fd_open(s))
		net_log(s, "no spare descriptor: connections are refused once none are left");
	net_log(s,
	        "listening on %s (rules %s, timeout %d s, at most %d stranger(s), %d per address)",
	        where, game_rules_name(s->rules), s->timeout_sec, s->max_strangers,
	        s->max_strangers_per_origin);
	s->keep_history = opts->watch || opts->adopted_watchers;
	if (opts->watch) {
		int wp = net_listen(s, opts->bind, opts->watch_port, true, where, sizeof where);
		if (wp < 0)
			goto fail;
		net_log(s, "watchers on %s (at most %d, %d per address)", where, s->max_watchers,
		        s->max_watchers_per_origin);
	}
	return s;

fail:
	server_free(s);
	return NULL;
}

int server_default_max_strangers(int max_players)
{
	int n = 16 * max_players;
	return n < 64 ? 64 : n;
}

int server_default_max_strangers_per_address(int max_strangers)
{
	assert(max_strangers >= 1);
	return max_strangers / 4 + (max_strangers % 4 != 0);
}

void server_set_taps(struct server *s, const struct dispatch_hooks *hooks, server_line_tap on_line,
                     void *line_ctx)
{
	core_set_hooks(s->core, hooks);
	s->line_tap = on_line;
	s->line_tap_ctx = line_ctx;
}

struct event_base *server_base(const struct server *s)
{
	return s->base;
}

int server_port(const struct server *s)
{
	return s->port;
}

int server_run(struct server *s)
{
	/* registration is a wait too: it can time out before anyone connects */
	settle(s, true);
	net_flush_dirty(s);
	if (event_base_dispatch(s->base) < 0) {
		net_log(s, "event loop failed");
		s->loop_failed = true;
	}
	/* whatever is left (signal during shutdown, cap reached) is cut off */
	while (s->conns)
		net_conn_close(s->conns, "server stopped");
	net_log(s, "stopped");
	return s->loop_failed || s->halted ? 1 : 0;
}

void server_free(struct server *s)
{
	if (!s)
		return;
	for (struct conn *c; (c = net_list_pop(&s->conns)) != NULL;)
		net_conn_free(c);
	for (int p = 0; p < s->ngraces; p++) {
		if (s->graces[p])
			event_free(s->graces[p]->ev);
		free(s->graces[p]);
	}
	free(s->graces);
	for (struct conn *c; (c = net_list_pop(&s->dead)) != NULL;)
		net_conn_free(c);
	net_watch_free(s); /* after the connections: they may reference its log */
	net_strangers_free(s);
	for (int k = 0; k < s->nlisteners; k++)
		evconnlistener_free(s->listeners[k].ev);
	for (size_t k = 0; k < NET_NSIGNALS; k++)
		if (s->signals[k])
			event_free(s->signals[k]);
	struct event *evs[] = {s->timeout_ev,   s->reaper, s->shutdown_cap,
	                       s->accept_retry, s->sweep,  s->pace_release};
	for (size_t i = 0; i < COUNT_OF(evs); i++)
		if (evs[i])
			event_free(evs[i]);
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	if (s->base)
		event_base_free(s->base);
	free(s->by_id);
	net_shared_release(s);
	core_free(s->core);
	proto_buf_free(&s->out);
	net_config_free(s);
	proto_buf_free(&s->aside);
	free(s);
}
