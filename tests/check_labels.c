/* check_labels: --start-time, --label and --service as the command line takes them. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "convert/labels.h"
#include "tests/testutil.h"

START_TEST(start_times)
{
	int64_t ns = 0;

	ck_assert_int_eq(meta_parse_time("2026-05-01T12:00:00Z", &ns), 0);
	ck_assert_int_eq(ns, 1777636800000000000LL);
	ck_assert_int_eq(meta_parse_time("2026-05-01T14:00:00.25+02:00", &ns), 0);
	ck_assert_int_eq(ns, 1777636800250000000LL);
	ck_assert_int_eq(meta_parse_time("2026-05-01t12:00:00.123456789z", &ns), 0);
	ck_assert_int_eq(ns, 1777636800123456789LL);
	ck_assert_int_eq(meta_parse_time("1777636800", &ns), 0);
	ck_assert_int_eq(ns, 1777636800000000000LL);
	ck_assert_int_eq(meta_parse_time("1777636800.5", &ns), 0);
	ck_assert_int_eq(ns, 1777636800500000000LL);
	/* what is not a time */
	ck_assert_int_eq(meta_parse_time("", &ns), -1);
	ck_assert_int_eq(meta_parse_time("2026-05-01", &ns), -1);
	ck_assert_int_eq(meta_parse_time("2026-05-01T12:00:00", &ns), -1); /* no zone */
	ck_assert_int_eq(meta_parse_time("2026-13-01T12:00:00Z", &ns), -1);
	ck_assert_int_eq(meta_parse_time("1777636800s", &ns), -1);
	ck_assert_int_eq(meta_parse_time("-5", &ns), -1);
}
END_TEST

START_TEST(labels)
{
	struct meta_options m;
	const char *why = NULL;

	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(meta_add_label(&m, "env=prod", &why), 0);
	ck_assert_int_eq(meta_add_label(&m, "version=1.2.3-rc1", &why), 0);
	ck_assert_int_eq(meta_add_label(&m, "env=staging", &why), 0); /* the last one wins */
	ck_assert_int_eq(meta_add_label(&m, "host=db-3", &why), 0);   /* overrides the recording's */
	ck_assert_int_eq(meta_add_label(&m, "region=Zürich", &why), 0);
	ck_assert_uint_eq(m.nlabels, 4);
	ck_assert_str_eq(m.labels[0].key, "env");
	ck_assert_str_eq(m.labels[0].value, "staging");
	ck_assert_str_eq(m.labels[3].value, "Zürich");
	ck_assert_int_eq(meta_add_label(&m, "env", &why), -1);
	ck_assert_int_eq(meta_add_label(&m, "thread id=1", &why), -1);
	ck_assert_int_eq(meta_add_label(&m, "1env=x", &why), -1);
	ck_assert_int_eq(meta_add_label(&m, "__name__=x", &why), -1);
	ck_assert_int_eq(meta_add_label(&m, "service=x", &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "--service"));
	ck_assert_int_eq(meta_add_label(&m, "env=a,b", &why), -1);
	ck_assert_int_eq(meta_add_label(&m, "env=a}", &why), -1);
	ck_assert_int_eq(meta_add_label(&m, "env=a\tb", &why), -1);
	ck_assert_int_eq(meta_add_label(&m, "env=\xff", &why), -1);
	ck_assert_uint_eq(m.nlabels, 4);
	ck_assert_int_eq(meta_set_service(&m, "shop/api-v2.1", &why), 0);
	ck_assert_str_eq(m.service, "shop/api-v2.1");
	ck_assert_int_eq(meta_set_service(&m, "", &why), -1);
	ck_assert_int_eq(meta_set_service(&m, "a b", &why), -1);
	ck_assert_int_eq(meta_set_service(&m, "a{b}", &why), -1);
	meta_options_release(&m);
}
END_TEST

START_TEST(rfc3339)
{
	char buf[40];

	meta_rfc3339(1777636800250000000LL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2026-05-01T12:00:00.250000000Z");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("labels");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, start_times);
	tcase_add_test(tc, labels);
	tcase_add_test(tc, rfc3339);
	suite_add_tcase(s, tc);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
