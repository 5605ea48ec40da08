// dwpp: a C++ program for --call-graph dwarf recordings (g++ -O2 -fomit-frame-pointer -g).
//
// Usage: dwpp [MILLISECONDS]   (default 1000)
// main -> run_all -> (alternately)
//   sort_pass: std::sort of a std::vector<Item> with a lambda comparator (libstdc++'s
//              introsort templates, instantiated here, with the lambda inlined or not)
//   apply_pass: calls a std::function<uint64_t(uint64_t)> (libstdc++'s _M_invoker) that
//               holds a lambda calling Hasher::step
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace {
volatile uint64_t sink;
}

struct Item {
	uint32_t key;
	uint32_t pad[3];
};

struct Hasher {
	uint64_t state;
	NOINLINE uint64_t step(uint64_t x);
};

uint64_t Hasher::step(uint64_t x)
{
	for (int i = 0; i < 200; i++)
		state = (state ^ x) * 0x100000001b3ull + (uint64_t)i;
	return state;
}

NOINLINE void sort_pass(std::vector<Item> &v, uint32_t seed)
{
	for (auto &it : v) {
		seed = seed * 1664525u + 1013904223u;
		it.key = seed >> 4;
	}
	std::sort(v.begin(), v.end(), [](const Item &a, const Item &b) { return a.key < b.key; });
	sink += v[v.size() / 2].key;
}

NOINLINE uint64_t apply_pass(const std::function<uint64_t(uint64_t)> &f, uint64_t x)
{
	for (int i = 0; i < 500; i++)
		x = f(x);
	return x;
}

NOINLINE void run_all(long ms)
{
	using clock = std::chrono::steady_clock;
	auto end = clock::now() + std::chrono::milliseconds(ms);
	std::vector<Item> v(3000);
	Hasher h{1};
	std::function<uint64_t(uint64_t)> f = [&h](uint64_t x) { return h.step(x) + 1; };
	uint32_t seed = 7;

	while (clock::now() < end) {
		sort_pass(v, seed++);
		sink += apply_pass(f, seed);
	}
}

int main(int argc, char **argv)
{
	run_all(argc > 1 ? atol(argv[1]) : 1000);
	std::printf("%llu\n", (unsigned long long)(sink & 1));
	return 0;
}
