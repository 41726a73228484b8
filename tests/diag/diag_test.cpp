// Diagnostics on models that are faulty on purpose (built with the ONNX protobuf API):
// numerics must name the node that creates a NaN, diff the node where two models
// start to differ, probe the sequence length where a model breaks. Plus the shape
// of each verb's JSON output.
#include <gtest/gtest.h>

#include <cstdio>

#include "diag/bench.h"
#include "diag/diff.h"
#include "diag/explain.h"
#include "diag/inputs.h"
#include "diag/probe.h"
#include "model_builder.h"
#include "glassbox/numerics_checker.h"

using namespace glassbox;
using namespace glassbox::testing;

namespace {

onnx::TensorProto* add_scalar(onnx::GraphProto* g, const std::string& name, float v) {
  return add_float_initializer(g, name, {}, {v});
}

// x[batch, 4] -> Mul(scale) -> Add(shift) -> Relu -> y
onnx::ModelProto affine_model(float shift) {
  auto m = make_model(14);
  auto* g = m.mutable_graph();
  auto* x = g->add_input();
  x->set_name("x");
  auto* tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {0, 4});
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  add_scalar(g, "scale", 2.f);
  add_scalar(g, "shift_value", shift);
  add_node(g, "Mul", {"x", "scale"}, {"scaled"}, "scale_node");
  add_node(g, "Add", {"scaled", "shift_value"}, {"shifted"}, "shift_node");
  add_node(g, "Relu", {"shifted"}, {"y"}, "relu_node");
  return m;
}

}  // namespace

// x[2, 3] in [-1, 1) -> Sub 10 (all negative) -> Log "the_log" (NaN here) [-> Relu "after"] -> y
static onnx::ModelProto nan_model(bool relu_after) {
  auto m = make_model(14);
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {2, 3});
  add_scalar(g, "ten", 10.f);
  add_node(g, "Sub", {"x", "ten"}, {"negative"}, "make_negative");
  add_node(g, "Log", {"negative"}, {relu_after ? "logged" : "y"}, "the_log");
  if (relu_after) add_node(g, "Relu", {"logged"}, {"y"}, "after");
  return m;
}

