/* framecache: what an object's DWARF said of each address it was asked, kept. */
#include "symbolize/framecache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mapfile.h"
#include "common/util.h"

/*
 * Layout (host byte order): struct fc_header (its head: locate's cache_head, with the
 * checksum); the two paths, each NUL-terminated; then at 8-aligned offsets naddrs
 * struct fc_addr by ascending vaddr, nframes struct fc_frame, and the strings, each
 * NUL-terminated, the last byte a NUL.
 */
#define FCACHE_MAGIC "PCFRAME"
#define FCACHE_VERSION 4 /* 2: a function without a linkage name has its scope (issue 34); 3: a
			   dwz supplement read (inlined frames were lost); 4: a function-local
			   scope with its parameters (issue 48) */

struct fc_header {
	struct cache_head head;
	struct file_id file_id, debug_id; /* debug_id all 0 without a debug file */
	uint32_t dwarf;                   /* enum frame_cache_dwarf */
	uint32_t has_debug;
	uint32_t file_len, debug_len;
	uint64_t naddrs, nframes, strings_len;
	uint64_t addrs_off, frames_off, strings_off;
};

struct fc_addr {
	uint64_t vaddr;
	uint32_t first, n; /* frames[first .. first + n) */
};

struct fc_frame {
	uint32_t name, file; /* offset + 1 in the strings, 0 for NULL */
	uint32_t line, column;
};

/* A frame learnt this run: its strings interned (id + 1, 0 for NULL). */
struct new_frame {
	uint32_t name, file, line, column;
};

struct new_addr {
	uint64_t vaddr;
	uint32_t first, n; /* in `nframes_v` */
};

struct frame_cache {
	const struct cache_ctx *cache;
	char key[17];
	char *entry;
	char *file, *debug;
	struct file_id file_id, debug_id;
	enum frame_cache_dwarf dwarf;
	int dirty;
	/* what was read */
	struct mapped_file mf;
	const struct fc_addr *addrs;
	size_t naddrs;
	const struct fc_frame *frames;
	size_t nframes;
	const char *strings;
	/* what this run learnt */
	struct u64map index; /* vaddr + 1 -> index + 1 in news */
	struct new_addr *news;
	size_t nnews, news_cap;
	struct new_frame *nframes_v;
	size_t nnf, nnf_cap;
	struct strtab strs;
};

/* Everything the entry points at lies within it, in order. */
static int consistent(const struct fc_header *h, const char *m, const struct mapped_file *mf)
{
	const struct fc_addr *a = (const struct fc_addr *)(const void *)(m + h->addrs_off);
	const struct fc_frame *f = (const struct fc_frame *)(const void *)(m + h->frames_off);

	if (h->dwarf > FRAME_CACHE_SOME || h->strings_len == 0 ||
	    !mapped_file_holds(mf, h->addrs_off, h->naddrs, sizeof(*a)) ||
	    !mapped_file_holds(mf, h->frames_off, h->nframes, sizeof(*f)) ||
	    !mapped_file_holds(mf, h->strings_off, h->strings_len, 1) ||
	    h->nframes > UINT32_MAX || h->strings_len > UINT32_MAX ||
	    m[h->strings_off + h->strings_len - 1] != 0)
		return 0;
	for (size_t i = 0; i < h->naddrs; i++)
		if ((i && a[i].vaddr <= a[i - 1].vaddr) || a[i].first > h->nframes ||
		    a[i].n > h->nframes - a[i].first)
			return 0;
	for (size_t i = 0; i < h->nframes; i++)
		if (f[i].name > h->strings_len || f[i].file > h->strings_len)
			return 0;
	return 1;
}

