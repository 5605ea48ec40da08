/* watch: send each finished chunk `perf record --switch-output` leaves in a folder,
 * oldest first, and mark it sent only after the backend's 2xx. */
#ifndef PERFCONV_WATCH_H
#define PERFCONV_WATCH_H

#include "common/diag.h"
#include "convert/upload.h"

struct watch_options {
	const char *dir;       /* the folder perf writes PREFIX.<timestamp> chunks into */
	int delete_sent;       /* a sent chunk is deleted instead of moved to DIR/sent/ */
	int quiet;             /* no line per chunk sent */
	unsigned poll_ms;      /* how often the folder is looked at (default 1000) */
};

/*
 * Make the profile of chunk `path` into *up (its buffers owned by *job, freed by
 * the release function): 0, or -1 after saying why through `d` (the chunk is then
 * left where it is and not tried again by this run).
 */
typedef int (*watch_make_fn)(void *ctx, const char *path, struct upload_profile *up, void **job,
			     struct diag *d);
typedef void (*watch_release_fn)(void *ctx, void *job);

/*
 * Until a stop signal (upload_stop_check): each chunk of o->dir, oldest first (perf's timestamp in the name),
 * converted and sent with retries (capped exponential backoff; Retry-After). A
 * chunk is complete when its name ends in perf's `.<timestamp>` (perf renames a
 * chunk so once it has finished it; the one it writes keeps the plain name) and its
 * header says where its data ends, within the file. Sent: moved to o->dir/sent/
 * (or deleted); refused by the backend (a 4xx): moved to o->dir/refused/ with a
 * warning; interrupted by it: left as it is, for the next run. Says when the
 * backlog grows, and why. 0 when stopped, -1 when the folder cannot be used.
 */
int watch_run(const struct watch_options *o, struct uploader *u, watch_make_fn make,
	      watch_release_fn release, void *ctx, struct upload_stop *stop, struct diag *d);

/* Is `path` a finished chunk (its name and header as above)? 1 or 0. */
int watch_chunk_complete(const char *dir, const char *name);

#endif
