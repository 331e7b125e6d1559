/*
 * mapfile: an append-only file written through a shared mapping
 * (include/sopra/mapfile.h).
 *
 * Why not write(2): on this kind of VM a system call costs about 1.7 us,
 * as much as the rest of a journal entry together (docs/performance.md,
 * "Journal"). A memcpy into a MAP_SHARED page puts the bytes in the page
 * cache just as write(2) does: a crash of the process loses nothing, and
 * fdatasync(2) writes the pages back like any others (Linux tracks pages
 * dirtied through a mapping).
 *
 * The two ways a mapped write can fail are kept out of the copy:
 *  - a full disk, or the file size limit: the file is grown ahead with
 *    posix_fallocate, which takes the blocks or fails with ENOSPC / EFBIG
 *    there and then, before anything is copied;
 *  - a SIGBUS anyway (the file was truncated behind our back, an I/O error
 *    reading a page in): a handler, armed only during the copy, jumps back
 *    out of it and the append fails with EIO. Any other SIGBUS goes to the
 *    disposition there was before. The prefaulting thread's reads are
 *    guarded the same way.
 *
 * The first write to a page of a file mapping takes a page fault, 15-17 us
 * on this VM (the hypervisor fills its own page tables too): one in ~40
 * journal entries, and on the thread that serves the players. So the file
 * is mapped once, not window by window, and mapfile_prefault lets another
 * thread fault the next pages in ahead of the appends: MADV_POPULATE_WRITE
 * makes them present and writable without writing them, and one read of
 * each makes the hypervisor map it too (measured: without that read the
 * first write still costs ~10 us).
 */
/* glibc's feature test macro: madvise(2) and F_OFD_SETLK are not in POSIX */
// NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
#define _GNU_SOURCE 1

#include "sopra/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(off_t) == 8, "mapfile needs a 64-bit off_t");

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older libc headers lack it */
#endif

/* The first mapping's size; it doubles when the content outgrows it. Only
 * address space: pages past the file's end are never touched. */
#define MAPFILE_SPAN_MIN ((off_t)16 << 20)

/* ---- the SIGBUS guard ---------------------------------------------------- */

/* Per thread: the appending thread's copy and the prefaulting thread's
 * reads are each guarded on their own (a fault's SIGBUS goes to the thread
 * that faulted). */
static _Thread_local sigjmp_buf copy_env;
static _Thread_local volatile sig_atomic_t copying;
static _Thread_local char *volatile copy_lo, *volatile copy_hi;
static struct sigaction prev_bus;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	char *at = si->si_addr;
	if (copying && at >= copy_lo && at < copy_hi) {
		copying = 0;
		siglongjmp(copy_env, 1);
	}
	/* not ours: the faulting instruction runs again under the
	 * disposition that was there before */
	sigaction(SIGBUS, &prev_bus, NULL);
}

/* Installed by every open, unless it is still in place (someone may have
 * set another handler since; that one is then the disposition to go back
 * to). */
static void install_guard(void)
{
	struct sigaction cur;
	if (sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction == on_sigbus)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	/* SA_NODEFER: SIGBUS stays unblocked after the jump, so sigsetjmp
	 * need not save the signal mask (a system call per copy) */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &prev_bus);
}

/* memcpy into the mapping; EIO instead of a SIGBUS. */
static int copy_guarded(char *dst, const void *src, size_t n)
{
	if (sigsetjmp(copy_env, 0) != 0)
		return EIO;
	copy_lo = dst;
	copy_hi = dst + n;
	copying = 1;
	atomic_signal_fence(memory_order_seq_cst); /* the copy stays inside */
	memcpy(dst, src, n);
	atomic_signal_fence(memory_order_seq_cst);
	copying = 0;
	return 0;
}

/* One read of each page of [from, to), `page` apart. Not inlined: its
 * loop variable must not live in touch_guarded's frame, which a longjmp
 * returns to. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void
read_each_page(char *from, char *to, off_t page)
{
	for (char *at = from; at < to; at += page)
		(void)__atomic_load_n(at, __ATOMIC_RELAXED);
}

/* read_each_page; false if a read raised SIGBUS (the file shrank behind the
 * server's back), and the rest is left unread. */
static bool touch_guarded(char *from, char *to, off_t page)
{
	if (sigsetjmp(copy_env, 0) != 0)
		return false;
	copy_lo = from;
	copy_hi = to;
	copying = 1;
	atomic_signal_fence(memory_order_seq_cst);
	read_each_page(from, to, page);
	atomic_signal_fence(memory_order_seq_cst);
	copying = 0;
	return true;
}

/* ---- growing and mapping ------------------------------------------------- */

static int fallocate_from(int fd, off_t from, off_t to)
{
	int e;
	do
		e = posix_fallocate(fd, from, to - from);
	while (e == EINTR);
	return e;
}

/* Make the file at least end bytes long, with its blocks taken, and
 * MAPFILE_AHEAD more in whole MAPFILE_GROW steps if the disk and the size
 * limit allow; else exactly end (so that the limit is hit by the append
 * that crosses it, not earlier). */
static int grow(struct mapfile *f, off_t end)
{
	if (end <= f->alloc)
		return 0;
	off_t want = end + MAPFILE_AHEAD;
	want += (MAPFILE_GROW - want % MAPFILE_GROW) % MAPFILE_GROW;
	int e = fallocate_from(f->fd, f->alloc, want);
	if (e == ENOSPC || e == EFBIG) {
		want = end;
		e = fallocate_from(f->fd, f->alloc, want);
	}
	if (e == 0)
		__atomic_store_n(&f->alloc, want, __ATOMIC_RELAXED);
	return e;
}

