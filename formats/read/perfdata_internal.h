/* perfdata_internal: what the parts of the perf.data reader share; not for callers.
 *
 * The reader (formats/read/perfdata.h) is split by job, as libbpf's libbpf_internal.h and
 * linux-perf-data's file_reader/header/features/record split it:
 *	perfdata_input.c	the input: a file mapped, a --threads directory
 *	perfdata_spool.c	a pipe spooled, framed as it comes
 *	perfdata_events.c	the events: attrs, their ids and names
 *	perfdata_header.c	the file and pipe headers and the feature sections
 *	perfdata_record.c	one record's bytes decoded into a struct perf_record
 *	perfdata_types.c	one row per record type: name, sizes, fields
 *	perfdata_stream.c	framing: plausible headers, resync, zstd, pages let go
 *	perfdata.c		iteration, passes, open and close
 *	perfdata_simpleperf.c	simpleperf's own record types (>= 32768)
 * Every size is checked against the bytes left before anything is read.
 */
#ifndef PERFCONV_PERFDATA_INTERNAL_H
#define PERFCONV_PERFDATA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#define ZSTD_STATIC_LINKING_ONLY /* the buffer-less decoder: ZSTD_decompressContinue */
#include <zstd.h>

#include "common/bytes.h"
#include "common/diag.h"
#include "formats/read/perfdata.h"
#include "formats/read/simpleperf.h"

#define FILE_HEADER_SIZE 104
#define FILE_HEADER_SIZE_NOFEAT 72 /* before the features bitmap existed */
#define PIPE_HEADER_SIZE 16
#define ATTR_SIZE_VER0 64
#define REC_MAX 65536
#define DBUF_CHUNK (1u << 20)
#define MAX_FILES 4096

/* simpleperf's record types (AOSP system/extras, simpleperf/record.h): its header is
 * { u32 type; u16 size1; u16 size0; }, the size (size1 << 16 | size0) with its high
 * half where perf has misc. Records over 65535 bytes are written as SPLIT pieces (of
 * any size, not whole u64 words) ended by a SPLIT_END. */
#define SP_RECORD_KERNEL_SYMBOL 32769
#define SP_RECORD_SPLIT 32772
#define SP_RECORD_SPLIT_END 32773
#define SP_RECORD_EVENT_ID 32774
#define SP_RECORD_CALLCHAIN 32775
#define SP_RECORD_TRACING_DATA 32777
#define SP_RECORD_FIRST SP_RECORD_KERNEL_SYMBOL
#define SP_RECORD_LAST 32778 /* DEBUG */

/* The identity fields a sample_id_all trailer can hold. */
#define S_TRAILER (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | \
		   PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/*
 * Let go of the mapped pages behind what a pass has read, a step at a time; below
 * RELEASE_MIN a file stays mapped whole: read twice (two passes), its pages let go
 * of in the first are faulted in again in the second, which costs more than they
 * weigh. At 8 MB a 4 MB recording (bench/'s native one) is still mapped whole, and
 * a 10 MB one lets go of 4 steps: 28 MB peak RSS instead of 38 MB. A compressed
 * recording is read once (convert/session.c session_fused): nothing comes back, so
 * it lets go from RELEASE_MIN_Z (a 6 MB --call-graph dwarf one: 15 MB peak RSS
 * instead of 21 MB, and the same as a 10 MB one's).
 */
#define RELEASE_STEP (2u << 20)
#define RELEASE_MIN (8u << 20)
#define RELEASE_MIN_Z (2 * RELEASE_STEP)

struct pd_file {
	char *path;             /* for messages and perf_record.file */
	const uint8_t *base;
	size_t size;
	void *map;              /* ours to unmap; NULL when borrowed */
	size_t maplen;
	uint64_t start, end;    /* the records */
	uint64_t declared_end;  /* where the header says they end */
};

struct pd_event {
	struct perf_event_desc d;
	char *synth;            /* name made from type/config, used when none is given */
};

struct id_ent {
	uint64_t id;
	size_t ev;
};

struct evtype {
	uint64_t config;
	char name[65];
};

