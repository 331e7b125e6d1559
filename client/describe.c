/*
 * describe: one event in words (describe.h).
 */
#include "describe.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *model_char_name(const struct model *m, int c)
{
	static char buf[4][32];
	static int slot;
	if (m->chars[c].name && *m->chars[c].name)
		return m->chars[c].name;
	char *b = buf[slot++ % 4];
	snprintf(b, sizeof buf[0], "#%d", m->chars[c].id);
	return b;
}

const char *model_loc_name(const struct model *m, int l)
{
	if (m->locs[l].colony)
		return "Colony";
	return m->locs[l].name && *m->locs[l].name ? m->locs[l].name : "?";
}

void model_card_label(const struct model *m, int k, char *buf, int n)
{
	const struct model_card *cd = &m->cards[k];
	if (cd->type == MODEL_CARD_FOOD)
		snprintf(buf, (size_t)n, "food(%d) #%d", cd->amount, cd->id);
	else if (cd->type == MODEL_CARD_BLUEPRINT && cd->bp_loc >= 0)
		snprintf(buf, (size_t)n, "blueprint(%s) #%d", model_loc_name(m, cd->bp_loc),
		         cd->id);
	else
		snprintf(buf, (size_t)n, "%s #%d", model_card_type_names[cd->type], cd->id);
}

/* Names are written into small buffers; a name longer than that is cut. */
#define NAME_MAX_LEN  160
#define OWNED_MAX_LEN (2 * NAME_MAX_LEN + 8) /* "NAME's NAME" */

static const char *player_name(const struct model *m, int p, char *buf, size_t n)
{
	if (p >= 0 && p < m->nplayers && m->player_names[p])
		snprintf(buf, n, "%s", m->player_names[p]);
	else
		snprintf(buf, n, "player %d", p);
	return buf;
}

/* "Sophie Lee", or "character 2005" when it has no name or is unknown */
static const char *char_name(const struct model *m, int id, char *buf, size_t n)
{
	int c = model_find_char(m, id);
	if (c >= 0 && m->chars[c].name && *m->chars[c].name)
		snprintf(buf, n, "%s", m->chars[c].name);
	else
		snprintf(buf, n, "character %d", id);
	return buf;
}

/* "Anna's Sophie Lee" when the owner is known */
static const char *owned_name(const struct model *m, int id, char *buf, size_t n)
{
	char who[NAME_MAX_LEN], what[NAME_MAX_LEN];
	int c = model_find_char(m, id);
	char_name(m, id, what, sizeof what);
	if (c >= 0 && m->chars[c].owner >= 0)
		snprintf(buf, n, "%s's %s", player_name(m, m->chars[c].owner, who, sizeof who),
		         what);
	else
		snprintf(buf, n, "%s", what);
	return buf;
}

static const char *loc_name(const struct model *m, int id, char *buf, size_t n)
{
	int l = model_find_loc(m, id);
	if (l >= 0 && m->locs[l].colony)
		snprintf(buf, n, "the colony");
	else if (l >= 0 && m->locs[l].name && *m->locs[l].name)
		snprintf(buf, n, "%s", m->locs[l].name);
	else
		snprintf(buf, n, "location %d", id);
	return buf;
}

static const char *type_words(enum model_card_type t)
{
	return t == MODEL_CARD_SNOW_BOOTS ? "snow boots" : model_card_type_names[t];
}

/* "food card 105 (2 food)", "blueprint card 221", "card 9" when unknown */
static const char *card_name(const struct model *m, int id, char *buf, size_t n)
{
	int k = model_find_card(m, id);
	if (k < 0)
		snprintf(buf, n, "card %d", id);
	else if (m->cards[k].type == MODEL_CARD_FOOD)
		snprintf(buf, n, "food card %d (%d food)", id, m->cards[k].amount);
	else
		snprintf(buf, n, "%s card %d", type_words(m->cards[k].type), id);
	return buf;
}

/* the location of character id, or -1 */
static int loc_id_of(const struct model *m, int id)
{
	int c = model_find_char(m, id);
	if (c < 0 || m->chars[c].loc < 0)
		return -1;
	return m->locs[m->chars[c].loc].id;
}

