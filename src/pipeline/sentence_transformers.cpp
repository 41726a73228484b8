#include "pipeline/sentence_transformers.h"

#include <algorithm>
#include <filesystem>

#include "pipeline/json_fields.h"
#include "pipeline/safetensors.h"

namespace glassbox::pipeline {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// 1_Pooling/config.json's flags in the order sentence-transformers concatenates the modes.
struct PoolingFlag {
  const char* key;
  Pooling mode;
  bool default_value;  // the Pooling constructor's default when the key is absent
};
constexpr PoolingFlag kPoolingFlags[] = {
    {"pooling_mode_cls_token", Pooling::kCls, false},
    {"pooling_mode_max_tokens", Pooling::kMax, false},
    {"pooling_mode_mean_tokens", Pooling::kMean, true},
    {"pooling_mode_mean_sqrt_len_tokens", Pooling::kMeanSqrtLen, false},
    {"pooling_mode_weightedmean_tokens", Pooling::kWeightedMean, false},
    {"pooling_mode_lasttoken", Pooling::kLastToken, false},
};

constexpr const char* kChains =
    "glassbox runs the chains Transformer -> Pooling -> Dense (any number) -> Normalize (optional), "
    "MLMTransformer -> SpladePooling (sentence-transformers' SparseEncoder) and Transformer -> "
    "pylate.models.Dense.Dense (any number; PyLate's ColBERT)";
constexpr const char* kPylateDense = "pylate.models.Dense.Dense";

// A path named by modules.json, kept inside the model directory.
Result<std::string> module_dir(const std::string& dir, const std::string& path, const std::string& where) {
  const fs::path p = fs::path(path).lexically_normal();
  if (p.is_absolute() || (!p.empty() && *p.begin() == ".."))
    return make_error(ErrorCode::kInvalidModel, "module path '" + path + "' leaves the model directory", where);
  return (fs::path(dir) / p).string();
}

Status read_pooling(const std::string& dir, const std::string& rel, SentenceTransformersLayout& st) {
  const std::string file = rel + "/config.json";
  GB_ASSIGN_OR_RETURN(json j, read_json((fs::path(dir) / file).string(), true));
  const std::string where = dir + "/" + file;
  for (const auto& [k, v] : j.items()) {
    bool known = k == "word_embedding_dimension" || k == "include_prompt";
    for (const auto& f : kPoolingFlags) known = known || k == f.key;
    if (!known)
      return make_error(ErrorCode::kUnsupported, "pooling field '" + k + "' (= " + v.dump() + ") is not one glassbox implements",
                        where,
                        "glassbox implements pooling_mode_cls_token, _max_tokens, _mean_tokens, _mean_sqrt_len_tokens, "
                        "_weightedmean_tokens, _lasttoken and include_prompt; sentence-transformers itself refuses unknown fields");
  }
  GB_ASSIGN_OR_RETURN(auto dim, get_opt<int64_t>(j, "word_embedding_dimension", where));
  if (!dim || *dim <= 0)
    return make_error(ErrorCode::kInvalidModel, "word_embedding_dimension is missing or not positive", where);
  st.word_embedding_dimension = *dim;
  std::string names;
  for (const auto& f : kPoolingFlags) {
    GB_ASSIGN_OR_RETURN(auto on, get_opt<bool>(j, f.key, where));
    if (!on.value_or(f.default_value)) continue;
    st.pooling_modes.push_back(f.mode);
    names += std::string(names.empty() ? "" : " + ") + f.key + (on ? "" : " (absent: true by default)");
  }
  if (st.pooling_modes.empty())
    return make_error(ErrorCode::kInvalidModel, "no pooling_mode_* field is true", where, "set one pooling mode to true");
  st.pooling_source = file + " " + names + (st.pooling_modes.size() > 1 ? " (concatenated in this order)" : "");
  GB_ASSIGN_OR_RETURN(auto include_prompt, get_opt<bool>(j, "include_prompt", where));
  st.include_prompt = include_prompt.value_or(true);
  st.include_prompt_source = include_prompt ? file + " include_prompt" : file + " (include_prompt absent: true by default)";
  return {};
}

Result<std::string> activation_name(const std::string& fullname, const std::string& where) {
  const std::string last = fullname.substr(fullname.rfind('.') + 1);
  const bool torch = fullname.rfind("torch.nn.", 0) == 0;
  if (torch && last == "Identity") return std::string("identity");
  if (torch && last == "Tanh") return std::string("tanh");
  if (torch && last == "ReLU") return std::string("relu");
  if (torch && last == "Sigmoid") return std::string("sigmoid");
  if (torch && last == "GELU") return std::string("gelu");
  return make_error(ErrorCode::kUnsupported, "Dense activation_function '" + fullname + "' is not implemented", where,
                    "glassbox implements torch.nn Identity, Tanh, ReLU, Sigmoid and GELU (erf)");
}

// per_token: PyLate's Dense (token_embeddings in, token_embeddings out) into st.token_dense.
Status read_dense(const std::string& dir, const std::string& rel, SentenceTransformersLayout& st, bool per_token = false) {
  const std::string folder = (fs::path(dir) / rel).string();
  const std::string where = folder + "/config.json";
  GB_ASSIGN_OR_RETURN(json j, read_json(where, true));
  for (const auto& [k, v] : j.items()) {
    if (k == "in_features" || k == "out_features" || k == "bias" || k == "activation_function") continue;
    if (!per_token && (k == "module_input_name" || k == "module_output_name") && (v.is_null() || v == "sentence_embedding"))
      continue;
    if (per_token && k == "use_residual" && v == false) continue;  // true adds the input (through a second linear)
    return make_error(ErrorCode::kUnsupported, "Dense field '" + k + "' = " + v.dump() + " is not implemented", where,
                      per_token ? "glassbox applies PyLate's Dense per token without a residual (use_residual false)"
                                : "glassbox applies Dense to the pooled sentence embedding only");
  }
  DenseLayer d;
  d.dir = rel;
  GB_ASSIGN_OR_RETURN(auto in, get_opt<int64_t>(j, "in_features", where));
  GB_ASSIGN_OR_RETURN(auto out, get_opt<int64_t>(j, "out_features", where));
  GB_ASSIGN_OR_RETURN(auto bias, get_opt<bool>(j, "bias", where));
  GB_ASSIGN_OR_RETURN(auto act, get_opt<std::string>(j, "activation_function", where));
  if (!in || !out || *in <= 0 || *out <= 0)
    return make_error(ErrorCode::kInvalidModel, "in_features and out_features must be positive integers", where);
  d.in = *in;
  d.out = *out;
  // Dense's constructor default is Tanh; a saved config always names it.
  GB_ASSIGN_OR_RETURN(d.activation, activation_name(act.value_or("torch.nn.modules.activation.Tanh"), where));
  std::error_code ec;
  const std::string weights = folder + "/model.safetensors";
  if (!fs::exists(weights, ec)) {
    for (const char* pickle : {"pytorch_model.bin", "model.pt"})
      if (fs::exists(fs::path(folder) / pickle, ec))
        return make_error(ErrorCode::kUnsupported,
                          std::string("Dense weights are in ") + pickle + ", a PyTorch pickle glassbox does not execute",
                          folder,
                          "save them as model.safetensors: in Python, safetensors.torch.save_file(torch.load('" +
                              std::string(pickle) + "'), 'model.safetensors') in " + rel);
    return make_error(ErrorCode::kNotFound, "Dense weights are missing (looked for model.safetensors)", folder);
  }
  GB_ASSIGN_OR_RETURN(auto tensors, read_safetensors(weights));
  for (const auto& [name, t] : tensors)
    if (name != "linear.weight" && name != "linear.bias")
      return make_error(ErrorCode::kUnsupported, "tensor '" + name + "' is not part of a Dense layer", weights,
                        "a Dense module holds linear.weight and linear.bias");
  auto w = tensors.find("linear.weight");
  if (w == tensors.end() || w->second.shape != std::vector<int64_t>{d.out, d.in})
    return make_error(ErrorCode::kInvalidModel,
                      "linear.weight must be [" + std::to_string(d.out) + ", " + std::to_string(d.in) + "] (out_features, in_features)",
                      weights);
  d.weight = std::move(w->second.values);
  auto b = tensors.find("linear.bias");
  if (bias.value_or(true)) {
    if (b == tensors.end() || b->second.shape != std::vector<int64_t>{d.out})
      return make_error(ErrorCode::kInvalidModel, "linear.bias must be [" + std::to_string(d.out) + "] (bias is true)", weights);
    d.bias = std::move(b->second.values);
  } else if (b != tensors.end()) {
    return make_error(ErrorCode::kInvalidModel, "config.json says bias: false but linear.bias is stored", weights);
  }
  if (per_token) {  // the first one's in_features is checked against the model's output when it runs
    if (!st.token_dense.empty() && d.in != st.token_dense.back().out)
      return make_error(ErrorCode::kInvalidModel,
                        "in_features " + std::to_string(d.in) + " differs from the previous Dense's out_features " +
                            std::to_string(st.token_dense.back().out),
                        where);
    st.token_dense.push_back(std::move(d));
    return {};
  }
  const int64_t expected = st.dense.empty() ? st.word_embedding_dimension * static_cast<int64_t>(st.pooling_modes.size())
                                            : st.dense.back().out;
  if (d.in != expected)
    return make_error(ErrorCode::kInvalidModel,
                      "in_features " + std::to_string(d.in) + " differs from the " + std::to_string(expected) +
                          " values the previous module gives",
                      where);
  st.dense.push_back(std::move(d));
  return {};
}

// <path>/config.json of a SpladePooling module (sentence-transformers' SparseEncoder).
Status read_splade_pooling(const std::string& dir, const std::string& rel, SentenceTransformersLayout& st) {
  const std::string file = rel + "/config.json";
  const std::string where = dir + "/" + file;
  GB_ASSIGN_OR_RETURN(json j, read_json(where, false));
  if (!j.is_null() && !j.is_object()) return make_error(ErrorCode::kInvalidModel, "SpladePooling config is not an object", where);
  SparseHead h;
  for (const auto& [k, v] : j.items()) {
    // chunk_size only bounds the memory of the torch loop; the result is the same.
    if (k == "word_embedding_dimension" || k == "chunk_size") continue;
    if (k != "pooling_strategy" && k != "activation_function")
      return make_error(ErrorCode::kUnsupported, "SpladePooling field '" + k + "' (= " + v.dump() + ") is not one glassbox implements",
                        where, "glassbox implements pooling_strategy, activation_function and word_embedding_dimension");
  }
  GB_ASSIGN_OR_RETURN(auto strategy, get_opt<std::string>(j, "pooling_strategy", where));
  GB_ASSIGN_OR_RETURN(auto activation, get_opt<std::string>(j, "activation_function", where));
  h.pooling = strategy.value_or("max");  // SpladePooling's constructor defaults
  h.activation = activation.value_or("relu");
  if (h.pooling != "max" && h.pooling != "sum")
    return make_error(ErrorCode::kUnsupported, "SpladePooling pooling_strategy '" + h.pooling + "' is unknown", where,
                      "sentence-transformers names max and sum");
  if (h.activation != "relu" && h.activation != "log1p_relu")
    return make_error(ErrorCode::kUnsupported, "SpladePooling activation_function '" + h.activation + "' is unknown", where,
                      "sentence-transformers names relu and log1p_relu");
  if (j.is_object() && j.contains("word_embedding_dimension") && !j["word_embedding_dimension"].is_null()) {
    GB_ASSIGN_OR_RETURN(auto dim, get_opt<int64_t>(j, "word_embedding_dimension", where));
    if (!dim || *dim <= 0) return make_error(ErrorCode::kInvalidModel, "word_embedding_dimension is not positive", where);
    st.word_embedding_dimension = *dim;
  }
  st.splade = h;
  st.splade_source = file + (strategy ? " pooling_strategy" : " (pooling_strategy absent: max by default)") +
                     (activation ? ", activation_function" : ", (activation_function absent: relu by default)");
  return {};
}

Status read_modules(const std::string& dir, SentenceTransformersLayout& st) {
  const std::string where = dir + "/modules.json";
  std::ifstream in(where);
  if (!in) return {};
  st.has_modules = true;
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array() || j.empty())
    return make_error(ErrorCode::kInvalidModel, "modules.json is not a non-empty JSON array", where);
  std::vector<json> mods(j.begin(), j.end());
  for (const auto& m : mods)
    if (!m.is_object() || !m.contains("idx") || !m["idx"].is_number_integer() || !m.contains("type") ||
        !m["type"].is_string() || !m.contains("path") || !m["path"].is_string())
      return make_error(ErrorCode::kInvalidModel, "module entry " + m.dump() + " lacks idx, path or type", where);
  std::stable_sort(mods.begin(), mods.end(), [](const json& a, const json& b) { return a["idx"].get<int64_t>() < b["idx"].get<int64_t>(); });
  enum Stage { kStart, kTransformer, kPooled, kNormalized, kMlm, kSparse, kTokenDense } stage = kStart;
  for (const auto& m : mods) {
    const std::string type = m["type"].get<std::string>(), path = m["path"].get<std::string>();
    const std::string cls = type.substr(type.rfind('.') + 1);
    const bool ours = type.rfind("sentence_transformers.", 0) == 0;
    const std::string at = where + ": module " + std::to_string(m["idx"].get<int64_t>()) + " (" + type + ")";
    GB_ASSIGN_OR_RETURN(std::string folder, module_dir(dir, path, at));
    (void)folder;
    if (ours && cls == "Transformer" && stage == kStart) {
      if (!path.empty())
        return make_error(ErrorCode::kUnsupported, "the Transformer module lives in '" + path + "'", at,
                          "glassbox reads the ONNX model and tokenizer from the directory root (path \"\")");
      stage = kTransformer;
      st.chain = "Transformer";
    } else if (ours && cls == "MLMTransformer" && stage == kStart) {
      if (!path.empty())
        return make_error(ErrorCode::kUnsupported, "the MLMTransformer module lives in '" + path + "'", at,
                          "glassbox reads the ONNX model and tokenizer from the directory root (path \"\")");
      stage = kMlm;
      st.chain = "MLMTransformer";
    } else if (ours && cls == "SpladePooling" && stage == kMlm) {
      GB_RETURN_IF_ERROR(read_splade_pooling(dir, path, st));
      stage = kSparse;
      st.chain += " -> SpladePooling(" + path + ")";
    } else if (type == kPylateDense && (stage == kTransformer || stage == kTokenDense)) {
      GB_RETURN_IF_ERROR(read_dense(dir, path, st, /*per_token=*/true));
      stage = kTokenDense;
      st.chain += " -> Dense(" + path + ", per token)";
    } else if (ours && cls == "Pooling" && stage == kTransformer) {
      GB_RETURN_IF_ERROR(read_pooling(dir, path, st));
      stage = kPooled;
      st.chain += " -> Pooling(" + path + ")";
    } else if (ours && cls == "Dense" && stage == kPooled) {
      GB_RETURN_IF_ERROR(read_dense(dir, path, st));
      st.chain += " -> Dense(" + path + ")";
    } else if (ours && cls == "Normalize" && stage == kPooled) {
      stage = kNormalized;
      st.normalize = true;
      st.normalize_source = "modules.json " + path + " (" + type + ")";
      st.chain += " -> Normalize";
    } else {
      const bool known = (ours && (cls == "Transformer" || cls == "Pooling" || cls == "Dense" || cls == "Normalize" ||
                                   cls == "MLMTransformer" || cls == "SpladePooling")) ||
                         type == kPylateDense;
      return make_error(ErrorCode::kUnsupported,
                        known ? "module " + cls + " cannot follow " + (st.chain.empty() ? "the start" : st.chain)
                              : "module type '" + type + "' is not implemented",
                        at, kChains);
    }
  }
  if (stage == kMlm)
    return make_error(ErrorCode::kUnsupported, "modules.json has no SpladePooling module after the MLMTransformer", where, kChains);
  if (stage == kSparse || stage == kTokenDense) return {};
  if (stage < kPooled)
    return make_error(ErrorCode::kUnsupported, "modules.json has no Pooling module after the Transformer", where, kChains);
  if (!st.normalize) st.normalize_source = "modules.json: no Normalize module";
  return {};
}

