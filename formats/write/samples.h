/* samples: one line per sample in time order, for reading and diffing. */
#ifndef PERFCONV_SAMPLES_H
#define PERFCONV_SAMPLES_H

#include "formats/write/writer.h"

/*
 * Tab-separated: COMM, PID/TID, CPU (- when not recorded), SEC.NSEC, EVENT, PERIOD, then the frames root
 * first joined by ';' (named as in folded output). Samples in time order (the
 * profile must be sorted).
 */
int samples_write(const struct profile *p, const struct write_options *o, FILE *out);

#endif
