// Shared by the control-flow ops (If, Loop, Scan): the body runs through
// ComputeContext::run_subgraph; these helpers move whole tensors and slices
// along one axis between body values and node outputs. Byte copies: any
// fixed-size dtype (string tensors are refused).
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "ops/attr_util.h"
#include "ops/elementwise.h"

namespace glassbox::ops::control_flow {

// The graph attribute `name` of the node, or an invalid-model error.
inline Result<const graph::Graph*> graph_attr(const graph::Node& node, const std::string& name) {
  const graph::Attribute* a = node.attr(name);
  if (!a) return make_error(ErrorCode::kInvalidModel, "required graph attribute '" + name + "' is missing");
  if (a->type != graph::AttrType::kGraph || !a->g) return attr_type_error(*a, graph::AttrType::kGraph);
  return a->g.get();
}

// What a body output is declared as: used for the shape of a scan output no iteration produced.
struct DeclaredValue {
  DataType dtype = DataType::kUndefined;
  Shape dims;          // valid when known
  bool known = false;  // every dim known
};

inline DeclaredValue declared(const graph::ValueInfo& vi) {
  DeclaredValue d;
  d.dtype = vi.dtype;
  d.known = vi.has_shape;
  for (const auto& dim : vi.dims) {
    d.known = d.known && dim.known();
    d.dims.push_back(dim.known() ? dim.value : 0);
  }
  return d;
}

inline Status need_fixed_size(const ComputeContext& ctx, const Tensor& t, const std::string& what) {
  if (dtype_size(t.dtype()) == 0)
    return op_error(ctx, ErrorCode::kUnsupported, what + " has dtype " + dtype_name(t.dtype()) + ", not supported");
  return {};
}

// Output i = a copy of t.
inline Status set_output(ComputeContext& ctx, size_t i, const Tensor& t) {
  GB_RETURN_IF_ERROR(need_fixed_size(ctx, t, "output " + std::to_string(i)));
  GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(i, t.dtype(), t.shape()));
  if (t.nbytes()) std::memcpy(y->mutable_raw(), t.raw(), t.nbytes());
  return {};
}

// outer = product of dims before axis, inner = product after it (in elements).
inline void split_at(const Shape& s, int64_t axis, int64_t& outer, int64_t& inner) {
  outer = inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (d < axis) outer *= s[d];
    if (d > axis) inner *= s[d];
  }
}

// Shape of x without dim `axis`.
inline Shape drop_dim(const Shape& s, int64_t axis) {
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d)
    if (d != axis) out.push_back(s[d]);
  return out;
}

// s with `len` inserted at `axis`.
inline Shape insert_dim(Shape s, int64_t axis, int64_t len) {
  s.insert(s.begin() + axis, len);
  return s;
}

// out (x without `axis`) = x[..., idx, ...] along axis. Shapes are the caller's to check.
inline void copy_slice(const Tensor& x, int64_t axis, int64_t idx, Tensor& out) {
  int64_t outer, inner;
  split_at(x.shape(), axis, outer, inner);
  const int64_t len = x.shape()[axis];
  const size_t es = dtype_size(x.dtype()), row = static_cast<size_t>(inner) * es;
  const char* src = static_cast<const char*>(x.raw());
  char* dst = static_cast<char*>(out.mutable_raw());
  if (row == 0) return;
  for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * row, src + (o * len + idx) * row, row);
}

// out[..., idx, ...] along axis = part (out without `axis`).
inline void place_slice(const Tensor& part, int64_t axis, int64_t idx, Tensor& out) {
  int64_t outer, inner;
  split_at(out.shape(), axis, outer, inner);
  const int64_t len = out.shape()[axis];
  const size_t es = dtype_size(out.dtype()), row = static_cast<size_t>(inner) * es;
  const char* src = static_cast<const char*>(part.raw());
  char* dst = static_cast<char*>(out.mutable_raw());
  if (row == 0) return;
  for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + (o * len + idx) * row, src + o * row, row);
}

// One scalar condition: a bool tensor with one element.
inline Result<bool> read_condition(const ComputeContext& ctx, const Tensor& t, const std::string& what) {
  if (t.dtype() != DataType::kBool || t.numel() != 1)
    return op_error(ctx, ErrorCode::kInvalidArgument,
                    what + " must be one bool, got " + dtype_name(t.dtype()) + shape_to_string(t.shape()));
  return t.data<bool>()[0];
}

}  // namespace glassbox::ops::control_flow
