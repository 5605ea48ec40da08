/* mapfile: a whole regular file mapped read-only, a file's identity, a file written whole. */
#include "common/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int file_open_regular(const char *path, struct stat *st, const char **why)
{
	/* non-blocking: opening a FIFO with no writer would wait forever */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	*why = "cannot be opened";
	if (fd < 0)
		return -1;
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		*why = "not a regular file";
		close(fd);
		return -2;
	}
	*why = NULL;
	return fd;
}

int file_is_steady(const struct stat *st)
{
	return (st->st_uid == 0 || st->st_uid == geteuid()) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* Whether the file open on `fd` is still as `st` says (size, modification time). */
static int unchanged(int fd, const struct stat *st)
{
	struct stat now;

	return fstat(fd, &now) == 0 && now.st_size == st->st_size &&
	       now.st_mtim.tv_sec == st->st_mtim.tv_sec && now.st_mtim.tv_nsec == st->st_mtim.tv_nsec;
}

int file_copy_private(int fd, const struct stat *st, const char **why)
{
	uint64_t len = (uint64_t)st->st_size;
	off_t off = 0;
	int out, err = 0;

	if (len > FILE_COPY_MAX) {
		*why = "writable by another user and over 1 GiB: not copied to be read, and a "
		       "file that user can cut short is not mapped";
		return -1;
	}
	out = memfd_create("perfconv-copy", MFD_CLOEXEC);
	if (out < 0) {
		*why = "cannot be copied to be read (memfd_create failed)";
		return -1;
	}
	/* in the kernel, page cache to page cache: one copy */
	while ((uint64_t)off < len) {
		size_t want = len - (uint64_t)off < (1u << 30) ? (size_t)(len - (uint64_t)off) : (1u << 30);
		ssize_t k = sendfile(out, fd, &off, want);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			err = errno;
		if (k <= 0)
			break;
	}
	if ((uint64_t)off != len || !unchanged(fd, st)) {
		*why = err ? "cannot be copied to be read (out of memory?)"
			   : "changed while it was read (cut short or written again)";
		close(out);
		return -1;
	}
	*why = NULL;
	return out;
}

int file_open_steady(const char *path, struct stat *st, const char **why)
{
	int fd = file_open_regular(path, st, why), copy;

	if (fd < 0 || file_is_steady(st))
		return fd;
	copy = file_copy_private(fd, st, why);
	close(fd);
	return copy >= 0 ? copy : -2;
}

/* The whole file open on `fd` (f->len bytes) read into memory: 0, or -1 when it was
 * found shorter meanwhile or memory ran out (*why). */
static int read_whole(struct mapped_file *f, int fd, const struct stat *st, const char **why)
{
	size_t got = 0;
	uint8_t *b;

	if ((uint64_t)f->len > FILE_COPY_MAX) {
		*why = "writable by another user and over 1 GiB: not read";
		return -1;
	}
	b = malloc(f->len);
	if (!b) {
		*why = "cannot be read: out of memory";
		return -1;
	}
	while (got < f->len) {
		ssize_t k = pread(fd, b + got, f->len - got, (off_t)got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	if (got < f->len || !unchanged(fd, st)) {
		*why = "changed while it was read (cut short or written again)";
		free(b);
		return -1;
	}
	f->map = b;
	f->read = 1;
	return 0;
}

/*
 * Files this small are read, not mapped: a cache entry's stamp (48 bytes) was mapped
 * and unmapped for each entry opened, and an munmap while the symbolizer's second
 * thread lives interrupts the other core to flush its TLB (a wake-up of its idle vCPU
 * in a VM: a tenth of a millisecond).
 */
#define SMALL_FILE 16384

/* Map the open file `fd` (`path` names it in messages); with `d` NULL, fail without a
 * word (but *why): -2 for any failure. `st` is filled for the file mapped. Small files,
 * and files another user can change (cut short under a mapping: SIGBUS), are read. */
static int map_fd(struct mapped_file *f, int fd, const char *path, struct diag *d,
		  const char **why, struct stat *st)
{
	f->map = NULL;
	f->len = 0;
	f->read = 0;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		if (d)
			diag_error(d, path, DIAG_NO_OFFSET, "not a regular file");
		*why = "not a regular file";
		return -2;
	}
	f->len = (size_t)st->st_size;
	if (f->len && (f->len <= SMALL_FILE || !file_is_steady(st))) {
		if (read_whole(f, fd, st, why) != 0) {
			if (d)
				diag_error(d, path, DIAG_NO_OFFSET, "%s", *why);
			f->len = 0;
			return -2;
		}
		return 0;
	}
	if (f->len) {
		f->map = mmap(NULL, f->len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (f->map == MAP_FAILED) {
			f->map = NULL;
			f->len = 0;
			if (d)
				diag_error(d, path, DIAG_NO_OFFSET, "cannot map: %s",
					   strerror(errno));
			*why = "cannot be mapped";
			return -2;
		}
	}
	return 0;
}

/* Map `path`; with `d` NULL, fail without a word (but *why). -1 for no such file, -2
 * for any other failure. `st` is filled for the file mapped. */
static int map_whole(struct mapped_file *f, const char *path, struct diag *d, const char **why,
		     struct stat *stp)
{
	struct stat mine, *st = stp ? stp : &mine;
	int fd = file_open_regular(path, st, why), r;

	f->map = NULL;
	f->len = 0;
	f->read = 0;
	if (fd == -1) {
		int missing = errno == ENOENT || errno == ENOTDIR;

		if (d)
			diag_error(d, path, DIAG_NO_OFFSET, "cannot open: %s", strerror(errno));
		return missing ? -1 : -2;
	}
	if (fd < 0) {
		if (d)
			diag_error(d, path, DIAG_NO_OFFSET, "not a regular file");
		return -2;
	}
	r = map_fd(f, fd, path, d, why, st);
	close(fd);
	return r;
}

int mapped_file_try_fd(struct mapped_file *f, int fd, const char **why, struct stat *st)
{
	struct stat mine;

	*why = NULL;
	return map_fd(f, fd, NULL, NULL, why, st ? st : &mine) ? -1 : 0;
}

int mapped_file_open(struct mapped_file *f, const char *path, struct diag *d)
{
	const char *why;

	return map_whole(f, path, d, &why, NULL) ? -1 : 0;
}

int mapped_file_open_st(struct mapped_file *f, const char *path, struct diag *d, struct stat *st)
{
	const char *why;

	return map_whole(f, path, d, &why, st) ? -1 : 0;
}

int mapped_file_try(struct mapped_file *f, const char *path)
{
	const char *why;

	return map_whole(f, path, NULL, &why, NULL) ? -1 : 0;
}

int mapped_file_try_why(struct mapped_file *f, const char *path, const char **why,
			struct stat *st)
{
	*why = NULL;
	return map_whole(f, path, NULL, why, st);
}

void mapped_file_close(struct mapped_file *f)
{
	if (f->map && f->read)
		free(f->map);
	else if (f->map)
		munmap(f->map, f->len);
	f->read = 0;
	f->map = NULL;
	f->len = 0;
}

int file_id_of(const char *path, struct file_id *id)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return -1;
	id->size = (uint64_t)st.st_size;
	id->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	id->ino = (uint64_t)st.st_ino;
	id->dev = (uint64_t)st.st_dev;
	return 0;
}

char *path_follow_links(const char *path)
{
	char *cur = strdup(path);

	/* as many links as the kernel follows (MAXSYMLINKS) */
	for (int hops = 0; cur && hops < 40; hops++) {
		char target[4096], *next, *slash;
		struct stat st;
		ssize_t n;

		if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode) ||
		    (n = readlink(cur, target, sizeof(target) - 1)) < 0)
			break;
		target[n] = 0;
		slash = strrchr(cur, '/');
		if (target[0] == '/' || !slash) {
			next = strdup(target);
		} else {
			next = malloc((size_t)(slash - cur) + (size_t)n + 2);
			if (next)
				sprintf(next, "%.*s/%s", (int)(slash - cur), cur, target);
		}
		free(cur);
		cur = next;
	}
	return cur;
}

