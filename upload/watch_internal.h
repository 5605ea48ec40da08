/* watch_internal: what the watcher's files share (upload/watch.c: the loop;
 * upload/watchdir.c: the folder, its index and subfolders; upload/watchsend.c: one chunk
 * opened, judged, converted, sent). */
#ifndef PERFCONV_WATCH_INTERNAL_H
#define PERFCONV_WATCH_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "upload/runtimeid.h"
#include "upload/watch.h"

/* How often each cause of warnings is said (diag_per_cause). */
#define WARN_INTERVAL_S 3600
enum { SUB_SENT, SUB_REFUSED, SUB_DROPPED, NSUB };

/* A chunk-named entry of the folder, as the watcher knows it from one look to the next. */
struct entry {
	char *name;
	uint64_t ino;          /* readdir's: another file under the name is another entry */
	uint64_t size;         /* when first seen, or at the last look while E_WAIT (the
				* backlog's sum) */
	int statted;           /* size known: a look stats it again only while E_WAIT */
	int state;             /* E_* */
	unsigned fails;        /* tries that failed in a way another try may mend */
	unsigned round;        /* ... since it was last set aside */
	uint64_t sent_mark;    /* w->nsent when it first failed */
	int aside;             /* set aside: the chunks after it go first, it when none is left */
	uint64_t gen;          /* the last look that saw it */
	int inflight;          /* being converted and sent: a look does not free it */
	int64_t sent_until;    /* its profile's parts sent so far end here (wall clock) */
};

enum {
	E_PENDING,             /* to be sent */
	E_WAIT,                /* still being written or copied in: looked at again */
	E_SKIP,                /* given up on by this run while it is this file (said) */
};

/* A subfolder's chunks as its last whole look left them, plus those moved in since. */
struct kept {
	int known;
	uint64_t bytes;
	int64_t oldest;        /* the oldest one's modification time (s) */
	int64_t looked;        /* monotonic s of that look */
};

/* Names to entries: open addressing, made anew by each look from what the last knew, so
 * that a look costs one readdir and one probe a name, whatever the folder holds. */
struct index {
	struct entry **slot;
	size_t cap, n;         /* cap: a power of two, at least twice n */
};

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
	struct kept kept[NSUB];   /* each subfolder's tally, for watchdir_prune */
	int64_t space_checked;    /* monotonic s */
	struct runtime_ids rids;  /* Datadog's runtime-id and profile_seq of each run */
};

/* ---- upload/watchdir.c: the folder's operations ---- */

/* Monotonic seconds (the ages of a subfolder's tally and of the last space check). */
int64_t watchdir_clock_s(void);
/* DIR/NAME, for messages; the caller frees it. */
char *watchdir_path(const struct watcher *w, const char *name);
/*
 * Look at the folder: every chunk-named entry, oldest first, into *out (the caller frees
 * the array, not the entries), but those given up on while they are the same file; the
 * entries w->idx knew and the folder no longer holds are freed, but the one in flight.
 * w->gen counts the looks. Returns how many.
 */
size_t watchdir_scan(struct watcher *w, struct entry ***out);
/* Subfolder `sub`'s descriptor (made when `make`), -1 when it cannot be used (said). */
int watchdir_sub(struct watcher *w, int sub, int make);
/* `name` moved into subfolder `sub`: 0, or -1 after saying why. */
int watchdir_move(struct watcher *w, int sub, const char *name);
/* Subfolder `sub` pruned past --keep-sent; `size` and `mtime` (s; 0: unknown, a whole
 * look) of the chunk just moved in. */
void watchdir_prune(struct watcher *w, int sub, uint64_t size, int64_t mtime);
/* NULL-safe. */
void watchdir_entry_free(struct entry *e);

/* ---- upload/watch.c: the loop ---- */

/* Between two tries of the chunk in flight: 1 when it was dropped meanwhile. */
int watch_between_tries(struct watcher *w, const struct upload_result *r, unsigned wait);
/* Wait `ms`, or less when `stop` is asked for. */
void watch_sleep_ms(unsigned ms, struct upload_stop *stop);

/* ---- upload/watchsend.c: one chunk ---- */

enum { SEND_NOTHING, SEND_MOVED, SEND_DONE };
/*
 * Convert and send chunk `e`; *prev is the chunk before it (have_prev), and becomes this
 * one when it was sent or refused (then *sent_prev). SEND_NOTHING when nothing was sent
 * nor tried (e waits, or was given up on, a conversion that failed included) and no look
 * was made meanwhile: the caller goes on down the same list. SEND_MOVED when it was sent
 * or refused: it is out of the folder (or given up on), and the caller may go on down
 * the same list unless a look was made meanwhile (w->gen moved: between tries; e may
 * then be freed). SEND_DONE after a try that left it in the folder (set aside,
 * dropped, stopped): the caller looks again.
 */
int watchsend_one(struct watcher *w, struct entry *e, int others, const struct watch_jobs *jobs,
	     struct upload_stop *stop, struct watch_span *prev, int *have_prev, int *sent_prev);

#endif
