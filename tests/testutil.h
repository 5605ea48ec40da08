/* testutil: what the Check suites share: paths in the tree, whole files, captured diagnostics. */
#ifndef PERFCONV_TESTUTIL_H
#define PERFCONV_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/diag.h"
#include "formats/model/profile.h"
#include "formats/write/writer.h"

typedef struct Suite Suite;

/* `rel` under $PERFCONV_TOP (the Makefile sets it), else under "."; valid until the
 * next call. */
const char *top_path(const char *rel);

/* A whole file, gunzipped when it is gzip (plain files are read as they are); the
 * test fails when it cannot be read. The caller frees it. */
uint8_t *slurp_gz(const char *path, size_t *len);

/* A diag whose lines are captured for the test to read. */
struct cap {
	struct diag d;
	FILE *f;
	char text[8192];
};
void cap_init(struct cap *c);
/* Everything printed so far. */
const char *cap_text(struct cap *c);

/* Run a suite with the usual options; the number of tests that failed. */
int run_suite(Suite *s);

/* The stack node for frame ids given root first. */
uint32_t test_stack(struct profile *p, const uint32_t *frames, size_t n);

/* Add a sample of stack `node` (count 1) with these fields, the others 0. */
void test_sample(struct profile *p, const char *comm, uint32_t pid, uint32_t tid, uint32_t node,
		 uint64_t period, uint64_t time, uint16_t event);

/* What writer `w` writes of `p`, NUL-terminated; the test fails when it fails. The
 * caller frees it. */
char *test_render(const struct profile *p, profile_writer w, const struct write_options *o);

#endif
