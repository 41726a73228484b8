// glassbox::MultiHeadAttention and kernels::attention_f32 against the double-accumulating
// reference: odd head sizes and token counts (oneDNN tails), one token, cross lengths
// (q_len != kv_len), masks broadcasting along every axis, no mask, 1 and 3 threads; and
// the op refuses inputs that do not fit its reshape targets or masks that do not broadcast;
// packed_qkv (one [..., 3 * H * D] input, qkv_projection_fusion) gives the bits of the three
// separate inputs it holds. A right-padded batch masked out (<= -10000) gives the unpadded
// sequence's bits on its real tokens.
#include <cmath>

#include "core/thread_pool.h"
#include "kernels/attention.h"
#include "test_context.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

struct Case {
  int64_t B, H, Sq, Skv, D;
};

kernels::AttentionDesc desc_of(const Case& c) {
  kernels::AttentionDesc d;
  d.batch = c.B;
  d.heads = c.H;
  d.q_len = c.Sq;
  d.kv_len = c.Skv;
  d.head_dim = c.D;
  d.q_row = d.k_row = d.v_row = d.out_row = c.H * c.D;
  d.q_batch = d.out_batch = c.Sq * c.H * c.D;
  d.k_batch = d.v_batch = c.Skv * c.H * c.D;
  d.scale = 1.f / std::sqrt(static_cast<float>(c.D));
  return d;
}

TEST(Attention, KernelMatchesReference) {
  const std::vector<Case> cases = {{1, 1, 1, 1, 1}, {1, 2, 7, 7, 5}, {2, 3, 13, 13, 16}, {1, 4, 5, 9, 33}, {2, 12, 128, 128, 64}};
  uint32_t seed = 3;
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    for (const Case& c : cases) {
      Tensor q = random_f32({c.B * c.Sq * c.H * c.D}, seed++), k = random_f32({c.B * c.Skv * c.H * c.D}, seed++),
             v = random_f32({c.B * c.Skv * c.H * c.D}, seed++), mask = random_f32({c.B * c.Skv}, seed++, -10.f, 0.f);
      kernels::AttentionDesc d = desc_of(c);
      d.mask_stride[0] = c.Skv;  // [B, 1, 1, Skv]
      d.mask_stride[3] = 1;
      for (bool masked : {true, false}) {
        std::vector<float> got(static_cast<size_t>(c.B * c.Sq * c.H * c.D)), want(got.size());
        const float* m = masked ? mask.data<float>() : nullptr;
        kernels::attention_f32(d, q.data<float>(), k.data<float>(), v.data<float>(), m, got.data(), &pool);
        kernels::attention_f32_reference(d, q.data<float>(), k.data<float>(), v.data<float>(), m, want.data());
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i])))
              << c.B << "x" << c.H << "x" << c.Sq << "x" << c.Skv << "x" << c.D << " masked " << masked << " at " << i;
      }
    }
  }
}

// Right padding masked at -10000 (transformers' older exports) or the float minimum: the
// real tokens' outputs are the unpadded sequence's, bit for bit, for any padding (the kernel
// reads only the keys some row attends to). 1 and 2 threads; 19 real tokens padded to 20..64.
TEST(Attention, PaddingMaskedOutGivesTheUnpaddedBits) {
  const int64_t H = 3, D = 16, real = 19;
  for (float masked_value : {-10000.f, -3.4028235e38f}) {
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      for (int64_t padded : {20, 24, 32, 64}) {
        const Case c{1, H, padded, padded, D};
        Tensor q = random_f32({padded * H * D}, 11), k = random_f32({padded * H * D}, 12), v = random_f32({padded * H * D}, 13);
        std::vector<float> mask(static_cast<size_t>(padded), 0.f);
        for (int64_t j = real; j < padded; ++j) mask[static_cast<size_t>(j)] = masked_value;
        kernels::AttentionDesc d = desc_of(c);
        d.mask_stride[3] = 1;
        std::vector<float> got(static_cast<size_t>(padded * H * D));
        kernels::attention_f32(d, q.data<float>(), k.data<float>(), v.data<float>(), mask.data(), got.data(), &pool);
        // The same first `real` tokens alone (row strides as in the padded tensors).
        kernels::AttentionDesc u = d;
        u.q_len = u.kv_len = real;
        std::vector<float> alone(static_cast<size_t>(real * H * D));
        kernels::attention_f32(u, q.data<float>(), k.data<float>(), v.data<float>(), mask.data(), alone.data(), &pool);
        for (size_t i = 0; i < alone.size(); ++i)
          ASSERT_EQ(got[i], alone[i]) << "padded to " << padded << ", mask " << masked_value << ", threads " << threads
                                      << ", at " << i;
      }
    }
  }
}

