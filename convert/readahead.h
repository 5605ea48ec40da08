/* readahead: pass 1 tells the symbolizer which addresses pass 2 will ask for. */
#ifndef PERFCONV_READAHEAD_H
#define PERFCONV_READAHEAD_H

#include <stdint.h>

#include "formats/read/perfdata.h"
#include "symbolize/symbolizer.h"
#include "convert/replay.h"

/*
 * While pass 1 reads the recording, the user-space addresses in the callchains (and
 * the call sites of LBR call stacks) of its first READAHEAD_SAMPLES samples go to the
 * symbolizer's prefetch thread, placed
 * in the file mappings seen so far (replay_find_so_far: a guess, which only moves
 * work; a wrong one costs a wasted symbolization, never a wrong frame). Each (object,
 * offset, return address) is asked for once.
 */
#define READAHEAD_SAMPLES 4096

struct readahead;

/*
 * Paths are read through `strings` (the replay's); all must outlive the readahead.
 * The user-space files the header names with a build id are those perf record saw
 * samples in: the symbolizer starts loading them now, largest first.
 */
struct readahead *readahead_new(struct symbolizer *sym, const struct replay *rp,
				const struct strtab *strings,
				const struct perf_header_info *header);
/* NULL-safe. */
void readahead_free(struct readahead *ra);

/* A sample record: 1 while more are wanted, 0 from the last one wanted on (pass 1
 * need not decode samples then). */
int readahead_sample(struct readahead *ra, const struct perf_record *rec);

#endif
