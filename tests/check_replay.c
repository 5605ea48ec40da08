/* check_replay: time-correct process state, whatever the order of records. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "convert/replay.h"
#include "tests/testutil.h"

static struct strtab strings;
static struct replay *r;

static void setup(void)
{
	strtab_init(&strings);
	r = replay_new(&strings);
}

static void teardown(void)
{
	replay_free(r);
	strtab_release(&strings);
}

static const char *dso_path(const struct replay_map *m)
{
	return m ? strtab_str(&strings, replay_dso_get(r, m->dso)->path) : "(none)";
}

START_TEST(reused_range_resolves_by_time)
{
	uint32_t a = replay_dso(r, "/usr/lib/liba.so", NULL, 0, 0);
	uint32_t b = replay_dso(r, "/usr/lib/libb.so", NULL, 0, 0);

	/* written out of time order, as perf does across CPUs */
	replay_mmap(r, 200, 10, 0x1000, 0x1000, 0, b);
	replay_mmap(r, 100, 10, 0x1000, 0x1000, 0, a);
	replay_finish(r);
	ck_assert_str_eq(dso_path(replay_find(r, 10, 150, 0x1800)), "/usr/lib/liba.so");
	ck_assert_str_eq(dso_path(replay_find(r, 10, 250, 0x1800)), "/usr/lib/libb.so");
	ck_assert_ptr_null(replay_find(r, 10, 50, 0x1800));
	ck_assert_ptr_null(replay_find(r, 10, 250, 0x2000)); /* end is exclusive */
}
END_TEST

/* The chain cache in pipeline.c trusts the epoch: equal only while the maps are. */
static uint64_t epoch(uint32_t pid, uint64_t time)
{
	struct replay_span span;
	uint64_t e = replay_epoch(r, pid, time, &span);

	/* the span holds `time`, and the epoch is the same at both its ends */
	ck_assert(span.from <= time && time < span.until);
	if (span.until != REPLAY_FOREVER)
		ck_assert_uint_eq(replay_epoch(r, pid, span.until - 1, &span), e);
	return e;
}

START_TEST(epoch_changes_with_the_mappings)
{
	uint32_t a = replay_dso(r, "/usr/lib/liba.so", NULL, 0, 0);
	uint32_t b = replay_dso(r, "/usr/lib/libb.so", NULL, 0, 0);
	uint32_t sh = replay_dso(r, "/bin/sh", NULL, 0, 0);
	struct replay_span span;

	replay_mmap(r, 200, 10, 0x1000, 0x1000, 0, b);
	replay_mmap(r, 100, 10, 0x1000, 0x1000, 0, a);
	replay_mmap(r, 100, 11, 0x1000, 0x1000, 0, a);
	replay_comm(r, 300, 10, 10, "sh", 1);            /* exec: the new image maps over */
	replay_mmap(r, 310, 10, 0x1000, 0x1000, 0, sh);
	replay_fork(r, 400, 12, 1, 12, 1);               /* pid 12 is born at 400 ... */
	replay_exit(r, 450, 12, 12);
	replay_fork(r, 500, 12, 1, 12, 1);               /* ... and reused at 500 */
	replay_finish(r);
	ck_assert_uint_eq(epoch(10, 120), epoch(10, 199));
	ck_assert_uint_eq(epoch(10, 100), epoch(10, 150));
	ck_assert_uint_ne(epoch(10, 150), epoch(10, 200));
	ck_assert_uint_ne(epoch(10, 99), epoch(10, 100));
	/* another process with the same maps at the same time is another epoch */
	ck_assert_uint_ne(epoch(11, 150), epoch(10, 150));
	/* an exec keeps the old mappings until new ones cover them (a sample inside
	 * execve has the old image's user context): the epoch moves at 310, not 300 */
	ck_assert_uint_eq(epoch(10, 250), epoch(10, 305));
	ck_assert_uint_ne(epoch(10, 305), epoch(10, 320));
	ck_assert_uint_eq(epoch(10, 320), epoch(10, 100000));
	ck_assert_uint_eq(epoch(99, 150), 0);
	/* the span of an epoch runs from one change to the next */
	replay_epoch(r, 10, 150, &span);
	ck_assert_uint_eq(span.from, 100);
	ck_assert_uint_eq(span.until, 200);
	replay_epoch(r, 10, 5000, &span);
	ck_assert_uint_eq(span.from, 310);
	ck_assert_uint_eq(span.until, REPLAY_FOREVER);
	/* and ends where the next process with the pid starts */
	ck_assert_uint_ne(epoch(12, 420), epoch(12, 520));
	replay_epoch(r, 12, 420, &span);
	ck_assert_uint_eq(span.until, 500);
	replay_epoch(r, 12, 520, &span);
	ck_assert_uint_eq(span.from, 500);
}
END_TEST

