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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "convert/watchfile.h"
#include "convert/watchopts.h"

/* How often each cause of warnings is said (diag_per_cause). */
#define WARN_INTERVAL_S 3600
enum { SUB_SENT, SUB_REFUSED, SUB_DROPPED, NSUB };
static const char *const sub_names[NSUB] = { "sent", "refused", "dropped" };

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

/* A chunk-named entry of the folder, as the watcher knows it from one look to the next. */
struct entry {
	char *name;
	uint64_t ino;          /* readdir's: another file under the name is another entry */
	uint64_t size;         /* at the last look (the backlog's sum) */
	int state;             /* E_* */
	unsigned fails;        /* tries that failed in a way another try may mend */
	unsigned round;        /* ... since it was last set aside */
	uint64_t sent_mark;    /* w->nsent when it first failed */
	int aside;             /* set aside: the chunks after it go first, it when none is left */
	uint64_t gen;          /* the last look that saw it */
	int inflight;          /* being converted and sent: a look does not free it */
};

enum {
	E_PENDING,             /* to be sent */
	E_WAIT,                /* still being written or copied in: looked at again */
	E_SKIP,                /* given up on by this run while it is this file (said) */
};

/* Names to entries: open addressing, made anew by each look from what the last knew, so
 * that a look costs one readdir and one probe a name, whatever the folder holds. */
struct index {
	struct entry **slot;
	size_t cap, n;         /* cap: a power of two, at least twice n */
};

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

static void entry_free(struct entry *e)
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

struct watcher {
	const struct watch_options *o;
	struct uploader *u;
	struct diag *d;
	int dfd;                  /* the folder */
	int sub[NSUB];            /* its subfolders, -1 until made and checked */
	struct index idx;         /* what the last look found */
	uint64_t gen;             /* looks so far */
	uid_t euid;
	/* the backlog: what was last said and why it is there */
	size_t reported;
	char reason[600];
	int reason_said;
	uint64_t ndropped;        /* since the watcher started */
	uint64_t nsent;           /* since the watcher started */
	unsigned backoff;         /* the last wait between failed tries, 0 after a 2xx */
	struct entry *inflight;   /* the chunk being sent: on_retry may drop it */
	int inflight_dropped;
	int pruned_said[NSUB];
	int64_t space_checked;    /* monotonic s */
};

static int64_t mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec;
}

/* "DIR/NAME", for a message: the caller frees it. */
static char *in_dir(const struct watcher *w, const char *name)
{
	char *p = xmalloc(strlen(w->o->dir) + strlen(name) + 2);

	sprintf(p, "%s/%s", w->o->dir, name);
	return p;
}

/*
 * Look at the folder: every chunk-named entry, oldest first, into *out (the caller frees
 * the array, not the entries), but those given up on while they are the same file. No
 * file is opened: a junk entry costs a readdir and a probe, each look. What the last
 * look knew of an entry (its failures, that it was given up on) is kept while its
 * name leads to the same inode; the rest is freed, but the chunk in flight.
 */
