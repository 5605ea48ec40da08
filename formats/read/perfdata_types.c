/* perfdata_types: every perf.data record type described once, one row each.
 *
 * A row says what perfdata_record.c needs to frame, check and decode a record of its
 * type: its name, the smallest size its decoded fields need, how its own counts must
 * agree with its size (a fixed layout, a string at an offset, or counts of its own),
 * whether it is read with the header or counted as AUX data, and the function that
 * reads its fields in the file's byte order into host order (perf's
 * perf_event__swap_ops[], with the decoding beside the swap). What a conversion does
 * with each type is convert/dispatch.c's table, indexed the same way.
 */
#include "formats/read/perfdata_internal.h"

#include <stddef.h>
#include <string.h>

#include "common/bytes.h"

/*
 * Where an MMAP2's filename starts: after prot and flags (72), or at 64 in the
 * records of kernels 3.12 to 3.15 (and RHEL 7's 3.10, and perf at the time), whose
 * MMAP2 had neither. The record's size cannot tell (a name 8 bytes later is 8 bytes
 * shorter and pads to the same end); what is at 64 can: the start of a path, printable
 * up to its NUL, where a later record has prot, a few PROT_* bits, or, in the records
 * perf inject --jit writes, the jitted ELF file's st_mode (0x81a4: never printable).
 * perf 3.16 and later read the early records 8 bytes off: names cut
 * ("64/ld-2.17.so"), some records dropped.
 */
size_t pd_mmap2_name_at(const struct perf_reader *r, const uint8_t *p, size_t size)
{
	size_t i;

	if (size < 72 || (ld16(p + 4, r->swapped) & PERF_RECORD_MISC_MMAP_BUILD_ID) ||
	    p[64] <= 0x20 || p[64] >= 0x7f)
		return 72;
	for (i = 65; i < 72 && p[i]; i++)
		if (p[i] < 0x20 || p[i] >= 0x7f)
			return 72;
	return 64;
}

/* A string field: borrowed when NUL-terminated inside the record, else copied. */
static const char *rec_str(struct perf_reader *r, const uint8_t *p, size_t len)
{
	if (len && memchr(p, 0, len))
		return (const char *)p;
	memcpy(r->str, p, len);
	r->str[len] = 0;
	return r->str;
}

/* ---- own counts (pd_rec_consistent): 1 or 0, or -1 with *fixed set ---- */

static int id_index_counts(const struct perf_reader *r, const uint8_t *p, uint16_t size,
			   size_t *fixed)
{
	uint64_t n;

	(void)fixed;
	if (size < 16)
		return 0;
	n = ld64(p + 8, r->swapped);
	return n <= (size - 16u) / 32 && (size - 16u == 32 * n || size - 16u == 48 * n);
}

static int thread_map_counts(const struct perf_reader *r, const uint8_t *p, uint16_t size,
			     size_t *fixed)
{
	(void)fixed;
	return size >= 16 && ld64(p + 8, r->swapped) == (uint64_t)(size - 16) / 24 &&
	       (size - 16) % 24 == 0;
}

static int empty_counts(const struct perf_reader *r, const uint8_t *p, uint16_t size,
			size_t *fixed)
{
	(void)r, (void)p, (void)fixed;
	return size == 8;
}

static int attr_counts(const struct perf_reader *r, const uint8_t *p, uint16_t size,
		       size_t *fixed)
{
	uint64_t n;

	(void)fixed;
	if (size < 16)
		return 0;
	n = ld32(p + 12, r->swapped) ? ld32(p + 12, r->swapped) : 64;
	return n >= 64 && n <= size - 8u && (size - 8u - n) % 8 == 0;
}

static int feature_counts(const struct perf_reader *r, const uint8_t *p, uint16_t size,
			  size_t *fixed)
{
	(void)fixed;
	return size >= 16 && ld64(p + 8, r->swapped) < HEADER_FEAT_BITS;
}

static int event_update_counts(const struct perf_reader *r, const uint8_t *p, uint16_t size,
			       size_t *fixed)
{
	(void)fixed;
	return size >= 24 && ld64(p + 8, r->swapped) < 16;
}

static int time_conv_counts(const struct perf_reader *r, const uint8_t *p, uint16_t size,
			    size_t *fixed)
{
	(void)r, (void)p, (void)fixed;
	return size >= 32 && size <= 64;
}

static int namespaces_counts(const struct perf_reader *r, const uint8_t *p, uint16_t size,
			     size_t *fixed)
{
	uint64_t n;

	if (size < 24)
		return 1;
	n = ld64(p + 16, r->swapped);
	if (n > (size - 24u) / 16)
		return 0;
	*fixed = 24 + 16 * (size_t)n;
	return -1;
}

/* ---- fields, read in the file's byte order; `body` excludes the trailer ---- */

