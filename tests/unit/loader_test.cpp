// Loader: IR building and every refusal path (serving-and-robustness.md items 1-5).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "graph/loader.h"
#include "model_builder.h"

using namespace glassbox;
using namespace glassbox::testing;

namespace {

Result<graph::Model> load(const onnx::ModelProto& m, const TempDir& dir, graph::LoadOptions opts = {}) {
  return graph::load_model(write_model(m, dir.file("model.onnx")), opts);
}

// Expects a load failure whose message contains `needle`.
void expect_refused(const Result<graph::Model>& r, const std::string& needle, ErrorCode code = ErrorCode::kInvalidModel) {
  ASSERT_FALSE(r.ok()) << "model was accepted, expected an error containing: " << needle;
  EXPECT_EQ(r.error().code, code) << r.error().to_string();
  EXPECT_NE(r.error().to_string().find(needle), std::string::npos) << r.error().to_string();
}

// Model whose initializer w (float[4]) lives in external data with the given entries.
onnx::ModelProto external_model(const std::vector<std::pair<std::string, std::string>>& entries) {
  auto m = make_add_model();
  auto* t = m.mutable_graph()->mutable_initializer(0);
  t->clear_raw_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [k, v] : entries) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  return m;
}

std::string floats_bytes(std::vector<float> v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4); }

}  // namespace

TEST(Loader, BuildsIrFromValidModel) {
  TempDir dir;
  auto r = load(make_add_model(), dir);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const auto& g = r->graph;
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.inputs[0].name, "x");
  EXPECT_EQ(g.inputs[0].dtype, DataType::kFloat32);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Add");
  ASSERT_EQ(g.initializers.count("w"), 1u);
  const Tensor& w = g.initializers.at("w");
  EXPECT_EQ(w.shape(), Shape{4});
  EXPECT_FLOAT_EQ(w.data<float>()[3], 4.f);
  EXPECT_FALSE(w.writable()) << "initializers are read-only views";
  EXPECT_EQ(r->opset(), 17);
  EXPECT_TRUE(r->checker_ran);
  EXPECT_TRUE(r->checker_error.empty());
}

TEST(Loader, NamesUnnamedNodesAndSortsTopologically) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2});
  add_value(g->mutable_output(), "z", onnx::TensorProto::FLOAT, {2});
  add_node(g, "Relu", {"y"}, {"z"});  // consumer listed first
  add_node(g, "Neg", {"x"}, {"y"});
  TempDir dir;
  graph::LoadOptions opts;
  opts.run_checker = false;  // the checker itself refuses unsorted graphs
  auto r = load(m, dir, opts);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->graph.nodes.size(), 2u);
  EXPECT_EQ(r->graph.nodes[0].op_type, "Neg");
  EXPECT_EQ(r->graph.nodes[0].name, "Neg_1");
  EXPECT_EQ(r->graph.nodes[1].name, "Relu_0");
}

TEST(Loader, MapsValidExternalData) {
  TempDir dir;
  write_bytes(dir.file("weights.bin"), std::string(8, '\0') + floats_bytes({5, 6, 7, 8}));
  auto r = load(external_model({{"location", "weights.bin"}, {"offset", "8"}, {"length", "16"}}), dir);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Tensor& w = r->graph.initializers.at("w");
  EXPECT_FLOAT_EQ(w.data<float>()[0], 5.f);
  EXPECT_FLOAT_EQ(w.data<float>()[3], 8.f);
  EXPECT_FALSE(w.writable());
  EXPECT_EQ(r->external_data.tensors, 1);
  EXPECT_EQ(r->external_data.bytes, 16);
}

TEST(Loader, RefusesExternalDataEscapingTheModelDirectory) {
  TempDir dir;
  write_bytes(dir.file("weights.bin"), floats_bytes({1, 2, 3, 4}));
  expect_refused(load(external_model({{"location", "../x"}}), dir), "'..'");
  expect_refused(load(external_model({{"location", "a/../../etc/passwd"}}), dir), "'..'");
  expect_refused(load(external_model({{"location", "/etc/passwd"}}), dir), "absolute");
  expect_refused(load(external_model({{"location", ""}}), dir), "no 'location'");
  expect_refused(load(external_model({}), dir), "no 'location'");
  expect_refused(load(external_model({{"location", "weights.bin"}, {"location", "weights.bin"}}), dir), "twice");
  expect_refused(load(external_model({{"location", "weights.bin"}, {"sha", "x"}}), dir), "unknown external_data key");
  expect_refused(load(external_model({{"location", "missing.bin"}}), dir), "does not exist");
  // A symlink inside the directory pointing outside it.
  TempDir outside;
  write_bytes(outside.file("secret.bin"), floats_bytes({9, 9, 9, 9}));
  ASSERT_EQ(symlink(outside.file("secret.bin").c_str(), dir.file("link.bin").c_str()), 0);
  expect_refused(load(external_model({{"location", "link.bin"}}), dir), "outside the model directory");
  // A symlinked directory escaping too.
  ASSERT_EQ(symlink(outside.path().c_str(), dir.file("sub").c_str()), 0);
  expect_refused(load(external_model({{"location", "sub/secret.bin"}}), dir), "outside the model directory");
}

