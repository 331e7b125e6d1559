/*
 * main: parse the command line, load the configuration, wire config, game
 * and net together, and turn the outcome into the exit code.
 *
 * Without options the server serves the default game: the configuration
 * compiled in from resources/example.json (sopra/default_config.h) on port
 * DEFAULT_PORT with a random seed and a DEFAULT_TIMEOUT_SEC timeout; each
 * option overrides its default.
 *
 * Exit codes: 0 game over / normal shutdown, 1 runtime failure (e.g. the
 * port is in use), 2 invalid configuration, 64 usage error (EX_USAGE).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "sopra/agones.h"
#include "sopra/config.h"
#include "sopra/default_config.h"
#include "sopra/game.h"
#include "sopra/http.h"
#include "sopra/jdir.h"
#include "sopra/journal.h"
#include "sopra/net.h"
#include "sopra/usage.h"
#include "sopra/xalloc.h"

#define EXIT_RUNTIME    1
#define EXIT_BAD_CONFIG 2
#define EXIT_USAGE      SOPRA_EXIT_USAGE

/* The default game's port and --timeout (the configuration's default is
 * sopra/default_config.h; the seed's is a random one). usage_text says them
 * too: keep it in step (tests/cli_test.sh, systemtests/defaults_test.py). */
#define DEFAULT_PORT        7777
#define DEFAULT_TIMEOUT_SEC 30
/* --http-bots at most; and how long the streams get after the game */
#define HTTP_MAX_BOTS  64
#define HTTP_FINISH_MS 2000

/* The --help text, in two parts: C17 compilers need not take a string
 * literal longer than 4095 bytes. */
static const char usage_text[] =
        "Usage: sopra-server [--config PATH] [--port N] [--timeout SECONDS] [--seed LONG]\n"
        "                    [--rules base|revised] [--journal FILE | --journal-dir DIR]\n"
        "                    [options]\n"
        "       sopra-server --resume FILE [--port N] [options]\n"
        "       sopra-server --check --config PATH [options]\n"
        "       sopra-server --help | --version\n"
        "\n"
        "Runs one game of SoPra of the Dead for TCP clients that speak one JSON\n"
        "object per line (see docs/protocol.md). Without options it serves the\n"
        "default game: the built-in copy of resources/example.json on port 7777,\n"
        "with a random seed and a timeout of 30 s.\n"
        "\n"
        "Options (each given once; as \"--opt VALUE\" or \"--opt=VALUE\"):\n"
        "  --config PATH      the game configuration (JSON); it is validated before\n"
        "                     the server listens; default: the built-in copy of\n"
        "                     resources/example.json\n"
        "  --port N           TCP port to listen on (all interfaces), 0..65535;\n"
        "                     default 7777; 0 picks a free port, which is reported\n"
        "                     on stderr\n"
        "  --seed LONG        seed of the random number generator, a signed 64-bit\n"
        "                     integer (e.g. -1, 42, -9223372036854775808); default: a\n"
        "                     random one. Either way it is logged on stderr, so the\n"
        "                     game can be replayed with --seed\n"
        "  --timeout SECONDS  how long the server waits for a command, an integer\n"
        "                     >= 1 (default 30); on expiry registration is aborted\n"
        "                     or the player being waited for leaves the game\n"
        "  --rules EDITION    rule edition: base (default) or revised\n"
        "  --bind ADDR        listen on ADDR only (an IPv4 or IPv6 address or a name,\n"
        "                     e.g. 127.0.0.1, ::1, localhost); default: every\n"
        "                     address, IPv6 and IPv4 (dual-stack)\n"
        "  --watch-port N     also accept read-only watchers on port N: they get the\n"
        "                     Config and every event sent to all players (never a\n"
        "                     player's private events), the game so far first\n"
        "  --max-strangers N  connections that have not registered allowed at once\n"
        "                     (default 16 x maxPlayers, at least 64); a new one\n"
        "                     beyond it replaces the one idle longest of the\n"
        "                     address that has the most\n"
        "  --max-strangers-per-address N  of those, from one address (an IPv6 /64)\n"
        "                     at once (default: a quarter of --max-strangers); a new\n"
        "                     one beyond it replaces that address's idlest\n"
        "  --max-watchers-per-address N  watchers from one address at once, 1..64\n"
        "                     (default 16; 64 in all); beyond it, or on a full watch\n"
        "                     port, a new one replaces the watcher that has not read\n"
        "                     for longest, or is refused if every watcher reads\n"
        "  --http-port N      also serve the game in a browser on port N: the page\n"
        "                     to play, watch and replay, its event streams and\n"
        "                     its seats (docs/web.md); turns sessions on, with a\n"
        "                     grace of the --timeout unless --reconnect-grace\n"
        "                     says otherwise\n"
        "  --http-bots N      let the page start up to N sopra-bot team mates (the\n"
        "                     one installed next to sopra-server); default 0\n";
