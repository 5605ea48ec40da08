/* testutil: what the Check suites share: paths in the tree, whole files, captured diagnostics. */
#include "tests/testutil.h"

#include <check.h>
#include <stdlib.h>
#include <zlib.h>

static char path_buf[4096];

const char *top_path(const char *rel)
{
	const char *top = getenv("PERFCONV_TOP");

	snprintf(path_buf, sizeof(path_buf), "%s/%s", top ? top : ".", rel);
	return path_buf;
}

uint8_t *slurp_gz(const char *path, size_t *len)
{
	gzFile f = gzopen(path, "rb");
	size_t cap = 1 << 20, n = 0;
	uint8_t *buf = malloc(cap);
	int k;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert(buf != NULL);
	while ((k = gzread(f, buf + n, (unsigned)(cap - n))) > 0) {
		n += (size_t)k;
		if (n == cap) {
			buf = realloc(buf, cap *= 2);
			ck_assert(buf != NULL);
		}
	}
	ck_assert_int_eq(k, 0);
	gzclose(f);
	*len = n;
	return buf;
}

void cap_init(struct cap *c)
{
	diag_init(&c->d);
	c->f = tmpfile();
	ck_assert(c->f != NULL);
	c->d.out = c->f;
}

const char *cap_text(struct cap *c)
{
	size_t n;

	fflush(c->f);
	rewind(c->f);
	n = fread(c->text, 1, sizeof(c->text) - 1, c->f);
	c->text[n] = 0;
	return c->text;
}

int run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed;
}

uint32_t test_stack(struct profile *p, const uint32_t *frames, size_t n)
{
	uint32_t node = 0;

	for (size_t i = 0; i < n; i++)
		node = profile_node(p, node, frames[i]);
	return node;
}

void test_sample(struct profile *p, const char *comm, uint32_t pid, uint32_t tid, uint32_t node,
		 uint64_t period, uint64_t time, uint16_t event)
{
	struct pc_sample s;

	memset(&s, 0, sizeof(s));
	s.comm = profile_str(p, comm);
	s.pid = pid;
	s.tid = tid;
	s.stack = node;
	s.period = period;
	s.time = time;
	s.event = event;
	profile_add_sample(p, &s);
}

char *test_render(const struct profile *p, profile_writer w, const struct write_options *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(w(p, o, f), 0);
	fclose(f);
	return buf;
}
