#include "glassbox/pipeline.h"

#include <algorithm>
#include <filesystem>
#include <cmath>

#include "core/utf8.h"
#include "glassbox/embedding_heads.h"
#include "glassbox/memory_budget.h"
#include "glassbox/numerics.h"
#include "pipeline/heads.h"
#include "pipeline/model_dir.h"
#include "pipeline/multi_vector.h"
#include "pipeline/pooling.h"
#include "tokenizer/text.h"

namespace glassbox {

struct Pipeline::Impl {
  pipeline::ModelDirFiles files;
  Tokenizer tokenizer;
  Session session;
  PipelineDecisions decisions;
  std::vector<Derivation> derivations;
  std::optional<EmbeddingHeads> heads = std::nullopt;  // glassbox.json "heads" (embedding_heads.h)
};

namespace {

// Python's str.lower() (sentence_bert_config.json do_lower_case): the full lowercase mapping of
// each character. Capital sigma is refused: Python lowercases it by its context (Final_Sigma).
Result<std::string> lowercase_text(const std::string& text, size_t index) {
  if (tok::utf8_first_invalid(text) != std::string::npos) return text;  // the tokenizer names the invalid byte
  std::string out;
  std::u32string low;
  for (size_t i = 0; i < text.size();) {
    int len = 1;
    const char32_t c = tok::utf8_decode(text, i, len);
    if (c == U'\u03A3')
      return make_error(ErrorCode::kUnsupported, "text holds a capital sigma (U+03A3), which Python lowercases by context",
                        "input " + std::to_string(index), "lowercase the text before sending it (the model declares do_lower_case)");
    low.clear();
    tok::to_lowercase(c, low);
    for (char32_t l : low) glassbox::utf8_append(out, l);
    i += static_cast<size_t>(len);
  }
  return out;
}

// The prompt put before the text (sentence-transformers: prompt + text), "" for none.
Result<std::string> choose_prompt(const Pipeline::Impl& p, const PipelineInput& in, size_t index) {
  const auto& d = p.decisions;
  const std::string where = "input " + std::to_string(index);
  if ((in.prompt || in.prompt_name) && d.task != PipelineTask::kEmbed)
    return make_error(ErrorCode::kInvalidArgument, "prompts apply to embedding models", where, "remove prompt / prompt_name");
  if (in.prompt && in.prompt_name)
    return make_error(ErrorCode::kInvalidArgument, "both a prompt and a prompt_name are given", where, "give one of the two");
  if (in.prompt) return *in.prompt;
  const std::string name = in.prompt_name ? *in.prompt_name : d.default_prompt_name;
  if (name.empty() || d.task != PipelineTask::kEmbed) return std::string();
  auto it = d.prompts.find(name);
  if (it == d.prompts.end()) {
    std::string names;
    for (const auto& [k, v] : d.prompts) names += (names.empty() ? "" : ", ") + k;
    return make_error(ErrorCode::kInvalidArgument, "prompt_name '" + name + "' is not declared", where,
                      names.empty() ? "this model declares no prompts (config_sentence_transformers.json)"
                                    : "declared prompts: " + names);
  }
  return it->second;
}

// windows: where split_windows puts the windows after the first (the returned one); null: dropped.
// max: the tokens the text may have; limit_name: what sets it (errors name it).
Result<EncodedText> encode_text(const Pipeline::Impl& p, const PipelineInput& in, size_t index, std::vector<EncodedText>* windows,
                                int64_t max, const std::string& limit_name) {
  EncodeOptions opts;
  opts.truncation_from_file = false;  // the pipeline's declared policy applies, not the file's
  opts.padding_from_file = false;     // batches are padded by the pipeline, explicitly
  std::optional<std::string_view> pair;
  std::optional<std::string> lowered_pair;
  if (in.pair) pair = *in.pair;
  GB_ASSIGN_OR_RETURN(std::string prompt, choose_prompt(p, in, index));
  std::string text = prompt + in.text;
  if (p.decisions.lowercase_input) {
    GB_ASSIGN_OR_RETURN(text, lowercase_text(text, index));
    GB_ASSIGN_OR_RETURN(prompt, lowercase_text(prompt, index));
    if (in.pair) {
      GB_ASSIGN_OR_RETURN(lowered_pair, lowercase_text(*in.pair, index));
      pair = *lowered_pair;
    }
  }
  // Prompt positions pooling leaves out: the prompt's own encoding, less its last token when that
  // is a special token (a closing [SEP] / EOS), as sentence-transformers counts prompt_length.
  int64_t prompt_tokens = 0;
  if (!prompt.empty() && !p.decisions.include_prompt) {
    auto pe = p.tokenizer.encode(prompt, std::nullopt, opts);
    if (!pe.ok()) return std::move(pe).take_error().with_where("input " + std::to_string(index) + " prompt");
    prompt_tokens = static_cast<int64_t>(pe->size());
    if (prompt_tokens > 0 && pe->special_tokens_mask.back() != 0) --prompt_tokens;
  }
  auto full = p.tokenizer.encode(text, pair, opts);
  if (!full.ok()) return std::move(full).take_error().with_where("input " + std::to_string(index));
  // An empty text would still get a label (from [CLS] [SEP] or a whitespace token alone): refuse it instead of guessing.
  const auto blank = [](std::string_view t) { return t.find_first_not_of(" \t\n\r\v\f") == std::string_view::npos; };
  if (blank(in.text) && (!in.pair || blank(*in.pair)))
    return make_error(ErrorCode::kInvalidArgument, in.text.empty() ? "text is empty" : "text is only whitespace",
                      "input " + std::to_string(index), "remove empty texts from the input");
  if (std::all_of(full->special_tokens_mask.begin(), full->special_tokens_mask.end(), [](uint32_t m) { return m != 0; }))
    return make_error(ErrorCode::kInvalidArgument, "text has no tokens (only characters the tokenizer drops)",
                      "input " + std::to_string(index), "remove empty texts from the input");
  const int64_t len = static_cast<int64_t>(full->size());
  if (len <= max) return EncodedText{std::move(full).value(), 0, prompt_tokens};
  if (!p.decisions.truncation && !in.allow_truncation && !in.split_windows)
    return make_error(ErrorCode::kLimitExceeded,
                      "input has " + std::to_string(len) + " tokens, over the model's " + limit_name + " " + std::to_string(max),
                      "input " + std::to_string(index),
                      "shorten the text, or allow dropping tokens with --truncation longest_first (or \"truncation\" "
                      "in glassbox.json); the response then reports tokens_dropped");
  if (in.split_windows) {  // the request's policy wins over a declared truncation
    TruncationPolicy policy;
    policy.max_length = static_cast<size_t>(max);
    policy.strategy = in.pair ? TruncationStrategy::kOnlySecond : TruncationStrategy::kLongestFirst;
    policy.direction = Side::kRight;
    opts.truncation = policy;
  } else if (p.decisions.truncation) {
    opts.truncation = p.decisions.truncation;
    opts.truncation->max_length = static_cast<size_t>(max);
  } else {
    TruncationPolicy policy;
    policy.max_length = static_cast<size_t>(max);
    policy.strategy = in.truncation_strategy;
    policy.direction = in.truncation_direction;
    opts.truncation = policy;
  }
  auto cut = p.tokenizer.encode(text, pair, opts);
  if (!cut.ok()) return std::move(cut).take_error().with_where("input " + std::to_string(index));
  const int64_t kept = static_cast<int64_t>(cut->size());
  if (in.split_windows) {
    if (!windows && !cut->overflowing.empty())
      return make_error(ErrorCode::kInvalidArgument, "input was split into " + std::to_string(cut->overflowing.size() + 1) +
                            " windows, which this call cannot return", "input " + std::to_string(index),
                        "call Pipeline::encode_windows (rerank's split does)");
    for (auto& w : cut->overflowing)
      if (windows) windows->push_back(EncodedText{std::move(w), 0, 0});  // a later window holds no prompt
    cut->overflowing.clear();
    return EncodedText{std::move(cut).value(), 0, prompt_tokens};
  }
  cut->overflowing.clear();
  return EncodedText{std::move(cut).value(), len - kept, prompt_tokens};
}

// A multi-vector model encodes queries and documents as PyLate does (multi_vector.h); others as declared.
Result<EncodedText> encode_one(const Pipeline::Impl& p, const PipelineInput& in, size_t index,
                               std::vector<EncodedText>* windows = nullptr) {
  const auto& mv = p.decisions.multi_vector;
  if (!mv) {
    if (in.query)
      return make_error(ErrorCode::kInvalidArgument, "only a multi-vector (ColBERT) model encodes queries apart",
                        "input " + std::to_string(index), "leave out the query role for this model");
    return encode_text(p, in, index, windows, p.decisions.max_length, "max_length");
  }
  if (in.pair || in.split_windows)
    return make_error(ErrorCode::kInvalidArgument, in.pair ? "a multi-vector model embeds single texts, not pairs" : "split",
                      "input " + std::to_string(index),
                      "a multi-vector model declares no way to join the vectors of windows: use truncation or shorter texts");
  const int64_t limit = pipeline::multi_vector_text_limit(*mv, in.query);
  const std::string name = std::string(in.query ? "query_length " : "document_length ") +
                           std::to_string(in.query ? mv->query_length : mv->document_length) + " less the prefix token:";
  GB_ASSIGN_OR_RETURN(EncodedText e, encode_text(p, in, index, nullptr, limit, name));
  pipeline::shape_multi_vector_encoding(*mv, in.query, e.encoding);
  e.query = in.query;
  return e;
}

// Lengths are rounded up to a multiple of this in unpadded mode, lone texts and batches of one
// length included: at most 64 distinct shapes for texts up to 512 tokens, at most 7 masked positions
// computed per text. With a plan per shape (before the pipelines' one plan, derive_unspecialized) an
// exact length per text made every new length a new plan: serving BERT-base at 1 client, a text of a
// length not seen before took 1.4-2.4x as long. With one plan the rounding still bounds the oneDNN
// primitives (one per GEMM shape and row count, 1-1.6 ms to create) and the plans of a caller that
// names its own unspecialized_symbols.
constexpr int64_t kUnpadLengthMultiple = 8;

// `len` rounded up to kUnpadLengthMultiple, but never past `limit` (the model's max_length; <= 0: none).
int64_t round_up_within(int64_t len, int64_t limit) {
  const int64_t r = (len + kUnpadLengthMultiple - 1) / kUnpadLengthMultiple * kUnpadLengthMultiple;
  return limit > 0 ? std::max(len, std::min(r, limit)) : r;
}

// Builds the padded batch (right padding, attention mask 0) and runs it: padded, or
// unpadded when `unpadded` and the lengths differ. Returns the model outputs.
Result<std::vector<NamedTensor>> run_batch_as(const Pipeline::Impl& p, const std::vector<EncodedText>& batch, bool unpadded,
                                              BatchStats* stats = nullptr) {
  size_t longest = 0;
  for (const auto& e : batch) longest = std::max(longest, e.encoding.size());
  const int64_t b = static_cast<int64_t>(batch.size());
  // Masked tail up to the length multiple: only where masking is known to make padding inert.
  int64_t s = static_cast<int64_t>(longest);
  if (unpadded) s = round_up_within(s, p.decisions.max_length);
  std::vector<NamedTensor> inputs;
  for (const auto& spec : p.session.inputs()) {
    GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(spec.dtype, {b, s}));
    auto fill = [&](auto* out) {
      using T = std::remove_pointer_t<decltype(out)>;
      for (int64_t r = 0; r < b; ++r) {
        const Encoding& e = batch[r].encoding;
        for (int64_t c = 0; c < s; ++c) {
          const bool real = c < static_cast<int64_t>(e.size());
          T v = 0;
          if (spec.name == "input_ids") v = static_cast<T>(real ? e.ids[c] : p.decisions.pad_id);
          else if (spec.name == "attention_mask") v = real ? static_cast<T>(e.attention_mask[c]) : 0;
          else if (spec.name == "token_type_ids") v = real ? static_cast<T>(e.type_ids[c]) : 0;
          out[r * s + c] = v;
        }
      }
    };
    if (spec.name != "input_ids" && spec.name != "attention_mask" && spec.name != "token_type_ids")
      return make_error(ErrorCode::kUnsupported, "model input '" + spec.name + "' is not one a text pipeline can fill",
                        p.files.model_path, "text pipelines fill input_ids, attention_mask and token_type_ids");
    if (spec.dtype == DataType::kInt64) fill(t.mutable_data<int64_t>());
    else if (spec.dtype == DataType::kInt32) fill(t.mutable_data<int32_t>());
    else
      return make_error(ErrorCode::kUnsupported, std::string("model input '") + spec.name + "' has dtype " + dtype_name(spec.dtype),
                        p.files.model_path, "text pipelines feed int64 or int32 ids");
    inputs.push_back({spec.name, std::move(t)});
  }
  bool ragged = false;
  for (const auto& e : batch) ragged = ragged || e.encoding.size() != longest;
  if (stats) {
    stats->texts = b;
    stats->unpadded = unpadded && ragged;
    stats->real_tokens = stats->computed_tokens = 0;
    stats->nonfinite_outputs.clear();
    for (const auto& e : batch) {
      const int64_t len = static_cast<int64_t>(e.encoding.size());
      stats->real_tokens += len;
      stats->computed_tokens += stats->unpadded ? std::min(round_up_within(len, s), s) : s;
    }
  }
  std::vector<NamedTensor> outs;
  if (stats && stats->observer) {  // run_unpadded takes no observer: the padded run (same real-token results)
    stats->unpadded = false;
    stats->computed_tokens = b * s;
    GB_ASSIGN_OR_RETURN(outs, p.session.run_observed(inputs, *stats->observer));
  } else if (unpadded && ragged) {
    UnpadOptions u;
    u.mask_input = "attention_mask";
    u.length_multiple = kUnpadLengthMultiple;
    GB_ASSIGN_OR_RETURN(outs, p.session.run_unpadded(inputs, u));
  } else {
    GB_ASSIGN_OR_RETURN(outs, p.session.run(inputs));
  }
  for (const auto& o : outs) {
    const int64_t bad = first_non_finite(o.tensor);  // every float dtype: float16/bfloat16 outputs too
    if (bad < 0) continue;
    if (stats) stats->nonfinite_outputs.push_back(o.name);
    return make_error(ErrorCode::kInternal,
                      "model output '" + o.name + "' contains NaN/Inf (" +
                          non_finite_kind_name(non_finite_kind(o.tensor, bad)) + " at element " + std::to_string(bad) + ")",
                      p.files.model_path, "run `glassbox run --check-numerics` on this input to find the node that produces it");
  }
  return outs;
}

Result<std::vector<NamedTensor>> run_batch(const Pipeline::Impl& p, const std::vector<EncodedText>& batch, BatchStats* stats) {
  return run_batch_as(p, batch, p.decisions.unpadded_batches, stats);  // false for a multi-vector head (Pipeline::load)
}

// Whether run_unpadded gives the padded result for this model: a 2-text probe batch (a
// sentence and its first half) run both ways, compared on the real tokens. Returns the
// derivation text; sets `on`.
Result<std::string> probe_unpadded(const Pipeline::Impl& p, bool& on) {
  on = false;
  bool has_mask = false;
  for (const auto& spec : p.session.inputs()) has_mask = has_mask || spec.name == "attention_mask";
  if (!has_mask) return std::string("the model has no attention_mask input");
  PipelineInput probe{"The quick brown fox jumps over the lazy dog while glassbox checks how padding is masked.", {}};
  GB_ASSIGN_OR_RETURN(EncodedText full, encode_one(p, probe, 0));
  const size_t n = full.encoding.size();
  if (n < 3) return std::string("the probe text encodes to fewer than 3 tokens");
  EncodedText half = full;
  half.encoding.ids.resize(n / 2);
  half.encoding.type_ids.resize(n / 2);
  half.encoding.attention_mask.resize(n / 2);
  const std::vector<EncodedText> batch = {full, half};
  GB_ASSIGN_OR_RETURN(auto padded, run_batch_as(p, batch, false));
  auto tried = run_batch_as(p, batch, true);
  if (!tried.ok()) return "probe at load: run_unpadded refused the model: " + tried.error().what;
  auto unpadded = std::move(tried).value();
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < padded.size(); ++i) {
    const Tensor& a = unpadded[i].tensor;
    const Tensor& b = padded[i].tensor;
    if (a.shape() != b.shape() || a.dtype() != b.dtype())
      return "probe at load: output '" + padded[i].name + "' differs in shape";
    if (b.dtype() != DataType::kFloat32) continue;
    const bool tokens = b.rank() >= 3 && b.shape()[1] == static_cast<int64_t>(n);
    const int64_t inner = tokens ? b.numel() / (2 * static_cast<int64_t>(n)) : 1;
    for (int64_t k = 0; k < b.numel(); ++k) {
      if (tokens && (k / inner) >= static_cast<int64_t>(n) + static_cast<int64_t>(n / 2)) continue;  // row 1 padding
      diff = std::max(diff, std::fabs(double(a.data<float>()[k]) - b.data<float>()[k]));
      scale = std::max(scale, std::fabs(double(b.data<float>()[k])));
    }
  }
  char rel[32];
  snprintf(rel, sizeof rel, "%.1e", diff / scale);
  on = diff / scale <= 1e-4;
  return "probe at load: texts of " + std::to_string(n) + " and " +
         std::to_string(n / 2) + " tokens run padded and unpadded differ by " + rel +
         (on ? " <= 1e-4 (relative) on real tokens" : " > 1e-4: the model lets padding change real tokens");
}

