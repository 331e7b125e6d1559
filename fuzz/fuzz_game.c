/*
 * fuzz_game: decode + apply commands on a running game and check every step
 * (fuzz_session in fuzz_common.c: events, encoding, game_check_invariants).
 *
 * Input format (missing bytes read as 0):
 *   byte 0      bits 0-1: configuration (fuzz_game_configs.h: solo, duo, trio,
 *               quad); bit 2: rules (0 base, 1 revised); other bits unused
 *   bytes 1-8   the seed, little-endian int64
 *   then steps, each starting with an op byte:
 *     low nibble  0..12  a command of that enum cmd_type, arguments follow
 *                 13     game_timeout
 *                 14     game_disconnect of a connected player: 1 byte (n-th)
 *                 15     a text line: 1 length byte L, then L bytes for
 *                        proto_decode; applied only if it decodes
 *     high nibble who sends it:
 *                 0..11  "auto": the player the game waits for; during
 *                        registration a new connection for Register, else the
 *                        last connected player
 *                 12     an unregistered connection (GAME_NO_PLAYER)
 *                 13..15 a connected player: 1 byte (n-th), right after the op
 *   Command arguments, one byte each unless noted. An id byte b:
 *     b < 0xA0   from the "likely" pool (the sender's offered / living
 *                characters or drawn cards; all locations) -- so most
 *                commands can succeed and the game goes deep
 *     b < 0xE0   from all ids of that kind in the configuration
 *     0xE0..0xEF a special value: 0 -1 1 2 3 4 5 6 7 8 100 1000 INT_MAX
 *                INT_MIN -2 42
 *     >= 0xF0    the next 4 bytes as a raw little-endian int
 *   An entrance byte: b < 0xE0 -> b % 4, else a special value as above.
 *     Register          name length (% 16), then that many name bytes
 *     SelectCharacters  two id bytes (the second avoids the first)
 *     Move              character, location, flags (bit 0: fuel, base only)
 *     Search/CleanWaste character
 *     Attack/Barricade  character, entrance
 *     ContributeCard    card
 *     UseCard           card, flags (bit 0: has target; bits 1..: target
 *                       kind % 3: entrance, character, location), then
 *                       character and target when bit 0 is set
 *     UseAbility        character, flags (as UseCard), target if bit 0
 */
#include "fuzz_common.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_game_configs.h"

_Static_assert(CMD_TYPE_COUNT == 13, "the op encoding assumes 13 command types");

#define MAX_STEPS 5000
#define NCONFIGS  4

static const char *const *const config_pieces[NCONFIGS] = {
        fuzz_cfg_solo,
        fuzz_cfg_duo,
        fuzz_cfg_trio,
        fuzz_cfg_quad,
};
static struct config *configs[NCONFIGS]; /* parsed once, kept for the process */

static const struct config *get_config(int i)
{
	if (configs[i])
		return configs[i];
	size_t len = 0;
	for (const char *const *p = config_pieces[i]; *p; p++)
		len += strlen(*p);
	char *text = xmalloc(len + 1);
	size_t o = 0;
	for (const char *const *p = config_pieces[i]; *p; p++) {
		size_t n = strlen(*p);
		memcpy(text + o, *p, n);
		o += n;
	}
	text[o] = '\0';
	struct config_errors errs = {0};
	configs[i] = config_parse(text, len, &errs);
	for (int k = 0; k < errs.n; k++)
		fprintf(stderr, "fuzz_game: embedded config %d: %s\n", i, errs.msgs[k]);
	config_errors_free(&errs);
	free(text);
	FUZZ_CHECK(configs[i] != NULL, "harness bug: embedded config %d does not parse", i);
	return configs[i];
}

struct reader {
	const uint8_t *p;
	size_t n, i;
};

static bool rd_eof(const struct reader *r)
{
	return r->i >= r->n;
}

static uint8_t rd_u8(struct reader *r)
{
	return r->i < r->n ? r->p[r->i++] : 0;
}

