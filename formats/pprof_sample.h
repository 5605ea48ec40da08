/* pprof_sample: one pprof Sample packed by hand, in the bytes protobuf-c gives it. */
#ifndef PERFCONV_PPROF_SAMPLE_H
#define PERFCONV_PPROF_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "profile.pb-c.h"

/*
 * The Sample `s` packed as protobuf-c packs it (proto3: location_id and value packed,
 * each label a message of its non-zero fields, in field order) into `out`, which has
 * room for pprof_sample_bound(s) bytes: its length. protobuf-c's packing walks the
 * descriptors field by field, 3,000 instructions a sample of a --call-graph dwarf
 * recording; tests/check_pprof.c holds the two to the same bytes.
 */
size_t pprof_sample_pack(const Perftools__Profiles__Sample *s, uint8_t *out);
size_t pprof_sample_bound(const Perftools__Profiles__Sample *s);

#endif