Status read_st_config(const std::string& dir, SentenceTransformersLayout& st) {
  const std::string where = dir + "/config_sentence_transformers.json";
  GB_ASSIGN_OR_RETURN(json j, read_json(where, false));
  if (j.is_null()) return {};
  if (j.contains("prompts") && !j["prompts"].is_null()) {
    if (!j["prompts"].is_object()) return make_error(ErrorCode::kInvalidModel, "prompts must be an object {name: text}", where);
    std::map<std::string, std::string> prompts;
    for (const auto& [k, v] : j["prompts"].items()) {
      if (!v.is_string()) return make_error(ErrorCode::kInvalidModel, "prompt '" + k + "' is not a string", where);
      prompts[k] = v.get<std::string>();
    }
    st.prompts = std::move(prompts);
  }
  GB_ASSIGN_OR_RETURN(st.default_prompt_name, get_opt<std::string>(j, "default_prompt_name", where));
  if (st.default_prompt_name && (!st.prompts || !st.prompts->count(*st.default_prompt_name)))
    return make_error(ErrorCode::kInvalidModel, "default_prompt_name '" + *st.default_prompt_name + "' is not in prompts", where);
  GB_ASSIGN_OR_RETURN(st.similarity, get_opt<std::string>(j, "similarity_fn_name", where));
  const bool maxsim = st.similarity && *st.similarity == "MaxSim" && !st.token_dense.empty();  // PyLate's ColBERT
  if (st.similarity && !maxsim && *st.similarity != "cosine" && *st.similarity != "dot" && *st.similarity != "euclidean" &&
      *st.similarity != "manhattan")
    return make_error(ErrorCode::kUnsupported, "similarity_fn_name '" + *st.similarity + "' is unknown", where,
                      "sentence-transformers names cosine, dot, euclidean and manhattan");
  return {};
}

}  // namespace

Result<SentenceTransformersLayout> read_sentence_transformers(const std::string& dir) {
  SentenceTransformersLayout st;
  GB_RETURN_IF_ERROR(read_modules(dir, st));
  GB_RETURN_IF_ERROR(read_st_config(dir, st));
  const std::string where = dir + "/sentence_bert_config.json";
  GB_ASSIGN_OR_RETURN(json sb, read_json(where, false));
  GB_ASSIGN_OR_RETURN(st.max_seq_length, get_opt<int64_t>(sb, "max_seq_length", where));
  GB_ASSIGN_OR_RETURN(st.do_lower_case, get_opt<bool>(sb, "do_lower_case", where));
  if (st.max_seq_length && *st.max_seq_length <= 0)
    return make_error(ErrorCode::kInvalidModel, "max_seq_length must be positive", where);
  return st;
}

}  // namespace glassbox::pipeline