const NamedTensor* pick_output(const std::vector<NamedTensor>& outs, std::initializer_list<const char*> names, int64_t rank) {
  for (const char* n : names)
    for (const auto& o : outs)
      if (o.name == n && o.tensor.rank() == rank) return &o;
  for (const auto& o : outs)
    if (o.tensor.rank() == rank && o.tensor.dtype() == DataType::kFloat32) return &o;
  return nullptr;
}

template <class Fn>
Status for_each_batch(const Pipeline::Impl& p, const std::vector<PipelineInput>& inputs, Fn&& fn) {
  for (size_t start = 0; start < inputs.size(); start += static_cast<size_t>(p.decisions.batch_size)) {
    const size_t end = std::min(inputs.size(), start + static_cast<size_t>(p.decisions.batch_size));
    std::vector<EncodedText> batch;
    for (size_t i = start; i < end; ++i) {
      GB_ASSIGN_OR_RETURN(EncodedText e, encode_one(p, inputs[i], i));
      batch.push_back(std::move(e));
    }
    GB_RETURN_IF_ERROR(fn(batch));
  }
  return {};
}

// The one precedence for the session options a model directory may set: a flag > a session option
// that is not its default (serve's flags, a config file) > glassbox.json > the declared default.
// `from_json` reads glassbox.json's value (its errors get the file as their place); `show` prints the
// value in use for the derivation row.
template <typename T, typename FromJson, typename Show>
Result<Derivation> layered(const pipeline::ModelDirFiles& files, const char* field, const std::optional<T>& flag,
                           const std::string& flag_source, bool session_set, const char* default_source, T& target,
                           FromJson from_json, Show show) {
  Derivation row{field, "", ""};
  const auto& g = files.glassbox;
  if (flag) {
    target = *flag;
    row.source = flag_source;
  } else if (session_set) {
    row.source = std::string("session option ") + field;
  } else if (g.is_object() && g.contains(field) && !g[field].is_null()) {
    Result<T> v = from_json(g[field]);
    if (!v.ok()) return std::move(v).take_error().with_where(files.dir + "/glassbox.json");
    target = *v;
    row.source = "glassbox.json";
  } else {
    row.source = default_source;
  }
  row.value = show(target);
  return row;
}