/* Read the entry into `fc` when it was made from the files as they are. */
static void read_entry(struct frame_cache *fc)
{
	struct fc_header h;
	const char *m, *why = NULL;
	enum cache_verdict v;
	size_t paths = sizeof(h) + strlen(fc->file) + 1 + (fc->debug ? strlen(fc->debug) : 0) + 1;

	v = cache_entry_open(fc->entry, FCACHE_MAGIC, FCACHE_VERSION, sizeof(h), &fc->mf, &why);
	if (v != CACHE_GOOD) {
		if (v == CACHE_DAMAGED)
			cache_damaged(fc->cache, fc->entry, why);
		return;
	}
	m = fc->mf.map;
	memcpy(&h, m, sizeof(h));
	/* made for these files as they are: else made again without a word */
	if (memcmp(&h.file_id, &fc->file_id, sizeof(h.file_id)) ||
	    memcmp(&h.debug_id, &fc->debug_id, sizeof(h.debug_id)) ||
	    h.has_debug != (fc->debug != NULL) || h.file_len != strlen(fc->file) ||
	    h.debug_len != (fc->debug ? strlen(fc->debug) : 0) || fc->mf.len < paths ||
	    memcmp(m + sizeof(h), fc->file, h.file_len + 1) ||
	    (fc->debug && memcmp(m + sizeof(h) + h.file_len + 1, fc->debug, h.debug_len + 1))) {
		mapped_file_close(&fc->mf);
		memset(&fc->mf, 0, sizeof(fc->mf));
		return;
	}
	if (!consistent(&h, m, &fc->mf)) {
		/* a checksum that held over bytes that do not hold together */
		mapped_file_close(&fc->mf);
		memset(&fc->mf, 0, sizeof(fc->mf));
		cache_damaged(fc->cache, fc->entry, "inconsistent");
		return;
	}
	fc->dwarf = (enum frame_cache_dwarf)h.dwarf;
	fc->addrs = (const struct fc_addr *)(const void *)(m + h.addrs_off);
	fc->naddrs = (size_t)h.naddrs;
	fc->frames = (const struct fc_frame *)(const void *)(m + h.frames_off);
	fc->nframes = (size_t)h.nframes;
	fc->strings = m + h.strings_off;
}

struct frame_cache *frame_cache_open(const struct cache_ctx *cache, const char *file,
				     const char *debug_file)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct frame_cache *fc;
	struct file_id fid, did;
	uint64_t key;

	if (!cache || !cache->dir || !cache->dir[0] || !file || (urls && urls[0]))
		return NULL;
	memset(&did, 0, sizeof(did));
	if (file_id_of(file, &fid) != 0 || (debug_file && file_id_of(debug_file, &did) != 0))
		return NULL;
	key = hash_bytes(file, strlen(file)) ^
	      hash_u64(debug_file ? hash_bytes(debug_file, strlen(debug_file)) + 1 : 0);
	fc = xcalloc(1, sizeof(*fc));
	snprintf(fc->key, sizeof(fc->key), "%016llx", (unsigned long long)key);
	fc->cache = cache;
	fc->entry = cache_entry_path(cache->dir, CACHE_FRAMES, fc->key, 0);
	if (!fc->entry) {
		free(fc);
		return NULL;
	}
	fc->file = xstrdup(file);
	fc->debug = debug_file ? xstrdup(debug_file) : NULL;
	fc->file_id = fid;
	fc->debug_id = did;
	u64map_init(&fc->index);
	strtab_init(&fc->strs);
	read_entry(fc);
	return fc;
}

enum frame_cache_dwarf frame_cache_dwarf(const struct frame_cache *fc)
{
	return fc ? fc->dwarf : FRAME_CACHE_UNKNOWN;
}

void frame_cache_set_dwarf(struct frame_cache *fc, int has)
{
	enum frame_cache_dwarf d = has ? FRAME_CACHE_SOME : FRAME_CACHE_NONE;

	if (fc && fc->dwarf != d) {
		fc->dwarf = d;
		fc->dirty = 1;
	}
}

static const char *read_str(const struct frame_cache *fc, uint32_t off)
{
	return off ? fc->strings + off - 1 : NULL;
}