// A query row that masks out every key is not trimmed: softmax over the whole row, as the
// reference computes it; so are rows of a per-row mask whose attended keys end at different places.
TEST(Attention, RowsMaskingEverythingKeepEveryKey) {
  const Case c{1, 2, 6, 10, 8};
  Tensor q = random_f32({c.Sq * c.H * c.D}, 21), k = random_f32({c.Skv * c.H * c.D}, 22), v = random_f32({c.Skv * c.H * c.D}, 23);
  ThreadPool pool(2);
  for (bool empty_row : {true, false}) {
    std::vector<float> mask(static_cast<size_t>(c.Sq * c.Skv), 0.f);  // [1, 1, Sq, Skv]
    for (int64_t i = 0; i < c.Sq; ++i)
      for (int64_t j = 0; j < c.Skv; ++j)
        if ((empty_row && i == 2) || j >= 4 + i % 3) mask[static_cast<size_t>(i * c.Skv + j)] = -10000.f;
    kernels::AttentionDesc d = desc_of(c);
    d.mask_stride[2] = c.Skv;
    d.mask_stride[3] = 1;
    std::vector<float> got(static_cast<size_t>(c.Sq * c.H * c.D)), want(got.size());
    kernels::attention_f32(d, q.data<float>(), k.data<float>(), v.data<float>(), mask.data(), got.data(), &pool);
    kernels::attention_f32_reference(d, q.data<float>(), k.data<float>(), v.data<float>(), mask.data(), want.data());
    for (size_t i = 0; i < got.size(); ++i) {
      // The all-masked row's scores sit at -10000, where fp32 keeps ~1e-3 of them (the reference
      // adds in double): 1e-2 there still tells a softmax over all 10 keys from one over the first 6.
      const bool in_empty_row = empty_row && static_cast<int64_t>(i) / (c.H * c.D) == 2;
      ASSERT_NEAR(got[i], want[i], (in_empty_row ? 1e-2 : 1e-5) * (1 + std::fabs(want[i])))
          << "empty row " << empty_row << " at " << i;
    }
  }
}

Result<std::vector<Tensor>> run_attention(const Case& c, const Tensor& q, const Tensor& k, const Tensor& v,
                                          const Tensor* mask, int threads) {
  auto node = NodeBuilder("MultiHeadAttention", mask ? 4 : 3)
                  .ints("q_shape", {c.B, c.Sq, c.H, c.D})
                  .ints("k_shape", {c.B, c.Skv, c.H, c.D})
                  .ints("v_shape", {c.B, c.Skv, c.H, c.D})
                  .f("scale", 0.25f)
                  .node;
  node.domain = "glassbox";
  std::vector<const Tensor*> ins{&q, &k, &v};
  if (mask) ins.push_back(mask);
  return run_op(node, 14, ins, threads);
}

TEST(Attention, OpBroadcastsTheMask) {
  const Case c{2, 3, 5, 6, 4};
  Tensor q = random_f32({c.B, c.Sq, c.H * c.D}, 1), k = random_f32({c.B, c.Skv, c.H * c.D}, 2),
         v = random_f32({c.B, c.Skv, c.H * c.D}, 3);
  const std::vector<Shape> masks = {{2, 1, 1, 6}, {6}, {1}, {3, 1, 6}, {2, 3, 5, 1}, {2, 3, 5, 6}};
  for (const Shape& ms : masks) {
    SCOPED_TRACE("mask " + shape_to_string(ms));
    Tensor mask = random_f32(ms, 4, -10.f, 0.f);
    auto out = run_attention(c, q, k, v, &mask, 2);
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    ASSERT_EQ((*out)[0].shape(), (Shape{c.B, c.Sq, c.H, c.D}));
    // The reference reads the mask expanded to [B, H, Sq, Skv].
    std::vector<float> full(static_cast<size_t>(c.B * c.H * c.Sq * c.Skv));
    const Shape scores{c.B, c.H, c.Sq, c.Skv};
    for (size_t i = 0; i < full.size(); ++i) full[i] = mask.data<float>()[bcast_index(scores, ms, static_cast<int64_t>(i))];
    kernels::AttentionDesc d = desc_of(c);
    d.scale = 0.25f;
    d.mask_stride[0] = c.H * c.Sq * c.Skv;
    d.mask_stride[1] = c.Sq * c.Skv;
    d.mask_stride[2] = c.Skv;
    d.mask_stride[3] = 1;
    std::vector<float> want(static_cast<size_t>(q.numel()));
    kernels::attention_f32_reference(d, q.data<float>(), k.data<float>(), v.data<float>(), full.data(), want.data());
    expect_close((*out)[0], want, 1e-5f, 1e-6f);
  }
}

