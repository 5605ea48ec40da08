/* pprof_sample: one pprof Sample packed by hand, in the bytes protobuf-c gives it. */
#ifndef PERFCONV_PPROF_SAMPLE_H
#define PERFCONV_PPROF_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "common/gzout.h"
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

/* A Profile message packed onto a gzip stream a part at a time. */
struct pb_gz {
	struct gzout *gz;
	uint8_t *buf;
	size_t cap;
	uint64_t raw;     /* bytes written, before gzip */
};

/* Packs `m` (a Profile, or some of its fields) onto the stream. */
void pb_gz_pack(struct pb_gz *g, const Perftools__Profiles__Profile *m);
/*
 * Packs one Sample onto the stream as pb_gz_pack() would a Profile holding only it: the
 * field's key (Profile.sample is field 2, length-delimited) and the length as a
 * varint, then the message as protobuf-c would pack it (pprof_sample_pack). A Profile
 * of one sample made protobuf-c walk the Profile's 14 fields and size the sample
 * twice, for every sample.
 */
void pb_gz_pack_sample(struct pb_gz *g, const Perftools__Profiles__Sample *s);

#endif
