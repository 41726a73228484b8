// A STREAM-like read bandwidth probe (issue 28's "physical limit" of decode): T threads each sum their slice of a
// buffer far larger than the caches; the best of R passes is reported in GB/s (10^9 bytes/s). Decode at batch 1
// reads every weight once per token, so bandwidth / weight bytes per token bounds tokens/s.
// Build and run: g++ -O3 -march=native -pthread bench/generation/read_bandwidth.cpp -o /tmp/read_bw && /tmp/read_bw 2
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const size_t mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1024;
  const int passes = 7;
  const size_t n = mib * 1024 * 1024 / sizeof(float);
  std::vector<float> buf(n);
  for (size_t i = 0; i < n; ++i) buf[i] = static_cast<float>(i & 1023) * 1e-3f;  // touched: pages are resident
  std::vector<double> sums(threads);
  double best = 0;
  for (int p = 0; p < passes; ++p) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const size_t lo = n * t / threads, hi = n * (t + 1) / threads;
        float acc[16] = {};
        for (size_t i = lo; i + 16 <= hi; i += 16)
          for (int k = 0; k < 16; ++k) acc[k] += buf[i + k];
        double s = 0;
        for (float a : acc) s += a;
        sums[t] = s;
      });
    }
    for (auto& th : pool) th.join();
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, static_cast<double>(n * sizeof(float)) / sec / 1e9);
  }
  double check = 0;
  for (double s : sums) check += s;
  std::printf("{\"threads\": %d, \"buffer_mib\": %zu, \"passes\": %d, \"best_read_gb_per_s\": %.2f, \"checksum\": %.1f}\n",
              threads, mib, passes, best, check);
  return 0;
}