TEST(Attention, OpRefusesMisfitInputs) {
  const Case c{1, 2, 4, 4, 3};
  Tensor q = random_f32({1, 4, 6}, 1), k = random_f32({1, 4, 6}, 2), v = random_f32({1, 4, 6}, 3);
  Tensor short_k = random_f32({1, 3, 6}, 4), bad_mask = random_f32({1, 1, 1, 3}, 5);
  auto bad = run_attention(c, q, short_k, v, nullptr, 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().to_string().find("cannot be reshaped"), std::string::npos) << bad.error().to_string();
  auto bad2 = run_attention(c, q, k, v, &bad_mask, 1);
  ASSERT_FALSE(bad2.ok());
  EXPECT_NE(bad2.error().to_string().find("does not broadcast"), std::string::npos) << bad2.error().to_string();
  auto node = NodeBuilder("MultiHeadAttention", 3).ints("q_shape", {1, 4, 2, 3}).ints("k_shape", {1, 4, 3, 2}).ints("v_shape", {1, 4, 3, 2}).node;
  node.domain = "glassbox";
  EXPECT_FALSE(run_op(node, 14, {&q, &k, &v}).ok());  // heads disagree: refused at creation
}

// Q, K, V as column ranges of one packed [B, S, 3 * H * D] tensor give exactly the output of
// the three split out; 0 targets copy the packed input's batch and token dims; a packed input
// whose last dim is not 3 * H * D is refused.
TEST(Attention, OpReadsPackedQkvInPlace) {
  const Case c{2, 3, 7, 7, 5};
  const int64_t hd = c.H * c.D;
  Tensor packed = random_f32({c.B, c.Sq, 3 * hd}, 11), mask = random_f32({c.B, 1, 1, c.Skv}, 12, -10.f, 0.f);
  Tensor parts[3];
  for (int p = 0; p < 3; ++p) {
    parts[p] = Tensor::allocate(DataType::kFloat32, {c.B, c.Sq, hd}).value();
    for (int64_t r = 0; r < c.B * c.Sq; ++r)
      for (int64_t j = 0; j < hd; ++j)
        parts[p].mutable_data<float>()[r * hd + j] = packed.data<float>()[r * 3 * hd + p * hd + j];
  }
  for (bool zero_dims : {false, true}) {
    SCOPED_TRACE(zero_dims ? "targets [0, 0, H, D]" : "targets [B, S, H, D]");
    const std::vector<int64_t> t = zero_dims ? std::vector<int64_t>{0, 0, c.H, c.D} : std::vector<int64_t>{c.B, c.Sq, c.H, c.D};
    auto node = NodeBuilder("MultiHeadAttention", 4).ints("q_shape", t).ints("k_shape", t).ints("v_shape", t).f("scale", 0.3f);
    node.node.domain = "glassbox";
    auto split = run_op(node.node, 14, {&parts[0], &parts[1], &parts[2], &mask}, 2);
    ASSERT_TRUE(split.ok()) << split.error().to_string();
    node.i("packed_qkv", 1);
    for (int threads : {1, 3}) {
      auto got = run_op(node.node, 14, {&packed, nullptr, nullptr, &mask}, threads);
      ASSERT_TRUE(got.ok()) << got.error().to_string();
      ASSERT_EQ((*got)[0].shape(), (*split)[0].shape());
      for (int64_t i = 0; i < (*got)[0].numel(); ++i)
        ASSERT_EQ((*got)[0].data<float>()[i], (*split)[0].data<float>()[i]) << "at " << i << ", " << threads << " threads";
    }
    auto bad = run_op(node.node, 14, {&parts[0], nullptr, nullptr, &mask}, 1);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().to_string().find("must end in 3 x"), std::string::npos) << bad.error().to_string();
  }
}

