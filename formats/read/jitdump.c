/* jitdump: a streaming reader of the jit-PID.dump files that JIT runtimes write for perf.
 *
 * Spec: tools/perf/Documentation/jitdump-specification.txt in the Linux tree; perf's
 * reader is tools/perf/util/jitdump.c, its time conversion tools/perf/util/tsc.c.
 *
 * A file is read a window at a time (pread into one buffer, never mapped: a file cut
 * short while it is read gives less to read, not SIGBUS), from the header or from where
 * an earlier read stopped; the size at open time is what is read (a runtime may still
 * be appending to it). Fields are loaded through byte loaders that swap for a dump from
 * the other byte order, so alignment never matters.
 */
#include "formats/read/jitdump.h"

#include "common/bytes.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

#define JITDUMP_MAGIC 0x4A695444u    /* "JiTD" read as a u32 in the writer's order */
#define JITDUMP_MAGIC_SW 0x4454694Au
#define HEADER_MIN 40
#define PREFIX_SIZE 16
#define LOAD_MIN 56                  /* prefix + pid, tid, vma, code_addr, size, index */
#define MOVE_MIN 64
#define DEBUG_MIN 32                 /* prefix + code_addr, nr_entry */
#define UNWIND_MIN 40
#define ENTRY_FIXED 16               /* addr, line, discrim */
#define ENTRY_BEFORE 4096            /* BEAM starts a function's lines in its prologue */
#define ENTRY_AFTER 0x40             /* V8 and LLVM add 0x40 to every entry address */
#define ENTRY_SPAN_UNKNOWN (16u << 20)
#define LINE_MAX_PLAUSIBLE (1u << 24)
#define PEEK_RECORDS 8
#define WINDOW (1u << 20)            /* bytes read at a time from a file */

struct jitdump_reader {
	struct diag *d;
	char *path;
	const uint8_t *base;     /* the whole dump, when reading from memory; else NULL */
	size_t len;
	int fd;                  /* the file, or -1 */
	uint8_t *win;            /* bytes [win_off, win_off + win_len) of the file */
	uint64_t win_off;
	size_t win_len, win_cap;
	int read_failed;         /* a read of the file failed: the stream ends there */
	int own_fd;              /* opened by jitdump_reader_open: closed with the reader */
	int live;                /* JITDUMP_LIVE */
	uint64_t stop_after;     /* jitdump_open.stop_after */
	uint64_t resume;         /* where a later read goes on */
	int sw;
	int have_tc;
	struct jitdump_time_conv tc;
	struct jitdump_header hdr;
	struct jitdump_stats stats;
	size_t pos;
	int finished;
	int warned_unknown;
	struct jitdump_debug_entry *ents;
	size_t ents_cap;
};

/*
 * The bytes [off, off + len) of the dump, or NULL when they are not all there (past
 * the size read at open, or a failed read). Valid until the next call.
 */
static const uint8_t *at(struct jitdump_reader *r, uint64_t off, size_t len)
{
	size_t want;
	ssize_t got;

	if (off > r->len || len > r->len - off)
		return NULL;
	if (r->base)
		return r->base + off;
	if (off >= r->win_off && off + len <= r->win_off + r->win_len)
		return r->win + (off - r->win_off);
	if (r->read_failed)
		return NULL;
	want = len > WINDOW ? len : WINDOW;
	if (want > r->len - off)
		want = r->len - off;
	if (want > r->win_cap) {
		free(r->win);
		r->win = xmalloc(want);
		r->win_cap = want;
	}
	r->win_off = off;
	r->win_len = 0;
	while (r->win_len < want) {
		got = pread(r->fd, r->win + r->win_len, want - r->win_len,
			    (off_t)(off + r->win_len));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		r->win_len += (size_t)got;
	}
	if (r->win_len < len) {
		/* the file shrank while it was read, or cannot be read: what is read is kept */
		r->read_failed = 1;
		r->len = off + r->win_len;
		return NULL;
	}
	return r->win;
}

