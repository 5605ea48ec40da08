/* check_framecache: what an object's DWARF gave, kept for the next run and used only
 * while its files are as they were. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/framecache.h"
#include "tests/testutil.h"

static char dir[64];
static char obj[96], dbg[96];
static struct cache_ctx ctx;
static int ndamaged;

static void on_damaged(void *arg, const char *entry, const char *why)
{
	(void)arg;
	(void)entry;
	(void)why;
	ndamaged++;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	/* mkdtemp() replaces the six X's with a unique name */
	snprintf(dir, sizeof(dir), "/tmp/check_framecache.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(obj, sizeof(obj), "%s/prog", dir);
	snprintf(dbg, sizeof(dbg), "%s/prog.debug", dir);
	write_file(obj, "an object");
	write_file(dbg, "its debug file");
	ctx.dir = dir;
	ctx.damaged = on_damaged;
	ctx.arg = NULL;
	ndamaged = 0;
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Two frames at 0x1010 (an inlined call with no file, then its function), none at
 * 0x2000; kept and read back by the next run exactly, NULL and "" told apart. */
START_TEST(test_round_trip)
{
	struct dwarf_frame two[2] = { { "inner", NULL, 7, 0 }, { "_Z5outerv", "a.c", 42, 3 } };
	struct dwarf_frame out[4];
	struct frame_cache *fc = frame_cache_open(&ctx, obj, dbg);

	ck_assert_ptr_nonnull(fc);
	ck_assert_int_eq(frame_cache_dwarf(fc), FRAME_CACHE_UNKNOWN);
	ck_assert_int_eq(frame_cache_get(fc, 0x1010, out, 4), -1);
	frame_cache_set_dwarf(fc, 1);
	frame_cache_put(fc, 0x1010, two, 2);
	frame_cache_put(fc, 0x2000, NULL, 0);
	two[0].name = "changed after put"; /* copied: the cache keeps its own */
	ck_assert_int_eq(frame_cache_get(fc, 0x1010, out, 4), 2);
	ck_assert_str_eq(out[0].name, "inner");
	frame_cache_save(fc);
	frame_cache_free(fc);

	fc = frame_cache_open(&ctx, obj, dbg);
	ck_assert_int_eq(frame_cache_dwarf(fc), FRAME_CACHE_SOME);
	ck_assert_int_eq(frame_cache_get(fc, 0x2000, out, 4), 0);
	ck_assert_int_eq(frame_cache_get(fc, 0x1011, out, 4), -1);
	ck_assert_int_eq(frame_cache_get(fc, 0x1010, out, 4), 2);
	ck_assert_str_eq(out[0].name, "inner");
	ck_assert_ptr_null(out[0].file);
	ck_assert_uint_eq(out[0].line, 7);
	ck_assert_str_eq(out[1].name, "_Z5outerv");
	ck_assert_str_eq(out[1].file, "a.c");
	ck_assert_uint_eq(out[1].line, 42);
	ck_assert_uint_eq(out[1].column, 3);
	/* `cap` frames at most */
	ck_assert_int_eq(frame_cache_get(fc, 0x1010, out, 1), 1);
	/* one more address this run: the entry rewritten with all three, in order */
	frame_cache_put(fc, 0x1000, two + 1, 1);
	frame_cache_save(fc);
	frame_cache_free(fc);
	fc = frame_cache_open(&ctx, obj, dbg);
	ck_assert_int_eq(frame_cache_get(fc, 0x1000, out, 4), 1);
	ck_assert_str_eq(out[0].file, "a.c");
	ck_assert_int_eq(frame_cache_get(fc, 0x1010, out, 4), 2);
	ck_assert_int_eq(frame_cache_get(fc, 0x2000, out, 4), 0);
	frame_cache_free(fc);
	ck_assert_int_eq(ndamaged, 0);
}
END_TEST

/* Made for the files as they were: another debug file, or the object rewritten, and
 * the entry knows nothing (without a word: not damage). */
START_TEST(test_other_files)
{
	struct dwarf_frame one = { "f", "f.c", 1, 0 }, out[2];
	struct frame_cache *fc = frame_cache_open(&ctx, obj, dbg);

	frame_cache_set_dwarf(fc, 0);
	frame_cache_put(fc, 0x10, &one, 1);
	frame_cache_save(fc);
	frame_cache_free(fc);
	fc = frame_cache_open(&ctx, obj, dbg);
	ck_assert_int_eq(frame_cache_dwarf(fc), FRAME_CACHE_NONE);
	frame_cache_free(fc);
	/* the same object without its debug file: another entry */
	fc = frame_cache_open(&ctx, obj, NULL);
	ck_assert_int_eq(frame_cache_get(fc, 0x10, out, 2), -1);
	frame_cache_free(fc);
	/* the object changed (its size): what was kept is not used */
	write_file(obj, "an object, built again");
	fc = frame_cache_open(&ctx, obj, dbg);
	ck_assert_int_eq(frame_cache_dwarf(fc), FRAME_CACHE_UNKNOWN);
	ck_assert_int_eq(frame_cache_get(fc, 0x10, out, 2), -1);
	frame_cache_free(fc);
	ck_assert_int_eq(ndamaged, 0);
	/* no cache, no file: none */
	ck_assert_ptr_null(frame_cache_open(NULL, obj, dbg));
	ck_assert_ptr_null(frame_cache_open(&ctx, "/nonexistent/prog", NULL));
}
END_TEST

/* A byte of the entry changed: damaged, said, removed; nothing of it used. */
START_TEST(test_damaged)
{
	struct dwarf_frame one = { "f", "f.c", 1, 0 }, out[2];
	struct frame_cache *fc = frame_cache_open(&ctx, obj, NULL);
	char path[160];
	FILE *f;
	long len;

	frame_cache_put(fc, 0x10, &one, 1);
	frame_cache_save(fc);
	frame_cache_free(fc);
	snprintf(path, sizeof(path), "%s/frames", dir);
	{
		char cmd[256];

		/* the one entry's name, and its stamp removed so that the checksum is read */
		snprintf(cmd, sizeof(cmd), "cd '%s' && rm -f *.ok && ls | head -1 > ../name", path);
		ck_assert_int_eq(system(cmd), 0);
	}
	{
		char name[64] = "", np[160];

		snprintf(np, sizeof(np), "%s/name", dir);
		f = fopen(np, "r");
		ck_assert_ptr_nonnull(f);
		ck_assert_ptr_nonnull(fgets(name, sizeof(name), f));
		fclose(f);
		name[strcspn(name, "\n")] = 0;
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", name);
	}
	f = fopen(path, "r+b");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, len - 2, SEEK_SET); /* in the strings: "f.c" */
	fputc('X', f);
	fclose(f);
	fc = frame_cache_open(&ctx, obj, NULL);
	ck_assert_int_eq(ndamaged, 1);
	ck_assert_int_eq(frame_cache_get(fc, 0x10, out, 2), -1);
	frame_cache_free(fc);
	ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

static Suite *framecache_suite(void)
{
	Suite *s = suite_create("framecache");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_other_files);
	tcase_add_test(tc, test_damaged);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(framecache_suite()) ? 1 : 0;
}