static void mmap_fields(struct perf_reader *r, const uint8_t *p, size_t body,
			struct perf_record *rec)
{
	struct perf_mmap_rec *m = &rec->u.mmap;
	int sw = r->swapped;
	size_t fn = rec->type == PERF_RECORD_MMAP ? 40 : pd_mmap2_name_at(r, p, rec->size);

	m->pid = ld32(p + 8, sw);
	m->tid = ld32(p + 12, sw);
	m->start = ld64(p + 16, sw);
	m->len = ld64(p + 24, sw);
	m->pgoff = ld64(p + 32, sw);
	m->executable = !(rec->misc & PERF_RECORD_MISC_MMAP_DATA);
	if (rec->type == PERF_RECORD_MMAP2) {
		if (rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			m->build_id_size = p[40] <= PERF_BUILD_ID_MAX ? p[40] : PERF_BUILD_ID_MAX;
			memcpy(m->build_id, p + 44, PERF_BUILD_ID_MAX);
			m->has_build_id = 1;
		} else {
			m->maj = ld32(p + 40, sw);
			m->min = ld32(p + 44, sw);
			m->ino = ld64(p + 48, sw);
			m->ino_generation = ld64(p + 56, sw);
		}
		if (fn == 72) {
			m->prot = ld32(p + 64, sw);
			m->flags = ld32(p + 68, sw);
		}
	}
	m->filename = rec_str(r, p + fn, body - fn);
	if (r->sp.nfiles && pd_sp_jit_path(m->filename))
		m->pgoff = m->start; /* its symbols are at the code's addresses */
}

static void comm_fields(struct perf_reader *r, const uint8_t *p, size_t body,
			struct perf_record *rec)
{
	rec->u.comm.pid = ld32(p + 8, r->swapped);
	rec->u.comm.tid = ld32(p + 12, r->swapped);
	rec->u.comm.exec = !!(rec->misc & PERF_RECORD_MISC_COMM_EXEC);
	rec->u.comm.comm = rec_str(r, p + 16, body - 16);
}

static void fork_fields(struct perf_reader *r, const uint8_t *p, size_t body,
			struct perf_record *rec)
{
	int sw = r->swapped;

	(void)body;
	rec->u.fork.pid = ld32(p + 8, sw);
	rec->u.fork.ppid = ld32(p + 12, sw);
	rec->u.fork.tid = ld32(p + 16, sw);
	rec->u.fork.ptid = ld32(p + 20, sw);
	rec->u.fork.time = ld64(p + 24, sw);
	rec->u.fork.synthesized = rec->type == PERF_RECORD_FORK &&
				  (rec->misc & PERF_RECORD_MISC_FORK_EXEC);
}

/* u32 pid, tid; u64 nr; { u64 dev, ino; } [nr]: the pid namespace's pair when nr and
 * the bytes reach it */
static void namespaces_fields(struct perf_reader *r, const uint8_t *p, size_t body,
			      struct perf_record *rec)
{
	int sw = r->swapped;

	rec->u.namespaces.pid = ld32(p + 8, sw);
	rec->u.namespaces.tid = ld32(p + 12, sw);
	if (ld64(p + 16, sw) > PERF_NS_PID_INDEX && body >= 24 + 16 * (PERF_NS_PID_INDEX + 1)) {
		rec->u.namespaces.pid_ns_dev = ld64(p + 24 + 16 * PERF_NS_PID_INDEX, sw);
		rec->u.namespaces.pid_ns_ino = ld64(p + 32 + 16 * PERF_NS_PID_INDEX, sw);
	}
}

static void lost_fields(struct perf_reader *r, const uint8_t *p, size_t body,
			struct perf_record *rec)
{
	(void)body;
	rec->u.lost.id = ld64(p + 8, r->swapped);
	rec->u.lost.lost = ld64(p + 16, r->swapped);
	r->stats.lost_events += rec->u.lost.lost;
}

static void lost_samples_fields(struct perf_reader *r, const uint8_t *p, size_t body,
				struct perf_record *rec)
{
	(void)body;
	rec->u.lost.lost = ld64(p + 8, r->swapped);
	r->stats.lost_samples += rec->u.lost.lost;
}

static void ksymbol_fields(struct perf_reader *r, const uint8_t *p, size_t body,
			   struct perf_record *rec)
{
	int sw = r->swapped;

	rec->u.ksymbol.addr = ld64(p + 8, sw);
	rec->u.ksymbol.len = ld32(p + 16, sw);
	rec->u.ksymbol.ksym_type = ld16(p + 20, sw);
	rec->u.ksymbol.flags = ld16(p + 22, sw);
	rec->u.ksymbol.name = rec_str(r, p + 24, body - 24);
}

