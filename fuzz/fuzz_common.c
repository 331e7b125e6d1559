/*
 * Shared code of the fuzz targets: failure reporting, an independent UTF-8
 * check, the check of one encoded event line, and fuzz_session, a client's
 * view of a running game that checks every step (see fuzz_common.h).
 */
#include "fuzz_common.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

const char *fuzz_current_input = NULL;

bool fuzz_verbose(void)
{
	static int v = -1;
	if (v < 0)
		v = getenv("FUZZ_VERBOSE") != NULL;
	return v != 0;
}

_Noreturn void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "\n==== fuzz check failed at %s:%d: %s\n     ", file, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (fuzz_current_input)
		fprintf(stderr, "     input: %s\n", fuzz_current_input);
	fflush(stderr);
	abort();
}

const char *fuzz_printable(const char *s, size_t n)
{
	static char buf[1300];
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (o > 1200) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(buf + o, sizeof buf - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	buf[o] = '\0';
	return buf;
}

/* ---- UTF-8 --------------------------------------------------------------- */

size_t fuzz_utf8_seq(const unsigned char *s, size_t n)
{
	if (n == 0)
		return 0;
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	unsigned long cp;
	if ((c & 0xE0) == 0xC0) {
		len = 2;
		cp = c & 0x1F;
	} else if ((c & 0xF0) == 0xE0) {
		len = 3;
		cp = c & 0x0F;
	} else if ((c & 0xF8) == 0xF0) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	static const unsigned long min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
	if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

bool fuzz_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	while (n > 0) {
		size_t k = fuzz_utf8_seq(p, n);
		if (k == 0)
			return false;
		p += k;
		n -= k;
	}
	return true;
}

char *fuzz_wire_string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	char *out = xmalloc(3 * n + 1);
	size_t o = 0;
	while (n > 0) {
		size_t k = fuzz_utf8_seq(p, n);
		if (k == 0) {
			memcpy(out + o, "\xEF\xBF\xBD", 3); /* U+FFFD */
			o += 3;
			k = 1;
		} else {
			memcpy(out + o, p, k);
			o += k;
		}
		p += k;
		n -= k;
	}
	out[o] = '\0';
	return out;
}

/* ---- one encoded line ----------------------------------------------------- */

void fuzz_check_event_line(const char *line, size_t len, const struct game_event *ev,
                           const char *str_key, const char *want_str)
{
	const char *name = game_event_name(ev->type);
	FUZZ_CHECK(len >= 2 && line[len - 1] == '\n', "%s: encoded line does not end with \\n",
	           name);
	FUZZ_CHECK(memchr(line, '\n', len - 1) == NULL, "%s: encoded line has an inner \\n: %.*s",
	           name, (int)len, line);
	FUZZ_CHECK(fuzz_utf8_valid(line, len), "%s: encoded line is not valid UTF-8: %.*s", name,
	           (int)len, line);

	/* whitespace only inside strings; no raw control characters anywhere */
	bool in_str = false;
	for (size_t i = 0; i + 1 < len; i++) {
		unsigned char c = (unsigned char)line[i];
		FUZZ_CHECK(c >= 0x20, "%s: raw control character 0x%02x at %zu: %.*s", name, c, i,
		           (int)len, line);
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else {
			FUZZ_CHECK(c != ' ' && c != '\t', "%s: whitespace between tokens: %.*s",
			           name, (int)len, line);
		}
	}
	FUZZ_CHECK(!in_str, "%s: unterminated string: %.*s", name, (int)len, line);

	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(line, len - 1, &end, 0);
	FUZZ_CHECK(root != NULL, "%s: encoded line is not JSON: %.*s", name, (int)len, line);
	FUZZ_CHECK(end == line + len - 1, "%s: trailing bytes after the JSON object: %.*s", name,
	           (int)len, line);
	FUZZ_CHECK(cJSON_IsObject(root), "%s: not a JSON object: %.*s", name, (int)len, line);
	const cJSON *first = root->child;
	FUZZ_CHECK(first && first->string && strcmp(first->string, "event") == 0 &&
	                   cJSON_IsString(first) && strcmp(first->valuestring, name) == 0,
	           "%s: \"event\" is not the first key with the event's name: %.*s", name, (int)len,
	           line);
	for (const cJSON *it = first->next; it; it = it->next) {
		FUZZ_CHECK(it->string && *it->string, "%s: member without a key", name);
		for (const cJSON *o = root->child; o != it; o = o->next)
			FUZZ_CHECK(strcmp(o->string, it->string) != 0, "%s: duplicate key %s: %.*s",
			           name, it->string, (int)len, line);
		if (cJSON_IsNumber(it)) {
			double d = it->valuedouble;
			FUZZ_CHECK(isfinite(d) && d == floor(d) && d >= INT_MIN && d <= INT_MAX,
			           "%s.%s: not a 32-bit integer: %.*s", name, it->string, (int)len,
			           line);
		} else {
			FUZZ_CHECK(cJSON_IsBool(it) || cJSON_IsString(it),
			           "%s.%s: value is neither integer, boolean nor string: %.*s",
			           name, it->string, (int)len, line);
		}
	}
	if (str_key) {
		const cJSON *sv = cJSON_GetObjectItemCaseSensitive(root, str_key);
		FUZZ_CHECK(cJSON_IsString(sv), "%s: no string \"%s\": %.*s", name, str_key,
		           (int)len, line);
		if (want_str)
			FUZZ_CHECK(strcmp(sv->valuestring, want_str) == 0,
			           "%s.%s does not round-trip: sent \"%s\", decoded \"%s\"", name,
			           str_key, want_str, sv->valuestring);
	}
	cJSON_Delete(root);
}

