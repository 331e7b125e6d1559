/*
 * menu: the commands possible now (menu.h). Each builder mirrors the checks
 * of rules.md section 6 that the board lets a client make in advance.
 */
#include "menu.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char menu_keys[ACT_COUNT] = {'S', 'p', 'm', 's', 'a', 'b', 'w', 'c', 'u', 'y', 'e', 'L'};
const char *const menu_names[ACT_COUNT] = {"Start",  "Pick",      "Move",        "Search",
                                           "Attack", "Barricade", "Clean waste", "Contribute",
                                           "Card",   "Ability",   "End turn",    "Leave"};

int menu_action_of_key(int ch)
{
	for (int k = 0; k < ACT_COUNT; k++)
		if (menu_keys[k] == ch)
			return k;
	return -1;
}

const char *menu_char_name(const struct model *m, int c)
{
	static char buf[4][32];
	static int slot;
	if (m->chars[c].name && *m->chars[c].name)
		return m->chars[c].name;
	char *b = buf[slot++ % 4];
	snprintf(b, sizeof buf[0], "#%d", m->chars[c].id);
	return b;
}

const char *menu_loc_name(const struct model *m, int l)
{
	if (m->locs[l].colony)
		return "Colony";
	return m->locs[l].name && *m->locs[l].name ? m->locs[l].name : "?";
}

void menu_card_label(const struct model *m, int k, char *buf, int n)
{
	const struct model_card *cd = &m->cards[k];
	if (cd->type == MODEL_CARD_FOOD)
		snprintf(buf, (size_t)n, "food(%d) #%d", cd->amount, cd->id);
	else if (cd->type == MODEL_CARD_BLUEPRINT && cd->bp_loc >= 0)
		snprintf(buf, (size_t)n, "blueprint(%s) #%d", menu_loc_name(m, cd->bp_loc), cd->id);
	else
		snprintf(buf, (size_t)n, "%s #%d", model_card_type_names[cd->type], cd->id);
}

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static void
add(struct menu *out, enum model_pending pend, int pend_char, const char *label, const char *fmt,
    ...)
{
	if (out->n >= MENU_MAX_ITEMS)
		return;
	struct menu_item *it = &out->items[out->n++];
	snprintf(it->label, sizeof it->label, "%s", label);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(it->cmd, sizeof it->cmd, fmt, ap);
	va_end(ap);
	it->pend = pend;
	it->pend_char = pend_char;
}

static bool mine(const struct model *m, int c)
{
	return m->chars[c].alive && m->chars[c].owner == m->me && m->me >= 0 &&
	       m->chars[c].loc >= 0;
}

static bool holds(const struct model *m, enum model_card_type t)
{
	for (int k = 0; k < m->ncards; k++)
		if (m->cards[k].holder == m->me && m->cards[k].type == t)
			return true;
	return false;
}

/* entrances of location l: want 0 with a zombie, 1 with a free space */
static bool entrance_ok(const struct model *m, int l, int e, int want)
{
	int z = m->locs[l].zombies[e], b = m->locs[l].barricades[e];
	return want == 0 ? z > 0 : z + b < 3;
}

static void build_select(const struct model *m, struct menu *out)
{
	for (int i = 0; i < 4; i++)
		for (int j = i + 1; j < 4; j++) {
			int a = model_find_char(m, m->offered[i]),
			    b = model_find_char(m, m->offered[j]);
			char label[120];
			snprintf(label, sizeof label, "%s + %s",
			         a >= 0 ? menu_char_name(m, a) : "?",
			         b >= 0 ? menu_char_name(m, b) : "?");
			add(out, MODEL_PEND_NONE, -1, label,
			    "{\"command\":\"SelectCharacters\",\"characterId0\":%d,"
			    "\"characterId1\":%d}",
			    m->offered[i], m->offered[j]);
		}
}

