// glassbox accuracy MODEL_DIR|MODEL.onnx [--precision bf16|int8-dynamic] [--texts FILE] [--shape NAME=1x128] [--input NAME=FILE]
//   [--samples N] [--seed S] [--threads N] [--max-rel-error E] [--min-top1 A] [--min-cosine C] [--node-tolerance T]
//   [--steps N] [--min-token-agreement A] [--json]
// The evidence for a lower precision (diag/accuracy.h): fp32 and the candidate on the same
// inputs; exit code 3 (and FAIL lines) when a threshold is not met.
#include <fstream>
#include <iostream>

#include "cli/cli_common.h"
#include "cli/session_flags.h"
#include "diag/accuracy.h"
#include "diag/inputs.h"

namespace {

struct AccuracyArgs {
  std::string model, texts_file;
  std::string precision = "bf16";
  glassbox::diag::AccuracyRequest request;
  glassbox::cli::SessionFlags session;
  bool json = false;
};

// One text per line; a line that is a JSON object takes its "text" field (classify's JSONL).
std::vector<std::string> read_texts(const std::string& path) {
  using namespace glassbox;
  std::ifstream in(path);
  if (!in) cli::fail("accuracy", make_error(ErrorCode::kNotFound, "cannot read texts file", path));
  std::vector<std::string> out;
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (line.front() == '{') {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.contains("text") || !j["text"].is_string())
        cli::fail("accuracy", make_error(ErrorCode::kInvalidArgument, "line is a JSON object without a string \"text\"",
                                         path + ": line " + std::to_string(n)));
      out.push_back(j["text"].get<std::string>());
    } else {
      out.push_back(line);
    }
  }
  return out;
}

void accuracy_command(AccuracyArgs& a) {
  using namespace glassbox;
  auto& q = a.request;
  q.model = a.model;
  a.session.apply(q.session);
  q.candidate = cli::precision_or_fail("accuracy", a.precision);
  if (!a.texts_file.empty()) q.texts = read_texts(a.texts_file);
  auto r = diag::measure_accuracy(q);
  if (!r.ok()) cli::fail("accuracy", r.error());
  if (!a.texts_file.empty()) r->inputs += " from " + a.texts_file;
  if (a.json) std::cout << diag::accuracy_to_json(*r).dump(2) << "\n";
  else std::cout << diag::accuracy_to_text(*r);
  if (!r->failures.empty()) {
    std::cerr << "glassbox accuracy: " << r->candidate << " FAILS " << r->failures.size()
              << " threshold(s) against fp32 on these inputs: do not use it for them without accepting that\n";
    throw CLI::RuntimeError(3);
  }
}

}  // namespace

void add_accuracy_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("accuracy", "Measure what a lower precision does to a model's outputs: fp32 and the "
                                             "candidate on the same inputs, per-output error, top-1 agreement, cosine, "
                                             "first departing node; exit code 3 below the thresholds");
  auto a = std::make_shared<AccuracyArgs>();
  auto& q = a->request;
  const glassbox::diag::AccuracyThresholds t;
  cmd->add_option("model", a->model, "model directory (texts through its pipeline; a decoder's: prompts generated greedily) or ONNX model file (tensors)")->required();
  // Not the session flag --precision of run/classify: the precision measured against fp32.
  cmd->add_option("--precision", a->precision, "bf16 | int8-dynamic: the candidate precision compared with fp32 (default bf16)")
      ->check([](const std::string& v) { auto p = glassbox::parse_precision(v); return p.ok() ? std::string() : p.error().to_string(); });
  cmd->add_option("--texts", a->texts_file,
                  "model directory: file of texts, one per line or JSONL {\"text\": ...}; use texts like yours (required)");
  cmd->add_option("--input", q.input_args, "model file: NAME=FILE (.pb or .npy); repeat per input (then one input set)");
  cmd->add_option("--shape", q.shape_args,
                  std::string("model file: NAME=1x128 generated with the declared fill rule (") +
                      glassbox::diag::generated_fill_rule() + ")");
  cmd->add_option("--samples", q.samples, "model file: generated input sets, seeds seed.. (default 8)")->check(CLI::Range(1, 100000));
  cmd->add_option("--seed", q.seed, "seed of the first generated input set (default 0)");
  glassbox::cli::add_session_flags(cmd, a->session, {glassbox::cli::SessionFlag::kThreads});
  cmd->add_option("--max-rel-error", q.thresholds.max_rel_error,
                  "largest accepted max|b-a|/max|a| of an output per input (default " + std::to_string(t.max_rel_error) +
                      ": bf16 keeps 8 significant bits; encoder logits measured near 1e-2)");
  cmd->add_option("--min-top1", q.thresholds.min_top1_agreement,
                  "smallest accepted top-1 agreement of classifier logits (default " + std::to_string(t.min_top1_agreement) +
                      ": near-tie texts flip under any rounding change)");
  cmd->add_option("--min-cosine", q.thresholds.min_cosine,
                  "smallest accepted cosine similarity of non-classifier outputs (default " + std::to_string(t.min_cosine) +
                      ": retrieval ranks stay stable above it)");
  cmd->add_option("--steps", q.steps,
                  "decoder directory: greedy tokens per prompt (--texts holds the prompts) (default " + std::to_string(q.steps) +
                      ": enough for a rounding change to reach a near-tie on ordinary prompts, short enough to run both "
                      "precisions quickly)")
      ->check(CLI::Range(int64_t{1}, int64_t{100000}));
  cmd->add_option("--min-token-agreement", q.thresholds.min_token_agreement,
                  "decoder directory: smallest accepted share of greedy steps whose token equals fp32's, counted up to "
                  "the first that differs (default " + std::to_string(t.min_token_agreement) +
                      ": a near-tie flips under any rounding change and ends the agreement there)");
  cmd->add_option("--node-tolerance", q.thresholds.node_tolerance,
                  "a node departs when its output's max|b-a|/max|a| exceeds this (default " +
                      std::to_string(t.node_tolerance) + ")");
  cmd->add_flag("--json", a->json, "print JSON (schema glassbox.accuracy/1; default: text)");
  cmd->callback([a] { accuracy_command(*a); });
}
