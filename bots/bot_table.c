/*
 * bot_table: whole games between strategies in one process (table.h).
 */
#include "bot_table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "model.h"
#include "sopra/core.h"
#include "sopra/game_view.h"
#include "sopra/proto.h"

#define MAX_SEATS    16
#define MAX_COMMANDS 1000000L /* a game this long is a bug */

struct seat {
	const struct table_seat *spec;
	char name[16];
	int comm; /* its connection's id: the seat's index + 1 */
	bool open;
	bool prompted; /* an ActNow or Characters came: it must send */
	struct model m;
	struct client_cmds cc;
	struct strategy *strategy; /* made when the Config has come */
};

struct table {
	const struct config *cfg;
	enum game_rules rules;
	struct seat seats[MAX_SEATS];
	int nseats;
	struct core *core; /* the game, queue, dispatcher and broadcaster, as the server has them */
	struct game *game; /* the core's */
	struct proto_buf line; /* the event being delivered, encoded */
	FILE *transcript;
	long commands, failed;
	char *err;
	size_t errlen;
	bool broken;
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
fail(struct table *t, const char *fmt, ...)
{
	if (t->broken)
		return;
	t->broken = true;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->err, t->errlen, fmt, ap);
	va_end(ap);
}

/* ---- the broadcaster's sink: each seat folds its lines -------------------------- */

static void sink_encode(void *ctx, const struct game_event *ev)
{
	struct table *t = ctx;
	proto_buf_reset(&t->line);
	proto_encode(ev, t->rules, &t->line);
}

static void sink_send(void *ctx, int comm, int player, const struct game_event *ev)
{
	(void)player;
	struct table *t = ctx;
	if (comm < 1 || comm > t->nseats)
		return;
	struct seat *s = &t->seats[comm - 1];
	char err[600];
	if (model_fold_line(&s->m, t->line.data, t->line.len - 1, err, sizeof err) != MODEL_OK)
		fail(t, "%s's model: %s (%.*s)", s->name, err, (int)t->line.len - 1, t->line.data);
	if (ev->type == GEV_ACT_NOW || ev->type == GEV_CHARACTERS)
		s->prompted = true;
	if (ev->type == GEV_COMMAND_FAILED)
		t->failed++;
}

static void sink_close(void *ctx, int comm)
{
	struct table *t = ctx;
	if (comm >= 1 && comm <= t->nseats)
		t->seats[comm - 1].open = false;
}

static void sink_left(void *ctx, int comm, int player)
{
	(void)player;
	sink_close(ctx, comm);
}

/* ---- sending ------------------------------------------------------------------ */

/* Seat s sends c: its wire line through the server's queue and dispatcher. */
static void send(struct table *t, struct seat *s, const struct cmd *c)
{
	char line[1024];
	int n = client_cmd_line(c, t->rules == RULES_REVISED, line, sizeof line);
	if (n < 1) {
		fail(t, "%s: a command too long to send", s->name);
		return;
	}
	if (t->transcript)
		fprintf(t->transcript, "P%d %s", s->comm - 1, line);
	client_sent(&s->m, c);
	t->commands++;
	cmdq_push_line(core_queue(t->core), s->comm, line, (size_t)n - 1);
	core_drain(t->core);
}

static void register_seat(struct table *t, struct seat *s)
{
	struct cmd reg;
	if (!client_command_with(CLIENT_REGISTERS, &reg)) {
		fail(t, "the client knows no command that registers");
		return;
	}
	reg.name = s->name;
	send(t, s, &reg);
}

/* ---- deciding ------------------------------------------------------------------ */

static bool decide(struct table *t, struct seat *s, struct cmd *c)
{
	char err[300];
	if (client_cmds_update(&s->cc, &s->m, err, sizeof err) != 0) {
		fail(t, "%s: %s", s->name, err);
		return false;
	}
	if (!s->strategy)
		s->strategy = strategy_new(s->cc.cfg, &s->spec->strategy);
	bool ok = s->spec->oracle ? strategy_choose_oracle(s->strategy, t->game, s->m.me, c)
	                          : strategy_choose(s->strategy, s->cc.view, c);
	if (!ok)
		fail(t, "%s was prompted but its strategy has nothing to send", s->name);
	return ok;
}

