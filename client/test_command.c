/*
 * Unit test of the client's command layer (command.c) against the real
 * engine, in one process: games of random legal play (every example
 * configuration, 1 to maxPlayers players, both editions, now and then a
 * timeout or a lost connection), each event encoded as the server encodes
 * it and fed, as a line, to the model of each player it goes to (and to a
 * watcher's model when it goes to all), each command a player sends told to
 * its model (client_sent) as a client does. After every command's events:
 *   - each player's model, as a view (client_view_of), equals the game's
 *     view of that player (game_view_of), and the watcher's the public one;
 *   - each player's legal commands from its model (client_cmds_update)
 *     are exactly game_legal_commands of the real game, in the same order;
 *   - every legal command's wire line decodes (proto_decode) to itself.
 * SOPRA_TEST_GAMES (default 16) sets the games per configuration and edition.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "model.h"
#include "sopra/config.h"
#include "sopra/game.h"
#include "sopra/game_view.h"
#include "sopra/proto.h"
#include "sopra/rng.h"

#define MAX_SEATS 8

static struct config *configs[8];
static int nconfigs;

static void add_config(struct config *cfg, const char *what, struct config_errors *e)
{
	if (!cfg)
		fail_msg("%s: %s", what, e->n ? e->msgs[0] : "?");
	config_errors_free(e);
	configs[nconfigs++] = cfg;
}

/* The configuration with goal.moral raised: random play loses by the third
 * round or so, with more morale the games reach fuller states. */
static void add_with_moral(const struct config *base, int moral)
{
	cJSON *root = cJSON_Parse(base->text);
	assert_non_null(root);
	cJSON *goal = cJSON_GetObjectItemCaseSensitive(root, "goal");
	cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(goal, "moral"), moral);
	char *text = cJSON_Print(root);
	struct config_errors e = {0};
	add_config(config_parse(text, strlen(text), &e), "with more morale", &e);
	free(text);
	cJSON_Delete(root);
}

static int setup(void **state)
{
	(void)state;
	static const char *const names[] = {"example.json", "example-barricades.json",
	                                    "example-zombies.json"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/resources/%s", SOPRA_SOURCE_DIR, names[i]);
		struct config_errors e = {0};
		add_config(config_load(path, &e), path, &e);
	}
	add_with_moral(configs[0], 60);
	add_with_moral(configs[2], 40);
	/* 5 players, 31 characters, when the shared folder is there */
	struct config_errors e = {0};
	struct config *big =
	        config_load(SOPRA_SHARED_DIR "/conformance/base/configuration.json", &e);
	config_errors_free(&e);
	if (big)
		configs[nconfigs++] = big;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < nconfigs; i++)
		config_free(configs[i]);
	return 0;
}

/* One connection: a player's (or the watcher's) model and command layer. */
struct seat {
	char name[16];
	bool open;  /* registered and not left (the watcher: always) */
	int player; /* its id once registered */
	struct model m;
	struct client_cmds cc;
};

struct table {
	const struct config *cfg;
	enum game_rules rules;
	struct game *g;
	struct seat seats[MAX_SEATS];
	int nseats;
	struct seat watcher;
	struct rng r;
	struct game_event_list ev;
	struct game_cmd_list legal;
	struct proto_buf line;
	long batches, compared;
};

static void fold(struct table *t, struct seat *s, const struct game_event *e)
{
	proto_buf_reset(&t->line);
	proto_encode(e, t->rules, &t->line);
	char err[600];
	if (model_fold_line(&s->m, t->line.data, t->line.len - 1, err, sizeof err) != MODEL_OK)
		fail_msg("%s's model: %s (%.*s)", s->name, err, (int)t->line.len - 1, t->line.data);
}

/* Deliver the events of one step as the server routes them; `sender` is
 * the seat whose command caused them (-1: none). */
static void deliver(struct table *t, int sender)
{
	for (size_t i = 0; i < t->ev.n; i++) {
		const struct game_event *e = &t->ev.v[i];
		if (e->to == GEV_TO_SENDER) {
			if (sender >= 0)
				fold(t, &t->seats[sender], e);
			continue;
		}
		if (e->to >= 0) {
			for (int k = 0; k < t->nseats; k++)
				if (t->seats[k].open && t->seats[k].player == e->to)
					fold(t, &t->seats[k], e);
			continue;
		}
		for (int k = 0; k < t->nseats; k++)
			if (t->seats[k].open)
				fold(t, &t->seats[k], e);
		fold(t, &t->watcher, e);
		if (e->type == GEV_LEFT)
			for (int k = 0; k < t->nseats; k++)
				if (t->seats[k].player == e->arg[0])
					t->seats[k].open = false;
	}
}

