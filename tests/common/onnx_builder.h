// The one builder of small ONNX models for C++ tests (protobuf API): models, values with fixed or
// symbolic dims, nodes, attributes, initializers, and a temporary directory to write them to.
// tests/unit/model_builder.h (loader tests: nodes keep the name given, "" included) and
// tests/runtime/test_models.h (runtime tests: unnamed nodes get "<op>_<n>") are thin layers over it.
#pragma once

#include <onnx/onnx_pb.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace glassbox::onnx_builder {

inline onnx::ModelProto make_model(int64_t opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("glassbox-test");
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

// A node named exactly `name` ("" leaves it unnamed).
inline onnx::NodeProto* add_node_named(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs,
                                       const std::vector<std::string>& outputs, const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
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
inline onnx::TensorProto* add_initializer(onnx::GraphProto* g, const std::string& name, int elem_type,
                                          const std::vector<int64_t>& dims, const std::vector<T>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  for (auto d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
  return t;
}

inline onnx::TensorProto* add_float_initializer(onnx::GraphProto* g, const std::string& name,
                                                const std::vector<int64_t>& dims, const std::vector<float>& values) {
  return add_initializer(g, name, onnx::TensorProto::FLOAT, dims, values);
}

// A fresh empty directory under the system temp dir, removed at destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "glassbox-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string write_model(const onnx::ModelProto& m, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  m.SerializeToOstream(&out);
  return path;
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

}  // namespace glassbox::onnx_builder
