/*
 * bots: sopra-client --bots K starts K sopra-bot processes as team mates in
 * the same game, one after the other (each once the previous printed
 * "registered NAME", so the player ids follow the order), and stops them
 * when the client exits; a bot dies with the client when the client is
 * killed (spawn(): PR_SET_PDEATHSIG). The bots play sopra-bot --strategy
 * search unless the client's --bot-strategy says otherwise (docs/bots.md).
 * A bot comes back by itself when its connection drops on a server with
 * sessions (sopra-bot --reconnect); a bot that exits with an error is
 * reported with its last line.
 */
#ifndef SOPRA_CLIENT_BOTS_H
#define SOPRA_CLIENT_BOTS_H

#include <stdbool.h>
#include <sys/types.h>

#define BOTS_MAX 16

/* What a bot's output said (bots_read). */
enum bots_news {
	BOTS_NOTHING,    /* no news */
	BOTS_REGISTERED, /* it registered */
	BOTS_ENDED,      /* it exited (reaped): the message says how, if not well */
};

struct bots {
	int want, started, registered;
	pid_t pid[BOTS_MAX];
	int fd[BOTS_MAX];         /* the bot's stdout and stderr, -1 when closed */
	char part[BOTS_MAX][256]; /* the line being read */
	size_t npart[BOTS_MAX];
	char said[BOTS_MAX][256]; /* its last line that is not "registered ..." */
	const char *exe, *host, *log_dir;
	const char *strategy; /* sopra-bot --strategy: "search" unless set */
	int port;
	bool revised;
	unsigned long seed;
};

/* Start the next bot; 0, or -1 (err set). */
int bots_start_next(struct bots *b, char *err, size_t errlen);
/* Bot i's output (stdout and stderr) is readable: read it. BOTS_ENDED
 * when the bot has exited (its output closed; it is reaped): msg then gets
 * "" when it exited with 0 after its game, else "BotN stopped (exit X):
 * its last line" (sopra-bot's error, e.g. a protocol violation) or
 * "BotN was killed by signal S". */
enum bots_news bots_read(struct bots *b, int i, char *msg, size_t n);
/* Stop every bot still running (SIGTERM, by pid) and reap them. */
void bots_stop(struct bots *b);
/* The executable `name` next to this program, in ../tools/ or in ../ (the
 * build tree), or else name itself (found through PATH). The result is
 * static (three calls' results are kept at once). */
const char *bots_find_tool(const char *name);

#endif
