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
  // Per-dim element strides of each input in output coordinates (0 where broadcast): all[d * nk + k]. Flat
  // vectors: every elementwise op builds one walk per run.
  std::vector<int64_t> all(rank * nk, 0), running(nk, 1);
  for (size_t d = rank; d-- > 0;) {
    for (size_t k = 0; k < nk; ++k) {
      const Shape& s = inputs[k];
      const size_t off = rank - s.size();
      if (d < off) continue;
      const int64_t in_dim = s[d - off];
      if (in_dim != 1) {
        all[d * nk + k] = running[k];
        running[k] *= in_dim;
      }
    }
  }
  outer_dims_.reserve(rank);
  outer_strides_.reserve(rank * nk);
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;  // size-1 output dims contribute nothing
    const int64_t* here = all.data() + d * nk;
    if (!outer_dims_.empty()) {
      // Merge with the previous kept dim when every input is contiguous across both.
      int64_t* last = outer_strides_.data() + outer_strides_.size() - nk;
      bool merge = true;
      for (size_t k = 0; k < nk && merge; ++k) merge = last[k] == here[k] * out[d];
      if (merge) {
        outer_dims_.back() *= out[d];
        std::copy(here, here + nk, last);
        continue;
      }
    }
    outer_dims_.push_back(out[d]);
    outer_strides_.insert(outer_strides_.end(), here, here + nk);
  }
  inner_stride_.assign(nk, 0);
  if (!outer_dims_.empty()) {  // the innermost kept dim is the run
    run_length_ = outer_dims_.back();
    std::copy(outer_strides_.end() - static_cast<std::ptrdiff_t>(nk), outer_strides_.end(), inner_stride_.begin());
    outer_dims_.pop_back();
    outer_strides_.resize(outer_strides_.size() - nk);
  }
  for (int64_t d : out) run_length_ = d == 0 ? 0 : run_length_;
  num_runs_ = 1;
  for (int64_t d : outer_dims_) num_runs_ *= d;
  if (run_length_ == 0) num_runs_ = 0;
}

}  // namespace glassbox::ops
