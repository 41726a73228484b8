#include "generation/policy.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

namespace glassbox::generation {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Result<json> read_json(const fs::path& path, bool required) {
  std::ifstream in(path);
  if (!in) {
    if (!required) return json(nullptr);
    return make_error(ErrorCode::kNotFound, "required file is missing", path.string(),
                      "a decoder model directory needs model.onnx (or onnx/model.onnx), tokenizer.json and config.json");
  }
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return make_error(ErrorCode::kInvalidModel, "not a JSON object", path.string());
  return j;
}

// The fields glassbox.json "generation" may hold; anything else there is refused by name.
constexpr const char* kGlassboxFields[] = {"max_new_tokens", "do_sample", "temperature", "top_k", "top_p", "min_p",
                                           "repetition_penalty", "seed", "stop_token_ids", "stop_strings",
                                           "skip_special_tokens", "add_special_tokens", "max_context"};

std::string join_ids(const std::vector<uint32_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  return s + "]";
}

// One field looked up in glassbox.json "generation" > generation_config.json > config.json.
struct Lookup {
  const ModelFiles& files;
  const json* glassbox_generation;
  // The first file that holds `key` (not null): its value and the source text.
  std::optional<std::pair<json, std::string>> find(const char* key) const {
    if (glassbox_generation && glassbox_generation->contains(key) && !(*glassbox_generation)[key].is_null())
      return std::make_pair((*glassbox_generation)[key], std::string("glassbox.json generation.") + key);
    if (files.generation_config.is_object() && files.generation_config.contains(key) && !files.generation_config[key].is_null())
      return std::make_pair(files.generation_config[key], std::string("generation_config.json ") + key);
    if (files.genai && files.genai->policy.contains(key) && !files.genai->policy[key]["value"].is_null())
      return std::make_pair(files.genai->policy[key]["value"], files.genai->policy[key]["source"].get<std::string>());
    if (files.config.is_object() && files.config.contains(key) && !files.config[key].is_null())
      return std::make_pair(files.config[key], std::string("config.json ") + key);
    return std::nullopt;
  }
};

Error bad_type(const std::string& source, const char* want, const json& v) {
  return make_error(ErrorCode::kInvalidModel, source + " must be " + want + ", got " + v.dump(), {},
                    "fix the value in that file");
}

template <class T>
Status resolve_field(const Lookup& lookup, const char* key, Sourced<T>& out, T fallback) {
  out = {fallback, kDefaultSource};
  auto found = lookup.find(key);
  if (!found) return Status();
  const auto& [v, source] = *found;
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) return bad_type(source, "true or false", v);
    out = {v.get<bool>(), source};
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) return bad_type(source, "a number", v);
    out = {v.get<double>(), source};
  } else if constexpr (std::is_unsigned_v<T>) {
    if (!v.is_number_unsigned()) return bad_type(source, "a non-negative integer", v);
    out = {v.get<T>(), source};
  } else {
    if (!v.is_number_integer()) return bad_type(source, "an integer", v);
    out = {v.get<T>(), source};
  }
  return Status();
}

// eos_token_id as an int or a list of ints (transformers accepts both).
Result<std::vector<uint32_t>> id_list(const json& v, const std::string& source) {
  std::vector<uint32_t> ids;
  auto one = [&](const json& x) -> Status {
    if (!x.is_number_unsigned() || x.get<uint64_t>() > UINT32_MAX) return bad_type(source, "a token id or a list of them", v);
    ids.push_back(x.get<uint32_t>());
    return Status();
  };
  if (v.is_array()) {
    for (const auto& x : v) GB_RETURN_IF_ERROR(one(x));
  } else {
    GB_RETURN_IF_ERROR(one(v));
  }
  return ids;
}