static const char usage_text_more[] =
        "  --journal FILE     record the game in FILE (created; never overwritten):\n"
        "                     every command before it takes effect; replay it with\n"
        "                     sopra-replay (docs/journal.md)\n"
        "  --journal-dir DIR  keep this table's journals in DIR (created if missing)\n"
        "                     and recover after a crash by itself: resume the game\n"
        "                     its newest journal left unfinished, else start a new\n"
        "                     game journaled in the next file, DIR/game-NUMBER.jnl.\n"
        "                     Needs --reconnect-grace; a resumed game takes its\n"
        "                     configuration, seed, rules and timeout from its journal\n"
        "  --journal-keep N   journals kept in DIR besides the current game's\n"
        "                     (default 20); older ones are deleted\n"
        "  --journal-sync P   when the journal is forced to disk: always (before each\n"
        "                     command takes effect), turn (default: at the end of\n"
        "                     each turn and of the game) or never\n"
        "  --reconnect-grace S  sessions: each player gets a secret (a Session line\n"
        "                     after its Config) to come back with on a new\n"
        "                     connection ({\"command\":\"Reconnect\",...}); a player whose\n"
        "                     connection drops may do so within S seconds (0: no\n"
        "                     grace, but a --journal game can be resumed; see\n"
        "                     docs/protocol.md, \"Reconnecting\")\n"
        "  --resume FILE      restart the game of journal FILE (written with --journal\n"
        "                     and --reconnect-grace) after a crash and keep appending\n"
        "                     to it; config, seed, rules and timeouts come from it\n"
        "                     (giving them too is a usage error). Players return with\n"
        "                     Reconnect within --timeout seconds or leave; after a\n"
        "                     finished game they come back for its end\n"
        "  --check            only validate the configuration: print \"PATH: ok\" on\n"
        "                     stdout (exit 0) or every problem on stderr (exit 2);\n"
        "                     listen on nothing (--port and --timeout do not matter)\n"
        "  --help             print this help and exit\n"
        "  --version          print the version and exit\n"
        "\n"
        "Exit status:\n"
        "  0   the game is over, SIGINT/SIGTERM stopped the server, or (--check)\n"
        "      the configuration is valid\n"
        "  1   runtime failure (e.g. the port is already in use, or the journal\n"
        "      failed, even after the game was over)\n"
        "  2   invalid configuration (nothing was listened on)\n"
        "  64  usage error (missing, repeated, unknown or invalid option)\n";

enum opt_id {
	OPT_CONFIG,
	OPT_PORT,
	OPT_SEED,
	OPT_TIMEOUT,
	OPT_RULES,
	OPT_MAX_STRANGERS,
	OPT_MAX_STRANGERS_PER_ADDRESS,
	OPT_MAX_WATCHERS_PER_ADDRESS,
	OPT_BIND,
	OPT_WATCH_PORT,
	OPT_HELP,
	OPT_VERSION,
	OPT_JOURNAL,
	OPT_JOURNAL_SYNC,
	OPT_CHECK,
	OPT_RECONNECT_GRACE,
	OPT_RESUME,
	OPT_JOURNAL_DIR,
	OPT_JOURNAL_KEEP,
	OPT_HTTP_PORT,
	OPT_HTTP_BOTS,
	OPT_COUNT
};

/* The command line after parsing: the values, and which options were
 * given (given[OPT_...]). */
struct options {
	const char *config;
	int port;
	int64_t seed;
	int timeout;
	enum game_rules rules;
	int max_strangers; /* 0: server_default_max_strangers */
	/* 0: the defaults (server_default_max_strangers_per_address,
	 * NET_WATCHERS_PER_ADDRESS) */
	int max_strangers_per_address, max_watchers_per_address;
	const char *bind; /* NULL: dual-stack, every address */
	int watch_port;
	const char *journal;
	enum journal_sync journal_sync;
	bool check;         /* --check: validate the configuration, then exit */
	int grace;          /* --reconnect-grace */
	const char *resume; /* --resume FILE */
	/* --journal-dir DIR (it sets journal or resume) and --journal-keep N */
	const char *journal_dir;
	int journal_keep;
	int http_port; /* --http-port: the page (docs/web.md) */
	int http_bots; /* --http-bots: sopra-bots the page may start */
	bool given[OPT_COUNT];
};

