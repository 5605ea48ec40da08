/* fuzz_pipeline: libFuzzer target for the whole conversion (convert_read) of a perf.data
 * and a jitdump beside it, where the readers, the replay, the JIT code tables and the
 * stack builder meet.
 *
 * Input: u32 n (little-endian), n bytes of perf.data, then the jitdump (fuzz/pair.py
 * makes one from two files). Both are written to a private temporary directory, the
 * dump as jit-PID.dump with the pid of its header (so that the recording's MMAP of
 * that name finds it), and converted with symbols looked for nowhere else: --symfs and
 * --buildid-dir the directory, no kallsyms. The symbol cache is a directory of its own
 * for the campaign: a recording names files of this machine (the node binary: 35 MB of
 * C++ symbols), whose symbol tables would be read and demangled again for every input
 * (2 inputs a second); cached, the target runs tens a second.
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convert/pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fuzz_sink;

static char dir[4096];
static char data_path[4200], dump_path[4200], cache_dir[4200];

static int write_file(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(p, 1, n, f) == n;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

static void cleanup(void)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct session_options co;
	struct convert_stats st;
	struct profile p;
	struct diag d;
	const char *jit_dirs[1];
	uint32_t n = 0, pid = 1;
	const uint8_t *dump;
	size_t dump_len;

	if (!dir[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/perfconv-fuzz-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(dir))
			abort();
		snprintf(data_path, sizeof(data_path), "%s/perf.data", dir);
		snprintf(cache_dir, sizeof(cache_dir), "%s/cache", dir);
		atexit(cleanup);
		devnull = fopen("/dev/null", "w");
	}
	if (size >= 4)
		memcpy(&n, data, 4);
	if (size < 4 || n > size - 4)
		n = (uint32_t)(size >= 4 ? size - 4 : 0);
	dump = data + 4 + n;
	dump_len = size >= 4 ? size - 4 - n : 0;
	if (write_file(data_path, size >= 4 ? data + 4 : data, n) != 0)
		return 0;
	if (dump_path[0])
		unlink(dump_path);
	dump_path[0] = 0;
	if (dump_len) {
		if (dump_len >= 24)
			memcpy(&pid, dump + 20, 4); /* the header's pid (either byte order: as written) */
		snprintf(dump_path, sizeof(dump_path), "%s/jit-%u.dump", dir, pid);
		if (write_file(dump_path, dump, dump_len) != 0)
			return 0;
	}

	diag_init(&d);
	d.quiet = 1;
	d.out = devnull;
	memset(&co, 0, sizeof(co));
	co.input = data_path;
	co.quiet = 1;
	co.sym.symfs = dir;
	co.sym.buildid_dir = dir;
	co.sym.kallsyms = dump_path[0] ? dump_path : data_path; /* no kernel symbols */
	co.sym.cache_dir = cache_dir;
	co.sym.demangle = 1;
	co.sym.inline_frames = 1;
	jit_dirs[0] = dir;
	co.jit_dirs = jit_dirs;
	co.njit_dirs = 1;
	memset(&st, 0, sizeof(st));
	profile_init(&p);
	if (convert_read(&co, &p, &st, &d, NULL) == 0)
		fuzz_sink = p.nsamples + p.nframes + st.samples;
	profile_release(&p);
	return 0;
}