// tokenizer_config.json's "eos_token"/"pad_token"/"unk_token": a string or {"content": ...}.
std::optional<std::string> special_token(const json& tc, const char* key) {
  if (!tc.is_object() || !tc.contains(key)) return std::nullopt;
  const json& v = tc[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return std::nullopt;
}

Status resolve_stop_ids(const ModelFiles& files, const Lookup& lookup, const Tokenizer& tokenizer, GenerationPolicy& p,
                        std::vector<GenerationWarning>& warnings) {
  std::vector<uint32_t> ids;
  std::vector<std::string> parts;
  auto add = [&](const std::vector<uint32_t>& more, const std::string& what) {
    for (uint32_t id : more)
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    parts.push_back(what);
  };
  // generation_config.json's eos_token_id wins over config.json's (transformers reads config.json
  // only when generation_config.json lacks it); both are model files, so neither is dropped silently.
  // genai_config.json's model.eos_token_id sits between them (the builder copies it from either).
  json genai_eos = json::object();
  if (files.genai && files.genai->policy.contains("eos_token_id")) genai_eos["eos_token_id"] = files.genai->policy["eos_token_id"]["value"];
  for (const auto& [j, file] : {std::pair{&files.generation_config, "generation_config.json"},
                                std::pair{static_cast<const json*>(&genai_eos), "genai_config.json model."},
                                std::pair{&files.config, "config.json"}}) {
    if (!j->is_object() || !j->contains("eos_token_id") || (*j)["eos_token_id"].is_null()) continue;
    const std::string source = std::string(file) + (std::string(file).back() == '.' ? "" : " ") + "eos_token_id";
    GB_ASSIGN_OR_RETURN(auto more, id_list((*j)["eos_token_id"], source));
    add(more, source + " " + join_ids(more));
    break;
  }
  if (auto eos = special_token(files.tokenizer_config, "eos_token")) {
    auto id = tokenizer.token_to_id(*eos);
    if (!id) {
      warnings.push_back({"tokenizer_config.json eos_token '" + *eos + "' is not in the tokenizer's vocabulary",
                          "fix eos_token in tokenizer_config.json; it is not used as a stop token"});
    } else {
      add({*id}, "tokenizer_config.json eos_token '" + *eos + "' (" + std::to_string(*id) + ")");
    }
  }
  if (lookup.glassbox_generation && lookup.glassbox_generation->contains("stop_token_ids")) {
    GB_ASSIGN_OR_RETURN(auto more, id_list((*lookup.glassbox_generation)["stop_token_ids"], "glassbox.json generation.stop_token_ids"));
    add(more, "glassbox.json generation.stop_token_ids " + join_ids(more));
  }
  std::string source;
  for (size_t i = 0; i < parts.size(); ++i) source += (i ? " + " : "") + parts[i];
  if (ids.empty()) {
    source = "none found (no eos_token_id in generation_config.json or config.json, no eos_token in tokenizer_config.json)";
    warnings.push_back({"the model declares no EOS: generation ends only at max_new_tokens or a stop string",
                        "declare eos_token_id in generation_config.json, or stop_token_ids in glassbox.json \"generation\""});
  }
  p.stop_token_ids = {ids, source};
  return Status();
}

// pad == eos / pad == unk: glassbox builds attention masks from lengths, never from pad ids, so
// neither masks real tokens here; the warning says what would go wrong elsewhere.
void check_pad(const ModelFiles& files, const Lookup& lookup, const Tokenizer& tokenizer, const GenerationPolicy& p,
               int64_t vocab_size, std::vector<GenerationWarning>& warnings) {
  std::optional<uint32_t> pad;
  std::string source;
  if (auto f = lookup.find("pad_token_id"); f && f->first.is_number_unsigned()) {
    pad = f->first.get<uint32_t>();
    source = f->second;
  } else if (auto t = special_token(files.tokenizer_config, "pad_token")) {
    pad = tokenizer.token_to_id(*t);
    source = "tokenizer_config.json pad_token '" + *t + "'";
  }
  if (!pad) return;
  const auto& stops = p.stop_token_ids.value;
  if (std::find(stops.begin(), stops.end(), *pad) != stops.end())
    warnings.push_back({"pad token " + std::to_string(*pad) + " (" + source + ") is also a stop token: glassbox pads "
                        "batches with masked positions built from lengths, so this never masks or stops anything "
                        "here, but a tool that infers the attention mask from pad ids (transformers without "
                        "attention_mask) masks every real EOS in a prompt",
                        "none needed for glassbox; give the model a distinct pad token for other tools"});
  if (auto unk = tokenizer.unknown_id(); unk && *unk == *pad)
    warnings.push_back({"pad token " + std::to_string(*pad) + " (" + source + ") is also the unknown token",
                        "none needed for glassbox (masks come from lengths); other tools may mask unknown words"});
  if (static_cast<int64_t>(*pad) >= vocab_size)
    warnings.push_back({"pad token " + std::to_string(*pad) + " (" + source + ") is outside the model's vocabulary (" +
                            std::to_string(vocab_size) + " logits)",
                        "fix pad_token_id; glassbox never feeds it (padding uses id 0 under a zero mask)"});
}

Status resolve_max_context(const ModelFiles& files, const GenerationOptions& options, GenerationPolicy& p) {
  if (options.max_context) {
    p.max_context = {*options.max_context, options.max_context_source};
  } else if (files.glassbox.is_object() && files.glassbox.contains("generation") &&
             files.glassbox["generation"].contains("max_context")) {
    const json& v = files.glassbox["generation"]["max_context"];
    if (!v.is_number_integer()) return bad_type("glassbox.json generation.max_context", "an integer", v);
    p.max_context = {v.get<int64_t>(), "glassbox.json generation.max_context"};
  } else if (files.genai && files.genai->context_length > 0) {
    p.max_context = {files.genai->context_length, "genai_config.json model.context_length"};
  } else {
    // The positions the model was built for, under the names configs use for them.
    for (const char* key : {"max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length", "seq_length"}) {
      if (!files.config.contains(key)) continue;
      const json& v = files.config[key];
      if (!v.is_number_integer()) return bad_type(std::string("config.json ") + key, "an integer", v);
      p.max_context = {v.get<int64_t>(), std::string("config.json ") + key};
      break;
    }
    if (p.max_context.source.empty())
      return make_error(ErrorCode::kInvalidModel, "the context size is unknown: config.json has no max_position_embeddings "
                        "(nor n_positions, n_ctx, max_sequence_length, seq_length)", files.dir,
                        "pass --max-context N, or set \"generation\": {\"max_context\": N} in glassbox.json");
  }
  if (p.max_context.value < 1)
    return make_error(ErrorCode::kInvalidArgument, "max_context " + std::to_string(p.max_context.value) + " (" +
                      p.max_context.source + ") must be at least 1", files.dir);
  return Status();
}

Status check_ranges(const GenerationPolicy& p, int64_t vocab_size) {
  auto bad = [](const std::string& what, const std::string& source) {
    return make_error(ErrorCode::kInvalidArgument, what, source);
  };
  if (p.max_new_tokens.value < 0) return bad("max_new_tokens must be >= 0", p.max_new_tokens.source);
  if (!(p.temperature.value > 0) || !std::isfinite(p.temperature.value))
    return bad("temperature must be > 0 (use do_sample false for greedy)", p.temperature.source);
  if (p.top_k.value < 0) return bad("top_k must be >= 0 (0 = off)", p.top_k.source);
  if (!(p.top_p.value > 0 && p.top_p.value <= 1)) return bad("top_p must be in (0, 1] (1 = off)", p.top_p.source);
  if (!(p.min_p.value >= 0 && p.min_p.value <= 1)) return bad("min_p must be in [0, 1] (0 = off)", p.min_p.source);
  if (!(p.repetition_penalty.value > 0) || !std::isfinite(p.repetition_penalty.value))
    return bad("repetition_penalty must be > 0 (1 = off)", p.repetition_penalty.source);
  for (uint32_t id : p.stop_token_ids.value)
    if (static_cast<int64_t>(id) >= vocab_size)
      return make_error(ErrorCode::kInvalidArgument,
                        "stop token id " + std::to_string(id) + " is outside the vocabulary (" + std::to_string(vocab_size) +
                            " logits): it can never be generated",
                        p.stop_token_ids.source, "remove it or fix the file that declares it");
  for (const auto& s : p.stop_strings.value)
    if (s.empty()) return bad("a stop string is empty", p.stop_strings.source);
  return Status();
}

}  // namespace

