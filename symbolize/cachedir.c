/* cachedir: the cache's folders as perfconv trusts them, its files written whole under
 * names of their own, and its size held under a cap (the rules are in cachedir.h). */
#include "symbolize/cachedir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

static const char *const folders[CACHE_KINDS] = { "symbols", "debug", "kallsyms", "frames", "jit" };

/* The file of DIR that counts the bytes the cache takes. */
#define SIZE_FILE "perfconv-size"
/* A temporary file left by a write that was interrupted is this old before it goes. */
#define TMP_MAX_AGE_S 3600

const char *cache_kind_folder(enum cache_kind kind)
{
	return folders[kind];
}

/* --- what is said ------------------------------------------------------------------ */

static void refuse(const struct cache_ctx *c, const char *folder, const char *what)
{
	char why[256];

	snprintf(why, sizeof(why), "cache folder not used: %s; converting without the cache", what);
	if (c && c->problem)
		c->problem(c->arg, folder, why);
}

static int is_full(int err)
{
	return err == ENOSPC || err == EDQUOT;
}

/* DIR of the cache file `path` (DIR/KIND/NAME), malloc'ed: the folder a full
 * filesystem is said of. */
static char *top_of(const char *path)
{
	char *top = xstrdup(path);

	for (int i = 0; i < 2; i++) {
		char *slash = strrchr(top, '/');

		if (!slash)
			break;
		while (slash > top && slash[-1] == '/')
			slash--;
		*slash = 0;
	}
	return top;
}

static void say_full(const struct cache_ctx *c, const char *path, int err)
{
	char *top, why[160];

	if (!is_full(err) || !c || !c->problem)
		return;
	top = top_of(path);
	snprintf(why, sizeof(why), "cache full (%s): entries not written; converting without them",
		 strerror(err));
	c->problem(c->arg, top[0] ? top : "/", why);
	free(top);
}

/* --- folders ----------------------------------------------------------------------- */

static int ours(const struct stat *st)
{
	return st->st_uid == geteuid() || st->st_uid == 0;
}

/*
 * The folder `name` in `at` (AT_FDCWD: `name` is a path), shown as `shown`, opened as
 * a folder of the cache: made (0700) when missing and `make`; a kind's folder (`kind`)
 * of ours closed to others. A descriptor, -1 when it is missing, -2 when it is refused
 * (said).
 */
static int open_folder(const struct cache_ctx *c, int at, const char *name, const char *shown,
		       int make, int kind)
{
	struct stat st;
	char what[160];
	int fd, made = 0;

	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && make) {
		if (mkdirat(at, name, 0700) == 0)
			made = 1;
		else if (is_full(errno))
			say_full(c, shown, errno);
		fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		int err = errno;

		if (err == ENOENT)
			return -1;
		if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			refuse(c, shown, "a symbolic link (not followed)");
		else if (err == ENOTDIR)
			refuse(c, shown, "not a directory");
		else {
			snprintf(what, sizeof(what), "cannot be opened (%s)", strerror(err));
			refuse(c, shown, what);
		}
		return -2;
	}
	if (fstat(fd, &st) != 0 || !ours(&st)) {
		snprintf(what, sizeof(what), "owned by user %u, not by this one (%u) or root",
			 (unsigned)st.st_uid, (unsigned)geteuid());
		refuse(c, shown, what);
		close(fd);
		return -2;
	}
	/* made here: 0700 whatever the umask took; a kind's folder of ours made 0755 by
	 * an older perfconv, closed */
	if ((made || kind) && (st.st_mode & 077) && st.st_uid == geteuid() && fchmod(fd, 0700) == 0)
		st.st_mode &= ~(mode_t)077;
	if (kind && (st.st_mode & 022)) {
		refuse(c, shown, "writable by other users");
		close(fd);
		return -2;
	}
	return fd;
}

/* The folders above `dir` made (0700) where missing. */
static void make_parents(char *dir)
{
	for (char *q = dir + 1; *q; q++)
		if (*q == '/') {
			*q = 0;
			(void)mkdir(dir, 0700);
			*q = '/';
		}
}

/* DIR opened as the cache's top folder (made with the folders above it when `make`):
 * a descriptor, -1 when missing, -2 when refused (said). */
static int open_top(const struct cache_ctx *c, const char *dir, int make)
{
	size_t n = strlen(dir);
	char *top;
	int fd;

	/* a trailing slash would make the kernel follow a link there */
	while (n > 1 && dir[n - 1] == '/')
		n--;
	top = xstrndup(dir, n);
	fd = open_folder(c, AT_FDCWD, top, top, 0, 0);
	if (fd == -1 && make) {
		make_parents(top);
		fd = open_folder(c, AT_FDCWD, top, top, 1, 0);
	}
	free(top);
	return fd;
}

int cache_dir_usable(const struct cache_ctx *c, const char *dir)
{
	int fd = open_top(c, dir, 0), refused = fd == -2;

	/* each kind's folder there too: one refused is said now, not when first met */
	for (int k = 0; fd >= 0 && k < CACHE_KINDS; k++) {
		char *shown = xasprintf("%s/%s", dir, folders[k]);
		int kfd = open_folder(c, fd, folders[k], shown, 0, 1);

		free(shown);
		if (kfd >= 0)
			close(kfd);
		refused |= kfd == -2;
	}
	if (fd >= 0)
		close(fd);
	return refused ? -1 : 0;
}

