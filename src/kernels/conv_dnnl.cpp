// oneDNN (2.x API) convolution / deconvolution on the tensors' own NCHW-style
// layout (no per-run activation reorders); weights in the primitive's preferred
// layout, reordered once. User-managed scratchpad so concurrent
// run() calls never share one.
#include <oneapi/dnnl/dnnl.hpp>

#include <dlfcn.h>

#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/conv.h"
#include "kernels/dnnl_common.h"

namespace glassbox::kernels {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

namespace {

dnnl::engine& cpu_engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

tag plain_act_tag(int spatial) { return spatial == 1 ? tag::ncw : spatial == 2 ? tag::nchw : tag::ncdhw; }

// ONNX weights: Conv [C_out, C_in/g, k...], ConvTranspose [C_in, C_out/g, k...].
// oneDNN's logical dims are ([g,] oc/g, ic/g, k...) in both cases: describe the
// ONNX layout with explicit strides.
memory::desc plain_weight_desc(const memory::dims& w_dims, int spatial, bool grouped, bool transposed) {
  memory::dims st(w_dims.size());
  int64_t ksp = 1;
  for (int i = spatial - 1; i >= 0; --i) {
    st[w_dims.size() - spatial + i] = ksp;
    ksp *= w_dims[w_dims.size() - spatial + i];
  }
  const size_t o = grouped ? 1 : 0, in = o + 1;
  if (!transposed) {
    st[in] = ksp;
    st[o] = w_dims[in] * ksp;
  } else {
    st[o] = ksp;
    st[in] = w_dims[o] * ksp;
  }
  if (grouped) st[0] = w_dims[o] * w_dims[in] * ksp;
  return memory::desc(w_dims, memory::data_type::f32, st);
}

}  // namespace

struct DnnlConv::Impl {
  dnnl::primitive prim;
  memory::desc user_src, user_dst, src_md, dst_md, scratch_md;
  memory weights, bias;
  bool has_bias = false;
  // Applied by run() after the primitive (gemm-based convolutions, see create): y[n, c, ...] += bias_after[c],
  // then activation_after.
  ConvActivation activation_after;
  std::vector<float> bias_after;
  int64_t channels = 0, batch = 0;
};

DnnlConv::DnnlConv(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DnnlConv::~DnnlConv() = default;

namespace {

// The activation as oneDNN post-ops (oneDNN 2.6 has no hardsigmoid: linear then clip).
dnnl::post_ops activation_post_ops(const ConvActivation& a) {
  using K = ConvActivation::Kind;
  using alg = dnnl::algorithm;
  dnnl::post_ops po;
  switch (a.kind) {
    case K::kNone: break;
    case K::kRelu: po.append_eltwise(1.f, alg::eltwise_relu, 0.f, 0.f); break;
    case K::kClip: po.append_eltwise(1.f, alg::eltwise_clip, a.alpha, a.beta); break;
    case K::kHardSigmoid:
      po.append_eltwise(1.f, alg::eltwise_linear, a.alpha, a.beta);
      po.append_eltwise(1.f, alg::eltwise_clip, 0.f, 1.f);
      break;
    case K::kHardSwish: po.append_eltwise(1.f, alg::eltwise_hardswish, 0.f, 0.f); break;
    case K::kSigmoid: po.append_eltwise(1.f, alg::eltwise_logistic, 0.f, 0.f); break;
  }
  return po;
}

// The memory descriptors and geometry of one (de)convolution primitive.
struct ConvDescs {
  memory::desc user_src, user_dst, src, dst, w, user_w, bias;
  memory::dims strides, dil, pl, pr;
};

ConvDescs conv_descs(const ConvGeometry& g, bool transposed) {
  const int sp = g.spatial;
  const auto f32 = memory::data_type::f32;
  memory::dims src_dims{g.n, g.c_in}, dst_dims{g.n, g.c_out}, w_dims;
  ConvDescs d;
  for (int i = 0; i < sp; ++i) {
    src_dims.push_back(g.in[i]);
    dst_dims.push_back(g.out[i]);
    d.strides.push_back(g.stride[i]);
    d.dil.push_back(g.dilation[i] - 1);  // oneDNN counts the gap, ONNX the step
    d.pl.push_back(g.pad_begin[i]);
    d.pr.push_back(g.pad_end[i]);
  }
  const bool grouped = g.group > 1;
  if (grouped) w_dims.push_back(g.group);
  w_dims.push_back(g.c_out / g.group);
  w_dims.push_back(g.c_in / g.group);
  for (int i = 0; i < sp; ++i) w_dims.push_back(g.kernel[i]);
  d.user_src = memory::desc(src_dims, f32, plain_act_tag(sp));
  d.user_dst = memory::desc(dst_dims, f32, plain_act_tag(sp));
  // src/dst in the tensors' own NC+spatial layout for ungrouped convolutions: per-run activation reorders
  // cost more than the blocked-layout kernels save (measured on PP-OCR det). Grouped (depthwise) ones in
  // the layout oneDNN prefers: in the plain layout oneDNN has only its gemm fallback for them (im2col per
  // group: a 5x5 depthwise conv of PP-OCRv4 rec, 240 x 12 x 80, 2.9 ms), its blocked depthwise kernel with
  // the two reorders is ~10x faster.
  const bool blocked = grouped && !transposed;
  d.src = blocked ? memory::desc(src_dims, f32, tag::any) : d.user_src;
  d.dst = blocked ? memory::desc(dst_dims, f32, tag::any) : d.user_dst;
  d.w = memory::desc(w_dims, f32, tag::any);
  d.user_w = plain_weight_desc(w_dims, sp, grouped, transposed);
  d.bias = memory::desc({g.c_out}, f32, tag::x);
  return d;
}

dnnl::primitive_attr conv_attr(const ConvActivation& activation) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (activation.kind != ConvActivation::Kind::kNone) attr.set_post_ops(activation_post_ops(activation));
  return attr;
}

// A forward-inference primitive descriptor of Prim (convolution_forward / deconvolution_forward) on d.
template <class Prim>
typename Prim::primitive_desc conv_pd(const ConvDescs& d, bool bias, dnnl::algorithm alg, const ConvActivation& activation) {
  const auto fwd = dnnl::prop_kind::forward_inference;
  auto desc = bias ? typename Prim::desc(fwd, alg, d.src, d.w, d.bias, d.dst, d.strides, d.dil, d.pl, d.pr)
                   : typename Prim::desc(fwd, alg, d.src, d.w, d.dst, d.strides, d.dil, d.pl, d.pr);
  return typename Prim::primitive_desc(desc, conv_attr(activation), cpu_engine());
}

}  // namespace

std::unique_ptr<DnnlConv> DnnlConv::create(const ConvGeometry& g, bool transposed, const float* w, const float* b,
                                           const ConvActivation& activation) {
  try {
    auto& eng = cpu_engine();
    const ConvDescs d = conv_descs(g, transposed);
    auto impl = std::make_unique<Impl>();
    impl->user_src = d.user_src;
    impl->user_dst = d.user_dst;
    memory::desc w_md;
    auto take = [&](const auto& pd) {
      impl->src_md = pd.src_desc();
      impl->dst_md = pd.dst_desc();
      impl->scratch_md = pd.scratchpad_desc();
      w_md = pd.weights_desc();
    };
    if (!transposed) {
      const auto alg = dnnl::algorithm::convolution_direct;
      auto pd = conv_pd<dnnl::convolution_forward>(d, b != nullptr, alg, activation);
      // oneDNN 2.6's gemm-based convolution adds the bias and applies eltwise post-ops in a slow separate pass
      // (PP-OCRv4 rec's 30 1x1 convs: 5.2 ms per run without bias, 16.5 ms with bias + hardswish): there the
      // primitive computes W*x only and run() adds the bias and applies the activation in one vectorized pass.
      if ((b || activation.kind != ConvActivation::Kind::kNone) &&
          std::string(pd.impl_info_str()).find("gemm") != std::string::npos) {
        pd = conv_pd<dnnl::convolution_forward>(d, false, alg, {});
        impl->activation_after = activation;
        if (b) impl->bias_after.assign(b, b + g.c_out);
        impl->channels = g.c_out;
        impl->batch = g.n;
        b = nullptr;
      }
      impl->prim = dnnl::convolution_forward(pd);
      take(pd);
    } else {
      auto pd = conv_pd<dnnl::deconvolution_forward>(d, b != nullptr, dnnl::algorithm::deconvolution_direct, activation);
      impl->prim = dnnl::deconvolution_forward(pd);
      take(pd);
    }
    dnnl::stream s(eng);
    memory user_w_mem(d.user_w, eng, const_cast<float*>(w));
    impl->weights = memory(w_md, eng);
    if (w_md == d.user_w)  // same layout: a plain copy avoids a parallel reorder region
      std::memcpy(impl->weights.get_data_handle(), w, w_md.get_size());
    else
      dnnl::reorder(user_w_mem, impl->weights).execute(s, user_w_mem, impl->weights);
    if (b) {
      impl->bias = memory(d.bias, eng);
      std::memcpy(impl->bias.get_data_handle(), b, static_cast<size_t>(g.c_out) * sizeof(float));
      impl->has_bias = true;
    }
    s.wait();
    return std::unique_ptr<DnnlConv>(new DnnlConv(std::move(impl)));
  } catch (const dnnl::error&) {
    return nullptr;  // the op falls back to the reference loops
  }
}

namespace {

// Debian's libdnnl runs on OpenMP, which would otherwise use every core. The
// session's thread count is the rule, so set it for this thread's next
// parallel regions. Looked up at run time: libgomp is loaded by libdnnl but
// not linked by us.
void set_omp_threads(int threads) {
  using SetFn = void (*)(int);
  static SetFn fn = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (fn && threads > 0) fn(threads);
}

}  // namespace

void DnnlConv::run(const float* x, float* y, int threads) const {
  try {
    run_unguarded(x, y, threads);
  } catch (const dnnl::error& e) {
    dnnl_common::throw_dnnl_error("convolution execution", e);
  }
}

void DnnlConv::run_unguarded(const float* x, float* y, int threads) const {
  set_omp_threads(threads);
  auto& eng = cpu_engine();
  dnnl::stream s(eng);
  memory user_src(impl_->user_src, eng, const_cast<float*>(x));
  memory user_dst(impl_->user_dst, eng, y);
  memory src = user_src, dst = user_dst;
  if (impl_->src_md != impl_->user_src) {
    src = memory(impl_->src_md, eng);
    dnnl::reorder(user_src, src).execute(s, user_src, src);
  }
  if (impl_->dst_md != impl_->user_dst) dst = memory(impl_->dst_md, eng);
  memory scratch(impl_->scratch_md, eng);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                       {DNNL_ARG_WEIGHTS, impl_->weights},
                                       {DNNL_ARG_DST, dst},
                                       {DNNL_ARG_SCRATCHPAD, scratch}};
  if (impl_->has_bias) args.emplace(DNNL_ARG_BIAS, impl_->bias);
  impl_->prim.execute(s, args);
  if (impl_->dst_md != impl_->user_dst) dnnl::reorder(dst, user_dst).execute(s, dst, user_dst);
  s.wait();
  if (impl_->channels > 0) {  // bias and activation after the primitive (create: gemm-based convolutions)
    const int64_t total = static_cast<int64_t>(impl_->user_dst.get_size() / sizeof(float));
    const int64_t plane = total / (impl_->batch * impl_->channels);
    for (int64_t nc = 0; nc < impl_->batch * impl_->channels; ++nc) {
      float* p = y + nc * plane;
      if (!impl_->bias_after.empty()) {
        const float bias = impl_->bias_after[static_cast<size_t>(nc % impl_->channels)];
        for (int64_t i = 0; i < plane; ++i) p[i] += bias;
      }
      conv_activation_reference(impl_->activation_after, p, plane);
    }
  }
}

}  // namespace glassbox::kernels