static void describe_card_used(const struct model *m, const struct model_event *ev, char *buf,
                               size_t n)
{
	char who[OWNED_MAX_LEN], card[NAME_MAX_LEN], b[NAME_MAX_LEN];
	const int *v = ev->v;
	int k = model_find_card(m, v[0]);
	card_name(m, v[0], card, sizeof card);
	if (!ev->has[1]) {
		if (k >= 0 && m->cards[k].holder >= 0)
			snprintf(buf, n, "%s used %s",
			         player_name(m, m->cards[k].holder, who, sizeof who), card);
		else
			snprintf(buf, n, "Used %s", card);
		return;
	}
	owned_name(m, v[1], who, sizeof who);
	switch (k >= 0 ? m->cards[k].type : MODEL_CARD_STUFF) {
	case MODEL_CARD_MEDICINE:
		snprintf(buf, n, "%s used %s on %s", who, card, char_name(m, v[2], b, sizeof b));
		break;
	case MODEL_CARD_LOCK:
	case MODEL_CARD_SCISSORS:
		snprintf(buf, n, "%s used %s at %s, entrance %d", who, card,
		         loc_name(m, loc_id_of(m, v[1]), b, sizeof b), v[2]);
		break;
	case MODEL_CARD_FUEL:
		snprintf(buf, n, "%s used %s to go to %s", who, card,
		         loc_name(m, v[2], b, sizeof b));
		break;
	default:
		snprintf(buf, n, "%s gave %s to %s", who, card, char_name(m, v[2], b, sizeof b));
		break;
	}
}

static void describe_ability(const struct model *m, const struct model_event *ev, char *buf,
                             size_t n)
{
	char who[OWNED_MAX_LEN], b[NAME_MAX_LEN];
	int c = model_find_char(m, ev->v[0]);
	owned_name(m, ev->v[0], who, sizeof who);
	const struct model_character *ch = c >= 0 ? &m->chars[c] : NULL;
	int loc = loc_id_of(m, ev->v[0]);
	switch (ch ? ch->ability : MODEL_AB_WOUND) {
	case MODEL_AB_FEED:
		snprintf(buf, n, "%s fed the colony (+%d food)", who, ch->ab_num);
		break;
	case MODEL_AB_HEAL:
		snprintf(buf, n, "%s healed %s", who, char_name(m, ev->v[1], b, sizeof b));
		break;
	case MODEL_AB_BARRICADE:
		snprintf(buf, n, "%s barricaded %s, entrance %d (ability)", who,
		         loc_name(m, loc, b, sizeof b), ev->v[1]);
		break;
	case MODEL_AB_KILL:
		snprintf(buf, n, "%s fought the zombies at %s, entrance %d (ability)", who,
		         loc_name(m, loc, b, sizeof b), ev->v[1]);
		break;
	default:
		snprintf(buf, n, "%s used an ability", who);
		break;
	}
}

static const char *const moral_words[4] = {"a character died", "the crisis", "starvation", "waste"};

