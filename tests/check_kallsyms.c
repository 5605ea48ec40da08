/* check_kallsyms: kernel symbol names from kallsyms files, as perf would give them. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/later.h"
#include "symbolize/cachedir.h"
#include "symbolize/kallsyms.h"
#include "tests/testutil.h"

static char tmpdir[] = "/tmp/check_kallsyms.XXXXXX";
static char plain[512], gz[512], zeros[512];

/* Not sorted, as the real file is not: module symbols come after the kernel's. */
static const char synthetic[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81000100 t local_fn\n"
	"ffffffff81000200 W weak_fn\n"
	"ffffffff81000300 r some_rodata\n"
	"ffffffff81000400 T last_core\n"
	"0000000000000000 A fixed_percpu_data\n"
	"garbage line\n"
	"ffffffffc0002000 t other_fn\t[xfs]\n"
	"ffffffffc0001000 t mod_fn1\t[ext4]\n"
	"ffffffffc0001080 T mod_fn2\t[ext4]\n";

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int make_files(void)
{
	gzFile g;

	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(plain, sizeof(plain), "%s/kallsyms", tmpdir);
	snprintf(gz, sizeof(gz), "%s/kallsyms.gz", tmpdir);
	snprintf(zeros, sizeof(zeros), "%s/kallsyms.zeros", tmpdir);
	if (write_file(plain, synthetic) ||
	    write_file(zeros, "0000000000000000 T _text\n0000000000000000 t foo\n"
			      "0000000000000000 T bar\t[ext4]\n"))
		return -1;
	g = gzopen(gz, "wb");
	if (!g || gzputs(g, synthetic) < 0 || gzclose(g) != Z_OK)
		return -1;
	return 0;
}

/* The symbol at `addr`, or NULL (valid until the next call). */
static const struct ksym *at(const struct kallsyms *k, uint64_t addr)
{
	static struct ksym s;

	return kallsyms_lookup(k, addr, &s) ? &s : NULL;
}

/* What the synthetic file must give, parsed or from a cache file. */
static void check_synthetic_table(const struct kallsyms *k)
{
	const struct ksym *s;

	/* three names at one address count once; 'r' and 'A' are not kept */
	ck_assert_uint_eq(kallsyms_count(k), 7);
	/* of names at one address the last in the file wins (perf: the earlier get size 0) */
	s = at(k, 0xffffffff81000010);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "startup_64");
	ck_assert_ptr_null(s->module);
	ck_assert_uint_eq(s->start, 0xffffffff81000000);
	ck_assert_uint_eq(s->end, 0xffffffff81000100);
	/* the names that lost are still found by name */
	ck_assert_uint_eq(kallsyms_addr_of(k, "_text"), 0xffffffff81000000);
	ck_assert_uint_eq(kallsyms_addr_of(k, "_stext"), 0xffffffff81000000);
	ck_assert_uint_eq(kallsyms_addr_of(k, "local_fn"), 0xffffffff81000100);
	ck_assert_uint_eq(kallsyms_addr_of(k, "no_such_symbol"), 0);
	ck_assert_str_eq(at(k, 0xffffffff81000150)->name, "local_fn");
	/* rodata is skipped, so weak_fn runs up to last_core */
	ck_assert_str_eq(at(k, 0xffffffff81000350)->name, "weak_fn");
	/* the last kernel symbol before the modules ends a page later */
	s = at(k, 0xffffffff81001fff);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "last_core");
	ck_assert_ptr_null(at(k, 0xffffffff81002000));
	ck_assert_ptr_null(at(k, 0xffffffffc0000fff));
	ck_assert_ptr_null(at(k, 0x1000));
	/* module symbols carry the module name without brackets */
	s = at(k, 0xffffffffc0001010);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "mod_fn1");
	ck_assert_str_eq(s->module, "ext4");
	ck_assert_uint_eq(s->end, 0xffffffffc0001080);
	s = at(k, 0xffffffffc0001fff);
	ck_assert_str_eq(s->name, "mod_fn2");
	ck_assert_str_eq(s->module, "ext4");
	s = at(k, 0xffffffffc0002abc);
	ck_assert_str_eq(s->name, "other_fn");
	ck_assert_str_eq(s->module, "xfs");
	/* the very last symbol ends one page after its page */
	ck_assert_uint_eq(s->end, 0xffffffffc0003000);
	ck_assert_ptr_null(at(k, 0xffffffffc0003000));
}

