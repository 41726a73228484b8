#include "glassbox/conformance.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "glassbox/tensor_io.h"

namespace glassbox::runtime {
namespace fs = std::filesystem;
namespace {

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal
      int e = -1;
      uint32_t m = mant;
      do { ++e; m <<= 1; } while (!(m & 0x400));
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (m & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double element_as_double(const Tensor& t, int64_t i) {
  const char* p = static_cast<const char*>(t.raw());
  switch (t.dtype()) {
    case DataType::kFloat32: return reinterpret_cast<const float*>(p)[i];
    case DataType::kFloat64: return reinterpret_cast<const double*>(p)[i];
    case DataType::kFloat16: return half_to_float(reinterpret_cast<const uint16_t*>(p)[i]);
    case DataType::kBFloat16: {
      uint32_t bits = static_cast<uint32_t>(reinterpret_cast<const uint16_t*>(p)[i]) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    default: return 0;
  }
}

bool is_float(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat64 || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

std::vector<std::string> sorted_files(const std::string& dir, const std::string& prefix) {
  std::vector<std::pair<int, std::string>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) != 0 || n.size() < prefix.size() + 4 || n.substr(n.size() - 3) != ".pb") continue;
    const std::string num = n.substr(prefix.size(), n.size() - prefix.size() - 3);
    if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos) continue;
    found.emplace_back(std::stoi(num), e.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

CaseOutcome outcome_for(const Error& e) {
  return e.code == ErrorCode::kUnsupported ? CaseOutcome::kUnsupported : CaseOutcome::kFail;
}

// The backend test data store bfloat16 tensors as uint16 (same bits): read them as declared.
Tensor as_bfloat16_if_declared(Tensor t, DataType declared) {
  if (t.dtype() != DataType::kUInt16 || declared != DataType::kBFloat16) return t;
  auto v = Tensor::view(DataType::kBFloat16, t.shape(), t.buffer(), t.byte_offset());
  return v.ok() ? std::move(v).value() : t;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace

bool is_test_case_dir(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / "model.onnx", ec);
}

std::vector<std::string> find_test_cases(const std::string& dir) {
  if (is_test_case_dir(dir)) return {dir};
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && is_test_case_dir(e.path().string())) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  if (actual.dtype() != expected.dtype())
    return std::string("dtype ") + dtype_name(actual.dtype()) + ", expected " + dtype_name(expected.dtype());
  if (actual.shape() != expected.shape())
    return "shape " + shape_to_string(actual.shape()) + ", expected " + shape_to_string(expected.shape());
  const int64_t n = expected.numel();
  if (is_float(expected.dtype())) {
    for (int64_t i = 0; i < n; ++i) {
      const double a = element_as_double(actual, i), e = element_as_double(expected, i);
      if (std::isnan(e) && std::isnan(a)) continue;
      if (a == e) continue;  // also equal infinities
      if (std::isinf(a) || std::isinf(e) || !(std::fabs(a - e) <= atol + rtol * std::fabs(e))) {
        std::ostringstream os;
        os.precision(9);
        os << "element " << i << " is " << a << ", expected " << e << " (|diff| " << std::fabs(a - e) << " > atol "
           << atol << " + rtol " << rtol << " * |expected|)";
        return os.str();
      }
    }
    return {};
  }
  const size_t es = dtype_size(expected.dtype());
  const char* a = static_cast<const char*>(actual.raw());
  const char* e = static_cast<const char*>(expected.raw());
  for (int64_t i = 0; i < n; ++i) {
    if (std::memcmp(a + i * es, e + i * es, es) == 0) continue;
    int64_t av = 0, ev = 0;
    std::memcpy(&av, a + i * es, std::min<size_t>(es, 8));
    std::memcpy(&ev, e + i * es, std::min<size_t>(es, 8));
    return "element " + std::to_string(i) + " differs (raw " + std::to_string(av) + ", expected " + std::to_string(ev) + ")";
  }
  return {};
}

std::string compare_values(const Value& actual, const Value& expected, double rtol, double atol) {
  if (actual.kind != expected.kind)
    return std::string("a ") + actual.kind_name() + " value, expected a " + expected.kind_name();
  if (expected.kind == Value::Kind::kTensor)
    return compare_tensors(actual.tensor, as_bfloat16_if_declared(expected.tensor, actual.tensor.dtype()), rtol, atol);
  if (actual.elements.size() != expected.elements.size())
    return "sequence of " + std::to_string(actual.elements.size()) + " elements, expected " +
           std::to_string(expected.elements.size());
  for (size_t e = 0; e < expected.elements.size(); ++e) {
    const std::string d = compare_tensors(actual.elements[e],
                                          as_bfloat16_if_declared(expected.elements[e], actual.elements[e].dtype()), rtol, atol);
    if (!d.empty()) return "element " + std::to_string(e) + ": " + d;
  }
  return {};
}

CaseResult run_test_case(const std::string& dir, const ConformanceOptions& options) {
  CaseResult r;
  r.name = fs::path(dir).filename().string();
  if (r.name.empty()) r.name = fs::path(dir).parent_path().filename().string();
  auto ex = options.excluded.find(r.name);
  if (ex != options.excluded.end()) {
    r.outcome = CaseOutcome::kUnsupported;
    r.excluded = true;
    r.reason = "excluded: " + ex->second;
    return r;
  }
  auto session = Session::load((fs::path(dir) / "model.onnx").string(), options.session);
  if (!session.ok()) {
    r.outcome = outcome_for(session.error());
    r.reason = one_line(session.error().to_string());
    return r;
  }
  std::vector<std::string> sets;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path().string());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) {
    r.outcome = CaseOutcome::kUnsupported;
    r.reason = "no test_data_set_* directory";
    return r;
  }
  const auto& specs = session->inputs();
  const auto& out_specs = session->outputs();
  for (const auto& set : sets) {
    const std::string set_name = fs::path(set).filename().string();
    auto input_files = sorted_files(set, "input_");
    auto output_files = sorted_files(set, "output_");
    std::vector<NamedValue> inputs;
    for (size_t i = 0; i < input_files.size(); ++i) {
      // input_<i>.pb feeds the i-th model input (backend test convention), read as its declared type.
      if (i >= specs.size()) break;  // reported below
      auto v = read_value_pb(input_files[i], specs[i].type);
      if (!v.ok()) {
        r.outcome = outcome_for(v.error());
        r.reason = set_name + ": " + one_line(v.error().to_string());
        return r;
      }
      if (v->kind == Value::Kind::kTensor) v->tensor = as_bfloat16_if_declared(std::move(v->tensor), specs[i].dtype);
      for (auto& e : v->elements) e = as_bfloat16_if_declared(std::move(e), specs[i].dtype);
      inputs.push_back({specs[i].name, std::move(v).value()});
    }
    if (input_files.size() != specs.size()) {
      r.outcome = CaseOutcome::kFail;
      r.reason = set_name + ": has " + std::to_string(input_files.size()) + " input files, model has " +
                 std::to_string(specs.size()) + " inputs";
      return r;
    }
    auto outs = session->run_values(inputs);
    if (!outs.ok()) {
      r.outcome = outcome_for(outs.error());
      r.reason = set_name + ": " + one_line(outs.error().to_string());
      return r;
    }
    if (output_files.size() != outs->size()) {
      r.outcome = CaseOutcome::kFail;
      r.reason = set_name + ": model produced " + std::to_string(outs->size()) + " outputs, expected " +
                 std::to_string(output_files.size());
      return r;
    }
    for (size_t i = 0; i < output_files.size(); ++i) {
      auto expected = read_value_pb(output_files[i], out_specs[i].type);
      if (!expected.ok()) {
        r.outcome = outcome_for(expected.error());
        r.reason = set_name + ": " + one_line(expected.error().to_string());
        return r;
      }
      const std::string diff = compare_values((*outs)[i].value, *expected, options.rtol, options.atol);
      if (!diff.empty()) {
        r.outcome = CaseOutcome::kFail;
        r.reason = set_name + ": output " + std::to_string(i) + " '" + (*outs)[i].name + "': " + diff;
        return r;
      }
    }
  }
  r.outcome = CaseOutcome::kPass;
  return r;
}

Result<std::map<std::string, std::string>> read_exclusion_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot open exclusion file", path);
  std::map<std::string, std::string> out;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    auto hash = line.find('#');
    if (hash != std::string::npos) line = line.substr(0, hash);
    std::istringstream ss(line);
    std::string name;
    if (!(ss >> name)) continue;
    std::string reason;
    std::getline(ss, reason);
    auto b = reason.find_first_not_of(" \t");
    reason = b == std::string::npos ? "" : reason.substr(b);
    if (reason.empty())
      return make_error(ErrorCode::kInvalidArgument, "excluded case '" + name + "' has no reason",
                        path + ":" + std::to_string(lineno), "write 'name  reason' on one line");
    if (out.count(name))
      return make_error(ErrorCode::kInvalidArgument, "case '" + name + "' is listed twice", path + ":" + std::to_string(lineno));
    out[name] = reason;
  }
  return out;
}

}  // namespace glassbox::runtime
