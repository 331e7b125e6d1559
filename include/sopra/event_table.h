/*
 * event_table: the events the server sends, one row each (protocol.md's
 * events table, in its order). This is the one place an event is defined;
 * everything that speaks the protocol expands these rows instead of listing
 * events itself:
 *
 *   game_event.h   enum game_event_type (GEV_ID, in row order)
 *   game_event.c   game_event_name, the wire names
 *   proto.c        the encoder (proto_encode): which parameters a line
 *                  carries, in which order, written how
 *   client/model.h enum model_event_type (MEV_ID) and client/model.c's
 *                  decoder (what a line must, may and must not carry)
 *   systemtests/scenario.c   the parameter names, in order, that a
 *                  scenario's expected event lists (header only: the
 *                  scenario runner links no server code)
 *
 * A row:
 *
 *   X(ID, "Name", (EPARAM(...) EPARAM(...) ...))
 *
 *   ID       GEV_ID in enum game_event_type, MEV_ID in the client's model
 *   "Name"   the wire name, {"event":"Name",...}
 *   params   its parameters in protocol order, in parentheses, no commas
 *            between them; each
 *              EPARAM(KIND, "key", presence)
 *            KIND      INT, BOOL, STRING, FOOD_REASON or MORAL_REASON
 *                      (enum sopra_event_kind; a reason is written as the
 *                      wire name of its SOPRA_..._REASONS row)
 *            "key"     the wire name of the parameter
 *            presence  EVENT_ALWAYS, EVENT_BASE_ONLY (present in base,
 *                      absent in revised), EVENT_OPTIONAL (present when
 *                      the event's nargs says so: the optional ones of a
 *                      row come or stay away together) or EVENT_PAIR (an
 *                      optional one that comes with the other EVENT_PAIR
 *                      one of its row)
 *
 * In struct game_event, the parameters other than STRING are arg[0..] in
 * row order; a row has at most one STRING parameter, its last (ev->str).
 *
 * A consumer defines X (any name) and EPARAM, expands SOPRA_EVENTS(X), and
 * undefines both; SOPRA_EVENT_PARAMS params gives the EPARAM(...) list
 * itself. The header includes nothing, so that programs that link no
 * server code can read it.
 */
#ifndef SOPRA_EVENT_TABLE_H
#define SOPRA_EVENT_TABLE_H

