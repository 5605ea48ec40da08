/* check_strbuf: the growing string: its text, its NUL, its growth, and what it says when memory runs out. */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "tests/testutil.h"

/* Its text, NUL-terminated at len, after each kind of add. */
START_TEST(text_and_nul)
{
	struct strbuf b = STRBUF_INIT;
	char *s;

	strbuf_add(&b, "", 0);
	ck_assert_ptr_nonnull(b.s);
	ck_assert_str_eq(b.s, "");
	strbuf_addstr(&b, "std::vector");
	strbuf_addch(&b, '<');
	strbuf_addf(&b, "%s, %d>", "int", 42);
	ck_assert_str_eq(b.s, "std::vector<int, 42>");
	ck_assert_uint_eq(b.len, strlen("std::vector<int, 42>"));
	ck_assert_int_eq(b.s[b.len], '\0');
	/* bytes of any value, '\0' too, counted */
	strbuf_add(&b, "a\0b", 3);
	ck_assert_uint_eq(b.len, 23);
	ck_assert_int_eq(memcmp(b.s + 20, "a\0b", 4), 0);
	strbuf_setlen(&b, 11);
	ck_assert_str_eq(b.s, "std::vector");
	strbuf_reset(&b);
	ck_assert_str_eq(b.s, "");
	ck_assert_uint_eq(b.len, 0);
	strbuf_addstr(&b, "x");
	s = strbuf_detach(&b);
	ck_assert_str_eq(s, "x");
	ck_assert_ptr_null(b.s);
	ck_assert_uint_eq(b.len + b.cap, 0);
	free(s);
	/* nothing added: "" to free, not NULL */
	s = strbuf_detach(&b);
	ck_assert_str_eq(s, "");
	free(s);
	/* printf of nothing into a buffer never used: "" */
	strbuf_addf(&b, "%s", "");
	ck_assert_ptr_nonnull(b.s);
	ck_assert_str_eq(b.s, "");
	strbuf_release(&b);
	ck_assert_ptr_null(b.s);
	strbuf_reset(&b); /* on a buffer with nothing made: nothing made */
	ck_assert_ptr_null(b.s);
}
END_TEST

/* Growth by doubling: 100,000 one-byte adds move the text a few dozen times, not
 * 100,000, and keep every byte; printf output past the room there is, whole. */
START_TEST(growth)
{
	struct strbuf b;
	size_t caps = 0, last = 0;
	char big[10000];

	strbuf_init(&b, 0);
	ck_assert_ptr_null(b.s);
	for (size_t i = 0; i < 100000; i++) {
		strbuf_addch(&b, (char)('a' + i % 26));
		ck_assert_int_eq(b.s[b.len], '\0');
		if (b.cap != last)
			caps++;
		last = b.cap;
	}
	ck_assert_uint_le(caps, 20);
	ck_assert_uint_lt(b.cap, 4 * 100000);
	for (size_t i = 0; i < 100000; i++)
		ck_assert_int_eq(b.s[i], 'a' + i % 26);
	strbuf_release(&b);

	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	strbuf_init(&b, 8);
	ck_assert_uint_ge(strbuf_avail(&b), 8);
	strbuf_addstr(&b, "<");
	strbuf_addf(&b, "%s>%u", big, 7u);
	ck_assert_uint_eq(b.len, 1 + 9999 + 2);
	ck_assert_int_eq(b.s[0], '<');
	ck_assert_int_eq(b.s[9999], 'z');
	ck_assert_str_eq(b.s + 10000, ">7");
	strbuf_release(&b);
}
END_TEST

/* Room asked for beforehand: the adds within it do not move the text (demangle.c's
 * output callback may not allocate while the demangler runs). */
START_TEST(room_ahead)
{
	struct strbuf b = STRBUF_INIT;
	const char *before;

	strbuf_grow(&b, 1000);
	ck_assert_uint_ge(strbuf_avail(&b), 1000);
	ck_assert_str_eq(b.s, "");
	before = b.s;
	for (int i = 0; i < 100; i++)
		strbuf_add(&b, "0123456789", 10);
	ck_assert_ptr_eq(b.s, before);
	ck_assert_uint_eq(b.len, 1000);
	ck_assert_int_eq(b.s[1000], '\0');
	strbuf_release(&b);
}
END_TEST

/* `fn` run in a child with stderr to a pipe: what it wrote, and how it ended. */
static int in_child(void (*fn)(void), char *err, size_t size)
{
	int fds[2], status;
	size_t got = 0;
	ssize_t r;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		fn();
		_exit(0);
	}
	close(fds[1]);
	while (got + 1 < size && (r = read(fds[0], err + got, size - 1 - got)) > 0)
		got += (size_t)r;
	err[got] = '\0';
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

static void overflowing_add(void)
{
	struct strbuf b = STRBUF_INIT;

	strbuf_addstr(&b, "abc");
	/* len + n + 1 wraps past SIZE_MAX: refused, not a 3-byte buffer written past */
	strbuf_grow(&b, SIZE_MAX - 2);
	strbuf_add(&b, "never", 5);
}

#if !defined(__SANITIZE_ADDRESS__)
static void huge_add(void)
{
	struct strbuf b = STRBUF_INIT;

	strbuf_grow(&b, SIZE_MAX / 4);
}
#endif

/* Memory that cannot be had is said, and perfconv stops: never a wrapped size. */
START_TEST(allocation_failure_said)
{
	char err[512];
	int status = in_child(overflowing_add, err, sizeof(err));

	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %#x, %s",
		      status, err);
	ck_assert_msg(strstr(err, "perfconv: out of memory allocating") != NULL, "said: %s", err);
#if !defined(__SANITIZE_ADDRESS__)
	/* (the address sanitizer's allocator stops the process itself, with its words) */
	status = in_child(huge_add, err, sizeof(err));
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %#x, %s",
		      status, err);
	ck_assert_msg(strstr(err, "perfconv: out of memory allocating") != NULL, "said: %s", err);
#endif
}
END_TEST

int main(void)
{
	Suite *s = suite_create("strbuf");
	TCase *tc = tcase_create("core");

	suite_add_tcase(s, tc);
	tcase_add_test(tc, text_and_nul);
	tcase_add_test(tc, growth);
	tcase_add_test(tc, room_ahead);
	tcase_add_test(tc, allocation_failure_said);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
