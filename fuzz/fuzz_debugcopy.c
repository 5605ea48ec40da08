/* fuzz_debugcopy: libFuzzer target for the copy of a debug file made with its
 * compressed sections inflated (symbolize/debugcopy.h), and libelf reading it back. */
#include <gelf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "fuzz/entry_edit.h"
#include "symbolize/debugcopy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fuzz_sink;

/* Input: the debug file. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t bid[20] = { 0x93, 0xac };
	static char *src, *dst;
	uint64_t sum = 0;
	Elf *e;
	int fd;

	if (!src) {
		elf_version(EV_CURRENT);
		src = xasprintf("%s/src.debug", entry_edit_dir("fuzz_debugcopy"));
		dst = xasprintf("%s/copy.debug", entry_edit_dir("fuzz_debugcopy"));
	}
	if (entry_edit_write(src, data, size) != 0)
		abort();
	unlink(dst);
	fd = debugcopy_make(src, dst, bid, sizeof(bid), NULL);
	if (fd < 0)
		return 0;
	/* what libdw would read: every section's bytes */
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	for (Elf_Scn *scn = NULL; e && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		sum += sh.sh_size + sh.sh_offset;
		if ((d = elf_rawdata(scn, NULL)) && d->d_buf && d->d_size)
			sum += ((const uint8_t *)d->d_buf)[d->d_size - 1];
	}
	elf_end(e);
	close(fd);
	fuzz_sink = sum;
	return 0;
}
