// cxxscope: C++ functions whose DWARF has no linkage name, by their scope (issue 34, item 1).
//
// Templates instantiated with a lambda's type have internal linkage: GCC writes no
// DW_AT_linkage_name for them (std::generate_n, std::sort's helpers, std::thread's
// _State_impl, std::function's _Function_handler), nor for a lambda's operator() inlined
// into its caller. Their names come from DW_AT_name and their parents' names: the
// namespaces, classes and the function a lambda is defined in. Each is sampled both
// inlined (-O2) and out of line (noinline), in an anonymous namespace, a named one,
// nested classes, and on a second thread.
//
//   cxxscope [ROUNDS]
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <thread>
#include <vector>

volatile unsigned long sink;

namespace {

// a nested class in an anonymous namespace: one member out of line, one inlined
struct Mixer {
	struct Step {
		unsigned long k;

		__attribute__((noinline)) unsigned long run(unsigned long x) const
		{
			for (int i = 0; i < 64; i++)
				x = (x ^ k) * 0x9e3779b97f4a7c15ul + (x >> 7);
			return x;
		}
		unsigned long twist(unsigned long x) const
		{
			for (int i = 0; i < 32; i++)
				x = (x << 3) ^ (x >> 5) ^ k;
			return x;
		}
	};
};

// a function template called with a lambda: internal linkage, no linkage name
template <typename F> __attribute__((noinline)) unsigned long apply_n(F f, unsigned long n)
{
	unsigned long s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += f(i);
	return s;
}

__attribute__((noinline)) unsigned long anon_spin(unsigned long n)
{
	Mixer::Step st{ n | 1 };
	unsigned long s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += st.twist(i) + st.run(i);
	return s;
}

} // namespace

namespace outer {
namespace inner {

struct Widget {
	unsigned long base;

	// a member template called with a lambda, inlined into its caller
	template <typename F> unsigned long each(F f, unsigned long n) const
	{
		unsigned long s = base;

		for (unsigned long i = 0; i < n; i++)
			s = f(s, i);
		return s;
	}
	__attribute__((noinline)) unsigned long work(unsigned long n) const
	{
		return each([this](unsigned long s, unsigned long i) {
			for (int j = 0; j < 16; j++)
				s = s * 31 + (i ^ base) + j;
			return s;
		}, n);
	}
};

} // namespace inner
} // namespace outer

static void fill_and_sort(std::vector<int> &v, unsigned &seed, unsigned long n)
{
	v.clear();
	std::generate_n(std::back_inserter(v), n, [&seed] {
		seed = seed * 1103515245u + 12345u;
		return static_cast<int>(seed >> 8);
	});
	std::sort(v.begin(), v.end(), [](int a, int b) { return (a ^ 0x5a5a5a) < (b ^ 0x5a5a5a); });
	sink += static_cast<unsigned long>(v[n / 2]);
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 40;
	std::vector<int> v;
	unsigned seed = 7;
	std::function<unsigned long(unsigned long)> fn = [](unsigned long x) {
		for (int j = 0; j < 2000; j++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		return x;
	};
	outer::inner::Widget w{ 3 };

	std::thread t([rounds] {
		unsigned long s = 0;

		for (unsigned long r = 0; r < rounds; r++) {
			s += anon_spin(3000000);
			s += apply_n([r](unsigned long i) {
				unsigned long x = i + r;

				for (int j = 0; j < 200; j++)
					x = x * 2862933555777941757ul + 3037000493ul;
				return x;
			}, 30000);
		}
		sink += s;
	});
	for (unsigned long r = 0; r < rounds; r++) {
		fill_and_sort(v, seed, 60000);
		for (unsigned long i = 0; i < 2000; i++)
			sink += fn(i);
		sink += w.work(300000);
	}
	t.join();
	return 0;
}
