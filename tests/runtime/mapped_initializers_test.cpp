// SessionOptions::map_initializers: the torch.onnx-exported test models give bit-identical
// outputs whether their weights are views of the mapped file (packed weights then release
// the mapped pages) or copies, on two runs (the second reads packed weights only).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "bert_inputs.h"
#include "glassbox/session.h"
#include "graph/external_data.h"
#include "test_models.h"

namespace glassbox::rt_test {
namespace {

TEST(MappedInitializers, SameOutputsAsCopiedWeights) {
  int models = 0;
  for (const char* name : {"bert_tiny_op14", "distilbert_tiny_op14", "bert_tiny_op17"}) {
    if (!std::filesystem::exists(generated_model_path(name))) continue;
    ++models;
    SessionOptions mapped, copied;
    mapped.threads = copied.threads = 2;
    copied.map_initializers = false;
    auto a = Session::load(generated_model_path(name), mapped);
    auto b = Session::load(generated_model_path(name), copied);
    ASSERT_TRUE(a.ok()) << a.error().to_string();
    ASSERT_TRUE(b.ok()) << b.error().to_string();
    for (int run = 0; run < 2; ++run) {
      auto in = bert_inputs(*a, 11, {11, 6}, 4242);
      auto ra = a->run(in);
      auto rb = b->run(in);
      ASSERT_TRUE(ra.ok()) << ra.error().to_string();
      ASSERT_TRUE(rb.ok()) << rb.error().to_string();
      ASSERT_EQ(ra->size(), rb->size());
      for (size_t i = 0; i < ra->size(); ++i) {
        const Tensor& x = (*ra)[i].tensor;
        const Tensor& y = (*rb)[i].tensor;
        ASSERT_EQ(x.shape(), y.shape()) << name;
        EXPECT_EQ(std::memcmp(x.raw(), y.raw(), y.nbytes()), 0) << name << " output " << i << " run " << run;
      }
    }
  }
  if (models == 0) GTEST_FAIL() << "the generated test models are missing: run scripts/make_test_models.py";
}

// A Gather over a table of >= 1 MiB viewed in the mapped file reads its rows with pread
// (Buffer::read_bytes); the copied table goes through the memcpy kernel. Both must give the
// same rows, along axis 0 and axis 1, with negative indices, at each payload alignment (the
// graph name's length moves the table's raw_data by one byte per step).
TEST(MappedInitializers, GatherFromALargeMappedTableEqualsCopied) {
  TempDir dir;
  const int64_t rows = 2048, cols = 160;  // 1.25 MiB of float
  std::vector<float> table(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i % 9973) * 0.25f - 7.f;
  for (int64_t axis : {0, 1})
    for (int shift = 0; shift < 4; ++shift) {
      auto m = make_model(13);
      m.mutable_graph()->set_name(std::string(static_cast<size_t>(shift + 1), 'g'));
      auto* g = m.mutable_graph();
      add_value(g->mutable_input(), "idx", onnx::TensorProto::INT64, {2, 3});
      add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT,
                axis == 0 ? std::vector<int64_t>{2, 3, cols} : std::vector<int64_t>{rows, 2, 3});
      add_initializer(g, "table", onnx::TensorProto::FLOAT, {rows, cols}, table);
      auto* n = add_node(g, "Gather", {"table", "idx"}, {"y"});
      add_int_attr(n, "axis", axis);
      const std::string path = write_model(m, dir.file("gather" + std::to_string(axis) + std::to_string(shift) + ".onnx"));
      SessionOptions mapped, copied;
      copied.map_initializers = false;
      auto a = Session::load(path, mapped);
      auto b = Session::load(path, copied);
      ASSERT_TRUE(a.ok()) << a.error().to_string();
      ASSERT_TRUE(b.ok()) << b.error().to_string();
      const int64_t n_axis = axis == 0 ? rows : cols;
      std::vector<NamedTensor> in = {
          {"idx", make_tensor<int64_t>(DataType::kInt64, {2, 3}, {0, n_axis - 1, 5, -1, -n_axis, 77})}};
      auto ra = a->run(in);
      auto rb = b->run(in);
      ASSERT_TRUE(ra.ok()) << ra.error().to_string();
      ASSERT_TRUE(rb.ok()) << rb.error().to_string();
      const Tensor& x = (*ra)[0].tensor;
      const Tensor& y = (*rb)[0].tensor;
      ASSERT_EQ(x.shape(), y.shape());
      EXPECT_EQ(std::memcmp(x.raw(), y.raw(), y.nbytes()), 0) << "axis " << axis << " shift " << shift;
      // and the copied path itself is right: row 5 along axis 0 / column 5 along axis 1
      const float* yv = y.data<float>();
      if (axis == 0) EXPECT_EQ(yv[2 * cols + 3], table[static_cast<size_t>(5 * cols + 3)]);
      else EXPECT_EQ(yv[2], table[5]);
    }
}

// A MatMul whose constant weight is a misaligned view of the mapped file takes the packed path without asking for the
// weight's typed data, so no aligned resident copy of it is made (graph::lazy_aligned_copy_bytes). MatMul used to read
// B's data before choosing its path: every such weight was resident twice (the decoder bench's peak RSS 1150 -> 784 MB
// for 720 MB of weights). At opt level 0 (no packed weights) the plain path reads the typed data and the counter moves:
// the check can fail.
TEST(MappedInitializers, PackedMatMulMakesNoAlignedCopyOfItsWeight) {
  TempDir dir;
  const int64_t K = 256, N = 96;  // 96 KiB of float: viewed in the mapped file
  std::vector<float> w(static_cast<size_t>(K * N));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 101) * 0.01f - 0.5f;
  std::vector<float> x(static_cast<size_t>(2 * K));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) * 0.1f - 0.6f;
  double want = 0;  // y[1, 5]
  for (int64_t k = 0; k < K; ++k) want += static_cast<double>(x[K + k]) * w[k * N + 5];
  int64_t copied_at_level0 = 0;
  for (int shift = 0; shift < 4; ++shift) {
    auto m = make_model(13);
    m.mutable_graph()->set_name(std::string(static_cast<size_t>(shift + 1), 'g'));  // moves the payload by a byte
    auto* g = m.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, K});
    add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {2, N});
    add_initializer(g, "w", onnx::TensorProto::FLOAT, {K, N}, w);
    add_node(g, "MatMul", {"x", "w"}, {"y"});
    const std::string path = write_model(m, dir.file("matmul" + std::to_string(shift) + ".onnx"));
    for (int level : {2, 0}) {
      SessionOptions o;
      o.opt_level = level;
      auto s = Session::load(path, o);
      ASSERT_TRUE(s.ok()) << s.error().to_string();
      const int64_t before = graph::lazy_aligned_copy_bytes();
      for (int run = 0; run < 2; ++run) {
        auto out = s->run({{"x", float_tensor({2, K}, x)}});
        ASSERT_TRUE(out.ok()) << out.error().to_string();
        EXPECT_NEAR(values_of<float>((*out)[0].tensor)[N + 5], want, 1e-3);
      }
      const int64_t copied = graph::lazy_aligned_copy_bytes() - before;
      if (level == 2) EXPECT_EQ(copied, 0) << "shift " << shift << ": the packed MatMul copied its weight";
      else copied_at_level0 += copied;
    }
  }
  EXPECT_GT(copied_at_level0, 0) << "no payload was misaligned at any shift: the test checked nothing";
}

}  // namespace
}  // namespace glassbox::rt_test