START_TEST(exec_keeps_mappings_fork_copies_them)
{
	uint32_t sh = replay_dso(r, "/bin/sh", NULL, 0, 0);
	uint32_t libc = replay_dso(r, "/lib/libc.so.6", NULL, 0, 0);
	uint32_t mt = replay_dso(r, "/opt/mt", NULL, 0, 0);

	replay_mmap(r, 10, 5, 0x400000, 0x1000, 0, sh);
	replay_mmap(r, 10, 5, 0x7f0000000000, 0x100000, 0, libc);
	replay_fork(r, 20, 6, 5, 6, 5);
	replay_mmap(r, 25, 5, 0x500000, 0x1000, 0, sh); /* parent maps after the fork */
	replay_comm(r, 30, 6, 6, "mt", 1);               /* child execs */
	replay_mmap(r, 31, 6, 0x400000, 0x1000, 0, mt);  /* the new image over the old */
	replay_finish(r);
	/* the child has the parent's mappings between fork and exec */
	ck_assert_str_eq(dso_path(replay_find(r, 6, 22, 0x7f0000000100)), "/lib/libc.so.6");
	ck_assert_str_eq(dso_path(replay_find(r, 6, 22, 0x400010)), "/bin/sh");
	/* but not those the parent made after the fork */
	ck_assert_ptr_null(replay_find(r, 6, 26, 0x500010));
	/* after exec, the new image where it maps; the old one elsewhere, as perf keeps it:
	 * a sample still inside execve is in the old libc's execve */
	ck_assert_str_eq(dso_path(replay_find(r, 6, 32, 0x400010)), "/opt/mt");
	ck_assert_str_eq(dso_path(replay_find(r, 6, 30, 0x7f0000000100)), "/lib/libc.so.6");
	ck_assert_str_eq(dso_path(replay_find(r, 6, 32, 0x7f0000000100)), "/lib/libc.so.6");
	/* the parent is untouched by the child's exec */
	ck_assert_str_eq(dso_path(replay_find(r, 5, 40, 0x7f0000000100)), "/lib/libc.so.6");
}
END_TEST

START_TEST(threads_share_and_names_change_over_time)
{
	uint32_t mt = replay_dso(r, "/opt/mt", NULL, 0, 0);

	replay_comm(r, 5, 7, 7, "mt", 1);
	replay_mmap(r, 6, 7, 0x1000, 0x1000, 0, mt);
	replay_fork(r, 10, 7, 7, 8, 7);           /* a thread: shares the process */
	replay_comm(r, 20, 7, 8, "worker", 0);
	replay_comm(r, 40, 7, 8, "worker2", 0);
	replay_finish(r);
	ck_assert_str_eq(strtab_str(&strings, replay_thread_name(r, 7, 8, 15)), "mt");
	ck_assert_str_eq(strtab_str(&strings, replay_thread_name(r, 7, 8, 25)), "worker");
	ck_assert_str_eq(strtab_str(&strings, replay_thread_name(r, 7, 8, 40)), "worker2");
	ck_assert_str_eq(strtab_str(&strings, replay_thread_name(r, 7, 7, 40)), "mt");
	ck_assert_str_eq(strtab_str(&strings, replay_thread_name(r, 7, 99, 40)), ":99");
	ck_assert_str_eq(dso_path(replay_find(r, 7, 30, 0x1100)), "/opt/mt");
}
END_TEST

