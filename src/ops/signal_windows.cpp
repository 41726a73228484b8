// HannWindow, HammingWindow, BlackmanWindow (opset 17): one generalized cosine
// window each, w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), with
// N = size (periodic = 1) or size - 1 (symmetric). Input: size (int scalar);
// output: 1-D [size] of output_datatype (default float32), computed in double.
#include <cmath>
#include <numbers>

#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct CosineWindow {
  double a0, a1, a2;
};
constexpr CosineWindow kHann{0.5, 0.5, 0.0};
constexpr CosineWindow kHamming{25.0 / 46.0, 21.0 / 46.0, 0.0};
constexpr CosineWindow kBlackman{0.42, 0.5, 0.08};

struct WindowAttrs {
  DataType output_datatype = DataType::kFloat32;  // element type of the window (TensorProto code, default 1)
  int64_t periodic = 1;                           // 1: periodic (for spectral analysis), 0: symmetric
};

// Windows longer than this are refused (a shape bomb, not a real frame length).
constexpr int64_t kMaxWindowSize = int64_t{1} << 28;

class WindowOp final : public Op {
 public:
  WindowOp(CosineWindow w, WindowAttrs a) : w_(w), a_(a) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* size_t_, require_input(ctx, 0, "size"));
    GB_ASSIGN_OR_RETURN(auto v, tensor_to_int64s(*size_t_, "size"));
    if (v.size() != 1 || v[0] < 0 || v[0] > kMaxWindowSize)
      return op_error(ctx, ErrorCode::kInvalidArgument, "size must be one value in [0, 2^28]");
    const int64_t size = v[0];
    const double denom = static_cast<double>(a_.periodic ? size : size - 1);
    return dispatch_dtype<NumericTypes>(a_.output_datatype, "window output_datatype", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a_.output_datatype, Shape{size}));
      T* py = y->mutable_data<T>();
      for (int64_t n = 0; n < size; ++n) {
        // A symmetric window of size 1 is the single value 1 (0/0 otherwise).
        const double t = denom > 0 ? 2.0 * std::numbers::pi * static_cast<double>(n) / denom : 0.0;
        const double w = denom > 0 ? w_.a0 - w_.a1 * std::cos(t) + w_.a2 * std::cos(2.0 * t) : 1.0;
        py[n] = static_cast<T>(w);
      }
      return {};
    });
  }

 private:
  CosineWindow w_;
  WindowAttrs a_;
};

Result<std::unique_ptr<Op>> create_window(const graph::Node& node, CosineWindow w) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"output_datatype", "periodic"}));
  WindowAttrs a;
  GB_ASSIGN_OR_RETURN(int64_t dt, attr_int(node, "output_datatype", 1));
  GB_ASSIGN_OR_RETURN(a.periodic, attr_int(node, "periodic", a.periodic));
  if (!dtype_is_valid(static_cast<int32_t>(dt)) || !dtype_in(static_cast<DataType>(dt), NumericTypes{}))
    return unsupported_attr("output_datatype", std::to_string(dt) + " is not a supported numeric dtype");
  if (a.periodic != 0 && a.periodic != 1) return unsupported_attr("periodic", "must be 0 or 1");
  a.output_datatype = static_cast<DataType>(dt);
  return std::unique_ptr<Op>(new WindowOp(w, a));
}

}  // namespace

Result<std::unique_ptr<Op>> create_HannWindow(const graph::Node& node, int64_t) { return create_window(node, kHann); }
Result<std::unique_ptr<Op>> create_HammingWindow(const graph::Node& node, int64_t) { return create_window(node, kHamming); }
Result<std::unique_ptr<Op>> create_BlackmanWindow(const graph::Node& node, int64_t) { return create_window(node, kBlackman); }

}  // namespace glassbox::ops
