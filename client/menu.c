/*
 * menu: the commands possible now, by kind (menu.h). The commands and their
 * words come from the command layer (command.h): a command's parameters
 * (proto's table) and its roles and die (command_words.h) say what a menu
 * shows; nothing here knows a rule or names a particular command.
 */
#include "menu.h"

#include <stdio.h>
#include <string.h>

#include "command.h"
#include "describe.h"
#include "look.h"
#include "sopra/proto.h"

/* Whether a command of type t has a parameter of domain d. */
static bool takes(enum cmd_type t, enum proto_param_domain d)
{
	size_t n;
	const struct proto_param *p = proto_cmd_params(t, &n);
	for (size_t i = 0; i < n; i++)
		if (p[i].domain == d)
			return true;
	return false;
}

/* The die a command of type t uses (its row's pending column). */
static enum model_pending die_of(enum cmd_type t)
{
	const struct client_command *row = client_command(t);
	return row ? row->pending : MODEL_PEND_NONE;
}

/* Whether a command of type t has the role flag (CLIENT_*). */
static bool has_role(enum cmd_type t, unsigned flag)
{
	const struct client_command *row = client_command(t);
	return row && (row->flags & flag);
}

int menu_kind_of_key(int ch)
{
	for (int t = 0; t < CMD_TYPE_COUNT; t++) {
		const struct client_command *row = client_command((enum cmd_type)t);
		if (row->key && row->key == ch)
			return t;
	}
	return -1;
}

/* Whether out already offers the same choice as c. */
static bool offered(const struct menu *out, const struct cmd *c)
{
	for (int i = 0; i < out->n; i++)
		if (client_same_choice(&out->items[i].cmd, c))
			return true;
	return false;
}

/* The pick menu's notes: each offered character's stats and ability. */
static void offered_notes(const struct model *m, struct menu *out)
{
	for (int i = 0; i < 4 && out->nnotes < MENU_MAX_NOTES; i++) {
		int c = model_find_char(m, m->offered[i]);
		if (c < 0)
			continue;
		char stats[64], ab[160];
		look_char_stats(m, c, stats, sizeof stats);
		look_ability(m, c, ab, sizeof ab);
		snprintf(out->notes[out->nnotes++], sizeof out->notes[0], "%s: %s; %s",
		         model_char_name(m, c), stats, ab);
	}
}

int menu_build(const struct model *m, const struct game_cmd_list *legal, enum cmd_type kind,
               struct menu *out)
{
	out->kind = kind;
	out->n = 0;
	out->nnotes = 0;
	for (size_t i = 0; i < legal->n && out->n < MENU_MAX_ITEMS; i++) {
		const struct cmd *c = &legal->v[i];
		if (c->type != kind || offered(out, c))
			continue;
		struct menu_item *it = &out->items[out->n++];
		it->cmd = *c;
		client_cmd_label(m, c, it->label, sizeof it->label);
	}
	if (takes(kind, PROTO_DOMAIN_OFFERED_CHARACTER) && out->n > 0)
		offered_notes(m, out);
	return out->n;
}

/* ---- why a menu is empty -------------------------------------------------------------- */

/* The entrance of l with the most zombies (zombies: true) or free spaces. */
static int best_entrance(const struct model *m, int l, bool zombies)
{
	int best = 0, score = -1;
	for (int e = 0; e < m->locs[l].entrances; e++) {
		int z = m->locs[l].zombies[e], s = zombies ? z : 3 - z - m->locs[l].barricades[e];
		if (s > score) {
			score = s;
			best = e;
		}
	}
	return best;
}

/* The value of parameter p (a domain of our character c's commands) that
 * is the most promising, for a command of `kind`. */
static int candidate_value(const struct model *m, enum cmd_type kind,
                           const struct model_character *ch, const struct proto_param *p)
{
	switch (p->domain) {
	case PROTO_DOMAIN_OWN_CHARACTER:
		return ch->id;
	case PROTO_DOMAIN_LOCATION: /* away from the colony, or back to it */
		return m->locs[ch->loc == m->colony && m->nlocs > 1 ? (m->colony + 1) % m->nlocs
		                                                    : m->colony]
		        .id;
	case PROTO_DOMAIN_ENTRANCE: /* an attack: the most zombies, else free spaces */
		return best_entrance(m, ch->loc, die_of(kind) == MODEL_PEND_ATTACK);
	case PROTO_DOMAIN_TARGET: /* the ability's: whom to heal, or an entrance */
		return ch->ability == MODEL_AB_HEAL
		               ? ch->id
		               : best_entrance(m, ch->loc, ch->ability == MODEL_AB_KILL);
	default:
		return 0;
	}
}

