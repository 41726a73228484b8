// Small ONNX models built with the protobuf API for the runtime tests, and
// helpers to make tensors. Tests that need an op the registry does not have yet
// skip themselves (REQUIRE_OPS) rather than fail.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "glassbox/tensor.h"
#include "ops/registry.h"

namespace glassbox::rt_test {

inline onnx::ModelProto make_model(int64_t opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("glassbox-runtime-test");
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

// dims: >= 0 fixed, -1 symbolic with the matching name from `symbols` (or unnamed).
inline void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                      int elem_type, const std::vector<int64_t>& dims, const std::vector<std::string>& symbols = {}) {
  auto* vi = list->Add();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (dims[i] >= 0) d->set_dim_value(dims[i]);
    else if (i < symbols.size() && !symbols[i].empty()) d->set_dim_param(symbols[i]);
  }
}

inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs, const std::string& name = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name.empty() ? op + "_" + std::to_string(g->node_size()) : name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

inline void add_int_attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void add_ints_attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

template <class T>
inline void add_initializer(onnx::GraphProto* g, const std::string& name, int elem_type, const std::vector<int64_t>& dims,
                            const std::vector<T>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  for (auto d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "glassbox-rt-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string write_model(const onnx::ModelProto& m, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  m.SerializeToOstream(&out);
  return path;
}

template <class T>
inline Tensor make_tensor(DataType dt, const Shape& shape, const std::vector<T>& values) {
  auto t = Tensor::allocate(dt, shape);
  EXPECT_TRUE(t.ok());
  if (!values.empty()) std::memcpy(t->mutable_raw(), values.data(), values.size() * sizeof(T));
  return std::move(t).value();
}

inline Tensor float_tensor(const Shape& shape, const std::vector<float>& v) { return make_tensor(DataType::kFloat32, shape, v); }

template <class T>
inline std::vector<T> values_of(const Tensor& t) {
  std::vector<T> out(static_cast<size_t>(t.numel()));
  if (!out.empty()) std::memcpy(out.data(), t.raw(), out.size() * sizeof(T));
  return out;
}

inline std::string missing_ops(std::initializer_list<const char*> ops, int64_t opset = 17) {
  std::string missing;
  for (const char* op : ops)
    if (!glassbox::ops::is_supported("", op, opset)) missing += std::string(missing.empty() ? "" : ", ") + op;
  return missing;
}

}  // namespace glassbox::rt_test

// Skips the test while the op engineers have not registered an op it needs.
#define REQUIRE_OPS(...)                                                         \
  do {                                                                           \
    const std::string gb_missing_ = ::glassbox::rt_test::missing_ops({__VA_ARGS__}); \
    if (!gb_missing_.empty()) GTEST_SKIP() << "ops not registered yet: " << gb_missing_; \
  } while (0)
