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
#include "upload/watch.h"

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
#include "upload/runtimeid.h"
#include "upload/watchfile.h"
#include "upload/watchopts.h"
#include "upload/watch_internal.h"

static const char *const sub_names[NSUB] = { "sent", "refused", "dropped" };

int watch_same_run(const struct watch_span *prev, const struct watch_span *cur)
{
	if (!prev || !prev->run || prev->run != cur->run || !prev->end_ns)
		return 0;
	if (prev->has_clock_ref && cur->has_clock_ref &&
	    (prev->clock_ref_wall != cur->clock_ref_wall ||
	     prev->clock_ref_clock != cur->clock_ref_clock))
		return 0;
	/* the kernel's ids start again at a boot, and so does perf's clock */
	if (prev->last_clock && cur->first_clock && cur->first_clock < prev->last_clock)
		return 0;
	return 1;
}

int64_t watch_window_start(const struct watch_span *prev, const struct watch_span *cur)
{
	if (!watch_same_run(prev, cur) || prev->end_ns >= cur->end_ns)
		return cur->start_ns;
	/* a window holds its own samples: estimated times that disagree (no offset of the
	 * run known) make the windows overlap, not a sample fall outside its own */
	if (prev->end_ns > cur->start_ns)
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

void entry_free(struct entry *e)
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


int64_t mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "DIR/NAME", for a message: the caller frees it. */
char *in_dir(const struct watcher *w, const char *name)
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
 * backlog's estimate only: send_one reads the file's status on its descriptor.)
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
int sub_fd(struct watcher *w, int sub, int make)
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
int move_to(struct watcher *w, int sub, const char *name)
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
 * keep_bytes, and those modified more than keep_age_s ago. `size` and `mtime` (0:
 * unknown) are those of the chunk just moved in: the subfolder is read and stat'ed whole
 * only when its tally from the last such look says a limit is passed, or that look is a
 * minute old (another process may have put files there), not after every chunk sent,
 * which made a backlog's sending quadratic in the chunks sent/ holds.
 */
void prune(struct watcher *w, int sub, uint64_t size, int64_t mtime)
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
	if (kept->known && mtime > 0 && mono_s() - kept->looked < 60) {
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
	kept->looked = mono_s();
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
		prune(w, SUB_DROPPED, 0, 0);
	*first = i;
	return left;
}

/* Between two tries of the chunk in flight: the backlog kept within its limit (that
 * chunk may be dropped: 1) and said with why it grows. */
int between_tries(struct watcher *w, const struct upload_result *r, unsigned wait)
{
	struct entry **list;
	size_t n, first, left;

	/* no status: nothing answered (no connection, no answer), which is not an answer */
	if (r->status)
		snprintf(w->reason, sizeof(w->reason), "the backend answered %s; trying again "
			 "in %u s", r->what, wait);
	else
		snprintf(w->reason, sizeof(w->reason), "nothing answered at %s (%s); trying "
			 "again in %u s", uploader_url(w->u), r->what, wait);
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

void sleep_ms(unsigned ms, struct upload_stop *stop)
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
	/* the run's clock, as its first chunk sent set it (.perfconv-runtime-ids) */
	prev->has_offset = runtime_ids_offset(&w->rids, prev->run, &prev->offset);
	close(cfd);
	*name = best;
	return prev->run != 0;
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

int watch_run(const struct watch_options *o, struct uploader *u, const struct watch_jobs *jobs,
	      struct upload_stop *stop, struct diag *d)
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
	runtime_ids_init(&w.rids, w.dfd);
	runtime_ids_say(&w.rids, d, o->dir);
	have_prev = last_sent(&w, &prev, &prev_name);
	for (int i = 0; i < NSUB; i++)
		if (sub_fd(&w, i, 0) >= 0)
			prune(&w, i, 0, 0);
	while (!upload_stop_check(stop)) {
		struct entry **list;
		size_t n, first = 0, left, k;
		uint64_t dropped = w.ndropped, bytes = 0, gen;
		int done = 0, moved = 0;
		int64_t looked;

		diag_tick(d);
		n = scan(&w, &list);
		gen = w.gen;
		looked = mono_ms();
		left = enforce_backlog(&w, list, n, &first);
		if (w.ndropped != dropped)
			have_prev = 0; /* a dropped chunk came after it */
		for (k = first; k < n; k++)
			bytes += list[k]->size;
		check_space(&w, left, bytes);
		/* oldest first; one set aside waits for the others, or for its time. A chunk
		 * sent or refused is struck from the list (NULL) and the next one follows
		 * without a new look, for as long as no look was made meanwhile and the look
		 * is younger than the poll interval: a look after each chunk read the whole
		 * folder each time (quadratic in a backlog), and a chunk perf renames meanwhile
		 * sorts after those of the list anyway. */
		for (int pass = 0; pass < 2 && !done && !upload_stop_check(stop); pass++) {
			size_t ready = 0;

			for (k = first; k < n; k++)
				ready += list[k] && list[k]->state != E_SKIP && !list[k]->aside;
			for (k = first; k < n && !done && !upload_stop_check(stop); k++) {
				struct entry *e = list[k];
				int sent_prev, others, how;
				size_t oldest = first;
				char *name;

				if (!e || e->state == E_SKIP || (pass == 0 && e->aside))
					continue;
				/* chunks that could go instead of it (counted at the look) */
				others = ready > (e->aside ? 0u : 1u);
				while (!list[oldest])
					oldest++;
				say_backlog(&w, left, list[oldest]->name);
				if (have_prev) {
					/* the chunk before this one only when none left in the folder
					 * (one not converted) lies between them */
					have_prev = chunk_name_cmp(prev_name, e->name) < 0;
					for (size_t m = first; m < k && have_prev; m++)
						have_prev = !list[m] ||
							    chunk_name_cmp(list[m]->name, prev_name) < 0;
				}
				name = xstrdup(e->name); /* send_one may free e */
				how = send_one(&w, e, others, jobs, stop, &prev, &have_prev, &sent_prev);
				if (sent_prev) {
					free(prev_name);
					prev_name = name;
				} else {
					free(name);
				}
				if (how == SEND_MOVED && w.gen == gen && mono_ms() - looked < (int64_t)poll) {
					list[k] = NULL; /* e is out of the folder or given up on */
					moved = 1;
					left -= left > 0;
					if (ready)
						ready--;
					continue;
				}
				done = how != SEND_NOTHING;
				if (!done && e->state == E_SKIP && ready)
					ready--;
			}
		}
		free(list);
		if (!done && !moved) {
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