static void build_move(const struct model *m, int c, struct menu *out)
{
	const struct model_character *ch = &m->chars[c];
	if (ch->moved)
		return;
	bool fuel = !m->revised && holds(m, MODEL_CARD_FUEL);
	for (int l = 0; l < m->nlocs; l++) {
		if (l == ch->loc || !model_has_room(m, l))
			continue;
		char label[120];
		snprintf(label, sizeof label, "%s: %s -> %s", menu_char_name(m, c),
		         menu_loc_name(m, ch->loc), menu_loc_name(m, l));
		if (m->revised) {
			add(out, MODEL_PEND_NONE, -1, label,
			    "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d}", ch->id,
			    m->locs[l].id);
			continue;
		}
		add(out, MODEL_PEND_NONE, -1, label,
		    "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d,\"fuel\":false}",
		    ch->id, m->locs[l].id);
		if (fuel) {
			strncat(label, " (fuel)", sizeof label - strlen(label) - 1);
			add(out, MODEL_PEND_NONE, -1, label,
			    "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d,\"fuel\":"
			    "true}",
			    ch->id, m->locs[l].id);
		}
	}
}

static void build_search(const struct model *m, int c, struct menu *out)
{
	const struct model_character *ch = &m->chars[c];
	const struct model_location *L = &m->locs[ch->loc];
	if (L->colony || L->deck_left <= 0 || model_max_die(m) < ch->search)
		return;
	char label[120];
	snprintf(label, sizeof label, "%s searches %s (die >= %d, %d cards left)",
	         menu_char_name(m, c), menu_loc_name(m, ch->loc), ch->search, L->deck_left);
	add(out, MODEL_PEND_SEARCH, c, label, "{\"command\":\"Search\",\"characterId\":%d}",
	    ch->id);
}

static void build_entrances(const struct model *m, int c, struct menu *out, enum menu_action k)
{
	const struct model_character *ch = &m->chars[c];
	int l = ch->loc;
	if (k == ACT_ATTACK && model_max_die(m) < ch->attack)
		return;
	if (k == ACT_BARRICADE && m->ndice == 0 &&
	    !(m->revised && model_unspent_equip(m, c, MODEL_CARD_HAMMER) >= 0))
		return;
	for (int e = 0; e < m->locs[l].entrances; e++) {
		if (!entrance_ok(m, l, e, k == ACT_ATTACK ? 0 : 1))
			continue;
		char label[120];
		snprintf(label, sizeof label, "%s %s %s entrance %d (%dz %db)",
		         menu_char_name(m, c), k == ACT_ATTACK ? "attacks at" : "barricades",
		         menu_loc_name(m, l), e, m->locs[l].zombies[e], m->locs[l].barricades[e]);
		add(out, k == ACT_ATTACK ? MODEL_PEND_ATTACK : MODEL_PEND_BARRICADE, c, label,
		    "{\"command\":\"%s\",\"characterId\":%d,\"entrance\":%d}",
		    k == ACT_ATTACK ? "Attack" : "Barricade", ch->id, e);
	}
}

static void build_clean(const struct model *m, int c, struct menu *out)
{
	const struct model_character *ch = &m->chars[c];
	if (!m->locs[ch->loc].colony || m->waste <= 0 || m->ndice == 0 ||
	    (!m->revised && m->cleaned_this_round))
		return;
	char label[120];
	snprintf(label, sizeof label, "%s cleans waste (pile %d)", menu_char_name(m, c), m->waste);
	add(out, MODEL_PEND_CLEAN, c, label, "{\"command\":\"CleanWaste\",\"characterId\":%d}",
	    ch->id);
}

static void build_contribute(const struct model *m, struct menu *out)
{
	if (m->crisis < 0)
		return;
	for (int k = 0; k < m->ncards; k++) {
		if (m->cards[k].holder != m->me || !model_crisis_accepts(m, m->cards[k].type))
			continue;
		char label[120];
		menu_card_label(m, k, label, sizeof label);
		add(out, MODEL_PEND_NONE, -1, label,
		    "{\"command\":\"ContributeCard\",\"cardId\":%d}", m->cards[k].id);
	}
}

