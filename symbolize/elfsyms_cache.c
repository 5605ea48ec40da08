/* elfsyms_cache: an ELF object's symbol table kept in the cache, and read back in place. */
#include "symbolize/elfsyms_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "symbolize/locate.h"

/*
 * File format of a cache file (host byte order, written and read by this code only):
 * struct scache_header (its head: locate's cache_head, with the checksum); the key
 * (the path opened) and the symbol file's path, each NUL-terminated; then at
 * 8-aligned offsets nsegs struct load_seg, nsyms struct scache_sym, nsyms u32 offsets
 * of the raw names, nslots struct sym_slot, nsyms u8 bindings, and the names,
 * NUL-terminated, the last byte a NUL. Every symbol of an address is kept (version 3):
 * the choice among them is made at lookup.
 */
#define SCACHE_MAGIC "PCSYMS1"
#define SCACHE_VERSION 4 /* 4: an object with .symtab but no DWARF takes its debug file */

struct scache_sym {
	uint64_t start, end, name;
};

struct scache_header {
	struct cache_head head;
	struct file_id file_id, sym_id;  /* the object and its symbol file, as read */
	uint8_t want[BUILD_ID_MAX], build_id[BUILD_ID_MAX];
	uint32_t want_size, build_id_size;
	uint32_t is_rel, has_symtab;
	uint32_t key_len, symfile_len;
	uint64_t nsegs, nsyms, nslots, names_len;
	uint64_t segs_off, syms_off, raw_off, slots_off, bind_off, names_off;
};

/* The symbols and slots of a cached table lie within its names and each other. */
static int scache_consistent(const struct scache_header *h, const char *m)
{
	const struct scache_sym *syms = (const struct scache_sym *)(const void *)(m + h->syms_off);
	const uint32_t *raw = (const uint32_t *)(const void *)(m + h->raw_off);
	const struct sym_slot *slots = (const struct sym_slot *)(const void *)(m + h->slots_off);

	for (size_t i = 0; i < h->nsyms; i++)
		if (syms[i].name >= h->names_len || raw[i] >= h->names_len)
			return 0;
	if (slots[0].first != 0)
		return 0;
	for (size_t i = 0; i < h->nslots; i++)
		if (slots[i].first >= h->nsyms || (i > 0 && slots[i].first <= slots[i - 1].first) ||
		    (slots[i].parent != NO_PARENT && slots[i].parent >= i))
			return 0;
	return 1;
}

/* An object from cache `cfile`, when it was made from `full` as `fid` describes it,
 * for the build id `want`, and its symbol file is unchanged; else NULL, and *verdict
 * says why (*why too for damage). */
static struct elf_obj *scache_open(const char *cfile, const char *full,
				   const struct file_id *fid, const uint8_t *want, size_t nwant,
				   enum cache_verdict *verdict, const char **why)
{
	struct scache_header h;
	struct mapped_file mf;
	struct elf_obj *o;
	struct file_id sid;
	const char *m, *symfile;
	const struct scache_sym *syms;
	size_t strings;

