/*
 * sopra-bench: one run measures everything of docs/performance.md and prints
 * one table (stdout); progress goes to stderr. It asserts nothing: numbers
 * on a shared machine vary, so the targets are printed next to them.
 *
 *   sopra-bench --server PATH [--bot PATH] [--example CFG] [--big-config CFG]
 *               [--quick] [--only SECTION[,SECTION...]] [--rtt-players N]
 *               [--journal-floor FILE] [--compare PATH]
 *
 * Sections: rtt, engine, api, rss, startup, bots, concurrent, scaling, http.
 * Two more modes are the floors the start-up and memory rows are compared
 * with, run by the bench itself: `--listen-floor PORT` (exec, bind, listen)
 * and `--cjson-floor PORT CONFIG` (the same after reading CONFIG and
 * parsing it with cJSON).
 * --compare PATH: the round trips of a second server (another build) too,
 * playing the same game in the same chunks, and the ratio of the two.
 * bench/run.sh builds everything in Release mode and runs this.
 */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS, MADV_HUGEPAGE: the cJSON floor */

#include "bench.h"
#include "sopra/rng.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *opt_server;
static const char *opt_fanout;         /* sopra-fanout-floor; default: next to this program */
static const char *opt_bot;
static const char *opt_example = "resources/example.json";
static const char *opt_big;
static bool opt_quick;
static const char *opt_only;
static int opt_rtt_players = 2;
static const char *opt_journal_floor; /* a file: the journaled echo floor writes there */
static const char *opt_compare;       /* rtt: a second server, measured in the same chunks */

static bool want(const char *section)
{
	if (!opt_only)
		return true;
	size_t n = strlen(section);
	for (const char *p = opt_only; (p = strstr(p, section)) != NULL; p += n)
		if ((p == opt_only || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}

/* What a process costs a host that runs many of them, in KiB, from
 * /proc/PID/smaps_rollup: Pss (each page divided among the processes that
 * map it, so the shared libraries count a fraction) and private memory
 * (Private_Clean + Private_Dirty: pages no other process maps). -1 when
 * unknown. */
struct mem_kib {
	long pss, priv;
};

static struct mem_kib proc_mem_kib(pid_t pid)
{
	struct mem_kib m = { -1, -1 };
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return m;
	long clean = -1, dirty = -1;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "Pss:", 4) == 0)
			m.pss = strtol(line + 4, NULL, 10);
		else if (strncmp(line, "Private_Clean:", 14) == 0)
			clean = strtol(line + 14, NULL, 10);
		else if (strncmp(line, "Private_Dirty:", 14) == 0)
			dirty = strtol(line + 14, NULL, 10);
	}
	fclose(f);
	if (clean >= 0 && dirty >= 0)
		m.priv = clean + dirty;
	return m;
}

