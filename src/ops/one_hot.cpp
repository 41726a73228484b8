// OneHot (opset 9; negative indices from 11): inserts a `depth` axis at `axis`;
// on_value where the index matches, off_value elsewhere. As the spec says,
// indices outside [-depth, depth-1] give an all-off row (never an out-of-bounds write).
#include <cmath>
#include <cstring>

#include "kernels/data_movement.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct OneHotAttrs {
  int64_t axis = -1;  // where the one-hot axis goes in the output
};

Result<std::vector<int64_t>> read_numeric(const ComputeContext& ctx, const Tensor& t, const char* what) {
  if (t.dtype() == DataType::kInt64 || t.dtype() == DataType::kInt32) return nn::read_ints(ctx, t, what);
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DataType::kFloat32) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(t.data<float>()[i]);
  } else if (t.dtype() == DataType::kFloat64) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(t.data<double>()[i]);
  } else {
    return nn::node_error(ctx, ErrorCode::kUnsupported,
                          std::string(what) + " dtype " + dtype_name(t.dtype()) + " is not supported (int32/int64/float32/float64)");
  }
  return v;
}

class OneHotOp final : public Op {
 public:
  explicit OneHotOp(OneHotAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* it, nn::need_input(ctx, 0, "indices"));
    GB_ASSIGN_OR_RETURN(const Tensor* dt, nn::need_input(ctx, 1, "depth"));
    GB_ASSIGN_OR_RETURN(const Tensor* vt, nn::need_input(ctx, 2, "values"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *vt));
    if (dt->numel() != 1 || vt->numel() != 2)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "depth must be a scalar and values have 2 elements");
    GB_ASSIGN_OR_RETURN(std::vector<int64_t> idx, read_numeric(ctx, *it, "indices"));
    GB_ASSIGN_OR_RETURN(std::vector<int64_t> dv, read_numeric(ctx, *dt, "depth"));
    const int64_t depth = dv[0];
    if (depth < 1) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "depth must be >= 1");
    const int64_t r = it->rank() + 1;
    GB_ASSIGN_OR_RETURN(int64_t axis, nn::norm_axis(&ctx, a_.axis, r));
    Shape out(it->shape().begin(), it->shape().end());
    out.insert(out.begin() + axis, depth);
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, vt->dtype(), out));
    const size_t es = dtype_size(vt->dtype());
    const auto* off = static_cast<const char*>(vt->raw());
    const char* on = off + es;
    kernels::fill_elements(es, off, y->numel(), y->mutable_raw());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out[d];
    for (int64_t d = axis + 1; d < r; ++d) inner *= out[d];
    char* dst = static_cast<char*>(y->mutable_raw());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t v = idx[o * inner + i];
        if (v < -depth || v >= depth) continue;
        if (v < 0) v += depth;
        std::memcpy(dst + ((o * depth + v) * inner + i) * static_cast<int64_t>(es), on, es);
      }
    return Status::ok_status();
  }

 private:
  OneHotAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_OneHot(const graph::Node& node, int64_t) {
  OneHotAttrs a;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", -1));
  return std::unique_ptr<Op>(new OneHotOp(a));
}

}  // namespace glassbox::ops