static size_t scan(struct watcher *w, struct entry ***out)
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
		if (fstatat(w->dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		e->size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
		VEC_PUSH(list, n, cap, e);
	}
	closedir(dp);
	for (size_t i = 0; i < old.cap; i++) {
		struct entry *e = old.slot[i];

		if (e && e->gen != w->gen && !e->inflight)
			entry_free(e);
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
			size_text(w->o->keep_bytes, sz, sizeof(sz));
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
static size_t enforce_backlog(struct watcher *w, struct entry **list, size_t n, size_t *first)
{
	const struct watch_options *o = w->o;
	uint64_t bytes = 0;
	size_t left = n, i = 0;

	for (size_t k = 0; k < n; k++)
		bytes += list[k]->size;
	for (; i < n && ((o->max_chunks && left > o->max_chunks) ||
			 (o->max_bytes && bytes > o->max_bytes)); i++) {
		char total[32], limit[32], *path;
		int gone;

		size_text(bytes, total, sizeof(total));
		if (o->max_bytes)
			size_text(o->max_bytes, limit, sizeof(limit));
		else
			snprintf(limit, sizeof(limit), "%llu chunks", (unsigned long long)o->max_chunks);
		path = in_dir(w, list[i]->name);
		gone = o->delete_sent ? unlinkat(w->dfd, list[i]->name, 0) :
		       move_to(w, SUB_DROPPED, list[i]->name);
		if (gone != 0) {
			if (o->delete_sent)
				diag_error(w->d, path, DIAG_NO_OFFSET, "cannot delete it: %s",
					   strerror(errno));
			free(path);
			break;
		}
		w->ndropped++;
		list[i]->state = E_SKIP;
		diag_warn_always(w->d, path, DIAG_NO_OFFSET, "dropped, never sent: the backlog of %zu "
				 "chunks (%s) is over --max-backlog %s; %s (%llu dropped since perfconv "
				 "started)", left, total, limit,
				 o->delete_sent ? "deleted" : "moved to dropped/",
				 (unsigned long long)w->ndropped);
		free(path);
		if (w->inflight == list[i])
			w->inflight_dropped = 1;
		left--;
		bytes -= list[i]->size;
	}
	if (i && !o->delete_sent)
		prune(w, SUB_DROPPED);
	*first = i;
	return left;
}

/* Between two tries of the chunk in flight: the backlog kept within its limit (that
 * chunk may be dropped: 1) and said with why it grows. */
static int between_tries(struct watcher *w, const struct upload_result *r, unsigned wait)
{
	struct entry **list;
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
		say_backlog(w, left, list[first]->name);
	free(list);
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
	char *best = NULL;
	struct stat st;

	if (fd < 0 || (dfd2 = dup(fd)) < 0)
		return 0;
	if (!(dp = fdopendir(dfd2))) {
		close(dfd2);
		return 0;
	}
	rewinddir(dp);
	while ((de = readdir(dp)) != NULL) {
		if (chunk_name(de->d_name) && (!best || chunk_name_cmp(de->d_name, best) > 0)) {
			free(best);
			best = xstrdup(de->d_name);
		}
	}
	closedir(dp);
	if (!best || (cfd = chunk_open(fd, best, &st)) < 0) {
		free(best);
		return 0;
	}
	memset(prev, 0, sizeof(*prev));
	prev->run = chunk_run(cfd, (uint64_t)st.st_size);
	prev->end_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	close(cfd);
	*name = best;
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
static void refused(struct watcher *w, struct entry *e, const struct upload_profile *up,
		    const struct upload_result *r)
{
	const char *limit = uploader_age_limit(w->u);
	struct timespec now;
	char age[48], *path = in_dir(w, e->name);

	if (r->too_old) {
		clock_gettime(CLOCK_REALTIME, &now);
		age_text((int64_t)now.tv_sec - up->start_ns / 1000000000LL, age, sizeof(age));
		diag_warn_always(w->d, path, DIAG_NO_OFFSET, "refused by %s as too old: %s, and this "
				 "one began %s ago; moved to refused/, not sent again (%s)",
				 uploader_url(w->u), limit ? limit : "the backend's limit", age, r->what);
	} else if (r->outcome == UPLOAD_RETRY) {
		diag_warn_always(w->d, path, DIAG_NO_OFFSET, "failed %u times (last: %s) while %llu "
				 "later chunks were sent: %s takes the others, not this one; moved "
				 "to refused/", e->fails, r->what,
				 (unsigned long long)(w->nsent - e->sent_mark), uploader_url(w->u));
	} else {
		diag_warn_always(w->d, path, DIAG_NO_OFFSET, "refused by %s: %s; moved to refused/",
				 uploader_url(w->u), r->what);
	}
	free(path);
	if (move_to(w, SUB_REFUSED, e->name) != 0)
		e->state = E_SKIP;
	else
		prune(w, SUB_REFUSED);
}

/* A chunk given up on while it is this file (`why`, said: a warning per cause). */
static void give_up(struct watcher *w, struct entry *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void give_up(struct watcher *w, struct entry *e, const char *fmt, ...)
{
	char why[400], *path = in_dir(w, e->name);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	diag_warn(w->d, path, DIAG_NO_OFFSET, "%s: left in place, not tried again while it is "
		  "this file", why);
	e->state = E_SKIP;
	free(path);
}

/*
 * Whether the file open on `fd` may be sent as the service's profile: a regular file
 * with one name, the watcher's user's or root's, that no one else may write. The folder
 * may be writable by others (a spool under /tmp): a link to a root-only recording or a
 * recording of someone else's must not be sent as if perf had written it here.
 * --trust-folder lifts the ownership checks (a folder only the service's users write).
 * 0, or -1 after giving up on it.
 */
static int judge(struct watcher *w, struct entry *e, const struct stat *st)
{
	if (!S_ISREG(st->st_mode)) {
		give_up(w, e, "not a regular file");
		return -1;
	}
	if (w->o->trust_folder)
		return 0;
	if (st->st_nlink != 1) {
		give_up(w, e, "has %lu names (hard links): it may be another file than perf "
			"wrote here, not sent (--trust-folder sends it)", (unsigned long)st->st_nlink);
		return -1;
	}
	if (st->st_uid != w->euid && st->st_uid != 0) {
		give_up(w, e, "owned by uid %u, not by perfconv's user (uid %u) or root: not sent "
			"(--trust-folder sends it)", (unsigned)st->st_uid, (unsigned)w->euid);
		return -1;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		give_up(w, e, "writable by others (mode %o): not sent (--trust-folder sends it)",
			(unsigned)(st->st_mode & 07777));
		return -1;
	}
	return 0;
}

/*
 * The whole file open on `fd` (`st` its status), read into memory: a conversion then
 * reads no file by name and maps none, so a file truncated meanwhile cannot kill the
 * watcher (a mapped page past a new end is SIGBUS). NULL after giving up on it when it
 * changed while it was read.
 */
static void *read_whole(struct watcher *w, struct entry *e, int fd, const struct stat *st)
{
	size_t len = (size_t)st->st_size, got = 0;
	uint8_t *buf = malloc(len ? len : 1);
	struct stat after;

	if (!buf) {
		give_up(w, e, "cannot read it: out of memory for its %zu bytes", len);
		return NULL;
	}
	while (got < len) {
		size_t want = len - got < (1u << 20) ? len - got : (1u << 20);
		ssize_t k = pread(fd, buf + got, want, (off_t)got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	if (got < len || fstat(fd, &after) != 0 || after.st_size != st->st_size ||
	    after.st_mtim.tv_sec != st->st_mtim.tv_sec ||
	    after.st_mtim.tv_nsec != st->st_mtim.tv_nsec) {
		give_up(w, e, "changed while it was read (%zu of %zu bytes read): not sent", got, len);
		free(buf);
		return NULL;
	}
	return buf;
}

/* How many failed tries in a row set a chunk aside when others wait behind it, and
 * how many, with chunks after it sent meanwhile, make it one the backend will not take. */
#define TRIES_BEFORE_ASIDE 3
#define TRIES_AT_MOST 10

enum { TRIED_SENT, TRIED_REFUSED, TRIED_FAILED, TRIED_ASIDE, TRIED_DROPPED, TRIED_STOPPED };

/*
 * Send `up` (chunk `e`) until it is sent or refused, or a stop; between failed tries
 * (5xx, 408, 429, a reset, a timeout, a refused connection) a wait that doubles from 1 s
 * to the cap and is kept from chunk to chunk until a 2xx, so that a backend that is
 * down is not asked more often for having many chunks waiting. With `others` (chunks
 * after it wait), after TRIES_BEFORE_ASIDE failures in a row it is set aside so that one
 * chunk the backend cannot take does not hold back the rest; one that has failed
 * TRIES_AT_MOST times while later chunks were sent is given up (TRIED_FAILED).
 */
static int send_tries(struct watcher *w, struct entry *e, const struct upload_profile *up,
		      int others, struct upload_stop *stop, struct upload_result *r)
{
	unsigned cap = w->o->retry_cap_s ? w->o->retry_cap_s : 300;

	for (;;) {
		unsigned wait;

		uploader_send(w->u, up, stop, r);
		if (r->outcome == UPLOAD_SENT) {
			w->backoff = 0;
			/* one that failed goes now: the backend is back, the oldest go first again */
			for (size_t i = 0; e->fails && i < w->idx.cap; i++)
				if (w->idx.slot[i])
					w->idx.slot[i]->aside = 0;
			return TRIED_SENT;
		}
		if (r->outcome == UPLOAD_REFUSED)
			return TRIED_REFUSED;
		if (r->outcome == UPLOAD_STOPPED)
			return TRIED_STOPPED;
		if (r->outcome == UPLOAD_DENIED) {
			/* the key or the URL, not this chunk: every chunk would be turned down
			 * alike, so none is refused for it; asked again slowly until mended */
			diag_warn(w->d, w->o->dir, DIAG_NO_OFFSET, "%s turned the request down: %s; "
				  "no chunk is sent or moved until that is mended, asked again every "
				  "%u s", uploader_url(w->u), r->what, cap);
			if (between_tries(w, r, cap))
				return TRIED_DROPPED;
			sleep_ms(cap * 1000, stop);
			if (upload_stop_check(stop))
				return TRIED_STOPPED;
			continue;
		}
		if (!e->fails++)
			e->sent_mark = w->nsent;
		e->round++;
		if (e->fails >= TRIES_AT_MOST && w->nsent > e->sent_mark)
			return TRIED_FAILED;
		wait = w->backoff ? (w->backoff * 2 > cap ? cap : w->backoff * 2) : 1;
		w->backoff = wait;
		if (r->retry_after_s >= 0)
			wait = r->retry_after_s > cap ? cap : (unsigned)r->retry_after_s;
		if (between_tries(w, r, wait))
			return TRIED_DROPPED;
		if (others && e->round >= TRIES_BEFORE_ASIDE) {
			char *path = in_dir(w, e->name);

			e->round = 0;
			e->aside = 1;
			diag_warn(w->d, path, DIAG_NO_OFFSET, "set aside after %u failed tries (last: %s): "
				  "the chunks after it go first, then it is tried again",
				  TRIES_BEFORE_ASIDE, r->what);
			free(path);
			sleep_ms(wait * 1000, stop);
			return upload_stop_check(stop) ? TRIED_STOPPED : TRIED_ASIDE;
		}
		sleep_ms(wait * 1000, stop);
		if (upload_stop_check(stop))
			return TRIED_STOPPED;
	}
}

enum { SEND_NOTHING, SEND_DONE };

/*
 * Convert and send chunk `e`, opened once (no link followed, no FIFO waited on),
 * judged and read whole from that descriptor, never opened by name again. *prev is the
 * chunk before it (have_prev), and becomes this one when it was sent or refused (then
 * *sent_prev). SEND_NOTHING when nothing was tried (gone, not finished, given up on:
 * the next chunk may go at once), else SEND_DONE (the folder is looked at again).
 */
static int send_one(struct watcher *w, struct entry *e, int others, watch_make_fn make,
		    watch_release_fn release, void *ctx, struct upload_stop *stop,
		    struct watch_span *prev, int *have_prev, int *sent_prev)
{
	const struct watch_options *o = w->o;
	struct watch_input in;
	struct upload_profile up;
	struct upload_result r;
	struct watch_span span;
	struct stat st;
	void *job = NULL, *buf;
	char *path;
	int fd, to = -1, how, state;

	*sent_prev = 0;
	fd = openat(w->dfd, e->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			give_up(w, e, "a symbolic link: perfconv follows no link in the folder");
		else if (errno != ENOENT)
			give_up(w, e, "cannot open it: %s", strerror(errno));
		return SEND_NOTHING; /* ENOENT: gone (moved or deleted by someone else) */
	}
	if (fstat(fd, &st) != 0 || judge(w, e, &st) != 0) {
		close(fd);
		return SEND_NOTHING;
	}
	state = chunk_state(fd, &st);
	if (state != CHUNK_READY) {
		if (state == CHUNK_NOT_PERF)
			give_up(w, e, "not a perf.data file (no PERFILE2 header)");
		else if (state == CHUNK_CUT)
			give_up(w, e, "cut short: its header says its data runs past the file's end, "
				"and it has not changed for %d s", CHUNK_STALE_S);
		else
			e->state = E_WAIT;
		close(fd);
		return SEND_NOTHING;
	}
	e->state = E_PENDING;
	/* where a sent chunk goes, ready before it is sent: nothing may come between the
	 * backend's 2xx and the rename (a chunk that cannot be marked is not sent) */
	if (!o->delete_sent && (to = sub_fd(w, SUB_SENT, 1)) < 0) {
		give_up(w, e, "not sent, as it could not be marked sent");
		*have_prev = 0;
		close(fd);
		return SEND_NOTHING;
	}
	if (!(buf = read_whole(w, e, fd, &st))) {
		close(fd);
		return SEND_NOTHING;
	}
	path = in_dir(w, e->name);
	memset(&span, 0, sizeof(span));
	memset(&up, 0, sizeof(up));
	span.run = chunk_run(fd, (uint64_t)st.st_size);
	in.data = buf;
	in.len = (size_t)st.st_size;
	in.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	in.owner_uid = (unsigned)st.st_uid;
	if (make(ctx, path, &in, *have_prev ? prev : NULL, &span, &up, &job, w->d) != 0) {
		give_up(w, e, "not converted");
		*have_prev = 0;
		release(ctx, job);
		free(buf);
		free(path);
		close(fd);
		return SEND_DONE;
	}
	w->inflight = e;
	e->inflight = 1;
	w->inflight_dropped = 0;
	how = send_tries(w, e, &up, others, stop, &r);
	if (how == TRIED_SENT) {
		int marked = o->delete_sent ? unlinkat(w->dfd, e->name, 0) :
			     renameat(w->dfd, e->name, to, e->name);

		w->nsent++;
		if (marked != 0) {
			diag_error(w->d, path, DIAG_NO_OFFSET, "sent, but cannot %s: %s",
				   o->delete_sent ? "delete it" : "move it to sent/", strerror(errno));
			/* not marked: sending it again beats losing track of it */
			e->state = E_SKIP;
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
	} else if (how == TRIED_REFUSED || how == TRIED_FAILED) {
		refused(w, e, &up, &r);
	}
	if (how == TRIED_SENT || how == TRIED_REFUSED || how == TRIED_FAILED) {
		*prev = span;
		*have_prev = 1;
		*sent_prev = 1;
	} else if (how == TRIED_DROPPED || how == TRIED_ASIDE) {
		/* what comes next does not follow this one's predecessor */
		*have_prev = 0;
	}
	w->inflight = NULL;
	e->inflight = 0;
	if (e->gen != w->gen)
		entry_free(e); /* gone from the folder while it was sent: no look keeps it */
	release(ctx, job);
	free(buf);
	close(fd);
	free(path);
	return SEND_DONE;
}

/* Room left where perf writes: said (per cause, so once an hour) when under 5% of the
 * filesystem, as perf record stops writing its chunks when it is full. */
static void check_space(struct watcher *w, size_t backlog, uint64_t backlog_bytes)
{
	struct statvfs v;
	int64_t now = mono_s();
	uint64_t total, avail;
	char a[32], b[32];

	if (now - w->space_checked < 10 || fstatvfs(w->dfd, &v) != 0)
		return;
	w->space_checked = now;
	total = (uint64_t)v.f_blocks * v.f_frsize;
	avail = (uint64_t)v.f_bavail * v.f_frsize;
	if (!total || avail * 20 >= total)
		return;
	size_text(avail, a, sizeof(a));
	size_text(backlog_bytes, b, sizeof(b));
	diag_warn(w->d, w->o->dir, DIAG_NO_OFFSET, "its filesystem has %s free (%u%%): perf record "
		  "stops writing chunks when it is full; %zu chunk%s (%s) wait%s to be sent%s", a,
		  (unsigned)(avail * 100 / total), backlog, backlog == 1 ? "" : "s", b,
		  backlog == 1 ? "s" : "",
		  w->o->max_bytes || w->o->max_chunks ? "" : " and --max-backlog is off");
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
	w.euid = geteuid();
	for (int i = 0; i < NSUB; i++)
		w.sub[i] = -1;
	w.dfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w.dfd < 0) {
		diag_error(d, o->dir, DIAG_NO_OFFSET, "--watch: %s",
			   errno == ENOTDIR ? "not a directory" : strerror(errno));
		return -1;
	}
	if (folder_lock(w.dfd, o->dir, d) != 0) {
		close(w.dfd);
		return -1;
	}
	diag_per_cause(d, WARN_INTERVAL_S);
	have_prev = last_sent(&w, &prev, &prev_name);
	for (int i = 0; i < NSUB; i++)
		if (sub_fd(&w, i, 0) >= 0)
			prune(&w, i);
	while (!upload_stop_check(stop)) {
		struct entry **list;
		size_t n, first = 0, left, k;
		uint64_t dropped = w.ndropped, bytes = 0;
		int done = 0;

		diag_tick(d);
		n = scan(&w, &list);
		left = enforce_backlog(&w, list, n, &first);
		if (w.ndropped != dropped)
			have_prev = 0; /* a dropped chunk came after it */
		for (k = first; k < n; k++)
			bytes += list[k]->size;
		check_space(&w, left, bytes);
		/* oldest first; one set aside waits for the others, or for its time */
		for (int pass = 0; pass < 2 && !done && !upload_stop_check(stop); pass++) {
			size_t ready = 0;

			for (k = first; k < n; k++)
				ready += list[k]->state != E_SKIP && !list[k]->aside;
			for (k = first; k < n && !done && !upload_stop_check(stop); k++) {
				struct entry *e = list[k];
				int sent_prev, others;
				char *name;

				if (e->state == E_SKIP || (pass == 0 && e->aside))
					continue;
				/* chunks that could go instead of it (counted at the look) */
				others = ready > (e->aside ? 0u : 1u);
				say_backlog(&w, left, list[first]->name);
				if (have_prev) {
					/* the chunk before this one only when none left in the folder
					 * (one not converted) lies between them */
					have_prev = chunk_name_cmp(prev_name, e->name) < 0;
					for (size_t m = first; m < k && have_prev; m++)
						have_prev = chunk_name_cmp(list[m]->name, prev_name) < 0;
				}
				name = xstrdup(e->name); /* send_one may free e */
				done = send_one(&w, e, others, make, release, ctx, stop, &prev, &have_prev,
						&sent_prev) == SEND_DONE;
				if (sent_prev) {
					free(prev_name);
					prev_name = name;
				} else {
					free(name);
				}
				if (!done && e->state == E_SKIP && ready)
					ready--;
			}
		}
		free(list);
		if (!done) {
			w.reported = 0;
			w.reason[0] = '\0';
			sleep_ms(poll, stop);
		}
	}
	diag_flush(d);
	free(prev_name);
	for (size_t i = 0; i < w.idx.cap; i++)
		entry_free(w.idx.slot[i]);
	free(w.idx.slot);
	for (int i = 0; i < NSUB; i++)
		if (w.sub[i] >= 0)
			close(w.sub[i]);
	close(w.dfd);
	return 0;
}
