// Session::run_unpadded: a right-padded batch run sequence by sequence on the real
// lengths (no compute on padding), outputs scattered / stacked back into batch form.
// Why per sequence and not packed tokens: every op then sees an ordinary batch-1
// graph (no special kernels, no graph rewrite), and the per-length plans are the
// session's ordinary plan cache. Design and measurements: docs/runtime.md (unpadded runs).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <optional>

#include "glassbox/session.h"
#include "runtime/session_internal.h"

namespace glassbox {
namespace {

const char* kFix = "pad on the right (ones, then zeros: tokenizer padding side 'right'), or use Session::run()";

// Real length of every row: ones, then zeros, at least one 1.
template <class T>
Status row_lengths(const Tensor& mask, const std::string& name, std::vector<int64_t>& lengths) {
  const int64_t rows = mask.shape()[0], cols = mask.shape()[1];
  const T* p = mask.data<T>();
  for (int64_t b = 0; b < rows; ++b) {
    const T* row = p + b * cols;
    int64_t n = 0;
    while (n < cols && row[n] == T(1)) ++n;
    for (int64_t j = n; j < cols; ++j) {
      if (row[j] == T(0)) continue;
      const std::string at = "mask input '" + name + "' row " + std::to_string(b) + " position " + std::to_string(j);
      if (row[j] == T(1))
        return make_error(ErrorCode::kInvalidArgument,
                          at + " is a real token after padding at position " + std::to_string(n) +
                              " (left padding or a hole): run_unpadded needs right padding",
                          {}, kFix);
      return make_error(ErrorCode::kInvalidArgument, at + " is neither 0 nor 1", {}, kFix);
    }
    if (n == 0)
      return make_error(ErrorCode::kInvalidArgument,
                        "mask input '" + name + "' row " + std::to_string(b) + " has no real token", {},
                        "drop empty rows from the batch, or use Session::run()");
    lengths[b] = n;
  }
  return {};
}

Status mask_lengths(const Tensor& mask, const std::string& name, std::vector<int64_t>& lengths) {
  switch (mask.dtype()) {
    case DataType::kInt64: return row_lengths<int64_t>(mask, name, lengths);
    case DataType::kInt32: return row_lengths<int32_t>(mask, name, lengths);
    case DataType::kBool: return row_lengths<bool>(mask, name, lengths);
    case DataType::kFloat32: return row_lengths<float>(mask, name, lengths);
    default:
      return make_error(ErrorCode::kUnsupported,
                        "mask input '" + name + "' has dtype " + dtype_name(mask.dtype()) +
                            "; run_unpadded reads int64, int32, bool or float32 masks");
  }
}

int64_t product(const Shape& s, size_t from) {
  int64_t p = 1;
  for (size_t d = from; d < s.size(); ++d) p *= s[d];
  return p;
}

// The batch as the mask says: each row's real length and the length it runs at (rounded up to the multiple).
struct RowPlan {
  int64_t batch = 0, seq = 0;
  std::vector<int64_t> len, cut;
};

Result<RowPlan> plan_rows(const std::vector<NamedTensor>& inputs, const UnpadOptions& unpad) {
  if (unpad.length_multiple < 1)
    return make_error(ErrorCode::kInvalidArgument,
                      "UnpadOptions::length_multiple is " + std::to_string(unpad.length_multiple) + ", must be >= 1");
  const NamedTensor* mask = nullptr;
  for (const auto& nt : inputs)
    if (nt.name == unpad.mask_input) mask = &nt;
  if (!mask)
    return make_error(ErrorCode::kInvalidArgument, "mask input '" + unpad.mask_input + "' is not among the given inputs",
                      {}, "set UnpadOptions::mask_input to the model's [batch, sequence] 0/1 attention mask");
  const Tensor& m = mask->tensor;
  if (m.rank() != 2 || (m.numel() > 0 && !m.raw()))
    return make_error(ErrorCode::kInvalidArgument,
                      "mask input '" + mask->name + "' is " + dtype_name(m.dtype()) + shape_to_string(m.shape()) +
                          ", run_unpadded needs a [batch, sequence] tensor with data");
  RowPlan plan;
  plan.batch = m.shape()[0];
  plan.seq = m.shape()[1];
  if (plan.batch == 0 || plan.seq == 0)
    return make_error(ErrorCode::kInvalidArgument, "mask input '" + mask->name + "' is empty " + shape_to_string(m.shape()));
  plan.len.resize(plan.batch);
  plan.cut.resize(plan.batch);
  GB_RETURN_IF_ERROR(mask_lengths(m, mask->name, plan.len));
  for (int64_t b = 0; b < plan.batch; ++b)
    plan.cut[b] = std::min(plan.seq, (plan.len[b] + unpad.length_multiple - 1) / unpad.length_multiple * unpad.length_multiple);
  return plan;
}

// Per-sequence inputs: zero-copy views of the rows ([batch, seq, ...] cut to the row's length, [batch, ...] one
// row); anything else (scalars, weights fed as inputs) goes to every sequence as is.
Result<std::vector<std::vector<NamedTensor>>> split_rows(const std::vector<NamedTensor>& inputs, const RowPlan& plan) {
  std::vector<std::vector<NamedTensor>> rows(plan.batch);
  for (const auto& nt : inputs) {
    const Tensor& t = nt.tensor;
    if (t.numel() > 0 && !t.raw())
      return make_error(ErrorCode::kInvalidArgument, "input '" + nt.name + "' has no data");
    const bool tokens = t.rank() >= 2 && t.shape()[0] == plan.batch && t.shape()[1] == plan.seq;
    const bool per_row = !tokens && t.rank() >= 1 && t.shape()[0] == plan.batch;
    const size_t esize = dtype_size(t.dtype());
    for (int64_t b = 0; b < plan.batch; ++b) {
      if (!tokens && !per_row) {
        rows[b].push_back(nt);
        continue;
      }
      Shape shape = t.shape();
      shape[0] = 1;
      size_t offset = t.byte_offset();
      if (tokens) {
        shape[1] = plan.cut[b];
        offset += static_cast<size_t>(b * plan.seq * product(t.shape(), 2)) * esize;
      } else {
        offset += static_cast<size_t>(b * product(t.shape(), 1)) * esize;
      }
      GB_ASSIGN_OR_RETURN(Tensor v, Tensor::view(t.dtype(), std::move(shape), t.buffer(), offset));
      rows[b].push_back({nt.name, std::move(v)});
    }
  }
  return rows;
}

using SequenceResults = std::vector<std::optional<Result<std::vector<NamedTensor>>>>;

// Output i of every sequence back in batch form: [1, cut, ...] -> [batch, seq, ...] (0 at padding), or one
// shape [1, ...] for all -> [batch, ...].
Result<Tensor> assemble_output(const TensorSpec& spec, size_t i, const SequenceResults& results, const RowPlan& plan) {
  const int64_t batch = plan.batch;
  auto piece = [&](int64_t b) -> const Tensor& { return results[b]->value()[i].tensor; };
  const std::string& name = spec.name;
  const Tensor& first = piece(0);
  for (int64_t b = 0; b < batch; ++b)
    if (piece(b).rank() < 1 || piece(b).shape()[0] != 1 || piece(b).dtype() != first.dtype() ||
        (piece(b).numel() > 0 && !piece(b).raw()))
      return make_error(ErrorCode::kUnsupported,
                        "output '" + name + "' is " + dtype_name(piece(b).dtype()) + shape_to_string(piece(b).shape()) +
                            " for sequence " + std::to_string(b) + "; run_unpadded assembles outputs whose first dim is the batch",
                        {}, "use Session::run() for this model");
  // A declared fixed dim 1 (logits [batch, 2], pooled [batch, 768]) is never the sequence.
  const bool fixed_dim1 = spec.has_shape && spec.dims.size() >= 2 && spec.dims[1] >= 0;
  bool tokens = !fixed_dim1 && first.rank() >= 2;
  bool same = true;
  for (int64_t b = 0; b < batch; ++b) {
    const Shape& s = piece(b).shape();
    if (tokens && (s.size() != first.shape().size() || s[1] != plan.cut[b] ||
                   !std::equal(s.begin() + 2, s.end(), first.shape().begin() + 2)))
      tokens = false;
    if (s != first.shape()) same = false;
  }
  if (!tokens && !same)
    return make_error(ErrorCode::kUnsupported,
                      "output '" + name + "' is " + shape_to_string(first.shape()) + " for sequence 0 (length " +
                          std::to_string(plan.cut[0]) + ") but " + shape_to_string(piece(batch - 1).shape()) +
                          " for sequence " + std::to_string(batch - 1) + " (length " + std::to_string(plan.cut[batch - 1]) +
                          "): neither [1, length, ...] nor one shape for all sequences",
                      {}, "use Session::run() for this model");
  Shape shape = first.shape();
  shape[0] = batch;
  if (tokens) shape[1] = plan.seq;
  GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(first.dtype(), shape));  // zero-filled
  const size_t esize = dtype_size(first.dtype());
  char* dst = static_cast<char*>(t.mutable_raw());
  for (int64_t b = 0; b < batch; ++b) {
    const Tensor& p = piece(b);
    if (tokens) {
      const size_t row = static_cast<size_t>(product(p.shape(), 2)) * esize;
      if (plan.len[b] > 0 && row > 0)
        std::memcpy(dst + static_cast<size_t>(b * plan.seq) * row, p.raw(), static_cast<size_t>(plan.len[b]) * row);
    } else if (p.nbytes() > 0) {
      std::memcpy(dst + static_cast<size_t>(b) * p.nbytes(), p.raw(), p.nbytes());
    }
  }
  return t;
}

// The batch's stats: the largest arena and peak of one sequence, nodes summed.
RunStats sum_stats(const std::vector<RunStats>& row_stats, std::chrono::steady_clock::time_point t0) {
  RunStats stats;
  stats.used_memory_plan = true;
  for (const auto& s : row_stats) {
    stats.arena_bytes = std::max(stats.arena_bytes, s.arena_bytes);
    stats.peak_bytes = std::max(stats.peak_bytes, s.peak_bytes);
    stats.used_memory_plan = stats.used_memory_plan && s.used_memory_plan;
    stats.nodes_executed += s.nodes_executed;
  }
  stats.elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
  return stats;
}

}  // namespace

