/* perfdata_record: one record's bytes, in the file's byte order, decoded into a
 * struct perf_record in host byte order: samples field by field as sample_type says,
 * the sample_id_all trailer, and every other type as its row of perfdata_types.c says. */
#include "formats/read/perfdata_internal.h"

#include "common/bytes.h"

#include <stdio.h>
#include <string.h>

struct rec_label pd_rec_name(uint32_t type)
{
	struct rec_label l;

	if (type < PERF_RECORD_TYPES && pd_rec_types[type].name)
		snprintf(l.s, sizeof(l.s), "%s", pd_rec_types[type].name);
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
 * decode_sample() returns 1, 0 when skipped (damaged), -1 on error.
 */
/* A sample's fields read in order: where the next is, where the record ends. Each step
 * below returns NULL, or the name of the field that overruns the record. */
struct sample_cur {
	const uint8_t *q, *end;
	int sw;
	uint64_t st;             /* its event's sample_type */
	const struct perf_event_desc *e;
};

#define LEFT ((size_t)(c->end - c->q))
#define NEED(bytes, name) do { if ((uint64_t)(bytes) > LEFT) return name; } while (0)
/* An 8-byte field: `take` reads it at c->q (or does nothing to skip it). */
#define FIELD(bit, name, take) do { if (c->st & (bit)) { NEED(8, name); take; c->q += 8; } } while (0)

/* The fields before READ: identity, ip, addr, period. */
static const char *sample_ids(struct sample_cur *c, struct perf_record *rec)
{
	struct perf_sample *s = &rec->u.sample;
	int sw = c->sw;

	FIELD(PERF_SAMPLE_IDENTIFIER, "IDENTIFIER", (rec->sid.id = ld64(c->q, sw), rec->sid.has_id = 1));
	FIELD(PERF_SAMPLE_IP, "IP", s->ip = ld64(c->q, sw));
	FIELD(PERF_SAMPLE_TID, "TID", (rec->sid.pid = ld32(c->q, sw), rec->sid.tid = ld32(c->q + 4, sw),
			     rec->sid.has_tid = 1));
	FIELD(PERF_SAMPLE_TIME, "TIME", (rec->sid.time = ld64(c->q, sw), rec->sid.has_time = 1));
	FIELD(PERF_SAMPLE_ADDR, "ADDR", (s->addr = ld64(c->q, sw), s->has_addr = 1));
	FIELD(PERF_SAMPLE_ID, "ID", (rec->sid.id = ld64(c->q, sw), rec->sid.has_id = 1));
	FIELD(PERF_SAMPLE_STREAM_ID, "STREAM_ID", rec->sid.stream_id = ld64(c->q, sw));
	FIELD(PERF_SAMPLE_CPU, "CPU", (rec->sid.cpu = ld32(c->q, sw), rec->sid.has_cpu = 1));
	s->period = c->e->sample_period;
	FIELD(PERF_SAMPLE_PERIOD, "PERIOD", (s->period = ld64(c->q, sw), s->has_period = 1));
	return NULL;
}

/* READ: the counters' values, passed over. */
static const char *sample_read(struct sample_cur *c)
{
	uint64_t rf = c->e->read_format, n;
	uint64_t per = 8 * (1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST));
	uint64_t hdr = 8 * (!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			    !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING));

	if (rf & PERF_FORMAT_GROUP) {
		NEED(8 + hdr, "READ");
		n = ld64(c->q, c->sw);
		c->q += 8 + hdr;
		if (n > LEFT / per)
			return "READ";
		c->q += n * per;
	} else {
		NEED(hdr + per, "READ");
		c->q += hdr + per;
	}
	return NULL;
}

/* CALLCHAIN: borrowed in place when it needs neither swapping nor aligning. */
static const char *sample_callchain(struct perf_reader *r, struct sample_cur *c,
				    struct perf_sample *s)
{
	uint64_t n;

	NEED(8, "CALLCHAIN");
	n = ld64(c->q, c->sw);
	c->q += 8;
	if (n > LEFT / 8)
		return "CALLCHAIN";
	s->nr_callchain = n;
	s->has_callchain = 1;
	if (!c->sw && ((uintptr_t)c->q & 7) == 0) {
		s->callchain = (const uint64_t *)(const void *)c->q;
	} else {
		for (uint64_t v = 0; v < n; v++)
			r->cc[v] = ld64(c->q + 8 * v, c->sw);
		s->callchain = r->cc;
	}
	c->q += n * 8;
	return NULL;
}