static off_t page_size(void)
{
	static off_t page;
	if (!page)
		page = (off_t)sysconf(_SC_PAGESIZE);
	return page;
}

/* Map the file with a span of at least end bytes; 0 or errno. */
static int map_to(struct mapfile *f, off_t end)
{
	if (f->map && end <= f->span)
		return 0;
	off_t span = f->span ? f->span : MAPFILE_SPAN_MIN;
	while (span < end)
		span *= 2;
	pthread_mutex_lock(&f->map_mu);
	if (f->map)
		munmap(f->map, (size_t)f->span);
	void *m = mmap(NULL, (size_t)span, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	int e = m == MAP_FAILED ? errno : 0;
	f->map = e ? NULL : m;
	f->span = e ? 0 : span;
	f->dropped = 0;
	pthread_mutex_unlock(&f->map_mu);
	return e;
}

/* ---- the interface ------------------------------------------------------- */

static void init(struct mapfile *f, int fd, off_t len)
{
	f->fd = fd;
	f->len = f->alloc = len;
	f->map = NULL;
	f->span = 0;
	f->dropped = 0;
	pthread_mutex_init(&f->map_mu, NULL);
	install_guard();
}

/* Take the exclusive lock on fd's whole file (an OFD lock: it belongs to
 * this open file, lasts until it is closed and is not shared with a child).
 * 0, EWOULDBLOCK when another open file holds it, or errno. */
static int lock_whole(int fd)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	return errno == EAGAIN || errno == EACCES ? EWOULDBLOCK : errno;
}

int mapfile_create(struct mapfile *f, const char *path)
{
	/* 0600 whatever the umask: a journal's header holds the session key,
	 * from which every player's secret follows, and a resume must be able
	 * to write it again */
	f->fd = -1;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno;
	int e = fchmod(fd, 0600) == 0 ? lock_whole(fd) : errno;
	if (e != 0) {
		close(fd);
		unlink(path);
		return e;
	}
	init(f, fd, 0);
	return 0;
}

int mapfile_open_at(struct mapfile *f, const char *path, off_t len)
{
	f->fd = -1;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	int e = lock_whole(fd); /* before anything of the file changes */
	if (e == 0 && ftruncate(fd, len) != 0)
		e = errno;
	if (e != 0) {
		close(fd);
		return e;
	}
	init(f, fd, len);
	return 0;
}

/* The pages wholly behind the content are never written again: they are
 * unmapped (they stay in the page cache and the file), so that the mapping
 * holds the pages near the end, not the whole journal. Run, with map_mu
 * held, when the file grows (once per MAPFILE_GROW of entries) and at each
 * prefault (after each background sync). */
static void drop_behind(struct mapfile *f)
{
	off_t len = __atomic_load_n(&f->len, __ATOMIC_RELAXED);
	off_t upto = len - len % page_size();
	if (upto > f->dropped &&
	    madvise(f->map + f->dropped, (size_t)(upto - f->dropped), MADV_DONTNEED) == 0)
		f->dropped = upto;
}

int mapfile_append(struct mapfile *f, const void *data, size_t n)
{
	if (n > (uint64_t)(INT64_MAX - f->len))
		return EFBIG;
	off_t end = f->len + (off_t)n;
	off_t had = f->alloc;
	int e = grow(f, end);
	if (e == 0)
		e = map_to(f, end);
	if (e == 0 && f->alloc != had) {
		pthread_mutex_lock(&f->map_mu);
		drop_behind(f);
		pthread_mutex_unlock(&f->map_mu);
	}
	if (e == 0)
		e = copy_guarded(f->map + f->len, data, n);
	if (e == 0)
		__atomic_store_n(&f->len, end, __ATOMIC_RELAXED);
	return e;
}

void mapfile_prefault(struct mapfile *f, off_t ahead)
{
	off_t page = page_size();
	pthread_mutex_lock(&f->map_mu);
	off_t len = __atomic_load_n(&f->len, __ATOMIC_RELAXED);
	off_t alloc = __atomic_load_n(&f->alloc, __ATOMIC_RELAXED);
	off_t from = len - len % page;
	off_t to = len + ahead < alloc ? len + ahead : alloc;
	if (to > f->span)
		to = f->span;
	to -= to % page;
	/* only pages the kernel made present are read (a read of another could
	 * meet an I/O error), and guarded: the file can still shrink behind
	 * the server's back between the two */
	if (f->map)
		drop_behind(f);
	if (f->map && to > from &&
	    madvise(f->map + from, (size_t)(to - from), MADV_POPULATE_WRITE) == 0)
		(void)touch_guarded(f->map + from, f->map + to, page);
	pthread_mutex_unlock(&f->map_mu);
}

int mapfile_cut(struct mapfile *f)
{
	pthread_mutex_lock(&f->map_mu);
	int e = ftruncate(f->fd, f->len) == 0 ? 0 : errno;
	if (e == 0)
		__atomic_store_n(&f->alloc, f->len, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&f->map_mu);
	return e;
}

bool mapfile_locked(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	bool held = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
	close(fd);
	return held;
}

void mapfile_close(struct mapfile *f)
{
	if (f->fd < 0)
		return;
	if (f->map)
		munmap(f->map, (size_t)f->span);
	f->map = NULL;
	close(f->fd);
	f->fd = -1;
	pthread_mutex_destroy(&f->map_mu);
}
