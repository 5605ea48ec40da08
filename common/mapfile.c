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

int write_file_atomic(const char *path, const void *data, size_t len)
{
	size_t n = strlen(path) + 16, done = 0;
	char *tmp = malloc(n);
	int fd, ok;

	if (!tmp)
		return -1;
	snprintf(tmp, n, "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp);
	ok = fd >= 0;
	while (ok && done < len) {
		ssize_t r = write(fd, (const char *)data + done, len - done);

		ok = r > 0;
		done += ok ? (size_t)r : 0;
	}
	if (fd >= 0 && close(fd) != 0)
		ok = 0;
	if (ok && (fchmodat(AT_FDCWD, tmp, 0644, 0) != 0 || rename(tmp, path) != 0))
		ok = 0;
	if (!ok && fd >= 0)
		unlink(tmp);
	free(tmp);
	return ok ? 0 : -1;
}
