/*
 * soak: play many complete games of sopra-server against sopra-bot clients.
 *
 *   soak --server PATH --bot PATH [--games N] [--seed S] [--configs FILE...]
 *        [--generate N] [--workdir DIR] [--game-timeout SEC] [--timeout SEC]
 *        [--invalid PCT] [--keep] [--quiet]
 *
 * For each game (in a row): pick a configuration (round robin), the rule
 * edition (alternating base / revised), a server seed and 1..maxPlayers bots
 * (each with its own seed; about a third send --invalid commands, in one
 * game of eight a bot may --leave, in another one of eight a bot may
 * --disconnect, in one of sixteen (--stall-every) a bot may --stall until the server's
 * --timeout removes it, and in one of eight an unregistered --lurk
 * connection sends junk next to the game). Start the server on a free port (--port 0, the port
 * is read from its stderr) with --timeout, start the bots one after another
 * (each has registered before the next starts, so player ids follow the
 * order; the last one starts the game when the game is not full), and wait
 * for everyone, bounded by --game-timeout (then everything is killed and the
 * game FAILS as a hang).
 *
 * A game passes when every bot exits 0 with result win, lose or left (or,
 * for a bot with --disconnect, disconnected or dropped), the
 * bots that saw GameEnd agree on it, the server exits 0, and no stderr has a
 * sanitizer report ("runtime error", "Sanitizer") or an invariant violation.
 * A failing game keeps its directory (server and bot stderr, each bot's
 * command/event log) and prints the command lines that reproduce it.
 *
 * The number of games defaults to $SOAK_GAMES, else 20; the base seed to
 * $SOAK_SEED, else 1. Prints "games=N events=E" and "N passed, M failed";
 * exits 0 when nothing failed.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sopra/usage.h"
#include "srvproc.h"
#include "toolutil.h"

#define MAX_BOTS    16
#define MAX_CONFIGS 256
#define MAX_ARGS    40

struct options {
	const char *server, *bot, *workdir;
	const char *configs[MAX_CONFIGS];
	int nconfigs;
	int games;
	uint64_t seed;
	int generate;
	double game_timeout;
	int server_timeout;
	double invalid;
	int stall_every;
	bool keep, quiet;
};

struct config_info {
	const char *path;
	int max_players;
};

struct proc {
	pid_t pid;
	bool done;
	int status;
};

static struct options O;
static struct config_info CFG[MAX_CONFIGS + 8];
static int NCFG;

/* ---- helpers ------------------------------------------------------------ */

static int rnd(uint64_t *s, int n)
{
	return n <= 0 ? 0 : (int)(splitmix64(s) % (uint64_t)n);
}

/* Remove a game directory (it holds plain files only). */
static void rm_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	char path[1024];
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* ---- configurations ------------------------------------------------------- */

/* maxPlayers of a configuration file, or -1 when it is not one */
static int config_max_players(const char *path)
{
	char *text = read_file(path, NULL);
	if (!text)
		return -1;
	cJSON *root = cJSON_Parse(text);
	free(text);
	int mp = -1;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "maxPlayers");
	if (cJSON_IsNumber(m) && cJSON_GetObjectItemCaseSensitive(root, "locations"))
		mp = m->valueint;
	cJSON_Delete(root);
	return mp;
}

/*
 * Write a valid 6-player configuration exercising every card type and
 * ability; variant selects the goal (0 survive, 1 barricades,
 * 2 locationWithZombies) and a few sizes.
 */
