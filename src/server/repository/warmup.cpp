#include "server/repository/warmup.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "glassbox/tensor_io.h"
#include "server/codec/oip_codec.h"

namespace glassbox::server {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;


Error bad(const std::string& what, const std::string& where, const std::string& fix = {}) {
  return make_error(ErrorCode::kInvalidArgument, what, where,
                    fix.empty() ? "see docs/serving.md, \"Warm-up\": {\"inputs\": {\"NAME\": {\"dims\": [...], \"fill\": "
                                  "\"zeros\" | \"random\", \"seed\": 0} | {\"data\": [...]} | {\"file\": \"x.npy\"}}}"
                                : fix);
}

std::string dims_text(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// splitmix64: a fixed, platform-independent sequence for a seed (std distributions differ between libraries).
uint64_t next_random(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Builds one tensor from OIP-style {"datatype", "shape", "data"} through the request codec, so a
// declared value is checked exactly as a client's would be (ranges, counts, BOOL, BYTES).
Result<OipTensor> decode_as_request(const std::string& name, const std::string& datatype, const std::vector<int64_t>& shape,
                                    json data) {
  HttpRequest req;
  req.method = "POST";
  req.body = json{{"inputs", json::array({json{{"name", name}, {"datatype", datatype}, {"shape", shape},
                                               {"data", std::move(data)}}})}}.dump();
  // A declared warm-up tensor may be as large as a client's (the declared request limits' defaults).
  OipLimits limits = oip_limits(ServerOptions{});
  limits.max_tensors = 1;
  GB_ASSIGN_OR_RETURN(InferRequest r, parse_infer_request(req, limits));
  return std::move(r.inputs.front());
}

Result<json> random_values(const json& spec, DataType dtype, int64_t n, std::string& fill, const std::string& where) {
  uint64_t seed = 0;
  double low = 0, high = 1;
  for (const auto& [key, v] : spec.items()) {
    if (key == "seed") {
      if (!v.is_number_unsigned()) return bad("\"seed\" must be a non-negative integer", where);
      seed = v.get<uint64_t>();
    } else if (key == "low" || key == "high") {
      if (!v.is_number()) return bad("\"" + key + "\" must be a number", where);
      (key == "low" ? low : high) = v.get<double>();
    }
  }
  const bool floating = dtype == DataType::kFloat32 || dtype == DataType::kFloat64;
  const bool boolean = dtype == DataType::kBool;
  if (!floating && !boolean && (dtype == DataType::kFloat16 || dtype == DataType::kBFloat16 || dtype == DataType::kString))
    return make_error(ErrorCode::kUnsupported, std::string("random fill of ") + dtype_name(dtype) + " is not supported", where,
                      "use \"fill\": \"zeros\", \"data\" or a \"file\"");
  if (!(low <= high)) return bad("\"low\" must not be above \"high\"", where);
  json data = json::array();
  uint64_t state = seed;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = next_random(state);
    if (boolean) data.push_back((r & 1) != 0);
    else if (floating) data.push_back(low + (high - low) * static_cast<double>(r >> 11) * 0x1.0p-53);
    else data.push_back(static_cast<int64_t>(low) + static_cast<int64_t>(r % static_cast<uint64_t>(high - low + 1)));
  }
  char b[160];
  snprintf(b, sizeof b, "random (seed %llu, uniform in [%g, %g%s)", static_cast<unsigned long long>(seed), low, high,
           floating ? ")" : boolean ? "], true/false" : "], integers");
  fill = b;
  return data;
}

// The file path of a "file" fill: relative to the model directory, never leaving it.
Result<std::string> warmup_file_path(const std::string& file, const std::string& model_dir, const std::string& where) {
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(model_dir, ec);
  const fs::path p = fs::weakly_canonical(fs::path(model_dir) / file, ec);
  const auto rel = p.lexically_relative(root).string();
  if (ec || fs::path(file).is_absolute() || rel.empty() || rel.rfind("..", 0) == 0)
    return bad("warm-up file '" + file + "' is not inside the model directory", where,
               "put the sample next to model.onnx and name it relative to the model directory");
  return p.string();
}

Status check_against_model(const TensorSpec& in, const std::vector<int64_t>& shape, const std::string& where) {
  if (!in.has_shape) return {};
  if (shape.size() != in.dims.size())
    return bad("declares rank " + std::to_string(shape.size()) + " but the model's input is " + in.to_string(), where);
  for (size_t i = 0; i < shape.size(); ++i)
    if (in.dims[i] >= 0 && in.dims[i] != shape[i])
      return bad("declares dim " + std::to_string(i) + " = " + std::to_string(shape[i]) + " but the model fixes it: " +
                     in.to_string(),
                 where);
  return {};
}

Result<std::vector<int64_t>> declared_dims(const json& spec, const std::string& where) {
  if (!spec.contains("dims") || !spec["dims"].is_array()) return bad("has no \"dims\" array", where);
  std::vector<int64_t> dims;
  for (const auto& d : spec["dims"]) {
    if (!d.is_number_unsigned()) return bad("\"dims\" must hold non-negative integers", where);
    dims.push_back(d.get<int64_t>());
  }
  auto n = shape_numel(dims);
  const int64_t cap = ServerOptions{}.max_tensor_elements;  // a client's tensor cap (declared default)
  if (!n.ok() || *n > cap)
    return make_error(ErrorCode::kLimitExceeded,
                      "dims " + dims_text(dims) + " exceed the warm-up cap of " + std::to_string(cap) +
                          " elements (max_tensor_elements' default)", where);
  return dims;
}

// One declared input: its tensor and how the plan shows it.
Result<NamedTensor> declared_input(const TensorSpec& in, const json& spec, const std::string& model_dir,
                                   WarmupInputPlan& plan, const std::string& where) {
  static const std::vector<std::string> keys = {"dims", "fill", "seed", "low", "high", "data", "file", "data_type"};
  if (!spec.is_object()) return bad("must be an object", where);
  for (const auto& [key, v] : spec.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) return bad("unknown key \"" + key + "\"", where);
  if (spec.contains("data_type") && spec["data_type"] != plan.datatype)
    return bad("declares data_type " + spec["data_type"].dump() + " but the model's input is " + plan.datatype, where);
  const int sources = static_cast<int>(spec.contains("fill")) + spec.contains("data") + spec.contains("file");
  if (sources != 1) return bad("needs exactly one of \"fill\", \"data\" and \"file\"", where);
  plan.shape_source = "declared";
  if (spec.contains("file")) {
    if (!spec["file"].is_string()) return bad("\"file\" must be a string", where);
    GB_ASSIGN_OR_RETURN(std::string path, warmup_file_path(spec["file"].get<std::string>(), model_dir, where));
    auto loaded = runtime::read_tensor_file(path);
    if (!loaded.ok()) return bad(loaded.error().what, where + ": file '" + spec["file"].get<std::string>() + "'");
    Tensor t = std::move(loaded->tensor);
    if (t.dtype() != in.dtype)
      return bad(std::string("file holds ") + dtype_name(t.dtype()) + " but the model's input is " + in.to_string(), where);
    plan.shape = t.shape();
    if (spec.contains("dims")) {
      GB_ASSIGN_OR_RETURN(auto dims, declared_dims(spec, where));
      if (dims != plan.shape) return bad("\"dims\" " + dims_text(dims) + " differ from the file's " + dims_text(plan.shape), where);
    }
    plan.fill = "file " + spec["file"].get<std::string>();
    plan.shape_source = "file";
    GB_RETURN_IF_ERROR(check_against_model(in, plan.shape, where));
    return NamedTensor{in.name, std::move(t)};
  }
  GB_ASSIGN_OR_RETURN(plan.shape, declared_dims(spec, where));
  GB_RETURN_IF_ERROR(check_against_model(in, plan.shape, where));
  GB_ASSIGN_OR_RETURN(int64_t n, shape_numel(plan.shape));
  json data;
  if (spec.contains("data")) {
    data = spec["data"];
    plan.fill = "data (" + std::to_string(n) + " values)";
  } else if (spec["fill"] == "zeros") {
    plan.fill = "zeros";
    if (in.dtype == DataType::kString) {
      GB_ASSIGN_OR_RETURN(Tensor t, Tensor::strings(plan.shape, std::vector<std::string>(static_cast<size_t>(n))));
      return NamedTensor{in.name, std::move(t)};
    }
    GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(in.dtype, plan.shape));
    return NamedTensor{in.name, std::move(t)};
  } else if (spec["fill"] == "random") {
    GB_ASSIGN_OR_RETURN(data, random_values(spec, in.dtype, n, plan.fill, where));
  } else {
    return bad("\"fill\" must be \"zeros\" or \"random\"", where);
  }
  auto t = decode_as_request(in.name, plan.datatype, plan.shape, std::move(data));
  if (!t.ok()) return bad(t.error().what, where);
  if (in.dtype == DataType::kString) {
    GB_ASSIGN_OR_RETURN(Tensor s, Tensor::strings(plan.shape, std::move(t->bytes)));
    return NamedTensor{in.name, std::move(s)};
  }
  return NamedTensor{in.name, std::move(t->tensor)};
}

// The derivation rule: each symbolic dim gets a role. A dim_param name keeps one role across
// inputs (batch over image over sequence), so dims that must agree get one value.
enum class DimRole { kSequence = 0, kImage = 1, kBatch = 2 };

// An image input: rank 4 with 1-4 channels fixed and a symbolic height or width, NCHW
// (channels at 1) or else NHWC (channels at 3). Returns the positions of H and W, or {-1, -1}.
std::pair<int, int> image_dims(const TensorSpec& in) {
  if (!in.has_shape || in.dims.size() != 4) return {-1, -1};
  auto channels = [&](int i) { return in.dims[i] >= 1 && in.dims[i] <= 4; };
  if (channels(1) && (in.dims[2] < 0 || in.dims[3] < 0)) return {2, 3};
  if (channels(3) && (in.dims[1] < 0 || in.dims[2] < 0)) return {1, 2};
  return {-1, -1};
}

DimRole role_here(const TensorSpec& in, size_t i) {
  if (i == 0) return DimRole::kBatch;
  auto [h, w] = image_dims(in);
  if (static_cast<int>(i) == h || static_cast<int>(i) == w) return DimRole::kImage;
  return DimRole::kSequence;
}

std::string symbol_of(const TensorSpec& in, size_t i) { return i < in.symbols.size() ? in.symbols[i] : ""; }

}  // namespace

