/* watchdir: the watched folder's operations, relative to its descriptor: a look at its
 * chunks (kept in an index from one look to the next), its subfolders checked and made,
 * a chunk moved into one, and a subfolder pruned to --keep-sent.
 *
 * The folder is not a trust boundary (upload/watch.c says how it is used): no path is
 * followed, every name is opened or moved relative to the folder's descriptor or its
 * subfolders', which are used only when perfconv's own and writable by no one else.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "upload/watch_internal.h"
#include "upload/watchfile.h"
#include "upload/watchopts.h"

static const char *const sub_names[NSUB] = { "sent", "refused", "dropped" };

struct chunk {
	char *name;
	uint64_t size;
	int64_t mtime;        /* its modification time */
};

static int chunk_cmp(const void *a, const void *b)
{
	return chunk_name_cmp(((const struct chunk *)a)->name, ((const struct chunk *)b)->name);
}

static void free_chunks(struct chunk *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].name);
	free(c);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static struct entry *index_find(const struct index *x, const char *name)
{
	if (!x->cap)
		return NULL;
	for (size_t i = name_hash(name) & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
		if (!x->slot[i])
			return NULL;
		if (strcmp(x->slot[i]->name, name) == 0)
			return x->slot[i];
	}
}

static void index_put(struct index *x, struct entry *e)
{
	size_t i;

	if (2 * (x->n + 1) > x->cap) {
		struct index g = { xcalloc(x->cap ? 2 * x->cap : 256, sizeof(*g.slot)),
				   x->cap ? 2 * x->cap : 256, 0 };

		for (size_t k = 0; k < x->cap; k++)
			if (x->slot[k])
				index_put(&g, x->slot[k]);
		free(x->slot);
		*x = g;
	}
	for (i = name_hash(e->name) & (x->cap - 1); x->slot[i]; i = (i + 1) & (x->cap - 1))
		;
	x->slot[i] = e;
	x->n++;
}

void watchdir_entry_free(struct entry *e)
{
	if (e) {
		free(e->name);
		free(e);
	}
}

static int entry_cmp(const void *a, const void *b)
{
	return chunk_name_cmp((*(struct entry *const *)a)->name, (*(struct entry *const *)b)->name);
}


int64_t watchdir_clock_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec;
}

/* "DIR/NAME", for a message: the caller frees it. */
char *watchdir_path(const struct watcher *w, const char *name)
{
	char *p = xmalloc(strlen(w->o->dir) + strlen(name) + 2);

	sprintf(p, "%s/%s", w->o->dir, name);
	return p;
}

/*
 * Look at the folder: every chunk-named entry, oldest first, into *out (the caller frees
 * the array, not the entries), but those given up on while they are the same file. No
 * file is opened, and only a name new to the watcher (or leading to another inode) and
 * one still being written are stat'ed: an entry already known costs its share of a
 * getdents and a probe, each look, so that a look costs system calls linear in the
 * folder's size, not in what it held before. What the last look knew of an entry (its
 * size, failures, that it was given up on) is kept while its name leads to the same
 * inode; the rest is freed, but the chunk in flight. (A known chunk's size is the
 * backlog's estimate only: watchsend_one reads the file's status on its descriptor.)
 */