static bool generate_config(const char *path, int variant)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	static const char *const deck_pattern[] = {
	        "food1",    "food2",  "fuel",       "stuff", "medicine", "lock",
	        "scissors", "hammer", "snow_boots", "colt",  "swab",     "blueprint",
	        "food3",    "fuel",   "medicine",   "stuff", "scissors"};
	const int npat = (int)(sizeof deck_pattern / sizeof deck_pattern[0]);
	const int nloc = 4, per_deck = 32, colony_id = 42;
	const int entrances[4] = {1, 2, 3, 2};
	const int spaces[4] = {3, 4, 5, 3};

	fprintf(f, "{\n  \"maxPlayers\": 6,\n  \"cards\": [\n");
	bool first = true;
	for (int l = 0; l <= nloc; l++) {
		for (int k = 0; k < per_deck; k++) {
			int id = l == 0 ? 100 + k : l * 1000 + k;
			const char *t = deck_pattern[(k + l * 3 + variant) % npat];
			fprintf(f, "%s    ", first ? "" : ",\n");
			first = false;
			if (strncmp(t, "food", 4) == 0)
				fprintf(f, "{\"food\": {\"identifier\": %d, \"amount\": %c}}", id,
				        t[4]);
			else if (strcmp(t, "blueprint") == 0)
				fprintf(f,
				        "{\"blueprint\": {\"identifier\": %d, \"location\": %d}}",
				        id, 1 + (k % nloc));
			else
				fprintf(f, "{\"%s\": {\"identifier\": %d}}", t, id);
		}
	}
	fprintf(f, "\n  ],\n  \"characters\": [\n");
	static const char *const abilities[] = {
	        "{\"wound\": {\"before\": \"frostBite\", \"after\": \"wound\"}}",
	        "{\"no_infection\": {}}",
	        "{\"search\": {\"location\": 1, \"numCards\": 1, \"maxActivations\": 2}}",
	        "{\"trash\": {\"numCards\": 4}}",
	        "{\"heal\": {}}",
	        "{\"feed\": {\"numFood\": 2}}",
	        "{\"barricade\": {\"numBarricades\": 2, \"maxActivations\": 1}}",
	        "{\"kill\": {\"locationId\": 42, \"dieValue\": 3, \"numZombies\": 2, "
	        "\"maxActivations\": 1, "
	        "\"infectionDie\": true}}",
	        "{\"wound\": {\"before\": \"bite\", \"after\": \"frostBite\"}}",
	        "{\"kill\": {\"locationId\": 2, \"dieValue\": 4, \"numZombies\": 1, "
	        "\"maxActivations\": 2, "
	        "\"children\": true}}",
	        "{\"search\": {\"location\": 3, \"numCards\": 2, \"maxActivations\": 1}}",
	        "{\"wound\": {\"before\": \"wound\", \"after\": \"frostBite\"}}",
	        "{\"heal\": {}}",
	        "{\"feed\": {\"numFood\": 1}}",
	        "{\"kill\": {\"locationId\": 42, \"dieValue\": 5, \"numZombies\": 3, "
	        "\"maxActivations\": 1, "
	        "\"children\": true, \"infectionDie\": false}}",
	        "{\"barricade\": {\"numBarricades\": 1, \"maxActivations\": 2}}",
	};
	const int nchar = (int)(sizeof abilities / sizeof abilities[0]);
	for (int i = 0; i < nchar; i++)
		fprintf(f,
		        "    {\"name\": \"Gen %d\", \"identifier\": %d, \"status\": %d, "
		        "\"attack\": %d, "
		        "\"search\": %d, \"ability\": %s}%s\n",
		        i + 1, i + 1, 10 + ((i * 7 + variant) % nchar) * 5, 1 + (i + variant) % 6,
		        1 + (i * 5 + 2) % 6, abilities[i], i + 1 < nchar ? "," : "");
	static const char *const goals[] = {"\"survive\": true", "\"barricades\": 9",
	                                    "\"locationWithZombies\": 2"};
	fprintf(f,
	        "  ],\n  \"goal\": {\"rounds\": %d, \"moral\": %d, \"zombiesColony\": %d, "
	        "\"zombiesLocations\": 1, \"childrenInColony\": %d, %s},\n",
	        5 + variant % 3, 12 + (variant % 3) * 6, 3 + variant % 5, variant % 3,
	        goals[variant % 3]);
	fprintf(f,
	        "  \"locations\": [\n    {\"colony\": {\"identifier\": %d, \"entrances\": %d, "
	        "\"startCards\": [",
	        colony_id, 3 + variant % 2);
	for (int k = 0; k < per_deck; k++)
		fprintf(f, "%s%d", k ? ", " : "", 100 + k);
	fprintf(f, "]}}");
	static const char *const names[] = {"Police Station", "Supermarket", "Hospital", "School"};
	for (int l = 1; l <= nloc; l++) {
		fprintf(f,
		        ",\n    {\"name\": \"%s\", \"identifier\": %d, \"entrances\": %d, "
		        "\"survivorSpaces\": %d, "
		        "\"cards\": [",
		        names[l - 1], l, entrances[l - 1], spaces[l - 1]);
		for (int k = 0; k < per_deck; k++)
			fprintf(f, "%s%d", k ? ", " : "", l * 1000 + k);
		fprintf(f, "]}");
	}
	fprintf(f, "\n  ],\n  \"crises\": [\n");
	static const char *const crisis_types[] = {"food", "stuff", "medicine", "fuel"};
	for (int i = 0; i < 9; i++)
		fprintf(f,
		        "    {\"%s\": {\"identifier\": %d, \"moralChange\": %d, \"requiredCards\": "
		        "%d}}%s\n",
		        crisis_types[(i + variant) % 4], 500 + i, 1 + i % 3, 1 + (i * 2) % 4,
		        i < 8 ? "," : "");
	fprintf(f, "  ]\n}\n");
	return fclose(f) == 0;
}