/* UseCard(k, c, target) with target a character at c's location */
static void card_on_chars(const struct model *m, int k, int c, bool injured, struct menu *out)
{
	for (int t = 0; t < m->nchars; t++) {
		const struct model_character *tc = &m->chars[t];
		if (!tc->alive || tc->loc != m->chars[c].loc ||
		    (injured && tc->wounds + tc->frost == 0))
			continue;
		char label[120], card[48];
		menu_card_label(m, k, card, sizeof card);
		snprintf(label, sizeof label, "%s: %s -> %s", card, menu_char_name(m, c),
		         menu_char_name(m, t));
		add(out, MODEL_PEND_NONE, -1, label,
		    "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,\"target\":%d}",
		    m->cards[k].id, m->chars[c].id, tc->id);
	}
}

static void card_on_entrances(const struct model *m, int k, int c, int want, struct menu *out)
{
	int l = m->chars[c].loc;
	for (int e = 0; e < m->locs[l].entrances; e++) {
		if (!entrance_ok(m, l, e, want))
			continue;
		char label[120], card[48];
		menu_card_label(m, k, card, sizeof card);
		snprintf(label, sizeof label, "%s: %s at %s entrance %d", card,
		         menu_char_name(m, c), menu_loc_name(m, l), e);
		add(out, MODEL_PEND_NONE, -1, label,
		    "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,\"target\":%d}",
		    m->cards[k].id, m->chars[c].id, e);
	}
}

static void card_fuel(const struct model *m, int k, int c, struct menu *out)
{
	if (!m->revised || m->chars[c].moved)
		return;
	for (int l = 0; l < m->nlocs; l++) {
		if (l == m->chars[c].loc || !model_has_room(m, l))
			continue;
		char label[120], card[48];
		menu_card_label(m, k, card, sizeof card);
		snprintf(label, sizeof label, "%s: %s -> %s", card, menu_char_name(m, c),
		         menu_loc_name(m, l));
		add(out, MODEL_PEND_NONE, -1, label,
		    "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,\"target\":%d}",
		    m->cards[k].id, m->chars[c].id, m->locs[l].id);
	}
}

static void build_card(const struct model *m, int k, struct menu *out)
{
	const struct model_card *cd = &m->cards[k];
	char label[120];
	menu_card_label(m, k, label, sizeof label);
	if (cd->type == MODEL_CARD_FOOD || (cd->type == MODEL_CARD_STUFF && m->ndice > 0)) {
		if (cd->type == MODEL_CARD_STUFF)
			strncat(label, ": reroll lowest die", sizeof label - strlen(label) - 1);
		add(out, MODEL_PEND_NONE, -1, label, "{\"command\":\"UseCard\",\"cardId\":%d}",
		    cd->id);
		return;
	}
	for (int c = 0; c < m->nchars; c++) {
		if (!mine(m, c))
			continue;
		if (cd->type == MODEL_CARD_MEDICINE)
			card_on_chars(m, k, c, true, out);
		else if (cd->type == MODEL_CARD_LOCK)
			card_on_entrances(m, k, c, 1, out);
		else if (cd->type == MODEL_CARD_SCISSORS)
			card_on_entrances(m, k, c, 0, out);
		else if (cd->type == MODEL_CARD_FUEL)
			card_fuel(m, k, c, out);
		else if (model_is_equipment(cd->type) && m->revised)
			card_on_chars(m, k, c, false, out);
	}
}

static void ability_on_entrances(const struct model *m, int c, int want, struct menu *out)
{
	const struct model_character *ch = &m->chars[c];
	for (int e = 0; e < m->locs[ch->loc].entrances; e++) {
		if (!entrance_ok(m, ch->loc, e, want))
			continue;
		char label[120];
		snprintf(label, sizeof label, "%s: %s at %s entrance %d", menu_char_name(m, c),
		         model_ability_names[ch->ability], menu_loc_name(m, ch->loc), e);
		add(out, want == 0 ? MODEL_PEND_KILL : MODEL_PEND_NONE, want == 0 ? c : -1, label,
		    "{\"command\":\"UseAbility\",\"characterId\":%d,\"target\":%d}", ch->id, e);
	}
}

