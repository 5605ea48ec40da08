/* simpleperf: the feature sections Android's simpleperf adds to perf.data (FILE, FILE2,
 * META_INFO).
 *
 * Spec: AOSP system/extras, simpleperf/record_file_format.h (layouts), record_file.proto
 * (FILE2's FileFeature message), record_file_reader.cpp (how simpleperf reads them).
 * The symbol tables are those of every binary, dex file, JIT region and kernel the
 * samples hit, kept in the recording so that it can be read without the phone's files.
 */
#ifndef PERFCONV_SIMPLEPERF_H
#define PERFCONV_SIMPLEPERF_H

#include <stddef.h>
#include <stdint.h>

/* simpleperf's feature bits (after perf's, which end below 128). */
#define SP_FEAT_FILE 128
#define SP_FEAT_META_INFO 129
#define SP_FEAT_FILE2 132

/* simpleperf's DsoType: how a sample's address becomes a symbol's vaddr. */
enum sp_file_type {
	SP_DSO_KERNEL = 0,        /* vaddr = the address */
	SP_DSO_KERNEL_MODULE = 1, /* vaddr = address - map start - offset + min_vaddr */
	SP_DSO_ELF = 2,           /* vaddr = file offset - offset + min_vaddr */
	SP_DSO_DEX = 3,           /* vaddr = file offset */
	SP_DSO_SYMBOL_MAP = 4,
	SP_DSO_UNKNOWN = 5,
};

struct sp_symbol {
	uint64_t vaddr;
	uint32_t len;
	const char *name;         /* as simpleperf stored it (mangled C++ stays mangled) */
};

/* One file of FILE/FILE2: its symbols sorted by vaddr. */
struct sp_file {
	char *path;               /* as the recording's mappings name it */
	uint32_t type;            /* enum sp_file_type */
	uint64_t min_vaddr;
	uint64_t offset_of_min_vaddr; /* ELF: the file offset of min_vaddr; kernel module:
				     its memory offset; has_offset says whether given */
	int has_offset;
	struct sp_symbol *syms;
	size_t nsyms;
};

struct sp_meta {
	char *key, *value;
};

/* What simpleperf's features say; zeroed is empty. Owns every string. */
struct sp_info {
	struct sp_file *files;    /* sorted by path after sp_info_finish() */
	size_t nfiles;
	struct sp_meta *meta;
	size_t nmeta;
};

/* Feature FILE (v1: size-prefixed C structs) or FILE2 (size-prefixed FileFeature
 * protobuf messages) of `len` bytes, in the file's byte order (`swapped`). The files
 * read before damage are kept. 0, or -1 when damaged or out of memory. */
int sp_read_files(struct sp_info *si, const uint8_t *p, size_t len, int swapped, int v2);
/* Feature META_INFO: NUL-terminated key and value strings in turn. 0 or -1. */
int sp_read_meta(struct sp_info *si, const uint8_t *p, size_t len);
/*
 * simpleperf's KERNEL_SYMBOL record's text (its copy of /proc/kallsyms: "ADDR TYPE NAME"
 * lines, a module's symbols followed by "\t[MODULE]") as the kernel's table, when the
 * features gave none with symbols: its text symbols (T, t, W, w) at non-zero
 * addresses, each reaching to the next (simpleperf's KernelDso). 1 when taken, 0 when
 * not needed or holding no symbol, -1 out of memory. Call sp_info_finish() after.
 */
int sp_read_kallsyms(struct sp_info *si, const char *text, size_t len);
/* Sort what was read (after the last sp_read_*). */
void sp_info_finish(struct sp_info *si);

/* The file of that path, or NULL. */
const struct sp_file *sp_info_file(const struct sp_info *si, const char *path);
/* The kernel's file (type SP_DSO_KERNEL) with symbols, or NULL. */
const struct sp_file *sp_info_kernel(const struct sp_info *si);
/* The symbol of `f` holding vaddr, or NULL. */
const struct sp_symbol *sp_file_symbol(const struct sp_file *f, uint64_t vaddr);
/* The vaddr of file offset `offset` of a mapping of `f` (ELF, dex) as simpleperf
 * computes it. */
uint64_t sp_file_vaddr(const struct sp_file *f, uint64_t offset);
/* META_INFO's value of `key`, or NULL. */
const char *sp_info_meta(const struct sp_info *si, const char *key);

void sp_info_release(struct sp_info *si);

#endif
