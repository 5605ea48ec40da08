/* watch: send each finished chunk `perf record --switch-output` leaves in a folder.
 *
 * perf record --switch-output writes PATH (perf.data) and, at each switch and at its
 * end, finishes the file's header and renames it PATH.<timestamp> (builtin-record.c
 * record__switch_output, 16 digits: %Y%m%d%H%M%S and centiseconds). So the file with
 * the plain name is the one perf still writes, and a renamed one is finished; a
 * header whose data section runs past the file (a copy still being written) is
 * waited for.
 *
 * The folder is not a trust boundary: it is opened once, and every file in it is
 * opened (O_NOFOLLOW), checked on its descriptor, moved (renameat) and deleted
 * (unlinkat) relative to the folder's descriptor or its subfolders', which are
 * checked to be perfconv's own.
 */
#include "convert/watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/perf_abi.h"
#include "common/util.h"

/* A file left with data.size 0 (perf killed) this long ago is converted as it is. */
#define STALE_S 60
/* How often each cause of warnings is said (diag_per_cause). */
#define WARN_INTERVAL_S 3600
/* perf_event_attr's first size (PERF_ATTR_SIZE_VER0) and the ids section after it. */
#define ATTR_MIN 64

enum { SUB_SENT, SUB_REFUSED, SUB_DROPPED, NSUB };
static const char *const sub_names[NSUB] = { "sent", "refused", "dropped" };

/* NAME ends in ".<at least 8 digits>": perf's switch-output suffix. */
static int chunk_name(const char *name)
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
static int open_chunk(int dirfd, const char *name, struct stat *st)
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

static int chunk_complete_fd(int fd, const struct stat *st)
{
	uint8_t h[56];
	uint64_t off, size;
	int sw;

	if (chunk_header(fd, h, &sw) != 0)
		return 0;
	off = ld64(h + 40, sw);
	size = ld64(h + 48, sw);
	if (size)
		return off <= (uint64_t)st->st_size && size <= (uint64_t)st->st_size - off;
	return time(NULL) - st->st_mtime > STALE_S;
}

int watch_chunk_complete(int dirfd, const char *name, uint64_t *size)
{
	struct stat st;
	int fd, ok;

	if (!chunk_name(name) || (fd = open_chunk(dirfd, name, &st)) < 0)
		return 0;
	ok = chunk_complete_fd(fd, &st);
	close(fd);
	if (ok && size)
		*size = (uint64_t)st.st_size;
	return ok;
}

/*
 * The id the kernel gave the chunk's first event: the attrs section's first entry is
 * an attr of attr_size - 16 bytes and the { u64 offset, size } of its ids. 0 when the
 * header does not give one (then no window is joined to another).
 */
static uint64_t chunk_run(int fd, uint64_t fsize)
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

int64_t watch_window_start(const struct watch_span *prev, const struct watch_span *cur)
{
	if (!prev || !prev->run || prev->run != cur->run || !prev->end_ns)
		return cur->start_ns;
	if (prev->has_clock_ref && cur->has_clock_ref &&
	    (prev->clock_ref_wall != cur->clock_ref_wall ||
	     prev->clock_ref_clock != cur->clock_ref_clock))
		return cur->start_ns;
	/* the kernel's ids start again at a boot, and so does perf's clock */
	if (prev->last_clock && cur->first_clock && cur->first_clock < prev->last_clock)
		return cur->start_ns;
	if (prev->end_ns >= cur->end_ns)
		return cur->start_ns;
	return prev->end_ns;
}

/* A number with K, M, G or T (and B or iB) after it: 0 with *v set, or -1. */
static int parse_size(const char *s, uint64_t *v, int *had_suffix)
{
	char *end;
	unsigned long long n;
	unsigned shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -1;
	*had_suffix = *end != '\0';
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; break;
	case 'M': shift = 20; break;
	case 'G': shift = 30; break;
	case 'T': shift = 40; break;
	default: return -1;
	}
	if (*end)
		end++;
	if (strcmp(end, "") != 0 && strcmp(end, "B") != 0 && strcmp(end, "iB") != 0)
		return -1;
	if (shift && n > (UINT64_MAX >> shift))
		return -1;
	*v = (uint64_t)n << shift;
	return 0;
}

