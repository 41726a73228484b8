// TopK (opset 10+: k is input 1; 11+: largest/sorted attributes, negative axis).
// Outputs Values and int64 Indices along `axis`. Ties: the smaller index first.
// Results are always sorted (allowed for sorted = 0, where order is unspecified).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct TopKAttrs {
  int64_t axis = -1;    // dimension to select along
  int64_t largest = 1;  // 1: k largest, 0: k smallest
  int64_t sorted = 1;   // 1: sorted output (we always sort)
};

class TopKOp final : public Op {
 public:
  explicit TopKOp(TopKAttrs a) : a_(a) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(const Tensor* k_t, require_input(ctx, 1, "K"));
    GB_ASSIGN_OR_RETURN(auto kv, tensor_to_int64s(*k_t, "K"));
    if (kv.size() != 1) return op_error(ctx, ErrorCode::kInvalidArgument, "K must hold one value");
    if (x->rank() == 0) return op_error(ctx, ErrorCode::kInvalidArgument, "X must have rank >= 1");
    GB_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(a_.axis, x->rank()));
    const int64_t n = x->shape()[axis], k = kv[0];
    if (k < 0 || k > n)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "K = " + std::to_string(k) + " is out of range for axis size " + std::to_string(n));
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < x->rank(); ++i) {
      if (i < axis) outer *= x->shape()[i];
      if (i > axis) inner *= x->shape()[i];
    }
    Shape out_shape = x->shape();
    out_shape[axis] = k;
    return dispatch_dtype<NumericTypes>(x->dtype(), "TopK", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * values, ctx.allocate_output(0, x->dtype(), out_shape));
      GB_ASSIGN_OR_RETURN(Tensor * indices, ctx.allocate_output(1, DataType::kInt64, out_shape));
      const T* px = x->data<T>();
      T* pv = values->mutable_data<T>();
      int64_t* pi = indices->mutable_data<int64_t>();
      const bool largest = a_.largest != 0;
      ctx.pool().parallel_for(outer * inner, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, n)),
                              [&](int64_t b, int64_t e) {
        std::vector<int64_t> order(static_cast<size_t>(n));
        for (int64_t r = b; r < e; ++r) {
          const int64_t o = r / inner, i = r % inner;
          const T* p = px + o * n * inner + i;
          std::iota(order.begin(), order.end(), 0);
          // NaN sorts as the largest value, as numpy does.
          auto key_less = [&](int64_t u, int64_t v) {
            const T a = p[u * inner], c = p[v * inner];
            if constexpr (std::is_floating_point_v<T>) {
              if (std::isnan(a) || std::isnan(c)) return !std::isnan(a) && std::isnan(c);
            }
            return a < c;
          };
          auto better = [&](int64_t u, int64_t v) {
            const bool lt = key_less(u, v), gt = key_less(v, u);
            if (lt == gt) return u < v;  // equal: smaller index first
            return largest ? gt : lt;
          };
          std::partial_sort(order.begin(), order.begin() + k, order.end(), better);
          for (int64_t j = 0; j < k; ++j) {
            const int64_t dst = o * k * inner + j * inner + i;
            pv[dst] = p[order[j] * inner];
            pi[dst] = order[j];
          }
        }
      });
      return {};
    });
  }

 private:
  TopKAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_TopK(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"axis", "largest", "sorted"}));
  TopKAttrs a;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", a.axis));
  GB_ASSIGN_OR_RETURN(a.largest, attr_int(node, "largest", a.largest));
  GB_ASSIGN_OR_RETURN(a.sorted, attr_int(node, "sorted", a.sorted));
  return std::unique_ptr<Op>(new TopKOp(a));
}

}  // namespace glassbox::ops
