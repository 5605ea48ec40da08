/* perfdata: a streaming reader of perf.data, file and pipe mode.
 *
 * Spec: tools/perf/Documentation/perf.data-file-format.txt in the Linux tree; record
 * layouts in include/uapi/linux/perf_event.h. perf's own reader is
 * tools/perf/util/header.c, session.c and evsel.c (evsel__parse_sample).
 *
 * The input is mapped, never read into memory; records are decoded where they lie
 * through byte loaders that swap when the file comes from the other byte order, so
 * alignment never matters. Only a callchain that cannot be borrowed as it is
 * (swapped, or not 8-byte aligned) and a string without its NUL are copied, into
 * buffers allocated once. Compressed records are inflated through one zstd stream
 * per file into a buffer of bounded size, a chunk at a time.
 */
#include "formats/perfdata.h"

#include "common/bytes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define FILE_HEADER_SIZE 104
#define FILE_HEADER_SIZE_NOFEAT 72 /* before the features bitmap existed */
#define PIPE_HEADER_SIZE 16
#define ATTR_SIZE_VER0 64
#define REC_MAX 65536
#define DBUF_CHUNK (1u << 20)
#define MAX_FILES 4096

/* The identity fields a sample_id_all trailer can hold. */
#define S_TRAILER (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | \
		   PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

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
	struct perf_reader_stats stats;

	/* iteration */
	size_t cur;
	uint64_t pos;
	int finished;
	uint64_t seq;           /* file records consumed in this pass */
	uint64_t warned_seq;    /* warnings up to here were printed in an earlier pass */
	uint64_t released;      /* the current file's pages below this were let go */
	uint64_t index;         /* records framed in this pass, returned or not */
	uint32_t skip_type;     /* records of this type are not decoded (0: none) */
	uint32_t prev_skip;     /* skip_type of the pass before: not warned about then */
	uint64_t skip_from;     /* index from which skip_type held in this pass */
	uint64_t prev_skip_from;/* the same of the pass before */
	uint32_t cur_type;      /* of the record being decoded */

	/* decompression */
	ZSTD_DStream *zd;
	const uint8_t *zin;
	size_t zin_len, zin_pos;
	uint64_t zoff;
	int zmore, zbroken;
	uint8_t *dbuf;
	size_t dcap, dhead, dlen;

	uint64_t *cc;           /* REC_MAX / 8 entries */
	uint64_t regs_user[64]; /* a sample's REGS_USER values, in host byte order */
	char *str;              /* REC_MAX + 1 bytes */
};

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

/* A record type's name for a message; returned by value, so no buffer is shared:
 * the caller's rec_name(t).s lives to the end of its full expression (C11 6.2.4). */
struct rec_label {
	char s[40];
};

static struct rec_label rec_name(uint32_t type)
{
	struct rec_label l;

	if (type < sizeof(rec_names) / sizeof(rec_names[0]) && rec_names[type])
		snprintf(l.s, sizeof(l.s), "%s", rec_names[type]);
	else
		snprintf(l.s, sizeof(l.s), "record type %u", type);
	return l;
}

static const char *feat_name(unsigned feat)
{
	static const char *const names[] = {
		[HEADER_TRACING_DATA] = "TRACING_DATA", [HEADER_BUILD_ID] = "BUILD_ID",
		[HEADER_HOSTNAME] = "HOSTNAME", [HEADER_OSRELEASE] = "OSRELEASE",
		[HEADER_VERSION] = "VERSION", [HEADER_ARCH] = "ARCH",
		[HEADER_NRCPUS] = "NRCPUS", [HEADER_CPUDESC] = "CPUDESC",
		[HEADER_CPUID] = "CPUID", [HEADER_TOTAL_MEM] = "TOTAL_MEM",
		[HEADER_CMDLINE] = "CMDLINE", [HEADER_EVENT_DESC] = "EVENT_DESC",
		[HEADER_SAMPLE_TIME] = "SAMPLE_TIME", [HEADER_CLOCKID] = "CLOCKID",
		[HEADER_DIR_FORMAT] = "DIR_FORMAT", [HEADER_COMPRESSED] = "COMPRESSED",
		[HEADER_CLOCK_DATA] = "CLOCK_DATA",
	};

	if (feat < sizeof(names) / sizeof(names[0]) && names[feat])
		return names[feat];
	return "unknown";
}

/* Warnings of a record are printed once, even when a later pass meets it again. */
__attribute__((format(printf, 4, 5)))
static void rwarn(struct perf_reader *r, const char *path, uint64_t off, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	if (r->seq && r->seq <= r->warned_seq &&
	    (!r->prev_skip || r->cur_type != r->prev_skip || r->index <= r->prev_skip_from))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_warn(r->d, path, off, "%s", msg);
}

static const char *cur_path(const struct perf_reader *r)
{
	if (r->cur < r->nfiles)
		return r->files[r->cur].path;
	return r->path;
}

/* ---- input files ---- */

/* Either byte order of either version's magic (the header check says which is wrong). */
static int stream_magic_ok(const uint8_t *b)
{
	uint64_t m = ld64(b, 0);

	return m == PERF_FILE_MAGIC2 || m == __builtin_bswap64(PERF_FILE_MAGIC2) ||
	       m == PERF_FILE_MAGIC1 || m == __builtin_bswap64(PERF_FILE_MAGIC1);
}

static int spool_fd(int fd, const char *name, struct pd_file *f, struct diag *d)
{
	const char *dir = getenv("TMPDIR");
	char tmpl[4096];
	uint8_t buf[1 << 16];
	size_t total = 0, head_len = 0;
	int tfd;

	if (!dir || !*dir)
		dir = "/tmp";
	tfd = open(dir, O_TMPFILE | O_RDWR | O_EXCL, 0600);
	if (tfd < 0) {
		snprintf(tmpl, sizeof(tmpl), "%s/perfconv-XXXXXX", dir);
		tfd = mkstemp(tmpl);
		if (tfd >= 0)
			unlink(tmpl);
	}
	if (tfd < 0) {
		diag_error(d, name, DIAG_NO_OFFSET, "cannot create a temporary file in %s: %s",
			   dir, strerror(errno));
		return -1;
	}
	for (;;) {
		ssize_t n = read(fd, buf + head_len, sizeof(buf) - head_len), w = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			diag_error(d, name, total, "read error: %s", strerror(errno));
			close(tfd);
			return -1;
		}
		if (n == 0)
			break;
		/* what is not perf.data is said at once, not spooled until the disk is full
		 * (-i /dev/zero, an endless stream on -i -): the first 8 bytes, gathered */
		if (total == 0 && head_len + (size_t)n < 8 && head_len + (size_t)n > 0) {
			head_len += (size_t)n;
			continue;
		}
		if (total == 0 && !stream_magic_ok(buf)) {
			diag_error(d, name, 0, "bad magic 0x%016llx: not a perf.data file",
				   (unsigned long long)ld64(buf, 0));
			close(tfd);
			return -1;
		}
		n += (ssize_t)head_len;
		head_len = 0;
		while (w < n) {
			ssize_t k = write(tfd, buf + w, (size_t)(n - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				diag_error(d, name, DIAG_NO_OFFSET,
					   "cannot spool the input to %s: %s", dir,
					   strerror(k < 0 ? errno : ENOSPC));
				close(tfd);
				return -1;
			}
			w += k;
		}
		total += (size_t)n;
	}
	f->size = total;
	if (total) {
		f->map = mmap(NULL, total, PROT_READ, MAP_PRIVATE, tfd, 0);
		if (f->map == MAP_FAILED) {
			f->map = NULL;
			diag_error(d, name, DIAG_NO_OFFSET, "cannot map the spooled input: %s",
				   strerror(errno));
			close(tfd);
			return -1;
		}
		f->maplen = total;
		f->base = f->map;
	}
	close(tfd);
	return 0;
}

