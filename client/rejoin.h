/*
 * rejoin: coming back to a game on a server with sessions (protocol.md,
 * "Reconnecting"). The secret of our Session line is kept in a file of its
 * own, mode 0600, under $XDG_STATE_HOME/sopra-client/ (default
 * ~/.local/state/sopra-client/), named after the server and the player
 * name, so that `sopra-client --reconnect` finds it after a restart; and
 * after a dropped connection the client tries again on a schedule that
 * waits longer each time and gives up after REJOIN_ATTEMPTS tries. No I/O
 * but the file.
 */
#ifndef SOPRA_CLIENT_REJOIN_H
#define SOPRA_CLIENT_REJOIN_H

#include <stdbool.h>
#include <stddef.h>

#define REJOIN_SECRET_HEX 64 /* a Session secret: 64 lowercase hex digits */
#define REJOIN_ATTEMPTS   8  /* reconnect tries after a drop before giving up */

/* Write into out the file that keeps the secret of player `name` on
 * host:port: DIR/HOST_PORT_NAME.session, with every byte of the name and
 * host but [A-Za-z0-9.-] written as %XX. 0, or -1 with err set (no
 * $XDG_STATE_HOME nor $HOME, or the path does not fit). */
int rejoin_path(char *out, size_t n, const char *host, int port, const char *name, char *err,
                size_t errlen);

/* Keep secret (REJOIN_SECRET_HEX hex digits) and player in path: its
 * folders are made (0700) when missing, the file is written whole with
 * mode 0600 (also when it existed with another mode). 0, or -1 with err. */
int rejoin_save(const char *path, const char *secret, int player, char *err, size_t errlen);

/* Read what rejoin_save wrote: 0 with secret (REJOIN_SECRET_HEX + 1 bytes)
 * and *player set, or -1 with err (missing, unreadable, malformed). */
int rejoin_load(const char *path, char *secret, int *player, char *err, size_t errlen);

/* The game is over for us: the file goes (a missing one is fine). */
void rejoin_forget(const char *path);

/* Seconds to wait before reconnect try `attempt` (1, 2, ...): 0.5, 1, 2,
 * 4, then 4 each time; attempt 1 comes after half a second, so that the
 * server has seen the old connection go. */
double rejoin_delay(int attempt);

#endif