void fuzz_encode_and_check(const struct game_event *ev, enum game_rules rules,
                           struct proto_buf *buf, const char *str_key, const char *want_str)
{
	proto_buf_reset(buf);
	proto_encode(ev, rules, buf);
	if (fuzz_verbose())
		fprintf(stderr, "    -> to %d: %.*s", ev->to, (int)buf->len, buf->data);
	fuzz_check_event_line(buf->data, buf->len, ev, str_key, want_str);
}

/* ---- session ------------------------------------------------------------- */

static int *id_list(const void *recs, size_t stride, size_t off, int n)
{
	int *v = xcalloc((size_t)n, sizeof(int));
	for (int i = 0; i < n; i++)
		memcpy(&v[i], (const char *)recs + (size_t)i * stride + off, sizeof(int));
	return v;
}

void fuzz_session_init(struct fuzz_session *s, const struct config *cfg, int64_t seed,
                       enum game_rules rules)
{
	memset(s, 0, sizeof *s);
	s->cfg = cfg;
	s->rules = rules;
	s->g = game_new(cfg, seed, rules);
	FUZZ_CHECK(s->g != NULL, "game_new failed");
	game_event_list_init(&s->ev);
	proto_buf_init(&s->buf);
	s->pl = xcalloc((size_t)cfg->max_players, sizeof *s->pl);
	for (int p = 0; p < cfg->max_players; p++) {
		s->pl[p].chars = xcalloc((size_t)cfg->ncharacters, sizeof(int));
		s->pl[p].cards = xcalloc((size_t)cfg->ncards, sizeof(int));
	}
	s->char_ids = id_list(cfg->characters, sizeof *cfg->characters,
	                      offsetof(struct config_character, id), cfg->ncharacters);
	s->card_ids = id_list(cfg->cards, sizeof *cfg->cards, offsetof(struct config_card, id),
	                      cfg->ncards);
	s->loc_ids = id_list(cfg->locations, sizeof *cfg->locations,
	                     offsetof(struct config_location, id), cfg->nlocations);
	s->drawn = xcalloc((size_t)cfg->ncards, 1);
	if (fuzz_verbose())
		fprintf(stderr, "session: seed %lld, rules %s, maxPlayers %d\n", (long long)seed,
		        game_rules_name(rules), cfg->max_players);
}

void fuzz_session_free(struct fuzz_session *s)
{
	game_free(s->g);
	game_event_list_free(&s->ev);
	proto_buf_free(&s->buf);
	for (int p = 0; p < s->cfg->max_players; p++) {
		free(s->pl[p].chars);
		free(s->pl[p].cards);
	}
	free(s->pl);
	free(s->char_ids);
	free(s->card_ids);
	free(s->loc_ids);
	free(s->drawn);
	memset(s, 0, sizeof *s);
}

bool fuzz_connected(const struct fuzz_session *s, int p)
{
	return p >= 0 && p < s->nplayers && !s->pl[p].left && !s->pl[p].disconnected;
}

int fuzz_connected_count(const struct fuzz_session *s)
{
	int n = 0;
	for (int p = 0; p < s->nplayers; p++)
		n += fuzz_connected(s, p);
	return n;
}

int fuzz_connected_nth(const struct fuzz_session *s, int i)
{
	int n = fuzz_connected_count(s);
	if (n == 0)
		return -1;
	i %= n;
	if (i < 0)
		i += n;
	for (int p = 0; p < s->nplayers; p++)
		if (fuzz_connected(s, p) && i-- == 0)
			return p;
	return -1;
}