struct perf_reader {
	struct diag *d;
	char *path;
	struct pd_file *files;
	size_t nfiles;
	int swapped;
	int sample_id_all;
	int id_pos, is_pos;     /* u64 word of the id in a sample / from a trailer's end */
	struct perf_header_info hdr;
	struct pd_event *ev;
	size_t nev;
	struct id_ent *ids;
	size_t nids;
	struct evtype *evtypes;
	size_t nevtypes;
	int ready;              /* events indexed (pd_finish_events): trailers have a size */
	uint64_t dir_version;   /* feature DIR_FORMAT (0: absent) */
	struct sp_info sp;      /* simpleperf's features FILE, FILE2, META_INFO */
	const uint8_t *tracing; /* the tracing data, borrowed from the input, or NULL */
	size_t tracing_len;
	struct perf_reader_stats stats;

	/* iteration */
	size_t cur;
	uint64_t pos;
	int finished;
	uint64_t seq;           /* file records consumed in this pass */
	uint64_t warned_seq;    /* warnings up to here were printed in an earlier pass */
	uint64_t released;      /* the current file's pages below this were let go */
	uint64_t plausible_at;  /* the header at this offset - 1 of the current file is
				   plausible (0: none known) */
	uint64_t index;         /* records framed in this pass, returned or not */
	uint32_t skip_type;     /* records of this type are not decoded (0: none) */
	uint32_t prev_skip;     /* skip_type of the pass before: not warned about then */
	uint64_t skip_from;     /* index from which skip_type held in this pass */
	uint64_t prev_skip_from;/* the same of the pass before */
	uint32_t cur_type;      /* of the record being decoded */

	/* decompression: zstd's buffer-less decoder writes each block straight into dbuf,
	 * where the records are read in place (see pd_zfill) */
	ZSTD_DCtx *zd;
	const uint8_t *zin;
	size_t zin_len, zin_pos;
	uint64_t zoff;
	int zmore, zbroken;
	uint8_t *dbuf;
	size_t dcap, dhead, dlen;
	const uint8_t *dbuf_faulted; /* dbuf, once its pages were made (prefault) */
	uint8_t *zstage;        /* a unit of input that straddles two payloads, gathered */
	size_t zstage_len, zstage_cap;
	uint8_t zhead[ZSTD_FRAMEHEADERSIZE_MAX]; /* the frame header being read (in units) */
	size_t zhead_len;
	uint64_t zskip;         /* bytes of a skippable frame still to pass over */
	/* called before a range of dbuf is written over or moved (or NULL) */
	void (*reuse)(void *, const void *, const void *);
	void *reuse_arg;
	/* told the identity of each sample skipped (skip_type), or NULL */
	void (*skipped_sample)(void *, uint64_t, const struct perf_sample_id *);
	void *skipped_arg;

	uint64_t *cc;           /* REC_MAX / 8 entries */
	struct perf_branch_entry *br; /* REC_MAX bytes: a sample's branch entries, when
				   they must be swapped or aligned */
	uint64_t regs_user[64]; /* a sample's REGS_USER values, in host byte order */
	/* simpleperf's CALLCHAIN record (its joined user stack) waiting for the sample
	 * of the same pid, tid and time that follows it */
	uint64_t *sp_chain;     /* REC_MAX / 8 entries: the sample's chain, joined */
	uint64_t *sp_user;      /* REC_MAX / 8 entries: the record's user ips */
	uint64_t sp_nuser, sp_time;
	uint32_t sp_pid, sp_tid;
	int sp_pending;
	uint8_t *sp_tracing;    /* simpleperf's tracing data joined from SPLIT records */
	char *str;              /* REC_MAX + 1 bytes */
};

/* ---- framing helpers, on every record's path ---- */

/* One of simpleperf's record types. */
static inline int pd_type_simpleperf(uint32_t type)
{
	return type >= SP_RECORD_FIRST && type <= SP_RECORD_LAST;
}

/* ---- perfdata_types.c: one row per record type ---- */

/* What the reader does with a type besides its own counts and fields. */
enum {
	PD_SAMPLE = 1,      /* laid out by its event's sample_type (decode_sample) */
	PD_USER = 2,        /* perf's own (64 and up): no sample_id_all trailer */
	PD_WITH_HEADER = 4, /* read with the header (pd_read_header): passed over */
	PD_NESTED = 8,      /* compressed data: inside compressed data it is damage */
	PD_AUX = 16,        /* counted as AUX data (perf_reader_stats.aux_*) */
};

