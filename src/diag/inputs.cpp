#include "diag/inputs.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <random>

#include "glassbox/tensor_io.h"

namespace glassbox::diag {
namespace {

bool contains(const std::string& name, const char* needle) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find(needle) != std::string::npos;
}

template <class T>
void fill_ints(Tensor& t, const std::string& name, std::mt19937_64& rng) {
  T* p = t.mutable_data<T>();
  const int64_t n = t.numel();
  if (contains(name, "mask")) {
    std::fill(p, p + n, T(1));
  } else if (contains(name, "type")) {
    std::fill(p, p + n, T(0));
  } else if (contains(name, "position")) {
    const int64_t last = t.rank() ? std::max<int64_t>(1, t.shape().back()) : 1;
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(i % last);
  } else {
    std::uniform_int_distribution<int64_t> d(0, 99);
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(d(rng));
  }
}

}  // namespace

const char* generated_fill_rule() {
  return "float: uniform [-1,1) seeded; int named *mask*: 1; *type*: 0; *position*: 0..n-1; other ints: uniform "
         "[0,100); bool: true";
}

Result<Shape> parse_shape(const std::string& text) {
  Shape shape;
  if (text.empty()) return shape;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find_first_of("x,", start);
    if (end == std::string::npos) end = text.size();
    int64_t v = -1;
    auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + end, v);
    if (ec != std::errc() || ptr != text.data() + end || v < 0)
      return make_error(ErrorCode::kInvalidArgument, "shape '" + text + "' is not like 1x128", {},
                        "write dimensions as non-negative integers separated by 'x'");
    shape.push_back(v);
    start = end + 1;
  }
  return shape;
}

Result<Tensor> generate_input(const TensorSpec& spec, const Shape& shape, uint64_t seed) {
  GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(spec.dtype, shape));
  std::mt19937_64 rng(seed ^ std::hash<std::string>{}(spec.name));
  switch (spec.dtype) {
    case DataType::kFloat32: {
      std::uniform_real_distribution<float> d(-1.f, 1.f);
      float* p = t.mutable_data<float>();
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = d(rng);
      break;
    }
    case DataType::kFloat64: {
      std::uniform_real_distribution<double> d(-1.0, 1.0);
      double* p = t.mutable_data<double>();
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = d(rng);
      break;
    }
    case DataType::kInt64: fill_ints<int64_t>(t, spec.name, rng); break;
    case DataType::kInt32: fill_ints<int32_t>(t, spec.name, rng); break;
    case DataType::kUInt8: fill_ints<uint8_t>(t, spec.name, rng); break;
    case DataType::kInt8: fill_ints<int8_t>(t, spec.name, rng); break;
    case DataType::kBool: std::fill(t.mutable_data<bool>(), t.mutable_data<bool>() + t.numel(), true); break;
    default:
      return make_error(ErrorCode::kUnsupported, std::string("cannot generate inputs of dtype ") + dtype_name(spec.dtype),
                        "input '" + spec.name + "'", "pass the input as a file with --input NAME=FILE");
  }
  return t;
}

Result<std::vector<NamedTensor>> prepare_inputs(const Session& session, const std::vector<std::string>& input_args,
                                                const std::vector<std::string>& shape_args, uint64_t seed,
                                                std::vector<InputOrigin>* origins) {
  std::map<std::string, std::string> files, shapes;
  auto split = [&](const std::string& arg, const char* flag, std::map<std::string, std::string>& into) -> Status {
    auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      return make_error(ErrorCode::kInvalidArgument, std::string(flag) + " '" + arg + "' is not NAME=VALUE");
    const std::string name = arg.substr(0, eq);
    bool known = false;
    for (const auto& s : session.inputs()) known = known || s.name == name;
    if (!known) {
      std::string expected;
      for (const auto& s : session.inputs()) expected += (expected.empty() ? "" : ", ") + s.to_string();
      return make_error(ErrorCode::kNotFound, "model has no input '" + name + "'", flag, "model inputs: " + expected);
    }
    into[name] = arg.substr(eq + 1);
    return {};
  };
  for (const auto& a : input_args) GB_RETURN_IF_ERROR(split(a, "--input", files));
  for (const auto& a : shape_args) GB_RETURN_IF_ERROR(split(a, "--shape", shapes));
  std::vector<NamedTensor> out;
  for (const auto& spec : session.inputs()) {
    InputOrigin origin{spec.name, {}, spec.dtype, {}};
    if (files.count(spec.name)) {
      auto t = runtime::read_tensor_file(files[spec.name]);
      if (!t.ok()) return std::move(t).take_error().with_where("--input " + spec.name);
      origin.source = "file:" + files[spec.name];
      origin.shape = t->tensor.shape();
      out.push_back({spec.name, std::move(t->tensor)});
    } else {
      Shape shape;
      if (shapes.count(spec.name)) {
        GB_ASSIGN_OR_RETURN(shape, parse_shape(shapes[spec.name]));
      } else {
        bool fixed = spec.has_shape;
        for (int64_t d : spec.dims) fixed = fixed && d >= 0;
        if (!fixed)
          return make_error(ErrorCode::kInvalidArgument, "input has dynamic dimensions: " + spec.to_string(),
                            "input '" + spec.name + "'", "give --shape " + spec.name + "=DxD... or --input " + spec.name + "=FILE");
        shape = spec.dims;
      }
      GB_ASSIGN_OR_RETURN(Tensor t, generate_input(spec, shape, seed));
      origin.source = std::string("generated");
      origin.shape = shape;
      out.push_back({spec.name, std::move(t)});
    }
    if (origins) origins->push_back(origin);
  }
  return out;
}

}  // namespace glassbox::diag