static const char *sample_raw(struct sample_cur *c, struct perf_sample *s)
{
	uint32_t rs;
	uint64_t n;

	NEED(4, "RAW");
	rs = ld32(c->q, c->sw);
	n = ((uint64_t)rs + 4 + 7) & ~7ULL;
	NEED(n, "RAW");
	s->raw = c->q + 4;
	s->raw_size = rs;
	c->q += n;
	return NULL;
}

/* BRANCH_STACK: with COUNTERS, a u64 per entry after all of them. */
static const char *sample_branches(struct perf_reader *r, struct sample_cur *c,
				   struct perf_sample *s)
{
	uint64_t bst = c->e->branch_sample_type;
	uint64_t per = (bst & PERF_SAMPLE_BRANCH_COUNTERS) ? 32 : 24, n;
	int sw = c->sw;

	NEED(8, "BRANCH_STACK");
	n = ld64(c->q, sw);
	c->q += 8;
	if (bst & PERF_SAMPLE_BRANCH_HW_INDEX) {
		NEED(8, "BRANCH_STACK");
		s->branch_hw_idx = ld64(c->q, sw);
		s->has_branch_hw_idx = 1;
		c->q += 8;
	}
	if (n > LEFT / per)
		return "BRANCH_STACK";
	s->has_branch_stack = 1;
	s->nr_branches = n;
	if (!sw && ((uintptr_t)c->q & 7) == 0) {
		s->branches = (const struct perf_branch_entry *)(const void *)c->q;
	} else {
		for (uint64_t v = 0; v < n; v++) {
			r->br[v].from = ld64(c->q + 24 * v, sw);
			r->br[v].to = ld64(c->q + 24 * v + 8, sw);
			r->br[v].flags = ld64(c->q + 24 * v + 16, sw);
		}
		s->branches = r->br;
	}
	c->q += n * per;
	return NULL;
}

/* u64 abi, then one u64 per bit of `mask` unless abi is 0 (PERF_SAMPLE_REGS_*); the
 * values' bytes in *n, where they are in *regs. */
static const char *sample_regs(struct sample_cur *c, uint64_t mask, const char *name,
			       uint64_t *abi, const uint8_t **regs, uint64_t *n)
{
	NEED(8, name);
	*abi = ld64(c->q, c->sw);
	c->q += 8;
	*regs = c->q;
	*n = 0;
	if (*abi) {
		*n = 8 * (uint64_t)__builtin_popcountll(mask);
		NEED(*n, name);
		c->q += *n;
	}
	return NULL;
}

/* REGS_USER: copied out in host byte order. */
static const char *sample_regs_user(struct perf_reader *r, struct sample_cur *c,
				    struct perf_sample *s)
{
	const uint8_t *regs;
	const char *what;
	uint64_t n;

	if ((what = sample_regs(c, c->e->sample_regs_user, "REGS_USER", &s->regs_user_abi,
				&regs, &n)) != NULL)
		return what;
	if (s->regs_user_abi) {
		s->nregs_user = (uint32_t)(n / 8);
		if (!c->sw)
			memcpy(r->regs_user, regs, (size_t)n);
		else
			for (uint64_t v = 0; v < s->nregs_user; v++)
				r->regs_user[v] = ld64(regs + 8 * v, c->sw);
		s->regs_user = r->regs_user;
	}
	return NULL;
}

static const char *sample_stack_user(struct sample_cur *c, struct perf_sample *s)
{
	uint64_t n, v;

	NEED(8, "STACK_USER");
	n = ld64(c->q, c->sw);
	c->q += 8;
	s->has_stack_user = 1;
	if (n) {
		if (n > LEFT || LEFT - n < 8)
			return "STACK_USER";
		s->stack_user = c->q;
		s->stack_user_size = n;
		v = ld64(c->q + n, c->sw);
		/* the bytes actually copied; never more than the room */
		s->stack_user_dyn = v < n ? v : n;
		c->q += n + 8;
	}
	return NULL;
}

