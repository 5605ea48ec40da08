/* check_perfmap: unit tests of the perf map reader: the forms runtimes write, bad lines,
 * and the real maps in testdata/jit/. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/read/perfmap.h"
#include "tests/testutil.h"

START_TEST(test_forms)
{
	static const char map[] =
		"7f0000001000 40 JS:*fib /tmp/a b/fib.js:2:19\n" /* spaces in the name */
		"0x7f0000002000 0x20 Interpreter::invoke\n"      /* JDK's 0x */
		"\n"
		"7F0000003000\t10\tLazyCompile:~ /x.js:1\r\n"    /* tabs, CRLF, upper case */
		"  7f0000004000 8 indented\n"
		"7f0000005000 8 last line without newline";
	struct perfmap_entry e;
	struct perfmap_reader *r;
	struct cap c;

	cap_init(&c);
	r = perfmap_reader_open_mem(map, sizeof(map) - 1, "forms.map", &c.d);
	ck_assert_int_eq(perfmap_reader_next(r, &e), 1);
	ck_assert_uint_eq(e.start, 0x7f0000001000);
	ck_assert_uint_eq(e.size, 0x40);
	ck_assert_str_eq(e.name, "JS:*fib /tmp/a b/fib.js:2:19");
	ck_assert_uint_eq(e.line, 1);
	ck_assert_int_eq(perfmap_reader_next(r, &e), 1);
	ck_assert_uint_eq(e.start, 0x7f0000002000);
	ck_assert_uint_eq(e.size, 0x20);
	ck_assert_str_eq(e.name, "Interpreter::invoke");
	ck_assert_int_eq(perfmap_reader_next(r, &e), 1);
	ck_assert_uint_eq(e.start, 0x7f0000003000);
	ck_assert_uint_eq(e.size, 0x10);
	ck_assert_str_eq(e.name, "LazyCompile:~ /x.js:1");
	ck_assert_uint_eq(e.line, 4);
	ck_assert_int_eq(perfmap_reader_next(r, &e), 1);
	ck_assert_str_eq(e.name, "indented");
	ck_assert_int_eq(perfmap_reader_next(r, &e), 1);
	ck_assert_str_eq(e.name, "last line without newline");
	ck_assert_uint_eq(e.line, 6);
	ck_assert_int_eq(perfmap_reader_next(r, &e), 0);
	ck_assert_uint_eq(perfmap_reader_stats(r)->entries, 5);
	ck_assert_uint_eq(perfmap_reader_stats(r)->skipped_bad, 0);
	ck_assert_uint_eq(c.d.nwarnings, 0);
	perfmap_reader_close(r);
	fclose(c.f);
}
END_TEST

START_TEST(test_bad_lines)
{
	static const char map[] =
		"1000 10 good\n"
		"zzzz 10 bad start\n"
		"2000 10\n"                         /* no name */
		"3000 1g0 bad size\n"
		"12345678901234567 10 too long\n"  /* 17 digits: over 64 bits */
		"ffffffffffffffff 10 wraps\n"
		"0x 10 no digits\n"
		"4000 10 good again\n";
	struct perfmap_entry e;
	struct perfmap_reader *r;
	struct cap c;

	cap_init(&c);
	r = perfmap_reader_open_mem(map, sizeof(map) - 1, "bad.map", &c.d);
	ck_assert_int_eq(perfmap_reader_next(r, &e), 1);
	ck_assert_str_eq(e.name, "good");
	ck_assert_int_eq(perfmap_reader_next(r, &e), 1);
	ck_assert_str_eq(e.name, "good again");
	ck_assert_uint_eq(e.line, 8);
	ck_assert_uint_eq(e.start, 0x4000);
	ck_assert_int_eq(perfmap_reader_next(r, &e), 0);
	ck_assert_uint_eq(perfmap_reader_stats(r)->skipped_bad, 6);
	cap_text(&c);
	ck_assert_ptr_nonnull(strstr(c.text, "bad.map: offset 0xd: warning: line 2: not `START SIZE name`"));
	ck_assert_ptr_nonnull(strstr(c.text, "line 3:"));
	ck_assert_ptr_nonnull(strstr(c.text, "line 7:"));
	ck_assert_ptr_null(strstr(c.text, "line 8:"));
	perfmap_reader_close(r);
	fclose(c.f);
}
END_TEST

