/* jitdump_build: writes synthetic jitdumps, in either byte order, for the unit tests. */
#ifndef PERFCONV_JITDUMP_BUILD_H
#define PERFCONV_JITDUMP_BUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct jb {
	uint8_t *p;
	size_t len, cap;
	int sw;        /* write in the other byte order */
};

static inline void jb_bytes(struct jb *b, const void *src, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static inline void jb_u32(struct jb *b, uint32_t v)
{
	if (b->sw)
		v = __builtin_bswap32(v);
	jb_bytes(b, &v, 4);
}

static inline void jb_u64(struct jb *b, uint64_t v)
{
	if (b->sw)
		v = __builtin_bswap64(v);
	jb_bytes(b, &v, 8);
}

static inline void jb_put32(struct jb *b, size_t at, uint32_t v)
{
	if (b->sw)
		v = __builtin_bswap32(v);
	memcpy(b->p + at, &v, 4);
}

/* The 40-byte header. */
static inline void jb_init(struct jb *b, int sw, uint32_t pid, uint64_t flags)
{
	memset(b, 0, sizeof(*b));
	b->sw = sw;
	jb_u32(b, 0x4A695444);
	jb_u32(b, 1);
	jb_u32(b, 40);
	jb_u32(b, 62);
	jb_u32(b, 0);
	jb_u32(b, pid);
	jb_u64(b, 12345);
	jb_u64(b, flags);
}

/* Starts a record; jb_end() writes its size. */
static inline size_t jb_begin(struct jb *b, uint32_t id, uint64_t ts)
{
	size_t at = b->len;

	jb_u32(b, id);
	jb_u32(b, 0);
	jb_u64(b, ts);
	return at;
}

static inline void jb_end(struct jb *b, size_t at)
{
	jb_put32(b, at + 4, (uint32_t)(b->len - at));
}

/* CODE_LOAD with `size` code bytes of 0x90. */
static inline void jb_load(struct jb *b, uint64_t ts, uint32_t pid, uint64_t addr, uint64_t size,
			   uint64_t index, const char *name)
{
	size_t at = jb_begin(b, 0, ts), i;
	uint8_t nop = 0x90;

	jb_u32(b, pid);
	jb_u32(b, pid + 1);
	jb_u64(b, addr);
	jb_u64(b, addr);
	jb_u64(b, size);
	jb_u64(b, index);
	jb_bytes(b, name, strlen(name) + 1);
	for (i = 0; i < size; i++)
		jb_bytes(b, &nop, 1);
	jb_end(b, at);
}

static inline void jb_move(struct jb *b, uint64_t ts, uint32_t pid, uint64_t old_addr,
			   uint64_t new_addr, uint64_t size, uint64_t index)
{
	size_t at = jb_begin(b, 1, ts);

	jb_u32(b, pid);
	jb_u32(b, pid + 1);
	jb_u64(b, new_addr);
	jb_u64(b, old_addr);
	jb_u64(b, new_addr);
	jb_u64(b, size);
	jb_u64(b, index);
	jb_end(b, at);
}

/* DEBUG_INFO: jb_debug_begin, then jb_entry for each entry, then jb_end. */
static inline size_t jb_debug_begin(struct jb *b, uint64_t ts, uint64_t code_addr,
				    uint64_t nr)
{
	size_t at = jb_begin(b, 2, ts);

	jb_u64(b, code_addr);
	jb_u64(b, nr);
	return at;
}

/* An entry whose file is `flen` raw bytes (the terminating NUL included by the caller). */
static inline void jb_entry_raw(struct jb *b, uint64_t addr, uint32_t line, uint32_t discrim,
				const void *file, size_t flen)
{
	jb_u64(b, addr);
	jb_u32(b, line);
	jb_u32(b, discrim);
	jb_bytes(b, file, flen);
}

static inline void jb_entry(struct jb *b, uint64_t addr, uint32_t line, const char *file)
{
	jb_entry_raw(b, addr, line, 0, file, strlen(file) + 1);
}

/* A file name as Node.js 20 writes it: the first 16 bytes from freed memory. */
static inline void jb_entry_node20(struct jb *b, uint64_t addr, uint32_t line, const char *file)
{
	size_t n = strlen(file) + 1;
	uint8_t *buf = malloc(n);
	static const uint8_t junk[16] = { 0x1b, 0xd6, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
					  0x10, 0xa4, 0x83, 0x6b, 0x6b, 0x13, 0x81, 0xa8 };

	memcpy(buf, file, n);
	memcpy(buf, junk, n - 1 < 16 ? n - 1 : 16);
	jb_entry_raw(b, addr, line, 7, buf, n);
	free(buf);
}

static inline void jb_unwind(struct jb *b, uint64_t ts, size_t data_size)
{
	size_t at = jb_begin(b, 4, ts), i;
	uint8_t z = 0;

	jb_u64(b, data_size);
	jb_u64(b, 20);
	jb_u64(b, 64);
	for (i = 0; i < data_size; i++)
		jb_bytes(b, &z, 1);
	jb_end(b, at);
}

static inline void jb_close(struct jb *b, uint64_t ts)
{
	size_t at = jb_begin(b, 3, ts);

	jb_end(b, at);
}

#endif
