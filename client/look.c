/*
 * look: things to look at, their words, and the dangers near (look.h).
 * The rules behind the words are docs/rules.md's (sections 2, 6, 7, 8, 9).
 */
#include "look.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "describe.h"

/* Append to a fixed buffer, cutting at its end. */
static void addf(char *buf, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4)))
#endif
        ;
static void addf(char *buf, size_t n, const char *fmt, ...)
{
	size_t len = strlen(buf);
	if (len + 1 >= n)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, n - len, fmt, ap);
	va_end(ap);
}

/* A new line of out (empty when out is full: the rest is dropped). */
static char *line(struct look_text *out)
{
	static char spill[LOOK_LINE_LEN];
	if (out->n >= LOOK_MAX_LINES) {
		spill[0] = '\0';
		return spill;
	}
	char *l = out->lines[out->n++];
	l[0] = '\0';
	return l;
}

#define LINEF(out, ...) addf(line(out), LOOK_LINE_LEN, __VA_ARGS__)

static const char *player_of(const struct model *m, int p)
{
	return p >= 0 && p < m->nplayers && m->player_names[p] ? m->player_names[p] : "nobody";
}

static const char *plural(int n)
{
	return n == 1 ? "" : "s";
}

/* ---- characters --------------------------------------------------------------------- */

void look_char_stats(const struct model *m, int c, char *buf, size_t n)
{
	assert(c >= 0 && c < m->nchars);
	const struct model_character *ch = &m->chars[c];
	snprintf(buf, n, "attack %d+ search %d+ status %d", ch->attack, ch->search, ch->status);
}

/* The configuration's object of character c's ability ({"before":...}), or NULL. */
static const cJSON *ability_params(const struct model *m, int c)
{
	const cJSON *chars = cJSON_GetObjectItemCaseSensitive(m->config, "characters");
	const cJSON *ab = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(chars, c), "ability");
	return ab ? ab->child : NULL;
}

/* "frostBite" -> "frostbite": an injury of the configuration in words */
static const char *injury_words(const char *s)
{
	if (!s)
		return "?";
	return strcmp(s, "frostBite") == 0 ? "frostbite" : s;
}

static void times_a_round(char *buf, size_t n, int k)
{
	if (k == 1)
		addf(buf, n, ", once a round");
	else
		addf(buf, n, ", %d times a round", k);
}

void look_ability(const struct model *m, int c, char *buf, size_t n)
{
	assert(c >= 0 && c < m->nchars);
	const struct model_character *ch = &m->chars[c];
	const cJSON *p = ability_params(m, c);
	const char *at = ch->ab_loc >= 0 ? model_loc_name(m, ch->ab_loc) : "?";
	buf[0] = '\0';
	switch (ch->ability) {
	case MODEL_AB_WOUND:
		addf(buf, n, "wound: after a normal move, a rolled %s counts as a %s",
		     injury_words(
		             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "before"))),
		     injury_words(
		             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "after"))));
		break;
	case MODEL_AB_NO_INFECTION:
		addf(buf, n, "no infection: an attack rolls no infection die");
		break;
	case MODEL_AB_SEARCH:
		addf(buf, n, "search: draws %d cards at %s", ch->ab_num + 1, at);
		times_a_round(buf, n, ch->ab_max);
		break;
	case MODEL_AB_TRASH:
		addf(buf, n, "trash: cleaning waste removes %d cards, not 3", ch->ab_num);
		break;
	case MODEL_AB_HEAL:
		addf(buf, n,
		     "heal (y): removes a frostbite or a wound of someone here, once a round");
		break;
	case MODEL_AB_FEED:
		addf(buf, n, "feed (y): +%d food, once a round", ch->ab_num);
		break;
	case MODEL_AB_BARRICADE:
		addf(buf, n, "barricade (y): up to %d barricades at one entrance, no die",
		     ch->ab_num);
		times_a_round(buf, n, ch->ab_max);
		break;
	case MODEL_AB_KILL:
		addf(buf, n,
		     "kill (y): at %s with a die of %d+, kills up to %d zombie%s at one entrance",
		     at, ch->ab_die, ch->ab_num, plural(ch->ab_num));
		times_a_round(buf, n, ch->ab_max);
		if (ch->ab_children)
			addf(buf, n, "; needs a child in the colony");
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "infectionDie")))
			addf(buf, n, "; rolls the infection die");
		break;
	default:
		addf(buf, n, "?");
		break;
	}
}

