/*
 * sink_log: a recording broadcaster sink for the unit tests (test_bcast.c,
 * test_session.c). The sink's context is a struct whose first member is
 * `char log[SINK_LOG_SIZE]`; each call appends one item, separated by a
 * space: "join:p@comm", "left:p@comm", "close:comm" (the deliveries are
 * each test's own, through sink_log_add).
 */
#ifndef SOPRA_TEST_SINK_LOG_H
#define SOPRA_TEST_SINK_LOG_H

#include <stdio.h>
#include <string.h>

#define SINK_LOG_SIZE 4096

/* Append item to the log at ctx (a struct starting with the log). */
static inline void sink_log_add(void *ctx, const char *item)
{
	char *log = ctx;
	size_t n = strlen(log);
	snprintf(log + n, SINK_LOG_SIZE - n, "%s%s", n ? " " : "", item);
}

static inline void sink_log_joined(void *ctx, int comm_id, int player)
{
	char item[32];
	snprintf(item, sizeof item, "join:%d@%d", player, comm_id);
	sink_log_add(ctx, item);
}

static inline void sink_log_left(void *ctx, int comm_id, int player)
{
	char item[32];
	snprintf(item, sizeof item, "left:%d@%d", player, comm_id);
	sink_log_add(ctx, item);
}

static inline void sink_log_close(void *ctx, int comm_id)
{
	char item[32];
	snprintf(item, sizeof item, "close:%d", comm_id);
	sink_log_add(ctx, item);
}

#endif