/* File format of TIME_CONV: u64 time_shift, time_mult, time_zero; since Linux 5.9 also
 * u64 time_cycles, time_mask, u8 cap_user_time_zero, cap_user_time_short,
 * u8 reserved[6]. Smaller than 32 bytes: nothing read. */
static void time_conv_fields(struct perf_reader *r, const uint8_t *p, size_t body,
			     struct perf_record *rec)
{
	struct perf_time_conv_rec *t = &rec->u.time_conv;
	int sw = r->swapped;

	if (body < 32)
		return;
	t->time_shift = ld64(p + 8, sw);
	t->time_mult = ld64(p + 16, sw);
	t->time_zero = ld64(p + 24, sw);
	if (body >= 56) {
		t->time_cycles = ld64(p + 32, sw);
		t->time_mask = ld64(p + 40, sw);
		t->cap_user_time_zero = p[48];
		t->cap_user_time_short = p[49];
	}
}

#define NAME(t) .name = "PERF_RECORD_" #t
/* the member of the record's union that borrows a string from the reader */
#define STRING(m) offsetof(struct perf_record, u.m)

/*
 * File format (the kernel's records whose size their fields fix, sample_id_all
 * trailer excluded; a string is NUL-terminated and padded to a u64 word):
 *	MMAP		u32 pid, tid; u64 start, len, pgoff; char filename[];
 *	MMAP2		u32 pid, tid; u64 start, len, pgoff; 24 bytes of device and
 *			inode or build id; u32 prot, flags; char filename[];
 *	COMM		u32 pid, tid; char comm[];
 *	KSYMBOL		u64 addr; u32 len; u16 type, flags; char name[];
 *	CGROUP		u64 id; char path[];
 *	FORK, EXIT	u32 pid, ppid, tid, ptid; u64 time;		(32 bytes)
 *	LOST		u64 id, lost;					(24)
 *	THROTTLE, UNTHROTTLE	u64 time, id, stream_id;		(32)
 *	LOST_SAMPLES	u64 lost;					(16)
 *	SWITCH		nothing						(8)
 *	SWITCH_CPU_WIDE, ITRACE_START	u32 pid, tid;			(16)
 *	AUX		u64 aux_offset, aux_size, flags;		(32)
 *	BPF_EVENT	u16 type, flags; u32 id; u8 tag[8];		(24)
 *	AUX_OUTPUT_HW_ID	u64 hw_id;				(16)
 *	NAMESPACES	u32 pid, tid; u64 nr; { u64 dev, ino; } [nr];
 * and perf's (no trailer):
 *	HEADER_ATTR	struct perf_event_attr attr; u64 ids[];	(attr.size: 64, 72, ...)
 *	HEADER_FEATURE	u64 feat_id; the feature's section	(feat_id < 256)
 *	EVENT_UPDATE	u64 type; u64 id; ...			(type: UNIT, SCALE, NAME, CPUS)
 *	TIME_CONV	u64 time_shift, time_mult, time_zero; [u64 time_cycles, time_mask;
 *			u8 cap_user_time_zero, cap_user_time_short, reserved[6]]
 *	ID_INDEX	u64 nr; { u64 id, idx, cpu, tid; } [nr]
 *			[ { u64 machine_pid, vcpu; } [nr] ]
 *	THREAD_MAP	u64 nr; { u64 pid; char comm[16]; } [nr]
 *	FINISHED_ROUND, FINISHED_INIT	nothing				(8)
 * A SAMPLE's layout is its event's sample_type's (perfdata_record.c decode_sample).
 */
