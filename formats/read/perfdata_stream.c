/* perfdata_stream: framing the records of a data section: each header's plausibility,
 * resync past damage, the zstd stream of COMPRESSED records, and the mapped pages
 * a pass has read let go. */
#include "formats/read/perfdata_internal.h"

#include "common/bytes.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd_errors.h>

/* The most a record of a kernel type with a path or a name can hold: the fields, a
 * path of PATH_MAX and a sample_id trailer. */
#define REC_NAME_MAX (4096 + 64)

/*
 * Is there a plausible record header at p (rem bytes left)? A known type, a size that
 * fits and is not below the type's minimum; the kernel's records are whole u64 words
 * and their paths and names bounded; the record's own counts agree with its size
 * (pd_rec_consistent). What perf checks before it processes a record (session.c) and
 * more, for resynchronizing after damage.
 */
int pd_header_ok(const struct perf_reader *r, const uint8_t *p, uint64_t rem)
{
	uint32_t type;
	uint16_t size;

	if (rem < 8)
		return 0;
	type = ld32(p, r->swapped);
	size = ld16(p + 6, r->swapped);
	/* simpleperf's sizes over 64 KB have any low half (131075: 3), their extent counts */
	if ((pd_type_simpleperf(type) ? pd_rec_extent(p, size, r->swapped, rem) : size) < 8 ||
	    pd_rec_extent(p, size, r->swapped, rem) > rem)
		return 0;
	if (type >= PERF_RECORD_MMAP && type <= PERF_RECORD_AUX_OUTPUT_HW_ID) {
		unsigned min = pd_rec_min(type);

		if (size % 8 || size < min)
			return 0;
		if ((type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 ||
		     type == PERF_RECORD_COMM) && size > min + REC_NAME_MAX)
			return 0;
		/* samples have no counts to check here (pd_decode checks each field) */
		return type == PERF_RECORD_SAMPLE || pd_rec_consistent(r, p, size);
	}
	if (pd_type_simpleperf(type))
		return pd_sp_consistent(r, p, pd_rec_extent(p, size, r->swapped, rem));
	if (type < PERF_RECORD_HEADER_ATTR || type > PERF_RECORD_COMPRESSED2)
		return 0;
	return pd_rec_consistent(r, p, size);
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

/*
 * The first q in [from, limit) where two plausible headers follow each other (or one
 * ends the data), `rem` when there is none. Byte by byte: records need not lie at
 * offsets of whole words (pipe-mode header records of 4 mod 8 bytes and COMPRESSED
 * records of any size put the records after them anywhere).
 */
static uint64_t scan(const struct perf_reader *r, const uint8_t *p, uint64_t rem,
		     uint64_t from, uint64_t limit)
{
	uint64_t q;

	for (q = from; q < limit && q + 8 <= rem; q++)
		if (headers_ok(r, p + q, rem - q))
			return q;
	return rem;
}

/* Types the kernel (below 64) and perf (from 64) may add, which this reader skips by
 * their size; bytes that are not a record header, read as a type, are mostly larger. */
#define UNKNOWN_TYPE_MAX 1024

static int unknown_ok(uint32_t type)
{
	return type && type < UNKNOWN_TYPE_MAX && !pd_type_known(type);
}

/* Is the header at p, which is not plausible, of a type this reader does not know (a
 * newer perf or kernel) with a size of whole u64 words that fits: one to read on to? */
static int unknown_fits(const struct perf_reader *r, const uint8_t *p, uint64_t rem)
{
	uint32_t type;
	uint16_t size;

	if (rem < 8)
		return 0;
	type = ld32(p, r->swapped);
	size = ld16(p + 6, r->swapped);
	return unknown_ok(type) && size >= 8 && size % 8 == 0 && size <= rem;
}

/*
 * A plausible record whose successor is not: when two plausible headers stand inside
 * its extent, its size is what is damaged (too large, it took the start of the next
 * record along: damage); otherwise the damage is in the next record, framed from there.
 */
__attribute__((noinline))
static void frame_next_bad(const struct perf_reader *r, const uint8_t *p, uint64_t rem,
			   uint64_t ext, struct pd_frame *fr)
{
	uint64_t q;

	if (!unknown_fits(r, p + ext, rem - ext) && (q = scan(r, p, rem, 8, ext)) < ext) {
		fr->kind = PD_OVERSIZED;
		fr->len = q;
	}
}

/*
 * A record that is not plausible: one whose size leads to two plausible headers is
 * trusted: of an unknown type (a newer perf or kernel), a run of them is skipped by
 * their sizes and counted; of a known type whose own counts agree with its size,
 * pd_decode() says what is wrong. Anything else (a size below 8 too) is damage: the
 * reader moves on to where two plausible headers follow each other.
 */
__attribute__((noinline))
static void frame_bad(const struct perf_reader *r, const uint8_t *p, uint64_t rem,
		      struct pd_frame *fr)
{
	uint32_t type = ld32(p, r->swapped);
	uint16_t size = ld16(p + 6, r->swapped);
	uint64_t ext = fr->len;
	int known = pd_type_known(type);

	if (ext > rem && ((known && size % 8 == 0) || unknown_ok(type)))
		return; /* the data section's end cut it: reported as such */
	if (size >= 8 && size % 8 == 0 && known && ext < rem && pd_rec_consistent(r, p, size) &&
	    headers_ok(r, p + ext, rem - ext))
		return; /* its size leads on to records: too short, pd_decode() says so */
	if (size % 8 == 0 && unknown_ok(type)) {
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
			fr->kind = PD_UNKNOWN_RUN;
			fr->len = at;
			fr->n = n;
			return;
		}
	}
	fr->kind = PD_DAMAGE;
	fr->len = scan(r, p, rem, 8, rem);
}

