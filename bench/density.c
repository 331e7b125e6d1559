/*
 * sopra-density: how many concurrent games fit on this machine
 * (docs/performance.md, "Density"; docs/deployment.md, capacity).
 *
 *   sopra-density --server PATH [--games N[,N...]] [--sweep] [--seconds S]
 *                 [--period-ms MS] [--players P] [--rounds R] [--per-worker G]
 *                 [--base-port PORT] [--reserve-mib MIB] [--stop-on-p99]
 *                 [--client-nice N] [--server-nice N]
 *                 [--client-sched batch|other] [--server-sched batch|other]
 *                 [--journal] [--floor [--floor-exe PATH]]
 *
 * Many sopra-server processes at once, one game each, every game paced like
 * people playing: one command every --period-ms (default 2000) per game, at
 * a random phase, so N games offer N/2 commands/s in all. The levels
 * (default 1000,2500,5000 games) are reached by adding servers to the ones
 * already running; at each level the games play for --seconds (default 20)
 * and the tables get a row each:
 *   - the command round trip (command -> the ActNow that follows it)
 *     p50/p99/max, and how late the clients sent (p99): the load
 *     generator's own part of the tail;
 *   - per command carried, from counters that a loaded machine does not
 *     distort by queueing: the servers' CPU time (/proc/PID/schedstat), its
 *     user/system split (utime/stime), their time runnable but waiting for
 *     a CPU (schedstat: the run queue's part of the tail), how often they
 *     were put on a CPU, their voluntary and involuntary context switches,
 *     minor faults (/proc/PID/stat, status), and the clients' CPU and wait;
 *   - memory: the proportional memory (Pss) per server and its page tables
 *     (VmPTE), the kernel's memory per game (slab, page tables, kernel
 *     stacks: the growth of /proc/meminfo since the start, both ends of
 *     every loopback connection included) and TCP buffers (the growth of
 *     /proc/net/sockstat's page count), and what the machine as a whole was
 *     doing (other users').
 * --sweep goes on past the last level, 2,500 games at a time, until the
 * first limit: CPU (less than 90 % of the offered commands carried, or a
 * median round trip over 5 ms: saturated; this also ends a run of listed
 * levels, so as not to overload a shared machine further), a
 * process or descriptor or port that cannot be had, or memory
 * (--reserve-mib, default 6144, stays available for the machine's other
 * users; the level that would cross it is not started). A p99 over 5 ms is
 * reported, and ends the run only with --stop-on-p99: on a machine shared
 * with other work the tail follows their load more than ours.
 *
 * Scheduling: the clients run at nice -10 (--client-nice) so that the load
 * generator, which stands for players on other machines, does not queue
 * behind other work on a shared machine; the servers at nice 0
 * (--server-nice; -10 approximates a node that runs nothing but games).
 * --client-sched batch puts the clients under SCHED_BATCH: a client woken
 * by a server's reply then does not preempt that server in the middle of
 * its fan-out (a remote player never could); --server-sched batch does the
 * same for the servers (systemd: CPUSchedulingPolicy=batch).
 * --journal runs every server as the deployments do: --journal-dir (one
 * directory per game under $JOURNAL_TMPDIR, default /var/tmp: on disk, so
 * the turns' fdatasyncs count; removed at the end) and --reconnect-grace.
 *
 * The clients are worker processes (fork), each driving at most --per-worker
 * games (default 2500; 4 connections each, well under the descriptor
 * limit) over one epoll loop with the scripted client of script.c. The
 * servers get fixed ports from --base-port (default 10000) up, skipping the
 * kernel's ephemeral range, and their stderr goes to /dev/null. Everything
 * stays on 127.0.0.1. At the end (or if the bench dies) the client
 * connections close and every game ends by itself (the last player left);
 * the bench also sends SIGTERM and reaps them.
 *
 * --floor measures the machine's floor for one process per game next to
 * the server: at every level the games are first played against
 * sopra-fanout-floor processes (fanout.c, one per game, started from next
 * to sopra-density or --floor-exe), then those are stopped and the same
 * number of servers is started and measured; the tables get a row for each.
 * A floor process is the least a game server does per command at human
 * pace: it sleeps in epoll (libevent) on its 4 players' connections, reads
 * the command and writes what sopra-server writes (the sender's two lines
 * for a failing command, an event to all 4 for a working one), with the
 * clients, pacing, command mix and accounting of the servers' rows.
 *
 * Output: a markdown table on stdout, progress on stderr.
 */
#define _GNU_SOURCE 1 /* epoll_pwait2 */
#include "bench.h"
#include "sopra/rng.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dirent.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- options ---------------------------------------------------------------- */

static const char *opt_server;
static int opt_levels[64] = {1000, 2500, 5000};
static int opt_nlevels = 3;
static bool opt_sweep;
static bool opt_stop_p99;                  /* stop at the first level over the p99 target */
static int opt_client_nice = -10;          /* the workers' nice value */
static int opt_server_nice;                /* the servers' */
static int opt_client_sched = SCHED_OTHER; /* the workers' scheduling policy */
static int opt_server_sched = SCHED_OTHER; /* the servers' */
static double opt_seconds = 20;
static int opt_period_ms = 2000;
static int opt_players = 4;
static int opt_rounds = 100; /* the game's length: 100 rounds = 2,800 commands */
static int opt_per_worker = 2500;
static int opt_base_port = 10000;
static long opt_reserve_mib = 6144;
static const char *opt_config;    /* generated */
static bool opt_journal;          /* as deployed: --journal-dir per game, sessions */
static bool opt_floor;            /* a floor row before every server row */
static const char *opt_floor_exe; /* sopra-fanout-floor; default: next to this program */
static char journal_root[256];    /* a fresh directory, removed at the end */
static size_t cfg_bytes;

#define P99_TARGET_MS 5.0
#define SWEEP_STEP    2500
#define SWEEP_MAX     60000

static const char *sched_name(int policy)
{
	return policy == SCHED_BATCH ? "SCHED_BATCH" : "SCHED_OTHER";
}

static int parse_sched(const char *v)
{
	if (strcmp(v, "batch") == 0)
		return SCHED_BATCH;
	if (strcmp(v, "other") == 0)
		return SCHED_OTHER;
	die("a scheduling policy is batch or other, not %s", v);
}

/* Put the calling process under policy (SCHED_OTHER: leave it). */
static void set_sched(int policy)
{
	struct sched_param none = {0};
	if (policy != SCHED_OTHER && sched_setscheduler(0, policy, &none) != 0)
		fprintf(stderr, "density: cannot set %s: %s\n", sched_name(policy),
		        strerror(errno));
}

/* rm -r of a directory of directories of files (the journals). */
static void remove_tree(const char *root)
{
	DIR *d = opendir(root);
	for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.')
			continue;
		char sub[512];
		snprintf(sub, sizeof sub, "%s/%s", root, e->d_name);
		DIR *sd = opendir(sub);
		for (struct dirent *f; sd && (f = readdir(sd)) != NULL;) {
			if (f->d_name[0] == '.')
				continue;
			char file[1024];
			snprintf(file, sizeof file, "%s/%s", sub, f->d_name);
			unlink(file);
		}
		if (sd)
			closedir(sd);
		rmdir(sub);
	}
	if (d)
		closedir(d);
	rmdir(root);
}

/* ---- ports: [base, ephemeral low) and (ephemeral high, 65535] ------------------- */

static int eph_lo = 32768, eph_hi = 60999;

static void read_ephemeral(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	if (f) {
		if (fscanf(f, "%d %d", &eph_lo, &eph_hi) != 2) {
			eph_lo = 32768;
			eph_hi = 60999;
		}
		fclose(f);
	}
}

static int port_count(void)
{
	int below = eph_lo > opt_base_port ? eph_lo - opt_base_port : 0;
	return below + (65535 - eph_hi);
}

