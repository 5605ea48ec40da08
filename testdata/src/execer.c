/* execer: fork + exec test program for perfconv recordings. */
/*
 * Usage: execer [MILLISECONDS]   (default 1000)
 *
 * Forks. The child runs child_before_exec for a third of the time, then
 * execs ./mt (the mt binary in the same directory as execer) for the rest,
 * giving a FORK, a COMM with the exec bit, and a new set of mappings in one
 * process. The parent runs parent_work for the whole time, then waits.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

NOINLINE uint64_t spin_step(uint64_t v)
{
	volatile uint64_t frame[2];	/* a stack frame, so callers unwind */

	for (int i = 0; i < 5000; i++)
		v = (v ^ (v >> 7)) * 0x9e3779b97f4a7c15ULL + (uint64_t)i;
	frame[v & 1] = v;
	return v + frame[0];
}

NOINLINE void child_before_exec(double end)
{
	uint64_t v = 11;

	while (now_ms() < end)
		v = spin_step(v);
	sink += v;
}

NOINLINE void parent_work(double end)
{
	uint64_t v = 13;

	while (now_ms() < end)
		v = spin_step(v);
	sink += v;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	double start = now_ms();
	char self[PATH_MAX], mt[PATH_MAX + 8], msarg[32];
	ssize_t n;
	pid_t pid;
	int status;

	if (ms <= 0) {
		fprintf(stderr, "usage: execer [MILLISECONDS]\n");
		return 2;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		perror("execer: readlink");
		return 1;
	}
	self[n] = '\0';
	if (strrchr(self, '/'))
		*strrchr(self, '/') = '\0';
	snprintf(mt, sizeof(mt), "%s/mt", self);
	snprintf(msarg, sizeof(msarg), "%ld", ms - ms / 3);

	pid = fork();
	if (pid < 0) {
		perror("execer: fork");
		return 1;
	}
	if (pid == 0) {
		child_before_exec(start + (double)(ms / 3));
		execl(mt, "mt", msarg, (char *)NULL);
		perror("execer: exec mt");
		_exit(127);
	}
	parent_work(start + (double)ms);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "execer: child failed\n");
		return 1;
	}
	return 0;
}
