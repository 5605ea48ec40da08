/* fuzz_unwind: libFuzzer target for the unwinder: arbitrary registers and stack copies.
 *
 * Input: u64 start of dw's text mapping, u64 start of libc's (the two modules with CFI,
 * from testdata/dwarf/dw and testdata/libc.so.6 when run from the tree's top), u32 mask
 * of valid registers, UNWIND_X86_NREGS u64 registers (x86-64's DWARF numbering), then
 * the stack copy.
 * The copy is given to the unwinder in a buffer of exactly its size, so that ASan sees a
 * read past it. Pcs in [0x7000, 0x9000) lie in JIT code whose UNWINDING_INFO is the
 * copy itself (.eh_frame_hdr its last 20 bytes), when that parses. The seeds in
 * tests/corpus/unwind are real samples of testdata/dwarf/dw.data
 * (PERFCONV_UNWIND_CORPUS=DIR build/tests/check_unwind writes them).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fuzz_sink;

struct fuzz_maps {
	uint64_t dw_start, libc_start;
	struct unwind_module *dw, *libc, *jit;
};

static int find(void *ctx, uint64_t pc, struct unwind_where *w)
{
	const struct fuzz_maps *m = ctx;
	uint64_t vaddr;

	if (m->dw && pc - m->dw_start < 0x1000 &&
	    unwind_module_vaddr(m->dw, pc - m->dw_start + 0x1000, &vaddr)) {
		w->mod = m->dw;
		w->bias = pc - vaddr;
		w->name = "dw";
		return 1;
	}
	if (m->libc && pc - m->libc_start < 0x156000 &&
	    unwind_module_vaddr(m->libc, pc - m->libc_start + 0x26000, &vaddr)) {
		w->mod = m->libc;
		w->bias = pc - vaddr;
		w->name = "libc.so.6";
		return 1;
	}
	if (pc >= 0x7000 && pc < 0x9000) {
		w->mod = m->jit;
		w->bias = 0;
		w->name = "jit";
		return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct unwind_module *dw, *libc;
	static int opened;
	struct fuzz_maps m;
	struct unwind_regs regs;
	struct unwind_result res;
	uint64_t pcs[UNWIND_MAX_FRAMES], sum = 0;
	const size_t head = 16 + 4 + 8 * UNWIND_X86_NREGS;
	uint32_t valid;
	uint8_t *stack;
	size_t n;

	if (!opened) {
		opened = 1;
		dw = unwind_module_open("testdata/dwarf/dw", NULL);
		libc = unwind_module_open("testdata/libc.so.6", NULL);
	}
	if (size < head)
		return 0;
	memcpy(&m.dw_start, data, 8);
	memcpy(&m.libc_start, data + 8, 8);
	m.dw = dw;
	m.libc = libc;
	memset(&regs, 0, sizeof(regs));
	memcpy(&valid, data + 16, 4);
	regs.valid = valid;
	memcpy(regs.r, data + 20, 8 * UNWIND_X86_NREGS);
	stack = malloc(size - head ? size - head : 1);
	memcpy(stack, data + head, size - head);
	m.jit = unwind_module_jit(stack, size - head, 20, 0x7000);
	n = unwind_stack(&regs, stack, size - head, find, &m, pcs, UNWIND_MAX_FRAMES, &res);
	{
		/* the memo of walks: made, then given back, the walk's pcs and end both
		 * times (a memo a input: the mappings are the input's) */
		struct unwind_memo *memo = unwind_memo_new();
		struct unwind_result mres;
		uint64_t mpcs[UNWIND_MAX_FRAMES];
		uint32_t aux = 0;

		for (int k = 0; k < 2; k++) {
			size_t mn = unwind_stack_memo(memo, 1, 1, &regs, stack, size - head, find, &m,
						      mpcs, UNWIND_MAX_FRAMES, &mres, &aux);

			if (mn != n || memcmp(mpcs, pcs, n * sizeof(*pcs)) != 0 || mres.stop != res.stop ||
			    mres.nsignal != res.nsignal || mres.stack_end != res.stack_end)
				abort();
		}
		/* another leaf pc: its walk may take the first one's rest from frame 1 */
		{
			struct unwind_regs other = regs;
			struct unwind_result ores;
			uint64_t opcs[UNWIND_MAX_FRAMES];
			size_t on, mn;

			other.r[UNWIND_REG_IP] += 1;
			on = unwind_stack(&other, stack, size - head, find, &m, opcs, UNWIND_MAX_FRAMES,
					  &ores);
			mn = unwind_stack_memo(memo, 1, 1, &other, stack, size - head, find, &m, mpcs,
					       UNWIND_MAX_FRAMES, &mres, &aux);
			if (mn != on || memcmp(mpcs, opcs, on * sizeof(*opcs)) != 0 ||
			    mres.stop != ores.stop || mres.nsignal != ores.nsignal)
				abort();
		}
		unwind_memo_free(memo);
	}
	unwind_module_free(m.jit);
	for (size_t i = 0; i < n; i++)
		sum += pcs[i];
	/* each step moved the stack pointer up: never more frames than the limit */
	if (n > UNWIND_MAX_FRAMES || res.stop >= UNWIND_NSTOPS)
		abort();
	free(stack);
	fuzz_sink = sum + n;
	return 0;
}