Result<ModelFiles> read_model_files(const std::string& dir) {
  ModelFiles f;
  f.dir = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return make_error(ErrorCode::kNotFound, "model directory does not exist", dir,
                      "pass a directory with model.onnx (or onnx/model.onnx), tokenizer.json and config.json");
  // model.onnx first (Optimum's current export; transformers.js v3 renamed its merged file to it), then
  // the legacy merged file Optimum and older transformers.js repos ship. Quantized variants
  // (_quantized, _q4, ...) are never picked implicitly.
  // onnxruntime-genai's builder layout: genai_config.json names the decoder file (usually model.onnx too).
  if (fs::exists(fs::path(dir) / "genai_config.json", ec)) {
    GB_ASSIGN_OR_RETURN(auto g, read_genai_config((fs::path(dir) / "genai_config.json").string()));
    f.model_path = (fs::path(dir) / g.model_file).string();
    if (!fs::exists(f.model_path, ec))
      return make_error(ErrorCode::kNotFound, "genai_config.json model.decoder.filename names a missing file", f.model_path);
    f.genai = std::move(g);
  }
  for (const char* rel : {"model.onnx", "onnx/model.onnx", "decoder_model_merged.onnx", "onnx/decoder_model_merged.onnx"}) {
    if (f.genai) break;
    if (fs::exists(fs::path(dir) / rel, ec)) {
      f.model_path = (fs::path(dir) / rel).string();
      break;
    }
  }
  if (f.model_path.empty())
    return make_error(ErrorCode::kUnsupported,
                      "no model.onnx, onnx/model.onnx, decoder_model_merged.onnx, onnx/decoder_model_merged.onnx or "
                      "genai_config.json", dir,
                      "glassbox generates with Optimum's layouts (one model.onnx with past_key_values.*/present.*, or the "
                      "legacy decoder_model_merged.onnx) and onnxruntime-genai's (genai_config.json)");
  f.tokenizer_path = (fs::path(dir) / "tokenizer.json").string();
  if (!fs::exists(f.tokenizer_path, ec))
    return make_error(ErrorCode::kNotFound, "required file is missing", f.tokenizer_path,
                      "a decoder model directory needs tokenizer.json");
  GB_ASSIGN_OR_RETURN(f.config, read_json(fs::path(dir) / "config.json", !f.genai));
  GB_ASSIGN_OR_RETURN(f.generation_config, read_json(fs::path(dir) / "generation_config.json", false));
  GB_ASSIGN_OR_RETURN(f.tokenizer_config, read_json(fs::path(dir) / "tokenizer_config.json", false));
  GB_ASSIGN_OR_RETURN(f.glassbox, read_json(fs::path(dir) / "glassbox.json", false));
  return f;
}

