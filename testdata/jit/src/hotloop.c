/* hotloop: the C program that lli-14 runs under MCJIT for the JIT recording. */
#include <stdio.h>
#include <stdlib.h>

static __attribute__((noinline)) unsigned collatz_steps(unsigned long n)
{
	unsigned steps = 0;

	while (n != 1) {
		if (n % 2 == 0)
			n /= 2;
		else
			n = 3 * n + 1;
		steps++;
	}
	return steps;
}

int main(int argc, char **argv)
{
	unsigned long limit = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	unsigned long best = 0, total = 0;

	for (unsigned long i = 1; i < limit; i++) {
		unsigned s = collatz_steps(i);

		total += s;
		if (s > best)
			best = s;
	}
	printf("%lu %lu\n", best, total);
	return 0;
}
