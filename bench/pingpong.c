/* pingpong: two threads hand a byte back and forth over pipes, N times: about 4N
 * context switches, for bench/offcpu.sh. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int ab[2], ba[2];
static long rounds;

static void *pong(void *arg)
{
	char c;

	(void)arg;
	for (long i = 0; i < rounds; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char c = 'x';

	rounds = argc > 1 ? atol(argv[1]) : 250000;
	if (pipe(ab) || pipe(ba))
		return 1;
	pthread_create(&t, NULL, pong, NULL);
	for (long i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			break;
	pthread_join(t, NULL);
	return 0;
}