// glassbox.json's `field` as a string (kInvalidModel with `fix` otherwise).
Result<std::string> json_string(const nlohmann::json& j, const char* field, const char* fix) {
  if (!j.is_string())
    return make_error(ErrorCode::kInvalidModel, std::string("field '") + field + "' must be a string, got " + j.dump(), "",
                      fix);
  return j.get<std::string>();
}

// precision: flag > a non-default session option (serve --precision, a config file) > glassbox.json > fp32.
Result<Derivation> derive_precision(const pipeline::ModelDirFiles& files, const PipelineOptions& options,
                                    SessionOptions& session_options) {
  auto from_json = [](const nlohmann::json& j) -> Result<Precision> {
    GB_ASSIGN_OR_RETURN(std::string text,
                        json_string(j, "precision", "use \"precision\": \"fp32\" | \"bf16\" | \"int8-dynamic\""));
    return parse_precision(text);
  };
  return layered(files, "precision", options.precision, options.precision_source,
                 options.session.precision != Precision::kFp32, "default: fp32 is the exported model's arithmetic",
                 session_options.precision, from_json, [](Precision p) { return std::string(precision_name(p)); });
}

// weights_cache: flag > a session option (serve's, a config file) > glassbox.json (a relative
// directory is relative to the model directory) > off.
Result<Derivation> derive_weights_cache(const pipeline::ModelDirFiles& files, const PipelineOptions& options,
                                        SessionOptions& session_options) {
  auto from_json = [&files](const nlohmann::json& j) -> Result<std::string> {
    if (!j.is_string() || j.get<std::string>().empty())
      return make_error(ErrorCode::kInvalidModel, "field 'weights_cache' must be a non-empty directory path, got " + j.dump(),
                        "", "use \"weights_cache\": \"DIR\" (relative to the model directory) or remove it");
    const std::filesystem::path dir(j.get<std::string>());
    return dir.is_absolute() ? dir.string() : (std::filesystem::path(files.dir) / dir).string();
  };
  return layered(files, "weights_cache", options.weights_cache, options.weights_cache_source,
                 !options.session.weights_cache.empty(), "default: off (the cache writes files where only you can choose)",
                 session_options.weights_cache, from_json,
                 [](const std::string& dir) { return dir.empty() ? std::string("off") : dir; });
}

