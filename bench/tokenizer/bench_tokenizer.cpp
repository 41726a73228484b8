// Tokenizer throughput: load time, then encode_batch over the corpus lines on N threads.
// Usage: bench_tokenizer [--general-path] TOKENIZER.json THREADS REPEAT CORPUS.txt...   -> one JSON line
// --general-path sets EncodeOptions::fast_paths = false (measures what the fast paths buy).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "glassbox/tokenizer.h"

int main(int argc, char** argv) {
  bool general = argc > 1 && std::string(argv[1]) == "--general-path";
  if (general) {
    --argc;
    ++argv;
  }
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s [--general-path] TOKENIZER.json THREADS REPEAT CORPUS.txt...\n", argv[0]);
    return 2;
  }
  using clk = std::chrono::steady_clock;
  std::size_t threads = std::stoul(argv[2]), repeat = std::stoul(argv[3]);
  std::vector<glassbox::EncodeInput> inputs;
  std::size_t bytes = 0;
  for (std::size_t r = 0; r < repeat; ++r)
    for (int i = 4; i < argc; ++i) {
      std::ifstream f(argv[i]);
      std::string line;
      while (std::getline(f, line))
        if (!line.empty()) {
          bytes += line.size();
          inputs.push_back({line, std::nullopt});
        }
    }
  auto t0 = clk::now();
  auto tk = glassbox::Tokenizer::from_file(argv[1]);
  double load_s = std::chrono::duration<double>(clk::now() - t0).count();
  if (!tk.ok()) {
    std::fprintf(stderr, "%s\n", tk.error().to_string().c_str());
    return 1;
  }
  glassbox::EncodeOptions opt;
  opt.fast_paths = !general;
  // warm-up on a slice (fills caches the same way the peer's warm-up does)
  std::vector<glassbox::EncodeInput> warm(inputs.begin(), inputs.begin() + std::min<std::size_t>(inputs.size(), 200));
  (void)tk->encode_batch(warm, opt, threads);
  double best = 1e30;
  std::size_t tokens = 0;
  for (int rep = 0; rep < 3; ++rep) {
    auto t1 = clk::now();
    auto r = tk->encode_batch(inputs, opt, threads);
    double s = std::chrono::duration<double>(clk::now() - t1).count();
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.error().to_string().c_str());
      return 1;
    }
    tokens = 0;
    for (auto& e : *r) tokens += e.ids.size();
    best = std::min(best, s);
  }
  std::printf("{\"impl\":\"%s\",", general ? "glassbox (general path)" : "glassbox");
  std::printf("\"threads\":%zu,\"load_s\":%.3f,\"encode_s\":%.3f,\"mb_per_s\":%.2f,\"tokens_per_s\":%.0f,\"tokens\":%zu,\"bytes\":%zu}\n",
              threads, load_s, best, bytes / best / 1e6, tokens / best, tokens, bytes);
  return 0;
}