int watch_parse_backlog(const char *s, uint64_t *chunks, uint64_t *bytes)
{
	uint64_t v;
	int suffix;

	*chunks = *bytes = 0;
	if (strcmp(s, "none") == 0)
		return 0;
	if (parse_size(s, &v, &suffix) != 0)
		return -1;
	if (suffix)
		*bytes = v;
	else
		*chunks = v;
	return 0;
}

int watch_parse_keep(const char *s, uint64_t *bytes, int64_t *age_s)
{
	static const struct { const char *unit; int64_t s; } units[] = {
		{ "s", 1 }, { "m", 60 }, { "min", 60 }, { "h", 3600 }, { "d", 86400 },
		{ "w", 7 * 86400 },
	};
	char *end;
	unsigned long long n;
	uint64_t v;
	int suffix;

	if (strcmp(s, "all") == 0) {
		*bytes = 0;
		*age_s = 0;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || !*end)
		return -1; /* a bare number could be either */
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0) {
			if (n == 0 || n > (unsigned long long)(INT64_MAX / units[i].s))
				return -1;
			*age_s = (int64_t)n * units[i].s;
			return 0;
		}
	if (parse_size(s, &v, &suffix) != 0 || v == 0)
		return -1;
	*bytes = v;
	return 0;
}

/* "1.5 GiB", "512 KiB", "900 bytes" */
static void fmt_size(uint64_t v, char *buf, size_t cap)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double x = (double)v;
	int u = -1;

	while (x >= 1024 && u < 3) {
		x /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, cap, "%llu bytes", (unsigned long long)v);
	else
		snprintf(buf, cap, "%.*f %s", x < 10 && x != (double)(uint64_t)x ? 1 : 0, x, units[u]);
}

/* "5 d 12 h", "3 h 20 min", "45 min", "30 s" */
static void fmt_age(int64_t s, char *buf, size_t cap)
{
	if (s >= 2 * 86400)
		snprintf(buf, cap, "%lld d %lld h", (long long)(s / 86400), (long long)(s % 86400 / 3600));
	else if (s >= 3600)
		snprintf(buf, cap, "%lld h %lld min", (long long)(s / 3600), (long long)(s % 3600 / 60));
	else if (s >= 60)
		snprintf(buf, cap, "%lld min", (long long)(s / 60));
	else
		snprintf(buf, cap, "%lld s", (long long)(s < 0 ? 0 : s));
}

struct chunk {
	char *name;
	uint64_t size;
	int64_t mtime;        /* prune: its modification time */
	int skipped;          /* given up on by this run */
};

static int chunk_cmp(const void *a, const void *b)
{
	const struct chunk *x = a, *y = b;
	const char *dx = strrchr(x->name, '.'), *dy = strrchr(y->name, '.');
	size_t lx = strlen(dx), ly = strlen(dy);

	/* by the timestamp (as a number: equal lengths compare as strings), then name */
	if (lx != ly)
		return lx < ly ? -1 : 1;
	if (strcmp(dx, dy))
		return strcmp(dx, dy);
	return strcmp(x->name, y->name);
}

static void free_chunks(struct chunk *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].name);
	free(c);
}

struct watcher {
	const struct watch_options *o;
	struct uploader *u;
	struct diag *d;
	int dfd;                  /* the folder */
	int sub[NSUB];            /* its subfolders, -1 until made and checked */
	char **skip;              /* chunks given up on by this run */
	size_t nskip, skip_cap;
	/* the backlog: what was last said and why it is there */
	size_t reported;
	char reason[600];
	int reason_said;
	uint64_t ndropped;        /* since the watcher started */
	const char *inflight;     /* the chunk being sent: on_retry may drop it */
	int inflight_dropped;
	int pruned_said[NSUB];
};

/* "DIR/NAME", for a message: the caller frees it. */
static char *in_dir(const struct watcher *w, const char *name)
{
	char *p = xmalloc(strlen(w->o->dir) + strlen(name) + 2);

	sprintf(p, "%s/%s", w->o->dir, name);
	return p;
}