/* The directory of `path` ("." for a bare name), malloc'ed. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d;

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	d = malloc((size_t)(slash - path) + 1);
	if (d) {
		memcpy(d, path, (size_t)(slash - path));
		d[slash - path] = 0;
	}
	return d;
}

/* A temporary name for `f`'s file, "NAME.tmp.XXXXXX", the X's random: made anew for
 * each try, so that a name taken (or planted) is passed over, never reused. */
static int tmp_name(struct atomic_file *f)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	unsigned char r[6];
	size_t n = strlen(f->path) + 16;

	if (!f->tmp && !(f->tmp = malloc(n)))
		return -1;
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		unsigned long x;

		clock_gettime(CLOCK_REALTIME, &ts);
		x = (unsigned long)ts.tv_nsec * 2654435761u + (unsigned long)getpid() * 40503u;
		for (size_t i = 0; i < sizeof(r); i++, x >>= 5)
			r[i] = (unsigned char)x;
	}
	snprintf(f->tmp, n, "%s.tmp.", f->path);
	for (size_t i = 0, at = strlen(f->tmp); i < sizeof(r); i++)
		f->tmp[at + i] = digits[r[i] % 36];
	f->tmp[strlen(f->path) + 5 + sizeof(r)] = 0;
	return 0;
}

/* `f` with its path and folder set: the file opened, unnamed where the filesystem
 * allows, else under a temporary name of its own. */