uint64_t jitdump_tsc_to_perf_time(uint64_t cyc, const struct jitdump_time_conv *tc)
{
	uint64_t quot, rem;
	unsigned shift = tc->time_shift < 64 ? tc->time_shift : 63;

	if (tc->cap_user_time_short)
		cyc = tc->time_cycles + ((cyc - tc->time_cycles) & tc->time_mask);
	quot = cyc >> shift;
	rem = cyc & ((1ULL << shift) - 1);
	return tc->time_zero + quot * tc->time_mult + ((rem * tc->time_mult) >> shift);
}

static const char *rec_name(uint32_t id)
{
	static const char *const names[] = {
		"JIT_CODE_LOAD", "JIT_CODE_MOVE", "JIT_CODE_DEBUG_INFO", "JIT_CODE_CLOSE",
		"JIT_CODE_UNWINDING_INFO",
	};

	return id < sizeof(names) / sizeof(names[0]) ? names[id] : "unknown record";
}

/*
 * File format (all fields in the writer's byte order):
 *   header: u32 magic "JiTD", u32 version, u32 total_size, u32 elf_mach, u32 pad1,
 *           u32 pid, u64 timestamp, u64 flags; total_size may exceed 40 (skip the rest)
 *   then records, each: u32 id, u32 total_size, u64 timestamp, body
 */
static struct jitdump_reader *open_common(struct jitdump_reader *r,
					  const struct jitdump_time_conv *tc)
{
	uint8_t hb[HEADER_MIN];
	const uint8_t *b = hb;
	uint32_t magic;

	/* a file's header read alone: a read that goes on far into the file reads no
	 * window at its start */
	if (r->base)
		b = r->base;
	else if (r->len >= HEADER_MIN && pread(r->fd, hb, HEADER_MIN, 0) != HEADER_MIN)
		r->len = 0;
	if (r->len < HEADER_MIN) {
		diag_error(r->d, r->path, 0, "jitdump header cut short: %zu bytes, need %d",
			   r->len, HEADER_MIN);
		return NULL;
	}
	magic = ld32(b, 0);
	if (magic == JITDUMP_MAGIC_SW)
		r->sw = 1;
	else if (magic != JITDUMP_MAGIC) {
		diag_error(r->d, r->path, 0, "not a jitdump: magic 0x%08x, want 0x%08x (\"JiTD\")",
			   magic, JITDUMP_MAGIC);
		return NULL;
	}
	r->hdr.swapped = r->sw;
	r->hdr.version = ld32(b + 4, r->sw);
	r->hdr.total_size = ld32(b + 8, r->sw);
	r->hdr.elf_mach = ld32(b + 12, r->sw);
	r->hdr.pid = ld32(b + 20, r->sw);
	r->hdr.timestamp = ld64(b + 24, r->sw);
	r->hdr.flags = ld64(b + 32, r->sw);
	if (r->hdr.version != 1) {
		diag_error(r->d, r->path, 4, "unsupported jitdump version %u, want 1",
			   r->hdr.version);
		return NULL;
	}
	if (r->hdr.total_size < HEADER_MIN || r->hdr.total_size > r->len) {
		diag_error(r->d, r->path, 8,
			   "jitdump header size %u outside 40..%zu (the file size)",
			   r->hdr.total_size, r->len);
		return NULL;
	}
	if (r->hdr.flags & ~JITDUMP_FLAG_ARCH_TIMESTAMP)
		diag_warn(r->d, r->path, 32, "unknown jitdump flags 0x%llx ignored",
			  (unsigned long long)(r->hdr.flags & ~JITDUMP_FLAG_ARCH_TIMESTAMP));
	r->hdr.arch_timestamp = (r->hdr.flags & JITDUMP_FLAG_ARCH_TIMESTAMP) != 0;
	if (tc && tc->time_mult) {
		r->have_tc = 1;
		r->tc = *tc;
	}
	r->hdr.times_converted = !r->hdr.arch_timestamp || r->have_tc;
	r->pos = r->resume = r->hdr.total_size;
	return r;
}

/* A read that goes on at `from` (a place an earlier read of the same dump stopped at):
 * after the header, within the file. */
