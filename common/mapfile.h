/* mapfile: a whole regular file mapped read-only, a file's identity, a file written whole. */
#ifndef PERFCONV_MAPFILE_H
#define PERFCONV_MAPFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/diag.h"

struct mapped_file {
	void *map;   /* NULL for an empty file */
	size_t len;
	int read;    /* a small file, read into memory rather than mapped */
};

/*
 * A file's bytes for as long as it is open, whatever another process does to the file
 * meanwhile: a file only root and this process's user can change (file_is_steady) is
 * mapped; any other (a perf map a runtime rewrites, another user's cache folder or
 * kallsyms) is read into memory, since a mapped page past a file's new end is SIGBUS
 * when someone cuts it short. A file found shorter than it was while it is read is an
 * error ("changed while it was read").
 */
/* Map `path`. Returns 0, or -1 after one error line through `d` (cannot open, not a
 * regular file, cannot map). */
int mapped_file_open(struct mapped_file *f, const char *path, struct diag *d);
/* The same, with the mapped file's status in *st. */
int mapped_file_open_st(struct mapped_file *f, const char *path, struct diag *d, struct stat *st);
/* The same without a word: -1 when the file is missing, not regular, or cannot be
 * mapped (a cache file that may not be there). */
int mapped_file_try(struct mapped_file *f, const char *path);
/* mapped_file_try() that says why not: -1 when there is no file by that name, -2 when
 * there is something that is not a regular file or cannot be opened or mapped (*why
 * says which). Never waits: a FIFO is not read. `st` (may be NULL) gets the mapped
 * file's status. */
int mapped_file_try_why(struct mapped_file *f, const char *path, const char **why,
			struct stat *st);
/* The same for the open file `fd` (which stays open, the caller's): 0, or -1 when it is
 * not a regular file or cannot be mapped (*why says which). */
int mapped_file_try_fd(struct mapped_file *f, int fd, const char **why, struct stat *st);
/* NULL-safe for an unmapped or empty file. */
void mapped_file_close(struct mapped_file *f);
/* Whether `n` items of `size` bytes at offset `off`, 8-aligned, lie within the file. */
static inline int mapped_file_holds(const struct mapped_file *f, uint64_t off, uint64_t n,
				    uint64_t size)
{
	return off % 8 == 0 && off <= f->len && n <= (f->len - off) / (size ? size : 1);
}

/*
 * Files another user may change. A file mapped (by perfconv, or by libelf and libdw) is
 * SIGBUS on the next read of a page past its end when it is cut short meanwhile; a
 * file that only root or this process's user can write cannot be, but for by them.
 */
/* `path` opened to read, never waiting (a FIFO or a device is not opened for reading:
 * O_NONBLOCK, then its type), following links: its descriptor (O_CLOEXEC) and *st; -1
 * with errno set when it cannot be opened (ENOENT: none), -2 when it is not a regular
 * file (*why says so). */
int file_open_regular(const char *path, struct stat *st, const char **why);
/* Whether a regular file of status `st` can be changed only by root and this process's
 * user: owned by one of them, writable by no group and no one else (an ACL that lets
 * another user write shows in the group bits). Such a file may be mapped. */
int file_is_steady(const struct stat *st);
/* The most a private copy of a file another user can write may take (FILE_COPY_MAX,
 * bytes of memory): a larger one is not read. */
#define FILE_COPY_MAX ((uint64_t)1 << 30)
/*
 * A private copy, in memory (memfd), of the regular file open on `fd` whose status
 * was `st`: what no one else can change or cut short, to map or give to libelf and
 * libdw. Its descriptor (O_CLOEXEC), or -1 and *why: larger than FILE_COPY_MAX, or
 * changed while it was copied (its size or modification time moved: a copy of half of
 * each is no file). `fd` stays the caller's.
 */
int file_copy_private(int fd, const struct stat *st, const char **why);
/* file_open_regular(), then, for a file that is not steady, a private copy of it in its
 * place (the original closed): a descriptor whose bytes no one else can change. *st is
 * the original's. -1 (cannot be opened; errno), or -2 with *why. */
int file_open_steady(const char *path, struct stat *st, const char **why);

/* A regular file as it is now: what a cache records of the file it was made from, to
 * know later that the file is unchanged. */
struct file_id {
	uint64_t size, mtime_ns, ino, dev;
};
/* 0 and *id filled for a regular file of nonzero size (not /proc's), else -1. */
int file_id_of(const char *path, struct file_id *id);

/*
 * A file written whole or not at all: written to an unnamed file in the directory of
 * `path` (O_TMPFILE) that takes the name only when complete, so that a reader never
 * sees half a file, a failed write leaves the old one in place, and a process killed
 * meanwhile (even with SIGKILL) leaves nothing behind. An existing `path` is replaced
 * through a temporary name (`path`.tmp.XXXXXX: random, taken only when no file or
 * link has it) linked and renamed in one moment; where the filesystem has no
 * O_TMPFILE, the file is written under that temporary name.
 */
struct atomic_file {
	int fd;        /* write (and read) here */
	char *path;    /* the name it takes */
	char *tmp;     /* its name until then; NULL while it has none (O_TMPFILE) */
	int unnamed;   /* an O_TMPFILE file */
	int dirfd;     /* the folder `path` and `tmp` are in: AT_FDCWD (atomic_file_open), or
			  atomic_file_openat's own descriptor of it */
};
/* `path` may be a symbolic link: the file it leads to is written, the link kept. */
#define ATOMIC_FOLLOW_LINKS 1
/* 0 and `f` ready, its mode `mode` (as given: the caller applies its umask), or -1
 * with errno set. `flags`: 0 or ATOMIC_FOLLOW_LINKS. */
int atomic_file_open(struct atomic_file *f, const char *path, unsigned mode, int flags);
/* The same for the file `name` (no slash) in the folder `dirfd` (the caller's, which
 * may close it at once): no path is followed again, nor any link at `name` or at a
 * temporary name, so the folder checked once is the folder written. */
int atomic_file_openat(struct atomic_file *f, int dirfd, const char *name, unsigned mode);
/* Close it and give it its name: 0, or -1 with errno set and nothing left behind. */
int atomic_file_commit(struct atomic_file *f);
/* Close and remove it: nothing left behind. NULL-safe, and safe after a commit. */
void atomic_file_abort(struct atomic_file *f);

/* The file a chain of symbolic links starting at `path` ends at (which need not
 * exist), malloc'ed; `path` itself when it is no link. */
char *path_follow_links(const char *path);

/* All `len` bytes of `data` written at offset `off` of `fd`: 0, or -1 with errno set. */
int pwrite_whole(int fd, const void *data, size_t len, uint64_t off);

#endif