static char *fmt(const char *f, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;
static char *fmt(const char *f, ...)
{
	static char bufs[8][128];
	static int k;
	char *b = bufs[k++ % 8];
	va_list ap;
	va_start(ap, f);
	vsnprintf(b, 128, f, ap);
	va_end(ap);
	return b;
}

static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

/* A row "what": a50 / b50 and a99 / b99 as ratios with `digits` decimals. */
static void ratio_row(const char *what, int digits, uint64_t a50, uint64_t a99, uint64_t b50,
		      uint64_t b99, const char *target)
{
	table_row(what,
		  fmt("%.*fx / %.*fx", digits, (double)a50 / (double)b50, digits,
		      (double)a99 / (double)b99),
		  target, "");
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* ---- 1. round trips: the echo floor and the command mix ----------------------- */

static uint64_t echo_rtt(int fd, struct linebuf *lb)
{
	static const char line[] =
		"{\"command\":\"UseCard\",\"cardId\":999999,\"pad\":\"0123456789\"}\n";
	uint64_t t0 = now_ns();
	write_all(fd, line, sizeof line - 1);
	size_t len;
	for (;;) {
		if (linebuf_next(lb, &len))
			return now_ns() - t0;
		struct pollfd pf = { fd, POLLIN, 0 };
		if (poll(&pf, 1, 10000) <= 0)
			die("echo server does not answer");
		if (linebuf_fill(lb, fd) == 0)
			die("echo server closed");
	}
}

/* n commands of the scripted game s, their round trips into mix (and, by
 * kind of command, into kinds when not NULL). */
static void rtt_chunk(struct script *s, int n, struct samples *mix, struct samples *kinds)
{
	for (int i = 0; i < n; i++) {
		if (!script_send_next(s))
			die("scripted game stalled (over: %d)", s->over);
		int kind = s->pending_kind;
		uint64_t t = script_wait_blocking(s);
		samples_add(mix, t);
		if (kinds && kind >= 0)
			samples_add(&kinds[kind], t);
	}
}

/* server_cpu: where both servers run (the client runs on CPU 0), -1 for
 * wherever the scheduler puts them. With --compare, a second server runs
 * there too and plays the same game in the same chunks. */
static void bench_rtt(int server_cpu, const char *placement)
{
	fprintf(stderr, "round trips (%s): echo floor vs. command mix\n", placement);
	int total = opt_quick ? 5000 : 20000;
	int chunks = 40;
	/* 2 players, 7 commands per turn: enough rounds for every command */
	int np = opt_rtt_players;
	struct cfg_params cp = { .players = np, .locations = 3, .cards_per_deck = 10,
				 .rounds = total / (7 * np) + 200, .feed = true };
	char *text = cfg_generate(&cp);
	char *path = cfg_write_temp(text, "rtt");
	free(text);

	/* The same placement for both servers: on this (virtual) machine a
	 * wake-up across cores costs several times one on the same core, and
	 * where the scheduler happens to put each process would otherwise
	 * decide the ratio. */
	bool pinned = server_cpu >= 0;
	if (pinned) {
		pin_cpu(0);
		child_cpu = server_cpu;
	}
	pid_t epid, bpid;
	int eport = echo_spawn(&epid);
	int efd = tcp_connect(eport);
	if (efd < 0)
		die("connect to the echo server");
	struct linebuf elb = { 0 };
	int bport = blocking_echo_spawn(&bpid, NULL);
	int bfd = tcp_connect(bport);
	if (bfd < 0)
		die("connect to the blocking echo");
	struct linebuf blb = { 0 };
	pid_t jpid = 0;
	int jfd = -1;
	struct linebuf jlb = { 0 };
	if (opt_journal_floor) {
		jfd = tcp_connect(blocking_echo_spawn(&jpid, opt_journal_floor));
		if (jfd < 0)
			die("connect to the journaled blocking echo");
	}

	pid_t spid, cpid = 0;
	int errfd, cerrfd = -1;
	int port = server_spawn(opt_server, path, 42, "base", &spid, &errfd);
	int cport = opt_compare ? server_spawn(opt_compare, path, 42, "base", &cpid, &cerrfd) : -1;
	struct script s, cs;
	child_cpu = -1;
	script_open(&s, port, np);
	script_setup_blocking(&s);
	if (opt_compare) {
		script_open(&cs, cport, np);
		script_setup_blocking(&cs);
	}

	struct samples echo = { 0 }, blocking = { 0 }, journaled = { 0 }, mix = { 0 },
		       cmix = { 0 }, kinds[SCRIPT_MIX_LEN];
	memset(kinds, 0, sizeof kinds);
	/* warm-up: caches, branch predictors, the allocator */
	for (int i = 0; i < 500; i++) {
		echo_rtt(efd, &elb);
		echo_rtt(bfd, &blb);
		if (jfd >= 0)
			echo_rtt(jfd, &jlb);
		if (!script_send_next(&s))
			die("scripted game stalled");
		script_wait_blocking(&s);
		if (opt_compare) {
			if (!script_send_next(&cs))
				die("scripted game stalled (compared server)");
			script_wait_blocking(&cs);
		}
	}
	long failed0 = s.failed, cmds0 = s.commands;
	/* interleaved chunks: both see the same machine noise */
	for (int c = 0; c < chunks; c++) {
		for (int i = 0; i < total / chunks; i++)
			samples_add(&blocking, echo_rtt(bfd, &blb));
		for (int i = 0; i < total / chunks; i++)
			samples_add(&echo, echo_rtt(efd, &elb));
		for (int i = 0; jfd >= 0 && i < total / chunks; i++)
			samples_add(&journaled, echo_rtt(jfd, &jlb));
		/* the compared server before and after, in turns */
		if (opt_compare && c % 2 == 0)
			rtt_chunk(&cs, total / chunks, &cmix, NULL);
		rtt_chunk(&s, total / chunks, &mix, kinds);
		if (opt_compare && c % 2 == 1)
			rtt_chunk(&cs, total / chunks, &cmix, NULL);
	}
	struct mem_kib mem = proc_mem_kib(spid);
	script_close(&s);
	proc_stop(spid);
	close(errfd);
	if (opt_compare) {
		script_close(&cs);
		proc_stop(cpid);
		close(cerrfd);
	}
	close(efd);
	linebuf_free(&elb);
	proc_stop(epid);
	close(bfd);
	linebuf_free(&blb);
	proc_stop(bpid);
	if (jfd >= 0) {
		close(jfd);
		linebuf_free(&jlb);
		proc_stop(jpid);
		unlink(opt_journal_floor);
	}
	unlink(path);
	free(path);
	if (pinned)
		pin_cpu(-1);

	uint64_t e50 = samples_q(&echo, 0.5), e99 = samples_q(&echo, 0.99);
	uint64_t b50 = samples_q(&blocking, 0.5), b99 = samples_q(&blocking, 0.99);
	uint64_t m50 = samples_q(&mix, 0.5), m99 = samples_q(&mix, 0.99);
	table_row(fmt("%s: blocking echo floor RTT p50 / p99 / max (us)", placement),
		  fmt("%.1f / %.1f / %.0f", us(b50), us(b99), us(samples_max(&blocking))), "",
		  fmt("%d round trips, 60-byte line, read()/write(), no event loop", total));
	table_row(fmt("%s: libevent echo floor RTT p50 / p99 / max (us)", placement),
		  fmt("%.1f / %.1f / %.0f", us(e50), us(e99), us(samples_max(&echo))), "",
		  fmt("%d round trips, 60-byte line, libevent bufferevent", total));
	table_row(fmt("%s: command -> last event RTT p50 / p99 / max (us)", placement),
		  fmt("%.1f / %.1f / %.0f", us(m50), us(m99), us(samples_max(&mix))), "",
		  fmt("%ld commands, %d players, %ld%% fail", s.commands - cmds0, np,
		      100 * (s.failed - failed0) / (s.commands - cmds0 ? s.commands - cmds0 : 1)));
	ratio_row("  ratio to the blocking floor p50 / p99", 2, m50, m99, b50, b99, "<= 1.3x / 2x");
	ratio_row("  ratio to the libevent floor p50 / p99", 2, m50, m99, e50, e99, "");
	if (opt_compare) {
		uint64_t c50 = samples_q(&cmix, 0.5), c99 = samples_q(&cmix, 0.99);
		table_row(fmt("%s: compared server RTT p50 / p99 / max (us)", placement),
			  fmt("%.1f / %.1f / %.0f", us(c50), us(c99), us(samples_max(&cmix))), "",
			  "--compare: the same game, in the same chunks, before or after the server");
		ratio_row("  compared server: ratio to the blocking floor p50 / p99", 2, c50, c99,
			  b50, b99, "");
		ratio_row("  server / compared server p50 / p99", 3, m50, m99, c50, c99, "");
	}
	if (jfd >= 0) {
		uint64_t j50 = samples_q(&journaled, 0.5), j99 = samples_q(&journaled, 0.99);
		table_row(fmt("%s: journaled blocking echo floor RTT p50 / p99 / max (us)", placement),
			  fmt("%.1f / %.1f / %.0f", us(j50), us(j99), us(samples_max(&journaled))), "",
			  "the blocking echo with one write(2) of each line to a file first");
		ratio_row("  ratio to the journaled floor p50 / p99", 2, m50, m99, j50, j99, "");
	}
	char buf[256] = "";
	size_t off = 0;
	for (int k = 0; k < SCRIPT_MIX_LEN; k++) {
		int n = snprintf(buf + off, sizeof buf - off, "%s%.1f", k ? " / " : "",
				 us(samples_q(&kinds[k], 0.5)));
		off += n > 0 ? (size_t)n : 0;
		samples_free(&kinds[k]);
	}
	table_row("  p50 per command (us)", buf, "",
		  "UseCard/Move/Barricade/UseAbility/Attack/Search/EndTurn");
	table_row("  server Pss / private after the round trips (KiB)",
		  fmt("%ld / %ld", mem.pss, mem.priv), "", "");
	samples_free(&echo);
	samples_free(&blocking);
	samples_free(&journaled);
	samples_free(&mix);
	samples_free(&cmix);
}

/* ---- 1b. round trips with the HTTP port and a browser watching ----------------- */

static int free_port(void); /* section 4 */

/* A browser watching: a child that reads the event stream of /api/watch
 * until it ends, as EventSource does. */
static pid_t watcher_spawn(int http_port)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid > 0) {
		child_started(pid);
		return pid;
	}
	int fd = -1;
	for (int i = 0; i < 200 && (fd = tcp_connect(http_port)) < 0; i++)
		sleep_ms(10);
	if (fd < 0)
		_exit(1);
	static const char req[] = "GET /api/watch HTTP/1.1\r\nHost: bench\r\n\r\n";
	write_all(fd, req, sizeof req - 1);
	char buf[65536];
	while (read(fd, buf, sizeof buf) > 0)
		;
	_exit(0);
}

/* The load average of the last minute (/proc/loadavg), -1 if unknown. */
static double load_avg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

/* The same scripted game on three servers in interleaved chunks: a plain
 * one, one with sessions (--reconnect-grace, which --http-port turns on)
 * and one with --http-port and a browser watching: the HTTP port must not
 * slow the TCP players down (docs/web.md), and the second one tells the
 * sessions' share from the watcher's. */
