#include "ops/broadcast.h"

#include <algorithm>

namespace glassbox::ops {

Result<Shape> broadcast_shapes(std::span<const Shape> shapes) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[off + i];
      const int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string all;
      for (const Shape& t : shapes) all += (all.empty() ? "" : " and ") + shape_to_string(t);
      return make_error(ErrorCode::kInvalidArgument, "shapes " + all + " cannot be broadcast together (dimension " +
                                                         std::to_string(off + i) + ": " + std::to_string(o) +
                                                         " vs " + std::to_string(d) + ")");
    }
  }
  return out;
}

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const Shape both[] = {a, b};
  return broadcast_shapes(std::span<const Shape>(both, 2));
}

BroadcastWalk::BroadcastWalk(const Shape& out, std::span<const Shape> inputs) {
  const size_t nk = inputs.size();
  const size_t rank = out.size();
  // Per-dim element strides of each input in output coordinates (0 where broadcast).
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides;  // [dim][input]
  std::vector<int64_t> running(nk, 1);
  std::vector<std::vector<int64_t>> all(rank, std::vector<int64_t>(nk, 0));
  for (size_t d = rank; d-- > 0;) {
    for (size_t k = 0; k < nk; ++k) {
      const Shape& s = inputs[k];
      const size_t off = rank - s.size();
      if (d < off) continue;
      const int64_t in_dim = s[d - off];
      if (in_dim != 1) {
        all[d][k] = running[k];
        running[k] *= in_dim;
      }
    }
  }
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;  // size-1 output dims contribute nothing
    if (!dims.empty()) {
      // Merge with the previous kept dim when every input is contiguous across both.
      bool merge = true;
      for (size_t k = 0; k < nk && merge; ++k) merge = strides.back()[k] == all[d][k] * out[d];
      if (merge) {
        dims.back() *= out[d];
        strides.back() = all[d];
        continue;
      }
    }
    dims.push_back(out[d]);
    strides.push_back(all[d]);
  }
  inner_stride_.assign(nk, 0);
  if (!dims.empty()) {
    run_length_ = dims.back();
    inner_stride_ = strides.back();
    dims.pop_back();
    strides.pop_back();
  }
  for (int64_t d : out) run_length_ = d == 0 ? 0 : run_length_;
  outer_dims_ = dims;
  num_runs_ = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    num_runs_ *= dims[d];
    for (size_t k = 0; k < nk; ++k) outer_strides_.push_back(strides[d][k]);
  }
  if (run_length_ == 0) num_runs_ = 0;
}

}  // namespace glassbox::ops