int fuzz_auto_sender(const struct fuzz_session *s, enum cmd_type type)
{
	int w = game_waiting_for(s->g);
	if (w >= 0)
		return w;
	if (w == GAME_WAIT_ANY && type != CMD_REGISTER)
		for (int p = s->nplayers - 1; p >= 0; p--)
			if (fuzz_connected(s, p))
				return p;
	return GAME_NO_PLAYER;
}

static int list_find(const int *v, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return i;
	return -1;
}

static bool list_remove(int *v, int *n, int x)
{
	int i = list_find(v, *n, x);
	if (i < 0)
		return false;
	v[i] = v[--*n];
	return true;
}

static bool is_char_id(const struct fuzz_session *s, int id)
{
	return list_find(s->char_ids, s->cfg->ncharacters, id) >= 0;
}

static int card_idx(const struct fuzz_session *s, int id)
{
	return list_find(s->card_ids, s->cfg->ncards, id);
}

static int loc_idx(const struct fuzz_session *s, int id)
{
	return list_find(s->loc_ids, s->cfg->nlocations, id);
}

/* The player whose living characters include id, or -1. */
static int char_owner(const struct fuzz_session *s, int id)
{
	for (int p = 0; p < s->nplayers; p++)
		if (list_find(s->pl[p].chars, s->pl[p].nchars, id) >= 0)
			return p;
	return -1;
}

/* A character died: forget it; an owner left without characters loses the
 * hand (section 7), so forget the cards we thought it held. */
static void char_died(struct fuzz_session *s, const char *ev, int id)
{
	int p = char_owner(s, id);
	FUZZ_CHECK(p >= 0, "%s(%d): the character is not alive", ev, id);
	list_remove(s->pl[p].chars, &s->pl[p].nchars, id);
	if (s->pl[p].nchars == 0)
		s->pl[p].ncards = 0;
}

static void nargs_allowed(const struct fuzz_session *s, enum game_event_type t, int *lo, int *hi)
{
	static const signed char n[GAME_EVENT_TYPE_COUNT] = {
	        [GEV_CONFIG] = 0,
	        [GEV_ACT_NOW] = 0,
	        [GEV_CHARACTERS] = 4,
	        [GEV_COMMAND_FAILED] = 0,
	        [GEV_REGISTRATION_ABORTED] = 0,
	        [GEV_PLAYER] = 1,
	        [GEV_GAME_STARTED] = 0,
	        [GEV_CHARACTER_SPAWNED] = 2,
	        [GEV_ZOMBIE_SPAWNED] = 2,
	        [GEV_CHILD_SPAWNED] = 0,
	        [GEV_CARD_DRAWN] = 2,
	        [GEV_GAME_END] = 1,
	        [GEV_NEXT_ROUND] = 1,
	        [GEV_CRISIS] = 1,
	        [GEV_DIE_ROLLED] = 2,
	        [GEV_ABILITY_USED] = -1,
	        [GEV_BARRICADED] = 3,
	        [GEV_MOVED] = -1,
	        [GEV_FROSTBITTEN] = 1,
	        [GEV_WOUNDED] = 1,
	        [GEV_BITTEN] = -1,
	        [GEV_CONTRIBUTED] = 2,
	        [GEV_CARD_USED] = -1,
	        [GEV_FOOD_CHANGED] = 2,
	        [GEV_COLONY_PHASE_STARTED] = 0,
	        [GEV_STARVATION_TOKEN_ADDED] = 0,
	        [GEV_MORAL_CHANGED] = 2,
	        [GEV_SURVIVOR_KILLED] = 1,
	        [GEV_CHILD_KILLED] = 0,
	        [GEV_BARRICADE_DESTROYED] = 2,
	        [GEV_WASTE_CHANGED] = 1,
	        [GEV_ZOMBIE_KILLED] = 3,
	        [GEV_SEARCHED] = 2,
	        [GEV_LEFT] = 1,
	};
	switch (t) {
	case GEV_ABILITY_USED:
		*lo = 1, *hi = 2;
		return;
	case GEV_MOVED:
		*lo = *hi = s->rules == RULES_BASE ? 3 : 2;
		return;
	case GEV_BITTEN:
		*lo = 0, *hi = 1;
		return;
	case GEV_CARD_USED: /* 1 or 3, checked below */
		*lo = 1, *hi = 3;
		return;
	default:
		*lo = *hi = n[t];
	}
}

#define CHECK_PLAYER(e, i)                                        \
	FUZZ_CHECK((e)->arg[i] >= 0 && (e)->arg[i] < s->nplayers, \
	           "%s: player %d out of range (%d players)", name, (e)->arg[i], s->nplayers)
