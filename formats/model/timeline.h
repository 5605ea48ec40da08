/* timeline: every sample kept, each thread's in time order, in memory that does not grow. */
#ifndef PERFCONV_TIMELINE_H
#define PERFCONV_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "common/spool.h"
#include "formats/model/profile.h"

/*
 * For the writers that draw each thread's samples in time order (speedscope, chrome):
 * the samples are taken as they come (in any order of time), gathered in runs of a
 * bounded size, each run sorted by thread and time and spooled to a temporary file
 * (common/spool), and the runs merged when the samples are read (an external merge
 * sort). A recording of any length thus costs the memory of one run and of the
 * merge's buffers; a small one never leaves memory. Samples of one thread at the
 * same time keep the order they were added in.
 */
struct pc_timeline;

struct pc_timeline *timeline_new(void);
/* NULL-safe. */
void timeline_free(struct pc_timeline *t);
/* Keep a copy of `s` (before timeline_finish()). */
void timeline_add(struct pc_timeline *t, const struct pc_sample *s);
/* The stack tree was rebuilt (profile_expand_frames): node k of the samples kept so
 * far is now to[k], for k < n. */
void timeline_remap(struct pc_timeline *t, const uint32_t *to, size_t n);

/*
 * The profile's aggregates of the same samples (p->samples): aggregate `i` took the
 * sample just added, at `time`. The earliest sample of each is kept (the first
 * added among equal times), so that the aggregates can be visited in the time order
 * of their first samples, as the samples themselves would be.
 */
void timeline_note_aggregate(struct pc_timeline *t, size_t i, uint64_t time);
/* The aggregates were merged (their stacks became the same): old aggregate i is now
 * into[i], for i < n. */
void timeline_merge_aggregates(struct pc_timeline *t, const uint32_t *into, size_t n);
/* Aggregates 0 .. n - 1 by the time of their first samples; the caller frees it. */
uint32_t *timeline_aggregate_order(const struct pc_timeline *t, size_t n);

/* The threads seen, in the order of their first sample, each with the latest time
 * of its samples; before or after timeline_finish(). */
size_t timeline_nseen(const struct pc_timeline *t);
void timeline_seen(const struct pc_timeline *t, size_t i, uint32_t *pid, uint32_t *tid,
		   uint64_t *last_time);
/*
 * The first sample in time order (the first added among those at its time) of event
 * `event`, or of any event when -1: 1 with its time and event, 0 when there is none.
 */
int timeline_first(const struct pc_timeline *t, int event, uint64_t *time, int *event_out);

/* No more samples: sort and merge what is kept. Idempotent. */
void timeline_finish(struct pc_timeline *t);
/* After timeline_finish(): the threads, by pid and then tid, each with its samples
 * [first, first + n) of the timeline's order. */
struct tl_thread {
	uint32_t pid, tid;
	uint64_t first, n;
};
size_t timeline_nthreads(const struct pc_timeline *t);
const struct tl_thread *timeline_thread(const struct pc_timeline *t, size_t i);
/* 0, or the errno of a failed write or read of the temporary files (then samples
 * are missing: the output must not be taken as complete). */
int timeline_error(const struct pc_timeline *t);

/* Reads one thread's samples in time order. */
struct timeline_cursor {
	struct pc_timeline *t;
	struct spool_reader r;
	uint64_t k, end;         /* in memory: positions in the order */
	struct pc_sample s;      /* the sample returned, its stack as the profile's now */
};
void timeline_cursor_init(struct timeline_cursor *c, struct pc_timeline *t, size_t thread);
/* The next sample, or NULL after the thread's last (or an I/O error). */
const struct pc_sample *timeline_cursor_next(struct timeline_cursor *c);
void timeline_cursor_release(struct timeline_cursor *c);

#endif
