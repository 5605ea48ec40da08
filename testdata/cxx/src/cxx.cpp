// cxx: C++ through the PLT and through exceptions (issue 22, item 10).
//
// churn() calls operator new and delete through their PLT entries (_Znwm@plt,
// _ZdlPvm@plt) in a loop, so that samples fall in the stubs; catcher() throws and
// catches, so that samples fall in libgcc_s's unwinder (_Unwind_RaiseException, whose
// CFI gives CFA=rsp+0 with the return address in a register at some pcs); land()
// calls ra_in_rcx, which does what _Unwind_RaiseException's last instructions do: it
// pops its return address into rcx (CFI: CFA=rsp+0, the return address in rcx), then
// spins there before it jumps back.
//
//   cxx [ITERATIONS]
#include <cstdlib>
#include <stdexcept>

volatile unsigned long sink;
int *volatile slot;

__attribute__((noinline)) void churn(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		slot = new int(static_cast<int>(i));
		sink += *slot;
		delete slot;
	}
}

__attribute__((noinline)) void thrower(unsigned long i)
{
	if (sink != i + 1)
		throw std::runtime_error("again");
}

__attribute__((noinline)) void catcher(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		try {
			thrower(i);
		} catch (const std::exception &e) {
			sink += static_cast<unsigned long>(e.what()[0]);
		}
	}
}

extern "C" void ra_in_rcx(unsigned long n);
__asm__(".text\n.globl ra_in_rcx\n.type ra_in_rcx, @function\nra_in_rcx:\n"
	"\t.cfi_startproc\n"
	"\tpop %rcx\n"
	"\t.cfi_def_cfa_offset 0\n"
	"\t.cfi_register 16, 2\n"
	"1:\tdec %rdi\n\tjnz 1b\n"
	"\tjmp *%rcx\n"
	"\t.cfi_endproc\n.size ra_in_rcx, .-ra_in_rcx\n");

__attribute__((noinline)) void land(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		ra_in_rcx(1000);
	sink++;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 20000000;

	churn(n);
	catcher(n / 200);
	land(n / 40);
	return 0;
}