/* Report a usage error (and the synopsis) on stderr. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void
usage_message(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sopra_usage_verror("sopra-server", usage_text, fmt, ap);
	va_end(ap);
}

/* Report a usage error; the value is EXIT_USAGE, for main to return (a
 * constant the static analyzer sees, unlike a variadic function's result). */
#define usage_error(...) (usage_message(__VA_ARGS__), EXIT_USAGE)

/* Strict decimal integer: optional sign, digits only, nothing else (no
 * spaces, no "0x"), within [min, max]. */
static bool parse_int64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	const char *p = s;
	if (*p == '-' || *p == '+')
		p++;
	if (*p < '0' || *p > '9')
		return false;
	for (const char *q = p; *q; q++)
		if (*q < '0' || *q > '9')
			return false;
	errno = 0;
	char *end = NULL;
	long long v = strtoll(s, &end, 10);
	if (errno == ERANGE || *end != '\0' || v < min || v > max)
		return false;
	*out = (int64_t)v;
	return true;
}

/* A random seed from the kernel (getrandom, else /dev/urandom): *out on
 * success, false (errno set) when neither works. */
static bool random_seed(int64_t *out)
{
	uint64_t u = 0;
	ssize_t n;
	do
		n = getrandom(&u, sizeof u, 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof u) {
		FILE *f = fopen("/dev/urandom", "rb");
		if (!f)
			return false;
		size_t got = fread(&u, 1, sizeof u, f);
		fclose(f);
		if (got != sizeof u) {
			errno = EIO;
			return false;
		}
	}
	memcpy(out, &u, sizeof *out); /* every bit pattern is a valid int64_t */
	return true;
}

static bool parse_rules(const char *val, struct options *o)
{
	return game_rules_parse(val, &o->rules);
}

static bool parse_sync(const char *val, struct options *o)
{
	return journal_sync_parse(val, &o->journal_sync);
}

/* How an option's value is checked: none; a non-empty text; an integer in
 * [min, max]; a word that parse() knows (and keeps). */
enum opt_kind { OK_FLAG, OK_TEXT, OK_INT, OK_WORD };

/* Where the checked value goes in struct options (at `off`): nowhere (a
 * word's parse() keeps it), a const char *, an int, an int64_t, or true
 * into a bool. */
enum opt_store { ST_NONE, ST_TEXT, ST_INT, ST_I64, ST_TRUE };

/* One row per option: its name, how its value is checked, and what the
 * error says is expected ("empty <expect>" for a text). */