/* str of an MMAP2: where its filename starts depends on the kernel (pd_mmap2_name_at) */
#define PD_STR_MMAP2 0xffff

struct pd_rec_type {
	const char *name;   /* "PERF_RECORD_MMAP", ...; NULL: a type this reader does not know */
	uint16_t min_body;  /* the decoded fields' size after the 8-byte header (pd_rec_min) */
	/* how the record's own counts agree with its size, trailer excluded (one of the
	 * three, or none: anything goes): */
	uint16_t fixed;     /* its fields are this many bytes (0: not fixed) */
	uint16_t str;       /* a NUL-terminated string padded to 8 starts here and ends it */
	/* counts of its own: 1 or 0, or -1 after setting *fixed (the trailer then checked) */
	int (*counts)(const struct perf_reader *r, const uint8_t *p, uint16_t size,
		      size_t *fixed);
	uint8_t flags;      /* PD_* */
	uint16_t string;    /* offset in struct perf_record of the string it borrows, or 0 */
	/* the fields after the header, `body` bytes (its trailer excluded), read in the
	 * file's byte order into rec->u; NULL: none kept */
	void (*fields)(struct perf_reader *r, const uint8_t *p, size_t body,
		       struct perf_record *rec);
};

extern const struct pd_rec_type pd_rec_types[PERF_RECORD_TYPES];

/* Where an MMAP2 record's filename starts: 72, or 64 as kernels 3.12 to 3.15 wrote it. */
size_t pd_mmap2_name_at(const struct perf_reader *r, const uint8_t *p, size_t size);

/* A record type this reader knows (the kernel's 1-21, perf's 64-83, simpleperf's): the
 * rows of pd_rec_types[] with a name. Compared as ranges, not read from the table: it
 * is asked of every record framed, and a load there was 0.1% of a warm conversion's
 * instructions. */
static inline int pd_type_known(uint32_t type)
{
	return (type >= PERF_RECORD_MMAP && type <= PERF_RECORD_AUX_OUTPUT_HW_ID) ||
	       (type >= PERF_RECORD_HEADER_ATTR && type <= PERF_RECORD_COMPRESSED2) ||
	       pd_type_simpleperf(type);
}

/* Fixed part of the records we decode, header included. */
static inline unsigned pd_rec_min(uint32_t type)
{
	return 8u + (type < PERF_RECORD_TYPES ? pd_rec_types[type].min_body : 0u);
}

/*
 * How many bytes a record takes in the stream: its size, plus for TRACING_DATA
 * and AUXTRACE the data perf writes after the record itself.
 */
static inline uint64_t pd_rec_extent(const uint8_t *p, uint16_t size, int sw, uint64_t avail)
{
	uint32_t type = ld32(p, sw);

	/* the length field after the header is read only when the header's size says
	 * it is there and the bytes are: a size past them is cut short anyway */
	if (pd_type_simpleperf(type))
		return (uint64_t)ld16(p + 4, sw) << 16 | size;
	if (size > avail)
		return size;
	if (type == PERF_RECORD_HEADER_TRACING_DATA && size >= 12) {
		uint64_t n = ld32(p + 8, sw);

		/* simpleperf writes the data inside the record (aligned to 64), perf after
		 * a record of 16 bytes */
		if (n <= (uint64_t)size - 12 && size > 16)
			return size;
		return size + ((n + 7) & ~7ULL);
	}
	if (type == PERF_RECORD_AUXTRACE && size >= 16) {
		uint64_t n = ld64(p + 8, sw);

		return n > UINT64_MAX - size ? UINT64_MAX : size + n;
	}
	return size;
}

/* ---- perfdata.c: passes ---- */

/* A warning about the record at `off` of `path`, printed once even when a later pass
 * meets the record again. */
__attribute__((format(printf, 4, 5)))
void pd_warn(struct perf_reader *r, const char *path, uint64_t off, const char *fmt, ...);
/* The file of the record being read (of a --threads directory: its data.N). */
const char *pd_cur_path(const struct perf_reader *r);

