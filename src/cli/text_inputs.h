// Shared by `classify` and `embed`: model directory resolution, reading texts
// from arguments or JSONL on stdin, progress on a terminal, throughput summary.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/session_flags.h"
#include "core/jsonl.h"
#include "glassbox/pipeline.h"
#include "glassbox/memory_budget.h"

namespace glassbox::cli {

struct TextArgs {
  std::vector<std::string> positional;  // [MODEL_DIR] TEXT...
  std::string model_dir;                // --model
  std::optional<std::string> truncation;
  std::optional<int64_t> batch;
  SessionFlags session;  // unset flags: glassbox.json, else the option's default
  std::optional<std::string> model_file;     // unset: glassbox.json model_file, else model.onnx / onnx/model.onnx
};

inline void add_text_options(CLI::App* cmd, TextArgs& a) {
  cmd->add_option("args", a.positional,
                  "[MODEL_DIR] TEXT...: a first argument that is an existing directory is the model directory (never a "
                  "text); without texts, JSONL lines {\"text\":...,\"pair\"?:...} are read from stdin");
  add_model_file_option(cmd, a.model_file);
  cmd->add_option("--model", a.model_dir, "model directory (default: the embedded default model, " + default_model_dir() + ")");
  cmd->add_option("--truncation", a.truncation,
                  "none|longest_first|only_first|only_second (default: glassbox.json, else none = overlong input is an error)");
  cmd->add_option("--batch", a.batch, "texts per model run (default: glassbox.json batch_size, else 8)");
  add_session_flags(cmd, a.session, {SessionFlag::kThreads, SessionFlag::kPrecision, SessionFlag::kWeightsCache,
                                     SessionFlag::kPoolWait, SessionFlag::kMaxMemory});
}

// --overflow, declared once for the verbs that take it (embed, rerank): what an input over the model's
// length does in this call, as the routes' "overflow" field (docs/retrieval.md "Long inputs").
struct OverflowChoice {
  bool truncate = false;  // cut from the right; the output reports tokens_dropped
  bool split = false;     // rerank: windows of the document, its best window's score
};
inline void add_overflow_option(CLI::App* cmd, std::optional<std::string>& value, bool split_allowed) {
  std::string help =
      std::string(split_allowed ? "error|truncate|split" : "error|truncate") +
      ": an input over the model's length (default error: refused, naming the input and its token count, because "
      "nothing is dropped silently); truncate: cut from the right (rerank: only the document), tokens_dropped "
      "reported (risk: the dropped part is never seen)";
  if (split_allowed)
    help += "; split: the document in windows, each with the whole query, scored by its best window (risk: a passage "
            "cut at a window boundary is judged in two halves)";
  cmd->add_option("--overflow", value, help)
      ->check(split_allowed ? CLI::IsMember({"error", "truncate", "split"}) : CLI::IsMember({"error", "truncate"}));
}
inline OverflowChoice overflow_choice(const std::optional<std::string>& value) {
  return {value && *value == "truncate", value && *value == "split"};
}

// Splits positional args into the model directory and the texts. A first argument that is an
// existing directory is the model directory, whatever it holds: Pipeline::load then names what
// is missing, instead of the path being classified as a text.
inline std::string resolve_model_dir(const std::string& verb, TextArgs& a, std::vector<PipelineInput>& texts) {
  std::string dir = a.model_dir;
  size_t first_text = 0;
  std::error_code ec;  // a long text is not a path: the non-throwing overloads just say "no"
  if (!a.positional.empty() && std::filesystem::is_directory(a.positional[0], ec)) {
    if (!dir.empty())
      fail(verb, make_error(ErrorCode::kInvalidArgument, "two model directories: --model " + dir + " and " + a.positional[0],
                            {}, "give the model directory once (a directory is never read as a text)"));
    dir = a.positional[0];
    first_text = 1;
  }
  if (dir.empty()) dir = default_model_dir();
  for (size_t i = first_text; i < a.positional.size(); ++i) texts.push_back({a.positional[i], std::nullopt});
  return dir;
}

// Reads JSONL inputs from stdin (used when no text was given as an argument). Lines of the plain
// {"text", "pair"?} shape take the fast parser (core/jsonl.h); every other line is nlohmann's to judge.
inline std::vector<PipelineInput> read_jsonl_stdin(const std::string& verb) {
  std::vector<PipelineInput> out;
  jsonl::LineReader lines(STDIN_FILENO);
  std::string_view view;
  size_t n = 0;
  while (lines.next(view)) {
    ++n;
    jsonl::TextLine fast;
    if (jsonl::parse_text_line(view, fast) == jsonl::LineKind::kParsed) {
      out.push_back({std::move(fast.text), std::move(fast.pair)});
      continue;
    }
    const std::string line(view);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("text") || !j["text"].is_string())
      fail(verb, make_error(ErrorCode::kInvalidArgument, "line is not {\"text\": \"...\"}", "stdin line " + std::to_string(n)));
    PipelineInput in{j["text"].get<std::string>(), std::nullopt};
    if (j.contains("pair") && j["pair"].is_string()) in.pair = j["pair"].get<std::string>();
    out.push_back(std::move(in));
  }
  if (!lines.status().ok()) fail(verb, lines.status().error());
  return out;
}

