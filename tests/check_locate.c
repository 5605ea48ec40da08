/* check_locate: the one rule for code in no file, the order of the places each kind of
 * file is looked for in, and the cache's layout. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/later.h"
#include "common/util.h"
#include "symbolize/locate.h"
#include "tests/testutil.h"

START_TEST(test_origin)
{
	static const struct {
		const char *path;
		enum map_origin want;
	} cases[] = {
		{ "/usr/lib/x86_64-linux-gnu/libc.so.6", MAP_FILE },
		/* a binary removed or replaced while it ran is still the file at its path */
		{ "/tmp/perfconv-rec/prog (deleted)", MAP_FILE },
		{ "/usr/bin/node (deleted)", MAP_FILE },
		{ "[vdso]", MAP_VDSO },
		{ "/tmp/perf-vdso.so-AbC123", MAP_VDSO },
		{ "//anon", MAP_NO_FILE },
		{ "[anon:v8]", MAP_NO_FILE },
		{ "[heap]", MAP_NO_FILE },
		{ "[stack]", MAP_NO_FILE },
		{ "[vsyscall]", MAP_NO_FILE },
		{ "anon_inode:[perf_event]", MAP_NO_FILE },
		{ "/memfd:wasm-code (deleted)", MAP_NO_FILE },
		{ "/dev/zero (deleted)", MAP_NO_FILE },
		{ "/SYSV00000000 (deleted)", MAP_NO_FILE },
		{ "/dev/shm/mono.1234 (deleted)", MAP_NO_FILE },
		{ "/tmp/jd/jit-4242.dump", MAP_NO_FILE },
		{ "/tmp/perf-4242.map", MAP_NO_FILE },
		/* names that only look like those */
		{ "/opt/jit-tools/bin/jit-compile", MAP_FILE },
		{ "/usr/lib/perf-4242.map.so", MAP_FILE },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(map_origin(cases[i].path) == cases[i].want, "%s: %d, not %d",
			      cases[i].path, map_origin(cases[i].path), cases[i].want);
}
END_TEST