// pool_wait: flag > a non-default session option (serve --pool-wait, a config file) >
// glassbox.json > auto.
Result<Derivation> derive_pool_wait(const pipeline::ModelDirFiles& files, const PipelineOptions& options,
                                    SessionOptions& session_options) {
  auto from_json = [](const nlohmann::json& j) -> Result<PoolWait> {
    GB_ASSIGN_OR_RETURN(std::string text, json_string(j, "pool_wait", "use \"pool_wait\": \"auto\" | \"spin\" | \"sleep\""));
    return parse_pool_wait(text);
  };
  return layered(files, "pool_wait", options.pool_wait, "flag --pool-wait",
                 options.session.pool_wait != SessionOptions{}.pool_wait,
                 "default: auto spins only while the machine has an idle core", session_options.pool_wait, from_json,
                 [](PoolWait w) { return std::string(pool_wait_name(w)); });
}

// unspecialized_symbols: a caller's session option > "*" (every symbolic input dim: one plan for every text length
// and batch size). A plan per shape made each new length pay graph specialization and an unplanned first run: 1.14x
// the warm time (median over 12 lengths, max 1.17x; BERT-base, 1 thread, bench/engine/first_seen_length.cpp), 1.02x
// with one plan (what is left: a oneDNN primitive per new row count, a memory plan outgrown by a longer text). No
// risk field: a row's risk marks a guess about the model, and this choice changes no result.
Derivation derive_unspecialized(const PipelineOptions& options, SessionOptions& session_options) {
  if (!options.session.unspecialized_symbols.empty())
    return {"unspecialized_symbols", pipeline::joined(options.session.unspecialized_symbols), "session option"};
  session_options.unspecialized_symbols = {"*"};
  return {"unspecialized_symbols", "*",
          "default: every symbolic input dim: one plan serves every text length and batch size (a plan per shape cost "
          "a new length 1.14x its warm time: specialization and an unplanned first run; the session option's risk: "
          "the memory plan grows by doubling)"};
}

}  // namespace

