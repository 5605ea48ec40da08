/* jitcode: the JIT code of one process over time: the table, and the records added to it.
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
 * the history; perf map lines written over are dropped as they come
 * (jitcode_drop_replaced_maps()), which needs no time.
 *
 * The parts (jitcode_internal.h): this file, the table and its records; jitcode_index.c,
 * the replay and the time index; jitcode_lookup.c; jitcode_prune.c; jitcode_saved.c.
 */
#include "symbolize/jit/jitcode_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/demangle.h"

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

uint32_t jitcode_add_name(struct jitcode *jc, const char *name)
{
	return add_name_n(jc, name, strlen(name));
}

/* A file name's offset, the same for the same name (0 for ""). */
uint32_t jitcode_file_n(struct jitcode *jc, const char *s, size_t len)
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
	jitcode_add_name(jc, ""); /* offset 0 */
	return jc;
}

void jitcode_index_release(struct jc_index *x)
{
	free(x->bounds);
	free(x->first);
	free(x->ids);
	memset(x, 0, sizeof(*x));
}

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
	jitcode_index_release(&jc->dead);
	jitcode_index_release(&jc->mapped);
	free(jc->lv.v);
	free(jc->live_start);
	free(jc->live_id);
	free(jc);
}

void jitcode_set_timeless(struct jitcode *jc)
{
	jc->stats.timeless = 1;
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

uint64_t jitcode_kept_unsaid(struct jitcode *jc)
{
	uint64_t n = jc->stats.names_kept - jc->kept_said;

	jc->kept_said = jc->stats.names_kept;
	return n;
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
	jitcode_thaw(jc);
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
				jc->last_file = jitcode_file_n(jc, e->file, strlen(e->file));
			last_file = e->file;
			l.file = jc->last_file;
		}
		VEC_PUSH(jc->lines, jc->nlines, jc->lines_cap, l);
	}
}

uint32_t jitcode_new_code(struct jitcode *jc, uint64_t start, uint64_t size, uint64_t t0,
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
		unsigned kept = demangle_kept(&jc->dm);
		char *d = demangle_jit_name(jc->names + c->raw, &jc->dm);

		if (d) {
			c->name = jitcode_add_name(jc, d);
			free(d);
		}
		jc->stats.names_kept += demangle_kept(&jc->dm) - kept;
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
	uint32_t nfid = nflen ? jitcode_file_n(jc, nf, nflen) : 0;

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
	ci = jitcode_new_code(jc, code_addr, size, jc->stats.timeless ? jc->seq : time, jc->seq, KIND_LOAD);
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
	ci = jitcode_new_code(jc, start, size, 0, jc->seq++, KIND_MAP);
	jc->last_load = ci + 1;
	set_names(jc, &jc->codes[ci], name);
	jc->stats.map_entries++;
	/* a runtime restates its ranges for as long as it runs (node --perf-basic-prof
	 * writes a line each time it compiles a function again): the lines written over
	 * go once a batch as large as the table has come, so that a table read on for
	 * months holds the live ranges, not the map's history, for a finish per batch */
	if (++jc->maps_unchecked >= MAP_BATCH && 2 * jc->maps_unchecked >= jc->ncodes)
		jitcode_drop_replaced_maps(jc);
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
			jitcode_thaw(jc);
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