static const char *new_str(const struct frame_cache *fc, uint32_t id)
{
	return id ? strtab_str(&fc->strs, id - 1) : NULL;
}

/* An address of either kind: read (is_new 0, addrs[i]) or learnt (news[i]). */
struct merged {
	uint64_t vaddr;
	int is_new;
	size_t i;
};

/* Frame `j` of an address read or learnt. */
static struct dwarf_frame frame_at(const struct frame_cache *fc, const struct merged *m, uint32_t j)
{
	if (m->is_new) {
		const struct new_frame *f = &fc->nframes_v[fc->news[m->i].first + j];

		return (struct dwarf_frame){ new_str(fc, f->name), new_str(fc, f->file), f->line,
					     f->column };
	} else {
		const struct fc_frame *f = &fc->frames[fc->addrs[m->i].first + j];

		return (struct dwarf_frame){ read_str(fc, f->name), read_str(fc, f->file), f->line,
					     f->column };
	}
}

long frame_cache_get(const struct frame_cache *fc, uint64_t vaddr, struct dwarf_frame *out,
		     size_t cap)
{
	struct merged m = { vaddr, 0, 0 };
	uint32_t *v, n;
	size_t k;

	if (!fc)
		return -1;
	k = COUNT_LE(fc->addrs, fc->naddrs, vaddr, vaddr);
	if (k && fc->addrs[k - 1].vaddr == vaddr) {
		m.i = k - 1;
		n = fc->addrs[m.i].n;
	} else if ((v = u64map_get(&fc->index, vaddr + 1)) != NULL) {
		m.is_new = 1;
		m.i = *v - 1;
		n = fc->news[m.i].n;
	} else {
		return -1;
	}
	for (uint32_t j = 0; j < n && j < cap; j++)
		out[j] = frame_at(fc, &m, j);
	return n < cap ? (long)n : (long)cap;
}

void frame_cache_put(struct frame_cache *fc, uint64_t vaddr, const struct dwarf_frame *df,
		     size_t n)
{
	struct new_addr a;

	if (!fc || vaddr + 1 == 0 || n > UINT32_MAX || frame_cache_get(fc, vaddr, NULL, 0) >= 0)
		return;
	a.vaddr = vaddr;
	a.first = (uint32_t)fc->nnf;
	a.n = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		struct new_frame f = {
			df[i].name ? strtab_intern(&fc->strs, df[i].name) + 1 : 0,
			df[i].file ? strtab_intern(&fc->strs, df[i].file) + 1 : 0,
			df[i].line, df[i].column,
		};

		VEC_PUSH(fc->nframes_v, fc->nnf, fc->nnf_cap, f);
	}
	VEC_PUSH(fc->news, fc->nnews, fc->news_cap, a);
	u64map_put(&fc->index, vaddr + 1, (uint32_t)fc->nnews);
	fc->dirty = 1;
}

