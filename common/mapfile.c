/* mapfile: a whole regular file mapped read-only, a file's identity, a file written whole. */
#include "common/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Map `path`; with `d` NULL, fail without a word. */
static int map_whole(struct mapped_file *f, const char *path, struct diag *d)
{
	struct stat st;
	/* non-blocking: opening a FIFO with no writer would wait forever */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	f->map = NULL;
	f->len = 0;
	if (fd < 0) {
		if (d)
			diag_error(d, path, DIAG_NO_OFFSET, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (d)
			diag_error(d, path, DIAG_NO_OFFSET, "not a regular file");
		close(fd);
		return -1;
	}
	f->len = (size_t)st.st_size;
	if (f->len) {
		f->map = mmap(NULL, f->len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (f->map == MAP_FAILED) {
			f->map = NULL;
			f->len = 0;
			if (d)
				diag_error(d, path, DIAG_NO_OFFSET, "cannot map: %s",
					   strerror(errno));
			close(fd);
			return -1;
		}
	}
	close(fd);
	return 0;
}

int mapped_file_open(struct mapped_file *f, const char *path, struct diag *d)
{
	return map_whole(f, path, d);
}

int mapped_file_try(struct mapped_file *f, const char *path)
{
	return map_whole(f, path, NULL);
}

void mapped_file_close(struct mapped_file *f)
{
	if (f->map)
		munmap(f->map, f->len);
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

int atomic_file_open(struct atomic_file *f, const char *path, unsigned mode)
{
	size_t n = strlen(path) + 16;

	f->fd = -1;
	f->path = strdup(path);
	f->tmp = malloc(n);
	if (!f->path || !f->tmp) {
		atomic_file_abort(f);
		errno = ENOMEM;
		return -1;
	}
	snprintf(f->tmp, n, "%s.tmp.XXXXXX", path);
	f->fd = mkostemp(f->tmp, O_CLOEXEC);
	if (f->fd < 0) { /* nothing made: nothing to remove */
		free(f->tmp);
		f->tmp = NULL;
	}
	/* mkstemp makes the file 0600 */
	if (f->fd < 0 || fchmod(f->fd, (mode_t)mode) != 0) {
		int err = errno;

		atomic_file_abort(f);
		errno = err;
		return -1;
	}
	return 0;
}

int atomic_file_commit(struct atomic_file *f)
{
	int ok = f->fd >= 0, err = 0;

	if (ok && close(f->fd) != 0)
		ok = 0, err = errno;
	f->fd = -1;
	if (ok && rename(f->tmp, f->path) != 0)
		ok = 0, err = errno;
	if (!ok) {
		atomic_file_abort(f);
		errno = err ? err : EBADF;
		return -1;
	}
	free(f->tmp);
	free(f->path);
	f->tmp = f->path = NULL;
	return 0;
}

void atomic_file_abort(struct atomic_file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	if (f->tmp)
		unlink(f->tmp);
	f->fd = -1;
	free(f->tmp);
	free(f->path);
	f->tmp = f->path = NULL;
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
	struct atomic_file f;
	size_t done = 0;

	if (atomic_file_open(&f, path, 0644) != 0)
		return -1;
	while (done < len) {
		ssize_t r = write(f.fd, (const char *)data + done, len - done);

		if (r <= 0) {
			atomic_file_abort(&f);
			return -1;
		}
		done += (size_t)r;
	}
	return atomic_file_commit(&f);
}
