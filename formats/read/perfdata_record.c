/* perfdata_record: one record's bytes, in the file's byte order, decoded into a
 * struct perf_record in host byte order: samples field by field as sample_type says,
 * the sample_id_all trailer, and the fixed fields of the kernel's records. */
#include "formats/read/perfdata_internal.h"

#include "common/bytes.h"

#include <stdio.h>
#include <string.h>

static const char *const rec_names[] = {
	[PERF_RECORD_MMAP] = "PERF_RECORD_MMAP",
	[PERF_RECORD_LOST] = "PERF_RECORD_LOST",
	[PERF_RECORD_COMM] = "PERF_RECORD_COMM",
	[PERF_RECORD_EXIT] = "PERF_RECORD_EXIT",
	[PERF_RECORD_THROTTLE] = "PERF_RECORD_THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "PERF_RECORD_UNTHROTTLE",
	[PERF_RECORD_FORK] = "PERF_RECORD_FORK",
	[PERF_RECORD_READ] = "PERF_RECORD_READ",
	[PERF_RECORD_SAMPLE] = "PERF_RECORD_SAMPLE",
	[PERF_RECORD_MMAP2] = "PERF_RECORD_MMAP2",
	[PERF_RECORD_AUX] = "PERF_RECORD_AUX",
	[PERF_RECORD_ITRACE_START] = "PERF_RECORD_ITRACE_START",
	[PERF_RECORD_LOST_SAMPLES] = "PERF_RECORD_LOST_SAMPLES",
	[PERF_RECORD_SWITCH] = "PERF_RECORD_SWITCH",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "PERF_RECORD_SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES] = "PERF_RECORD_NAMESPACES",
	[PERF_RECORD_KSYMBOL] = "PERF_RECORD_KSYMBOL",
	[PERF_RECORD_BPF_EVENT] = "PERF_RECORD_BPF_EVENT",
	[PERF_RECORD_CGROUP] = "PERF_RECORD_CGROUP",
	[PERF_RECORD_TEXT_POKE] = "PERF_RECORD_TEXT_POKE",
	[PERF_RECORD_AUX_OUTPUT_HW_ID] = "PERF_RECORD_AUX_OUTPUT_HW_ID",
	[PERF_RECORD_HEADER_ATTR] = "PERF_RECORD_HEADER_ATTR",
	[PERF_RECORD_HEADER_EVENT_TYPE] = "PERF_RECORD_HEADER_EVENT_TYPE",
	[PERF_RECORD_HEADER_TRACING_DATA] = "PERF_RECORD_HEADER_TRACING_DATA",
	[PERF_RECORD_HEADER_BUILD_ID] = "PERF_RECORD_HEADER_BUILD_ID",
	[PERF_RECORD_FINISHED_ROUND] = "PERF_RECORD_FINISHED_ROUND",
	[PERF_RECORD_ID_INDEX] = "PERF_RECORD_ID_INDEX",
	[PERF_RECORD_AUXTRACE_INFO] = "PERF_RECORD_AUXTRACE_INFO",
	[PERF_RECORD_AUXTRACE] = "PERF_RECORD_AUXTRACE",
	[PERF_RECORD_AUXTRACE_ERROR] = "PERF_RECORD_AUXTRACE_ERROR",
	[PERF_RECORD_THREAD_MAP] = "PERF_RECORD_THREAD_MAP",
	[PERF_RECORD_CPU_MAP] = "PERF_RECORD_CPU_MAP",
	[PERF_RECORD_STAT_CONFIG] = "PERF_RECORD_STAT_CONFIG",
	[PERF_RECORD_STAT] = "PERF_RECORD_STAT",
	[PERF_RECORD_STAT_ROUND] = "PERF_RECORD_STAT_ROUND",
	[PERF_RECORD_EVENT_UPDATE] = "PERF_RECORD_EVENT_UPDATE",
	[PERF_RECORD_TIME_CONV] = "PERF_RECORD_TIME_CONV",
	[PERF_RECORD_HEADER_FEATURE] = "PERF_RECORD_HEADER_FEATURE",
	[PERF_RECORD_COMPRESSED] = "PERF_RECORD_COMPRESSED",
	[PERF_RECORD_FINISHED_INIT] = "PERF_RECORD_FINISHED_INIT",
	[PERF_RECORD_COMPRESSED2] = "PERF_RECORD_COMPRESSED2",
};