Pipeline::Pipeline(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;
Pipeline::~Pipeline() = default;

const PipelineDecisions& Pipeline::decisions() const { return impl_->decisions; }
const std::vector<Derivation>& Pipeline::derivations() const { return impl_->derivations; }
const Session& Pipeline::session() const { return impl_->session; }
const Tokenizer& Pipeline::tokenizer() const { return impl_->tokenizer; }

Result<Pipeline> Pipeline::load(const std::string& model_dir, const PipelineOptions& options) {
  GB_ASSIGN_OR_RETURN(auto files, pipeline::read_model_dir(model_dir, options.model_file));
  auto tok = Tokenizer::from_file(files.tokenizer_path);
  if (!tok.ok()) return std::move(tok).take_error().with_where(files.tokenizer_path);
  SessionOptions session_options = options.session;
  GB_ASSIGN_OR_RETURN(Derivation precision_row, derive_precision(files, options, session_options));
  GB_ASSIGN_OR_RETURN(Derivation cache_row, derive_weights_cache(files, options, session_options));
  GB_ASSIGN_OR_RETURN(Derivation wait_row, derive_pool_wait(files, options, session_options));
  Derivation plans_row = derive_unspecialized(options, session_options);
  auto session = Session::load(files.model_path, session_options);
  if (!session.ok()) return std::move(session).take_error();
  std::vector<Derivation> derivations;
  GB_ASSIGN_OR_RETURN(auto decisions,
                      pipeline::derive_decisions(files, options, session->outputs(), *tok, derivations));
  GB_ASSIGN_OR_RETURN(auto heads, pipeline::derive_heads(files, session->outputs(), *tok, decisions, derivations));
  derivations.push_back(std::move(precision_row));
  derivations.push_back(std::move(cache_row));
  derivations.push_back(std::move(wait_row));
  derivations.push_back(std::move(plans_row));
  // The tokenizer must not produce ids the model's embedding table does not have.
  const int64_t rows = session->embedding_rows("input_ids");
  if (rows > 0) {
    const int64_t last = static_cast<int64_t>(tok->vocab_size()) + 1024;  // added tokens may sit above the vocabulary
    for (int64_t id = rows; id < last; ++id)
      if (tok->id_to_token(static_cast<uint32_t>(id)))
        return make_error(ErrorCode::kInvalidModel,
                          "tokenizer can produce id " + std::to_string(id) + " but the model's embedding table has " +
                              std::to_string(rows) + " rows",
                          model_dir, "use the tokenizer.json the model was trained with");
  }
  const bool unpad_declared = files.glassbox.is_object() && files.glassbox.contains("unpadded_batches") &&
                              !files.glassbox["unpadded_batches"].is_null();
  auto impl = std::make_unique<Impl>(Impl{std::move(files), std::move(tok).value(), std::move(session).value(),
                                          std::move(decisions), std::move(derivations), std::move(heads)});
  if (impl->decisions.multi_vector || impl->heads) {  // whatever glassbox.json says: see run_batch
    impl->decisions.unpadded_batches = false;
    auto& rows = impl->derivations;  // a glassbox.json declaration gives way: the row says why
    rows.erase(std::remove_if(rows.begin(), rows.end(), [](const Derivation& r) { return r.field == "unpadded_batches"; }), rows.end());
    impl->derivations.push_back({"unpadded_batches", "false",
                                 impl->heads ? "declared heads: outputs of other shapes than [batch, sequence, ...] (a pooled "
                                               "dense head, a shifted multi-vector head) are read from one padded run"
                                             : "multi-vector head: a query's expansion positions (attention 0) are outputs, "
                                               "so batches run padded"});
  } else if (!unpad_declared) {
    bool on = false;
    GB_ASSIGN_OR_RETURN(std::string why, probe_unpadded(*impl, on));
    impl->decisions.unpadded_batches = on;
    impl->derivations.push_back({"unpadded_batches", on ? "true" : "false", why});
  }
  return Pipeline(std::move(impl));
}

Result<EncodedText> Pipeline::encode(const PipelineInput& input, size_t index) const { return encode_one(*impl_, input, index); }

Result<std::vector<EncodedText>> Pipeline::encode_windows(const PipelineInput& input, size_t index) const {
  std::vector<EncodedText> rest;
  GB_ASSIGN_OR_RETURN(EncodedText first, encode_one(*impl_, input, index, &rest));
  std::vector<EncodedText> out;
  out.reserve(rest.size() + 1);
  out.push_back(std::move(first));
  for (auto& w : rest) out.push_back(std::move(w));
  return out;
}

namespace {

Status check_task(const Pipeline::Impl& p, PipelineTask want) {
  if (p.decisions.task == want) return {};
  if (want == PipelineTask::kClassify)
    return make_error(ErrorCode::kInvalidArgument, "this model directory is an embedding model", p.files.dir, "use `glassbox embed`");
  return make_error(ErrorCode::kInvalidArgument, "this model directory is a classification model", p.files.dir,
                    "use `glassbox classify`");
}

// decisions().score_function over one row of logits (NaN stays NaN: the run reports it).
std::vector<double> apply_score_function(ScoreFunction f, const std::vector<float>& row) {
  std::vector<double> out(row.begin(), row.end());
  if (f == ScoreFunction::kSigmoid) {
    for (double& x : out) x = 1.0 / (1.0 + std::exp(-x));
  } else if (f == ScoreFunction::kSoftmax && !out.empty()) {
    const double mx = *std::max_element(out.begin(), out.end());
    double sum = 0;
    for (double& x : out) sum += x = std::exp(x - mx);
    for (double& x : out) x /= sum;
  }
  return out;
}

Result<std::vector<Classification>> classify_outputs(const Pipeline::Impl& p, const std::vector<EncodedText>& batch,
                                                     const std::vector<NamedTensor>& outs, int top_k) {
  const auto& labels = p.decisions.labels;
  const NamedTensor* logits = pick_output(outs, {"logits"}, 2);
  if (!logits || logits->tensor.shape()[0] != static_cast<int64_t>(batch.size()))
    return make_error(ErrorCode::kInvalidModel, "model has no [batch, labels] float output", p.files.model_path);
  const int64_t n = logits->tensor.shape()[1];
  if (n != static_cast<int64_t>(labels.size()))
    return make_error(ErrorCode::kInvalidModel,
                      "model gives " + std::to_string(n) + " logits but " + std::to_string(labels.size()) + " labels are declared",
                      p.files.dir);
  std::vector<Classification> results;
  for (size_t r = 0; r < batch.size(); ++r) {
    const float* row = logits->tensor.data<float>() + r * n;
    Classification c;
    c.logits.assign(row, row + n);
    const std::vector<double> scores = apply_score_function(p.decisions.score_function, c.logits);
    for (int64_t i = 0; i < n; ++i) c.labels.push_back({labels[i], static_cast<float>(scores[i])});
    std::stable_sort(c.labels.begin(), c.labels.end(), [](const LabelScore& a, const LabelScore& b) { return a.score > b.score; });
    // A NaN top score is not "below": it stays a non-finite result the run reports.
    c.abstained = p.decisions.abstain_below && !c.labels.empty() && c.labels.front().score < *p.decisions.abstain_below;
    c.labels.resize(std::min<size_t>(c.labels.size(), static_cast<size_t>(std::max(1, top_k))));
    c.tokens = static_cast<int64_t>(batch[r].encoding.size());
    c.tokens_dropped = batch[r].tokens_dropped;
    results.push_back(std::move(c));
  }
  return results;
}

// The sparse head (decisions().sparse) over the model's [batch, sequence, vocabulary] logits.
Result<std::vector<Embedding>> sparse_outputs(const Pipeline::Impl& p, const std::vector<EncodedText>& batch,
                                              const std::vector<NamedTensor>& outs, const EmbedOptions& options) {
  if (options.dimensions || options.normalize.value_or(false))
    return make_error(ErrorCode::kInvalidArgument, options.dimensions ? "dimensions" : "normalize", p.files.dir,
                      "this model gives sparse vectors (a SPLADE head): they are neither truncated nor normalized");
  const NamedTensor* out = pick_output(outs, {"logits", "token_embeddings", "last_hidden_state"}, 3);
  if (!out || out->tensor.shape()[0] != static_cast<int64_t>(batch.size()))
    return make_error(ErrorCode::kInvalidModel, "model has no [batch, sequence, vocabulary] float output (MLM logits)",
                      p.files.model_path, "a sparse head reads the masked-language-model logits (output 'logits')");
  const int64_t seq = out->tensor.shape()[1], vocab = out->tensor.shape()[2];
  if (p.files.st.word_embedding_dimension > 0 && vocab != p.files.st.word_embedding_dimension)
    return make_error(ErrorCode::kInvalidModel,
                      "output '" + out->name + "' has " + std::to_string(vocab) + " values per token, SpladePooling declares " +
                          std::to_string(p.files.st.word_embedding_dimension),
                      p.files.dir, "the sentence-transformers files belong to another model");
  std::vector<Embedding> results(batch.size());
  for (size_t r = 0; r < batch.size(); ++r) {
    Embedding& e = results[r];
    pipeline::sparse_pool(out->tensor.data<float>() + static_cast<int64_t>(r) * seq * vocab, seq, vocab,
                          batch[r].encoding.attention_mask, *p.decisions.sparse, e.indices, e.vector);
    e.tokens = static_cast<int64_t>(batch[r].encoding.size());
    e.tokens_dropped = batch[r].tokens_dropped;
  }
  return results;
}

// The multi-vector head (decisions().multi_vector) over the model's [batch, sequence, hidden] token vectors.
Result<std::vector<Embedding>> multi_vector_outputs(const Pipeline::Impl& p, const std::vector<EncodedText>& batch,
                                                    const std::vector<NamedTensor>& outs, const EmbedOptions& options) {
  if (options.dimensions || (options.normalize && !*options.normalize))
    return make_error(ErrorCode::kInvalidArgument, options.dimensions ? "dimensions" : "normalize false", p.files.dir,
                      "this model gives one unit vector per token (ColBERT): they are neither truncated nor left unnormalized");
  const NamedTensor* out = pick_output(outs, {"last_hidden_state", "token_embeddings"}, 3);
  if (!out || out->tensor.shape()[0] != static_cast<int64_t>(batch.size()))
    return make_error(ErrorCode::kInvalidModel, "model has no [batch, sequence, hidden] float output", p.files.model_path,
                      "a multi-vector head reads the token vectors (last_hidden_state)");
  const int64_t seq = out->tensor.shape()[1], hidden = out->tensor.shape()[2];
  std::vector<Embedding> results(batch.size());
  for (size_t r = 0; r < batch.size(); ++r) {
    Embedding& e = results[r];
    GB_ASSIGN_OR_RETURN(e.vectors, pipeline::multi_vector_rows(*p.decisions.multi_vector,
                                                               out->tensor.data<float>() + static_cast<int64_t>(r) * seq * hidden,
                                                               seq, hidden, batch[r], e.vector));
    e.tokens = static_cast<int64_t>(batch[r].encoding.size());
    e.tokens_dropped = batch[r].tokens_dropped;
  }
  return results;
}

// A model with declared heads gives its dense head where one vector per text is asked for (/embed, similarity).
Result<std::vector<Embedding>> dense_head_outputs(const Pipeline::Impl& p, const std::vector<EncodedText>& batch,
                                                  const std::vector<NamedTensor>& outs, const EmbedOptions& options) {
  if (!p.heads->dense)
    return make_error(ErrorCode::kInvalidArgument, "this model declares no dense head (glassbox.json heads)", p.files.dir,
                      "ask for its declared heads (glassbox embed, /embed_sparse, /embed_multi, embed_heads)");
  if (options.dimensions || options.normalize)
    return make_error(ErrorCode::kInvalidArgument, options.dimensions ? "dimensions" : "normalize", p.files.dir,
                      "a declared dense head is given as glassbox.json heads.dense declares it");
  GB_ASSIGN_OR_RETURN(auto all, pipeline::read_heads(EmbeddingHeads{p.heads->dense, std::nullopt, std::nullopt}, batch, outs,
                                                     p.files.model_path));
  std::vector<Embedding> results;
  for (auto& h : all) results.push_back(std::move(*h.dense));
  return results;
}

Result<std::vector<Embedding>> embed_outputs(const Pipeline::Impl& p, const std::vector<EncodedText>& batch,
                                             const std::vector<NamedTensor>& outs, const EmbedOptions& options) {
  const auto& dec = p.decisions;
  if (p.heads) return dense_head_outputs(p, batch, outs, options);
  if (dec.sparse) return sparse_outputs(p, batch, outs, options);
  if (dec.multi_vector) return multi_vector_outputs(p, batch, outs, options);
  const bool pooled = dec.pooling == Pooling::kNone;
  const NamedTensor* out = pooled ? pick_output(outs, {"sentence_embedding", "pooler_output"}, 2)
                                  : pick_output(outs, {"last_hidden_state", "token_embeddings"}, 3);
  if (!out || out->tensor.shape()[0] != static_cast<int64_t>(batch.size()))
    return make_error(ErrorCode::kInvalidModel,
                      pooled ? "model has no [batch, hidden] float output" : "model has no [batch, sequence, hidden] float output",
                      p.files.model_path, "set \"pooling\" in glassbox.json to match the model's outputs");
  const auto& shape = out->tensor.shape();
  const int64_t hidden = shape.back(), seq = pooled ? 1 : shape[1];
  if (p.files.st.has_modules && !pooled && hidden != p.files.st.word_embedding_dimension)
    return make_error(ErrorCode::kInvalidModel,
                      "output '" + out->name + "' has " + std::to_string(hidden) + " values per token, the Pooling module declares " +
                          std::to_string(p.files.st.word_embedding_dimension),
                      p.files.dir, "the sentence-transformers files belong to another model");
  const bool normalize = options.normalize.value_or(dec.normalize);
  std::vector<Embedding> results;
  for (size_t r = 0; r < batch.size(); ++r) {
    Embedding e;
    const float* base = out->tensor.data<float>() + r * seq * hidden;
    const int64_t skip = dec.include_prompt ? 0 : batch[r].prompt_tokens;
    pipeline::pool_tokens(base, seq, hidden, batch[r].encoding.attention_mask, skip, dec.pooling_modes, e.vector);
    for (const auto& layer : dec.dense) {
      if (static_cast<int64_t>(e.vector.size()) != layer.in)
        return make_error(ErrorCode::kInvalidModel,
                          "Dense module " + layer.dir + " takes " + std::to_string(layer.in) + " values, pooling gives " +
                              std::to_string(e.vector.size()),
                          p.files.dir, "the pooling declared in glassbox.json does not fit the model's Dense module");
      pipeline::apply_dense(layer, e.vector);
    }
    if (options.dimensions) {  // Matryoshka: truncate first, then normalize
      const int64_t n = *options.dimensions;
      if (n <= 0 || n > static_cast<int64_t>(e.vector.size()))
        return make_error(ErrorCode::kInvalidArgument,
                          "dimensions " + std::to_string(n) + " is outside 1.." + std::to_string(e.vector.size()),
                          "input " + std::to_string(r), "ask for at most the model's embedding size");
      e.vector.resize(static_cast<size_t>(n));
    }
    if (normalize) pipeline::l2_normalize(e.vector);
    e.tokens = static_cast<int64_t>(batch[r].encoding.size());
    e.tokens_dropped = batch[r].tokens_dropped;
    results.push_back(std::move(e));
  }
  return results;
}

}  // namespace

Result<std::vector<Classification>> Pipeline::classify_encoded(const std::vector<EncodedText>& batch, int top_k,
                                                               BatchStats* stats) const {
  GB_RETURN_IF_ERROR(check_task(*impl_, PipelineTask::kClassify));
  GB_ASSIGN_OR_RETURN(auto outs, run_batch(*impl_, batch, stats));
  return classify_outputs(*impl_, batch, outs, top_k);
}

Result<std::vector<Embedding>> Pipeline::embed_encoded(const std::vector<EncodedText>& batch, std::optional<bool> normalize,
                                                       BatchStats* stats) const {
  return embed_encoded(batch, EmbedOptions{normalize, std::nullopt}, stats);
}

Result<std::vector<Embedding>> Pipeline::embed_encoded(const std::vector<EncodedText>& batch, const EmbedOptions& options,
                                                       BatchStats* stats) const {
  GB_RETURN_IF_ERROR(check_task(*impl_, PipelineTask::kEmbed));
  GB_ASSIGN_OR_RETURN(auto outs, run_batch(*impl_, batch, stats));
  return embed_outputs(*impl_, batch, outs, options);
}

Result<std::vector<Embedding>> Pipeline::embed_tokens_encoded(const std::vector<EncodedText>& batch, BatchStats* stats) const {
  GB_RETURN_IF_ERROR(check_task(*impl_, PipelineTask::kEmbed));
  if (impl_->heads)  // its per-token outputs are heads (a sparse weight, projected vectors), not a hidden state
    return make_error(ErrorCode::kInvalidArgument, "this model declares heads (glassbox.json \"heads\"): it gives no token vectors",
                      impl_->files.dir, "its per-token head is multi_vector (glassbox embed --heads multi_vector, /embed_multi)");
  GB_ASSIGN_OR_RETURN(auto outs, run_batch(*impl_, batch, stats));
  const NamedTensor* out = pick_output(outs, {"last_hidden_state", "token_embeddings"}, 3);
  if (!out || out->tensor.shape()[0] != static_cast<int64_t>(batch.size()))
    return make_error(ErrorCode::kInvalidModel, "model has no [batch, sequence, hidden] float output: no token vectors to give",
                      impl_->files.model_path, "token vectors need a model whose output is per token (last_hidden_state)");
  const int64_t seq = out->tensor.shape()[1], hidden = out->tensor.shape()[2];
  std::vector<Embedding> results;
  for (size_t r = 0; r < batch.size(); ++r) {
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(batch[r].encoding.size()), seq);
    const float* base = out->tensor.data<float>() + static_cast<int64_t>(r) * seq * hidden;
    Embedding e;
    e.vector.assign(base, base + n * hidden);
    e.tokens = n;
    e.tokens_dropped = batch[r].tokens_dropped;
    results.push_back(std::move(e));
  }
  return results;
}

