/*
 * contract.h: checking that a broken contract stops the program (a failed
 * assert), for the unit tests. dies(fn) runs fn in a child process, its
 * output (and valgrind's, if any) thrown away, and says whether the child
 * ended by SIGABRT. In a build without asserts (NDEBUG) the tests that use
 * it skip themselves: there a broken contract is undefined.
 */
#ifndef SOPRA_TESTS_CONTRACT_H
#define SOPRA_TESTS_CONTRACT_H

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

static inline bool dies(void (*fn)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		fn();
		_exit(0);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return false;
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

#ifdef NDEBUG
#define SKIP_WITHOUT_ASSERTS() skip()
#else
#define SKIP_WITHOUT_ASSERTS() ((void)0)
#endif

#endif