static void check_synthetic(const char *path)
{
	char err[256];
	struct kallsyms *k = kallsyms_load(path, err, sizeof(err));

	ck_assert_msg(k != NULL, "%s", err);
	check_synthetic_table(k);
	kallsyms_free(k);
}

START_TEST(test_plain)
{
	check_synthetic(plain);
}
END_TEST

START_TEST(test_gzip)
{
	check_synthetic(gz);
}
END_TEST

/* A parsed table kept in a cache file gives the same symbols, and only for the
 * source and the build id it was made from. */
START_TEST(test_cache)
{
	static const uint8_t bid[20] = { 0x4a, 0x5a, 1, 2, 3 }, other_bid[20] = { 9 };
	struct file_id src, changed;
	struct kallsyms *k, *c;
	struct later *later;
	struct cache_ctx cc = { 0 };
	char err[256], file[600];
	const char *damage;
	FILE *f;
	int fd;

	snprintf(file, sizeof(file), "%s/cache", tmpdir);
	k = kallsyms_load(plain, err, sizeof(err));
	ck_assert_msg(k != NULL, "%s", err);
	ck_assert_int_eq(file_id_of(plain, &src), 0);
	ck_assert_ptr_null(kallsyms_cache_open(file, plain, &src, bid, sizeof(bid), &damage));
	ck_assert_ptr_null(damage); /* missing is no damage */
	/* written on a thread of its own from k's arrays: kallsyms_free waits for it (a
	 * sanitizer build says so if it did not) */
	later = later_new();
	cc.later = later;
	ck_assert_int_eq(kallsyms_cache_write(k, file, plain, &src, bid, sizeof(bid), &cc), 0);
	kallsyms_free(k);
	c = kallsyms_cache_open(file, plain, &src, bid, sizeof(bid), &damage);
	later_free(later);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(kallsyms_count(c), 7);
	check_synthetic_table(c);
	kallsyms_free(c);
	/* another kernel, another source file, the source changed since: stale, no damage */
	ck_assert_ptr_null(kallsyms_cache_open(file, plain, &src, other_bid, sizeof(other_bid), &damage));
	ck_assert_ptr_null(damage);
	ck_assert_ptr_null(kallsyms_cache_open(file, gz, &src, bid, sizeof(bid), &damage));
	ck_assert_ptr_null(damage);
	changed = src;
	changed.mtime_ns++;
	ck_assert_ptr_null(kallsyms_cache_open(file, plain, &changed, bid, sizeof(bid), &damage));
	ck_assert_ptr_null(damage);
	/* one name edited inside (its last byte before the NUL): damage, said */
	fd = open(file, O_RDWR);
	ck_assert_int_ge(fd, 0);
	{
		struct stat st;
		char ch;

		ck_assert_int_eq(fstat(fd, &st), 0);
		ck_assert_int_eq(pread(fd, &ch, 1, st.st_size - 2), 1);
		ch ^= 0x20;
		ck_assert_int_eq(pwrite(fd, &ch, 1, st.st_size - 2), 1);
	}
	close(fd);
	ck_assert_ptr_null(kallsyms_cache_open(file, plain, &src, bid, sizeof(bid), &damage));
	ck_assert_ptr_nonnull(damage);
	ck_assert_ptr_nonnull(strstr(damage, "checksum"));
	/* a cache file cut short is not used */
	ck_assert_int_eq(truncate(file, 200), 0);
	ck_assert_ptr_null(kallsyms_cache_open(file, plain, &src, bid, sizeof(bid), &damage));
	ck_assert_str_eq(damage, "truncated");
	/* nor garbage */
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 4096; i++)
		fputc(i * 7, f);
	fclose(f);
	ck_assert_ptr_null(kallsyms_cache_open(file, plain, &src, bid, sizeof(bid), &damage));
	ck_assert_ptr_nonnull(damage);
	/* nor a FIFO, which is not even opened for reading (no wait) */
	ck_assert_int_eq(unlink(file), 0);
	ck_assert_int_eq(mkfifo(file, 0600), 0);
	ck_assert_ptr_null(kallsyms_cache_open(file, plain, &src, bid, sizeof(bid), &damage));
	ck_assert_str_eq(damage, "not a regular file");
	unlink(file);
	/* /proc/kallsyms is no regular file with a size: never cached */
	ck_assert_int_ne(file_id_of("/proc/kallsyms", &src), 0);
}
END_TEST

