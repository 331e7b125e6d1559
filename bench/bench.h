/*
 * bench: shared helpers of the sopra-bench program (docs/performance.md).
 *
 * Nothing here is a test: the benchmark measures and prints, it asserts
 * nothing about wall time. Every helper aborts the run with a message on
 * setup failures (a benchmark that silently measures the wrong thing is
 * worse than none).
 */
#ifndef SOPRA_BENCH_H
#define SOPRA_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sopra/config.h"
#include "sopra/game_event.h"
#include "sopra/game.h"
#include "sopra/xalloc.h"

/* ---- time and statistics -------------------------------------------------- */

uint64_t now_ns(void);

/* A growable sample of durations in nanoseconds. */
struct samples {
	uint64_t *v;
	size_t n, cap;
};

void samples_add(struct samples *s, uint64_t ns);
void samples_free(struct samples *s);
/* The q-quantile (0 <= q <= 1, nearest rank) of the sample; sorts it. 0 if empty. */
uint64_t samples_q(struct samples *s, double q);
uint64_t samples_max(const struct samples *s);

/* ---- failing loudly -------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
void die(const char *fmt, ...);
/* Allocation: xmalloc, xrealloc, ... of sopra/xalloc.h (included above). */

/* ---- the result table ----------------------------------------------------- */

/* One row: what, the measured value (already formatted), the target and a
 * note. Printed at the end as one table and also as it comes (progress). */
void table_row(const char *what, const char *value, const char *target, const char *note);
void table_print(void);

/* ---- processes ------------------------------------------------------------- */

/* Bookkeeping so that die() kills what the bench started; child_setup() is
 * called in every forked child (it dies with the bench). */
void child_started(pid_t pid);
void child_reaped(pid_t pid);
void child_setup(void);
/* A pipe whose ends are close-on-exec (dies on failure). */
void pipe_cloexec(int p[2]);
/* toolutil's spawn() of argv with stdin, stdout and stderr in, out and err
 * (SPAWN_NULL: /dev/null, SPAWN_INHERIT: the bench's own) and child_setup()
 * in the child. Returns the pid (registered with child_started); dies if
 * argv[0] cannot be started. The two values and proc_status_kib below are
 * toolutil.h's (bench.c has names of its own that toolutil.h also uses, so
 * only util.c includes it: a difference does not compile there). */
#define SPAWN_NULL    (-1)
#define SPAWN_INHERIT (-2)
pid_t spawn_argv(const char *const *argv, int in, int out, int err);
/* Pin the calling process to one CPU (-1: all of them again). */
void pin_cpu(int cpu);
/* The CPU every child started from now on is pinned to (-1: none). */
extern int child_cpu;

/* Start the sopra-server binary with the given config, port 0 and seed; waits
 * for its "listening on" line on stderr and returns its port. *pid gets the
 * child's pid; *errfd the read end of its stderr (caller closes it). */
int server_spawn(const char *server, const char *config, int64_t seed, const char *rules,
                 pid_t *pid, int *errfd);
/* The same with one more option and its value (opt NULL: none). */
int server_spawn_with(const char *server, const char *config, int64_t seed, const char *rules,
                      const char *opt, const char *value, pid_t *pid, int *errfd);
/* VmHWM / VmRSS of a process in KiB (-1 when unknown); toolutil.h's. */
long proc_status_kib(pid_t pid, const char *field);
/* SIGTERM, then wait; returns the exit status (as from waitpid). */
int proc_stop(pid_t pid);
/* Wait up to ms for the process to exit by itself, then proc_stop. */
int proc_wait(pid_t pid, int ms);

/* ---- sockets --------------------------------------------------------------- */

/* Blocking TCP connection to 127.0.0.1:port with TCP_NODELAY; -1 on failure. */
int tcp_connect(int port);
void write_all(int fd, const char *buf, size_t n);

/* A connection's input, split into lines. */
struct linebuf {
	char *data;
	size_t len, cap;
	size_t start; /* first unconsumed byte */
};

void linebuf_free(struct linebuf *lb);
/* read() once into lb; returns bytes read, 0 on EOF, -1 on EAGAIN. Dies on error. */
ssize_t linebuf_fill(struct linebuf *lb, int fd);
/* Next complete line (without "\n") or NULL; the pointer is valid until the
 * next fill. The line is NUL-terminated in place. */
char *linebuf_next(struct linebuf *lb, size_t *len);

/* ---- the wire, client side ------------------------------------------------- */

/* The event name of a server line ("ActNow"), copied into buf; false if the
 * line does not start like an event. */
bool wire_event_name(const char *line, char *buf, size_t n);
/* The integer parameter "key" of a server line; false when absent. */
bool wire_int(const char *line, const char *key, int *out);
/* Encode cmd as a client line ("...\n", NUL-terminated) into buf with
 * proto_encode_cmd; returns its length. */
size_t wire_encode_cmd(const struct cmd *c, enum game_rules rules, char *buf, size_t n);

/* ---- generated configurations (cfggen.c) ---------------------------------- */

struct cfg_params {
	int players;          /* maxPlayers */
	int locations;        /* besides the colony */
	int cards_per_deck;   /* each location deck and the start pile; >= 5 * players */
	int rounds;           /* goal rounds = number of crises */
	int extra_characters; /* beyond 2 * players + 2 */
	bool feed;            /* every character has a FEED ability (long scripted games) */
};

/* The ids the scripted client relies on. */
#define CFG_COLONY_ID         1000
#define CFG_FIRST_LOCATION_ID 1

/* A valid configuration text (caller frees). Colony: `players` entrances. */
char *cfg_generate(const struct cfg_params *p);
/* Write text to a fresh file under $TMPDIR; returns the path (caller frees,
 * and unlinks when done). */