static int start_at(struct jitdump_reader *r, uint64_t from)
{
	if (from == 0)
		return 0;
	if (from < r->hdr.total_size || from > r->len) {
		diag_error(r->d, r->path, from, "jitdump: cannot go on at this offset: the dump "
			   "has %zu bytes, its header %u", r->len, r->hdr.total_size);
		return -1;
	}
	r->pos = r->resume = from;
	r->finished = 0;
	return 0;
}

int jitdump_reader_go_on(struct jitdump_reader *r, uint64_t from)
{
	return start_at(r, from);
}

static struct jitdump_reader *reader_new(const char *name, const struct jitdump_open *o,
					 struct diag *d)
{
	struct jitdump_reader *r = xcalloc(1, sizeof(*r));

	r->d = d;
	r->fd = -1;
	r->path = xstrdup(name ? name : "jitdump");
	r->live = o && (o->flags & JITDUMP_LIVE);
	r->stop_after = o ? o->stop_after : 0;
	return r;
}

struct jitdump_reader *jitdump_reader_open_mem_at(const void *buf, size_t len, const char *name,
						  const struct jitdump_open *o, struct diag *d)
{
	struct jitdump_reader *r = reader_new(name, o, d);

	r->base = buf;
	r->len = len;
	if (!open_common(r, o ? o->tc : NULL) || start_at(r, o ? o->from : 0) != 0) {
		jitdump_reader_close(r);
		return NULL;
	}
	return r;
}

struct jitdump_reader *jitdump_reader_open_mem(const void *buf, size_t len, const char *name,
					       const struct jitdump_time_conv *tc,
					       struct diag *d)
{
	struct jitdump_open o = { .tc = tc };

	return jitdump_reader_open_mem_at(buf, len, name, &o, d);
}

struct jitdump_reader *jitdump_reader_open_fd(int fd, const char *name,
					      const struct jitdump_open *o, struct diag *d)
{
	struct jitdump_reader *r = reader_new(name, o, d);
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		diag_error(d, r->path, DIAG_NO_OFFSET, "cannot read the jitdump: %s",
			   errno && !S_ISREG(st.st_mode) ? "not a regular file" : strerror(errno));
		jitdump_reader_close(r);
		return NULL;
	}
	r->fd = fd;
	r->len = (size_t)st.st_size;
	if (!open_common(r, o ? o->tc : NULL) || start_at(r, o ? o->from : 0) != 0) {
		r->fd = -1; /* the caller's */
		jitdump_reader_close(r);
		return NULL;
	}
	return r;
}

struct jitdump_reader *jitdump_reader_open(const char *path, const struct jitdump_time_conv *tc,
					   struct diag *d)
{
	struct jitdump_open o = { .tc = tc };
	struct jitdump_reader *r;
	/* a FIFO by that name would block an open without O_NONBLOCK */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0) {
		diag_error(d, path, DIAG_NO_OFFSET, "cannot open: %s", strerror(errno));
		return NULL;
	}
	r = jitdump_reader_open_fd(fd, path, &o, d);
	if (!r) {
		close(fd);
		return NULL;
	}
	r->own_fd = 1;
	return r;
}

void jitdump_reader_close(struct jitdump_reader *r)
{
	if (!r)
		return;
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	free(r->win);
	free(r->ents);
	free(r->path);
	free(r);
}

uint64_t jitdump_reader_resume(const struct jitdump_reader *r)
{
	return r->resume;
}

const struct jitdump_header *jitdump_reader_header(const struct jitdump_reader *r)
{
	return &r->hdr;
}

void jitdump_reader_bounds(const struct jitdump_reader *r, uint64_t *loads, uint64_t *entries)
{
	size_t left = r->len - r->pos;

	*loads = left / (LOAD_MIN + 1);
	*entries = left / (ENTRY_FIXED + 1);
}

const struct jitdump_stats *jitdump_reader_stats(const struct jitdump_reader *r)
{
	return &r->stats;
}


/* Non-empty, printable, well-formed UTF-8. */
static int text_ok(const uint8_t *s, size_t n)
{
	size_t i = 0;

	if (n == 0)
		return 0;
	while (i < n) {
		uint8_t c = s[i];
		size_t k, more;

		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f)
				return 0;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			more = 1;
		else if (c >= 0xe0 && c <= 0xef)
			more = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			more = 3;
		else
			return 0;
		for (k = 1; k <= more; k++)
			if (i + k >= n || (s[i + k] & 0xc0) != 0x80)
				return 0;
		i += more + 1;
	}
	return 1;
}

