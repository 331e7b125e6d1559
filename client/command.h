/*
 * command: the client library's command layer -- what the player may send
 * now, as typed commands, and how to send one.
 *
 * The legal commands come from the game engine itself: the model's board
 * (model.h) becomes the player's view (sopra/game_view.h), the view a game
 * (game_from_view), and game_legal_commands lists what the server would
 * accept from the player now. The server, the bots and every client share
 * that one legal-move generator; nothing here re-implements a rule. A
 * command's wire line is proto_encode_cmd's.
 *
 * Each command's words -- its menu key and name, an item's label, how it
 * weighs in random play, its roles, what sending it tells the model, and
 * the bots' rule of thumb for it -- are its row in command_words.h, the
 * one place in the client code and the bots that names commands. A new
 * command is one row there (plus its label function here and its score
 * function in bots/bot_policy.c).
 */
#ifndef SOPRA_CLIENT_COMMAND_H
#define SOPRA_CLIENT_COMMAND_H

#include <stdbool.h>
#include <stddef.h>

#include "command_words.h"
#include "model.h"
#include "sopra/config.h"
#include "sopra/game.h"
#include "sopra/game_view.h"

/* ---- the player's view ------------------------------------------------------------ */

/* What the model's player has been told, into v (sized for the engine's
 * parse of the model's Config text: its indices are the model's). Equal to
 * game_view_of(the server's game, the player) after each of the server's
 * answers has been folded, for a model told what its player sent
 * (client_sent). */
void client_view_of(const struct model *m, struct game_view *v);

/* ---- the legal commands ----------------------------------------------------------- */

struct client_cmds {
	struct config *cfg;         /* the engine's parse of the Config text; owned */
	struct game_view *view;     /* the last view; owned, sized for cfg */
	struct game *game;          /* built from the last view; owned, NULL before Config */
	struct game_cmd_list legal; /* the legal commands after the last update */
	int seat;                   /* the player's id in game */
	char why_none[160];         /* why the last update built no game ("" when it did) */
};

void client_cmds_init(struct client_cmds *cc);
void client_cmds_free(struct client_cmds *cc);

/* Bring cc up to m: cc->legal lists every command the server would accept
 * from m's player now, in the engine's order (game_legal_commands). Before
 * the Config event that is the registration with m's name (a watcher's model: none);
 * while the model is half way through a step (!model_settled), nothing.
 * Returns 0, or -1 and a message in err when the engine cannot read the
 * Config text (then the list is empty). */
int client_cmds_update(struct client_cmds *cc, const struct model *m, char *err, size_t errlen);

/* Would the server refuse c from m's player now (after client_cmds_update)?
 * NULL when it would accept it, else the CommandFailed message it would
 * send (a static string), or "aborts the registration". For tools that
 * send bad commands on purpose and check the answer. */
const char *client_cmds_refusal(const struct client_cmds *cc, const struct cmd *c);

/* ---- sending ---------------------------------------------------------------------- */

/* The wire line of c ("{...}\n", as proto_encode_cmd writes it) into buf,
 * NUL-terminated; returns its length, or -1 when it does not fit. */
int client_cmd_line(const struct cmd *c, bool revised, char *buf, size_t n);

/* The wire line of Reconnect with secret (a Session line's: lowercase hex
 * digits only), "{...}\n" NUL-terminated, into buf; returns its length, or
 * -1 when it does not fit or secret is not hex. Reconnect is no game
 * command (no struct cmd): the server's session layer takes it
 * (protocol.md, "Reconnecting"). */
int client_reconnect_line(const char *secret, char *buf, size_t n);

/* We are sending c: tell the model what it must know to follow its own
 * turn (the die c will use; whether our turn ends with it). */
void client_sent(struct model *m, const struct cmd *c);

/* ---- words and roles -------------------------------------------------------------- */

/* The roles of a command, CLIENT_*: command_words.h. */

struct client_command {
	char key;         /* its menu's key; 0: no menu */
	const char *menu; /* its menu's name */
	double weight;    /* random play: how often a bot picks this kind (0: never by chance) */
	unsigned flags;   /* CLIENT_* */
	/* what the model awaits once it is sent: the die it uses */
	enum model_pending pending;
};

/* The row of command type t (NULL when out of range). */
const struct client_command *client_command(enum cmd_type t);

/* Command types in the order of the menus' action bar; *n gets the count. */
const enum cmd_type *client_menu_order(int *n);

/* The command whose row has `flag` (the first in enum order), with no
 * parameters set: e.g. CLIENT_LEAVES gives the command to leave. False when none has. */
bool client_command_with(unsigned flag, struct cmd *out);

/* Whether a and b are the same choice for a person (equal, or a pair in
 * the other order). */
bool client_same_choice(const struct cmd *a, const struct cmd *b);

/* A menu item's label for c in words, with the model's names
 * ("Sophie: Colony -> Mall", "food(2) #105"). */
void client_cmd_label(const struct model *m, const struct cmd *c, char *buf, size_t n);

#endif