START_TEST(test_zero_addresses)
{
	char err[256] = "";
	struct kallsyms *k = kallsyms_load(zeros, err, sizeof(err));

	ck_assert_ptr_null(k);
	ck_assert_ptr_nonnull(strstr(err, "kptr_restrict"));
	ck_assert_ptr_nonnull(strstr(err, zeros));
}
END_TEST

START_TEST(test_missing_file)
{
	char err[256] = "";
	struct kallsyms *k = kallsyms_load("/nonexistent/kallsyms", err, sizeof(err));

	ck_assert_ptr_null(k);
	ck_assert_ptr_nonnull(strstr(err, "cannot open \"/nonexistent/kallsyms\""));
	kallsyms_free(NULL);
	ck_assert_ptr_null(at(NULL, 1));
}
END_TEST

START_TEST(test_live_kallsyms)
{
	char err[256] = "";
	struct kallsyms *k = kallsyms_load("/proc/kallsyms", err, sizeof(err));
	const struct ksym *s;
	uint64_t text, sched;

	if (!k) { /* hidden by kptr_restrict or not readable: nothing to check */
		ck_assert_msg(strstr(err, "zero") || strstr(err, "cannot"), "%s", err);
		return;
	}
	ck_assert_uint_gt(kallsyms_count(k), 1000);
	text = kallsyms_addr_of(k, "_text");
	ck_assert_uint_ne(text, 0);
	ck_assert_ptr_nonnull(at(k, text));
	sched = kallsyms_addr_of(k, "schedule");
	ck_assert_uint_ne(sched, 0);
	s = at(k, sched + 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "schedule");
	ck_assert_ptr_null(s->module);
	kallsyms_free(k);
}
END_TEST

START_TEST(test_live_build_id)
{
	uint8_t id[64];
	size_t n;

	if (access("/sys/kernel/notes", R_OK) != 0)
		return;
	n = kallsyms_live_build_id(id, sizeof(id));
	/* kernels built with a build id (all distribution kernels) have a 20-byte SHA-1 */
	if (n)
		ck_assert_uint_eq(n, 20);
	ck_assert_uint_le(kallsyms_live_build_id(id, 4), 4);
}
END_TEST

/* The files a live table is read from, made up: a kallsyms longer than the 4096 bytes
 * of its head that identify it, a notes file with build id `bid0`, a boot id. */
