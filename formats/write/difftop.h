/* difftop: a differential profile as text, the functions whose shares changed most. */
#ifndef PERFCONV_DIFFTOP_H
#define PERFCONV_DIFFTOP_H

#include "formats/write/writer.h"

/*
 * A differential profile (o->diff set; samples of PC_SIDE_BASE and PC_SIDE_NEW) as a
 * table: per function (its text as folded output writes a frame, so --srcline makes
 * it per line), its self and total share of each side's weight and their changes
 * (NEW's share less BASE's, in points of percent), the o->diff->top functions whose
 * shares changed most first (0: all), then each side's total. A function's total
 * counts a stack once however often it recurs.
 *
 *	   self: base      new   change | total: base      new   change | function
 *	          9.85%   19.62%   +9.77% |        9.85%   19.62%   +9.77% | work_double
 */
int difftop_write(const struct profile *p, const struct write_options *o, FILE *out);

#endif