WarmupRules warmup_rules(const ServerOptions& o) {
  return {o.warmup_batch_size, o.warmup_sequence_length, o.warmup_image_size};
}

nlohmann::ordered_json WarmupPlan::to_json() const {
  nlohmann::ordered_json j;
  j["source"] = source;
  j["declared"] = declared;
  if (!rule.empty()) j["rule"] = rule;
  j["inputs"] = nlohmann::ordered_json::array();
  for (const auto& i : inputs)
    j["inputs"].push_back({{"name", i.name}, {"datatype", i.datatype}, {"shape", i.shape}, {"fill", i.fill},
                           {"shape_source", i.shape_source}});
  return j;
}

std::string WarmupPlan::summary() const {
  std::string s;
  for (const auto& i : inputs) s += (s.empty() ? "" : "; ") + i.name + " " + i.datatype + dims_text(i.shape) + " " + i.fill;
  return s;
}

Result<WarmupDeclaration> find_warmup_declaration(const ServerOptions& options, const std::string& name,
                                                  const std::string& model_dir) {
  if (options.model_warmup.is_object() && options.model_warmup.contains(name))
    return WarmupDeclaration{options.model_warmup[name], "serve config (server.model_warmup)"};
  const fs::path gj = fs::path(model_dir) / "glassbox.json";
  std::error_code ec;
  if (!fs::exists(gj, ec)) return WarmupDeclaration{};
  std::ifstream in(gj);
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return make_error(ErrorCode::kInvalidModel, "glassbox.json is not a JSON object", "glassbox.json");
  if (!j.contains("warmup")) return WarmupDeclaration{};
  return WarmupDeclaration{j["warmup"], "glassbox.json"};
}