TEST(Numerics, NamesTheNodeThatCreatesNaN) {
  auto m = nan_model(/*relu_after=*/true);
  TempDir dir;
  SessionOptions opts;
  opts.opt_level = 0;
  auto s = Session::load(write_model(m, dir.file("m.onnx")), opts);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  s->set_observer(runtime::make_numerics_checker());
  auto inputs = diag::prepare_inputs(*s, {}, {}, 0, nullptr);
  ASSERT_TRUE(inputs.ok()) << inputs.error().to_string();
  auto r = s->run(*inputs);
  ASSERT_FALSE(r.ok()) << "NaN went unnoticed";
  const std::string msg = r.error().to_string();
  EXPECT_NE(msg.find("the_log"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("'after'"), std::string::npos) << "must stop at the first node: " << msg;
}

TEST(Diff, NamesTheFirstNodeWhereTwoModelsDiffer) {
  TempDir dir;
  const std::string a_path = write_model(affine_model(0.5f), dir.file("a.onnx"));
  const std::string b_path = write_model(affine_model(0.75f), dir.file("b.onnx"));
  SessionOptions opts;
  opts.opt_level = 0;
  auto a = Session::load(a_path, opts);
  auto b = Session::load(b_path, opts);
  ASSERT_TRUE(a.ok() && b.ok());
  auto inputs = diag::prepare_inputs(*a, {}, {"x=3x4"}, 7, nullptr);
  ASSERT_TRUE(inputs.ok()) << inputs.error().to_string();
  auto ca = diag::capture_run(*a, *inputs);
  auto cb = diag::capture_run(*b, *inputs);
  ASSERT_TRUE(ca.ok() && cb.ok());
  auto report = diag::diff_captures(*ca, cb->tensors, 1e-4, 1e-5);
  ASSERT_GE(report.first_exceeding, 0) << "the models differ but diff found nothing";
  EXPECT_EQ(report.rows[report.first_exceeding].node, "shift_node");
  EXPECT_EQ(report.rows[0].node, "scale_node");
  EXPECT_FALSE(report.rows[0].exceeds);
  auto j = diag::diff_to_json(report);
  EXPECT_EQ(j["schema"], "glassbox.diff/1");
  EXPECT_EQ(j["first_divergence"]["node"], "shift_node");
  for (const char* key : {"a", "b", "rtol", "atol", "compared", "only_in_a", "only_in_b", "rows"}) EXPECT_TRUE(j.contains(key)) << key;
  // Same model at two opt levels: nothing exceeds.
  auto same = diag::diff_captures(*ca, ca->tensors, 1e-4, 1e-5);
  EXPECT_EQ(same.first_exceeding, -1);
}

TEST(Diff, NamesTheFirstTensorHoldingNaNAndCountsItPerRow) {
  TempDir dir;
  SessionOptions opts;
  opts.opt_level = 0;
  auto s = Session::load(write_model(nan_model(/*relu_after=*/true), dir.file("nan.onnx")), opts);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  auto inputs = diag::prepare_inputs(*s, {}, {}, 3, nullptr);
  ASSERT_TRUE(inputs.ok()) << inputs.error().to_string();
  auto c = diag::capture_run(*s, *inputs);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  auto report = diag::diff_captures(*c, c->tensors, 1e-4, 1e-5);
  ASSERT_EQ(report.rows.size(), 3u);
  ASSERT_GE(report.first_nonfinite, 0) << "the Log made NaN but diff did not see it";
  EXPECT_EQ(report.rows[report.first_nonfinite].node, "the_log");
  EXPECT_EQ(report.rows[0].nonfinite_a, 0);
  EXPECT_EQ(report.rows[1].nonfinite_a, 6);
  EXPECT_EQ(report.rows[2].nonfinite_b, 6) << "Relu must keep the NaN (as ONNX Runtime does)";
  EXPECT_EQ(report.first_exceeding, -1) << "NaN against the same NaN is no divergence";
  auto j = diag::diff_to_json(report);
  EXPECT_EQ(j["first_nonfinite"]["node"], "the_log");
  EXPECT_EQ(j["rows"][1]["nonfinite_a"], 6);
  EXPECT_NE(diag::diff_to_text(report, 10).find("first NaN/Inf in A: node 'the_log'"), std::string::npos);
}

TEST(Probe, FindsTheSequenceLengthWhereReshapeBreaks) {
  // ids[batch, seq] -> Gather rows of a 64-row table, Slice [0:seq] of the table too,
  // then Reshape the slice to [1, seq, 8]: fine up to 64, broken from 65 on.
  auto m = make_model(14);
  auto* g = m.mutable_graph();
  auto* in = g->add_input();
  in->set_name("input_ids");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::INT64);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  tt->mutable_shape()->add_dim()->set_dim_param("sequence");
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {1, 0, 8});
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("sequence");
  std::vector<float> table(64 * 8);
  for (size_t i = 0; i < table.size(); ++i) table[i] = 0.01f * static_cast<float>(i % 97);
  add_float_initializer(g, "table", {64, 8}, table);
  auto int_init = [&](const std::string& name, std::vector<int64_t> v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (auto x : v) t->add_int64_data(x);
  };
  int_init("zero", {0});
  int_init("one", {1});
  int_init("eight", {8});
  int_init("start", {0});
  int_init("axis0", {0});
  add_node(g, "Shape", {"input_ids"}, {"ids_shape"}, "shape");
  add_node(g, "Slice", {"ids_shape", "one", "eight"}, {"seq_len"}, "seq_len");  // [seq]
  add_node(g, "Slice", {"table", "start", "seq_len", "axis0"}, {"rows"}, "take_rows");
  add_node(g, "Concat", {"one", "seq_len", "eight"}, {"target"}, "target_shape")->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  add_node(g, "Reshape", {"rows", "target"}, {"y"}, "breaking_reshape");
  TempDir dir;
  diag::ProbeOptions po;
  po.max_length = 128;
  SessionOptions so;
  so.opt_level = 0;
  auto r = diag::probe_model(write_model(m, dir.file("m.onnx")), so, po);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_FALSE(r->ok());
  bool found = false;
  for (const auto& c : r->cases)
    if (c.name == "first failing sequence length") {
      found = true;
      EXPECT_NE(c.detail.find("length 65 is the shortest that fails"), std::string::npos) << c.detail;
    }
  EXPECT_TRUE(found) << diag::probe_to_text(*r);
  auto j = diag::probe_to_json(*r);
  EXPECT_EQ(j["schema"], "glassbox.probe/1");
  EXPECT_EQ(j["ok"], false);
  ASSERT_TRUE(j["cases"].is_array());
  for (const auto& c : j["cases"]) {
    EXPECT_TRUE(c.contains("name") && c.contains("status") && c.contains("detail"));
  }
}

