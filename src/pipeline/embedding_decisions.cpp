// The embedding decisions of a model directory: pooling, include_prompt, dense, normalize,
// prompts, similarity, lowercasing. glassbox.json > the sentence-transformers files > a
// declared default (with its risk, which `glassbox explain` shows).
#include <algorithm>

#include "pipeline/heads.h"
#include "pipeline/json_fields.h"
#include "pipeline/model_dir.h"

namespace glassbox::pipeline {
namespace {

using nlohmann::json;

constexpr Pooling kNamedModes[] = {Pooling::kCls,         Pooling::kMax,          Pooling::kMean, Pooling::kMeanSqrtLen,
                                   Pooling::kWeightedMean, Pooling::kLastToken, Pooling::kNone};

// glassbox.json "pooling": one mode, or several joined by '+' (concatenated in the order written).
Result<std::vector<Pooling>> parse_pooling(const std::string& text, const std::string& where) {
  std::vector<Pooling> modes;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t plus = std::min(text.find('+', start), text.size());
    const std::string name = text.substr(start, plus - start);
    auto it = std::find_if(std::begin(kNamedModes), std::end(kNamedModes), [&](Pooling p) { return name == pooling_name(p); });
    if (it == std::end(kNamedModes))
      return make_error(ErrorCode::kInvalidModel, "pooling '" + name + "' is unknown", where,
                        "use cls, max, mean, mean_sqrt_len_tokens, weightedmean, lasttoken or none; several joined by '+' "
                        "are concatenated");
    modes.push_back(*it);
    start = plus + 1;
  }
  if (modes.size() > 1 && std::find(modes.begin(), modes.end(), Pooling::kNone) != modes.end())
    return make_error(ErrorCode::kInvalidModel, "pooling 'none' cannot be combined with other modes", where);
  return modes;
}

std::string modes_text(const std::vector<Pooling>& modes) {
  std::string s;
  for (Pooling p : modes) s += std::string(s.empty() ? "" : "+") + pooling_name(p);
  return s;
}

std::string dense_text(const DenseLayer& l) {
  return l.dir + ": " + std::to_string(l.in) + " -> " + std::to_string(l.out) + ", " + l.activation +
         (l.bias.empty() ? ", no bias" : ", bias");
}

// The dense head: pooling, include_prompt, dense, normalize.
Status derive_dense_head(const ModelDirFiles& f, const std::vector<TensorSpec>& outputs, PipelineDecisions& dec,
                         std::vector<Derivation>& d) {
  const json& g = f.glassbox;
  const auto& st = f.st;
  const std::string gj = "glassbox.json";
  const std::string gj_path = f.dir + "/" + gj;
  const bool embed = dec.task == PipelineTask::kEmbed;

  // pooling
  GB_ASSIGN_OR_RETURN(auto pooling, get_opt<std::string>(g, "pooling", gj_path));
  if (pooling) {
    GB_ASSIGN_OR_RETURN(dec.pooling_modes, parse_pooling(*pooling, gj_path));
    d.push_back({"pooling", *pooling,
                 st.has_modules ? gj + " (over " + st.pooling_source + ": " + modes_text(st.pooling_modes) + ")" : gj});
  } else if (st.has_modules) {
    dec.pooling_modes = st.pooling_modes;
    if (embed) d.push_back({"pooling", modes_text(dec.pooling_modes), st.pooling_source});
  } else if (embed) {
    const bool rank2 = !outputs.empty() && outputs[0].has_shape && outputs[0].dims.size() == 2;
    dec.pooling_modes = {rank2 ? Pooling::kNone : Pooling::kMean};
    if (rank2)
      d.push_back({"pooling", "none", "model output is already [batch, hidden]"});
    else
      d.push_back({"pooling", "mean", "default: mean over real tokens (no glassbox.json pooling, no modules.json)",
                   "a model trained with CLS or last-token pooling (BGE, GTE-Qwen, Qwen3-Embedding) gives wrong vectors "
                   "with mean: declare \"pooling\" in glassbox.json or keep the sentence-transformers files beside the model"});
  }
  dec.pooling = dec.pooling_modes.front();
  if (st.has_modules && embed && dec.pooling != Pooling::kNone) {
    for (const auto& o : outputs)  // the hidden size the Pooling module declares must be the model's
      if ((o.name == "last_hidden_state" || o.name == "token_embeddings") && o.has_shape && o.dims.size() == 3 &&
          o.dims[2] > 0 && o.dims[2] != st.word_embedding_dimension)
        return make_error(ErrorCode::kInvalidModel,
                          "word_embedding_dimension " + std::to_string(st.word_embedding_dimension) +
                              " differs from the model's hidden size " + std::to_string(o.dims[2]) + " (output '" + o.name + "')",
                          f.dir, "the Pooling config belongs to another model");
  }

  // include_prompt
  GB_ASSIGN_OR_RETURN(auto include_prompt, get_opt<bool>(g, "include_prompt", gj_path));
  if (include_prompt) {
    dec.include_prompt = *include_prompt;
    d.push_back({"include_prompt", *include_prompt ? "true" : "false", gj});
  } else if (st.has_modules) {
    dec.include_prompt = st.include_prompt;
    if (embed) d.push_back({"include_prompt", st.include_prompt ? "true" : "false", st.include_prompt_source});
  }

  // dense (only the sentence-transformers files declare it)
  dec.dense = st.dense;
  if (embed && st.has_modules) {
    for (const auto& l : st.dense) d.push_back({"dense", dense_text(l), "modules.json " + l.dir});
    if (st.dense.empty()) d.push_back({"dense", "none", "modules.json: no Dense module"});
  }

  // normalize
  GB_ASSIGN_OR_RETURN(auto normalize, get_opt<bool>(g, "normalize", gj_path));
  if (normalize) {
    dec.normalize = *normalize;
    d.push_back({"normalize", *normalize ? "true" : "false", st.has_modules ? gj + " (over " + st.normalize_source + ")" : gj});
  } else if (st.has_modules) {
    dec.normalize = st.normalize;
    if (embed) d.push_back({"normalize", st.normalize ? "true" : "false", st.normalize_source});
  } else if (embed) {
    d.push_back({"normalize", "false", "default: raw vectors (no glassbox.json normalize, no modules.json)",
                 "a model trained on unit vectors ranks differently under dot product; set \"normalize\": true if it was"});
  }
  return {};
}

// The sparse head: glassbox.json "sparse" {pooling, activation, top_k} field by field over the
// SpladePooling module. Returns whether the model is sparse.
Result<bool> derive_sparse_head(const ModelDirFiles& f, PipelineDecisions& dec, std::vector<Derivation>& d) {
  const std::string gj_path = f.dir + "/glassbox.json";
  const json* declared = nullptr;
  if (f.glassbox.is_object() && f.glassbox.contains("sparse") && !f.glassbox["sparse"].is_null()) {
    declared = &f.glassbox["sparse"];
    if (!declared->is_object())
      return make_error(ErrorCode::kInvalidModel, "field 'sparse' must be an object, got " + declared->dump(), gj_path,
                        "use \"sparse\": {\"pooling\": \"max\", \"activation\": \"relu\", \"top_k\": 0}");
    for (const auto& [k, v] : declared->items())
      if (k != "pooling" && k != "activation" && k != "top_k")
        return make_error(ErrorCode::kInvalidModel, "field 'sparse." + k + "' is unknown", gj_path,
                          "\"sparse\" takes pooling (max|sum), activation (relu|log1p_relu) and top_k");
  }
  if (!declared && !f.st.splade) return false;
  if (dec.task != PipelineTask::kEmbed)
    return make_error(ErrorCode::kInvalidModel, "a sparse head is declared but the task is classify", f.dir,
                      "remove \"task\": \"classify\" from glassbox.json");
  SparseHead h = f.st.splade.value_or(SparseHead{});
  const std::string st_source = f.st.splade ? f.st.splade_source : "";
  auto pick = [&](const char* key, std::string& value, std::initializer_list<const char*> allowed, const char* dflt) -> Status {
    GB_ASSIGN_OR_RETURN(auto v, declared ? get_opt<std::string>(*declared, key, gj_path) : std::optional<std::string>());
    if (v) {
      bool ok = false;
      for (const char* a : allowed) ok = ok || *v == a;
      if (!ok) return make_error(ErrorCode::kInvalidModel, std::string("sparse.") + key + " '" + *v + "' is unknown", gj_path);
      value = *v;
    }
    d.push_back({std::string("sparse_") + key, value,
                 v ? "glassbox.json sparse." + std::string(key)
                   : (!st_source.empty() ? "modules.json " + st_source : std::string("default: ") + dflt + " (SpladePooling's)")});
    return {};
  };
  d.push_back({"output", "sparse", declared ? std::string("glassbox.json sparse") : "modules.json " + f.st.chain});
  GB_RETURN_IF_ERROR(pick("pooling", h.pooling, {"max", "sum"}, "max"));
  GB_RETURN_IF_ERROR(pick("activation", h.activation, {"relu", "log1p_relu"}, "relu"));
  GB_ASSIGN_OR_RETURN(auto top_k, declared ? get_opt<int64_t>(*declared, "top_k", gj_path) : std::optional<int64_t>());
  if (top_k && *top_k < 0) return make_error(ErrorCode::kInvalidModel, "sparse.top_k must be 0 (all) or positive", gj_path);
  h.top_k = top_k.value_or(0);
  d.push_back({"sparse_top_k", h.top_k == 0 ? "all nonzero" : std::to_string(h.top_k),
               top_k ? "glassbox.json sparse.top_k" : "not declared: every nonzero entry (sentence-transformers' max_active_dims None)"});
  dec.sparse = h;
  dec.pooling_modes = {Pooling::kNone};  // not used: the sparse head pools
  dec.pooling = Pooling::kNone;
  dec.normalize = false;
  return true;
}

}  // namespace