size_t watchdir_scan(struct watcher *w, struct entry ***out)
{
	int fd = dup(w->dfd);
	DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	struct index old = w->idx, now = { NULL, 0, 0 };
	struct entry **list = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	if (!dp) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	w->gen++;
	rewinddir(dp);
	while ((de = readdir(dp)) != NULL) {
		struct entry *e;
		struct stat st;

		if (!chunk_name(de->d_name))
			continue;
		e = index_find(&old, de->d_name);
		if (e && e->gen == w->gen)
			continue; /* a name seen twice in one readdir: a rename racing it */
		if (!e || e->ino != (uint64_t)de->d_ino) {
			e = xcalloc(1, sizeof(*e));
			e->name = xstrdup(de->d_name);
			e->ino = (uint64_t)de->d_ino;
		}
		e->gen = w->gen;
		index_put(&now, e);
		if (e->state == E_SKIP)
			continue;
		if (!e->statted || e->state == E_WAIT) {
			if (fstatat(w->dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
				continue;
			e->size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
			e->statted = 1;
		}
		VEC_PUSH(list, n, cap, e);
	}
	closedir(dp);
	for (size_t i = 0; i < old.cap; i++) {
		struct entry *e = old.slot[i];

		if (e && e->gen != w->gen && !e->inflight)
			watchdir_entry_free(e);
	}
	free(old.slot);
	w->idx = now;
	if (n > 1)
		qsort(list, n, sizeof(*list), entry_cmp);
	*out = list;
	return n;
}

/* The subfolder's descriptor, made when missing: -1 after saying why. One that is a
 * link, or not perfconv's own, or writable by others is not used. */
int watchdir_sub(struct watcher *w, int sub, int make)
{
	const char *name = sub_names[sub];
	char *path;
	struct stat st;
	int fd;

	if (w->sub[sub] >= 0)
		return w->sub[sub];
	path = watchdir_path(w, name);
	if (make && mkdirat(w->dfd, name, 0755) != 0 && errno != EEXIST) {
		diag_error(w->d, path, DIAG_NO_OFFSET, "cannot make the folder: %s", strerror(errno));
		free(path);
		return -1;
	}
	fd = openat(w->dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (make || errno != ENOENT)
			diag_error(w->d, path, DIAG_NO_OFFSET, "%s",
				   errno == ELOOP || errno == ENOTDIR ? "not a folder (a link?): not used" :
				   strerror(errno));
		free(path);
		return -1;
	}
	if (fstat(fd, &st) != 0 || st.st_uid != w->euid || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		diag_error(w->d, path, DIAG_NO_OFFSET, "not used: owned by uid %u, mode %o "
			   "(perfconv takes its own folder, uid %u, writable by no one else)",
			   (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)w->euid);
		close(fd);
		free(path);
		return -1;
	}
	free(path);
	w->sub[sub] = fd;
	return fd;
}

/* Move chunk `name` into subfolder `sub`: 0, or -1 after saying why. */
int watchdir_move(struct watcher *w, int sub, const char *name)
{
	int to = watchdir_sub(w, sub, 1);

	if (to < 0)
		return -1;
	if (renameat(w->dfd, name, to, name) != 0) {
		char *path = watchdir_path(w, name);

		diag_error(w->d, path, DIAG_NO_OFFSET, "cannot move it to %s/: %s", sub_names[sub],
			   strerror(errno));
		free(path);
		return -1;
	}
	return 0;
}

/*
 * Keep subfolder `sub` within --keep-sent: its chunks (regular files named as perf
 * names them; nothing else is touched) deleted oldest first while they hold more than
 * keep_bytes, and those modified more than keep_age_s ago. `size` and `mtime` (0:
 * unknown) are those of the chunk just moved in: the subfolder is read and stat'ed whole
 * only when its tally from the last such look says a limit is passed, or that look is a
 * minute old (another process may have put files there), not after every chunk sent,
 * which made a backlog's sending quadratic in the chunks sent/ holds.
 */
void watchdir_prune(struct watcher *w, int sub, uint64_t size, int64_t mtime)
{
	int fd = w->sub[sub], dfd2;
	DIR *dp;
	struct dirent *de;
	struct chunk *list = NULL;
	size_t n = 0, cap = 0, gone = 0;
	uint64_t total = 0;
	time_t now = time(NULL);
	struct kept *kept = &w->kept[sub];
	char sz[32], age[32];

	if (fd < 0 || (!w->o->keep_bytes && !w->o->keep_age_s))
		return;
	if (kept->known && mtime > 0 && watchdir_clock_s() - kept->looked < 60) {
		kept->bytes += size;
		if (mtime < kept->oldest)
			kept->oldest = mtime;
		if ((!w->o->keep_bytes || kept->bytes <= w->o->keep_bytes) &&
		    (!w->o->keep_age_s || now - kept->oldest <= w->o->keep_age_s))
			return;
	}
	dfd2 = dup(fd);
	dp = dfd2 >= 0 ? fdopendir(dfd2) : NULL;
	if (!dp) {
		if (dfd2 >= 0)
			close(dfd2);
		return;
	}
	rewinddir(dp);
	while ((de = readdir(dp)) != NULL) {
		struct stat st;
		struct chunk c;

		if (!chunk_name(de->d_name) ||
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		c.name = xstrdup(de->d_name);
		c.size = (uint64_t)st.st_size;
		c.mtime = (int64_t)st.st_mtime;
		VEC_PUSH(list, n, cap, c);
		total += c.size;
	}
	closedir(dp);
	if (n > 1)
		qsort(list, n, sizeof(*list), chunk_cmp);
	for (size_t i = 0; i < n; i++) {
		int old = w->o->keep_age_s && now - list[i].mtime > w->o->keep_age_s;

		if (!old && (!w->o->keep_bytes || total <= w->o->keep_bytes))
			continue;
		if (unlinkat(fd, list[i].name, 0) == 0) {
			total -= list[i].size;
			gone++;
			list[i].size = UINT64_MAX; /* gone: not the oldest kept */
		}
	}
	kept->known = 1;
	kept->looked = watchdir_clock_s();
	kept->bytes = total;
	kept->oldest = INT64_MAX;
	for (size_t i = 0; i < n; i++)
		if (list[i].size != UINT64_MAX && list[i].mtime < kept->oldest)
			kept->oldest = list[i].mtime;
	if (gone && !w->pruned_said[sub] && !w->o->quiet) {
		int64_t a = w->o->keep_age_s;

		w->pruned_said[sub] = 1;
		sz[0] = age[0] = '\0';
		if (w->o->keep_bytes)
			watch_size_text(w->o->keep_bytes, sz, sizeof(sz));
		if (a)
			snprintf(age, sizeof(age), "%s%lld %s", sz[0] ? " and " : "",
				 (long long)(a % 86400 == 0 ? a / 86400 : a % 3600 == 0 ? a / 3600 :
					     a % 60 == 0 ? a / 60 : a),
				 a % 86400 == 0 ? "d" : a % 3600 == 0 ? "h" : a % 60 == 0 ? "min" : "s");
		diag_note(w->d, "%s/%s: pruned to --keep-sent %s%s: its oldest chunks are deleted "
			  "from now on", w->o->dir, sub_names[sub], sz, age);
	}
	free_chunks(list, n);
}