struct rec_label pd_rec_name(uint32_t type)
{
	struct rec_label l;

	if (type < sizeof(rec_names) / sizeof(rec_names[0]) && rec_names[type])
		snprintf(l.s, sizeof(l.s), "%s", rec_names[type]);
	else
		snprintf(l.s, sizeof(l.s), "record type %u", type);
	return l;
}

/* The event of a sample or trailer id; -2 when the id names none. */
static int event_of_id(const struct perf_reader *r, uint64_t id)
{
	int ev;

	if (r->nev == 1 || id == 0)
		return 0; /* perf: synthesized records carry id 0 */
	ev = pd_find_id(r, id);
	return ev < 0 ? -2 : ev;
}

/* The size of the sample_id_all trailer of the non-sample record at p, as its event's
 * sample_type says, and that event in *ev (-1 when the record does not say which). */
static int trailer_size(const struct perf_reader *r, const uint8_t *p, uint16_t size, int *ev)
{
	*ev = r->nev == 1 ? 0 : -1;
	if (!r->sample_id_all)
		return 0;
	*ev = 0;
	if (r->nev > 1) {
		*ev = -1;
		if (r->is_pos > 0 && size >= 8 + 8 * r->is_pos) {
			*ev = event_of_id(r, ld64(p + size - 8 * r->is_pos, r->swapped));
			if (*ev < 0)
				*ev = -1;
		}
	}
	return 8 * __builtin_popcountll(r->ev[*ev < 0 ? 0 : *ev].d.sample_type & S_TRAILER);
}

/*
 * File format (sample_id_all trailer, at the end of a non-sample record):
 *	{ u32 pid, tid; }	&& TID
 *	{ u64 time; }		&& TIME
 *	{ u64 id; }		&& ID
 *	{ u64 stream_id; }	&& STREAM_ID
 *	{ u32 cpu, res; }	&& CPU
 *	{ u64 id; }		&& IDENTIFIER
 * Returns the trailer's size, or -1 when the record is too small for it.
 */
static int decode_trailer(struct perf_reader *r, const uint8_t *p, uint16_t size,
			  struct perf_record *rec)
{
	int sw = r->swapped;
	uint64_t st;
	const uint8_t *q;
	int tsz;

	tsz = trailer_size(r, p, size, &rec->event);
	if (!r->sample_id_all)
		return 0;
	st = r->ev[rec->event < 0 ? 0 : rec->event].d.sample_type;
	if (size < 8 + tsz)
		return -1;
	q = p + size - tsz;
	if (st & PERF_SAMPLE_TID) {
		rec->sid.pid = ld32(q, sw);
		rec->sid.tid = ld32(q + 4, sw);
		rec->sid.has_tid = 1;
		q += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		rec->sid.time = ld64(q, sw);
		rec->sid.has_time = 1;
		q += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		rec->sid.id = ld64(q, sw);
		rec->sid.has_id = 1;
		q += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		rec->sid.stream_id = ld64(q, sw);
		q += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		rec->sid.cpu = ld32(q, sw);
		rec->sid.has_cpu = 1;
		q += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		rec->sid.id = ld64(q, sw);
		rec->sid.has_id = 1;
	}
	return tsz;
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


int pd_sample_identity(const struct perf_reader *r, const uint8_t *p, uint16_t size,
		       struct perf_sample_id *sid)
{
	const uint8_t *q = p + 8, *end = p + size;
	uint64_t st;
	int ev = 0;

	memset(sid, 0, sizeof(*sid));
	if (size < 8)
		return 0;
	if (r->nev > 1 && r->id_pos >= 0) {
		if ((size_t)size < 16 + 8 * (size_t)r->id_pos)
			return 0;
		ev = event_of_id(r, ld64(p + 8 + 8 * r->id_pos, r->swapped));
		if (ev < 0)
			return 0;
	}
	st = r->ev[ev].d.sample_type;
	/* the fields before TID and TIME, as decode_sample() reads them */
	q += 8 * (!!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP));
	if (st & PERF_SAMPLE_TID) {
		if (end - q < 8)
			return 0;
		sid->pid = ld32(q, r->swapped);
		sid->tid = ld32(q + 4, r->swapped);
		sid->has_tid = 1;
		q += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		if (end - q < 8)
			return 0;
		sid->time = ld64(q, r->swapped);
		sid->has_time = 1;
	}
	return 1;
}

