/*
 * fuzz_game: decode + apply commands on a running game and check every step
 * (fuzz_session in fuzz_common.c: events, encoding, game_check_invariants).
 *
 * Input format (missing bytes read as 0):
 *   byte 0      bits 0-1: configuration (fuzz_game_configs.h: solo, duo, trio,
 *               quad); bit 2: rules (0 base, 1 revised); other bits unused
 *   bytes 1-8   the seed, little-endian int64
 *   then steps, each starting with an op byte:
 *     low nibble  0..12  a command of that enum cmd_type (cmd_table.h's
 *                        order), arguments follow; with more than 13 command
 *                        types, 12 takes one more byte b (after the sender's
 *                        byte, if any): type 12 + b % (CMD_TYPE_COUNT - 12)
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
 *   Command arguments (fuzz_read_cmd): the command's parameters in the order
 *   of its row in the command table, each read by its domain, one byte unless
 *   noted. An id byte b:
 *     b < 0xA0   from the "likely" pool (the sender's offered / living
 *                characters or drawn cards; all locations) -- so most
 *                commands can succeed and the game goes deep
 *     b < 0xE0   from all ids of that kind in the configuration
 *     0xE0..0xEF a special value: 0 -1 1 2 3 4 5 6 7 8 100 1000 INT_MAX
 *                INT_MIN -2 42
 *     >= 0xF0    the next 4 bytes as a raw little-endian int
 *   By domain:
 *     name               length (% 16), then that many name bytes
 *     offered character  an id byte; from the pool, a second one avoids the
 *                        first (index b % 4, then (previous + 1 + b % 3) % 4)
 *     own character, location, hand card   an id byte
 *     entrance           b < 0xE0 -> b % 4, else a special value as above
 *     flag               bit 0 (fuel: base only; the byte is always read)
 *     target             by the flags byte below: kind % 3 is an entrance,
 *                        a character id or a location id
 *   Before the first parameter that comes with a target (PROTO_TARGET,
 *   PROTO_PAIR), a flags byte: bit 0 has target (else those parameters are
 *   absent and read nothing), bits 1..: the target's kind.
 */
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_game_configs.h"

#define MAX_STEPS 5000
#define NCONFIGS  4

/* The ops that are not commands (low nibble). */
#define OP_TIMEOUT    13
#define OP_DISCONNECT 14
#define OP_LINE       15

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

static int64_t rd_i64(struct fuzz_reader *r)
{
	uint64_t v = 0;
	for (int k = 0; k < 8; k++)
		v |= (uint64_t)fuzz_rd_u8(r) << (8 * k);
	int64_t s;
	memcpy(&s, &v, sizeof s);
	return s;
}

/* The command type of an op whose low nibble is kind (< OP_TIMEOUT): see
 * the format above. */
static enum cmd_type op_command(struct fuzz_reader *r, unsigned kind)
{
	if (CMD_TYPE_COUNT <= OP_TIMEOUT)
		return (enum cmd_type)(kind % CMD_TYPE_COUNT);
	if (kind < OP_TIMEOUT - 1)
		return (enum cmd_type)kind;
	return (enum cmd_type)(OP_TIMEOUT - 1 + fuzz_rd_u8(r) % (CMD_TYPE_COUNT - OP_TIMEOUT + 1));
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
	struct fuzz_reader r = {data, size, 0};
	uint8_t b0 = fuzz_rd_u8(&r);
	const struct config *cfg = get_config(b0 & 3);
	enum game_rules rules = (b0 & 4) ? RULES_REVISED : RULES_BASE;
	int64_t seed = rd_i64(&r);

	struct fuzz_session s;
	fuzz_session_init(&s, cfg, seed, rules);
	s.config_static = true;
	struct proto_cmd pc;
	proto_cmd_init(&pc);
	char name[17];

	for (int step = 0; step < MAX_STEPS && !fuzz_rd_eof(&r) && !s.over; step++) {
		uint8_t op = fuzz_rd_u8(&r);
		unsigned kind = op & 0x0F, who = op >> 4;
		if (kind == OP_TIMEOUT) {
			fuzz_timeout(&s);
			continue;
		}
		if (kind == OP_DISCONNECT) {
			int p = fuzz_connected_nth(&s, fuzz_rd_u8(&r));
			if (p >= 0)
				fuzz_disconnect(&s, p);
			continue;
		}
		uint8_t extra = who >= 13 ? fuzz_rd_u8(&r) : 0;
		if (kind == OP_LINE) {
			size_t len = fuzz_rd_u8(&r);
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
		enum cmd_type t = op_command(&r, kind);
		int sender = resolve_sender(&s, who, extra, t);
		struct cmd c;
		fuzz_read_cmd(&r, &s, sender, t, &c, name);
		fuzz_apply(&s, sender, &c);
	}
	if (fuzz_verbose())
		fprintf(stderr, "end after %d steps, over=%d\n", s.steps, (int)s.over);
	proto_cmd_clear(&pc);
	fuzz_session_free(&s);
	return 0;
}
