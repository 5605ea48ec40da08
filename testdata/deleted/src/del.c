/* del: a program that removes its own binary while it runs, as a package upgrade or a
 * container's cleanup does, then keeps working in a few functions of its own.
 *
 *   del [ITERATIONS]    (record.sh attaches perf to it once it has said "ready")
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void leaf_mix(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += (i * i) ^ (i >> 3);
}

__attribute__((noinline)) static void leaf_sum(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i + (sink >> 7);
}

__attribute__((noinline)) static void after_unlink(unsigned long rounds)
{
	for (unsigned long r = 0; r < rounds; r++) {
		leaf_mix(200000);
		if (r % 3 == 0)
			leaf_sum(100000);
	}
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 4000;

	if (unlink(argv[0]) != 0) {
		perror(argv[0]);
		return 1;
	}
	/* the binary is gone: /proc/self/maps now names it "... (deleted)" */
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	after_unlink(rounds);
	return 0;
}
