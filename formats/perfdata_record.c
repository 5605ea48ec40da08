/* perfdata_record: one record's bytes, in the file's byte order, decoded into a
 * struct perf_record in host byte order: samples field by field as sample_type says,
 * the sample_id_all trailer, and the fixed fields of the kernel's records. */
#include "formats/perfdata_internal.h"

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
	int tsz, ev = 0;

	if (!r->sample_id_all) {
		rec->event = r->nev == 1 ? 0 : -1;
		return 0;
	}
	if (r->nev > 1) {
		ev = -1;
		if (r->is_pos > 0 && size >= 8 + 8 * r->is_pos) {
			ev = event_of_id(r, ld64(p + size - 8 * r->is_pos, sw));
			if (ev < 0)
				ev = -1;
		}
	}
	rec->event = ev;
	st = r->ev[ev < 0 ? 0 : ev].d.sample_type;
	tsz = 8 * __builtin_popcountll(st & S_TRAILER);
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
		uint64_t per = 24;

		NEED(8, "BRANCH_STACK");
		n = ld64(q, sw);
		q += 8;
		if (e->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
			NEED(8, "BRANCH_STACK");
			q += 8;
		}
		if (e->branch_sample_type & PERF_SAMPLE_BRANCH_COUNTERS)
			per += 8;
		if (n > LEFT / per) {
			what = "BRANCH_STACK";
			goto overrun;
		}
		s->nr_branches = n;
		q += n * per;
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		const uint8_t *regs = q + 8;

		REGS(PERF_SAMPLE_REGS_USER, "REGS_USER", e->sample_regs_user);
		s->regs_user_abi = ld64(regs - 8, sw);
		if (s->regs_user_abi) {
			s->nregs_user = (uint32_t)__builtin_popcountll(e->sample_regs_user);
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

/* Fixed part of the records we decode, header included. */
unsigned pd_rec_min(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_MMAP: return 40;
	case PERF_RECORD_MMAP2: return 72;
	case PERF_RECORD_COMM: return 16;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: return 32;
	case PERF_RECORD_LOST: return 24;
	case PERF_RECORD_LOST_SAMPLES: return 16;
	case PERF_RECORD_KSYMBOL: return 24;
	default: return 8;
	}
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
	if ((type > PERF_RECORD_AUX_OUTPUT_HW_ID && type < PERF_RECORD_HEADER_ATTR) ||
	    type > PERF_RECORD_COMPRESSED2 || type == 0) {
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
		size_t fn = type == PERF_RECORD_MMAP ? 40 : 72;

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
			m->prot = ld32(p + 64, sw);
			m->flags = ld32(p + 68, sw);
		}
		m->filename = rec_str(r, p + fn, body - fn);
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
