/* check_mapindex: unit tests of a perf map's index by address: the latest line over an
 * address wins, as in perf; names read again from the file; addresses no line covers. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/locate.h"
#include "symbolize/jit/mapindex.h"
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

static void put(const char *path, const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	fclose(f);
}

static const char *name_of(struct map_index *m, uint64_t addr)
{
	struct map_line l;
	static struct perfmap_entry e;

	return map_index_lookup(m, addr, &l, &e) ? e.name : "-";
}

/* Issue 45, part 4: a map's index kept in the cache: the same map read back without
 * reading it again, a grown one read on from where the entry stopped, one written again
 * read whole; the names those give are those of a read without a cache. */
START_TEST(test_cached)
{
	char dir[] = "/tmp/check_mapindex.XXXXXX", path[64], cmd[96];
	struct cache_ctx cache = { 0 };
	struct map_index *m;
	uint64_t from = 7;
	struct cap c;
	const char *a = "1000 100 outer\n1040 10 inner\n";
	const char *more = "1040 10 inner again\n3000 10 far\n";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-7.map", dir);
	cache.dir = dir;
	cap_init(&c);
	put(path, "w", a);
	m = map_index_load_cached(path, &cache, &c.d, &from);
	ck_assert_uint_eq(from, 0);
	ck_assert_str_eq(name_of(m, 0x1044), "inner");
	map_index_free(m);
	/* again: from the cache, nothing of the map read but its last bytes */
	m = map_index_load_cached(path, &cache, &c.d, &from);
	ck_assert_uint_eq(from, strlen(a));
	ck_assert_uint_eq(map_index_lines(m), 2);
	ck_assert_str_eq(name_of(m, 0x1044), "inner");
	ck_assert_str_eq(name_of(m, 0x1050), "outer");
	ck_assert_str_eq(name_of(m, 0x3004), "-");
	map_index_free(m);
	/* grown: read on; the later line wins */
	put(path, "a", more);
	m = map_index_load_cached(path, &cache, &c.d, &from);
	ck_assert_uint_eq(from, strlen(a));
	ck_assert_str_eq(name_of(m, 0x1044), "inner again");
	ck_assert_str_eq(name_of(m, 0x1050), "outer");
	ck_assert_str_eq(name_of(m, 0x3004), "far");
	ck_assert_uint_eq(map_index_lines(m), 3); /* the restated line took its place */
	map_index_free(m);
	m = map_index_load_cached(path, &cache, &c.d, &from);
	ck_assert_uint_eq(from, strlen(a) + strlen(more));
	ck_assert_str_eq(name_of(m, 0x1044), "inner again");
	ck_assert_str_eq(name_of(m, 0x3004), "far");
	map_index_free(m);
	/* written again (O_TRUNC, the same file), longer than before: read whole */
	put(path, "w", "1000 100 OUTER\n5000 10 fifth\n1040 10 other\n7000 1000 last line\n");
	m = map_index_load_cached(path, &cache, &c.d, &from);
	ck_assert_uint_eq(from, 0);
	ck_assert_str_eq(name_of(m, 0x1044), "other");
	ck_assert_str_eq(name_of(m, 0x1050), "OUTER");
	ck_assert_str_eq(name_of(m, 0x3004), "-");
	ck_assert_str_eq(name_of(m, 0x5004), "fifth");
	map_index_free(m);
	/* a last line without its newline (half written?) is read, not kept */
	put(path, "a", "9000 10 half");
	m = map_index_load_cached(path, &cache, &c.d, &from);
	ck_assert_str_eq(name_of(m, 0x9004), "half");
	map_index_free(m);
	put(path, "a", " done\n");
	m = map_index_load_cached(path, &cache, &c.d, &from);
	ck_assert_uint_ne(from, 0);
	ck_assert_str_eq(name_of(m, 0x9004), "half done");
	ck_assert_str_eq(name_of(m, 0x5004), "fifth");
	map_index_free(m);
	ck_assert_uint_eq(c.d.nerrors, 0);
	fclose(c.f);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *mapindex_suite(void)
{
	Suite *s = suite_create("mapindex");
	TCase *tc = tcase_create("mapindex");

	tcase_add_test(tc, test_lookup);
	tcase_add_test(tc, test_restated);
	tcase_add_test(tc, test_cached);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int failed = run_suite(mapindex_suite());

	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
