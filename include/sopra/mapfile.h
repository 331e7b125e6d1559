/*
 * mapfile: an append-only file written through a shared mapping
 * (src/mapfile.c). The journal's file: an append is a memcpy, not a
 * write(2), and is in the page cache at once, so a crash of the process
 * loses nothing appended.
 *
 * The file grows ahead of the appends in MAPFILE_GROW steps taken with
 * posix_fallocate, so a full disk or the file size limit is an error of
 * mapfile_append, never a SIGBUS. Until mapfile_cut, the bytes after the
 * content read as zeros: a reader ends the content at its first NUL byte.
 *
 * One thread appends at a time, to any mapfile of the process: the SIGBUS
 * guard around the copy is process-wide (a handler installed by each open,
 * in front of whatever handler was there). Functions returning int return 0
 * or an errno value.
 */
#ifndef SOPRA_MAPFILE_H
#define SOPRA_MAPFILE_H

#include <stddef.h>
#include <sys/types.h>

/* growth step of the file, and the size of the mapped window */
#define MAPFILE_GROW ((off_t)64 * 1024)

struct mapfile {
	int fd;        /* -1 when closed; fdatasync(fd) makes the appends durable */
	off_t len;     /* bytes appended: the content */
	off_t alloc;   /* the file's size: the content and its zero tail */
	char *win;     /* the mapped window, or NULL */
	off_t win_off; /* file offset of win, a multiple of MAPFILE_GROW */
};

/* Create path (it must not exist: O_EXCL), empty. */
int mapfile_create(struct mapfile *f, const char *path);
/* Open the existing file at path for appending after its first len bytes;
 * what follows them is cut off. */
int mapfile_open_at(struct mapfile *f, const char *path, off_t len);
/* Append n bytes. On an error (ENOSPC, EFBIG, EIO, ...) f->len is
 * unchanged: the content is what it was before the call. */
int mapfile_append(struct mapfile *f, const void *data, size_t n);
/* Cut the file to its content (drop the zero tail). */
int mapfile_cut(struct mapfile *f);
/* Unmap and close; the file keeps whatever tail it has. */
void mapfile_close(struct mapfile *f);

#endif