/* A thread's last name counts names given after a time, not a later thread's. */
START_TEST(last_name_is_the_threads_own)
{
	replay_comm(r, 5, 7, 7, "mt", 1);
	replay_fork(r, 10, 7, 7, 8, 7);           /* thread 8 begins as "mt" */
	replay_comm(r, 20, 7, 8, "worker", 0);    /* its only sample is at 15 */
	replay_comm(r, 30, 7, 8, "worker2", 0);
	replay_fork(r, 50, 7, 7, 8, 7);           /* tid 8 reused by a new thread */
	replay_comm(r, 60, 7, 8, "other", 0);
	replay_finish(r);
	ck_assert_str_eq(strtab_str(&strings, replay_thread_name(r, 7, 8, 15)), "mt");
	ck_assert_str_eq(strtab_str(&strings, replay_thread_last_name(r, 7, 8, 15)), "worker2");
	ck_assert_str_eq(strtab_str(&strings, replay_thread_last_name(r, 7, 8, 55)), "other");
	ck_assert_str_eq(strtab_str(&strings, replay_thread_last_name(r, 7, 7, 15)), "mt");
	ck_assert_str_eq(strtab_str(&strings, replay_thread_last_name(r, 7, 99, 15)), ":99");
}
END_TEST

START_TEST(pid_reuse_gets_a_new_process)
{
	uint32_t a = replay_dso(r, "/a", NULL, 0, 0), b = replay_dso(r, "/b", NULL, 0, 0);

	replay_mmap(r, 1, 9, 0x1000, 0x1000, 0, a);
	replay_exit(r, 50, 9, 9);
	replay_fork(r, 60, 9, 1, 9, 1);
	replay_comm(r, 61, 9, 9, "b", 1);
	replay_mmap(r, 62, 9, 0x1000, 0x1000, 0, b);
	replay_finish(r);
	ck_assert_str_eq(dso_path(replay_find(r, 9, 10, 0x1000)), "/a");
	ck_assert_str_eq(dso_path(replay_find(r, 9, 70, 0x1000)), "/b");
}
END_TEST

START_TEST(same_dso_same_id)
{
	uint8_t id1[20] = { 1 }, id2[20] = { 2 };

	ck_assert_uint_eq(replay_dso(r, "/x", id1, 20, 0), replay_dso(r, "/x", id1, 20, 0));
	ck_assert_uint_ne(replay_dso(r, "/x", id1, 20, 0), replay_dso(r, "/x", id2, 20, 0));
	ck_assert_uint_ne(replay_dso(r, "/x", NULL, 0, 0), replay_dso(r, "/y", NULL, 0, 0));
}
END_TEST

/* Maps at one start: the latest mapped by the time asked for that holds the address
 * then wins, an unmapped later one gives way to an older one still live, and a
 * longer older one holds the addresses past a shorter later one's end. */
START_TEST(one_start_latest_live_wins)
{
	uint32_t a = replay_dso(r, "/a", NULL, 0, 0);
	uint32_t b = replay_dso(r, "/b", NULL, 0, 0);
	uint32_t c = replay_dso(r, "/c", NULL, 0, 0);

	replay_mmap(r, 30, 7, 0x1000, 0x1000, 0, c); /* file order is not time order */
	replay_mmap(r, 10, 7, 0x1000, 0x4000, 0, a);
	replay_mmap(r, 20, 7, 0x1000, 0x1000, 0, b);
	replay_munmap(r, 40, 7, 0x1000);
	replay_finish(r);
	ck_assert_ptr_null(replay_find(r, 7, 5, 0x1800));
	ck_assert_str_eq(dso_path(replay_find(r, 7, 15, 0x1800)), "/a");
	ck_assert_str_eq(dso_path(replay_find(r, 7, 25, 0x1800)), "/b");
	ck_assert_str_eq(dso_path(replay_find(r, 7, 35, 0x1800)), "/c");
	ck_assert_str_eq(dso_path(replay_find(r, 7, 35, 0x2800)), "/a");
	/* the unmap at 40 ends every mapping starting there */
	ck_assert_ptr_null(replay_find(r, 7, 45, 0x1800));
}
END_TEST