static void describe_injuries(const struct model_character *ch, struct look_text *out)
{
	int hurt = ch->wounds + ch->frost;
	if (hurt == 0) {
		LINEF(out, "Injuries: none (3 injuries kill)");
		return;
	}
	char *l = line(out);
	addf(l, LOOK_LINE_LEN, "Injuries: %d wound%s, %d frostbite%s", ch->wounds,
	     plural(ch->wounds), ch->frost, plural(ch->frost));
	if (hurt >= 2)
		addf(l, LOOK_LINE_LEN, " -- one more injury kills");
	if (ch->frost > 0)
		LINEF(out, "Each frostbite adds a wound at the start of its owner's turn: "
		           "heal it (medicine, heal)");
}

static void describe_character(const struct model *m, int c, struct look_text *out)
{
	const struct model_character *ch = &m->chars[c];
	char *l = line(out);
	addf(l, LOOK_LINE_LEN, "%s (#%d): ", model_char_name(m, c), ch->id);
	if (!ch->spawned)
		addf(l, LOOK_LINE_LEN, "not in play");
	else if (!ch->alive)
		addf(l, LOOK_LINE_LEN, "%s's, %s", player_of(m, ch->owner),
		     ch->bitten ? "died of a bite" : "died");
	else
		addf(l, LOOK_LINE_LEN, "%s's, at %s%s", player_of(m, ch->owner),
		     model_loc_name(m, ch->loc), ch->moved ? ", moved this round" : "");
	LINEF(out, "attack: needs a die of %d or more; search: %d or more", ch->attack, ch->search);
	LINEF(out, "Social status %d: the lowest status here dies first to zombies and bites",
	      ch->status);
	char ab[LOOK_LINE_LEN];
	look_ability(m, c, ab, sizeof ab);
	LINEF(out, "Ability: %s", ab);
	if (!ch->alive)
		return;
	describe_injuries(ch, out);
	if (ch->nequip > 0) {
		char *e = line(out);
		addf(e, LOOK_LINE_LEN, "Wears:");
		for (int i = 0; i < ch->nequip; i++) {
			char lab[64];
			model_card_label(m, ch->equip[i], lab, sizeof lab);
			addf(e, LOOK_LINE_LEN, " %s%s", lab, ch->equip_spent[i] ? " (spent)" : "");
		}
	}
}

/* ---- locations ---------------------------------------------------------------------- */

static int colony_people(const struct model *m)
{
	return model_chars_at(m, m->colony) + m->children;
}

/* the zombies the colony phase brings to l (counted now) */
static int zombies_coming(const struct model *m, int l)
{
	if (l == m->colony)
		return (colony_people(m) + 1) / 2;
	return model_chars_at(m, l);
}

/* the character with the lowest social status at l, -1 none */
static int weakest_at(const struct model *m, int l)
{
	int w = -1;
	for (int c = 0; c < m->nchars; c++)
		if (m->chars[c].alive && m->chars[c].loc == l &&
		    (w < 0 || m->chars[c].status < m->chars[w].status))
			w = c;
	return w;
}

static void describe_entrance(const struct model *m, int l, int e, struct look_text *out)
{
	const struct model_location *L = &m->locs[l];
	int z = L->zombies[e], b = L->barricades[e];
	char *s = line(out);
	addf(s, LOOK_LINE_LEN, "Entrance %d: %d zombie%s, %d barricade%s", e, z, plural(z), b,
	     plural(b));
	if (z + b < 3)
		addf(s, LOOK_LINE_LEN, ", %d free space%s", 3 - z - b, plural(3 - z - b));
	else if (b > 0)
		addf(s, LOOK_LINE_LEN, " -- full: the next zombie breaks a barricade");
	else if (l == m->colony && m->children > 0)
		addf(s, LOOK_LINE_LEN, " -- full: the next zombie kills a child");
	else if (weakest_at(m, l) >= 0)
		addf(s, LOOK_LINE_LEN, " -- full: the next zombie kills %s",
		     model_char_name(m, weakest_at(m, l)));
	else
		addf(s, LOOK_LINE_LEN, " -- full");
}