/*
 * The code size of the CODE_LOAD that a DEBUG_INFO ending at `q` describes: producers
 * write DEBUG_INFO (and UNWINDING_INFO) just before the load. 0 when not found; *ended
 * set when the dump ended before the look could say (the load not written yet).
 */
static uint64_t peek_load_size(struct jitdump_reader *r, size_t q, uint64_t code_addr,
			       int *ended)
{
	const uint8_t *b;
	int i;

	*ended = 0;
	for (i = 0; i < PEEK_RECORDS; i++) {
		uint32_t id, size;

		if (!(b = at(r, q, PREFIX_SIZE))) {
			*ended = 1;
			break;
		}
		id = ld32(b, r->sw);
		size = ld32(b + 4, r->sw);
		if (size < PREFIX_SIZE)
			break;
		if (size > r->len - q) {
			*ended = 1;
			/* a dump read whole that ends inside the load: its fixed part will do
			 * (a live one's DEBUG_INFO waits for the whole load instead) */
			if (!r->live && id == JITDUMP_CODE_LOAD && r->len - q >= LOAD_MIN &&
			    (b = at(r, q, LOAD_MIN)) && ld64(b + 32, r->sw) == code_addr)
				return ld64(b + 40, r->sw);
			break;
		}
		if (id == JITDUMP_CODE_LOAD && size >= LOAD_MIN) {
			b = at(r, q, LOAD_MIN);
			if (b && ld64(b + 32, r->sw) == code_addr)
				return ld64(b + 40, r->sw);
			break;
		}
		if (id == JITDUMP_CODE_DEBUG_INFO)
			break;
		q += size;
	}
	return 0;
}

/* An entry at p: 1 when it fits before `end`, its file ends in a NUL there, its address
 * lies in [lo, hi] and its line is plausible. */
static int entry_at(const struct jitdump_reader *r, const uint8_t *p, const uint8_t *end,
		    uint64_t lo, uint64_t hi, uint64_t *addr, uint32_t *line, const uint8_t **nul)
{
	if (end - p <= ENTRY_FIXED)
		return 0;
	*addr = ld64(p, r->sw);
	*line = ld32(p + 8, r->sw);
	if (*addr < lo || *addr > hi || *line >= LINE_MAX_PLAUSIBLE)
		return 0;
	*nul = memchr(p + ENTRY_FIXED, 0, (size_t)(end - p - ENTRY_FIXED));
	return *nul != NULL;
}

/*
 * File format of the body: u64 code_addr, u64 nr_entry, then nr_entry entries
 * {u64 addr; u32 line; u32 discrim; char file[] NUL-terminated}, file "\xff" = the
 * previous entry's file; padding may follow.
 *
 * A walk by strlen is what loses entry boundaries when a file name holds a NUL
 * (Node.js 20 writes freed memory into the first 16 bytes of names): each entry is
 * validated, and after one that fails the walk resumes at the next byte where a
 * plausible entry starts, at an address not below the last good one.
 */
