#include "pipeline/multi_vector.h"

#include <algorithm>
#include <cmath>

#include "pipeline/json_fields.h"
#include "pipeline/pooling.h"

namespace glassbox::pipeline {
namespace {

using nlohmann::json;

// The fields PyLate's ColBERT saves in config_sentence_transformers.json (and glassbox.json "multi_vector" takes).
constexpr const char* kHeadKeys[] = {"query_prefix",       "document_prefix",            "query_length",  "document_length",
                                     "do_query_expansion", "attend_to_expansion_tokens", "skiplist_words"};
// The rest of that file, read elsewhere (prompts, similarity) or about the saving library.
constexpr const char* kOtherKeys[] = {"__version__", "model_type", "prompts", "default_prompt_name", "similarity_fn_name"};
constexpr const char* kPylateDefault = "default: PyLate's ColBERT constructor";

bool known(const std::string& k, bool head_only) {
  for (const char* h : kHeadKeys)
    if (k == h) return true;
  if (head_only) return false;
  for (const char* o : kOtherKeys)
    if (k == o) return true;
  return false;
}

// A field from glassbox.json "multi_vector" (declared), else config_sentence_transformers.json (file).
struct Sources {
  const json* declared = nullptr;
  json file;
  std::string declared_path, file_path;

  template <class T>
  Result<std::optional<T>> get(const char* key, std::string& source) const {
    if (declared) {
      GB_ASSIGN_OR_RETURN(auto v, get_opt<T>(*declared, key, declared_path));
      if (v) {
        source = std::string("glassbox.json multi_vector.") + key;
        return v;
      }
    }
    GB_ASSIGN_OR_RETURN(auto v, get_opt<T>(file, key, file_path));
    if (v) source = std::string("config_sentence_transformers.json ") + key;
    return v;
  }
};

Result<std::optional<uint32_t>> prefix_id(const Tokenizer& tok, const std::string& prefix, const char* key, const std::string& where) {
  if (prefix.empty()) return std::optional<uint32_t>();
  auto id = tok.token_to_id(prefix);
  if (!id)
    return make_error(ErrorCode::kInvalidModel, std::string(key) + " '" + prefix + "' is not a token of tokenizer.json", where,
                      "PyLate adds its prefix tokens to the tokenizer it saves: use that tokenizer.json, or declare the "
                      "prefix the model was trained with");
  return std::optional<uint32_t>(*id);
}

// The mask token (tokenizer_config.json mask_token: a string or {"content": ...}), as PyLate pads queries with it.
Result<std::pair<std::string, uint32_t>> expansion_token(const ModelDirFiles& f, const Tokenizer& tok) {
  const std::string where = f.dir + "/tokenizer_config.json";
  std::string text;
  if (f.tokenizer_config.is_object() && f.tokenizer_config.contains("mask_token")) {
    const json& m = f.tokenizer_config["mask_token"];
    if (m.is_string()) text = m.get<std::string>();
    else if (m.is_object() && m.contains("content") && m["content"].is_string()) text = m["content"].get<std::string>();
  }
  if (text.empty())
    return make_error(ErrorCode::kUnsupported, "query expansion needs a mask token and tokenizer_config.json names none", where,
                      "add \"mask_token\" to tokenizer_config.json, or declare \"multi_vector\": {\"do_query_expansion\": false}");
  auto id = tok.token_to_id(text);
  if (!id) return make_error(ErrorCode::kInvalidModel, "mask_token '" + text + "' is not a token of tokenizer.json", where);
  return std::make_pair(text, *id);
}

Status read_lengths(const Sources& s, MultiVectorHead& h, std::vector<Derivation>& d) {
  for (auto [key, value, dflt] : {std::tuple<const char*, int64_t*, int64_t>{"query_length", &h.query_length, 32},
                                  std::tuple<const char*, int64_t*, int64_t>{"document_length", &h.document_length, 180}}) {
    std::string src = std::string(kPylateDefault) + " (" + std::to_string(dflt) + ")";
    GB_ASSIGN_OR_RETURN(auto v, s.get<int64_t>(key, src));
    *value = v.value_or(dflt);
    if (*value < 3)
      return make_error(ErrorCode::kInvalidModel, std::string(key) + " must be at least 3 (first token, prefix, a text token)",
                        v ? src : s.file_path);
    d.push_back({std::string("multi_vector_") + key, std::to_string(*value), src,
                 v ? "" : "a model trained with other lengths sees its queries padded or cut differently"});
  }
  return {};
}

Status read_prefixes(const Sources& s, const Tokenizer& tok, MultiVectorHead& h, std::vector<Derivation>& d) {
  for (auto [key, text, id] : {std::tuple<const char*, std::string*, std::optional<uint32_t>*>{"query_prefix", &h.query_prefix, &h.query_prefix_id},
                               std::tuple<const char*, std::string*, std::optional<uint32_t>*>{"document_prefix", &h.document_prefix,
                                                                                             &h.document_prefix_id}}) {
    std::string src = kPylateDefault;
    GB_ASSIGN_OR_RETURN(auto v, s.get<std::string>(key, src));
    if (v) *text = *v;
    GB_ASSIGN_OR_RETURN(*id, prefix_id(tok, *text, key, v ? src : s.file_path));
    d.push_back({std::string("multi_vector_") + key,
                 id->has_value() ? "'" + *text + "' (id " + std::to_string(**id) + ", inserted after the first token)" : "none",
                 src, v ? "" : "a model trained with another marker (ColBERTv2: [unused0]/[unused1]) gives other vectors"});
  }
  return {};
}

Status read_expansion(const ModelDirFiles& f, const Sources& s, const Tokenizer& tok, MultiVectorHead& h,
                      std::vector<Derivation>& d) {
  std::string src = std::string(kPylateDefault) + " (true)";
  GB_ASSIGN_OR_RETURN(auto expand, s.get<bool>("do_query_expansion", src));
  h.query_expansion = expand.value_or(true);
  d.push_back({"multi_vector_query_expansion", h.query_expansion ? "true" : "false", src});
  src = std::string(kPylateDefault) + " (false)";
  GB_ASSIGN_OR_RETURN(auto attend, s.get<bool>("attend_to_expansion_tokens", src));
  h.attend_to_expansion = h.query_expansion && attend.value_or(false);  // PyLate: no expansion, no attending to it
  d.push_back({"multi_vector_attend_to_expansion", h.attend_to_expansion ? "true" : "false", src});
  if (!h.query_expansion) return {};
  GB_ASSIGN_OR_RETURN(auto mask, expansion_token(f, tok));
  h.expansion_token = mask.first;
  h.expansion_id = mask.second;
  d.push_back({"multi_vector_expansion_token", mask.first + " (id " + std::to_string(mask.second) + ")",
               "tokenizer_config.json mask_token (PyLate pads queries with the mask token)"});
  return {};
}

Status read_skiplist(const Sources& s, const Tokenizer& tok, MultiVectorHead& h, std::vector<Derivation>& d) {
  std::string src = std::string(kPylateDefault) + " (Python's string.punctuation)";
  std::vector<std::string> words;
  const json* list = nullptr;
  if (s.declared && s.declared->contains("skiplist_words") && !(*s.declared)["skiplist_words"].is_null()) {
    list = &(*s.declared)["skiplist_words"];
    src = "glassbox.json multi_vector.skiplist_words";
  } else if (s.file.is_object() && s.file.contains("skiplist_words") && !s.file["skiplist_words"].is_null()) {
    list = &s.file["skiplist_words"];
    src = "config_sentence_transformers.json skiplist_words";
  }
  if (list) {
    if (!list->is_array()) return make_error(ErrorCode::kInvalidModel, "skiplist_words must be an array of strings", src);
    for (const auto& w : *list) {
      if (!w.is_string()) return make_error(ErrorCode::kInvalidModel, "skiplist_words holds " + w.dump(), src);
      words.push_back(w.get<std::string>());
    }
  } else {
    for (char c : std::string("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")) words.emplace_back(1, c);
  }
  int64_t unknown = 0;
  for (const auto& w : words) {
    // transformers' convert_tokens_to_ids: a word that is not a token is the unknown token.
    auto id = tok.token_to_id(w);
    if (!id) {
      id = tok.unknown_id();
      ++unknown;
    }
    if (!id)
      return make_error(ErrorCode::kInvalidModel, "skiplist word '" + w + "' is not a token and the tokenizer has no unknown token",
                        src, "remove it from skiplist_words");
    h.skiplist_ids.push_back(*id);
  }
  std::sort(h.skiplist_ids.begin(), h.skiplist_ids.end());
  h.skiplist_ids.erase(std::unique(h.skiplist_ids.begin(), h.skiplist_ids.end()), h.skiplist_ids.end());
  d.push_back({"multi_vector_skiplist",
               std::to_string(words.size()) + " words -> " + std::to_string(h.skiplist_ids.size()) + " token ids" +
                   (unknown ? " (" + std::to_string(unknown) + " not tokens: the unknown token, as transformers maps them)" : ""),
               src});
  return {};
}

}  // namespace

Result<bool> derive_multi_vector(const ModelDirFiles& f, const Tokenizer& tokenizer, PipelineDecisions& dec,
                                 std::vector<Derivation>& d) {
  Sources s;
  s.declared_path = f.dir + "/glassbox.json";
  s.file_path = f.dir + "/config_sentence_transformers.json";
  if (f.glassbox.is_object() && f.glassbox.contains("multi_vector") && !f.glassbox["multi_vector"].is_null()) {
    s.declared = &f.glassbox["multi_vector"];
    if (!s.declared->is_object())
      return make_error(ErrorCode::kInvalidModel, "field 'multi_vector' must be an object, got " + s.declared->dump(), s.declared_path);
    for (const auto& [k, v] : s.declared->items())
      if (!known(k, true))
        return make_error(ErrorCode::kInvalidModel, "field 'multi_vector." + k + "' is unknown", s.declared_path,
                          "\"multi_vector\" takes PyLate's query_prefix, document_prefix, query_length, document_length, "
                          "do_query_expansion, attend_to_expansion_tokens and skiplist_words");
  }
  if (!s.declared && f.st.token_dense.empty()) return false;
  if (dec.task != PipelineTask::kEmbed)
    return make_error(ErrorCode::kInvalidModel, "a multi-vector head is declared but the task is classify", f.dir,
                      "remove \"task\": \"classify\" from glassbox.json");
  GB_ASSIGN_OR_RETURN(s.file, read_json(s.file_path, false));
  for (const auto& [k, v] : s.file.items()) {
    if (!known(k, false))
      return make_error(ErrorCode::kUnsupported, "ColBERT field '" + k + "' (= " + v.dump() + ") is not one glassbox implements",
                        s.file_path, "glassbox implements PyLate's query_prefix, document_prefix, query_length, document_length, "
                                     "do_query_expansion, attend_to_expansion_tokens and skiplist_words");
    if (k == "model_type" && v != "ColBERT")
      return make_error(ErrorCode::kUnsupported, "model_type " + v.dump() + " is not ColBERT", s.file_path,
                        "glassbox implements PyLate's ColBERT late interaction");
  }
  MultiVectorHead h;
  h.dense = f.st.token_dense;
  d.push_back({"output", "multi-vector (one unit vector per kept token)",
               s.declared ? "glassbox.json multi_vector" : "modules.json " + f.st.chain});
  GB_RETURN_IF_ERROR(read_prefixes(s, tokenizer, h, d));
  GB_RETURN_IF_ERROR(read_lengths(s, h, d));
  GB_RETURN_IF_ERROR(read_expansion(f, s, tokenizer, h, d));
  GB_RETURN_IF_ERROR(read_skiplist(s, tokenizer, h, d));
  std::string dense;
  for (const auto& l : h.dense) dense += (dense.empty() ? "" : ", ") + l.dir + ": " + std::to_string(l.in) + " -> " + std::to_string(l.out);
  d.push_back({"multi_vector_dense", dense.empty() ? "none" : dense + " (per token)", "modules.json " + f.st.chain});
  d.push_back({"multi_vector_score", "MaxSim: sum over query vectors of the max dot product with the document's vectors "
                                     "(unit vectors: the max cosine)",
               "PyLate's colbert_scores (similarity_fn_name MaxSim)"});
  dec.multi_vector = std::move(h);
  dec.pooling_modes = {Pooling::kNone};  // not used: every kept token is a vector
  dec.pooling = Pooling::kNone;
  dec.normalize = true;
  return true;
}

int64_t multi_vector_text_limit(const MultiVectorHead& head, bool query) {
  const int64_t length = query ? head.query_length : head.document_length;
  const bool prefix = query ? head.query_prefix_id.has_value() : head.document_prefix_id.has_value();
  return prefix ? length - 1 : length;
}

void shape_multi_vector_encoding(const MultiVectorHead& head, bool query, Encoding& e) {
  auto insert = [&e](size_t at, uint32_t id, const std::string& token, uint32_t attention) {
    e.ids.insert(e.ids.begin() + static_cast<std::ptrdiff_t>(at), id);
    e.type_ids.insert(e.type_ids.begin() + static_cast<std::ptrdiff_t>(at), 0);
    if (e.tokens.size() + 1 == e.ids.size()) e.tokens.insert(e.tokens.begin() + static_cast<std::ptrdiff_t>(at), token);
    if (e.offsets.size() + 1 == e.ids.size()) e.offsets.insert(e.offsets.begin() + static_cast<std::ptrdiff_t>(at), {0, 0});
    if (e.word_ids.size() + 1 == e.ids.size()) e.word_ids.insert(e.word_ids.begin() + static_cast<std::ptrdiff_t>(at), std::nullopt);
    if (e.sequence_ids.size() + 1 == e.ids.size()) e.sequence_ids.insert(e.sequence_ids.begin() + static_cast<std::ptrdiff_t>(at), 0);
    e.special_tokens_mask.insert(e.special_tokens_mask.begin() + static_cast<std::ptrdiff_t>(at), 1);
    e.attention_mask.insert(e.attention_mask.begin() + static_cast<std::ptrdiff_t>(at), attention);
  };
  if (query && head.query_expansion)
    while (static_cast<int64_t>(e.size()) < multi_vector_text_limit(head, true))
      insert(e.size(), head.expansion_id, head.expansion_token, head.attend_to_expansion ? 1 : 0);
  const auto& id = query ? head.query_prefix_id : head.document_prefix_id;
  if (id && !e.ids.empty()) insert(1, *id, query ? head.query_prefix : head.document_prefix, 1);
}

Result<int64_t> multi_vector_rows(const MultiVectorHead& head, const float* tokens, int64_t seq, int64_t hidden,
                                  const EncodedText& text, std::vector<float>& rows) {
  const Encoding& e = text.encoding;
  const int64_t n = std::min<int64_t>(static_cast<int64_t>(e.size()), seq);
  int64_t kept = 0;
  std::vector<float> v;
  for (int64_t c = 0; c < n; ++c) {
    const bool keep = text.query ? (head.query_expansion || e.attention_mask[c] != 0)
                                 : e.attention_mask[c] != 0 &&
                                       !std::binary_search(head.skiplist_ids.begin(), head.skiplist_ids.end(), e.ids[c]);
    if (!keep) continue;
    v.assign(tokens + c * hidden, tokens + (c + 1) * hidden);
    for (const auto& layer : head.dense) {
      if (static_cast<int64_t>(v.size()) != layer.in)
        return make_error(ErrorCode::kInvalidModel,
                          "Dense module " + layer.dir + " takes " + std::to_string(layer.in) + " values per token, the model gives " +
                              std::to_string(v.size()),
                          layer.dir + "/config.json", "the Dense modules belong to another model");
      apply_dense(layer, v);
    }
    l2_normalize(v);
    rows.insert(rows.end(), v.begin(), v.end());
    ++kept;
  }
  return kept;
}

}  // namespace glassbox::pipeline
