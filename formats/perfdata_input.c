/* perfdata_input: where the records of a recording come from: a file mapped, a pipe
 * spooled to an unlinked temporary file (so that it can be read twice), and the
 * data.N files of a `perf record --threads` directory. */
#include "formats/perfdata_internal.h"

#include "common/bytes.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Either byte order of either version's magic (the header check says which is wrong). */
static int stream_magic_ok(const uint8_t *b)
{
	uint64_t m = ld64(b, 0);

	return m == PERF_FILE_MAGIC2 || m == __builtin_bswap64(PERF_FILE_MAGIC2) ||
	       m == PERF_FILE_MAGIC1 || m == __builtin_bswap64(PERF_FILE_MAGIC1);
}

static int spool_fd(int fd, const char *name, struct pd_file *f, struct diag *d)
{
	const char *dir = getenv("TMPDIR");
	char tmpl[4096];
	uint8_t buf[1 << 16];
	size_t total = 0, head_len = 0;
	int tfd;

	if (!dir || !*dir)
		dir = "/tmp";
	tfd = open(dir, O_TMPFILE | O_RDWR | O_EXCL, 0600);
	if (tfd < 0) {
		snprintf(tmpl, sizeof(tmpl), "%s/perfconv-XXXXXX", dir);
		tfd = mkstemp(tmpl);
		if (tfd >= 0)
			unlink(tmpl);
	}
	if (tfd < 0) {
		diag_error(d, name, DIAG_NO_OFFSET, "cannot create a temporary file in %s: %s",
			   dir, strerror(errno));
		return -1;
	}
	for (;;) {
		ssize_t n = read(fd, buf + head_len, sizeof(buf) - head_len), w = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			diag_error(d, name, total, "read error: %s", strerror(errno));
			close(tfd);
			return -1;
		}
		if (n == 0)
			break;
		/* what is not perf.data is said at once, not spooled until the disk is full
		 * (-i /dev/zero, an endless stream on -i -): the first 8 bytes, gathered */
		if (total == 0 && head_len + (size_t)n < 8 && head_len + (size_t)n > 0) {
			head_len += (size_t)n;
			continue;
		}
		if (total == 0 && !stream_magic_ok(buf)) {
			diag_error(d, name, 0, "bad magic 0x%016llx: not a perf.data file",
				   (unsigned long long)ld64(buf, 0));
			close(tfd);
			return -1;
		}
		n += (ssize_t)head_len;
		head_len = 0;
		while (w < n) {
			ssize_t k = write(tfd, buf + w, (size_t)(n - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				diag_error(d, name, DIAG_NO_OFFSET,
					   "cannot spool the input to %s: %s", dir,
					   strerror(k < 0 ? errno : ENOSPC));
				close(tfd);
				return -1;
			}
			w += k;
		}
		total += (size_t)n;
	}
	f->size = total;
	if (total) {
		f->map = mmap(NULL, total, PROT_READ, MAP_PRIVATE, tfd, 0);
		if (f->map == MAP_FAILED) {
			f->map = NULL;
			diag_error(d, name, DIAG_NO_OFFSET, "cannot map the spooled input: %s",
				   strerror(errno));
			close(tfd);
			return -1;
		}
		f->maplen = total;
		f->base = f->map;
	}
	close(tfd);
	return 0;
}

/* Map `fd` (regular file) or spool it (pipe, terminal, fifo) first; with `regular`,
 * only a regular file will do (a --threads directory's data.N has no magic to check). */
int pd_map_fd(int fd, const char *name, struct pd_file *f, struct diag *d, int regular)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		diag_error(d, name, DIAG_NO_OFFSET, "cannot stat: %s", strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) && regular) {
		diag_error(d, name, DIAG_NO_OFFSET, "not a regular file");
		return -1;
	}
	if (!S_ISREG(st.st_mode))
		return spool_fd(fd, name, f, d);
	f->size = (size_t)st.st_size;
	if (f->size == 0)
		return 0;
	f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (f->map == MAP_FAILED) {
		f->map = NULL;
		diag_error(d, name, DIAG_NO_OFFSET, "cannot map: %s", strerror(errno));
		return -1;
	}
	f->maplen = f->size;
	f->base = f->map;
	madvise(f->map, f->maplen, MADV_SEQUENTIAL);
	return 0;
}

int pd_map_path(const char *path, const char *name, struct pd_file *f, struct diag *d,
		int regular)
{
	int fd, ret;

	/* a data.N that is a FIFO must not block the open */
	fd = open(path, O_RDONLY | O_CLOEXEC | (regular ? O_NONBLOCK : 0));
	if (fd < 0) {
		diag_error(d, name, DIAG_NO_OFFSET, "cannot open: %s", strerror(errno));
		return -1;
	}
	ret = pd_map_fd(fd, name, f, d, regular);
	close(fd);
	return ret;
}

void pd_free_file(struct pd_file *f)
{
	if (f->map)
		munmap(f->map, f->maplen);
	free(f->path);
}

struct pd_file *pd_add_file(struct perf_reader *r, const char *path)
{
	struct pd_file *n;

	n = realloc(r->files, (r->nfiles + 1) * sizeof(*n));
	if (!n)
		return NULL;
	r->files = n;
	n = &r->files[r->nfiles];
	memset(n, 0, sizeof(*n));
	n->path = strdup(path);
	if (!n->path)
		return NULL;
	r->nfiles++;
	return n;
}

static int cmp_num_suffix(const void *a, const void *b)
{
	unsigned long x = strtoul(strrchr(*(char *const *)a, '.') + 1, NULL, 10);
	unsigned long y = strtoul(strrchr(*(char *const *)b, '.') + 1, NULL, 10);

	return x < y ? -1 : x > y;
}

/* `perf record --threads`: DIR/data holds the header, DIR/data.N the records. */
int pd_open_dir(struct perf_reader *r, const char *dir)
{
	char path[4096];
	char **names = NULL;
	size_t n = 0, i;
	DIR *dh;
	struct dirent *de;
	struct pd_file *f;
	int ret = -1;

	snprintf(path, sizeof(path), "%s/data", dir);
	f = pd_add_file(r, path);
	if (!f)
		goto nomem;
	if (pd_map_path(path, f->path, f, r->d, 1) < 0 || pd_read_header(r) < 0)
		return -1;
	r->hdr.directory = 1;
	dh = opendir(dir);
	if (!dh) {
		diag_error(r->d, dir, DIAG_NO_OFFSET, "cannot read the directory: %s",
			   strerror(errno));
		return -1;
	}
	while ((de = readdir(dh))) {
		const char *s = de->d_name;
		char **nn;

		if (!starts_with(s, "data.") || !s[5] || strspn(s + 5, "0123456789") != strlen(s + 5))
			continue;
		if (n >= MAX_FILES)
			break;
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn || !(nn[n] = strdup(s))) {
			names = nn ? nn : names;
			closedir(dh);
			goto nomem;
		}
		names = nn;
		n++;
	}
	closedir(dh);
	qsort(names, n, sizeof(*names), cmp_num_suffix);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		f = pd_add_file(r, path);
		if (!f)
			goto nomem;
		if (pd_map_path(path, f->path, f, r->d, 1) < 0)
			goto out;
		f->start = 0;
		f->end = f->declared_end = f->size;
	}
	ret = 0;
	goto out;
nomem:
	diag_error(r->d, dir, DIAG_NO_OFFSET, "out of memory");
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}
