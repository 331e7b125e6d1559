/*
 * describe: one event in words, with the names from the configuration and
 * the Player events, for a client's event log:
 *
 *   Moved 2005 1       -> "Anna's Sophie Lee moved to Police Station"
 *   ZombieSpawned 3 2  -> "Zombie spawned at Grocery Store, entrance 2"
 *
 * Call it BEFORE model_fold() folds the event: a used card's holder, for
 * instance, is known only until then. Unknown ids are named by number
 * ("character 77", "player 3"), so any decoded event can be described.
 */
#ifndef SOPRA_CLIENT_DESCRIBE_H
#define SOPRA_CLIENT_DESCRIBE_H

#include <stddef.h>

#include "model.h"

/* Writes the text (NUL-terminated, cut to fit) into buf; returns buf. */
char *model_describe(const struct model *m, const struct model_event *ev, char *buf, size_t n);

/* Short names for labels and tables: a character's configured name (else
 * "#id"; a static buffer, one of four in turn), a location's ("Colony" for
 * the colony), a card as "food(2) #105", "blueprint(Mall) #9", "lock #9". */
const char *model_char_name(const struct model *m, int c);
const char *model_loc_name(const struct model *m, int l);
void model_card_label(const struct model *m, int k, char *buf, int n);

#endif
