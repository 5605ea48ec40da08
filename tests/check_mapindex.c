/* check_mapindex: unit tests of a perf map's index by address: the latest line over an
 * address wins, as in perf; names read again from the file; addresses no line covers. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/mapindex.h"
#include "tests/testutil.h"

START_TEST(test_lookup)
{
	static const char map[] =
		"1000 100 outer\n"
		"1040 10 inner first\n"
		"\n"
		"1040 10 inner again\n"  /* a later line over the same range wins */
		"2000 0 empty\n"         /* no range: never found */
		"3000 20 far\n";
	char path[] = "/tmp/check_mapindex.XXXXXX";
	struct map_index *m;
	struct perfmap_entry e;
	struct map_line l;
	struct cap c;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, map, sizeof(map) - 1), (ssize_t)(sizeof(map) - 1));
	close(fd);
	cap_init(&c);
	m = map_index_load(path, &c.d);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(map_index_lookup(m, 0x1044, &l, &e), 1);
	ck_assert_str_eq(e.name, "inner again");
	ck_assert_uint_eq(l.start, 0x1040);
	ck_assert_uint_eq(l.end, 0x1050);
	ck_assert_uint_eq(l.seq, 2);
	ck_assert_int_eq(map_index_lookup(m, 0x1050, &l, &e), 1);
	ck_assert_str_eq(e.name, "outer");
	ck_assert_uint_eq(l.start, 0x1000);
	ck_assert_int_eq(map_index_lookup(m, 0x10ff, &l, &e), 1);
	ck_assert_str_eq(e.name, "outer");
	ck_assert_int_eq(map_index_lookup(m, 0x1100, &l, &e), 0);
	ck_assert_int_eq(map_index_lookup(m, 0x2000, &l, &e), 0);
	ck_assert_int_eq(map_index_lookup(m, 0x301f, &l, &e), 1);
	ck_assert_str_eq(e.name, "far");
	ck_assert_int_eq(map_index_lookup(m, 0xfff, &l, &e), 0);
	map_index_free(m);
	map_index_free(NULL);
	unlink(path);
	/* a map that is not there: NULL, said */
	ck_assert_ptr_null(map_index_load(path, &c.d));
	ck_assert_uint_eq(c.d.nerrors, 1);
	ck_assert_ptr_nonnull(strstr(cap_text(&c), "cannot open"));
	fclose(c.f);
}
END_TEST

/* Issue 42, finding 10: a map that restates its ranges (a line each time a function is
 * compiled again) keeps one line a range, and every address finds what the whole map
 * says: against the rule (the latest line over it), with lines over an earlier line's
 * exact range, longer and shorter ones from its start, and others across it. */
START_TEST(test_restated)
{
	enum { NLINES = 20000, SPACE = 0x400 };
	static struct { uint64_t start, end; } all[NLINES];
	char path[] = "/tmp/check_mapindex.XXXXXX";
	uint64_t rng = 0x853c49e6748fea9bULL;
	struct map_index *m;
	struct perfmap_entry e;
	struct map_line l;
	struct cap c;
	FILE *f;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	for (int i = 0; i < NLINES; i++) {
		uint64_t r;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		r = rng >> 16;
		if (i && r % 4) { /* from an earlier line's start: its size, more or less */
			int k = (int)((r >> 8) % (uint64_t)i);

			all[i].start = all[k].start;
			all[i].end = all[k].end + (r % 16 == 1) - (r % 16 == 2 && all[k].end - all[k].start > 1);
		} else {
			all[i].start = 0x1000 + (r >> 8) % SPACE;
			all[i].end = all[i].start + 1 + (r >> 24) % 0x40;
		}
		fprintf(f, "%llx %llx L%d\n", (unsigned long long)all[i].start,
			(unsigned long long)(all[i].end - all[i].start), i);
	}
	fclose(f);
	cap_init(&c);
	m = map_index_load(path, &c.d);
	ck_assert_ptr_nonnull(m);
	for (uint64_t a = 0xff0; a < 0x1000 + SPACE + 0x50; a++) {
		int want = -1;
		char name[16];

		for (int i = 0; i < NLINES; i++)
			if (all[i].start <= a && a < all[i].end)
				want = i;
		if (want < 0) {
			ck_assert_int_eq(map_index_lookup(m, a, &l, &e), 0);
			continue;
		}
		snprintf(name, sizeof(name), "L%d", want);
		ck_assert_int_eq(map_index_lookup(m, a, &l, &e), 1);
		ck_assert_msg(strcmp(e.name, name) == 0, "at 0x%llx: %s, want %s",
			      (unsigned long long)a, e.name, name);
		ck_assert_uint_eq(l.seq, (uint32_t)want);
	}
	map_index_free(m);
	/* ten ranges written 1,000 times each: ten lines */
	f = fopen(path, "w");
	for (int i = 0; i < 10000; i++)
		fprintf(f, "%x 10 R%d\n", 0x9000 + 0x10 * (i % 10), i);
	fclose(f);
	m = map_index_load(path, &c.d);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(map_index_lines(m), 10);
	ck_assert_int_eq(map_index_lookup(m, 0x9035, &l, &e), 1);
	ck_assert_str_eq(e.name, "R9993");
	ck_assert_uint_eq(l.seq, 9993);
	map_index_free(m);
	unlink(path);
	ck_assert_uint_eq(c.d.nerrors + c.d.nwarnings, 0);
	fclose(c.f);
}
END_TEST

static Suite *mapindex_suite(void)
{
	Suite *s = suite_create("mapindex");
	TCase *tc = tcase_create("mapindex");

	tcase_add_test(tc, test_lookup);
	tcase_add_test(tc, test_restated);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int failed = run_suite(mapindex_suite());

	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