TEST(Loader, RefusesExternalDataOutsideTheFileOrOfWrongSize) {
  TempDir dir;
  write_bytes(dir.file("weights.bin"), floats_bytes({1, 2, 3, 4}));
  expect_refused(load(external_model({{"location", "weights.bin"}, {"offset", "4"}}), dir), "lies outside");
  expect_refused(load(external_model({{"location", "weights.bin"}, {"offset", "9223372036854775807"}}), dir), "lies outside");
  expect_refused(load(external_model({{"location", "weights.bin"}, {"offset", "18446744073709551615"}}), dir),
                 "not a valid");
  expect_refused(load(external_model({{"location", "weights.bin"}, {"offset", "-1"}}), dir), "not a valid");
  expect_refused(load(external_model({{"location", "weights.bin"}, {"length", "12"}}), dir), "does not match");
  expect_refused(load(external_model({{"location", "weights.bin"}, {"length", "99999999999"}}), dir), "does not match");
}

TEST(Loader, RefusesBadInitializers) {
  TempDir dir;
  {
    auto m = make_add_model();
    m.mutable_graph()->mutable_initializer(0)->set_raw_data(floats_bytes({1, 2, 3}));
    expect_refused(load(m, dir), "raw_data has 12 bytes");
  }
  {
    auto m = make_add_model();
    m.mutable_graph()->mutable_initializer(0)->set_dims(0, -4);
    expect_refused(load(m, dir), "negative dimension");
  }
  {
    auto m = make_add_model();
    auto* t = m.mutable_graph()->mutable_initializer(0);
    t->clear_dims();
    t->add_dims(int64_t{1} << 40);
    t->add_dims(int64_t{1} << 40);
    expect_refused(load(m, dir), "overflows int64");
  }
  {
    auto m = make_add_model();
    auto* t = m.mutable_graph()->mutable_initializer(0);
    t->clear_raw_data();
    t->add_float_data(1.f);
    expect_refused(load(m, dir), "has 1 values");
  }
  {
    auto m = make_add_model();
    graph::LoadOptions opts;
    opts.max_tensor_elements = 3;
    expect_refused(load(m, dir, opts), "max_tensor_elements", ErrorCode::kLimitExceeded);
  }
}

TEST(Loader, RefusesDeepNestingWithoutCrashing) {
  // If-nodes nested 300 deep (each then_branch holds the next If).
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "c", onnx::TensorProto::BOOL, {});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {});
  onnx::GraphProto* cur = g;
  for (int depth = 0; depth < 300; ++depth) {
    auto* n = add_node(cur, "If", {"c"}, {"y"});
    auto* a = n->add_attribute();
    a->set_name("then_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    cur = a->mutable_g();
    add_value(cur->mutable_output(), "y", onnx::TensorProto::FLOAT, {});
  }
  TempDir dir;
  auto r = load(m, dir);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().to_string().find("max_graph_depth"), std::string::npos) << r.error().to_string();
}

TEST(Loader, RefusesMalformedGraphs) {
  TempDir dir;
  graph::LoadOptions no_checker;  // reach our own checks, not only the ONNX checker's
  no_checker.run_checker = false;
  {
    auto m = make_model();
    auto* g = m.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2});
    add_value(g->mutable_output(), "b", onnx::TensorProto::FLOAT, {2});
    add_node(g, "Add", {"x", "b"}, {"a"}, "n1");
    add_node(g, "Relu", {"a"}, {"b"}, "n2");
    expect_refused(load(m, dir, no_checker), "cycle");
  }
  {
    auto m = make_model();
    auto* g = m.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2});
    add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {2});
    add_node(g, "Add", {"x", "ghost"}, {"y"}, "n1");
    expect_refused(load(m, dir, no_checker), "'ghost' is not produced");
  }
  {
    auto m = make_model();
    auto* g = m.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2});
    add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {2});
    add_node(g, "Relu", {"x"}, {"y"}, "n1");
    add_node(g, "Neg", {"x"}, {"y"}, "n2");
    expect_refused(load(m, dir, no_checker), "produced twice");
  }
  {
    auto m = make_model();
    auto* g = m.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2});
    add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {2});
    add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {2});
    add_node(g, "Relu", {"x"}, {"y"}, "n1");
    expect_refused(load(m, dir, no_checker), "declared twice");
  }
  {
    auto m = make_model();
    auto* g = m.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2});
    add_value(g->mutable_output(), "nowhere", onnx::TensorProto::FLOAT, {2});
    add_node(g, "Relu", {"x"}, {"y"}, "n1");
    expect_refused(load(m, dir, no_checker), "never produced");
  }
}

