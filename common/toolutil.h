/*
 * toolutil: the helpers the test and measurement programs share (sopra-soak,
 * sopra-scenario, sopra-faults, sopra-bench; sopra-bot's generator is the
 * same splitmix64): a seedable generator, the monotonic clock, reading a
 * whole file, starting a child process and reading /proc.
 *
 * Allocation goes through sopra/xalloc.h (sopra_core): out of memory prints
 * one line and aborts. Nothing here keeps state between calls.
 */
#ifndef SOPRA_TOOLUTIL_H
#define SOPRA_TOOLUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- a seedable generator ------------------------------------------------- */

/* splitmix64 (Steele, Lea, Flood 2014): advances *state and returns the next
 * value. Any state is a valid seed, 0 included; the same seed gives the same
 * sequence everywhere. Not for anything secret. */
uint64_t splitmix64(uint64_t *state);

/* ---- time ----------------------------------------------------------------- */

/* CLOCK_MONOTONIC in milliseconds and in seconds. */
int64_t now_ms(void);
double now_sec(void);
/* Sleep ms milliseconds (a signal does not cut it short). */
void sleep_ms(int ms);

/* ---- text ----------------------------------------------------------------- */

/* The value of the hex digit c (0-9, a-f, A-F), or -1. */
int hex_digit(char c);

/* ---- connecting ----------------------------------------------------------- */

/* A TCP connection to host:port (every address getaddrinfo gives, IPv4 or
 * IPv6), with TCP_NODELAY set. Tries again every retry_ms until wait_sec
 * have passed (a server that is starting listens soon). Returns the
 * descriptor, or -1 with "HOST: why" (the name does not resolve) or
 * "cannot connect to HOST:PORT: why" in err[errlen]. */
int tcp_connect_host(const char *host, int port, double wait_sec, int retry_ms, char *err,
                     size_t errlen);

/* ---- files ---------------------------------------------------------------- */

/* The whole file, NUL-terminated (it may contain further NULs); *len (when
 * len is not NULL) gets its length without the terminator. Reads until EOF,
 * so /proc files work too. NULL with errno set when it cannot be opened or
 * read. The caller frees the result. */
char *read_file(const char *path, size_t *len);

/* $XDG_STATE_HOME/SUB, or ~/.local/state/SUB without it (a relative
 * $XDG_STATE_HOME is ignored, as the XDG spec says), created (mode 0700
 * for each new directory) if needed: into out. 0, or -1 with the reason in
 * err. */
int state_dir(const char *sub, char *out, size_t outlen, char *err, size_t errlen);

/* A field of /proc/PID/status in KiB, e.g. "VmHWM" or "VmRSS" (without the
 * colon); -1 when the process or the field is not there. */
long proc_status_kib(pid_t pid, const char *field);

/* ---- child processes ------------------------------------------------------ */

/* What a child's stdin, stdout or stderr becomes in spawn(): a descriptor of
 * the caller (it may be close-on-exec; the child gets a copy), or: */
#define SPAWN_NULL    (-1) /* /dev/null */
#define SPAWN_INHERIT (-2) /* the caller's own */

struct spawn_opts {
	bool search_path;    /* look argv[0] up in $PATH (execvp) */
	long nofile;         /* > 0: the child's RLIMIT_NOFILE (soft and hard) */
	void (*setup)(void); /* called in the child right before the exec */
};

/*
 * Fork and exec argv[0] with argv (NULL-terminated); opts may be NULL. The
 * child dies with its parent (PR_SET_PDEATHSIG, SIGKILL), starts with the
 * default action for SIGPIPE, SIGINT and SIGTERM and no blocked signals,
 * and gets in, out and err as its descriptors 0, 1 and 2. Every other
 * descriptor the caller wants to keep from the child must be close-on-exec.
 *
 * Returns the child's pid once the exec succeeded. Returns -1 with errno set
 * when fork fails or the exec fails (that child has been reaped already).
 */
pid_t spawn(const char *const argv[], int in, int out, int err, const struct spawn_opts *opts);

#endif