int cache_folder_of(const struct cache_ctx *c, const char *path, int make, const char **name)
{
	const char *slash = strrchr(path, '/'), *kslash;
	char *top, *kind, *shown;
	int tfd, fd;

	if (!slash || !slash[1])
		return -1;
	kslash = slash;
	while (kslash > path && kslash[-1] == '/')
		kslash--;
	while (kslash > path && kslash[-1] != '/')
		kslash--;
	if (kslash == path || kslash == slash)
		return -1;
	/* kslash: the start of KIND */
	kind = xstrndup(kslash, (size_t)(slash - kslash));
	top = xstrndup(path, (size_t)(kslash - path)); /* with the slash before KIND */
	tfd = open_top(c, top, make);
	fd = -1;
	if (tfd >= 0) {
		shown = xasprintf("%s%s", top, kind);
		fd = open_folder(c, tfd, kind, shown, make, 1);
		free(shown);
		close(tfd);
	}
	free(kind);
	free(top);
	*name = slash + 1;
	return fd < 0 ? -1 : fd;
}

/* --- files ------------------------------------------------------------------------- */

int cache_file_open(const struct cache_ctx *c, const char *path, const char **why)
{
	const char *name;
	struct stat st;
	int dfd = cache_folder_of(c, path, 0, &name), fd;

	*why = NULL;
	if (dfd < 0) {
		errno = ENOENT;
		return -1;
	}
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			*why = "a symbolic link";
		else if (errno != ENOENT)
			*why = "cannot be opened";
	} else if (fstat(fd, &st) != 0 || !ours(&st)) {
		*why = "another user's file";
		close(fd);
		fd = -1;
	}
	close(dfd);
	return fd;
}

