/*
 * Unit tests of the journal's file (src/mapfile.c): appends through the
 * mapping (also past the first mapping's span), the zero tail and its cut,
 * reopening, the file size limit hit by exactly the append that crosses it,
 * a SIGBUS turned into EIO, and faulting pages in ahead from another thread
 * without changing a byte.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sopra/mapfile.h"

static void temp_path(char *buf, size_t len, const char *tag)
{
	static int k;
	const char *dir = getenv("TMPDIR");
	snprintf(buf, len, "%s/test_mapfile_%d_%d_%s", dir && *dir ? dir : "/tmp", (int)getpid(),
	         k++, tag);
	unlink(buf);
}

static off_t file_size(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/* The file's size after an append that ended at end, given its size
 * before (grown to MAPFILE_AHEAD past the content, in MAPFILE_GROW steps,
 * only when the content would not fit). */
static off_t grown(off_t before, off_t end)
{
	if (end <= before)
		return before;
	off_t want = end + MAPFILE_AHEAD;
	return (want + MAPFILE_GROW - 1) / MAPFILE_GROW * MAPFILE_GROW;
}

/* The whole file. */
static char *slurp(const char *path, size_t *len)
{
	off_t n = file_size(path);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, (size_t)n), n);
	close(fd);
	*len = (size_t)n;
	return buf;
}

/* A new file at a fresh path holding "abc\n" (and its zero tail). */
static void create_abc(struct mapfile *f, char *path, size_t len, const char *tag)
{
	temp_path(path, len, tag);
	assert_int_equal(mapfile_create(f, path), 0);
	assert_int_equal(mapfile_append(f, "abc\n", 4), 0);
}

/* The same, then the file cut to nothing behind the writer's back: the
 * mapped pages are gone. */
static void create_abc_truncated(struct mapfile *f, char *path, size_t len, const char *tag)
{
	create_abc(f, path, len, tag);
	int other = open(path, O_WRONLY);
	assert_true(other >= 0);
	assert_int_equal(ftruncate(other, 0), 0);
	close(other);
}

/* KiB of the mapping starting at map that are mapped into the process
 * (smaps' Rss), or -1 if it is not found. */
static long mapped_kib(const void *map)
{
	FILE *in = fopen("/proc/self/smaps", "r");
	assert_non_null(in);
	char line[512];
	long kib = -1;
	bool ours = false;
	while (fgets(line, sizeof line, in)) {
		unsigned long start, end;
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			ours = start == (unsigned long)(uintptr_t)map;
		else if (ours && sscanf(line, "Rss: %ld kB", &kib) == 1)
			break;
	}
	fclose(in);
	return kib;
}

/* Appends of every size from 1 to 997 bytes, 1 MiB in all: the file grows
 * by the rule of grown() and is the content plus a zero tail until the
 * cut, and exactly the content after it. */
static void test_append_and_grow(void **state)
{
	(void)state;
	char path[256];
	temp_path(path, sizeof path, "grow");
	struct mapfile f;
	assert_int_equal(mapfile_create(&f, path), 0);
	size_t total = 1024 * 1024;
	off_t size = 0;
	char *want = malloc(total);
	assert_non_null(want);
	for (size_t i = 0; i < total; i++)
		want[i] = (char)('a' + (i * 7 + i / 991) % 26);
	size_t at = 0;
	for (size_t n = 1; at < total; n = n % 997 + 1) {
		size_t k = n < total - at ? n : total - at;
		assert_int_equal(mapfile_append(&f, want + at, k), 0);
		at += k;
		assert_int_equal(f.len, (off_t)at);
		size = grown(size, (off_t)at);
		assert_int_equal(f.alloc, size);
	}
	assert_true(size > (off_t)total + MAPFILE_AHEAD - MAPFILE_GROW);
	assert_int_equal(file_size(path), size);
	/* what lies behind the last growth was unmapped: not the whole MiB */
	long kib = mapped_kib(f.map);
	print_message("mapped after 1 MiB of appends: %ld KiB\n", kib);
	assert_true(kib >= 0 && kib <= MAPFILE_GROW / 1024 + 8);
	size_t len;
	char *got = slurp(path, &len);
	assert_memory_equal(got, want, total);
	for (size_t i = total; i < len; i++)
		assert_int_equal(got[i], 0);
	free(got);
	assert_int_equal(mapfile_cut(&f), 0);
	mapfile_close(&f);
	assert_int_equal(f.fd, -1);
	got = slurp(path, &len);
	assert_int_equal(len, total);
	assert_memory_equal(got, want, total);
	free(got);
	free(want);
	unlink(path);
}

