// oneDNN (2.x API) convolution / deconvolution on the tensors' own NCHW-style
// layout (no per-run activation reorders); weights in the primitive's preferred
// layout, reordered once. User-managed scratchpad so concurrent
// run() calls never share one.
#include <oneapi/dnnl/dnnl.hpp>

#include <dlfcn.h>

#include <cstring>
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
};

DnnlConv::DnnlConv(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DnnlConv::~DnnlConv() = default;

std::unique_ptr<DnnlConv> DnnlConv::create(const ConvGeometry& g, bool transposed, const float* w, const float* b) {
  try {
    auto& eng = cpu_engine();
    const int sp = g.spatial;
    memory::dims src_dims{g.n, g.c_in}, dst_dims{g.n, g.c_out}, strides, dil, pl, pr, w_dims;
    for (int i = 0; i < sp; ++i) {
      src_dims.push_back(g.in[i]);
      dst_dims.push_back(g.out[i]);
      strides.push_back(g.stride[i]);
      dil.push_back(g.dilation[i] - 1);  // oneDNN counts the gap, ONNX the step
      pl.push_back(g.pad_begin[i]);
      pr.push_back(g.pad_end[i]);
    }
    const bool grouped = g.group > 1;
    if (grouped) w_dims.push_back(g.group);
    w_dims.push_back(g.c_out / g.group);
    w_dims.push_back(g.c_in / g.group);
    for (int i = 0; i < sp; ++i) w_dims.push_back(g.kernel[i]);

    auto impl = std::make_unique<Impl>();
    const auto f32 = memory::data_type::f32;
    impl->user_src = memory::desc(src_dims, f32, plain_act_tag(sp));
    impl->user_dst = memory::desc(dst_dims, f32, plain_act_tag(sp));
    // src/dst in the tensors' own NC+spatial layout: per-run activation reorders
    // cost more than the blocked-layout kernels save (measured on PP-OCR det).
    memory::desc src_any = impl->user_src, dst_any = impl->user_dst, w_any(w_dims, f32, tag::any);
    memory::desc b_md({g.c_out}, f32, tag::x);
    memory::desc user_w = plain_weight_desc(w_dims, sp, grouped, transposed);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    memory::desc w_md;
    if (!transposed) {
      auto d = b ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                   dnnl::algorithm::convolution_direct, src_any, w_any, b_md, dst_any,
                                                   strides, dil, pl, pr)
                 : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                   dnnl::algorithm::convolution_direct, src_any, w_any, dst_any,
                                                   strides, dil, pl, pr);
      dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
      impl->prim = dnnl::convolution_forward(pd);
      impl->src_md = pd.src_desc();
      impl->dst_md = pd.dst_desc();
      impl->scratch_md = pd.scratchpad_desc();
      w_md = pd.weights_desc();
    } else {
      auto d = b ? dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                     dnnl::algorithm::deconvolution_direct, src_any, w_any, b_md,
                                                     dst_any, strides, dil, pl, pr)
                 : dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                     dnnl::algorithm::deconvolution_direct, src_any, w_any, dst_any,
                                                     strides, dil, pl, pr);
      dnnl::deconvolution_forward::primitive_desc pd(d, attr, eng);
      impl->prim = dnnl::deconvolution_forward(pd);
      impl->src_md = pd.src_desc();
      impl->dst_md = pd.dst_desc();
      impl->scratch_md = pd.scratchpad_desc();
      w_md = pd.weights_desc();
    }
    dnnl::stream s(eng);
    memory user_w_mem(user_w, eng, const_cast<float*>(w));
    impl->weights = memory(w_md, eng);
    if (w_md == user_w)  // same layout: a plain copy avoids a parallel reorder region
      std::memcpy(impl->weights.get_data_handle(), w, w_md.get_size());
    else
      dnnl::reorder(user_w_mem, impl->weights).execute(s, user_w_mem, impl->weights);
    if (b) {
      impl->bias = memory(b_md, eng);
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
}

}  // namespace glassbox::kernels
