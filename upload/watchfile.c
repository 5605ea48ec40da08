/* watchfile: a chunk `perf record --switch-output` finished, as the watcher sees it (its
 * name, header, state and run), and the watched folder's lock.
 *
 * File format (perf.data-file-format.txt): u64 magic, size, attr_size; { u64 offset,
 * size } attrs, data. A byte-swapped file has the magic reversed.
 */
#include "upload/watchfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/perf_abi.h"

/* perf_event_attr's first size (PERF_ATTR_SIZE_VER0) and the ids section after it. */
#define ATTR_MIN 64

/* NAME ends in ".<at least 8 digits>": perf's switch-output suffix. */
int chunk_name(const char *name)
{
	const char *dot = strrchr(name, '.');
	size_t n = 0;

	if (!dot || dot == name || name[0] == '.')
		return 0;
	for (const char *c = dot + 1; *c; c++, n++)
		if (*c < '0' || *c > '9')
			return 0;
	return n >= 8;
}

/* `name` in `dirfd`, opened for reading without following a link or blocking on a
 * FIFO; -1 unless it is a regular file (*st filled). */
int chunk_open(int dirfd, const char *name, struct stat *st)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int read_at(int fd, void *buf, size_t n, uint64_t off)
{
	return pread(fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

/*
 * File format (perf.data-file-format.txt): u64 magic, size, attr_size; { u64 offset,
 * size } attrs, data. A byte-swapped file has the magic reversed. *sw set.
 */
static int chunk_header(int fd, uint8_t h[56], int *sw)
{
	uint64_t magic;

	if (read_at(fd, h, 56, 0) != 0)
		return -1;
	magic = ld64(h, 0);
	*sw = magic != PERF_FILE_MAGIC2;
	return !*sw || ld64(h, 1) == PERF_FILE_MAGIC2 ? 0 : -1;
}

/* What the chunk open on `fd` is: finished (its header says where its data ends, within
 * the file; or perf was killed, data.size 0, CHUNK_STALE_S ago), still being copied in (its
 * data runs past the file's end, and it changed lately), cut short (the same, for
 * CHUNK_STALE_S), or no perf.data file at all. */
int chunk_state(int fd, const struct stat *st)
{
	uint8_t h[56];
	uint64_t off, size;
	int sw, old = time(NULL) - st->st_mtime > CHUNK_STALE_S;

	if (chunk_header(fd, h, &sw) != 0)
		return (uint64_t)st->st_size < sizeof(h) && !old ? CHUNK_GROWING : CHUNK_NOT_PERF;
	off = ld64(h + 40, sw);
	size = ld64(h + 48, sw);
	if (size && off <= (uint64_t)st->st_size && size <= (uint64_t)st->st_size - off)
		return CHUNK_READY;
	if (!size && old)
		return CHUNK_READY;
	return old && size ? CHUNK_CUT : CHUNK_GROWING;
}

/*
 * The id the kernel gave the chunk's first event: the attrs section's first entry is
 * an attr of attr_size - 16 bytes and the { u64 offset, size } of its ids. 0 when the
 * header does not give one (then no window is joined to another).
 */
uint64_t chunk_run(int fd, uint64_t fsize)
{
	uint8_t h[56], ids[16], id[8];
	uint64_t attr_size, ao, as, io, is;
	int sw;

	if (chunk_header(fd, h, &sw) != 0)
		return 0;
	attr_size = ld64(h + 16, sw);
	ao = ld64(h + 24, sw);
	as = ld64(h + 32, sw);
	if (attr_size < ATTR_MIN + 16 || as < attr_size || ao > fsize || attr_size > fsize - ao ||
	    read_at(fd, ids, sizeof(ids), ao + attr_size - 16) != 0)
		return 0;
	io = ld64(ids, sw);
	is = ld64(ids + 8, sw);
	if (is < 8 || io > fsize || fsize - io < 8 || read_at(fd, id, sizeof(id), io) != 0)
		return 0;
	return ld64(id, sw);
}

/* Chunk names in perf's order: by the timestamp (as a number: equal lengths compare as
 * strings), then by name. */
int chunk_name_cmp(const char *x, const char *y)
{
	const char *dx = strrchr(x, '.'), *dy = strrchr(y, '.');
	size_t lx = strlen(dx), ly = strlen(dy);

	if (lx != ly)
		return lx < ly ? -1 : 1;
	if (strcmp(dx, dy))
		return strcmp(dx, dy);
	return strcmp(x, y);
}

/*
 * One watcher a folder: a second would send each chunk again. The lock is on the
 * folder itself (flock, held while its descriptor is open, gone with the process),
 * so nothing is written into a folder others may write; the holder is named from
 * /proc/locks. 0, or -1 after saying who holds it.
 */
int chunk_folder_lock(int dfd, const char *dir, struct diag *d)
{
	struct stat st;
	FILE *f;
	char line[256], comm[64] = "";
	long holder = 0;

	if (flock(dfd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK) {
		diag_error(d, dir, DIAG_NO_OFFSET, "--watch: cannot lock the folder: %s",
			   strerror(errno));
		return -1;
	}
	/* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF": pid, MAJ:MIN:INODE (hex) */
	if (fstat(dfd, &st) == 0 && (f = fopen("/proc/locks", "re")) != NULL) {
		while (!holder && fgets(line, sizeof(line), f)) {
			unsigned maj, min;
			unsigned long long ino;
			long pid;
			char kind[16];

			if (sscanf(line, "%*[^:]: %15s %*s %*s %ld %x:%x:%llu", kind, &pid, &maj, &min,
				   &ino) == 5 && strcmp(kind, "FLOCK") == 0 &&
			    ino == (unsigned long long)st.st_ino && maj == major(st.st_dev) &&
			    min == minor(st.st_dev) && pid > 0)
				holder = pid;
		}
		fclose(f);
	}
	if (holder) {
		char p[64];
		FILE *c;

		snprintf(p, sizeof(p), "/proc/%ld/comm", holder);
		if ((c = fopen(p, "re")) != NULL) {
			if (fgets(comm, sizeof(comm), c))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(c);
		}
		diag_error(d, dir, DIAG_NO_OFFSET, "--watch: another watcher sends this "
			   "folder's chunks (pid %ld%s%s): two would send each chunk twice",
			   holder, comm[0] ? ", " : "", comm);
	} else {
		diag_error(d, dir, DIAG_NO_OFFSET, "--watch: another watcher sends this "
			   "folder's chunks (its lock is held): two would send each chunk twice");
	}
	return -1;
}
