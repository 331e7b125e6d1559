/*
 * bot_table: whole games between strategies in one process, each bot told
 * exactly what its connection would be told.
 *
 * The server's own path carries every command and event: a bot's command
 * is its wire line (proto_encode_cmd), queued and decoded like a line from
 * a socket, applied and its events routed to the connections they go to by
 * the server's core (core.h: queue, dispatcher, broadcaster). Each
 * seat encodes the events it receives as the server writes them and folds
 * the lines into a client model (client/model.h), exactly like sopra-bot;
 * its strategy decides from that model's view (client/command.h) when an
 * ActNow or Characters arrives. Only an oracle seat (the benchmark's
 * ceiling) reads the real game instead.
 *
 * For the win-rate benchmark (bench/winrate.c) and the bots' tests, which
 * play hundreds of games: no sockets, no processes, the same decisions a
 * sopra-bot with the same options would make.
 */
#ifndef SOPRA_BOTS_TABLE_H
#define SOPRA_BOTS_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sopra/config.h"
#include "sopra/game.h"
#include "strategy.h"

struct table_seat {
	struct strategy_options strategy;
	bool oracle; /* decide with the real game (strategy_choose_oracle) */
};

struct table_result {
	bool won;
	int rounds;                  /* rounds started when the game ended */
	const char *end_reason;      /* game_end_reason (static) */
	long commands;               /* lines the seats sent */
	long failed;                 /* CommandFailed events the seats received */
	struct strategy_stats stats; /* every seat's together */
};

/*
 * Play one game of cfg in `rules` with game seed `seed` and nseats seats
 * (1 .. cfg->max_players; the first starts the game when it is not full),
 * registered in order. With transcript not NULL, every line a seat sends
 * is written there as "P<seat> <line>". Returns 0 and the result, or -1
 * with a message in err when a seat could not go on (a model that rejects
 * an event, a strategy with nothing to send while prompted, the game not
 * over after a million commands): a bug, never the game's outcome.
 */
int table_play(const struct config *cfg, enum game_rules rules, int64_t seed, int nseats,
               const struct table_seat *seats, FILE *transcript, struct table_result *out,
               char *err, size_t errlen);

#endif