void pd_frame(const struct perf_reader *r, const uint8_t *p, uint64_t rem, int plausible,
	      struct pd_frame *fr)
{
	uint64_t ext = pd_rec_extent(p, ld16(p + 6, r->swapped), r->swapped, rem);

	fr->kind = PD_RECORD;
	fr->len = ext;
	fr->n = 1;
	fr->next_plausible = 0;
	if (!plausible && !pd_header_ok(r, p, rem)) {
		frame_bad(r, p, rem, fr);
		return;
	}
	if (ext < rem) {
		fr->next_plausible = pd_header_ok(r, p + ext, rem - ext);
		if (!fr->next_plausible)
			frame_next_bad(r, p, rem, ext, fr);
	}
}

void pd_skip_damage(struct perf_reader *r, struct pd_file *f, const uint8_t *p, uint64_t off,
		    uint64_t q, uint64_t rem)
{
	r->stats.skipped_bad++;
	r->stats.resync_bytes += q;
	pd_warn(r, f->path, off, "%s: damaged record (size %u): %llu bytes skipped to %s "
		"0x%llx", pd_rec_name(ld32(p, r->swapped)).s, ld16(p + 6, r->swapped),
		(unsigned long long)q,
		q == rem ? "the end of the data at" : "the next plausible record at offset",
		(unsigned long long)(off + q));
	r->pos = off + q;
}

void pd_reset_stream(struct perf_reader *r)
{
	r->zin = NULL;
	r->zin_len = r->zin_pos = 0;
	r->zmore = r->zbroken = 0;
	r->dhead = r->dlen = 0;
	r->zstage_len = r->zhead_len = 0;
	r->zskip = 0;
	if (r->zd)
		ZSTD_decompressBegin(r->zd);
}

/*
 * Let go of the mapped pages before `off`, which this pass has read: a read-only
 * file mapping gives them back on the next touch (from the page cache), so nothing
 * borrowed from them breaks, and the resident size of a reader of a large file
 * stays at a step instead of growing to the file's size (RELEASE_STEP, RELEASE_MIN:
 * perfdata_internal.h).
 */
void pd_release_behind(struct perf_reader *r, const struct pd_file *f, uint64_t off)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t from = (r->released + page - 1) / page * page, to = off / page * page;

	if (to > from)
		madvise((uint8_t *)f->map + from, (size_t)(to - from), MADV_DONTNEED);
	r->released = to;
}

void pd_zstop(struct perf_reader *r)
{
	r->stats.skipped_bad++;
	r->zbroken = 1;
	r->zin = NULL;
	r->zmore = 0;
	r->dhead = r->dlen = 0;
}

/* What zstd's streaming decoder refuses by default (ZSTD_WINDOWLOG_LIMIT_DEFAULT): a
 * window this large needs a buffer this large. */
#define ZWINDOW_MAX ((size_t)1 << 27)

static void zwarn(struct perf_reader *r, const char *why)
{
	pd_warn(r, pd_cur_path(r), r->zoff, "%s: zstd: %s, the compressed data of this file "
		"is skipped from here", pd_rec_name(PERF_RECORD_COMPRESSED).s, why);
	pd_zstop(r);
}

/* `*buf` of `*cap` bytes made at least `want` (contents kept): 0, or -1 with the
 * compressed data given up. */
static int grow_to(struct perf_reader *r, uint8_t **buf, size_t *cap, size_t want)
{
	uint8_t *g;

	if (*cap >= want)
		return 0;
	g = realloc(*buf, want);
	if (!g) {
		zwarn(r, "out of memory");
		return -1;
	}
	*buf = g;
	*cap = want;
	return 0;
}

/* The frame header in r->zhead is whole: room for its window and a block. A frame
 * starts, with no history before it, so dbuf may move. */
static void frame_begins(struct perf_reader *r)
{
	ZSTD_frameHeader fh;
	size_t len = r->zhead_len, want;

	r->zhead_len = 0;
	if (ZSTD_getFrameHeader(&fh, r->zhead, len) != 0 || fh.frameType != ZSTD_frame)
		return;
	if (fh.windowSize > ZWINDOW_MAX) {
		zwarn(r, ZSTD_getErrorString(ZSTD_error_frameParameter_windowTooLarge));
		return;
	}
	want = (size_t)fh.windowSize + REC_MAX + ZSTD_BLOCKSIZE_MAX;
	if (r->dcap < want)
		pd_reuse(r, 0, r->dcap); /* realloc may move it */
	if (grow_to(r, &r->dbuf, &r->dcap, want) == 0 && r->dbuf_faulted != r->dbuf) {
		/* all of it is written, block after block: its pages made at once (270
		 * faults of 1.1 MB, a fault 2 us in a VM) */
		prefault(r->dbuf, r->dcap);
		r->dbuf_faulted = r->dbuf;
	}
}