static void bench_http(void)
{
	fprintf(stderr, "round trips: plain server vs. sessions vs. --http-port with a watcher\n");
	int total = opt_quick ? 4000 : 20000;
	int chunks = 40;
	int np = opt_rtt_players;
	struct cfg_params cp = { .players = np, .locations = 3, .cards_per_deck = 10,
				 .rounds = total / (7 * np) + 200, .feed = true };
	char *text = cfg_generate(&cp);
	char *path = cfg_write_temp(text, "http");
	free(text);
	double load0 = load_avg();
	enum { PLAIN, SESSIONS, HTTP, NSERVERS };
	pid_t pid[NSERVERS], wpid;
	int err[NSERVERS], port[NSERVERS];
	char hport[16];
	int http_port = free_port();
	snprintf(hport, sizeof hport, "%d", http_port);
	port[PLAIN] = server_spawn(opt_server, path, 42, "base", &pid[PLAIN], &err[PLAIN]);
	port[SESSIONS] = server_spawn_with(opt_server, path, 42, "base", "--reconnect-grace",
					   "3600", &pid[SESSIONS], &err[SESSIONS]);
	port[HTTP] = server_spawn_with(opt_server, path, 42, "base", "--http-port", hport,
				       &pid[HTTP], &err[HTTP]);
	wpid = watcher_spawn(http_port);
	struct script sc[NSERVERS];
	struct samples sm[NSERVERS];
	memset(sm, 0, sizeof sm);
	for (int k = 0; k < NSERVERS; k++) {
		script_open(&sc[k], port[k], np);
		script_setup_blocking(&sc[k]);
	}
	for (int i = 0; i < 500; i++)
		for (int k = 0; k < NSERVERS; k++) {
			if (!script_send_next(&sc[k]))
				die("scripted game stalled");
			script_wait_blocking(&sc[k]);
		}
	for (int c = 0; c < chunks; c++)
		for (int j = 0; j < NSERVERS; j++) {
			int k = (c + j) % NSERVERS; /* rotate which goes first */
			for (int i = 0; i < total / chunks; i++) {
				if (!script_send_next(&sc[k]))
					die("scripted game stalled (over: %d)", sc[k].over);
				samples_add(&sm[k], script_wait_blocking(&sc[k]));
			}
		}
	long hwm[NSERVERS];
	for (int k = 0; k < NSERVERS; k++) {
		hwm[k] = proc_status_kib(pid[k], "VmHWM");
		script_close(&sc[k]);
		proc_stop(pid[k]);
		close(err[k]);
	}
	proc_stop(wpid);
	unlink(path);
	free(path);
	double load1 = load_avg();
	uint64_t p50[NSERVERS], p99[NSERVERS];
	for (int k = 0; k < NSERVERS; k++) {
		p50[k] = samples_q(&sm[k], 0.5);
		p99[k] = samples_q(&sm[k], 0.99);
		samples_free(&sm[k]);
	}
	table_row("http: command -> last event RTT p50 / p99, plain server (us)",
		  fmt("%.1f / %.1f", us(p50[PLAIN]), us(p99[PLAIN])), "",
		  fmt("%d commands each, interleaved", total));
	table_row("http: the same with sessions (--reconnect-grace) (us)",
		  fmt("%.1f / %.1f", us(p50[SESSIONS]), us(p99[SESSIONS])), "",
		  "what --http-port turns on besides the port");
	table_row("http: the same with --http-port and a browser watching (us)",
		  fmt("%.1f / %.1f", us(p50[HTTP]), us(p99[HTTP])), "",
		  "one /api/watch event stream read");
	table_row("  ratio p50 / p99 to the plain server",
		  fmt("%.3fx / %.2fx", (double)p50[HTTP] / (double)p50[PLAIN],
		      (double)p99[HTTP] / (double)p99[PLAIN]),
		  "p50 <= 1.05x", "");
	table_row("  ratio p50 / p99 to the server with sessions",
		  fmt("%.3fx / %.2fx", (double)p50[HTTP] / (double)p50[SESSIONS],
		      (double)p99[HTTP] / (double)p99[SESSIONS]),
		  "", "the watcher and the port alone");
	table_row("  peak RSS plain / sessions / with the HTTP port (KiB)",
		  fmt("%ld / %ld / %ld", hwm[PLAIN], hwm[SESSIONS], hwm[HTTP]), "", "");
	table_row("  load average (1 min) before / after", fmt("%.2f / %.2f", load0, load1), "",
		  "the machine is shared: a high load makes the ratios noisy");
}

/* ---- 2. the in-process engine --------------------------------------------------- */

static const enum game_rules both_rules[2] = { RULES_BASE, RULES_REVISED };

/* The example configuration (--example), or the run dies. */
static struct config *load_example(void)
{
	struct config_errors errs = { 0 };
	struct config *cfg = config_load(opt_example, &errs);
	if (!cfg)
		die("%s: %s", opt_example, errs.n ? errs.msgs[0] : "invalid");
	return cfg;
}

static void bench_engine(void)
{
	fprintf(stderr, "engine: in-process command rate\n");
	struct config *cfg = load_example();
	const enum game_rules *rules = both_rules;
	for (int i = 0; i < 2; i++) {
		struct engine_result r;
		engine_bench(cfg, rules[i], cfg->max_players, opt_quick ? 100 : 400, 3, &r);
		const char *rn = game_rules_name(rules[i]);
		table_row(fmt("engine %s: game_apply (commands/s)", rn),
			  fmt("%.0f", (double)r.commands / r.apply_s), ">= 1000000",
			  fmt("%ld games x %ld-%ld commands, %.1f events/command, %d players",
			      r.games, r.cmds_per_game_min, r.cmds_per_game_max,
			      (double)r.events / (double)r.commands, cfg->max_players));
		table_row(fmt("engine %s: decode+apply+encode (commands/s)", rn),
			  fmt("%.0f", (double)r.commands / r.full_s), "",
			  fmt("%.2f us/command incl. JSON both ways",
			      r.full_s * 1e6 / (double)r.commands));
	}
	config_free(cfg);
}

/* ---- 2b. the game API a search bot uses ------------------------------------------- */

static void bench_api(void)
{
	fprintf(stderr, "api: legal commands, clones, views\n");
	struct config *cfg = load_example();
	const enum game_rules *rules = both_rules;
	for (int i = 0; i < 2; i++) {
		struct api_result r;
		api_bench(cfg, rules[i], opt_quick ? 40 : 200, opt_quick ? 3 : 5, &r);
		const char *rn = game_rules_name(rules[i]);
		double apply_us = r.apply_s * 1e6;
		table_row(fmt("api %s: game_legal_commands (lists/s)", rn), fmt("%.0f", 1 / r.legal_s),
			  "", fmt("%.1f commands per list, %.2f us = %.1f x game_apply; %ld states",
				  (double)r.listed / (double)r.ops, r.legal_s * 1e6,
				  r.legal_s * 1e6 / apply_us, r.states));
		table_row(fmt("api %s: game_clone + game_free (clones/s)", rn),
			  fmt("%.0f", 1 / r.clone_s), "",
			  fmt("%.2f us = %.1f x game_apply (%.2f us, on a clone)", r.clone_s * 1e6,
			      r.clone_s * 1e6 / apply_us, apply_us));
		table_row(fmt("api %s: game_view_of (views/s)", rn), fmt("%.0f", 1 / r.view_s), "",
			  fmt("%.2f us", r.view_s * 1e6));
		table_row(fmt("api %s: game_from_view + game_free (games/s)", rn),
			  fmt("%.0f", 1 / r.from_view_s), "", fmt("%.2f us", r.from_view_s * 1e6));
		table_row(fmt("api %s: random rollouts to the end (rollouts/s)", rn),
			  fmt("%.0f", (double)r.rollouts / r.rollout_s), "",
			  fmt("%.0f commands each, %.2f us per command with its list",
			      (double)r.rollout_commands / (double)r.rollouts,
			      r.rollout_s * 1e6 / (double)r.rollout_commands));
	}
	config_free(cfg);
}

/* ---- 3. memory ----------------------------------------------------------------------- */

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/* Memory of an idle process, the median of 5 starts (file-backed pages
 * vary from start to start with the kernel's fault-around). */
