#include "diag/bench.h"

#include "diag/explain.h"
#include "glassbox/numerics_checker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace glassbox::diag {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double pos = p * (sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos)), hi = static_cast<size_t>(std::ceil(pos));
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

double to_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat32: return t.data<float>()[i];
    case DataType::kFloat64: return t.data<double>()[i];
    case DataType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DataType::kInt32: return t.data<int32_t>()[i];
    case DataType::kInt8: return t.data<int8_t>()[i];
    case DataType::kUInt8: return t.data<uint8_t>()[i];
    case DataType::kBool: return t.data<bool>()[i] ? 1 : 0;
    default: return std::nan("");
  }
}

}  // namespace

int64_t peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return 0;
}

double node_flops(const std::string& op, std::span<const Tensor* const> in, std::span<const Tensor* const> out) {
  auto numel = [](const Tensor* t) { return t ? static_cast<double>(t->numel()) : 0.0; };
  if (in.empty() || out.empty() || !in[0] || !out[0]) return 0;
  const Tensor& a = *in[0];
  if (op == "MatMul" || op == "FusedMatMul" || op == "MatMulInteger" || op == "MatMulIntegerToFloat") {
    if (a.rank() < 1) return 0;
    return 2.0 * numel(out[0]) * static_cast<double>(a.shape().back());
  }
  if (op == "Gemm" || op == "FusedGemm") {
    // A is [M,K] or [K,M] (transA); output is [M,N], so K = numel(A) / M either way.
    if (out[0]->rank() != 2 || out[0]->shape()[0] == 0) return 0;
    return 2.0 * numel(out[0]) * numel(&a) / static_cast<double>(out[0]->shape()[0]);
  }
  if (op == "Conv" || op == "FusedConv") {
    if (in.size() < 2 || !in[1]) return 0;
    const Tensor& w = *in[1];  // [M, C/group, k...]
    double per_out = 1;
    for (int64_t d = 1; d < w.rank(); ++d) per_out *= static_cast<double>(w.shape()[d]);
    return 2.0 * numel(out[0]) * per_out;
  }
  if (op == "ConvTranspose") {
    if (in.size() < 2 || !in[1]) return 0;
    const Tensor& w = *in[1];  // [C, M/group, k...]
    double per_in = 1;
    for (int64_t d = 1; d < w.rank(); ++d) per_in *= static_cast<double>(w.shape()[d]);
    return 2.0 * numel(in[0]) * per_in;
  }
  if (op == "Attention" || op == "MultiHeadAttention") {
    // Q.K^T and P.V: 4 * batch * heads * s * s * head_dim = 4 * s * numel(output)
    if (out[0]->rank() < 2) return 0;
    return 4.0 * numel(out[0]) * static_cast<double>(out[0]->shape()[out[0]->rank() - 2]);
  }
  return 0;
}

ElementStats element_stats(const Tensor& a, const Tensor& b, double rtol, double atol) {
  ElementStats s;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = to_double(a, i), y = to_double(b, i);
    const double diff = std::fabs(x - y);
    if (std::isnan(diff)) {
      s.undefined++;
      if (x != y && !(std::isnan(x) && std::isnan(y))) {  // one side NaN, or inf - inf of different signs
        s.nan_mismatches++;
        s.violations++;
      }
      continue;
    }
    if (diff > atol + rtol * std::fabs(y)) s.violations++;
    s.max_abs = std::max(s.max_abs, diff);
    const double denom = std::max(std::fabs(x), std::fabs(y));
    if (denom > 0) s.max_rel = std::max(s.max_rel, diff / denom);
    s.max_ref = std::max(s.max_ref, std::fabs(x));
    s.sum_abs += diff;
    s.sum_ref += std::fabs(x);
    s.dot += x * y;
    s.norm_a += x * x;
    s.norm_b += y * y;
  }
  return s;
}

TensorDiff compare_tensors(const Tensor& a, const Tensor& b, double rtol, double atol) {
  TensorDiff d;
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    d.comparable = false;
    d.note = std::string(dtype_name(a.dtype())) + shape_to_string(a.shape()) + " vs " + dtype_name(b.dtype()) +
             shape_to_string(b.shape());
    return d;
  }
  const ElementStats s = element_stats(a, b, rtol, atol);
  d.violations = s.violations;
  d.max_abs = s.nan_mismatches ? INFINITY : s.max_abs;
  d.max_rel = s.nan_mismatches ? INFINITY : s.max_rel;
  d.cosine = (s.norm_a > 0 && s.norm_b > 0) ? s.dot / std::sqrt(s.norm_a * s.norm_b) : (s.norm_a == s.norm_b ? 1.0 : 0.0);
  return d;
}

