/* merge: several inputs' profiles into one, each under a root frame naming its input. */
#ifndef PERFCONV_MERGE_H
#define PERFCONV_MERGE_H

#include "formats/model/profile.h"

/*
 * "PATH (HOST)": the label of input `path` whose profile is `p` (its recording's host
 * name; the path alone when the recording names none). Malloc'ed.
 */
char *merge_label(const struct profile *p, const char *path);

/*
 * Add profile `src` (as convert_read() left it) to `dst` (initialized, with the same
 * `aggregate`): its strings, mappings, frames, events and samples, each stack under a
 * root frame named `label`, so that every writer shows which input a stack came from.
 * Events of the same name and unit are one. Sample times are moved onto dst's clock:
 * by the wall clock when both recordings say when they began, else after dst's last
 * sample. dst's host, kernel and perf version are the first input's. `src` is left
 * as it was.
 */
void merge_profile(struct profile *dst, const struct profile *src, const char *label);

/*
 * Add profile `src` to `dst` as merge_profile() does but with its stacks as they are
 * (no frame naming it), each sample marked as of `side` (perfconv diff: the base and
 * the new recording in one profile; frames of the same name stay apart by address,
 * the writers compare them by their text).
 */
void merge_side(struct profile *dst, const struct profile *src, enum pc_side side);

#endif