static int in_skip(const struct watcher *w, const char *name)
{
	for (size_t i = 0; i < w->nskip; i++)
		if (strcmp(w->skip[i], name) == 0)
			return 1;
	return 0;
}

static void skip_add(struct watcher *w, const char *name)
{
	VEC_PUSH(w->skip, w->nskip, w->skip_cap, xstrdup(name));
}

/* Every finished chunk in the folder, oldest first. A skip entry whose chunk is gone
 * is forgotten, so that the list does not grow for the life of the watcher. */
static size_t scan(struct watcher *w, struct chunk **out)
{
	int fd = dup(w->dfd);
	DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	struct chunk *list = NULL;
	size_t n = 0, cap = 0, kept = 0;

	*out = NULL;
	if (!dp) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	rewinddir(dp);
	while ((de = readdir(dp)) != NULL) {
		struct chunk c = { NULL, 0, 0, 0 };

		if (!chunk_name(de->d_name) || !watch_chunk_complete(w->dfd, de->d_name, &c.size))
			continue;
		c.name = xstrdup(de->d_name);
		c.skipped = in_skip(w, c.name);
		VEC_PUSH(list, n, cap, c);
	}
	closedir(dp);
	if (n > 1)
		qsort(list, n, sizeof(*list), chunk_cmp);
	for (size_t i = 0; i < w->nskip; i++) {
		int present = 0;

		for (size_t j = 0; j < n && !present; j++)
			present = strcmp(list[j].name, w->skip[i]) == 0;
		if (present)
			w->skip[kept++] = w->skip[i];
		else
			free(w->skip[i]);
	}
	w->nskip = kept;
	*out = list;
	return n;
}

/* The subfolder's descriptor, made when missing: -1 after saying why. One that is a
 * link, or not perfconv's own, or writable by others is not used. */
