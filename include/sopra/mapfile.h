/*
 * mapfile: an append-only file written through a shared mapping
 * (src/mapfile.c). The journal's file: an append is a memcpy, not a
 * write(2), and is in the page cache at once, so a crash of the process
 * loses nothing appended.
 *
 * The file grows ahead of the appends with posix_fallocate, in MAPFILE_GROW
 * steps, to keep MAPFILE_AHEAD bytes ahead of the content, so a full disk or
 * the file size limit is an error of mapfile_append, never a SIGBUS. Until
 * mapfile_cut, the bytes after the content read as zeros: a reader ends the
 * content at its first NUL byte.
 *
 * The file is mapped once from offset 0 (the mapping is replaced by a
 * larger one when the content outgrows it), so pages made present and
 * writable ahead of the content by mapfile_prefault stay so until an
 * fdatasync cleans them: appends there take no page fault. Pages wholly
 * behind the content are unmapped as the file grows, so the mapping holds
 * the pages near the end only.
 *
 * One thread appends to a mapfile at a time; mapfile_prefault may run on
 * another thread meanwhile. The SIGBUS guard around the copy (and around
 * the prefault's reads) is a handler installed by each open in front of
 * whatever handler was there, with its state per thread. Functions
 * returning int return 0 or an errno value.
 */
#ifndef SOPRA_MAPFILE_H
#define SOPRA_MAPFILE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* growth step of the file */
#define MAPFILE_GROW ((off_t)64 * 1024)
/* how far the file reaches past the content while appending (at least) */
#define MAPFILE_AHEAD ((off_t)256 * 1024)

struct mapfile {
	int fd;      /* -1 when closed; fdatasync(fd) makes the appends durable */
	off_t len;   /* bytes appended: the content */
	off_t alloc; /* the file's size: the content and its zero tail */
	char *map;   /* the file mapped from offset 0, span bytes; or NULL */
	off_t span;
	off_t dropped; /* bytes at the start of map unmapped again (under map_mu) */
	/* held to replace the mapping or shrink the file, and by
	 * mapfile_prefault: so it never touches a page that is going away */
	pthread_mutex_t map_mu;
};

/* Create path (it must not exist: O_EXCL), empty, readable and writable
 * by its owner only (mode 0600, whatever the umask), and lock it (below). */
int mapfile_create(struct mapfile *f, const char *path);
/* Open the existing file at path for appending after its first len bytes;
 * what follows them is cut off. EWOULDBLOCK, and nothing changed, when
 * another writer holds the file's lock.
 *
 * One writer per file: both take an exclusive OFD lock (fcntl
 * F_OFD_SETLK) on the whole file, held until mapfile_close. */
int mapfile_open_at(struct mapfile *f, const char *path, off_t len);
/* Whether a writer holds path's lock now (a check before a resume starts;
 * mapfile_open_at decides). */
bool mapfile_locked(const char *path);
/* Append n bytes. On an error (ENOSPC, EFBIG, EIO, ...) f->len is
 * unchanged: the content is what it was before the call. */
int mapfile_append(struct mapfile *f, const void *data, size_t n);
/* Make the pages from the one the content ends in to `ahead` bytes past
 * the content (within the file's size) present and writable, without
 * changing a byte of them, so that the appends there take no page fault.
 * For a thread other than the appending one (the journal's sync thread):
 * on this kind of VM a first write to a page of a file mapping costs 15-17
 * us, and it then costs that thread, not the one serving the players. Best
 * effort: nothing happens where the kernel cannot (MADV_POPULATE_WRITE
 * needs Linux 5.14). */
void mapfile_prefault(struct mapfile *f, off_t ahead);
/* Cut the file to its content (drop the zero tail). */
int mapfile_cut(struct mapfile *f);
/* Unmap and close; the file keeps whatever tail it has. */
void mapfile_close(struct mapfile *f);

#endif