#define CHECK_CHAR(e, i) \
	FUZZ_CHECK(is_char_id(s, (e)->arg[i]), "%s: %d is not a character id", name, (e)->arg[i])
#define CHECK_CARD(e, i) \
	FUZZ_CHECK(card_idx(s, (e)->arg[i]) >= 0, "%s: %d is not a card id", name, (e)->arg[i])
#define CHECK_LOC(e, i) \
	FUZZ_CHECK(loc_idx(s, (e)->arg[i]) >= 0, "%s: %d is not a location id", name, (e)->arg[i])
#define CHECK_ENTRANCE(e, li, ei)                                                                \
	FUZZ_CHECK((e)->arg[ei] >= 0 &&                                                          \
	                   (e)->arg[ei] < s->cfg->locations[loc_idx(s, (e)->arg[li])].entrances, \
	           "%s: entrance %d out of range at location %d", name, (e)->arg[ei],            \
	           (e)->arg[li])

/* Check the events of one step and update the client-side view. */
static void check_events(struct fuzz_session *s, bool has_sender)
{
	const struct config *cfg = s->cfg;
	for (size_t i = 0; i < s->ev.n; i++) {
		const struct game_event *e = &s->ev.v[i];
		FUZZ_CHECK((unsigned)e->type < GAME_EVENT_TYPE_COUNT, "event type %d out of range",
		           (int)e->type);
		const char *name = game_event_name(e->type);
		FUZZ_CHECK(!s->over, "%s (event %zu of the step) after GameEnd/RegistrationAborted",
		           name, i);
		int lo, hi;
		nargs_allowed(s, e->type, &lo, &hi);
		FUZZ_CHECK(e->nargs >= lo && e->nargs <= hi, "%s: nargs %d, expected %d..%d", name,
		           e->nargs, lo, hi);
		if (e->to == GEV_TO_SENDER) {
			FUZZ_CHECK(has_sender, "%s to the sender, but the step has no sender",
			           name);
		} else if (e->to != GEV_TO_ALL) {
			FUZZ_CHECK(e->to >= 0 && e->to < s->nplayers,
			           "%s: recipient %d out of range (%d players)", name, e->to,
			           s->nplayers);
			FUZZ_CHECK(!s->pl[e->to].left, "%s to player %d after its Left", name,
			           e->to);
		}

		const char *str_key = NULL;
		const char *want = NULL;
		char *want_owned = NULL;
		switch (e->type) {
		case GEV_CONFIG: {
			/* The same text every time: with config_static, encode
			 * and check it once per config, later only the pointer. */
			static const char *checked_text; /* only for configs kept for the process */
			FUZZ_CHECK(e->to >= 0, "Config must go to one player");
			FUZZ_CHECK(e->str == cfg->text, "Config is not the config text");
			if (s->config_static && e->str == checked_text)
				continue;
			if (s->config_static)
				checked_text = e->str;
			str_key = "config";
			want = cfg->text;
			break;
		}
		case GEV_ACT_NOW:
			FUZZ_CHECK(e->to >= 0, "ActNow must go to one player");
			break;
		case GEV_CHARACTERS: {
			FUZZ_CHECK(e->to >= 0, "Characters must go to one player");
			for (int k = 0; k < 4; k++) {
				CHECK_CHAR(e, k);
				for (int m = 0; m < k; m++)
					FUZZ_CHECK(e->arg[m] != e->arg[k],
					           "Characters offers %d twice", e->arg[k]);
				FUZZ_CHECK(char_owner(s, e->arg[k]) < 0,
				           "Characters offers living character %d", e->arg[k]);
			}
			struct fuzz_player *fp = &s->pl[e->to];
			memcpy(fp->offered, e->arg, sizeof fp->offered);
			fp->offered_valid = true;
			break;
		}
		case GEV_COMMAND_FAILED:
			FUZZ_CHECK(e->to == GEV_TO_SENDER, "CommandFailed must go to the sender");
			FUZZ_CHECK(e->str && e->str[0], "CommandFailed without a message");
			FUZZ_CHECK(fuzz_utf8_valid(e->str, strlen(e->str)),
			           "CommandFailed message is not valid UTF-8");
			str_key = "message";
			want = e->str;
			break;
		case GEV_REGISTRATION_ABORTED:
			FUZZ_CHECK(i + 1 == s->ev.n, "RegistrationAborted is not the last event");
			s->over = true;
			break;
		case GEV_PLAYER:
			CHECK_PLAYER(e, 0);
			FUZZ_CHECK(e->str != NULL, "Player without a name");
			str_key = "playerName";
			want = want_owned = fuzz_wire_string(e->str);
			break;
		case GEV_GAME_STARTED:
		case GEV_CHILD_SPAWNED:
		case GEV_COLONY_PHASE_STARTED:
		case GEV_STARVATION_TOKEN_ADDED:
		case GEV_CHILD_KILLED:
			break;
		case GEV_CHARACTER_SPAWNED:
			CHECK_PLAYER(e, 0);
			CHECK_CHAR(e, 1);
			FUZZ_CHECK(char_owner(s, e->arg[1]) < 0,
			           "CharacterSpawned(%d, %d): the character is already alive",
			           e->arg[0], e->arg[1]);
			FUZZ_CHECK(!s->pl[e->arg[0]].left,
			           "CharacterSpawned for player %d who left", e->arg[0]);
			s->pl[e->arg[0]].chars[s->pl[e->arg[0]].nchars++] = e->arg[1];
			break;
		case GEV_ZOMBIE_SPAWNED:
		case GEV_BARRICADE_DESTROYED:
			CHECK_LOC(e, 0);
			CHECK_ENTRANCE(e, 0, 1);
			break;
		case GEV_CARD_DRAWN: {
			CHECK_PLAYER(e, 0);
			CHECK_CARD(e, 1);
			int k = card_idx(s, e->arg[1]);
			FUZZ_CHECK(!s->drawn[k], "CardDrawn: card %d drawn a second time",
			           e->arg[1]);
			s->drawn[k] = 1;
			struct fuzz_player *fp = &s->pl[e->arg[0]];
			fp->cards[fp->ncards++] = e->arg[1];
			break;
		}
		case GEV_GAME_END:
			FUZZ_CHECK(e->arg[0] == 0 || e->arg[0] == 1, "GameEnd.win is %d",
			           e->arg[0]);
			FUZZ_CHECK(i + 1 == s->ev.n, "GameEnd is not the last event (%s follows)",
			           game_event_name(s->ev.v[i + 1].type));
			s->over = true;
			break;
		case GEV_NEXT_ROUND:
			FUZZ_CHECK(e->arg[0] >= 1 && e->arg[0] <= cfg->goal.rounds,
			           "NextRound(%d) with %d rounds", e->arg[0], cfg->goal.rounds);
			break;
		case GEV_CRISIS: {
			bool found = false;
			for (int k = 0; k < cfg->ncrises; k++)
				found |= cfg->crises[k].id == e->arg[0];
			FUZZ_CHECK(found, "Crisis(%d): no such crisis", e->arg[0]);
			break;
		}
		case GEV_DIE_ROLLED:
			CHECK_PLAYER(e, 0);
			FUZZ_CHECK(e->arg[1] >= 1 && e->arg[1] <= 6, "DieRolled value %d",
			           e->arg[1]);
			break;
		case GEV_ABILITY_USED:
			CHECK_CHAR(e, 0);
			break;
		case GEV_BARRICADED:
		case GEV_ZOMBIE_KILLED:
			CHECK_CHAR(e, 0);
			CHECK_LOC(e, 1);
			CHECK_ENTRANCE(e, 1, 2);
			break;
		case GEV_MOVED:
			CHECK_CHAR(e, 0);
			CHECK_LOC(e, 1);
			if (e->nargs == 3)
				FUZZ_CHECK(e->arg[2] == 0 || e->arg[2] == 1, "Moved.fuel is %d",
				           e->arg[2]);
			break;
		case GEV_FROSTBITTEN:
		case GEV_WOUNDED:
			CHECK_CHAR(e, 0);
			FUZZ_CHECK(char_owner(s, e->arg[0]) >= 0, "%s(%d): character not alive",
			           name, e->arg[0]);
			break;
		case GEV_BITTEN:
		case GEV_SURVIVOR_KILLED:
			if (e->nargs == 1) {
				CHECK_CHAR(e, 0);
				char_died(s, name, e->arg[0]);
			}
			break;
		case GEV_CONTRIBUTED:
			CHECK_PLAYER(e, 0);
			CHECK_CARD(e, 1);
			FUZZ_CHECK(
			        list_remove(s->pl[e->arg[0]].cards, &s->pl[e->arg[0]].ncards,
			                    e->arg[1]),
			        "Contributed(%d, %d): not a card that player drew and still holds",
			        e->arg[0], e->arg[1]);
			break;
		case GEV_CARD_USED: {
			FUZZ_CHECK(e->nargs != 2, "CardUsed with 2 arguments");
			CHECK_CARD(e, 0);
			if (e->nargs == 3)
				CHECK_CHAR(e, 1);
			bool held = false;
			for (int p = 0; p < s->nplayers && !held; p++)
				held = list_remove(s->pl[p].cards, &s->pl[p].ncards, e->arg[0]);
			FUZZ_CHECK(held, "CardUsed(%d): no player drew and still holds that card",
			           e->arg[0]);
			break;
		}
		case GEV_FOOD_CHANGED:
			FUZZ_CHECK(e->arg[1] == FOOD_ADDED || e->arg[1] == FOOD_CONSUMED,
			           "FoodChanged reason %d", e->arg[1]);
			break;
		case GEV_MORAL_CHANGED:
			FUZZ_CHECK(e->arg[1] >= MORAL_CHARACTER_DIED && e->arg[1] <= MORAL_WASTE,
			           "MoralChanged reason %d", e->arg[1]);
			break;
		case GEV_WASTE_CHANGED:
			if (s->rules == RULES_BASE)
				FUZZ_CHECK(e->arg[0] >= 0, "WasteChanged total %d < 0", e->arg[0]);
			break;
		case GEV_SEARCHED:
			CHECK_CHAR(e, 0);
			CHECK_LOC(e, 1);
			FUZZ_CHECK(loc_idx(s, e->arg[1]) != cfg->colony, "Searched in the colony");
			break;
		case GEV_LEFT: {
			CHECK_PLAYER(e, 0);
			struct fuzz_player *fp = &s->pl[e->arg[0]];
			FUZZ_CHECK(!fp->left, "Left(%d) twice", e->arg[0]);
			fp->left = true;
			fp->ncards = 0;
			break;
		}
		case GEV_SESSION:
			FUZZ_CHECK(false, "Session is the session layer's, never the game's");
			break;
		}
		fuzz_encode_and_check(e, s->rules, &s->buf, str_key, want);
		free(want_owned);
	}
}

