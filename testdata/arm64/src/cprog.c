/* cprog: a C program for testdata/arm64 (see ../README.md): recursion, a callback under
 * libc's qsort, calls through a function pointer, leaf functions that keep their return
 * address in x30, built -O2 -fomit-frame-pointer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long leaf_mix(unsigned long x)
{
	/* a leaf: no frame, the return address stays in x30 */
	return (x ^ (x >> 7)) * 0x9e3779b97f4a7c15UL;
}

__attribute__((noinline)) int cmp_u64(const void *a, const void *b)
{
	unsigned long x = leaf_mix(*(const unsigned long *)a), y = leaf_mix(*(const unsigned long *)b);

	return x < y ? -1 : x > y;
}

__attribute__((noinline)) void sort_some(unsigned long *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
}

__attribute__((noinline)) unsigned long rec_walk(int depth, unsigned long acc)
{
	char buf[48];

	if (depth == 0) {
		memset(buf, (int)acc, sizeof(buf));
		return leaf_mix(acc + (unsigned long)buf[3]);
	}
	snprintf(buf, sizeof(buf), "%d", depth);
	return rec_walk(depth - 1, acc * 31 + (unsigned long)strlen(buf)) + 1;
}

typedef unsigned long (*stage_fn)(unsigned long);

__attribute__((noinline)) unsigned long stage_a(unsigned long x)
{
	return rec_walk((int)(x % 9) + 3, x);
}

__attribute__((noinline)) unsigned long stage_b(unsigned long x)
{
	unsigned long v[40];

	for (int i = 0; i < 40; i++)
		v[i] = x * (unsigned long)(i + 1);
	sort_some(v, 40);
	return v[7];
}

__attribute__((noinline)) unsigned long run_stages(const stage_fn *fns, int n, unsigned long x)
{
	for (int i = 0; i < n; i++)
		x += fns[i](x);
	return x;
}

int main(int argc, char **argv)
{
	static const stage_fn fns[] = { stage_a, stage_b, stage_a };
	int rounds = argc > 1 ? atoi(argv[1]) : 20;

	for (int r = 0; r < rounds; r++)
		sink += run_stages(fns, 3, (unsigned long)r);
	printf("%lu\n", sink);
	return 0;
}