/* Issue 12 B3: 200,000 KSYMBOL register/unregister pairs (each unregister scanned every
 * mapping of the process: quadratic, seconds); within the case's 5 s. */
START_TEST(many_unmaps_linear)
{
	uint32_t a = replay_dso(r, "[bpf_prog]", NULL, 0, 0);
	const uint64_t n = 200000;

	for (uint64_t i = 0; i < n; i++) {
		replay_mmap(r, 10 * i + 1, 7, 0xffffffffa0000000 + 0x100 * i, 0x80, 0, a);
		replay_munmap(r, 10 * i + 5, 7, 0xffffffffa0000000 + 0x100 * i);
	}
	replay_mmap(r, 10 * n + 1, 7, 0xffffffffa0000000, 0x80, 0, a);
	replay_finish(r);
	ck_assert_str_eq(dso_path(replay_find(r, 7, 10 * 777 + 3, 0xffffffffa0000000 + 0x100 * 777)),
			 "[bpf_prog]");
	ck_assert_ptr_null(replay_find(r, 7, 10 * 777 + 6, 0xffffffffa0000000 + 0x100 * 777));
	ck_assert_ptr_null(replay_find(r, 7, 10 * n, 0xffffffffa0000000));
	ck_assert_str_eq(dso_path(replay_find(r, 7, 10 * n + 2, 0xffffffffa0000000)), "[bpf_prog]");
}
END_TEST

/* One pass: replayed up to a horizon, the answers up to it are the finished replay's,
 * the maps keep their ids while they move, and what could change an answer given
 * (a late event, a process or a name told of too late) makes the replay inexact. */
START_TEST(advance_answers_as_finished)
{
	uint32_t a = replay_dso(r, "/usr/lib/liba.so", NULL, 0, 0);
	uint32_t b = replay_dso(r, "/usr/lib/libb.so", NULL, 0, 0);
	const struct replay_map *m;
	struct replay_span span;
	uint64_t e150;
	uint32_t id;

	replay_comm(r, 10, 10, 10, "main", 0);
	replay_mmap(r, 100, 10, 0x1000, 0x1000, 0, a);
	replay_mmap(r, 300, 10, 0x1000, 0x1000, 0, b); /* beyond the horizon: pending */
	replay_advance(r, 200);
	m = replay_find(r, 10, 150, 0x1800);
	ck_assert_str_eq(dso_path(m), "/usr/lib/liba.so");
	id = m->id;
	e150 = replay_epoch(r, 10, 150, &span);
	ck_assert_str_eq(strtab_str(&strings, replay_thread_name(r, 10, 10, 150)), "main");
	replay_mmap(r, 250, 10, 0x8000, 0x1000, 0, b); /* after the horizon: fine */
	replay_advance(r, 260);
	ck_assert(!replay_inexact(r));
	replay_finish(r);
	ck_assert(!replay_inexact(r));
	m = replay_find(r, 10, 150, 0x1800);
	ck_assert_uint_eq(m->id, id);
	ck_assert_uint_eq(replay_epoch(r, 10, 150, &span), e150);
	ck_assert_str_eq(dso_path(replay_find(r, 10, 350, 0x1800)), "/usr/lib/libb.so");
	ck_assert_str_eq(dso_path(replay_find(r, 10, 350, 0x8800)), "/usr/lib/libb.so");
}
END_TEST

