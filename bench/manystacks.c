/* manystacks: a program whose samples hold about 100,000 distinct stacks, for the
 * SVG flame graph benchmark (bench/svg.sh). Each round walks a path of DEPTH calls,
 * each through one of two functions chosen by a bit of the round number: 2^DEPTH
 * distinct call paths, each ending in the same small amount of work. */
#include <stdio.h>
#include <stdlib.h>

#define DEPTH 17

static volatile unsigned long sink;

static void walk_a(unsigned long path, int depth);
static void walk_b(unsigned long path, int depth);

static __attribute__((noinline)) void work(unsigned long path)
{
	for (unsigned long i = 0; i < 2000; i++)
		sink += i ^ path;
}

static __attribute__((noinline)) void walk_a(unsigned long path, int depth)
{
	if (depth == DEPTH)
		work(path);
	else if (path >> depth & 1)
		walk_b(path, depth + 1);
	else
		walk_a(path, depth + 1);
	sink++;
}

static __attribute__((noinline)) void walk_b(unsigned long path, int depth)
{
	if (depth == DEPTH)
		work(path);
	else if (path >> depth & 1)
		walk_b(path, depth + 1);
	else
		walk_a(path, depth + 1);
	sink++;
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 4000000;

	for (unsigned long r = 0; r < rounds; r++)
		walk_a(r * 2654435761u % (1ul << DEPTH), 0);
	printf("%lu\n", sink);
	return 0;
}
