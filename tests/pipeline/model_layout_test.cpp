// Model directory layouts: where the ONNX file is found (find_model_file), the safetensors reader's
// strict checks, and the pooling / Dense / Normalize arithmetic on values worked out by hand from
// sentence-transformers' documented definitions. The same code against a real reference (torch +
// numpy, transformers.js) on generated sentence-transformers directories: st_layout_test.js.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/pipeline.h"
#include "pipeline/multi_vector.h"
#include "pipeline/pooling.h"
#include "pipeline/safetensors.h"

namespace fs = std::filesystem;
using glassbox::find_model_file;
using glassbox::Pooling;
using glassbox::pipeline::parse_safetensors;

namespace {

class Layout : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("glassbox_layout_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "onnx");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void touch(const char* rel) const { std::ofstream(dir_ / rel) << "x"; }
  fs::path dir_;
};

// A safetensors file from a header object and raw buffer bytes.
std::string safetensors(const nlohmann::json& header, const std::string& buffer) {
  const std::string h = header.dump();
  std::string out(8, '\0');
  const uint64_t n = h.size();
  std::memcpy(out.data(), &n, 8);
  return out + h + buffer;
}

template <class T>
std::string bytes_of(std::initializer_list<T> v) {
  std::string s;
  for (T x : v) s.append(reinterpret_cast<const char*>(&x), sizeof x);
  return s;
}

}  // namespace

TEST_F(Layout, RootModelIsTheDefault) {
  touch("model.onnx");
  auto c = find_model_file(dir_.string());
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->relative, "model.onnx");
  EXPECT_EQ(c->source.rfind("default: model.onnx", 0), 0u) << c->source;
}

TEST_F(Layout, OptimumLayoutAndVariantsAreListed) {
  for (const char* f : {"onnx/model.onnx", "onnx/model_quantized.onnx", "onnx/model_qint8_avx512_vnni.onnx", "onnx/other.onnx"}) touch(f);
  auto c = find_model_file(dir_.string());
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->relative, "onnx/model.onnx");
  EXPECT_EQ(c->candidates, (std::vector<std::string>{"onnx/model.onnx", "onnx/model_qint8_avx512_vnni.onnx",
                                                     "onnx/model_quantized.onnx"}));
  EXPECT_NE(c->source.find("also here: onnx/model_qint8_avx512_vnni.onnx, onnx/model_quantized.onnx"), std::string::npos)
      << c->source;
}

TEST_F(Layout, OnlyVariantsIsAnErrorListingThem) {
  touch("onnx/model_int8.onnx");
  touch("model_fp16.onnx");
  auto c = find_model_file(dir_.string());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().what.find("model_fp16.onnx, onnx/model_int8.onnx"), std::string::npos) << c.error().to_string();
  EXPECT_NE(c.error().fix.find("--model-file"), std::string::npos);
  auto d = find_model_file(dir_.string(), std::string("onnx/model_int8.onnx"), "glassbox.json");
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  EXPECT_EQ(d->relative, "onnx/model_int8.onnx");
  EXPECT_EQ(d->source, "glassbox.json");
  std::ofstream(dir_ / "glassbox.json") << R"({"model_file": "model_fp16.onnx"})";
  auto e = find_model_file(dir_.string());  // the directory's own declaration
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_EQ(e->relative, "model_fp16.onnx");
  EXPECT_EQ(e->source, "glassbox.json \"model_file\"");
  auto f = find_model_file(dir_.string(), std::string("onnx/model_int8.onnx"));  // the flag wins
  ASSERT_TRUE(f.ok()) << f.error().to_string();
  EXPECT_EQ(f->relative, "onnx/model_int8.onnx");
  EXPECT_EQ(f->source, "flag --model-file");
}

TEST_F(Layout, NoModelNamesWhatWasLookedFor) {
  auto c = find_model_file(dir_.string());
  ASSERT_FALSE(c.ok());
  for (const char* f : {"model.onnx", "onnx/model.onnx", "model_*.onnx", "onnx/model_*.onnx"})
    EXPECT_NE(c.error().what.find(f), std::string::npos) << c.error().to_string();
  EXPECT_FALSE(find_model_file((dir_ / "absent").string()).ok());
}

TEST_F(Layout, DeclaredFileMustStayInside) {
  touch("model.onnx");
  for (const char* bad : {"../model.onnx", "/etc/passwd", "", "onnx/../../x.onnx"}) {
    auto c = find_model_file(dir_.string(), std::string(bad));
    EXPECT_FALSE(c.ok()) << bad;
  }
  EXPECT_FALSE(find_model_file(dir_.string(), std::string("onnx/missing.onnx")).ok());
}