static void after_step(struct fuzz_session *s)
{
	s->steps++;
	FUZZ_CHECK(game_is_over(s->g) == s->over,
	           "game_is_over() is %d but GameEnd/RegistrationAborted %s emitted",
	           (int)game_is_over(s->g), s->over ? "was" : "was not");
	const char *bad = game_check_invariants(s->g);
	FUZZ_CHECK(bad == NULL, "game_check_invariants after step %d: %s", s->steps, bad);
	FUZZ_CHECK(game_player_count(s->g) == s->nplayers, "game_player_count %d, expected %d",
	           game_player_count(s->g), s->nplayers);
	int w = game_waiting_for(s->g);
	if (s->over) {
		FUZZ_CHECK(w == GAME_WAIT_NONE, "game over but waiting for %d", w);
	} else if (w != GAME_WAIT_ANY) {
		FUZZ_CHECK(w >= 0 && w < s->nplayers, "waiting for %d (%d players)", w,
		           s->nplayers);
		FUZZ_CHECK(!s->pl[w].left, "waiting for player %d who left", w);
		FUZZ_CHECK(!s->pl[w].disconnected, "waiting for player %d who disconnected", w);
	}
}

static void print_cmd(const struct fuzz_session *s, int player, const struct cmd *c)
{
	fprintf(stderr,
	        "step %d: player %d %s name=%s char=%d char2=%d loc=%d ent=%d card=%d "
	        "target=%d has_target=%d fuel=%d\n",
	        s->steps, player, cmd_name(c->type), c->name ? c->name : "(null)", c->character,
	        c->character2, c->location, c->entrance, c->card, c->target, c->has_target,
	        c->fuel);
}