/* ---- processes ------------------------------------------------------------ */

/* Start argv with stdin from /dev/null, stdout to out_fd and stderr to the
 * file err_path. -1 with errno set when it cannot be started. */
static pid_t start(char *const argv[], int out_fd, const char *err_path)
{
	int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	pid_t pid = -1;
	if (err >= 0)
		pid = spawn((const char *const *)argv, SPAWN_NULL, out_fd, err, NULL);
	int e = errno;
	if (err >= 0)
		close(err);
	errno = e;
	return pid;
}

static bool reap(struct proc *p, bool block)
{
	if (p->done || p->pid <= 0)
		return true;
	int st;
	pid_t r = waitpid(p->pid, &st, block ? 0 : WNOHANG);
	if (r == p->pid) {
		p->done = true;
		p->status = st;
	} else if (r < 0 && errno != EINTR) {
		p->done = true;
		p->status = -1;
	}
	return p->done;
}

static void kill_proc(struct proc *p)
{
	if (!p->done && p->pid > 0) {
		kill(p->pid, SIGKILL);
		reap(p, true);
	}
}

static void describe_status(const struct proc *p, char *buf, size_t n)
{
	if (!p->done)
		snprintf(buf, n, "still running");
	else if (p->status == -1)
		snprintf(buf, n, "lost");
	else if (WIFEXITED(p->status))
		snprintf(buf, n, "exit %d", WEXITSTATUS(p->status));
	else if (WIFSIGNALED(p->status))
		snprintf(buf, n, "killed by signal %d", WTERMSIG(p->status));
	else
		snprintf(buf, n, "status %#x", (unsigned)p->status);
}

static bool exited_zero(const struct proc *p)
{
	return p->done && p->status != -1 && WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0;
}

/* The first line of text containing a sanitizer or invariant report. */
static bool find_report(const char *text, char *line, size_t n)
{
	static const char *const pats[] = {"runtime error",      "Sanitizer",
	                                   "invariant violated", "AddressSanitizer",
	                                   "LeakSanitizer",      "==ERROR"};
	if (!text)
		return false;
	for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) {
		const char *hit = strstr(text, pats[i]);
		if (!hit)
			continue;
		const char *b = hit;
		while (b > text && b[-1] != '\n')
			b--;
		const char *e = strchr(hit, '\n');
		size_t len = e ? (size_t)(e - b) : strlen(b);
		snprintf(line, n, "%.*s", (int)(len > 300 ? 300 : len), b);
		return true;
	}
	return false;
}

/* ---- one game -------------------------------------------------------------- */

struct bot_spec {
	char name[32];
	int64_t seed;
	double invalid, leave, disconnect, stall;
	bool lurk;
	bool start;
	char *argv[MAX_ARGS];
	char args[MAX_ARGS][256];
	int argc;
	struct proc proc;
	char err_path[600], log_path[600];
	long events;
	char result[32];
};

struct game {
	int index;
	const struct config_info *cfg;
	const char *rules;
	int64_t seed;
	int nbots;
	struct bot_spec bots[MAX_BOTS];
	struct proc server;
	char dir[512];
	char server_err[600];
	int port;
	char *server_argv[MAX_ARGS];
	char server_args[MAX_ARGS][512];
	int server_argc;
	char why[2048];
	long events;
	const char *outcome;
};

