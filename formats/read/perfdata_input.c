/* perfdata_input: where the records of a recording come from: a file mapped, a pipe
 * spooled (perfdata_spool.c), and the data.N files of a `perf record --threads`
 * directory. */
#include "formats/read/perfdata_internal.h"

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

/* A file of the directory and the number in its name. */
struct dir_ent {
	unsigned long n;
	char *name;
};

static int cmp_dir_ent(const void *a, const void *b)
{
	const struct dir_ent *x = a, *y = b;

	return x->n < y->n ? -1 : x->n > y->n;
}

/* The N of "data.N" as perf writes it ("%d": no sign, no leading zero); -1 otherwise. */
static long data_index(const char *name)
{
	const char *s = name + strlen("data.");
	size_t len = strlen(s);

	if (!len || len > 9 || strspn(s, "0123456789") != len || (s[0] == '0' && len > 1))
		return -1;
	return strtol(s, NULL, 10);
}

/* Why a file of the directory is not read: counted, and the first named. */
struct not_read {
	size_t n;
	char first[256];
};

static void not_read(struct not_read *w, const char *name)
{
	if (!w->n++)
		snprintf(w->first, sizeof(w->first), "%s", name);
}

/*
 * File format (`perf record --threads`, feature DIR_FORMAT = { u64 version; }, version
 * 1): DIR/data holds the header and the records perf synthesized, and DIR/data.N
 * ("%d", N from 0) the records of each of its mmaps, one per recorded CPU: fewer than
 * the NRCPUS feature's CPUs. Other names (data.01), files beyond the CPUs and a file
 * that is one already read (a symlink or hard link to data.0) hold no records of the
 * recording: not read, and said.
 */
int pd_open_dir(struct perf_reader *r, const char *dir)
{
	char path[4096];
	struct dir_ent *ents = NULL, *grown;
	struct not_read odd = { 0 }, beyond = { 0 }, same = { 0 };
	dev_t *devs = NULL;
	ino_t *inos = NULL;
	size_t n = 0, i, j, nread = 0;
	unsigned long limit;
	DIR *dh;
	struct dirent *de;
	struct pd_file *f;
	struct stat st;
	int ret = -1;

	snprintf(path, sizeof(path), "%s/data", dir);
	if (access(path, F_OK) != 0 && errno == ENOENT) {
		diag_error(r->d, dir, DIAG_NO_OFFSET, "a directory, not a recording (perf record "
			   "--threads writes one holding data and data.N files; give the "
			   "perf.data file in it with -i)");
		return -1;
	}
	f = pd_add_file(r, path);
	if (!f)
		goto nomem;
	if (pd_map_path(r, path, f->path, f, 1) < 0 || pd_read_header(r) < 0)
		return -1;
	if (!r->hdr.directory)
		diag_warn(r->d, path, DIAG_NO_OFFSET, "no DIR_FORMAT feature in the header of a "
			  "directory: its data.N files are read as perf record --threads writes "
			  "them");
	else if (r->dir_version != 1)
		diag_warn(r->d, path, DIAG_NO_OFFSET, "DIR_FORMAT version %llu (this reader "
			  "knows 1): its data.N files are read as version 1",
			  (unsigned long long)r->dir_version);
	r->hdr.directory = 1;
	limit = r->hdr.nr_cpus_avail && r->hdr.nr_cpus_avail < MAX_FILES ?
		r->hdr.nr_cpus_avail : MAX_FILES;
	dh = opendir(dir);
	if (!dh) {
		diag_error(r->d, dir, DIAG_NO_OFFSET, "cannot read the directory: %s",
			   strerror(errno));
		return -1;
	}
	while ((de = readdir(dh))) {
		const char *s = de->d_name;
		long k;

		if (!starts_with(s, "data."))
			continue;
		k = data_index(s);
		if (k < 0) {
			not_read(&odd, s);
			continue;
		}
		if ((unsigned long)k >= limit) {
			not_read(&beyond, s);
			continue;
		}
		grown = realloc(ents, (n + 1) * sizeof(*ents));
		if (!grown || !(grown[n].name = strdup(s))) {
			ents = grown ? grown : ents;
			closedir(dh);
			goto nomem;
		}
		ents = grown;
		ents[n++].n = (unsigned long)k;
	}
	closedir(dh);
	qsort(ents, n, sizeof(*ents), cmp_dir_ent);
	devs = malloc((n + 1) * sizeof(*devs));
	inos = malloc((n + 1) * sizeof(*inos));
	if (!devs || !inos)
		goto nomem;
	if (stat(r->files[0].path, &st) == 0) {
		devs[nread] = st.st_dev;
		inos[nread++] = st.st_ino;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i].name);
		if (stat(path, &st) == 0) {
			for (j = 0; j < nread && (devs[j] != st.st_dev || inos[j] != st.st_ino); j++)
				;
			if (j < nread) {
				not_read(&same, ents[i].name);
				continue;
			}
			devs[nread] = st.st_dev;
			inos[nread++] = st.st_ino;
		}
		f = pd_add_file(r, path);
		if (!f)
			goto nomem;
		if (pd_map_path(r, path, f->path, f, 1) < 0)
			goto out;
		f->start = 0;
		f->end = f->declared_end = f->size;
	}
	if (odd.n)
		diag_warn(r->d, dir, DIAG_NO_OFFSET, "%zu file%s named like data files not read: "
			  "not a name perf writes (data.N), such as %s", odd.n,
			  odd.n == 1 ? "" : "s", odd.first);
	if (beyond.n)
		diag_warn(r->d, dir, DIAG_NO_OFFSET, "%zu file%s not read: beyond the %lu CPUs of "
			  "the recording (data.0 to data.%lu), such as %s", beyond.n,
			  beyond.n == 1 ? "" : "s", limit, limit - 1, beyond.first);
	if (same.n)
		diag_warn(r->d, dir, DIAG_NO_OFFSET, "%zu file%s not read: the same file as one "
			  "read already (a link), such as %s", same.n, same.n == 1 ? "" : "s",
			  same.first);
	ret = 0;
	goto out;
nomem:
	diag_error(r->d, dir, DIAG_NO_OFFSET, "out of memory");
out:
	for (i = 0; i < n; i++)
		free(ents[i].name);
	free(ents);
	free(devs);
	free(inos);
	return ret;
}
