/* core: the game, the queue, the dispatcher, the broadcaster and the
 * session layer, assembled once (include/sopra/core.h). */
#include "sopra/core.h"

#include <assert.h>
#include <stdlib.h>

#include "sopra/xalloc.h"

struct core {
	struct game *game;        /* owned */
	struct bcast *bcast;      /* owned */
	struct session *sessions; /* owned */
	struct dispatcher disp;   /* owned */
	struct cmdq queue;        /* owned */
};

struct core *core_new(const struct core_params *p, struct bcast_sink out)
{
	assert(p && p->cfg && out.send);
	struct core *c = xcalloc(1, sizeof *c);
	c->game = game_new(p->cfg, p->seed, p->rules);
	c->bcast = bcast_new(out);
	c->sessions = session_new(&p->sessions, c->bcast, out); /* the broadcaster's sink now */
	dispatch_init(&c->disp, c->game, c->bcast, c->sessions, p->log);
	dispatch_set_failure_budget(&c->disp, p->failure_budget);
	cmdq_init(&c->queue, p->rules, session_on(c->sessions));
	return c;
}

void core_free(struct core *c)
{
	if (!c)
		return;
	cmdq_free(&c->queue);
	dispatch_free(&c->disp);
	session_free(c->sessions);
	bcast_free(c->bcast);
	game_free(c->game);
	free(c);
}

struct game *core_game(const struct core *c)
{
	return c->game;
}

const struct bcast *core_bcast(const struct core *c)
{
	return c->bcast;
}

const struct session *core_sessions(const struct core *c)
{
	return c->sessions;
}

int core_player_of(const struct core *c, int comm_id)
{
	return bcast_player_of(c->bcast, comm_id);
}

struct cmdq *core_queue(struct core *c)
{
	return &c->queue;
}

void core_set_hooks(struct core *c, const struct dispatch_hooks *hooks)
{
	dispatch_set_hooks(&c->disp, hooks);
}

struct dispatch_result core_drain(struct core *c)
{
	return dispatch_drain(&c->disp, &c->queue);
}

void core_feed(struct core *c, const struct cmdq_entry *e)
{
	dispatch_entry(&c->disp, e);
}

void core_all_away(struct core *c)
{
	session_all_away(c->sessions, game_is_over(c->game));
}

void core_resume(struct core *c, int grace_sec)
{
	session_resume(c->sessions, game_is_over(c->game), grace_sec);
}