/* A file left with its zero tail (a killed server) is reopened after its
 * content: the tail goes, appends continue, nothing of the old content is
 * lost. An existing file is never created over. A new file is its owner's
 * alone, whatever the umask (a journal holds the session key). */
static void test_reopen_after_tail(void **state)
{
	(void)state;
	char path[256];
	struct mapfile f;
	mode_t old_mask = umask(0);
	create_abc(&f, path, sizeof path, "reopen");
	umask(old_mask);
	mapfile_close(&f); /* no cut: as a SIGKILL leaves it */
	assert_int_equal(file_size(path), grown(0, 4));
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	struct mapfile again;
	assert_int_equal(mapfile_create(&again, path), EEXIST);
	assert_int_equal(again.fd, -1);

	assert_int_equal(mapfile_open_at(&f, path, 4), 0);
	assert_int_equal(file_size(path), 4);
	assert_int_equal(mapfile_append(&f, "def\n", 4), 0);
	assert_int_equal(mapfile_cut(&f), 0);
	mapfile_close(&f);
	size_t len;
	char *got = slurp(path, &len);
	assert_int_equal(len, 8);
	assert_memory_equal(got, "abc\ndef\n", 8);
	free(got);
	unlink(path);

	assert_int_equal(mapfile_open_at(&f, path, 0), ENOENT);
	assert_int_equal(f.fd, -1);
}

/* Under a file size limit the tail taken ahead shrinks to what each append
 * needs: the append that crosses the limit fails with EFBIG (not an
 * earlier one), and the content stays what it was. */
static void test_size_limit_exact(void **state)
{
	(void)state;
	char path[256];
	temp_path(path, sizeof path, "limit");
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigaction(SIGXFSZ, &ign, &old);
	struct rlimit saved, lim;
	getrlimit(RLIMIT_FSIZE, &saved);
	lim = saved;
	lim.rlim_cur = 1000;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	struct mapfile f;
	assert_int_equal(mapfile_create(&f, path), 0);
	char buf[600];
	memset(buf, 'x', sizeof buf);
	assert_int_equal(mapfile_append(&f, buf, 600), 0);
	assert_int_equal(mapfile_append(&f, buf, 400), 0); /* exactly the limit */
	assert_int_equal(mapfile_append(&f, buf, 1), EFBIG);
	assert_int_equal(f.len, 1000);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
	sigaction(SIGXFSZ, &old, NULL);
	assert_int_equal(mapfile_cut(&f), 0);
	mapfile_close(&f);
	assert_int_equal(file_size(path), 1000);
	unlink(path);
}

/* The file cut short behind the writer's back: the copy's SIGBUS becomes
 * EIO and the content length stays; the process lives on. */
static void test_sigbus_is_eio(void **state)
{
	(void)state;
	char path[256];
	struct mapfile f;
	create_abc_truncated(&f, path, sizeof path, "sigbus");
	char page[5000]; /* beyond the first page too */
	memset(page, 'y', sizeof page);
	assert_int_equal(mapfile_append(&f, page, sizeof page), EIO);
	assert_int_equal(f.len, 4);
	assert_int_equal(mapfile_append(&f, "z", 1), EIO); /* and again */
	mapfile_close(&f);
	unlink(path);
}

/* A SIGBUS that is not the copy's goes to the disposition there was
 * before: here the test's own handler, which jumps back into the test. */
static sigjmp_buf other_env;

static void other_handler(int sig)
{
	(void)sig;
	siglongjmp(other_env, 1);
}

