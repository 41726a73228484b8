// Session::run_unpadded against Session::run on the same padded batch: on the real
// tokens the outputs must agree (1e-4 relative) for the torch.onnx-exported BERT-shaped
// test models, at awkward lengths, with sequences in parallel and one at a time, exact
// and bucketed lengths; padded positions hold 0; bad masks and outputs that cannot be
// assembled are refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "glassbox/session.h"
#include "bert_inputs.h"
#include "test_models.h"

namespace glassbox::rt_test {
namespace {

// Compares on real tokens (rows [b, t < length]) for [batch, seq, ...] outputs; all of it otherwise.
// Pad positions of the unpadded result must be exactly 0.
void expect_equal_on_real_tokens(const Tensor& got, const Tensor& ref, const std::vector<int64_t>& lengths,
                                 const std::string& label) {
  ASSERT_EQ(got.shape(), ref.shape()) << label;
  ASSERT_EQ(got.dtype(), DataType::kFloat32) << label;
  const int64_t batch = static_cast<int64_t>(lengths.size());
  const bool tokens = ref.rank() >= 3;  // [batch, seq, hidden] here; pooled / logits are rank 2
  const int64_t seq = tokens ? ref.shape()[1] : 1;
  const int64_t inner = ref.numel() / (batch * seq);
  double diff = 0, scale = 1e-30;
  int64_t compared = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < seq; ++t)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t k = (b * seq + t) * inner + i;
        const float g = got.data<float>()[k], r = ref.data<float>()[k];
        if (tokens && t >= lengths[static_cast<size_t>(b)]) {
          ASSERT_EQ(g, 0.0f) << label << ": pad position [" << b << ", " << t << "] is not 0";
          continue;
        }
        diff = std::max(diff, std::fabs(double(g) - r));
        scale = std::max(scale, std::fabs(double(r)));
        ++compared;
      }
  EXPECT_GT(compared, 0) << label;
  EXPECT_LE(diff / scale, 1e-4) << label << ": max |unpadded - padded| / max |padded| = " << diff / scale;
}

TEST(Unpadded, EqualsThePaddedRunOnRealTokens) {
  struct Case {
    int64_t seq;
    std::vector<int64_t> lengths;
  };
  // one token; odd lengths with a full row; all equal (no padding); all equal but padded;
  // batch 1; batch larger than 2 threads' worth, unsorted, with duplicate lengths.
  const std::vector<Case> cases = {{1, {1}},          {13, {13, 1, 9}},         {5, {5, 5, 5}}, {9, {4, 4}},
                                   {17, {17}},        {11, {3}},                {40, {7, 40, 1, 23, 23, 16, 39}}};
  int models = 0;
  for (const char* name : {"bert_tiny_op14", "distilbert_tiny_op14", "bert_tiny_cls_op14"}) {
    if (!std::filesystem::exists(generated_model_path(name))) continue;
    ++models;
    SessionOptions so;
    so.threads = 2;
    auto s = Session::load(generated_model_path(name), so);
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    for (const auto& c : cases)
      for (int mode = 0; mode < 3; ++mode) {
        UnpadOptions u;
        u.sequences_in_parallel = mode != 1;
        u.length_multiple = mode == 2 ? 8 : 1;
        const std::string label = std::string(name) + " seq " + std::to_string(c.seq) + " batch " +
                                  std::to_string(c.lengths.size()) + (mode == 1 ? " serial" : " parallel") +
                                  " multiple " + std::to_string(u.length_multiple);
        auto in = bert_inputs(*s, c.seq, c.lengths, 777);
        auto ref = s->run(in);
        ASSERT_TRUE(ref.ok()) << label << ": " << ref.error().to_string();
        RunStats stats;
        auto got = s->run_unpadded(in, u, &stats);
        ASSERT_TRUE(got.ok()) << label << ": " << got.error().to_string();
        ASSERT_EQ(got->size(), ref->size()) << label;
        EXPECT_GT(stats.nodes_executed, 0) << label;
        for (size_t i = 0; i < ref->size(); ++i) {
          EXPECT_EQ((*got)[i].name, (*ref)[i].name);
          expect_equal_on_real_tokens((*got)[i].tensor, (*ref)[i].tensor, c.lengths, label + " output " + (*ref)[i].name);
        }
      }
  }
  if (models == 0) GTEST_FAIL() << "the generated test models are missing: run scripts/make_test_models.py";
}

