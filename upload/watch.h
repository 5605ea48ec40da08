/* watch: send each finished chunk `perf record --switch-output` leaves in a folder,
 * oldest first, and mark it sent only after the backend's 2xx. */
#ifndef PERFCONV_WATCH_H
#define PERFCONV_WATCH_H

#include <stdint.h>

#include "common/diag.h"
#include "upload/upload.h"

/* --max-backlog and --keep-sent when not given: 1 GiB each (docs/UPLOADING.md, Bounded disk: why). */
#define WATCH_MAX_BACKLOG_DEFAULT (1ULL << 30)
#define WATCH_KEEP_DEFAULT (1ULL << 30)

struct watch_options {
	const char *dir;       /* the folder perf writes PREFIX.<timestamp> chunks into */
	int delete_sent;       /* a sent chunk is deleted instead of moved to DIR/sent/, and
				  so is a dropped one instead of moved to DIR/dropped/ */
	int quiet;             /* no line per chunk sent */
	unsigned poll_ms;      /* how often the folder is looked at (default 1000) */
	/* --max-backlog: past either the oldest unsent chunks are dropped; 0: no limit */
	uint64_t max_chunks, max_bytes;
	/* --keep-sent: sent/, refused/ and dropped/ each pruned, oldest first, past
	 * these bytes and this age (of a file's modification time); 0: no limit */
	uint64_t keep_bytes;
	int64_t keep_age_s;
	/* --trust-folder: chunks of any owner, mode and number of links are sent, and JIT
	 * files beside them of any owner used (else the watcher's user's or root's only) */
	int trust_folder;
	unsigned retry_cap_s;  /* the longest wait between failed tries (default 300) */
};

/* A chunk as the watcher read it: the whole file, from the one descriptor it checked. */
struct watch_input {
	const void *data;
	size_t len;
	int64_t mtime_ns;
	unsigned owner_uid;    /* the file's owner: JIT files beside it must be its or root's */
};

/*
 * Where a chunk lies in time, for its profile's window and the next chunk's. One
 * `perf record --switch-output` run writes its chunks one after the other: the next
 * chunk's records start where this one's stop (builtin-record.c record__switch_output
 * drains the ring buffers, finishes the file and goes on in a new one), so a chunk's
 * window runs from the end of the chunk before it to its own last sample.
 */
struct watch_span {
	uint64_t run;          /* which perf record wrote it: the id the kernel gave its first
				  event (perf writes the same ids in every chunk of a run, and
				  the kernel never gives one twice until it boots again), set
				  by the watcher; 0: unknown */
	int has_clock_ref;     /* CLOCK_DATA (perf record -k): taken once per run */
	uint64_t clock_ref_wall, clock_ref_clock;
	uint64_t first_clock, last_clock; /* its first and last sample, perf's clock; 0: none */
	int64_t start_ns, end_ns; /* the same two, wall clock */
	/* wall clock less perf's clock: one for a run, kept from its first chunk (a chunk
	 * without CLOCK_DATA has only its file's time to go by, and a copied chunk's is
	 * the copy's); has_offset 0: unknown */
	int64_t offset;
	int has_offset;
};

/*
 * Where the window of chunk `cur` starts: the end of `prev` (the chunk just before it,
 * NULL when unknown) when both are of one run (the same first event id; the same
 * CLOCK_DATA where both have it; perf's clock going on, not back, from prev's last
 * sample to cur's first) and prev ends before cur does; else cur's first sample.
 */
int64_t watch_window_start(const struct watch_span *prev, const struct watch_span *cur);
/* Does `cur` follow `prev` in one run (as watch_window_start judges, but for the end)? */
int watch_same_run(const struct watch_span *prev, const struct watch_span *cur);

/*
 * Make the profile of chunk `path` (read whole into `in`: not to be opened by name)
 * into *b (one profile, or several each a span of its time when the backend's limits
 * want it; its buffers owned by *job, freed by the release function), its window
 * starting as watch_window_start(prev, span) says and ending at its last sample (each
 * part's window set), *span filled but for span->run, which the watcher sets first. 0,
 * or -1 after saying why through `d` (the chunk is then left where it is and not tried
 * again by this run).
 */
typedef int (*watch_make_fn)(void *ctx, const char *path, const struct watch_input *in,
			     const struct watch_span *prev, struct watch_span *span,
			     struct upload_batch *b, void **job, struct diag *d);
/* Part `i` of *b cut in two by time (the backend said it is too large): 0, or -1 when it
 * cannot be (one instant). */
typedef int (*watch_halve_fn)(void *ctx, void *job, size_t i, struct upload_batch *b);
typedef void (*watch_release_fn)(void *ctx, void *job);

struct watch_jobs {
	watch_make_fn make;
	watch_halve_fn halve;
	watch_release_fn release;
	void *ctx;
};

/*
 * Until a stop signal (upload_stop_check): each chunk of o->dir, oldest first (perf's
 * timestamp in the name), converted and sent with retries (capped exponential backoff
 * kept from chunk to chunk until a 2xx; a Retry-After, at most the cap). A request
 * turned down whatever its profile (UPLOAD_DENIED: the key, the URL) moves no chunk:
 * it is asked again every retry cap, said once an hour. A chunk is complete when its name
 * ends in perf's `.<timestamp>` (perf renames a chunk so once it has finished it; the
 * one it writes keeps the plain name) and its header says where its data ends, within
 * the file. The folder is locked (flock): a second watcher says who holds it and
 * returns -1.
 *
 * The folder is not trusted. Files are opened once (no link followed, no FIFO waited
 * on), judged on that descriptor (a regular file with one name, owned by the watcher's
 * user or root, writable by no one else, unless o->trust_folder), read whole from it
 * and never opened by name again; moved relative to the folder's descriptor. One that
 * fails the judgement is said (per cause) and left in place while it is that file.
 *
 * A chunk that fails (5xx, a reset) 3 times in a row while others wait is set aside,
 * said, and they go first; one that has failed 10 times while later chunks were sent
 * is moved to refused/, said. Under 5% free on the folder's filesystem is said.
 *
 * A chunk whose profile was cut in parts (the backend's limits) is sent part by part,
 * each with Datadog's runtime-id of its run and the next profile_seq (upload/runtimeid.h,
 * kept in the folder's .perfconv-runtime-ids); a part the backend finds too large is cut
 * in two and sent again; once all are sent the chunk is. A chunk set aside and tried
 * again sends only the parts not sent yet.
 *
 * Sent (a 2xx): renamed into o->dir/sent/ (or deleted) at once, nothing between the
 * answer and the rename; its modification time is then set to its window's end, which
 * the next run's first window starts from. Refused by the backend (a 4xx): moved to
 * o->dir/refused/ with a warning (for its age, naming the backend's limit); interrupted
 * by a stop: left as it is, for the next run. Past o->max_chunks or o->max_bytes of
 * unsent chunks, the oldest are moved to o->dir/dropped/ (or deleted), each said.
 * sent/, refused/ and dropped/ are pruned past o->keep_bytes and o->keep_age_s. Says
 * when the backlog grows, and why. Warnings are said once per cause per hour
 * (diag_per_cause); refusals and drops every time. 0 when stopped, -1 when the folder
 * cannot be used.
 */
int watch_run(const struct watch_options *o, struct uploader *u, const struct watch_jobs *jobs,
	      struct upload_stop *stop, struct diag *d);

#endif