/*
 * File format (PERF_RECORD_SAMPLE, each field present when its sample_type bit is):
 *	u64 id;			IDENTIFIER
 *	u64 ip;			IP
 *	u32 pid, tid;		TID
 *	u64 time;		TIME
 *	u64 addr;		ADDR
 *	u64 id;			ID
 *	u64 stream_id;		STREAM_ID
 *	u32 cpu, res;		CPU
 *	u64 period;		PERIOD
 *	read_format values;	READ
 *	u64 nr, ips[nr];	CALLCHAIN
 *	u32 size; u8 data[size];	RAW, the pair padded to 8
 *	u64 nr; [u64 hw_idx]; { u64 from, to, flags; } lbr[nr]; [u64 cntr[nr]];
 *				BRANCH_STACK
 *	u64 abi; u64 regs[popcount(sample_regs_user)] when abi;	REGS_USER
 *	u64 size; u8 data[size]; u64 dyn_size when size;	STACK_USER
 *	u64 weight;		WEIGHT or WEIGHT_STRUCT (u32 var1; u16 var2, var3)
 *	u64 data_src;		DATA_SRC
 *	u64 transaction;	TRANSACTION
 *	u64 abi; u64 regs[popcount(sample_regs_intr)] when abi;	REGS_INTR
 *	u64 phys_addr;		PHYS_ADDR
 *	u64 cgroup;		CGROUP
 *	u64 data_page_size;	DATA_PAGE_SIZE
 *	u64 code_page_size;	CODE_PAGE_SIZE
 *	u64 size; u8 data[size];	AUX
 * Returns 1, 0 when skipped (damaged), -1 on error.
 */
