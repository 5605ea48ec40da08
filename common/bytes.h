/* bytes: loads of little- or big-endian integers at any alignment. */
#ifndef PERFCONV_BYTES_H
#define PERFCONV_BYTES_H

#include <stdint.h>
#include <string.h>

/* `sw`: the data is in the other byte order than this machine's. */
static inline uint16_t ld16(const uint8_t *p, int sw)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return sw ? __builtin_bswap16(v) : v;
}

static inline uint32_t ld32(const uint8_t *p, int sw)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return sw ? __builtin_bswap32(v) : v;
}

static inline uint64_t ld64(const uint8_t *p, int sw)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return sw ? __builtin_bswap64(v) : v;
}

/* This machine's byte order: 1 when big-endian (the `sw` of data that is little-endian). */
static inline int host_big_endian(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 0;
}

#endif