/* ---- perfdata_input.c: the input ---- */

/* Map `fd` (regular file) or spool it (pipe, terminal, fifo) first; with `regular`,
 * only a regular file will do (a --threads directory's data.N has no magic to check).
 * 0, or -1 after one error through `d`. */
int pd_map_fd(struct perf_reader *r, int fd, const char *name, struct pd_file *f, int regular);
int pd_map_path(struct perf_reader *r, const char *path, const char *name, struct pd_file *f,
		int regular);
void pd_free_file(struct pd_file *f);
/* A new zeroed file of `path` at the end of r->files; NULL when out of memory. */
struct pd_file *pd_add_file(struct perf_reader *r, const char *path);
/* `perf record --threads`: DIR/data holds the header, DIR/data.N the records, each file
 * read once. 0 or -1. */
int pd_open_dir(struct perf_reader *r, const char *dir);

/* ---- perfdata_spool.c: a pipe ---- */

/* Spool `fd` to an unlinked temporary file and map it into `f`, framing the records as
 * they come (r->swapped is set from the magic): the spool ends where the bytes stop
 * being perf.data, with a warning. 0, or -1 after one error through r->d. */
int pd_spool(struct perf_reader *r, int fd, const char *name, struct pd_file *f);

/* ---- perfdata_events.c: events, ids and names ---- */

/* One attr of `sz` bytes at p appended to r->ev; -1 when out of memory. */
int pd_add_event(struct perf_reader *r, const uint8_t *p, uint32_t sz);
/* `n` u64 ids at p (in the file's byte order) given to `e`; -1 when out of memory. */
int pd_add_ids(struct perf_event_desc *e, const uint8_t *p, size_t n, int sw);
/* The event an id selects, -1 for none (after pd_finish_events). */
int pd_find_id(const struct perf_reader *r, uint64_t id);
/* Name event `ev` (when in range and not named yet) from at most `max` bytes. */
void pd_set_event_name(struct perf_reader *r, int ev, const char *name, size_t max);
/* After all attrs are in: index the ids, check that they agree. 0 or -1. */
int pd_finish_events(struct perf_reader *r);
/* Events the recording does not name get perf's generic names. */
void pd_name_events(struct perf_reader *r);

/* ---- perfdata_header.c: headers and features ---- */

/* Read the header of files[0], whatever mode it is in. 0, or -1 after one error. */
int pd_read_header(struct perf_reader *r);
/* One build id entry (a HEADER_BUILD_ID record, or one of feature BUILD_ID). */
int pd_add_build_id(struct perf_reader *r, const uint8_t *p, size_t size);

/* ---- perfdata_record.c: decoding ---- */

/* A record type's name for a message; returned by value, so no buffer is shared:
 * the caller's pd_rec_name(t).s lives to the end of its full expression (C11 6.2.4). */
struct rec_label {
	char s[40];
};
struct rec_label pd_rec_name(uint32_t type);
/* Do the record's own counts (nr, a string's NUL and padding, a fixed layout, the
 * sample_id_all trailer) agree with its size? 1 also when it is too small to tell
 * (pd_decode() reports that) or of a type without such counts. Before the events are
 * indexed (while the pipe header is read), trailers of any size are allowed. */
int pd_rec_consistent(const struct perf_reader *r, const uint8_t *p, uint16_t size);
/* Decode the record of `size` bytes at p (file offset `off`). 1 when *rec is to be
 * returned, 0 when consumed or skipped, -1 on error. */
int pd_decode(struct perf_reader *r, const uint8_t *p, uint16_t size, uint64_t off,
	      struct perf_record *rec);
/* The pid, tid and time of the sample record at p as pd_decode() would find them
 * (the fields before the rest of the sample): 1, or 0 when its bytes cannot say. */
int pd_sample_identity(const struct perf_reader *r, const uint8_t *p, uint16_t size,
		       struct perf_sample_id *sid);

/* ---- perfdata_simpleperf.c: simpleperf's records ---- */

