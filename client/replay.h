/*
 * replay: a recorded game as the list of event lines one client would have
 * received, for sopra-client --replay. Three sources:
 *   - a sopra-bot --log (lines "< EVENT"): the bot's own view, its name from
 *     the header "# sopra-bot ... --name NAME --rules R";
 *   - a journal (sopra-server --journal, docs/journal.md): `sopra-replay
 *     FILE` prints PLAYER<TAB>LINE for every line sent; the client keeps the
 *     events to all players once (a watcher's view) and the first Config;
 *   - plain NDJSON event lines (e.g. a watcher's capture).
 * No ncurses here.
 */
#ifndef SOPRA_CLIENT_REPLAY_H
#define SOPRA_CLIENT_REPLAY_H

#include <stdbool.h>

struct replay {
	char **lines; /* event lines, without "\n" */
	int n, cap;
	char *name; /* whose view (bot log), NULL: a watcher's */
	bool revised;
	char err[512];
};

/* Load path; replay_tool is the sopra-replay executable for journals.
 * 0 on success, -1 with r->err set. */
int replay_load(struct replay *r, const char *path, const char *replay_tool);
/* The parsers behind it (text is NUL-terminated; 0 ok, -1 error). */
int replay_parse_botlog(struct replay *r, const char *text);
int replay_parse_journal_lines(struct replay *r, const char *text);
int replay_parse_ndjson(struct replay *r, const char *text);
void replay_free(struct replay *r);
/* The step (number of lines folded) just after the next (dir > 0) or
 * previous (dir < 0) NextRound as seen from step `from`; n or 0 at the ends. */
int replay_round_step(const struct replay *r, int from, int dir);

#endif
