/* runstat: run a command and say what it cost: wall time, peak RSS and CPU time.
 *
 *   runstat OUT COMMAND [ARG...]
 *
 * Writes one line to OUT: the wall nanoseconds from fork to the child's end, the
 * child's peak RSS in KiB and its user + system CPU time in microseconds (from
 * wait4: microsecond resolution, where GNU time prints hundredths). The command's
 * output goes where runstat's goes. Exits with the command's status (1 if it did not
 * run or died of a signal), so a failed command fails the bench.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: runstat OUT COMMAND [ARG...]\n");
		return 2;
	}
	FILE *out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	long long t0 = now_ns();
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("wait4");
		return 1;
	}
	long long t1 = now_ns();
	long long cpu_us = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL +
			   ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
	fprintf(out, "%lld %ld %lld\n", t1 - t0, ru.ru_maxrss, cpu_us);
	if (fclose(out) != 0) {
		perror(argv[1]);
		return 1;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 1;
}