/* The i-th usable port (0 <= i < port_count()). */
static int port_at(int i)
{
	int below = eph_lo > opt_base_port ? eph_lo - opt_base_port : 0;
	return i < below ? opt_base_port + i : eph_hi + 1 + (i - below);
}

/* Whether a server could bind 0.0.0.0:port now (it uses SO_REUSEADDR too). */
static bool port_free(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	bool ok = bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0;
	close(fd);
	return ok;
}

/* ---- /proc ---------------------------------------------------------------------- */

/* What the scheduler and the kernel counted for one process (all its
 * threads' schedstat, the process's own faults and switches). Summed over
 * servers and differenced across a run, each is divided by the commands. */
struct proc_counters {
	uint64_t run_ns;                /* on a CPU (schedstat 1) */
	uint64_t wait_ns;               /* runnable, waiting for a CPU (schedstat 2) */
	uint64_t slices;                /* times it was put on a CPU (schedstat 3) */
	uint64_t user_ticks, sys_ticks; /* /proc/PID/stat utime, stime */
	uint64_t minflt, majflt;
	uint64_t vcsw, ivcsw; /* voluntary (it blocked), involuntary (preempted) */
};

static void counters_add(struct proc_counters *sum, const struct proc_counters *c, int sign)
{
	uint64_t *d = (uint64_t *)sum;
	const uint64_t *v = (const uint64_t *)c;
	for (size_t i = 0; i < sizeof *sum / sizeof *d; i++)
		d[i] += sign > 0 ? v[i] : (uint64_t)0 - v[i];
}

/* Adds thread dir's schedstat and context switches (dir: /proc/PID/task/TID). */
static void thread_counters_add(const char *dir, struct proc_counters *c)
{
	char path[400], line[256];
	unsigned long long run = 0, wait = 0, slices = 0;
	snprintf(path, sizeof path, "%s/schedstat", dir);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu %llu %llu", &run, &wait, &slices) != 3)
			run = wait = slices = 0;
		fclose(f);
	}
	c->run_ns += run;
	c->wait_ns += wait;
	c->slices += slices;
	snprintf(path, sizeof path, "%s/status", dir);
	if ((f = fopen(path, "r")) != NULL) {
		while (fgets(line, sizeof line, f)) {
			if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
				c->vcsw += strtoull(line + 24, NULL, 10);
			else if (strncmp(line, "nonvoluntary_ctxt_switches:", 27) == 0)
				c->ivcsw += strtoull(line + 27, NULL, 10);
		}
		fclose(f);
	}
}

/* Adds pid's counters to *c (nothing if it is gone): schedstat and the
 * switches are each thread's (a journaled server has a second one), faults
 * and utime/stime the process's. */
static void proc_counters_add(pid_t pid, struct proc_counters *c)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.')
			continue;
		char dir[320];
		snprintf(dir, sizeof dir, "%s/%s", path, e->d_name);
		thread_counters_add(dir, c);
	}
	closedir(d);
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (f) {
		char buf[1024];
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		buf[n] = 0;
		fclose(f);
		/* after "(comm)": state ppid pgrp session tty tpgid flags minflt
		 * cminflt majflt cmajflt utime stime */
		char *p = strrchr(buf, ')');
		unsigned long long minflt, majflt, ut, st;
		if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %llu %*u %llu %*u %llu %llu",
		                &minflt, &majflt, &ut, &st) == 4) {
			c->minflt += minflt;
			c->majflt += majflt;
			c->user_ticks += ut;
			c->sys_ticks += st;
		}
	}
}

struct mem {
	long rss, pss, pss_anon, pss_file, private_kib; /* KiB, summed */
	long pte_kib;                                   /* VmPTE: its page tables */
	double kobj_kib, sock_kib; /* the kernel's objects (below), its sockets' part */
	long sockets;
	long n;
};

/* ---- a server's kernel objects -------------------------------------------------
 * The machine's Slab and TCP page counts move with everybody's work; a
 * server's own share is counted from what it holds: its page tables
 * (VmPTE), a kernel stack and task per thread, its mm and VMAs, and per
 * descriptor a file (a socket: the TCP socket, its inode, dentry and epoll
 * item), each at the object size /proc/slabinfo gives. Buffered bytes are
 * not included (a client that reads promptly leaves none). */

enum kobj {
	K_TCP6,
	K_SOCK_INODE,
	K_FILP,
	K_DENTRY,
	K_EPI,
	K_TASK,
	K_MM,
	K_VMA,
	K_AVC,
	K_SIGNAL,
	K_SIGHAND,
	K_FILES,
	K_PID,
	K_NKOBJ
};
static const char *const kobj_names[K_NKOBJ] = {
        "TCPv6",        "sock_inode_cache", "filp",
        "dentry",       "eventpoll_epi",    "task_struct",
        "mm_struct",    "vm_area_struct",   "anon_vma_chain",
        "signal_cache", "sighand_cache",    "files_cache",
        "pid"};
static long kobj_bytes[K_NKOBJ]; /* 0: unknown (not counted) */
#define KERNEL_STACK_BYTES 16384 /* THREAD_SIZE on x86-64 */

static void read_slab_sizes(void)
{
	FILE *f = fopen("/proc/slabinfo", "r");
	char line[512], name[64];
	long objsize;
	while (f && fgets(line, sizeof line, f)) {
		if (sscanf(line, "%63s %*s %*s %ld", name, &objsize) != 2)
			continue;
		for (int k = 0; k < K_NKOBJ; k++)
			if (strcmp(name, kobj_names[k]) == 0)
				kobj_bytes[k] = objsize;
	}
	if (f)
		fclose(f);
}

/* Lines of /proc/PID/NAME (0 if unreadable). */
static long proc_lines(pid_t pid, const char *name)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
	FILE *f = fopen(path, "r");
	long n = 0;
	while (f && fgets(line, sizeof line, f))
		n++;
	if (f)
		fclose(f);
	return n;
}

/* Adds pid's kernel objects (KiB) to m. */
static void proc_kobj_add(pid_t pid, struct mem *m)
{
	char path[64], target[64];
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	long sockets = 0, files = 0;
	for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.')
			continue;
		char fdpath[320];
		snprintf(fdpath, sizeof fdpath, "%s/%s", path, e->d_name);
		ssize_t n = readlink(fdpath, target, sizeof target - 1);
		target[n > 0 ? n : 0] = 0;
		if (strncmp(target, "socket:", 7) == 0)
			sockets++;
		else
			files++;
	}
	if (d)
		closedir(d);
	long threads = proc_status_kib(pid, "Threads"); /* a count, not KiB */
	threads = threads > 0 ? threads : 1;
	long vmas = proc_lines(pid, "maps");
	const long *b = kobj_bytes;
	double sock = (double)sockets *
	              (double)(b[K_TCP6] + b[K_SOCK_INODE] + b[K_FILP] + b[K_DENTRY] + b[K_EPI]);
	double rest = (double)threads * (KERNEL_STACK_BYTES + (double)b[K_TASK]) +
	              (double)(b[K_MM] + b[K_SIGNAL] + b[K_SIGHAND] + b[K_FILES] + b[K_PID]) +
	              (double)vmas * (double)(b[K_VMA] + b[K_AVC]) +
	              (double)files * (double)(b[K_FILP] + b[K_EPI]);
	m->sock_kib += sock / 1024;
	m->kobj_kib += (sock + rest) / 1024;
	m->sockets += sockets;
}

