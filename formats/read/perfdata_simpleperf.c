/* perfdata_simpleperf: simpleperf's own record types in a perf.data data section.
 *
 * Layouts: AOSP system/extras, simpleperf/record.h and record.cpp. Types from 32768 on;
 * the header's misc field holds the high half of the size. None is returned to callers:
 * KERNEL_SYMBOL, DSO, SYMBOL, TRACING_DATA, EVENT_ID, UNWINDING_RESULT and DEBUG are of
 * no use past the features (FILE/FILE2 carry the symbols), and SPLIT/SPLIT_END pieces
 * are only ever one of those; CALLCHAIN is joined to its sample. */
#include "formats/read/perfdata_internal.h"

#include "common/bytes.h"

#include <stdlib.h>
#include <string.h>

/* File format of CALLCHAIN (written before its sample by `simpleperf record -g` while
 * its callchain joiner is on, one per chain type, the joined one last):
 *	u32 pid, tid; u64 chain_type (0, 1 original; 2, 3 joined);
 *	u64 time (the sample's); u64 ip_nr; u64 ips[ip_nr]; u64 sps[ip_nr];
 */
#define CC_FIXED 40
#define CC_JOINED_OFFLINE 2
#define CC_JOINED_REMOTE 3

int pd_sp_consistent(const struct perf_reader *r, const uint8_t *p, uint64_t ext)
{
	uint32_t type = ld32(p, r->swapped);
	uint64_t n;

	if (ext < 8)
		return 0;
	if (type != SP_RECORD_CALLCHAIN)
		return 1;
	if (ext < CC_FIXED)
		return 0;
	n = ld64(p + 32, r->swapped);
	return n <= (ext - CC_FIXED) / 16 && ext == CC_FIXED + 16 * n;
}

void pd_sp_record(struct perf_reader *r, const uint8_t *p, uint64_t ext)
{
	int sw = r->swapped;
	uint64_t type = ld32(p, sw), ct, n, i;

	if (type != SP_RECORD_CALLCHAIN || !pd_sp_consistent(r, p, ext))
		return;
	ct = ld64(p + 16, sw);
	if (ct != CC_JOINED_OFFLINE && ct != CC_JOINED_REMOTE)
		return;
	n = ld64(p + 32, sw);
	if (n > REC_MAX / 8 - 2)
		return;
	r->sp_pid = ld32(p + 8, sw);
	r->sp_tid = ld32(p + 12, sw);
	r->sp_time = ld64(p + 24, sw);
	for (i = 0; i < n; i++)
		r->sp_user[i] = ld64(p + CC_FIXED + 8 * i, sw);
	r->sp_nuser = n;
	r->sp_pending = 1;
}

void pd_sp_join(struct perf_reader *r, struct perf_record *rec)
{
	struct perf_sample *s = &rec->u.sample;
	uint64_t i, n = s->nr_callchain;

	if (!r->sp_pending)
		return;
	if (rec->sid.pid != r->sp_pid || rec->sid.tid != r->sp_tid ||
	    rec->sid.time != r->sp_time)
		return;
	r->sp_pending = 0;
	if (!s->has_callchain || !r->sp_nuser || n + 1 + r->sp_nuser > REC_MAX / 8)
		return;
	for (i = 0; i < n; i++)
		if (s->callchain[i] == PERF_CONTEXT_USER)
			return; /* the sample has its user stack already */
	memmove(r->sp_chain, s->callchain, n * 8);
	r->sp_chain[n] = PERF_CONTEXT_USER;
	memcpy(r->sp_chain + n + 1, r->sp_user, r->sp_nuser * 8);
	s->callchain = r->sp_chain;
	s->nr_callchain = n + 1 + r->sp_nuser;
}

int pd_sp_jit_path(const char *name)
{
	return name && (strstr(name, "_jit_app_cache:") || strstr(name, "_jit_zygote_cache:"));
}

/* Records looked at for the tracing data and kernel symbols before the first sample:
 * simpleperf writes them among the first records of the data section. */