START_TEST(advance_late_event_is_inexact)
{
	uint32_t a = replay_dso(r, "/usr/lib/liba.so", NULL, 0, 0);

	replay_mmap(r, 100, 10, 0x1000, 0x1000, 0, a);
	replay_advance(r, 200);
	ck_assert(!replay_inexact(r));
	replay_mmap(r, 200, 10, 0x4000, 0x1000, 0, a); /* at the horizon: too late */
	ck_assert(replay_inexact(r));
}
END_TEST

START_TEST(advance_unknown_process_or_name_is_inexact)
{
	replay_advance(r, 200);
	ck_assert_ptr_null(replay_proc_at(r, 20, 150));
	replay_asked(r, 20);
	(void)replay_thread_name(r, 30, 30, 150); /* ":30" */
	replay_comm(r, 300, 40, 40, "other", 0);
	replay_advance(r, 400);
	ck_assert(!replay_inexact(r));
	replay_comm(r, 500, 30, 30, "named", 0); /* the thread told ":30" gets a name */
	replay_advance(r, 600);
	ck_assert(replay_inexact(r));
}
END_TEST

START_TEST(advance_process_after_asked_is_inexact)
{
	replay_advance(r, 200);
	replay_asked(r, 20);
	replay_mmap(r, 300, 20, 0x1000, 0x1000, 0, replay_dso(r, "/x", NULL, 0, 0));
	ck_assert(!replay_inexact(r)); /* pending: not yet */
	replay_finish(r);
	ck_assert(replay_inexact(r)); /* process 20 exists (from time 0): asked too early */
}
END_TEST

/*
 * Releasing processes in pass 2 (replay_note, replay_release): a recording as its
 * records come in the file, each with its index (its place, from 1). Pass 1 replays
 * them and notes each sample; pass 2 goes through them again in file order, releasing
 * before each record what no record from it on asks for, and each sample must find
 * the object it names (NULL: none). Times are not in file order: perf writes each
 * CPU's buffer in turn, so a record may come after a later one of another CPU.
 */
struct wrec {
	char kind;            /* 'f' fork, 'm' mmap, 'e' exit, 's' sample */
	uint32_t pid, tid;
	uint64_t time;
	uint32_t ppid;        /* fork: the parent (ptid the same) */
	const char *path;     /* mmap: the object mapped at 0x1000; sample: the one found */
};

/* Pass 1 and pass 2 over w[0..n); how many processes were released on the way (those
 * released at the end not counted). */
static size_t replay_twice(const struct wrec *w, size_t n)
{
	size_t released = 0;

	for (size_t i = 0; i < n; i++) {
		const struct wrec *x = &w[i];

		switch (x->kind) {
		case 'f':
			replay_fork(r, x->time, x->pid, x->ppid, x->tid, x->ppid);
			break;
		case 'm':
			replay_mmap(r, x->time, x->pid, 0x1000, 0x1000, 0,
				    replay_dso(r, x->path, NULL, 0, 0));
			break;
		case 'e':
			replay_exit(r, x->time, x->pid, x->tid);
			break;
		default:
			replay_note(r, x->pid, x->time, i + 1);
			break;
		}
	}
	replay_finish(r);
	for (size_t i = 0; i < n; i++) {
		const struct wrec *x = &w[i];

		released += replay_release(r, i + 1) != 0;
		if (x->kind == 's')
			ck_assert_msg(strcmp(dso_path(replay_find(r, x->pid, x->time, 0x1800)),
					     x->path ? x->path : "(none)") == 0,
				      "record %zu (pid %u at %llu): %s, not %s", i + 1, x->pid,
				      (unsigned long long)x->time,
				      dso_path(replay_find(r, x->pid, x->time, 0x1800)),
				      x->path ? x->path : "(none)");
	}
	ck_assert_uint_eq(replay_late(r), 0);
	return released;
}

/* pid 100 runs /a, exits, and a new process takes the pid: a sample of the old one
 * written after the new one's fork (from another CPU's buffer) still finds /a, and
 * the new one's sample written before its fork finds /b. */