static void write_live(const char *dir, const char *text_at, const char *last_name,
		       const char *module_line, const char *boot, uint8_t bid0)
{
	char path[600];
	FILE *f;
	uint32_t note[3] = { 4, 20, 3 };
	uint8_t desc[20] = { bid0, 0x11, 0x22 };

	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s T _stext\n%s T _text\n", text_at, text_at);
	/* 200 lines (about 7 KB) of core symbols */
	for (int i = 0; i < 200; i++)
		if (strncmp(text_at, "0000", 4) == 0) /* hidden: every address zero */
			fprintf(f, "0000000000000000 t pad_%d\n", i);
		else
			fprintf(f, "ffffffff81%06x t pad_%d\n", 0x100 + i * 0x10, i);
	fprintf(f, "ffffffff81010000 T %s\n", last_name);
	fprintf(f, "%s", module_line);
	fprintf(f, "0000000000002000 D early_data\n");
	ck_assert_int_eq(fclose(f), 0);
	snprintf(path, sizeof(path), "%s/notes", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fwrite(note, sizeof(note), 1, f);
	fwrite("GNU", 4, 1, f);
	fwrite(desc, sizeof(desc), 1, f);
	ck_assert_int_eq(fclose(f), 0);
	snprintf(path, sizeof(path), "%s/boot_id", dir);
	ck_assert_int_eq(write_file(path, boot), 0);
}

/* The running kernel's core part cached, keyed by build id, boot id and the head of
 * the file; modules and the rest always read from the live file. */
START_TEST(test_live_cache)
{
	char dir[600], ks[700], notes[700], boot[700], file[700], err[256];
	struct kallsyms_live src = { ks, notes, boot };
	struct kallsyms_live_id id, id2;
	struct kallsyms *k;
	const struct ksym *s;
	const char *damage;
	const char *mod = "ffffffffc0001000 t mod_fn\t[ext4]\n";
	const char *boot1 = "9dd97781-3292-41f5-9acb-f8ff173912ac\n";

	snprintf(dir, sizeof(dir), "%s/live", tmpdir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(ks, sizeof(ks), "%s/kallsyms", dir);
	snprintf(notes, sizeof(notes), "%s/notes", dir);
	snprintf(boot, sizeof(boot), "%s/boot_id", dir);
	snprintf(file, sizeof(file), "%s/cache", dir);
	write_live(dir, "ffffffff81000000", "core_last", mod, boot1, 0xa3);

	ck_assert_int_eq(kallsyms_live_id(&src, &id), 0);
	ck_assert_uint_eq(id.build_id_size, 20);
	ck_assert_uint_eq(id.build_id[0], 0xa3);
	ck_assert_ptr_null(kallsyms_live_open(file, &src, &id, &damage));
	ck_assert_ptr_null(damage);
	k = kallsyms_load(ks, err, sizeof(err));
	ck_assert_msg(k != NULL, "%s", err);
	ck_assert_int_eq(kallsyms_live_write(k, file, &id, NULL), 0);
	kallsyms_free(k);

	/* a module loaded and another unloaded since (past the head): the core part from
	 * the cache, the module's symbols from the file as it is now */
	write_live(dir, "ffffffff81000000", "renamed_core", "ffffffffc0001000 t xfs_fn\t[xfs]\n",
		   boot1, 0xa3);
	ck_assert_int_eq(kallsyms_live_id(&src, &id2), 0);
	k = kallsyms_live_open(file, &src, &id2, &damage);
	ck_assert_ptr_nonnull(k);
	s = at(k, 0xffffffff81000155);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "pad_5");
	ck_assert_ptr_null(s->module);
	/* the core kernel is fixed in one boot: what the cache holds is what is used */
	ck_assert_str_eq(at(k, 0xffffffff81010000)->name, "core_last");
	ck_assert_uint_eq(kallsyms_addr_of(k, "_text"), 0xffffffff81000000);
	s = at(k, 0xffffffffc0001010);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "xfs_fn");
	ck_assert_str_eq(s->module, "xfs");
	/* below _text: not in the cache, from the file */
	ck_assert_str_eq(at(k, 0x2000)->name, "early_data");
	kallsyms_free(k);

	/* another boot, another kernel, the kernel loaded elsewhere: not used, no damage */
	write_live(dir, "ffffffff81000000", "core_last", mod, "0b4e6c1a-boot-2\n", 0xa3);
	ck_assert_int_eq(kallsyms_live_id(&src, &id2), 0);
	ck_assert_ptr_null(kallsyms_live_open(file, &src, &id2, &damage));
	ck_assert_ptr_null(damage);
	write_live(dir, "ffffffff81000000", "core_last", mod, boot1, 0xb4);
	ck_assert_int_eq(kallsyms_live_id(&src, &id2), 0);
	ck_assert_ptr_null(kallsyms_live_open(file, &src, &id2, &damage));
	ck_assert_ptr_null(damage);
	write_live(dir, "ffffffff81200000", "core_last", mod, boot1, 0xa3);
	ck_assert_int_eq(kallsyms_live_id(&src, &id2), 0);
	ck_assert_ptr_null(kallsyms_live_open(file, &src, &id2, &damage));
	ck_assert_ptr_null(damage);
	/* addresses hidden (kptr_restrict): no caching at all */
	write_live(dir, "0000000000000000", "core_last", mod, boot1, 0xa3);
	ck_assert_int_eq(kallsyms_live_id(&src, &id2), -1);

	/* a module symbol inside the core range: the range is not the core's alone, so
	 * nothing is cached */
	write_live(dir, "ffffffff81000000", "core_last", "ffffffff81000105 t odd_fn\t[odd]\n",
		   boot1, 0xa3);
	ck_assert_int_eq(kallsyms_live_id(&src, &id2), 0);
	k = kallsyms_load(ks, err, sizeof(err));
	ck_assert_msg(k != NULL, "%s", err);
	ck_assert_int_eq(kallsyms_live_write(k, file, &id2, NULL), -1);
	kallsyms_free(k);
}
END_TEST

static Suite *kallsyms_suite(void)
{
	Suite *s = suite_create("kallsyms");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_plain);
	tcase_add_test(tc, test_gzip);
	tcase_add_test(tc, test_cache);
	tcase_add_test(tc, test_zero_addresses);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_live_kallsyms);
	tcase_add_test(tc, test_live_build_id);
	tcase_add_test(tc, test_live_cache);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int failed;
	char cmd[600];

	if (make_files() != 0) {
		fprintf(stderr, "check_kallsyms: cannot write test files in %s\n", tmpdir);
		return 1;
	}
	failed = run_suite(kallsyms_suite());
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "check_kallsyms: cannot remove %s\n", tmpdir);
	return failed ? 1 : 0;
}