#define TRACING_SCAN_MAX 4096

/* File format of simpleperf's TRACING_DATA (32777, and 66 as it writes it):
 *	u32 data_size; u8 data[data_size]; padding to 64 bytes. */
static void take_tracing(struct perf_reader *r, const uint8_t *p, uint64_t size)
{
	uint64_t n;

	if (size < 12)
		return;
	n = ld32(p + 8, r->swapped);
	if (n <= size - 12 && n) {
		r->tracing = p + 12;
		r->tracing_len = (size_t)n;
	}
}

/* File format of KERNEL_SYMBOL (32769), simpleperf's copy of /proc/kallsyms:
 *	u32 kallsyms_size; char kallsyms[kallsyms_size]; padding to 8 bytes.
 * Its text is the kernel's table when FILE/FILE2 has none; 1 when it was looked at. */
static int take_kallsyms(struct perf_reader *r, const uint8_t *p, uint64_t size)
{
	uint64_t n;

	if (size < 12)
		return 1;
	n = ld32(p + 8, r->swapped);
	/* out of memory: the recording is read without those names */
	if (n <= size - 12 && n && sp_read_kallsyms(&r->sp, (const char *)p + 12, (size_t)n) > 0)
		sp_info_finish(&r->sp);
	return 1;
}

void pd_sp_find_tracing(struct perf_reader *r, const struct pd_file *f)
{
	const uint8_t *p = f->base;
	uint64_t pos = f->start;
	int sw = r->swapped, ksyms_done = sp_info_kernel(&r->sp) != NULL;

	for (int k = 0; k < TRACING_SCAN_MAX && (!r->tracing || !ksyms_done) && f->end - pos >= 8;
	     k++) {
		uint32_t type = ld32(p + pos, sw);
		uint64_t ext = pd_rec_extent(p + pos, ld16(p + pos + 6, sw), sw, f->end - pos);

		if (ext < 8 || ext > f->end - pos || type == PERF_RECORD_SAMPLE)
			return;
		if ((type == SP_RECORD_TRACING_DATA ||
		     (type == PERF_RECORD_HEADER_TRACING_DATA && ext == ld16(p + pos + 6, sw))) &&
		    !r->tracing) {
			take_tracing(r, p + pos, ext);
		} else if (type == SP_RECORD_KERNEL_SYMBOL && !ksyms_done) {
			ksyms_done = take_kallsyms(r, p + pos, ext);
		} else if (type == SP_RECORD_SPLIT) {
			/* the pieces' bodies joined are one record, to SPLIT_END */
			uint64_t q = pos, len = 0;
			uint8_t *joined;

			while (f->end - q >= 8 && ld32(p + q, sw) == SP_RECORD_SPLIT) {
				uint64_t e = pd_rec_extent(p + q, ld16(p + q + 6, sw), sw, f->end - q);

				if (e < 8 || e > f->end - q)
					return;
				len += e - 8;
				q += e;
			}
			if (f->end - q < 8 || ld32(p + q, sw) != SP_RECORD_SPLIT_END || len < 12 ||
			    !(joined = malloc(len)))
				return;
			len = 0;
			for (uint64_t at = pos; at < q;) {
				uint64_t e = pd_rec_extent(p + at, ld16(p + at + 6, sw), sw, f->end - at);

				memcpy(joined + len, p + at + 8, e - 8);
				len += e - 8;
				at += e;
			}
			if (ld32(joined, sw) == SP_RECORD_TRACING_DATA && !r->tracing) {
				take_tracing(r, joined, len);
				if (r->tracing) {
					r->sp_tracing = joined;
					joined = NULL;
				}
			} else if (ld32(joined, sw) == SP_RECORD_KERNEL_SYMBOL && !ksyms_done) {
				ksyms_done = take_kallsyms(r, joined, len);
			}
			free(joined);
			ext = q - pos;
		}
		pos += ext;
	}
}
