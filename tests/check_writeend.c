/* check_writeend: a writer's end: an error the stream kept is -1, and errno never reads "Success". */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/writeend.h"
#include "tests/testutil.h"

/* /dev/full: every write fails with ENOSPC, kept by stdio as the stream's error; the
 * cause said is the disk's, not a later call's errno. */
START_TEST(stream_error_is_failure)
{
	FILE *out = fopen("/dev/full", "w");

	ck_assert_ptr_nonnull(out);
	fputs("folded;stack 1\n", out);
	ck_assert_int_ne(fflush(out), 0);
	/* the writer goes on to its end, and a later call leaves another errno */
	fputs("folded;other 2\n", out);
	errno = ENOENT;
	ck_assert_int_eq(write_end(out, 0), -1);
	ck_assert_int_eq(errno, ENOSPC);
	/* nothing left to say it again: EIO, not "Success" */
	errno = 0;
	ck_assert_int_eq(write_end(out, 0), -1);
	ck_assert_int_eq(errno, EIO);
	fclose(out);
}
END_TEST

START_TEST(writer_result_kept)
{
	FILE *out = fopen("/dev/null", "w");

	ck_assert_ptr_nonnull(out);
	fputs("x", out);
	errno = 0;
	ck_assert_int_eq(write_end(out, 0), 0);
	ck_assert_int_eq(errno, 0);
	/* the writer's own failure (ENOMEM from a table it could not make) stays */
	errno = ENOMEM;
	ck_assert_int_eq(write_end(out, -1), -1);
	ck_assert_int_eq(errno, ENOMEM);
	errno = 0;
	ck_assert_int_eq(write_end(out, -1), -1);
	ck_assert_int_eq(errno, EIO);
	fclose(out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("writeend");
	TCase *tc = tcase_create("core");

	suite_add_tcase(s, tc);
	tcase_add_test(tc, stream_error_is_failure);
	tcase_add_test(tc, writer_result_kept);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