Result<PolicyBase> derive_policy(const ModelFiles& files, const Tokenizer& tokenizer, int64_t vocab_size,
                                 const GenerationOptions& options) {
  PolicyBase base;
  GenerationPolicy& p = base.policy;
  const json* gen = nullptr;
  if (files.glassbox.is_object() && files.glassbox.contains("generation")) {
    gen = &files.glassbox["generation"];
    if (!gen->is_object()) return bad_type("glassbox.json generation", "an object", *gen);
    for (const auto& [key, v] : gen->items()) {
      (void)v;
      if (std::find_if(std::begin(kGlassboxFields), std::end(kGlassboxFields), [&](const char* f) { return key == f; }) ==
          std::end(kGlassboxFields))
        return make_error(ErrorCode::kInvalidModel, "glassbox.json generation." + key + " is not a generation field",
                          files.dir, "see docs/generation.md \"Generation policy\" for the fields");
    }
  }
  const Lookup lookup{files, gen};
  GB_RETURN_IF_ERROR(resolve_field<int64_t>(lookup, "max_new_tokens", p.max_new_tokens, kDefaultMaxNewTokens));
  GB_RETURN_IF_ERROR(resolve_field<bool>(lookup, "do_sample", p.do_sample, false));
  GB_RETURN_IF_ERROR(resolve_field<double>(lookup, "temperature", p.temperature, 1.0));
  GB_RETURN_IF_ERROR(resolve_field<int64_t>(lookup, "top_k", p.top_k, 0));
  GB_RETURN_IF_ERROR(resolve_field<double>(lookup, "top_p", p.top_p, 1.0));
  GB_RETURN_IF_ERROR(resolve_field<double>(lookup, "min_p", p.min_p, 0.0));
  GB_RETURN_IF_ERROR(resolve_field<double>(lookup, "repetition_penalty", p.repetition_penalty, 1.0));
  GB_RETURN_IF_ERROR(resolve_field<uint64_t>(lookup, "seed", p.seed, 0));
  if (p.seed.source == kDefaultSource) p.seed.source = "glassbox default: drawn at random per request (reported, pass it back to reproduce)";
  GB_RETURN_IF_ERROR(resolve_field<bool>(lookup, "skip_special_tokens", p.skip_special_tokens, true));
  GB_RETURN_IF_ERROR(resolve_field<bool>(lookup, "add_special_tokens", p.add_special_tokens, true));
  p.stop_strings = {{}, kDefaultSource};
  if (gen && gen->contains("stop_strings")) {
    const json& v = (*gen)["stop_strings"];
    if (!v.is_array()) return bad_type("glassbox.json generation.stop_strings", "a list of strings", v);
    for (const auto& s : v) {
      if (!s.is_string()) return bad_type("glassbox.json generation.stop_strings", "a list of strings", v);
      p.stop_strings.value.push_back(s.get<std::string>());
    }
    p.stop_strings.source = "glassbox.json generation.stop_strings";
  }
  GB_RETURN_IF_ERROR(resolve_stop_ids(files, lookup, tokenizer, p, base.warnings));
  GB_RETURN_IF_ERROR(resolve_max_context(files, options, p));
  check_pad(files, lookup, tokenizer, p, vocab_size, base.warnings);
  if (files.generation_config.is_object() && files.generation_config.contains("max_length"))
    base.warnings.push_back({"generation_config.json max_length " + files.generation_config["max_length"].dump() +
                                 " is not used: glassbox bounds a generation by max_new_tokens and max_context, "
                                 "never by transformers' prompt-plus-output max_length",
                             "set max_new_tokens (request, glassbox.json or generation_config.json) to limit output"});
  if (!p.do_sample.value && (p.temperature.source != kDefaultSource || p.top_k.source != kDefaultSource ||
                             p.top_p.source != kDefaultSource || p.min_p.source != kDefaultSource))
    base.warnings.push_back({"sampling parameters are declared but do_sample is false (" + p.do_sample.source +
                                 "): generation is greedy and they are not used",
                             "set do_sample true (request, glassbox.json or generation_config.json) to sample"});
  GB_RETURN_IF_ERROR(check_ranges(p, vocab_size));
  return base;
}

