/* folded: collapsed stacks, as stackcollapse-perf.pl writes them. */
#ifndef PERFCONV_FOLDED_H
#define PERFCONV_FOLDED_H

#include "formats/write/writer.h"

/*
 * One line per unique stack: `comm;root;...;leaf COUNT`, sorted by text. COUNT is
 * samples, or the summed period with o->weight_period. Spaces in comm become '_',
 * ';' in names ':'. Frames without symbols appear as module+0xoffset or [unknown].
 * With o->diff, `stack BASE NEW`: BASE's weight scaled by o->diff->scale, rounded.
 */
int folded_write(const struct profile *p, const struct write_options *o, FILE *out);

#endif
