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

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

		watch_size_text(bytes, total, sizeof(total));
		if (o->max_bytes)
			watch_size_text(o->max_bytes, limit, sizeof(limit));
		else
			snprintf(limit, sizeof(limit), "%llu chunks", (unsigned long long)o->max_chunks);
		path = watchdir_path(w, list[i]->name);
		gone = o->delete_sent ? unlinkat(w->dfd, list[i]->name, 0) :
		       watchdir_move(w, SUB_DROPPED, list[i]->name);
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
		watchdir_prune(w, SUB_DROPPED, 0, 0);
	*first = i;
	return left;
}

/* Between two tries of the chunk in flight: the backlog kept within its limit (that
 * chunk may be dropped: 1) and said with why it grows. */
int watch_between_tries(struct watcher *w, const struct upload_result *r, unsigned wait)
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
	n = watchdir_scan(w, &list);
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

void watch_sleep_ms(unsigned ms, struct upload_stop *stop)
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
	int fd = watchdir_sub(w, SUB_SENT, 0), dfd2, cfd;
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
	int64_t now = watchdir_clock_s();
	uint64_t total, avail;
	char a[32], b[32];

	if (now - w->space_checked < 10 || fstatvfs(w->dfd, &v) != 0)
		return;
	w->space_checked = now;
	total = (uint64_t)v.f_blocks * v.f_frsize;
	avail = (uint64_t)v.f_bavail * v.f_frsize;
	if (!total || avail * 20 >= total)
		return;
	watch_size_text(avail, a, sizeof(a));
	watch_size_text(backlog_bytes, b, sizeof(b));
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
	if (chunk_folder_lock(w.dfd, o->dir, d) != 0) {
		close(w.dfd);
		return -1;
	}
	diag_per_cause(d, WARN_INTERVAL_S);
	runtime_ids_init(&w.rids, w.dfd);
	runtime_ids_say(&w.rids, d, o->dir);
	have_prev = last_sent(&w, &prev, &prev_name);
	for (int i = 0; i < NSUB; i++)
		if (watchdir_sub(&w, i, 0) >= 0)
			watchdir_prune(&w, i, 0, 0);
	while (!upload_stop_check(stop)) {
		struct entry **list;
		size_t n, first = 0, left, k;
		uint64_t dropped = w.ndropped, bytes = 0, gen;
		int done = 0, moved = 0;
		int64_t looked;

		diag_tick(d);
		n = watchdir_scan(&w, &list);
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
				name = xstrdup(e->name); /* watchsend_one may free e */
				how = watchsend_one(&w, e, others, jobs, stop, &prev, &have_prev, &sent_prev);
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
			watch_sleep_ms(poll, stop);
		}
	}
	diag_flush(d);
	free(prev_name);
	for (size_t i = 0; i < w.idx.cap; i++)
		watchdir_entry_free(w.idx.slot[i]);
	free(w.idx.slot);
	for (int i = 0; i < NSUB; i++)
		if (w.sub[i] >= 0)
			close(w.sub[i]);
	close(w.dfd);
	return 0;
}
