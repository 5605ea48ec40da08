/* check_spool: records kept in memory, then in a temporary file, read both ways. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/spool.h"
#include "tests/testutil.h"

/* A record that says where it belongs: its index, three times (24 bytes, so that file
 * reads straddle the readers' buffers unevenly). */
struct rec {
	uint64_t a, b, c;
};

static void put(struct spool *s, uint64_t i)
{
	struct rec r = { i, ~i, i * 7 };

	spool_append(s, &r);
}

/* Records [from, to) read forward and backward are the ones written there. */
static void reads_back(struct spool *s, uint64_t from, uint64_t to, uint64_t base)
{
	struct spool_reader r;
	const struct rec *x;
	uint64_t i;

	spool_reader_init(&r, s, from, to, 0);
	for (i = from; (x = spool_read(&r)) != NULL; i++) {
		ck_assert_uint_eq(x->a, base + i);
		ck_assert_uint_eq(x->b, ~(base + i));
		ck_assert_uint_eq(x->c, (base + i) * 7);
	}
	ck_assert_uint_eq(i, to);
	spool_reader_release(&r);
	spool_reader_init(&r, s, from, to, 1);
	for (i = to; (x = spool_read(&r)) != NULL; i--)
		ck_assert_uint_eq(x->a, base + i - 1);
	ck_assert_uint_eq(i, from);
	spool_reader_release(&r);
}

/* Under the limit nothing is written; a record past it moves all to the file, and
 * every range reads back the same either way. */
START_TEST(memory_then_file)
{
	struct spool *s = spool_new(sizeof(struct rec), 100 * sizeof(struct rec));

	for (uint64_t i = 0; i < 100; i++)
		put(s, i);
	ck_assert_uint_eq(spool_count(s), 100);
	reads_back(s, 0, 100, 0);
	reads_back(s, 37, 38, 0);
	for (uint64_t i = 100; i < 20000; i++)
		put(s, i);
	ck_assert_uint_eq(spool_count(s), 20000);
	ck_assert_int_eq(spool_error(s), 0);
	reads_back(s, 0, 20000, 0);
	reads_back(s, 1, 19999, 0);
	reads_back(s, 5000, 5001, 0);
	reads_back(s, 12345, 12345, 0);
	spool_free(s);
}
END_TEST

/* Several readers at once over one file, each with its own place. */
START_TEST(readers_side_by_side)
{
	struct spool *s = spool_new(sizeof(struct rec), 0);
	struct spool_reader a, b;
	const struct rec *x, *y;
	uint64_t n = 0;

	for (uint64_t i = 0; i < 10000; i++)
		put(s, i);
	spool_reader_init(&a, s, 0, 10000, 0);
	spool_reader_init(&b, s, 0, 10000, 1);
	while ((x = spool_read(&a)) != NULL && (y = spool_read(&b)) != NULL) {
		/* x is borrowed until a's next read, whatever b reads meanwhile */
		ck_assert_uint_eq(x->a, n);
		ck_assert_uint_eq(y->a, 9999 - n);
		n++;
	}
	ck_assert_uint_eq(n, 10000);
	spool_reader_release(&a);
	spool_reader_release(&b);
	spool_free(s);
}
END_TEST

/* Cleared, a spool takes new records from memory again, and its file is reused. */
START_TEST(clear_and_reuse)
{
	struct spool *s = spool_new(sizeof(struct rec), 64 * sizeof(struct rec));

	for (uint64_t i = 0; i < 5000; i++)
		put(s, i);
	spool_clear(s);
	ck_assert_uint_eq(spool_count(s), 0);
	reads_back(s, 0, 0, 0);
	for (uint64_t i = 0; i < 10; i++)
		put(s, 1000 + i);
	reads_back(s, 0, 10, 1000);
	spool_clear(s);
	for (uint64_t i = 0; i < 3000; i++)
		put(s, 50 + i);
	reads_back(s, 0, 3000, 50);
	ck_assert_int_eq(spool_error(s), 0);
	spool_free(s);
}
END_TEST

/* A directory that cannot be written: the error is kept, appends dropped, reads end. */
START_TEST(no_temporary_directory)
{
	const char *was = getenv("TMPDIR");
	char *saved = was ? strdup(was) : NULL;
	struct spool *s = spool_new(sizeof(struct rec), 10 * sizeof(struct rec));
	struct spool_reader r;

	setenv("TMPDIR", "/nonexistent/perfconv-check", 1);
	for (uint64_t i = 0; i < 100; i++)
		put(s, i);
	ck_assert_int_ne(spool_error(s), 0);
	spool_reader_init(&r, s, 0, 100, 0);
	ck_assert_ptr_null(spool_read(&r));
	spool_reader_release(&r);
	spool_free(s);
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spool");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, memory_then_file);
	tcase_add_test(tc, readers_side_by_side);
	tcase_add_test(tc, clear_and_reuse);
	tcase_add_test(tc, no_temporary_directory);
	suite_add_tcase(s, tc);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