/* Map `fd` (regular file) or spool it (pipe, terminal, fifo) first; with `regular`,
 * only a regular file will do (a --threads directory's data.N has no magic to check). */
static int map_fd(int fd, const char *name, struct pd_file *f, struct diag *d, int regular)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		diag_error(d, name, DIAG_NO_OFFSET, "cannot stat: %s", strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) && regular) {
		diag_error(d, name, DIAG_NO_OFFSET, "not a regular file");
		return -1;
	}
	if (!S_ISREG(st.st_mode))
		return spool_fd(fd, name, f, d);
	f->size = (size_t)st.st_size;
	if (f->size == 0)
		return 0;
	f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (f->map == MAP_FAILED) {
		f->map = NULL;
		diag_error(d, name, DIAG_NO_OFFSET, "cannot map: %s", strerror(errno));
		return -1;
	}
	f->maplen = f->size;
	f->base = f->map;
	madvise(f->map, f->maplen, MADV_SEQUENTIAL);
	return 0;
}

static int map_path(const char *path, const char *name, struct pd_file *f, struct diag *d,
		    int regular)
{
	int fd, ret;

	/* a data.N that is a FIFO must not block the open */
	fd = open(path, O_RDONLY | O_CLOEXEC | (regular ? O_NONBLOCK : 0));
	if (fd < 0) {
		diag_error(d, name, DIAG_NO_OFFSET, "cannot open: %s", strerror(errno));
		return -1;
	}
	ret = map_fd(fd, name, f, d, regular);
	close(fd);
	return ret;
}

static void free_file(struct pd_file *f)
{
	if (f->map)
		munmap(f->map, f->maplen);
	free(f->path);
}

static struct pd_file *add_file(struct perf_reader *r, const char *path)
{
	struct pd_file *n;

	n = realloc(r->files, (r->nfiles + 1) * sizeof(*n));
	if (!n)
		return NULL;
	r->files = n;
	n = &r->files[r->nfiles];
	memset(n, 0, sizeof(*n));
	n->path = strdup(path);
	if (!n->path)
		return NULL;
	r->nfiles++;
	return n;
}

/* ---- events ---- */

static int attr_flag(const uint8_t *bits, int file_be, unsigned k)
{
	/* A big-endian compiler allocates bitfields from the most significant bit. */
	if (file_be)
		return (bits[k / 8] >> (7 - k % 8)) & 1;
	return (bits[k / 8] >> (k % 8)) & 1;
}

static int host_big_endian(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 0;
}

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches",
	"branch-misses", "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend",
	"ref-cycles",
};

static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
	"bpf-output", "cgroup-switches",
};

/*
 * A name as perf would print it for an event the recording does not name: the
 * generic name plus the modifiers of evsel__add_modifiers().
 */
static char *synth_name(uint32_t type, uint64_t config, const uint8_t *bits, int be,
			unsigned precise)
{
	char base[64], mods[16], out[96];
	size_t m = 0;
	int exclude_guest_default = 0;
	int ek = attr_flag(bits, be, PERF_ATTR_BIT_EXCLUDE_KERNEL);
	int eu = attr_flag(bits, be, PERF_ATTR_BIT_EXCLUDE_USER);
	int eh = attr_flag(bits, be, PERF_ATTR_BIT_EXCLUDE_HV);
	int ehost = attr_flag(bits, be, PERF_ATTR_BIT_EXCLUDE_HOST);
	int eguest = attr_flag(bits, be, PERF_ATTR_BIT_EXCLUDE_GUEST);

	if (type == PERF_TYPE_HARDWARE && config < sizeof(hw_names) / sizeof(hw_names[0]))
		snprintf(base, sizeof(base), "%s", hw_names[config]);
	else if (type == PERF_TYPE_SOFTWARE && config < sizeof(sw_names) / sizeof(sw_names[0]))
		snprintf(base, sizeof(base), "%s", sw_names[config]);
	else if (type == PERF_TYPE_RAW)
		snprintf(base, sizeof(base), "r%llx", (unsigned long long)config);
	else
		snprintf(base, sizeof(base), "type%u/config 0x%llx", type,
			 (unsigned long long)config);

	if (ek || eu || eh) {
		if (!ek)
			mods[m++] = 'k';
		if (!eu)
			mods[m++] = 'u';
		if (!eh)
			mods[m++] = 'h';
		exclude_guest_default = 1;
	}
	while (precise-- > 0 && m < 8)
		mods[m++] = 'p';
	if (ehost || eguest == exclude_guest_default) {
		if (!ehost)
			mods[m++] = 'H';
		if (!eguest)
			mods[m++] = 'G';
	}
	mods[m] = 0;
	snprintf(out, sizeof(out), "%s%s%s", base, m ? ":" : "", mods);
	return strdup(out);
}

/*
 * File format (perf_event_attr, as many bytes as its `size` says):
 *	u32 type; u32 size; u64 config; u64 sample_period; u64 sample_type;
 *	u64 read_format; u64 flag bits; u32 wakeup; u32 bp_type; u64 config1;
 *	u64 config2; u64 branch_sample_type; u64 sample_regs_user;
 *	u32 sample_stack_user; s32 clockid; u64 sample_regs_intr; ...
 * Fields beyond `size` read as 0. The flag word is a C bitfield: not a number.
 */