TEST(Safetensors, ReadsF32F16Bf16) {
  const std::string buf = bytes_of<float>({1.5f, -2.f, 0.25f, 3.f}) + bytes_of<uint16_t>({0x3C00, 0xC000, 0x0001}) +
                          bytes_of<uint16_t>({0x3F80});
  nlohmann::json h = {{"w", {{"dtype", "F32"}, {"shape", {2, 2}}, {"data_offsets", {0, 16}}}},
                      {"h", {{"dtype", "F16"}, {"shape", {3}}, {"data_offsets", {16, 22}}}},
                      {"b", {{"dtype", "BF16"}, {"shape", {1}}, {"data_offsets", {22, 24}}}},
                      {"__metadata__", {{"format", "pt"}}}};
  auto r = parse_safetensors(safetensors(h, buf), "t");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->at("w").shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(r->at("w").values, (std::vector<float>{1.5f, -2.f, 0.25f, 3.f}));
  EXPECT_EQ(r->at("h").values, (std::vector<float>{1.f, -2.f, std::ldexp(1.f, -24)}));  // 0x0001: the smallest subnormal
  EXPECT_EQ(r->at("b").values, (std::vector<float>{1.f}));
}

TEST(Safetensors, RefusesInconsistentFiles) {
  const std::string buf = bytes_of<float>({1.f, 2.f});
  auto error_of = [&](const nlohmann::json& h, const std::string& b) {
    auto r = parse_safetensors(safetensors(h, b), "t");
    return r.ok() ? std::string("(parsed)") : r.error().to_string();
  };
  auto entry = [](const char* dtype, std::vector<int> shape, int b, int e) {
    return nlohmann::json{{"dtype", dtype}, {"shape", shape}, {"data_offsets", {b, e}}};
  };
  EXPECT_NE(error_of({{"w", entry("F32", {3}, 0, 8)}}, buf).find("needs 12"), std::string::npos);
  EXPECT_NE(error_of({{"w", entry("F32", {2}, 0, 12)}}, buf).find("outside"), std::string::npos);
  EXPECT_NE(error_of({{"w", entry("F32", {1}, 4, 8)}}, buf).find("belong to no tensor"), std::string::npos);
  EXPECT_NE(error_of({{"w", entry("F32", {1}, 0, 4)}}, buf).find("last 4 bytes"), std::string::npos);
  EXPECT_NE(error_of({{"a", entry("F32", {2}, 0, 8)}, {"b", entry("F32", {1}, 4, 8)}}, buf).find("overlaps"), std::string::npos);
  EXPECT_NE(error_of({{"w", entry("I8", {8}, 0, 8)}}, buf).find("dtype I8"), std::string::npos);
  std::string tiny(8, '\0');
  tiny[0] = 100;  // header length past the end
  auto r = parse_safetensors(tiny, "t");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().what.find("exceeds the file"), std::string::npos);
  EXPECT_FALSE(parse_safetensors("abc", "t").ok());
}

// tokens (3 positions x 2 values), the third is padding; worked out by hand from the definitions.
TEST(Pooling, ModesAsDefined) {
  const float tokens[] = {1, 10, 3, -2, 100, 100};
  const std::vector<uint32_t> mask = {1, 1};
  auto pool = [&](std::vector<Pooling> modes, int64_t skip = 0) {
    std::vector<float> out;
    glassbox::pipeline::pool_tokens(tokens, 3, 2, mask, skip, modes, out);
    return out;
  };
  EXPECT_EQ(pool({Pooling::kCls}), (std::vector<float>{1, 10}));
  EXPECT_EQ(pool({Pooling::kMax}), (std::vector<float>{3, 10}));
  EXPECT_EQ(pool({Pooling::kMean}), (std::vector<float>{2, 4}));
  const float s = std::sqrt(2.f);
  auto sq = pool({Pooling::kMeanSqrtLen});
  EXPECT_FLOAT_EQ(sq[0], 4 / s);
  EXPECT_FLOAT_EQ(sq[1], 8 / s);
  auto wm = pool({Pooling::kWeightedMean});  // weights 1, 2: (1*1 + 2*3) / 3, (1*10 + 2*-2) / 3
  EXPECT_FLOAT_EQ(wm[0], 7.f / 3);
  EXPECT_FLOAT_EQ(wm[1], 2.f);
  EXPECT_EQ(pool({Pooling::kLastToken}), (std::vector<float>{3, -2}));
  EXPECT_EQ(pool({Pooling::kCls, Pooling::kMean}), (std::vector<float>{1, 10, 2, 4}));
  // the first position is a prompt token left out: CLS still takes it, the others do not
  EXPECT_EQ(pool({Pooling::kCls, Pooling::kMean, Pooling::kMax}, 1), (std::vector<float>{1, 10, 3, -2, 3, -2}));
  // nothing left: sentence-transformers' clamps (mean 0, max -1e9, last token zeros)
  EXPECT_EQ(pool({Pooling::kMean, Pooling::kMax, Pooling::kLastToken}, 2), (std::vector<float>{0, 0, -1e9f, -1e9f, 0, 0}));
}