static void test_other_sigbus_passes_on(void **state)
{
	(void)state;
	char path[256];
	temp_path(path, sizeof path, "other");
	struct sigaction mine = {.sa_handler = other_handler}, old;
	sigemptyset(&mine.sa_mask);
	sigaction(SIGBUS, &mine, &old);
	struct mapfile f;
	assert_int_equal(mapfile_create(&f, path), 0); /* the guard, over mine */
	struct sigaction now;
	sigaction(SIGBUS, NULL, &now);
	assert_true(now.sa_flags & SA_SIGINFO); /* the guard is in place */
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	volatile char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(ftruncate(fd, 0), 0);
	volatile int reached = 0;
	if (sigsetjmp(other_env, 1) == 0) {
		m[0] = 1; /* SIGBUS, outside any copy */
		reached = 1;
	}
	assert_int_equal(reached, 0); /* the store faulted, mine caught it */
	sigaction(SIGBUS, NULL, &now);
	assert_true(now.sa_handler == other_handler); /* the guard stepped aside */
	munmap((void *)m, 4096);
	close(fd);
	sigaction(SIGBUS, &old, NULL);
	mapfile_close(&f);
	unlink(path);
}

/* Past the first mapping's span (16 MiB): the mapping is replaced by a
 * larger one and nothing written before is lost. */
static void test_past_the_first_span(void **state)
{
	(void)state;
	char path[256];
	temp_path(path, sizeof path, "span");
	struct mapfile f;
	assert_int_equal(mapfile_create(&f, path), 0);
	static char block[64 * 1024];
	size_t blocks = (17u << 20) / sizeof block + 1;
	for (size_t i = 0; i < blocks; i++) {
		memset(block, 'a' + (int)(i % 26), sizeof block);
		block[0] = '\n';
		assert_int_equal(mapfile_append(&f, block, sizeof block), 0);
	}
	assert_true(f.span > ((off_t)16 << 20));
	assert_int_equal(mapfile_cut(&f), 0);
	mapfile_close(&f);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	for (size_t i = 0; i < blocks; i++) {
		assert_int_equal(read(fd, block, sizeof block), (ssize_t)sizeof block);
		assert_int_equal(block[0], '\n');
		assert_int_equal(block[1], 'a' + (int)(i % 26));
		assert_int_equal(block[sizeof block - 1], 'a' + (int)(i % 26));
	}
	assert_int_equal(read(fd, block, 1), 0);
	close(fd);
	unlink(path);
}

static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Whether page-fault counts mean what they say: a sanitizer's or
 * valgrind's own memory takes faults of its own. */
static bool faults_countable(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	return false;
#endif
#endif
	const char *pre = getenv("LD_PRELOAD");
	return !(pre && strstr(pre, "vgpreload"));
}

/* Prefaulting changes no byte (the content, the zero tail), stops at the
 * file's end, and the appends into prefaulted pages take no page fault
 * where appends into fresh ones take one per page. */
static void test_prefault(void **state)
{
	(void)state;
	char path[256];
	struct mapfile f;
	create_abc(&f, path, sizeof path, "prefault");
	mapfile_prefault(&f, (off_t)1 << 40); /* clamped to the file's size */
	char line[100];
	memset(line, 'p', sizeof line);
	line[99] = '\n';
	long f0 = minor_faults();
	for (int i = 0; i < 600; i++) /* 60,000 bytes: 15 pages */
		assert_int_equal(mapfile_append(&f, line, sizeof line), 0);
	long prefaulted = minor_faults() - f0;
	/* the same past what was faulted in: the file's end moves on */
	off_t fresh_from = f.alloc;
	while (f.len < fresh_from)
		assert_int_equal(mapfile_append(&f, line, sizeof line), 0);
	f0 = minor_faults();
	for (int i = 0; i < 600; i++)
		assert_int_equal(mapfile_append(&f, line, sizeof line), 0);
	long fresh = minor_faults() - f0;
	if (faults_countable()) {
		print_message("page faults for 15 pages: %ld prefaulted, %ld fresh\n", prefaulted,
		              fresh);
		assert_true(prefaulted <= 1);
		assert_true(fresh >= 10);
	} else {
		print_message("SKIPPED the page-fault counts: under a sanitizer or valgrind\n");
	}
	off_t len = f.len;
	assert_int_equal(mapfile_cut(&f), 0);
	mapfile_prefault(&f, 4096 * 8); /* after the cut: nothing past the end */
	mapfile_close(&f);
	size_t n;
	char *got = slurp(path, &n);
	assert_int_equal(n, (size_t)len);
	assert_memory_equal(got, "abc\n", 4);
	for (size_t at = 4; at < n; at += sizeof line)
		assert_memory_equal(got + at, line, sizeof line);
	free(got);
	unlink(path);
}