START_TEST(release_pid_reused_after_exit)
{
	static const struct wrec w[] = {
		{ 'f', 100, 100, 10, 1, NULL },
		{ 'm', 100, 100, 11, 0, "/a" },
		{ 's', 100, 100, 20, 0, "/a" },
		{ 'e', 100, 100, 30, 0, NULL },
		{ 's', 100, 100, 45, 0, "/b" },    /* the new process's, before its fork */
		{ 'f', 100, 100, 40, 1, NULL },
		{ 'm', 100, 100, 41, 0, "/b" },
		{ 's', 100, 100, 25, 0, "/a" },    /* the old one's, late */
		{ 's', 1, 1, 60, 0, NULL },
		{ 's', 1, 1, 61, 0, NULL },
	};

	/* the two processes of pid 100 go once their last samples are read (and pid 1,
	 * which has none), before the end */
	ck_assert_uint_ge(replay_twice(w, sizeof(w) / sizeof(w[0])), 2);
}
END_TEST

/* A sample within the reorder window after its process's EXIT: written after the
 * exit record, at a time before it, or after it (the exit's own last moments). */
START_TEST(release_sample_after_exit_record)
{
	static const struct wrec w[] = {
		{ 'f', 200, 200, 10, 1, NULL },
		{ 'm', 200, 200, 11, 0, "/a" },
		{ 'e', 200, 200, 30, 0, NULL },
		{ 's', 300, 300, 31, 0, NULL },
		{ 's', 200, 200, 28, 0, "/a" },
		{ 's', 300, 300, 32, 0, NULL },
		{ 's', 200, 200, 33, 0, "/a" },
		{ 's', 300, 300, 34, 0, NULL },
	};

	ck_assert_uint_ge(replay_twice(w, sizeof(w) / sizeof(w[0])), 1);
}
END_TEST

/* The main thread of process 300 exits; its other thread runs on, its samples (pid
 * 300, tid 301) still the process's. */
START_TEST(release_threads_of_exited_main_thread)
{
	static const struct wrec w[] = {
		{ 'f', 300, 300, 10, 1, NULL },
		{ 'm', 300, 300, 11, 0, "/a" },
		{ 'f', 300, 301, 12, 300, NULL },
		{ 's', 300, 300, 20, 0, "/a" },
		{ 'e', 300, 300, 30, 0, NULL },
		{ 's', 300, 301, 40, 0, "/a" },
		{ 's', 9, 9, 41, 0, NULL },
		{ 's', 300, 301, 50, 0, "/a" },
		{ 'e', 300, 301, 60, 0, NULL },
		{ 's', 9, 9, 61, 0, NULL },
		{ 's', 9, 9, 62, 0, NULL },
	};

	ck_assert_uint_ge(replay_twice(w, sizeof(w) / sizeof(w[0])), 1);
}
END_TEST

/* A child forked before its parent exits runs the parent's mappings after the
 * parent is gone; its first sample is timed before its FORK record (which perf
 * writes at the end of the fork, the child already running on another CPU) and
 * read after the parent's every record. */
START_TEST(release_fork_child_of_exited_parent)
{
	static const struct wrec w[] = {
		{ 'f', 400, 400, 10, 1, NULL },
		{ 'm', 400, 400, 11, 0, "/a" },
		{ 's', 400, 400, 15, 0, "/a" },
		{ 'f', 401, 401, 20, 400, NULL },
		{ 'e', 400, 400, 30, 0, NULL },
		{ 's', 9, 9, 31, 0, NULL },
		{ 's', 401, 401, 19, 0, "/a" },
		{ 's', 9, 9, 51, 0, NULL },
		{ 's', 9, 9, 52, 0, NULL },
	};

	/* the parent, then the child */
	ck_assert_uint_ge(replay_twice(w, sizeof(w) / sizeof(w[0])), 2);
}
END_TEST