static int add_event(struct perf_reader *r, const uint8_t *p, uint32_t sz)
{
	uint8_t a[160];
	struct pd_event *n, *e;
	int sw = r->swapped, be = r->swapped ^ host_big_endian();
	const uint8_t *bits = a + 40;

	n = realloc(r->ev, (r->nev + 1) * sizeof(*n));
	if (!n)
		return -1;
	r->ev = n;
	e = &r->ev[r->nev];
	memset(e, 0, sizeof(*e));
	memset(a, 0, sizeof(a));
	memcpy(a, p, sz < sizeof(a) ? sz : sizeof(a));
	e->d.type = ld32(a, sw);
	e->d.config = ld64(a + 8, sw);
	e->d.sample_period = ld64(a + 16, sw);
	e->d.sample_type = ld64(a + 24, sw);
	e->d.read_format = ld64(a + 32, sw);
	e->d.branch_sample_type = ld64(a + 72, sw);
	e->d.sample_regs_user = ld64(a + 80, sw);
	e->d.sample_stack_user = ld32(a + 88, sw);
	e->d.clockid = ld32(a + 92, sw);
	e->d.sample_regs_intr = ld64(a + 96, sw);
	e->d.freq = attr_flag(bits, be, PERF_ATTR_BIT_FREQ);
	e->d.sample_id_all = attr_flag(bits, be, PERF_ATTR_BIT_SAMPLE_ID_ALL);
	e->d.use_clockid = attr_flag(bits, be, PERF_ATTR_BIT_USE_CLOCKID);
	e->d.exclude_kernel = attr_flag(bits, be, PERF_ATTR_BIT_EXCLUDE_KERNEL);
	e->d.exclude_user = attr_flag(bits, be, PERF_ATTR_BIT_EXCLUDE_USER);
	e->synth = synth_name(e->d.type, e->d.config, bits, be,
			      (unsigned)(attr_flag(bits, be, PERF_ATTR_BIT_PRECISE_IP) |
					 attr_flag(bits, be, PERF_ATTR_BIT_PRECISE_IP + 1) << 1));
	r->nev++;
	if (!e->synth)
		return -1;
	return 0;
}