// Padding masked out changes nothing on the real tokens, bit for bit, with int8-dynamic
// weights: the int8 products are exact and per row, and the attention reads only the keys a
// row attends to (kernels/attention.cpp). Before, 1-ulp differences of a longer softmax moved
// some row's u8 rounding, and 12 layers grew that to 2.5e-2 of the logits on a BERT-base —
// which turned the pipelines' unpadded batching off for int8-dynamic. One text of 19 tokens
// alone and padded to 20..64.
TEST(Unpadded, PaddingChangesNoBitInt8Dynamic) {
  int models = 0;
  for (const char* name : {"bert_tiny_op14", "distilbert_tiny_op14", "bert_tiny_cls_op14"}) {
    if (!std::filesystem::exists(generated_model_path(name))) continue;
    ++models;
    SessionOptions so;
    so.threads = 2;
    so.precision = Precision::kInt8Dynamic;
    auto s = Session::load(generated_model_path(name), so);
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    auto alone = s->run(bert_inputs(*s, 19, {19}, 5));
    ASSERT_TRUE(alone.ok()) << alone.error().to_string();
    for (int64_t seq : {20, 24, 32, 64}) {
      auto padded = s->run(bert_inputs(*s, seq, {19}, 5));
      ASSERT_TRUE(padded.ok()) << padded.error().to_string();
      for (size_t o = 0; o < alone->size(); ++o) {
        const Tensor& a = (*alone)[o].tensor;
        const Tensor& p = (*padded)[o].tensor;
        const bool tokens = a.rank() >= 3;
        const int64_t rows = tokens ? a.shape()[0] * a.shape()[1] : a.numel() / a.shape().back();
        const int64_t inner = a.shape().back();
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t i = 0; i < inner; ++i)
            ASSERT_EQ(a.data<float>()[r * inner + i], p.data<float>()[r * inner + i])
                << name << " output " << (*alone)[o].name << " padded to " << seq << " at row " << r << " col " << i;
      }
    }
  }
  if (models == 0) GTEST_FAIL() << "the generated test models are missing: run scripts/make_test_models.py";
}

TEST(Unpadded, BadMasksAreRefusedNamingTheRow) {
  if (!std::filesystem::exists(generated_model_path("bert_tiny_op14"))) GTEST_FAIL() << "the generated test models are missing: run scripts/make_test_models.py";
  auto s = Session::load(generated_model_path("bert_tiny_op14"));
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  auto with_mask = [&](const std::vector<int64_t>& mask) {
    auto in = bert_inputs(*s, 4, {4, 4}, 777);
    for (auto& nt : in)
      if (nt.name == "attention_mask") nt.tensor = make_tensor<int64_t>(DataType::kInt64, {2, 4}, mask);
    return s->run_unpadded(in);
  };
  struct Bad {
    std::vector<int64_t> mask;
    std::string expect;
  };
  const std::vector<Bad> bad = {
      {{1, 1, 1, 1, 0, 0, 1, 1}, "row 1 position 2 is a real token after padding at position 0"},  // left padding
      {{1, 0, 1, 0, 1, 1, 1, 1}, "row 0 position 2 is a real token after padding at position 1"},  // a hole
      {{1, 1, 0, 0, 0, 0, 0, 0}, "row 1 has no real token"},
      {{1, 1, 2, 0, 1, 0, 0, 0}, "row 0 position 2 is neither 0 nor 1"}};
  for (const auto& b : bad) {
    auto r = with_mask(b.mask);
    ASSERT_FALSE(r.ok()) << b.expect;
    EXPECT_NE(r.error().to_string().find(b.expect), std::string::npos) << r.error().to_string();
  }
  UnpadOptions other;
  other.mask_input = "mask";
  auto r = s->run_unpadded(bert_inputs(*s, 4, {4, 2}, 777), other);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().to_string().find("mask input 'mask' is not among the given inputs"), std::string::npos)
      << r.error().to_string();
  other.mask_input = "attention_mask";
  other.length_multiple = 0;
  EXPECT_FALSE(s->run_unpadded(bert_inputs(*s, 4, {4, 2}, 777), other).ok());
}

TEST(Unpadded, AnOutputWithoutALeadingBatchDimIsRefusedByName) {
  if (!missing_ops({"Transpose"}).empty()) GTEST_FAIL() << "Transpose is not registered";
  TempDir dir;
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {-1, -1}, {"batch", "sequence"});
  add_value(g->mutable_input(), "attention_mask", onnx::TensorProto::INT64, {-1, -1}, {"batch", "sequence"});
  add_value(g->mutable_output(), "xt", onnx::TensorProto::FLOAT, {-1, -1}, {"sequence", "batch"});
  add_node(g, "Transpose", {"x"}, {"xt"});
  auto s = Session::load(write_model(m, dir.file("transpose.onnx")));
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  std::vector<NamedTensor> in = {{"x", float_tensor({2, 3}, {1, 2, 3, 4, 5, 6})},
                                 {"attention_mask", make_tensor<int64_t>(DataType::kInt64, {2, 3}, {1, 1, 1, 1, 1, 0})}};
  auto r = s->run_unpadded(in);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().to_string().find("output 'xt'"), std::string::npos) << r.error().to_string();
  // The padded run of the same model is fine: only the assembly is refused.
  EXPECT_TRUE(s->run(in).ok());
}

}  // namespace
}  // namespace glassbox::rt_test