static void parse_debug(struct jitdump_reader *r, const uint8_t *rec, uint32_t size,
			uint64_t span, struct jitdump_debug *dbg)
{
	const uint8_t *p = rec + DEBUG_MIN, *end = rec + size;
	uint64_t lo, hi, last_addr = 0;
	const char *prev_file = "";
	int prev_valid = 0, have_last = 0;

	dbg->code_addr = ld64(rec + 16, r->sw);
	dbg->nr_entry = ld64(rec + 24, r->sw);
	dbg->nentries = dbg->nrejected = dbg->nbad_files = 0;
	span = span ? span + ENTRY_AFTER : ENTRY_SPAN_UNKNOWN;
	lo = dbg->code_addr > ENTRY_BEFORE ? dbg->code_addr - ENTRY_BEFORE : 0;
	hi = dbg->code_addr + span < dbg->code_addr ? UINT64_MAX : dbg->code_addr + span;

	while (dbg->nentries < dbg->nr_entry && p < end) {
		struct jitdump_debug_entry *e;
		const uint8_t *nul;
		uint64_t addr;
		uint32_t line;

		if (!entry_at(r, p, end, lo, hi, &addr, &line, &nul)) {
			const uint8_t *q;

			dbg->nrejected++;
			for (q = p + 1; q < end; q++)
				if (entry_at(r, q, end, have_last ? last_addr : lo, hi, &addr, &line,
					     &nul))
					break;
			if (q >= end)
				break;
			p = q;
		}
		if (dbg->nentries >= r->ents_cap)
			grow_array((void **)&r->ents, &r->ents_cap, dbg->nentries + 1,
				   sizeof(*r->ents));
		e = &r->ents[dbg->nentries++];
		e->addr = addr;
		e->line = line;
		e->discrim = ld32(p + 12, r->sw);
		e->file = (const char *)p + ENTRY_FIXED;
		e->same_file = nul - (p + ENTRY_FIXED) == 1 && p[ENTRY_FIXED] == 0xff;
		if (e->same_file) {
			e->file = prev_file;
			e->file_valid = (uint8_t)prev_valid;
		} else {
			e->file_valid = (uint8_t)text_ok(p + ENTRY_FIXED,
							 (size_t)(nul - p - ENTRY_FIXED));
		}
		if (!e->file_valid)
			dbg->nbad_files++;
		prev_file = e->file;
		prev_valid = e->file_valid;
		last_addr = addr;
		have_last = 1;
		p = nul + 1;
	}
	dbg->entries = r->ents;
	r->stats.debug_entries += dbg->nentries;
	r->stats.debug_rejected += dbg->nrejected;
	r->stats.debug_bad_files += dbg->nbad_files;
}

static void finish(struct jitdump_reader *r)
{
	r->finished = 1;
	r->pos = r->len;
}

/*
 * The dump ends inside the record at `off` (`left` bytes of it there; `size` 0: inside
 * its prefix): of a live dump, the part not written yet, read next time; else damage,
 * said.
 */
static int cut_short(struct jitdump_reader *r, size_t off, size_t left, uint32_t id,
		     uint32_t size)
{
	if (r->live) {
		r->stats.pending_bytes = left;
	} else {
		if (size)
			diag_warn(r->d, r->path, off, "%s: record of %u bytes cut short at %zu: "
				  "the dump ends inside it (runtime killed while writing?), "
				  "ignored", rec_name(id), size, left);
		else
			diag_warn(r->d, r->path, off, "jitdump cut short inside a record prefix: "
				  "%zu bytes ignored", left);
		r->stats.truncated_bytes += left;
	}
	r->resume = off;
	finish(r);
	return 0;
}

/* A record's common part: its kind, size, offset and time (TSC converted when the
 * dump's clock is the CPU's and the recording gave the conversion). */
static void record_head(struct jitdump_reader *r, struct jitdump_record *rec, uint32_t id,
			uint32_t size, size_t off, const uint8_t *b)
{
	memset(rec, 0, sizeof(*rec));
	rec->id = id;
	rec->size = size;
	rec->offset = off;
	rec->raw_timestamp = ld64(b + 8, r->sw);
	rec->timestamp = r->hdr.arch_timestamp && r->have_tc
				 ? jitdump_tsc_to_perf_time(rec->raw_timestamp, &r->tc)
				 : rec->raw_timestamp;
}

/* The fields of the CODE_LOAD at `b` (`size` bytes there, its name ending at `nul`). */
static void fill_load(struct jitdump_reader *r, const uint8_t *b, size_t size,
		      const uint8_t *nul, struct jitdump_load *l)
{
	l->pid = ld32(b + 16, r->sw);
	l->tid = ld32(b + 20, r->sw);
	l->vma = ld64(b + 24, r->sw);
	l->code_addr = ld64(b + 32, r->sw);
	l->code_size = ld64(b + 40, r->sw);
	l->code_index = ld64(b + 48, r->sw);
	l->name = (const char *)b + LOAD_MIN;
	if (l->code_size <= size - (size_t)(nul + 1 - b))
		l->code = b + size - l->code_size;
}