int fuzz_apply(struct fuzz_session *s, int player, const struct cmd *cmd)
{
	FUZZ_CHECK(player == GAME_NO_PLAYER || fuzz_connected(s, player),
	           "harness bug: sender %d cannot send", player);
	FUZZ_CHECK(!s->over, "harness bug: command after the game is over");
	FUZZ_CHECK((unsigned)cmd->type < CMD_TYPE_COUNT, "harness bug: command type %d",
	           (int)cmd->type);
	if (fuzz_verbose())
		print_cmd(s, player, cmd);
	struct rng rng_before = game_rng_peek(s->g);
	int w_before = game_waiting_for(s->g);
	int n_before = s->nplayers;

	game_event_list_clear(&s->ev);
	int r = game_apply(s->g, player, cmd, &s->ev);
	if (player == GAME_NO_PLAYER && r != GAME_NO_PLAYER) {
		FUZZ_CHECK(cmd->type == CMD_REGISTER && r == n_before,
		           "game_apply returned player %d for %s (%d players before)", r,
		           cmd_name(cmd->type), n_before);
		FUZZ_CHECK(r < s->cfg->max_players, "player %d registered, maxPlayers %d", r,
		           s->cfg->max_players);
		s->nplayers = r + 1;
	} else {
		FUZZ_CHECK(r == player, "game_apply returned %d for sender %d", r, player);
	}
	check_events(s, true);

	size_t nfail = 0;
	for (size_t i = 0; i < s->ev.n; i++)
		nfail += s->ev.v[i].type == GEV_COMMAND_FAILED;
	FUZZ_CHECK(nfail <= 1, "%zu CommandFailed for one command", nfail);
	if (nfail == 1) {
		FUZZ_CHECK(s->ev.v[0].type == GEV_COMMAND_FAILED,
		           "%s: CommandFailed is not the first event (%s is)", cmd_name(cmd->type),
		           game_event_name(s->ev.v[0].type));
		for (size_t i = 1; i < s->ev.n; i++)
			FUZZ_CHECK(s->ev.v[i].type == GEV_ACT_NOW && s->ev.v[i].to == w_before,
			           "%s failed (\"%s\") but also emitted %s", cmd_name(cmd->type),
			           s->ev.v[0].str, game_event_name(s->ev.v[i].type));
		struct rng rng_after = game_rng_peek(s->g);
		FUZZ_CHECK(rng_after.state == rng_before.state,
		           "%s failed (\"%s\") but drew from the RNG", cmd_name(cmd->type),
		           s->ev.v[0].str);
		FUZZ_CHECK(game_waiting_for(s->g) == w_before,
		           "%s failed (\"%s\") but the game now waits for %d instead of %d",
		           cmd_name(cmd->type), s->ev.v[0].str, game_waiting_for(s->g), w_before);
	}
	after_step(s);
	return r;
}