	*verdict = cache_entry_open(cfile, SCACHE_MAGIC, SCACHE_VERSION, sizeof(h), &mf, why);
	if (*verdict != CACHE_GOOD)
		return NULL;
	m = mf.map;
	memcpy(&h, m, sizeof(h));
	strings = mf.len - sizeof(h);
	*verdict = CACHE_STALE;
	/* made for this file as it is */
	if (memcmp(&h.file_id, fid, sizeof(*fid)) || h.want_size != nwant ||
	    memcmp(h.want, want, nwant) || h.key_len != strlen(full) ||
	    h.key_len >= strings || memcmp(m + sizeof(h), full, h.key_len + 1)) {
		mapped_file_close(&mf);
		return NULL;
	}
	/* what it holds lies within it: a checksum that matched over bytes that do not
	 * hold together is a perfconv bug, or damage the checksum missed */
	*verdict = CACHE_DAMAGED;
	*why = "inconsistent";
	if (h.build_id_size > BUILD_ID_MAX || h.names_len == 0 || h.nsyms == 0 ||
	    h.nsyms > UINT32_MAX || h.nslots == 0 || h.nslots > h.nsyms ||
	    h.key_len >= strings || h.symfile_len + 1 >= strings - h.key_len ||
	    !mapped_file_holds(&mf, h.segs_off, h.nsegs, sizeof(struct load_seg)) ||
	    !mapped_file_holds(&mf, h.syms_off, h.nsyms, sizeof(struct scache_sym)) ||
	    !mapped_file_holds(&mf, h.raw_off, h.nsyms, 4) ||
	    !mapped_file_holds(&mf, h.slots_off, h.nslots, sizeof(struct sym_slot)) ||
	    !mapped_file_holds(&mf, h.bind_off, h.nsyms, 1) ||
	    !mapped_file_holds(&mf, h.names_off, h.names_len, 1) ||
	    (h.raw_off | h.slots_off) % 8) {
		mapped_file_close(&mf);
		return NULL;
	}
	symfile = m + sizeof(h) + h.key_len + 1;
	if (symfile[h.symfile_len] || strlen(symfile) != h.symfile_len ||
	    m[h.names_off + h.names_len - 1] || !scache_consistent(&h, m)) {
		mapped_file_close(&mf);
		return NULL;
	}
	/* the symbol file unchanged */
	*verdict = CACHE_STALE;
	if (strcmp(symfile, full) &&
	    (file_id_of(symfile, &sid) || memcmp(&sid, &h.sym_id, sizeof(sid)))) {
		mapped_file_close(&mf);
		return NULL;
	}
	*verdict = CACHE_GOOD;
	o = xcalloc(1, sizeof(*o));
	o->status = ELF_OBJ_OK;
	o->file = xstrdup(full);
	o->symfile = xstrdup(symfile);
	memcpy(o->build_id, h.build_id, h.build_id_size);
	o->build_id_size = h.build_id_size;
	o->is_rel = (int)h.is_rel;
	o->has_symtab = (int)h.has_symtab;
	o->nsegs = (size_t)h.nsegs;
	o->segs = xmalloc((o->nsegs ? o->nsegs : 1) * sizeof(*o->segs));
	memcpy(o->segs, m + h.segs_off, o->nsegs * sizeof(*o->segs));
	o->nsyms = (size_t)h.nsyms;
	o->arena = (char *)(uintptr_t)(m + h.names_off);
	syms = (const struct scache_sym *)(const void *)(m + h.syms_off);
	o->syms = xmalloc(o->nsyms * sizeof(*o->syms));
	for (size_t i = 0; i < o->nsyms; i++)
		o->syms[i] = (struct elf_sym){ syms[i].start, syms[i].end, o->arena + syms[i].name };
	/* read in place: the mapping is private and never written */
	o->raw = (const uint32_t *)(const void *)(m + h.raw_off);
	o->bind = (const uint8_t *)(m + h.bind_off);
	o->slots = (const struct sym_slot *)(const void *)(m + h.slots_off);
	o->nslots = (size_t)h.nslots;
	o->chosen = xcalloc(o->nslots, sizeof(*o->chosen));
	o->cmp_kept = xcalloc(1, sizeof(*o->cmp_kept));
	o->mf = mf;
	return o;
}

/* Keep `o`, loaded from `full` (as `fid` describes it) for build id `want`, in `cfile`
 * (written on the cache's writing thread). */
