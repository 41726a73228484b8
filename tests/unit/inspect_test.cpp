// inspect: runs on every ONNX conformance model without crashing, and its op
// histogram equals what python3-onnx counts on the torch-exported models.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "diag/inspect.h"
#include "graph/loader.h"
#include "model_builder.h"

using namespace glassbox;
namespace fs = std::filesystem;

namespace {

std::string run_command(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}

const char* kTestData = "/usr/share/libonnx-testdata/data";

}  // namespace

TEST(Inspect, EveryConformanceModelLoadsOrFailsWithAMessage) {
  ASSERT_TRUE(fs::exists(kTestData)) << kTestData << " missing: install Debian package libonnx-testdata (scripts/setup.sh)";
  graph::LoadOptions opts;
  opts.checker_failure_is_error = false;
  int loaded = 0, refused = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kTestData)) {
    if (entry.path().filename() != "model.onnx") continue;
    auto model = graph::load_model(entry.path().string(), opts);
    if (!model.ok()) {
      ++refused;
      EXPECT_FALSE(model.error().what.empty()) << entry.path();
      continue;
    }
    ++loaded;
    auto report = diag::inspect_model(*model);
    auto json = diag::inspect_to_json(report);
    EXPECT_EQ(json["schema"], "glassbox.inspect/1");
    EXPECT_FALSE(diag::inspect_to_text(report).empty());
  }
  EXPECT_GT(loaded, 1000) << "expected the ONNX 1.12 backend test models";
  // Refusals are legitimate only for models we do not accept by design; list them if this grows.
  EXPECT_EQ(refused, 0) << refused << " conformance models were refused by the loader";
}

TEST(Inspect, OpHistogramMatchesPythonOnnxOnExportedModels) {
  const fs::path dir = fs::path(GLASSBOX_SOURCE_DIR) / "tests/data/generated";
  const char* models[] = {"bert_tiny_op13", "bert_tiny_op14", "bert_tiny_op17", "distilbert_tiny_op14", "bert_tiny_cls_op14"};
  for (const char* name : models) {
    const fs::path model = dir / (std::string(name) + ".onnx");
    ASSERT_TRUE(fs::exists(model)) << model << " missing: run scripts/make_test_models.py";
    int st = 0;
    auto py = run_command("/usr/bin/python3 " GLASSBOX_SOURCE_DIR "/scripts/onnx_op_histogram.py '" + model.string() + "'", &st);
    ASSERT_EQ(st, 0) << "python3-onnx failed on " << model;
    auto expected = nlohmann::json::parse(py);
    auto out = run_command(std::string(GLASSBOX_CLI) + " inspect --json '" + model.string() + "'", &st);
    ASSERT_EQ(st, 0) << out;
    auto report = nlohmann::json::parse(out);
    nlohmann::json got = nlohmann::json::object();
    for (const auto& op : report["ops"]) got[op["domain"].get<std::string>() + "::" + op["op_type"].get<std::string>()] = op["count"];
    EXPECT_EQ(got, expected) << name;
    // Dynamic axes come through as symbols; checker passes on real exporter output.
    EXPECT_EQ(report["inputs"][0]["name"], "input_ids");
    EXPECT_EQ(report["inputs"][0]["shape"], nlohmann::json::parse(R"(["batch","sequence"])"));
    EXPECT_EQ(report["checker"]["passed"], true);
    EXPECT_EQ(report["producer"]["name"], "pytorch");
  }
}

TEST(Inspect, WarnsAboutDeploymentHazards) {
  using namespace glassbox::testing;
  auto m = make_model(11);
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 1, 4, 4});
  add_value(g->mutable_input(), "scales", onnx::TensorProto::FLOAT, {4});
  auto* free_rank = g->add_input();  // input with no shape at all
  free_rank->set_name("anything");
  free_rank->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {});
  add_value(g->mutable_output(), "z", onnx::TensorProto::FLOAT, {});
  add_node(g, "Resize", {"x", "", "scales"}, {"y"}, "resize");
  add_node(g, "Relu", {"anything"}, {"z"}, "relu");
  TempDir dir;
  graph::LoadOptions opts;
  opts.checker_failure_is_error = false;  // the checker requires a shape on main-graph inputs
  auto model = graph::load_model(write_model(m, dir.file("m.onnx")), opts);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  auto json = diag::inspect_to_json(diag::inspect_model(*model));
  std::set<std::string> codes;
  for (const auto& w : json["warnings"]) codes.insert(w["code"].get<std::string>());
  EXPECT_TRUE(codes.count("dynamic_resize"));
  EXPECT_TRUE(codes.count("old_opset"));
  EXPECT_TRUE(codes.count("dynamic_rank_input"));
}