static const struct opt_def {
	const char *name;
	enum opt_kind kind;
	int64_t min, max;
	const char *expect;
	bool (*parse)(const char *val, struct options *o);
	enum opt_store store;
	size_t off;
} opt_table[OPT_COUNT] = {
        [OPT_CONFIG] = {"config", OK_TEXT, 0, 0, "path", NULL, ST_TEXT,
                        offsetof(struct options, config)},
        [OPT_PORT] = {"port", OK_INT, 0, 65535, "an integer 0..65535", NULL, ST_INT,
                      offsetof(struct options, port)},
        [OPT_SEED] = {"seed", OK_INT, INT64_MIN, INT64_MAX, "a signed 64-bit integer", NULL, ST_I64,
                      offsetof(struct options, seed)},
        [OPT_TIMEOUT] = {"timeout", OK_INT, 1, INT_MAX, "whole seconds >= 1", NULL, ST_INT,
                         offsetof(struct options, timeout)},
        [OPT_RULES] = {"rules", OK_WORD, 0, 0, "base or revised", parse_rules, ST_NONE, 0},
        [OPT_MAX_STRANGERS] = {"max-strangers", OK_INT, 1, 1000000, "an integer 1..1000000", NULL,
                               ST_INT, offsetof(struct options, max_strangers)},
        [OPT_MAX_STRANGERS_PER_ADDRESS] = {"max-strangers-per-address", OK_INT, 1, 1000000,
                                           "an integer 1..1000000", NULL, ST_INT,
                                           offsetof(struct options, max_strangers_per_address)},
        [OPT_MAX_WATCHERS_PER_ADDRESS] = {"max-watchers-per-address", OK_INT, 1, NET_MAX_WATCHERS,
                                          "an integer 1..64", NULL, ST_INT,
                                          offsetof(struct options, max_watchers_per_address)},
        [OPT_BIND] = {"bind", OK_TEXT, 0, 0, "address", NULL, ST_TEXT,
                      offsetof(struct options, bind)},
        [OPT_WATCH_PORT] = {"watch-port", OK_INT, 0, 65535, "an integer 0..65535", NULL, ST_INT,
                            offsetof(struct options, watch_port)},
        [OPT_HELP] = {"help", OK_FLAG, 0, 0, NULL, NULL, ST_NONE, 0},
        [OPT_VERSION] = {"version", OK_FLAG, 0, 0, NULL, NULL, ST_NONE, 0},
        [OPT_JOURNAL] = {"journal", OK_TEXT, 0, 0, "path", NULL, ST_TEXT,
                         offsetof(struct options, journal)},
        [OPT_JOURNAL_SYNC] = {"journal-sync", OK_WORD, 0, 0, "always, turn or never", parse_sync,
                              ST_NONE, 0},
        [OPT_CHECK] = {"check", OK_FLAG, 0, 0, NULL, NULL, ST_TRUE,
                       offsetof(struct options, check)},
        [OPT_RECONNECT_GRACE] = {"reconnect-grace", OK_INT, 0, INT_MAX, "whole seconds >= 0", NULL,
                                 ST_INT, offsetof(struct options, grace)},
        [OPT_RESUME] = {"resume", OK_TEXT, 0, 0, "path", NULL, ST_TEXT,
                        offsetof(struct options, resume)},
        [OPT_JOURNAL_DIR] = {"journal-dir", OK_TEXT, 0, 0, "path", NULL, ST_TEXT,
                             offsetof(struct options, journal_dir)},
        [OPT_JOURNAL_KEEP] = {"journal-keep", OK_INT, 0, JDIR_MAX_KEEP, "an integer 0..1000000",
                              NULL, ST_INT, offsetof(struct options, journal_keep)},
        [OPT_HTTP_PORT] = {"http-port", OK_INT, 0, 65535, "an integer 0..65535", NULL, ST_INT,
                           offsetof(struct options, http_port)},
        [OPT_HTTP_BOTS] = {"http-bots", OK_INT, 0, HTTP_MAX_BOTS, "an integer 0..64", NULL, ST_INT,
                           offsetof(struct options, http_bots)},
};

/* Keep the checked value of an option where its row says. */
static void opt_keep(struct options *o, const struct opt_def *d, const char *text, int64_t v)
{
	int i = (int)v;
	bool yes = true;
	/* the value as each kind of store holds it */
	const struct {
		const void *src;
		size_t size;
	} value[] = {[ST_NONE] = {NULL, 0},
	             [ST_TEXT] = {&text, sizeof text},
	             [ST_INT] = {&i, sizeof i},
	             [ST_I64] = {&v, sizeof v},
	             [ST_TRUE] = {&yes, sizeof yes}};
	if (value[d->store].size)
		memcpy((char *)o + d->off, value[d->store].src, value[d->store].size);
}

/* Check val for option id by its row and keep it. Returns -1, or
 * EXIT_USAGE after reporting what is wrong. */
static int opt_take(struct options *o, enum opt_id id, const char *val)
{
	const struct opt_def *d = &opt_table[id];
	int64_t v = 0;
	bool ok = true;
	switch (d->kind) {
	case OK_FLAG:
		break;
	case OK_TEXT:
		if (!*val)
			return usage_error("invalid --%s: empty %s", d->name, d->expect);
		break;
	case OK_INT:
		ok = parse_int64(val, d->min, d->max, &v);
		break;
	case OK_WORD:
		ok = d->parse(val, o);
		break;
	}
	if (!ok)
		return usage_error("invalid --%s '%s': expected %s", d->name, val, d->expect);
	opt_keep(o, d, val, v);
	return -1;
}

/*
 * Parse argv into o. Returns -1 to go on, or an exit code: 0 after --help or
 * --version (printed), EXIT_USAGE after reporting an error.
 */