/* A record whose pid cannot be read keeps every process to the end. */
START_TEST(release_nothing_when_a_record_is_unknown)
{
	static const struct wrec w[] = {
		{ 'f', 500, 500, 10, 1, NULL },
		{ 'm', 500, 500, 11, 0, "/a" },
		{ 's', 500, 500, 20, 0, "/a" },
		{ 's', 9, 9, 31, 0, NULL },
	};

	replay_note_unknown(r);
	ck_assert_uint_eq(replay_twice(w, sizeof(w) / sizeof(w[0])), 0);
}
END_TEST

/* After pass 2 the processes go; the objects and the threads' names stay. */
START_TEST(forget_processes_keeps_names)
{
	uint32_t a = replay_dso(r, "/a", NULL, 0, 0);

	replay_fork(r, 10, 600, 1, 600, 1);
	replay_comm(r, 11, 600, 600, "worker", 0);
	replay_mmap(r, 12, 600, 0x1000, 0x1000, 0, a);
	replay_finish(r);
	ck_assert_str_eq(dso_path(replay_find(r, 600, 20, 0x1800)), "/a");
	ck_assert_uint_gt(replay_forget_processes(r), 0);
	ck_assert_ptr_null(replay_proc_at(r, 600, 20));
	ck_assert_str_eq(strtab_str(&strings, replay_thread_last_name(r, 600, 600, 20)), "worker");
	ck_assert_str_eq(strtab_str(&strings, replay_dso_get(r, a)->path), "/a");
}
END_TEST

/* A pid's forks written in reverse time order would move its list of processes once
 * each (quadratic): past a bound nothing is released instead, and the answers hold. */
START_TEST(release_reverse_forks_bounded)
{
	uint32_t a = replay_dso(r, "/a", NULL, 0, 0);
	const uint64_t n = 200000;

	replay_mmap(r, 1, 1, 0x1000, 0x1000, 0, a);
	for (uint64_t i = 0; i < n; i++) {
		replay_fork(r, 10 * (n - i), 700, 1, 700, 1);
		replay_note(r, 700, 10 * (n - i) + 5, i + 2);
	}
	replay_finish(r);
	ck_assert_uint_eq(replay_release(r, n + 2), 0);
	ck_assert_str_eq(dso_path(replay_find(r, 700, 10 * n + 5, 0x1800)), "/a");
	ck_assert_str_eq(dso_path(replay_find(r, 700, 15, 0x1800)), "/a");
	ck_assert_uint_eq(replay_late(r), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("core");
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, reused_range_resolves_by_time);
	tcase_add_test(tc, epoch_changes_with_the_mappings);
	tcase_add_test(tc, exec_keeps_mappings_fork_copies_them);
	tcase_add_test(tc, threads_share_and_names_change_over_time);
	tcase_add_test(tc, pid_reuse_gets_a_new_process);
	tcase_add_test(tc, last_name_is_the_threads_own);
	tcase_add_test(tc, same_dso_same_id);
	tcase_add_test(tc, one_start_latest_live_wins);
	tcase_add_test(tc, advance_answers_as_finished);
	tcase_add_test(tc, advance_late_event_is_inexact);
	tcase_add_test(tc, advance_unknown_process_or_name_is_inexact);
	tcase_add_test(tc, advance_process_after_asked_is_inexact);
	tcase_add_test(tc, release_pid_reused_after_exit);
	tcase_add_test(tc, release_sample_after_exit_record);
	tcase_add_test(tc, release_threads_of_exited_main_thread);
	tcase_add_test(tc, release_fork_child_of_exited_parent);
	tcase_add_test(tc, release_nothing_when_a_record_is_unknown);
	tcase_add_test(tc, forget_processes_keeps_names);
	suite_add_tcase(s, tc);
	tc = tcase_create("hostile");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 5);
	tcase_add_test(tc, many_unmaps_linear);
	tcase_add_test(tc, release_reverse_forks_bounded);
	suite_add_tcase(s, tc);
	failed = run_suite(s);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
