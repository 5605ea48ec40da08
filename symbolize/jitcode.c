/* jitcode: the JIT code of one process over time, from its jitdump and perf map.
 *
 * Codes (loads, moved copies, map lines) live in one array; their lines in another,
 * a contiguous run per load, sorted by address (moved copies share their load's run:
 * entry addresses are kept relative to the code's start, as the producer wrote them;
 * the producer's offset is applied when an address is looked up). Function and file
 * names live in one buffer of NUL-terminated strings, each file once. jitcode_finish()
 * replays loads and moves in time order over a set of live codes sorted by address,
 * which gives each code the time its range was taken over, and then cuts the address
 * space at every code boundary into pieces, the leaves of a segment tree: each node
 * lists the codes that cover all its pieces, in time order and disjoint in time, so a
 * lookup is a binary search for the piece and one per node on its way to the root
 * (mostly empty ones).
 *
 * A table can take more records after jitcode_finish() (a dump read further, as a
 * watcher does chunk by chunk): the copies made by moves are dropped and the replay
 * and the index are made again over what the table holds. jitcode_prune() drops what
 * no lookup at or after a time can meet, so that the table holds the live code, not
 * the history.
 */
#include "symbolize/jitcode.h"

#include <stdlib.h>
#include <string.h>

#include "common/demangle.h"
#include "common/mapfile.h"


#define FOREVER UINT64_MAX
#define FILE_INVALID UINT32_MAX
#define DAMAGED_PREFIX 16        /* bytes of a Node.js 20 file name taken by the allocator */
#define REL_LIMIT ((int64_t)1 << 31) /* an entry further from its code is none of it */
/* what a process can map (x86-64's 47-bit user space): code claimed past it is cut */
#define USER_LIMIT ((uint64_t)1 << 47)

enum { KIND_LOAD = 0, KIND_MAP, KIND_COPY };

struct jc_line {
	int32_t rel;             /* entry address - code_addr, as the producer wrote it */
	uint32_t line;
	uint32_t file;           /* offset in names, 0 none, FILE_INVALID before a load claims it */
};

struct jc_code {
	uint64_t start, size;
	uint64_t t0, t1;         /* live in [t0, t1) */
	uint64_t lines_size;     /* the size of the load the lines were written for */
	uint32_t seq;
	uint32_t name, raw;      /* offsets in the table's names */
	uint32_t file;           /* offset in names: the function's own file, 0 none */
	uint32_t lines_first, nlines;
	uint64_t unwind_off;     /* UNWINDING_INFO: its bytes at unwind[unwind_off ..] */
	uint32_t unwind_len, unwind_hdr; /* bytes in all (0: none), of them .eh_frame_hdr */
	uint8_t kind;            /* KIND_*: a copy is made by the replay of a move */
	uint8_t replayed;        /* put live by the replay at t0: a load, or a copy whose
				    move was pruned */
	uint8_t prologue;        /* a BEAM -CodeInfoPrologue, named as its function */
};

struct jc_move {
	uint64_t time;
	uint32_t seq;
	uint64_t old_addr, new_addr, size;
};

/* Pieces of the address space, each with the codes that covered it over time. */
struct jc_index {
	uint64_t *bounds;        /* piece k is [bounds[k], bounds[k + 1]) */
	size_t nbounds;
	size_t leaves;           /* piece k is node leaves + k of the segment tree */
	size_t *first;           /* codes listed at node v: ids[first[v] .. first[v + 1]) */
	uint32_t *ids;
	size_t nids;
};

/*
 * The codes live at the end of what the replay has seen, disjoint, as a treap keyed by
 * start: a code's node is its index + 1 (0 is none), its priority a hash of that. A
 * sorted array moved its tail on every insertion, which was quadratic where a runtime
 * loads modules below earlier ones.
 */
struct live {
	struct live_node {
		uint64_t start;  /* the code's, here for locality */
		uint32_t left, right, prio;
	} *v;
	size_t cap;
	uint32_t root;
};

struct jitcode {
	int demangle;
	/* function and file names, copied (interning 15,000 function names was a third
	 * of reading a dump; a lookup's caller interns the few it meets); each file is
	 * there once (files: hash -> offset) */
	char *names;
	size_t names_len, names_cap;
	struct u64map files;
	uint32_t last_file;      /* of the last DEBUG_INFO entry with a file */
	struct jitcode_stats stats;
	struct jc_code *codes;
	size_t ncodes, codes_cap;
	struct jc_line *lines;
	size_t nlines, lines_cap;
	struct jc_move *moves;
	size_t nmoves, moves_cap;
	uint32_t seq;
	uint8_t *unwind;         /* UNWINDING_INFO bytes of the loads, one after another */
	size_t unwind_len, unwind_cap;
	int unwind_pending;      /* an UNWINDING_INFO waits for its load: the last bytes */
	uint64_t unwind_pend_off;
	uint32_t unwind_pend_hdr;
	int pending;             /* a DEBUG_INFO waits for its load (its entries are the
				    last of lines, from pend_first) */
	uint64_t debug_dropped;  /* DEBUG_INFO records no load claimed */
	uint64_t pend_addr;
	size_t pend_first;
	int finished;
	/*
	 * What jitcode_finish() made: the replay's live codes, kept and added to by the
	 * next finish when the records added since come after those replayed (else the
	 * replay is made again from the start); the codes that ended (after `floor`),
	 * indexed; the perf map lines live at the end, indexed.
	 */
	struct live lv;
	size_t done_codes, done_moves; /* the codes and moves the replay has seen */
	int replayed;                 /* the replay has been made */
	uint64_t last_time;           /* the last event it saw (time, seq) */
	uint32_t last_seq;
	uint64_t floor;               /* codes that ended at or before it are not indexed */
	uint64_t *live_start;         /* the live codes in address order, for lookups (a */
	uint32_t *live_id;            /* binary search, not a walk of the treap's nodes) */
	size_t nlive;
	int lines_counted;            /* stats.lines and lines_outside are up to date */
	struct jc_index dead, mapped;
	uint64_t first_load;     /* the time of the first code load, FOREVER without one */
	int inexact;             /* a record older than the prune came after it */
	uint32_t last_load;      /* the code added last (index + 1), 0 none */
	/* A table read from bytes jitcode_save() made (a cache entry): its arrays are in
	 * `mf`, read in place, until a record is added (thaw() copies them). */
	int frozen;
	struct mapped_file mf;
};

/* The first `len` bytes of `name`, NUL-terminated in the table. */
static uint32_t add_name_n(struct jitcode *jc, const char *name, size_t len)
{
	size_t n = len + 1;
	uint32_t off = (uint32_t)jc->names_len;

	if (jc->names_len + n > UINT32_MAX)
		return 0; /* 4 GB of names: the first one ("") stands in */
	if (jc->names_len + n > jc->names_cap)
		grow_array((void **)&jc->names, &jc->names_cap, jc->names_len + n, 1);
	memcpy(jc->names + jc->names_len, name, len);
	jc->names[jc->names_len + len] = 0;
	jc->names_len += n;
	return off;
}

static uint32_t add_name(struct jitcode *jc, const char *name)
{
	return add_name_n(jc, name, strlen(name));
}

/* A file name's offset, the same for the same name (0 for ""). */
static uint32_t file_n(struct jitcode *jc, const char *s, size_t len)
{
	uint64_t key = hash_bytes(s, len) | 1;
	uint32_t *v, off;

	if (!len)
		return 0;
	v = u64map_get(&jc->files, key);
	if (v && strlen(jc->names + *v) == len && memcmp(jc->names + *v, s, len) == 0)
		return *v;
	off = add_name_n(jc, s, len);
	if (off)
		u64map_put(&jc->files, key, off);
	return off;
}

static const char *text(const struct jitcode *jc, uint32_t off)
{
	return jc->names + off;
}

#define PROLOGUE_SUFFIX "-CodeInfoPrologue"

size_t jitcode_function_name_len(const char *name)
{
	size_t n = strlen(name), k = sizeof(PROLOGUE_SUFFIX) - 1;

	if (n > k && memcmp(name + n - k, PROLOGUE_SUFFIX, k) == 0)
		return n - k;
	return n;
}

struct jitcode *jitcode_new(int demangle)
{
	struct jitcode *jc = xcalloc(1, sizeof(*jc));

	jc->demangle = demangle;
	jc->stats.line_offset = JITCODE_ELF_HEADER_OFFSET;
	jc->first_load = FOREVER;
	u64map_init(&jc->files);
	add_name(jc, ""); /* offset 0 */
	return jc;
}

static void index_release(struct jc_index *x)
{
	free(x->bounds);
	free(x->first);
	free(x->ids);
	memset(x, 0, sizeof(*x));
}

static void thaw(struct jitcode *jc);

