/* check_diag: what a user is told of many warnings: the cap of a conversion, and the
 * watcher's once per cause per interval, on a clock the test sets. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "tests/testutil.h"

/* The test's clock: 14:02:10 UTC on a day in 2026, moved by the tests. */
static time_t clock_now;

static time_t test_clock(void)
{
	return clock_now;
}

/* Everything printed so far, however long (the caller frees it). */
static char *all_text(struct cap *c)
{
	long n;
	char *s;

	fflush(c->f);
	n = ftell(c->f);
	ck_assert(n >= 0);
	s = malloc((size_t)n + 1);
	ck_assert(s != NULL);
	rewind(c->f);
	ck_assert_uint_eq(fread(s, 1, (size_t)n, c->f), (size_t)n);
	s[n] = '\0';
	fseek(c->f, 0, SEEK_END);
	return s;
}

static unsigned count(const char *text, const char *what)
{
	unsigned n = 0;

	for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

/* A watcher's cap: per cause, an hour, starting at 14:02:10 UTC. */
static void watch_cap(struct cap *c)
{
	cap_init(c);
	clock_now = 1777644130; /* 2026-05-01T14:02:10Z */
	c->d.now = test_clock;
	diag_per_cause(&c->d, 3600);
}

/* A chunk's damaged record, as the reader says it: only the numbers differ. */
static void damaged(struct diag *d, int chunk)
{
	char path[64];

	snprintf(path, sizeof(path), "/var/lib/perf/perf.data.20261129100000%02d", chunk);
	diag_warn(d, path, 0x1a8 + (uint64_t)chunk * 16, "PERF_RECORD_ID_INDEX: damaged record "
		  "(size 0): %d bytes skipped to the next plausible record", 144 + chunk);
}

START_TEST(conversion_cap)
{
	struct cap c;
	char *text;

	cap_init(&c);
	for (int i = 0; i < 25; i++)
		damaged(&c.d, i);
	text = all_text(&c);
	ck_assert_uint_eq(count(text, "damaged record"), 20);
	ck_assert_uint_eq(count(text, "further warnings are counted, not printed"), 1);
	ck_assert_uint_eq(c.d.nwarnings, 25);
	/* what nothing holds back */
	diag_warn_always(&c.d, "/var/lib/perf/perf.data.2026112910000099", DIAG_NO_OFFSET,
			 "refused by http://127.0.0.1:4040/ingest: HTTP 400; moved to refused/");
	free(text);
	text = all_text(&c);
	ck_assert_ptr_nonnull(strstr(text, "perfconv: /var/lib/perf/perf.data.2026112910000099: "
				     "warning: refused by http://127.0.0.1:4040/ingest"));
	free(text);
	fclose(c.f);
}
END_TEST

START_TEST(once_per_cause)
{
	struct cap c;
	char *text;

	watch_cap(&c);
	for (int i = 0; i < 30; i++) {
		damaged(&c.d, i);
		clock_now += 20;
	}
	diag_warn(&c.d, "/usr/lib/libfoo.so.1", DIAG_NO_OFFSET, "build id differs from the recording's");
	diag_warn(&c.d, "/usr/lib/libbar.so.1", DIAG_NO_OFFSET, "build id differs from the recording's");
	diag_warn(&c.d, "/usr/lib/libbar.so.2", DIAG_NO_OFFSET, "build id differs from the recording's");
	diag_warn_always(&c.d, "/var/lib/perf/perf.data.2026112910000031", DIAG_NO_OFFSET,
			 "refused by http://127.0.0.1:4040/ingest: HTTP 400; moved to refused/");
	text = all_text(&c);
	/* the first chunk's line, whole; none of the 29 others; no word of a cap */
	ck_assert_ptr_nonnull(strstr(text, "perfconv: /var/lib/perf/perf.data.2026112910000000: "
				     "offset 0x1a8: warning: PERF_RECORD_ID_INDEX: damaged record "
				     "(size 0): 144 bytes skipped"));
	ck_assert_uint_eq(count(text, "damaged record"), 1);
	ck_assert_ptr_null(strstr(text, "further warnings"));
	/* libfoo and libbar are two causes; libbar.so.1 and .2 one */
	ck_assert_uint_eq(count(text, "build id differs"), 2);
	ck_assert_ptr_nonnull(strstr(text, "refused by"));
	ck_assert_uint_eq(c.d.nwarnings, 34);
	free(text);

	/* an hour after it was said, the next one is said with the count of the others */
	clock_now = 1777644130 + 3600;
	damaged(&c.d, 40);
	text = all_text(&c);
	ck_assert_uint_eq(count(text, "damaged record"), 2);
	ck_assert_ptr_nonnull(strstr(text, "perf.data.2026112910000040: offset 0x428: warning: "
				     "PERF_RECORD_ID_INDEX: damaged record (size 0): 184 bytes skipped "
				     "to the next plausible record (also 29 times since 14:02:10 UTC, "
				     "not shown)\n"));
	free(text);
	/* and again an hour later, without repeats: no count */
	clock_now += 3600;
	damaged(&c.d, 41);
	text = all_text(&c);
	ck_assert_ptr_nonnull(strstr(text, "185 bytes skipped to the next plausible record\n"));
	free(text);
	diag_release(&c.d);
	fclose(c.f);
}
END_TEST

START_TEST(tick_says_counts)
{
	struct cap c;
	char *text;

	watch_cap(&c);
	damaged(&c.d, 1);
	clock_now += 10;
	damaged(&c.d, 2);
	damaged(&c.d, 3);
	/* within the hour: nothing more */
	clock_now += 3000;
	diag_tick(&c.d);
	text = all_text(&c);
	ck_assert_uint_eq(count(text, "damaged record"), 1);
	free(text);
	/* the hour over: the last one with the count, though the cause came no more */
	clock_now += 600;
	diag_tick(&c.d);
	text = all_text(&c);
	ck_assert_uint_eq(count(text, "damaged record"), 2);
	ck_assert_ptr_nonnull(strstr(text, "perf.data.2026112910000003: offset 0x1d8: warning: "
				     "PERF_RECORD_ID_INDEX: damaged record (size 0): 147 bytes skipped "
				     "to the next plausible record (also 2 times since 14:02:10 UTC, "
				     "not shown)"));
	free(text);
	/* said: a second tick says nothing */
	clock_now += 7200;
	diag_tick(&c.d);
	text = all_text(&c);
	ck_assert_uint_eq(count(text, "damaged record"), 2);
	free(text);
	/* diag_flush says what is counted, whatever the hour */
	damaged(&c.d, 4);
	damaged(&c.d, 5);
	diag_flush(&c.d);
	text = all_text(&c);
	ck_assert_uint_eq(count(text, "damaged record"), 4);
	ck_assert_uint_eq(count(text, "(also 1 time since"), 1);
	free(text);
	diag_release(&c.d);
	fclose(c.f);
}
END_TEST

START_TEST(causes_bounded)
{
	struct cap c;
	char *text;
	char path[64];

	watch_cap(&c);
	damaged(&c.d, 1);
	damaged(&c.d, 2); /* counted */
	/* DIAG_CAUSES other causes, each a library of its own name: the oldest cause,
	 * pushed out, says its count first */
	for (int i = 0; i < DIAG_CAUSES; i++) {
		clock_now++;
		snprintf(path, sizeof(path), "/usr/lib/lib%c%c.so", 'a' + i / 26, 'a' + i % 26);
		diag_warn(&c.d, path, DIAG_NO_OFFSET, "has no symbols");
	}
	text = all_text(&c);
	ck_assert_uint_eq(count(text, "has no symbols"), DIAG_CAUSES);
	ck_assert_uint_eq(count(text, "damaged record"), 2);
	ck_assert_ptr_nonnull(strstr(text, "(also 1 time since 14:02:10 UTC, not shown)"));
	ck_assert_uint_le(c.d.ncauses, DIAG_CAUSES);
	free(text);
	/* pushed out: said again at once, not an hour later */
	damaged(&c.d, 3);
	text = all_text(&c);
	ck_assert_uint_eq(count(text, "damaged record"), 3);
	free(text);
	diag_release(&c.d);
	ck_assert_ptr_null(c.d.causes);
	fclose(c.f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("diag");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, conversion_cap);
	tcase_add_test(tc, once_per_cause);
	tcase_add_test(tc, tick_says_counts);
	tcase_add_test(tc, causes_bounded);
	suite_add_tcase(s, tc);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