int cache_file_exists(const struct cache_ctx *c, const char *path)
{
	const char *why;
	int fd = cache_file_open(c, path, &why);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

void cache_file_remove(const struct cache_ctx *c, const char *path)
{
	const char *name;
	int dfd = cache_folder_of(c, path, 0, &name);

	if (dfd < 0)
		return;
	(void)unlinkat(dfd, name, 0);
	close(dfd);
}

static void count(const struct cache_ctx *c, const char *path, int64_t delta);

int cache_file_create(const struct cache_ctx *c, struct atomic_file *f, const char *path)
{
	const char *name;
	int dfd = cache_folder_of(c, path, 1, &name), r, err;

	memset(f, 0, sizeof(*f));
	f->fd = f->dirfd = -1;
	if (dfd < 0)
		return -1;
	r = atomic_file_openat(f, dfd, name, 0600);
	err = errno;
	close(dfd);
	if (r != 0)
		say_full(c, path, err);
	return r;
}

int cache_file_commit(const struct cache_ctx *c, struct atomic_file *f, const char *path)
{
	struct stat st, old;
	int64_t delta = 0;

	/* what it adds: its blocks, less those of the file it replaces */
	if (f->fd >= 0 && fstat(f->fd, &st) == 0)
		delta = (int64_t)st.st_blocks * 512;
	if (f->dirfd >= 0 && f->path && fstatat(f->dirfd, f->path, &old, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(old.st_mode))
		delta -= (int64_t)old.st_blocks * 512;
	if (atomic_file_commit(f) != 0) {
		say_full(c, path, errno);
		return -1;
	}
	count(c, path, delta);
	return 0;
}

void cache_file_fail(const struct cache_ctx *c, struct atomic_file *f, const char *path, int err)
{
	atomic_file_abort(f);
	say_full(c, path, err);
}

int cache_file_write(const struct cache_ctx *c, const char *path, const void *data, size_t len)
{
	struct atomic_file f;

	if (cache_file_create(c, &f, path) != 0)
		return -1;
	if (pwrite_whole(f.fd, data, len, 0) != 0) {
		cache_file_fail(c, &f, path, errno);
		return -1;
	}
	return cache_file_commit(c, &f, path);
}

void cache_file_used(int fd)
{
	(void)futimens(fd, NULL);
}

/* --- size -------------------------------------------------------------------------- */

/* A file of a kind's folder, as eviction sees it. */
struct item {
	enum cache_kind kind;
	char *name;
	uint64_t size;
	struct timespec time;
	enum { ENTRY, STAMP, MERGED, TEMP } what;
};

static int time_cmp(const struct timespec *a, const struct timespec *b)
{
	if (a->tv_sec != b->tv_sec)
		return a->tv_sec < b->tv_sec ? -1 : 1;
	return (a->tv_nsec > b->tv_nsec) - (a->tv_nsec < b->tv_nsec);
}

static int by_name(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int by_time(const void *a, const void *b)
{
	const struct item *x = *(const struct item *const *)a, *y = *(const struct item *const *)b;
	int c = time_cmp(&x->time, &y->time);

	return c ? c : by_name(x, y);
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n > m && strcmp(s + n - m, tail) == 0;
}

/* The regular files of kind `k`'s folder `fd` into *v. */
static void list_folder(int fd, enum cache_kind k, struct item **v, size_t *n, size_t *cap)
{
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct timespec now;
	struct dirent *e;

	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	while ((e = readdir(d))) {
		struct stat st;
		struct item it;

		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		it.kind = k;
		it.size = (uint64_t)st.st_blocks * 512;
		it.time = st.st_mtim;
		it.what = strstr(e->d_name, ".tmp.") ? TEMP : ends_with(e->d_name, ".ok") ? STAMP : ENTRY;
		if (it.what == TEMP && now.tv_sec - st.st_mtim.tv_sec > TMP_MAX_AGE_S) {
			(void)unlinkat(fd, e->d_name, 0);
			continue;
		}
		it.name = xstrdup(e->d_name);
		VEC_PUSH(*v, *n, *cap, it);
	}
	closedir(d);
}

/* The bytes the cache in `top` (shown as `dir`) takes, counted; past `cap`, the
 * entries used longest ago removed until it is at 80% of it. */
static uint64_t evict(const struct cache_ctx *c, int top, const char *dir, uint64_t cap)
{
	int fds[CACHE_KINDS];
	struct item *v = NULL, **order;
	size_t n = 0, cap_v = 0, norder = 0;
	uint64_t total = 0;

	for (int k = 0; k < CACHE_KINDS; k++) {
		char *shown = xasprintf("%s/%s", dir, folders[k]);

		fds[k] = open_folder(c, top, folders[k], shown, 0, 1);
		free(shown);
		if (fds[k] >= 0)
			list_folder(fds[k], (enum cache_kind)k, &v, &n, &cap_v);
	}
	if (n)
		qsort(v, n, sizeof(*v), by_name);
	/* a stamp counts with its entry, and its time (set at each use) is the entry's */
	for (size_t i = 0; i < n; i++) {
		struct item key, *e;

		if (v[i].what != STAMP)
			continue;
		key.kind = v[i].kind;
		key.name = xstrndup(v[i].name, strlen(v[i].name) - 3);
		e = bsearch(&key, v, n, sizeof(*v), by_name);
		free(key.name);
		if (e && e->what == ENTRY) {
			e->size += v[i].size;
			if (time_cmp(&v[i].time, &e->time) > 0)
				e->time = v[i].time;
			v[i].what = MERGED;
		} else { /* its entry gone: it vouches for nothing */
			(void)unlinkat(fds[v[i].kind], v[i].name, 0);
			v[i].what = MERGED;
		}
	}
	order = xmalloc((n ? n : 1) * sizeof(*order));
	for (size_t i = 0; i < n; i++) {
		if (v[i].what != MERGED)
			total += v[i].size;
		if (v[i].what == ENTRY)
			order[norder++] = &v[i];
	}
	if (cap && total > cap) {
		uint64_t target = cap / 10 * 8;

		qsort(order, norder, sizeof(*order), by_time);
		for (size_t i = 0; i < norder && total > target; i++) {
			char *stamp = xasprintf("%s.ok", order[i]->name);

			if (unlinkat(fds[order[i]->kind], order[i]->name, 0) == 0 || errno == ENOENT)
				total -= order[i]->size;
			(void)unlinkat(fds[order[i]->kind], stamp, 0);
			free(stamp);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	free(order);
	for (int k = 0; k < CACHE_KINDS; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	return total;
}

/* `delta` bytes more in the cache of the file `path` (DIR/KIND/NAME) than DIR's count
 * says: the count made good, and the cache trimmed past c->max_size. */
static void count(const struct cache_ctx *c, const char *path, int64_t delta)
{
	uint64_t total = 0;
	char buf[32], *end, *dir;
	struct stat st;
	int top, fd, known = 0;
	ssize_t got;

	if (!c || !c->max_size)
		return;
	dir = top_of(path);
	top = open_top(c, dir, 0);
	fd = top < 0 ? -1 : openat(top, SIZE_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !ours(&st) ||
	    flock(fd, LOCK_EX) != 0)
		goto out;
	/* one process at a time from here: the count read, added to, and written */
	got = pread(fd, buf, sizeof(buf) - 1, 0);
	if (got > 1 && buf[0] >= '0' && buf[0] <= '9') {
		buf[got] = 0;
		errno = 0;
		total = strtoull(buf, &end, 10);
		known = !errno && *end == '\n' && !end[1];
	}
	if (known)
		total = delta < 0 && (uint64_t)-delta > total ? 0 : total + (uint64_t)delta;
	/* unknown (a first write, an older perfconv's cache, damage): counted; past the
	 * cap: counted and trimmed */
	if (!known || total > c->max_size)
		total = evict(c, top, dir, c->max_size);
	got = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)total);
	if (pwrite_whole(fd, buf, (size_t)got, 0) == 0 && ftruncate(fd, got) != 0) {
		/* not cut to the new count: the old count's last bytes after it make it
		 * read as unknown, and the next write counts the folders again */
	}
out:
	if (fd >= 0)
		close(fd); /* the lock with it */
	if (top >= 0)
		close(top);
	free(dir);
}
