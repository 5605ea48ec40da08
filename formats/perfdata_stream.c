/* perfdata_stream: framing the records of a data section: each header's plausibility,
 * resync past damage, the zstd stream of COMPRESSED records, and the mapped pages
 * a pass has read let go. */
#include "formats/perfdata_internal.h"

#include "common/bytes.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * How many bytes a record takes in the stream: its size, plus for TRACING_DATA
 * and AUXTRACE the data perf writes after the record itself.
 */
uint64_t pd_rec_extent(const uint8_t *p, uint16_t size, int sw, uint64_t avail)
{
	uint32_t type = ld32(p, sw);

	/* the length field after the header is read only when the header's size says
	 * it is there and the bytes are: a size past them is cut short anyway */
	if (size > avail)
		return size;
	if (type == PERF_RECORD_HEADER_TRACING_DATA && size >= 12)
		return size + (((uint64_t)ld32(p + 8, sw) + 7) & ~7ULL);
	if (type == PERF_RECORD_AUXTRACE && size >= 16) {
		uint64_t n = ld64(p + 8, sw);

		return n > UINT64_MAX - size ? UINT64_MAX : size + n;
	}
	return size;
}

/* The most a record of a kernel type with a path or a name can hold: the fields, a
 * path of PATH_MAX and a sample_id trailer. */
#define REC_NAME_MAX (4096 + 64)

/*
 * Is there a plausible record header at p (rem bytes left)? A known type, a size that
 * fits and is not below the type's minimum; the kernel's records are whole u64 words
 * and their paths and names bounded; a THREAD_MAP holds exactly its entries. What perf
 * checks before it processes a record (session.c), for resynchronizing after damage.
 */
int pd_header_ok(const struct perf_reader *r, const uint8_t *p, uint64_t rem)
{
	uint32_t type;
	uint16_t size;

	if (rem < 8)
		return 0;
	type = ld32(p, r->swapped);
	size = ld16(p + 6, r->swapped);
	if (size < 8 || pd_rec_extent(p, size, r->swapped, rem) > rem)
		return 0;
	if (type >= PERF_RECORD_MMAP && type <= PERF_RECORD_AUX_OUTPUT_HW_ID) {
		if (size % 8 || size < pd_rec_min(type))
			return 0;
		if ((type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 ||
		     type == PERF_RECORD_COMM) && size > pd_rec_min(type) + REC_NAME_MAX)
			return 0;
		return 1;
	}
	if (type < PERF_RECORD_HEADER_ATTR || type > PERF_RECORD_COMPRESSED2)
		return 0;
	if (type == PERF_RECORD_THREAD_MAP) /* u64 nr; {u64 pid; char comm[16]} [nr] */
		return size >= 16 && ld64(p + 8, r->swapped) == (uint64_t)(size - 16) / 24 &&
		       (size - 16) % 24 == 0;
	return 1;
}

/* A header and the one after it both plausible (or the first ends the data). */
static int headers_ok(const struct perf_reader *r, const uint8_t *p, uint64_t rem)
{
	uint64_t ext;

	if (!pd_header_ok(r, p, rem))
		return 0;
	ext = pd_rec_extent(p, ld16(p + 6, r->swapped), r->swapped, rem);
	return ext == rem || pd_header_ok(r, p + ext, rem - ext);
}


void pd_reset_stream(struct perf_reader *r)
{
	r->zin = NULL;
	r->zin_len = r->zin_pos = 0;
	r->zmore = r->zbroken = 0;
	r->dhead = r->dlen = 0;
	if (r->zd)
		ZSTD_DCtx_reset(r->zd, ZSTD_reset_session_only);
}

/*
 * Let go of the mapped pages before `off`, which this pass has read: a read-only
 * file mapping gives them back on the next touch (from the page cache), so nothing
 * borrowed from them breaks, and the resident size of a reader of a large file
 * stays at a step instead of growing to the file's size.
 */
#define RELEASE_STEP (2u << 20)
/* Below this a file stays mapped whole: letting go costs more (a TLB shootdown on
 * every CPU the process runs on) than its pages weigh. */
#define RELEASE_MIN (16u << 20)

void pd_release_behind(struct perf_reader *r, const struct pd_file *f, uint64_t off)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t from = (r->released + page - 1) / page * page, to = off / page * page;

	if (to > from)
		madvise((uint8_t *)f->map + from, (size_t)(to - from), MADV_DONTNEED);
	r->released = to;
}