/* A command of `kind` for our character c that the engine can judge, with
 * the most promising parameters; false when kind is not one character's
 * action (it takes no character of ours, or a card). */
static bool candidate(const struct model *m, enum cmd_type kind, int c, struct cmd *out)
{
	const struct model_character *ch = &m->chars[c];
	memset(out, 0, sizeof *out);
	out->type = kind;
	if (!takes(kind, PROTO_DOMAIN_OWN_CHARACTER) || takes(kind, PROTO_DOMAIN_HAND_CARD))
		return false;
	size_t n;
	const struct proto_param *p = proto_cmd_params(kind, &n);
	for (size_t i = 0; i < n; i++) {
		if (p[i].type != PROTO_INT)
			continue;
		if (p[i].flags & PROTO_TARGET) /* the feeding ability has none */
			out->has_target = ch->ability != MODEL_AB_FEED;
		proto_param_set(out, &p[i], candidate_value(m, kind, ch, &p[i]));
	}
	return true;
}

/* Why our character c cannot do `kind` (the server's words, or the
 * client's where they say more). */
static const char *why_character(const struct model *m, const struct client_cmds *cc,
                                 enum cmd_type kind, int c)
{
	struct cmd cmd;
	if (!candidate(m, kind, c, &cmd))
		return "not a character's action";
	if (die_of(kind) == MODEL_PEND_SEARCH && m->chars[c].loc == m->colony)
		return "in the colony, which has no cards to search";
	const char *why = client_cmds_refusal(cc, &cmd);
	return why ? why : "no target for it where it stands";
}

/* The reasons for each of our living characters, "Name: why; Name: why",
 * or "all your characters: why" when they share it. */
static void why_per_character(const struct model *m, const struct client_cmds *cc,
                              enum cmd_type kind, char *buf, size_t n)
{
	const char *shared = NULL;
	bool same = true;
	for (int c = 0; c < m->nchars; c++) {
		if (!m->chars[c].alive || m->chars[c].owner != m->me)
			continue;
		const char *why = why_character(m, cc, kind, c);
		same = same && (!shared || strcmp(shared, why) == 0);
		shared = shared ? shared : why;
		size_t len = strlen(buf);
		snprintf(buf + len, n - len, "%s%s: %s", len ? "; " : "", model_char_name(m, c),
		         why);
	}
	if (!shared)
		snprintf(buf, n, "you have no living character");
	else if (same && model_living_of(m, m->me) > 1)
		snprintf(buf, n, "all your characters: %s", shared);
}

/* The commands that take a card: about the hand. */
static void why_cards(const struct model *m, enum cmd_type kind, char *buf, size_t n)
{
	if (model_hand_size(m, m->me) == 0)
		snprintf(buf, n, "you have no cards");
	else if (has_role(kind, CLIENT_FOR_CRISIS) && m->crisis >= 0)
		snprintf(buf, n, "no card in your hand fits the %s crisis",
		         model_card_type_names[m->crises[m->crisis].type]);
	else
		snprintf(buf, n,
		         "no card of yours can be played now (no die to reroll, or no target "
		         "where your characters are)");
}

void menu_why_not(const struct model *m, const struct client_cmds *cc, enum cmd_type kind,
                  char *buf, size_t n)
{
	buf[0] = '\0';
	bool in = m->me >= 0 && m->me < m->nplayers && m->player_in[m->me];
	if (!m->got_config)
		snprintf(buf, n, "not registered yet");
	else if (m->result != MODEL_RUNNING)
		snprintf(buf, n, "the game is over");
	else if (!m->game_started)
		snprintf(buf, n, "the game has not started yet");
	else if (has_role(kind, CLIENT_STARTS))
		snprintf(buf, n, "the game has already started");
	else if (!in)
		snprintf(buf, n, "you are not in the game");
	else if (takes(kind, PROTO_DOMAIN_OFFERED_CHARACTER))
		snprintf(buf, n,
		         m->rounds_seen > 0 || model_living_of(m, m->me) > 0
		                 ? "characters were already picked"
		                 : "it is not your turn to pick characters");
	else if (m->rounds_seen == 0)
		snprintf(buf, n, "characters are being picked");
	else if (!m->my_turn)
		snprintf(buf, n, "it is not your turn");
	else if (!model_settled(m) || !cc->game)
		snprintf(buf, n, "wait for the game's answer");
	else if (takes(kind, PROTO_DOMAIN_HAND_CARD))
		why_cards(m, kind, buf, n);
	else
		why_per_character(m, cc, kind, buf, n);
}
