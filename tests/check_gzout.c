/* check_gzout: gzip streams written in pieces, small (libdeflate) and past 8 MB (zlib). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/gzout.h"
#include "tests/testutil.h"

/* `n` bytes of a profile-like text: repeated names with changing numbers. */
static uint8_t *content(size_t n)
{
	uint8_t *p = malloc(n);
	uint64_t x = 88172645463325252ull;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = i % 97 < 60 ? (uint8_t)("main;work_sort;qsort;msort_with_tmp;"[i % 37])
				   : (uint8_t)('0' + x % 10);
	}
	return p;
}

/* `n` bytes written to a gzout in pieces of `piece` bytes (0: one write): the file. */
static uint8_t *gzipped(const uint8_t *p, size_t n, size_t piece, size_t *len)
{
	char *buf = NULL;
	size_t blen = 0;
	FILE *f = open_memstream(&buf, &blen);
	struct gzout *g;

	ck_assert_ptr_nonnull(f);
	g = gzout_open(f, 1);
	for (size_t at = 0; at < n;) {
		size_t k = piece && piece < n - at ? piece : n - at;

		gzout_write(g, p + at, k);
		at += k;
	}
	ck_assert_int_eq(gzout_close(g), 0);
	ck_assert_int_eq(fclose(f), 0);
	*len = blen;
	return (uint8_t *)buf;
}

/* The file is one gzip member whose content is p[0, n): inflated whole, with no byte
 * after the member's end. */
static void one_member_of(const uint8_t *z, size_t zlen, const uint8_t *p, size_t n)
{
	z_stream zs;
	uint8_t *out = malloc(n + 1);

	memset(&zs, 0, sizeof(zs));
	ck_assert_int_eq(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)z;
	zs.avail_in = (uInt)zlen;
	zs.next_out = out;
	zs.avail_out = (uInt)(n + 1);
	ck_assert_int_eq(inflate(&zs, Z_FINISH), Z_STREAM_END);
	ck_assert_uint_eq(zs.avail_in, 0);
	ck_assert_uint_eq(zs.total_out, n);
	ck_assert(memcmp(out, p, n) == 0);
	inflateEnd(&zs);
	free(out);
}

/* A profile's size (libdeflate, one call): the same file however it was written,
 * smaller than the content, and no time in its header. */
START_TEST(small_stream_in_pieces)
{
	size_t n = 300000, l1, l2, l3;
	uint8_t *p = content(n);
	uint8_t *a = gzipped(p, n, 0, &l1), *b = gzipped(p, n, 7, &l2), *c = gzipped(p, n, 65536, &l3);

	one_member_of(a, l1, p, n);
	ck_assert_uint_lt(l1, n / 2);
	ck_assert_uint_eq(l1, l2);
	ck_assert_uint_eq(l1, l3);
	ck_assert(memcmp(a, b, l1) == 0 && memcmp(a, c, l1) == 0);
	ck_assert(a[4] == 0 && a[5] == 0 && a[6] == 0 && a[7] == 0);
	free(a);
	free(b);
	free(c);
	free(p);
}
END_TEST

/* Past 8 MB the stream goes on through zlib: still one member with all of it, the
 * same file however it was written. */
START_TEST(large_stream_in_pieces)
{
	size_t n = (size_t)9 << 20, l1, l2;
	uint8_t *p = content(n);
	uint8_t *a = gzipped(p, n, 100000, &l1), *b = gzipped(p, n, 3 << 20, &l2);

	one_member_of(a, l1, p, n);
	ck_assert_uint_eq(l1, l2);
	ck_assert(memcmp(a, b, l1) == 0);
	free(a);
	free(b);
	free(p);
}
END_TEST

/* Nothing written: an empty member. A full disk: -1 with errno set, both ways. */
START_TEST(empty_and_failed)
{
	static const uint8_t none[1];
	size_t len;
	uint8_t *z = gzipped(none, 0, 0, &len);
	uint8_t *p = content((size_t)9 << 20);

	one_member_of(z, len, none, 0);
	free(z);
	for (int big = 0; big < 2; big++) {
		size_t n = big ? (size_t)9 << 20 : 1000;
		FILE *f = fopen("/dev/full", "w");
		struct gzout *g;

		ck_assert_ptr_nonnull(f);
		setvbuf(f, NULL, _IONBF, 0);
		g = gzout_open(f, 1);
		gzout_write(g, p, n);
		errno = 0;
		ck_assert_int_eq(gzout_close(g), -1);
		ck_assert_int_eq(errno, ENOSPC);
		fclose(f);
	}
	free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gzout");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, small_stream_in_pieces);
	tcase_add_test(tc, large_stream_in_pieces);
	tcase_add_test(tc, empty_and_failed);
	suite_add_tcase(s, tc);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
