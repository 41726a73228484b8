#include "generation/genai_config.h"

#include <fstream>
#include <map>

namespace glassbox::generation {
namespace {

using nlohmann::json;

// The names glassbox's layout recognition (decoder_layout.cpp) matches; the builder writes these.
const std::map<std::string, std::string> kExpectedNames = {
    {"model.decoder.inputs.input_ids", "input_ids"},
    {"model.decoder.inputs.attention_mask", "attention_mask"},
    {"model.decoder.inputs.position_ids", "position_ids"},
    {"model.decoder.inputs.past_key_names", "past_key_values.%d.key"},
    {"model.decoder.inputs.past_value_names", "past_key_values.%d.value"},
    {"model.decoder.outputs.logits", "logits"},
    {"model.decoder.outputs.present_key_names", "present.%d.key"},
    {"model.decoder.outputs.present_value_names", "present.%d.value"}};

// Fields that only matter for what glassbox does not do, with the value that means "off": any other
// value is refused by name.
const std::map<std::string, json> kMustBeOff = {
    {"search.num_beams", 1}, {"search.num_return_sequences", 1}, {"search.min_length", 0},
    {"search.no_repeat_ngram_size", 0}, {"search.diversity_penalty", 0.0}};

// Declared as not used, with the reason.
const std::map<std::string, std::string> kNotUsed = {
    {"model.bos_token_id", "not used: the tokenizer's post-processor adds BOS (policy add_special_tokens)"},
    {"model.type", "not used: glassbox runs the graph, not a per-architecture code path"},
    {"model.decoder.hidden_size", "not used: the graph fixes it"},
    {"model.decoder.num_attention_heads", "not used: GroupQueryAttention's num_heads attribute fixes it"},
    {"model.decoder.session_options.log_id", "not used: a log tag of onnxruntime-genai"},
    {"search.early_stopping", "not used: a beam-search setting (num_beams is 1)"},
    {"search.length_penalty", "not used: a beam-search setting (num_beams is 1)"},
    {"search.max_length", "not used: glassbox bounds a generation by max_new_tokens and max_context, never by a "
                          "prompt-plus-output max_length"},
    {"search.past_present_share_buffer", "not used: glassbox keeps its own per-sequence KV buffer sized at admission "
                                         "(past copied in, present copied out; docs/generation.md)"}};

// Used as policy fields (search.x and model.x keep transformers' names).
const std::map<std::string, std::string> kPolicy = {
    {"search.do_sample", "do_sample"}, {"search.temperature", "temperature"}, {"search.top_k", "top_k"},
    {"search.top_p", "top_p"}, {"search.repetition_penalty", "repetition_penalty"},
    {"model.eos_token_id", "eos_token_id"}, {"model.pad_token_id", "pad_token_id"}};

Error refuse(const std::string& path, const std::string& what, const std::string& fix) {
  return make_error(ErrorCode::kUnsupported, "genai_config.json " + what, path, fix);
}

Result<int64_t> positive(const json& v, const std::string& field, const std::string& path) {
  if (!v.is_number_integer() || v.get<int64_t>() < 1) return refuse(path, field + " must be a positive integer, got " + v.dump(), "fix the file");
  return v.get<int64_t>();
}

// One leaf field: record its use in g, or refuse it.
Status visit_leaf(const std::string& field, const json& v, const std::string& path, GenaiConfig& g) {
  auto use = [&](std::string how) {
    g.fields.push_back({field, v.dump(), std::move(how)});
    return Status();
  };
  if (auto it = kExpectedNames.find(field); it != kExpectedNames.end()) {
    if (!v.is_string() || v.get<std::string>() != it->second)
      return refuse(path, field + " is " + v.dump() + "; glassbox matches the builder's name \"" + it->second + "\" only",
                    "renaming inputs/outputs is not supported yet: re-export with the builder's names");
    return use("checked: the graph's " + std::string(field.find("outputs") != std::string::npos ? "output" : "input") + " names");
  }
  if (auto it = kMustBeOff.find(field); it != kMustBeOff.end()) {
    if (!v.is_number() || v.get<double>() != it->second.get<double>())
      return refuse(path, field + " is " + v.dump() + "; glassbox implements only " + it->second.dump(),
                    "greedy/sampled single-sequence generation only: beam search, min_length and n-gram blocking are open");
    return use("checked: " + it->second.dump() + " is what glassbox does");
  }
  if (auto it = kNotUsed.find(field); it != kNotUsed.end()) return use(it->second);
  if (auto it = kPolicy.find(field); it != kPolicy.end()) {
    g.policy[it->second] = {{"value", v}, {"source", "genai_config.json " + field}};
    return use("policy " + it->second + " (after request, glassbox.json and generation_config.json; before config.json)");
  }
  if (field == "model.decoder.filename") {
    if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().find("..") != std::string::npos)
      return refuse(path, "model.decoder.filename must name a file in the directory, got " + v.dump(), "fix the file");
    g.model_file = v.get<std::string>();
    return use("the decoder file");
  }
  if (field == "model.context_length") {
    GB_ASSIGN_OR_RETURN(g.context_length, positive(v, field, path));
    return use("policy max_context (below the option and glassbox.json)");
  }
  const std::map<std::string, int64_t*> sizes = {{"model.decoder.num_hidden_layers", &g.layers},
                                                 {"model.decoder.num_key_value_heads", &g.kv_heads},
                                                 {"model.decoder.head_size", &g.head_size},
                                                 {"model.vocab_size", &g.vocab_size}};
  if (auto it = sizes.find(field); it != sizes.end()) {
    GB_ASSIGN_OR_RETURN(*it->second, positive(v, field, path));
    return use("checked against the graph's past/logits shapes");
  }
  if (field == "model.decoder.session_options.provider_options") {
    if (!v.is_array() || !v.empty())
      return refuse(path, field + " is " + v.dump() + ": execution providers are onnxruntime's; glassbox runs on its own CPU kernels",
                    "remove the provider options (the builder writes [] for CPU)");
    return use("checked: [] (CPU)");
  }
  return refuse(path, "field " + field + " is not known to glassbox",
                "see docs/generation.md \"onnxruntime-genai layout\" for the fields read");
}

Status visit(const std::string& prefix, const json& j, const std::string& path, GenaiConfig& g) {
  for (const auto& [key, v] : j.items()) {
    const std::string field = prefix.empty() ? key : prefix + "." + key;
    // Objects are walked; model.decoder.inputs/outputs hold names (leaves).
    if (v.is_object()) GB_RETURN_IF_ERROR(visit(field, v, path, g));
    else GB_RETURN_IF_ERROR(visit_leaf(field, v, path, g));
  }
  return Status();
}

}  // namespace