static void proc_mem_add(pid_t pid, struct mem *m)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	long v;
	while (fgets(line, sizeof line, f)) {
		char *c = strchr(line, ':');
		if (!c)
			continue;
		v = strtol(c + 1, NULL, 10);
		if (strncmp(line, "Rss:", 4) == 0)
			m->rss += v;
		else if (strncmp(line, "Pss:", 4) == 0)
			m->pss += v;
		else if (strncmp(line, "Pss_Anon:", 9) == 0)
			m->pss_anon += v;
		else if (strncmp(line, "Pss_File:", 9) == 0)
			m->pss_file += v;
		else if (strncmp(line, "Private_Clean:", 14) == 0 ||
		         strncmp(line, "Private_Dirty:", 14) == 0)
			m->private_kib += v;
	}
	fclose(f);
	long pte = proc_status_kib(pid, "VmPTE");
	m->pte_kib += pte > 0 ? pte : 0;
	m->kobj_kib += pte > 0 ? (double)pte : 0;
	proc_kobj_add(pid, m);
	m->n++;
}

/* Pages the kernel holds for TCP socket buffers, all sockets of the
 * machine ("TCP: ... mem N" of /proc/net/sockstat); -1 if unknown. */
static long tcp_mem_pages(void)
{
	FILE *f = fopen("/proc/net/sockstat", "r");
	char line[256];
	long pages = -1;
	while (f && fgets(line, sizeof line, f)) {
		const char *m = strstr(line, " mem ");
		if (strncmp(line, "TCP:", 4) == 0 && m)
			pages = strtol(m + 5, NULL, 10);
	}
	if (f)
		fclose(f);
	return pages;
}

struct meminfo {
	long avail, slab, kstack, ptables; /* KiB */
};

static struct meminfo read_meminfo(void)
{
	struct meminfo mi = {0};
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	while (f && fgets(line, sizeof line, f)) {
		long v = 0;
		char *c = strchr(line, ':');
		if (!c)
			continue;
		v = strtol(c + 1, NULL, 10);
		if (strncmp(line, "MemAvailable:", 13) == 0)
			mi.avail = v;
		else if (strncmp(line, "Slab:", 5) == 0)
			mi.slab = v;
		else if (strncmp(line, "KernelStack:", 12) == 0)
			mi.kstack = v;
		else if (strncmp(line, "PageTables:", 11) == 0)
			mi.ptables = v;
	}
	if (f)
		fclose(f);
	return mi;
}

static long meminfo_kernel(const struct meminfo *m)
{
	return m->slab + m->kstack + m->ptables;
}

/* Busy and total jiffies of all CPUs together (/proc/stat). */
static void cpu_jiffies(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[10] = {0};
	FILE *f = fopen("/proc/stat", "r");
	if (f) {
		if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		           &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
			memset(v, 0, sizeof v);
		fclose(f);
	}
	*total = 0;
	for (int i = 0; i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4]; /* minus idle and iowait; steal counts as busy */
}

static int nprocs_running(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	int run = 0, all = 0;
	float a, b, c;
	if (f) {
		if (fscanf(f, "%f %f %f %d/%d", &a, &b, &c, &run, &all) != 5)
			all = 0;
		fclose(f);
	}
	return all;
}

/* ---- the worker: servers, their games, the paced loop ----------------------------- */

struct game {
	pid_t pid;
	int port;
	bool floor;   /* a sopra-fanout-floor, not a sopra-server */
	int ready_fd; /* a floor's: where it writes its port once it listens */
	struct script s;
	uint64_t next_send;
	bool deferred; /* its time came while a command was in flight */
};

enum op { OP_GROW, OP_MEM, OP_RUN, OP_CLEAR, OP_QUIT };

struct request {
	enum op op;
	int target;           /* OP_GROW: games to have */
	int port_lo, port_hi; /* OP_GROW: port indexes to use */
	double seconds;       /* OP_RUN */
	long reserve_kib;     /* OP_GROW: stop when MemAvailable drops below */
	bool floor;           /* OP_GROW: floor processes instead of servers */
};

enum grow_fail { GF_NONE, GF_SPAWN, GF_FDS, GF_PORTS, GF_MEMORY, GF_START };

struct reply {
	int games;
	enum grow_fail fail;
	int fail_errno;
	int port_next; /* OP_GROW: first port index not used */
	struct mem mem;
	long cmds, fails, late_n;
	double late_s, secs;
	struct proc_counters server, client; /* over the run, summed */
	size_t nsamples, nlate;              /* round trips, then send lateness */
	long client_rss_kib;
};

static struct game *games;
static int ngames, capgames;
static int epfd = -1;

/* SIGTERM and reap, 64 at a time: thousands of servers exiting at once
 * would flood the run queue of a machine that others use too. */
static void worker_kill_all(void)
{
	for (int i = 0; i < ngames; i += 64) {
		int end = i + 64 < ngames ? i + 64 : ngames;
		for (int k = i; k < end; k++)
			if (games[k].pid > 0)
				kill(games[k].pid, SIGTERM);
		for (int k = i; k < end; k++) {
			script_close(&games[k].s);
			if (games[k].pid > 0)
				waitpid(games[k].pid, NULL, 0);
			games[k].pid = 0;
		}
	}
	ngames = 0;
}

/* vfork + exec: cheap however large the worker is; the child only makes
 * system calls. The server gets its own nice value (--server-nice, default
 * 0, not the worker's) and /dev/null for stdio. */