static int merged_cmp(const void *a, const void *b)
{
	const struct merged *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* The strings of the entry to write: each distinct one once, its offset + 1 by id. */
static uint32_t out_str(struct strtab *t, const char *s)
{
	return s ? strtab_intern(t, s) + 1 : 0;
}

void frame_cache_save(struct frame_cache *fc)
{
	struct fc_header h;
	struct merged *all;
	struct strtab out;
	struct fc_addr *addrs;
	struct fc_frame *frames;
	uint64_t *offs;
	size_t n, nf = 0, size, at;
	char *buf, *entry;

	if (!fc || !fc->dirty)
		return;
	n = fc->naddrs + fc->nnews;
	all = xmalloc((n ? n : 1) * sizeof(*all));
	for (size_t i = 0; i < fc->naddrs; i++)
		all[i] = (struct merged){ fc->addrs[i].vaddr, 0, i };
	for (size_t i = 0; i < fc->nnews; i++)
		all[fc->naddrs + i] = (struct merged){ fc->news[i].vaddr, 1, i };
	qsort(all, n, sizeof(*all), merged_cmp);
	addrs = xmalloc((n ? n : 1) * sizeof(*addrs));
	frames = xmalloc((fc->nframes + fc->nnf + 1) * sizeof(*frames));
	strtab_init(&out);
	for (size_t k = 0; k < n; k++) {
		uint32_t first = (uint32_t)nf, cnt;

		/* read or learnt, each frame as dwarf_frame gives it, into the strings written */
		cnt = all[k].is_new ? fc->news[all[k].i].n : fc->addrs[all[k].i].n;
		for (uint32_t j = 0; j < cnt; j++) {
			struct dwarf_frame d = frame_at(fc, &all[k], j);

			frames[nf++] = (struct fc_frame){ out_str(&out, d.name), out_str(&out, d.file),
							  d.line, d.column };
		}
		addrs[k] = (struct fc_addr){ all[k].vaddr, first, cnt };
	}
	/* string id -> offset + 1 in the strings written (id 0, "", is the first byte) */
	offs = xmalloc((strtab_count(&out) + 1) * sizeof(*offs));
	memset(&h, 0, sizeof(h));
	for (size_t i = 0; i < strtab_count(&out); i++) {
		offs[i] = h.strings_len + 1;
		h.strings_len += strlen(strtab_str(&out, (uint32_t)i)) + 1;
	}
	for (size_t i = 0; i < nf; i++) {
		frames[i].name = frames[i].name ? (uint32_t)offs[frames[i].name - 1] : 0;
		frames[i].file = frames[i].file ? (uint32_t)offs[frames[i].file - 1] : 0;
	}
	h.file_id = fc->file_id;
	h.debug_id = fc->debug_id;
	h.dwarf = (uint32_t)fc->dwarf;
	h.has_debug = fc->debug != NULL;
	h.file_len = (uint32_t)strlen(fc->file);
	h.debug_len = fc->debug ? (uint32_t)strlen(fc->debug) : 0;
	h.naddrs = n;
	h.nframes = nf;
	h.addrs_off = align8(sizeof(h) + h.file_len + 1 + h.debug_len + 1);
	h.frames_off = align8(h.addrs_off + n * sizeof(*addrs));
	h.strings_off = align8(h.frames_off + nf * sizeof(*frames));
	size = (size_t)(h.strings_off + h.strings_len);
	buf = xcalloc(1, size);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), fc->file, h.file_len);
	if (fc->debug)
		memcpy(buf + sizeof(h) + h.file_len + 1, fc->debug, h.debug_len);
	memcpy(buf + h.addrs_off, addrs, n * sizeof(*addrs));
	memcpy(buf + h.frames_off, frames, nf * sizeof(*frames));
	at = (size_t)h.strings_off;
	for (size_t i = 0; i < strtab_count(&out); i++) {
		const char *s = strtab_str(&out, (uint32_t)i);
		size_t len = strlen(s) + 1;

		memcpy(buf + at, s, len);
		at += len;
	}
	cache_head_seal(buf, size, FCACHE_MAGIC, FCACHE_VERSION, sizeof(h));
	entry = cache_entry_path(fc->cache->dir, CACHE_FRAMES, fc->key, 1);
	if (entry)
		(void)cache_file_write(fc->cache, entry, buf, size);
	fc->dirty = 0;
	free(entry);
	free(buf);
	free(offs);
	strtab_release(&out);
	free(frames);
	free(addrs);
	free(all);
}

void frame_cache_free(struct frame_cache *fc)
{
	if (!fc)
		return;
	mapped_file_close(&fc->mf);
	u64map_release(&fc->index);
	strtab_release(&fc->strs);
	free(fc->news);
	free(fc->nframes_v);
	free(fc->entry);
	free(fc->file);
	free(fc->debug);
	free(fc);
}
