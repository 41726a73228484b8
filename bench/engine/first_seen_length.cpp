// First-seen text length vs warm, for a classify/embed model directory (issue 28: "a new text length
// cheap for the existing classify/embed pipelines: first-seen length <= 1.05x the warm cost, measured").
//
// For each length L (tokens, special tokens included) the program builds a text of exactly L tokens, runs it
// once (the first run of a length the pipeline has not seen), then --warm times more, and prints the first
// run's time over the warm median. Lengths are visited in the order given, each once: a length is
// "first-seen" only the first time. A batch of one text (what a lone request is).
//
// Usage: bench_first_seen MODEL_DIR [--threads N] [--warm N] [--lengths 12,20,...] [--task classify|embed]
//        [--unspecialized SYMBOL,...] (SessionOptions::unspecialized_symbols, for an A/B against the text pipelines'
//        default "*"; a name no input has gives a plan per shape) [--log-passes on] (what each plan's passes changed)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "glassbox/pipeline.h"

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A text of exactly `len` tokens: words appended while the encoding is shorter (a word that overshoots is
// replaced by the next one), or "" when none of these words fits.
std::string text_of(const glassbox::Pipeline& p, int64_t len) {
  static const char* kWords[] = {"the", "model", "reads", "a", "short", "text", "about", "rivers", "and", "trees"};
  auto tokens = [&](const std::string& text) -> int64_t {
    glassbox::PipelineInput in;
    in.text = text;
    auto e = p.encode(in);
    return e.ok() ? static_cast<int64_t>(e.value().encoding.size()) : -1;
  };
  std::string text;
  for (int i = 0; i < 4 * len; ++i) {
    bool grew = false;
    for (int k = 0; k < 10 && !grew; ++k) {
      const std::string next = text + (text.empty() ? "" : " ") + kWords[(i + k) % 10];
      const int64_t n = tokens(next);
      if (n < 0) return "";
      if (n == len) return next;
      if (n < len) text = next, grew = true;
    }
    if (!grew) return "";
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL_DIR [--threads N] [--warm N] [--lengths L,...] [--task classify|embed] "
                    "[--unspecialized SYM,...]\n", argv[0]);
    return 2;
  }
  glassbox::PipelineOptions options;
  options.session.threads = 2;
  int warm = 7;
  std::string task = "classify";
  std::vector<std::string> lengths = split("12,20,28,36,44,52,60,68,76,84,92,100,116,132");
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--threads") options.session.threads = std::atoi(value.c_str());
    else if (flag == "--warm") warm = std::max(1, std::atoi(value.c_str()));
    else if (flag == "--lengths") lengths = split(value);
    else if (flag == "--task") task = value;
    else if (flag == "--unspecialized") options.session.unspecialized_symbols = split(value);
    else if (flag == "--log-passes") options.session.log_passes = value == "on";
    else {
      fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  auto loaded = glassbox::Pipeline::load(argv[1], options);
  if (!loaded.ok()) {
    fprintf(stderr, "%s\n", loaded.error().to_string().c_str());
    return 1;
  }
  const glassbox::Pipeline& p = loaded.value();
  auto run = [&](const std::string& text) {
    glassbox::PipelineInput in;
    in.text = text;
    const double t0 = now_ms();
    bool ok = task == "embed" ? p.embed({in}).ok() : p.classify({in}).ok();
    if (!ok) {
      fprintf(stderr, "run failed\n");
      std::exit(1);
    }
    return now_ms() - t0;
  };
  run(text_of(p, 8));  // the process's own first run (threads, first packing): not a length's cost
  run(text_of(p, 8));
  printf("length first_ms warm_median_ms ratio\n");
  std::vector<double> ratios;
  for (const auto& l : lengths) {
    const std::string text = text_of(p, std::atoll(l.c_str()));
    if (text.empty()) {
      printf("%s (no text of this many tokens)\n", l.c_str());
      continue;
    }
    const double first = run(text);
    std::vector<double> w;
    for (int i = 0; i < warm; ++i) w.push_back(run(text));
    std::sort(w.begin(), w.end());
    const double med = w[w.size() / 2];
    ratios.push_back(first / med);
    printf("%s %.3f %.3f %.3f\n", l.c_str(), first, med, first / med);
  }
  std::sort(ratios.begin(), ratios.end());
  if (!ratios.empty())
    printf("ratio median %.3f max %.3f over %zu lengths\n", ratios[ratios.size() / 2], ratios.back(), ratios.size());
  return 0;
}
