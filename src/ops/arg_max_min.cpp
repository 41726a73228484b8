// ArgMax / ArgMin: int64 index of the max/min along `axis`; ties pick the
// first index unless select_last_index = 1 (opset 12+).
#include "kernels/reduce.h"
#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct ArgAttrs {
  int64_t axis = 0;               // axis to search
  int64_t keepdims = 1;           // keep the axis as size 1
  int64_t select_last_index = 0;  // on ties, the last index wins
};

class ArgOp final : public Op {
 public:
  ArgOp(bool is_max, ArgAttrs a) : max_(is_max), a_(a) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "data"));
    const int64_t rank = x->rank();
    if (rank == 0) return op_error(ctx, ErrorCode::kInvalidArgument, "input must have rank >= 1");
    GB_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(a_.axis, rank));
    const Shape& s = x->shape();
    if (s[axis] == 0) return op_error(ctx, ErrorCode::kInvalidArgument, "cannot take arg over an empty axis");
    int64_t outer = 1, inner = 1;
    Shape out_shape;
    for (int64_t i = 0; i < rank; ++i) {
      if (i < axis) outer *= s[i];
      if (i > axis) inner *= s[i];
      if (i != axis) out_shape.push_back(s[i]);
      else if (a_.keepdims) out_shape.push_back(1);
    }
    const int64_t n = s[axis];
    return dispatch_dtype<NumericTypes>(x->dtype(), max_ ? "ArgMax" : "ArgMin", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt64, out_shape));
      const T* px = x->data<T>();
      int64_t* py = y->mutable_data<int64_t>();
      const bool last = a_.select_last_index != 0, is_max = max_;
      ctx.pool().parallel_for(outer * inner, std::max<int64_t>(1, kElementwiseGrain / n), [&](int64_t b, int64_t e) {
        if (is_max)
          kernels::arg_reduce_middle(px, py, n, inner, b, e, last, [](T v, T w) { return v > w; });
        else
          kernels::arg_reduce_middle(px, py, n, inner, b, e, last, [](T v, T w) { return v < w; });
      });
      return {};
    });
  }

 private:
  bool max_;
  ArgAttrs a_;
};

Result<std::unique_ptr<Op>> make_arg(const graph::Node& node, bool is_max) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"axis", "keepdims", "select_last_index"}));
  ArgAttrs a;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", a.axis));
  GB_ASSIGN_OR_RETURN(a.keepdims, attr_int(node, "keepdims", a.keepdims));
  GB_ASSIGN_OR_RETURN(a.select_last_index, attr_int(node, "select_last_index", a.select_last_index));
  return std::unique_ptr<Op>(new ArgOp(is_max, a));
}

}  // namespace

Result<std::unique_ptr<Op>> create_ArgMax(const graph::Node& node, int64_t) { return make_arg(node, true); }
Result<std::unique_ptr<Op>> create_ArgMin(const graph::Node& node, int64_t) { return make_arg(node, false); }

}  // namespace glassbox::ops