Result<GenerationPolicy> apply_request(const GenerationPolicy& base, const GenerationRequest& r, int64_t vocab_size) {
  GenerationPolicy p = base;
  auto src = [&](const char* flag) { return r.source == "flag" ? std::string("flag --") + flag : r.source; };
  if (r.max_new_tokens) p.max_new_tokens = {*r.max_new_tokens, src("max-new-tokens")};
  if (r.do_sample) p.do_sample = {*r.do_sample, src("do-sample")};
  if (r.temperature) p.temperature = {*r.temperature, src("temperature")};
  if (r.top_k) p.top_k = {*r.top_k, src("top-k")};
  if (r.top_p) p.top_p = {*r.top_p, src("top-p")};
  if (r.min_p) p.min_p = {*r.min_p, src("min-p")};
  if (r.repetition_penalty) p.repetition_penalty = {*r.repetition_penalty, src("repetition-penalty")};
  if (r.skip_special_tokens) p.skip_special_tokens = {*r.skip_special_tokens, src("skip-special-tokens")};
  if (r.add_special_tokens) p.add_special_tokens = {*r.add_special_tokens, src("add-special-tokens")};
  if (r.seed) {
    p.seed = {*r.seed, src("seed")};
  } else if (p.seed.source.rfind(kDefaultSource, 0) == 0) {
    std::random_device rd;
    p.seed.value = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }
  if (!r.stop_token_ids.empty()) {
    for (uint32_t id : r.stop_token_ids)
      if (std::find(p.stop_token_ids.value.begin(), p.stop_token_ids.value.end(), id) == p.stop_token_ids.value.end())
        p.stop_token_ids.value.push_back(id);
    p.stop_token_ids.source += " + " + src("stop-token-id") + " " + join_ids(r.stop_token_ids);
  }
  if (!r.stop_strings.empty()) {
    for (const auto& s : r.stop_strings) p.stop_strings.value.push_back(s);
    p.stop_strings.source = p.stop_strings.value.size() == r.stop_strings.size() ? src("stop") : p.stop_strings.source + " + " + src("stop");
  }
  GB_RETURN_IF_ERROR(check_ranges(p, vocab_size));
  return p;
}

}  // namespace glassbox::generation

