// Reduce{Sum,Mean,Max,Min,Prod,L1,L2,LogSum,LogSumExp,SumSquare}.
// Axes: `axes` attribute (opset < 13 for all; < 18 for all but ReduceSum);
// ReduceSum 13+ takes axes as optional input 1 with `noop_with_empty_axes`.
// No axes = reduce all (or identity with noop_with_empty_axes = 1).
// Layout: adjacent reduced/kept dims are coalesced; [kept][reduced][kept]
// runs directly, other patterns first gather the reduced dims last (scratch).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/reduce.h"
#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// log(sum exp(p[k * stride])) over n elements, shifted as ONNX Runtime shifts it: by the first element
// unless infinite (then 0), raised by every later finite value, so infinities never shift: +Inf among
// finite values gives +Inf, +Inf with -Inf gives +Inf (not Inf - Inf = NaN), and a NaN gives NaN.
template <class T>
T log_sum_exp(const T* p, int64_t n, int64_t stride) {
  double m = n > 0 && !std::isinf(p[0]) ? static_cast<double>(p[0]) : 0.0;
  for (int64_t k = 0; k < n; ++k) {
    const double v = static_cast<double>(p[k * stride]);
    if (std::isfinite(v) && !(v < m)) m = v;
  }
  double s = 0;
  for (int64_t k = 0; k < n; ++k) s += std::exp(static_cast<double>(p[k * stride]) - m);
  return static_cast<T>(m + std::log(s));
}

struct ReduceAttrs {
  std::optional<std::vector<int64_t>> axes;  // attribute form; absent = all axes
  int64_t keepdims = 1;                      // keep reduced dims as size 1
  int64_t noop_with_empty_axes = 0;          // input-axes form: empty axes = identity
};

template <class T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;

template <class T, Kind K>
struct Reducer {
  using A = Acc<T>;
  // Max/Min start from -Inf/+Inf (a row of -Inf has the maximum -Inf, not the lowest finite
  // value) and skip NaN: std::max(a, NaN) keeps a. ONNX Runtime skips NaN the same way except
  // where its vector order happens to end on one (docs/kernels.md, "NaN and Inf").
  A init() const {
    if constexpr (K == Kind::kMax)
      return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    if constexpr (K == Kind::kMin)
      return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    if constexpr (K == Kind::kProd) return 1;
    return 0;
  }
  void step(A& a, T x) const {
    if constexpr (K == Kind::kMax) a = std::max<A>(a, x);
    else if constexpr (K == Kind::kMin) a = std::min<A>(a, x);
    else if constexpr (K == Kind::kProd) a *= x;
    else if constexpr (K == Kind::kL1) a += x < 0 ? -A(x) : A(x);
    else if constexpr (K == Kind::kL2 || K == Kind::kSumSquare) a += A(x) * A(x);
    else a += x;
  }
  T finish(A a, int64_t n) const {
    if constexpr (K == Kind::kMean) return static_cast<T>(n ? a / static_cast<A>(n) : a);
    if constexpr (K == Kind::kL2) return static_cast<T>(std::sqrt(static_cast<double>(a)));
    if constexpr (K == Kind::kLogSum) return static_cast<T>(std::log(static_cast<double>(a)));
    return static_cast<T>(a);
  }
};