static void describe_location(const struct model *m, int l, struct look_text *out)
{
	const struct model_location *L = &m->locs[l];
	int here = model_chars_at(m, l);
	if (L->colony)
		LINEF(out,
		      "%s (#%d): %d character%s and %d child%s; eats %d food each colony phase",
		      model_loc_name(m, l), L->id, here, plural(here), m->children,
		      m->children == 1 ? "" : "ren", model_food_need(m));
	else
		LINEF(out, "%s (#%d): %d of %d places taken; %d of %d cards left to search",
		      model_loc_name(m, l), L->id, here, L->spaces, L->deck_left, L->deck_size);
	if (here > 0) {
		char *s = line(out);
		addf(s, LOOK_LINE_LEN, "Here:");
		const char *sep = " ";
		for (int c = 0; c < m->nchars; c++)
			if (m->chars[c].alive && m->chars[c].loc == l) {
				addf(s, LOOK_LINE_LEN, "%s%s (%s, status %d)", sep,
				     model_char_name(m, c), player_of(m, m->chars[c].owner),
				     m->chars[c].status);
				sep = ", ";
			}
	}
	for (int e = 0; e < L->entrances && e < 8; e++)
		describe_entrance(m, l, e, out);
	int n = zombies_coming(m, l);
	if (L->colony)
		LINEF(out,
		      "Each colony phase %d zombie%s come (half the people here, children too, "
		      "rounded up)",
		      n, plural(n));
	else
		LINEF(out, "Each colony phase %d zombie%s come (one per character here)", n,
		      plural(n));
}

/* ---- cards -------------------------------------------------------------------------- */

static const char *crisis_type_words(enum model_card_type t)
{
	switch (t) {
	case MODEL_CARD_FOOD:
		return "a FOOD crisis";
	case MODEL_CARD_FUEL:
		return "a FUEL crisis";
	case MODEL_CARD_MEDICINE:
		return "a MEDICINE crisis";
	default:
		return "a STUFF crisis";
	}
}

/* what playing card k does, in words */
static const char *card_effect(const struct model *m, int k, char *buf, size_t n)
{
	const struct model_card *cd = &m->cards[k];
	switch (cd->type) {
	case MODEL_CARD_FOOD:
		snprintf(buf, n, "+%d food", cd->amount);
		break;
	case MODEL_CARD_STUFF:
		snprintf(buf, n, "rerolls your lowest die");
		break;
	case MODEL_CARD_MEDICINE:
		snprintf(buf, n,
		         "removes a frostbite, else a wound, of someone where your character is");
		break;
	case MODEL_CARD_LOCK:
		snprintf(buf, n, "one barricade at an entrance where your character is");
		break;
	case MODEL_CARD_SCISSORS:
		snprintf(buf, n,
		         "kills a zombie at an entrance where your character is, no infection "
		         "die");
		break;
	case MODEL_CARD_FUEL:
		snprintf(buf, n, "%s",
		         m->revised ? "moves a character without the infection die"
		                    : "played with a move (m, \"(fuel)\"): no infection die");
		break;
	case MODEL_CARD_HAMMER:
		snprintf(buf, n, "worn: barricading uses no die, once a round");
		break;
	case MODEL_CARD_SNOW_BOOTS:
		snprintf(buf, n, "worn: a frostbite rolled on a move becomes a wound");
		break;
	case MODEL_CARD_COLT:
		snprintf(buf, n, "worn: an attack rolls no infection die, once a round");
		break;
	case MODEL_CARD_SWAB:
		snprintf(buf, n,
		         "worn: cleaning waste removes 5 cards and uses no die, once a round");
		break;
	case MODEL_CARD_BLUEPRINT:
		snprintf(buf, n, "worn: a search at %s draws 2 cards, once a round",
		         cd->bp_loc >= 0 ? model_loc_name(m, cd->bp_loc) : "?");
		break;
	default:
		snprintf(buf, n, "?");
		break;
	}
	return buf;
}

/* the character wearing card k, -1 none */
static int wearer_of(const struct model *m, int k)
{
	for (int c = 0; c < m->nchars; c++)
		for (int i = 0; m->chars[c].alive && i < m->chars[c].nequip; i++)
			if (m->chars[c].equip[i] == k)
				return c;
	return -1;
}