static int open_in(struct atomic_file *f, const char *dir, unsigned mode)
{
	/* unnamed until complete: nothing to leave behind */
	f->fd = openat(f->dirfd, dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (f->fd >= 0) {
		f->unnamed = 1;
	} else {
		/* no O_TMPFILE here (EOPNOTSUPP, EISDIR on kernels without it): a name no
		 * one else has (O_EXCL), never a link followed */
		for (unsigned i = 0; i < 100 && f->fd < 0; i++) {
			if (tmp_name(f) != 0) {
				errno = ENOMEM;
				break;
			}
			f->fd = openat(f->dirfd, f->tmp, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC,
				       0600);
			if (f->fd < 0 && errno != EEXIST)
				break;
		}
		if (f->fd < 0) { /* nothing made: nothing to remove */
			free(f->tmp);
			f->tmp = NULL;
		}
	}
	/* O_TMPFILE and the temporary name make the file 0600 (the former less the umask) */
	if (f->fd < 0 || fchmod(f->fd, (mode_t)mode) != 0) {
		int err = errno;

		atomic_file_abort(f);
		errno = err;
		return -1;
	}
	return 0;
}

int atomic_file_open(struct atomic_file *f, const char *path, unsigned mode, int flags)
{
	char *dir;
	int r;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->dirfd = AT_FDCWD;
	f->path = flags & ATOMIC_FOLLOW_LINKS ? path_follow_links(path) : strdup(path);
	dir = f->path ? dir_of(f->path) : NULL;
	if (!dir) {
		atomic_file_abort(f);
		errno = ENOMEM;
		return -1;
	}
	r = open_in(f, dir, mode);
	free(dir);
	return r;
}

int atomic_file_openat(struct atomic_file *f, int dirfd, const char *name, unsigned mode)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->dirfd = -1;
	if (!name[0] || strchr(name, '/')) {
		errno = EINVAL;
		return -1;
	}
	f->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	f->path = strdup(name);
	if (f->dirfd < 0 || !f->path) {
		int err = f->dirfd < 0 ? errno : ENOMEM;

		atomic_file_abort(f);
		errno = err;
		return -1;
	}
	return open_in(f, ".", mode);
}

/* Give `f`'s unnamed file the name `to` in its folder: 0, or -1 (EEXIST when `to`
 * exists). */
static int link_unnamed(const struct atomic_file *f, const char *to)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", f->fd);
	if (linkat(AT_FDCWD, proc, f->dirfd, to, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno != ENOENT)
		return -1;
	/* no /proc: this needs CAP_DAC_READ_SEARCH */
	return linkat(f->fd, "", f->dirfd, to, AT_EMPTY_PATH);
}

/* An unnamed file into place: straight to its name when that is free, else through a
 * temporary name renamed over the old file (rename replaces in one step; link cannot). */
static int name_unnamed(struct atomic_file *f)
{
	if (link_unnamed(f, f->path) == 0)
		return 0;
	if (errno != EEXIST)
		return -1;
	for (unsigned i = 0; i < 100; i++) {
		if (tmp_name(f) != 0)
			break;
		if (link_unnamed(f, f->tmp) == 0)
			return renameat(f->dirfd, f->tmp, f->dirfd, f->path);
		if (errno != EEXIST)
			break;
	}
	free(f->tmp);
	f->tmp = NULL; /* nothing named: nothing to remove */
	return -1;
}

/* The folder's descriptor, when `f` holds one of its own. */
static void close_dir(struct atomic_file *f)
{
	if (f->dirfd >= 0)
		close(f->dirfd);
	f->dirfd = -1;
}

int atomic_file_commit(struct atomic_file *f)
{
	int ok = f->fd >= 0, err = 0;

	if (ok && f->unnamed && name_unnamed(f) != 0)
		ok = 0, err = errno;
	if (close(f->fd) != 0 && ok)
		ok = 0, err = errno;
	f->fd = -1;
	if (ok && !f->unnamed && renameat(f->dirfd, f->tmp, f->dirfd, f->path) != 0)
		ok = 0, err = errno;
	if (!ok) {
		atomic_file_abort(f);
		errno = err ? err : EBADF;
		return -1;
	}
	free(f->tmp);
	free(f->path);
	f->tmp = f->path = NULL;
	close_dir(f);
	return 0;
}

void atomic_file_abort(struct atomic_file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	if (f->tmp)
		unlinkat(f->dirfd, f->tmp, 0);
	f->fd = -1;
	free(f->tmp);
	free(f->path);
	f->tmp = f->path = NULL;
	close_dir(f);
}

int pwrite_whole(int fd, const void *data, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pwrite(fd, (const char *)data + done, len - done, (off_t)(off + done));

		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

