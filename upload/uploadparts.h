/* uploadparts: a converted profile cut in time into profiles a backend takes (its size
 * and sample limits), every sample in one of them, and those sent in order. */
#ifndef PERFCONV_UPLOADPARTS_H
#define PERFCONV_UPLOADPARTS_H

#include <stddef.h>
#include <stdint.h>

#include "formats/model/profile.h"
#include "formats/write/writer.h"
#include "upload/runtimeid.h"
#include "upload/upload.h"

/* What one profile may hold for a backend to take it; 0: no limit. */
struct upload_limits {
	uint64_t bytes;           /* the pprof before gzip */
	uint64_t samples;         /* pprof Samples */
	const char *bytes_why;    /* "Datadog skips a profile over 10 MiB", for messages */
	const char *samples_why;
};

/* How parts are written: `write` (NULL: pprof_write), then gzipped when `gzip` (pprof
 * gzips itself). */
struct upload_writer {
	profile_writer write;
	int gzip;
};

/* One profile of the cut: samples of the recording's clock in [from, to) (to 0: all). */
struct upload_part {
	uint64_t from, to;
	int64_t start_ns, end_ns; /* its window, wall clock */
	int merged_threads;       /* written with thread labels merged (wo->merge_threads) */
	int over;                 /* over a limit still: one instant holds too much */
	char *buf;                /* the gzipped pprof */
	size_t len;
	struct write_stats st;
};

struct upload_cut {
	struct upload_part *parts;
	size_t n;
	int why;                  /* what made it cut: 0 none, 1 bytes, 2 samples */
	uint64_t whole_bytes, whole_samples; /* the profile whole, as first written */
};

/*
 * `p` written by `w` (NULL: pprof) with `wo` (its time_nanos and duration_nanos the window
 * [start_ns, end_ns), wall clock), as one profile when it is under `l`, else cut in time
 * (the recording's clock plus `wall_offset` is the wall clock) at its samples' times into
 * as few profiles as keep each under `l`, every sample in one of them, their windows
 * tiling the whole one. An instant over the limit on its own is written with thread labels
 * merged (over `l`'s samples), and marked over when still over. 0, or -1 with errno set.
 */
int upload_cut_make(const struct profile *p, const struct write_options *wo,
		    const struct upload_writer *w, const struct upload_limits *l, int64_t start_ns, int64_t end_ns,
		    int64_t wall_offset, struct upload_cut *c);

/*
 * Part `i` of `c` cut again in two by time (the backend answered that it is too large):
 * 0, or -1 when it holds one instant only (errno EDOM) or on a write error.
 */
int upload_cut_halve(const struct profile *p, const struct write_options *wo,
		     const struct upload_writer *w, int64_t wall_offset, struct upload_cut *c, size_t i);

void upload_cut_release(struct upload_cut *c);

/*
 * How upload_send_batch() sends: `send` sends part `k` of `b` (its runtime-id and
 * profile_seq set) with whatever tries its caller makes, and returns 0 when the part is
 * done with and the next may go, else the caller's own code of how it went (not 0), *r
 * saying why; `halve` cuts part `k`, which the backend found too large (*r), in two
 * (b's parts made again) and says so: 0, or -1 when it cannot (the refusal stands).
 */
struct upload_batch_ops {
	int (*send)(void *ctx, struct upload_batch *b, size_t k, struct upload_result *r);
	int (*halve)(void *ctx, struct upload_batch *b, size_t k, const struct upload_result *r);
	void *ctx;
};

/*
 * Send the parts of `b` in order, each with its run's runtime-id and next profile_seq
 * from `rids`; one the backend refuses as too large (r->too_large) is cut in two and
 * both are sent. With `sent_until` (may be NULL) and more than one part, the parts that
 * end by *sent_until (wall clock) were sent before and are passed over, and it moves to
 * the end of each part sent. Returns 0 once every part is sent, else what ops->send
 * returned for part *last, the one that was not. The parts' runtime_id point into this
 * call's own buffer: not to be read after it.
 */
int upload_send_batch(struct upload_batch *b, struct runtime_ids *rids,
		      const struct upload_batch_ops *ops, int64_t *sent_until, size_t *last,
		      struct upload_result *r);

#endif