static uint32_t rd_u32(struct reader *r)
{
	uint32_t v = 0;
	for (int k = 0; k < 4; k++)
		v |= (uint32_t)rd_u8(r) << (8 * k);
	return v;
}

static int64_t rd_i64(struct reader *r)
{
	uint64_t v = 0;
	for (int k = 0; k < 8; k++)
		v |= (uint64_t)rd_u8(r) << (8 * k);
	int64_t s;
	memcpy(&s, &v, sizeof s);
	return s;
}

static const int specials[16] = {0, -1, 1,   2,    3,       4,       5,  6,
                                 7, 8,  100, 1000, INT_MAX, INT_MIN, -2, 42};

static int special(struct reader *r, uint8_t b)
{
	if (b < 0xF0)
		return specials[b - 0xE0];
	uint32_t u = rd_u32(r);
	int v;
	memcpy(&v, &u, sizeof v);
	return v;
}

/* An id from byte b (see the format above). */
static int pick_b(struct reader *r, uint8_t b, const int *likely, int nl, const int *all, int na)
{
	if (b >= 0xE0)
		return special(r, b);
	if (b < 0xA0 && nl > 0)
		return likely[b % nl];
	if (na > 0)
		return all[b % na];
	return b;
}

static int pick(struct reader *r, const int *likely, int nl, const int *all, int na)
{
	return pick_b(r, rd_u8(r), likely, nl, all, na);
}

static int pick_entrance(struct reader *r)
{
	uint8_t b = rd_u8(r);
	return b >= 0xE0 ? special(r, b) : b % 4;
}

struct pools {
	const int *chars, *cards, *offered;
	int nchars, ncards, noffered;
};

static int pick_char(struct reader *r, const struct fuzz_session *s, const struct pools *pp)
{
	return pick(r, pp->chars, pp->nchars, s->char_ids, s->cfg->ncharacters);
}

static int pick_target(struct reader *r, const struct fuzz_session *s, const struct pools *pp,
                       unsigned kind)
{
	switch (kind % 3) {
	case 0:
		return pick_entrance(r);
	case 1:
		return pick(r, s->char_ids, s->cfg->ncharacters, s->char_ids, s->cfg->ncharacters);
	default:
		(void)pp;
		return pick(r, s->loc_ids, s->cfg->nlocations, s->loc_ids, s->cfg->nlocations);
	}
}

/* Read the arguments of a binary command of type t sent by `sender`. */
static void read_cmd(struct reader *r, const struct fuzz_session *s, int sender, enum cmd_type t,
                     struct cmd *c, char name[17])
{
	struct pools pp = {0};
	if (sender >= 0) {
		const struct fuzz_player *fp = &s->pl[sender];
		pp.chars = fp->chars;
		pp.nchars = fp->nchars;
		pp.cards = fp->cards;
		pp.ncards = fp->ncards;
		if (fp->offered_valid) {
			pp.offered = fp->offered;
			pp.noffered = 4;
		}
	}
	memset(c, 0, sizeof *c);
	c->type = t;
	switch (t) {
	case CMD_REGISTER: {
		size_t len = rd_u8(r) % 16;
		for (size_t i = 0; i < len; i++)
			name[i] = (char)rd_u8(r);
		name[len] = '\0'; /* an embedded NUL just shortens it */
		c->name = name;
		break;
	}
	case CMD_START_GAME:
	case CMD_LEAVE:
	case CMD_END_TURN:
		break;
	case CMD_SELECT_CHARACTERS: {
		uint8_t b1 = rd_u8(r), b2 = rd_u8(r);
		int a = b1 % 4;
		if (b1 < 0xA0 && pp.noffered)
			c->character = pp.offered[a];
		else
			c->character = pick_b(r, b1, NULL, 0, s->char_ids, s->cfg->ncharacters);
		if (b2 < 0xA0 && pp.noffered)
			c->character2 = pp.offered[(a + 1 + b2 % 3) % 4];
		else
			c->character2 = pick_b(r, b2, NULL, 0, s->char_ids, s->cfg->ncharacters);
		break;
	}
	case CMD_MOVE:
		c->character = pick_char(r, s, &pp);
		c->location =
		        pick(r, s->loc_ids, s->cfg->nlocations, s->loc_ids, s->cfg->nlocations);
		/* always consume the flags byte: the layout must not depend on the rules */
		if ((rd_u8(r) & 1) && s->rules == RULES_BASE)
			c->fuel = true;
		break;
	case CMD_SEARCH:
	case CMD_CLEAN_WASTE:
		c->character = pick_char(r, s, &pp);
		break;
	case CMD_ATTACK:
	case CMD_BARRICADE:
		c->character = pick_char(r, s, &pp);
		c->entrance = pick_entrance(r);
		break;
	case CMD_CONTRIBUTE_CARD:
		c->card = pick(r, pp.cards, pp.ncards, s->card_ids, s->cfg->ncards);
		break;
	case CMD_USE_CARD: {
		c->card = pick(r, pp.cards, pp.ncards, s->card_ids, s->cfg->ncards);
		uint8_t f = rd_u8(r);
		if (f & 1) {
			c->has_target = true;
			c->character = pick_char(r, s, &pp);
			c->target = pick_target(r, s, &pp, f >> 1);
		}
		break;
	}
	case CMD_USE_ABILITY: {
		c->character = pick_char(r, s, &pp);
		uint8_t f = rd_u8(r);
		if (f & 1) {
			c->has_target = true;
			c->target = pick_target(r, s, &pp, f >> 1);
		}
		break;
	}
	}
}