static void build_ability(const struct model *m, int c, struct menu *out)
{
	const struct model_character *ch = &m->chars[c];
	char label[120];
	switch (ch->ability) {
	case MODEL_AB_FEED:
		if (ch->uses > 0)
			return;
		snprintf(label, sizeof label, "%s: feed (+%d food)", menu_char_name(m, c),
		         ch->ab_num);
		add(out, MODEL_PEND_NONE, -1, label,
		    "{\"command\":\"UseAbility\",\"characterId\":%d}", ch->id);
		return;
	case MODEL_AB_HEAL:
		if (ch->uses > 0)
			return;
		for (int t = 0; t < m->nchars; t++) {
			const struct model_character *tc = &m->chars[t];
			if (!tc->alive || tc->loc != ch->loc || tc->wounds + tc->frost == 0)
				continue;
			snprintf(label, sizeof label, "%s: heal %s", menu_char_name(m, c),
			         menu_char_name(m, t));
			add(out, MODEL_PEND_NONE, -1, label,
			    "{\"command\":\"UseAbility\",\"characterId\":%d,\"target\":%d}", ch->id,
			    tc->id);
		}
		return;
	case MODEL_AB_BARRICADE:
		if (ch->uses < ch->ab_max)
			ability_on_entrances(m, c, 1, out);
		return;
	case MODEL_AB_KILL:
		if (ch->uses < ch->ab_max && ch->loc == ch->ab_loc && m->ndice > 0 &&
		    model_max_die(m) >= ch->ab_die && (!ch->ab_children || m->children > 0))
			ability_on_entrances(m, c, 0, out);
		return;
	default:
		return; /* passive */
	}
}

static void build_per_char(const struct model *m, enum menu_action k, struct menu *out)
{
	for (int c = 0; c < m->nchars; c++) {
		if (!mine(m, c))
			continue;
		switch (k) {
		case ACT_MOVE:
			build_move(m, c, out);
			break;
		case ACT_SEARCH:
			build_search(m, c, out);
			break;
		case ACT_ATTACK:
		case ACT_BARRICADE:
			build_entrances(m, c, out, k);
			break;
		case ACT_CLEAN:
			build_clean(m, c, out);
			break;
		case ACT_ABILITY:
			build_ability(m, c, out);
			break;
		default:
			break;
		}
	}
}

int menu_build(const struct model *m, enum menu_action k, struct menu *out)
{
	out->kind = k;
	out->n = 0;
	if (!m->got_config || m->result != MODEL_RUNNING)
		return 0;
	if (k == ACT_START) {
		if (!m->game_started)
			add(out, MODEL_PEND_NONE, -1, "Start the game now",
			    "{\"command\":\"StartGame\"}");
		return out->n;
	}
	if (k == ACT_SELECT) {
		if (m->selecting)
			build_select(m, out);
		return out->n;
	}
	if (!m->my_turn)
		return 0;
	switch (k) {
	case ACT_CONTRIBUTE:
		build_contribute(m, out);
		break;
	case ACT_CARD:
		for (int i = 0; i < m->ncards; i++)
			if (m->cards[i].holder == m->me)
				build_card(m, i, out);
		break;
	case ACT_END:
		add(out, MODEL_PEND_NONE, -1, "End your turn", "{\"command\":\"EndTurn\"}");
		break;
	case ACT_LEAVE:
		add(out, MODEL_PEND_NONE, -1, "Leave the game (your characters die)",
		    "{\"command\":\"Leave\"}");
		break;
	default:
		build_per_char(m, k, out);
		break;
	}
	return out->n;
}