START_TEST(test_nul_in_line)
{
	static const char map[] = "1000 10 na\0me\n2000 10 ok\n";
	struct perfmap_entry e;
	struct perfmap_reader *r;
	struct cap c;

	cap_init(&c);
	r = perfmap_reader_open_mem(map, sizeof(map) - 1, "nul.map", &c.d);
	ck_assert_int_eq(perfmap_reader_next(r, &e), 1);
	ck_assert_str_eq(e.name, "ok");
	ck_assert_uint_eq(perfmap_reader_stats(r)->skipped_bad, 1);
	perfmap_reader_close(r);
	fclose(c.f);
}
END_TEST

START_TEST(test_empty_and_missing)
{
	struct perfmap_entry e;
	struct perfmap_reader *r;
	struct cap c;

	cap_init(&c);
	r = perfmap_reader_open_mem("", 0, "empty.map", &c.d);
	ck_assert_int_eq(perfmap_reader_next(r, &e), 0);
	perfmap_reader_close(r);
	ck_assert_ptr_null(perfmap_reader_open(top_path("testdata/jit/perf-1.map"), &c.d));
	ck_assert_ptr_nonnull(strstr(c.d.last_error, "cannot open"));
	fclose(c.f);
}
END_TEST

/* node --perf-basic-prof and BEAM's +JPperf maps. */
START_TEST(test_real_maps)
{
	struct perfmap_entry e;
	struct perfmap_reader *r;
	struct cap c;
	int fib = 0, erl_fib = 0;

	cap_init(&c);
	r = perfmap_reader_open(top_path("testdata/jit/perf-30787.map"), &c.d);
	ck_assert(r != NULL);
	while (perfmap_reader_next(r, &e) == 1)
		if (!strcmp(e.name, "JS:*fibonacci /tmp/perfconv-rec-jit/js/fibonacci-bench.js:3:19"))
			fib++;
	ck_assert_int_ge(fib, 1);
	ck_assert_uint_eq(perfmap_reader_stats(r)->skipped_bad, 0);
	perfmap_reader_close(r);

	r = perfmap_reader_open(top_path("testdata/jit/perf-30756.map"), &c.d);
	ck_assert(r != NULL);
	while (perfmap_reader_next(r, &e) == 1)
		if (!strcmp(e.name, "$hotfib:fib/1")) /* BEAM writes 0x and a $ in its map */
			erl_fib++;
	ck_assert_int_eq(erl_fib, 1);
	ck_assert_uint_eq(perfmap_reader_stats(r)->entries, 15813);
	ck_assert_uint_eq(perfmap_reader_stats(r)->skipped_bad, 0);
	ck_assert_uint_eq(c.d.nwarnings, 0);
	perfmap_reader_close(r);
	fclose(c.f);
}
END_TEST

/* A map of `n` lines written as `path`, each `start size fn_N` with a name of `pad`
 * extra characters: its size. */