static void add_arg(char (*store)[256], char **argv, int *argc, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static void add_arg(char (*store)[256], char **argv, int *argc, const char *fmt, ...)
{
	if (*argc >= MAX_ARGS - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(store[*argc], 256, fmt, ap);
	va_end(ap);
	argv[*argc] = store[*argc];
	(*argc)++;
	argv[*argc] = NULL;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
fail(struct game *g, const char *fmt, ...)
{
	size_t used = strlen(g->why);
	if (used + 8 >= sizeof g->why)
		return;
	if (used)
		used += (size_t)snprintf(g->why + used, sizeof g->why - used, "; ");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(g->why + used, sizeof g->why - used, fmt, ap);
	va_end(ap);
}

/* Start the game's server, its stdout in server.out and its stderr in
 * server.err, and wait until it names its port. Returns the port, or
 * SRVPROC_NOT_STARTED (errno set), SRVPROC_EXITED or SRVPROC_TIMEOUT; the
 * server, if it was started, is g->server. */
static int start_server(struct game *g, const char *out_path)
{
	const int flags = O_CREAT | O_TRUNC | O_CLOEXEC;
	int out = open(out_path, O_WRONLY | flags, 0644);
	int err = open(g->server_err, O_RDWR | flags, 0644);
	int port = SRVPROC_NOT_STARTED;
	if (out >= 0 && err >= 0) {
		const struct srvproc_opts o = {.out = out, .log = err};
		struct srvproc srv;
		port = srvproc_start(&srv, (const char *const *)g->server_argv, &o, 10000);
		g->server.pid = srv.pid;
		g->server.done = srv.exited;
		g->server.status = srv.status;
	}
	int e = errno;
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	errno = e;
	return port;
}

/* Wait for word ("registered", a lurker: "connected") on the bot's stdout. */
static bool wait_registered(int fd, double deadline, const char *word)
{
	char buf[256];
	size_t len = 0;
	for (;;) {
		int ms = (int)((deadline - now_sec()) * 1000);
		if (ms <= 0)
			return false;
		struct pollfd pfd = {.fd = fd, .events = POLLIN, .revents = 0};
		int r = poll(&pfd, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
		if (n <= 0)
			return false;
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, word))
			return true;
		if (len >= sizeof buf - 1)
			len = 0;
	}
}

static void print_repro(const struct game *g)
{
	fprintf(stderr,
	        "  reproduce (the bots in this order, each after the previous one registered):\n");
	fprintf(stderr, "   ");
	for (int i = 0; i < g->server_argc; i++)
		fprintf(stderr, " %s",
		        strcmp(g->server_args[i], "0") == 0 && i > 0 &&
		                        strcmp(g->server_args[i - 1], "--port") == 0
		                ? "PORT"
		                : g->server_args[i]);
	fprintf(stderr, "\n");
	for (int b = 0; b < g->nbots; b++) {
		fprintf(stderr, "   ");
		for (int i = 0; i < g->bots[b].argc; i++) {
			const char *a = g->bots[b].args[i];
			if (i > 0 && strcmp(g->bots[b].args[i - 1], "--port") == 0)
				a = "PORT";
			if (i > 0 && strcmp(g->bots[b].args[i - 1], "--log") == 0)
				continue;
			if (strcmp(a, "--log") == 0)
				continue;
			fprintf(stderr, " %s", a);
		}
		fprintf(stderr, "\n");
	}
	fprintf(stderr, "  logs: %s (server.err, botN.err, botN.log)\n", g->dir);
}

static void run_game(struct game *g)
{
	double t0 = now_sec();
	double deadline = t0 + O.game_timeout;
	char path[700];

	snprintf(g->dir, sizeof g->dir, "%s/game-s%" PRIu64 "-%05d", O.workdir, O.seed, g->index);
	rm_dir(g->dir);
	if (mkdir(g->dir, 0755) != 0) {
		fail(g, "mkdir %s: %s", g->dir, strerror(errno));
		return;
	}
	snprintf(g->server_err, sizeof g->server_err, "%s/server.err", g->dir);

	/* the server */
	g->server_argc = 0;
	char(*sa)[512] = g->server_args;
	const char *sargs[] = {O.server, "--config",  g->cfg->path, "--port",  "0",     "--seed",
	                       NULL,     "--timeout", NULL,         "--rules", g->rules};
	char seedbuf[32], tobuf[16];
	snprintf(seedbuf, sizeof seedbuf, "%" PRId64, g->seed);
	snprintf(tobuf, sizeof tobuf, "%d", O.server_timeout);
	sargs[6] = seedbuf;
	sargs[8] = tobuf;
	for (size_t i = 0; i < sizeof sargs / sizeof sargs[0]; i++) {
		snprintf(sa[i], 512, "%s", sargs[i]);
		g->server_argv[i] = sa[i];
		g->server_argc++;
	}
	g->server_argv[g->server_argc] = NULL;
	snprintf(path, sizeof path, "%s/server.out", g->dir);
	g->port = start_server(g, path);
	if (g->port == SRVPROC_NOT_STARTED) {
		fail(g, "cannot start the server: %s", strerror(errno));
		return;
	}
	if (g->port <= 0) {
		fail(g, "the server did not report a listening port");
		goto wait_all;
	}

	/* the bots, one after another */
	for (int b = 0; b < g->nbots; b++) {
		struct bot_spec *bs = &g->bots[b];
		bs->argc = 0;
		snprintf(bs->err_path, sizeof bs->err_path, "%s/bot%d.err", g->dir, b);
		snprintf(bs->log_path, sizeof bs->log_path, "%s/bot%d.log", g->dir, b);
		add_arg(bs->args, bs->argv, &bs->argc, "%s", O.bot);
		add_arg(bs->args, bs->argv, &bs->argc, "--port");
		add_arg(bs->args, bs->argv, &bs->argc, "%d", g->port);
		add_arg(bs->args, bs->argv, &bs->argc, "--seed");
		add_arg(bs->args, bs->argv, &bs->argc, "%" PRId64, bs->seed);
		add_arg(bs->args, bs->argv, &bs->argc, "--name");
		add_arg(bs->args, bs->argv, &bs->argc, "%s", bs->name);
		add_arg(bs->args, bs->argv, &bs->argc, "--rules");
		add_arg(bs->args, bs->argv, &bs->argc, "%s", g->rules);
		add_arg(bs->args, bs->argv, &bs->argc, "--quiet");
		add_arg(bs->args, bs->argv, &bs->argc, "--idle");
		add_arg(bs->args, bs->argv, &bs->argc, "%d", O.server_timeout * 3 + 5);
		add_arg(bs->args, bs->argv, &bs->argc, "--max-events");
		add_arg(bs->args, bs->argv, &bs->argc, "500000");
		if (bs->invalid > 0) {
			add_arg(bs->args, bs->argv, &bs->argc, "--invalid");
			add_arg(bs->args, bs->argv, &bs->argc, "%g", bs->invalid);
		}
		if (bs->leave > 0) {
			add_arg(bs->args, bs->argv, &bs->argc, "--leave");
			add_arg(bs->args, bs->argv, &bs->argc, "%g", bs->leave);
		}
		if (bs->disconnect > 0) {
			add_arg(bs->args, bs->argv, &bs->argc, "--disconnect");
			add_arg(bs->args, bs->argv, &bs->argc, "%g", bs->disconnect);
		}
		if (bs->stall > 0) {
			add_arg(bs->args, bs->argv, &bs->argc, "--stall");
			add_arg(bs->args, bs->argv, &bs->argc, "%g", bs->stall);
		}
		if (bs->lurk)
			add_arg(bs->args, bs->argv, &bs->argc, "--lurk");
		if (bs->start)
			add_arg(bs->args, bs->argv, &bs->argc, "--start");
		add_arg(bs->args, bs->argv, &bs->argc, "--log");
		add_arg(bs->args, bs->argv, &bs->argc, "%s", bs->log_path);

		int pfd[2];
		if (pipe(pfd) != 0) {
			fail(g, "pipe: %s", strerror(errno));
			goto wait_all;
		}
		fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
		fcntl(pfd[1], F_SETFD, FD_CLOEXEC);
		bs->proc.pid = start(bs->argv, pfd[1], bs->err_path);
		int e = errno;
		close(pfd[1]);
		if (bs->proc.pid < 0) {
			close(pfd[0]);
			fail(g, "cannot start bot %d: %s", b, strerror(e));
			goto wait_all;
		}
		bool ok = wait_registered(pfd[0], now_sec() + 10,
		                          bs->lurk ? "connected" : "registered");
		close(pfd[0]);
		if (!ok) {
			fail(g, "bot %d did not register", b);
			goto wait_all;
		}
	}

wait_all:
	for (;;) {
		bool all = reap(&g->server, false);
		for (int b = 0; b < g->nbots; b++)
			if (g->bots[b].proc.pid > 0)
				all = reap(&g->bots[b].proc, false) && all;
		if (all)
			break;
		if (now_sec() > deadline) {
			char who[512] = "";
			size_t used = 0;
			if (!g->server.done)
				used += (size_t)snprintf(who + used, sizeof who - used, " server");
			for (int b = 0; b < g->nbots && used < sizeof who - 16; b++)
				if (g->bots[b].proc.pid > 0 && !g->bots[b].proc.done)
					used += (size_t)snprintf(who + used, sizeof who - used,
					                         " bot%d", b);
			fail(g, "HANG: still running after %.0f s:%s", O.game_timeout, who);
			for (int b = 0; b < g->nbots; b++)
				kill_proc(&g->bots[b].proc);
			kill_proc(&g->server);
			break;
		}
		sleep_ms(2);
	}

	/* verdict */
	char st[64], line[400];
	int saw_end = -1; /* -1 none, 0 lose, 1 win */
	int nleft = 0, nended = 0;
	for (int b = 0; b < g->nbots; b++) {
		struct bot_spec *bs = &g->bots[b];
		if (bs->proc.pid <= 0)
			continue;
		char *err = read_file(bs->err_path, NULL);
		const char *sum = NULL;
		for (const char *p = err; p && (p = strstr(p, "bot ")) != NULL; p++)
			if ((p == err || p[-1] == '\n') && strstr(p, " events="))
				sum = p;
		bs->result[0] = '\0';
		bs->events = 0;
		if (sum) {
			const char *ev = strstr(sum, "events=");
			const char *res = strstr(sum, "result=");
			if (ev)
				bs->events = atol(ev + 7);
			if (res)
				sscanf(res + 7, "%31[a-z]", bs->result);
		}
		g->events += bs->events;
		describe_status(&bs->proc, st, sizeof st);
		if (!exited_zero(&bs->proc)) {
			const char *msg = err ? strstr(err, ": ") : NULL;
			const char *nl = msg ? strchr(msg, '\n') : NULL;
			fail(g, "bot%d %s: %.*s", b, st, msg && nl ? (int)(nl - msg - 2) : 0,
			     msg ? msg + 2 : "");
		} else if (strcmp(bs->result, "win") == 0 || strcmp(bs->result, "lose") == 0) {
			int w = strcmp(bs->result, "win") == 0;
			if (saw_end >= 0 && saw_end != w)
				fail(g, "bots disagree on GameEnd");
			saw_end = w;
			nended++;
		} else if (bs->lurk) {
			if (strcmp(bs->result, "closed") != 0)
				fail(g, "lurker%d result=%s", b, bs->result[0] ? bs->result : "?");
		} else if (strcmp(bs->result, "left") == 0) {
			nleft++;
		} else if (bs->disconnect > 0 && (strcmp(bs->result, "disconnected") == 0 ||
		                                  strcmp(bs->result, "dropped") == 0)) {
			nleft++;
		} else {
			fail(g, "bot%d result=%s", b, bs->result[0] ? bs->result : "?");
		}
		if (find_report(err, line, sizeof line))
			fail(g, "bot%d sanitizer: %s", b, line);
		free(err);
	}
	int nplayers = g->nbots - (g->nbots > 0 && g->bots[0].lurk);
	if (!g->why[0] && nended == 0 && nleft != nplayers)
		fail(g, "no bot saw the end of the game");
	describe_status(&g->server, st, sizeof st);
	if (!exited_zero(&g->server))
		fail(g, "server %s", st);
	char *serr = read_file(g->server_err, NULL);
	if (find_report(serr, line, sizeof line))
		fail(g, "server report: %s", line);
	free(serr);

	g->outcome = saw_end == 1 ? "win" : saw_end == 0 ? "lose" : "all gone";
	double dt = now_sec() - t0;
	bool ok = !g->why[0];
	if (!ok || !O.quiet) {
		char inv[64] = "";
		size_t used = 0;
		for (int b = 0; b < g->nbots; b++)
			if (g->bots[b].invalid > 0 || g->bots[b].leave > 0 ||
			    g->bots[b].disconnect > 0 || g->bots[b].stall > 0 || g->bots[b].lurk)
				used += (size_t)snprintf(inv + used, sizeof inv - used,
				                         "%s%d%s%s%s%s%s", used ? "," : " odd=", b,
				                         g->bots[b].invalid > 0 ? "I" : "",
				                         g->bots[b].leave > 0 ? "L" : "",
				                         g->bots[b].disconnect > 0 ? "D" : "",
				                         g->bots[b].stall > 0 ? "S" : "",
				                         g->bots[b].lurk ? "U" : "");
		const char *base = strrchr(g->cfg->path, '/');
		fprintf(ok ? stdout : stderr,
		        "game %d: %s %s seed=%" PRId64 " bots=%d%s -> %s events=%ld %.2fs %s%s\n",
		        g->index, base ? base + 1 : g->cfg->path, g->rules, g->seed, g->nbots, inv,
		        ok ? g->outcome : "-", g->events, dt, ok ? "ok" : "FAIL: ", g->why);
		fflush(stdout);
	}
	if (!ok)
		print_repro(g);
	else if (!O.keep)
		rm_dir(g->dir);
}

/* ---- main ------------------------------------------------------------------ */

static const char usage_text[] =
        "Usage: sopra-soak --server PATH --bot PATH [options]\n"
        "\n"
        "Plays many complete games of sopra-bots against sopra-server.\n"
        "  --games N          games to play (default $SOAK_GAMES, else 20)\n"
        "  --seed S           base seed (default $SOAK_SEED, else 1)\n"
        "  --configs FILE...  configuration files (all following non-option arguments)\n"
        "  --generate N       also generate N 6-player configurations (default 3)\n"
        "  --workdir DIR      where game directories go (default ./soak-work)\n"
        "  --game-timeout S   seconds before a game counts as hung (default 60)\n"
        "  --timeout S        the server's --timeout (default 5)\n"
        "  --invalid PCT      --invalid of the misbehaving bots (default 10)\n"
        "  --stall-every N    about one game in N has a bot that may --stall, costing\n"
        "                     the server's --timeout once (default 16, 0: never)\n"
        "  --keep             keep the directories of passing games too\n"
        "  --quiet            print only failing games and the totals\n";

static int usage(const char *msg, const char *arg)
{
	sopra_usage_error("sopra-soak", usage_text, "%s%s%s", msg, arg ? ": " : "", arg ? arg : "");
	return SOPRA_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	O.games = -1;
	O.seed = 1;
	O.generate = 3;
	O.workdir = "soak-work";
	O.game_timeout = 60;
	O.server_timeout = 5;
	O.invalid = 10;
	O.stall_every = 16;
	const char *env = getenv("SOAK_GAMES");
	if (env && *env)
		O.games = atoi(env);
	env = getenv("SOAK_SEED");
	if (env && *env)
		O.seed = (uint64_t)strtoll(env, NULL, 0);

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--help") == 0) {
			fputs(usage_text, stdout);
			return 0;
		} else if (strcmp(a, "--keep") == 0) {
			O.keep = true;
		} else if (strcmp(a, "--quiet") == 0) {
			O.quiet = true;
		} else if (strcmp(a, "--configs") == 0) {
			while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
				if (O.nconfigs >= MAX_CONFIGS)
					return usage("too many configs", NULL);
				O.configs[O.nconfigs++] = argv[++i];
			}
		} else if (!val) {
			return usage("unknown option or missing value", a);
		} else {
			i++;
			if (strcmp(a, "--server") == 0)
				O.server = val;
			else if (strcmp(a, "--bot") == 0)
				O.bot = val;
			else if (strcmp(a, "--workdir") == 0)
				O.workdir = val;
			else if (strcmp(a, "--games") == 0)
				O.games = atoi(val);
			else if (strcmp(a, "--seed") == 0)
				O.seed = (uint64_t)strtoll(val, NULL, 0);
			else if (strcmp(a, "--generate") == 0)
				O.generate = atoi(val);
			else if (strcmp(a, "--game-timeout") == 0)
				O.game_timeout = atof(val);
			else if (strcmp(a, "--timeout") == 0)
				O.server_timeout = atoi(val);
			else if (strcmp(a, "--invalid") == 0)
				O.invalid = atof(val);
			else if (strcmp(a, "--stall-every") == 0)
				O.stall_every = atoi(val);
			else
				return usage("unknown option", a);
		}
	}
	if (!O.server || !O.bot)
		return usage("--server and --bot are required", NULL);
	if (O.games < 0)
		O.games = 20;
	if (O.server_timeout < 1 || O.game_timeout <= 0)
		return usage("bad timeout", NULL);
	signal(SIGPIPE, SIG_IGN);

	if (mkdir(O.workdir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "soak: mkdir %s: %s\n", O.workdir, strerror(errno));
		return 1;
	}
	for (int i = 0; i < O.nconfigs; i++) {
		int mp = config_max_players(O.configs[i]);
		if (mp < 1) {
			fprintf(stderr, "soak: %s: not a game configuration, skipped\n",
			        O.configs[i]);
			continue;
		}
		CFG[NCFG].path = O.configs[i];
		CFG[NCFG].max_players = mp > MAX_BOTS ? MAX_BOTS : mp;
		NCFG++;
	}
	static char genpaths[8][600];
	for (int v = 0; v < O.generate && v < 8; v++) {
		snprintf(genpaths[v], sizeof genpaths[v], "%s/generated-6p-%d.json", O.workdir, v);
		if (!generate_config(genpaths[v], v)) {
			fprintf(stderr, "soak: cannot write %s\n", genpaths[v]);
			return 1;
		}
		CFG[NCFG].path = genpaths[v];
		CFG[NCFG].max_players = 6;
		NCFG++;
	}
	if (NCFG == 0)
		return usage("no configuration (--configs or --generate)", NULL);

	printf("soak: %d games, %d configs, base seed %" PRIu64 ", workdir %s\n", O.games, NCFG,
	       O.seed, O.workdir);
	fflush(stdout);

	int passed = 0, failed = 0;
	long total_events = 0;
	uint64_t rng = O.seed;
	static struct game g;
	double t0 = now_sec();
	for (int i = 0; i < O.games; i++) {
		memset(&g, 0, sizeof g);
		g.index = i;
		g.cfg = &CFG[i % NCFG];
		/* alternate editions; with an even number of configs shift by one
		 * every round so that each config meets both editions */
		g.rules = (NCFG % 2 ? i : i + i / NCFG) % 2 ? "revised" : "base";
		g.seed = (int64_t)(splitmix64(&rng) >> 33) -
		         (rnd(&rng, 8) == 0 ? (int64_t)1 << 30 : 0);
		int nplayers = 1 + rnd(&rng, g.cfg->max_players);
		bool lurker = rnd(&rng, 8) == 0;
		g.nbots = nplayers + lurker;
		bool someone_leaves = rnd(&rng, 8) == 0;
		int leaver = lurker + rnd(&rng, nplayers);
		bool someone_hangs_up = rnd(&rng, 8) == 0;
		int hanger = lurker + rnd(&rng, nplayers);
		bool someone_stalls =
		        rnd(&rng, O.stall_every > 0 ? O.stall_every : 1) == 0 && O.stall_every > 0;
		int staller = lurker + rnd(&rng, nplayers);
		for (int b = 0; b < g.nbots; b++) {
			struct bot_spec *bs = &g.bots[b];
			snprintf(bs->name, sizeof bs->name, "%s%d",
			         lurker && b == 0 ? "lurker" : "bot", b);
			bs->lurk = lurker && b == 0;
			bs->seed = (int64_t)(splitmix64(&rng) >> 20);
			bs->invalid = rnd(&rng, 3) == 0 ? O.invalid : 0;
			bs->leave = someone_leaves && b == leaver ? 3 : 0;
			bs->disconnect = someone_hangs_up && b == hanger ? 5 : 0;
			bs->stall = someone_stalls && b == staller ? 10 : 0;
			bs->start = b == g.nbots - 1 && nplayers < g.cfg->max_players;
			if (bs->lurk)
				bs->invalid = bs->leave = bs->disconnect = bs->stall = 0;
		}
		run_game(&g);
		total_events += g.events;
		if (g.why[0])
			failed++;
		else
			passed++;
	}
	printf("games=%d events=%ld time=%.1fs\n", O.games, total_events, now_sec() - t0);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