TEST(Loader, CheckerFailureIsAnErrorByDefault) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {2});
  add_node(g, "NoSuchOp", {"x"}, {"y"}, "n1");
  TempDir dir;
  expect_refused(load(m, dir), "ONNX checker");
  graph::LoadOptions report_only;
  report_only.checker_failure_is_error = false;
  auto r = load(m, dir, report_only);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_NE(r->checker_error.find("NoSuchOp"), std::string::npos) << r->checker_error;
}

TEST(Loader, RefusesFilesThatAreNotModelsOrTooLarge) {
  TempDir dir;
  write_bytes(dir.file("junk.onnx"), std::string("\xff\xff\xff\xff this is not protobuf", 26));
  auto junk = graph::load_model(dir.file("junk.onnx"));
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.error().to_string().find("not a valid ONNX protobuf"), std::string::npos) << junk.error().to_string();

  auto missing = graph::load_model(dir.file("nope.onnx"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);

  graph::LoadOptions tiny;
  tiny.max_model_bytes = 10;
  auto big = graph::load_model(write_model(make_add_model(), dir.file("m.onnx")), tiny);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(big.error().to_string().find("max_model_bytes"), std::string::npos);
}

// LoadOptions::map_initializers: large initializers of the main graph are views of the mapped
// file with the same values as the copying path; small ones, misaligned ones and subgraph
// ones are copies; bad sizes are still refused; scans of corrupt bytes fall back to protobuf.
namespace {

// y = x + w + v: w float[n] (large), v float[1] (small). The graph's name (field 2, written
// before the initializers, field 5) has shift + 1 characters, so shifts 0..3 move w's payload
// through all four alignments in the file.
onnx::ModelProto make_large_add_model(int64_t n, size_t shift) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  g->set_name(std::string(shift + 1, 'g'));
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {n});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {n});
  std::vector<float> w(static_cast<size_t>(n));
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f * static_cast<float>(i) - 3.f;
  add_float_initializer(g, "w", {n}, w);
  add_float_initializer(g, "v", {1}, {7.f});
  add_node(g, "Add", {"x", "w"}, {"xw"}, "add1");
  add_node(g, "Add", {"xw", "v"}, {"y"}, "add2");
  return m;
}

}  // namespace

TEST(Loader, MapsLargeInitializersFromTheFile) {
  TempDir dir;
  for (size_t shift : {0, 1, 2, 3}) {
    SCOPED_TRACE("payload shift " + std::to_string(shift));
    auto m = make_large_add_model(10000, shift);
    graph::LoadOptions copy;
    copy.map_initializers = false;
    auto mapped = load(m, dir);
    auto copied = load(m, dir, copy);
    ASSERT_TRUE(mapped.ok()) << mapped.error().to_string();
    ASSERT_TRUE(copied.ok()) << copied.error().to_string();
    EXPECT_TRUE(mapped->checker_ran);
    EXPECT_TRUE(mapped->checker_error.empty()) << mapped->checker_error;
    for (const char* name : {"w", "v"}) {
      const Tensor& a = mapped->graph.initializers.at(name);
      const Tensor& b = copied->graph.initializers.at(name);
      ASSERT_EQ(a.shape(), b.shape()) << name;
      EXPECT_EQ(std::memcmp(a.raw(), b.raw(), b.nbytes()), 0) << name;
    }
    // Where the payload is 4-byte aligned in the file, w must be a view of the mapping:
    // its buffer is the file (read-only, the whole file's size), not a copy of 40000 bytes.
    const Tensor& w = mapped->graph.initializers.at("w");
    const bool aligned = reinterpret_cast<uintptr_t>(w.raw()) % 4 == 0;
    EXPECT_TRUE(aligned) << "misaligned payloads are copied into aligned storage";
    if (w.buffer()->size() > w.nbytes()) {
      EXPECT_EQ(w.buffer()->mutable_data(), nullptr) << "a view of the mapped file is read-only";
    }
    EXPECT_EQ(mapped->graph.initializers.at("v").buffer()->size() > 1000, false) << "small initializers are copies";
  }
  // The four shifts cover every residue mod 4, so exactly one of them is a view.
  int views = 0;
  for (size_t shift : {0, 1, 2, 3}) {
    auto r = load(make_large_add_model(10000, shift), dir);
    ASSERT_TRUE(r.ok());
    views += r->graph.initializers.at("w").buffer()->size() > 40000 ? 1 : 0;
  }
  EXPECT_EQ(views, 1);
}

TEST(Loader, MappedInitializersKeepTheRefusals) {
  TempDir dir;
  auto m = make_large_add_model(10000, 0);
  m.mutable_graph()->mutable_initializer(0)->set_raw_data(std::string(20000, '\0'));
  expect_refused(load(m, dir), "raw_data has 20000 bytes");
  // A truncated file: the scan fails, protobuf reports it.
  std::string bytes;
  make_large_add_model(10000, 0).SerializeToString(&bytes);
  write_bytes(dir.file("cut.onnx"), bytes.substr(0, bytes.size() - 5000));
  expect_refused(graph::load_model(dir.file("cut.onnx")), "not a valid ONNX protobuf");
}