void fuzz_timeout(struct fuzz_session *s)
{
	FUZZ_CHECK(!s->over, "harness bug: timeout after the game is over");
	if (fuzz_verbose())
		fprintf(stderr, "step %d: timeout (waiting for %d)\n", s->steps,
		        game_waiting_for(s->g));
	game_event_list_clear(&s->ev);
	game_timeout(s->g, &s->ev);
	check_events(s, false);
	after_step(s);
}

void fuzz_disconnect(struct fuzz_session *s, int player)
{
	FUZZ_CHECK(fuzz_connected(s, player), "harness bug: disconnect of %d", player);
	FUZZ_CHECK(!s->over, "harness bug: disconnect after the game is over");
	if (fuzz_verbose())
		fprintf(stderr, "step %d: disconnect player %d\n", s->steps, player);
	s->pl[player].disconnected = true;
	game_event_list_clear(&s->ev);
	game_disconnect(s->g, player, &s->ev);
	check_events(s, false);
	after_step(s);
}

/* ---- commands made up from bytes ------------------------------------------ */

bool fuzz_rd_eof(const struct fuzz_reader *r)
{
	return r->i >= r->n;
}

uint8_t fuzz_rd_u8(struct fuzz_reader *r)
{
	return r->i < r->n ? r->p[r->i++] : 0;
}

static uint32_t rd_u32(struct fuzz_reader *r)
{
	uint32_t v = 0;
	for (int k = 0; k < 4; k++)
		v |= (uint32_t)fuzz_rd_u8(r) << (8 * k);
	return v;
}

static const int specials[16] = {0, -1, 1,   2,    3,       4,       5,  6,
                                 7, 8,  100, 1000, INT_MAX, INT_MIN, -2, 42};

/* The special value of byte b >= 0xE0 (>= 0xF0: the next 4 bytes). */
static int special(struct fuzz_reader *r, uint8_t b)
{
	if (b < 0xF0)
		return specials[b - 0xE0];
	uint32_t u = rd_u32(r);
	int v;
	memcpy(&v, &u, sizeof v);
	return v;
}

/* An id from byte b: from the likely pool, from all, or special. */
static int pick_b(struct fuzz_reader *r, uint8_t b, const int *likely, int nl, const int *all,
                  int na)
{
	if (b >= 0xE0)
		return special(r, b);
	if (b < 0xA0 && nl > 0)
		return likely[b % nl];
	if (na > 0)
		return all[b % na];
	return b;
}

static int pick(struct fuzz_reader *r, const int *likely, int nl, const int *all, int na)
{
	return pick_b(r, fuzz_rd_u8(r), likely, nl, all, na);
}

static int pick_entrance(struct fuzz_reader *r)
{
	uint8_t b = fuzz_rd_u8(r);
	return b >= 0xE0 ? special(r, b) : b % 4;
}