char *model_describe(const struct model *m, const struct model_event *ev, char *buf, size_t n)
{
	char a[OWNED_MAX_LEN], b[NAME_MAX_LEN], c[NAME_MAX_LEN], d[NAME_MAX_LEN];
	const int *v = ev->v;
	if (!buf || n == 0)
		return buf;
	buf[0] = '\0';
	switch (ev->type) {
	case MEV_CONFIG:
		snprintf(buf, n, "Configuration received");
		break;
	case MEV_ACT_NOW:
		snprintf(buf, n, "Your turn");
		break;
	case MEV_CHARACTERS:
		snprintf(buf, n, "Choose two of %s, %s, %s and %s", char_name(m, v[0], a, sizeof a),
		         char_name(m, v[1], b, sizeof b), char_name(m, v[2], c, sizeof c),
		         char_name(m, v[3], d, sizeof d));
		break;
	case MEV_COMMAND_FAILED:
		snprintf(buf, n, "Command failed: %s", ev->s ? ev->s : "");
		break;
	case MEV_REGISTRATION_ABORTED:
		snprintf(buf, n, "Registration aborted");
		break;
	case MEV_PLAYER:
		snprintf(buf, n, "%s is player %d", ev->s ? ev->s : "", v[0]);
		break;
	case MEV_GAME_STARTED:
		snprintf(buf, n, "The game started");
		break;
	case MEV_CHARACTER_SPAWNED:
		snprintf(buf, n, "%s's %s joined the colony", player_name(m, v[0], a, sizeof a),
		         char_name(m, v[1], b, sizeof b));
		break;
	case MEV_ZOMBIE_SPAWNED:
		snprintf(buf, n, "Zombie spawned at %s, entrance %d",
		         loc_name(m, v[0], a, sizeof a), v[1]);
		break;
	case MEV_CHILD_SPAWNED:
		snprintf(buf, n, "A child joined the colony");
		break;
	case MEV_CARD_DRAWN:
		snprintf(buf, n, "%s drew %s", player_name(m, v[0], a, sizeof a),
		         card_name(m, v[1], b, sizeof b));
		break;
	case MEV_GAME_END:
		snprintf(buf, n, "%s", v[0] ? "The game is won" : "The game is lost");
		break;
	case MEV_NEXT_ROUND:
		if (m->revised)
			snprintf(buf, n, "Next round: %d left", v[0]);
		else
			snprintf(buf, n, "Round %d", v[0]);
		break;
	case MEV_CRISIS: {
		int k = -1;
		for (int i = 0; i < m->ncrises; i++)
			if (m->crises[i].id == v[0])
				k = i;
		if (k < 0)
			snprintf(buf, n, "Crisis %d", v[0]);
		else
			snprintf(buf, n, "Crisis %d: %d %s card%s needed, else morale -%d", v[0],
			         m->crises[k].required, type_words(m->crises[k].type),
			         m->crises[k].required == 1 ? "" : "s", m->crises[k].moral);
		break;
	}
	case MEV_DIE_ROLLED:
		snprintf(buf, n, "%s rolled a %d", player_name(m, v[0], a, sizeof a), v[1]);
		break;
	case MEV_ABILITY_USED:
		describe_ability(m, ev, buf, n);
		break;
	case MEV_BARRICADED:
		snprintf(buf, n, "%s barricaded %s, entrance %d", owned_name(m, v[0], a, sizeof a),
		         loc_name(m, v[1], b, sizeof b), v[2]);
		break;
	case MEV_MOVED:
		snprintf(buf, n, "%s moved to %s%s", owned_name(m, v[0], a, sizeof a),
		         loc_name(m, v[1], b, sizeof b), ev->has[2] && v[2] ? " using fuel" : "");
		break;
	case MEV_FROSTBITTEN:
		snprintf(buf, n, "%s got frostbite", owned_name(m, v[0], a, sizeof a));
		break;
	case MEV_WOUNDED:
		snprintf(buf, n, "%s was wounded", owned_name(m, v[0], a, sizeof a));
		break;
	case MEV_BITTEN:
		if (ev->has[0])
			snprintf(buf, n, "%s was bitten and died",
			         owned_name(m, v[0], a, sizeof a));
		else
			snprintf(buf, n, "A child was bitten and died");
		break;
	case MEV_CONTRIBUTED:
		snprintf(buf, n, "%s contributed %s to the crisis",
		         player_name(m, v[0], a, sizeof a), card_name(m, v[1], b, sizeof b));
		break;
	case MEV_CARD_USED:
		describe_card_used(m, ev, buf, n);
		break;
	case MEV_FOOD_CHANGED:
		if (v[1] == MODEL_FOOD_CONSUMED)
			snprintf(buf, n, "The colony ate %d food", -v[0]);
		else
			snprintf(buf, n, "Food %+d", v[0]);
		break;
	case MEV_COLONY_PHASE_STARTED:
		snprintf(buf, n, "Colony phase");
		break;
	case MEV_STARVATION_TOKEN_ADDED:
		snprintf(buf, n, "Not enough food: a starvation token");
		break;
	case MEV_MORAL_CHANGED:
		snprintf(buf, n, "Morale %+d (%s)", v[0],
		         v[1] >= 0 && v[1] < 4 ? moral_words[v[1]] : "?");
		break;
	case MEV_SURVIVOR_KILLED:
		snprintf(buf, n, "%s was killed", owned_name(m, v[0], a, sizeof a));
		break;
	case MEV_CHILD_KILLED:
		snprintf(buf, n, "Zombies killed a child");
		break;
	case MEV_BARRICADE_DESTROYED:
		snprintf(buf, n, "Zombies broke a barricade at %s, entrance %d",
		         loc_name(m, v[0], a, sizeof a), v[1]);
		break;
	case MEV_WASTE_CHANGED:
		if (m->revised)
			snprintf(buf, n, "Waste %+d", v[0]);
		else
			snprintf(buf, n, "Waste pile: %d card%s", v[0], v[0] == 1 ? "" : "s");
		break;
	case MEV_ZOMBIE_KILLED:
		snprintf(buf, n, "%s killed a zombie at %s, entrance %d",
		         owned_name(m, v[0], a, sizeof a), loc_name(m, v[1], b, sizeof b), v[2]);
		break;
	case MEV_SEARCHED:
		snprintf(buf, n, "%s searched %s", owned_name(m, v[0], a, sizeof a),
		         loc_name(m, v[1], b, sizeof b));
		break;
	case MEV_LEFT:
		snprintf(buf, n, "%s left the game", player_name(m, v[0], a, sizeof a));
		break;
	case MEV_SESSION:
		snprintf(buf, n, "You are player %d; the server keeps your seat if you drop", v[0]);
		break;
	default:
		snprintf(buf, n, "%s", ev->name ? ev->name : "?");
		break;
	}
	return buf;
}