void jitcode_free(struct jitcode *jc)
{
	if (!jc)
		return;
	if (jc->frozen) {
		mapped_file_close(&jc->mf);
		u64map_release(&jc->files);
		free(jc->lv.v);
		free(jc);
		return;
	}
	free(jc->codes);
	free(jc->names);
	free(jc->lines);
	free(jc->moves);
	free(jc->unwind);
	u64map_release(&jc->files);
	index_release(&jc->dead);
	index_release(&jc->mapped);
	free(jc->lv.v);
	free(jc->live_start);
	free(jc->live_id);
	free(jc);
}

void jitcode_set_timeless(struct jitcode *jc)
{
	jc->stats.timeless = 1;
}

static void count_lines(struct jitcode *jc);

const struct jitcode_stats *jitcode_stats(const struct jitcode *jc)
{
	/* the entries a lookup can meet are counted when asked: a watcher's finishes
	 * do not walk every entry */
	if (jc->finished && !jc->lines_counted) {
		count_lines((struct jitcode *)(uintptr_t)jc);
		((struct jitcode *)(uintptr_t)jc)->lines_counted = 1;
	}
	return &jc->stats;
}

int jitcode_inexact(const struct jitcode *jc)
{
	return jc->inexact;
}

uint64_t jitcode_loads(const struct jitcode *jc)
{
	return jc->stats.loads;
}

uint64_t jitcode_exact_from(const struct jitcode *jc)
{
	return jc->stats.timeless ? 0 : jc->floor;
}

size_t jitcode_bytes(const struct jitcode *jc)
{
	return jc->ncodes * sizeof(*jc->codes) + jc->nlines * sizeof(*jc->lines) + jc->names_len +
	       jc->nmoves * sizeof(*jc->moves) + jc->unwind_len + jc->ncodes * sizeof(*jc->lv.v) +
	       jc->dead.nids * 4 + jc->dead.nbounds * 8 + jc->mapped.nids * 4 +
	       jc->mapped.nbounds * 8 + (jc->dead.leaves + jc->mapped.leaves) * 16;
}

size_t jitcode_name_file(const char *name, const char **file)
{
	const char *sp = strrchr(name, ' '), *end;
	int colons = 0;

	if (!sp || !sp[1])
		return 0;
	end = sp + 1 + strlen(sp + 1);
	/* strip :LINE:COLUMN (or :LINE) */
	while (colons < 2) {
		const char *p = end;

		while (p > sp + 1 && p[-1] >= '0' && p[-1] <= '9')
			p--;
		if (p == end || p <= sp + 2 || p[-1] != ':')
			break;
		end = p - 1;
		colons++;
	}
	if (!colons || end == sp + 1 || sp[1] == ':')
		return 0;
	*file = sp + 1;
	return (size_t)(end - (sp + 1));
}

/* Records come after jitcode_finish(): the next finish takes them in. */
static void reopen(struct jitcode *jc)
{
	thaw(jc);
	jc->finished = 0;
}

/* A record's time as the table keeps it: below FOREVER - 1 (FOREVER marks a code live
 * to the end, FOREVER - 1 is the time of a timeless lookup), and a record at a time
 * before what was pruned makes the table inexact. */
static uint64_t check_time(struct jitcode *jc, uint64_t time)
{
	if (time > FOREVER - 2)
		time = FOREVER - 2;
	if (!jc->stats.timeless && time < jc->floor)
		jc->inexact = 1;
	return time;
}

static void drop_pending(struct jitcode *jc)
{
	if (!jc->pending)
		return;
	jc->nlines = jc->pend_first;
	jc->pending = 0;
	jc->debug_dropped++;
}

void jitcode_add_debug(struct jitcode *jc, uint64_t code_addr,
		       const struct jitdump_debug_entry *entries, size_t n)
{
	size_t i;

	const char *last_file = NULL; /* the entry's bytes last_file was taken from */

	reopen(jc);
	drop_pending(jc);
	jc->pending = 1;
	jc->pend_addr = code_addr;
	jc->pend_first = jc->nlines;
	for (i = 0; i < n; i++) {
		const struct jitdump_debug_entry *e = &entries[i];
		int64_t rel = (int64_t)(e->addr - code_addr);
		struct jc_line l;

		if (rel <= -REL_LIMIT || rel >= REL_LIMIT)
			continue;
		l.rel = (int32_t)rel;
		l.line = e->line;
		l.file = FILE_INVALID;
		if (e->file_valid) {
			/* entries mostly repeat the file before them; a "same file" entry
			 * points at the very bytes before it, which are not compared again */
			if (e->file != last_file &&
			    (!jc->last_file || strcmp(e->file, text(jc, jc->last_file)) != 0))
				jc->last_file = file_n(jc, e->file, strlen(e->file));
			last_file = e->file;
			l.file = jc->last_file;
		}
		VEC_PUSH(jc->lines, jc->nlines, jc->lines_cap, l);
	}
}

static uint64_t code_end(const struct jc_code *c)
{
	return c->start + c->size < c->start ? UINT64_MAX : c->start + c->size;
}

/* A code's size, cut at the end of user space (a hostile dump claims 2^63 bytes). */
static uint64_t clamp_size(uint64_t start, uint64_t size)
{
	if (start < USER_LIMIT && size > USER_LIMIT - start)
		return USER_LIMIT - start;
	return size;
}

static uint32_t new_code(struct jitcode *jc, uint64_t start, uint64_t size, uint64_t t0,
			 uint32_t seq, int kind)
{
	struct jc_code c;

	memset(&c, 0, sizeof(c));
	c.start = start;
	c.size = clamp_size(start, size);
	c.lines_size = c.size;
	c.t0 = t0;
	c.t1 = FOREVER;
	c.seq = seq;
	c.kind = (uint8_t)kind;
	c.replayed = kind == KIND_LOAD;
	VEC_PUSH(jc->codes, jc->ncodes, jc->codes_cap, c);
	return (uint32_t)(jc->ncodes - 1);
}

static void set_names(struct jitcode *jc, struct jc_code *c, const char *name)
{
	size_t len = jitcode_function_name_len(name);

	c->raw = add_name_n(jc, name, len);
	c->prologue = name[len] != 0;
	c->name = c->raw;
	if (jc->demangle) {
		char *d = demangle_jit_name(jc->names + c->raw);

		if (d) {
			c->name = add_name(jc, d);
			free(d);
		}
	}
}

/* Entries sorted by address, stable: producers mostly write them in order, and
 * otherwise a radix sort (an insertion sort was quadratic on descending entries). */
static void sort_lines(struct jc_line *l, size_t n)
{
	struct sort_pair *k;
	struct jc_line *tmp;
	size_t i;

	for (i = 1; i < n && l[i - 1].rel <= l[i].rel; i++)
		;
	if (i >= n)
		return;
	k = xmalloc(2 * n * sizeof(*k));
	for (i = 0; i < n; i++) /* signed order as unsigned keys */
		k[i] = (struct sort_pair){ (uint64_t)(int64_t)l[i].rel ^ ((uint64_t)1 << 63), i };
	sort_pairs(k, k + n, n);
	tmp = xmalloc(n * sizeof(*tmp));
	for (i = 0; i < n; i++)
		tmp[i] = l[k[i].val];
	memcpy(l, tmp, n * sizeof(*l));
	free(tmp);
	free(k);
}

/* Give the pending entries to code `ci`: files checked against the name's file, the
 * entries sorted, and the load's vote for the producer's address offset counted (see
 * jitcode_finish()). */
static void claim_lines(struct jitcode *jc, uint32_t ci, const char *name)
{
	struct jc_code *c = &jc->codes[ci];
	const char *nf = NULL;
	size_t nflen = jitcode_name_file(name, &nf), i;
	uint32_t nfid = nflen ? file_n(jc, nf, nflen) : 0;

	c->lines_first = (uint32_t)jc->pend_first;
	c->nlines = (uint32_t)(jc->nlines - jc->pend_first);
	c->file = nfid;
	jc->pending = 0;
	jc->stats.debug_infos++;
	for (i = c->lines_first; i < jc->nlines; i++) {
		struct jc_line *l = &jc->lines[i];

		if (l->file == FILE_INVALID) {
			l->file = nfid;
			if (nfid)
				jc->stats.files_replaced++;
			else if (l->line) /* BEAM ends with {line 0, file ""}: no damage */
				jc->stats.files_dropped++;
		} else if (nfid && l->file != nfid && nflen > DAMAGED_PREFIX) {
			const char *s = text(jc, l->file);

			/* the name's file with its first bytes overwritten */
			if (strlen(s) == nflen &&
			    memcmp(s + DAMAGED_PREFIX, nf + DAMAGED_PREFIX,
				   nflen - DAMAGED_PREFIX) == 0) {
				l->file = nfid;
				jc->stats.files_replaced++;
			}
		}
		if (!c->file && l->file)
			c->file = l->file;
	}
	if (c->nlines) {
		struct jc_line *l = jc->lines + c->lines_first;

		sort_lines(l, c->nlines);
		if (l[0].rel == JITCODE_ELF_HEADER_OFFSET)
			jc->stats.votes_offset++;
		else if (l[0].rel < JITCODE_ELF_HEADER_OFFSET)
			jc->stats.votes_plain++;
	}
}

