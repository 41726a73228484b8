// glassbox.json "heads": several embedding heads from one engine run (heads.h, embedding_heads.h).
#include "pipeline/heads.h"

#include <algorithm>
#include <map>

#include "pipeline/json_fields.h"
#include "pipeline/pooling.h"

namespace glassbox::pipeline {
namespace {

using nlohmann::json;

const char* const kHeadNames[] = {"dense", "sparse", "multi_vector"};

Status only_fields(const json& j, const std::string& head, std::initializer_list<const char*> fields, const std::string& path) {
  std::string list;
  for (const char* f : fields) list += std::string(list.empty() ? "" : ", ") + f;
  if (!j.is_object())
    return make_error(ErrorCode::kInvalidModel, "heads." + head + " must be an object, got " + j.dump(), path,
                      "heads." + head + " takes " + list + " (all required)");
  for (const auto& [k, v] : j.items())
    if (std::find_if(fields.begin(), fields.end(), [&](const char* f) { return k == f; }) == fields.end())
      return make_error(ErrorCode::kInvalidModel, "field 'heads." + head + "." + k + "' is unknown", path,
                        "heads." + head + " takes " + list + " (all required)");
  for (const char* f : fields)
    if (!j.contains(f) || j[f].is_null())
      return make_error(ErrorCode::kInvalidModel, "field 'heads." + head + "." + f + "' is not declared", path,
                        "every field of a head is required (glassbox does not guess how a head's output is read): " + list);
  return {};
}

template <class T>
Result<T> required(const json& j, const std::string& head, const char* key, const std::string& path) {
  GB_ASSIGN_OR_RETURN(auto v, get_opt<T>(j, key, path));
  if (!v) return make_error(ErrorCode::kInvalidModel, "field 'heads." + head + "." + key + "' is not declared", path);
  return *v;
}

// The output exists, has the expected rank (or one of them), is float32, and no other head reads it.
Status check_output(const std::string& name, const std::string& head, std::initializer_list<size_t> ranks,
                    const std::vector<TensorSpec>& outputs, std::map<std::string, std::string>& used, const std::string& path) {
  auto it = std::find_if(outputs.begin(), outputs.end(), [&](const TensorSpec& s) { return s.name == name; });
  if (it == outputs.end()) {
    std::string names;
    for (const auto& s : outputs) names += (names.empty() ? "" : ", ") + s.name;
    return make_error(ErrorCode::kInvalidModel, "heads." + head + ".output '" + name + "' is not an output of the model", path,
                      "the model's outputs: " + names);
  }
  if (auto u = used.find(name); u != used.end())
    return make_error(ErrorCode::kInvalidModel, "output '" + name + "' is declared for heads." + u->second + " and heads." + head,
                      path, "each head reads its own output");
  used[name] = head;
  if (it->dtype != DataType::kFloat32)
    return make_error(ErrorCode::kUnsupported, "heads." + head + ".output '" + name + "' is " + dtype_name(it->dtype), path,
                      "a head reads a float32 output");
  if (it->has_shape && std::find(ranks.begin(), ranks.end(), it->dims.size()) == ranks.end())
    return make_error(ErrorCode::kInvalidModel,
                      "heads." + head + ".output '" + name + "' has rank " + std::to_string(it->dims.size()) + ", not " +
                          std::to_string(*ranks.begin()) + (ranks.size() > 1 ? " or " + std::to_string(*(ranks.end() - 1)) : ""),
                      path, head == "dense" ? "a dense head reads a pooled [batch, dim] output"
                                            : "a per-token head reads a [batch, sequence, ...] output");
  return {};
}

Status derive_dense(const json& j, const std::vector<TensorSpec>& outputs, std::map<std::string, std::string>& used,
                    EmbeddingHeads& h, std::vector<Derivation>& d, const std::string& path) {
  GB_RETURN_IF_ERROR(only_fields(j, "dense", {"output", "normalize"}, path));
  DenseHeadDecl dense;
  GB_ASSIGN_OR_RETURN(dense.output, required<std::string>(j, "dense", "output", path));
  GB_ASSIGN_OR_RETURN(dense.normalize, required<bool>(j, "dense", "normalize", path));
  GB_RETURN_IF_ERROR(check_output(dense.output, "dense", {2}, outputs, used, path));
  d.push_back({"head_dense", "output '" + dense.output + "' [batch, dim]", "glassbox.json heads.dense.output"});
  d.push_back({"head_dense_normalize", dense.normalize ? "true" : "false (taken as the graph gives it)",
               "glassbox.json heads.dense.normalize"});
  h.dense = std::move(dense);
  return {};
}

Status derive_sparse(const json& j, const std::vector<TensorSpec>& outputs, const Tokenizer& tok,
                     std::map<std::string, std::string>& used, EmbeddingHeads& h, std::vector<Derivation>& d,
                     const std::string& path) {
  GB_RETURN_IF_ERROR(only_fields(j, "sparse", {"output", "pooling", "skip_tokens"}, path));
  TokenWeightHeadDecl s;
  GB_ASSIGN_OR_RETURN(s.output, required<std::string>(j, "sparse", "output", path));
  GB_ASSIGN_OR_RETURN(s.pooling, required<std::string>(j, "sparse", "pooling", path));
  if (s.pooling != "max")
    return make_error(ErrorCode::kUnsupported, "heads.sparse.pooling '" + s.pooling + "' is not one glassbox computes", path,
                      "\"max\": a token id weighs the max over its positions (BGE-M3's lexical weights)");
  if (!j["skip_tokens"].is_array())
    return make_error(ErrorCode::kInvalidModel, "heads.sparse.skip_tokens must be a list of tokens", path,
                      "BGE-M3 leaves out its cls, eos, pad and unk tokens: [\"<s>\", \"</s>\", \"<pad>\", \"<unk>\"]");
  std::string shown;
  for (const auto& t : j["skip_tokens"]) {
    if (!t.is_string()) return make_error(ErrorCode::kInvalidModel, "heads.sparse.skip_tokens holds " + t.dump(), path);
    const std::string token = t.get<std::string>();
    auto id = tok.token_to_id(token);
    if (!id)
      return make_error(ErrorCode::kInvalidModel, "heads.sparse.skip_tokens: '" + token + "' is not a token of tokenizer.json",
                        path, "name the special tokens as tokenizer.json writes them");
    s.skip_tokens.push_back(token);
    s.skip_ids.push_back(*id);
    shown += (shown.empty() ? "" : ", ") + token + " (" + std::to_string(*id) + ")";
  }
  GB_RETURN_IF_ERROR(check_output(s.output, "sparse", {2, 3}, outputs, used, path));
  d.push_back({"head_sparse", "output '" + s.output + "' [batch, sequence(, 1)]: one weight per token",
               "glassbox.json heads.sparse.output"});
  d.push_back({"head_sparse_pooling", "max per token id, weights > 0 kept", "glassbox.json heads.sparse.pooling"});
  d.push_back({"head_sparse_skip_tokens", shown.empty() ? "none" : shown, "glassbox.json heads.sparse.skip_tokens"});
  h.sparse = std::move(s);
  return {};
}

Status derive_multi(const json& j, const std::vector<TensorSpec>& outputs, std::map<std::string, std::string>& used,
                    EmbeddingHeads& h, std::vector<Derivation>& d, const std::string& path) {
  GB_RETURN_IF_ERROR(only_fields(j, "multi_vector", {"output", "first_position", "normalize"}, path));
  TokenVectorHeadDecl m;
  GB_ASSIGN_OR_RETURN(m.output, required<std::string>(j, "multi_vector", "output", path));
  GB_ASSIGN_OR_RETURN(m.first_position, required<int64_t>(j, "multi_vector", "first_position", path));
  GB_ASSIGN_OR_RETURN(m.normalize, required<bool>(j, "multi_vector", "normalize", path));
  if (m.first_position < 0)
    return make_error(ErrorCode::kInvalidModel, "heads.multi_vector.first_position must be 0 or more", path,
                      "BGE-M3's colbert head starts after [CLS]: 1");
  GB_RETURN_IF_ERROR(check_output(m.output, "multi_vector", {3}, outputs, used, path));
  d.push_back({"head_multi_vector", "output '" + m.output + "' [batch, sequence - " + std::to_string(m.first_position) + ", dim]",
               "glassbox.json heads.multi_vector.output"});
  d.push_back({"head_multi_vector_first_position",
               std::to_string(m.first_position) + " (row r is token position r + " + std::to_string(m.first_position) +
                   "; rows of positions with attention 1 kept)",
               "glassbox.json heads.multi_vector.first_position"});
  d.push_back({"head_multi_vector_normalize", m.normalize ? "true" : "false (taken as the graph gives it)",
               "glassbox.json heads.multi_vector.normalize"});
  h.multi_vector = std::move(m);
  return {};
}

Status refuse_beside(const ModelDirFiles& f, const PipelineDecisions& dec, const std::string& path) {
  const json& g = f.glassbox;
  for (const char* other : {"sparse", "multi_vector", "pooling", "normalize"})
    if (g.contains(other) && !g[other].is_null())
      return make_error(ErrorCode::kInvalidModel, std::string("glassbox.json declares both \"heads\" and \"") + other + "\"", path,
                        "with \"heads\", each head is declared inside it: remove the top-level field");
  if (f.st.has_modules)
    return make_error(ErrorCode::kInvalidModel, "glassbox.json declares \"heads\" and the directory has modules.json", path,
                      "a sentence-transformers module chain and declared heads would be two answers: keep one");
  if (dec.task != PipelineTask::kEmbed)
    return make_error(ErrorCode::kInvalidModel, "\"heads\" are declared but the task is classify", path,
                      "heads give embeddings: declare \"task\": \"embed\"");
  return {};
}

}  // namespace

bool declares_heads(const ModelDirFiles& f) {
  return f.glassbox.is_object() && f.glassbox.contains("heads") && !f.glassbox["heads"].is_null();
}

Result<std::optional<EmbeddingHeads>> derive_heads(const ModelDirFiles& f, const std::vector<TensorSpec>& outputs,
                                                   const Tokenizer& tokenizer, const PipelineDecisions& dec,
                                                   std::vector<Derivation>& d) {
  if (!declares_heads(f)) return std::optional<EmbeddingHeads>();
  const std::string path = f.dir + "/glassbox.json";
  GB_RETURN_IF_ERROR(refuse_beside(f, dec, path));
  const json& j = f.glassbox["heads"];
  if (!j.is_object() || j.empty())
    return make_error(ErrorCode::kInvalidModel, "field 'heads' must be an object with at least one head, got " + j.dump(), path,
                      "declare \"heads\": {\"dense\": {...}, \"sparse\": {...}, \"multi_vector\": {...}}");
  for (const auto& [k, v] : j.items())
    if (std::find(std::begin(kHeadNames), std::end(kHeadNames), k) == std::end(kHeadNames))
      return make_error(ErrorCode::kInvalidModel, "head 'heads." + k + "' is unknown", path,
                        "heads are dense, sparse and multi_vector");
  EmbeddingHeads h;
  std::map<std::string, std::string> used;
  if (j.contains("dense")) GB_RETURN_IF_ERROR(derive_dense(j["dense"], outputs, used, h, d, path));
  if (j.contains("sparse")) GB_RETURN_IF_ERROR(derive_sparse(j["sparse"], outputs, tokenizer, used, h, d, path));
  if (j.contains("multi_vector")) GB_RETURN_IF_ERROR(derive_multi(j["multi_vector"], outputs, used, h, d, path));
  std::string names;
  for (const auto& n : head_names(h)) names += (names.empty() ? "" : "+") + n;
  d.push_back({"output", "heads: " + names + " (one engine run feeds every head)", "glassbox.json heads"});
  return std::optional<EmbeddingHeads>(std::move(h));
}

namespace {

const NamedTensor* find(const std::vector<NamedTensor>& outs, const std::string& name) {
  for (const auto& o : outs)
    if (o.name == name) return &o;
  return nullptr;
}

Status check_rows(const NamedTensor* t, const std::string& head, size_t batch, const std::string& where) {
  if (!t || t->tensor.dtype() != DataType::kFloat32 || t->tensor.rank() < 2 || t->tensor.shape()[0] != static_cast<int64_t>(batch))
    return make_error(ErrorCode::kInvalidModel, "the run gave no float32 [batch, ...] output for heads." + head, where);
  return {};
}

void read_sparse(const TokenWeightHeadDecl& s, const float* w, int64_t seq, const EncodedText& text, Embedding& e) {
  std::map<uint32_t, float> best;
  const auto& enc = text.encoding;
  for (int64_t i = 0; i < seq && i < static_cast<int64_t>(enc.size()); ++i) {
    const uint32_t id = enc.ids[i];
    if (enc.attention_mask[i] == 0 || !(w[i] > 0.0f)) continue;
    if (std::find(s.skip_ids.begin(), s.skip_ids.end(), id) != s.skip_ids.end()) continue;
    auto it = best.find(id);
    if (it == best.end() || w[i] > it->second) best[id] = w[i];
  }
  for (const auto& [id, v] : best) {
    e.indices.push_back(id);
    e.vector.push_back(v);
  }
}

void read_multi(const TokenVectorHeadDecl& m, const float* rows, int64_t n, int64_t dim, const EncodedText& text, Embedding& e) {
  const auto& enc = text.encoding;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t pos = r + m.first_position;
    if (pos >= static_cast<int64_t>(enc.size()) || enc.attention_mask[pos] == 0) continue;
    std::vector<float> v(rows + r * dim, rows + (r + 1) * dim);
    if (m.normalize) l2_normalize(v);
    e.vector.insert(e.vector.end(), v.begin(), v.end());
    ++e.vectors;
  }
}

}  // namespace