/* The fields after STACK_USER: weight, data source, transaction, REGS_INTR, ... AUX. */
static const char *sample_tail(struct sample_cur *c, struct perf_sample *s)
{
	const uint8_t *regs;
	const char *what;
	uint64_t abi, n;
	int sw = c->sw;

	FIELD(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT",
	      (s->weight = (c->st & PERF_SAMPLE_WEIGHT_STRUCT) ? ld32(c->q, sw) : ld64(c->q, sw),
	       s->has_weight = 1));
	FIELD(PERF_SAMPLE_DATA_SRC, "DATA_SRC", s->data_src = ld64(c->q, sw));
	FIELD(PERF_SAMPLE_TRANSACTION, "TRANSACTION", s->transaction = ld64(c->q, sw));
	if ((c->st & PERF_SAMPLE_REGS_INTR) &&
	    (what = sample_regs(c, c->e->sample_regs_intr, "REGS_INTR", &abi, &regs, &n)) != NULL)
		return what;
	FIELD(PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR", s->phys_addr = ld64(c->q, sw));
	FIELD(PERF_SAMPLE_CGROUP, "CGROUP", s->cgroup = ld64(c->q, sw));
	FIELD(PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE", (void)0);
	FIELD(PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE", (void)0);
	if (c->st & PERF_SAMPLE_AUX) {
		NEED(8, "AUX");
		n = ld64(c->q, sw);
		c->q += 8;
		NEED(n, "AUX");
		c->q += n;
	}
	return NULL;
}

#undef FIELD
#undef NEED
#undef LEFT

/* The fields from READ to STACK_USER, each step when its bit is set. */
static const char *sample_body(struct perf_reader *r, struct sample_cur *c,
			       struct perf_sample *s)
{
	const char *what;

	if ((c->st & PERF_SAMPLE_READ) && (what = sample_read(c)) != NULL)
		return what;
	if ((c->st & PERF_SAMPLE_CALLCHAIN) && (what = sample_callchain(r, c, s)) != NULL)
		return what;
	if ((c->st & PERF_SAMPLE_RAW) && (what = sample_raw(c, s)) != NULL)
		return what;
	if ((c->st & PERF_SAMPLE_BRANCH_STACK) && (what = sample_branches(r, c, s)) != NULL)
		return what;
	if ((c->st & PERF_SAMPLE_REGS_USER) && (what = sample_regs_user(r, c, s)) != NULL)
		return what;
	if ((c->st & PERF_SAMPLE_STACK_USER) && (what = sample_stack_user(c, s)) != NULL)
		return what;
	return NULL;
}

static int decode_sample(struct perf_reader *r, const uint8_t *p, uint16_t size,
			 uint64_t off, struct perf_record *rec)
{
	struct sample_cur c = { p + 8, p + size, r->swapped, 0, NULL };
	const char *what;
	int ev = 0;

	if (r->nev > 1 && r->id_pos >= 0) {
		uint64_t id;

		if ((size_t)size < 16 + 8 * (size_t)r->id_pos) {
			what = "sample id";
			goto overrun;
		}
		id = ld64(p + 8 + 8 * r->id_pos, c.sw);
		ev = event_of_id(r, id);
		if (ev < 0) {
			diag_error(r->d, pd_cur_path(r), off, "PERF_RECORD_SAMPLE: sample id %llu "
				   "matches no event", (unsigned long long)id);
			return -1;
		}
	}
	rec->event = ev;
	c.e = &r->ev[ev].d;
	c.st = c.e->sample_type;
	if ((what = sample_ids(&c, rec)) != NULL ||
	    (what = sample_body(r, &c, &rec->u.sample)) != NULL ||
	    (what = sample_tail(&c, &rec->u.sample)) != NULL)
		goto overrun;
	r->stats.samples++;
	return 1;
overrun:
	r->stats.skipped_bad++;
	pd_warn(r, pd_cur_path(r), off, "PERF_RECORD_SAMPLE: %s field overruns the record "
		"(size %u), skipped", what, size);
	return 0;
}

int pd_rec_consistent(const struct perf_reader *r, const uint8_t *p, uint16_t size)
{
	uint32_t type = ld32(p, r->swapped);
	const struct pd_rec_type *t;
	size_t fixed, str;
	int ev, tsz, v;

	if (type >= PERF_RECORD_TYPES)
		return 1;
	t = &pd_rec_types[type];
	fixed = t->fixed;
	if (t->str) {
		const uint8_t *nul;

		str = t->str == PD_STR_MMAP2 ? pd_mmap2_name_at(r, p, size) : t->str;
		nul = size > str ? memchr(p + str, 0, size - str) : NULL;
		if (!nul)
			return size < str + 8; /* a smaller one pd_decode() reports */
		fixed = str + (((size_t)(nul - p) - str + 8) & ~(size_t)7);
	} else if (t->counts && (v = t->counts(r, p, size, &fixed)) >= 0) {
		return v;
	} else if (!fixed) {
		return 1;
	}
	if (!r->ready) /* the header is being read: the trailer's size is not known yet,
			  but it holds at most six u64 fields */
		return size >= fixed && size - fixed <= 48;
	tsz = trailer_size(r, p, size, &ev);
	if (size < pd_rec_min(type) + (size_t)tsz)
		return 1; /* pd_decode() reports it */
	return size == fixed + (size_t)tsz;
}

/* A record that pd_decode() passes over before decoding anything (one read with the
 * header, compressed data inside compressed data, simpleperf's, an unknown type),
 * with what it counts of them: 1 when passed over. */
static int passed_over(struct perf_reader *r, const struct pd_rec_type *t, uint32_t type,
		       const uint8_t *p, uint16_t size, uint16_t misc)
{
	uint8_t flags = t ? t->flags : 0;

	if (flags & PD_WITH_HEADER)
		return 1;
	if (flags & PD_NESTED) {
		r->stats.skipped_bad++;
		return 1;
	}
	if (flags & PD_AUX) {
		r->stats.aux_records++;
		if (type == PERF_RECORD_AUXTRACE && size >= 16)
			r->stats.aux_bytes += ld64(p + 8, r->swapped);
	}
	if (pd_type_simpleperf(type)) {
		/* a size past 65535 (misc: its high half) is no CALLCHAIN; inside
		 * compressed data only `size` bytes were framed */
		if (!misc)
			pd_sp_record(r, p, size);
		return 1;
	}
	if (!pd_type_known(type)) {
		r->stats.skipped_unknown++;
		return 1;
	}
	return 0;
}

/* A kernel record other than a sample: its sample_id_all trailer, then its fields. */
static int decode_kernel(struct perf_reader *r, const struct pd_rec_type *t, const uint8_t *p,
			 uint16_t size, uint64_t off, struct perf_record *rec)
{
	unsigned min = pd_rec_min(rec->type);
	int tsz = decode_trailer(r, p, size, rec);

	if (tsz < 0 || size < min + (unsigned)tsz) {
		if (tsz < 0)
			tsz = 8 * __builtin_popcountll(r->ev[rec->event < 0 ? 0 : rec->event]
							.d.sample_type & S_TRAILER);
		r->stats.skipped_bad++;
		pd_warn(r, pd_cur_path(r), off, "%s: record size %u below minimum %u, skipped",
			t->name, size, min + (unsigned)tsz);
		return 0;
	}
	if (t->fields)
		t->fields(r, p, size - (size_t)tsz, rec);
	r->stats.records++;
	return 1;
}

/* Returns 1 when *rec is to be returned, 0 when consumed or skipped, -1 on error. */
int pd_decode(struct perf_reader *r, const uint8_t *p, uint16_t size, uint64_t off,
	      struct perf_record *rec)
{
	uint32_t type = ld32(p, r->swapped);
	uint16_t misc = ld16(p + 4, r->swapped);
	const struct pd_rec_type *t = type < PERF_RECORD_TYPES ? &pd_rec_types[type] : NULL;
	int ret;

	/* a sample, most records, is never passed over */
	if (type != PERF_RECORD_SAMPLE && passed_over(r, t, type, p, size, misc))
		return 0;
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
	if (t->flags & PD_SAMPLE) {
		ret = decode_sample(r, p, size, off, rec);
		if (ret == 1 && r->sp_pending)
			pd_sp_join(r, rec);
		if (ret == 1)
			r->stats.records++;
		return ret;
	}
	if (t->flags & PD_USER) {
		if (t->fields)
			t->fields(r, p, size, rec);
		r->stats.records++;
		return 1;
	}
	return decode_kernel(r, t, p, size, off, rec);
}
