/* reorder: records held until every record earlier in time has been read, then delivered.
 *
 * The one pass over a compressed recording (session_fused) cannot hand a record to
 * pass 2's handlers when it is read: the replay must first have seen every record
 * that is earlier in time, and perf writes a CPU's records as its buffers fill. perf's
 * rule (tools/perf/util/ordered-events.c, flushed on PERF_RECORD_FINISHED_ROUND) says
 * when that holds: at the end of a round, nothing still to come is earlier than the
 * largest time read before the previous round's end. This queue keeps the records of
 * interest, with copies of the bytes they borrow from the reader, and gives them to a
 * deliver callback when the caller flushes.
 *
 * Order: unlike perf's queue this one does not sort. A record is delivered in file
 * order once its time is at most the horizon flushed to and every record held before
 * it was delivered: a flush stops at the first held record later than the horizon,
 * even when some after it are earlier (the caller's replay answers for the times, and
 * its handlers see records in the order two passes give them). Records of equal time
 * keep the order they were read in.
 *
 * Borrowed bytes: a record's callchain, registers, raw data, branch entries and its
 * string (MMAP's filename, COMM's comm, KSYMBOL's name) are copied when held. A
 * sample's user stack inflated into the reader's buffer may be held borrowed
 * (reorder_hold's `stack_borrowed`); reorder_unborrow, given to the reader as its
 * reuse callback (perf_reader_on_reuse), copies those in a range before the reader
 * writes over it. rec.raw is not kept (set to NULL): no handler reads the bytes as
 * written.
 */
#ifndef PERFCONV_REORDER_H
#define PERFCONV_REORDER_H

#include <stddef.h>
#include <stdint.h>

#include "formats/read/perfdata.h"

struct reorder;

struct reorder_ops {
	/* a held record, in file order; its borrowed pointers live until it returns */
	void (*deliver)(void *arg, const struct perf_record *rec);
	/* a large buffer the queue is done with (NULL: free): a caller may defer
	 * freeing, as an munmap while another thread runs interrupts it */
	void (*free_large)(void *arg, void *p);
	void *arg;
};

/* An empty queue delivering through `ops` (copied). Never NULL. */
struct reorder *reorder_new(const struct reorder_ops *ops);

/* Keep `rec` (of time `time`, as the caller's clock reads it) with copies of what it
 * borrows; with `stack_borrowed` the sample's user stack stays where it is until
 * reorder_unborrow copies it. */
void reorder_hold(struct reorder *q, const struct perf_record *rec, uint64_t time,
		  int stack_borrowed);

/* The reader is about to write over [lo, hi): the borrowed stacks there are copied.
 * `q` is the queue (the signature of perf_reader_on_reuse's callback). */
void reorder_unborrow(void *q, const void *lo, const void *hi);

/* perf's rounds: reorder_seen for every record with a time; at a FINISHED_ROUND,
 * reorder_round_end returns 1 and the horizon to flush to, or 0 after the first
 * round (nothing is sure of yet). */
void reorder_seen(struct reorder *q, uint64_t time);
int reorder_round_end(struct reorder *q, uint64_t *horizon);

/* Deliver the held records, in file order, up to the first one later than `horizon`
 * (UINT64_MAX: all of them). */
void reorder_flush(struct reorder *q, uint64_t horizon);

/* How many records are held, and the bytes of their copies (a sample's borrowed stack
 * counted as if copied: the limit a caller puts on them does not depend on when). */
size_t reorder_held(const struct reorder *q);
size_t reorder_bytes(const struct reorder *q);

/* NULL-safe; the records still held are dropped undelivered. */
void reorder_free(struct reorder *q);

#endif