void jitcode_add_load(struct jitcode *jc, uint64_t time, uint64_t code_addr, uint64_t size,
		      const char *name)
{
	uint32_t ci;

	reopen(jc);
	time = check_time(jc, time);
	ci = new_code(jc, code_addr, size, jc->stats.timeless ? jc->seq : time, jc->seq, KIND_LOAD);
	jc->seq++;
	set_names(jc, &jc->codes[ci], name);
	if (jc->unwind_pending) {
		jc->codes[ci].unwind_off = jc->unwind_pend_off;
		jc->codes[ci].unwind_len = (uint32_t)(jc->unwind_len - jc->unwind_pend_off);
		jc->codes[ci].unwind_hdr = jc->unwind_pend_hdr;
		jc->unwind_pending = 0;
	}
	if (jc->pending && jc->pend_addr == code_addr)
		claim_lines(jc, ci, name);
	else
		drop_pending(jc);
	/* the prologue written just before its function takes the function's file, so
	 * that both are one function (name, file) to the writers */
	if (jc->last_load) {
		struct jc_code *pro = &jc->codes[jc->last_load - 1], *c = &jc->codes[ci];

		if (pro->kind == KIND_LOAD && pro->prologue && !c->prologue &&
		    code_end(pro) == c->start && strcmp(jc->names + pro->raw, jc->names + c->raw) == 0)
			pro->file = c->file;
	}
	jc->last_load = ci + 1;
	if (time < jc->first_load)
		jc->first_load = time;
	jc->stats.loads++;
}

void jitcode_add_unwind(struct jitcode *jc, const uint8_t *data, uint64_t size,
			uint64_t eh_frame_hdr_size)
{
	reopen(jc);
	if (jc->unwind_pending) {
		jc->unwind_len = jc->unwind_pend_off; /* the previous one went unclaimed */
		jc->unwind_pending = 0;
	}
	/* an empty table (V8 writes a header alone for code without CFI) is no table */
	if (size > (1u << 24) || eh_frame_hdr_size > size) {
		jc->stats.unwind_damaged++;
		return;
	}
	if (!size || eh_frame_hdr_size == size)
		return;
	if (jc->unwind_len + size > jc->unwind_cap)
		grow_array((void **)&jc->unwind, &jc->unwind_cap, jc->unwind_len + size, 1);
	jc->unwind_pend_off = jc->unwind_len;
	jc->unwind_pend_hdr = (uint32_t)eh_frame_hdr_size;
	memcpy(jc->unwind + jc->unwind_len, data, size);
	jc->unwind_len += size;
	jc->unwind_pending = 1;
	jc->stats.unwind_infos++;
}

int jitcode_unwind_info(const struct jitcode *jc, uint32_t code, const uint8_t **data,
			size_t *size, size_t *eh_frame_hdr_size)
{
	const struct jc_code *c;

	if (code >= jc->ncodes || !jc->codes[code].unwind_len)
		return 0;
	c = &jc->codes[code];
	*data = jc->unwind + c->unwind_off;
	*size = c->unwind_len;
	*eh_frame_hdr_size = c->unwind_hdr;
	return 1;
}

void jitcode_add_move(struct jitcode *jc, uint64_t time, uint64_t old_addr, uint64_t new_addr,
		      uint64_t size)
{
	struct jc_move mv;

	reopen(jc);
	time = check_time(jc, time);
	memset(&mv, 0, sizeof(mv));
	mv.time = jc->stats.timeless ? jc->seq : time;
	mv.seq = jc->seq++;
	mv.old_addr = old_addr;
	mv.new_addr = new_addr;
	mv.size = size;
	VEC_PUSH(jc->moves, jc->nmoves, jc->moves_cap, mv);
	jc->stats.moves++;
}

void jitcode_add_map_entry(struct jitcode *jc, uint64_t start, uint64_t size, const char *name)
{
	uint32_t ci;

	reopen(jc);
	ci = new_code(jc, start, size, 0, jc->seq++, KIND_MAP);
	jc->last_load = ci + 1;
	set_names(jc, &jc->codes[ci], name);
	jc->stats.map_entries++;
}

/* Room for as much as a dump of this size can hold, so that the tables are never
 * copied as they grow: only the pages written are ever touched. */
static void reserve(struct jitcode *jc, const struct jitdump_reader *r)
{
	uint64_t loads, entries;

	jitdump_reader_bounds(r, &loads, &entries);
	loads = loads < (1u << 20) ? loads : (1u << 20);
	entries = entries < (1u << 22) ? entries : (1u << 22);
	grow_array((void **)&jc->codes, &jc->codes_cap, jc->ncodes + loads, sizeof(*jc->codes));
	grow_array((void **)&jc->lines, &jc->lines_cap, jc->nlines + entries, sizeof(*jc->lines));
	grow_array((void **)&jc->names, &jc->names_cap, jc->names_len + loads * 64, 1);
}

uint64_t jitcode_add_dump(struct jitcode *jc, struct jitdump_reader *r, uint32_t pid)
{
	struct jitdump_record rec;
	uint64_t n = 0;
	int first = 1;

	while (jitdump_reader_next(r, &rec) == 1) {
		/* a table read from the cache is copied only when the dump brings more */
		if (first) {
			thaw(jc);
			reserve(jc, r);
			first = 0;
		}
		switch (rec.id) {
		case JITDUMP_CODE_DEBUG_INFO:
			jitcode_add_debug(jc, rec.u.debug.code_addr, rec.u.debug.entries,
					  rec.u.debug.nentries);
			break;
		case JITDUMP_CODE_LOAD:
			if (rec.u.load.pid != pid)
				jc->stats.other_pid++;
			jitcode_add_load(jc, rec.timestamp, rec.u.load.code_addr,
					 rec.u.load.code_size, rec.u.load.name);
			n++;
			break;
		case JITDUMP_CODE_UNWINDING_INFO: {
			const struct jitdump_unwind *u = &rec.u.unwind;

			if (u->unwinding_size > u->data_size)
				jc->stats.unwind_damaged++;
			else if (u->mapped_size)
				jitcode_add_unwind(jc, u->data, u->unwinding_size,
						   u->eh_frame_hdr_size);
			break;
		}
		case JITDUMP_CODE_MOVE:
			if (rec.u.move.pid != pid)
				jc->stats.other_pid++;
			jitcode_add_move(jc, rec.timestamp, rec.u.move.old_code_addr,
					 rec.u.move.new_code_addr, rec.u.move.code_size);
			break;
		default:
			break;
		}
	}
	return n;
}

uint64_t jitcode_add_perfmap(struct jitcode *jc, struct perfmap_reader *r)
{
	struct perfmap_entry e;
	uint64_t n = 0;

	while (perfmap_reader_next(r, &e) == 1) {
		jitcode_add_map_entry(jc, e.start, e.size, e.name);
		n++;
	}
	return n;
}

/* ---- finish ---- */