static void describe_card(const struct model *m, int k, struct look_text *out)
{
	const struct model_card *cd = &m->cards[k];
	char lab[96], eff[160];
	model_card_label(m, k, lab, sizeof lab);
	int w = wearer_of(m, k);
	if (cd->holder >= 0 && cd->holder == m->me)
		LINEF(out, "%s: in your hand", lab);
	else if (cd->holder >= 0)
		LINEF(out, "%s: in %s's hand", lab, player_of(m, cd->holder));
	else if (w >= 0)
		LINEF(out, "%s: worn by %s", lab, model_char_name(m, w));
	else
		LINEF(out, "%s: %s", lab, cd->drawn ? "out of play" : "in a pile");
	card_effect(m, k, eff, sizeof eff);
	if (model_is_equipment(cd->type) && !m->revised)
		LINEF(out, "Equipment (%s); cannot be played in the base edition", eff);
	else
		LINEF(out, "Play it (u): %s", eff);
	if (cd->type != MODEL_CARD_FUEL || m->revised)
		LINEF(out, "%s",
		      model_is_equipment(cd->type)
		              ? "It stays on the character who wears it until that one dies"
		              : "A played card goes onto the waste pile (10 cost morale)");
	LINEF(out, "Contribute it (c): counts for %s", crisis_type_words(cd->type));
}

/* ---- the crisis --------------------------------------------------------------------- */

static void describe_crisis(const struct model *m, int i, struct look_text *out)
{
	const struct model_crisis *c = &m->crises[i];
	bool current = i == m->crisis;
	LINEF(out, "Crisis %d: %d %s card%s needed%s", c->id, c->required,
	      model_card_type_names[c->type], plural(c->required), current ? "" : " (not now)");
	if (current)
		LINEF(out, "Contributed so far: %d of %d", m->contributed, c->required);
	LINEF(out, "In the colony phase: fewer than %d contributed: morale -%d", c->required,
	      c->moral);
	LINEF(out, "%d or more contributed: morale +1", c->required + 2);
	if (c->type == MODEL_CARD_STUFF)
		LINEF(out, "Counts: stuff, lock, scissors and every equipment card");
	else
		LINEF(out, "Counts: %s cards only", model_card_type_names[c->type]);
	LINEF(out, "Contributed cards leave the game (not onto the waste pile)");
}

void look_describe(const struct model *m, enum look_kind kind, int index, struct look_text *out)
{
	out->n = 0;
	switch (kind) {
	case LOOK_CHARACTER:
		assert(index >= 0 && index < m->nchars);
		describe_character(m, index, out);
		break;
	case LOOK_LOCATION:
		assert(index >= 0 && index < m->nlocs);
		describe_location(m, index, out);
		break;
	case LOOK_CARD:
		assert(index >= 0 && index < m->ncards);
		describe_card(m, index, out);
		break;
	case LOOK_CRISIS:
		assert(index >= 0 && index < m->ncrises);
		describe_crisis(m, index, out);
		break;
	}
}

/* ---- the list ----------------------------------------------------------------------- */

static struct look_item *add_item(struct look_list *out, enum look_kind kind, int index)
{
	if (out->n >= LOOK_MAX_ITEMS)
		return NULL;
	struct look_item *it = &out->items[out->n++];
	it->kind = kind;
	it->index = index;
	it->label[0] = '\0';
	return it;
}

/* group 0: ours, 1: others' in play (living or dead), 2: not in play */
static int char_group(const struct model *m, int c)
{
	if (!m->chars[c].spawned)
		return 2;
	return m->me >= 0 && m->chars[c].owner == m->me ? 0 : 1;
}

static void list_characters(const struct model *m, struct look_list *out)
{
	for (int g = 0; g < 3; g++)
		for (int c = 0; c < m->nchars; c++) {
			if (char_group(m, c) != g)
				continue;
			struct look_item *it = add_item(out, LOOK_CHARACTER, c);
			if (!it)
				return;
			char stats[64];
			look_char_stats(m, c, stats, sizeof stats);
			const char *whose = g == 2               ? "not in play"
			                    : !m->chars[c].alive ? "dead"
			                                         : player_of(m, m->chars[c].owner);
			snprintf(it->label, sizeof it->label, "%s (%s): %s", model_char_name(m, c),
			         whose, stats);
		}
}

