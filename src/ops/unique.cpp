// Unique (opset 11): the distinct elements of the flattened input, or with
// `axis` the distinct slices along it, sorted ascending (sorted=1, slices
// lexicographically) or in order of first occurrence (sorted=0). Outputs
// Y, indices (first occurrence), inverse_indices, counts (int64; optional).
// NaN sorts after every number and equals NaN, so NaNs collapse into one entry.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <type_traits>

#include "ops/dtype_dispatch.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct UniqueAttrs {
  std::optional<int64_t> axis;  // absent: unique elements of the flattened input
  bool sorted = true;           // ascending order; false: order of first occurrence
};

template <class T>
bool value_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return !std::isnan(a) && (std::isnan(b) || a < b);
  else return a < b;
}
template <class T>
bool value_equal(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return (std::isnan(a) && std::isnan(b)) || a == b;
  else return a == b;
}

class UniqueOp final : public Op {
 public:
  explicit UniqueOp(UniqueAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    int64_t outer = 1, n = x->numel(), inner = 1, axis = 0;
    if (a_.axis) {
      GB_ASSIGN_OR_RETURN(axis, nn::norm_axis(&ctx, *a_.axis, x->rank()));
      n = x->shape()[axis];
      for (int64_t i = 0; i < axis; ++i) outer *= x->shape()[i];
      for (int64_t i = axis + 1; i < x->rank(); ++i) inner *= x->shape()[i];
    }
    using Types = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, bool>;
    return dispatch_dtype<Types>(x->dtype(), "Unique", [&]<class T>() -> Status {
      const T* px = x->data<T>();
      // Slice k: the elements x[o, k, i] for all (o, i), compared in that order.
      auto cmp = [&](int64_t p, int64_t q) {
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            const T a = px[(o * n + p) * inner + i], b = px[(o * n + q) * inner + i];
            if (!value_equal(a, b)) return value_less(a, b) ? -1 : 1;
          }
        return 0;
      };
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return cmp(p, q) < 0; });
      // Groups of equal slices; the first of each group (stable sort) is its first occurrence.
      std::vector<int64_t> first, count, group_of(static_cast<size_t>(n));
      for (size_t j = 0; j < order.size(); ++j) {
        if (j == 0 || cmp(order[j - 1], order[j]) != 0) {
          first.push_back(order[j]);
          count.push_back(0);
        }
        group_of[order[j]] = static_cast<int64_t>(first.size()) - 1;
        ++count.back();
      }
      const int64_t u = static_cast<int64_t>(first.size());
      std::vector<int64_t> pos(static_cast<size_t>(u));  // output position of each group
      std::iota(pos.begin(), pos.end(), 0);
      if (!a_.sorted) {
        std::vector<int64_t> by_first(pos);
        std::sort(by_first.begin(), by_first.end(), [&](int64_t g, int64_t h) { return first[g] < first[h]; });
        for (int64_t k = 0; k < u; ++k) pos[by_first[k]] = k;
      }
      Shape ys = a_.axis ? x->shape() : Shape{u};
      if (a_.axis) ys[axis] = u;
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), ys));
      T* py = y->mutable_data<T>();
      for (int64_t g = 0; g < u; ++g)
        for (int64_t o = 0; o < outer; ++o)
          std::memcpy(py + (o * u + pos[g]) * inner, px + (o * n + first[g]) * inner,
                      static_cast<size_t>(inner) * sizeof(T));
      auto write = [&](size_t i, int64_t len, auto value) -> Status {
        if (ctx.num_outputs() <= i) return Status::ok_status();
        GB_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(i, DataType::kInt64, {len}));
        for (int64_t k = 0; k < len; ++k) value(t->mutable_data<int64_t>(), k);
        return Status::ok_status();
      };
      GB_RETURN_IF_ERROR(write(1, u, [&](int64_t* p, int64_t g) { p[pos[g]] = first[g]; }));
      GB_RETURN_IF_ERROR(write(2, n, [&](int64_t* p, int64_t k) { p[k] = pos[group_of[k]]; }));
      GB_RETURN_IF_ERROR(write(3, u, [&](int64_t* p, int64_t g) { p[pos[g]] = count[g]; }));
      return Status::ok_status();
    });
  }

 private:
  UniqueAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Unique(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"axis", "sorted"}));
  UniqueAttrs a;
  if (node.attr("axis")) {
    GB_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, "axis", 0));
    a.axis = axis;
  }
  GB_ASSIGN_OR_RETURN(int64_t sorted, attr_int(node, "sorted", 1));
  a.sorted = sorted != 0;
  return std::unique_ptr<Op>(new UniqueOp(a));
}

}  // namespace glassbox::ops