TEST(Bench, JsonHasTheContractKeys) {
  TempDir dir;
  diag::BenchOptions bo;
  bo.repeat = 3;
  bo.warmup = 1;
  auto r = diag::bench_model(write_model(affine_model(0.5f), dir.file("m.onnx")), {}, {}, {"x=2x4"}, bo);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  auto j = diag::bench_to_json(*r);
  EXPECT_EQ(j["schema"], "glassbox.bench/1");
  for (const char* key : {"model", "threads", "opt_level", "inputs", "load_ms", "first_run_ms", "cold_start_ms", "warmup",
                          "repeat", "latency_ms", "peak_rss_bytes", "arena_bytes", "gflop_per_run", "gflops_per_s",
                          "profile_top10"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"p50", "p95", "p99", "max"}) EXPECT_TRUE(j["latency_ms"].contains(key)) << key;
  EXPECT_LE(j["latency_ms"]["p50"].get<double>(), j["latency_ms"]["p95"].get<double>());
  EXPECT_GT(j["peak_rss_bytes"].get<int64_t>(), 0);
}

TEST(Bench, CheckNumericsTimesTheRunsWithTheChecker) {
  // affine_model(0.5) stays finite: the checked runs pass and the report says they were checked.
  TempDir dir;
  diag::BenchOptions bo;
  bo.repeat = 2;
  bo.warmup = 0;
  bo.check_numerics = true;
  const std::string ok_model = write_model(affine_model(0.5f), dir.file("ok.onnx"));
  auto r = diag::bench_model(ok_model, {}, {}, {"x=2x4"}, bo);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(diag::bench_to_json(*r)["check_numerics"], true);
  // A model that produces a NaN (Log of a negative) fails the checked bench naming the node.
  auto m = nan_model(/*relu_after=*/false);
  SessionOptions so;
  so.opt_level = 0;
  auto bad = diag::bench_model(write_model(m, dir.file("nan.onnx")), so, {}, {}, bo);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().to_string().find("the_log"), std::string::npos) << bad.error().to_string();
  bo.check_numerics = false;  // unchecked, the same model benches fine
  EXPECT_TRUE(diag::bench_model(dir.file("nan.onnx"), so, {}, {}, bo).ok());
}

TEST(Bench, CountsMatMulFlops) {
  auto a = Tensor::allocate(DataType::kFloat32, {2, 3, 5});
  auto b = Tensor::allocate(DataType::kFloat32, {5, 7});
  auto c = Tensor::allocate(DataType::kFloat32, {2, 3, 7});
  const Tensor* in[] = {&*a, &*b};
  const Tensor* out[] = {&*c};
  EXPECT_DOUBLE_EQ(diag::node_flops("MatMul", in, out), 2.0 * 2 * 3 * 7 * 5);
}

TEST(Explain, EveryOptionHasAReasonAndARisk) {
  diag::EffectiveOptions opts;
  auto rows = diag::explain_options(opts);
  ASSERT_GT(rows.size(), 15u);
  for (const auto& r : rows) {
    EXPECT_FALSE(r.reason.empty()) << r.component << "." << r.name << " has no reason";
    EXPECT_FALSE(r.risk.empty()) << r.component << "." << r.name << " has no risk";
    EXPECT_EQ(r.source, "default") << r.component << "." << r.name;
  }
}

TEST(Explain, ConfigFileValuesAreMarkedAndUnknownKeysRefused) {
  diag::EffectiveOptions opts;
  ASSERT_TRUE(diag::apply_config(nlohmann::json::parse(R"({"session":{"threads":1,"opt_level":0}})"), opts).ok());
  auto rows = diag::explain_options(opts);
  for (const auto& r : rows)
    if (r.component == "session" && r.name == "threads") {
      EXPECT_EQ(r.value, "1");
      EXPECT_EQ(r.source, "file");
    }
  auto bad = diag::apply_config(nlohmann::json::parse(R"({"session":{"thread":1}})"), opts);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().to_string().find("unknown key \"thread\""), std::string::npos);
}

TEST(Explain, DecisionsDocIsUpToDate) {
  // docs/decisions.md is generated by `glassbox explain --markdown`; regenerate it when options change.
  FILE* f = std::fopen(GLASSBOX_SOURCE_DIR "/docs/decisions.md", "rb");
  ASSERT_NE(f, nullptr) << "docs/decisions.md missing: run glassbox explain --markdown > docs/decisions.md";
  std::string committed;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) committed.append(buf, n);
  std::fclose(f);
  auto rows = diag::explain_options({});
  auto process = diag::explain_process_options();  // `glassbox explain` adds the CLI process's rows
  rows.insert(rows.end(), process.begin(), process.end());
  EXPECT_EQ(committed, diag::explain_to_markdown(rows))
      << "docs/decisions.md is stale: run `glassbox explain --markdown > docs/decisions.md`";
}