static int cmp_move(const void *a, const void *b)
{
	const struct jc_move *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Split `t` into the nodes with start < key (*l) and the others (*r). */
static void live_split(struct live *lv, uint32_t t, uint64_t key, uint32_t *l, uint32_t *r)
{
	while (t) {
		if (lv->v[t].start < key) {
			*l = t;
			l = &lv->v[t].right;
			t = *l;
		} else {
			*r = t;
			r = &lv->v[t].left;
			t = *r;
		}
	}
	*l = *r = 0;
}

/* Join `l` and `r`, every start in `l` below every start in `r`. */
static uint32_t live_merge(struct live *lv, uint32_t l, uint32_t r)
{
	uint32_t root, *at = &root;

	while (l && r) {
		if (lv->v[l].prio > lv->v[r].prio) {
			*at = l;
			at = &lv->v[l].right;
			l = *at;
		} else {
			*at = r;
			at = &lv->v[r].left;
			r = *at;
		}
	}
	*at = l ? l : r;
	return root;
}

/* Take the node with the greatest start out of `*t`; returns it (0 when empty). */
static uint32_t live_pop_max(struct live *lv, uint32_t *t)
{
	uint32_t n;

	while (*t && lv->v[*t].right)
		t = &lv->v[*t].right;
	n = *t;
	if (n)
		*t = lv->v[n].left;
	return n;
}

/* Put node `n` into `t`, where no start equals its own: a leaf rotated up. */
static uint32_t live_add(struct live *lv, uint32_t t, uint32_t n)
{
	uint32_t c;

	if (!t)
		return n;
	if (lv->v[n].start < lv->v[t].start) {
		c = lv->v[t].left = live_add(lv, lv->v[t].left, n);
		if (lv->v[c].prio > lv->v[t].prio) {
			lv->v[t].left = lv->v[c].right;
			lv->v[c].right = t;
			return c;
		}
	} else {
		c = lv->v[t].right = live_add(lv, lv->v[t].right, n);
		if (lv->v[c].prio > lv->v[t].prio) {
			lv->v[t].right = lv->v[c].left;
			lv->v[c].left = t;
			return c;
		}
	}
	return t;
}

/* Every code of `t` ends at `time`. */
static void live_end_all(struct jitcode *jc, const struct live *lv, uint32_t t, uint64_t time)
{
	while (t) {
		jc->codes[t - 1].t1 = time;
		live_end_all(jc, lv, lv->v[t].left, time);
		t = lv->v[t].right;
	}
}

/* Code `ci` goes live at `t`: whatever it overlaps ends at `t`. */
static void live_insert(struct jitcode *jc, struct live *lv, uint32_t ci, uint64_t t)
{
	const struct jc_code *c = &jc->codes[ci];
	uint64_t s = c->start, e = code_end(c);
	uint32_t n = ci + 1, below, rest, inside, above, pred = 0, succ = 0;

	if (c->size == 0)
		return;
	if (n + 1 > lv->cap)
		grow_array((void **)&lv->v, &lv->cap, n + 1, sizeof(*lv->v));
	lv->v[n] = (struct live_node){ s, 0, 0, (uint32_t)hash_u64(n) };
	/* mostly the code overlaps nothing: the codes on either side say so */
	for (uint32_t x = lv->root; x;) {
		if (lv->v[x].start < s) {
			pred = x;
			x = lv->v[x].right;
		} else {
			succ = x;
			x = lv->v[x].left;
		}
	}
	if ((!pred || code_end(&jc->codes[pred - 1]) <= s) && (!succ || lv->v[succ].start >= e)) {
		lv->root = live_add(lv, lv->root, n);
		return;
	}
	live_split(lv, lv->root, s, &below, &rest);
	live_split(lv, rest, e, &inside, &above);
	live_end_all(jc, lv, inside, t);
	/* of the codes starting below s only the last can reach past s: they are disjoint */
	if (pred && code_end(&jc->codes[pred - 1]) > s) {
		jc->codes[pred - 1].t1 = t;
		live_pop_max(lv, &below);
	}
	lv->root = live_merge(lv, live_merge(lv, below, n), above);
}

/* The move of the code at old_addr: it ends, a copy starts at new_addr. */
static void live_move(struct jitcode *jc, struct live *lv, const struct jc_move *ev,
		      uint64_t t)
{
	uint32_t below, above, last, oi, ni;
	struct jc_code *o;

	/* the code starting at old_addr, else the one holding it: the last one starting
	 * at or below it, when it reaches past it */
	if (ev->old_addr == UINT64_MAX) {
		below = lv->root;
		above = 0;
	} else {
		live_split(lv, lv->root, ev->old_addr + 1, &below, &above);
	}
	last = live_pop_max(lv, &below);
	if (!last || code_end(&jc->codes[last - 1]) <= ev->old_addr) {
		if (last) {
			lv->v[last].left = lv->v[last].right = 0;
			below = live_merge(lv, below, last);
		}
		lv->root = live_merge(lv, below, above);
		jc->stats.moves_unmatched++;
		return;
	}
	lv->root = live_merge(lv, below, above);
	oi = last - 1;
	jc->codes[oi].t1 = t;
	ni = new_code(jc, ev->new_addr, 0, t, ev->seq, KIND_COPY);
	o = &jc->codes[oi];
	jc->codes[ni].size = clamp_size(ev->new_addr, ev->size ? ev->size : o->size);
	jc->codes[ni].lines_size = o->lines_size;
	jc->codes[ni].name = o->name;
	jc->codes[ni].raw = o->raw;
	jc->codes[ni].file = o->file;
	jc->codes[ni].lines_first = o->lines_first;
	jc->codes[ni].nlines = o->nlines;
	live_insert(jc, lv, ni, t);
}

/*
 * Index the codes in `order` (sorted by t0, then seq) that were live for some time.
 * The pieces are the leaves of a segment tree (node 1 the root, piece k at node
 * leaves + k): a code is listed at the O(log n) nodes whose pieces it covers whole, so
 * the index stays O(n log n) however the codes overlap (one list per piece was
 * quadratic where many loads overlap). Codes listed at one node overlap in address, so
 * they are disjoint in time, and stay in time order.
 */
static void build_index(struct jitcode *jc, struct jc_index *x, const uint32_t *order,
			size_t n)
{
	struct sort_pair *ends = xmalloc((4 * n + 1) * sizeof(*ends)); /* + scratch */
	uint32_t *piece = xmalloc((2 * n + 1) * sizeof(*piece)); /* [2i] first, [2i+1] end */
	size_t *count, *fill = NULL;
	size_t i, k, leaves, nodes, total;

	/* every start and end, sorted: the distinct values are the bounds, and each
	 * code learns the pieces it spans on the way */
	for (i = 0; i < n; i++) {
		const struct jc_code *c = &jc->codes[order[i]];

		ends[2 * i] = (struct sort_pair){ c->start, 2 * i };
		ends[2 * i + 1] = (struct sort_pair){ code_end(c), 2 * i + 1 };
	}
	sort_pairs(ends, ends + 2 * n, 2 * n);
	x->bounds = xmalloc((2 * n + 1) * sizeof(*x->bounds));
	for (i = 0, k = 0; i < 2 * n; i++) {
		if (k == 0 || x->bounds[k - 1] != ends[i].key)
			x->bounds[k++] = ends[i].key;
		piece[ends[i].val] = (uint32_t)(k - 1);
	}
	free(ends);
	x->nbounds = k;
	for (leaves = 1; leaves < k; leaves *= 2)
		;
	x->leaves = leaves;
	nodes = 2 * leaves;
	/* how many codes each node lists, then where each node's list begins */
	count = xcalloc(nodes + 1, sizeof(*count));
	for (int pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			size_t l = leaves + piece[2 * i], r = leaves + piece[2 * i + 1];

			for (; l < r; l /= 2, r /= 2) {
				if (l & 1) {
					if (pass)
						x->ids[fill[l]++] = order[i];
					else
						count[l]++;
					l++;
				}
				if (r & 1) {
					r--;
					if (pass)
						x->ids[fill[r]++] = order[i];
					else
						count[r]++;
				}
			}
		}
		if (pass)
			break;
		x->first = xmalloc((nodes + 1) * sizeof(*x->first));
		for (k = 0, total = 0; k < nodes; k++) {
			x->first[k] = total;
			total += count[k];
		}
		x->first[nodes] = total;
		x->nids = total;
		x->ids = xmalloc((total + 1) * sizeof(*x->ids));
		fill = count;
		for (k = 0; k <= nodes; k++)
			fill[k] = x->first[k];
	}
	free(count);
	free(piece);
}

