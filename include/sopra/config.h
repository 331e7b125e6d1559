/*
 * config: load and validate a game configuration (docs/configuration.md)
 * into plain structs. Lists keep file order: the shuffles depend on it.
 *
 * Nothing here talks to the network; the loader reports every problem it
 * finds as one message naming the JSON path, e.g.
 *   "locations[2].survivorSpaces: must be >= 1".
 */
#ifndef SOPRA_CONFIG_H
#define SOPRA_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

enum card_type {
	CARD_FOOD,
	CARD_FUEL,
	CARD_STUFF,
	CARD_MEDICINE,
	CARD_LOCK,
	CARD_SCISSORS,
	/* equipment (edition revised; in base they only count as STUFF) */
	CARD_HAMMER,
	CARD_SNOW_BOOTS,
	CARD_COLT,
	CARD_SWAB,
	CARD_BLUEPRINT,
};
#define CARD_TYPE_COUNT (CARD_BLUEPRINT + 1)

struct config_card {
	int id;
	enum card_type type;
	int amount;   /* CARD_FOOD only (>= 1) */
	int location; /* CARD_BLUEPRINT only: a location id */
};

enum injury {
	INJURY_WOUND,
	INJURY_FROSTBITE,
	INJURY_BITE,
};

enum ability_type {
	ABILITY_WOUND,        /* passive: before -> after on moves */
	ABILITY_NO_INFECTION, /* passive: no roll after an attack */
	ABILITY_SEARCH,       /* passive: location, num_cards, max_activations */
	ABILITY_TRASH,        /* passive: num_cards */
	ABILITY_HEAL,         /* active, target = character */
	ABILITY_FEED,         /* active, no target: num_food */
	ABILITY_BARRICADE,    /* active, target = entrance */
	ABILITY_KILL,         /* active, target = entrance */
};

/* One ability; only the fields of its type are meaningful (others are 0). */
struct config_ability {
	enum ability_type type;
	enum injury before, after; /* WOUND */
	int location;              /* SEARCH: "location"; KILL: "locationId" */
	int num_cards;             /* SEARCH, TRASH */
	int max_activations;       /* SEARCH, BARRICADE, KILL */
	int num_food;              /* FEED */
	int num_barricades;        /* BARRICADE */
	int die_value;             /* KILL */
	int num_zombies;           /* KILL */
	bool infection_die;        /* KILL, default false */
	bool children;             /* KILL, default false */
};

struct config_character {
	int id;
	char *name; /* owned */
	int status; /* social status, unique */
	int attack; /* 1..6 */
	int search; /* 1..6 */
	struct config_ability ability;
};

enum goal_type {
	GOAL_SURVIVE,
	GOAL_BARRICADES,
	GOAL_LOCATION_WITH_ZOMBIES,
};

struct config_goal {
	int rounds;
	int moral;
	int zombies_colony;
	int zombies_locations;
	int children_in_colony;
	enum goal_type type;
	int value; /* BARRICADES: n barricades; LOCATION_WITH_ZOMBIES: n locations */
};

struct config_location {
	int id;
	char *name; /* owned; "colony" for the colony */
	bool is_colony;
	int entrances;       /* >= 1 */
	int survivor_spaces; /* locations only; 0 for the colony (unlimited) */
	int *cards;          /* owned: card ids in file order (startCards for the colony) */
	int ncards;
};

enum crisis_type {
	CRISIS_FOOD,
	CRISIS_STUFF,
	CRISIS_MEDICINE,
	CRISIS_FUEL,
};

struct config_crisis {
	int id;
	enum crisis_type type;
	int moral_change;
	int required_cards;
};

/* A validated configuration. Every array is owned and in file order. */
struct config {
	int max_players;
	struct config_card *cards;
	int ncards;
	struct config_character *characters;
	int ncharacters;
	struct config_goal goal;
	struct config_location *locations; /* file order, colony included */
	int nlocations;
	int colony; /* index of the colony in locations[] */
	struct config_crisis *crises;
	int ncrises;
	/* owned: the file's bytes verbatim, NUL-terminated (sent as Config);
	 * NULL after config_drop_text, text_len stays */
	char *text;
	size_t text_len;
};

/* A growable list of error messages, one per problem. */
struct config_errors {
	char **msgs; /* owned, each owned */
	int n;
	int cap;
};

/* Parse and validate `len` bytes of JSON text. On success returns a config
 * (caller frees with config_free) and leaves errs untouched; on failure
 * returns NULL and appends at least one message to errs (caller frees with
 * config_errors_free). The text is copied. */
struct config *config_parse(const char *text, size_t len, struct config_errors *errs);

/* Read the file at path and config_parse it. An unreadable file is reported
 * as one error naming the path. The file is read once, into the buffer that
 * becomes the config's text (no copy); a regular file's buffer is sized from
 * its fstat size, anything else (a pipe) is read until its end. */
struct config *config_load(const char *path, struct config_errors *errs);

void config_free(struct config *cfg);
/* Free cfg->text (and set it NULL) once nothing needs it: the server keeps
 * the encoded Config line instead (net_config.c), and the game's Config
 * events then carry no text. */
void config_drop_text(struct config *cfg);
void config_errors_free(struct config_errors *errs);

/* Lookups by id; NULL / -1 when absent. Linear; called at setup only or on
 * small tables. */
const struct config_card *config_find_card(const struct config *cfg, int id);
int config_location_index(const struct config *cfg, int id);

#endif