static void expect(const struct loc_list *l, const char *const *want, size_t n)
{
	char buf[4300];

	ck_assert_uint_eq(l->n, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(loc_candidate_shown(&l->v[i], buf, sizeof(buf)), want[i]);
}

static const uint8_t bid[4] = { 0xab, 0xcd, 0x01, 0x02 };

START_TEST(test_object_order)
{
	struct loc_places pl = { .symfs = "/sym/", .input_dir = "/rec", .buildid_dir = "/home/u/.debug" };
	struct loc_query q = { .path = "/usr/bin/prog", .build_id = bid, .build_id_size = 4 };
	static const char *const all[] = {
		"/sym/usr/bin/prog", "/sym/prog", "/usr/bin/prog", "/rec/prog",
		"/home/u/.debug/.build-id/ab/cd0102/elf",
	};
	static const char *const bare[] = { "/usr/bin/prog", "/rec/prog" };
	struct loc_list l;

	locate_list(&pl, LOC_OBJECT, &q, &l);
	expect(&l, all, 5);
	/* the --symfs path candidate is opened as the recorded path below the sysroot */
	ck_assert_ptr_eq(l.v[0].sysroot, pl.symfs);
	ck_assert_str_eq(l.v[0].path + l.v[0].under, "/usr/bin/prog");
	/* the bare name below --symfs too: its debug files are looked for under it */
	ck_assert_ptr_eq(l.v[1].sysroot, pl.symfs);
	ck_assert_str_eq(l.v[1].path + l.v[1].under, "/prog");
	ck_assert_ptr_null(l.v[2].sysroot);
	loc_list_release(&l);
	/* no --symfs, no build id: only the recorded path and beside the input */
	pl.symfs = NULL;
	q.build_id_size = 0;
	locate_list(&pl, LOC_OBJECT, &q, &l);
	expect(&l, bare, 2);
	loc_list_release(&l);
}
END_TEST

START_TEST(test_vdso_and_kallsyms)
{
	struct loc_places pl = { .symfs = "/sym", .input_dir = "/rec", .buildid_dir = "/d" };
	struct loc_query q = { .path = "[vdso]", .build_id = bid, .build_id_size = 4 };
	static const char *const vdso[] = { "/d/[vdso]/abcd0102/vdso", "/sym/vdso.so", "/rec/vdso.so" };
	static const char *const ks[] = { "/d/[kernel.kallsyms]/abcd0102/kallsyms", "/proc/kallsyms" };
	static const char *const only[] = { "/saved/kallsyms.gz" };
	struct loc_list l;

	locate_list(&pl, LOC_VDSO, &q, &l);
	expect(&l, vdso, 3);
	loc_list_release(&l);
	q.path = NULL;
	locate_list(&pl, LOC_KALLSYMS, &q, &l);
	expect(&l, ks, 2);
	ck_assert(l.v[1].flags & LOC_F_SAME_KERNEL);
	loc_list_release(&l);
	/* --kallsyms is then the only place */
	pl.kallsyms = "/saved/kallsyms.gz";
	locate_list(&pl, LOC_KALLSYMS, &q, &l);
	expect(&l, only, 1);
	loc_list_release(&l);
}
END_TEST

START_TEST(test_debug_order)
{
	struct loc_query q = { .path = "/usr/lib/libx.so.1", .build_id = bid, .build_id_size = 4,
			       .debuglink = "libx.so.1.debug" };
	static const char *const withbid[] = {
		"/usr/lib/debug/.build-id/ab/cd0102.debug", "/usr/lib/libx.so.1.debug",
		"/usr/lib/.debug/libx.so.1.debug", "/usr/lib/debug/usr/lib/libx.so.1.debug",
		"/usr/lib/debug/usr/lib/libx.so.1.debug", "/usr/lib/debug/usr/lib/libx.so.1",
	};
	static const char *const symfs[] = {
		"/s/usr/lib/debug/.build-id/ab/cd0102.debug", "/s/usr/lib/libx.so.1.debug",
		"/s/usr/lib/.debug/libx.so.1.debug", "/s/usr/lib/debug/usr/lib/libx.so.1.debug",
		"/s/usr/lib/debug/usr/lib/libx.so.1.debug", "/s/usr/lib/debug/usr/lib/libx.so.1",
		"debuginfod (DEBUGINFOD_URLS)",
	};
	struct loc_list l;

	unsetenv("DEBUGINFOD_URLS");
	locate_list(NULL, LOC_DEBUG, &q, &l);
	expect(&l, withbid, 6);
	ck_assert(l.v[1].flags & LOC_F_CRC);
	ck_assert(!(l.v[0].flags & LOC_F_CRC));
	loc_list_release(&l);
	/* without a build id, only the .gnu_debuglink names (their CRC vouches), under
	 * the --symfs the object was found in */
	q.build_id_size = 0;
	q.sysroot = "/s";
	q.build_id = NULL;
	locate_list(NULL, LOC_DEBUG, &q, &l);
	expect(&l, symfs + 1, 3);
	loc_list_release(&l);
	q.build_id = bid;
	q.build_id_size = 4;
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	locate_list(NULL, LOC_DEBUG, &q, &l);
	expect(&l, symfs, 7);
	ck_assert(l.v[6].flags & LOC_F_LIBDW);
	ck_assert_ptr_null(l.v[6].path);
	loc_list_release(&l);
	unsetenv("DEBUGINFOD_URLS");
}
END_TEST

START_TEST(test_jit_order)
{
	static const char *const dirs[] = { "/j1", "/j2" };
	struct loc_places pl = { .input_dir = "/rec", .jit_dirs = dirs, .njit_dirs = 2, .here = 1 };
	struct loc_query q = { .path = "/tmp/jit-42.dump", .pid = 42 };
	static const char *const dump[] = {
		"/j1/.../jit-42.dump[.gz]", "/j2/.../jit-42.dump[.gz]", "/rec/jit-42.dump[.gz]",
		"/tmp/jit-42.dump",
	};
	static const char *const map[] = {
		"/j1/.../perf-42.map", "/j2/.../perf-42.map", "/rec/perf-42.map", "/tmp/perf-42.map",
	};
	struct loc_list l;

	locate_list(&pl, LOC_JITDUMP, &q, &l);
	expect(&l, dump, 4);
	ck_assert_uint_eq(l.v[1].instance, 1);
	ck_assert_str_eq(l.v[1].name, "jit-42.dump");
	loc_list_release(&l);
	q.path = NULL;
	locate_list(&pl, LOC_PERFMAP, &q, &l);
	expect(&l, map, 4);
	loc_list_release(&l);
	/* recorded elsewhere: /tmp is another machine's */
	pl.here = 0;
	locate_list(&pl, LOC_PERFMAP, &q, &l);
	expect(&l, map, 3);
	loc_list_release(&l);
}
END_TEST

START_TEST(test_cache_layout)
{
	char dir[64] = "/tmp/check_locate.XXXXXX", *p; /* room for "/debug" after it */
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* no cache: NULL, and nothing made at the filesystem's root */
	ck_assert_ptr_null(cache_entry_path(NULL, CACHE_DEBUG, "ab", 1));
	ck_assert_ptr_null(cache_entry_path("", CACHE_DEBUG, "ab", 1));
	p = cache_entry_path(dir, CACHE_DEBUG, "abcd", 1);
	ck_assert_str_eq(p + strlen(dir), "/debug/abcd.debug");
	free(p);
	snprintf(dir + strlen(dir), 16, "/debug");
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	rmdir(dir);
	dir[strlen(dir) - 6] = 0;
	p = cache_entry_path(dir, CACHE_SYMBOLS, "0123456789abcdef", 0);
	ck_assert_str_eq(p + strlen(dir), "/symbols/0123456789abcdef");
	free(p);
	p = cache_entry_path(dir, CACHE_KALLSYMS, "abcd", 0);
	ck_assert_str_eq(p + strlen(dir), "/kallsyms/abcd");
	free(p);
	ck_assert_int_eq(stat(dir, &st), 0);
	rmdir(dir);
}
END_TEST

/* An entry written in parts, later: the bytes, and the seal, of the entry written whole
 * (a kallsyms entry is written from the parsed table's arrays, not a copy of them). */
START_TEST(test_entry_in_parts)
{
	char dir[64] = "/tmp/check_locate.XXXXXX", file[96], *whole, *got;
	size_t len = 4096 + 333, head_len = sizeof(struct cache_head) + 13;
	struct cache_part parts[2];
	struct mapped_file mf;
	struct later *later;
	struct cache_ctx cc = { 0 };
	const char *why;
	uint8_t *own;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/entry", dir);
	whole = calloc(1, len);
	for (size_t i = sizeof(struct cache_head); i < head_len; i++)
		whole[i] = (char)i;
	/* parts at offsets 40 and 1000 bytes after the head, zeros between and after */
	for (size_t i = 0; i < 500; i++)
		whole[head_len + 40 + i] = (char)(i * 7 + 1);
	own = malloc(2000);
	for (size_t i = 0; i < 2000; i++)
		whole[head_len + 1000 + i] = (char)(own[i] = (uint8_t)(i * 13 + 5));
	parts[0] = (struct cache_part){ head_len + 40, whole + head_len + 40, 500, NULL };
	parts[1] = (struct cache_part){ head_len + 1000, own, 2000, own };
	got = malloc(head_len);
	memcpy(got, whole, head_len);
	later = later_new();
	cc.later = later;
	cache_entry_write_parts_later(&cc, strdup(file), got, head_len, parts, 2, len, "PCTEST01",
				      3, head_len);
	later_free(later);
	cache_head_seal(whole, len, "PCTEST01", 3, head_len);
	got = calloc(1, len + 1);
	f = fopen(file, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(got, 1, len + 1, f), len);
	fclose(f);
	ck_assert_mem_eq(got, whole, len);
	ck_assert_int_eq(cache_entry_open(file, "PCTEST01", 3, head_len, &mf, &why), CACHE_GOOD);
	mapped_file_close(&mf);
	/* the checksum in any parts is the checksum of the whole */
	for (size_t cut = 0; cut < 100; cut += 7) {
		struct checksum c;

		checksum_begin(&c, len);
		checksum_add(&c, whole, cut);
		checksum_add(&c, whole + cut, 1);
		checksum_add(&c, whole + cut + 1, len - cut - 1);
		ck_assert_uint_eq(checksum_end(&c), checksum64(whole, len));
	}
	free(got);
	free(whole);
	unlink(file);
	rmdir(dir);
}
END_TEST

START_TEST(test_table_documented)
{
	struct loc_row r;
	size_t n = 0;

	for (; locate_row(n, &r); n++)
		ck_assert_msg(r.doc && strlen(r.doc) > 10, "row %zu has no description", n);
	ck_assert_uint_ge(n, 20);
}
END_TEST

static Suite *locate_suite(void)
{
	Suite *s = suite_create("locate");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_origin);
	tcase_add_test(tc, test_object_order);
	tcase_add_test(tc, test_vdso_and_kallsyms);
	tcase_add_test(tc, test_debug_order);
	tcase_add_test(tc, test_jit_order);
	tcase_add_test(tc, test_cache_layout);
	tcase_add_test(tc, test_entry_in_parts);
	tcase_add_test(tc, test_table_documented);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(locate_suite()) ? 1 : 0;
}
