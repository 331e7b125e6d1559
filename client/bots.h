/*
 * bots: sopra-client --bots K starts K sopra-bot processes as team mates in
 * the same game, one after the other (each once the previous printed
 * "registered NAME", so the player ids follow the order), and stops them
 * when the client exits; a bot dies with the client when the client is
 * killed (spawn(): PR_SET_PDEATHSIG). The bots play sopra-bot --strategy
 * search unless the client's --bot-strategy says otherwise (docs/bots.md).
 */
#ifndef SOPRA_CLIENT_BOTS_H
#define SOPRA_CLIENT_BOTS_H

#include <stdbool.h>
#include <sys/types.h>

#define BOTS_MAX 16

struct bots {
	int want, started, registered;
	pid_t pid[BOTS_MAX];
	int fd[BOTS_MAX]; /* the bot's stdout, -1 when closed */
	const char *exe, *host, *log_dir;
	const char *strategy; /* sopra-bot --strategy: "search" unless set */
	int port;
	bool revised;
	unsigned long seed;
};

/* Start the next bot; 0, or -1 (err set). */
int bots_start_next(struct bots *b, char *err, size_t errlen);
/* Bot i's stdout is readable: true when it now has registered. */
bool bots_read(struct bots *b, int i);
/* Stop every bot still running (SIGTERM, by pid) and reap them. */
void bots_stop(struct bots *b);
/* The executable `name` next to this program, in ../tools/ or in ../ (the
 * build tree), or else name itself (found through PATH). The result is
 * static (three calls' results are kept at once). */
const char *bots_find_tool(const char *name);

#endif
