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
 *    disposition there was before.
 */
#include "sopra/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

_Static_assert(sizeof(off_t) == 8, "mapfile needs a 64-bit off_t");

/* ---- the SIGBUS guard ---------------------------------------------------- */

static sigjmp_buf copy_env;
static volatile sig_atomic_t copying;
static char *volatile copy_lo, *volatile copy_hi;
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

/* ---- growing and mapping ------------------------------------------------- */

static int fallocate_from(int fd, off_t from, off_t to)
{
	int e;
	do
		e = posix_fallocate(fd, from, to - from);
	while (e == EINTR);
	return e;
}

/* Make the file at least end bytes long, with its blocks taken: a whole
 * MAPFILE_GROW step if the disk and the size limit allow, else exactly
 * end (so that the limit is hit by the append that crosses it, not
 * earlier). */
static int grow(struct mapfile *f, off_t end)
{
	if (end <= f->alloc)
		return 0;
	off_t step = end + (MAPFILE_GROW - end % MAPFILE_GROW) % MAPFILE_GROW;
	int e = fallocate_from(f->fd, f->alloc, step);
	if (e == ENOSPC || e == EFBIG) {
		step = end;
		e = fallocate_from(f->fd, f->alloc, step);
	}
	if (e == 0)
		f->alloc = step;
	return e;
}

/* The MAPFILE_GROW window that holds offset at, mapped; NULL (errno set)
 * when it cannot be. */
static char *window_at(struct mapfile *f, off_t at)
{
	off_t w = at - at % MAPFILE_GROW;
	if (f->win && f->win_off == w)
		return f->win;
	if (f->win) {
		munmap(f->win, MAPFILE_GROW);
		f->win = NULL;
	}
	void *m = mmap(NULL, MAPFILE_GROW, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, w);
	if (m == MAP_FAILED)
		return NULL;
	f->win = m;
	f->win_off = w;
	return f->win;
}

/* ---- the interface ------------------------------------------------------- */

static void init(struct mapfile *f, int fd, off_t len)
{
	f->fd = fd;
	f->len = f->alloc = len;
	f->win = NULL;
	f->win_off = 0;
	install_guard();
}

int mapfile_create(struct mapfile *f, const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		f->fd = -1;
		return errno;
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
	if (ftruncate(fd, len) != 0) {
		int e = errno;
		close(fd);
		return e;
	}
	init(f, fd, len);
	return 0;
}

int mapfile_append(struct mapfile *f, const void *data, size_t n)
{
	if (n > (uint64_t)(INT64_MAX - f->len))
		return EFBIG;
	int e = grow(f, f->len + (off_t)n);
	const char *src = data;
	off_t at = f->len;
	while (e == 0 && n > 0) {
		char *win = window_at(f, at);
		if (!win) {
			e = errno;
			break;
		}
		size_t room = (size_t)(f->win_off + MAPFILE_GROW - at);
		size_t k = n < room ? n : room;
		e = copy_guarded(win + (at - f->win_off), src, k);
		src += k;
		at += (off_t)k;
		n -= k;
	}
	if (e == 0)
		f->len = at;
	return e;
}

int mapfile_cut(struct mapfile *f)
{
	if (ftruncate(f->fd, f->len) != 0)
		return errno;
	f->alloc = f->len;
	return 0;
}

void mapfile_close(struct mapfile *f)
{
	if (f->win)
		munmap(f->win, MAPFILE_GROW);
	f->win = NULL;
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}
