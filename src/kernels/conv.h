// Convolution and transposed convolution (float32, NC + 1..3 spatial dims).
// Reference loops for tests; oneDNN primitives (cached per shape, weights
// reordered once) for speed.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

namespace glassbox::kernels {

struct ConvGeometry {
  int spatial = 2;              // number of spatial dims (1..3)
  int64_t n = 1;                // batch
  int64_t c_in = 1, c_out = 1;  // channels (totals, not per group)
  int64_t group = 1;
  int64_t in[3] = {1, 1, 1};    // input spatial dims
  int64_t out[3] = {1, 1, 1};   // output spatial dims
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t pad_begin[3] = {0, 0, 0};
  int64_t pad_end[3] = {0, 0, 0};
};

// An element-wise function of the convolution's output, applied inside the oneDNN primitive (a post-op:
// no second pass over memory); the reference path applies it after the loops (conv_activation_reference).
struct ConvActivation {
  enum class Kind { kNone, kRelu, kClip, kHardSigmoid, kHardSwish, kSigmoid };
  Kind kind = Kind::kNone;
  // kClip: y = min(max(x, alpha), beta); kHardSigmoid: y = max(0, min(1, alpha x + beta)); others: unused.
  float alpha = 0.f, beta = 0.f;
};
// Applies `a` to y[0..n) in place (y = x * min(max(x + 3, 0), 6) / 6 for kHardSwish).
void conv_activation_reference(const ConvActivation& a, float* y, int64_t n);

// Conv: x [n, c_in, in...], w [c_out, c_in/group, kernel...], b [c_out] or nullptr -> y [n, c_out, out...].
void conv_f32_reference(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y);
// ConvTranspose: x [n, c_in, in...], w [c_in, c_out/group, kernel...], b [c_out] or nullptr -> y [n, c_out, out...].
// out[i] must equal stride*(in-1) + output_padding + (k-1)*dil + 1 - pad_begin - pad_end.
void conv_transpose_f32_reference(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y);

// A oneDNN convolution (or deconvolution) for one geometry and one weight
// tensor. Weights/bias are reordered into oneDNN's preferred layout at
// creation; run() is thread-safe.
class DnnlConv {
 public:
  // nullptr when oneDNN cannot create the primitive (the caller falls back to the reference).
  static std::unique_ptr<DnnlConv> create(const ConvGeometry& g, bool transposed, const float* w, const float* b,
                                          const ConvActivation& activation = {});
  ~DnnlConv();
  // threads: OpenMP threads oneDNN may use for this call (the session's thread count).
  // A oneDNN failure throws KernelError (kernels/kernel_error.h; the executor returns it as an Error).
  void run(const float* x, float* y, int threads) const;

 private:
  void run_unguarded(const float* x, float* y, int threads) const;
  struct Impl;
  explicit DnnlConv(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace glassbox::kernels