/*
 * A dump read whole (not live) that ends inside a CODE_LOAD's code bytes (.NET's and
 * others', the runtime killed while writing): the fixed part and the name are there,
 * and they are all that names the code. 1 with *rec filled (its code NULL) and a
 * warning, then the end; 0 when more than code bytes is missing, or the record's size
 * cannot hold its name and code (damage, not a cut). A later read goes on at the record
 * (jitdump_reader_resume), which it reads whole if it has been written since.
 */
static int cut_load(struct jitdump_reader *r, size_t off, size_t left, uint32_t size,
		    struct jitdump_record *rec)
{
	const uint8_t *b, *nul;
	uint64_t code_size;

	if (r->live || left <= LOAD_MIN || !(b = at(r, off, left)))
		return 0;
	nul = memchr(b + LOAD_MIN, 0, left - LOAD_MIN);
	code_size = ld64(b + 40, r->sw);
	if (!nul || code_size > size - (size_t)(nul + 1 - b))
		return 0;
	record_head(r, rec, JITDUMP_CODE_LOAD, size, off, b);
	fill_load(r, b, left, nul, &rec->u.load);
	rec->u.load.code = NULL; /* not all there */
	diag_warn(r->d, r->path, off, "JIT_CODE_LOAD: record of %u bytes cut short at %zu: "
		  "its code bytes are missing (runtime killed while writing?), its function "
		  "kept: %.200s", size, left, rec->u.load.name);
	r->stats.loads++;
	r->stats.cut_loads++;
	r->stats.records++;
	r->resume = off;
	finish(r);
	return 1;
}

int jitdump_reader_next(struct jitdump_reader *r, struct jitdump_record *rec)
{
	for (;;) {
		size_t left, off = r->pos;
		const uint8_t *b;
		uint32_t id, size, min = PREFIX_SIZE;
		uint64_t span = 0;

		if (r->finished || off >= r->len)
			return 0;
		r->resume = off;
		left = r->len - off;
		if (left < PREFIX_SIZE)
			return cut_short(r, off, left, 0, 0);
		b = at(r, off, PREFIX_SIZE);
		if (!b)
			goto unreadable;
		id = ld32(b, r->sw);
		size = ld32(b + 4, r->sw);
		if (size < PREFIX_SIZE) {
			diag_warn(r->d, r->path, off,
				  "%s: record size %u below the 16-byte prefix: the rest of the "
				  "dump (%zu bytes) ignored", rec_name(id), size, left);
			r->stats.truncated_bytes += left;
			finish(r);
			return 0;
		}
		if (size > left && id == JITDUMP_CODE_LOAD && cut_load(r, off, left, size, rec))
			return 1;
		if (size > left)
			return cut_short(r, off, left, id, size);
		if (r->stop_after && r->hdr.times_converted) {
			uint64_t t = ld64(b + 8, r->sw);

			if (r->hdr.arch_timestamp && r->have_tc)
				t = jitdump_tsc_to_perf_time(t, &r->tc);
			if (t > r->stop_after) {
				r->resume = off;
				finish(r);
				return 0;
			}
		}
		if (id == JITDUMP_CODE_DEBUG_INFO && size >= DEBUG_MIN) {
			int ended;

			b = at(r, off, DEBUG_MIN);
			if (!b)
				goto unreadable;
			span = peek_load_size(r, off + size, ld64(b + 16, r->sw), &ended);
			/* its load not written yet: a live dump's DEBUG_INFO waits for it */
			if (!span && ended && r->live && !r->read_failed) {
				r->stats.pending_bytes = left;
				r->resume = off;
				finish(r);
				return 0;
			}
		}
		b = at(r, off, size);
		if (!b)
			goto unreadable;
		r->pos += size;
		r->resume = r->pos;
		switch (id) {
		case JITDUMP_CODE_LOAD: min = LOAD_MIN + 1; break;
		case JITDUMP_CODE_MOVE: min = MOVE_MIN; break;
		case JITDUMP_CODE_DEBUG_INFO: min = DEBUG_MIN; break;
		case JITDUMP_CODE_UNWINDING_INFO: min = UNWIND_MIN; break;
		case JITDUMP_CODE_CLOSE: break;
		default:
			r->stats.unknown++;
			if (!r->warned_unknown++)
				diag_warn(r->d, r->path, off,
					  "unknown jitdump record id %u (%u bytes) skipped", id, size);
			continue;
		}
		if (size < min) {
			diag_warn(r->d, r->path, off, "%s: record size %u below minimum %u, skipped",
				  rec_name(id), size, min);
			r->stats.skipped_bad++;
			continue;
		}
		record_head(r, rec, id, size, off, b);
		switch (id) {
		case JITDUMP_CODE_LOAD: {
			struct jitdump_load *l = &rec->u.load;
			const uint8_t *nul = memchr(b + LOAD_MIN, 0, size - LOAD_MIN);

			if (!nul) {
				diag_warn(r->d, r->path, off,
					  "JIT_CODE_LOAD: function name not terminated within the "
					  "record, skipped");
				r->stats.skipped_bad++;
				continue;
			}
			fill_load(r, b, size, nul, l);
			r->stats.loads++;
			break;
		}
		case JITDUMP_CODE_MOVE: {
			struct jitdump_move *m = &rec->u.move;

			m->pid = ld32(b + 16, r->sw);
			m->tid = ld32(b + 20, r->sw);
			m->vma = ld64(b + 24, r->sw);
			m->old_code_addr = ld64(b + 32, r->sw);
			m->new_code_addr = ld64(b + 40, r->sw);
			m->code_size = ld64(b + 48, r->sw);
			m->code_index = ld64(b + 56, r->sw);
			r->stats.moves++;
			break;
		}
		case JITDUMP_CODE_DEBUG_INFO:
			parse_debug(r, b, size, span, &rec->u.debug);
			r->stats.debug_infos++;
			break;
		case JITDUMP_CODE_UNWINDING_INFO: {
			struct jitdump_unwind *u = &rec->u.unwind;

			u->unwinding_size = ld64(b + 16, r->sw);
			u->eh_frame_hdr_size = ld64(b + 24, r->sw);
			u->mapped_size = ld64(b + 32, r->sw);
			u->data = b + UNWIND_MIN;
			u->data_size = size - UNWIND_MIN;
			r->stats.unwinding_infos++;
			break;
		}
		case JITDUMP_CODE_CLOSE:
			r->stats.closes++;
			break;
		}
		r->stats.records++;
		return 1;
	}
unreadable:
	diag_warn(r->d, r->path, r->pos, "jitdump: the file shrank or could not be read here: "
		  "the rest (%zu bytes) ignored", r->len > r->pos ? (size_t)(r->len - r->pos) : 0);
	finish(r);
	return 0;
}