Result<std::vector<NamedTensor>> Session::run_unpadded(const std::vector<NamedTensor>& inputs, const UnpadOptions& unpad,
                                                       RunStats* stats) const {
  const auto t0 = std::chrono::steady_clock::now();
  GB_ASSIGN_OR_RETURN(const RowPlan plan, plan_rows(inputs, unpad));
  GB_ASSIGN_OR_RETURN(auto rows, split_rows(inputs, plan));
  const int64_t batch = plan.batch;

  // Longest first: with sequences in parallel, the last one to start is a short one.
  std::vector<int64_t> order(batch);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return plan.cut[a] > plan.cut[b]; });
  SequenceResults results(batch);
  std::vector<RunStats> row_stats(batch);
  ThreadPool& pool = runtime::session_pool(*impl_);
  // An observer is not promised to be thread-safe: with one attached, one sequence at a time.
  if (unpad.sequences_in_parallel && pool.size() > 1 && batch > 1 && !runtime::has_observer(*impl_)) {
    std::atomic<int64_t> next{0};
    pool.parallel_for(pool.size(), 1, [&](int64_t, int64_t) {
      ThreadPool one(1);  // no threads: every op of this sequence runs on the claiming thread
      for (int64_t k; (k = next.fetch_add(1)) < batch;) {
        const int64_t b = order[k];
        results[b] = runtime::run_tensors_on(*impl_, rows[b], one, &row_stats[b]);
      }
    });
  } else {
    for (int64_t b : order) {
      results[b] = runtime::run_tensors_on(*impl_, rows[b], pool, &row_stats[b]);
      if (!results[b]->ok()) break;
    }
  }
  for (int64_t b = 0; b < batch; ++b)
    if (results[b] && !results[b]->ok())
      return std::move(*results[b]).take_error().with_where("run_unpadded: sequence " + std::to_string(b) + " (length " +
                                                            std::to_string(plan.len[b]) + ")");
  std::vector<NamedTensor> out;
  const auto& specs = outputs();
  for (size_t i = 0; i < specs.size(); ++i) {
    GB_ASSIGN_OR_RETURN(Tensor t, assemble_output(specs[i], i, results, plan));
    out.push_back({specs[i].name, std::move(t)});
  }
  if (stats) *stats = sum_stats(row_stats, t0);
  return out;
}

}  // namespace glassbox