static int sub_fd(struct watcher *w, int sub, int make)
{
	const char *name = sub_names[sub];
	char *path;
	struct stat st;
	int fd;

	if (w->sub[sub] >= 0)
		return w->sub[sub];
	path = in_dir(w, name);
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
	if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		diag_error(w->d, path, DIAG_NO_OFFSET, "not used: owned by uid %u, mode %o "
			   "(perfconv takes its own folder, uid %u, writable by no one else)",
			   (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
		close(fd);
		free(path);
		return -1;
	}
	free(path);
	w->sub[sub] = fd;
	return fd;
}

/* Move chunk `name` into subfolder `sub`: 0, or -1 after saying why. */
static int move_to(struct watcher *w, int sub, const char *name)
{
	int to = sub_fd(w, sub, 1);

	if (to < 0)
		return -1;
	if (renameat(w->dfd, name, to, name) != 0) {
		char *path = in_dir(w, name);

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
 * keep_bytes, and those modified more than keep_age_s ago.
 */
static void prune(struct watcher *w, int sub)
{
	int fd = w->sub[sub], dfd2;
	DIR *dp;
	struct dirent *de;
	struct chunk *list = NULL;
	size_t n = 0, cap = 0, gone = 0;
	uint64_t total = 0;
	time_t now = time(NULL);
	char sz[32], age[32];

	if (fd < 0 || (!w->o->keep_bytes && !w->o->keep_age_s))
		return;
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
		c.skipped = 0;
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
		}
	}
	if (gone && !w->pruned_said[sub] && !w->o->quiet) {
		int64_t a = w->o->keep_age_s;

		w->pruned_said[sub] = 1;
		sz[0] = age[0] = '\0';
		if (w->o->keep_bytes)
			fmt_size(w->o->keep_bytes, sz, sizeof(sz));
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

/* Say the backlog when it grew since it was last said. */
static void say_backlog(struct watcher *w, size_t n, const char *oldest)
{
	if (n > w->reported && (n > 1 || w->reason[0]) && !w->o->quiet)
		diag_note(w->d, "%s: backlog of %zu chunks (oldest %s): %s", w->o->dir, n, oldest,
			  w->reason[0] ? w->reason : "converting and sending");
	w->reported = n;
}

/*
 * Keep the unsent chunks within --max-backlog: the oldest moved to dropped/ (deleted
 * with --delete-sent), each said. Returns the chunks left (list[*first..n)).
 */
static size_t enforce_backlog(struct watcher *w, struct chunk *list, size_t n, size_t *first)
{
	const struct watch_options *o = w->o;
	uint64_t bytes = 0;
	size_t left = n, i = 0;

	for (size_t k = 0; k < n; k++)
		bytes += list[k].size;
	for (; i < n && ((o->max_chunks && left > o->max_chunks) ||
			 (o->max_bytes && bytes > o->max_bytes)); i++) {
		char total[32], limit[32], *path;
		int gone;

		fmt_size(bytes, total, sizeof(total));
		if (o->max_bytes)
			fmt_size(o->max_bytes, limit, sizeof(limit));
		else
			snprintf(limit, sizeof(limit), "%llu chunks", (unsigned long long)o->max_chunks);
		path = in_dir(w, list[i].name);
		gone = o->delete_sent ? unlinkat(w->dfd, list[i].name, 0) : move_to(w, SUB_DROPPED,
										   list[i].name);
		if (gone != 0) {
			if (o->delete_sent)
				diag_error(w->d, path, DIAG_NO_OFFSET, "cannot delete it: %s",
					   strerror(errno));
			free(path);
			break;
		}
		w->ndropped++;
		diag_warn_always(w->d, path, DIAG_NO_OFFSET, "dropped, never sent: the backlog of %zu "
				 "chunks (%s) is over --max-backlog %s; %s (%llu dropped since perfconv "
				 "started)", left, total, limit,
				 o->delete_sent ? "deleted" : "moved to dropped/",
				 (unsigned long long)w->ndropped);
		free(path);
		if (w->inflight && strcmp(w->inflight, list[i].name) == 0)
			w->inflight_dropped = 1;
		left--;
		bytes -= list[i].size;
	}
	if (i && !o->delete_sent)
		prune(w, SUB_DROPPED);
	*first = i;
	return left;
}

static int on_retry(void *ctx, const struct upload_result *r, unsigned wait)
{
	struct watcher *w = ctx;
	struct chunk *list;
	size_t n, first, left;

	snprintf(w->reason, sizeof(w->reason), "the backend answered %s; trying again in %u s",
		 r->what, wait);
	diag_tick(w->d);
	n = scan(w, &list);
	left = enforce_backlog(w, list, n, &first);
	if (!w->reason_said) {
		/* the first failure of a run of them is said, whatever the count */
		w->reported = 0;
		w->reason_said = 1;
	}
	if (left)
		say_backlog(w, left, list[first].name);
	free_chunks(list, n);
	return w->inflight_dropped;
}

static void sleep_ms(unsigned ms, struct upload_stop *stop)
{
	for (unsigned t = 0; t < ms && !upload_stop_check(stop); t += 100) {
		struct timespec ts = { 0, 100000000 };

		nanosleep(&ts, NULL);
	}
}

/*
 * The newest chunk in sent/, as the chunk before the first one this run sends: its run
 * from its header, its end from its modification time (set when it was sent). 1 with
 * *prev and *name (the caller frees) set, or 0.
 */
static int last_sent(struct watcher *w, struct watch_span *prev, char **name)
{
	int fd = sub_fd(w, SUB_SENT, 0), dfd2, cfd;
	DIR *dp;
	struct dirent *de;
	struct chunk best = { NULL, 0, 0, 0 };
	struct stat st;

	if (fd < 0 || (dfd2 = dup(fd)) < 0)
		return 0;
	if (!(dp = fdopendir(dfd2))) {
		close(dfd2);
		return 0;
	}
	rewinddir(dp);
	while ((de = readdir(dp)) != NULL) {
		struct chunk c = { de->d_name, 0, 0, 0 };

		if (chunk_name(de->d_name) && (!best.name || chunk_cmp(&c, &best) > 0)) {
			free(best.name);
			best.name = xstrdup(de->d_name);
		}
	}
	closedir(dp);
	if (!best.name || (cfd = open_chunk(fd, best.name, &st)) < 0) {
		free(best.name);
		return 0;
	}
	memset(prev, 0, sizeof(*prev));
	prev->run = chunk_run(cfd, (uint64_t)st.st_size);
	prev->end_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	close(cfd);
	*name = best.name;
	return prev->run != 0;
}

/* The chunk's modification time set to its window's end, for the next run's first
 * window and for --keep-sent's age. */
static void stamp(int fd, int64_t end_ns)
{
	struct timespec t[2] = { { 0, UTIME_OMIT }, { 0, 0 } };

	if (end_ns <= 0)
		return;
	t[1].tv_sec = (time_t)(end_ns / 1000000000LL);
	t[1].tv_nsec = (long)(end_ns % 1000000000LL);
	futimens(fd, t);
}

/* Refused by the backend: said, every time, and moved to refused/. */
static void refused(struct watcher *w, const char *name, const struct upload_profile *up,
		    const struct upload_result *r)
{
	const char *limit = uploader_age_limit(w->u);
	struct timespec now;
	char age[48], *path = in_dir(w, name);

	if (r->too_old) {
		clock_gettime(CLOCK_REALTIME, &now);
		fmt_age((int64_t)now.tv_sec - up->start_ns / 1000000000LL, age, sizeof(age));
		diag_warn_always(w->d, path, DIAG_NO_OFFSET, "refused by %s as too old: %s, and this "
				 "one began %s ago; moved to refused/, not sent again (%s)",
				 uploader_url(w->u), limit ? limit : "the backend's limit", age, r->what);
	} else {
		diag_warn_always(w->d, path, DIAG_NO_OFFSET, "refused by %s: %s; moved to refused/",
				 uploader_url(w->u), r->what);
	}
	free(path);
	if (move_to(w, SUB_REFUSED, name) != 0)
		skip_add(w, name);
	else
		prune(w, SUB_REFUSED);
}

/* A chunk given up on until perfconv starts again (`why`, said): left in place; `path`
 * and `fd` are freed and closed. Returns 0 for send_one. */
static int leave_chunk(struct watcher *w, const char *name, char *path, int fd, int *have_prev,
		       const char *why)
{
	diag_warn(w->d, path, DIAG_NO_OFFSET, "%s: left in place, not tried again until "
		  "perfconv starts again", why);
	skip_add(w, name);
	*have_prev = 0;
	close(fd);
	free(path);
	return 0;
}

/*
 * Convert and send the oldest chunk. *prev is the chunk before it (have_prev), and
 * becomes this one when it was converted and sent or refused: 1 then, else 0 (and
 * *have_prev 0 when what comes next does not follow *prev).
 */
static int send_one(struct watcher *w, const char *name, watch_make_fn make,
		     watch_release_fn release, void *ctx, struct upload_stop *stop,
		     struct watch_span *prev, int *have_prev)
{
	const struct watch_options *o = w->o;
	char *path = xmalloc(strlen(o->dir) + strlen(name) + 2);
	struct upload_profile up;
	struct upload_result r;
	struct watch_span span;
	struct stat st;
	void *job = NULL;
	int fd, to = -1;

	sprintf(path, "%s/%s", o->dir, name);
	fd = open_chunk(w->dfd, name, &st);
	memset(&span, 0, sizeof(span));
	memset(&up, 0, sizeof(up));
	if (fd < 0) {
		/* gone (moved or deleted by someone else), or not a file: looked at again */
		free(path);
		return 0;
	}
	span.run = chunk_run(fd, (uint64_t)st.st_size);
	/* where a sent chunk goes, ready before it is sent: nothing may come between the
	 * backend's 2xx and the rename (a chunk that cannot be marked is not sent) */
	if (!o->delete_sent && (to = sub_fd(w, SUB_SENT, 1)) < 0)
		return leave_chunk(w, name, path, fd, have_prev, "not sent, as it could not be "
				   "marked sent");
	if (make(ctx, path, *have_prev ? prev : NULL, &span, &up, &job, w->d) != 0)
		return leave_chunk(w, name, path, fd, have_prev, "not converted");
	w->inflight = name;
	w->inflight_dropped = 0;
	uploader_send_retrying(w->u, &up, 0, stop, on_retry, w, &r);
	if (r.outcome == UPLOAD_SENT) {
		int marked = o->delete_sent ? unlinkat(w->dfd, name, 0) : renameat(w->dfd, name, to, name);

		if (marked != 0) {
			diag_error(w->d, path, DIAG_NO_OFFSET, "sent, but cannot %s: %s",
				   o->delete_sent ? "delete it" : "move it to sent/", strerror(errno));
			/* not marked: sending it again beats losing track of it */
			skip_add(w, name);
		} else {
			/* the rename is done: what follows may take its time */
			if (!o->delete_sent) {
				stamp(fd, span.end_ns);
				fsync(to);
			}
			fsync(w->dfd);
			if (!o->quiet)
				diag_note(w->d, "%s: sent to %s (%s)", path, uploader_url(w->u), r.what);
			if (!o->delete_sent)
				prune(w, SUB_SENT);
		}
		w->reason[0] = '\0';
		w->reason_said = 0;
	} else if (r.outcome == UPLOAD_REFUSED) {
		refused(w, name, &up, &r);
	}
	/* UPLOAD_ABANDONED: dropped (said); UPLOAD_STOPPED: left as it is, the loop ends */
	if (r.outcome == UPLOAD_SENT || r.outcome == UPLOAD_REFUSED) {
		*prev = span;
		*have_prev = 1;
	} else if (r.outcome == UPLOAD_ABANDONED) {
		*have_prev = 0;
	}
	w->inflight = NULL;
	release(ctx, job);
	close(fd);
	free(path);
	return r.outcome == UPLOAD_SENT || r.outcome == UPLOAD_REFUSED;
}

int watch_run(const struct watch_options *o, struct uploader *u, watch_make_fn make,
	      watch_release_fn release, void *ctx, struct upload_stop *stop, struct diag *d)
{
	struct watcher w;
	struct watch_span prev;
	char *prev_name = NULL;  /* the chunk `prev` is of */
	int have_prev = 0;
	unsigned poll = o->poll_ms ? o->poll_ms : 1000;

	memset(&w, 0, sizeof(w));
	w.o = o;
	w.u = u;
	w.d = d;
	for (int i = 0; i < NSUB; i++)
		w.sub[i] = -1;
	w.dfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w.dfd < 0) {
		diag_error(d, o->dir, DIAG_NO_OFFSET, "--watch: %s",
			   errno == ENOTDIR ? "not a directory" : strerror(errno));
		return -1;
	}
	diag_per_cause(d, WARN_INTERVAL_S);
	have_prev = last_sent(&w, &prev, &prev_name);
	for (int i = 0; i < NSUB; i++)
		if (sub_fd(&w, i, 0) >= 0)
			prune(&w, i);
	while (!upload_stop_check(stop)) {
		struct chunk *list;
		size_t n, first = 0, left, next;
		uint64_t dropped = w.ndropped;

		diag_tick(d);
		n = scan(&w, &list);
		left = enforce_backlog(&w, list, n, &first);
		if (w.ndropped != dropped)
			have_prev = 0; /* a dropped chunk came after it */
		for (next = first; next < n && list[next].skipped; next++)
			;
		if (next == n) {
			w.reported = 0;
			w.reason[0] = '\0';
			free_chunks(list, n);
			sleep_ms(poll, stop);
			continue;
		}
		say_backlog(&w, left, list[first].name);
		if (have_prev) {
			/* the chunk before this one only when none left in the folder (one not
			 * converted) lies between them */
			struct chunk p = { prev_name, 0, 0, 0 };

			have_prev = chunk_cmp(&p, &list[next]) < 0;
			for (size_t k = first; k < next && have_prev; k++)
				have_prev = chunk_cmp(&list[k], &p) < 0;
		}
		if (send_one(&w, list[next].name, make, release, ctx, stop, &prev, &have_prev)) {
			free(prev_name);
			prev_name = xstrdup(list[next].name);
		}
		free_chunks(list, n);
	}
	diag_flush(d);
	free(prev_name);
	for (size_t i = 0; i < w.nskip; i++)
		free(w.skip[i]);
	free(w.skip);
	for (int i = 0; i < NSUB; i++)
		if (w.sub[i] >= 0)
			close(w.sub[i]);
	close(w.dfd);
	return 0;
}
