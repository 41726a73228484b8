// Small helpers shared by the data-movement and NN op files: reading integer
// tensors given as inputs (shapes, axes, pads), axis normalization, errors that
// name the node, and attribute getters with spec defaults.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "ops/attr_util.h"
#include "ops/op.h"

namespace glassbox::ops::nn {

inline Error node_error(const ComputeContext& ctx, ErrorCode code, std::string what, std::string fix = {}) {
  return make_error(code, std::move(what), "node '" + ctx.node_name() + "'", std::move(fix));
}

// The input i, or an error when it is absent.
inline Result<const Tensor*> need_input(const ComputeContext& ctx, size_t i, const char* what) {
  const Tensor* t = ctx.input(i);
  if (!t || !t->defined())
    return node_error(ctx, ErrorCode::kInvalidArgument,
                      "required input " + std::to_string(i) + " (" + what + ") is missing");
  return t;
}

// Reads an int64/int32 tensor (any rank) into a vector.
inline Result<std::vector<int64_t>> read_ints(const ComputeContext& ctx, const Tensor& t, const char* what) {
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  if (t.dtype() == DataType::kInt64) {
    if (t.numel()) std::memcpy(out.data(), t.raw(), t.nbytes());
  } else if (t.dtype() == DataType::kInt32) {
    const int32_t* p = t.data<int32_t>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  } else {
    return node_error(ctx, ErrorCode::kInvalidArgument,
                      std::string(what) + " must be int64 or int32, got " + dtype_name(t.dtype()));
  }
  return out;
}

// Validates indices against a dim of size n: [-n, n-1] (negative counts from the
// back) and normalizes them to [0, n). Anything else is an error naming the index.
inline Status normalize_indices(const ComputeContext& ctx, std::vector<int64_t>& idx, int64_t n, const std::string& what) {
  for (size_t j = 0; j < idx.size(); ++j) {
    if (idx[j] < -n || idx[j] >= n)
      return node_error(ctx, ErrorCode::kInvalidArgument,
                        "index " + std::to_string(idx[j]) + " (indices element " + std::to_string(j) +
                            ") is out of range for " + what + " of size " + std::to_string(n),
                        "indices must lie in [" + std::to_string(-n) + ", " + std::to_string(n - 1) + "]");
    if (idx[j] < 0) idx[j] += n;
  }
  return Status::ok_status();
}

// Maps axis in [-rank, rank-1] to [0, rank-1].
inline Result<int64_t> norm_axis(const ComputeContext* ctx, int64_t axis, int64_t rank, const char* what = "axis") {
  if (axis < -rank || axis >= rank) {
    std::string msg = std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                      std::to_string(rank) + " (valid: [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) +
                      "])";
    return ctx ? node_error(*ctx, ErrorCode::kInvalidArgument, msg) : make_error(ErrorCode::kInvalidModel, msg);
  }
  return axis < 0 ? axis + rank : axis;
}

// Attribute lists with a default (attr_util.h's attr_ints says "absent" with nullopt).
inline Result<std::vector<int64_t>> attr_ints_or(const graph::Node& n, const char* name,
                                                 std::vector<int64_t> dflt = {}) {
  GB_ASSIGN_OR_RETURN(auto v, attr_ints(n, name));
  return v ? *v : dflt;
}
inline Result<std::vector<float>> attr_floats_or(const graph::Node& n, const char* name, std::vector<float> dflt = {}) {
  GB_ASSIGN_OR_RETURN(auto v, attr_floats(n, name));
  return v ? *v : dflt;
}
inline bool has_attr(const graph::Node& n, const char* name) { return n.attr(name) != nullptr; }

// Data movement ops copy bytes; these element sizes cover every numeric ONNX type.
inline Status check_movable(const ComputeContext& ctx, const Tensor& t) {
  const size_t s = dtype_size(t.dtype());
  if (s == 1 || s == 2 || s == 4 || s == 8 || s == 16) return Status::ok_status();
  return node_error(ctx, ErrorCode::kUnsupported, std::string("dtype ") + dtype_name(t.dtype()) + " is not supported");
}

inline Status need_float32(const ComputeContext& ctx, const Tensor& t, const char* what) {
  if (t.dtype() == DataType::kFloat32) return Status::ok_status();
  return node_error(ctx, ErrorCode::kUnsupported,
                    std::string(what) + " has dtype " + dtype_name(t.dtype()) + "; this op supports float32 only",
                    "cast the model to float32");
}

}  // namespace glassbox::ops::nn
