// `glassbox accuracy`: the evidence for a lower precision. Runs the model in fp32 and
// in the chosen precision on the same inputs (texts through a model directory's
// pipeline, or generated / given tensors for a model file) and reports, per output,
// the normwise relative error (max |b - a| / max |a| per input; mean: sum |b - a| /
// sum |a|), top-1 agreement for classifier logits, cosine similarity (embeddings),
// and the first node where the two runs depart (diff's capture observer). A result
// beyond a declared threshold is a failure the CLI reports loudly (exit code 3).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/session.h"

namespace glassbox::diag {

// What counts as acceptable; each default with its reason.
struct AccuracyThresholds {
  // 0.99: one flip per 100 texts is tolerated (texts whose top two logits nearly tie flip
  // under any rounding change); the report lists every flipped text by index.
  double min_top1_agreement = 0.99;
  // 2e-2: bf16 keeps 8 significant bits (relative rounding 2^-9 per operand); logits of a
  // 12-layer encoder measured near 1e-2 of their largest magnitude.
  double max_rel_error = 2e-2;
  // 0.999: sentence-embedding retrieval ranks are stable above it (issue #17's goal for MiniLM).
  double min_cosine = 0.999;
  // A node "departs" when its normwise relative error exceeds this (first such node is named).
  double node_tolerance = 2e-2;
  // Decoders: the share of greedy steps whose token equals fp32's, counted up to the first step that differs
  // (after it the contexts differ). 0.9: a step where the top two logits nearly tie flips under any rounding
  // change and ends the agreement there; below 0.9 on prompts like yours, the candidate changes what is read.
  double min_token_agreement = 0.9;
};

// Decoders (generation::is_generation_model_dir): one prompt generated greedily in fp32 and in the candidate.
struct GenerationAccuracy {
  std::string prompt;
  int64_t steps = 0;             // tokens fp32 generated (a stop token may end it before the requested steps)
  int64_t agreed = 0;            // leading steps whose tokens are equal
  std::vector<double> rel_error; // per compared step (the agreed ones and the first that differs): max|b-a|/max|a|
};

struct OutputAccuracy {
  std::string name;
  int64_t inputs = 0;         // inputs compared
  double max_rel_error = 0;   // worst input's max |b - a| / max |a|
  double mean_rel_error = 0;  // sum |b - a| / sum |a| over all inputs
  double min_cosine = 1, mean_cosine = 1;
  bool classifier = false;    // logits: top-1 compared per row
  int64_t top1_rows = 0, top1_agree = 0;
  std::vector<int64_t> flipped;  // input index of rows whose top-1 differs (first 20)
  double sum_abs_diff = 0, sum_abs_ref = 0, sum_cosine = 0;  // running sums for the means
};

struct NodeDeparture {
  bool found = false;
  std::string node, op_type, tensor;
  double rel_error = 0;  // normwise, as above
};

struct AccuracyReport {
  std::string model;
  std::string reference = "fp32", candidate;  // precision names
  std::string inputs;                         // where the inputs came from
  AccuracyThresholds thresholds;
  std::vector<OutputAccuracy> outputs;
  NodeDeparture first_difference;  // first node whose output differs at all
  NodeDeparture first_departure;   // first node beyond thresholds.node_tolerance
  std::vector<std::string> lower_precision_ops;  // nodes on the lower-precision path (Session::op_decisions)
  std::vector<std::string> failures;  // thresholds not met, one line each
  std::vector<GenerationAccuracy> generation;  // a decoder's prompts (then `outputs` is empty)
  int64_t generation_steps = 0;                // the steps asked for per prompt
};

// Accumulates one input's outputs into the report's per-output rows.
void accumulate_output(OutputAccuracy& o, const Tensor& reference, const Tensor& candidate, int64_t input_index);
// Finishes the means and checks the thresholds (fills failures).
void finish_report(AccuracyReport& r);
// max |b - a| / max |a| of two float32 tensors of one shape: 0 when both are all zero, infinity when only the
// reference is, when a NaN appears on either side or when they cannot be compared (the reports' relative error).
double normwise_error(const Tensor& a, const Tensor& b);
// Three significant digits ("inf" for infinity), as the reports print their numbers.
std::string num(double v);
// The session's nodes that run in r.candidate (its op decisions), into r.lower_precision_ops.
void list_lower_precision_ops(const Session& s, AccuracyReport& r);

struct AccuracyRequest {
  std::string model;            // a model directory (texts) or an .onnx file (tensors)
  Precision candidate = Precision::kBf16;
  SessionOptions session;       // threads, opt level...; precision is set per run
  std::vector<std::string> texts;  // model directory: the texts (required)
  // Model file: --input NAME=FILE / --shape NAME=DxD as `bench`; `samples` generated inputs (seeds seed..).
  std::vector<std::string> input_args, shape_args;
  int64_t samples = 8;
  uint64_t seed = 0;
  AccuracyThresholds thresholds;
  // Decoder directories: greedy tokens per prompt (texts are the prompts). 32: enough steps for a rounding
  // change to reach a near-tie on ordinary prompts, short enough to run fp32 and the candidate on a CPU quickly.
  int64_t steps = 32;
};

// A decoder directory's prompts, greedy in fp32 and in the candidate (diag/generation_accuracy.cpp): fills r's
// generation rows, lower_precision_ops and failures.
Status measure_generation_accuracy(const AccuracyRequest& request, AccuracyReport& r);

Result<AccuracyReport> measure_accuracy(const AccuracyRequest& request);

std::string accuracy_to_text(const AccuracyReport& r);
nlohmann::ordered_json accuracy_to_json(const AccuracyReport& r);

}  // namespace glassbox::diag