/* Is simpleperf's record at p, of `ext` bytes, whole by its own counts? */
int pd_sp_consistent(const struct perf_reader *r, const uint8_t *p, uint64_t ext);
/* Take simpleperf's record at p (`ext` bytes): a CALLCHAIN is kept for its sample,
 * the rest are passed over (their content is in the features or of no use here).
 * Never returned as a record. */
void pd_sp_record(struct perf_reader *r, const uint8_t *p, uint64_t ext);
/* The sample just decoded into *rec: when a CALLCHAIN record of its pid, tid and time
 * came before it and its own callchain has no user part, the record's user stack is
 * joined to it (what simpleperf's record -g writes when its joiner is on). */
void pd_sp_join(struct perf_reader *r, struct perf_record *rec);
/* A mapping of simpleperf's JIT symbol file ("perf.data_jit_app_cache:15480-17544",
 * "..._jit_zygote_cache:..."): one method a mapping, whose symbol in FILE/FILE2 is at
 * the code's address, so the reader gives it pgoff = start (simpleperf's
 * JITDebugReader::IsPathInJITSymFile). */
int pd_sp_jit_path(const char *name);
/* A simpleperf recording's tracing data, which it writes as a record (TRACING_DATA
 * 32777 or 66 with the data inside, SPLIT when large) among the first of the data
 * section, not as a feature: r->tracing set when found before the first sample (a
 * joined SPLIT copied to r->sp_tracing). Its KERNEL_SYMBOL record likewise (SPLIT
 * when large): the kernel's table in r->sp when its features hold none. */
void pd_sp_find_tracing(struct perf_reader *r, const struct pd_file *f);

/* ---- perfdata_stream.c: framing, resync, decompression, pages ---- */

/* Is there a plausible record header at p (rem bytes left)? */
int pd_header_ok(const struct perf_reader *r, const uint8_t *p, uint64_t rem);
/* How the bytes at p (`rem` bytes left) are framed (pd_frame). */
struct pd_frame {
	enum {
		PD_RECORD,      /* a record of `len` bytes (more than rem: cut short) */
		PD_UNKNOWN_RUN, /* `n` records of an unknown type, `len` bytes in all */
		PD_DAMAGE,      /* damage: the next plausible record is `len` bytes on
				   (rem: none) */
		PD_OVERSIZED,   /* damage: a plausible record whose size leads into the
				   middle of the next one, which is `len` bytes on */
	} kind;
	uint64_t len, n;
	int next_plausible;     /* PD_RECORD: the header `len` bytes on is plausible */
};
/* Frame the record at p without reading it: the same answer in every pass and for the
 * pipe header's scan. rem >= 8. `plausible`: pd_header_ok() said so already (the
 * next_plausible of the record before). */
void pd_frame(const struct perf_reader *r, const uint8_t *p, uint64_t rem, int plausible,
	      struct pd_frame *fr);
/* Damage at `off` of `f`: counted, warned about, and r->pos moved `q` bytes on. */
void pd_skip_damage(struct perf_reader *r, struct pd_file *f, const uint8_t *p, uint64_t off,
		    uint64_t q, uint64_t rem);
/* Let go of the current file's mapped pages before `off`. */
void pd_release_behind(struct perf_reader *r, const struct pd_file *f, uint64_t off);
/* Forget the compressed data being inflated (a new file, a new pass). */
void pd_reset_stream(struct perf_reader *r);
/* dbuf[lo, hi) is about to be written over or moved: said first (a caller holding
 * records read in place copies those in the range). */
static inline void pd_reuse(struct perf_reader *r, size_t lo, size_t hi)
{
	if (r->reuse && r->dbuf && hi > lo)
		r->reuse(r->reuse_arg, r->dbuf + lo, r->dbuf + hi);
}
/* Inflate the next chunk of the current compressed record behind what is left. */
void pd_zfill(struct perf_reader *r);
/* The compressed data of the current file is damaged: skip the rest of it. */
void pd_zstop(struct perf_reader *r);
/* A COMPRESSED or COMPRESSED2 record: its payload becomes the input of pd_zfill.
 * 0, or -1 after an error. */
int pd_start_compressed(struct perf_reader *r, const uint8_t *p, uint16_t size,
			uint64_t off);

#endif