static pid_t spawn_server(int port, bool floor, int *ready_fd, int *err)
{
	static int devnull = -1;
	if (devnull < 0 && (devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		die("/dev/null: %s", strerror(errno));
	char portbuf[16], seedbuf[24];
	snprintf(portbuf, sizeof portbuf, "%d", port);
	snprintf(seedbuf, sizeof seedbuf, "%d", port * 7 + 1);
	char jdir[sizeof journal_root + 32];
	snprintf(jdir, sizeof jdir, "%s/%d", journal_root, port);
	const char *argv[] = {
	        opt_server, "--config",  opt_config, "--port",        portbuf, "--seed",
	        seedbuf,    "--timeout", "100000",   "--journal-dir", jdir,    "--reconnect-grace",
	        "30",       NULL};
	if (!opt_journal)
		argv[9] = NULL;
	/* a floor: FD 3 (the pipe it writes its port to once listening) PORT */
	int ready[2] = {-1, -1};
	const char *floor_argv[] = {opt_floor_exe, "3", portbuf, NULL};
	if (floor && pipe2(ready, O_CLOEXEC) != 0) {
		*err = errno;
		return -1;
	}
	/* environ without AGONES_SDK_HTTP_PORT: main() unset it */
	pid_t pid = vfork();
	if (pid == 0) {
		if (floor) {
			dup2(ready[1], 3);
			execve(opt_floor_exe, (char *const *)floor_argv, environ);
			_exit(127);
		}
		setpriority(PRIO_PROCESS, 0, opt_server_nice);
		if (opt_server_sched != SCHED_OTHER) {
			struct sched_param none = {0};
			sched_setscheduler(0, opt_server_sched, &none);
		}
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execve(opt_server, (char *const *)argv, environ);
		_exit(127);
	}
	*err = pid < 0 ? errno : 0;
	if (floor) {
		close(ready[1]);
		*ready_fd = ready[0];
		if (pid < 0)
			close(ready[0]);
	}
	return pid;
}

/* Wait until the floor process writes its port (true), or exited / 5 s
 * passed (false); closes its pipe. */
static bool wait_floor_listening(struct game *g)
{
	struct pollfd pf = {.fd = g->ready_fd, .events = POLLIN};
	int port = 0;
	bool ok = poll(&pf, 1, 5000) == 1 && read(g->ready_fd, &port, sizeof port) == sizeof port &&
	          port == g->port;
	close(g->ready_fd);
	g->ready_fd = -1;
	return ok;
}

/* Wait until the server on port accepts a connection (true), or exited /
 * 5 s passed (false). */
static bool wait_listening(pid_t pid, int port)
{
	uint64_t end = now_ns() + 5000000000u;
	while (now_ns() < end) {
		int fd = tcp_connect(port);
		if (fd >= 0) {
			close(fd);
			return true;
		}
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid)
			return false;
		struct timespec ts = {0, 300000};
		nanosleep(&ts, NULL);
	}
	return false;
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void worker_grow(const struct request *rq, struct reply *rp)
{
	int pi = rq->port_lo;
	rp->fail = GF_NONE;
	if (rq->target > capgames) {
		games = xrealloc(games, (size_t)rq->target * sizeof *games);
		capgames = rq->target;
	}
	while (ngames < rq->target) {
		/* a batch spawned at once, then each waited for and set up */
		int batch = rq->target - ngames < 32 ? rq->target - ngames : 32;
		if (read_meminfo().avail < rq->reserve_kib) {
			rp->fail = GF_MEMORY;
			break;
		}
		int first = ngames;
		for (int b = 0; b < batch; b++) {
			while (pi < rq->port_hi && !port_free(port_at(pi)))
				pi++;
			if (pi >= rq->port_hi) {
				rp->fail = GF_PORTS;
				break;
			}
			int err = 0, ready_fd = -1;
			pid_t pid = spawn_server(port_at(pi), rq->floor, &ready_fd, &err);
			if (pid < 0) {
				rp->fail = GF_SPAWN;
				rp->fail_errno = err;
				break;
			}
			struct game *g = &games[ngames++];
			memset(g, 0, sizeof *g);
			g->pid = pid;
			g->port = port_at(pi++);
			g->floor = rq->floor;
			g->ready_fd = ready_fd;
		}
		for (int i = first; i < ngames; i++) {
			struct game *g = &games[i];
			if (g->floor ? !wait_floor_listening(g)
			             : !wait_listening(g->pid, g->port)) {
				rp->fail = GF_START;
				for (int k = i; k < ngames;
				     k++) { /* this one and the rest of the batch */
					if (games[k].ready_fd >= 0)
						close(games[k].ready_fd);
					kill(games[k].pid, SIGKILL);
					waitpid(games[k].pid, NULL, 0);
				}
				ngames = i; /* keep what came up before */
				break;
			}
			/* room for this game's connections? (script_open dies without) */
			int probe[SCRIPT_MAX_PLAYERS + 1], np = 0;
			while (np <= opt_players &&
			       (probe[np] = socket(AF_INET, SOCK_STREAM, 0)) >= 0)
				np++;
			int perr = errno;
			for (int k = 0; k < np; k++)
				close(probe[k]);
			if (np <= opt_players) {
				rp->fail = perr == EMFILE || perr == ENFILE ? GF_FDS : GF_SPAWN;
				rp->fail_errno = perr;
				for (int k = i; k < ngames; k++) {
					kill(games[k].pid, SIGKILL);
					waitpid(games[k].pid, NULL, 0);
				}
				ngames = i;
				break;
			}
			script_open(&g->s, g->port, opt_players);
			if (g->floor)
				floor_script_start(&g->s);
			else
				script_setup_blocking(&g->s);
			for (int c = 0; c < opt_players; c++) {
				set_nonblock(g->s.fds[c]);
				struct epoll_event ev = {.events = EPOLLIN,
				                         .data.u64 =
				                                 ((uint64_t)i << 8) | (uint64_t)c};
				if (epoll_ctl(epfd, EPOLL_CTL_ADD, g->s.fds[c], &ev) != 0)
					die("epoll_ctl: %s", strerror(errno));
			}
		}
		if (rp->fail != GF_NONE)
			break;
	}
	rp->games = ngames;
	rp->port_next = pi;
}

/* A binary min-heap of game indexes by next_send. */
static int *heap;
static int nheap;

static bool heap_less(int a, int b)
{
	return games[heap[a]].next_send < games[heap[b]].next_send;
}

static void heap_swap(int a, int b)
{
	int t = heap[a];
	heap[a] = heap[b];
	heap[b] = t;
}

static void heap_push(int gi)
{
	int i = nheap++;
	heap[i] = gi;
	while (i > 0 && heap_less(i, (i - 1) / 2)) {
		heap_swap(i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static int heap_pop(void)
{
	int top = heap[0];
	heap[0] = heap[--nheap];
	for (int i = 0;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < nheap && heap_less(l, m))
			m = l;
		if (r < nheap && heap_less(r, m))
			m = r;
		if (m == i)
			break;
		heap_swap(i, m);
		i = m;
	}
	return top;
}

static int wait_events(struct epoll_event *evs, int max, int64_t timeout_ns)
{
	if (timeout_ns < 0)
		timeout_ns = 100000000;
	struct timespec ts = {(time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000)};
	int n = epoll_pwait2(epfd, evs, max, &ts, NULL);
	if (n < 0 && errno == ENOSYS)
		n = epoll_wait(epfd, evs, max, (int)((timeout_ns + 999999) / 1000000));
	if (n < 0 && errno != EINTR)
		die("epoll: %s", strerror(errno));
	return n < 0 ? 0 : n;
}

/* The game's next command, if it waits for one (script_send_next). */
static bool game_send_next(struct game *g)
{
	return g->floor ? floor_script_send_next(&g->s) : script_send_next(&g->s);
}

static void worker_run(const struct request *rq, struct reply *rp, struct samples *lat,
                       struct samples *lateness)
{
	struct rng r;
	rng_init(&r, 4242 + ngames);
	uint64_t period = (uint64_t)opt_period_ms * 1000000u;
	heap = xrealloc(heap, (size_t)(ngames ? ngames : 1) * sizeof *heap);
	nheap = 0;
	struct proc_counters srv0 = {0}, srv1 = {0}, self0c = {0}, self1c = {0};
	for (int i = 0; i < ngames; i++)
		proc_counters_add(games[i].pid, &srv0);
	proc_counters_add(getpid(), &self0c);
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(rq->seconds * 1e9);
	for (int i = 0; i < ngames; i++) {
		games[i].next_send = t0 + (uint64_t)rng_next_int(&r, opt_period_ms) * 1000000u;
		games[i].deferred = false;
		heap_push(i);
	}
	long inflight = 0, cmds0 = 0, fails0 = 0;
	for (int i = 0; i < ngames; i++) {
		cmds0 += games[i].s.commands;
		fails0 += games[i].s.failed;
	}
	uint64_t late = 0;
	struct epoll_event evs[256];
	for (;;) {
		uint64_t now = now_ns();
		bool sending = now < end;
		while (sending && nheap > 0 && games[heap[0]].next_send <= now) {
			int gi = heap_pop();
			struct game *g = &games[gi];
			if (g->s.pending_on >= 0) {
				g->deferred = true;
			} else if (!g->s.over && game_send_next(g)) {
				inflight++;
				late += now - g->next_send;
				samples_add(lateness, now - g->next_send);
				rp->late_n++;
			}
			g->next_send += period;
			if (g->next_send < now)
				g->next_send = now + period; /* fell behind: no burst */
			heap_push(gi);
		}
		if (!sending && inflight == 0)
			break;
		if (!sending && now > end + 5000000000u)
			break; /* a lost answer must not hang the bench */
		int64_t timeout = 100000000;
		if (sending && nheap > 0) {
			uint64_t next =
			        games[heap[0]].next_send < end ? games[heap[0]].next_send : end;
			timeout = next > now ? (int64_t)(next - now) : 0;
		}
		int n = wait_events(evs, 256, timeout);
		for (int k = 0; k < n; k++) {
			int gi = (int)(evs[k].data.u64 >> 8), ci = (int)(evs[k].data.u64 & 0xff);
			struct game *g = &games[gi];
			if (g->s.fds[ci] < 0)
				continue;
			int fd = g->s.fds[ci];
			int kind = g->s.pending_kind;
			uint64_t sent = g->s.sent_ns;
			bool was_pending = g->s.pending_on >= 0;
			uint64_t done;
			if (script_on_readable(&g->s, ci, &done) && was_pending) {
				inflight--;
				if (kind >= 0)
					samples_add(lat, done - sent);
				if (g->deferred && now_ns() < end && !g->s.over &&
				    game_send_next(g)) {
					g->deferred = false;
					inflight++;
				}
			}
			if (g->s.fds[ci] < 0)
				epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
		}
	}
	uint64_t t1 = now_ns();
	for (int i = 0; i < ngames; i++)
		proc_counters_add(games[i].pid, &srv1);
	proc_counters_add(getpid(), &self1c);
	counters_add(&srv1, &srv0, -1);
	counters_add(&self1c, &self0c, -1);
	rp->server = srv1;
	rp->client = self1c;
	rp->secs = (double)(t1 - t0) / 1e9;
	rp->late_s = (double)late / 1e9;
	for (int i = 0; i < ngames; i++) {
		rp->cmds += games[i].s.commands;
		rp->fails += games[i].s.failed;
	}
	rp->cmds -= cmds0;
	rp->fails -= fails0;
	rp->nsamples = lat->n;
	rp->nlate = lateness->n;
	rp->games = ngames;
}

static void read_full(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n > 0) {
		ssize_t k = read(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			die("worker pipe: %s", k == 0 ? "closed" : strerror(errno));
		p += k;
		n -= (size_t)k;
	}
}

static void worker_main(int fd)
{
	/* The load generator stands for clients on other machines: it must not
	 * queue behind the machine's other work (default nice -10; the servers
	 * get --server-nice, default 0). Without the privilege to raise it, it
	 * stays as it is. */
	if (opt_client_nice != 0 && setpriority(PRIO_PROCESS, 0, opt_client_nice) != 0)
		fprintf(stderr, "density: cannot set the clients' nice value %d: %s\n",
		        opt_client_nice, strerror(errno));
	set_sched(opt_client_sched);
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		die("epoll_create1: %s", strerror(errno));
	for (;;) {
		struct request rq;
		read_full(fd, &rq, sizeof rq);
		struct reply rp;
		memset(&rp, 0, sizeof rp);
		struct samples lat = {0}, lateness = {0};
		switch (rq.op) {
		case OP_GROW:
			worker_grow(&rq, &rp);
			break;
		case OP_MEM:
			if (kobj_bytes[K_FILP] == 0)
				read_slab_sizes();
			for (int i = 0; i < ngames; i++)
				proc_mem_add(games[i].pid, &rp.mem);
			rp.client_rss_kib = proc_status_kib(getpid(), "VmRSS");
			rp.games = ngames;
			break;
		case OP_RUN:
			worker_run(&rq, &rp, &lat, &lateness);
			break;
		case OP_CLEAR:
			worker_kill_all();
			break;
		case OP_QUIT:
			worker_kill_all();
			write_all(fd, (const char *)&rp, sizeof rp);
			_exit(0);
		}
		write_all(fd, (const char *)&rp, sizeof rp);
		if (lat.n)
			write_all(fd, (const char *)lat.v, lat.n * sizeof *lat.v);
		if (lateness.n)
			write_all(fd, (const char *)lateness.v, lateness.n * sizeof *lateness.v);
		samples_free(&lat);
		samples_free(&lateness);
	}
}

/* ---- the coordinator ------------------------------------------------------------ */

struct worker {
	pid_t pid;
	int fd;
	int games; /* running now */
};

static struct worker workers[64];
static int nworkers;

static void start_worker(void)
{
	if (nworkers == (int)(sizeof workers / sizeof workers[0]))
		die("too many workers");
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		die("socketpair: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		child_setup();
		close(sv[0]);
		for (int i = 0; i < nworkers; i++)
			close(workers[i].fd);
		worker_main(sv[1]);
	}
	child_started(pid);
	close(sv[1]);
	workers[nworkers++] = (struct worker){.pid = pid, .fd = sv[0]};
}

static void send_req(int w, const struct request *rq)
{
	write_all(workers[w].fd, (const char *)rq, sizeof *rq);
}

static void recv_samples(int w, size_t n, struct samples *into)
{
	size_t old = into->n;
	for (size_t i = 0; i < n; i++)
		samples_add(into, 0);
	if (n)
		read_full(workers[w].fd, into->v + old, n * sizeof *into->v);
}

/* A worker's reply, its round trips into lat and its send lateness into
 * lateness (NULL: the caller expects none). */
static void recv_reply(int w, struct reply *rp, struct samples *lat, struct samples *lateness)
{
	read_full(workers[w].fd, rp, sizeof *rp);
	recv_samples(w, rp->nsamples, lat);
	struct samples discard = {0};
	recv_samples(w, rp->nlate, lateness ? lateness : &discard);
	samples_free(&discard);
}

static const char *fail_name(enum grow_fail f, int err)
{
	static char buf[128];
	switch (f) {
	case GF_NONE:
		return "none";
	case GF_SPAWN:
		snprintf(buf, sizeof buf, "processes (posix_spawn: %s)", strerror(err));
		return buf;
	case GF_FDS:
		snprintf(buf, sizeof buf, "descriptors (%s)", strerror(err));
		return buf;
	case GF_PORTS:
		return "ports (every usable listening port taken)";
	case GF_MEMORY:
		snprintf(buf, sizeof buf,
		         "memory (MemAvailable would drop below the %ld MiB reserve)",
		         opt_reserve_mib);
		return buf;
	case GF_START:
		return "a server did not start listening within 5 s";
	}
	return "?";
}

struct level {
	int games;
	bool floor; /* the floor processes' row (--floor), not the servers' */
	double grow_s;
	double cmds_per_s, p50, p99, max; /* ms */
	long cmds, fails;
	double late_ms;
	double machine_busy_pct;
	double pss_kib, pss_anon_kib, pss_file_kib, rss_kib, private_kib;
	double kernel_kib, avail_drop_kib, client_rss_kib;
	double pte_kib, tcp_mem_kib;        /* page tables per server; TCP buffers per game */
	double kobj_kib, sock_kib, sockets; /* a server's kernel objects, sockets */
	double late_p99_ms;                 /* how late the clients sent, p99 */
	char loadavg[32];                   /* /proc/loadavg's three, after the run */
	/* per command carried: the servers' ... */
	double cpu_us, user_us, sys_us, wait_us, slices, vcsw, ivcsw, minflt;
	/* ... and the load generator's */
	double client_cpu_us, client_wait_us;
	int procs;
};

static char first_limit[256], stop_buf[256], stopped_by[256];

/* stop_buf holds a limit just hit: the first one is kept for the report,
 * the last one says where the run stopped. */
static void note_limit(void)
{
	if (!first_limit[0])
		snprintf(first_limit, sizeof first_limit, "%s", stop_buf);
	snprintf(stopped_by, sizeof stopped_by, "%s", stop_buf);
}

static struct level levels[128];
static int nlevels;
static struct meminfo mem_base;
static long tcp_mem_base = -1; /* tcp_mem_pages() at the start */

static long page_kib(void)
{
	return sysconf(_SC_PAGESIZE) / 1024;
}
static double others_busy_pct; /* the machine's load before the bench started */
static int next_port_index;

/* Grow to `target` games in all (floor: of floor processes); false (and
 * *why) if it stopped short. */
static bool grow_to(int target, bool floor, double *secs, enum grow_fail *why, int *err)
{
	int need_workers = (target + opt_per_worker - 1) / opt_per_worker;
	while (nworkers < need_workers)
		start_worker();
	uint64_t t0 = now_ns();
	int lo = next_port_index;
	int wanted[64] = {0};
	for (int w = 0; w < nworkers; w++) {
		int share = target - w * opt_per_worker;
		share = share < 0 ? 0 : share > opt_per_worker ? opt_per_worker : share;
		wanted[w] = share;
		if (share <= workers[w].games)
			continue;
		int nports = (share - workers[w].games) * 5 / 4 + 16;
		struct request rq = {.op = OP_GROW,
		                     .target = share,
		                     .port_lo = lo,
		                     .port_hi = lo + nports < port_count() ? lo + nports
		                                                           : port_count(),
		                     .reserve_kib = opt_reserve_mib * 1024,
		                     .floor = floor};
		lo = rq.port_hi;
		send_req(w, &rq);
	}
	next_port_index = lo;
	bool ok = true;
	for (int w = 0; w < nworkers; w++) {
		if (wanted[w] <= workers[w].games)
			continue;
		struct reply rp;
		struct samples none = {0};
		recv_reply(w, &rp, &none, NULL);
		workers[w].games = rp.games;
		if (rp.fail != GF_NONE && ok) {
			ok = false;
			*why = rp.fail;
			*err = rp.fail_errno;
		}
	}
	*secs = (double)(now_ns() - t0) / 1e9;
	return ok;
}

/* Send op to every worker and wait for their replies (no samples), into
 * replies[w] unless replies is NULL. */
static void request_all(enum op op, struct reply *replies)
{
	for (int w = 0; w < nworkers; w++)
		send_req(w, &(struct request){.op = op});
	for (int w = 0; w < nworkers; w++) {
		struct reply rp;
		struct samples none = {0};
		recv_reply(w, &rp, &none, NULL);
		if (replies)
			replies[w] = rp;
	}
}

/* Stop every game (the floor's before the servers' are started). */
static void clear_all(void)
{
	request_all(OP_CLEAR, NULL);
	for (int w = 0; w < nworkers; w++)
		workers[w].games = 0;
	next_port_index = 0;
}

static int total_games(void)
{
	int n = 0;
	for (int w = 0; w < nworkers; w++)
		n += workers[w].games;
	return n;
}

static const char *process_name(const struct level *lv)
{
	return lv->floor ? "floor" : "server";
}

/* /proc/loadavg's first three fields into buf. */
static void read_loadavg(char *buf, size_t n)
{
	FILE *f = fopen("/proc/loadavg", "r");
	float a = 0, b = 0, c = 0;
	if (f) {
		if (fscanf(f, "%f %f %f", &a, &b, &c) != 3)
			a = b = c = 0;
		fclose(f);
	}
	snprintf(buf, n, "%.2f %.2f %.2f", a, b, c);
}

static void measure(struct level *lv)
{
	/* memory: the servers (Pss), the kernel's growth, the client */
	struct mem m = {0};
	long client_rss = 0;
	static struct reply replies[sizeof workers / sizeof workers[0]];
	request_all(OP_MEM, replies);
	for (int w = 0; w < nworkers; w++) {
		const struct reply *rp = &replies[w];
		m.rss += rp->mem.rss;
		m.pss += rp->mem.pss;
		m.pss_anon += rp->mem.pss_anon;
		m.pss_file += rp->mem.pss_file;
		m.private_kib += rp->mem.private_kib;
		m.pte_kib += rp->mem.pte_kib;
		m.kobj_kib += rp->mem.kobj_kib;
		m.sock_kib += rp->mem.sock_kib;
		m.sockets += rp->mem.sockets;
		m.n += rp->mem.n;
		client_rss += rp->client_rss_kib;
	}
	struct meminfo mi = read_meminfo();
	double n = m.n ? (double)m.n : 1;
	lv->games = (int)m.n;
	lv->pss_kib = (double)m.pss / n;
	lv->pss_anon_kib = (double)m.pss_anon / n;
	lv->pss_file_kib = (double)m.pss_file / n;
	lv->rss_kib = (double)m.rss / n;
	lv->private_kib = (double)m.private_kib / n;
	lv->kernel_kib = (double)(meminfo_kernel(&mi) - meminfo_kernel(&mem_base)) / n;
	lv->avail_drop_kib = (double)(mem_base.avail - mi.avail) / n;
	lv->client_rss_kib = (double)client_rss / n;
	lv->pte_kib = (double)m.pte_kib / n;
	lv->kobj_kib = m.kobj_kib / n;
	lv->sock_kib = m.sock_kib / n;
	lv->sockets = (double)m.sockets / n;
	long tcp_pages = tcp_mem_pages();
	/* the whole machine's: others' sockets move it too (not below 0) */
	lv->tcp_mem_kib = tcp_pages > tcp_mem_base && tcp_mem_base >= 0
	                          ? (double)(tcp_pages - tcp_mem_base) * (double)page_kib() / n
	                          : 0;
	lv->procs = nprocs_running();

	/* the paced run */
	fprintf(stderr, "density: %d games (%s), playing %.0f s (1 command / %d ms / game)\n",
	        lv->games, process_name(lv), opt_seconds, opt_period_ms);
	unsigned long long b0, t0, b1, t1;
	cpu_jiffies(&b0, &t0);
	for (int w = 0; w < nworkers; w++)
		send_req(w, &(struct request){.op = OP_RUN, .seconds = opt_seconds});
	struct samples lat = {0}, lateness = {0};
	struct proc_counters srv = {0}, cli = {0};
	double secs = 0, late_s = 0;
	long late_n = 0;
	lv->cmds = lv->fails = 0;
	for (int w = 0; w < nworkers; w++) {
		struct reply rp;
		recv_reply(w, &rp, &lat, &lateness);
		counters_add(&srv, &rp.server, 1);
		counters_add(&cli, &rp.client, 1);
		secs = rp.secs > secs ? rp.secs : secs;
		lv->cmds += rp.cmds;
		lv->fails += rp.fails;
		late_s += rp.late_s;
		late_n += rp.late_n;
	}
	cpu_jiffies(&b1, &t1);
	read_loadavg(lv->loadavg, sizeof lv->loadavg);
	lv->cmds_per_s = (double)lv->cmds / secs;
	lv->p50 = (double)samples_q(&lat, 0.5) / 1e6;
	lv->p99 = (double)samples_q(&lat, 0.99) / 1e6;
	lv->max = (double)samples_max(&lat) / 1e6;
	lv->late_ms = late_n ? late_s * 1e3 / (double)late_n : 0;
	lv->machine_busy_pct = t1 > t0 ? 100.0 * (double)(b1 - b0) / (double)(t1 - t0) : 0;
	lv->late_p99_ms = (double)samples_q(&lateness, 0.99) / 1e6;
	double per = lv->cmds > 0 ? 1.0 / (double)lv->cmds : 0;
	double ticks = (double)(srv.user_ticks + srv.sys_ticks);
	lv->cpu_us = (double)srv.run_ns / 1e3 * per;
	lv->user_us = ticks > 0 ? lv->cpu_us * (double)srv.user_ticks / ticks : 0;
	lv->sys_us = ticks > 0 ? lv->cpu_us * (double)srv.sys_ticks / ticks : 0;
	lv->wait_us = (double)srv.wait_ns / 1e3 * per;
	lv->slices = (double)srv.slices * per;
	lv->vcsw = (double)srv.vcsw * per;
	lv->ivcsw = (double)srv.ivcsw * per;
	lv->minflt = (double)srv.minflt * per;
	lv->client_cpu_us = (double)cli.run_ns / 1e3 * per;
	lv->client_wait_us = (double)cli.wait_ns / 1e3 * per;
	samples_free(&lat);
	samples_free(&lateness);
	fprintf(stderr,
	        "density: %d games (%s): %.0f cmd/s, RTT p50 %.2f p99 %.2f max %.1f ms; CPU "
	        "%.1f us/command (%.1f us waiting for a CPU, %.2f involuntary switches); Pss "
	        "%.0f KiB/process; kernel %.0f KiB/game; load %s\n",
	        lv->games, process_name(lv), lv->cmds_per_s, lv->p50, lv->p99, lv->max, lv->cpu_us,
	        lv->wait_us, lv->ivcsw, lv->pss_kib, lv->kernel_kib, lv->loadavg);
}

/* The last level's server row (the last row if every one is the floor's). */
static const struct level *last_server_level(void)
{
	for (int i = nlevels - 1; i >= 0; i--)
		if (!levels[i].floor)
			return &levels[i];
	return &levels[nlevels - 1];
}

static void print_table(const char *limit)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	long mem_total_kib = sysconf(_SC_PHYS_PAGES) * (sysconf(_SC_PAGESIZE) / 1024);
	printf("sopra-density: %d CPUs, %.1f GiB; each game %d players (a generated %zu-byte "
	       "configuration, %d rounds), 1 command every %d ms, %.0f s per level; servers %s%s, "
	       "clients %s at nice %d; machine busy before the start (other users): %.0f%% of "
	       "%d CPUs\n\n",
	       ncpu, (double)mem_total_kib / 1048576.0, opt_players, cfg_bytes, opt_rounds,
	       opt_period_ms, opt_seconds, sched_name(opt_server_sched),
	       opt_journal ? " journaled (--journal-dir on disk, --reconnect-grace 30)" : "",
	       sched_name(opt_client_sched), opt_client_nice, others_busy_pct, ncpu);
	printf("| games | process | added in (s) | commands/s | RTT p50 / p99 / max (ms) | "
	       "clients' sends late, p99 (ms) | CPU per command (us) | Pss per process (KiB) | "
	       "kernel per game (KiB) | machine busy (%%) | load average |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < nlevels; i++) {
		const struct level *l = &levels[i];
		printf("| %d | %s | %.1f | %.0f | %.2f / %.2f / %.1f | %.2f | %.1f | %.0f | %.0f | "
		       "%.0f | %s |\n",
		       l->games, process_name(l), l->grow_s, l->cmds_per_s, l->p50, l->p99, l->max,
		       l->late_p99_ms, l->cpu_us, l->pss_kib, l->kernel_kib, l->machine_busy_pct,
		       l->loadavg);
	}
	if (nlevels == 0)
		return;
	printf("\nPer command carried, the game processes (CPU time from schedstat, its "
	       "user/system split from utime/stime) and the load generator:\n\n");
	printf("| games | process | CPU: all / user / system (us) | waiting for a CPU (us) | put "
	       "on a CPU | switches: voluntary / involuntary | minor faults | client CPU / "
	       "waiting (us) |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < nlevels; i++) {
		const struct level *l = &levels[i];
		printf("| %d | %s | %.1f / %.1f / %.1f | %.1f | %.2f | %.2f / %.2f | %.3f | %.1f / "
		       "%.1f |\n",
		       l->games, process_name(l), l->cpu_us, l->user_us, l->sys_us, l->wait_us,
		       l->slices, l->vcsw, l->ivcsw, l->minflt, l->client_cpu_us,
		       l->client_wait_us);
	}
	printf("\nMemory per game (KiB). The game process: its Pss, and the kernel objects it "
	       "holds "
	       "(page tables, stack and task, VMAs, descriptors; its sockets' part and their "
	       "number apart). The machine: the growth of Slab + KernelStack + PageTables and "
	       "of TCP buffers (/proc/net/sockstat) since the start, both ends of every "
	       "loopback connection and everybody else's work included:\n\n");
	printf("| games | process | Pss: all / anon / file | kernel objects: all / page tables "
	       "/ sockets (count) | machine kernel growth | machine TCP buffers | bench client "
	       "RSS |\n");
	printf("|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < nlevels; i++) {
		const struct level *l = &levels[i];
		printf("| %d | %s | %.0f / %.0f / %.0f | %.0f / %.0f / %.0f (%.1f) | %.0f | %.1f | "
		       "%.0f |\n",
		       l->games, process_name(l), l->pss_kib, l->pss_anon_kib, l->pss_file_kib,
		       l->kobj_kib, l->pte_kib, l->sock_kib, l->sockets, l->kernel_kib,
		       l->tcp_mem_kib, l->client_rss_kib);
	}
	const struct level *l = last_server_level();
	double per_game_kib = l->pss_kib + l->kobj_kib;
	printf("\nLast level: %d games, %ld commands (%ld failed as scripted), sends %.2f ms late "
	       "on average; VmRSS %.0f KiB and private %.0f KiB per server; MemAvailable "
	       "%.0f KiB lower per game than at the start (clients included); %d processes on "
	       "the machine.\n",
	       l->games, l->cmds, l->fails, l->late_ms, l->rss_kib, l->private_kib,
	       l->avail_drop_kib, l->procs);
	printf("First limit: %s.\n", limit);
	if (stopped_by[0] && strcmp(stopped_by, limit) != 0)
		printf("The run stopped at: %s.\n", stopped_by);
	int met = 0, over = 0;
	for (int i = 0; i < nlevels; i++) {
		if (levels[i].floor)
			continue;
		if (levels[i].p99 <= P99_TARGET_MS && !over)
			met = levels[i].games;
		else if (levels[i].p99 > P99_TARGET_MS && !over)
			over = levels[i].games;
	}
	if (over)
		printf("p99 <= %.0f ms: held up to %d games; first over it at %d games (see the "
		       "machine's load in the last column).\n",
		       P99_TARGET_MS, met, over);
	else
		printf("p99 <= %.0f ms: held at every level.\n", P99_TARGET_MS);
	double cores_per_1000 = l->cpu_us * 1e-6 * (1000.0 / opt_period_ms) * 1000;
	printf("Capacity from the last level: memory %.0f KiB per game (the server's Pss and "
	       "kernel objects) -> %.0f games per 24 GiB (1 GiB kept for the system); CPU %.3f "
	       "cores per 1,000 games -> %.0f games per core at 100%% (server side only).\n",
	       per_game_kib, (23.0 * 1048576.0) / per_game_kib, cores_per_1000,
	       cores_per_1000 > 0 ? 1000.0 / cores_per_1000 : 0);
	for (int i = nlevels - 1; i >= 0; i--) {
		const struct level *f = &levels[i];
		if (!f->floor)
			continue;
		double floor_cores = f->cpu_us * 1e-6 * (1000.0 / opt_period_ms) * 1000;
		printf("The floor at %d games: %.1f us CPU per command (%.1f waiting for a CPU, "
		       "%.2f involuntary switches), %.0f KiB per game (Pss and kernel objects) -> "
		       "%.0f games per core at 100%%.\n",
		       f->games, f->cpu_us, f->wait_us, f->ivcsw, f->pss_kib + f->kobj_kib,
		       floor_cores > 0 ? 1000.0 / floor_cores : 0);
		break;
	}
}

static void finish_workers(void)
{
	request_all(OP_QUIT, NULL);
	for (int w = 0; w < nworkers; w++) {
		waitpid(workers[w].pid, NULL, 0);
		child_reaped(workers[w].pid);
		close(workers[w].fd);
	}
	nworkers = 0;
}

static void parse_levels(const char *s)
{
	opt_nlevels = 0;
	for (const char *p = s; *p && opt_nlevels < 64;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < 1 || v > SWEEP_MAX)
			die("--games: a comma-separated list of 1..%d", SWEEP_MAX);
		opt_levels[opt_nlevels++] = (int)v;
		p = *end == ',' ? end + 1 : end;
	}
}

static void usage(void)
{
	fprintf(stderr,
	        "usage: sopra-density --server PATH [--games N[,N...]] [--sweep] "
	        "[--seconds S] [--period-ms MS] [--players P] [--rounds R] [--per-worker G] "
	        "[--base-port PORT] [--reserve-mib MIB] [--stop-on-p99] [--client-nice N] "
	        "[--server-nice N] [--client-sched batch|other] [--server-sched batch|other] "
	        "[--journal] [--floor [--floor-exe PATH]]\n");
	exit(64);
}

static void on_signal(int sig)
{
	(void)sig;
	die("interrupted");
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--sweep") == 0) {
			opt_sweep = true;
			continue;
		}
		if (strcmp(a, "--stop-on-p99") == 0) {
			opt_stop_p99 = true;
			continue;
		}
		if (strcmp(a, "--journal") == 0) {
			opt_journal = true;
			continue;
		}
		if (strcmp(a, "--floor") == 0) {
			opt_floor = true;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (strcmp(a, "--server") == 0)
			opt_server = v;
		else if (strcmp(a, "--games") == 0)
			parse_levels(v);
		else if (strcmp(a, "--seconds") == 0)
			opt_seconds = atof(v);
		else if (strcmp(a, "--period-ms") == 0)
			opt_period_ms = atoi(v);
		else if (strcmp(a, "--players") == 0)
			opt_players = atoi(v);
		else if (strcmp(a, "--rounds") == 0)
			opt_rounds = atoi(v);
		else if (strcmp(a, "--client-nice") == 0)
			opt_client_nice = atoi(v);
		else if (strcmp(a, "--server-nice") == 0)
			opt_server_nice = atoi(v);
		else if (strcmp(a, "--client-sched") == 0)
			opt_client_sched = parse_sched(v);
		else if (strcmp(a, "--server-sched") == 0)
			opt_server_sched = parse_sched(v);
		else if (strcmp(a, "--per-worker") == 0)
			opt_per_worker = atoi(v);
		else if (strcmp(a, "--base-port") == 0)
			opt_base_port = atoi(v);
		else if (strcmp(a, "--reserve-mib") == 0)
			opt_reserve_mib = atol(v);
		else if (strcmp(a, "--floor-exe") == 0)
			opt_floor_exe = v;
		else
			usage();
	}
	if (!opt_server || opt_seconds <= 0 || opt_period_ms < 1 || opt_players < 1 ||
	    opt_players > SCRIPT_MAX_PLAYERS || opt_per_worker < 1 || opt_base_port < 1024 ||
	    opt_rounds < 1)
		usage();
	unsetenv("AGONES_SDK_HTTP_PORT"); /* measured as outside Agones */
	static char floor_exe[4096 + 32];
	if (opt_floor && !opt_floor_exe) {
		const char *slash = strrchr(argv[0], '/');
		snprintf(floor_exe, sizeof floor_exe, "%.*ssopra-fanout-floor",
		         slash ? (int)(slash - argv[0] + 1) : 0, argv[0]);
		opt_floor_exe = floor_exe;
	}
	if (opt_journal) {
		/* on disk, not tmpfs: the turn's fdatasync is part of the cost */
		snprintf(journal_root, sizeof journal_root, "%s/sopra-density-journals.XXXXXX",
		         getenv("JOURNAL_TMPDIR") ? getenv("JOURNAL_TMPDIR") : "/var/tmp");
		if (!mkdtemp(journal_root))
			die("%s: %s", journal_root, strerror(errno));
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	read_ephemeral();

	struct cfg_params cp = {.players = opt_players,
	                        .locations = 4,
	                        .cards_per_deck = 20 > 5 * opt_players ? 20 : 5 * opt_players,
	                        .rounds = opt_rounds,
	                        .feed = true};
	char *text = cfg_generate(&cp);
	cfg_bytes = strlen(text);
	char *cfg_path = cfg_write_temp(text, "density");
	free(text);
	opt_config = cfg_path;

	/* the machine before: other users' load, the kernel's memory */
	unsigned long long b0, t0, b1, t1;
	cpu_jiffies(&b0, &t0);
	sleep(2);
	cpu_jiffies(&b1, &t1);
	others_busy_pct = t1 > t0 ? 100.0 * (double)(b1 - b0) / (double)(t1 - t0) : 0;
	mem_base = read_meminfo();
	tcp_mem_base = tcp_mem_pages();
	fprintf(stderr, "density: machine busy %.0f%% before the start; MemAvailable %.1f GiB\n",
	        others_busy_pct, (double)mem_base.avail / 1048576.0);

	const char *const none = "none reached";
	int li = 0;
	for (;;) {
		int target;
		if (li < opt_nlevels)
			target = opt_levels[li];
		else if (opt_sweep && nlevels > 0 &&
		         levels[nlevels - 1].games + SWEEP_STEP <= SWEEP_MAX)
			target = levels[nlevels - 1].games + SWEEP_STEP;
		else
			break;
		li++;
		if (target <= total_games())
			continue;
		/* memory: would this level leave less than the reserve? */
		if (nlevels > 0) {
			const struct level *l = last_server_level();
			double need_kib = (l->pss_kib + l->kernel_kib + l->client_rss_kib) *
			                  (double)(target - l->games);
			long avail = read_meminfo().avail;
			if ((double)avail - need_kib < (double)opt_reserve_mib * 1024) {
				snprintf(stop_buf, sizeof stop_buf,
				         "memory: %d games would need %.1f GiB more, leaving less "
				         "than "
				         "the %ld MiB reserve for the machine's other users "
				         "(MemAvailable %.1f GiB)",
				         target, need_kib / 1048576.0, opt_reserve_mib,
				         (double)avail / 1048576.0);
				note_limit();
				break;
			}
		}
		if (opt_floor) {
			/* the floor's row first, then its processes make room */
			clear_all();
			struct level *fl = &levels[nlevels];
			fprintf(stderr, "density: starting floor processes up to %d games\n",
			        target);
			enum grow_fail why = GF_NONE;
			int err = 0;
			fl->floor = true;
			if (!grow_to(target, true, &fl->grow_s, &why, &err))
				die("the floor stopped at %d games: %s", total_games(),
				    fail_name(why, err));
			measure(fl);
			nlevels++;
			clear_all();
		}
		fprintf(stderr, "density: starting servers up to %d games\n", target);
		struct level *lv = &levels[nlevels];
		enum grow_fail why = GF_NONE;
		int err = 0;
		bool ok = grow_to(target, false, &lv->grow_s, &why, &err);
		if (!ok) {
			snprintf(stop_buf, sizeof stop_buf, "%s at %d games", fail_name(why, err),
			         total_games());
			note_limit();
			fprintf(stderr, "density: stopped growing: %s\n", stop_buf);
			if (total_games() > (nlevels ? levels[nlevels - 1].games : 0)) {
				measure(lv);
				nlevels++;
			}
			break;
		}
		measure(lv);
		nlevels++;
		double offered = lv->games * 1000.0 / opt_period_ms;
		/* Saturated: the offered load was not carried, or the median
		 * command waited for a CPU. A bigger level would only overload
		 * the machine (shared with others): stop, listed levels too. */
		if (lv->cmds_per_s < 0.9 * offered || lv->p50 > P99_TARGET_MS) {
			snprintf(stop_buf, sizeof stop_buf,
			         "CPU: %d games offered %.0f commands/s, %.0f were carried, RTT "
			         "p50 %.2f ms (the machine was %.0f%% busy)",
			         lv->games, offered, lv->cmds_per_s, lv->p50, lv->machine_busy_pct);
			note_limit();
			break;
		}
		if (lv->p99 > P99_TARGET_MS && opt_stop_p99) {
			snprintf(stop_buf, sizeof stop_buf,
			         "latency: p99 %.2f ms > %.0f ms at %d games", lv->p99,
			         P99_TARGET_MS, lv->games);
			note_limit();
			break;
		}
	}
	finish_workers();
	unlink(cfg_path);
	if (opt_journal)
		remove_tree(journal_root);
	free(cfg_path);
	print_table(first_limit[0] ? first_limit : none);
	return 0;
}
