// STFT (opset 17): signal [batch, length, 1 (real) | 2 (complex)] -> [batch,
// frames, bins, 2] with frames = (length - frame_length) / frame_step + 1 and
// bins = frame_length / 2 + 1 (onesided, real input only) or frame_length.
// Each frame is multiplied by `window` (when given) before its DFT.
// float32/float64, computed in double (kernel: src/kernels/dft.cpp).
#include <algorithm>

#include "kernels/dft.h"
#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct StftAttrs {
  int64_t onesided = 1;  // 1: only the non-redundant half of each frame's spectrum
};

Result<int64_t> scalar_int(const ComputeContext& ctx, const Tensor& t, const char* what) {
  GB_ASSIGN_OR_RETURN(auto v, tensor_to_int64s(t, what));
  if (v.size() != 1) return op_error(ctx, ErrorCode::kInvalidArgument, std::string(what) + " must hold one value");
  return v[0];
}

class StftOp final : public Op {
 public:
  explicit StftOp(StftAttrs a) : a_(a) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "signal"));
    GB_ASSIGN_OR_RETURN(const Tensor* step_t, require_input(ctx, 1, "frame_step"));
    const Tensor* window = ctx.input(2);
    const Tensor* length_t = ctx.input(3);
    if (x->rank() != 3 || (x->shape()[2] != 1 && x->shape()[2] != 2))
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "signal must be [batch, length, 1 or 2], got " + shape_to_string(x->shape()));
    const int64_t comps = x->shape()[2];
    if (a_.onesided && comps == 2)
      return op_error(ctx, ErrorCode::kInvalidArgument, "onesided = 1 needs a real signal (last dim 1)");
    GB_ASSIGN_OR_RETURN(int64_t step, scalar_int(ctx, *step_t, "frame_step"));
    int64_t frame = -1;
    if (window && window->defined()) {
      if (window->rank() != 1 || window->dtype() != x->dtype())
        return op_error(ctx, ErrorCode::kInvalidArgument, "window must be 1-D with the signal's dtype");
      frame = window->shape()[0];
    }
    if (length_t && length_t->defined()) {
      GB_ASSIGN_OR_RETURN(int64_t fl, scalar_int(ctx, *length_t, "frame_length"));
      if (frame >= 0 && fl != frame)
        return op_error(ctx, ErrorCode::kInvalidArgument,
                        "frame_length " + std::to_string(fl) + " differs from the window length " + std::to_string(frame));
      frame = fl;
    }
    if (frame < 1) return op_error(ctx, ErrorCode::kInvalidArgument, "one of window and frame_length must give a positive frame length");
    if (step < 1) return op_error(ctx, ErrorCode::kInvalidArgument, "frame_step must be positive");
    const int64_t batch = x->shape()[0], len = x->shape()[1];
    if (len < frame)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "the signal (" + std::to_string(len) + ") is shorter than one frame (" + std::to_string(frame) + ")");
    const int64_t frames = (len - frame) / step + 1;
    const int64_t bins = a_.onesided ? frame / 2 + 1 : frame;
    return dispatch_dtype<FloatTypes>(x->dtype(), "STFT", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), Shape{batch, frames, bins, 2}));
      GB_ASSIGN_OR_RETURN(Tensor work, ctx.allocate_scratch(DataType::kFloat64, Shape{4 * frame}));
      const kernels::DftPlan plan(frame, false);
      const T* px = x->data<T>();
      const T* pw = window && window->defined() ? window->data<T>() : nullptr;
      T* py = y->mutable_data<T>();
      double* in = work.mutable_data<double>();
      double* out = in + 2 * frame;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t f = 0; f < frames; ++f) {
          for (int64_t j = 0; j < frame; ++j) {
            const T* v = px + (b * len + f * step + j) * comps;
            const double w = pw ? static_cast<double>(pw[j]) : 1.0;
            in[2 * j] = static_cast<double>(v[0]) * w;
            in[2 * j + 1] = comps == 2 ? static_cast<double>(v[1]) * w : 0.0;
          }
          plan.run(in, out);
          T* dst = py + (b * frames + f) * bins * 2;
          for (int64_t k = 0; k < 2 * bins; ++k) dst[k] = static_cast<T>(out[k]);
        }
      return {};
    });
  }

 private:
  StftAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_STFT(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"onesided"}));
  StftAttrs a;
  GB_ASSIGN_OR_RETURN(a.onesided, attr_int(node, "onesided", a.onesided));
  if (a.onesided != 0 && a.onesided != 1) return unsupported_attr("onesided", "must be 0 or 1");
  return std::unique_ptr<Op>(new StftOp(a));
}

}  // namespace glassbox::ops