static int cmp_code_time(const void *a, const void *b, void *ctx)
{
	const struct jitcode *jc = ctx;
	const struct jc_code *x = &jc->codes[*(const uint32_t *)a];
	const struct jc_code *y = &jc->codes[*(const uint32_t *)b];

	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The codes of `order` (n) in the order of (t0, seq); returns n. */
static size_t sort_by_time(const struct jitcode *jc, uint32_t *order, size_t n)
{
	size_t i;

	/* runtimes write in time order, mostly: sort only when they did not */
	for (i = 1; i < n; i++)
		if (cmp_code_time(&order[i - 1], &order[i], (void *)jc) > 0)
			break;
	if (n > 1 && i < n)
		qsort_r(order, n, sizeof(*order), cmp_code_time, (void *)jc);
	return n;
}

/* moves[from ..] in the order of (time, seq). */
static void sort_moves(struct jitcode *jc, size_t from)
{
	size_t k;

	for (k = from + 1; k < jc->nmoves; k++)
		if (cmp_move(&jc->moves[k - 1], &jc->moves[k]) > 0)
			break;
	if (k < jc->nmoves)
		qsort(jc->moves + from, jc->nmoves - from, sizeof(*jc->moves), cmp_move);
}

/* Does event (t, seq) come after the last one the replay saw? */
static int after_replayed(const struct jitcode *jc, uint64_t t, uint32_t seq)
{
	return t > jc->last_time || (t == jc->last_time && seq > jc->last_seq);
}

/*
 * The replay, over the live codes of jc->lv: the codes of `order` (n, sorted) and
 * moves[k ..] (sorted) in time order (a code ends where the next one over any of its
 * bytes is loaded, or where it moves; a move makes a copy that goes live).
 */
static void replay(struct jitcode *jc, const uint32_t *order, size_t n, size_t k)
{
	size_t i = 0;

	while (i < n || k < jc->nmoves) {
		const struct jc_code *c = i < n ? &jc->codes[order[i]] : NULL;
		const struct jc_move *m = k < jc->nmoves ? &jc->moves[k] : NULL;

		if (c && (!m || c->t0 < m->time || (c->t0 == m->time && c->seq < m->seq))) {
			jc->last_time = c->t0;
			jc->last_seq = c->seq;
			live_insert(jc, &jc->lv, order[i], c->t0);
			i++;
		} else {
			jc->last_time = m->time;
			jc->last_seq = m->seq;
			live_move(jc, &jc->lv, m, m->time);
			k++;
		}
	}
}

/* The codes a replay puts live at their t0, from codes[from ..]. Malloc'ed; *n set. */
static uint32_t *replayed_from(const struct jitcode *jc, size_t from, size_t *n)
{
	uint32_t *order = xmalloc((jc->ncodes - from + 1) * sizeof(*order));

	*n = 0;
	for (size_t i = from; i < jc->ncodes; i++)
		if (jc->codes[i].replayed && jc->codes[i].kind != KIND_MAP && jc->codes[i].size)
			order[(*n)++] = (uint32_t)i;
	sort_by_time(jc, order, *n);
	return order;
}

/* The replay made again from the start: the copies the last one made go. */
static void replay_all(struct jitcode *jc)
{
	uint32_t *order;
	size_t n, w = 0;

	for (size_t i = 0; i < jc->ncodes; i++) {
		if (jc->codes[i].kind == KIND_COPY && !jc->codes[i].replayed)
			continue;
		if (jc->last_load == i + 1)
			jc->last_load = (uint32_t)w + 1;
		jc->codes[w] = jc->codes[i];
		jc->codes[w++].t1 = FOREVER;
	}
	jc->ncodes = w;
	jc->lv.root = 0;
	jc->last_time = 0;
	jc->last_seq = 0;
	order = replayed_from(jc, 0, &n);
	sort_moves(jc, 0);
	replay(jc, order, n, 0);
	free(order);
}

/* Whether the records added since the last replay all come after it: the replay can go
 * on from where it stopped. */
static int replay_goes_on(const struct jitcode *jc)
{
	if (!jc->replayed)
		return 0;
	for (size_t i = jc->done_codes; i < jc->ncodes; i++) {
		const struct jc_code *c = &jc->codes[i];

		if (c->replayed && c->kind != KIND_MAP && c->size && !after_replayed(jc, c->t0, c->seq))
			return 0;
	}
	for (size_t k = jc->done_moves; k < jc->nmoves; k++)
		if (!after_replayed(jc, jc->moves[k].time, jc->moves[k].seq))
			return 0;
	return 1;
}

/* The treap's codes in address order, into live_start and live_id. */
static void flatten_live(struct jitcode *jc)
{
	uint32_t *stack = NULL, x = jc->lv.root;
	size_t depth = 0, cap = 0, n = 0, room = 0;

	free(jc->live_start);
	free(jc->live_id);
	for (size_t i = 0; i < jc->ncodes; i++)
		room += jc->codes[i].kind != KIND_MAP && jc->codes[i].t1 == FOREVER;
	jc->live_start = xmalloc((room + 1) * sizeof(*jc->live_start));
	jc->live_id = xmalloc((room + 1) * sizeof(*jc->live_id));
	while (x || depth) {
		while (x) {
			VEC_PUSH(stack, depth, cap, x);
			x = jc->lv.v[x].left;
		}
		x = stack[--depth];
		if (n < room) {
			jc->live_start[n] = jc->lv.v[x].start;
			jc->live_id[n++] = x - 1;
		}
		x = jc->lv.v[x].right;
	}
	jc->nlive = n;
	free(stack);
}

/* Index the codes that ended after `floor` (those live at the end are the replay's),
 * and the perf map lines live at the end. */
static void build_indexes(struct jitcode *jc)
{
	uint32_t *order = xmalloc((jc->ncodes + 1) * sizeof(*order));
	struct live maps = { NULL, 0, 0 };
	size_t i, n, nmaps = 0;

	index_release(&jc->dead);
	index_release(&jc->mapped);
	flatten_live(jc);
	for (i = 0, n = 0; i < jc->ncodes; i++) {
		const struct jc_code *c = &jc->codes[i];

		if (c->kind == KIND_MAP)
			nmaps++;
		else if (c->size && c->t0 < c->t1 && c->t1 != FOREVER && c->t1 > jc->floor &&
			 !jc->stats.timeless) /* timeless: lookups are made at the end */
			order[n++] = (uint32_t)i;
	}
	n = sort_by_time(jc, order, n);
	build_index(jc, &jc->dead, order, n);
	/* Map lines: file order, only what is live at the end counts. */
	for (i = 0; nmaps && i < jc->ncodes; i++)
		if (jc->codes[i].kind == KIND_MAP) {
			jc->codes[i].t1 = FOREVER;
			live_insert(jc, &maps, (uint32_t)i, jc->codes[i].seq);
		}
	free(maps.v);
	for (i = 0, n = 0; nmaps && i < jc->ncodes; i++) {
		const struct jc_code *c = &jc->codes[i];

		if (c->kind == KIND_MAP && c->size && c->t1 == FOREVER)
			order[n++] = (uint32_t)i;
	}
	build_index(jc, &jc->mapped, order, n);
	free(order);
}

/* The entries of a load that a lookup can meet, and those past its end, under the
 * offset decided: for the stats. */
static void count_lines(struct jitcode *jc)
{
	int64_t off = jc->stats.line_offset;

	jc->stats.lines = jc->stats.lines_outside = 0;
	for (size_t i = 0; i < jc->ncodes; i++) {
		const struct jc_code *c = &jc->codes[i];
		const struct jc_line *l = jc->lines + c->lines_first;
		int before = 0;

		if (c->kind != KIND_LOAD || !c->nlines)
			continue;
		for (size_t k = 0; k < c->nlines; k++) {
			if (l[k].rel < off)
				before = 1;
			else if ((uint64_t)((int64_t)l[k].rel - off) >= c->lines_size)
				jc->stats.lines_outside++;
			else
				jc->stats.lines++;
		}
		jc->stats.lines += (uint64_t)before;
	}
}

void jitcode_finish(struct jitcode *jc)
{
	if (jc->finished)
		return;
	jc->finished = 1;
	/* a DEBUG_INFO still waiting counts as unmatched, but waits on: more of the dump may
	 * bring its load */
	jc->stats.debug_unmatched = jc->debug_dropped + (uint64_t)jc->pending;
	/*
	 * The entry address offset, for the whole table: each load whose DEBUG_INFO starts
	 * exactly at code_addr + 0x40 votes for 0x40, each whose entries start below it
	 * (impossible with the offset: BEAM's prologue entries, or lines at the very
	 * start) for none.
	 */
	jc->stats.line_offset =
		jc->stats.votes_plain > jc->stats.votes_offset ? 0 : JITCODE_ELF_HEADER_OFFSET;
	if (replay_goes_on(jc)) {
		size_t n, k = jc->done_moves;
		uint32_t *order = replayed_from(jc, jc->done_codes, &n);

		sort_moves(jc, k);
		replay(jc, order, n, k);
		free(order);
	} else {
		replay_all(jc);
	}
	jc->replayed = 1;
	jc->lines_counted = 0;
	jc->done_codes = jc->ncodes;
	jc->done_moves = jc->nmoves;
	build_indexes(jc);
}

/* ---- prune ---- */

/* Where an offset of the old names went (u64map: offset + 1 -> new offset + 1). */
static uint32_t keep_text(struct jitcode *jc, const char *old, struct u64map *moved,
			  uint32_t off, int is_file)
{
	uint32_t *v;
	uint32_t now;

	if (!off)
		return 0;
	v = u64map_get(moved, (uint64_t)off + 1);
	if (v)
		return *v - 1;
	now = is_file ? file_n(jc, old + off, strlen(old + off)) : add_name(jc, old + off);
	u64map_put(moved, (uint64_t)off + 1, now + 1);
	return now;
}

/* Is code `c` of no use to lookups from `floor` on, nor to a replay made again? (A code
 * replaced the moment it was loaded still ends what it was loaded over.) */
static int droppable(const struct jc_code *c, uint64_t floor)
{
	if (c->kind == KIND_MAP)
		return c->t1 != FOREVER;
	return !c->size || c->t1 <= floor;
}

/*
 * Move the runs of `base` (`size`-byte items) that `runs` names (key: the first item,
 * val: how many; sorted by key, no two overlapping unless equal) down to its start, in
 * order: each lands at or below where it was. `moved` maps each run's first item + 1
 * to its new first item + 1. Returns the items kept.
 */
static size_t move_runs_down(void *base, size_t size, const struct sort_pair *runs, size_t n,
			     struct u64map *moved)
{
	size_t w = 0;

	for (size_t k = 0; k < n; k++) {
		if (k && runs[k].key == runs[k - 1].key)
			continue; /* a copy's run: its load's */
		if (runs[k].val)
			memmove((char *)base + w * size, (char *)base + runs[k].key * size,
				runs[k].val * size);
		u64map_put(moved, runs[k].key + 1, (uint32_t)w + 1);
		w += runs[k].val;
	}
	return w;
}

/* Drop what droppable() says, the moves up to `floor`, and what only they used (lines,
 * names, unwinding tables), in place (a watcher's table is not held twice while it is
 * compacted); the live codes' treap and the indexes follow. */
static void compact(struct jitcode *jc)
{
	struct live_node *v;
	char *names = jc->names;
	uint32_t *remap;
	struct sort_pair *lruns, *uruns;
	struct u64map moved_names, moved_lines, moved_unwind;
	size_t nkept = 0, ncodes = jc->ncodes, nm = 0, nl = 0, nu = 0, lines, unwind;
	uint32_t last = 0;

	remap = xmalloc((ncodes + 1) * sizeof(*remap));
	lruns = xmalloc((2 * ncodes + 2) * sizeof(*lruns)); /* + sort_pairs' scratch */
	uruns = xmalloc((2 * ncodes + 2) * sizeof(*uruns));
	u64map_init(&moved_names);
	u64map_init(&moved_lines);
	u64map_init(&moved_unwind);
	for (size_t i = 0; i < ncodes; i++) {
		const struct jc_code *c = &jc->codes[i];

		remap[i] = droppable(c, jc->floor) ? UINT32_MAX : (uint32_t)nkept++;
		if (remap[i] == UINT32_MAX)
			continue;
		if (c->nlines)
			lruns[nl++] = (struct sort_pair){ c->lines_first, c->nlines };
		if (c->unwind_len)
			uruns[nu++] = (struct sort_pair){ c->unwind_off, c->unwind_len };
	}
	/* a DEBUG_INFO and an UNWINDING_INFO still waiting for their loads: the last */
	if (jc->pending)
		lruns[nl++] = (struct sort_pair){ jc->pend_first, jc->nlines - jc->pend_first };
	if (jc->unwind_pending)
		uruns[nu++] = (struct sort_pair){ jc->unwind_pend_off,
						  jc->unwind_len - jc->unwind_pend_off };
	sort_pairs(lruns, lruns + nl, nl);
	sort_pairs(uruns, uruns + nu, nu);
	lines = move_runs_down(jc->lines, sizeof(*jc->lines), lruns, nl, &moved_lines);
	unwind = move_runs_down(jc->unwind, 1, uruns, nu, &moved_unwind);
	/* the names again, from the kept codes' and entries' own */
	jc->names = NULL;
	jc->names_len = jc->names_cap = 0;
	u64map_release(&jc->files);
	u64map_init(&jc->files);
	add_name(jc, "");
	for (size_t k = 0; k < lines; k++)
		if (jc->lines[k].file != FILE_INVALID)
			jc->lines[k].file = keep_text(jc, names, &moved_names, jc->lines[k].file, 1);
	for (size_t i = 0; i < ncodes; i++) {
		struct jc_code c = jc->codes[i];

		if (remap[i] == UINT32_MAX)
			continue;
		/* a copy whose move goes is live from t0 on its own */
		if (c.kind == KIND_COPY && c.t0 <= jc->floor)
			c.replayed = 1;
		c.name = keep_text(jc, names, &moved_names, c.name, 0);
		c.raw = keep_text(jc, names, &moved_names, c.raw, 0);
		c.file = keep_text(jc, names, &moved_names, c.file, 1);
		if (c.nlines)
			c.lines_first = *u64map_get(&moved_lines, (uint64_t)c.lines_first + 1) - 1;
		if (c.unwind_len)
			c.unwind_off = *u64map_get(&moved_unwind, c.unwind_off + 1) - 1;
		if (jc->last_load == i + 1)
			last = remap[i] + 1;
		jc->codes[remap[i]] = c;
	}
	if (jc->pending)
		jc->pend_first = *u64map_get(&moved_lines, (uint64_t)jc->pend_first + 1) - 1;
	if (jc->unwind_pending)
		jc->unwind_pend_off = *u64map_get(&moved_unwind, jc->unwind_pend_off + 1) - 1;
	for (size_t k = 0; k < jc->nmoves; k++)
		if (jc->moves[k].time > jc->floor)
			jc->moves[nm++] = jc->moves[k];
	/* the live codes' treap, its nodes renumbered (their priorities kept: the shape
	 * stays a treap) */
	v = xcalloc(nkept + 2, sizeof(*v));
	for (size_t i = 0; i < ncodes; i++) {
		struct live_node x;
		const struct jc_code *c = &jc->codes[remap[i] == UINT32_MAX ? 0 : remap[i]];

		/* the treap's nodes: the codes live at the end (others' nodes are stale) */
		if (remap[i] == UINT32_MAX || i + 1 >= jc->lv.cap || c->kind == KIND_MAP ||
		    !c->size || c->t1 != FOREVER)
			continue;
		x = jc->lv.v[i + 1];
		x.left = x.left ? remap[x.left - 1] + 1 : 0;
		x.right = x.right ? remap[x.right - 1] + 1 : 0;
		v[remap[i] + 1] = x;
	}
	jc->lv.root = jc->lv.root ? remap[jc->lv.root - 1] + 1 : 0;
	free(jc->lv.v);
	jc->lv.v = v;
	jc->lv.cap = nkept + 2;
	jc->nmoves = nm;
	jc->ncodes = nkept;
	jc->nlines = lines;
	jc->unwind_len = unwind;
	jc->last_file = 0;
	jc->last_load = last;
	jc->done_codes = jc->ncodes;
	jc->done_moves = jc->nmoves;
	u64map_release(&moved_names);
	u64map_release(&moved_lines);
	u64map_release(&moved_unwind);
	free(names);
	free(remap);
	free(lruns);
	free(uruns);
	build_indexes(jc);
}

void jitcode_prune(struct jitcode *jc, uint64_t before)
{
	size_t drop = 0, moves = 0;

	thaw(jc);
	jitcode_finish(jc);
	if (jc->stats.timeless)
		before = FOREVER - 1; /* lookups are made at the end */
	if (before > jc->floor)
		jc->floor = before;
	/* compacted when a quarter is of no more use: a watcher's table is copied once in a
	 * while, not at every chunk; until then the index leaves out what ended */
	for (size_t i = 0; i < jc->ncodes; i++)
		drop += (size_t)droppable(&jc->codes[i], jc->floor);
	for (size_t k = 0; k < jc->nmoves; k++)
		moves += jc->moves[k].time <= jc->floor;
	if (drop * 4 > jc->ncodes || moves * 4 > jc->nmoves)
		compact(jc);
	else
		build_indexes(jc);
}

/* ---- lookup ---- */

/* The code live at the end of the replay over `addr` (its index), or -1. */
static int64_t live_at(const struct jitcode *jc, uint64_t addr)
{
	size_t k = count_keys_le(jc->live_start, jc->nlive, sizeof(uint64_t), 0, addr);
	uint32_t ci;

	if (!k)
		return -1;
	ci = jc->live_id[k - 1];
	return code_end(&jc->codes[ci]) > addr ? (int64_t)ci : -1;
}

static int index_find(const struct jitcode *jc, const struct jc_index *x, uint64_t time,
		      uint64_t addr, uint32_t *out)
{
	size_t lo, v;

	/* the last bound <= addr */
	lo = count_keys_le(x->bounds, x->nbounds, sizeof(uint64_t), 0, addr);
	if (lo == 0 || lo >= x->nbounds)
		return 0;
	/* the piece's node and those above it list every code over the piece; at one
	 * time at most one of them is live */
	for (v = x->leaves + lo - 1; v >= 1; v /= 2) {
		size_t a = x->first[v], b = x->first[v + 1], first = a;

		/* disjoint in time, sorted by t0: the last one with t0 <= time */
		while (a < b) {
			size_t mid = a + (b - a) / 2;

			if (jc->codes[x->ids[mid]].t0 <= time)
				a = mid + 1;
			else
				b = mid;
		}
		if (a > first && jc->codes[x->ids[a - 1]].t1 > time) {
			*out = x->ids[a - 1];
			return 1;
		}
	}
	return 0;
}

/* Whether code loaded after `time` covers `addr`: on the path from its piece to the
 * root, a node's codes are sorted by t0, so its last one says. */
static int index_later(const struct jitcode *jc, const struct jc_index *x, uint64_t time,
		       uint64_t addr)
{
	size_t lo = count_keys_le(x->bounds, x->nbounds, sizeof(uint64_t), 0, addr), v;

	if (lo == 0 || lo >= x->nbounds)
		return 0;
	for (v = x->leaves + lo - 1; v >= 1; v /= 2)
		if (x->first[v + 1] > x->first[v] &&
		    jc->codes[x->ids[x->first[v + 1] - 1]].t0 > time)
			return 1;
	return 0;
}


enum jitcode_absence jitcode_why_absent(const struct jitcode *jc, uint64_t time, uint64_t addr)
{
	int64_t live;

	if (!jc->finished || jc->stats.timeless)
		return JITCODE_ABSENT_NONE;
	if (time < jc->first_load)
		return JITCODE_ABSENT_BEFORE_FIRST;
	live = live_at(jc, addr);
	if (live >= 0 && jc->codes[live].t0 > time)
		return JITCODE_ABSENT_LOADED_LATER;
	return index_later(jc, &jc->dead, time, addr) ? JITCODE_ABSENT_LOADED_LATER
						      : JITCODE_ABSENT_NONE;
}

int jitcode_lookup(const struct jitcode *jc, uint64_t time, uint64_t addr,
		   struct jitcode_frame *f)
{
	const struct jc_code *c;
	uint32_t ci;
	int64_t live;

	if (!jc->finished)
		return 0;
	if (jc->stats.timeless)
		time = FOREVER - 1;
	/* the code live at the end of the replay, when it was there then; else the code
	 * that was there then and ended */
	live = live_at(jc, addr);
	if (live >= 0 && jc->codes[live].t0 <= time)
		ci = (uint32_t)live;
	else if (!index_find(jc, &jc->dead, time, addr, &ci) &&
		 !index_find(jc, &jc->mapped, FOREVER - 1, addr, &ci))
		return 0;
	c = &jc->codes[ci];
	memset(f, 0, sizeof(*f));
	f->name = jc->names + c->name;
	f->raw_name = jc->names + c->raw;
	f->start = c->start;
	f->size = c->size;
	f->code = ci;
	f->from_map = c->kind == KIND_MAP;
	f->file = c->file ? text(jc, c->file) : NULL;
	if (c->nlines && c->lines_size) {
		/*
		 * The entry with the greatest address at or below `addr`, in the producer's
		 * addresses: those past the load's end never count, and of those before its
		 * start the last one covers the code from its start (BEAM starts in the
		 * prologue).
		 */
		const struct jc_line *l = jc->lines + c->lines_first;
		uint64_t rel = addr - c->start;
		int64_t at;
		size_t lo = 0, hi = c->nlines;

		if (rel >= c->lines_size)
			rel = c->lines_size - 1;
		at = (int64_t)rel + (int64_t)jc->stats.line_offset;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (l[mid].rel <= at)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0 && l[lo - 1].line) {
			f->line = l[lo - 1].line;
			if (l[lo - 1].file)
				f->file = text(jc, l[lo - 1].file);
		}
	}
	return 1;
}