/* The seat the game waits for an answer from, or NULL. */
static struct seat *prompted_seat(struct table *t)
{
	for (int k = 0; k < t->nseats; k++)
		if (t->seats[k].open && t->seats[k].prompted)
			return &t->seats[k];
	return NULL;
}

static void play(struct table *t)
{
	for (int k = 0; k < t->nseats && !t->broken; k++)
		register_seat(t, &t->seats[k]);
	if (!t->broken && game_waiting_for(t->game) == GAME_WAIT_ANY) {
		struct cmd start;
		if (client_command_with(CLIENT_STARTS, &start))
			send(t, &t->seats[0], &start);
	}
	while (!t->broken && !game_is_over(t->game)) {
		struct seat *s = prompted_seat(t);
		if (!s) {
			fail(t, "the game waits for player %d, but no seat was prompted",
			     game_waiting_for(t->game));
			break;
		}
		s->prompted = false;
		struct cmd c;
		if (!decide(t, s, &c))
			break;
		send(t, s, &c);
		if (t->commands > MAX_COMMANDS)
			fail(t, "the game is not over after %ld commands", t->commands);
	}
}

static void add_stats(struct strategy_stats *sum, const struct strategy_stats *s)
{
	sum->decisions += s->decisions;
	sum->deliberate += s->deliberate;
	sum->seconds += s->seconds;
	sum->iterations += s->iterations;
	if (s->max_seconds > sum->max_seconds)
		sum->max_seconds = s->max_seconds;
	sum->cpu_seconds += s->cpu_seconds;
	if (s->max_cpu_seconds > sum->max_cpu_seconds)
		sum->max_cpu_seconds = s->max_cpu_seconds;
}

int table_play(const struct config *cfg, enum game_rules rules, int64_t seed, int nseats,
               const struct table_seat *seats, FILE *transcript, struct table_result *out,
               char *err, size_t errlen)
{
	if (nseats < 1 || nseats > MAX_SEATS || nseats > cfg->max_players) {
		snprintf(err, errlen, "%d seats: the configuration takes 1 to %d", nseats,
		         cfg->max_players < MAX_SEATS ? cfg->max_players : MAX_SEATS);
		return -1;
	}
	struct table *t = calloc(1, sizeof *t);
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	t->cfg = cfg;
	t->rules = rules;
	t->nseats = nseats;
	t->transcript = transcript;
	t->err = err;
	t->errlen = errlen;
	for (int k = 0; k < nseats; k++) {
		struct seat *s = &t->seats[k];
		s->spec = &seats[k];
		s->comm = k + 1;
		s->open = true;
		snprintf(s->name, sizeof s->name, "bot-%d", k);
		model_init(&s->m, s->name, rules == RULES_REVISED);
		client_cmds_init(&s->cc);
	}
	struct core_params cp = {.cfg = cfg, .seed = seed, .rules = rules};
	t->core = core_new(&cp, (struct bcast_sink){.encode = sink_encode,
	                                            .send = sink_send,
	                                            .left = sink_left,
	                                            .close = sink_close,
	                                            .ctx = t});
	t->game = core_game(t->core);
	proto_buf_init(&t->line);

	play(t);

	memset(out, 0, sizeof *out);
	struct game_view *v = game_view_new(cfg);
	game_view_of(t->game, GAME_NO_PLAYER, v);
	out->won = v->result == VIEW_WON;
	game_view_free(v);
	out->rounds = game_round(t->game);
	out->end_reason = game_end_reason(t->game);
	out->commands = t->commands;
	out->failed = t->failed;
	for (int k = 0; k < nseats; k++) {
		struct seat *s = &t->seats[k];
		if (s->strategy)
			add_stats(&out->stats, strategy_stats(s->strategy));
		strategy_free(s->strategy);
		client_cmds_free(&s->cc);
		model_free(&s->m);
	}
	bool broken = t->broken;
	proto_buf_free(&t->line);
	core_free(t->core);
	free(t);
	return broken ? -1 : 0;
}