static void list_cards(const struct model *m, struct look_list *out)
{
	for (int mine = 1; mine >= 0; mine--)
		for (int k = 0; k < m->ncards; k++) {
			int w = wearer_of(m, k);
			bool ours = m->me >= 0 && m->cards[k].holder == m->me;
			if (ours != (mine == 1) || (m->cards[k].holder < 0 && w < 0))
				continue;
			struct look_item *it = add_item(out, LOOK_CARD, k);
			if (!it)
				return;
			char lab[96];
			model_card_label(m, k, lab, sizeof lab);
			if (ours)
				snprintf(it->label, sizeof it->label, "%s (your hand)", lab);
			else if (w >= 0)
				snprintf(it->label, sizeof it->label, "%s (worn by %s)", lab,
				         model_char_name(m, w));
			else
				snprintf(it->label, sizeof it->label, "%s (%s's hand)", lab,
				         player_of(m, m->cards[k].holder));
		}
}

int look_list_build(const struct model *m, struct look_list *out)
{
	out->n = 0;
	if (!m->got_config)
		return 0;
	if (m->crisis >= 0) {
		struct look_item *it = add_item(out, LOOK_CRISIS, m->crisis);
		const struct model_crisis *c = &m->crises[m->crisis];
		snprintf(it->label, sizeof it->label, "Crisis: %s %d/%d",
		         model_card_type_names[c->type], m->contributed, c->required);
	}
	for (int l = 0; l < m->nlocs; l++) {
		struct look_item *it = add_item(out, LOOK_LOCATION, l);
		if (it)
			snprintf(it->label, sizeof it->label, "%s", model_loc_name(m, l));
	}
	list_characters(m, out);
	list_cards(m, out);
	return out->n;
}

/* ---- dangers ------------------------------------------------------------------------ */

static char *danger(struct look_dangers *out)
{
	static char spill[120];
	if (out->n >= LOOK_MAX_DANGERS)
		return spill;
	return out->text[out->n++];
}

#define DANGERF(out, ...) snprintf(danger(out), sizeof out->text[0], __VA_ARGS__)

/* the morale the next colony phase takes if nothing changes */
static int colony_phase_cost(const struct model *m)
{
	int cost = m->tokens + (m->food < model_food_need(m) ? 1 : 0) + m->waste / 10;
	if (m->crisis >= 0 && m->contributed < m->crises[m->crisis].required)
		cost += m->crises[m->crisis].moral;
	return cost;
}

static void entrance_dangers(const struct model *m, struct look_dangers *out)
{
	for (int l = 0; l < m->nlocs; l++) {
		bool children = l == m->colony && m->children > 0;
		int w = weakest_at(m, l);
		if (!children && w < 0)
			continue;
		for (int e = 0; e < m->locs[l].entrances; e++)
			if (m->locs[l].zombies[e] >= 3 && m->locs[l].barricades[e] == 0)
				DANGERF(out, "%s e%d full: a new zombie kills %s",
				        model_loc_name(m, l), e,
				        children ? "a child" : model_char_name(m, w));
	}
}

static void character_dangers(const struct model *m, struct look_dangers *out)
{
	for (int c = 0; c < m->nchars; c++) {
		const struct model_character *ch = &m->chars[c];
		if (!ch->alive || m->me < 0 || ch->owner != m->me)
			continue;
		if (ch->wounds + ch->frost >= 2)
			DANGERF(out, "%s: one more injury kills", model_char_name(m, c));
		else if (ch->frost > 0)
			DANGERF(out, "%s: frostbite, a wound every turn", model_char_name(m, c));
	}
}

int look_dangers(const struct model *m, struct look_dangers *out)
{
	out->n = 0;
	if (!m->got_config || m->rounds_seen == 0 || m->result != MODEL_RUNNING)
		return 0;
	int cost = colony_phase_cost(m);
	if (cost >= m->moral)
		DANGERF(out, "Morale %d: the colony phase costs %d as things stand", m->moral,
		        cost);
	entrance_dangers(m, out);
	int need = model_food_need(m);
	if (m->food < need)
		DANGERF(out, "Food %d of %d: short, a starvation token (morale -%d each round)",
		        m->food, need, m->tokens + 1);
	else if (m->tokens > 0)
		DANGERF(out, "Starvation: %d token%s, morale -%d every colony phase", m->tokens,
		        plural(m->tokens), m->tokens);
	character_dangers(m, out);
	if (m->waste >= 10)
		DANGERF(out, "Waste %d: morale -%d every colony phase", m->waste, m->waste / 10);
	else if (m->waste >= 8)
		DANGERF(out, "Waste %d: at 10 it costs morale", m->waste);
	return out->n;
}