/* Another thread prefaults over and over while this one appends 2 MiB
 * (past several growth steps): every byte arrives, the tail stays zero. */
struct prefaulter {
	struct mapfile *f;
	volatile int stop;
	long rounds;
};

static void *prefault_loop(void *arg)
{
	struct prefaulter *p = arg;
	while (!p->stop) {
		mapfile_prefault(p->f, 64 * 1024);
		p->rounds++;
	}
	return NULL;
}

static void test_prefault_while_appending(void **state)
{
	(void)state;
	char path[256];
	temp_path(path, sizeof path, "concurrent");
	struct mapfile f;
	assert_int_equal(mapfile_create(&f, path), 0);
	struct prefaulter p = {.f = &f};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, prefault_loop, &p), 0);
	size_t total = 2u << 20;
	char *want = malloc(total);
	assert_non_null(want);
	for (size_t i = 0; i < total; i++)
		want[i] = (char)('A' + (i * 13 + i / 4093) % 26);
	for (size_t at = 0, n = 1; at < total; at += n, n = n % 4999 + 1) {
		if (n > total - at)
			n = total - at;
		assert_int_equal(mapfile_append(&f, want + at, n), 0);
	}
	p.stop = 1;
	pthread_join(t, NULL);
	assert_true(p.rounds > 0);
	size_t len;
	char *got = slurp(path, &len);
	assert_true(len >= total);
	assert_memory_equal(got, want, total);
	for (size_t i = total; i < len; i++)
		assert_int_equal(got[i], 0);
	free(got);
	free(want);
	mapfile_close(&f);
	unlink(path);
}

/* Prefaulting a file cut short behind the writer's back touches nothing
 * past its end: no SIGBUS. */
static void test_prefault_after_truncation(void **state)
{
	(void)state;
	char path[256];
	struct mapfile f;
	create_abc_truncated(&f, path, sizeof path, "prefault-trunc");
	mapfile_prefault(&f, 64 * 1024); /* the process lives on */
	assert_int_equal(mapfile_append(&f, "z", 1), EIO);
	mapfile_close(&f);
	unlink(path);
}

/* The file truncated and grown again behind the writer's back, over and
 * over, while another thread prefaults: a page can go between the kernel
 * making it present and the read of it, and that read's SIGBUS must not
 * reach the process (the guard covers the prefaulting thread too). */
struct truncator {
	const char *path;
	volatile int stop;
};

static void *truncate_loop(void *arg)
{
	struct truncator *t = arg;
	int fd = open(t->path, O_WRONLY);
	assert_true(fd >= 0);
	while (!t->stop) {
		assert_int_equal(ftruncate(fd, 0), 0);
		assert_int_equal(ftruncate(fd, MAPFILE_AHEAD), 0);
	}
	close(fd);
	return NULL;
}

static void test_prefault_while_truncated(void **state)
{
	(void)state;
	char path[256];
	struct mapfile f;
	create_abc(&f, path, sizeof path, "prefault-race");
	struct truncator t = {.path = path};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, truncate_loop, &t), 0);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long rounds = 0;
	do {
		mapfile_prefault(&f, MAPFILE_AHEAD);
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 < 500);
	t.stop = 1;
	pthread_join(th, NULL);
	print_message("%ld prefaults while the file came and went\n", rounds);
	mapfile_close(&f);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_append_and_grow),
	        cmocka_unit_test(test_past_the_first_span),
	        cmocka_unit_test(test_prefault),
	        cmocka_unit_test(test_prefault_while_appending),
	        cmocka_unit_test(test_prefault_after_truncation),
	        cmocka_unit_test(test_prefault_while_truncated),
	        cmocka_unit_test(test_reopen_after_tail),
	        cmocka_unit_test(test_size_limit_exact),
	        cmocka_unit_test(test_sigbus_is_eio),
	        cmocka_unit_test(test_other_sigbus_passes_on),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
