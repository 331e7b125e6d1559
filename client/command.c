/*
 * command: the client library's command layer (command.h).
 *
 * client_view_of turns the model into the player's view; client_cmds_update
 * builds a game from it and asks the engine for the legal commands. The
 * commands' words are command_words.h's rows; the labels below are the
 * functions its rows name.
 */
#include "command.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command_words.h"
#include "describe.h"
#include "sopra/proto.h"

/* ---- the model as the player's view ---------------------------------------------- */

static enum game_view_phase phase_of(const struct model *m)
{
	if (m->result == MODEL_ABORTED || m->result == MODEL_WON || m->result == MODEL_LOST)
		return VIEW_OVER;
	if (!m->game_started)
		return VIEW_REGISTRATION;
	return m->rounds_seen == 0 ? VIEW_SELECTION : VIEW_TURNS;
}

/* The selection: the first player in the game without characters. */
static int choosing(const struct model *m)
{
	for (int p = 0; p < m->nplayers; p++)
		if (m->player_in[p] && model_living_of(m, p) == 0)
			return p;
	return -1;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Dice when the turn is ours: the players before us have ended their
 * turns, those after us hold what they rolled. */
static void view_dice(const struct model *m, struct game_view_player *vp, int p)
{
	vp->ndice = 0;
	if (p == m->me) {
		vp->ndice = m->ndice;
		memcpy(vp->dice, m->dice, (size_t)m->ndice * sizeof(int));
	} else if (p > m->me && m->player_in[p]) {
		vp->ndice = m->nrolled[p];
		memcpy(vp->dice, m->rolled[p], (size_t)m->nrolled[p] * sizeof(int));
	}
	qsort(vp->dice, (size_t)vp->ndice, sizeof vp->dice[0], cmp_int); /* the view's order */
}

static void view_players(const struct model *m, struct game_view *v)
{
	for (int p = 0; p < v->nplayers; p++) {
		struct game_view_player *vp = &v->players[p];
		vp->name = m->player_names[p];
		vp->in_game = m->player_in[p];
		vp->cleaned = v->turn_known && p == m->me && m->cleaned_this_round;
		vp->ndice = 0;
		if (v->turn_known)
			view_dice(m, vp, p);
		bool offered = v->phase == VIEW_SELECTION && p == m->me && m->selecting &&
		               v->waiting_for == p;
		for (int i = 0; i < 4; i++)
			vp->offered[i] = offered ? model_find_char(m, m->offered[i]) : -1;
	}
}

static void view_characters(const struct model *m, struct game_view *v)
{
	for (int c = 0; c < m->nchars; c++) {
		const struct model_character *ch = &m->chars[c];
		struct game_view_character *vc = &v->characters[c];
		bool ours_now = v->turn_known && ch->alive && ch->owner == m->me;
		vc->life = !ch->spawned ? VIEW_UNSPAWNED : ch->alive ? VIEW_ALIVE : VIEW_DEAD;
		vc->owner = ch->alive ? ch->owner : -1;
		vc->loc = ch->alive ? ch->loc : -1;
		vc->wounds = ch->alive ? ch->wounds : 0;
		vc->frostbites = ch->alive ? ch->frost : 0;
		vc->moved = ours_now && ch->moved;
		vc->uses = ours_now ? ch->uses : 0;
	}
	v->nspawned = m->nspawned;
	memcpy(v->spawn_order, m->spawn_order, (size_t)m->nspawned * sizeof(int));
}

static void view_cards(const struct model *m, struct game_view *v)
{
	for (int k = 0; k < m->ncards; k++) {
		const struct model_card *cd = &m->cards[k];
		struct game_view_card *vk = &v->cards[k];
		*vk = (struct game_view_card){VIEW_GONE, -1, 0, false};
		if (cd->holder >= 0)
			*vk = (struct game_view_card){VIEW_HAND, cd->holder, 0, false};
		else if (!cd->drawn && cd->deck >= 0 &&
		         (cd->deck != m->colony || m->rounds_seen == 0))
			*vk = (struct game_view_card){VIEW_PILE, cd->deck, 0, false};
	}
	for (int c = 0; c < m->nchars; c++) {
		const struct model_character *ch = &m->chars[c];
		for (int i = 0; ch->alive && i < ch->nequip; i++)
			v->cards[ch->equip[i]] = (struct game_view_card){
			        VIEW_EQUIPPED, c, i,
			        v->turn_known && ch->owner == m->me && ch->equip_spent[i]};
	}
	v->nwaste = m->waste;
	memcpy(v->waste, m->waste_pile, (size_t)m->waste * sizeof(int));
	for (int i = 0; i < m->waste; i++)
		v->cards[m->waste_pile[i]] = (struct game_view_card){VIEW_WASTE, -1, 0, false};
}

/* The board: before the turns the engine has not set it up yet (no
 * zombies, morale 0, no children), the model shows it as it will start. */
static void view_board(const struct model *m, struct game_view *v)
{
	bool set_up = m->rounds_seen > 0;
	v->food = m->food;
	v->moral = set_up ? m->moral : 0;
	v->starvation = m->tokens;
	v->children = set_up ? m->children : 0;
	v->contributed = m->contributed;
	v->round = m->rounds_seen;
	memcpy(v->crises, m->drawn, (size_t)m->rounds_seen * sizeof(int));
	v->crisis = m->rounds_seen > 0 ? m->drawn[m->rounds_seen - 1] : -1;
	for (int l = 0; l < m->nlocs; l++)
		for (int e = 0; e < m->locs[l].entrances; e++) {
			v->locations[l].zombies[e] = set_up ? m->locs[l].zombies[e] : 0;
			v->locations[l].barricades[e] = set_up ? m->locs[l].barricades[e] : 0;
		}
}

void client_view_of(const struct model *m, struct game_view *v)
{
	v->rules = m->revised ? RULES_REVISED : RULES_BASE;
	v->phase = phase_of(m);
	v->result = m->result == MODEL_WON       ? VIEW_WON
	            : m->result == MODEL_LOST    ? VIEW_LOST
	            : m->result == MODEL_ABORTED ? VIEW_ABORTED
	                                         : VIEW_RUNNING;
	bool before_start = !m->game_started;
	v->me = before_start ? GAME_NO_PLAYER : m->me;
	v->registered = before_start && m->my_name && m->got_config;
	switch (v->phase) {
	case VIEW_REGISTRATION:
		v->waiting_for = GAME_WAIT_ANY;
		break;
	case VIEW_SELECTION:
		v->waiting_for = choosing(m);
		break;
	case VIEW_TURNS:
		v->waiting_for = m->my_turn && m->me >= 0 ? m->me : GAME_VIEW_SOMEONE_ELSE;
		break;
	case VIEW_OVER:
		v->waiting_for = GAME_WAIT_NONE;
		break;
	}
	v->turn_known = v->phase == VIEW_TURNS && v->waiting_for == m->me && m->me >= 0;
	v->nplayers = before_start ? 0 : m->nplayers;
	view_board(m, v);
	view_players(m, v);
	view_characters(m, v);
	view_cards(m, v);
}

/* ---- the legal commands -------------------------------------------------------------- */

void client_cmds_init(struct client_cmds *cc)
{
	memset(cc, 0, sizeof *cc);
	game_cmd_list_init(&cc->legal);
	cc->seat = GAME_NO_PLAYER;
}

void client_cmds_free(struct client_cmds *cc)
{
	game_free(cc->game);
	game_view_free(cc->view);
	config_free(cc->cfg);
	game_cmd_list_free(&cc->legal);
	memset(cc, 0, sizeof *cc);
}

/* The engine's parse of the model's Config text, once. */
static int load_config(struct client_cmds *cc, const struct model *m, char *err, size_t errlen)
{
	if (cc->cfg)
		return 0;
	struct config_errors errs = {0};
	cc->cfg = config_parse(m->config_text, strlen(m->config_text), &errs);
	if (!cc->cfg) {
		snprintf(err, errlen, "the game engine cannot read the Config: %s",
		         errs.n ? errs.msgs[0] : "?");
		config_errors_free(&errs);
		return -1;
	}
	cc->view = game_view_new(cc->cfg);
	return 0;
}

int client_cmds_update(struct client_cmds *cc, const struct model *m, char *err, size_t errlen)
{
	game_cmd_list_clear(&cc->legal);
	game_free(cc->game);
	cc->game = NULL;
	cc->seat = GAME_NO_PLAYER;
	snprintf(cc->why_none, sizeof cc->why_none, "no Config yet");
	if (!m->got_config) {
		struct cmd reg;
		if (m->my_name && m->result == MODEL_RUNNING &&
		    client_command_with(CLIENT_REGISTERS, &reg)) {
			reg.name = m->my_name;
			*game_cmd_list_push(&cc->legal, reg.type) = reg;
		}
		return 0;
	}
	if (load_config(cc, m, err, errlen) != 0)
		return -1;
	snprintf(cc->why_none, sizeof cc->why_none, "half way through a step");
	if (!model_settled(m))
		return 0; /* nothing to send until the step's events are all in */
	client_view_of(m, cc->view);
	/* NULL when the view is no state of a game: between the last selection
	 * and the first round, or the end of our turn sent and its answer not come */
	cc->game = game_from_view(cc->view, 1);
	if (!cc->game) {
		if (!game_view_check(cc->view, cc->why_none, sizeof cc->why_none))
			snprintf(cc->why_none, sizeof cc->why_none, "a card in the wrong pile");
		return 0;
	}
	cc->why_none[0] = '\0';
	cc->seat = game_view_seat(cc->view);
	game_legal_commands(cc->game, cc->seat, &cc->legal);
	return 0;
}

const char *client_cmds_refusal(const struct client_cmds *cc, const struct cmd *c)
{
	if (!cc->game)
		return "no game yet";
	struct game *g = game_clone(cc->game);
	struct game_event_list ev;
	game_event_list_init(&ev);
	game_apply(g, cc->seat, c, &ev);
	const char *why = NULL;
	for (size_t i = 0; i < ev.n && !why; i++) {
		if (ev.v[i].type == GEV_COMMAND_FAILED)
			why = ev.v[i].str; /* static: the game's message table */
		else if (ev.v[i].type == GEV_REGISTRATION_ABORTED)
			why = "aborts the registration";
	}
	game_event_list_free(&ev);
	game_free(g);
	return why;
}

/* ---- sending ------------------------------------------------------------------------- */

/* b's line into buf (n bytes), NUL-terminated, and b freed; its length,
 * or -1 when it does not fit. */
static int line_out(struct proto_buf *b, char *buf, size_t n)
{
	int len = b->len < n ? (int)b->len : -1;
	if (len >= 0) {
		memcpy(buf, b->data, b->len);
		buf[len] = '\0';
	}
	proto_buf_free(b);
	return len;
}

int client_cmd_line(const struct cmd *c, bool revised, char *buf, size_t n)
{
	struct proto_buf b;
	proto_buf_init(&b);
	proto_encode_cmd(c, revised ? RULES_REVISED : RULES_BASE, &b);
	return line_out(&b, buf, n);
}

int client_reconnect_line(const char *secret, char *buf, size_t n)
{
	if (!*secret || strspn(secret, "0123456789abcdef") != strlen(secret))
		return -1;
	struct proto_buf b;
	proto_buf_init(&b);
	proto_encode_reconnect(secret, &b);
	return line_out(&b, buf, n);
}

/* ---- the commands in the client's words ---------------------------------------------- */

/* A menu item's label for c (command_words.h's label column). */
typedef void label_fn(const struct model *m, const struct cmd *c, char *buf, size_t n);

struct words {
	struct client_command command; /* what client_command tells */
	label_fn *label;
};

/* The label functions the rows name (below). */
static label_fn label_register, label_start_game, label_select, label_leave, label_end_turn,
        label_move, label_search, label_attack, label_barricade, label_clean, label_contribute,
        label_card, label_ability;

static const struct words words[CMD_TYPE_COUNT] = {
#define WORDS(id, key, menu, weight, flags, pending, label, score) \
	[CMD_##id] = {{key, menu, weight, flags, MODEL_PEND_##pending}, label},
        CLIENT_COMMAND_WORDS(WORDS)
#undef WORDS
};

/* The command types of the rows, in their order: the menus' order. */
static const enum cmd_type row_order[] = {
#define ROW_TYPE(id, ...) CMD_##id,
        CLIENT_COMMAND_WORDS(ROW_TYPE)
#undef ROW_TYPE
};

const struct client_command *client_command(enum cmd_type t)
{
	return (unsigned)t < CMD_TYPE_COUNT ? &words[t].command : NULL;
}

const enum cmd_type *client_menu_order(int *n)
{
	/* the rows with a key: the first ones (command_words.h) */
	int keyed = 0;
	while (keyed < (int)(sizeof row_order / sizeof row_order[0]) &&
	       words[row_order[keyed]].command.key)
		keyed++;
	*n = keyed;
	return row_order;
}

bool client_command_with(unsigned flag, struct cmd *out)
{
	for (int t = 0; t < CMD_TYPE_COUNT; t++)
		if (words[t].command.flags & flag) {
			memset(out, 0, sizeof *out);
			out->type = (enum cmd_type)t;
			return true;
		}
	return false;
}

bool client_same_choice(const struct cmd *a, const struct cmd *b)
{
	if (a->type != b->type)
		return false;
	bool same = a->location == b->location && a->entrance == b->entrance &&
	            a->card == b->card && a->has_target == b->has_target && a->fuel == b->fuel &&
	            (!a->has_target || a->target == b->target);
	bool pair = a->character == b->character && a->character2 == b->character2;
	const struct client_command *row = client_command(a->type);
	bool swapped = row && (row->flags & CLIENT_UNORDERED) && a->character == b->character2 &&
	               a->character2 == b->character;
	return same && (pair || swapped);
}

void client_sent(struct model *m, const struct cmd *c)
{
	const struct client_command *row = client_command(c->type);
	if (row && (row->flags & CLIENT_ENDS_TURN)) {
		model_end_my_turn(m);
		return;
	}
	int ch = model_find_char(m, c->character);
	enum model_pending pend = row ? row->pending : MODEL_PEND_NONE;
	if (pend == MODEL_PEND_KILL && (ch < 0 || m->chars[ch].ability != MODEL_AB_KILL))
		pend = MODEL_PEND_NONE; /* an ability other than the kill: no die awaited */
	model_set_pending(m, ch >= 0 ? pend : MODEL_PEND_NONE, ch);
}

/* ---- labels -------------------------------------------------------------------------- */

static const char *loc_name_of_id(const struct model *m, int id)
{
	int l = model_find_loc(m, id);
	return l >= 0 ? model_loc_name(m, l) : "?";
}

static const char *char_name_of_id(const struct model *m, int id)
{
	int c = model_find_char(m, id);
	return c >= 0 ? model_char_name(m, c) : "?";
}

/* "Anna + Ben", in the order they were offered (the same for both orders) */
static void label_select(const struct model *m, const struct cmd *c, char *buf, size_t n)
{
	int a = c->character, b = c->character2;
	for (int i = 0; i < 4; i++)
		if (m->offered[i] == b) {
			int t = a;
			a = b;
			b = t;
			break;
		} else if (m->offered[i] == a) {
			break;
		}
	snprintf(buf, n, "%s + %s", char_name_of_id(m, a), char_name_of_id(m, b));
}

static void label_entrance(const struct model *m, const struct cmd *c, const char *verb,
                           bool attack, char *buf, size_t n)
{
	int ch = model_find_char(m, c->character);
	int l = ch >= 0 ? m->chars[ch].loc : -1;
	if (l < 0 || c->entrance < 0 || c->entrance >= m->locs[l].entrances) {
		snprintf(buf, n, "%s %s entrance %d", char_name_of_id(m, c->character), verb,
		         c->entrance);
		return;
	}
	char die[24] = "";
	if (attack) /* the threshold, as the label of a search shows its own */
		snprintf(die, sizeof die, ", die >= %d", m->chars[ch].attack);
	snprintf(buf, n, "%s %s %s entrance %d (%dz %db%s)", char_name_of_id(m, c->character), verb,
	         model_loc_name(m, l), c->entrance, m->locs[l].zombies[c->entrance],
	         m->locs[l].barricades[c->entrance], die);
}

static void label_move(const struct model *m, const struct cmd *c, char *buf, size_t n)
{
	int ch = model_find_char(m, c->character);
	snprintf(buf, n, "%s: %s -> %s%s", char_name_of_id(m, c->character),
	         ch >= 0 && m->chars[ch].loc >= 0 ? model_loc_name(m, m->chars[ch].loc) : "?",
	         loc_name_of_id(m, c->location), c->fuel ? " (fuel)" : "");
}

static void label_search(const struct model *m, const struct cmd *c, char *buf, size_t n)
{
	int ch = model_find_char(m, c->character);
	int l = ch >= 0 ? m->chars[ch].loc : -1;
	snprintf(buf, n, "%s searches %s (die >= %d, %d cards left)",
	         char_name_of_id(m, c->character), l >= 0 ? model_loc_name(m, l) : "?",
	         ch >= 0 ? m->chars[ch].search : 0, l >= 0 ? m->locs[l].deck_left : 0);
}

/* Playing a card: the card, and what it is played on */
static void label_card(const struct model *m, const struct cmd *c, char *buf, size_t n)
{
	char card[64];
	int k = model_find_card(m, c->card);
	if (k < 0) {
		snprintf(buf, n, "card %d", c->card);
		return;
	}
	model_card_label(m, k, card, sizeof card);
	enum model_card_type t = m->cards[k].type;
	if (!c->has_target) {
		snprintf(buf, n, "%s%s", card, t == MODEL_CARD_STUFF ? ": reroll lowest die" : "");
		return;
	}
	int ch = model_find_char(m, c->character);
	int l = ch >= 0 ? m->chars[ch].loc : -1;
	const char *who = char_name_of_id(m, c->character);
	if (t == MODEL_CARD_LOCK || t == MODEL_CARD_SCISSORS)
		snprintf(buf, n, "%s: %s at %s entrance %d", card, who,
		         l >= 0 ? model_loc_name(m, l) : "?", c->target);
	else if (t == MODEL_CARD_FUEL)
		snprintf(buf, n, "%s: %s -> %s", card, who, loc_name_of_id(m, c->target));
	else
		snprintf(buf, n, "%s: %s -> %s", card, who, char_name_of_id(m, c->target));
}

static void label_ability(const struct model *m, const struct cmd *c, char *buf, size_t n)
{
	int ch = model_find_char(m, c->character);
	const char *who = char_name_of_id(m, c->character);
	if (ch < 0) {
		snprintf(buf, n, "%s: ability", who);
		return;
	}
	const struct model_character *x = &m->chars[ch];
	switch (x->ability) {
	case MODEL_AB_FEED:
		snprintf(buf, n, "%s: feed (+%d food)", who, x->ab_num);
		break;
	case MODEL_AB_HEAL:
		snprintf(buf, n, "%s: heal %s", who, char_name_of_id(m, c->target));
		break;
	default:
		snprintf(buf, n, "%s: %s at %s entrance %d", who, model_ability_names[x->ability],
		         x->loc >= 0 ? model_loc_name(m, x->loc) : "?", c->target);
		break;
	}
}

static void label_register(const struct model *m, const struct cmd *c, char *buf, size_t n)
{
	(void)m; /* "<menu> as NAME" */
	snprintf(buf, n, "%s as %s", client_command(c->type)->menu, c->name ? c->name : "");
}

static void label_start_game(const struct model *m, const struct cmd *c, char *buf, size_t n)
{
	(void)m, (void)c;
	snprintf(buf, n, "Start the game now");
}

static void label_leave(const struct model *m, const struct cmd *c, char *buf, size_t n)
{
	(void)m, (void)c;
	snprintf(buf, n, "%s the game (your characters die)", client_command(c->type)->menu);
}

static void label_end_turn(const struct model *m, const struct cmd *c, char *buf, size_t n)
{
	(void)m, (void)c;
	snprintf(buf, n, "End your turn");
}

static void label_attack(const struct model *m, const struct cmd *c, char *buf, size_t n)
{
	label_entrance(m, c, "attacks at", true, buf, n);
}

static void label_barricade(const struct model *m, const struct cmd *c, char *buf, size_t n)
{
	label_entrance(m, c, "barricades", false, buf, n);
}

static void label_clean(const struct model *m, const struct cmd *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s cleans waste (pile %d)", char_name_of_id(m, c->character), m->waste);
}

static void label_contribute(const struct model *m, const struct cmd *c, char *buf, size_t n)
{
	char card[64];
	int k = model_find_card(m, c->card);
	if (k >= 0)
		model_card_label(m, k, card, sizeof card);
	else
		snprintf(card, sizeof card, "card %d", c->card);
	snprintf(buf, n, "%s", card);
}

void client_cmd_label(const struct model *m, const struct cmd *c, char *buf, size_t n)
{
	const struct client_command *row = client_command(c->type);
	if (row && words[c->type].label) {
		words[c->type].label(m, c, buf, n);
		return;
	}
	/* a command without words: its wire form */
	if (client_cmd_line(c, m->revised, buf, n) > 0)
		buf[strcspn(buf, "\n")] = '\0';
}
