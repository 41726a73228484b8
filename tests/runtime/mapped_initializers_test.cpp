// SessionOptions::map_initializers: the torch.onnx-exported test models give bit-identical
// outputs whether their weights are views of the mapped file (packed weights then release
// the mapped pages) or copies, on two runs (the second reads packed weights only).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "bert_inputs.h"
#include "glassbox/session.h"

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
  if (models == 0) GTEST_SKIP() << "run scripts/make_test_models.py";
}

}  // namespace
}  // namespace glassbox::rt_test
