/* svg: an interactive flame graph in one self-contained SVG file. */
#ifndef PERFCONV_SVG_H
#define PERFCONV_SVG_H

#include "formats/write/writer.h"

/*
 * The stacks of folded output (the same frames, the same first frame comm[-PID[/TID]],
 * the same weights) as a flame graph in the manner of flamegraph.pl: a root frame
 * "all", then per stack prefix one frame whose width is its share, siblings in name
 * order. Each frame is a <g> holding a <title> (its text; its weight as "N UNIT
 * (P%)" on the second line; module, source file and lines, kind), a <rect> coloured
 * by kind (native, kernel, JIT, inlined; hue varied by a hash of the name) and, where
 * it fits, a <text> label cut to the frame's width. An embedded script (no external
 * resources) adds zoom, search and details; without it the graph still reads.
 *
 * o->title, o->inverted (root at the top), o->width (default 1200 px) and
 * o->minwidth (default 0.1 px: narrower frames, with what they hold, are not drawn;
 * the file says how many) shape it. Memory grows with the distinct stack prefixes.
 */
int svg_write(const struct profile *p, const struct write_options *o, FILE *out);

#endif
