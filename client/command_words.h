/*
 * command_words: the client code's words for each command, one row each.
 * This is the one place outside the server's command table
 * (sopra/cmd_table.h) and the game's handlers that names a command; the
 * client code and the bots expand these rows instead of listing commands:
 *
 *   client/command.c     the menus' keys, names and order, the weights of
 *                        random play, the roles (CLIENT_* flags), what
 *                        sending a command tells the model, and the labels
 *   bots/bot_policy.c    the rule of thumb's score of each command, and
 *                        the roles the bots' search needs
 *
 * A row:
 *
 *   X(ID, key, "Menu", weight, flags, PENDING, label, score)
 *
 *   ID       the command's CMD_ID (cmd_table.h)
 *   key      its menu's key in sopra-client; 0: no menu (the client sends
 *            it itself)
 *   "Menu"   its menu's name
 *   weight   random play: how often a bot picks this kind (0: never by chance)
 *   flags    CLIENT_* (below): its roles, or 0
 *   PENDING  what the model awaits once it is sent (enum model_pending,
 *            MODEL_PEND_...): the die it uses, or NONE; KILL only when
 *            the character's ability is the kill
 *   label    command.c's function that puts a menu item of it in words
 *   score    bot_policy.c's function that scores sending it now, or NULL:
 *            a bot never sends it (bot_never_sends)
 *
 * The rows are in the order of the menus' action bar; the rows without a
 * key come last. A command without a row (a test build's example command)
 * has no menu, is labelled with its wire form and never sent by a bot.
 *
 * A consumer defines X (any name), expands CLIENT_COMMAND_WORDS(X) and
 * undefines X; a column it does not use is never expanded, so its names
 * need not exist there.
 */
#ifndef SOPRA_CLIENT_COMMAND_WORDS_H
#define SOPRA_CLIENT_COMMAND_WORDS_H

/* The roles of a command: its rows' flags column. */
#define CLIENT_ENDS_TURN  0x1u  /* sending it ends our turn */
#define CLIENT_LEAVES     0x2u  /* it takes the player out of the game */
#define CLIENT_SILENT     0x4u  /* the server may answer nothing at all */
#define CLIENT_UNORDERED  0x8u  /* character and character2 in either order: one choice */
#define CLIENT_NO_PROMPT  0x10u /* answered without a new ActNow: registration, selection */
#define CLIENT_STARTS     0x20u /* it starts the game before it is full */
#define CLIENT_REGISTERS  0x40u /* it registers the player (with its name) */
#define CLIENT_FOR_CRISIS 0x80u /* it puts a card toward the crisis of the round */

/* clang-format off */
#define CLIENT_COMMAND_WORDS(X) \
	X(START_GAME, 'S', "Start", 0, CLIENT_STARTS | CLIENT_NO_PROMPT, NONE, \
	  label_start_game, policy_nothing) \
	X(SELECT_CHARACTERS, 'p', "Pick", 1, CLIENT_UNORDERED | CLIENT_NO_PROMPT, NONE, \
	  label_select, policy_select) \
	X(MOVE, 'm', "Move", 2, 0, NONE, label_move, policy_move) \
	X(SEARCH, 's', "Search", 4, 0, SEARCH, label_search, policy_search) \
	X(ATTACK, 'a', "Attack", 4, 0, ATTACK, label_attack, policy_attack) \
	X(BARRICADE, 'b', "Barricade", 1.5, 0, BARRICADE, label_barricade, policy_barricade) \
	X(CLEAN_WASTE, 'w', "Clean waste", 2, 0, CLEAN, label_clean, policy_clean) \
	X(CONTRIBUTE_CARD, 'c', "Contribute", 3, CLIENT_FOR_CRISIS, NONE, label_contribute, \
	  policy_contribute) \
	X(USE_CARD, 'u', "Card", 3, 0, NONE, label_card, policy_card) \
	X(USE_ABILITY, 'y', "Ability", 4, 0, KILL, label_ability, policy_ability) \
	X(END_TURN, 'e', "End turn", 0, CLIENT_ENDS_TURN | CLIENT_SILENT, NONE, \
	  label_end_turn, policy_nothing) \
	X(LEAVE, 'L', "Leave", 0, CLIENT_ENDS_TURN | CLIENT_LEAVES, NONE, label_leave, NULL) \
	X(REGISTER, 0, "Register", 0, CLIENT_REGISTERS | CLIENT_NO_PROMPT, NONE, \
	  label_register, policy_nothing)
/* clang-format on */

#endif