static int parse_args(int argc, char **argv, struct options *o)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
			return usage_error("unexpected argument '%s'", arg);
		const char *name = arg + 2;
		const char *eq = strchr(name, '=');
		size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
		int id = -1;
		for (int k = 0; k < OPT_COUNT; k++)
			if (strlen(opt_table[k].name) == name_len &&
			    strncmp(opt_table[k].name, name, name_len) == 0)
				id = k;
		if (id < 0)
			return usage_error("unknown option '--%.*s'", (int)name_len, name);
		const char *oname = opt_table[id].name;

		const char *val = NULL;
		if (opt_table[id].kind == OK_FLAG) {
			if (eq)
				return usage_error("option --%s takes no value", oname);
		} else if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			return usage_error("option --%s requires a value", oname);
		}

		if (id == OPT_HELP) {
			fputs(usage_text, stdout);
			fputs(usage_text_more, stdout);
			return 0;
		}
		if (id == OPT_VERSION) {
			puts("sopra-server " SOPRA_VERSION);
			return 0;
		}
		if (o->given[id])
			return usage_error("duplicate option --%s", oname);
		o->given[id] = true;
		int rc = opt_take(o, (enum opt_id)id, val);
		if (rc >= 0)
			return rc;
	}
	if (o->journal_dir && (o->journal || o->resume || o->check))
		return usage_error("--journal-dir picks the journal itself: --journal, "
		                   "--resume and --check conflict with it");
	if (o->journal_dir && !o->given[OPT_RECONNECT_GRACE])
		return usage_error("--journal-dir needs --reconnect-grace: after a restart the "
		                   "players come back with their session secrets");
	if (o->given[OPT_JOURNAL_KEEP] && !o->journal_dir)
		return usage_error("--journal-keep needs --journal-dir");
	if (o->given[OPT_HTTP_BOTS] && !o->given[OPT_HTTP_PORT])
		return usage_error("--http-bots needs --http-port");
	if (o->given[OPT_JOURNAL_SYNC] && !o->journal && !o->journal_dir && !o->resume)
		return usage_error("--journal-sync needs a journal: --journal, --journal-dir or "
		                   "--resume");
	if (o->resume) {
		/* the journal's header decides these */
		if (o->given[OPT_CONFIG] || o->given[OPT_SEED] || o->given[OPT_RULES] ||
		    o->given[OPT_TIMEOUT] || o->journal || o->given[OPT_RECONNECT_GRACE] ||
		    o->check)
			return usage_error("--resume takes the configuration, seed, rules, "
			                   "timeout, journal and grace from the journal: "
			                   "--config, --seed, --rules, --timeout, --journal, "
			                   "--reconnect-grace and --check conflict with it");
		return -1;
	}
	if (o->check && !o->given[OPT_CONFIG])
		return usage_error("missing option --config (--check validates a file; the "
		                   "built-in game is " SOPRA_DEFAULT_CONFIG_FILE ")");
	return -1;
}

/* The Agones SDK client (nothing without $AGONES_SDK_HTTP_PORT,
 * docs/deployment.md): the game's seed as the GameServer's annotation
 * agones.dev/sdk-seed, then Ready for a new game, or only the health pings
 * for a resumed one (its GameServer is past Ready). */
static struct agones *start_agones(struct server *srv, int64_t seed, bool resumed)
{
	struct agones *a = agones_new(server_base(srv), stderr);
	char text[24];
	snprintf(text, sizeof text, "%" PRId64, seed);
	agones_annotate(a, "seed", text);
	if (resumed)
		agones_resumed(a);
	else
		agones_ready(a);
	return a;
}

/* The sopra-bot next to this program (installed: the same directory; in
 * the build tree: tools/), into path; false when there is none. */
static bool find_bot_program(char *path, size_t len)
{
	char self[2048];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return false;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (!slash)
		return false;
	*slash = '\0';
	static const char *const places[] = {"sopra-bot", "tools/sopra-bot"};
	for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
		int n2 = snprintf(path, len, "%s/%s", self, places[i]);
		if (n2 > 0 && (size_t)n2 < len && access(path, X_OK) == 0)
			return true;
	}
	return false;
}

/* --http-port (docs/web.md): the page and its streams on srv's loop; NULL
 * without the option, or (logged) when it cannot listen. *failed tells the
 * two apart. */
static struct http *start_http(const struct options *o, struct server *srv,
                               const struct config *cfg, int timeout_sec, bool *failed)
{
	static char bot[4096];
	*failed = false;
	if (!o->given[OPT_HTTP_PORT])
		return NULL;
	bool have_bot = o->http_bots > 0 && find_bot_program(bot, sizeof bot);
	if (o->http_bots > 0 && !have_bot)
		fputs("sopra-server: --http-bots: no sopra-bot next to sopra-server; the page "
		      "offers no bots\n",
		      stderr);
	struct http_opts ho = {.bind = o->bind,
	                       .port = o->http_port,
	                       .timeout_sec = timeout_sec,
	                       .max_bots = o->http_bots,
	                       .bot_program = have_bot ? bot : NULL,
	                       .max_play_streams = 2 * cfg->max_players + 4};
	struct http *h = http_new(srv, cfg, &ho, stderr);
	*failed = h == NULL;
	return h;
}