static void mem_row(const char *label, const char *target,
		    pid_t (*start)(const char *, const char *), const char *server, const char *arg)
{
	enum { RUNS = 5 };
	long pss[RUNS], priv[RUNS];
	for (int i = 0; i < RUNS; i++) {
		pid_t pid = start(server, arg);
		sleep_ms(30);
		struct mem_kib m = proc_mem_kib(pid);
		pss[i] = m.pss;
		priv[i] = m.priv;
		proc_stop(pid);
	}
	qsort(pss, RUNS, sizeof(long), cmp_long);
	qsort(priv, RUNS, sizeof(long), cmp_long);
	table_row(fmt("memory idle, %s: Pss / private (KiB)", label),
		  fmt("%ld / %ld", pss[RUNS / 2], priv[RUNS / 2]), target,
		  fmt("smaps_rollup; private = Private_Clean + Private_Dirty; median of %d", RUNS));
}

static pid_t start_server_idle(const char *server, const char *config)
{
	pid_t pid;
	int errfd;
	server_spawn(server, config, 1, "base", &pid, &errfd);
	close(errfd);
	return pid;
}

static const char *self_path;
static int free_port(void);

static pid_t start_listen_floor(const char *unused, const char *unused2)
{
	(void)unused;
	(void)unused2;
	char portbuf[16];
	snprintf(portbuf, sizeof portbuf, "%d", free_port());
	const char *argv[] = { self_path, "--listen-floor", portbuf, NULL };
	pid_t pid = spawn_argv(argv, SPAWN_INHERIT, SPAWN_INHERIT, SPAWN_INHERIT);
	sleep_ms(20);
	return pid;
}

static void bench_rss(void)
{
	fprintf(stderr, "memory: idle and in a 6-player game\n");
	mem_row("floor (sopra-bench: libc, libevent, libcjson; only listens)", "",
		start_listen_floor, NULL, NULL);
	mem_row("server, example.json", "<= 2048", start_server_idle, opt_server, opt_example);
	if (opt_big)
		mem_row("server, largest config", "<= 2048", start_server_idle, opt_server, opt_big);

	struct cfg_params cp = { .players = 6, .locations = 6, .cards_per_deck = 30,
				 .rounds = 60, .feed = true };
	char *text = cfg_generate(&cp);
	char *path = cfg_write_temp(text, "rss6");
	free(text);
	pid_t pid;
	int errfd;
	int port = server_spawn(opt_server, path, 7, "base", &pid, &errfd);
	struct script s;
	script_open(&s, port, 6);
	script_setup_blocking(&s);
	/* Pss and private memory mid-game and the most seen (sampled every 100
	 * commands, while the server lives) */
	struct mem_kib mid = { -1, -1 }, most = { -1, -1 };
	while (!s.over && script_send_next(&s)) {
		script_wait_blocking(&s);
		if (s.commands % 100 != 0 && s.commands != 6 * 7 * 30)
			continue;
		struct mem_kib m = proc_mem_kib(pid);
		if (s.commands == 6 * 7 * 30)
			mid = m;
		if (m.pss > most.pss)
			most.pss = m.pss;
		if (m.priv > most.priv)
			most.priv = m.priv;
	}
	long cmds = s.commands;
	script_close(&s);
	int st = proc_wait(pid, 3000);
	close(errfd);
	unlink(path);
	free(path);
	table_row("server in a 6-player game: Pss / private mid-game, most seen (KiB)",
		  fmt("%ld / %ld, %ld / %ld", mid.pss, mid.priv, most.pss, most.priv), "",
		  fmt("%ld commands, 60 rounds to GameEnd, exit %d; sampled every 100 commands",
		      cmds, WIFEXITED(st) ? WEXITSTATUS(st) : -1));
}

/* ---- 4. start-up ------------------------------------------------------------------- */

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sin;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0)
		die("bind: %s", strerror(errno));
	socklen_t len = sizeof sin;
	getsockname(fd, (struct sockaddr *)&sin, &len);
	close(fd);
	return ntohs(sin.sin_port);
}

/* exec -> first successful connect, in ns. argv[] gets the port appended. */
static uint64_t time_to_listen(const char *const *argv_in, int port)
{
	const char *argv[16];
	int n = 0;
	char portbuf[16];
	snprintf(portbuf, sizeof portbuf, "%d", port);
	for (; argv_in[n]; n++)
		argv[n] = strcmp(argv_in[n], "PORT") == 0 ? portbuf : argv_in[n];
	argv[n] = NULL;
	uint64_t t0 = now_ns();
	pid_t pid = spawn_argv(argv, SPAWN_INHERIT, SPAWN_NULL, SPAWN_NULL);
	for (;;) {
		int fd = tcp_connect(port);
		if (fd >= 0) {
			uint64_t t = now_ns() - t0;
			close(fd);
			proc_stop(pid);
			return t;
		}
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid)
			die("%s exited before listening", argv[0]);
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
}

/* One start-up row's program and its times. */
struct startup_run {
	char label[128];
	const char *target;
	const char *argv[12];
	struct samples s;
};

/* Adds the row of r (p50 / min / max) and returns its p50 in ns. */
static uint64_t startup_row(struct startup_run *r, int runs)
{
	uint64_t p50 = samples_q(&r->s, 0.5);
	table_row(fmt("start-up to listening, %s: p50 / min / max (ms)", r->label),
	          fmt("%.2f / %.2f / %.2f", us(p50) / 1000, us(samples_q(&r->s, 0)) / 1000,
	              us(samples_max(&r->s)) / 1000),
	          r->target, fmt("exec -> successful connect, %d runs, interleaved", runs));
	return p50;
}

/* The server's row for a config after the cJSON floor's for the same file
 * (the run before it in the list), and the ratio of their p50s. */
static void startup_server_rows(struct startup_run *floor_run, struct startup_run *server, int runs)
{
	uint64_t floor_p50 = startup_row(floor_run, runs);
	uint64_t server_p50 = startup_row(server, runs);
	table_row(fmt("  %s: ratio to the cJSON floor p50", server->label),
	          fmt("%.2fx", (double)server_p50 / (double)(floor_p50 ? floor_p50 : 1)), "",
	          "cJSON floor: exec, read the file, cJSON_ParseWithLength, bind+listen");
}

/* Fills r with the cJSON floor for config and, in r + 1, the server with it. */
static void startup_pair(struct startup_run *r, const char *label, const char *config,
                         const char *target)
{
	r[0] = (struct startup_run){.target = "",
	                            .argv = {self_path, "--cjson-floor", "PORT", config}};
	r[1] = (struct startup_run){.target = target,
	                            .argv = {opt_server, "--config", config, "--port", "PORT",
	                                     "--seed", "1", "--timeout", "60"}};
	snprintf(r[0].label, sizeof r[0].label, "cJSON floor, %s", label);
	snprintf(r[1].label, sizeof r[1].label, "%s", label);
}

/* The floors and the servers take turns, run by run, so that a load that
 * comes and goes on the machine falls on all of them alike. */
static void bench_startup(void)
{
	fprintf(stderr, "start-up: exec -> connect\n");
	int runs = opt_quick ? 10 : 30;
	struct startup_run r[5] = {
	        {.label = "floor (bind+listen only)",
	         .target = "",
	         .argv = {self_path, "--listen-floor", "PORT"}},
	};
	startup_pair(&r[1], "example.json", opt_example, "");
	int n = 3;
	if (opt_big) {
		struct stat st;
		stat(opt_big, &st);
		startup_pair(&r[3], fmt("largest config (%lld KiB)", (long long)st.st_size / 1024),
		             opt_big, "<= 5");
		n = 5;
	}
	for (int i = 0; i < runs; i++)
		for (int j = 0; j < n; j++)
			samples_add(&r[j].s, time_to_listen(r[j].argv, free_port()));
	startup_row(&r[0], runs);
	for (int j = 1; j < n; j += 2)
		startup_server_rows(&r[j], &r[j + 1], runs);
	for (int j = 0; j < n; j++)
		samples_free(&r[j].s);
}

