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

static Suite *mapindex_suite(void)
{
	Suite *s = suite_create("mapindex");
	TCase *tc = tcase_create("mapindex");

	tcase_add_test(tc, test_lookup);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int failed = run_suite(mapindex_suite());

	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