Status derive_embedding(const ModelDirFiles& f, const std::vector<TensorSpec>& outputs, PipelineDecisions& dec,
                        std::vector<Derivation>& d) {
  const auto& st = f.st;
  const bool embed = dec.task == PipelineTask::kEmbed;
  GB_ASSIGN_OR_RETURN(bool sparse, derive_sparse_head(f, dec, d));
  if (sparse && dec.multi_vector)  // BGE-M3's several heads from one run are not implemented yet (issue 30)
    return make_error(ErrorCode::kUnsupported, "both a sparse and a multi-vector head are declared", f.dir,
                      "declare one of glassbox.json \"sparse\" and \"multi_vector\"");
  if (declares_heads(f)) {  // glassbox.json "heads": read per head (heads.cpp), no pooling of a hidden state
    dec.pooling_modes = {Pooling::kNone};
    dec.pooling = Pooling::kNone;
    dec.normalize = false;
  } else if (!sparse && !dec.multi_vector) {
    GB_RETURN_IF_ERROR(derive_dense_head(f, outputs, dec, d));
  }

  // prompts, similarity, lowercasing
  if (st.prompts) dec.prompts = *st.prompts;
  if (st.default_prompt_name) dec.default_prompt_name = *st.default_prompt_name;
  if (embed) {
    std::string names;
    for (const auto& [k, v] : dec.prompts) names += (names.empty() ? "" : ", ") + k;
    d.push_back({"prompts", names.empty() ? "none" : names,
                 st.prompts ? "config_sentence_transformers.json prompts" : "no config_sentence_transformers.json prompts"});
    d.push_back({"default_prompt_name", dec.default_prompt_name.empty() ? "none" : dec.default_prompt_name,
                 st.default_prompt_name ? "config_sentence_transformers.json default_prompt_name"
                                        : "not declared: texts are embedded without a prompt unless a request names one"});
    dec.similarity = st.similarity.value_or("cosine");
    d.push_back({"similarity", dec.similarity,
                 st.similarity ? "config_sentence_transformers.json similarity_fn_name"
                               : "default: cosine (sentence-transformers' default when similarity_fn_name is unset)"});
  }
  if (st.do_lower_case) {
    dec.lowercase_input = *st.do_lower_case;
    d.push_back({"lowercase_input", dec.lowercase_input ? "true" : "false", "sentence_bert_config.json do_lower_case"});
  }
  return {};
}

}  // namespace glassbox::pipeline