const EmbeddingHeads* embedding_heads(const Pipeline& pipeline) {
  return pipeline.impl().heads ? &*pipeline.impl().heads : nullptr;
}

Result<std::vector<HeadEmbeddings>> embed_heads_encoded(const Pipeline& pipeline, const std::vector<EncodedText>& batch,
                                                        BatchStats* stats) {
  const Pipeline::Impl& p = pipeline.impl();
  if (!p.heads)
    return make_error(ErrorCode::kInvalidArgument, "this model directory declares no heads", p.files.dir,
                      "declare glassbox.json \"heads\" for a model whose graph gives several embeddings; otherwise use embed");
  GB_ASSIGN_OR_RETURN(auto outs, run_batch(p, batch, stats));
  return pipeline::read_heads(*p.heads, batch, outs, p.files.model_path);
}

Result<std::vector<HeadEmbeddings>> embed_heads(const Pipeline& pipeline, const std::vector<PipelineInput>& inputs) {
  std::vector<HeadEmbeddings> results;
  Status st = for_each_batch(pipeline.impl(), inputs, [&](const std::vector<EncodedText>& batch) -> Status {
    GB_ASSIGN_OR_RETURN(auto part, embed_heads_encoded(pipeline, batch));
    results.insert(results.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    return {};
  });
  if (!st.ok()) return std::move(st).take_error();
  return results;
}

Result<std::vector<Classification>> Pipeline::classify(const std::vector<PipelineInput>& inputs, int top_k) const {
  GB_RETURN_IF_ERROR(check_task(*impl_, PipelineTask::kClassify));
  std::vector<Classification> results;
  Status st = for_each_batch(*impl_, inputs, [&](const std::vector<EncodedText>& batch) -> Status {
    GB_ASSIGN_OR_RETURN(auto part, classify_encoded(batch, top_k));
    results.insert(results.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    return {};
  });
  if (!st.ok()) return std::move(st).take_error();
  return results;
}

Result<std::vector<Embedding>> Pipeline::embed(const std::vector<PipelineInput>& inputs, std::optional<bool> normalize) const {
  return embed(inputs, EmbedOptions{normalize, std::nullopt});
}

Result<std::vector<Embedding>> Pipeline::embed(const std::vector<PipelineInput>& inputs, const EmbedOptions& options) const {
  GB_RETURN_IF_ERROR(check_task(*impl_, PipelineTask::kEmbed));
  std::vector<Embedding> results;
  Status st = for_each_batch(*impl_, inputs, [&](const std::vector<EncodedText>& batch) -> Status {
    GB_ASSIGN_OR_RETURN(auto part, embed_encoded(batch, options));
    results.insert(results.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    return {};
  });
  if (!st.ok()) return std::move(st).take_error();
  return results;
}

}  // namespace glassbox