// Decoder layout: head-major Q [B, H, S, D] and K, V [B, H / g, T, D] read through the head strides with
// kv_group g give what the token-major layout gives on copies where every key/value head is repeated g
// times (the repeat_kv of the unfused graph), at 1 and 3 threads.
TEST(Attention, HeadMajorGroupedQueryMatchesTheRepeatedCopies) {
  const int64_t B = 2, H = 6, g = 3, Hkv = H / g, S = 3, T = 7, D = 5;
  Tensor q = random_f32({B, H, S, D}, 41), k = random_f32({B, Hkv, T, D}, 42), v = random_f32({B, Hkv, T, D}, 43),
         mask = random_f32({B, 1, S, T}, 44, -10.f, 0.f);
  std::vector<float> qt(static_cast<size_t>(B * S * H * D)), kt(static_cast<size_t>(B * T * H * D)), vt(kt.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t s = 0; s < S; ++s)
        for (int64_t c = 0; c < D; ++c) qt[((b * S + s) * H + h) * D + c] = q.data<float>()[((b * H + h) * S + s) * D + c];
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < D; ++c) {
          kt[((b * T + t) * H + h) * D + c] = k.data<float>()[((b * Hkv + h / g) * T + t) * D + c];
          vt[((b * T + t) * H + h) * D + c] = v.data<float>()[((b * Hkv + h / g) * T + t) * D + c];
        }
    }
  kernels::AttentionDesc tm = desc_of({B, H, S, T, D});
  tm.mask_stride[0] = S * T;
  tm.mask_stride[2] = T;
  tm.mask_stride[3] = 1;
  kernels::AttentionDesc hm = tm;
  hm.q_row = hm.k_row = hm.v_row = hm.out_row = D;
  hm.q_head = hm.out_head = S * D;
  hm.k_head = hm.v_head = T * D;
  hm.q_batch = hm.out_batch = H * S * D;
  hm.k_batch = hm.v_batch = Hkv * T * D;
  hm.kv_group = g;
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    std::vector<float> want(static_cast<size_t>(B * S * H * D)), got(want.size());
    kernels::attention_f32(tm, qt.data(), kt.data(), vt.data(), mask.data<float>(), want.data(), &pool);
    kernels::attention_f32(hm, q.data<float>(), k.data<float>(), v.data<float>(), mask.data<float>(), got.data(), &pool);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t s = 0; s < S; ++s)
          for (int64_t c = 0; c < D; ++c) {
            const float w = want[((b * S + s) * H + h) * D + c], x = got[((b * H + h) * S + s) * D + c];
            ASSERT_NEAR(x, w, 1e-6 * (1 + std::fabs(w))) << b << "," << h << "," << s << "," << c << ", " << threads << " threads";
          }
  }
}

// glassbox::DecoderAttention checks at run time that the repeat it was given (Expand shape, Reshape
// target) is the head repeat it computes: the right one runs (with Reshape's 0 and -1), a repeat that
// would grow the batch or reach a head count the queries cannot use is refused naming the pass.
TEST(Attention, DecoderAttentionChecksTheRepeatItReplaces) {
  const int64_t B = 1, H = 4, Hkv = 2, S = 2, T = 3, D = 8;
  Tensor q = random_f32({B, H, S, D}, 51), k = random_f32({B, Hkv, T, D}, 52), v = random_f32({B, Hkv, T, D}, 53),
         mask = random_f32({B, 1, S, T}, 54, -5.f, 0.f);
  auto node = NodeBuilder("DecoderAttention", 8).f("scale", 0.25f);
  node.node.domain = "glassbox";
  auto e = [](std::vector<int64_t> x) { return make_tensor<int64_t>(DataType::kInt64, {static_cast<int64_t>(x.size())}, x); };
  Tensor good_e = e({B, Hkv, 2, T, D}), good_r = e({0, -1, T, D}), wide_e = e({B, Hkv, 3, T, D}),
         batch_e = e({2, Hkv, 2, T, D}), r3 = e({B, Hkv * 3, T, D}), rb = e({2, H, T, D});
  auto ok = run_op(node.node, 14, {&q, &k, &v, &mask, &good_e, &good_r, &good_e, &good_r}, 2);
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  ASSERT_EQ((*ok)[0].shape(), (Shape{B, H, S, D}));
  auto wide = run_op(node.node, 14, {&q, &k, &v, &mask, &wide_e, &r3, &good_e, &good_r}, 1);
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.error().to_string().find("4 query heads cannot read 6 key"), std::string::npos) << wide.error().to_string();
  auto batch = run_op(node.node, 14, {&q, &k, &v, &mask, &good_e, &good_r, &batch_e, &rb}, 1);
  ASSERT_FALSE(batch.ok());
  EXPECT_NE(batch.error().to_string().find("decoder_attention_fusion"), std::string::npos) << batch.error().to_string();
}

}  // namespace
}  // namespace glassbox::ops::testing