Result<BenchResult> bench_model(const std::string& model, const SessionOptions& options,
                                const std::vector<std::string>& input_args, const std::vector<std::string>& shape_args,
                                const BenchOptions& bench) {
  BenchResult r;
  r.model = model;
  auto t0 = Clock::now();
  GB_ASSIGN_OR_RETURN(Session session, Session::load(model, options));
  r.load_ms = ms_since(t0);
  r.session_options = session.options();
  GB_ASSIGN_OR_RETURN(auto inputs, prepare_inputs(session, input_args, shape_args, bench.seed, &r.inputs));

  auto run = [&](RunStats* st) {
    return bench.unpadded ? session.run_unpadded(inputs, bench.unpad, st) : session.run(inputs, st);
  };
  r.unpadded = bench.unpadded;
  r.unpad = bench.unpad;
  RunStats stats;
  t0 = Clock::now();
  GB_ASSIGN_OR_RETURN(auto first, run(&stats));
  r.first_run_ms = ms_since(t0);
  r.check_numerics = bench.check_numerics;
  if (bench.check_numerics) session.set_observer(runtime::make_numerics_checker());
  for (int i = 0; i < bench.warmup; ++i) GB_RETURN_IF_ERROR(run(&stats).status());
  r.repeat = bench.repeat;
  r.warmup = bench.warmup;
  for (int i = 0; i < bench.repeat; ++i) {
    t0 = Clock::now();
    auto outs = run(&stats);
    r.latencies_ms.push_back(ms_since(t0));
    if (!outs.ok()) return std::move(outs).take_error();
    if (i + 1 == bench.repeat) r.outputs = std::move(outs).value();
  }
  if (bench.repeat == 0) r.outputs = std::move(first);
  r.arena_bytes = stats.arena_bytes;
  r.peak_tensor_bytes = stats.peak_bytes;
  std::sort(r.latencies_ms.begin(), r.latencies_ms.end());
  if (!r.latencies_ms.empty()) {
    r.p50 = percentile(r.latencies_ms, 0.50);
    r.p95 = percentile(r.latencies_ms, 0.95);
    r.p99 = percentile(r.latencies_ms, 0.99);
    r.min = r.latencies_ms.front();
    r.max = r.latencies_ms.back();
    double sum = 0;
    for (double v : r.latencies_ms) sum += v;
    r.mean = sum / r.latencies_ms.size();
  }

  session.set_observer(nullptr);
  // Profile in separate observed runs so observer cost never leaks into the latencies above.
  std::map<std::string, OpTime> per_op;
  double flops = 0;
  const int runs = bench.profile ? std::max(1, bench.profile_runs) : 1;
  session.set_observer([&](const NodeEvent& e) -> Status {
    auto& t = per_op[e.op_type];
    t.op_type = e.op_type;
    t.ms += std::chrono::duration<double, std::milli>(e.elapsed).count();
    t.calls += 1;
    flops += node_flops(e.op_type, e.inputs, e.outputs);
    return {};
  });
  for (int i = 0; i < runs; ++i) GB_RETURN_IF_ERROR(run(nullptr).status());
  session.set_observer(nullptr);
  r.gflop = flops / runs / 1e9;
  if (r.p50 > 0) r.gflops_per_s = r.gflop / (r.p50 / 1e3);
  for (auto& [k, t] : per_op) {
    t.ms /= runs;
    t.calls /= runs;
    r.profile.push_back(t);
  }
  std::sort(r.profile.begin(), r.profile.end(), [](const OpTime& a, const OpTime& b) { return a.ms > b.ms; });
  if (!bench.profile) r.profile.clear();
  r.peak_rss_bytes = peak_rss_bytes();
  r.weights_cache = session.weights_cache_report(/*wait_for_write=*/true);
  return r;
}