/* --journal-dir DIR: resume the game a crash left there (o->resume), or
 * journal a new one in the next file (o->journal); both point to *path,
 * which the caller frees after them. The choice (a JDIR_PATH_MAX buffer)
 * is on the heap only while it is made: static or on the stack, its page
 * would stay resident under the whole game (docs/performance.md, "Memory
 * per game"). Returns -1 to go on, or the exit code. */
static int use_journal_dir(struct options *o, char **path)
{
	struct jdir_choice *choice = xmalloc(sizeof *choice);
	char err[512];
	int rc = -1;
	if (jdir_choose(o->journal_dir,
	                o->given[OPT_JOURNAL_KEEP] ? o->journal_keep : JDIR_DEFAULT_KEEP, stderr,
	                choice, err, sizeof err)) {
		*path = xstrdup(choice->path);
		if (choice->action == JDIR_RESUME)
			o->resume = *path;
		else
			o->journal = *path;
	} else {
		fprintf(stderr, "sopra-server: %s\n", err);
		rc = EXIT_RUNTIME;
	}
	free(choice);
	return rc;
}

/* The configuration of o: the file of --config, else the built-in one.
 * NULL with errs filled when it is invalid (config_load, config_parse). */
static struct config *load_config(const struct options *o, struct config_errors *errs)
{
	if (o->config)
		return config_load(o->config, errs);
	return config_parse((const char *)sopra_default_config, sopra_default_config_len, errs);
}

/* The admission limits of o (--max-strangers and the per-address limits;
 * their defaults for a game of max_players) into so. */
static void set_admission(struct server_opts *so, const struct options *o, int max_players)
{
	so->max_strangers =
	        o->max_strangers > 0 ? o->max_strangers : server_default_max_strangers(max_players);
	so->max_strangers_per_address = o->max_strangers_per_address;
	so->max_watchers_per_address = o->max_watchers_per_address;
}

/* Close the game's journal (NULL: none) when the server has stopped and
 * return the exit code: rc, or EXIT_RUNTIME when the journal failed at any
 * point, even in the digest behind the game's last entry, after which
 * nothing halts: the host must know its journal is incomplete
 * (docs/journal.md). */
static int close_journal(struct journal *journal, const struct game *game, int rc)
{
	if (!journal_close(journal, game_is_over(game) ? "game over" : "stopped"))
		return EXIT_RUNTIME;
	return rc;
}

/* --resume FILE: rebuild the game from its journal through the server's
 * own dispatcher, reopen the journal for appending, and wait for the
 * players to reconnect (docs/journal.md, "Resuming"). */
static int run_resume(const struct options *o)
{
	char err[512];
	struct journal_file jf;
	if (journal_in_use(o->resume)) {
		fprintf(stderr, "sopra-server: %s: %s\n", o->resume, JOURNAL_IN_USE);
		return EXIT_RUNTIME;
	}
	if (!journal_load(o->resume, &jf, err, sizeof err)) {
		fprintf(stderr, "sopra-server: %s\n", err);
		return EXIT_RUNTIME;
	}
	if (jf.torn)
		fprintf(stderr, "sopra-server: %s: %s\n", o->resume, jf.torn_why);
	int rc = EXIT_RUNTIME;
	struct config *cfg = NULL;
	struct server *srv = NULL;
	struct journal *journal = NULL;
	struct agones *agones = NULL;
	struct http *http = NULL;
	bool http_failed;
	if (!jf.sessions) {
		fprintf(stderr,
		        "sopra-server: %s: the game ran without --reconnect-grace: its players "
		        "have no secrets to return with, so it cannot be resumed\n",
		        o->resume);
		goto out;
	}
	struct config_errors errs = {0};
	cfg = config_parse(jf.config_text, jf.config_len, &errs);
	if (!cfg) {
		fprintf(stderr, "sopra-server: %s: the journal's configuration does not load\n",
		        o->resume);
		config_errors_free(&errs);
		rc = EXIT_BAD_CONFIG;
		goto out;
	}
	struct server_opts so = {.bind = o->bind,
	                         .watch = o->given[OPT_WATCH_PORT],
	                         .watch_port = o->watch_port,
	                         .adopted_watchers = o->given[OPT_HTTP_PORT],
	                         .port = o->port,
	                         .timeout_sec = jf.timeout_sec,
	                         .core = {.cfg = cfg,
	                                  .seed = jf.seed,
	                                  .rules = jf.rules,
	                                  .failure_budget = jf.failure_budget,
	                                  .sessions = {.secret = journal_session_secret,
	                                               .secret_ctx = jf.session_key,
	                                               .grace_sec = jf.grace_sec}}};
	set_admission(&so, o, cfg->max_players);
	srv = server_new(&so, stderr);
	if (!srv)
		goto out;
	const struct game *game = core_game(server_core(srv));
	if (!journal_restore(&jf, server_core(srv), err, sizeof err)) {
		fprintf(stderr, "sopra-server: %s: %s\n", o->resume, err);
		goto out;
	}
	if (game_is_over(game))
		/* killed between the end's entry and its delivery, maybe: the
		 * players come back for their histories (the epilogue) */
		fprintf(stderr,
		        "sopra-server: %s: the game is over; its players may come back for "
		        "the end\n",
		        o->resume);
	journal = journal_reopen(o->resume, &jf,
	                         o->given[OPT_JOURNAL_SYNC] ? o->journal_sync : jf.sync, stderr,
	                         err, sizeof err);
	if (!journal) {
		fprintf(stderr, "sopra-server: %s\n", err);
		goto out;
	}
	struct dispatch_hooks hooks = journal_hooks(journal, game);
	server_set_taps(srv, &hooks, journal_on_line, journal);
	fprintf(stderr, "sopra-server: resuming %s after entry %lld (seed %" PRId64 ")\n",
	        o->resume, (long long)jf.entries, jf.seed);
	server_resume(srv, jf.max_comm, jf.timeout_sec);
	http = start_http(o, srv, cfg, jf.timeout_sec, &http_failed);
	if (http_failed)
		goto out;
	agones = start_agones(srv, jf.seed, true);
	config_drop_text(cfg); /* the server holds the Config line (net_config.c) */
	rc = server_run(srv);
	http_finish(http, HTTP_FINISH_MS);
	rc = close_journal(journal, game, rc);
	journal = NULL;
	agones_shutdown_and_wait(agones, AGONES_SHUTDOWN_WAIT_MS); /* after the last flush */
out:
	journal_close(journal, "stopped");
	agones_free(agones);
	http_free(http);
	server_free(srv);
	config_free(cfg);
	journal_file_free(&jf);
	return rc;
}

