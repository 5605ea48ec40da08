/* fuzz_runtimeids: libFuzzer target for the watcher's .perfconv-runtime-ids, read back
 * at its start (upload/runtimeid.c): any bytes in the file, then runs taken and the
 * file written and read again. */
#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "upload/runtimeid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fuzz_sink;

static char dir[] = "/tmp/fuzz_runtimeids.XXXXXX";
static int dfd = -1;

/* the folder and what the runs left in it go at exit: a run a day otherwise leaves a
 * folder a day in /tmp */
static void remove_dir(void)
{
	DIR *d = fdopendir(dup(dfd));
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dfd, e->d_name, 0);
		closedir(d);
	}
	close(dfd);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char id[RUNTIME_ID_LEN + 1];
	struct runtime_ids r;
	int64_t seq, off;
	int fd;

	if (dfd < 0) {
		if (!mkdtemp(dir))
			abort();
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			abort();
		atexit(remove_dir);
	}
	unlinkat(dfd, ".perfconv-runtime-ids", 0);
	fd = openat(dfd, ".perfconv-runtime-ids", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	runtime_ids_init(&r, dfd);
	if (r.n > RUNTIME_RUNS)
		abort();
	for (unsigned i = 0; i < r.n; i++)
		if (!runtime_id_valid(r.runs[i].id) || r.runs[i].next_seq < 0)
			abort();
	for (uint64_t run = 1; run < 4; run++) {
		runtime_ids_take(&r, run * 7, (int64_t)run, id, &seq);
		fuzz_sink += (uint64_t)seq + (uint64_t)runtime_ids_offset(&r, run * 7, &off);
	}
	runtime_ids_init(&r, dfd);
	fuzz_sink += r.n;
	return 0;
}