class ReduceOp final : public Op {
 public:
  ReduceOp(Kind kind, std::string op_type, ReduceAttrs a, bool axes_input)
      : kind_(kind), op_type_(std::move(op_type)), a_(std::move(a)), axes_input_(axes_input) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "data"));
    const int64_t rank = x->rank();
    std::vector<int64_t> axes;
    bool have_axes = false;
    if (axes_input_) {
      const Tensor* t = ctx.input(1);
      if (t && t->defined()) {
        GB_ASSIGN_OR_RETURN(axes, tensor_to_int64s(*t, "axes"));
        have_axes = !axes.empty();
      }
    } else if (a_.axes) {
      axes = *a_.axes;
      have_axes = !axes.empty();
    }
    std::vector<bool> reduced(static_cast<size_t>(rank), !have_axes);
    if (!have_axes && a_.noop_with_empty_axes) {  // identity
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
      if (x->nbytes()) std::memcpy(y->mutable_raw(), x->raw(), x->nbytes());
      return {};
    }
    for (int64_t ax : axes) {
      GB_ASSIGN_OR_RETURN(int64_t a, normalize_axis(ax, rank));
      reduced[a] = true;
    }
    Shape out_shape;
    for (int64_t i = 0; i < rank; ++i) {
      if (!reduced[i]) out_shape.push_back(x->shape()[i]);
      else if (a_.keepdims) out_shape.push_back(1);
    }
    using Types = TypeList<float, double, int32_t, int64_t, uint32_t, uint64_t>;
    return dispatch_dtype<Types>(x->dtype(), op_type_, [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
      return run<T>(ctx, *x, reduced, *y);
    });
  }

 private:
  template <class T>
  Status run(ComputeContext& ctx, const Tensor& x, const std::vector<bool>& reduced, Tensor& y) const {
    // Coalesce dims (size-1 dims dropped) into groups of equal "reduced" flag.
    std::vector<int64_t> gsize;
    std::vector<bool> gred;
    for (size_t i = 0; i < reduced.size(); ++i) {
      const int64_t d = x.shape()[i];
      if (d == 1) continue;
      if (!gsize.empty() && gred.back() == reduced[i]) gsize.back() *= d;
      else { gsize.push_back(d); gred.push_back(reduced[i]); }
    }
    const T* px = x.data<T>();
    Tensor scratch;
    int64_t outer = 1, n = 1, inner = 1;
    size_t nred = std::count(gred.begin(), gred.end(), true);
    if (nred <= 1) {
      bool seen = false;
      for (size_t g = 0; g < gsize.size(); ++g) {
        if (gred[g]) { n = gsize[g]; seen = true; }
        else (seen ? inner : outer) *= gsize[g];
      }
    } else {  // gather reduced groups last: [kept..., reduced...]
      GB_ASSIGN_OR_RETURN(scratch, ctx.allocate_scratch(x.dtype(), {x.numel()}));
      std::vector<int64_t> strides(gsize.size());
      int64_t s = 1;
      for (size_t g = gsize.size(); g-- > 0;) { strides[g] = s; s *= gsize[g]; }
      std::vector<int64_t> order, dims;
      for (int pass = 0; pass < 2; ++pass)
        for (size_t g = 0; g < gsize.size(); ++g)
          if (gred[g] == (pass == 1)) { order.push_back(strides[g]); dims.push_back(gsize[g]); (pass ? n : outer) *= gsize[g]; }
      T* dst = scratch.mutable_data<T>();
      std::vector<int64_t> idx(dims.size(), 0);
      int64_t src = 0;
      for (int64_t e = 0; e < x.numel(); ++e) {
        dst[e] = px[src];
        for (size_t d = dims.size(); d-- > 0;) {
          src += order[d];
          if (++idx[d] < dims[d]) break;
          src -= dims[d] * order[d];
          idx[d] = 0;
        }
      }
      px = dst;
    }
    T* py = y.mutable_data<T>();
    const int64_t total = outer * inner;
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, n));
    auto go = [&]<Kind K>() {
      ctx.pool().parallel_for(total, grain, [&](int64_t b, int64_t e) {
        kernels::reduce_middle(px, py, n, inner, b, e, Reducer<T, K>{});
      });
    };
    switch (kind_) {
      case Kind::kSum: go.template operator()<Kind::kSum>(); break;
      case Kind::kMean: go.template operator()<Kind::kMean>(); break;
      case Kind::kMax: go.template operator()<Kind::kMax>(); break;
      case Kind::kMin: go.template operator()<Kind::kMin>(); break;
      case Kind::kProd: go.template operator()<Kind::kProd>(); break;
      case Kind::kL1: go.template operator()<Kind::kL1>(); break;
      case Kind::kL2: go.template operator()<Kind::kL2>(); break;
      case Kind::kLogSum: go.template operator()<Kind::kLogSum>(); break;
      case Kind::kSumSquare: go.template operator()<Kind::kSumSquare>(); break;
      case Kind::kLogSumExp:
        ctx.pool().parallel_for(total, grain, [&](int64_t b, int64_t e) {
          for (int64_t out = b; out < e; ++out) {
            const int64_t o = out / inner, i = out % inner;
            py[out] = log_sum_exp(px + o * n * inner + i, n, inner);
          }
        });
        break;
    }
    return {};
  }

  Kind kind_;
  std::string op_type_;
  ReduceAttrs a_;
  bool axes_input_;
};

Result<std::unique_ptr<Op>> make_reduce(const graph::Node& node, Kind kind, bool axes_input) {
  ReduceAttrs a;
  if (axes_input) {
    GB_RETURN_IF_ERROR(check_known_attrs(node, {"keepdims", "noop_with_empty_axes"}));
    GB_ASSIGN_OR_RETURN(a.noop_with_empty_axes, attr_int(node, "noop_with_empty_axes", 0));
  } else {
    GB_RETURN_IF_ERROR(check_known_attrs(node, {"axes", "keepdims"}));
    GB_ASSIGN_OR_RETURN(a.axes, attr_ints(node, "axes"));
  }
  GB_ASSIGN_OR_RETURN(a.keepdims, attr_int(node, "keepdims", 1));
  return std::unique_ptr<Op>(new ReduceOp(kind, node.op_type, std::move(a), axes_input));
}

}  // namespace

Result<std::unique_ptr<Op>> create_ReduceSum(const graph::Node& node, int64_t opset) {
  return make_reduce(node, Kind::kSum, opset >= 13);
}
#define GB_REDUCE(OpType, K) \
  Result<std::unique_ptr<Op>> create_##OpType(const graph::Node& node, int64_t) { return make_reduce(node, K, false); }
GB_REDUCE(ReduceMean, Kind::kMean)
GB_REDUCE(ReduceMax, Kind::kMax)
GB_REDUCE(ReduceMin, Kind::kMin)
GB_REDUCE(ReduceProd, Kind::kProd)
GB_REDUCE(ReduceL1, Kind::kL1)
GB_REDUCE(ReduceL2, Kind::kL2)
GB_REDUCE(ReduceLogSum, Kind::kLogSum)
GB_REDUCE(ReduceLogSumExp, Kind::kLogSumExp)
GB_REDUCE(ReduceSumSquare, Kind::kSumSquare)
#undef GB_REDUCE

}  // namespace glassbox::ops