/* The sender for `who` (high nibble of the op); `extra` is its byte. */
static int resolve_sender(const struct fuzz_session *s, unsigned who, uint8_t extra,
                          enum cmd_type t)
{
	if (who < 12)
		return fuzz_auto_sender(s, t);
	if (who == 12)
		return GAME_NO_PLAYER;
	int p = fuzz_connected_nth(s, extra);
	return p >= 0 ? p : GAME_NO_PLAYER;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reader r = {data, size, 0};
	uint8_t b0 = rd_u8(&r);
	const struct config *cfg = get_config(b0 & 3);
	enum game_rules rules = (b0 & 4) ? RULES_REVISED : RULES_BASE;
	int64_t seed = rd_i64(&r);

	struct fuzz_session s;
	fuzz_session_init(&s, cfg, seed, rules);
	s.config_static = true;
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	char name[17];

	for (int step = 0; step < MAX_STEPS && !rd_eof(&r) && !s.over; step++) {
		uint8_t op = rd_u8(&r);
		unsigned kind = op & 0x0F, who = op >> 4;
		if (kind == 13) {
			fuzz_timeout(&s);
			continue;
		}
		if (kind == 14) {
			int p = fuzz_connected_nth(&s, rd_u8(&r));
			if (p >= 0)
				fuzz_disconnect(&s, p);
			continue;
		}
		uint8_t extra = who >= 13 ? rd_u8(&r) : 0;
		if (kind == 15) {
			size_t len = rd_u8(&r);
			if (len > r.n - r.i)
				len = r.n - r.i;
			const char *line = (const char *)r.p + r.i;
			r.i += len;
			const char *err = NULL;
			if (!proto_decode(line, len, rules, &pc, &err)) {
				FUZZ_CHECK(err && *err, "proto_decode failed without a message");
				if (fuzz_verbose())
					fprintf(stderr, "step %d: line rejected: %s\n", s.steps,
					        err);
				continue;
			}
			int sender = resolve_sender(&s, who, extra, pc.cmd.type);
			fuzz_apply(&s, sender, &pc.cmd);
			continue;
		}
		enum cmd_type t = (enum cmd_type)kind;
		int sender = resolve_sender(&s, who, extra, t);
		struct cmd c;
		read_cmd(&r, &s, sender, t, &c, name);
		fuzz_apply(&s, sender, &c);
	}
	if (fuzz_verbose())
		fprintf(stderr, "end after %d steps, over=%d\n", s.steps, (int)s.over);
	proto_cmd_clear(&pc);
	fuzz_session_free(&s);
	return 0;
}
