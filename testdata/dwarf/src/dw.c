/* dw: a C program for --call-graph dwarf recordings (built -O2 -fomit-frame-pointer -g).
 *
 * Usage: dw [MILLISECONDS]   (default 1000)
 * main starts two threads:
 *   "dw-sort"  thread_main -> level1 -> level2 -> work_sort -> qsort -> ... -> cmp_ints
 *   "dw-rec"   thread_main -> rec_walk (recursive, depth 12) -> rec_leaf
 * and spins itself in main_spin -> main_mix.
 * Functions are noinline so that the expected stacks do not depend on inlining.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static long run_ms = 1000;
static volatile uint64_t sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

NOINLINE int cmp_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

NOINLINE void work_sort(int *v, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (int)(seed >> 8);
	}
	qsort(v, n, sizeof *v, cmp_ints);
	sink += (uint64_t)v[n / 2];
}

NOINLINE void level2(int *v, size_t n, uint32_t seed)
{
	work_sort(v, n, seed);
	sink++;
}

NOINLINE void level1(int *v, size_t n, uint32_t seed)
{
	level2(v, n, seed + 1);
	sink++;
}

NOINLINE uint64_t rec_leaf(uint64_t x)
{
	for (int i = 0; i < 2000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

NOINLINE uint64_t rec_walk(int depth, uint64_t x)
{
	if (depth == 0)
		return rec_leaf(x);
	x = rec_walk(depth - 1, x ^ (uint64_t)depth) + 1;
	sink += x;
	return x;
}

static void *thread_main(void *arg)
{
	int which = (int)(intptr_t)arg;
	double end = now_ms() + run_ms;
	uint32_t seed = 1;

	if (which == 0) {
		static int v[4096];

		pthread_setname_np(pthread_self(), "dw-sort");
		while (now_ms() < end)
			level1(v, sizeof v / sizeof *v, seed++);
	} else {
		pthread_setname_np(pthread_self(), "dw-rec");
		while (now_ms() < end)
			sink += rec_walk(12, seed++);
	}
	return NULL;
}

NOINLINE uint64_t main_mix(uint64_t x)
{
	for (int i = 0; i < 1000; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}

NOINLINE void main_spin(void)
{
	double end = now_ms() + run_ms;
	uint64_t x = 88172645463325252ull;

	while (now_ms() < end)
		x = main_mix(x);
	sink += x;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc > 1)
		run_ms = atol(argv[1]);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i);
	main_spin();
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%llu\n", (unsigned long long)(sink & 1));
	return 0;
}
