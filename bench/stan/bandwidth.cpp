// bench/stan/bandwidth.cpp — the machine's read bandwidth from main memory: a
// STREAM-like read kernel (the sum of an array of doubles far larger than the caches, with
// independent vector accumulators so that neither the adds nor their latency limit it), repeated,
// the best repetition reported. The data-heavy rows of bench/stan/run.sh compare their times with
// one pass over their design matrix at the one-thread figure (a chain runs on one thread).
//   usage: bandwidth [--mib M (default 1024)] [--reps R (default 10)] [--threads 1,2]
// With T threads each sums its own contiguous 1/T of the array; a repetition is timed from
// before the threads start to after they all finished. Prints, for each T (CSV, bench/stan/run.sh's
// columns, the threads in the chains column, the machine's figure in the tyche column):
//   machine,read_bandwidth,<bytes per repetition>,<T>,<GB/s>,,GB_per_s,
// and the spread of the repetitions on stderr. GB = 1e9 bytes.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

// Eight doubles per vector (one AVX-512 register; the compiler splits it where vectors are
// narrower), four accumulators.
typedef double v8d __attribute__((vector_size(64)));

double sum(const double* x, std::size_t n) {
  v8d a0 = {}, a1 = {}, a2 = {}, a3 = {};
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    v8d v0, v1, v2, v3;
    __builtin_memcpy(&v0, x + i, 64);
    __builtin_memcpy(&v1, x + i + 8, 64);
    __builtin_memcpy(&v2, x + i + 16, 64);
    __builtin_memcpy(&v3, x + i + 24, 64);
    a0 += v0;
    a1 += v1;
    a2 += v2;
    a3 += v3;
  }
  const v8d a = (a0 + a1) + (a2 + a3);
  double s = 0;
  for (int k = 0; k < 8; ++k) s += a[k];
  for (; i < n; ++i) s += x[i];
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t mib = 1024;
  int reps = 10;
  std::vector<int> thread_counts = {1};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--mib") mib = std::stoul(argv[i + 1]);
    else if (k == "--reps") reps = std::stoi(argv[i + 1]);
    else if (k == "--threads") {
      thread_counts.clear();
      std::stringstream ss(argv[i + 1]);
      for (std::string t; std::getline(ss, t, ',');) thread_counts.push_back(std::stoi(t));
    } else {
      std::fprintf(stderr, "usage: bandwidth [--mib M] [--reps R] [--threads 1,2]\n");
      return 2;
    }
  }
  const std::size_t n = mib * 1024 * 1024 / sizeof(double);
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = double(i % 1000) * 1e-3;  // touch every page
  for (const int threads : thread_counts) {
    const std::size_t t_count = static_cast<std::size_t>(std::max(1, threads));
    std::vector<double> partial(t_count);
    auto run = [&] {
      std::vector<std::thread> pool;
      for (std::size_t t = 1; t < t_count; ++t)
        pool.emplace_back([&, t] {
          partial[t] = sum(x.data() + n * t / t_count, n * (t + 1) / t_count - n * t / t_count);
        });
      partial[0] = sum(x.data(), n / t_count);
      for (auto& th : pool) th.join();
      double s = 0;
      for (double p : partial) s += p;
      return s;
    };
    const double expected = run();
    std::vector<double> gbs;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const double s = run();
      const auto t1 = std::chrono::steady_clock::now();
      if (s != expected) {
        std::fprintf(stderr, "bandwidth: the sum changed (%.17g, %.17g)\n", s, expected);
        return 1;
      }
      gbs.push_back(double(n * sizeof(double)) /
                    std::chrono::duration<double>(t1 - t0).count() / 1e9);
    }
    std::sort(gbs.begin(), gbs.end());
    std::fprintf(stderr,
                 "bandwidth: %zu MiB, %d repetitions, %zu thread(s): best %.2f GB/s, median %.2f, "
                 "worst %.2f\n",
                 mib, reps, t_count, gbs.back(), gbs[gbs.size() / 2], gbs.front());
    std::printf("machine,read_bandwidth,%zu,%zu,%.2f,,GB_per_s,\n", n * sizeof(double), t_count,
                gbs.back());
  }
  return 0;
}
