// shapes: a C++ test program for perfconv recordings: namespaces, a class method,
// a template, and a static function that g++ -O2 inlines into its hot caller.
//
// Usage: shapes [MILLISECONDS]   (default 1000)
//
//   main -> geometry::Scene::render -> geometry::Scene::shade_all
//        -> geometry::accumulate<double> (template)
//        -> hot_mix (extern "C") -> mix_step (static, inlined: an inline frame)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

static volatile uint64_t sink;

static double now_ms()
{
	timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline uint32_t mix_step(uint32_t x)
{
	x ^= x >> 7;
	x *= 0x9e3779b1u;
	x ^= x >> 11;
	return x;
}

extern "C" __attribute__((noinline)) uint32_t hot_mix(uint32_t seed, int rounds)
{
	volatile uint32_t pad[2] = { 0, 0 }; // a frame, so the caller shows in stacks
	uint32_t s = seed;

	for (int i = 0; i < rounds; i++)
		s += mix_step(s + (uint32_t)i);
	pad[0] = s;
	return pad[0];
}

namespace geometry {

template <typename T> __attribute__((noinline)) T accumulate(const T *v, int n)
{
	volatile T pad[2] = { 0, 0 };
	T s = 0;

	for (int r = 0; r < 2000; r++)
		for (int i = 0; i < n; i++)
			s += v[i] * v[(i + r) % n];
	pad[0] = s;
	return pad[0];
}

class Scene {
public:
	explicit Scene(int n) : n_(n) {}
	__attribute__((noinline)) double shade_all(uint32_t seed);
	__attribute__((noinline)) double render(double until_ms);

private:
	int n_;
};

double Scene::shade_all(uint32_t seed)
{
	double v[64];

	for (int i = 0; i < 64; i++)
		v[i] = (double)((seed + (uint32_t)i) % 97);
	sink = hot_mix(seed, 200000);
	return accumulate(v, 64);
}

double Scene::render(double until_ms)
{
	double total = 0;
	uint32_t seed = 1;

	while (now_ms() < until_ms)
		total += shade_all(seed++);
	return total;
}

} // namespace geometry

int main(int argc, char **argv)
{
	long ms = argc > 1 ? strtol(argv[1], nullptr, 10) : 1000;
	geometry::Scene scene(64);

	printf("%f\n", scene.render(now_ms() + (double)ms));
	return 0;
}