nlohmann::ordered_json bench_to_json(const BenchResult& r) {
  nlohmann::ordered_json j;
  j["schema"] = "glassbox.bench/1";
  j["model"] = r.model;
  j["threads"] = r.session_options.threads;
  j["opt_level"] = r.session_options.opt_level;
  auto inputs = nlohmann::ordered_json::array();
  for (const auto& o : r.inputs)
    inputs.push_back({{"name", o.name}, {"dtype", dtype_name(o.dtype)}, {"shape", o.shape}, {"source", o.source}});
  j["inputs"] = inputs;
  j["generated_fill_rule"] = generated_fill_rule();
  j["load_ms"] = r.load_ms;
  j["first_run_ms"] = r.first_run_ms;
  j["cold_start_ms"] = r.load_ms + r.first_run_ms;
  j["warmup"] = r.warmup;
  j["repeat"] = r.repeat;
  j["check_numerics"] = r.check_numerics;
  if (r.unpadded)
    j["unpadded"] = {{"mask_input", r.unpad.mask_input}, {"length_multiple", r.unpad.length_multiple},
                     {"sequences_in_parallel", r.unpad.sequences_in_parallel}};
  else
    j["unpadded"] = nullptr;
  j["latency_ms"] = {{"p50", r.p50}, {"p95", r.p95}, {"p99", r.p99}, {"max", r.max}, {"min", r.min}, {"mean", r.mean}};
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  j["arena_bytes"] = r.arena_bytes;
  j["peak_tensor_bytes"] = r.peak_tensor_bytes;
  j["gflop_per_run"] = r.gflop;
  j["gflops_per_s"] = r.gflops_per_s;
  auto prof = nlohmann::ordered_json::array();
  double total = 0;
  for (const auto& p : r.profile) total += p.ms;
  for (size_t i = 0; i < r.profile.size() && i < 10; ++i)
    prof.push_back({{"op_type", r.profile[i].op_type}, {"ms", r.profile[i].ms}, {"calls", r.profile[i].calls},
                    {"share", total > 0 ? r.profile[i].ms / total : 0.0}});
  j["profile_top10"] = prof;
  if (r.weights_cache.state != "off" || !r.weights_cache.reason.empty()) j["weights_cache"] = weights_cache_to_json(r.weights_cache);
  return j;
}

std::string bench_to_text(const BenchResult& r) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(2);
  s << "model        " << r.model << "\nthreads      " << r.session_options.threads << "   opt-level "
    << r.session_options.opt_level << "\ninputs      ";
  for (const auto& o : r.inputs) s << " " << o.name << "=" << dtype_name(o.dtype) << shape_to_string(o.shape) << "(" << o.source << ")";
  s << "\nload         " << r.load_ms << " ms\nfirst run    " << r.first_run_ms << " ms\n";
  s << "latency      p50 " << r.p50 << "  p95 " << r.p95 << "  p99 " << r.p99 << "  max " << r.max << " ms  (" << r.repeat
    << " runs after " << r.warmup << " warm-up" << (r.check_numerics ? ", with the numerics checker" : "") << ")\n";
  if (r.unpadded)
    s << "unpadded     mask " << r.unpad.mask_input << ", length multiple " << r.unpad.length_multiple
      << (r.unpad.sequences_in_parallel ? ", sequences in parallel (one thread each)" : ", one sequence at a time")
      << "\n";
  s << "memory       peak RSS " << r.peak_rss_bytes / (1 << 20) << " MiB, arena " << r.arena_bytes / (1 << 20)
    << " MiB, peak tensors " << r.peak_tensor_bytes / (1 << 20) << " MiB\n";
  s << "compute      " << r.gflop << " GFLOP/run, " << r.gflops_per_s << " GFLOP/s at p50\n";
  if (!r.profile.empty()) {
    double total = 0;
    for (const auto& p : r.profile) total += p.ms;
    s << "profile (top 10 op types, mean of observed runs)\n";
    for (size_t i = 0; i < r.profile.size() && i < 10; ++i) {
      std::string name = r.profile[i].op_type;
      name.resize(std::max<size_t>(name.size() + 1, 22), ' ');  // a space after long names too
      s << "  " << name << r.profile[i].ms << " ms  " << 100 * r.profile[i].ms / total << "%  " << r.profile[i].calls
        << " calls\n";
    }
  }
  return s.str();
}

}  // namespace glassbox::diag