/* The --listen-floor mode: what exec + bind + listen cost without any work. */
static int listen_floor(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in sin;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	sin.sin_port = htons((unsigned short)port);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0 || listen(fd, 16) != 0)
		return 1;
	pause();
	return 0;
}

/* The --cjson-floor mode's memory for cJSON's tree: one block, sized from
 * the text like config.c's first tree block (8 bytes a byte of text), and
 * like it on huge pages from 1 MiB on (MADV_HUGEPAGE; see config.c: a page
 * fault is expensive on the machines measured), bump-allocated; what does
 * not fit comes from malloc. Nothing is freed (the process only listens). */
static struct {
	unsigned char *mem;
	size_t used, cap;
} floor_tree;

static void *floor_tree_alloc(size_t n)
{
	size_t need = (n + 15) & ~(size_t)15;
	if (floor_tree.cap - floor_tree.used < need)
		return malloc(n);
	void *p = floor_tree.mem + floor_tree.used;
	floor_tree.used += need;
	return p;
}

static void floor_tree_free(void *p)
{
	(void)p;
}

/* cap bytes for the tree: a 2 MiB-aligned mapping with MADV_HUGEPAGE from
 * 1 MiB on, else malloc's. */
static unsigned char *floor_tree_block(size_t cap)
{
	const size_t huge = (size_t)2 << 20;
	if (cap < huge / 2)
		return malloc(cap);
	size_t len = (cap + huge - 1) & ~(huge - 1);
	unsigned char *map = mmap(NULL, len + huge, PROT_READ | PROT_WRITE,
	                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	unsigned char *block = map + (huge - (uintptr_t)map % huge) % huge;
	madvise(block, len, MADV_HUGEPAGE);
	return block;
}

/* The --cjson-floor mode: the least a server that decodes its configuration
 * with cJSON must do before it listens -- exec, read the file (one buffer
 * of its fstat size, one read), cJSON_ParseWithLength into one block (no
 * malloc per node), bind+listen. No syntax check, no schema, no game. */
static int cjson_floor(int port, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return 1;
	size_t size = (size_t)st.st_size, len = 0;
	char *text = malloc(size + 1);
	ssize_t got;
	while (text && len < size && (got = read(fd, text + len, size - len)) > 0)
		len += (size_t)got;
	close(fd);
	if (!text || len != size)
		return 1;
	floor_tree.cap = size * 8 < ((size_t)64 << 10) ? (size_t)64 << 10 : size * 8;
	floor_tree.mem = floor_tree_block(floor_tree.cap);
	cJSON_Hooks hooks = {floor_tree_alloc, floor_tree_free};
	cJSON_InitHooks(&hooks);
	if (!floor_tree.mem || !cJSON_ParseWithLength(text, len))
		return 1;
	return listen_floor(port);
}

/* ---- 5. full games with sopra-bot ---------------------------------------------------------- */

/* errfd: the write end the bot's stderr (its summary line) goes to. */
static pid_t spawn_bot(int port, int seed, bool start, int errfd)
{
	char portbuf[16], seedbuf[16];
	snprintf(portbuf, sizeof portbuf, "%d", port);
	snprintf(seedbuf, sizeof seedbuf, "%d", seed);
	const char *argv[] = { opt_bot, "--port", portbuf, "--seed", seedbuf, "--quiet",
			       start ? "--start" : NULL, NULL };
	return spawn_argv(argv, SPAWN_NULL, SPAWN_NULL, errfd);
}

/* Wait until the server's log shows n registrations. */
static void wait_registered(int errfd, int n)
{
	static char buf[65536];
	static size_t len;
	len = 0;
	int seen = 0;
	while (seen < n) {
		struct pollfd pf = { errfd, POLLIN, 0 };
		if (poll(&pf, 1, 10000) <= 0)
			die("bots did not register");
		ssize_t r = read(errfd, buf + len, sizeof buf - 1 - len);
		if (r <= 0)
			die("server log closed during registration");
		len += (size_t)r;
		buf[len] = '\0';
		seen = 0;
		for (const char *p = buf; (p = strstr(p, "registered as player")) != NULL; p++)
			seen++;
	}
}

static void bench_bots(void)
{
	if (!opt_bot || access(opt_bot, X_OK) != 0) {
		table_row("full games with sopra-bot (games/s)", "n/a", "",
			  "sopra-bot not built (tools/)");
		return;
	}
	fprintf(stderr, "full games: sopra-bot clients\n");
	int games = opt_quick ? 30 : 100;
	int bad = 0;
	long commands = 0, events = 0;
	struct samples dur = { 0 };
	uint64_t t0 = now_ns();
	for (int i = 0; i < games; i++) {
		uint64_t g0 = now_ns();
		int nbots = 2 + i % 3; /* 2, 3, 4; example.json starts itself at 4 */
		pid_t spid;
		int errfd;
		int port = server_spawn(opt_server, opt_example, 1000 + i, "base", &spid, &errfd);
		pid_t bots[4];
		int bp[2];
		pipe_cloexec(bp);
		for (int b = 0; b < nbots - 1; b++)
			bots[b] = spawn_bot(port, 7 * i + b, false, bp[1]);
		if (nbots < 4)
			wait_registered(errfd, nbots - 1);
		bots[nbots - 1] = spawn_bot(port, 7 * i + nbots - 1, nbots < 4, bp[1]);
		close(bp[1]);
		for (int b = 0; b < nbots; b++) {
			int st;
			waitpid(bots[b], &st, 0);
			child_reaped(bots[b]);
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
				bad++;
		}
		/* the bots' summaries: "... events=N commands=M ..." */
		char sum[4096];
		size_t sl = 0;
		ssize_t r;
		while (sl < sizeof sum - 1 && (r = read(bp[0], sum + sl, sizeof sum - 1 - sl)) > 0)
			sl += (size_t)r;
		sum[sl] = '\0';
		close(bp[0]);
		for (const char *q = sum; (q = strstr(q, "commands=")) != NULL; q++)
			commands += strtol(q + 9, NULL, 10);
		for (const char *q = sum; (q = strstr(q, "events=")) != NULL; q++)
			events += strtol(q + 7, NULL, 10);
		int st;
		waitpid(spid, &st, 0);
		child_reaped(spid);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad++;
		close(errfd);
		samples_add(&dur, now_ns() - g0);
	}
	double s = (double)(now_ns() - t0) / 1e9;
	table_row("full games with sopra-bot, sequential (games/s)", fmt("%.1f", games / s), "",
		  fmt("%d games, 2-4 bots, example.json; game p50 %.1f ms; %d bad exits", games,
		      us(samples_q(&dur, 0.5)) / 1000, bad));
	table_row("  commands / events per game (from the bots' summaries)",
		  fmt("%.0f / %.0f", (double)commands / games, (double)events / games), "",
		  fmt("%.0f commands/s over the whole run incl. process start-ups",
		      (double)commands / s));
	samples_free(&dur);
}

/* ---- 6. many servers at once ------------------------------------------------------------- */

struct slot {
	struct script s;
	pid_t pid;
	int errfd;
	uint64_t next_send; /* paced mode: not before */
	struct samples lat;
};

/* What one run of the concurrent games measured. */
/* CPU time (user + system) between two getrusage() readings, in seconds. */
static double cpu_seconds(const struct rusage *a, const struct rusage *b)
{
	return (double)(b->ru_utime.tv_sec - a->ru_utime.tv_sec) +
	       (double)(b->ru_stime.tv_sec - a->ru_stime.tv_sec) +
	       (double)(b->ru_utime.tv_usec - a->ru_utime.tv_usec) / 1e6 +
	       (double)(b->ru_stime.tv_usec - a->ru_stime.tv_usec) / 1e6;
}

struct conc_result {
	double cmds_per_s;
	long cmds, over;
	double secs, client_cpu; /* wall time; the bench client's CPU time (s) */
	double p50_ms, p99_ms, max_ms, mean_ms, worst99_ms;
	double late_us; /* paced: how late a send was after its next_send, mean */
};

/* Wait for events at most timeout_ns (< 0: 100 ms). epoll_pwait2 so that a
 * think time of 1-2 ms is not rounded to whole milliseconds; epoll_wait
 * (rounded up) where the kernel lacks it. */
static int conc_wait(int epfd, struct epoll_event *evs, int max, int64_t timeout_ns)
{
	static bool no_pwait2;
	if (timeout_ns < 0)
		timeout_ns = 100000000;
	if (!no_pwait2) {
		struct timespec ts = { (time_t)(timeout_ns / 1000000000),
				       (long)(timeout_ns % 1000000000) };
		int n = epoll_pwait2(epfd, evs, max, &ts, NULL);
		if (n >= 0 || errno != ENOSYS)
			return n;
		no_pwait2 = true;
	}
	return epoll_wait(epfd, evs, max, (int)((timeout_ns + 999999) / 1000000));
}

/* Drive every game for `seconds`: closed loop (think_us 0: the next command
 * as soon as the last one completed) or paced (each game waits a uniform
 * 0..2*think_us after a completion). In-flight commands are drained. */
static void concurrent_run(struct slot *g, int ngames, int epfd, double seconds, int think_us,
			   struct conc_result *res)
{
	struct samples all = { 0 };
	long cmds0 = 0;
	for (int i = 0; i < ngames; i++) {
		cmds0 += g[i].s.commands;
		g[i].lat.n = 0;
		g[i].next_send = 0;
	}
	struct rng r;
	rng_init(&r, 99);
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(seconds * 1e9);
	uint64_t late_sum = 0;
	long late_n = 0;
	struct epoll_event evs[256];
	bool sending = true;
	for (;;) {
		uint64_t now = now_ns();
		if (sending && now >= end)
			sending = false;
		bool inflight = false;
		uint64_t wake = end; /* the earliest next_send still to come */
		for (int i = 0; i < ngames; i++) {
			struct slot *sl = &g[i];
			if (sl->s.pending_on >= 0) {
				inflight = true;
				continue;
			}
			if (!sending || sl->s.over)
				continue;
			if (now >= sl->next_send) {
				/* next_send 0: the first command of the run */
				if (script_send_next(&sl->s) && sl->next_send) {
					late_sum += now - sl->next_send;
					late_n++;
				}
			} else if (sl->next_send < wake) {
				wake = sl->next_send;
			}
			inflight |= sl->s.pending_on >= 0;
		}
		if (!sending && !inflight)
			break;
		int64_t timeout = -1;
		if (think_us && sending)
			timeout = wake > now ? (int64_t)(wake - now) : 0;
		int n = conc_wait(epfd, evs, 256, timeout);
		for (int k = 0; k < n; k++) {
			int gi = (int)(evs[k].data.u64 >> 8), ci = (int)(evs[k].data.u64 & 0xff);
			struct slot *sl = &g[gi];
			if (sl->s.fds[ci] < 0)
				continue;
			int fd = sl->s.fds[ci];
			uint64_t done;
			int kind = sl->s.pending_kind;
			uint64_t sent = sl->s.sent_ns;
			if (script_on_readable(&sl->s, ci, &done) && kind >= 0) {
				samples_add(&sl->lat, done - sent);
				samples_add(&all, done - sent);
				if (think_us)
					sl->next_send =
						done + (uint64_t)rng_next_int(&r, 2 * think_us) * 1000u;
			}
			if (sl->s.fds[ci] < 0)
				epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
		}
	}
	double secs = (double)(now_ns() - t0) / 1e9;
	getrusage(RUSAGE_SELF, &ru1);
	double client_cpu = cpu_seconds(&ru0, &ru1);
	long cmds = -cmds0, over = 0;
	uint64_t worst99 = 0;
	for (int i = 0; i < ngames; i++) {
		cmds += g[i].s.commands;
		over += g[i].s.over;
		uint64_t q = samples_q(&g[i].lat, 0.99);
		worst99 = q > worst99 ? q : worst99;
	}
	uint64_t sum = 0;
	for (size_t i = 0; i < all.n; i++)
		sum += all.v[i];
	*res = (struct conc_result){
		.cmds_per_s = (double)cmds / secs,
		.cmds = cmds,
		.over = over,
		.secs = secs,
		.client_cpu = client_cpu,
		.p50_ms = us(samples_q(&all, 0.5)) / 1000,
		.p99_ms = us(samples_q(&all, 0.99)) / 1000,
		.max_ms = us(samples_max(&all)) / 1000,
		.mean_ms = all.n ? us(sum) / 1000 / (double)all.n : 0,
		.worst99_ms = us(worst99) / 1000,
		.late_us = late_n ? us(late_sum) / (double)late_n : 0,
	};
	samples_free(&all);
}

/* The two rows of the saturated and the 20 ms paced run. */
static void concurrent_rows(int ngames, const char *label, const struct conc_result *c)
{
	table_row(fmt("%d concurrent games, %s: commands/s", ngames, label),
		  fmt("%.0f", c->cmds_per_s), "",
		  fmt("%ld commands in %.1f s, 4 players each; the bench client used %.0f%% of a "
		      "core%s",
		      c->cmds, c->secs, 100 * c->client_cpu / c->secs,
		      c->over ? fmt(", %ld games over early", c->over) : ""));
	table_row(fmt("  %s: latency p50 / p99 / max (ms)", label),
		  fmt("%.2f / %.2f / %.1f", c->p50_ms, c->p99_ms, c->max_ms), "p99 <= 5",
		  fmt("worst single game's p99: %.2f ms", c->worst99_ms));
}

/* The load sweep after the two fixed runs: shorter think times, up to
 * saturation, one row each; then the highest throughput (saturated and the
 * 20 ms run included) that still kept p99 <= 5 ms, among the levels whose
 * offered load was reached. */
static void concurrent_sweep(struct slot *g, int ngames, int epfd, const struct conc_result *sat,
			     const struct conc_result *paced)
{
	static const int think_ms[] = { 10, 5, 2, 1 };
	enum { NLEVELS = sizeof think_ms / sizeof think_ms[0] };
	struct conc_result sw[NLEVELS];
	const struct conc_result *best = NULL;
	char best_what[32] = "";
	if (sat->p99_ms <= 5) {
		best = sat;
		snprintf(best_what, sizeof best_what, "saturated");
	} else if (paced->p99_ms <= 5) {
		best = paced;
		snprintf(best_what, sizeof best_what, "think 20 ms/game");
	}
	for (int k = 0; k < NLEVELS; k++) {
		struct conc_result *c = &sw[k];
		int ms = think_ms[k];
		concurrent_run(g, ngames, epfd, opt_quick ? 1 : 3, ms * 1000, c);
		/* a check of the pacing: a closed loop with think time offers
		 * ngames / (think + latency) commands/s. Where the machine is at
		 * capacity the bench client (same 2 cores) gets the CPU late and its
		 * sends fall behind ("late"): the load offered is not reached, and
		 * that wait is not in the latency (measured from the actual send). */
		double offered = ngames / ((double)ms + c->mean_ms) * 1000;
		bool reached = c->cmds_per_s >= 0.9 * offered;
		table_row(fmt("  sweep: think %d ms/game: commands/s, latency p50 / p99 (ms)", ms),
			  fmt("%.0f cmd/s, %.2f / %.2f", c->cmds_per_s, c->p50_ms, c->p99_ms),
			  "p99 <= 5",
			  fmt("offered %d/(think+mean %.2f ms) = %.0f%s; sends %.0f us late; "
			      "client %.0f%% CPU%s",
			      ngames, c->mean_ms, offered, reached ? "" : ", not reached",
			      c->late_us, 100 * c->client_cpu / c->secs,
			      c->over ? fmt("; %ld games over early", c->over) : ""));
		/* not reached: its p99 is that of a smaller load than it claims */
		if (reached && c->p99_ms <= 5 && (!best || c->cmds_per_s > best->cmds_per_s)) {
			best = c;
			snprintf(best_what, sizeof best_what, "think %d ms/game", ms);
		}
	}
	const char *what =
		fmt("%d concurrent games: highest measured load with p99 <= 5 ms", ngames);
	if (!best) {
		table_row(what, "none", "", "no load that was reached kept p99 <= 5 ms");
		return;
	}
	table_row(what, fmt("%.0f cmd/s", best->cmds_per_s), "",
		  fmt("%s; %.0f%% of the saturated throughput; 1 command every %.1f ms per game",
		      best_what, 100 * best->cmds_per_s / sat->cmds_per_s,
		      ngames / best->cmds_per_s * 1000));
}

/* The floor for the saturated run: the same closed loops against fan-out
 * floor processes (echo.c), which put the same traffic on the wire per
 * command as sopra-server (one send to the sender for a failing command;
 * an event to all four and ActNow to the next player for a working one)
 * and do nothing else. The command mix is script.c's: per turn two fails,
 * two working commands for the same player, two fails, and EndTurn, which
 * prompts the next player. */
static void fanout_floor(int ngames, double seconds, const struct conc_result *sat)
{
	enum { CONNS = 4 };
	static const char mix[SCRIPT_MIX_LEN] = { 'S', 'S', 'B', 'B', 'S', 'S', 'E' };
	struct fgame {
		pid_t pid;
		int fd[CONNS];
		struct linebuf in[CONNS];
		int active, k, waiting_on;
		uint64_t sent;
	};
	struct fgame *g = calloc((size_t)ngames, sizeof *g);
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!g || epfd < 0)
		die("fan-out floor: out of resources");
	for (int i = 0; i < ngames; i++) {
		int port = fanout_spawn(&g[i].pid, opt_fanout);
		g[i].waiting_on = -1;
		for (int c = 0; c < CONNS; c++) {
			g[i].fd[c] = tcp_connect(port);
			if (g[i].fd[c] < 0)
				die("connect to a fan-out floor: %s", strerror(errno));
			fcntl(g[i].fd[c], F_SETFL, fcntl(g[i].fd[c], F_GETFL) | O_NONBLOCK);
			struct epoll_event ev = { .events = EPOLLIN,
						  .data.u64 = ((uint64_t)i << 8) | (uint64_t)c };
			epoll_ctl(epfd, EPOLL_CTL_ADD, g[i].fd[c], &ev);
		}
	}
	sleep_ms(200); /* every floor has accepted its four connections */
	struct samples all = { 0 };
	long cmds = 0;
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(seconds * 1e9);
	struct epoll_event evs[256];
	bool sending = true;
	for (;;) {
		uint64_t now = now_ns();
		if (sending && now >= end)
			sending = false;
		bool inflight = false;
		for (int i = 0; i < ngames; i++) {
			struct fgame *f = &g[i];
			if (f->waiting_on < 0 && sending) {
				char cmd[3] = { mix[f->k], '\n', 0 };
				size_t n = 2;
				int target = f->active;
				if (mix[f->k] != 'S') {
					if (mix[f->k] == 'E')
						target = (f->active + 1) % CONNS;
					cmd[0] = 'B';
					cmd[1] = (char)('0' + target);
					cmd[2] = '\n';
					n = 3;
				}
				f->sent = now_ns();
				write_all(f->fd[f->active], cmd, n);
				f->waiting_on = target;
				f->active = target;
				f->k = (f->k + 1) % SCRIPT_MIX_LEN;
			}
			inflight |= f->waiting_on >= 0;
		}
		if (!sending && !inflight)
			break;
		int n = epoll_wait(epfd, evs, 256, 100);
		for (int e = 0; e < n; e++) {
			int gi = (int)(evs[e].data.u64 >> 8), ci = (int)(evs[e].data.u64 & 0xff);
			struct fgame *f = &g[gi];
			if (linebuf_fill(&f->in[ci], f->fd[ci]) == 0)
				die("a fan-out floor closed its connection");
			size_t len;
			char *line;
			while ((line = linebuf_next(&f->in[ci], &len)) != NULL) {
				if (ci == f->waiting_on && strstr(line, "\"ActNow\"")) {
					uint64_t done = now_ns();
					samples_add(&all, done - f->sent);
					cmds++;
					f->waiting_on = -1;
				}
			}
		}
	}
	double secs = (double)(now_ns() - t0) / 1e9;
	getrusage(RUSAGE_SELF, &ru1);
	double client_cpu = cpu_seconds(&ru0, &ru1);
	double rate = (double)cmds / secs;
	table_row(fmt("%d fan-out floors (same traffic, no game), saturated: commands/s", ngames),
		  fmt("%.0f", rate), "",
		  fmt("%ld commands in %.1f s; the games reached %.0f%% of this; the bench client "
		      "used %.0f%% of a core",
		      cmds, secs, 100 * sat->cmds_per_s / rate, 100 * client_cpu / secs));
	table_row("  fan-out floors, saturated: latency p50 / p99 / max (ms)",
		  fmt("%.2f / %.2f / %.1f", us(samples_q(&all, 0.5)) / 1000,
		      us(samples_q(&all, 0.99)) / 1000, us(samples_max(&all)) / 1000),
		  "", fmt("the games' p99 is %.2fx this", sat->p99_ms * 1000 / us(samples_q(&all, 0.99))));
	for (int i = 0; i < ngames; i++) {
		for (int c = 0; c < CONNS; c++) {
			close(g[i].fd[c]);
			linebuf_free(&g[i].in[c]);
		}
	}
	for (int i = 0; i < ngames; i++) {
		waitpid(g[i].pid, NULL, 0);
		child_reaped(g[i].pid);
	}
	samples_free(&all);
	close(epfd);
	free(g);
}

