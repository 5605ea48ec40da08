/* kheavy: kernel-heavy test program for perfconv recordings. */
/*
 * Usage: kheavy [MILLISECONDS]   (default 1000)
 *
 * Spends most of its time in system calls, each reached through a named
 * user-space function:
 *   main -> kheavy_loop -> do_zero_reads   (read /dev/zero)
 *                       -> do_null_writes  (write /dev/null)
 *                       -> do_getppid      (getppid via syscall())
 *                       -> do_mmap_touch   (mmap, touch every page, munmap)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define BUFSZ (64 * 1024)
#define MAPSZ (1024 * 1024)

static char buf[BUFSZ];
static volatile uint64_t sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

NOINLINE void do_zero_reads(int fd)
{
	for (int i = 0; i < 16; i++)
		if (read(fd, buf, BUFSZ) < 0)
			abort();
}

NOINLINE void do_null_writes(int fd)
{
	for (int i = 0; i < 64; i++)
		if (write(fd, buf, BUFSZ) < 0)
			abort();
}

NOINLINE void do_getppid(void)
{
	for (int i = 0; i < 2000; i++)
		sink += (uint64_t)syscall(SYS_getppid);
}

NOINLINE void do_mmap_touch(void)
{
	char *p = mmap(NULL, MAPSZ, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	for (size_t off = 0; off < MAPSZ; off += 4096)
		p[off] = (char)off;
	sink += (uint64_t)p[4096];
	munmap(p, MAPSZ);
}

NOINLINE void kheavy_loop(double end)
{
	int zfd = open("/dev/zero", O_RDONLY);
	int nfd = open("/dev/null", O_WRONLY);

	if (zfd < 0 || nfd < 0) {
		perror("kheavy: open");
		exit(1);
	}
	while (now_ms() < end) {
		do_zero_reads(zfd);
		do_null_writes(nfd);
		do_getppid();
		do_mmap_touch();
	}
	close(zfd);
	close(nfd);
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;

	if (ms <= 0) {
		fprintf(stderr, "usage: kheavy [MILLISECONDS]\n");
		return 2;
	}
	kheavy_loop(now_ms() + (double)ms);
	return 0;
}