static size_t write_map(const char *path, unsigned n, unsigned pad)
{
	FILE *f = fopen(path, "w");
	long size;

	ck_assert_ptr_nonnull(f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%x 10 fn_%u%*s\n", 0x10000 + 0x10 * i, i, (int)pad, "");
	size = ftell(f);
	fclose(f);
	return (size_t)size;
}

/*
 * A map cut short after it was opened, as a runtime does that writes its map again
 * with O_TRUNC: read up to its new end and said, not SIGBUS (a mapped page past a
 * file's end is; this reader reads, a window at a time).
 */
START_TEST(test_cut_while_read)
{
	char path[] = "/tmp/perfconv-check-perfmap-XXXXXX";
	int fd = mkstemp(path);
	struct perfmap_entry e;
	struct perfmap_reader *r;
	struct cap c;
	unsigned n = 0, last = 0;
	size_t size;

	ck_assert_int_ge(fd, 0);
	close(fd);
	/* lines across many windows, 2 MB */
	size = write_map(path, 40000, 30);
	ck_assert_uint_gt(size, 1u << 20);
	cap_init(&c);
	r = perfmap_reader_open(path, &c.d);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(perfmap_reader_whole_lines(r), size);
	/* half read, then the file cut to 1000 bytes */
	while (n < 20000 && perfmap_reader_next(r, &e) == 1)
		n++;
	ck_assert_int_eq(truncate(path, 1000), 0);
	while (perfmap_reader_next(r, &e) == 1) {
		n++;
		ck_assert_ptr_nonnull(strstr(e.name, "fn_"));
		ck_assert_int_eq(sscanf(e.name, "fn_%u", &last), 1);
	}
	/* what the window held is read; nothing past it, and that is said */
	ck_assert_uint_lt(n, 40000);
	ck_assert_uint_lt(last, 39999);
	ck_assert_ptr_nonnull(strstr(cap_text(&c), "changed while it was read"));
	ck_assert_uint_eq(c.d.nwarnings, 1);
	/* the bytes before an offset past the new end match no digest */
	ck_assert_uint_ne(perfmap_reader_digest(r, size), 0);
	perfmap_reader_close(r);

	/* cut before the first read: nothing, said */
	write_map(path, 40000, 30);
	cap_init(&c);
	r = perfmap_reader_open(path, &c.d);
	ck_assert_int_eq(truncate(path, 0), 0);
	ck_assert_int_eq(perfmap_reader_next(r, &e), 0);
	ck_assert_ptr_nonnull(strstr(cap_text(&c), "changed while it was read"));
	ck_assert_uint_eq(perfmap_reader_whole_lines(r), 0);
	perfmap_reader_close(r);
	unlink(path);
	fclose(c.f);
}
END_TEST

/* Lines of every length across the reader's window (256 KiB), and a line past the
 * longest it keeps (16 MiB): every line read as written, the long one skipped, said. */
START_TEST(test_windows)
{
	char path[] = "/tmp/perfconv-check-perfmap-XXXXXX";
	int fd = mkstemp(path);
	struct perfmap_entry e;
	struct perfmap_reader *r;
	struct cap c;
	unsigned n = 0;
	FILE *f;

	ck_assert_int_ge(fd, 0);
	close(fd);
	write_map(path, 3000, 1500); /* 4.5 MB: a line across each window's end */
	cap_init(&c);
	r = perfmap_reader_open(path, &c.d);
	while (perfmap_reader_next(r, &e) == 1) {
		char want[32];

		snprintf(want, sizeof(want), "fn_%u", n);
		ck_assert_uint_eq(e.start, 0x10000 + 0x10 * n);
		ck_assert_int_eq(strncmp(e.name, want, strlen(want)), 0);
		ck_assert_uint_eq(strlen(e.name), strlen(want) + 1500);
		n++;
	}
	ck_assert_uint_eq(n, 3000);
	ck_assert_uint_eq(c.d.nwarnings, 0);
	perfmap_reader_close(r);

	f = fopen(path, "w");
	fprintf(f, "1000 10 before\n2000 10 ");
	for (size_t i = 0; i < (17u << 20) / 64; i++)
		fputs("0123456789012345678901234567890123456789012345678901234567890123", f);
	fprintf(f, "\n3000 10 after\n");
	fclose(f);
	r = perfmap_reader_open(path, &c.d);
	ck_assert_int_eq(perfmap_reader_next(r, &e), 1);
	ck_assert_str_eq(e.name, "before");
	ck_assert_int_eq(perfmap_reader_next(r, &e), 1);
	ck_assert_str_eq(e.name, "after");
	ck_assert_uint_eq(e.line, 3);
	ck_assert_int_eq(perfmap_reader_next(r, &e), 0);
	ck_assert_ptr_nonnull(strstr(cap_text(&c), "line 2: longer than 16 MiB"));
	perfmap_reader_close(r);
	unlink(path);
	fclose(c.f);
}
END_TEST

static Suite *perfmap_suite(void)
{
	Suite *s = suite_create("perfmap");
	TCase *tc = tcase_create("perfmap");

	tcase_add_test(tc, test_forms);
	tcase_add_test(tc, test_bad_lines);
	tcase_add_test(tc, test_nul_in_line);
	tcase_add_test(tc, test_empty_and_missing);
	tcase_add_test(tc, test_real_maps);
	tcase_add_test(tc, test_cut_while_read);
	tcase_add_test(tc, test_windows);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int failed = run_suite(perfmap_suite());

	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