static void bench_concurrent(void)
{
	int ngames = opt_quick ? 50 : 200;
	fprintf(stderr, "concurrency: %d servers, one game each\n", ngames);
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < (rlim_t)(ngames * 6 + 64)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	struct cfg_params cp = { .players = 4, .locations = 4, .cards_per_deck = 20,
				 .rounds = 2000, .feed = true };
	char *text = cfg_generate(&cp);
	char *path = cfg_write_temp(text, "conc");
	free(text);
	struct slot *g = calloc((size_t)ngames, sizeof *g);
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	uint64_t t0 = now_ns();
	for (int i = 0; i < ngames; i++) {
		int port = server_spawn(opt_server, path, 5000 + i, "base", &g[i].pid, &g[i].errfd);
		script_open(&g[i].s, port, 4);
		for (int c = 0; c < 4; c++) {
			struct epoll_event ev = { .events = EPOLLIN,
						  .data.u64 = ((uint64_t)i << 8) | (uint64_t)c };
			epoll_ctl(epfd, EPOLL_CTL_ADD, g[i].s.fds[c], &ev);
		}
	}
	double spawn_s = (double)(now_ns() - t0) / 1e9;
	/* setup (registration, selection) through the same loop, unmeasured */
	for (int i = 0; i < ngames; i++)
		script_setup_blocking(&g[i].s);
	long pss = 0, priv = 0;
	for (int i = 0; i < ngames; i++) {
		struct mem_kib m = proc_mem_kib(g[i].pid);
		pss += m.pss;
		priv += m.priv;
	}
	table_row(fmt("%d servers started and set up", ngames), fmt("%.2f s", spawn_s), "",
		  fmt("sum of Pss %.1f MiB, of private memory %.1f MiB", (double)pss / 1024,
		      (double)priv / 1024));

	struct conc_result sat, paced;
	concurrent_run(g, ngames, epfd, opt_quick ? 2 : 5, 0, &sat);
	concurrent_rows(ngames, "saturated", &sat);
	concurrent_run(g, ngames, epfd, opt_quick ? 2 : 5, 20000, &paced);
	concurrent_rows(ngames, "paced 1 cmd/20ms/game", &paced);

	concurrent_sweep(g, ngames, epfd, &sat, &paced);

	for (int i = 0; i < ngames; i++)
		kill(g[i].pid, SIGTERM);
	for (int i = 0; i < ngames; i++) {
		script_close(&g[i].s);
		waitpid(g[i].pid, NULL, 0);
		child_reaped(g[i].pid);
		close(g[i].errfd);
		samples_free(&g[i].lat);
	}
	close(epfd);
	free(g);
	unlink(path);
	free(path);

	fanout_floor(ngames, opt_quick ? 2 : 5, &sat);
}

