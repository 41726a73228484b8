// `glassbox bench`: load time, first-run latency, latency percentiles, peak RSS,
// arena bytes, achieved GFLOP/s and a per-op-type profile. JSON is a contract
// (schema glassbox.bench/1, docs/diagnostics.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diag/inputs.h"
#include "glassbox/session.h"

namespace glassbox::diag {

struct BenchOptions {
  int repeat = 20;          // timed runs: enough for a stable p95 on a quiet machine
  int warmup = 3;           // untimed runs after the first: caches, plan, weight prepacking settle
  bool profile = true;      // one extra observed pass per repeat/... gives the per-op table
  int profile_runs = 3;     // observed runs averaged for the per-op table (never mixed into latencies)
  uint64_t seed = 0;        // for generated inputs
  bool check_numerics = false;  // timed runs carry the NaN/Inf checker of `run --check-numerics` (measures its cost)
  bool unpadded = false;    // runs use Session::run_unpadded(unpad): variable-length batches without padding compute
  UnpadOptions unpad;       // mask input, length multiple, sequences in parallel (used when unpadded)
};

struct OpTime {
  std::string op_type;
  double ms = 0;     // mean per run
  int64_t calls = 0; // per run
};

struct BenchResult {
  std::string model;
  SessionOptions session_options;
  std::vector<InputOrigin> inputs;
  double load_ms = 0;
  double first_run_ms = 0;
  int repeat = 0, warmup = 0;
  bool check_numerics = false;  // the timed runs carried the numerics checker
  bool unpadded = false;        // runs used run_unpadded(unpad)
  UnpadOptions unpad;
  std::vector<double> latencies_ms;  // sorted
  double p50 = 0, p95 = 0, p99 = 0, max = 0, min = 0, mean = 0;
  int64_t peak_rss_bytes = 0;
  int64_t arena_bytes = 0;
  int64_t peak_tensor_bytes = 0;
  double gflop = 0;  // per run: MatMul, Gemm, Conv, ConvTranspose, Einsum and fused variants
  double gflops_per_s = 0;
  std::vector<OpTime> profile;  // sorted by time desc (all op types; JSON/text show the top 10)
  std::vector<NamedTensor> outputs;  // of the last run (for --sweep comparisons)
  WeightsCacheReport weights_cache;  // SessionOptions::weights_cache: hit/miss/rebuilt (after the file was written)
};

// Loads the model (timed), prepares inputs, runs first/warmup/repeat, then profiles.
Result<BenchResult> bench_model(const std::string& model, const SessionOptions& options,
                                const std::vector<std::string>& input_args, const std::vector<std::string>& shape_args,
                                const BenchOptions& bench);

// FLOPs of one node from its input/output shapes (0 for ops not counted).
double node_flops(const std::string& op_type, std::span<const Tensor* const> inputs,
                  std::span<const Tensor* const> outputs);

// Peak resident set size of this process (VmHWM), bytes.
int64_t peak_rss_bytes();

nlohmann::ordered_json bench_to_json(const BenchResult& r);
std::string bench_to_text(const BenchResult& r);

// Max abs / rel difference and cosine similarity between two float tensors (same shape).
struct TensorDiff {
  double max_abs = 0;
  double max_rel = 0;
  double cosine = 1;
  bool comparable = true;  // false on dtype/shape mismatch
  int64_t violations = 0;  // elements with |a-b| > atol + rtol*|b| (NaN vs number counts)
  std::string note;
};
TensorDiff compare_tensors(const Tensor& a, const Tensor& b, double rtol = 0, double atol = 0);

// The element loop behind compare_tensors (diff, bench) and `glassbox accuracy`'s
// normwise errors: b against a, same dtype and shape, values read as double. Elements
// whose |a - b| is NaN are counted, not summed.
struct ElementStats {
  double max_abs = 0, max_rel = 0;  // max |a - b|; max |a - b| / max(|a|, |b|)
  double max_ref = 0;               // max |a|
  double sum_abs = 0, sum_ref = 0;  // sum |a - b|; sum |a|
  double dot = 0, norm_a = 0, norm_b = 0;
  int64_t violations = 0;      // |a - b| > atol + rtol |b|, or a NaN against a number
  int64_t undefined = 0;       // |a - b| is NaN: NaN on either side, or infinities of one sign
  int64_t nan_mismatches = 0;  // of those, where a != b and not both NaN
};
ElementStats element_stats(const Tensor& a, const Tensor& b, double rtol = 0, double atol = 0);

}  // namespace glassbox::diag
