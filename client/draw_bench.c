/*
 * draw_bench: what a redraw of sopra-client costs, without a terminal's or
 * a loaded machine's noise (docs/client.md, "Responsiveness").
 *
 *   client-draw-bench GAME.ndjson base|revised COLS ROWS [REPEAT]
 *
 * Folds a recorded game (one event line each, as sopra-bot --log or
 * client/testdata/bot_*.ndjson write them) into the client's state as the
 * player B0, and after each event draws the whole screen (ui_draw) into an
 * ncurses screen of COLS x ROWS whose output goes to /dev/null. Each
 * event's fold + draw is timed in the thread's CPU time, so other
 * processes on the machine do not count; REPEAT (default 5) plays the game
 * that many times. Prints the number of draws, the median, the 99th
 * percentile and the maximum in ms. Not a test: nothing passes or fails.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "ui.h"

#define MAX_DRAWS 200000

static double thread_cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* An ncurses screen of cols x rows writing into /dev/null. */
static SCREEN *offscreen(int cols, int rows)
{
	char c[16], r[16];
	snprintf(c, sizeof c, "%d", cols);
	snprintf(r, sizeof r, "%d", rows);
	setenv("COLUMNS", c, 1);
	setenv("LINES", r, 1);
	if (!getenv("TERM"))
		setenv("TERM", "xterm", 1);
	FILE *out = fopen("/dev/null", "w");
	SCREEN *s = out ? newterm(NULL, out, stdin) : NULL;
	if (s)
		set_term(s);
	return s;
}

/* Fold and draw every line of f once, appending each one's CPU ms to ms. */
static int play(FILE *f, struct app *a, const struct view *v, double *ms, int n)
{
	static char line[1 << 20];
	rewind(f);
	app_reset(a);
	while (n < MAX_DRAWS && fgets(line, sizeof line, f)) {
		size_t len = strcspn(line, "\n");
		if (len == 0 || strstr(line, "\"register first\""))
			continue;
		double t0 = thread_cpu_ms();
		app_feed(a, line, len);
		ui_draw(a, v);
		ms[n++] = thread_cpu_ms() - t0;
	}
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr,
		        "usage: client-draw-bench GAME.ndjson base|revised COLS ROWS [REPEAT]\n");
		return 64;
	}
	FILE *f = fopen(argv[1], "r");
	int cols = atoi(argv[3]), rows = atoi(argv[4]), repeat = argc > 5 ? atoi(argv[5]) : 5;
	if (!f || cols < 20 || rows < 10 || repeat < 1) {
		fprintf(stderr, "client-draw-bench: cannot read %s, or a bad size\n", argv[1]);
		return 1;
	}
	if (!offscreen(cols, rows)) {
		fprintf(stderr, "client-draw-bench: no terminal description for TERM\n");
		return 1;
	}
	static struct app a;
	static struct view v;
	static double ms[MAX_DRAWS];
	v.secs_left = -1;
	app_init(&a, APP_PLAY, "B0", strcmp(argv[2], "revised") == 0);
	int n = 0;
	for (int i = 0; i < repeat; i++)
		n = play(f, &a, &v, ms, n);
	endwin();
	app_free(&a);
	fclose(f);
	if (n == 0)
		return 1;
	qsort(ms, (size_t)n, sizeof ms[0], cmp_double);
	printf("%s %dx%d: %d draws, median %.3f ms, p99 %.3f ms, max %.3f ms (CPU time)\n", argv[2],
	       cols, rows, n, ms[n / 2], ms[(long)n * 99 / 100], ms[n - 1]);
	return 0;
}
