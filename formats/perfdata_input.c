/* perfdata_input: where the records of a recording come from: a file mapped, a pipe
 * spooled (perfdata_spool.c), and the data.N files of a `perf record --threads`
 * directory. */
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

/* Map `fd` (regular file) or spool it (pipe, terminal, fifo) first; with `regular`,
 * only a regular file will do (a --threads directory's data.N has no magic to check). */
int pd_map_fd(struct perf_reader *r, int fd, const char *name, struct pd_file *f, int regular)
{
	struct diag *d = r->d;
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
		return pd_spool(r, fd, name, f);
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

int pd_map_path(struct perf_reader *r, const char *path, const char *name, struct pd_file *f,
		int regular)
{
	int fd, ret;

	/* a data.N that is a FIFO must not block the open */
	fd = open(path, O_RDONLY | O_CLOEXEC | (regular ? O_NONBLOCK : 0));
	if (fd < 0) {
		diag_error(r->d, name, DIAG_NO_OFFSET, "cannot open: %s", strerror(errno));
		return -1;
	}
	ret = pd_map_fd(r, fd, name, f, regular);
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
	if (pd_map_path(r, path, f->path, f, 1) < 0 || pd_read_header(r) < 0)
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
		if (pd_map_path(r, path, f->path, f, 1) < 0)
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