// Loads the pipeline named by the arguments and collects the texts (from the
// arguments, else JSONL on stdin); fails the verb with a clear message.
inline Pipeline load_pipeline(const std::string& verb, TextArgs& a, std::vector<PipelineInput>& texts) {
  const std::string dir = resolve_model_dir(verb, a, texts);
  PipelineOptions opts;
  a.session.apply(opts);
  opts.truncation = a.truncation;
  opts.batch_size = a.batch;
  opts.model_file = a.model_file;
  auto p = pipeline::load_with_budget(dir, opts, a.session.max_memory.value_or(0));  // docs/memory.md
  if (!p.ok()) fail(verb, p.error());
  if (texts.empty()) texts = read_jsonl_stdin(verb);
  return std::move(p->pipeline);
}

// Runs fn over chunks of the inputs, drawing a progress bar on stderr when it is a terminal.
template <class Fn>
void with_progress(const std::vector<PipelineInput>& inputs, size_t chunk, Fn&& fn) {
  const bool tty = isatty(STDERR_FILENO) && inputs.size() > chunk;
  for (size_t start = 0; start < inputs.size(); start += chunk) {
    const size_t end = std::min(inputs.size(), start + chunk);
    fn(std::vector<PipelineInput>(inputs.begin() + start, inputs.begin() + end));
    if (tty) {
      const int width = 30, done = static_cast<int>(width * end / inputs.size());
      std::cerr << "\r[" << std::string(done, '#') << std::string(width - done, ' ') << "] " << end << "/" << inputs.size()
                << std::flush;
    }
  }
  if (tty) std::cerr << "\n";
}

// --timing: per-text latency when texts run one at a time (what a service sees per request),
// the load time and the process's peak RSS, as one JSON line on stderr.
struct TextTiming {
  double load_ms = 0;
  std::vector<double> per_text_ms;
};

inline void print_timing(const char* verb, TextTiming t) {
  std::sort(t.per_text_ms.begin(), t.per_text_ms.end());
  auto q = [&](double p) {
    if (t.per_text_ms.empty()) return 0.0;
    return t.per_text_ms[std::min(t.per_text_ms.size() - 1, static_cast<size_t>(p * t.per_text_ms.size()))];
  };
  double sum = 0;
  for (double v : t.per_text_ms) sum += v;
  struct rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  nlohmann::ordered_json j{{"verb", verb}, {"texts", t.per_text_ms.size()}, {"load_ms", t.load_ms},
                           {"p50_ms", q(0.50)}, {"p95_ms", q(0.95)}, {"p99_ms", q(0.99)},
                           {"mean_ms", t.per_text_ms.empty() ? 0 : sum / t.per_text_ms.size()},
                           {"peak_rss_mb", static_cast<double>(ru.ru_maxrss) / 1024.0}};
  std::cerr << "glassbox " << verb << " timing: " << j.dump() << "\n";
}

inline void print_throughput(const char* verb, size_t texts, int64_t tokens, std::chrono::steady_clock::time_point t0) {
  std::cout.flush();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "glassbox " << verb << ": " << texts << " texts, " << tokens << " tokens in " << s << " s ("
            << (s > 0 ? texts / s : 0) << " texts/s, " << (s > 0 ? tokens / s : 0) << " tokens/s)\n";
}

}  // namespace glassbox::cli