Result<WarmupPlan> plan_tensor_warmup(const std::vector<TensorSpec>& inputs, const WarmupDeclaration& declared,
                                      const std::string& model_dir, const WarmupRules& rules) {
  WarmupPlan plan;
  if (!declared.value.is_null()) {
    plan.declared = true;
    plan.source = declared.source;
    const std::string where = "warm-up declared in " + declared.source;
    const json& d = declared.value;
    if (!d.is_object() || !d.contains("inputs") || !d["inputs"].is_object() || d.size() != 1)
      return bad("must be {\"inputs\": {NAME: {...}}}", where);
    for (const auto& [key, v] : d["inputs"].items()) {
      const bool known = std::any_of(inputs.begin(), inputs.end(), [&](const TensorSpec& s) { return s.name == key; });
      if (!known) return bad("names input '" + key + "', which the model does not have", where);
    }
    for (const auto& in : inputs) {
      const std::string w = where + ": input '" + in.name + "'";
      if (!d["inputs"].contains(in.name))
        return bad("does not declare the model's input " + in.to_string(), where, "declare every input of the model");
      WarmupInputPlan ip{in.name, oip_datatype_name(in.dtype), {}, "", ""};
      GB_ASSIGN_OR_RETURN(NamedTensor t, declared_input(in, d["inputs"][in.name], model_dir, ip, w));
      plan.inputs.push_back(std::move(ip));
      plan.feeds.push_back(std::move(t));
    }
    return plan;
  }
  plan.source = "derived";
  plan.rule = "symbolic batch dims (dim 0, and dims sharing its name) = warmup_batch_size " + std::to_string(rules.batch_size) +
              "; symbolic height/width of a rank-4 image input (1-4 channels fixed, NCHW or NHWC) = warmup_image_size " +
              std::to_string(rules.image_size) + "; other symbolic dims = warmup_sequence_length " +
              std::to_string(rules.sequence_length) + "; filled with zeros (BYTES: empty strings)";
  std::map<std::string, DimRole> named;
  for (const auto& in : inputs)
    for (size_t i = 0; in.has_shape && i < in.dims.size(); ++i)
      if (in.dims[i] < 0 && !symbol_of(in, i).empty()) {
        auto [it, fresh] = named.emplace(symbol_of(in, i), role_here(in, i));
        if (!fresh && role_here(in, i) > it->second) it->second = role_here(in, i);
      }
  static const char* const kRoleNames[] = {"sequence", "image", "batch"};
  for (const auto& in : inputs) {
    if (in.type != ValueType::kTensor || !in.has_shape)
      return make_error(ErrorCode::kUnsupported, "input '" + in.name + "' has no tensor shape to derive a warm-up from",
                        "warm-up (derived)", "declare the warm-up in glassbox.json or server.model_warmup");
    WarmupInputPlan ip{in.name, oip_datatype_name(in.dtype), {}, in.dtype == DataType::kString ? "empty strings" : "zeros", ""};
    for (size_t i = 0; i < in.dims.size(); ++i) {
      if (in.dims[i] >= 0) {
        ip.shape.push_back(in.dims[i]);
        continue;
      }
      const std::string sym = symbol_of(in, i);
      const DimRole role = sym.empty() ? role_here(in, i) : named[sym];
      const int64_t v = role == DimRole::kBatch ? rules.batch_size : role == DimRole::kImage ? rules.image_size : rules.sequence_length;
      ip.shape.push_back(v);
      ip.shape_source += (ip.shape_source.empty() ? "" : ", ") + std::string("dim ") + std::to_string(i) +
                         (sym.empty() ? "" : " '" + sym + "'") + " " + kRoleNames[static_cast<int>(role)] + " = " +
                         std::to_string(v);
    }
    if (ip.shape_source.empty()) ip.shape_source = "fixed by the model";
    GB_ASSIGN_OR_RETURN(int64_t n, shape_numel(ip.shape));
    Tensor t;
    if (in.dtype == DataType::kString) {
      GB_ASSIGN_OR_RETURN(t, Tensor::strings(ip.shape, std::vector<std::string>(static_cast<size_t>(n))));
    } else {
      GB_ASSIGN_OR_RETURN(t, Tensor::allocate(in.dtype, ip.shape));
    }
    plan.inputs.push_back(std::move(ip));
    plan.feeds.push_back({in.name, std::move(t)});
  }
  return plan;
}

