/* chrome: the Chrome Trace Event Format, each thread a timeline of what it ran. */
#ifndef PERFCONV_CHROME_H
#define PERFCONV_CHROME_H

#include "formats/write/writer.h"

/*
 * {"traceEvents": [...]} with "M" events naming each process and thread (its last
 * name; "thread_sort_index" orders threads by name) and, per thread, one "X" event
 * per slice: a function that stays at the same depth of consecutive samples' stacks
 * (its callers staying too) is one slice, from its first sample's time to the time
 * of the first sample without it. A thread off the CPU ends its slices: when the
 * next sample of a clock event comes more than 1.5 periods later (and is placed
 * later than one period after the one before), or at the thread's last sample,
 * slices end one period after the sample (for a count event, one mean interval
 * between the thread's samples). Of samples at one time only the last is shown.
 * Events are written in begin order, a parent before its children; ts and dur are
 * microseconds from the first sample written, with the nanoseconds as three decimals;
 * "cat" is native, kernel, jit or inlined; "args" holds the caller's name (the
 * nearest other function out of the outermost slice of the function that ends with
 * this one), the category again (speedscope, which imports these files too, shows
 * args but no cat), where speedscope needs it a "depth", and file, line and module.
 * Without times in the recording, the clock is the running sum of a thread's periods.
 */
int chrome_write(const struct profile *p, const struct write_options *o, FILE *out);

#endif