/*
 * Inflate the next unit of the stream (a frame header, a block, a checksum) behind
 * what is left in dbuf.
 *
 * zstd's streaming decoder inflates into a buffer of its own and copies out: a copy
 * of every byte, twice a run (pass 1 and pass 2; 8 KB of stack a --call-graph dwarf
 * sample). The buffer-less decoder writes each block where it is told and reads the
 * history a block refers to (up to the frame's window back) where it wrote it. So
 * blocks are inflated one after another into dbuf, and when less than a block's room
 * is left, the part of a record not read yet (under REC_MAX bytes) moves to the
 * front and the next block follows it: zstd takes the bytes it wrote before as the
 * older history. dbuf is at least window + REC_MAX + ZSTD_BLOCKSIZE_MAX bytes, so that
 * what moves to the front, and the blocks after it until they make a window, are
 * never where the window's history is.
 */
void pd_zfill(struct perf_reader *r)
{
	size_t need = ZSTD_nextSrcSizeToDecompress(r->zd), left, ret;
	ZSTD_nextInputType_e next;
	const uint8_t *src;

	if (need == 0) { /* a frame ended: another may follow */
		ZSTD_decompressBegin(r->zd);
		r->zhead_len = 0;
		need = ZSTD_nextSrcSizeToDecompress(r->zd);
	}
	left = r->zin_len - r->zin_pos;
	/* a skippable frame's content (up to 4 GB) is passed over, not gathered */
	if (r->zskip) {
		size_t take = r->zskip < left ? (size_t)r->zskip : left;

		r->zin_pos += take;
		r->zskip -= take;
		if (!r->zskip)
			ZSTD_decompressBegin(r->zd);
		return;
	}
	if (!r->zstage_len && left >= need) {
		src = r->zin + r->zin_pos;
		r->zin_pos += need;
	} else {
		/* the unit goes on in the next payload: gathered */
		size_t take = need - r->zstage_len < left ? need - r->zstage_len : left;

		if (grow_to(r, &r->zstage, &r->zstage_cap, need) < 0)
			return;
		memcpy(r->zstage + r->zstage_len, r->zin + r->zin_pos, take);
		r->zstage_len += take;
		r->zin_pos += take;
		if (r->zstage_len < need)
			return;
		src = r->zstage;
		r->zstage_len = 0;
	}
	/* the rest of a skippable frame's header (the magic was the first unit): it
	 * says how long the content to pass over is */
	if (ZSTD_nextInputType(r->zd) == ZSTDnit_skippableFrame) {
		ret = ZSTD_decompressContinue(r->zd, NULL, 0, src, need);
		if (ZSTD_isError(ret)) {
			zwarn(r, ZSTD_getErrorName(ret));
			return;
		}
		r->zskip = ZSTD_nextSrcSizeToDecompress(r->zd);
		if (!r->zskip)
			ZSTD_decompressBegin(r->zd);
		return;
	}
	/* a frame header comes in two units: kept until whole */
	if (ZSTD_nextInputType(r->zd) == ZSTDnit_frameHeader) {
		if (r->zhead_len + need <= sizeof(r->zhead)) {
			memcpy(r->zhead + r->zhead_len, src, need);
			r->zhead_len += need;
		}
		ret = ZSTD_decompressContinue(r->zd, NULL, 0, src, need);
		if (ZSTD_isError(ret)) {
			r->zhead_len = 0;
			zwarn(r, ZSTD_getErrorName(ret));
			return;
		}
		next = ZSTD_nextInputType(r->zd);
		if (next == ZSTDnit_blockHeader)
			frame_begins(r);
		else if (next == ZSTDnit_skippableFrame)
			r->zhead_len = 0; /* the magic kept was a skippable frame's */
		return;
	}
	if (r->dcap - r->dlen < ZSTD_BLOCKSIZE_MAX) {
		size_t avail = r->dlen - r->dhead;

		pd_reuse(r, 0, avail);
		memmove(r->dbuf, r->dbuf + r->dhead, avail);
		r->dhead = 0;
		r->dlen = avail;
	}
	/* the block is given a block's room, the most it inflates to, and writes nowhere
	 * else (its literals too): what it may write over is said first, records
	 * returned about a buffer's length ago, most of them let go of by now */
	pd_reuse(r, r->dlen, r->dlen + ZSTD_BLOCKSIZE_MAX);
	ret = ZSTD_decompressContinue(r->zd, r->dbuf + r->dlen, ZSTD_BLOCKSIZE_MAX, src, need);
	if (ZSTD_isError(ret)) {
		zwarn(r, ZSTD_getErrorName(ret));
		return;
	}
	r->dlen += ret;
	r->zmore = 0;
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
		r->zd = ZSTD_createDCtx();
		if (!r->zd || ZSTD_isError(ZSTD_decompressBegin(r->zd))) {
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