static int add_ids(struct perf_event_desc *e, const uint8_t *p, size_t n, int sw)
{
	size_t i;

	if (!n)
		return 0;
	e->ids = malloc(n * sizeof(*e->ids));
	if (!e->ids)
		return -1;
	for (i = 0; i < n; i++)
		e->ids[i] = ld64(p + 8 * i, sw);
	e->nids = n;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct id_ent *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int find_id(const struct perf_reader *r, uint64_t id)
{
	size_t lo = 0, hi = r->nids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->ids[mid].id == id)
			return (int)r->ids[mid].ev;
		if (r->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Where perf's __evsel__calc_id_pos / __evsel__calc_is_pos say the id is. */
static int calc_id_pos(uint64_t st)
{
	int idx = 0;

	if (st & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	idx += !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR);
	return idx;
}

static int calc_is_pos(uint64_t st)
{
	int idx = 1;

	if (st & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	idx += !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID);
	return idx;
}

static void set_event_name(struct perf_reader *r, int ev, const char *name, size_t max)
{
	char *s;

	if (ev < 0 || (size_t)ev >= r->nev || r->ev[ev].d.name)
		return;
	s = strndup(name, max);
	if (s && !*s) {
		free(s);
		return;
	}
	r->ev[ev].d.name = s;
}

/* After all attrs are in: index the ids, check that they agree, name every event. */
static int finish_events(struct perf_reader *r)
{
	size_t i, j, n = 0;

	if (!r->nev) {
		diag_error(r->d, r->path, DIAG_NO_OFFSET, "the recording holds no events");
		return -1;
	}
	for (i = 0; i < r->nev; i++)
		n += r->ev[i].d.nids;
	if (n) {
		r->ids = malloc(n * sizeof(*r->ids));
		if (!r->ids)
			goto nomem;
	}
	for (i = 0; i < r->nev; i++)
		for (j = 0; j < r->ev[i].d.nids; j++) {
			r->ids[r->nids].id = r->ev[i].d.ids[j];
			r->ids[r->nids++].ev = i;
		}
	if (r->nids)
		qsort(r->ids, r->nids, sizeof(*r->ids), cmp_id);

	r->sample_id_all = r->ev[0].d.sample_id_all;
	r->id_pos = calc_id_pos(r->ev[0].d.sample_type);
	r->is_pos = calc_is_pos(r->ev[0].d.sample_type);
	for (i = 1; i < r->nev; i++) {
		const struct perf_event_desc *e = &r->ev[i].d;

		if (calc_id_pos(e->sample_type) != r->id_pos ||
		    calc_is_pos(e->sample_type) != r->is_pos) {
			diag_error(r->d, r->path, DIAG_NO_OFFSET,
				   "events 0 and %zu disagree on where the sample id is "
				   "(sample_type 0x%llx and 0x%llx)", i,
				   (unsigned long long)r->ev[0].d.sample_type,
				   (unsigned long long)e->sample_type);
			return -1;
		}
		if (e->sample_id_all != (unsigned)r->sample_id_all) {
			diag_error(r->d, r->path, DIAG_NO_OFFSET,
				   "events 0 and %zu disagree on sample_id_all", i);
			return -1;
		}
	}
	return 0;
nomem:
	diag_error(r->d, r->path, DIAG_NO_OFFSET, "out of memory");
	return -1;
}

/* Events the recording does not name get perf's generic names. */
static void name_events(struct perf_reader *r)
{
	size_t i, j;

	for (i = 0; i < r->nev; i++) {
		struct pd_event *e = &r->ev[i];

		if (!e->d.name && e->d.type == PERF_TYPE_TRACEPOINT)
			for (j = 0; j < r->nevtypes; j++)
				if (r->evtypes[j].config == e->d.config && r->evtypes[j].name[0]) {
					e->d.name = strdup(r->evtypes[j].name);
					break;
				}
		if (!e->d.name) {
			e->d.name = e->synth;
			e->synth = NULL;
		}
	}
}

/* ---- features ---- */

struct cur {
	const uint8_t *p;
	size_t len, pos;
	int sw;
};

static int cur_u32(struct cur *c, uint32_t *v)
{
	if (c->len - c->pos < 4)
		return -1;
	*v = ld32(c->p + c->pos, c->sw);
	c->pos += 4;
	return 0;
}

static int cur_u64(struct cur *c, uint64_t *v)
{
	if (c->len - c->pos < 8)
		return -1;
	*v = ld64(c->p + c->pos, c->sw);
	c->pos += 8;
	return 0;
}

/*
 * File format (a string, perf's do_write_string):
 *	u32 len;		padded length, NUL included
 *	char str[len];
 */
static int cur_str(struct cur *c, char **out)
{
	uint32_t len;

	if (cur_u32(c, &len) < 0 || len > c->len - c->pos)
		return -1;
	*out = strndup((const char *)c->p + c->pos, len);
	c->pos += len;
	return *out ? 0 : -1;
}

static void set_str(char **dst, char *s)
{
	free(*dst);
	*dst = s;
}

/*
 * File format (one build id entry; feature BUILD_ID is a run of them, and pipe
 * mode sends each as a PERF_RECORD_HEADER_BUILD_ID):
 *	struct perf_event_header header;	misc: cpumode, bit 15: size is valid
 *	s32 pid;
 *	u8 build_id[20]; u8 size; u8 reserved[3];
 *	char filename[];			to header.size
 */
static int add_build_id(struct perf_reader *r, const uint8_t *p, size_t size)
{
	struct perf_header_info *h = &r->hdr;
	struct perf_build_id *n, *b;
	uint16_t misc = ld16(p + 4, r->swapped);

	if (size < 36)
		return -1;
	n = realloc(h->build_ids, (h->nbuild_ids + 1) * sizeof(*n));
	if (!n)
		return -1;
	h->build_ids = n;
	b = &n[h->nbuild_ids];
	memset(b, 0, sizeof(*b));
	b->pid = (int32_t)ld32(p + 8, r->swapped);
	b->misc = misc;
	memcpy(b->id, p + 12, PERF_BUILD_ID_MAX);
	b->id_size = PERF_BUILD_ID_MAX;
	if ((misc & PERF_RECORD_MISC_BUILD_ID_SIZE) && p[32] <= PERF_BUILD_ID_MAX)
		b->id_size = p[32];
	b->filename = strndup((const char *)p + 36, size - 36);
	if (!b->filename)
		return -1;
	h->nbuild_ids++;
	return 0;
}

/*
 * File format (EVENT_DESC):
 *	u32 nr_events; u32 attr_size;
 *	{ struct perf_event_attr attr;	attr_size bytes
 *	  u32 nr_ids; string name; u64 ids[nr_ids]; } events[nr_events];
 */
static int feat_event_desc(struct perf_reader *r, struct cur *c)
{
	uint32_t nre, asz, i, nids;

	if (cur_u32(c, &nre) < 0 || cur_u32(c, &asz) < 0)
		return -1;
	for (i = 0; i < nre; i++) {
		char *name;
		uint64_t id0 = 0;
		int ev = -1;

		if (asz > c->len - c->pos)
			return -1;
		c->pos += asz;
		if (cur_u32(c, &nids) < 0 || cur_str(c, &name) < 0)
			return -1;
		if (nids > (c->len - c->pos) / 8) {
			free(name);
			return -1;
		}
		if (nids) {
			id0 = ld64(c->p + c->pos, c->sw);
			ev = find_id(r, id0);
		}
		if (ev < 0 && nre == r->nev)
			ev = (int)i;
		set_event_name(r, ev, name, 256);
		free(name);
		c->pos += (size_t)nids * 8;
	}
	return 0;
}

static int feat_cmdline(struct perf_reader *r, struct cur *c)
{
	uint32_t nr, i;
	char *line = NULL;
	size_t len = 0;

	if (cur_u32(c, &nr) < 0 || nr > (c->len - c->pos) / 4)
		return -1;
	for (i = 0; i < nr; i++) {
		char *s, *n;
		size_t sl;

		if (cur_str(c, &s) < 0)
			goto bad;
		sl = strlen(s);
		n = realloc(line, len + sl + 2);
		if (!n) {
			free(s);
			goto bad;
		}
		line = n;
		if (len)
			line[len++] = ' ';
		memcpy(line + len, s, sl + 1);
		len += sl;
		free(s);
	}
	set_str(&r->hdr.cmdline, line ? line : strdup(""));
	return 0;
bad:
	free(line);
	return -1;
}

static int process_feature(struct perf_reader *r, unsigned feat, const uint8_t *p, size_t len)
{
	struct perf_header_info *h = &r->hdr;
	struct cur c = { p, len, 0, r->swapped };
	uint32_t a, b;
	uint64_t x, y;
	char *s;
	size_t pos;

	switch (feat) {
	case HEADER_HOSTNAME:
	case HEADER_OSRELEASE:
	case HEADER_VERSION:
	case HEADER_ARCH:
	case HEADER_CPUDESC:
	case HEADER_CPUID:
		if (cur_str(&c, &s) < 0)
			return -1;
		set_str(feat == HEADER_HOSTNAME ? &h->hostname :
			feat == HEADER_OSRELEASE ? &h->osrelease :
			feat == HEADER_VERSION ? &h->version :
			feat == HEADER_ARCH ? &h->arch :
			feat == HEADER_CPUDESC ? &h->cpudesc : &h->cpuid, s);
		return 0;
	case HEADER_NRCPUS:
		if (cur_u32(&c, &a) < 0 || cur_u32(&c, &b) < 0)
			return -1;
		h->nr_cpus_avail = a;
		h->nr_cpus_online = b;
		return 0;
	case HEADER_CMDLINE:
		return feat_cmdline(r, &c);
	case HEADER_EVENT_DESC:
		return feat_event_desc(r, &c);
	case HEADER_CLOCKID:
		if (cur_u64(&c, &x) < 0)
			return -1;
		h->has_clockid = 1;
		h->clockid_res_ns = x;
		return 0;
	case HEADER_CLOCK_DATA:
		/* u32 version; u32 clockid; u64 wall_ns; u64 clock_ns */
		if (cur_u32(&c, &a) < 0 || cur_u32(&c, &b) < 0 || cur_u64(&c, &x) < 0 ||
		    cur_u64(&c, &y) < 0)
			return -1;
		h->has_clock_data = 1;
		h->clock_data_clockid = b;
		h->clock_data_wall_ns = x;
		h->clock_data_clock_ns = y;
		return 0;
	case HEADER_SAMPLE_TIME:
		if (cur_u64(&c, &x) < 0 || cur_u64(&c, &y) < 0)
			return -1;
		h->has_sample_time = 1;
		h->first_sample_time = x;
		h->last_sample_time = y;
		return 0;
	case HEADER_DIR_FORMAT:
		if (cur_u64(&c, &x) < 0)
			return -1;
		h->directory = 1;
		return 0;
	case HEADER_BUILD_ID:
		for (pos = 0; len - pos >= 8;) {
			uint16_t sz = ld16(p + pos + 6, r->swapped);

			if (sz < 8 || sz > len - pos)
				return -1;
			if (add_build_id(r, p + pos, sz) < 0)
				return -1;
			pos += sz;
		}
		return 0;
	default:
		return 0;
	}
}

/* ---- file mode header ---- */

/*
 * File format (file mode, perf_file_header):
 *	u64 magic;		"PERFILE2"; byte-swapped: the other byte order
 *	u64 size;		104 (72 before features existed)
 *	u64 attr_size;		bytes per attrs entry: perf_event_attr + ids section
 *	{ u64 offset, size; } attrs, data, event_types;
 *	u64 features[4];	bitmap of HEADER_* features
 * then at data.offset + data.size one { u64 offset, size; } per feature bit set,
 * in bit order. Each attrs entry is an attr of attr.size bytes and the
 * { u64 offset, size; } of its array of u64 ids.
 */
static int read_file_header(struct perf_reader *r, struct pd_file *f, uint64_t hsize)
{
	const uint8_t *p = f->base;
	int sw = r->swapped;
	uint64_t attr_size, ao, as, dof, dsz, feat[4] = { 0 }, fo, i, n, nattrs;
	unsigned bit;

	if (hsize != FILE_HEADER_SIZE && hsize != FILE_HEADER_SIZE_NOFEAT) {
		diag_error(r->d, f->path, 8, "header size %llu is neither %d (file) nor %d (pipe)",
			   (unsigned long long)hsize, FILE_HEADER_SIZE, PIPE_HEADER_SIZE);
		return -1;
	}
	if (f->size < hsize) {
		diag_error(r->d, f->path, 0, "header cut short: file has %zu bytes, the header "
			   "needs %llu", f->size, (unsigned long long)hsize);
		return -1;
	}
	attr_size = ld64(p + 16, sw);
	ao = ld64(p + 24, sw);
	as = ld64(p + 32, sw);
	dof = ld64(p + 40, sw);
	dsz = ld64(p + 48, sw);
	if (hsize == FILE_HEADER_SIZE)
		for (i = 0; i < 4; i++)
			feat[i] = ld64(p + 72 + 8 * i, sw);

	if (ao > f->size || as > f->size - ao) {
		diag_error(r->d, f->path, 24, "attrs section 0x%llx+%llu lies outside the file "
			   "(%zu bytes)", (unsigned long long)ao, (unsigned long long)as, f->size);
		return -1;
	}
	if (attr_size < ATTR_SIZE_VER0 + 16 || attr_size > as || as % attr_size) {
		diag_error(r->d, f->path, 16, "attr_size %llu does not fit the attrs section "
			   "(%llu bytes)", (unsigned long long)attr_size, (unsigned long long)as);
		return -1;
	}
	nattrs = as / attr_size;
	for (n = 0; n < nattrs; n++) {
		uint64_t off = ao + n * attr_size, io, is;
		uint32_t sz = ld32(p + off + 4, sw);

		if (sz == 0)
			sz = ATTR_SIZE_VER0;
		if ((uint64_t)sz + 16 != attr_size) {
			diag_error(r->d, f->path, off, "attr %llu: attr.size %u + 16 does not match "
				   "attr_size %llu", (unsigned long long)n, sz,
				   (unsigned long long)attr_size);
			return -1;
		}
		io = ld64(p + off + sz, sw);
		is = ld64(p + off + sz + 8, sw);
		if (io > f->size || is > f->size - io || is % 8) {
			diag_error(r->d, f->path, off + sz, "attr %llu: ids section 0x%llx+%llu "
				   "lies outside the file (%zu bytes)", (unsigned long long)n,
				   (unsigned long long)io, (unsigned long long)is, f->size);
			return -1;
		}
		if (add_event(r, p + off, sz) < 0 ||
		    add_ids(&r->ev[r->nev - 1].d, p + io, is / 8, sw) < 0) {
			diag_error(r->d, f->path, DIAG_NO_OFFSET, "out of memory");
			return -1;
		}
	}

	if (dof < hsize || dof > f->size) {
		diag_error(r->d, f->path, 40, "data section offset 0x%llx lies outside the file "
			   "(%zu bytes)", (unsigned long long)dof, f->size);
		return -1;
	}
	r->hdr.data_offset = dof;
	r->hdr.data_size = dsz;
	f->start = dof;
	if (dsz == 0) {
		/* perf was killed before it wrote the real size: read to the end */
		f->end = f->declared_end = f->size;
		if (feat[0] | feat[1] | feat[2] | feat[3])
			diag_warn(r->d, f->path, 48, "data size is 0 (perf record killed?): "
				  "reading records to the end of the file, features ignored");
		memset(feat, 0, sizeof(feat));
	} else if (dsz > f->size - dof) {
		f->end = f->size;
		f->declared_end = dof + dsz;
	} else {
		f->end = f->declared_end = dof + dsz;
	}
	if (finish_events(r) < 0)
		return -1;

	/* features: the names of events need the ids indexed first */
	fo = f->declared_end;
	n = 0;
	for (bit = 0; bit < HEADER_FEAT_BITS; bit++)
		n += (feat[bit / 64] >> (bit % 64)) & 1;
	if (!n)
		return 0;
	if (fo > f->size || n * 16 > f->size - fo) {
		diag_warn(r->d, f->path, fo, "feature sections (%llu) lie outside the file, "
			  "ignored", (unsigned long long)n);
		return 0;
	}
	for (bit = 0; bit < HEADER_FEAT_BITS; bit++) {
		uint64_t so, ss;

		if (!((feat[bit / 64] >> (bit % 64)) & 1))
			continue;
		so = ld64(p + fo, sw);
		ss = ld64(p + fo + 8, sw);
		if (so > f->size || ss > f->size - so)
			diag_warn(r->d, f->path, fo, "feature %s: section 0x%llx+%llu lies outside "
				  "the file, ignored", feat_name(bit), (unsigned long long)so,
				  (unsigned long long)ss);
		else if (process_feature(r, bit, p + so, ss) < 0)
			diag_warn(r->d, f->path, so, "feature %s: damaged section, ignored",
				  feat_name(bit));
		fo += 16;
	}
	return 0;
}

/* ---- records ---- */

/*
 * How many bytes a record takes in the stream: its size, plus for TRACING_DATA
 * and AUXTRACE the data perf writes after the record itself.
 */
static uint64_t rec_extent(const uint8_t *p, uint16_t size, int sw, uint64_t avail)
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

/*
 * File format (HEADER_ATTR, pipe mode):
 *	struct perf_event_header header;
 *	struct perf_event_attr attr;	attr.size bytes
 *	u64 ids[];			to header.size
 */
static int pipe_attr(struct perf_reader *r, const uint8_t *p, uint16_t size, uint64_t off)
{
	uint32_t sz;
	size_t payload = size - 8u;

	if (payload < 8) {
		diag_error(r->d, r->path, off, "PERF_RECORD_HEADER_ATTR: record size %u below "
			   "minimum 16", size);
		return -1;
	}
	sz = ld32(p + 12, r->swapped);
	if (sz == 0)
		sz = ATTR_SIZE_VER0;
	if (sz < ATTR_SIZE_VER0 || sz > payload) {
		diag_error(r->d, r->path, off, "PERF_RECORD_HEADER_ATTR: attr size %u does not "
			   "fit the record (size %u)", sz, size);
		return -1;
	}
	if (add_event(r, p + 8, sz) < 0 ||
	    add_ids(&r->ev[r->nev - 1].d, p + 8 + sz, (payload - sz) / 8, r->swapped) < 0) {
		diag_error(r->d, r->path, DIAG_NO_OFFSET, "out of memory");
		return -1;
	}
	return 0;
}

/*
 * File format (pipe mode): a 16-byte header { u64 magic; u64 size = 16; }, then
 * records. The header records (HEADER_ATTR 64, HEADER_EVENT_TYPE 65,
 * HEADER_BUILD_ID 67, EVENT_UPDATE 78, HEADER_FEATURE 80 = { u64 feat_id; the
 * feature's file-mode section }) may come anywhere, build ids often at the end:
 * scan the whole stream once for them.
 */
static int read_pipe_header(struct perf_reader *r, struct pd_file *f)
{
	const uint8_t *p = f->base;
	uint64_t pos = PIPE_HEADER_SIZE;
	int sw = r->swapped;
	size_t nfeat_names = 0;
	struct { uint64_t id; uint64_t pos; uint16_t size; } *upd = NULL;
	size_t nupd = 0, i;
	int ret = -1;

	r->hdr.pipe_mode = 1;
	f->start = PIPE_HEADER_SIZE;
	f->end = f->declared_end = f->size;
	while (f->size - pos >= 8) {
		const uint8_t *q = p + pos;
		uint32_t type = ld32(q, sw);
		uint16_t size = ld16(q + 6, sw);
		uint64_t ext;

		if (size < 8) {
			diag_error(r->d, f->path, pos, "%s: record size %u below header size 8",
				   rec_name(type).s, size);
			goto out;
		}
		ext = rec_extent(q, size, sw, f->size - pos);
		if (ext > f->size - pos)
			break; /* cut short: next() warns when it gets there */
		switch (type) {
		case PERF_RECORD_HEADER_ATTR:
			if (pipe_attr(r, q, size, pos) < 0)
				goto out;
			break;
		case PERF_RECORD_HEADER_EVENT_TYPE:
			/* u64 event_id; char name[64] */
			if (size >= 16) {
				struct evtype *n = realloc(r->evtypes,
							   (r->nevtypes + 1) * sizeof(*n));
				size_t nl = size - 16u < 64 ? size - 16u : 64;

				if (!n)
					goto nomem;
				r->evtypes = n;
				n[r->nevtypes].config = ld64(q + 8, sw);
				memcpy(n[r->nevtypes].name, q + 16, nl);
				n[r->nevtypes].name[nl] = 0;
				r->nevtypes++;
			}
			break;
		case PERF_RECORD_HEADER_BUILD_ID:
			if (add_build_id(r, q, size) < 0)
				diag_warn(r->d, f->path, pos, "PERF_RECORD_HEADER_BUILD_ID: damaged, "
					  "ignored");
			break;
		case PERF_RECORD_EVENT_UPDATE:
			/* u64 type (2: name); u64 id; char name[] */
			if (size > 24 && ld64(q + 8, sw) == 2) {
				void *n = realloc(upd, (nupd + 1) * sizeof(*upd));

				if (!n)
					goto nomem;
				upd = n;
				upd[nupd].id = ld64(q + 16, sw);
				upd[nupd].pos = pos;
				upd[nupd++].size = size;
			}
			break;
		case PERF_RECORD_HEADER_FEATURE:
			nfeat_names++;
			break;
		default:
			break;
		}
		pos += ext;
	}
	if (finish_events(r) < 0)
		goto out;
	/* names and features once the ids are indexed */
	for (i = 0; i < nupd; i++)
		set_event_name(r, find_id(r, upd[i].id), (const char *)p + upd[i].pos + 24,
			       upd[i].size - 24u);
	for (pos = PIPE_HEADER_SIZE; nfeat_names && f->size - pos >= 8;) {
		const uint8_t *q = p + pos;
		uint16_t size = ld16(q + 6, sw);
		uint64_t ext = rec_extent(q, size, sw, f->size - pos);

		if (size < 8 || ext > f->size - pos)
			break;
		if (ld32(q, sw) == PERF_RECORD_HEADER_FEATURE && size >= 16) {
			uint64_t feat = ld64(q + 8, sw);

			if (feat < HEADER_FEAT_BITS && process_feature(r, (unsigned)feat, q + 16,
								size - 16u) < 0)
				diag_warn(r->d, f->path, pos, "feature %s: damaged section, ignored",
					  feat_name((unsigned)feat));
		}
		pos += ext;
	}
	ret = 0;
	goto out;
nomem:
	diag_error(r->d, f->path, DIAG_NO_OFFSET, "out of memory");
out:
	free(upd);
	return ret;
}

/* ---- record decoding ---- */

/* The event of a sample or trailer id; -2 when the id names none. */
static int event_of_id(const struct perf_reader *r, uint64_t id)
{
	int ev;

	if (r->nev == 1 || id == 0)
		return 0; /* perf: synthesized records carry id 0 */
	ev = find_id(r, id);
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
			diag_error(r->d, cur_path(r), off, "PERF_RECORD_SAMPLE: sample id %llu "
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
	rwarn(r, cur_path(r), off, "PERF_RECORD_SAMPLE: %s field overruns the record "
	      "(size %u), skipped", what, size);
	return 0;
}

/* Fixed part of the records we decode, header included. */
static unsigned rec_min(uint32_t type)
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

/* The most a record of a kernel type with a path or a name can hold: the fields, a
 * path of PATH_MAX and a sample_id trailer. */
#define REC_NAME_MAX (4096 + 64)

/*
 * Is there a plausible record header at p (rem bytes left)? A known type, a size that
 * fits and is not below the type's minimum; the kernel's records are whole u64 words
 * and their paths and names bounded; a THREAD_MAP holds exactly its entries. What perf
 * checks before it processes a record (session.c), for resynchronizing after damage.
 */
static int header_ok(const struct perf_reader *r, const uint8_t *p, uint64_t rem)
{
	uint32_t type;
	uint16_t size;

	if (rem < 8)
		return 0;
	type = ld32(p, r->swapped);
	size = ld16(p + 6, r->swapped);
	if (size < 8 || rec_extent(p, size, r->swapped, rem) > rem)
		return 0;
	if (type >= PERF_RECORD_MMAP && type <= PERF_RECORD_AUX_OUTPUT_HW_ID) {
		if (size % 8 || size < rec_min(type))
			return 0;
		if ((type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 ||
		     type == PERF_RECORD_COMM) && size > rec_min(type) + REC_NAME_MAX)
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

	if (!header_ok(r, p, rem))
		return 0;
	ext = rec_extent(p, ld16(p + 6, r->swapped), r->swapped, rem);
	return ext == rem || header_ok(r, p + ext, rem - ext);
}

/* Returns 1 when *rec is to be returned, 0 when consumed or skipped, -1 on error. */
static int decode(struct perf_reader *r, const uint8_t *p, uint16_t size, uint64_t off,
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
	rec->file = cur_path(r);
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

	min = rec_min(type);
	tsz = decode_trailer(r, p, size, rec);
	if (tsz < 0 || size < min + (unsigned)tsz) {
		if (tsz < 0)
			tsz = 8 * __builtin_popcountll(r->ev[rec->event < 0 ? 0 : rec->event]
							.d.sample_type & S_TRAILER);
		r->stats.skipped_bad++;
		rwarn(r, cur_path(r), off, "%s: record size %u below minimum %u, skipped",
		      rec_name(type).s, size, min + (unsigned)tsz);
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

/* ---- iteration ---- */

static void reset_stream(struct perf_reader *r)
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

static void release_behind(struct perf_reader *r, const struct pd_file *f, uint64_t off)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t from = (r->released + page - 1) / page * page, to = off / page * page;

	if (to > from)
		madvise((uint8_t *)f->map + from, (size_t)(to - from), MADV_DONTNEED);
	r->released = to;
}

static void start_file(struct perf_reader *r, size_t i)
{
	r->cur = i;
	r->pos = i < r->nfiles ? r->files[i].start : 0;
	r->released = 0;
	reset_stream(r);
}

/* Inflate the next chunk of the current compressed record behind what is left. */
static void zfill(struct perf_reader *r)
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
		rwarn(r, cur_path(r), r->zoff, "%s: zstd: %s, the compressed data of this file "
		      "is skipped from here", rec_name(PERF_RECORD_COMPRESSED).s,
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
static int start_compressed(struct perf_reader *r, const uint8_t *p, uint16_t size,
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
			rwarn(r, cur_path(r), off, "PERF_RECORD_COMPRESSED2: data_size does not "
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
			diag_error(r->d, cur_path(r), off, "cannot set up zstd decompression");
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

/* Count the record framed at `p`; 1 when it is of the type not to decode. */
static int skipped(struct perf_reader *r, const uint8_t *p)
{
	r->cur_type = ld32(p, r->swapped);
	r->index++;
	return r->skip_type && r->cur_type == r->skip_type;
}

void perf_reader_skip_type(struct perf_reader *r, uint32_t type)
{
	if (type != r->skip_type)
		r->skip_from = r->index;
	r->skip_type = type;
}

/*
 * The record at `off` is not plausible. One whose size leads to two plausible headers
 * is trusted: of an unknown type (a newer perf or kernel), it is skipped by its size
 * and counted; of a known type, decode() says what is wrong. Anything else is damage: the reader moves on to the next offset, in u64 steps, where
 * two plausible headers follow each other, and says how much it passed over. 1 when
 * r->pos moved; 0 to let the caller handle the record (a size cut short by the end).
 */
static int resync(struct perf_reader *r, struct pd_file *f, const uint8_t *p, uint64_t off,
		  uint64_t rem)
{
	uint32_t type = ld32(p, r->swapped);
	uint16_t size = ld16(p + 6, r->swapped);
	uint64_t ext = rec_extent(p, size, r->swapped, rem), q;
	int known = (type >= PERF_RECORD_MMAP && type <= PERF_RECORD_AUX_OUTPUT_HW_ID) ||
		    (type >= PERF_RECORD_HEADER_ATTR && type <= PERF_RECORD_COMPRESSED2);

	if (ext > rem && (size % 8 == 0 || !known))
		return 0; /* the data section's end cut it: reported as such */
	if (size % 8 == 0 && known && ext < rem && headers_ok(r, p + ext, rem - ext))
		return 0; /* its size leads on to records: too short, decode() says so */
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
	rwarn(r, f->path, off, "%s: damaged record (size %u): %llu bytes skipped to %s "
	      "0x%llx", rec_name(type).s, size, (unsigned long long)q,
	      q == rem ? "the end of the data at" : "the next plausible record at offset",
	      (unsigned long long)(off + q));
	r->pos = off + q;
	return 1;
}

int perf_reader_next(struct perf_reader *r, struct perf_record *rec)
{
	for (;;) {
		size_t avail = r->dlen - r->dhead;
		struct pd_file *f;
		const uint8_t *p;
		uint64_t rem, ext, off;
		uint16_t size;
		int ret;

		if (r->finished)
			return 0;
		/* records inflated from compressed ones come first */
		if (avail >= 8) {
			p = r->dbuf + r->dhead;
			size = ld16(p + 6, r->swapped);
			if (size < 8) {
				diag_error(r->d, cur_path(r), r->zoff, "%s: record size %u below "
					   "header size 8 inside compressed data",
					   rec_name(ld32(p, r->swapped)).s, size);
				return -1;
			}
			if (size <= avail) {
				r->dhead += size;
				if (skipped(r, p))
					continue;
				ret = decode(r, p, size, r->zoff, rec);
				if (ret)
					return ret;
				continue;
			}
		}
		if (r->zin && (r->zin_pos < r->zin_len || r->zmore)) {
			zfill(r);
			continue;
		}

		f = &r->files[r->cur];
		if (r->pos >= f->end) {
			if (r->dlen - r->dhead)
				rwarn(r, f->path, r->zoff, "compressed data ends inside a record: "
				      "%zu bytes dropped", r->dlen - r->dhead);
			if (r->cur + 1 >= r->nfiles) {
				r->finished = 1;
				/* unknown types, once, after the first pass */
				if (r->seq > r->warned_seq && !r->warned_seq &&
				    r->stats.skipped_unknown)
					diag_warn(r->d, r->path, r->stats.first_unknown - 1,
						  "%llu records of unknown type skipped, the first "
						  "here", (unsigned long long)r->stats.skipped_unknown);
				if (r->seq > r->warned_seq)
					r->warned_seq = r->seq;
				return 0;
			}
			start_file(r, r->cur + 1);
			continue;
		}
		off = r->pos;
		rem = f->end - off;
		p = f->base + off;
		r->seq++;
		if (f->map && f->size >= RELEASE_MIN && off - r->released >= RELEASE_STEP)
			release_behind(r, f, off);
		if (rem < 8) {
			rwarn(r, f->path, off, "data section cut short: %llu bytes of an 8-byte "
			      "record header missing, reading stops here",
			      (unsigned long long)(8 - rem));
			r->stats.truncated_bytes += f->declared_end > f->end ?
				f->declared_end - f->end : 8 - rem;
			r->pos = f->end;
			continue;
		}
		size = ld16(p + 6, r->swapped);
		if (size < 8) {
			diag_error(r->d, f->path, off, "%s: record size %u below header size 8",
				   rec_name(ld32(p, r->swapped)).s, size);
			return -1;
		}
		/* a damaged header, whose size would take the records behind it along:
		 * skipped to the next plausible one, and said (once a pass saw it) */
		if (!header_ok(r, p, rem) && resync(r, f, p, off, rem))
			continue;
		ext = rec_extent(p, size, r->swapped, rem);
		if (ext > rem) {
			rwarn(r, f->path, off, "data section cut short: %llu bytes of a %llu-byte "
			      "record missing, reading stops here",
			      (unsigned long long)(ext - rem), (unsigned long long)ext);
			r->stats.truncated_bytes += f->declared_end > f->end ?
				f->declared_end - f->end : ext - rem;
			r->pos = f->end;
			continue;
		}
		r->pos += ext;
		if (ld32(p, r->swapped) == PERF_RECORD_COMPRESSED ||
		    ld32(p, r->swapped) == PERF_RECORD_COMPRESSED2) {
			if (start_compressed(r, p, size, off) < 0)
				return -1;
			continue;
		}
		if (skipped(r, p))
			continue;
		ret = decode(r, p, size, off, rec);
		if (ret)
			return ret;
	}
}

void perf_reader_rewind(struct perf_reader *r)
{
	if (r->seq > r->warned_seq)
		r->warned_seq = r->seq;
	r->seq = 0;
	r->index = 0;
	r->prev_skip = r->skip_type;
	r->prev_skip_from = r->skip_from;
	r->finished = 0;
	memset(&r->stats, 0, sizeof(r->stats));
	start_file(r, 0);
}

/* ---- open and close ---- */

static struct perf_reader *reader_new(const char *name, struct diag *d)
{
	struct perf_reader *r = calloc(1, sizeof(*r));

	if (!r)
		goto nomem;
	r->d = d;
	r->path = strdup(name);
	r->cc = malloc(REC_MAX);
	r->str = malloc(REC_MAX + 1);
	r->dcap = DBUF_CHUNK + REC_MAX;
	r->dbuf = malloc(r->dcap);
	if (r->path && r->cc && r->str && r->dbuf)
		return r;
	perf_reader_close(r);
nomem:
	diag_error(d, name, DIAG_NO_OFFSET, "out of memory");
	return NULL;
}

/* Read the header of files[0], whatever mode it is in. */
static int read_header(struct perf_reader *r)
{
	struct pd_file *f = &r->files[0];
	uint64_t magic, native, hsize;
	int ret;

	if (f->size < 8) {
		diag_error(r->d, f->path, 0, "header cut short: file has %zu bytes, not even "
			   "the 8-byte magic", f->size);
		return -1;
	}
	magic = ld64(f->base, 0);
	native = host_big_endian() ? __builtin_bswap64(PERF_FILE_MAGIC2) : PERF_FILE_MAGIC2;
	if (magic == __builtin_bswap64(native)) {
		r->swapped = 1;
	} else if (magic != native) {
		if (magic == PERF_FILE_MAGIC1 || magic == __builtin_bswap64(PERF_FILE_MAGIC1))
			diag_error(r->d, f->path, 0, "perf.data version 1 (PERFFILE) is not "
				   "supported");
		else
			diag_error(r->d, f->path, 0, "bad magic 0x%016llx: not a perf.data file",
				   (unsigned long long)magic);
		return -1;
	}
	r->hdr.swapped = r->swapped;
	if (f->size < 16) {
		diag_error(r->d, f->path, 0, "header cut short: file has %zu bytes, the header "
			   "needs at least 16", f->size);
		return -1;
	}
	hsize = ld64(f->base + 8, r->swapped);
	if (hsize == PIPE_HEADER_SIZE)
		ret = read_pipe_header(r, f);
	else
		ret = read_file_header(r, f, hsize);
	if (ret == 0)
		name_events(r);
	return ret;
}

static int cmp_num_suffix(const void *a, const void *b)
{
	unsigned long x = strtoul(strrchr(*(char *const *)a, '.') + 1, NULL, 10);
	unsigned long y = strtoul(strrchr(*(char *const *)b, '.') + 1, NULL, 10);

	return x < y ? -1 : x > y;
}

/* `perf record --threads`: DIR/data holds the header, DIR/data.N the records. */
static int open_dir(struct perf_reader *r, const char *dir)
{
	char path[4096];
	char **names = NULL;
	size_t n = 0, i;
	DIR *dh;
	struct dirent *de;
	struct pd_file *f;
	int ret = -1;

	snprintf(path, sizeof(path), "%s/data", dir);
	f = add_file(r, path);
	if (!f)
		goto nomem;
	if (map_path(path, f->path, f, r->d, 1) < 0 || read_header(r) < 0)
		return -1;
	r->hdr.directory = 1;
	dh = opendir(dir);
	if (!dh) {
		diag_error(r->d, dir, DIAG_NO_OFFSET, "cannot read the directory: %s",
			   strerror(errno));
		return -1;
	}
	while ((de = readdir(dh))) {
		const char *s = de->d_name;
		char **nn;

		if (strncmp(s, "data.", 5) || !s[5] || strspn(s + 5, "0123456789") != strlen(s + 5))
			continue;
		if (n >= MAX_FILES)
			break;
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn || !(nn[n] = strdup(s))) {
			names = nn ? nn : names;
			closedir(dh);
			goto nomem;
		}
		names = nn;
		n++;
	}
	closedir(dh);
	qsort(names, n, sizeof(*names), cmp_num_suffix);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		f = add_file(r, path);
		if (!f)
			goto nomem;
		if (map_path(path, f->path, f, r->d, 1) < 0)
			goto out;
		f->start = 0;
		f->end = f->declared_end = f->size;
	}
	ret = 0;
	goto out;
nomem:
	diag_error(r->d, dir, DIAG_NO_OFFSET, "out of memory");
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

struct perf_reader *perf_reader_open(const char *path, struct diag *d)
{
	struct perf_reader *r = reader_new(path, d);
	struct pd_file *f;
	struct stat st;

	if (!r)
		return NULL;
	if (strcmp(path, "-") && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (open_dir(r, path) < 0)
			goto fail;
	} else {
		f = add_file(r, path);
		if (!f) {
			diag_error(d, path, DIAG_NO_OFFSET, "out of memory");
			goto fail;
		}
		if (strcmp(path, "-") == 0) {
			if (map_fd(STDIN_FILENO, path, f, d, 0) < 0)
				goto fail;
		} else if (map_path(path, path, f, d, 0) < 0) {
			goto fail;
		}
		if (read_header(r) < 0)
			goto fail;
	}
	start_file(r, 0);
	return r;
fail:
	perf_reader_close(r);
	return NULL;
}

struct perf_reader *perf_reader_open_mem(const void *buf, size_t len, const char *name,
					 struct diag *d)
{
	struct perf_reader *r = reader_new(name, d);
	struct pd_file *f;

	if (!r)
		return NULL;
	f = add_file(r, name);
	if (!f) {
		diag_error(d, name, DIAG_NO_OFFSET, "out of memory");
		goto fail;
	}
	f->base = buf;
	f->size = len;
	if (read_header(r) < 0)
		goto fail;
	start_file(r, 0);
	return r;
fail:
	perf_reader_close(r);
	return NULL;
}

const struct perf_header_info *perf_reader_header(const struct perf_reader *r)
{
	return &r->hdr;
}

size_t perf_reader_nevents(const struct perf_reader *r)
{
	return r->nev;
}

const struct perf_event_desc *perf_reader_event(const struct perf_reader *r, size_t i)
{
	return i < r->nev ? &r->ev[i].d : NULL;
}

const struct perf_reader_stats *perf_reader_stats(const struct perf_reader *r)
{
	return &r->stats;
}

const char *perf_reader_path(const struct perf_reader *r)
{
	return r->path;
}

void perf_reader_close(struct perf_reader *r)
{
	struct perf_header_info *h;
	size_t i;

	if (!r)
		return;
	h = &r->hdr;
	for (i = 0; i < r->nfiles; i++)
		free_file(&r->files[i]);
	free(r->files);
	for (i = 0; i < r->nev; i++) {
		free(r->ev[i].d.name);
		free(r->ev[i].d.ids);
		free(r->ev[i].synth);
	}
	free(r->ev);
	free(r->ids);
	free(r->evtypes);
	for (i = 0; i < h->nbuild_ids; i++)
		free(h->build_ids[i].filename);
	free(h->build_ids);
	free(h->hostname);
	free(h->osrelease);
	free(h->version);
	free(h->arch);
	free(h->cpudesc);
	free(h->cpuid);
	free(h->cmdline);
	if (r->zd)
		ZSTD_freeDStream(r->zd);
	free(r->dbuf);
	free(r->cc);
	free(r->str);
	free(r->path);
	free(r);
}
