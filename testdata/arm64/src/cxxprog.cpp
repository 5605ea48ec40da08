// cxxprog: a C++ program for testdata/arm64 (see ../README.md): std::sort with a lambda,
// std::function, templates and small functions inlined into their callers (-O2),
// built -fomit-frame-pointer, libstdc++ linked in statically.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

struct Item {
	unsigned key;
	unsigned weight;
};

static volatile unsigned sink;

static inline unsigned scramble(unsigned x)
{
	x ^= x >> 13;
	x *= 0x5bd1e995u;
	return x ^ (x >> 15);
}

template <typename T> static inline T accumulate_weights(const std::vector<T> &v)
{
	T total{};
	for (const auto &it : v)
		total.weight += scramble(it.weight);
	return total;
}

__attribute__((noinline)) void sort_pass(std::vector<Item> &v, unsigned salt)
{
	std::sort(v.begin(), v.end(), [salt](const Item &a, const Item &b) {
		return scramble(a.key ^ salt) < scramble(b.key ^ salt);
	});
}

__attribute__((noinline)) unsigned sum_pass(const std::vector<Item> &v)
{
	return accumulate_weights(v).weight;
}

__attribute__((noinline)) unsigned apply(const std::function<unsigned(unsigned)> &f, unsigned x)
{
	return f(x) + 1;
}

__attribute__((noinline)) void run_all(int rounds)
{
	std::vector<Item> v(300);

	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < v.size(); i++)
			v[i] = Item{ scramble((unsigned)(i * 7 + r)), (unsigned)i };
		sort_pass(v, (unsigned)r);
		sink += sum_pass(v);
		sink += apply([&v](unsigned x) { return v[x % v.size()].key; }, (unsigned)r);
	}
}

int main(int argc, char **argv)
{
	run_all(argc > 1 ? std::atoi(argv[1]) : 6);
	std::printf("%u\n", (unsigned)sink);
	return 0;
}