TEST(Pooling, DenseAndNormalize) {
  glassbox::DenseLayer l;
  l.in = 2;
  l.out = 2;
  l.weight = {1, 2, -1, 0.5f};
  l.bias = {0.5f, 0};
  l.activation = "tanh";
  std::vector<float> v = {1, 1};
  glassbox::pipeline::apply_dense(l, v);
  EXPECT_FLOAT_EQ(v[0], std::tanh(3.5f));
  EXPECT_FLOAT_EQ(v[1], std::tanh(-0.5f));
  std::vector<float> n = {3, 4};
  glassbox::pipeline::l2_normalize(n);
  EXPECT_EQ(n, (std::vector<float>{0.6f, 0.8f}));
  std::vector<float> z = {0, 0};
  glassbox::pipeline::l2_normalize(z);
  EXPECT_EQ(z, (std::vector<float>{0, 0}));
}

// SPLADE: 3 positions x 4 vocabulary ids, the third is padding (its large logits must not count).
// MaxSim on values worked out by hand: query rows (1,0) and (0,1); document rows (0.6,0.8) and (1,0):
// the first query row's best is 1 (the second document row), the second's 0.8 (the first): 1.8.
TEST(MultiVector, MaxSimAsDefined) {
  auto s = glassbox::max_sim({1, 0, 0, 1}, {0.6f, 0.8f, 1, 0}, 2);
  ASSERT_TRUE(s.ok());
  EXPECT_NEAR(*s, 1.8, 1e-7);
  auto none = glassbox::max_sim({1, 0}, {}, 2);  // a document without vectors adds 0 per query row
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0.0);
  EXPECT_FALSE(glassbox::max_sim({1, 0, 0}, {1, 0}, 2).ok());  // not rows of 2
}

// PyLate's encoding: a query [CLS] a b [SEP] with query_length 8 and prefix id 9 becomes
// [CLS] 9 a b [SEP] M M M (expansion M, attention 0); a document gets its prefix only.
TEST(MultiVector, QueryExpansionAndPrefix) {
  glassbox::MultiVectorHead h;
  h.query_prefix_id = 9;
  h.document_prefix_id = 8;
  h.query_length = 8;
  h.expansion_id = 4;
  glassbox::Encoding e;
  e.ids = {2, 5, 6, 3};
  e.type_ids = {0, 0, 0, 0};
  e.attention_mask = {1, 1, 1, 1};
  e.special_tokens_mask = {1, 0, 0, 1};
  glassbox::Encoding d = e;
  EXPECT_EQ(glassbox::pipeline::multi_vector_text_limit(h, true), 7);
  glassbox::pipeline::shape_multi_vector_encoding(h, true, e);
  EXPECT_EQ(e.ids, (std::vector<uint32_t>{2, 9, 5, 6, 3, 4, 4, 4}));
  EXPECT_EQ(e.attention_mask, (std::vector<uint32_t>{1, 1, 1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(e.type_ids, std::vector<uint32_t>(8, 0));
  glassbox::pipeline::shape_multi_vector_encoding(h, false, d);
  EXPECT_EQ(d.ids, (std::vector<uint32_t>{2, 8, 5, 6, 3}));
  EXPECT_EQ(d.attention_mask, std::vector<uint32_t>(5, 1));
}

TEST(Pooling, SparseHeadAsDefined) {
  const float logits[] = {1, -1, 0, 3,  //
                          2, -5, 0, 0.5f,  //
                          50, 50, 50, 50};
  const std::vector<uint32_t> mask = {1, 1};
  auto run = [&](const char* pooling, const char* activation, int64_t top_k) {
    glassbox::SparseHead h{pooling, activation, top_k};
    std::vector<uint32_t> idx;
    std::vector<float> val;
    glassbox::pipeline::sparse_pool(logits, 3, 4, mask, h, idx, val);
    return std::make_pair(idx, val);
  };
  auto [i1, v1] = run("max", "relu", 0);  // ids 1 and 2 never exceed 0: left out
  EXPECT_EQ(i1, (std::vector<uint32_t>{0, 3}));
  EXPECT_FLOAT_EQ(v1[0], std::log1p(2.f));
  EXPECT_FLOAT_EQ(v1[1], std::log1p(3.f));
  auto [i2, v2] = run("sum", "log1p_relu", 0);
  EXPECT_EQ(i2, (std::vector<uint32_t>{0, 3}));
  EXPECT_FLOAT_EQ(v2[0], static_cast<float>(std::log1p(std::log1p(1.0)) + std::log1p(std::log1p(2.0))));
  EXPECT_FLOAT_EQ(v2[1], static_cast<float>(std::log1p(std::log1p(3.0)) + std::log1p(std::log1p(0.5))));
  auto [i3, v3] = run("max", "relu", 1);  // the larger one, id 3
  EXPECT_EQ(i3, (std::vector<uint32_t>{3}));
  EXPECT_FLOAT_EQ(v3[0], std::log1p(3.f));
}