Result<GenaiConfig> read_genai_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot read genai_config.json", path);
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return make_error(ErrorCode::kInvalidModel, "not a JSON object", path);
  GenaiConfig g;
  GB_RETURN_IF_ERROR(visit("", j, path, g));
  if (g.model_file.empty())
    return make_error(ErrorCode::kInvalidModel, "genai_config.json has no model.decoder.filename", path,
                      "the builder writes it: re-export or add it");
  return g;
}

Status check_genai_sizes(const GenaiConfig& g, const DecoderInfo& info) {
  const std::pair<const char*, std::pair<int64_t, int64_t>> checks[] = {
      {"model.decoder.num_hidden_layers", {g.layers, info.layers}},
      {"model.decoder.num_key_value_heads", {g.kv_heads, info.kv_heads}},
      {"model.decoder.head_size", {g.head_size, info.head_dim}},
      {"model.vocab_size", {g.vocab_size, info.vocab_size}}};
  for (const auto& [field, v] : checks)
    if (v.first != 0 && v.first != v.second)
      return make_error(ErrorCode::kInvalidModel,
                        std::string("genai_config.json ") + field + " is " + std::to_string(v.first) + " but the graph has " +
                            std::to_string(v.second),
                        info.model_path, "the file and the graph disagree: re-export the model");
  return Status();
}

}  // namespace glassbox::generation