Result<std::vector<HeadEmbeddings>> read_heads(const EmbeddingHeads& heads, const std::vector<EncodedText>& batch,
                                               const std::vector<NamedTensor>& outs, const std::string& where) {
  std::vector<HeadEmbeddings> results(batch.size());
  int64_t seq = 0;
  for (const auto& t : batch) seq = std::max<int64_t>(seq, static_cast<int64_t>(t.encoding.size()));
  for (size_t r = 0; r < batch.size(); ++r) {
    results[r].tokens = static_cast<int64_t>(batch[r].encoding.size());
    results[r].tokens_dropped = batch[r].tokens_dropped;
  }
  if (heads.dense) {
    const NamedTensor* t = find(outs, heads.dense->output);
    GB_RETURN_IF_ERROR(check_rows(t, "dense", batch.size(), where));
    const int64_t dim = t->tensor.numel() / static_cast<int64_t>(batch.size());
    for (size_t r = 0; r < batch.size(); ++r) {
      Embedding e;
      e.vector.assign(t->tensor.data<float>() + r * dim, t->tensor.data<float>() + (r + 1) * dim);
      if (heads.dense->normalize) l2_normalize(e.vector);
      results[r].dense = std::move(e);
    }
  }
  if (heads.sparse) {
    const NamedTensor* t = find(outs, heads.sparse->output);
    GB_RETURN_IF_ERROR(check_rows(t, "sparse", batch.size(), where));
    const auto& shape = t->tensor.shape();
    if (shape[1] != seq || (shape.size() == 3 && shape[2] != 1) || shape.size() > 3)
      return make_error(ErrorCode::kInvalidModel, "heads.sparse output '" + t->name + "' is not [batch, " + std::to_string(seq) +
                                                      "(, 1)] for this batch", where, "a sparse head gives one weight per token");
    for (size_t r = 0; r < batch.size(); ++r) {
      Embedding e;
      read_sparse(*heads.sparse, t->tensor.data<float>() + static_cast<int64_t>(r) * seq, seq, batch[r], e);
      results[r].sparse = std::move(e);
    }
  }
  if (heads.multi_vector) {
    const NamedTensor* t = find(outs, heads.multi_vector->output);
    GB_RETURN_IF_ERROR(check_rows(t, "multi_vector", batch.size(), where));
    const auto& shape = t->tensor.shape();
    const int64_t n = seq - heads.multi_vector->first_position;
    if (shape.size() != 3 || shape[1] != n)
      return make_error(ErrorCode::kInvalidModel, "heads.multi_vector output '" + t->name + "' has " +
                                                      std::to_string(shape.size() > 1 ? shape[1] : 0) + " rows per text, not " +
                                                      std::to_string(n) + " (sequence - first_position) for this batch",
                        where, "check heads.multi_vector.first_position against the graph");
    for (size_t r = 0; r < batch.size(); ++r) {
      Embedding e;
      read_multi(*heads.multi_vector, t->tensor.data<float>() + static_cast<int64_t>(r) * n * shape[2], n, shape[2], batch[r], e);
      results[r].multi_vector = std::move(e);
    }
  }
  for (auto& h : results)
    for (auto* e : {&h.dense, &h.sparse, &h.multi_vector})
      if (*e) {
        (*e)->tokens = h.tokens;
        (*e)->tokens_dropped = h.tokens_dropped;
      }
  return results;
}

}  // namespace glassbox::pipeline

namespace glassbox {

std::vector<std::string> head_names(const EmbeddingHeads& heads) {
  std::vector<std::string> names;
  if (heads.dense) names.push_back("dense");
  if (heads.sparse) names.push_back("sparse");
  if (heads.multi_vector) names.push_back("multi_vector");
  return names;
}

}  // namespace glassbox