static int decode_sample(struct perf_reader *r, const uint8_t *p, uint16_t size,
			 uint64_t off, struct perf_record *rec)
{
	int sw = r->swapped;
	const uint8_t *q = p + 8, *end = p + size;
	struct perf_sample *s = &rec->u.sample;
	const struct perf_event_desc *e;
	const char *what;
	uint64_t st, n, v;
	int ev = 0;

#define LEFT ((size_t)(end - q))
#define NEED(bytes, name) do { if ((uint64_t)(bytes) > LEFT) { what = name; goto overrun; } } while (0)
/* An 8-byte field: `take` reads it at q (or does nothing to skip it). */
#define FIELD(bit, name, take) do { if (st & (bit)) { NEED(8, name); take; q += 8; } } while (0)
/* u64 abi, then one u64 per bit of `mask` unless abi is 0 (PERF_SAMPLE_REGS_*) */
#define REGS(bit, name, mask) do { if (st & (bit)) {                                 \
		NEED(8, name);                                                       \
		v = ld64(q, sw);                                                     \
		q += 8;                                                              \
		if (v) {                                                             \
			n = 8 * (uint64_t)__builtin_popcountll(mask);                \
			NEED(n, name);                                               \
			q += n;                                                      \
		}                                                                    \
	} } while (0)

	if (r->nev > 1 && r->id_pos >= 0) {
		uint64_t id;

		if ((size_t)size < 16 + 8 * (size_t)r->id_pos) {
			what = "sample id";
			goto overrun;
		}
		id = ld64(p + 8 + 8 * r->id_pos, sw);
		ev = event_of_id(r, id);
		if (ev < 0) {
			diag_error(r->d, pd_cur_path(r), off, "PERF_RECORD_SAMPLE: sample id %llu "
				   "matches no event", (unsigned long long)id);
			return -1;
		}
	}
	rec->event = ev;
	e = &r->ev[ev].d;
	st = e->sample_type;

	FIELD(PERF_SAMPLE_IDENTIFIER, "IDENTIFIER", (rec->sid.id = ld64(q, sw), rec->sid.has_id = 1));
	FIELD(PERF_SAMPLE_IP, "IP", s->ip = ld64(q, sw));
	FIELD(PERF_SAMPLE_TID, "TID", (rec->sid.pid = ld32(q, sw), rec->sid.tid = ld32(q + 4, sw),
			     rec->sid.has_tid = 1));
	FIELD(PERF_SAMPLE_TIME, "TIME", (rec->sid.time = ld64(q, sw), rec->sid.has_time = 1));
	FIELD(PERF_SAMPLE_ADDR, "ADDR", (s->addr = ld64(q, sw), s->has_addr = 1));
	FIELD(PERF_SAMPLE_ID, "ID", (rec->sid.id = ld64(q, sw), rec->sid.has_id = 1));
	FIELD(PERF_SAMPLE_STREAM_ID, "STREAM_ID", rec->sid.stream_id = ld64(q, sw));
	FIELD(PERF_SAMPLE_CPU, "CPU", (rec->sid.cpu = ld32(q, sw), rec->sid.has_cpu = 1));
	s->period = e->sample_period;
	FIELD(PERF_SAMPLE_PERIOD, "PERIOD", (s->period = ld64(q, sw), s->has_period = 1));
	if (st & PERF_SAMPLE_READ) {
		uint64_t rf = e->read_format;
		uint64_t per = 8 * (1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST));
		uint64_t hdr = 8 * (!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING));

		if (rf & PERF_FORMAT_GROUP) {
			NEED(8 + hdr, "READ");
			n = ld64(q, sw);
			q += 8 + hdr;
			if (n > LEFT / per) {
				what = "READ";
				goto overrun;
			}
			q += n * per;
		} else {
			NEED(hdr + per, "READ");
			q += hdr + per;
		}
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		NEED(8, "CALLCHAIN");
		n = ld64(q, sw);
		q += 8;
		if (n > LEFT / 8) {
			what = "CALLCHAIN";
			goto overrun;
		}
		s->nr_callchain = n;
		s->has_callchain = 1;
		if (!sw && ((uintptr_t)q & 7) == 0) {
			s->callchain = (const uint64_t *)(const void *)q;
		} else {
			for (v = 0; v < n; v++)
				r->cc[v] = ld64(q + 8 * v, sw);
			s->callchain = r->cc;
		}
		q += n * 8;
	}
	if (st & PERF_SAMPLE_RAW) {
		uint32_t rs;

		NEED(4, "RAW");
		rs = ld32(q, sw);
		n = ((uint64_t)rs + 4 + 7) & ~7ULL;
		NEED(n, "RAW");
		s->raw = q + 4;
		s->raw_size = rs;
		q += n;
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		/* COUNTERS: a u64 per entry after all of them */
		uint64_t per = (e->branch_sample_type & PERF_SAMPLE_BRANCH_COUNTERS) ? 32 : 24;

		NEED(8, "BRANCH_STACK");
		n = ld64(q, sw);
		q += 8;
		if (e->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
			NEED(8, "BRANCH_STACK");
			s->branch_hw_idx = ld64(q, sw);
			s->has_branch_hw_idx = 1;
			q += 8;
		}
		if (n > LEFT / per) {
			what = "BRANCH_STACK";
			goto overrun;
		}
		s->has_branch_stack = 1;
		s->nr_branches = n;
		if (!sw && ((uintptr_t)q & 7) == 0) {
			s->branches = (const struct perf_branch_entry *)(const void *)q;
		} else {
			for (v = 0; v < n; v++) {
				r->br[v].from = ld64(q + 24 * v, sw);
				r->br[v].to = ld64(q + 24 * v + 8, sw);
				r->br[v].flags = ld64(q + 24 * v + 16, sw);
			}
			s->branches = r->br;
		}
		q += n * per;
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		const uint8_t *regs = q + 8;

		REGS(PERF_SAMPLE_REGS_USER, "REGS_USER", e->sample_regs_user);
		s->regs_user_abi = ld64(regs - 8, sw);
		if (s->regs_user_abi) {
			/* n: the registers' bytes (REGS) */
			s->nregs_user = (uint32_t)(n / 8);
			if (!sw)
				memcpy(r->regs_user, regs, (size_t)n);
			else
				for (v = 0; v < s->nregs_user; v++)
					r->regs_user[v] = ld64(regs + 8 * v, sw);
			s->regs_user = r->regs_user;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		NEED(8, "STACK_USER");
		n = ld64(q, sw);
		q += 8;
		s->has_stack_user = 1;
		if (n) {
			if (n > LEFT || LEFT - n < 8) {
				what = "STACK_USER";
				goto overrun;
			}
			s->stack_user = q;
			s->stack_user_size = n;
			v = ld64(q + n, sw);
			/* the bytes actually copied; never more than the room */
			s->stack_user_dyn = v < n ? v : n;
			q += n + 8;
		}
	}
	FIELD(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT",
	      (s->weight = (st & PERF_SAMPLE_WEIGHT_STRUCT) ? ld32(q, sw) : ld64(q, sw), s->has_weight = 1));
	FIELD(PERF_SAMPLE_DATA_SRC, "DATA_SRC", s->data_src = ld64(q, sw));
	FIELD(PERF_SAMPLE_TRANSACTION, "TRANSACTION", s->transaction = ld64(q, sw));
	REGS(PERF_SAMPLE_REGS_INTR, "REGS_INTR", e->sample_regs_intr);
	FIELD(PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR", s->phys_addr = ld64(q, sw));
	FIELD(PERF_SAMPLE_CGROUP, "CGROUP", s->cgroup = ld64(q, sw));
	FIELD(PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE", (void)0);
	FIELD(PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE", (void)0);
	if (st & PERF_SAMPLE_AUX) {
		NEED(8, "AUX");
		n = ld64(q, sw);
		q += 8;
		NEED(n, "AUX");
		q += n;
	}
	r->stats.samples++;
	return 1;
#undef REGS
#undef FIELD
#undef NEED
#undef LEFT
overrun:
	r->stats.skipped_bad++;
	pd_warn(r, pd_cur_path(r), off, "PERF_RECORD_SAMPLE: %s field overruns the record "
		"(size %u), skipped", what, size);
	return 0;
}

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
 */
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
static size_t mmap2_name_at(const struct perf_reader *r, const uint8_t *p, size_t size)
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

int pd_rec_consistent(const struct perf_reader *r, const uint8_t *p, uint16_t size)
{
	int sw = r->swapped, ev, tsz;
	uint32_t type = ld32(p, sw);
	size_t fixed = 0, str = 0;
	uint64_t n;

	switch (type) {
	case PERF_RECORD_ID_INDEX:
		if (size < 16)
			return 0;
		n = ld64(p + 8, sw);
		return n <= (size - 16u) / 32 && (size - 16u == 32 * n || size - 16u == 48 * n);
	case PERF_RECORD_THREAD_MAP:
		return size >= 16 && ld64(p + 8, sw) == (uint64_t)(size - 16) / 24 &&
		       (size - 16) % 24 == 0;
	case PERF_RECORD_FINISHED_ROUND:
	case PERF_RECORD_FINISHED_INIT:
		return size == 8;
	case PERF_RECORD_HEADER_ATTR:
		if (size < 16)
			return 0;
		n = ld32(p + 12, sw) ? ld32(p + 12, sw) : 64;
		return n >= 64 && n <= size - 8u && (size - 8u - n) % 8 == 0;
	case PERF_RECORD_HEADER_FEATURE:
		return size >= 16 && ld64(p + 8, sw) < HEADER_FEAT_BITS;
	case PERF_RECORD_EVENT_UPDATE:
		return size >= 24 && ld64(p + 8, sw) < 16;
	case PERF_RECORD_TIME_CONV:
		return size >= 32 && size <= 64;
	case PERF_RECORD_MMAP: str = 40; break;
	case PERF_RECORD_MMAP2: str = mmap2_name_at(r, p, size); break;
	case PERF_RECORD_COMM: str = 16; break;
	case PERF_RECORD_KSYMBOL: str = 24; break;
	case PERF_RECORD_CGROUP: str = 16; break;
	case PERF_RECORD_SWITCH: fixed = 8; break;
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_ITRACE_START:
	case PERF_RECORD_AUX_OUTPUT_HW_ID: fixed = 16; break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_BPF_EVENT: fixed = 24; break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	case PERF_RECORD_AUX: fixed = 32; break;
	case PERF_RECORD_NAMESPACES:
		if (size < 24)
			return 1;
		n = ld64(p + 16, sw);
		if (n > (size - 24u) / 16)
			return 0;
		fixed = 24 + 16 * (size_t)n;
		break;
	default:
		return 1;
	}
	if (str) {
		const uint8_t *nul = size > str ? memchr(p + str, 0, size - str) : NULL;

		if (!nul)
			return size < str + 8; /* a smaller one pd_decode() reports */
		fixed = str + (((size_t)(nul - p) - str + 8) & ~(size_t)7);
	}
	if (!r->ready) /* the header is being read: the trailer's size is not known yet,
			  but it holds at most six u64 fields */
		return size >= fixed && size - fixed <= 48;
	tsz = trailer_size(r, p, size, &ev);
	if (size < pd_rec_min(type) + (size_t)tsz)
		return 1; /* pd_decode() reports it */
	return size == fixed + (size_t)tsz;
}

/* Returns 1 when *rec is to be returned, 0 when consumed or skipped, -1 on error. */
int pd_decode(struct perf_reader *r, const uint8_t *p, uint16_t size, uint64_t off,
	      struct perf_record *rec)
{
	int sw = r->swapped, tsz, ret = 1;
	uint32_t type = ld32(p, sw);
	uint16_t misc = ld16(p + 4, sw);
	unsigned min;
	size_t body;

	switch (type) {
	case PERF_RECORD_HEADER_ATTR:
	case PERF_RECORD_HEADER_EVENT_TYPE:
	case PERF_RECORD_HEADER_TRACING_DATA:
	case PERF_RECORD_HEADER_BUILD_ID:
	case PERF_RECORD_EVENT_UPDATE:
	case PERF_RECORD_HEADER_FEATURE:
	case PERF_RECORD_FINISHED_INIT:
		return 0; /* read with the header */
	case PERF_RECORD_COMPRESSED:
	case PERF_RECORD_COMPRESSED2:
		r->stats.skipped_bad++; /* compressed inside compressed data */
		return 0;
	default:
		break;
	}
	if (type == PERF_RECORD_AUX || type == PERF_RECORD_AUXTRACE_INFO ||
	    type == PERF_RECORD_AUXTRACE) {
		r->stats.aux_records++;
		if (type == PERF_RECORD_AUXTRACE && size >= 16)
			r->stats.aux_bytes += ld64(p + 8, sw);
	}
	if (pd_type_simpleperf(type)) {
		/* a size past 65535 (misc: its high half) is no CALLCHAIN; inside
		 * compressed data only `size` bytes were framed */
		if (!misc)
			pd_sp_record(r, p, size);
		return 0;
	}
	if (!pd_type_known(type)) {
		r->stats.skipped_unknown++;
		return 0;
	}
	memset(rec, 0, sizeof(*rec));
	rec->type = type;
	rec->misc = misc;
	rec->size = size;
	rec->offset = off;
	rec->file = pd_cur_path(r);
	rec->event = r->nev == 1 ? 0 : -1;
	rec->cpumode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
	rec->raw = p;
	rec->index = r->index;

	if (type == PERF_RECORD_SAMPLE) {
		ret = decode_sample(r, p, size, off, rec);
		if (ret == 1 && r->sp_pending)
			pd_sp_join(r, rec);
		if (ret == 1)
			r->stats.records++;
		return ret;
	}
	if (type >= PERF_RECORD_HEADER_ATTR) {
		/* File format of TIME_CONV: u64 time_shift, time_mult, time_zero; since
		 * Linux 5.9 also u64 time_cycles, time_mask, u8 cap_user_time_zero,
		 * cap_user_time_short, u8 reserved[6]. */
		if (type == PERF_RECORD_TIME_CONV && size >= 32) {
			struct perf_time_conv_rec *t = &rec->u.time_conv;

			t->time_shift = ld64(p + 8, sw);
			t->time_mult = ld64(p + 16, sw);
			t->time_zero = ld64(p + 24, sw);
			if (size >= 56) {
				t->time_cycles = ld64(p + 32, sw);
				t->time_mask = ld64(p + 40, sw);
				t->cap_user_time_zero = p[48];
				t->cap_user_time_short = p[49];
			}
		}
		r->stats.records++;
		return 1;
	}

	min = pd_rec_min(type);
	tsz = decode_trailer(r, p, size, rec);
	if (tsz < 0 || size < min + (unsigned)tsz) {
		if (tsz < 0)
			tsz = 8 * __builtin_popcountll(r->ev[rec->event < 0 ? 0 : rec->event]
							.d.sample_type & S_TRAILER);
		r->stats.skipped_bad++;
		pd_warn(r, pd_cur_path(r), off, "%s: record size %u below minimum %u, skipped",
			pd_rec_name(type).s, size, min + (unsigned)tsz);
		return 0;
	}
	body = size - (size_t)tsz; /* the fields end here, trailer excluded */
	switch (type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct perf_mmap_rec *m = &rec->u.mmap;
		size_t fn = type == PERF_RECORD_MMAP ? 40 : mmap2_name_at(r, p, size);

		m->pid = ld32(p + 8, sw);
		m->tid = ld32(p + 12, sw);
		m->start = ld64(p + 16, sw);
		m->len = ld64(p + 24, sw);
		m->pgoff = ld64(p + 32, sw);
		m->executable = !(misc & PERF_RECORD_MISC_MMAP_DATA);
		if (type == PERF_RECORD_MMAP2) {
			if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				m->build_id_size = p[40] <= PERF_BUILD_ID_MAX ? p[40] :
						   PERF_BUILD_ID_MAX;
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
		break;
	}
	case PERF_RECORD_COMM:
		rec->u.comm.pid = ld32(p + 8, sw);
		rec->u.comm.tid = ld32(p + 12, sw);
		rec->u.comm.exec = !!(misc & PERF_RECORD_MISC_COMM_EXEC);
		rec->u.comm.comm = rec_str(r, p + 16, body - 16);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		rec->u.fork.pid = ld32(p + 8, sw);
		rec->u.fork.ppid = ld32(p + 12, sw);
		rec->u.fork.tid = ld32(p + 16, sw);
		rec->u.fork.ptid = ld32(p + 20, sw);
		rec->u.fork.time = ld64(p + 24, sw);
		rec->u.fork.synthesized = type == PERF_RECORD_FORK &&
					  (misc & PERF_RECORD_MISC_FORK_EXEC);
		break;
	case PERF_RECORD_NAMESPACES:
		/* u32 pid, tid; u64 nr; { u64 dev, ino; } [nr]: the pid namespace's pair
		 * when nr and the bytes reach it */
		rec->u.namespaces.pid = ld32(p + 8, sw);
		rec->u.namespaces.tid = ld32(p + 12, sw);
		if (ld64(p + 16, sw) > PERF_NS_PID_INDEX && body >= 24 + 16 * (PERF_NS_PID_INDEX + 1)) {
			rec->u.namespaces.pid_ns_dev = ld64(p + 24 + 16 * PERF_NS_PID_INDEX, sw);
			rec->u.namespaces.pid_ns_ino = ld64(p + 32 + 16 * PERF_NS_PID_INDEX, sw);
		}
		break;
	case PERF_RECORD_LOST:
		rec->u.lost.id = ld64(p + 8, sw);
		rec->u.lost.lost = ld64(p + 16, sw);
		r->stats.lost_events += rec->u.lost.lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		rec->u.lost.lost = ld64(p + 8, sw);
		r->stats.lost_samples += rec->u.lost.lost;
		break;
	case PERF_RECORD_KSYMBOL:
		rec->u.ksymbol.addr = ld64(p + 8, sw);
		rec->u.ksymbol.len = ld32(p + 16, sw);
		rec->u.ksymbol.ksym_type = ld16(p + 20, sw);
		rec->u.ksymbol.flags = ld16(p + 22, sw);
		rec->u.ksymbol.name = rec_str(r, p + 24, body - 24);
		break;
	default:
		break;
	}
	r->stats.records++;
	return 1;
}