/* ---- as bytes ---- */

/*
 * Layout (host byte order, every array at an 8-aligned offset): struct saved, then the
 * arrays its offsets name. The table's whole state: what it holds, its replay's end (its
 * live codes in address order: the treap is made again from them when records come),
 * its indexes, and what waits for a load.
 */
#define SAVED_MAGIC 0x4a43414348450003ull /* "JCACHE", layout 3 */

struct saved_index {
	uint64_t bounds, first, ids;     /* offsets */
	uint64_t nbounds, leaves, nids;
};

struct saved {
	uint64_t magic;
	uint64_t size;                   /* of the whole */
	struct jitcode_stats stats;
	uint64_t demangle, seq, pending, pend_addr, pend_first, debug_dropped;
	uint64_t unwind_pending, unwind_pend_off, unwind_pend_hdr;
	uint64_t first_load, inexact, last_load;
	uint64_t replayed, last_time, last_seq, floor;
	uint64_t codes, ncodes, lines, nlines, names, names_len, moves, nmoves;
	uint64_t unwind, unwind_len, live_start, live_id, nlive;
	struct saved_index dead, mapped;
};

static size_t place(size_t *at, size_t bytes)
{
	size_t off = align8(*at);

	*at = off + bytes;
	return off;
}

static void save_index(const struct jc_index *x, struct saved_index *sx, size_t *at)
{
	size_t nodes = 2 * x->leaves;

	sx->nbounds = x->nbounds;
	sx->leaves = x->leaves;
	sx->nids = x->nids;
	sx->bounds = place(at, x->nbounds * sizeof(*x->bounds));
	sx->first = place(at, (nodes + 1) * sizeof(*x->first));
	sx->ids = place(at, x->nids * sizeof(*x->ids));
}