/* A new game: load the configuration, open the journal (--journal), listen
 * and play it to its end. Returns the exit code. */
static int run_new_game(const struct options *opts)
{
	struct options o = *opts; /* its grace is completed below */
	int rc;
	const char *config_name = o.config ? o.config : SOPRA_DEFAULT_CONFIG_NAME;
	struct config_errors errs = {0};
	struct config *cfg = load_config(&o, &errs);
	if (!cfg) {
		size_t plen = strlen(config_name);
		for (int i = 0; i < errs.n; i++) {
			const char *m = errs.msgs[i];
			/* "cannot read" messages already start with the path */
			if (strncmp(m, config_name, plen) == 0 && m[plen] == ':')
				fprintf(stderr, "sopra-server: %s\n", m);
			else
				fprintf(stderr, "sopra-server: %s: %s\n", config_name, m);
		}
		if (errs.n == 0)
			fprintf(stderr, "sopra-server: %s: invalid configuration\n", config_name);
		config_errors_free(&errs);
		return EXIT_BAD_CONFIG;
	}
	if (o.check) { /* nothing else: no seed, no journal, no socket */
		printf("%s: ok\n", o.config);
		config_free(cfg);
		return fflush(stdout) == 0 ? 0 : EXIT_RUNTIME;
	}

	/* logged either way: the seed and the configuration replay the game */
	if (!o.given[OPT_SEED]) {
		if (!random_seed(&o.seed)) {
			fprintf(stderr, "sopra-server: cannot draw a random seed: %s\n",
			        strerror(errno));
			config_free(cfg);
			return EXIT_RUNTIME;
		}
		fprintf(stderr,
		        "sopra-server: seed %" PRId64 " (random; pass --seed %" PRId64
		        " to replay this game)\n",
		        o.seed, o.seed);
	} else {
		fprintf(stderr, "sopra-server: seed %" PRId64 "\n", o.seed);
	}
	if (!o.config)
		fprintf(stderr,
		        "sopra-server: the default game: the built-in copy of %s (--config PATH "
		        "serves another)\n",
		        SOPRA_DEFAULT_CONFIG_FILE);

	rc = EXIT_RUNTIME;
	struct server *srv = NULL;
	struct agones *agones = NULL;
	struct journal *journal = NULL;
	struct http *http = NULL;
	bool http_failed;
	/* sessions: --reconnect-grace, or the page's seats (--http-port), which
	 * come back after a reload with their secrets */
	bool sessions = o.given[OPT_RECONNECT_GRACE] || o.given[OPT_HTTP_PORT];
	if (!o.given[OPT_RECONNECT_GRACE])
		o.grace = o.timeout;
	/* sessions (--reconnect-grace): a random key, kept in the journal */
	uint8_t session_key[JOURNAL_KEY_BYTES];
	if (sessions) {
		for (size_t k = 0; k < sizeof session_key; k += sizeof(int64_t)) {
			int64_t part = 0;
			if (!random_seed(&part)) {
				fprintf(stderr, "sopra-server: cannot draw a session key: %s\n",
				        strerror(errno));
				goto out;
			}
			memcpy(session_key + k, &part, sizeof part);
		}
	}
	if (o.journal) {
		/* before listening: a journal that cannot be created stops the
		 * server here (exit 1); one that fails later is logged and the
		 * game goes on (docs/journal.md) */
		char err[512];
		struct journal_params jp = {.path = o.journal,
		                            .sync = o.journal_sync,
		                            .cfg = cfg,
		                            .config_path = config_name,
		                            .seed = o.seed,
		                            .rules = o.rules,
		                            .timeout_sec = o.timeout,
		                            .session_key = sessions ? session_key : NULL,
		                            .grace_sec = o.grace,
		                            .failure_budget = DISPATCH_FAILURE_BUDGET};
		journal = journal_open(&jp, stderr, err, sizeof err);
		if (!journal) {
			fprintf(stderr, "sopra-server: %s\n", err);
			goto out;
		}
	}
	struct server_opts so = {.bind = o.bind,
	                         .watch = o.given[OPT_WATCH_PORT],
	                         .watch_port = o.watch_port,
	                         .adopted_watchers = o.given[OPT_HTTP_PORT],
	                         .port = o.port,
	                         .timeout_sec = o.timeout,
	                         .core = {.cfg = cfg,
	                                  .seed = o.seed,
	                                  .rules = o.rules,
	                                  .failure_budget = DISPATCH_FAILURE_BUDGET}};
	if (sessions)
		so.core.sessions = (struct session_opts){.secret = journal_session_secret,
		                                         .secret_ctx = session_key,
		                                         .grace_sec = o.grace};
	set_admission(&so, &o, cfg->max_players);
	srv = server_new(&so, stderr);
	if (!srv)
		goto out; /* server_new said why */
	const struct game *game = core_game(server_core(srv));
	if (journal) {
		struct dispatch_hooks hooks = journal_hooks(journal, game);
		server_set_taps(srv, &hooks, journal_on_line, journal);
	}
	http = start_http(&o, srv, cfg, o.timeout, &http_failed);
	if (http_failed)
		goto out;
	/* Agones SDK (docs/deployment.md): Ready now that it listens, health
	 * pings on the loop; nothing at all without $AGONES_SDK_HTTP_PORT */
	agones = start_agones(srv, o.seed, false);
	/* the journal's header is written and the server holds the Config
	 * line: the text, 11 KiB for the example, is not needed any more */
	config_drop_text(cfg);
#ifdef __GLIBC__
	/* Loading freed its scratch (cJSON's tree is in mappings of its own,
	 * already unmapped); return the freed pages now instead of carrying
	 * them, resident, through the game (docs/performance.md: idle RSS). */
	malloc_trim(0);
#endif
	rc = server_run(srv);
	http_finish(http, HTTP_FINISH_MS); /* the browsers get the end too */
	rc = close_journal(journal, game, rc);
	journal = NULL;
	agones_shutdown_and_wait(agones, AGONES_SHUTDOWN_WAIT_MS); /* after the last flush */
out:
	journal_discard(journal); /* the server did not start: no game to keep */
	agones_free(agones);
	http_free(http);
	server_free(srv);
	config_free(cfg);
	return rc;
}

int main(int argc, char **argv)
{
	struct options o = {.port = DEFAULT_PORT,
	                    .timeout = DEFAULT_TIMEOUT_SEC,
	                    .rules = RULES_BASE,
	                    .journal_sync = JOURNAL_SYNC_TURN};
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;

	/* a client that vanishes must not kill the server mid-write */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, NULL);
	/* a journal over the file size limit fails with EFBIG (logged, the game
	 * goes on) instead of killing the server */
	sigaction(SIGXFSZ, &sa, NULL);

	char *journal_path = NULL; /* --journal-dir's choice: o.journal or o.resume */
	if (o.journal_dir && (rc = use_journal_dir(&o, &journal_path)) >= 0)
		return rc;
	rc = o.resume ? run_resume(&o) : run_new_game(&o);
	free(journal_path);
	return rc;
}