namespace glassbox {

std::span<const GenerationDefault> generation_defaults() {
  static const GenerationDefault kDefaults[] = {
      {"max_new_tokens", "256, capped at max_context - prompt tokens",
       "the text-generation pipelines of transformers and transformers.js use 256; transformers' generate() "
       "max_length 20 cut outputs silently for years (transformers#13424, transformers.js#1632)",
       "a longer answer is cut at 256 tokens: finish_reason \"length\" says so"},
      {"do_sample", "false (greedy)",
       "reproducible without a seed, and what generate() does unless generation_config.json asks for sampling",
       "a model tuned for sampling without saying so in generation_config.json repeats itself more"},
      {"temperature", "1.0", "no rescaling of the model's distribution", "none"},
      {"top_k", "0 (off)",
       "no hidden truncation of the distribution (transformers' generate() silently uses 50 when sampling; pass "
       "--top-k 50 to match it)",
       "sampling can pick rare tail tokens"},
      {"top_p", "1.0 (off)", "no truncation unless asked", "as top_k"},
      {"min_p", "0 (off)", "no truncation unless asked", "as top_k"},
      {"repetition_penalty", "1.0 (off)", "the model's own distribution", "greedy output may loop"},
      {"seed", "random per request, reported in the result",
       "a fixed hidden seed would make every request identical", "pass the reported seed back to reproduce a sample"},
      {"stop_token_ids", "generation_config.json eos_token_id (int or list) + tokenizer_config.json eos_token + "
                         "glassbox.json generation.stop_token_ids + request",
       "models such as Llama-3-Instruct end turns with a token that is not the tokenizer's eos (vllm#4180)",
       "a model declaring no EOS stops only at max_new_tokens or a stop string (warned at load)"},
      {"stop_strings", "none", "only what is declared", "none"},
      {"skip_special_tokens", "true", "as transformers' pipelines: control tokens are not text (ids keep them)",
       "special tokens a model emits mid-text are invisible in the text"},
      {"add_special_tokens", "true", "as tokenizer(prompt): the tokenizer's post-processor (BOS) runs on a text prompt",
       "a prompt already rendered by a chat template gets a second BOS: pass false for such text"},
      {"max_context", "config.json max_position_embeddings (or n_positions, n_ctx, max_sequence_length, seq_length)",
       "the positions the model was built for; an override is --max-context or glassbox.json generation.max_context",
       "none: KV memory is reserved per sequence for prompt + max_new_tokens only, never for the whole context"},
  };
  return kDefaults;
}

}  // namespace glassbox