/* ---- 7. how cost grows ---------------------------------------------------------------- */

static void bench_scaling(void)
{
	fprintf(stderr, "scaling: players, locations, config size\n");
	static const struct {
		int players, locations, deck;
	} shapes[] = {
		{ 2, 4, 20 }, { 4, 4, 20 }, { 6, 4, 30 }, { 4, 16, 20 }, { 4, 64, 20 }, { 4, 16, 500 },
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		struct cfg_params cp = { .players = shapes[i].players,
					 .locations = shapes[i].locations,
					 .cards_per_deck = shapes[i].deck,
					 .rounds = 8,
					 .extra_characters = 6 };
		char *text = cfg_generate(&cp);
		size_t tlen = strlen(text);
		struct config_errors errs = { 0 };
		uint64_t t0 = now_ns();
		struct config *cfg = config_parse(text, tlen, &errs);
		uint64_t parse = now_ns() - t0;
		if (!cfg)
			die("generated config invalid: %s", errs.n ? errs.msgs[0] : "?");
		struct engine_result r;
		engine_bench(cfg, RULES_BASE, cp.players, opt_quick ? 50 : 200, 2, &r);
		table_row(fmt("scaling: %d players, %d locations, %d cards (%zu KiB config)",
			      cp.players, cp.locations, cfg->ncards, tlen / 1024),
			  fmt("%.0f cmd/s", (double)r.play_commands / r.play_s), "",
			  fmt("in play; per game setup %.0f us (game_new + Registers/Config); "
			      "config_parse %.2f ms",
			      r.setup_s * 1e6 / (double)r.games, (double)parse / 1e6));
		config_free(cfg);
		free(text);
	}
}

