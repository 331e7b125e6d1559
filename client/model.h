/*
 * model: a client's picture of the board, folded from the server's events.
 *
 * A client (sopra-bot, a terminal client) feeds every line the server sends
 * to model_fold_line() (or model_decode() + model_fold()). The Config event
 * loads the game configuration (docs/configuration.md); every later event
 * changes the board as behaviour.md says. The protocol (protocol.md) gives a
 * client no other source: the initial board is derived from the
 * configuration, everything else from the events.
 *
 * Besides folding, the model checks: a line that is not one JSON object, an
 * unknown event, a missing, mistyped or unexpected parameter, and an event
 * that contradicts the board (an unknown id, an entrance over 3 zombies +
 * barricades, a card drawn twice, a search drawing the wrong number of
 * cards, a death without its MoralChanged, every step of the colony phase
 * in its order, ...) make model_fold() return an error that says what is
 * wrong. After an error the model is not to be used any more.
 *
 * The struct is public so that a UI can draw it; clients read it and change
 * it only through the functions below. Indices, not ids, link the parts:
 * a card's holder is a player index, a character's loc a location index.
 */
#ifndef SOPRA_CLIENT_MODEL_H
#define SOPRA_CLIENT_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "sopra/event_table.h"

struct cJSON;

#define MODEL_MAX_PLAYERS 64
#define MODEL_MAX_EQUIP   16
#define MODEL_MAX_DICE    64
#define MODEL_MAX_EXPECT  256

/* model_fold() / model_decode() results */
#define MODEL_OK        0
#define MODEL_VIOLATION (-1) /* the server sent something it must not */
#define MODEL_INTERNAL  (-2) /* out of memory or a limit of the model */
/* model_decode: a line whose "event" the model does not know; protocol.md
 * says a client ignores it (sopra-bot, which checks the server, does not) */
#define MODEL_UNKNOWN_EVENT (-3)

/* ---- events ----------------------------------------------------------------------------- */

/* The events of protocol.md, in the order of its table: one MEV_ID per
 * row of the server's event table (sopra/event_table.h). MEV_SESSION comes
 * only from a server with sessions (protocol.md, "Reconnecting"). */
enum model_event_type {
#define MODEL_EVENT_ENUM(id, ...) MEV_##id,
	SOPRA_EVENTS(MODEL_EVENT_ENUM)
#undef MODEL_EVENT_ENUM
	        MEV_COUNT
};

/* FoodChanged's and MoralChanged's reasons (sopra/event_table.h) */
enum model_food_reason {
#define MODEL_FOOD_ENUM(id, name) MODEL_##id,
	SOPRA_FOOD_REASONS(MODEL_FOOD_ENUM)
#undef MODEL_FOOD_ENUM
	        MODEL_FOOD_REASON_COUNT
};
enum model_moral_reason {
#define MODEL_MORAL_ENUM(id, name) MODEL_MORAL_##id,
	SOPRA_MORAL_REASONS(MODEL_MORAL_ENUM)
#undef MODEL_MORAL_ENUM
	        MODEL_MORAL_REASON_COUNT
};
/* Their wire names ("FOOD_ADDED", "CHARACTER_DIED", ...) */
extern const char *const model_food_reasons[MODEL_FOOD_REASON_COUNT];
extern const char *const model_moral_reasons[MODEL_MORAL_REASON_COUNT];

/*
 * One decoded event. v[i] / has[i] are the parameters in protocol.md's
 * order: integers as they are, booleans as 0 / 1, the reasons of FoodChanged
 * and MoralChanged as the enums above; an optional parameter that is absent
 * has has[i] false. s is the string parameter (Config's text, Player's
 * playerName, CommandFailed's message, Session's secret), NULL for the other events; it lives
 * in json, which model_event_free() releases.
 */
struct model_event {
	enum model_event_type type;
	const char *name; /* "Moved", ...: static */
	int v[4];
	bool has[4];
	const char *s;
	struct cJSON *json;
};

/* The name of an event type ("Moved"), NULL when out of range. */
const char *model_event_name(enum model_event_type t);

/* ---- the board -------------------------------------------------------------------------- */

enum model_card_type {
	MODEL_CARD_FOOD,
	MODEL_CARD_FUEL,
	MODEL_CARD_STUFF,
	MODEL_CARD_MEDICINE,
	MODEL_CARD_LOCK,
	MODEL_CARD_SCISSORS,
	MODEL_CARD_HAMMER, /* the equipment from here on */
	MODEL_CARD_SNOW_BOOTS,
	MODEL_CARD_COLT,
	MODEL_CARD_SWAB,
	MODEL_CARD_BLUEPRINT,
	MODEL_CARD_TYPES
};
/* the configuration's names: "food", ..., "snow_boots", "blueprint" */
extern const char *const model_card_type_names[MODEL_CARD_TYPES];

