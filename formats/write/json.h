/* json: the pieces of a streamed JSON text (RFC 8259), written straight to a FILE. */
#ifndef PERFCONV_JSON_H
#define PERFCONV_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Write `n` bytes of `s` as a JSON string, quotes included. The bytes are taken as
 * UTF-8 and checked one by one: well-formed sequences are copied as they are; a byte
 * that cannot start or continue a well-formed sequence (overlong forms, surrogates,
 * code points above U+10FFFF, a sequence cut short) is replaced by U+FFFD, one per
 * maximal ill-formed part as Unicode recommends. '"' and '\' are escaped, control
 * bytes below 0x20 become \b \f \n \r \t or \u00XX. Write errors show in ferror(out).
 */
void json_string_n(FILE *out, const char *s, size_t n);
/* The most bytes json_string_mem() writes for `n` bytes: a control byte takes six. */
#define JSON_STRING_MAX(n) (6 * (size_t)(n) + 2)
/* The same into memory: `dst` has room for JSON_STRING_MAX(n) bytes; returns how many
 * were written (no NUL). */
size_t json_string_mem(char *dst, const char *s, size_t n);
/* The same for a NUL-terminated string. */
void json_string(FILE *out, const char *s);

/* An unsigned integer. */
void json_u64(FILE *out, uint64_t v);
/* The same into `dst`, which has room for 20 bytes; returns how many were written. */
size_t json_u64_mem(char *dst, uint64_t v);

/*
 * A duration or time given in nanoseconds, as microseconds with the nanoseconds kept
 * exactly: 1234567 is written 1234.567, 1500 as 1.5, 2000 as 2. No floating point.
 */
void json_ns_as_us(FILE *out, uint64_t ns);

/*
 * `"ts":T,"dur":D`, into `dst`, for a slice from `start_ns` to `end_ns`, both as
 * microseconds like json_ns_as_us(). Viewers compute a slice's end in IEEE doubles (JavaScript
 * numbers): speedscope as (ts - base) + dur, where base is the first ts of the
 * thread (`base_ns`), others as ts + dur. Where the exact decimal duration would make
 * that end land a rounding step away from the end time's own double (so that a child
 * ending with its parent would seem to end after it), D is instead the double nearest
 * the duration that gives exactly that double (both ways when one exists, else
 * speedscope's), written with the digits that read back as it: it differs from the
 * exact duration by far less than a nanosecond, and rounds to it.
 */
size_t json_ts_dur(char *dst, uint64_t start_ns, uint64_t end_ns, uint64_t base_ns);
/* The room json_ts_dur() needs at `dst`; it returns how many bytes it wrote (no NUL). */
#define JSON_TS_DUR_MAX 80

#endif
