// Opset <= 6 "limited broadcasting" (Add/Sub/Mul/Div/Pow-1..6, Gemm-6's C, PRelu-6's slope).
//
// Before opset 7 an elementwise op broadcast B to A only when the node said so: attribute
// `broadcast` = 1, with `axis` placing B's dims inside A's (e.g. A [2,3,4,5], B [3,4], axis 1);
// without `axis` B's shape must be a suffix of A's. broadcast = 0 means equal shapes. PRelu-6
// applied a 1-D slope of size C per channel (dim 1). We turn each legacy case into a view of B
// that numpy-style broadcasting handles, and refuse shapes the old rules refuse.
#pragma once

#include <optional>
#include <string>

#include "ops/attr_util.h"
#include "ops/op.h"

namespace glassbox::ops {

struct LegacyBroadcast {
  bool active = false;     // the model's ai.onnx opset is <= 6
  bool broadcast = false;  // attribute broadcast (default 0)
  std::optional<int64_t> axis;

  static Result<LegacyBroadcast> from(const graph::Node& node, int64_t opset) {
    LegacyBroadcast l;
    if (opset >= 7) return l;
    l.active = true;
    GB_ASSIGN_OR_RETURN(int64_t b, attr_int(node, "broadcast", 0));
    l.broadcast = b != 0;
    if (node.attr("axis")) {
      GB_ASSIGN_OR_RETURN(int64_t ax, attr_int(node, "axis", 0));
      l.axis = ax;
    }
    return l;
  }

  // B as a view that numpy broadcasting against A turns into the legacy result (A's shape).
  Result<Tensor> adapt(const ComputeContext& ctx, const Tensor& a, const Tensor& b, const char* b_name) const {
    auto refuse = [&](const std::string& why) {
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      std::string("opset <= 6 broadcasting: ") + b_name + " " + shape_to_string(b.shape()) +
                          " vs A " + shape_to_string(a.shape()) + ": " + why);
    };
    if (!broadcast) {
      if (a.shape() != b.shape()) return refuse("shapes differ and attribute broadcast is 0");
      return b.reshaped(b.shape());
    }
    const int64_t ra = a.rank(), rb = b.rank();
    if (rb > ra) return refuse("B has more dims than A");
    int64_t start = ra - rb;  // suffix by default
    if (axis) {
      start = *axis < 0 ? *axis + ra : *axis;
      if (start < 0 || start + rb > ra) return refuse("axis " + std::to_string(*axis) + " does not fit B into A");
    }
    Shape view(static_cast<size_t>(ra), 1);
    for (int64_t i = 0; i < rb; ++i) {
      const int64_t d = b.shape()[static_cast<size_t>(i)];
      if (d != 1 && d != a.shape()[static_cast<size_t>(start + i)])
        return refuse("dim " + std::to_string(i) + " (" + std::to_string(d) + ") does not match A's dim " +
                      std::to_string(start + i));
      view[static_cast<size_t>(start + i)] = d;
    }
    return b.reshaped(view);
  }
};

}  // namespace glassbox::ops
