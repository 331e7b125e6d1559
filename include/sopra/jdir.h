/*
 * jdir: a game table's journal directory (--journal-dir DIR,
 * docs/deployment.md "Crash recovery").
 *
 * A table (a systemd instance, a container, an Agones GameServer) runs one
 * game after another and restarts the server when it crashed. With a journal
 * directory it needs no person to decide how to start: the server looks at
 * the directory and either resumes the game a crash left unfinished or
 * journals a new one. The directory holds the table's journals, numbered in
 * the order the games started:
 *
 *   DIR/game-000001.jnl  DIR/game-000002.jnl  ...
 *
 * Only the newest one can be resumed. It is resumed (JDIR_RESUME) when it
 * is unfinished (no end record: the server was killed or crashed), was
 * written with sessions (format version 2: the players have secrets to
 * come back with) and holds at least one entry (with none, nobody has done
 * anything yet and a new game loses nothing). Anything else -- no journal,
 * an end record ("game over", or "stopped" by SIGINT/SIGTERM), a journal
 * without sessions or one that does not load -- gives a new game
 * (JDIR_NEW) in the next number's file, which does not exist yet.
 *
 * Rotation: the journals other than the current game's are kept up to a
 * count (keep); older ones are deleted, oldest first. Files whose names do
 * not match game-<digits>.jnl are never touched.
 *
 * One server per directory: two at once would pick the same file.
 */
#ifndef SOPRA_JDIR_H
#define SOPRA_JDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Journals kept besides the current game's when --journal-keep is not given. */
#define JDIR_DEFAULT_KEEP 20
/* The largest --journal-keep. */
#define JDIR_MAX_KEEP 1000000
/* Room for DIR/game-NUMBER.jnl. */
#define JDIR_PATH_MAX 4096

enum jdir_action {
	JDIR_NEW,    /* journal a new game in path (it does not exist yet) */
	JDIR_RESUME, /* resume the unfinished game of path (--resume path) */
};

struct jdir_choice {
	enum jdir_action action;
	char path[JDIR_PATH_MAX]; /* DIR/game-NUMBER.jnl */
	int64_t number;           /* NUMBER */
	int removed;              /* older journals deleted by the rotation */
};

/*
 * Decide what the server does with the journal directory dir: create it
 * (mode 0700) if it does not exist (its parent must), look at its newest
 * journal, delete the journals beyond keep (0..JDIR_MAX_KEEP) other than
 * the current game's, and fill *out. Every decision and deletion is logged
 * on log (NULL: silent), with the reason a newest journal is not resumed.
 * Returns false with a one-line reason in err when dir is not a usable
 * directory (it cannot be created or read, the path is too long); a
 * journal that cannot be deleted is only logged.
 */
bool jdir_choose(const char *dir, int keep, FILE *log, struct jdir_choice *out, char *err,
                 size_t errlen);

#endif