/* Inflate the next chunk of the current compressed record behind what is left. */
void pd_zfill(struct perf_reader *r)
{
	size_t avail = r->dlen - r->dhead, before_in = r->zin_pos;
	ZSTD_inBuffer in = { r->zin, r->zin_len, r->zin_pos };
	ZSTD_outBuffer out;
	size_t ret;

	memmove(r->dbuf, r->dbuf + r->dhead, avail);
	r->dhead = 0;
	r->dlen = avail;
	out.dst = r->dbuf + r->dlen;
	out.size = r->dcap - r->dlen;
	out.pos = 0;
	ret = ZSTD_decompressStream(r->zd, &out, &in);
	if (ZSTD_isError(ret)) {
		pd_warn(r, pd_cur_path(r), r->zoff, "%s: zstd: %s, the compressed data of this file "
			"is skipped from here", pd_rec_name(PERF_RECORD_COMPRESSED).s,
			ZSTD_getErrorName(ret));
		r->stats.skipped_bad++;
		r->zbroken = 1;
		r->zin = NULL;
		r->zmore = 0;
		r->dhead = r->dlen = 0;
		return;
	}
	r->zin_pos = in.pos;
	r->dlen += out.pos;
	r->zmore = out.pos == out.size;
	if (out.pos == 0 && in.pos == before_in) {
		r->zin_pos = r->zin_len; /* no progress: give up on this record */
		r->zmore = 0;
	}
}

/*
 * File format (PERF_RECORD_COMPRESSED 81):
 *	struct perf_event_header header; u8 data[header.size - 8];
 * (PERF_RECORD_COMPRESSED2 83, newer perf):
 *	struct perf_event_header header; u64 data_size; u8 data[data_size]; padding
 * The payloads of a file form one zstd stream; a record may straddle two payloads.
 */
int pd_start_compressed(struct perf_reader *r, const uint8_t *p, uint16_t size,
			uint64_t off)
{
	uint32_t type = ld32(p, r->swapped);
	const uint8_t *data = p + 8;
	size_t len = size - 8u;

	r->stats.compressed_records++;
	if (type == PERF_RECORD_COMPRESSED2) {
		uint64_t ds;

		if (size < 16 || (ds = ld64(p + 8, r->swapped)) > size - 16u) {
			r->stats.skipped_bad++;
			pd_warn(r, pd_cur_path(r), off, "PERF_RECORD_COMPRESSED2: data_size does not "
				"fit the record (size %u), skipped", size);
			return 0;
		}
		data = p + 16;
		len = (size_t)ds;
	}
	if (r->zbroken) {
		r->stats.skipped_bad++;
		return 0;
	}
	if (!r->zd) {
		r->zd = ZSTD_createDStream();
		if (!r->zd || ZSTD_isError(ZSTD_initDStream(r->zd))) {
			diag_error(r->d, pd_cur_path(r), off, "cannot set up zstd decompression");
			return -1;
		}
	}
	r->zin = data;
	r->zin_len = len;
	r->zin_pos = 0;
	r->zoff = off;
	r->zmore = 0;
	return 0;
}


/*
 * The record at `off` is not plausible. One whose size leads to two plausible headers
 * is trusted: of an unknown type (a newer perf or kernel), it is skipped by its size
 * and counted; of a known type, pd_decode() says what is wrong. Anything else is damage: the reader moves on to the next offset, in u64 steps, where
 * two plausible headers follow each other, and says how much it passed over. 1 when
 * r->pos moved; 0 to let the caller handle the record (a size cut short by the end).
 */
int pd_resync(struct perf_reader *r, struct pd_file *f, const uint8_t *p, uint64_t off,
	      uint64_t rem)
{
	uint32_t type = ld32(p, r->swapped);
	uint16_t size = ld16(p + 6, r->swapped);
	uint64_t ext = pd_rec_extent(p, size, r->swapped, rem), q;
	int known = (type >= PERF_RECORD_MMAP && type <= PERF_RECORD_AUX_OUTPUT_HW_ID) ||
		    (type >= PERF_RECORD_HEADER_ATTR && type <= PERF_RECORD_COMPRESSED2);

	if (ext > rem && (size % 8 == 0 || !known))
		return 0; /* the data section's end cut it: reported as such */
	if (size % 8 == 0 && known && ext < rem && headers_ok(r, p + ext, rem - ext))
		return 0; /* its size leads on to records: too short, pd_decode() says so */
	if (size % 8 == 0 && !known) {
		/* a run of records of this type, each by its size, then plausible ones */
		uint64_t at = 0, n = 0;

		while (at + 8 <= rem && ld32(p + at, r->swapped) == type) {
			uint16_t sz = ld16(p + at + 6, r->swapped);

			if (sz < 8 || sz % 8 || sz > rem - at)
				break;
			at += sz;
			n++;
		}
		if (n && (at == rem || (rem - at >= 8 && ld32(p + at, r->swapped) != type &&
					headers_ok(r, p + at, rem - at)))) {
			if (!r->stats.first_unknown)
				r->stats.first_unknown = off + 1;
			r->stats.skipped_unknown += n;
			r->pos = off + at;
			return 1;
		}
	}
	for (q = 8; q + 8 <= rem; q += 8)
		if (headers_ok(r, p + q, rem - q))
			break;
	if (q + 8 > rem)
		q = rem;
	r->stats.skipped_bad++;
	r->stats.resync_bytes += q;
	pd_warn(r, f->path, off, "%s: damaged record (size %u): %llu bytes skipped to %s "
		"0x%llx", pd_rec_name(type).s, size, (unsigned long long)q,
		q == rem ? "the end of the data at" : "the next plausible record at offset",
		(unsigned long long)(off + q));
	r->pos = off + q;
	return 1;
}