static void put(uint8_t *out, uint64_t off, const void *p, size_t bytes)
{
	if (bytes)
		memcpy(out + off, p, bytes);
}

void *jitcode_save(struct jitcode *jc, size_t room, size_t *len)
{
	struct saved h;
	size_t at = sizeof(h);
	uint8_t *out, *all;

	jitcode_finish(jc);
	memset(&h, 0, sizeof(h));
	h.magic = SAVED_MAGIC;
	h.stats = jc->stats;
	h.demangle = (uint64_t)jc->demangle;
	h.seq = jc->seq;
	h.pending = (uint64_t)jc->pending;
	h.pend_addr = jc->pend_addr;
	h.pend_first = jc->pend_first;
	h.debug_dropped = jc->debug_dropped;
	h.unwind_pending = (uint64_t)jc->unwind_pending;
	h.unwind_pend_off = jc->unwind_pend_off;
	h.unwind_pend_hdr = jc->unwind_pend_hdr;
	h.first_load = jc->first_load;
	h.inexact = (uint64_t)jc->inexact;
	h.last_load = jc->last_load;
	h.replayed = (uint64_t)jc->replayed;
	h.last_time = jc->last_time;
	h.last_seq = jc->last_seq;
	h.floor = jc->floor;
	h.ncodes = jc->ncodes;
	h.nlines = jc->nlines;
	h.names_len = jc->names_len;
	h.nmoves = jc->nmoves;
	h.unwind_len = jc->unwind_len;
	h.nlive = jc->nlive;
	h.codes = place(&at, jc->ncodes * sizeof(*jc->codes));
	h.lines = place(&at, jc->nlines * sizeof(*jc->lines));
	h.names = place(&at, jc->names_len);
	h.moves = place(&at, jc->nmoves * sizeof(*jc->moves));
	h.unwind = place(&at, jc->unwind_len);
	h.live_start = place(&at, jc->nlive * sizeof(*jc->live_start));
	h.live_id = place(&at, jc->nlive * sizeof(*jc->live_id));
	save_index(&jc->dead, &h.dead, &at);
	save_index(&jc->mapped, &h.mapped, &at);
	h.size = align8(at);
	room = align8(room);
	all = xcalloc(1, room + h.size);
	out = all + room;
	memcpy(out, &h, sizeof(h));
	put(out, h.codes, jc->codes, jc->ncodes * sizeof(*jc->codes));
	put(out, h.lines, jc->lines, jc->nlines * sizeof(*jc->lines));
	put(out, h.names, jc->names, jc->names_len);
	put(out, h.moves, jc->moves, jc->nmoves * sizeof(*jc->moves));
	put(out, h.unwind, jc->unwind, jc->unwind_len);
	put(out, h.live_start, jc->live_start, jc->nlive * sizeof(*jc->live_start));
	put(out, h.live_id, jc->live_id, jc->nlive * sizeof(*jc->live_id));
	for (int k = 0; k < 2; k++) {
		const struct jc_index *x = k ? &jc->mapped : &jc->dead;
		const struct saved_index *sx = k ? &h.mapped : &h.dead;

		put(out, sx->bounds, x->bounds, x->nbounds * sizeof(*x->bounds));
		put(out, sx->first, x->first, (2 * x->leaves + 1) * sizeof(*x->first));
		put(out, sx->ids, x->ids, x->nids * sizeof(*x->ids));
	}
	*len = room + h.size;
	return all;
}

/* `n` items of `size` bytes at `off` lie within `len` bytes, 8-aligned. */
static int within(uint64_t off, uint64_t n, uint64_t size, uint64_t len)
{
	return off % 8 == 0 && off <= len && n <= (len - off) / (size ? size : 1);
}

