/* check_mapfile: unit tests of whole files read or mapped (common/mapfile.h) when another
 * user may cut them short meanwhile. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/mapfile.h"
#include "tests/testutil.h"

/* A file of `len` bytes, each its offset's low byte, as `path`. */
static void write_pattern(const char *path, size_t len)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < len; i++)
		fputc((int)(i & 0xff), f);
	fclose(f);
}

static int pattern_holds(const struct mapped_file *mf, size_t len)
{
	const unsigned char *p = mf->map;

	for (size_t i = 0; i < len; i++)
		if (p[i] != (i & 0xff))
			return 0;
	return 1;
}

/*
 * A file another user may write (here: writable by others; as root also owned by
 * nobody) is read, not mapped: cut to nothing after it was opened, its bytes are still
 * there to read, where a mapping would be SIGBUS on the first page touched.
 */
START_TEST(test_others_file_read)
{
	char path[] = "/tmp/perfconv-check-mapfile-XXXXXX";
	int fd = mkstemp(path);
	struct mapped_file mf;
	struct stat st;

	ck_assert_int_ge(fd, 0);
	close(fd);
	write_pattern(path, 1 << 20);
	ck_assert_int_eq(chmod(path, 0666), 0);
	if (geteuid() == 0)
		ck_assert_int_eq(chown(path, 65534, 65534), 0);
	ck_assert_int_eq(mapped_file_open_st(&mf, path, NULL, &st), 0);
	ck_assert(!file_is_steady(&st));
	ck_assert_int_eq(mf.read, 1);
	ck_assert_int_eq(truncate(path, 0), 0);
	ck_assert(pattern_holds(&mf, 1 << 20));
	mapped_file_close(&mf);

	/* only this user's and not writable by others: mapped (no copy of a large file) */
	ck_assert_int_eq(chown(path, geteuid(), getegid()), 0);
	ck_assert_int_eq(chmod(path, 0644), 0);
	write_pattern(path, 1 << 20);
	ck_assert_int_eq(mapped_file_open_st(&mf, path, NULL, &st), 0);
	ck_assert(file_is_steady(&st));
	ck_assert_int_eq(mf.read, 0);
	ck_assert(pattern_holds(&mf, 1 << 20));
	mapped_file_close(&mf);
	unlink(path);
}
END_TEST

/* A FIFO is not waited on, and is no regular file. */
START_TEST(test_fifo_not_opened)
{
	char dir[] = "/tmp/perfconv-check-mapfile-XXXXXX", path[64];
	const char *why = NULL;
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(file_open_regular(path, &st, &why), -2);
	ck_assert_str_eq(why, "not a regular file");
	ck_assert_int_eq(file_open_steady(path, &st, &why), -2);
	unlink(path);
	rmdir(dir);
}
END_TEST

/*
 * A private copy of another user's file: the copy's bytes stay whatever is done to the
 * file; one that changed while it was copied is refused.
 */
START_TEST(test_private_copy)
{
	char path[] = "/tmp/perfconv-check-mapfile-XXXXXX";
	int fd = mkstemp(path), copy;
	const char *why = NULL;
	struct stat st;
	unsigned char *m;

	ck_assert_int_ge(fd, 0);
	close(fd);
	write_pattern(path, 3 << 20);
	ck_assert_int_eq(chmod(path, 0666), 0);
	copy = file_open_steady(path, &st, &why);
	ck_assert_int_ge(copy, 0);
	ck_assert_int_eq(truncate(path, 0), 0);
	m = mmap(NULL, 3 << 20, PROT_READ, MAP_PRIVATE, copy, 0);
	ck_assert(m != MAP_FAILED);
	for (size_t i = 0; i < (3u << 20); i += 4093)
		ck_assert_uint_eq(m[i], i & 0xff);
	munmap(m, 3 << 20);
	close(copy);

	/* the status given is not the file's now: it changed since */
	write_pattern(path, 3 << 20);
	fd = file_open_regular(path, &st, &why);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(truncate(path, 1000), 0);
	ck_assert_int_eq(file_copy_private(fd, &st, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "changed while it was read"));
	close(fd);
	unlink(path);
}
END_TEST

static Suite *mapfile_suite(void)
{
	Suite *s = suite_create("mapfile");
	TCase *tc = tcase_create("mapfile");

	tcase_add_test(tc, test_others_file_read);
	tcase_add_test(tc, test_fifo_not_opened);
	tcase_add_test(tc, test_private_copy);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int failed = run_suite(mapfile_suite());

	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