static bool same_cmd(const struct cmd *a, const struct cmd *b)
{
	return a->type == b->type && a->character == b->character &&
	       a->character2 == b->character2 && a->location == b->location &&
	       a->entrance == b->entrance && a->card == b->card && a->target == b->target &&
	       a->has_target == b->has_target && a->fuel == b->fuel;
}

/* The seat's view and legal commands equal the real game's. */
static void compare(struct table *t, struct seat *s, int player)
{
	char err[300], buf[300];
	if (client_cmds_update(&s->cc, &s->m, err, sizeof err) != 0)
		fail_msg("%s: %s", s->name, err);
	struct game_cmd_list *legal = &t->legal;
	game_legal_commands(t->g, player, legal);
	if (s->m.got_config) {
		if (!model_settled(&s->m))
			fail_msg("%s: the model is not settled after a step", s->name);
		struct game_view *real = game_view_new(t->cfg), *mine = game_view_new(s->cc.cfg);
		game_view_of(t->g, player, real);
		client_view_of(&s->m, mine);
		const char *d = game_view_diff(mine, real, buf, sizeof buf);
		if (d) {
			if (getenv("SOPRA_TEST_DEBUG"))
				game_describe(t->g, stdout);
			fail_msg("%s (player %d), batch %ld: the model's view differs: %s", s->name,
			         player, t->batches, d);
		}
		game_view_free(real);
		game_view_free(mine);
	}
	if (s->cc.legal.n != legal->n)
		fail_msg("%s (player %d), batch %ld: %zu legal commands from the model, %zu from "
		         "the game",
		         s->name, player, t->batches, s->cc.legal.n, legal->n);
	for (size_t i = 0; i < legal->n; i++) {
		assert_true(same_cmd(&s->cc.legal.v[i], &legal->v[i]));
		/* its wire line decodes to itself */
		struct cmd c = s->cc.legal.v[i];
		char line[512];
		int n = client_cmd_line(&c, t->rules == RULES_REVISED, line, sizeof line);
		assert_true(n > 1);
		struct proto_cmd pc;
		proto_cmd_init(&pc);
		const char *why = NULL;
		if (!proto_decode(line, (size_t)n - 1, t->rules, &pc, &why))
			fail_msg("%s does not decode: %s", line, why);
		assert_true(same_cmd(&pc.cmd, &c));
		proto_cmd_clear(&pc);
	}
	t->compared++;
}

static void compare_all(struct table *t)
{
	t->batches++;
	for (int k = 0; k < t->nseats; k++)
		if (t->seats[k].open)
			compare(t, &t->seats[k], t->seats[k].player);
	compare(t, &t->watcher, GAME_NO_PLAYER);
}

static struct seat *seat_of(struct table *t, int player)
{
	for (int k = 0; k < t->nseats; k++)
		if (t->seats[k].open && t->seats[k].player == player)
			return &t->seats[k];
	fail_msg("no seat for player %d", player);
	return NULL;
}

/* Seat k sends c (from the legal list of its own model). */
static void send(struct table *t, int k, const struct cmd *c)
{
	struct seat *s = &t->seats[k];
	client_sent(&s->m, c);
	game_event_list_clear(&t->ev);
	int id = game_apply(t->g, s->open ? s->player : GAME_NO_PLAYER, c, &t->ev);
	if (c->type == CMD_REGISTER) {
		s->open = true;
		s->player = id;
	}
	deliver(t, k);
	compare_all(t);
}

/* A random legal command that the client has words for (a command without
 * them, like the example build's Wait, changes the board without an event
 * the model could follow): Leave rarely, EndTurn less than the rest. */
