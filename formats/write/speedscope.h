/* speedscope: speedscope's own JSON file format, one sampled profile per thread. */
#ifndef PERFCONV_SPEEDSCOPE_H
#define PERFCONV_SPEEDSCOPE_H

#include "formats/write/writer.h"

/*
 * One "sampled" profile per thread (pid/tid), named "comm (pid/tid)" with the
 * thread's last name, in the threads' name order; samples in time order, consecutive
 * samples with the same function stack merged. Weights are the event's period
 * (unit "nanoseconds" for clock events, "none" for counts) with o->weight_period,
 * else 1 per sample (unit "none"). With nanoseconds, startValue and endValue are the
 * thread's first sample and its last sample plus its period, counted from the first
 * sample written; otherwise 0 and the summed weight. Shared frames are the functions
 * the stacks use (see formats/model/profview.h). activeProfileIndex is the busiest thread.
 */
int speedscope_write(const struct profile *p, const struct write_options *o, FILE *out);

#endif
