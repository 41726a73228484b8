// The `glassbox run` CLI contract: NAME=FILE inputs (.npy / .pb), output_<i>.pb
// and .npy, JSON summary on stdout, clear errors with a non-zero exit code.
#include <gtest/gtest.h>

#include "cli_runner.h"
#include "glassbox/tensor_io.h"
#include "test_models.h"

namespace glassbox::rt_test {
namespace {

using glassbox::testing::run_cli;

std::string relu_model(const TempDir& dir) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {-1, 3}, {"batch", ""});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {-1, 3}, {"batch", ""});
  add_node(g, "Relu", {"x"}, {"y"}, "relu");
  return write_model(m, dir.file("relu.onnx"));
}

TEST(CliRun, WritesPbAndNpyAndJsonSummary) {
  REQUIRE_OPS("Relu");
  TempDir dir;
  const std::string model = relu_model(dir);
  ASSERT_TRUE(runtime::write_npy(dir.file("x.npy"), float_tensor({2, 3}, {-1, 2, -3, 4, -5, 6})).ok());
  auto r = run_cli("run " + model + " --input x=" + dir.file("x.npy") + " --output-dir " + dir.file("out"));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("\"name\": \"y\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"time_ms\""), std::string::npos) << r.out;
  auto npy = runtime::read_npy(dir.file("out/output_0.npy"));
  ASSERT_TRUE(npy.ok()) << npy.error().to_string();
  EXPECT_EQ(values_of<float>(*npy), (std::vector<float>{0, 2, 0, 4, 0, 6}));
  auto pb = runtime::read_tensor_pb(dir.file("out/output_0.pb"));
  ASSERT_TRUE(pb.ok());
  EXPECT_EQ(pb->name, "y");
  // Every opt level gives the same bytes.
  for (int level : {0, 1}) {
    auto r2 = run_cli("run " + model + " --opt-level " + std::to_string(level) + " --input x=" + dir.file("x.npy") +
                      " --output-dir " + dir.file("out" + std::to_string(level)));
    ASSERT_EQ(r2.rc, 0) << r2.out;
    auto again = runtime::read_npy(dir.file("out" + std::to_string(level) + "/output_0.npy"));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(values_of<float>(*again), values_of<float>(*npy));
  }
}

TEST(CliRun, BadInputsFailClearly) {
  REQUIRE_OPS("Relu");
  TempDir dir;
  const std::string model = relu_model(dir);
  ASSERT_TRUE(runtime::write_npy(dir.file("x.npy"), float_tensor({2, 4}, std::vector<float>(8, 1.f))).ok());
  auto r = run_cli("run " + model + " --input x=" + dir.file("x.npy") + " --output-dir " + dir.file("out"));
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("dim 1 must be 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x: float32[batch, 3]"), std::string::npos) << r.out;
  r = run_cli("run " + model + " --input nope=" + dir.file("x.npy"));
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("unknown input name 'nope'"), std::string::npos) << r.out;
  r = run_cli("run " + model + " --input x=" + dir.file("missing.npy"));
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("cannot open"), std::string::npos) << r.out;
  r = run_cli("run " + model + " --disable-pass no_such_pass --input x=" + dir.file("x.npy"));
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("unknown pass"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace glassbox::rt_test