Result<WarmupPlan> plan_text_warmup(const WarmupDeclaration& declared) {
  WarmupPlan plan;
  if (declared.value.is_null()) {
    plan.source = "derived";
    plan.rule = "text model: one short text through the pipeline";
    plan.texts = {{"glassbox warm-up", std::nullopt}};
    plan.inputs.push_back({"text", "BYTES", {1}, "data: \"glassbox warm-up\"", "fixed by the rule"});
    return plan;
  }
  plan.declared = true;
  plan.source = declared.source;
  const std::string where = "warm-up declared in " + declared.source;
  const json& d = declared.value;
  if (!d.is_object() || d.size() != 1 || !d.contains("inputs") || !d["inputs"].is_object() || !d["inputs"].contains("text"))
    return bad("a text model's warm-up is {\"inputs\": {\"text\": {\"data\": [\"...\"]}, \"text_pair\"?: {\"data\": [...]}}}",
               where);
  std::vector<std::string> cols[2];
  const char* names[2] = {"text", "text_pair"};
  for (const auto& [key, v] : d["inputs"].items())
    if (key != names[0] && key != names[1]) return bad("names input '" + key + "'; a text model has text and text_pair", where);
  for (int c = 0; c < 2; ++c) {
    if (!d["inputs"].contains(names[c])) continue;
    const json& spec = d["inputs"][names[c]];
    if (!spec.is_object() || spec.size() != 1 || !spec.contains("data") || !spec["data"].is_array() || spec["data"].empty())
      return bad(std::string("input '") + names[c] + "' must be {\"data\": [\"text\", ...]}", where);
    for (const auto& s : spec["data"]) {
      if (!s.is_string()) return bad(std::string("input '") + names[c] + "' data must be strings", where);
      cols[c].push_back(s.get<std::string>());
    }
    plan.inputs.push_back({names[c], "BYTES", {static_cast<int64_t>(cols[c].size())},
                           "data (" + std::to_string(cols[c].size()) + " values)", "declared"});
  }
  if (!cols[1].empty() && cols[1].size() != cols[0].size()) return bad("text_pair must have as many texts as text", where);
  for (size_t i = 0; i < cols[0].size(); ++i)
    plan.texts.push_back({cols[0][i], cols[1].empty() ? std::nullopt : std::optional<std::string>(cols[1][i])});
  return plan;
}

}  // namespace glassbox::server