enum model_ability {
	MODEL_AB_WOUND,
	MODEL_AB_NO_INFECTION,
	MODEL_AB_SEARCH,
	MODEL_AB_TRASH,
	MODEL_AB_HEAL,
	MODEL_AB_FEED,
	MODEL_AB_BARRICADE,
	MODEL_AB_KILL,
	MODEL_ABILITIES
};
extern const char *const model_ability_names[MODEL_ABILITIES]; /* "wound", ..., "kill" */

struct model_card {
	int id;
	enum model_card_type type;
	int amount; /* food */
	int bp_loc; /* blueprint: location index, else -1 */
	int deck;   /* location index whose pile holds it (colony: start cards), -1 none */
	bool drawn; /* has left its pile */
	int holder; /* player index whose hand holds it, -1 none */
};

struct model_character {
	int id;
	const char *name; /* from the configuration ("" when absent) */
	int status, attack, search;
	enum model_ability ability;
	int ab_loc; /* SEARCH / KILL: location index (-1 unknown) */
	int ab_num; /* numCards, numFood, numBarricades or numZombies */
	int ab_max; /* maxActivations (1 where the ability has none) */
	int ab_die; /* KILL: dieValue */
	bool ab_children;
	bool spawned, alive;
	bool bitten; /* died of a bite */
	bool moved;  /* this round */
	int owner;   /* player index, -1 before it spawned; kept after its death */
	int loc;     /* location index, -1 when not on the board */
	int wounds, frost;
	int uses;                   /* ability activations this round */
	int equip[MODEL_MAX_EQUIP]; /* card indices, in the order equipped */
	bool equip_spent[MODEL_MAX_EQUIP];
	int nequip;
};

struct model_location {
	int id;
	const char *name; /* "colony" for the colony */
	bool colony;
	int entrances;
	int spaces;      /* survivorSpaces; 0 for the colony (unlimited) */
	int *zombies;    /* per entrance */
	int *barricades; /* per entrance */
	int deck_size;   /* cards in its pile at the start (the colony: 0) */
	int deck_left;
};

struct model_crisis {
	int id;
	enum model_card_type type; /* FOOD, FUEL, MEDICINE or STUFF */
	int required, moral;
};

enum model_goal { MODEL_GOAL_SURVIVE, MODEL_GOAL_BARRICADES, MODEL_GOAL_ZOMBIES };

enum model_result { MODEL_RUNNING, MODEL_WON, MODEL_LOST, MODEL_ABORTED };

/* The client's command in flight, so that the model can take the die it
 * uses when it succeeds (only the events tell it succeeded). */
enum model_pending {
	MODEL_PEND_NONE,
	MODEL_PEND_SEARCH,
	MODEL_PEND_ATTACK,
	MODEL_PEND_BARRICADE,
	MODEL_PEND_CLEAN,
	MODEL_PEND_KILL
};

struct model_expect {
	enum { MODEL_EXP_EXACT, MODEL_EXP_RESPAWN } kind;
	const char *name;
	int nargs; /* arguments compared */
	int a[3];
	bool any_gt; /* argument nargs (the next one) must be > a[nargs] */
};

struct model {
	/* set by model_init */
	char *my_name;
	bool revised;

	/* the configuration (valid once got_config) */
	bool got_config;
	char *config_text;    /* the Config event's text, as sent */
	struct cJSON *config; /* the parsed Config text; names point into it */
	int max_players;
	struct model_card *cards;
	int ncards;
	struct model_character *chars;
	int nchars;
	struct model_location *locs;
	int nlocs;
	int colony; /* location index */
	struct model_crisis *crises;
	int ncrises;
	enum model_goal goal;
	int goal_value; /* barricades / locationWithZombies */
	int rounds;     /* goal.rounds */
	int start_moral;

	/* the players */
	int nplayers;
	char *player_names[MODEL_MAX_PLAYERS];
	bool player_in[MODEL_MAX_PLAYERS]; /* registered and not left */
	/* our player index, -1 until we know it: from our Session line, else
	 * from the one Player event with our name, else (a name given twice)
	 * from our Characters offer (model_init) */
	int me;
	bool me_sure;    /* me came from Session or Characters, not from a name */
	bool name_twice; /* two Player events carry our name */
	/* the dice each player rolled at the start of this round (its own
	 * DieRolled events: a STUFF card's new die is not among them) */
	int rolled[MODEL_MAX_PLAYERS][MODEL_MAX_DICE];
	int nrolled[MODEL_MAX_PLAYERS];
	int *spawn_order; /* character indices in the order they came into play */
	int nspawned;

	/* the game */
	bool game_started;
	enum model_result result;
	int round;       /* the last NextRound's number (revised: rounds left), 0 before */
	int rounds_seen; /* NextRound events so far */
	int crisis;      /* index of the current crisis, -1 none */
	int *drawn;      /* the crises drawn, round by round (rounds_seen of them); of
	                    crises that share an id, the first not drawn yet */
	int contributed; /* cards contributed to it */
	int food, moral, waste, children, tokens;
	int *waste_pile;   /* the cards on the waste pile (waste of them), bottom first */
	bool colony_phase; /* between ColonyPhaseStarted and the next round */