const struct pd_rec_type pd_rec_types[PERF_RECORD_TYPES] = {
	[PERF_RECORD_MMAP] = { NAME(MMAP), .min_body = 32, .str = 40, .fields = mmap_fields,
			       .string = STRING(mmap.filename) },
	[PERF_RECORD_LOST] = { NAME(LOST), .min_body = 16, .fixed = 24, .fields = lost_fields },
	[PERF_RECORD_COMM] = { NAME(COMM), .min_body = 8, .str = 16, .fields = comm_fields,
			       .string = STRING(comm.comm) },
	[PERF_RECORD_EXIT] = { NAME(EXIT), .min_body = 24, .fixed = 32, .fields = fork_fields },
	[PERF_RECORD_THROTTLE] = { NAME(THROTTLE), .fixed = 32 },
	[PERF_RECORD_UNTHROTTLE] = { NAME(UNTHROTTLE), .fixed = 32 },
	[PERF_RECORD_FORK] = { NAME(FORK), .min_body = 24, .fixed = 32, .fields = fork_fields },
	[PERF_RECORD_READ] = { NAME(READ) },
	[PERF_RECORD_SAMPLE] = { NAME(SAMPLE), .flags = PD_SAMPLE },
	[PERF_RECORD_MMAP2] = { NAME(MMAP2), .min_body = 64, .str = PD_STR_MMAP2,
				.fields = mmap_fields, .string = STRING(mmap.filename) },
	[PERF_RECORD_AUX] = { NAME(AUX), .fixed = 32, .flags = PD_AUX },
	[PERF_RECORD_ITRACE_START] = { NAME(ITRACE_START), .fixed = 16 },
	[PERF_RECORD_LOST_SAMPLES] = { NAME(LOST_SAMPLES), .min_body = 8, .fixed = 16,
				       .fields = lost_samples_fields },
	[PERF_RECORD_SWITCH] = { NAME(SWITCH), .fixed = 8 },
	[PERF_RECORD_SWITCH_CPU_WIDE] = { NAME(SWITCH_CPU_WIDE), .fixed = 16 },
	[PERF_RECORD_NAMESPACES] = { NAME(NAMESPACES), .min_body = 16, .counts = namespaces_counts,
				     .fields = namespaces_fields },
	[PERF_RECORD_KSYMBOL] = { NAME(KSYMBOL), .min_body = 16, .str = 24, .fields = ksymbol_fields,
				  .string = STRING(ksymbol.name) },
	[PERF_RECORD_BPF_EVENT] = { NAME(BPF_EVENT), .fixed = 24 },
	[PERF_RECORD_CGROUP] = { NAME(CGROUP), .str = 16 },
	[PERF_RECORD_TEXT_POKE] = { NAME(TEXT_POKE) },
	[PERF_RECORD_AUX_OUTPUT_HW_ID] = { NAME(AUX_OUTPUT_HW_ID), .fixed = 16 },
	[PERF_RECORD_HEADER_ATTR] = { NAME(HEADER_ATTR), .counts = attr_counts,
				      .flags = PD_USER | PD_WITH_HEADER },
	[PERF_RECORD_HEADER_EVENT_TYPE] = { NAME(HEADER_EVENT_TYPE),
					    .flags = PD_USER | PD_WITH_HEADER },
	[PERF_RECORD_HEADER_TRACING_DATA] = { NAME(HEADER_TRACING_DATA),
					      .flags = PD_USER | PD_WITH_HEADER },
	[PERF_RECORD_HEADER_BUILD_ID] = { NAME(HEADER_BUILD_ID),
					  .flags = PD_USER | PD_WITH_HEADER },
	[PERF_RECORD_FINISHED_ROUND] = { NAME(FINISHED_ROUND), .counts = empty_counts,
					 .flags = PD_USER },
	[PERF_RECORD_ID_INDEX] = { NAME(ID_INDEX), .counts = id_index_counts, .flags = PD_USER },
	[PERF_RECORD_AUXTRACE_INFO] = { NAME(AUXTRACE_INFO), .flags = PD_USER | PD_AUX },
	[PERF_RECORD_AUXTRACE] = { NAME(AUXTRACE), .flags = PD_USER | PD_AUX },
	[PERF_RECORD_AUXTRACE_ERROR] = { NAME(AUXTRACE_ERROR), .flags = PD_USER },
	[PERF_RECORD_THREAD_MAP] = { NAME(THREAD_MAP), .counts = thread_map_counts,
				     .flags = PD_USER },
	[PERF_RECORD_CPU_MAP] = { NAME(CPU_MAP), .flags = PD_USER },
	[PERF_RECORD_STAT_CONFIG] = { NAME(STAT_CONFIG), .flags = PD_USER },
	[PERF_RECORD_STAT] = { NAME(STAT), .flags = PD_USER },
	[PERF_RECORD_STAT_ROUND] = { NAME(STAT_ROUND), .flags = PD_USER },
	[PERF_RECORD_EVENT_UPDATE] = { NAME(EVENT_UPDATE), .counts = event_update_counts,
				       .flags = PD_USER | PD_WITH_HEADER },
	[PERF_RECORD_TIME_CONV] = { NAME(TIME_CONV), .counts = time_conv_counts,
				    .fields = time_conv_fields, .flags = PD_USER },
	[PERF_RECORD_HEADER_FEATURE] = { NAME(HEADER_FEATURE), .counts = feature_counts,
					 .flags = PD_USER | PD_WITH_HEADER },
	[PERF_RECORD_COMPRESSED] = { NAME(COMPRESSED), .flags = PD_USER | PD_NESTED },
	[PERF_RECORD_FINISHED_INIT] = { NAME(FINISHED_INIT), .counts = empty_counts,
					.flags = PD_USER | PD_WITH_HEADER },
	[PERF_RECORD_COMPRESSED2] = { NAME(COMPRESSED2), .flags = PD_USER | PD_NESTED },
};

const char **perf_record_string(struct perf_record *rec)
{
	size_t at = rec->type < PERF_RECORD_TYPES ? pd_rec_types[rec->type].string : 0;

	return at ? (const char **)(void *)((char *)rec + at) : NULL;
}
