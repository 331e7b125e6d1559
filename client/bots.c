/*
 * bots: sopra-bot team mates (bots.h).
 */
#include "bots.h"

#include "toolutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *bots_find_tool(const char *name)
{
	static char path[3][PATH_MAX];
	static int slot;
	char *out = path[slot++ % 3];
	char self[PATH_MAX - 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash)
			*slash = '\0';
		/* installed: all in one bin/; the build tree: build/client/,
		 * build/tools/ and the server in build/ */
		static const char *const dirs[] = {"", "../tools/", "../"};
		for (size_t i = 0; i < sizeof dirs / sizeof dirs[0] && strlen(name) < 32; i++) {
			snprintf(out, PATH_MAX, "%s/%s%s", self, dirs[i], name);
			if (access(out, X_OK) == 0)
				return out;
		}
	}
	snprintf(out, PATH_MAX, "%s", name);
	return out;
}

/* How long a bot tries to come back after a drop (sopra-bot --reconnect). */
#define BOTS_RECONNECT_SEC "30"

/* Start bot i (sopra-bot's stdout and stderr to out_fd): its pid, or -1 (errno). */
static pid_t spawn_bot(const struct bots *b, int i, int out_fd)
{
	char port[16], seed[32], name[32], logp[PATH_MAX];
	snprintf(port, sizeof port, "%d", b->port);
	snprintf(seed, sizeof seed, "%lu", b->seed + (unsigned long)i);
	snprintf(name, sizeof name, "Bot%d", i + 1);
	const char *argv[20];
	int k = 0;
	argv[k++] = b->exe;
	argv[k++] = "--port";
	argv[k++] = port;
	argv[k++] = "--host";
	argv[k++] = b->host;
	argv[k++] = "--seed";
	argv[k++] = seed;
	argv[k++] = "--name";
	argv[k++] = name;
	argv[k++] = "--rules";
	argv[k++] = b->revised ? "revised" : "base";
	argv[k++] = "--quiet";
	argv[k++] = "--strategy";
	argv[k++] = b->strategy ? b->strategy : "search";
	argv[k++] = "--reconnect"; /* with sessions: back after a drop */
	argv[k++] = BOTS_RECONNECT_SEC;
	if (b->log_dir) {
		snprintf(logp, sizeof logp, "%s/%s.log", b->log_dir, name);
		argv[k++] = "--log";
		argv[k++] = logp;
	}
	argv[k] = NULL;
	/* the bot dies with the client, however the client ends */
	struct spawn_opts so = {.search_path = true};
	return spawn(argv, SPAWN_NULL, out_fd, out_fd, &so);
}

int bots_start_next(struct bots *b, char *err, size_t errlen)
{
	int i = b->started;
	int pfd[2];
	if (i >= BOTS_MAX || pipe(pfd)) {
		snprintf(err, errlen, "cannot start bot %d", i + 1);
		return -1;
	}
	fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
	fcntl(pfd[1], F_SETFD, FD_CLOEXEC);
	pid_t pid = spawn_bot(b, i, pfd[1]);
	int e = errno;
	close(pfd[1]);
	if (pid < 0) {
		snprintf(err, errlen, "cannot start bot %d (%s): %s", i + 1, b->exe, strerror(e));
		close(pfd[0]);
		return -1;
	}
	b->pid[i] = pid;
	b->fd[i] = pfd[0];
	b->started++;
	return 0;
}

/* One complete line of bot i's output. */
static enum bots_news bot_line(struct bots *b, int i, const char *line)
{
	if (strncmp(line, "registered ", 11) == 0) {
		b->registered++;
		return BOTS_REGISTERED;
	}
	/* the summary ("bot N: events=...") comes last: keep the error before it */
	if (!strstr(line, ": events=") || !b->said[i][0]) {
		size_t k = strnlen(line, sizeof b->said[i] - 1);
		memmove(b->said[i], line, k);
		b->said[i][k] = '\0';
	}
	return BOTS_NOTHING;
}

/* Bot i's output has closed: reap it, say how it ended. */
static void bot_ended(struct bots *b, int i, char *msg, size_t n)
{
	close(b->fd[i]);
	b->fd[i] = -1;
	int st = 0;
	while (waitpid(b->pid[i], &st, 0) < 0 && errno == EINTR)
		;
	b->pid[i] = 0;
	const char *said = b->said[i];
	/* "bot Bot1: protocol violation: ..." -> "protocol violation: ..." */
	const char *colon = strncmp(said, "bot ", 4) == 0 ? strstr(said, ": ") : NULL;
	if (colon)
		said = colon + 2;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		snprintf(msg, n, "%s", "");
	else if (WIFEXITED(st))
		snprintf(msg, n, "Bot%d stopped (exit %d): %s", i + 1, WEXITSTATUS(st),
		         *said ? said : "no message");
	else
		snprintf(msg, n, "Bot%d was killed by signal %d", i + 1,
		         WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

enum bots_news bots_read(struct bots *b, int i, char *msg, size_t n)
{
	char buf[512];
	msg[0] = '\0';
	ssize_t got = read(b->fd[i], buf, sizeof buf);
	if (got < 0 && errno == EINTR)
		return BOTS_NOTHING;
	if (got <= 0) {
		bot_ended(b, i, msg, n);
		return BOTS_ENDED;
	}
	enum bots_news news = BOTS_NOTHING;
	for (ssize_t k = 0; k < got; k++) {
		if (buf[k] != '\n') {
			if (b->npart[i] + 1 < sizeof b->part[i])
				b->part[i][b->npart[i]++] = buf[k];
			continue;
		}
		b->part[i][b->npart[i]] = '\0';
		b->npart[i] = 0;
		if (bot_line(b, i, b->part[i]) == BOTS_REGISTERED)
			news = BOTS_REGISTERED;
	}
	return news;
}

void bots_stop(struct bots *b)
{
	for (int i = 0; i < b->started; i++) {
		if (b->pid[i] > 0) {
			kill(b->pid[i], SIGTERM);
			while (waitpid(b->pid[i], NULL, 0) < 0 && errno == EINTR)
				;
			b->pid[i] = 0;
		}
		if (b->fd[i] >= 0)
			close(b->fd[i]);
		b->fd[i] = -1;
	}
}