/* clang-format off */
#define SOPRA_EVENTS(X) \
	X(CONFIG, "Config", (EPARAM(STRING, "config", EVENT_ALWAYS))) \
	X(ACT_NOW, "ActNow", ()) \
	X(CHARACTERS, "Characters", \
	  (EPARAM(INT, "characterId0", EVENT_ALWAYS) \
	   EPARAM(INT, "characterId1", EVENT_ALWAYS) \
	   EPARAM(INT, "characterId2", EVENT_ALWAYS) \
	   EPARAM(INT, "characterId3", EVENT_ALWAYS))) \
	X(COMMAND_FAILED, "CommandFailed", (EPARAM(STRING, "message", EVENT_ALWAYS))) \
	X(REGISTRATION_ABORTED, "RegistrationAborted", ()) \
	X(PLAYER, "Player", \
	  (EPARAM(INT, "player", EVENT_ALWAYS) \
	   EPARAM(STRING, "playerName", EVENT_ALWAYS))) \
	X(GAME_STARTED, "GameStarted", ()) \
	X(CHARACTER_SPAWNED, "CharacterSpawned", \
	  (EPARAM(INT, "player", EVENT_ALWAYS) \
	   EPARAM(INT, "characterId", EVENT_ALWAYS))) \
	X(ZOMBIE_SPAWNED, "ZombieSpawned", \
	  (EPARAM(INT, "locationId", EVENT_ALWAYS) \
	   EPARAM(INT, "entrance", EVENT_ALWAYS))) \
	X(CHILD_SPAWNED, "ChildSpawned", ()) \
	X(CARD_DRAWN, "CardDrawn", \
	  (EPARAM(INT, "player", EVENT_ALWAYS) \
	   EPARAM(INT, "cardId", EVENT_ALWAYS))) \
	X(GAME_END, "GameEnd", (EPARAM(BOOL, "win", EVENT_ALWAYS))) \
	X(NEXT_ROUND, "NextRound", (EPARAM(INT, "round", EVENT_ALWAYS))) \
	X(CRISIS, "Crisis", (EPARAM(INT, "crisisId", EVENT_ALWAYS))) \
	X(DIE_ROLLED, "DieRolled", \
	  (EPARAM(INT, "player", EVENT_ALWAYS) \
	   EPARAM(INT, "value", EVENT_ALWAYS))) \
	X(ABILITY_USED, "AbilityUsed", \
	  (EPARAM(INT, "characterId", EVENT_ALWAYS) \
	   EPARAM(INT, "target", EVENT_OPTIONAL))) \
	X(BARRICADED, "Barricaded", \
	  (EPARAM(INT, "characterId", EVENT_ALWAYS) \
	   EPARAM(INT, "locationId", EVENT_ALWAYS) \
	   EPARAM(INT, "entrance", EVENT_ALWAYS))) \
	X(MOVED, "Moved", \
	  (EPARAM(INT, "characterId", EVENT_ALWAYS) \
	   EPARAM(INT, "locationId", EVENT_ALWAYS) \
	   EPARAM(BOOL, "fuel", EVENT_BASE_ONLY))) \
	X(FROSTBITTEN, "Frostbitten", (EPARAM(INT, "characterId", EVENT_ALWAYS))) \
	X(WOUNDED, "Wounded", (EPARAM(INT, "characterId", EVENT_ALWAYS))) \
	X(BITTEN, "Bitten", (EPARAM(INT, "characterId", EVENT_OPTIONAL))) \
	X(CONTRIBUTED, "Contributed", \
	  (EPARAM(INT, "player", EVENT_ALWAYS) \
	   EPARAM(INT, "cardId", EVENT_ALWAYS))) \
	X(CARD_USED, "CardUsed", \
	  (EPARAM(INT, "cardId", EVENT_ALWAYS) \
	   EPARAM(INT, "characterId", EVENT_PAIR) \
	   EPARAM(INT, "target", EVENT_PAIR))) \
	X(FOOD_CHANGED, "FoodChanged", \
	  (EPARAM(INT, "amount", EVENT_ALWAYS) \
	   EPARAM(FOOD_REASON, "reason", EVENT_ALWAYS))) \
	X(COLONY_PHASE_STARTED, "ColonyPhaseStarted", ()) \
	X(STARVATION_TOKEN_ADDED, "StarvationTokenAdded", ()) \
	X(MORAL_CHANGED, "MoralChanged", \
	  (EPARAM(INT, "amount", EVENT_ALWAYS) \
	   EPARAM(MORAL_REASON, "reason", EVENT_ALWAYS))) \
	X(SURVIVOR_KILLED, "SurvivorKilled", (EPARAM(INT, "characterId", EVENT_ALWAYS))) \
	X(CHILD_KILLED, "ChildKilled", ()) \
	X(BARRICADE_DESTROYED, "BarricadeDestroyed", \
	  (EPARAM(INT, "locationId", EVENT_ALWAYS) \
	   EPARAM(INT, "entrance", EVENT_ALWAYS))) \
	X(WASTE_CHANGED, "WasteChanged", (EPARAM(INT, "amount", EVENT_ALWAYS))) \
	X(ZOMBIE_KILLED, "ZombieKilled", \
	  (EPARAM(INT, "characterId", EVENT_ALWAYS) \
	   EPARAM(INT, "locationId", EVENT_ALWAYS) \
	   EPARAM(INT, "entrance", EVENT_ALWAYS))) \
	X(SEARCHED, "Searched", \
	  (EPARAM(INT, "characterId", EVENT_ALWAYS) \
	   EPARAM(INT, "locationId", EVENT_ALWAYS))) \
	X(LEFT, "Left", (EPARAM(INT, "player", EVENT_ALWAYS))) \
	SOPRA_SESSION_EVENTS(X)

/*
 * The session layer's event (src/session.c; docs/protocol.md,
 * "Reconnecting"), sent only by a server with sessions; the game never
 * emits it. It stays the last row.
 */
#define SOPRA_SESSION_EVENTS(X) \
	X(SESSION, "Session", \
	  (EPARAM(INT, "player", EVENT_ALWAYS) \
	   EPARAM(STRING, "secret", EVENT_ALWAYS)))

/* The reasons of FoodChanged and MoralChanged: X(ENUM_SUFFIX, "WireName"),
 * in the order of their enums (game_event.h). */
#define SOPRA_FOOD_REASONS(X) \
	X(FOOD_ADDED, "FOOD_ADDED") \
	X(FOOD_CONSUMED, "FOOD_CONSUMED")
#define SOPRA_MORAL_REASONS(X) \
	X(CHARACTER_DIED, "CHARACTER_DIED") \
	X(CRISIS, "CRISIS") \
	X(STARVATION_TOKEN, "STARVATION_TOKEN") \
	X(WASTE, "WASTE")
/* clang-format on */

/* A row's parenthesised parameter list without its parentheses. */
#define SOPRA_EVENT_PARAMS(...) __VA_ARGS__

/* An EPARAM's KIND, as SOPRA_EVENT_##KIND. */
enum sopra_event_kind {
	SOPRA_EVENT_INT,
	SOPRA_EVENT_BOOL,
	SOPRA_EVENT_STRING,
	SOPRA_EVENT_FOOD_REASON,
	SOPRA_EVENT_MORAL_REASON
};

/* An EPARAM's presence. */
enum sopra_event_presence { EVENT_ALWAYS, EVENT_BASE_ONLY, EVENT_OPTIONAL, EVENT_PAIR };

#endif
