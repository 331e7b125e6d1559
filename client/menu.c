/*
 * menu: the commands possible now, by kind (menu.h). The commands and their
 * words come from the command layer (command.h); nothing here knows a rule
 * or a particular command.
 */
#include "menu.h"

#include <stdio.h>
#include <string.h>

#include "command.h"
#include "describe.h"
#include "look.h"

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
	if (kind == CMD_SELECT_CHARACTERS && out->n > 0)
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

/* A command of `kind` for our character c that the engine can judge, with
 * the most promising parameters; false when kind needs no character. */
static bool candidate(const struct model *m, enum cmd_type kind, int c, struct cmd *out)
{
	const struct model_character *ch = &m->chars[c];
	memset(out, 0, sizeof *out);
	out->type = kind;
	out->character = ch->id;
	switch (kind) {
	case CMD_MOVE:
		out->location =
		        m->locs[ch->loc == m->colony && m->nlocs > 1 ? (m->colony + 1) % m->nlocs
		                                                     : m->colony]
		                .id;
		return true;
	case CMD_SEARCH:
	case CMD_CLEAN_WASTE:
		return true;
	case CMD_ATTACK:
	case CMD_BARRICADE:
		out->entrance = best_entrance(m, ch->loc, kind == CMD_ATTACK);
		return true;
	case CMD_USE_ABILITY:
		out->has_target = ch->ability != MODEL_AB_FEED;
		out->target = ch->ability == MODEL_AB_HEAL
		                      ? ch->id
		                      : best_entrance(m, ch->loc, ch->ability == MODEL_AB_KILL);
		return true;
	default:
		return false;
	}
}

/* Why our character c cannot do `kind` (the server's words, or the
 * client's where they say more). */
static const char *why_character(const struct model *m, const struct client_cmds *cc,
                                 enum cmd_type kind, int c)
{
	struct cmd cmd;
	if (!candidate(m, kind, c, &cmd))
		return "not a character's action";
	if (kind == CMD_SEARCH && m->chars[c].loc == m->colony)
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

/* Contribute and Card: about the hand. */
static void why_cards(const struct model *m, enum cmd_type kind, char *buf, size_t n)
{
	if (model_hand_size(m, m->me) == 0)
		snprintf(buf, n, "you have no cards");
	else if (kind == CMD_CONTRIBUTE_CARD && m->crisis >= 0)
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
	else if (kind == CMD_START_GAME)
		snprintf(buf, n, "the game has already started");
	else if (!in)
		snprintf(buf, n, "you are not in the game");
	else if (kind == CMD_SELECT_CHARACTERS)
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
	else if (kind == CMD_CONTRIBUTE_CARD || kind == CMD_USE_CARD)
		why_cards(m, kind, buf, n);
	else
		why_per_character(m, cc, kind, buf, n);
}