/* An index read in place: its sizes hold together and each id names a code. */
static int load_index(struct jc_index *x, const struct saved_index *sx, const uint8_t *b,
		      uint64_t len, uint64_t ncodes)
{
	uint64_t nodes;

	if (sx->leaves == 0 || sx->leaves > (1ull << 40) || (sx->leaves & (sx->leaves - 1)) ||
	    sx->nbounds > sx->leaves + 1 || !within(sx->bounds, sx->nbounds, 8, len) ||
	    !within(sx->ids, sx->nids, 4, len))
		return -1;
	nodes = 2 * sx->leaves;
	if (!within(sx->first, nodes + 1, sizeof(*x->first), len))
		return -1;
	x->bounds = (uint64_t *)(uintptr_t)(b + sx->bounds);
	x->first = (size_t *)(uintptr_t)(b + sx->first);
	x->ids = (uint32_t *)(uintptr_t)(b + sx->ids);
	x->nbounds = sx->nbounds;
	x->leaves = sx->leaves;
	x->nids = sx->nids;
	for (size_t k = 1; k < x->nbounds; k++)
		if (x->bounds[k] <= x->bounds[k - 1])
			return -1;
	if (x->first[0] != 0 || x->first[nodes] != x->nids)
		return -1;
	for (size_t k = 0; k < nodes; k++)
		if (x->first[k] > x->first[k + 1])
			return -1;
	for (size_t k = 0; k < x->nids; k++)
		if (x->ids[k] >= ncodes)
			return -1;
	return 0;
}

struct jitcode *jitcode_load(struct mapped_file *mf, size_t at)
{
	const uint8_t *b = (const uint8_t *)mf->map + at;
	uint64_t len = mf->len > at ? mf->len - at : 0;
	struct jitcode *jc;
	struct saved h;

	if (!mf->map || at % 8 || len < sizeof(h))
		return NULL;
	memcpy(&h, b, sizeof(h));
	if (h.magic != SAVED_MAGIC || h.size != len || h.names_len == 0 ||
	    h.names_len > UINT32_MAX || h.ncodes > UINT32_MAX - 2 || h.nlines > UINT32_MAX ||
	    h.nlive > h.ncodes || h.last_load > h.ncodes || h.pend_first > h.nlines ||
	    h.unwind_pend_off > h.unwind_len ||
	    !within(h.codes, h.ncodes, sizeof(struct jc_code), len) ||
	    !within(h.lines, h.nlines, sizeof(struct jc_line), len) ||
	    !within(h.names, h.names_len, 1, len) ||
	    !within(h.moves, h.nmoves, sizeof(struct jc_move), len) ||
	    !within(h.unwind, h.unwind_len, 1, len) ||
	    !within(h.live_start, h.nlive, 8, len) || !within(h.live_id, h.nlive, 4, len))
		return NULL;
	jc = xcalloc(1, sizeof(*jc));
	jc->frozen = 1;
	jc->finished = 1;
	jc->stats = h.stats;
	jc->demangle = (int)h.demangle;
	jc->seq = (uint32_t)h.seq;
	jc->pending = (int)h.pending;
	jc->pend_addr = h.pend_addr;
	jc->pend_first = (size_t)h.pend_first;
	jc->debug_dropped = h.debug_dropped;
	jc->unwind_pending = (int)h.unwind_pending;
	jc->unwind_pend_off = h.unwind_pend_off;
	jc->unwind_pend_hdr = (uint32_t)h.unwind_pend_hdr;
	jc->first_load = h.first_load;
	jc->inexact = (int)h.inexact;
	jc->last_load = (uint32_t)h.last_load;
	jc->replayed = (int)h.replayed;
	jc->last_time = h.last_time;
	jc->last_seq = (uint32_t)h.last_seq;
	jc->floor = h.floor;
	jc->codes = (struct jc_code *)(uintptr_t)(b + h.codes);
	jc->ncodes = jc->codes_cap = (size_t)h.ncodes;
	jc->lines = (struct jc_line *)(uintptr_t)(b + h.lines);
	jc->nlines = jc->lines_cap = (size_t)h.nlines;
	jc->names = (char *)(uintptr_t)(b + h.names);
	jc->names_len = jc->names_cap = (size_t)h.names_len;
	jc->moves = (struct jc_move *)(uintptr_t)(b + h.moves);
	jc->nmoves = jc->moves_cap = (size_t)h.nmoves;
	jc->unwind = (uint8_t *)(uintptr_t)(b + h.unwind);
	jc->unwind_len = jc->unwind_cap = (size_t)h.unwind_len;
	jc->live_start = (uint64_t *)(uintptr_t)(b + h.live_start);
	jc->live_id = (uint32_t *)(uintptr_t)(b + h.live_id);
	jc->nlive = (size_t)h.nlive;
	jc->done_codes = jc->ncodes;
	jc->done_moves = jc->nmoves;
	u64map_init(&jc->files);
	jc->mf = *mf;
	memset(mf, 0, sizeof(*mf)); /* the table's now */
	/* what it holds holds together: a lookup never leaves the arrays */
	if (jc->names[0] || jc->names[jc->names_len - 1] ||
	    load_index(&jc->dead, &h.dead, b, len, jc->ncodes) != 0 ||
	    load_index(&jc->mapped, &h.mapped, b, len, jc->ncodes) != 0)
		goto bad;
	for (size_t i = 0; i < jc->ncodes; i++) {
		const struct jc_code *c = &jc->codes[i];

		if (c->name >= jc->names_len || c->raw >= jc->names_len || c->file >= jc->names_len ||
		    c->lines_first > jc->nlines || c->nlines > jc->nlines - c->lines_first ||
		    c->unwind_off > jc->unwind_len || c->unwind_len > jc->unwind_len - c->unwind_off ||
		    c->unwind_hdr > c->unwind_len || c->kind > KIND_COPY)
			goto bad;
	}
	for (size_t i = 0; i < jc->nlines; i++)
		if (jc->lines[i].file >= jc->names_len &&
		    !(jc->lines[i].file == FILE_INVALID && jc->pending && i >= jc->pend_first))
			goto bad;
	for (size_t i = 0; i < jc->nlive; i++)
		if (jc->live_id[i] >= jc->ncodes || jc->live_start[i] != jc->codes[jc->live_id[i]].start ||
		    (i && jc->live_start[i] < jc->live_start[i - 1]))
			goto bad;
	return jc;
bad:
	*mf = jc->mf; /* the caller's again, to say what is wrong and close */
	memset(&jc->mf, 0, sizeof(jc->mf));
	jitcode_free(jc);
	return NULL;
}

/* Copy a table read in place into arrays of its own, before records are added: the
 * treap made again from its live codes, the file names' index from its codes and
 * entries; the indexes are made again by the next finish. */
static void thaw(struct jitcode *jc)
{
	void *p;

	if (!jc->frozen)
		return;
#define OWN(field, n, size)                                   \
	do {                                                  \
		p = xmalloc(((n) + 1) * (size));              \
		if (n)                                        \
			memcpy(p, jc->field, (n) * (size));   \
		memcpy(&jc->field, &p, sizeof(p));            \
	} while (0)
	OWN(codes, jc->ncodes, sizeof(*jc->codes));
	OWN(lines, jc->nlines, sizeof(*jc->lines));
	OWN(names, jc->names_len, 1);
	OWN(moves, jc->nmoves, sizeof(*jc->moves));
	OWN(unwind, jc->unwind_len, 1);
	OWN(live_start, jc->nlive, sizeof(*jc->live_start));
	OWN(live_id, jc->nlive, sizeof(*jc->live_id));
#undef OWN
	memset(&jc->dead, 0, sizeof(jc->dead));
	memset(&jc->mapped, 0, sizeof(jc->mapped));
	jc->codes_cap = jc->ncodes + 1;
	jc->lines_cap = jc->nlines + 1;
	jc->names_cap = jc->names_len + 1;
	jc->moves_cap = jc->nmoves + 1;
	jc->unwind_cap = jc->unwind_len + 1;
	mapped_file_close(&jc->mf);
	jc->frozen = 0;
	/* the files again, each once */
	for (size_t i = 0; i < jc->ncodes; i++)
		if (jc->codes[i].file)
			u64map_put(&jc->files, hash_bytes(text(jc, jc->codes[i].file),
							  strlen(text(jc, jc->codes[i].file))) | 1,
				   jc->codes[i].file);
	for (size_t i = 0; i < jc->nlines; i++)
		if (jc->lines[i].file && jc->lines[i].file != FILE_INVALID)
			u64map_put(&jc->files, hash_bytes(text(jc, jc->lines[i].file),
							  strlen(text(jc, jc->lines[i].file))) | 1,
				   jc->lines[i].file);
	/* the replay's live codes, as the treap it was */
	jc->lv.root = 0;
	for (size_t i = 0; i < jc->nlive; i++) {
		uint32_t n = jc->live_id[i] + 1;

		if (n + 1 > jc->lv.cap)
			grow_array((void **)&jc->lv.v, &jc->lv.cap, jc->ncodes + 2, sizeof(*jc->lv.v));
		jc->lv.v[n] = (struct live_node){ jc->codes[n - 1].start, 0, 0, (uint32_t)hash_u64(n) };
		jc->lv.root = live_add(&jc->lv, jc->lv.root, n);
	}
}