static const struct cmd *pick(struct table *t, const struct game_cmd_list *l)
{
	const struct cmd *known[1024];
	int n = 0;
	for (size_t i = 0; i < l->n && n < 1024; i++)
		if (client_command(l->v[i].type)->menu)
			known[n++] = &l->v[i];
	assert_true(n > 0);
	const struct cmd *c = known[rng_next_int(&t->r, n)];
	for (int tries = 0; tries < 3 && client_command(c->type)->flags & CLIENT_LEAVES; tries++)
		c = known[rng_next_int(&t->r, n)];
	if ((client_command(c->type)->flags & CLIENT_SILENT) && rng_next_int(&t->r, 3) > 0)
		c = known[rng_next_int(&t->r, n)];
	return c;
}

static void play(struct table *t, int players, int64_t seed)
{
	t->g = game_new(t->cfg, seed, t->rules);
	t->nseats = players;
	for (int k = 0; k < players; k++) {
		struct seat *s = &t->seats[k];
		snprintf(s->name, sizeof s->name, "P%d", k);
		s->open = false;
		s->player = -1;
		model_init(&s->m, s->name, t->rules == RULES_REVISED);
		client_cmds_init(&s->cc);
	}
	model_init(&t->watcher.m, NULL, t->rules == RULES_REVISED);
	client_cmds_init(&t->watcher.cc);
	snprintf(t->watcher.name, sizeof t->watcher.name, "watcher");
	t->watcher.open = true;
	/* the watcher connects at once: it gets the Config first */
	struct game_event cfg_ev = {.type = GEV_CONFIG, .to = GEV_TO_ALL, .str = t->cfg->text};
	fold(t, &t->watcher, &cfg_ev);

	for (int k = 0; k < players && game_waiting_for(t->g) == GAME_WAIT_ANY; k++) {
		struct seat *s = &t->seats[k];
		char err[200];
		assert_int_equal(client_cmds_update(&s->cc, &s->m, err, sizeof err), 0);
		assert_int_equal(s->cc.legal.n, 1); /* Register */
		send(t, k, &s->cc.legal.v[0]);
	}
	if (game_waiting_for(t->g) == GAME_WAIT_ANY)
		send(t, 0, &t->seats[0].cc.legal.v[0]); /* StartGame */
	for (int steps = 0; steps < 5000; steps++) {
		int w = game_waiting_for(t->g);
		if (w == GAME_WAIT_NONE)
			break;
		int roll = rng_next_int(&t->r, 1000);
		if (roll < 4) {
			game_event_list_clear(&t->ev);
			game_timeout(t->g, &t->ev);
			deliver(t, -1);
			compare_all(t);
			continue;
		}
		if (roll < 8) {
			game_event_list_clear(&t->ev);
			game_disconnect(t->g, w, &t->ev);
			deliver(t, -1);
			compare_all(t);
			continue;
		}
		struct seat *s = seat_of(t, w);
		assert_true(s->cc.legal.n > 0);
		send(t, (int)(s - t->seats), pick(t, &s->cc.legal));
	}
	assert_true(game_is_over(t->g));
	for (int k = 0; k < players; k++) {
		model_free(&t->seats[k].m);
		client_cmds_free(&t->seats[k].cc);
	}
	model_free(&t->watcher.m);
	client_cmds_free(&t->watcher.cc);
	game_free(t->g);
}

static void play_all(enum game_rules rules)
{
	const char *env = getenv("SOPRA_TEST_GAMES");
	int games = env && atoi(env) > 0 ? atoi(env) : 16;
	struct table t = {.rules = rules};
	game_event_list_init(&t.ev);
	game_cmd_list_init(&t.legal);
	proto_buf_init(&t.line);
	rng_init(&t.r, rules == RULES_BASE ? 5 : 6);
	for (int c = 0; c < nconfigs; c++) {
		t.cfg = configs[c];
		for (int i = 0; i < games; i++)
			play(&t, 1 + i % t.cfg->max_players, 100 * c + i);
	}
	printf("%s: %ld batches, %ld views and lists compared\n", game_rules_name(rules), t.batches,
	       t.compared);
	assert_true(t.batches > 500);
	game_event_list_free(&t.ev);
	game_cmd_list_free(&t.legal);
	proto_buf_free(&t.line);
}

static void test_models_follow_the_game_base(void **state)
{
	(void)state;
	play_all(RULES_BASE);
}

static void test_models_follow_the_game_revised(void **state)
{
	(void)state;
	play_all(RULES_REVISED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_models_follow_the_game_base),
	        cmocka_unit_test(test_models_follow_the_game_revised),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
