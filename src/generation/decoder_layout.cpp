#include "generation/decoder_layout.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string_view>

#include <nlohmann/json.hpp>

namespace glassbox::generation {

namespace {

constexpr const char* kExpected =
    "Optimum's current layout: inputs input_ids, attention_mask, optional position_ids, "
    "past_key_values.{i}.key/value [batch, kv_heads, past, head_dim]; outputs logits, present.{i}.key/value; "
    "or Optimum's legacy merged layout: the same plus a bool input use_cache_branch [1]";

// What explain shows as the layout, with the one decision the merged layout needs.
constexpr const char* kMergedLayout =
    "optimum-merged (If on use_cache_branch: false on a run with an empty past, whose past_key_values are "
    "zero-length dummies as transformers.js and current Optimum feed them; true on every later run)";

Error refuse(const std::string& what) {
  return make_error(ErrorCode::kUnsupported, what, {}, std::string("glassbox generates with ") + kExpected);
}

const TensorSpec* find(const std::vector<TensorSpec>& specs, const std::string& name) {
  for (const auto& s : specs)
    if (s.name == name) return &s;
  return nullptr;
}

Status check_ids_input(const TensorSpec* s, const char* name) {
  if (!s) return refuse(std::string("the model has no input '") + name + "'");
  if (s->dtype != DataType::kInt64 && s->dtype != DataType::kInt32)
    return refuse(std::string("input '") + name + "' is " + dtype_name(s->dtype) + ", expected int64 or int32");
  if (s->has_shape && s->dims.size() != 2) return refuse(std::string("input '") + name + "' is not [batch, length]");
  return Status();
}

}  // namespace

Result<DecoderLayout> recognise_layout(const std::vector<TensorSpec>& inputs, const std::vector<TensorSpec>& outputs,
                                       int64_t config_vocab_size) {
  DecoderLayout l;
  if (const TensorSpec* branch = find(inputs, "use_cache_branch")) {
    if (branch->dtype != DataType::kBool || (branch->has_shape && !(branch->dims.empty() ||
                                                                   (branch->dims.size() == 1 && branch->dims[0] == 1))))
      return refuse("input 'use_cache_branch' is " + branch->to_string() + ", expected bool [1] (Optimum's merged If)");
    l.use_cache_branch = true;
  }
  const TensorSpec* ids = find(inputs, "input_ids");
  const TensorSpec* mask = find(inputs, "attention_mask");
  const TensorSpec* pos = find(inputs, "position_ids");
  GB_RETURN_IF_ERROR(check_ids_input(ids, "input_ids"));
  GB_RETURN_IF_ERROR(check_ids_input(mask, "attention_mask"));
  if (pos) GB_RETURN_IF_ERROR(check_ids_input(pos, "position_ids"));
  if (pos && pos->dtype != ids->dtype) return refuse("position_ids and input_ids have different dtypes");
  l.ids_dtype = ids->dtype;
  l.mask_dtype = mask->dtype;
  l.info.has_position_ids = pos != nullptr;
  // Layers: past_key_values.0.. contiguous, each with key and value, each with its present.
  for (int64_t i = 0;; ++i) {
    const std::string p = "past_key_values." + std::to_string(i) + ".";
    if (!find(inputs, p + "key") && !find(inputs, p + "value")) break;
    for (const char* kv : {"key", "value"}) {
      const TensorSpec* s = find(inputs, p + kv);
      if (!s) return refuse("input '" + p + kv + "' is missing (layer " + std::to_string(i) + " has only one of key/value)");
      if (s->dtype != DataType::kFloat32)
        return refuse("input '" + s->name + "' is " + dtype_name(s->dtype) + ": only float32 KV caches are supported yet");
      if (!s->has_shape || s->dims.size() != 4 || s->dims[1] < 1 || s->dims[3] < 1)
        return refuse("input '" + s->name + "' is not [batch, kv_heads, past_sequence_length, head_dim] with fixed "
                      "kv_heads and head_dim: " + s->to_string());
      if (l.info.kv_heads == 0) {
        l.info.kv_heads = s->dims[1];
        l.info.head_dim = s->dims[3];
      } else if (s->dims[1] != l.info.kv_heads || s->dims[3] != l.info.head_dim) {
        return refuse("input '" + s->name + "' has a different kv_heads/head_dim than past_key_values.0.key");
      }
      const std::string out = "present." + std::to_string(i) + "." + kv;
      if (!find(outputs, out)) return refuse("output '" + out + "' is missing (the model has input '" + s->name + "')");
      l.past_names.push_back(s->name);
      l.present_names.push_back(out);
    }
    l.info.layers = i + 1;
  }
  if (l.info.layers == 0) return refuse("the model has no past_key_values.{i}.key/value inputs (no KV cache)");
  for (const auto& s : inputs) {
    if (s.name == "input_ids" || s.name == "attention_mask" || s.name == "position_ids") continue;
    if (s.name == "use_cache_branch") continue;
    if (std::find(l.past_names.begin(), l.past_names.end(), s.name) != l.past_names.end()) continue;
    return refuse("unexpected input '" + s.name + "'");
  }
  const TensorSpec* logits = find(outputs, "logits");
  if (!logits) return refuse("the model has no output 'logits'");
  if (logits->dtype != DataType::kFloat32) return refuse(std::string("output 'logits' is ") + dtype_name(logits->dtype) + ", expected float32");
  for (const auto& s : outputs)
    if (s.name != "logits" && std::find(l.present_names.begin(), l.present_names.end(), s.name) == l.present_names.end())
      return refuse("unexpected output '" + s.name + "'");
  if (logits->has_shape && logits->dims.size() == 3 && logits->dims[2] > 0) l.info.vocab_size = logits->dims[2];
  else l.info.vocab_size = config_vocab_size;
  if (l.info.vocab_size <= 0)
    return make_error(ErrorCode::kInvalidModel, "the vocabulary size is unknown: 'logits' has no fixed last dim and "
                      "config.json has no vocab_size", {}, "add vocab_size to config.json");
  l.info.layout = l.use_cache_branch ? kMergedLayout : "optimum";
  l.info.kv_bytes_per_token = 2 * l.info.layers * l.info.kv_heads * l.info.head_dim * static_cast<int64_t>(sizeof(float));
  return l;
}

const char* const kGenerationModelRule =
    "a model directory with tokenizer.json and a config.json whose \"architectures\" names a causal language model "
    "(...ForCausalLM or ...LMHeadModel) is served as a generation model; its ONNX layout is then checked by the "
    "generation session";

bool is_generation_model_dir(const std::string& dir) {
  const std::filesystem::path d(dir);
  std::error_code ec;
  if (!std::filesystem::exists(d / "tokenizer.json", ec)) return false;
  std::ifstream f(d / "config.json");
  if (!f) return false;
  const auto config = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object() || !config.contains("architectures") || !config["architectures"].is_array()) return false;
  for (const auto& a : config["architectures"]) {
    if (!a.is_string()) continue;
    const std::string s = a.get<std::string>();
    auto ends = [&](std::string_view suffix) { return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0; };
    if (ends("ForCausalLM") || ends("LMHeadModel")) return true;
  }
  return false;
}

}  // namespace glassbox::generation