	/* our own side */
	int dice[MODEL_MAX_DICE]; /* our unused dice this round */
	int ndice;
	bool my_turn;   /* ActNow seen, the turn not ended (by ending or leaving it, or a new
	                   character after our last one died) */
	bool selecting; /* Characters received, the selection not yet spawned */
	int offered[4];
	bool cleaned_this_round; /* base: we cleaned waste this round */

	/* the checker's state: internal, read by nothing outside model.c */
	struct model_checks {
		struct model_expect exq[MODEL_MAX_EXPECT]; /* events that must come next */
		int nexq;
		enum {
			MODEL_CP_OFF,
			MODEL_CP_FOOD,
			MODEL_CP_STARV,
			MODEL_CP_WASTE,
			MODEL_CP_CRISIS,
			MODEL_CP_ZOMBIES,
			MODEL_CP_GOAL
		} cp;
		int cp_need;
		int zi, zk, zn;   /* zombie step: order index, attempt, attempts */
		int *zorder;      /* location indices: the colony, then ascending id */
		int searched_loc; /* location of the search whose cards follow, else -1 */
		int search_draws, search_k, search_char, search_bp;
		bool search_ab;
		bool expect_waste_inc; /* the next event must be WasteChanged(+1) */
		int waste_card;        /* the card it puts on the waste pile */
		int round_dice;        /* DieRolled events of the round's roll still due */
		bool expect_game_lost; /* morale <= 0: the next event must be GameEnd(false) */
		enum model_pending pend;
		bool other_failure; /* the next CommandFailed is not pend's */
		int pend_char;
		int order; /* of the event being folded: 0 free, 1 queued, 2 colony phase */
		char err[512];
	} chk;
};

/* ---- use -------------------------------------------------------------------------------- */

/* An empty model for the player named my_name in the given rule edition.
 * Which player we are (me): the player of our Session line (a server with
 * sessions); else the one Player event with our name; when two carry it,
 * the player who gets our Characters offer (the selection goes in
 * ascending id: the first player still in the game who has no character
 * yet), and until then nobody. my_name NULL: a watcher's model
 * (sopra-server --watch-port), which gets only the events to all players
 * and has no side of its own (me stays -1). */
void model_init(struct model *m, const char *my_name, bool revised);
void model_free(struct model *m);

/* Parse one server line (without its "\n") and check it against
 * protocol.md. MODEL_OK and *ev filled (release it with
 * model_event_free), or MODEL_VIOLATION (MODEL_UNKNOWN_EVENT for an event
 * name it does not know) and a message in err. */
int model_decode(const struct model *m, const char *line, size_t len, struct model_event *ev,
                 char *err, size_t errlen);
void model_event_free(struct model_event *ev);

/* Fold one decoded event into the board. MODEL_OK, or MODEL_VIOLATION /
 * MODEL_INTERNAL with a message in err. */
int model_fold(struct model *m, const struct model_event *ev, char *err, size_t errlen);

/* model_decode + model_fold. */
int model_fold_line(struct model *m, const char *line, size_t len, char *err, size_t errlen);

/* The command we just sent (MODEL_PEND_NONE for any other); the die it uses
 * is taken from m->dice when its success event comes. CommandFailed clears it. */
void model_set_pending(struct model *m, enum model_pending what, int char_index);
/* We sent a command that ends our turn. */
void model_end_my_turn(struct model *m);
/* The next CommandFailed answers another line of ours, sent before the
 * command in flight (a client that sends lines out of turn knows, as the
 * server answers in order): the command stays in flight. */
void model_other_failure_next(struct model *m);

/* ---- reading ---------------------------------------------------------------------------- */

/* Whether the board is between two steps of the game: no event the model
 * has folded still requires others to follow (the consequences of a death,
 * the rest of a colony phase or of a round's dice, the card of a play). The
 * events of one command or timeout end in such a state; in between, the
 * board can be half way through a step. */
bool model_settled(const struct model *m);

/* Index by id, -1 when unknown. */
int model_find_card(const struct model *m, int id);
int model_find_char(const struct model *m, int id);
int model_find_loc(const struct model *m, int id);
int model_find_crisis(const struct model *m, int id);

/* Living characters at location l / of player p; p's cards in hand. */
int model_chars_at(const struct model *m, int l);
int model_living_of(const struct model *m, int p);
int model_hand_size(const struct model *m, int p);
/* l can take one more character (the colony always can). */
bool model_has_room(const struct model *m, int l);
/* our highest unused die, 0 without dice */
int model_max_die(const struct model *m);
/* the most recently equipped unspent item of type t on character c, -1 none */
int model_unspent_equip(const struct model *m, int c, enum model_card_type t);
/* a card of type t can be contributed to the current crisis */
bool model_crisis_accepts(const struct model *m, enum model_card_type t);
/* food the colony eats in the next colony phase */
int model_food_need(const struct model *m);
/* the equipment types */
bool model_is_equipment(enum model_card_type t);

#endif
