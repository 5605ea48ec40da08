/*
 * pagecost: what this machine charges for the first write to a page of fresh memory,
 * the cost that decides a first (cold) run here more than anything perfconv does
 * (bench/README.md, 2026-12-02 afternoon: 1-2 us a 4 KB page on one VM, 12-16 us on
 * another). `pagecost MODE` writes one byte into each 4 KB page of 8 MB just
 * malloc'd, in a new process each time, and prints the microseconds a page:
 *	0 plain, 1 MADV_HUGEPAGE, 2 MADV_POPULATE_WRITE first, 3 both (xmalloc_written's)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	const size_t n = (size_t)8 << 20, huge = (size_t)2 << 20, page = 4096;
	int mode = argc > 1 ? atoi(argv[1]) : 0;
	volatile char *p;
	uintptr_t lo, hi;
	double t0, t1;
	size_t i;

	p = malloc(n);
	if (!p)
		return 1;
	lo = ((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1);
	hi = ((uintptr_t)p + n) & ~(uintptr_t)(huge - 1);
	t0 = now_us();
	if ((mode & 1) && hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	if (mode & 2)
		madvise((void *)(((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1)), n - page,
			MADV_POPULATE_WRITE);
	for (i = 0; i < n; i += page)
		p[i] = 1;
	t1 = now_us();
	printf("%.2f\n", (t1 - t0) / (double)(n / page));
	return 0;
}
