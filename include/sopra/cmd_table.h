/*
 * cmd_table: the commands a client sends, one row each (protocol.md's
 * commands table). This is the one place a command is defined; everything
 * that speaks the protocol expands these rows instead of listing commands
 * itself:
 *
 *   game_event.h   enum cmd_type (CMD_ID, in row order) and CMD_TYPE_COUNT
 *   game_event.c   cmd_name, the wire names (also the journal's keys)
 *   proto.c        the parameters: proto_cmd_params, read by the decoder,
 *                  proto_encode_cmd, the journal, sopra-replay, the fuzzers
 *                  and the benchmarks
 *   game.c         the phase, the shared preconditions and the handler
 *   game_legal.c   the phase and the enumerator of the legal commands
 *   systemtests/scenario.c   the parameter names, in order (header only:
 *                  the scenario runner links no server code)
 *   fuzz/make_corpus.py      reads the rows as text for the fuzzers' seed
 *                  lines and dictionary words: keep the X(...) and PARAM(...)
 *                  forms below
 *
 * A row:
 *
 *   X(ID, "Name", PHASE, needs, handler, legal, (PARAM(...) PARAM(...) ...))
 *
 *   ID       CMD_ID in enum cmd_type
 *   "Name"   the wire name, {"command":"Name",...}
 *   PHASE    when the game runs it: REGISTRATION, SELECTION or TURN (a
 *            command of another phase fails, or aborts the registration)
 *   needs    the preconditions the game checks before the handler runs, in
 *            a fixed order: game.c's enum command_needs (NEEDS_...), or 0
 *   handler  game.c's function that applies it once PHASE and needs held
 *   legal    game_legal.c's function that lists the command's every
 *            parameterisation the game accepts now (game_legal_commands),
 *            or legal_by_trying: its parameters' domains tried on a copy of
 *            the game (exact, but slow; see game_legal.c)
 *   params   its parameters in protocol order, in parentheses, no commas
 *            between them; each
 *              PARAM(TYPE, "key", field, DOMAIN, flags)
 *            TYPE    INT, BOOL or STRING (enum proto_param_type)
 *            "key"   the wire name of the parameter
 *            field   the member of struct cmd that holds it
 *            DOMAIN  what the value names (enum proto_param_domain): what a
 *                    client or a fuzzer picks it from
 *            flags   PROTO_OPTIONAL, PROTO_BASE_ONLY, PROTO_TARGET,
 *                    PROTO_PAIR (proto.h), or 0
 *
 * A consumer defines X (any name) and PARAM, expands SOPRA_COMMANDS(X), and
 * undefines both; a column it does not use is never expanded, so its names
 * (NEEDS_..., the handlers, the enumerators) need not exist there. SOPRA_UNPAREN params
 * gives the PARAM(...) list itself.
 */
#ifndef SOPRA_CMD_TABLE_H
#define SOPRA_CMD_TABLE_H

/* clang-format off */
#define SOPRA_COMMANDS(X) \
	X(REGISTER, "Register", REGISTRATION, NEEDS_NEW_CONNECTION, \
	  cmd_register, legal_register, \
	  (PARAM(STRING, "playerName", name, NAME, 0))) \
	X(START_GAME, "StartGame", REGISTRATION, NEEDS_REGISTERED, \
	  cmd_start_game, legal_start_game, ()) \
	X(SELECT_CHARACTERS, "SelectCharacters", SELECTION, NEEDS_SELECTING_PLAYER, \
	  cmd_select_characters, legal_select_characters, \
	  (PARAM(INT, "characterId0", character, OFFERED_CHARACTER, 0) \
	   PARAM(INT, "characterId1", character2, OFFERED_CHARACTER, 0))) \
	X(LEAVE, "Leave", TURN, 0, cmd_leave, legal_always, ()) \
	X(END_TURN, "EndTurn", TURN, 0, cmd_end_turn, legal_always, ()) \
	X(MOVE, "Move", TURN, NEEDS_OWN_CHARACTER, cmd_move, legal_move, \
	  (PARAM(INT, "characterId", character, OWN_CHARACTER, 0) \
	   PARAM(INT, "locationId", location, LOCATION, 0) \
	   PARAM(BOOL, "fuel", fuel, FLAG, PROTO_OPTIONAL | PROTO_BASE_ONLY))) \
	X(SEARCH, "Search", TURN, NEEDS_OWN_CHARACTER | NEEDS_A_DIE | NEEDS_SEARCH_DIE, \
	  cmd_search, legal_search, \
	  (PARAM(INT, "characterId", character, OWN_CHARACTER, 0))) \
	X(ATTACK, "Attack", TURN, NEEDS_OWN_CHARACTER | NEEDS_ATTACK_DIE, \
	  cmd_attack, legal_attack, \
	  (PARAM(INT, "characterId", character, OWN_CHARACTER, 0) \
	   PARAM(INT, "entrance", entrance, ENTRANCE, 0))) \
	X(BARRICADE, "Barricade", TURN, NEEDS_OWN_CHARACTER, \
	  cmd_barricade, legal_barricade, \
	  (PARAM(INT, "characterId", character, OWN_CHARACTER, 0) \
	   PARAM(INT, "entrance", entrance, ENTRANCE, 0))) \
	X(CLEAN_WASTE, "CleanWaste", TURN, NEEDS_OWN_CHARACTER | NEEDS_A_DIE, \
	  cmd_clean_waste, legal_clean_waste, \
	  (PARAM(INT, "characterId", character, OWN_CHARACTER, 0))) \
	X(CONTRIBUTE_CARD, "ContributeCard", TURN, NEEDS_CARD_IN_HAND, \
	  cmd_contribute_card, legal_contribute_card, \
	  (PARAM(INT, "cardId", card, HAND_CARD, 0))) \
	X(USE_CARD, "UseCard", TURN, NEEDS_CARD_IN_HAND | NEEDS_OWN_CHARACTER_IF_TARGET, \
	  cmd_use_card, legal_use_card, \
	  (PARAM(INT, "cardId", card, HAND_CARD, 0) \
	   PARAM(INT, "characterId", character, OWN_CHARACTER, PROTO_OPTIONAL | PROTO_PAIR) \
	   PARAM(INT, "target", target, TARGET, PROTO_OPTIONAL | PROTO_PAIR | PROTO_TARGET))) \
	X(USE_ABILITY, "UseAbility", TURN, NEEDS_OWN_CHARACTER, \
	  cmd_use_ability, legal_use_ability, \
	  (PARAM(INT, "characterId", character, OWN_CHARACTER, 0) \
	   PARAM(INT, "target", target, TARGET, PROTO_OPTIONAL | PROTO_TARGET))) \
	SOPRA_EXAMPLE_COMMANDS(X)

/*
 * The example of docs/design.md's "Adding a command", compiled only into a
 * test build (cmake -DSOPRA_EXAMPLE_COMMAND=ON; its tests are in
 * tests/example_command/): Wait, a character of the sender spends its move
 * of the round without moving. Its handler is cmd_wait in game.c; its legal
 * commands are found by trying.
 */
#ifdef SOPRA_EXAMPLE_COMMAND
#define SOPRA_EXAMPLE_COMMANDS(X) \
	X(WAIT, "Wait", TURN, NEEDS_OWN_CHARACTER, cmd_wait, legal_by_trying, \
	  (PARAM(INT, "characterId", character, OWN_CHARACTER, 0)))
#else
#define SOPRA_EXAMPLE_COMMANDS(X)
#endif
/* clang-format on */

/* A row's parenthesised parameter list without its parentheses. */
#define SOPRA_UNPAREN(...) __VA_ARGS__

#endif
