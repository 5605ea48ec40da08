/* watchsend: one chunk of the watched folder opened once, judged on its descriptor, read
 * whole, converted and sent part by part, then moved to sent/ or refused/. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "upload/uploadparts.h"
#include "upload/watch_internal.h"
#include "upload/watchfile.h"
#include "upload/watchopts.h"

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
	char age[48], *path = watchdir_path(w, e->name);

	if (r->too_old) {
		clock_gettime(CLOCK_REALTIME, &now);
		watch_age_text((int64_t)now.tv_sec - up->start_ns / 1000000000LL, age, sizeof(age));
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
	if (watchdir_move(w, SUB_REFUSED, e->name) != 0)
		e->state = E_SKIP;
	else
		watchdir_prune(w, SUB_REFUSED, 0, 0);
}

/* A chunk given up on while it is this file (`why`, said: a warning per cause). */
static void give_up(struct watcher *w, struct entry *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void give_up(struct watcher *w, struct entry *e, const char *fmt, ...)
{
	char why[400], *path = watchdir_path(w, e->name);
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

/* How a chunk's part went; TRIED_SENT is upload_send_batch()'s 0. */
enum { TRIED_SENT = 0, TRIED_REFUSED, TRIED_FAILED, TRIED_ASIDE, TRIED_DROPPED, TRIED_STOPPED };

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
			if (watch_between_tries(w, r, cap))
				return TRIED_DROPPED;
			watch_sleep_ms(cap * 1000, stop);
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
		if (watch_between_tries(w, r, wait))
			return TRIED_DROPPED;
		if (others && e->round >= TRIES_BEFORE_ASIDE) {
			char *path = watchdir_path(w, e->name);

			e->round = 0;
			e->aside = 1;
			diag_warn(w->d, path, DIAG_NO_OFFSET, "set aside after %u failed tries (last: %s): "
				  "the chunks after it go first, then it is tried again",
				  TRIES_BEFORE_ASIDE, r->what);
			free(path);
			watch_sleep_ms(wait * 1000, stop);
			return upload_stop_check(stop) ? TRIED_STOPPED : TRIED_ASIDE;
		}
		watch_sleep_ms(wait * 1000, stop);
		if (upload_stop_check(stop))
			return TRIED_STOPPED;
	}
}

/* Chunk `e`'s parts as upload_send_batch() sends them (chunk_send_part, chunk_halve). */
struct chunk_send {
	struct watcher *w;
	struct entry *e;
	int others;
	const struct watch_jobs *jobs;
	void *job;
	struct upload_stop *stop;
	char *path;
};

static int chunk_send_part(void *ctx, struct upload_batch *b, size_t k, struct upload_result *r)
{
	struct chunk_send *s = ctx;

	return send_tries(s->w, s->e, &b->parts[k], s->others, s->stop, r);
}

static int chunk_halve(void *ctx, struct upload_batch *b, size_t k, const struct upload_result *r)
{
	struct chunk_send *s = ctx;

	if (s->jobs->halve(s->jobs->ctx, s->job, k, b) != 0)
		return -1;
	diag_warn(s->w->d, s->path, DIAG_NO_OFFSET, "%s found its profile%s too large (%s): "
		  "cut in two and sent again", uploader_url(s->w->u), b->n > 2 ? " part" : "",
		  r->what);
	return 0;
}

/*
 * Send the parts of chunk `e`'s profile in order (those that end by e->sent_until were
 * sent before it was set aside), each with its run's runtime-id and next profile_seq;
 * one the backend finds too large is cut in two and both sent. TRIED_SENT once all are;
 * else how the part *last went.
 */
static int send_parts(struct watcher *w, struct entry *e, struct upload_batch *b, size_t *last,
		      int others, const struct watch_jobs *jobs, void *job,
		      struct upload_stop *stop, struct upload_result *r)
{
	struct chunk_send s = { w, e, others, jobs, job, stop, watchdir_path(w, e->name) };
	const struct upload_batch_ops ops = { chunk_send_part, chunk_halve, &s };
	int how;

	if (b->said[0])
		diag_warn(w->d, s.path, DIAG_NO_OFFSET, "%s", b->said);
	how = upload_send_batch(b, &w->rids, &ops, &e->sent_until, last, r);
	free(s.path);
	return how;
}


/*
 * Convert and send chunk `e`, opened once (no link followed, no FIFO waited on),
 * judged and read whole from that descriptor, never opened by name again. *prev is the
 * chunk before it (have_prev), and becomes this one when it was sent or refused (then
 * *sent_prev). SEND_NOTHING when nothing was sent nor tried (gone, not finished, given
 * up on, a conversion that failed: the next chunk of the same look may go at once),
 * SEND_MOVED when it was sent or refused (and is out of the folder or given up on),
 * else SEND_DONE (set aside, dropped, stopped: the folder is looked at again).
 */
int watchsend_one(struct watcher *w, struct entry *e, int others, const struct watch_jobs *jobs,
		    struct upload_stop *stop, struct watch_span *prev, int *have_prev,
		    int *sent_prev)
{
	const struct watch_options *o = w->o;
	struct watch_input in;
	struct upload_batch b;
	struct upload_result r;
	struct watch_span span;
	struct stat st;
	void *job = NULL, *buf;
	char *path;
	size_t last = 0;
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
	if (!o->delete_sent && (to = watchdir_sub(w, SUB_SENT, 1)) < 0) {
		give_up(w, e, "not sent, as it could not be marked sent");
		*have_prev = 0;
		close(fd);
		return SEND_NOTHING;
	}
	if (!(buf = read_whole(w, e, fd, &st))) {
		close(fd);
		return SEND_NOTHING;
	}
	path = watchdir_path(w, e->name);
	memset(&span, 0, sizeof(span));
	span.run = chunk_run(fd, (uint64_t)st.st_size);
	in.data = buf;
	in.len = (size_t)st.st_size;
	in.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	in.owner_uid = (unsigned)st.st_uid;
	if (jobs->make(jobs->ctx, path, &in, *have_prev ? prev : NULL, &span, &b, &job, w->d) != 0) {
		/* nothing was sent and no look made: the next chunk of the same look follows
		 * (a look after each, every name stat'ed again, made a folder of junk
		 * quadratic) */
		give_up(w, e, "not converted");
		*have_prev = 0;
		jobs->release(jobs->ctx, job);
		free(buf);
		free(path);
		close(fd);
		return SEND_NOTHING;
	}
	w->inflight = e;
	e->inflight = 1;
	w->inflight_dropped = 0;
	how = send_parts(w, e, &b, &last, others, jobs, job, stop, &r);
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
				watchdir_prune(w, SUB_SENT, (uint64_t)st.st_size,
				      span.end_ns > 0 ? span.end_ns / 1000000000LL :
				      (int64_t)st.st_mtime);
		}
		w->reason[0] = '\0';
		w->reason_said = 0;
	} else if (how == TRIED_REFUSED || how == TRIED_FAILED) {
		refused(w, e, &b.parts[last], &r);
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
		watchdir_entry_free(e); /* gone from the folder while it was sent: no look keeps it */
	jobs->release(jobs->ctx, job);
	free(buf);
	close(fd);
	free(path);
	/* sent or refused: moved out of the folder, or given up on where it could not be */
	return how == TRIED_SENT || how == TRIED_REFUSED || how == TRIED_FAILED ? SEND_MOVED :
	       SEND_DONE;
}