/* What the sender has seen, the likely pools of the picks. */
struct pools {
	const int *chars, *cards, *offered;
	int nchars, ncards, noffered;
};

static struct pools sender_pools(const struct fuzz_session *s, int sender)
{
	struct pools pp = {0};
	if (sender < 0)
		return pp;
	const struct fuzz_player *fp = &s->pl[sender];
	pp.chars = fp->chars;
	pp.nchars = fp->nchars;
	pp.cards = fp->cards;
	pp.ncards = fp->ncards;
	if (fp->offered_valid) {
		pp.offered = fp->offered;
		pp.noffered = 4;
	}
	return pp;
}

/* A target of the kind the flags byte chose (% 3): entrance, character or
 * location. */
static int pick_target(struct fuzz_reader *r, const struct fuzz_session *s, unsigned kind)
{
	switch (kind % 3) {
	case 0:
		return pick_entrance(r);
	case 1:
		return pick(r, s->char_ids, s->cfg->ncharacters, s->char_ids, s->cfg->ncharacters);
	default:
		return pick(r, s->loc_ids, s->cfg->nlocations, s->loc_ids, s->cfg->nlocations);
	}
}

/* State of one command's reading: offered characters are picked distinct
 * (each after the first avoids the one before it); the target parameters
 * share one flags byte. */
struct cmd_reading {
	struct pools pp;
	int offered_seen;
	int offered_last; /* index into pp.offered */
	bool flags_read;
	bool with_target;
	unsigned target_kind;
};

static int read_offered(struct fuzz_reader *r, const struct fuzz_session *s, struct cmd_reading *st)
{
	uint8_t b = fuzz_rd_u8(r);
	int a = st->offered_seen++ == 0 ? b % 4 : (st->offered_last + 1 + b % 3) % 4;
	st->offered_last = a;
	if (b < 0xA0 && st->pp.noffered)
		return st->pp.offered[a];
	return pick_b(r, b, NULL, 0, s->char_ids, s->cfg->ncharacters);
}

/* The value of one int or bool parameter. */
static int read_value(struct fuzz_reader *r, const struct fuzz_session *s,
                      const struct proto_param *p, struct cmd_reading *st)
{
	switch (p->domain) {
	case PROTO_DOMAIN_OFFERED_CHARACTER:
		return read_offered(r, s, st);
	case PROTO_DOMAIN_OWN_CHARACTER:
		return pick(r, st->pp.chars, st->pp.nchars, s->char_ids, s->cfg->ncharacters);
	case PROTO_DOMAIN_LOCATION:
		return pick(r, s->loc_ids, s->cfg->nlocations, s->loc_ids, s->cfg->nlocations);
	case PROTO_DOMAIN_ENTRANCE:
		return pick_entrance(r);
	case PROTO_DOMAIN_HAND_CARD:
		return pick(r, st->pp.cards, st->pp.ncards, s->card_ids, s->cfg->ncards);
	case PROTO_DOMAIN_TARGET:
		return pick_target(r, s, st->target_kind);
	case PROTO_DOMAIN_FLAG: {
		/* the byte is always read: the layout must not depend on the rules */
		bool on = fuzz_rd_u8(r) & 1;
		return on && (s->rules == RULES_BASE || !(p->flags & PROTO_BASE_ONLY));
	}
	case PROTO_DOMAIN_NAME:
		break;
	}
	return fuzz_rd_u8(r);
}

void fuzz_read_cmd(struct fuzz_reader *r, const struct fuzz_session *s, int sender, enum cmd_type t,
                   struct cmd *c, char name[17])
{
	struct cmd_reading st = {.pp = sender_pools(s, sender)};
	memset(c, 0, sizeof *c);
	c->type = t;
	size_t n;
	const struct proto_param *params = proto_cmd_params(t, &n);
	for (size_t i = 0; i < n; i++) {
		const struct proto_param *p = &params[i];
		if (proto_param_with_target(p)) {
			if (!st.flags_read) {
				uint8_t f = fuzz_rd_u8(r);
				st.flags_read = true;
				st.with_target = f & 1;
				st.target_kind = f >> 1;
				c->has_target = st.with_target;
			}
			if (!st.with_target)
				continue;
		}
		if (p->type == PROTO_STRING) {
			size_t len = fuzz_rd_u8(r) % 16;
			for (size_t k = 0; k < len; k++)
				name[k] = (char)fuzz_rd_u8(r);
			name[len] = '\0'; /* an embedded NUL just shortens it */
			c->name = name;
			continue;
		}
		proto_param_set(c, p, read_value(r, s, p, &st));
	}
}
