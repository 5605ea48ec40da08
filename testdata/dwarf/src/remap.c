/* remap: runs spin_a from ./liba.so, closes it, then spin_b from ./libb.so, which the
 * loader maps where liba.so was. The two have the same code at the same offsets and
 * different CFI: a --call-graph dwarf unwinder that kept a pc's module across the
 * remapping unwinds libb.so's frames by liba.so's rules. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*spin_fn)(long);

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static __attribute__((noinline)) void run(const char *lib, const char *fn, int ms)
{
	void *h = dlopen(lib, RTLD_NOW);
	spin_fn f;
	double end = now() + ms / 1000.0;

	if (!h) {
		fprintf(stderr, "remap: %s\n", dlerror());
		exit(1);
	}
	*(void **)&f = dlsym(h, fn);
	while (now() < end)
		f(100000);
	dlclose(h);
}

int main(int argc, char **argv)
{
	int ms = argc > 1 ? atoi(argv[1]) : 300;

	run("./liba.so", "spin_a", ms);
	run("./libb.so", "spin_b", ms);
	return 0;
}
