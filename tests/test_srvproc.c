/*
 * Unit tests for common/srvproc: the port in a "listening on" line, and
 * child processes (a /bin/sh standing in for sopra-server) that report a
 * port on stderr, exit first or stay silent, with the log in a file and in
 * a pipe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "srvproc.h"

static void test_port_in(void **state)
{
	(void)state;
	assert_int_equal(srvproc_port_in("sopra-server: listening on 0.0.0.0:4242 and [::]:4242 "
	                                 "(rules base)\n"),
	                 4242);
	assert_int_equal(srvproc_port_in("sopra-server: seed 1\nsopra-server: listening on "
	                                 "[::1]:31000, 127.0.0.1:31000 (rules revised)\n"),
	                 31000);
	assert_int_equal(srvproc_port_in("sopra-server: listening on 127.0.0.1:7\n"), 7);
	/* not (yet) a complete line, no line, no port */
	assert_int_equal(srvproc_port_in("sopra-server: listening on 0.0.0.0:42"), 0);
	assert_int_equal(srvproc_port_in("sopra-server: seed 1\n"), 0);
	assert_int_equal(srvproc_port_in("sopra-server: listening on nowhere\n"), 0);
	assert_int_equal(srvproc_port_in("sopra-server: listening on 0.0.0.0:0\n"), 0);
	assert_int_equal(srvproc_port_in("sopra-server: listening on 0.0.0.0:70000\n"), 0);
	assert_int_equal(srvproc_port_in(""), 0);
}

/* A stand-in server: /bin/sh -c script. */
static int start_sh(struct srvproc *s, const char *script, int log, int wait_ms)
{
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	const struct srvproc_opts o = {.out = SPAWN_NULL, .log = log};
	return srvproc_start(s, argv, &o, wait_ms);
}

#define REPORTS_PORT                                                                      \
	"echo 'sopra-server: seed 5' >&2; "                                               \
	"echo 'sopra-server: listening on 0.0.0.0:4321 and [::]:4321 (rules base)' >&2; " \
	"echo 'sopra-server: after' >&2; exec sleep 30"

static void test_log_pipe(void **state)
{
	(void)state;
	struct srvproc s;
	assert_int_equal(start_sh(&s, REPORTS_PORT, SRVPROC_LOG_PIPE, 10000), 4321);
	assert_int_equal(s.port, 4321);
	assert_true(s.pipe);
	assert_false(srvproc_reap(&s, 0));
	/* what follows the line is left in the pipe */
	char buf[64];
	ssize_t n = read(s.log_fd, buf, strlen("sopra-server: after\n"));
	assert_int_equal(n, (ssize_t)strlen("sopra-server: after\n"));
	assert_memory_equal(buf, "sopra-server: after\n", (size_t)n);
	int st = srvproc_stop(&s, 5000);
	assert_true(s.exited);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGTERM);
	close(s.log_fd);
}

static void test_log_file(void **state)
{
	(void)state;
	FILE *log = tmpfile();
	assert_non_null(log);
	struct srvproc s;
	assert_int_equal(start_sh(&s, REPORTS_PORT, fileno(log), 10000), 4321);
	assert_false(s.pipe);
	assert_int_equal(s.log_fd, fileno(log));
	srvproc_stop(&s, 5000);
	fclose(log);
}

static void test_exits_first(void **state)
{
	(void)state;
	struct srvproc s;
	assert_int_equal(start_sh(&s, "echo 'sopra-server: bad config' >&2; exit 3",
	                          SRVPROC_LOG_PIPE, 10000),
	                 SRVPROC_EXITED);
	assert_true(s.exited);
	assert_true(WIFEXITED(s.status));
	assert_int_equal(WEXITSTATUS(s.status), 3);
	assert_int_equal(s.port, 0);
	close(s.log_fd);

	FILE *log = tmpfile();
	assert_non_null(log);
	assert_int_equal(start_sh(&s, "exit 4", fileno(log), 10000), SRVPROC_EXITED);
	assert_int_equal(WEXITSTATUS(s.status), 4);
	assert_int_equal(srvproc_stop(&s, 1000), s.status); /* not signalled again */
	fclose(log);
}

static void test_silent(void **state)
{
	(void)state;
	struct srvproc s;
	assert_int_equal(start_sh(&s, "exec sleep 30", SRVPROC_LOG_PIPE, 100), SRVPROC_TIMEOUT);
	assert_false(s.exited);
	close(s.log_fd);
	int st = srvproc_stop(&s, 5000);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGTERM);

	/* one that ignores SIGTERM is killed after the wait */
	FILE *log = tmpfile();
	assert_non_null(log);
	assert_int_equal(start_sh(&s, "trap '' TERM; while :; do sleep 1; done", fileno(log), 100),
	                 SRVPROC_TIMEOUT);
	st = srvproc_stop(&s, 300);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
	fclose(log);
}

static void test_not_started(void **state)
{
	(void)state;
	struct srvproc s;
	const char *argv[] = {"/nonexistent/sopra-server", "--port", "0", NULL};
	const struct srvproc_opts o = {.out = SPAWN_NULL, .log = SRVPROC_LOG_PIPE};
	assert_int_equal(srvproc_start(&s, argv, &o, 1000), SRVPROC_NOT_STARTED);
	assert_int_equal(s.pid, 0);
	assert_int_equal(s.log_fd, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_port_in),  cmocka_unit_test(test_log_pipe),
	        cmocka_unit_test(test_log_file), cmocka_unit_test(test_exits_first),
	        cmocka_unit_test(test_silent),   cmocka_unit_test(test_not_started),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