int jitdump_glance(int fd, const void *buf, size_t len, const struct jitdump_time_conv *tc,
		   struct jitdump_glance *g, char *why, size_t why_size)
{
	struct jitdump_open o = { .tc = tc };
	struct jitdump_reader *r;
	struct jitdump_record rec;
	struct diag d;
	char *said = NULL;
	size_t nsaid = 0;
	FILE *f = open_memstream(&said, &nsaid);
	int ret = -1;

	memset(g, 0, sizeof(*g));
	diag_init(&d);
	d.quiet = 1;
	d.out = f; /* what it would say is the caller's to say, or not */
	r = fd >= 0 ? jitdump_reader_open_fd(fd, "", &o, &d)
		    : jitdump_reader_open_mem_at(buf, len, "", &o, &d);
	if (r) {
		g->hdr = r->hdr;
		r->live = 1; /* a cut last record says nothing here */
		for (int i = 0; i < 64 && jitdump_reader_next(r, &rec) == 1; i++)
			if (rec.id == JITDUMP_CODE_LOAD) {
				g->has_load = 1;
				g->first_load_time = rec.timestamp;
				break;
			}
		jitdump_reader_close(r);
		ret = 0;
	} else if (why_size) {
		/* "perfconv: : offset 0x0: not a jitdump: ..." without the empty name */
		const char *m = d.last_error;

		if (strncmp(m, ": ", 2) == 0)
			m += 2;
		snprintf(why, why_size, "%s", m);
	}
	if (f)
		fclose(f);
	free(said);
	return ret;
}
