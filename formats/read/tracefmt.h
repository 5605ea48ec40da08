/* tracefmt: the trace-event formats a recording carries (feature HEADER_TRACING_DATA,
 * or the PERF_RECORD_HEADER_TRACING_DATA record of a pipe), and the RAW bytes of a
 * tracepoint sample decoded by them.
 *
 * Spec: tools/perf/util/trace-event-read.c (trace_report) reads what
 * tools/perf/util/trace-event-info.c writes; each event's `format` file is the one in
 * /sys/kernel/tracing/events/SYSTEM/NAME/format (Documentation/trace/events.rst). A
 * tracepoint event of the recording (attr type PERF_TYPE_TRACEPOINT) has the event's
 * ID as its attr config; its samples' PERF_SAMPLE_RAW bytes are the record the format
 * describes (struct perf_sample's raw, raw_size), in the byte order the tracing data
 * says.
 *
 * Everything is parsed at once and owned by the struct tracefmt; the pointers it
 * hands out live until tracefmt_free().
 */
#ifndef PERFCONV_TRACEFMT_H
#define PERFCONV_TRACEFMT_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"

/* One value of a __print_flags() or __print_symbolic() table of the print fmt. */
struct tracefmt_label {
	uint64_t value;
	const char *label;      /* "S", "D", ... */
};

/* One field of an event, as its format file declares it:
 *	field:TYPE NAME[N];	offset:OFF;	size:SIZE;	signed:S; */
struct tracefmt_field {
	const char *name;       /* "prev_pid" */
	const char *type;       /* "pid_t", "char[16]", "__data_loc char[]" */
	uint32_t offset, size;  /* in the sample's RAW bytes */
	unsigned is_signed : 1;
	unsigned is_array : 1;  /* NAME[N]: `size` bytes of elements */
	unsigned is_string : 1; /* an array of char, or a __data_loc char[] */
	unsigned is_dynamic : 1;/* __data_loc: a u32 of (length << 16 | offset) here */
	/* The table the print fmt gives this field to (the first __print_flags or
	 * __print_symbolic whose value mentions REC->NAME), or none (nlabels 0). */
	const struct tracefmt_label *labels;
	size_t nlabels;
	unsigned labels_are_flags : 1; /* __print_flags: each set bit, joined by `delim` */
	const char *delim;      /* "|" (flags) */
	const char *zero_label; /* the print fmt's text for no flag set (prev_state's
				   "R", from `? __print_flags(...) : "R"`), or NULL */
};

struct tracefmt_event {
	uint64_t id;            /* the format's ID: the attr config of the event */
	const char *system;     /* "sched" (the directory of its format file) */
	const char *name;       /* "sched_switch" */
	const char *print_fmt;  /* the text after "print fmt: " */
	const struct tracefmt_field *fields; /* as declared, common_* first */
	size_t nfields;
};

struct tracefmt;

/*
 * Parse the tracing data in `buf` (`len` bytes; borrowed only during the call).
 * `name` is used in messages. Returns NULL after one error line through `d` when the
 * header or a size is damaged; an event file that does not parse is skipped with a
 * warning. Every size is checked against the bytes left before it is read.
 */
struct tracefmt *tracefmt_parse(const void *buf, size_t len, const char *name, struct diag *d);
/* NULL-safe. */
void tracefmt_free(struct tracefmt *t);

/* The tracing data's version ("0.6") and whether its numbers (and the RAW bytes of
 * the samples) are big-endian. */
const char *tracefmt_version(const struct tracefmt *t);
int tracefmt_big_endian(const struct tracefmt *t);

size_t tracefmt_nevents(const struct tracefmt *t);
const struct tracefmt_event *tracefmt_event(const struct tracefmt *t, size_t i);
/* The event of format ID `id` (an attr's config), or NULL. */
const struct tracefmt_event *tracefmt_find(const struct tracefmt *t, uint64_t id);
/* The field `name` of `e`, or NULL. */
const struct tracefmt_field *tracefmt_field(const struct tracefmt_event *e, const char *name);

/*
 * An integer field (size 1, 2, 4 or 8, not an array) of the RAW bytes of a sample:
 * sign-extended when the field is signed, zero-extended otherwise, into *v. Returns 1,
 * or 0 when the field does not fit in `raw_size` bytes or is not an integer.
 */
int tracefmt_read_int(const struct tracefmt *t, const struct tracefmt_field *f, const void *raw,
		      size_t raw_size, int64_t *v);

/*
 * A string field (a fixed char array such as prev_comm, or a __data_loc char[]) into
 * `buf` (`cap` bytes, cap >= 1), cut at its first NUL and at cap - 1 bytes, always
 * NUL-terminated. Returns its length, or -1 when it does not fit in `raw_size` bytes
 * or is not a string.
 */
long tracefmt_read_str(const struct tracefmt *t, const struct tracefmt_field *f, const void *raw,
		       size_t raw_size, char *buf, size_t cap);

/*
 * The print fmt's label of `value` for field `f` (see tracefmt_field.labels): for
 * flags, the labels of the bits set joined by the delimiter ("S", "D|W"), the zero
 * label when none of the table's bits is set; for a symbolic table, the label equal
 * to value. Into `buf` (cap >= 1), NUL-terminated; returns the length, 0 when there
 * is no label. Bits outside the table (prev_state's 0x100, perf script's "+" of a
 * preempted task) are not labelled.
 */
size_t tracefmt_label(const struct tracefmt_field *f, uint64_t value, char *buf, size_t cap);

#endif