static void scache_write(const struct elf_obj *o, const char *cfile, const char *full,
			 const struct file_id *fid, const uint8_t *want, size_t nwant,
			 const struct cache_ctx *cache)
{
	struct scache_header h;
	struct scache_sym *syms;
	size_t size;
	char *out;

	memset(&h, 0, sizeof(h));
	if (o->symfile && strcmp(o->symfile, full) && file_id_of(o->symfile, &h.sym_id) != 0)
		return;
	h.file_id = *fid;
	memcpy(h.want, want, nwant);
	h.want_size = (uint32_t)nwant;
	memcpy(h.build_id, o->build_id, o->build_id_size);
	h.build_id_size = (uint32_t)o->build_id_size;
	h.is_rel = (uint32_t)o->is_rel;
	h.has_symtab = (uint32_t)o->has_symtab;
	h.key_len = (uint32_t)strlen(full);
	h.symfile_len = (uint32_t)strlen(o->symfile);
	h.nsegs = o->nsegs;
	h.nsyms = o->nsyms;
	h.nslots = o->nslots;
	/* the arena ends with the last name's NUL: its length is where that is */
	for (size_t i = 0; i < o->nsyms; i++) {
		uint64_t end = (uint64_t)(o->syms[i].name - o->arena) + strlen(o->syms[i].name) + 1;
		uint64_t rend = (uint64_t)o->raw[i] + strlen(o->arena + o->raw[i]) + 1;

		if (end > h.names_len)
			h.names_len = end;
		if (rend > h.names_len)
			h.names_len = rend;
	}
	h.segs_off = align8(sizeof(h) + h.key_len + 1 + h.symfile_len + 1);
	h.syms_off = align8(h.segs_off + h.nsegs * sizeof(*o->segs));
	h.raw_off = align8(h.syms_off + h.nsyms * sizeof(*syms));
	h.slots_off = align8(h.raw_off + h.nsyms * 4);
	h.bind_off = align8(h.slots_off + h.nslots * sizeof(*o->slots));
	h.names_off = align8(h.bind_off + h.nsyms);
	size = (size_t)(h.names_off + h.names_len);
	out = xcalloc(1, size);
	memcpy(out, &h, sizeof(h));
	memcpy(out + sizeof(h), full, h.key_len);
	memcpy(out + sizeof(h) + h.key_len + 1, o->symfile, h.symfile_len);
	if (o->nsegs) /* a .o has no segments, and no array */
		memcpy(out + h.segs_off, o->segs, o->nsegs * sizeof(*o->segs));
	syms = (struct scache_sym *)(void *)(out + h.syms_off);
	for (size_t i = 0; i < o->nsyms; i++)
		syms[i] = (struct scache_sym){ o->syms[i].start, o->syms[i].end,
					       (uint64_t)(o->syms[i].name - o->arena) };
	memcpy(out + h.raw_off, o->raw, o->nsyms * 4);
	memcpy(out + h.slots_off, o->slots, o->nslots * sizeof(*o->slots));
	memcpy(out + h.bind_off, o->bind, o->nsyms);
	memcpy(out + h.names_off, o->arena, (size_t)h.names_len);
	cache_entry_write_later(cache, xstrdup(cfile), out, size, SCACHE_MAGIC, SCACHE_VERSION,
				sizeof(h));
}

struct elf_obj *elf_obj_load_cached(const char *path, const uint8_t *build_id,
				    size_t build_id_size, const char *sysroot,
				    const struct cache_ctx *cache)
{
	const char *cache_dir = cache ? cache->dir : NULL, *why = NULL;
	enum cache_verdict verdict;
	static const uint8_t none[1];
	struct file_id fid;
	struct elf_obj *o;
	char *full, *cfile, *bidpath, key16[17];
	size_t nwant = !build_id ? 0 : build_id_size < BUILD_ID_MAX ? build_id_size : BUILD_ID_MAX;
	const uint8_t *want = nwant ? build_id : none;
	uint64_t key;

	if (!cache_dir || !cache_dir[0] || !path || !path[0])
		return elf_obj_load(path, build_id, build_id_size, sysroot);
	full = sysroot && sysroot[0] ? path_join(sysroot, path) : xstrdup(path);
	if (file_id_of(full, &fid) != 0) {
		free(full);
		return elf_obj_load(path, build_id, build_id_size, sysroot);
	}
	key = hash_bytes(full, strlen(full)) ^ hash_u64(hash_bytes(want, nwant) + nwant);
	snprintf(key16, sizeof(key16), "%016llx", (unsigned long long)key);
	cfile = cache_entry_path(cache_dir, CACHE_SYMBOLS, key16, 0);
	o = scache_open(cfile, full, &fid, want, nwant, &verdict, &why);
	if (verdict == CACHE_DAMAGED)
		cache_damaged(cache, cfile, why);
	if (!o) {
		o = elf_obj_load(path, build_id, build_id_size, sysroot);
		/*
		 * Kept only where the symbols come from the file itself or from the
		 * debug file at its build-id path, the first place looked: no other
		 * file can take their place later without changing one of the two.
		 */
		int keep = o->status == ELF_OBJ_OK && !o->debug_only && o->has_symtab &&
			   !strcmp(o->file, full);

		bidpath = keep && strcmp(o->symfile, full)
				  ? locate_debug_build_id_path(sysroot, o->build_id, o->build_id_size)
				  : NULL;
		if (keep && (!strcmp(o->symfile, full) || (bidpath && !strcmp(o->symfile, bidpath)))) {
			free(cfile); /* the same name, its directory made */
			cfile = cache_entry_path(cache_dir, CACHE_SYMBOLS, key16, 1);
			if (cfile)
				scache_write(o, cfile, full, &fid, want, nwant, cache);
		}
		free(bidpath);
	}
	free(cfile);
	free(full);
	return o;
}