/* ---- main ----------------------------------------------------------------------------- */

static void usage(void)
{
	fputs("usage: sopra-bench --server PATH [--bot PATH]\n"
	      "                   [--fanout-floor PATH]   (default: next to sopra-bench)\n"
	      "                   [--example CFG] [--big-config CFG] [--quick]\n"
	      "                   [--only rtt,engine,api,rss,startup,bots,concurrent,scaling,http]\n"
	      "                   [--rtt-players N]   (players in the round-trip game, default 2)\n"
	      "                   [--journal-floor FILE]  (rtt: also a blocking echo that\n"
	      "                                       appends each line to FILE first)\n"
	      "                   [--compare PATH]  (rtt: a second server, e.g. an older\n"
	      "                                       build, measured in the same chunks)\n",
	      stderr);
	exit(64);
}

int main(int argc, char **argv)
{
	self_path = argv[0];
	if (argc == 3 && strcmp(argv[1], "--listen-floor") == 0)
		return listen_floor(atoi(argv[2]));
	if (argc == 4 && strcmp(argv[1], "--cjson-floor") == 0)
		return cjson_floor(atoi(argv[2]), argv[3]);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--server") == 0 && v)
			opt_server = argv[++i];
		else if (strcmp(a, "--fanout-floor") == 0 && v)
			opt_fanout = argv[++i];
		else if (strcmp(a, "--bot") == 0 && v)
			opt_bot = argv[++i];
		else if (strcmp(a, "--example") == 0 && v)
			opt_example = argv[++i];
		else if (strcmp(a, "--big-config") == 0 && v)
			opt_big = argv[++i];
		else if (strcmp(a, "--journal-floor") == 0 && v)
			opt_journal_floor = argv[++i];
		else if (strcmp(a, "--compare") == 0 && v)
			opt_compare = argv[++i];
		else if (strcmp(a, "--only") == 0 && v)
			opt_only = argv[++i];
		else if (strcmp(a, "--rtt-players") == 0 && v)
			opt_rtt_players = atoi(argv[++i]);
		else if (strcmp(a, "--quick") == 0)
			opt_quick = true;
		else
			usage();
	}
	if (!opt_server || opt_rtt_players < 1 || opt_rtt_players > SCRIPT_MAX_PLAYERS)
		usage();
	if (opt_big && access(opt_big, R_OK) != 0)
		opt_big = NULL;
	signal(SIGPIPE, SIG_IGN);
	/* self_path must be absolute-ish for execv */
	static char selfbuf[4096];
	ssize_t n = readlink("/proc/self/exe", selfbuf, sizeof selfbuf - 1);
	if (n > 0) {
		selfbuf[n] = '\0';
		self_path = selfbuf;
	}
	static char fanoutbuf[4096 + 32];
	if (!opt_fanout) {
		const char *slash = strrchr(self_path, '/');
		snprintf(fanoutbuf, sizeof fanoutbuf, "%.*ssopra-fanout-floor",
			 slash ? (int)(slash - self_path + 1) : 0, self_path);
		opt_fanout = fanoutbuf;
	}

	uint64_t t0 = now_ns();
	if (want("rtt"))
	{
		if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
			bench_rtt(0, "same core");
			bench_rtt(1, "across cores");
		} else {
			bench_rtt(-1, "one core");
		}
	}
	if (want("http"))
		bench_http();
	if (want("engine"))
		bench_engine();
	if (want("api"))
		bench_api();
	if (want("rss"))
		bench_rss();
	if (want("startup"))
		bench_startup();
	if (want("bots"))
		bench_bots();
	if (want("concurrent"))
		bench_concurrent();
	if (want("scaling"))
		bench_scaling();
	fprintf(stderr, "done in %.1f s\n\n", (double)(now_ns() - t0) / 1e9);
	table_print();
	return 0;
}