char *cfg_write_temp(const char *text, const char *tag);

/* ---- the scripted game driver (script.c) ----------------------------------- */

/*
 * A game played by the bench over n connections to one server, with a fixed
 * command mix per turn (see script.c). The driver is a state machine fed
 * with server lines; it says which command to send next and on which
 * connection. Used by the round-trip, RSS and concurrency measurements.
 */
#define SCRIPT_MAX_PLAYERS 8
#define SCRIPT_MIX_LEN     7

struct script {
	int nplayers;
	int fds[SCRIPT_MAX_PLAYERS];
	struct linebuf in[SCRIPT_MAX_PLAYERS];
	int chars[SCRIPT_MAX_PLAYERS][2]; /* the first two characters of each player */
	int nchars[SCRIPT_MAX_PLAYERS];
	int registered; /* Config events seen */
	int sel_for;    /* the player offered Characters and not yet answered, or -1 */
	int offer[2];   /* the first two characters offered to sel_for */
	int step[SCRIPT_MAX_PLAYERS]; /* position in the per-turn mix */
	bool over;
	/* the command in flight: sent on fds[pending_on] at sent_ns, -1 if none */
	int pending_on;
	int pending_kind; /* index into the mix, or -1 for setup commands */
	uint64_t sent_ns;
	bool pending_failed; /* a CommandFailed came for it */
	int act_now_for;     /* the player the last ActNow went to, -1 if none pending */
	long commands;       /* measured commands completed */
	long failed;         /* of which answered with CommandFailed */
};

/* What the command of mix slot i is called (for tables). */
const char *script_mix_name(int i);

/* Open n connections to port (blocking, TCP_NODELAY). */
void script_open(struct script *s, int port, int nplayers);
void script_close(struct script *s);

/* Feed one server line that arrived on connection i. Returns true when it
 * completed the command in flight (the ActNow that follows it, or the game
 * end). */
bool script_feed(struct script *s, int i, const char *line);

/* If the game waits for the bench (an ActNow or Characters came and nothing
 * is in flight), write the next command and return true. In setup
 * (registration, selection) the commands are sent as well but marked with
 * pending_kind -1. */
bool script_send_next(struct script *s);

/* Read once from connection i (it is readable) and feed every complete
 * line; returns true if one of them completed the command in flight
 * (*done_ns: when it was parsed). EOF marks the game over. */
bool script_on_readable(struct script *s, int i, uint64_t *done_ns);

/* Register all players (the game starts at maxPlayers) and play through the
 * selection, blocking; returns when the first ActNow has arrived. */
void script_setup_blocking(struct script *s);

/* The fan-out floor's game (floor_script.c) over a script opened on a
 * sopra-fanout-floor: no setup, the first connection acts first. */
void floor_script_start(struct script *s);

/* Like script_send_next(), the same per-turn mix as the floor's one-byte
 * commands; the answers are fed by script_on_readable(). */
bool floor_script_send_next(struct script *s);

/* Read until the command in flight is complete (blocking, poll over all
 * connections); returns its round trip in ns. */
uint64_t script_wait_blocking(struct script *s);

/* ---- the in-process engine (engine.c) -------------------------------------- */

struct engine_result {
	long games;
	long commands;
	long events;
	double apply_s;     /* game_apply only */
	double full_s;      /* proto_decode + game_apply + proto_encode of every event */
	double setup_s;     /* of full_s: game_new and the registrations */
	double play_s;      /* of full_s: the rest (the game proper, game_free) */
	long play_commands; /* commands after the registrations */
	long cmds_per_game_min, cmds_per_game_max;
};

/* Generate `games` command streams with a random player against the game
 * API (seeded, reproducible), then replay them `reps` times for timing. */
void engine_bench(const struct config *cfg, enum game_rules rules, int players, int games, int reps,
                  struct engine_result *out);

/* ---- the game API of bots and clients (api.c) ---------------------------- */

struct api_result {
	long states; /* recorded states of random legal play */
	long ops;    /* calls of each kind per repetition (one per state) */
	long listed; /* legal commands listed in one repetition */
	double legal_s, clone_s, apply_s, view_s, from_view_s; /* seconds per call, best rep */
	long rollouts, rollout_commands;
	double rollout_s; /* random legal play from a state to the end, clone included */
};

/* Play `games` random games (1..maxPlayers players), record every state the
 * game waits for a player, and time over them, `reps` times interleaved
 * after one round to warm up (each kind's best round counts):
 * game_legal_commands, game_clone + game_free, game_apply of the recorded
 * command on a clone (the clone's time subtracted), game_view_of, and
 * game_from_view + game_free (the view's time subtracted); then random
 * rollouts to the end from every 8th state. */
void api_bench(const struct config *cfg, enum game_rules rules, int games, int reps,
               struct api_result *out);

/* ---- the echo floor (echo.c) ----------------------------------------------- */

/* Fork a libevent bufferevent echo server on an ephemeral port; returns it. */
int echo_spawn(pid_t *pid);
/* The true floor for one request and one answer: a process that accepts
 * one connection and echoes with blocking read() and write(), no event loop
 * at all. Returns its port. */
/* journal: NULL, or a file each line is appended to before its answer */
int blocking_echo_spawn(pid_t *pid, const char *journal);

/* Start the fan-out floor (4 connections; "S\n" and "B<t>\n" commands, see
 * fanout.c) on an ephemeral port: the executable exe (sopra-fanout-floor)
 * run as "exe FD"; returns the port. */
int fanout_spawn(pid_t *pid, const char *exe);

#endif
