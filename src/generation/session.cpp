// GenerationSession: admission (policy, context and KV budget checks), the batched engine run of
// prefill and decode steps, and per-sequence state (KV cache, sampler, text stream, timings).
#include <algorithm>
#include <chrono>
#include <map>

#include "generation/decoder_layout.h"
#include "generation/policy.h"
#include "generation/sampler.h"
#include "generation/text_stream.h"
#include "glassbox/generation.h"

namespace glassbox {

using generation::DecoderLayout;
using generation::Rng;
using generation::TextStream;
using Clock = std::chrono::steady_clock;

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::kNone: return "";
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kError: return "error";
  }
  return "";
}

namespace {

double ms_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

// One sequence in flight. Its KV cache is one buffer of `capacity` tokens, laid out per layer and
// K/V as [kv_heads, capacity, head_dim]: each head's valid prefix is contiguous.
struct Sequence {
  SequenceId id = 0;
  GenerationPolicy policy;
  std::vector<uint32_t> prompt;
  std::vector<uint32_t> generated;
  std::vector<uint32_t> context;  // prompt + generated: what the repetition penalty sees
  int64_t capacity = 0;
  int64_t length = 0;             // tokens whose K/V are in the cache
  std::vector<float> kv;
  Rng rng;
  std::optional<TextStream> stream;
  std::string text;
  FinishReason finish = FinishReason::kNone;
  std::optional<uint32_t> stop_token;
  std::string error;
  bool non_finite_logits = false;  // error: a logits row held NaN or Inf
  int64_t steps = 0;              // logits rows consumed (0 = the prefill's)
  Clock::time_point admitted, first_token, finished_at;

  bool prefilled() const { return length >= static_cast<int64_t>(prompt.size()); }
  bool steppable() const { return finish == FinishReason::kNone && prefilled(); }
};

}  // namespace

struct GenerationSession::Impl {
  generation::ModelFiles files;
  GenerationOptions options;
  Session session;
  Tokenizer tokenizer;
  DecoderLayout layout;
  generation::PolicyBase base;
  std::map<SequenceId, std::unique_ptr<Sequence>> seqs;
  SequenceId next_id = 1;
  int64_t reserved = 0;
  LogitsObserver observer;
  bool kv_in_place = false;  // the session binds each sequence's cache to its runs (Session::run_bound)

  Impl(generation::ModelFiles f, GenerationOptions o, Session s, Tokenizer t)
      : files(std::move(f)), options(std::move(o)), session(std::move(s)), tokenizer(std::move(t)) {}

  int64_t token_floats() const { return layout.info.kv_heads * layout.info.head_dim; }

  Result<std::unique_ptr<Sequence>> admit(const SequenceInput& in, size_t index);
  // chunk > 0: each row's next <= chunk prompt tokens (prefill); 0: each row's last token (step).
  Status run_rows(const std::vector<Sequence*>& rows, int64_t chunk, std::vector<StepEvent>* events);
  Result<Tensor> past_feed(const std::vector<Sequence*>& rows, size_t c, int64_t P) const;
  // In place: the caches bound to the run (one per past input) and the run itself.
  Result<std::vector<NamedTensor>> run_in_place(const std::vector<Sequence*>& rows, const std::vector<int64_t>& fresh,
                                                std::vector<NamedTensor>& feeds, int64_t P);
  // One run over rows with position_ids, else one run per row (see prefill_chunk).
  Status run_batched(const std::vector<Sequence*>& rows, int64_t chunk, std::vector<StepEvent>* events);
  void accept(Sequence& s, const float* logits_row, std::vector<StepEvent>* events);
  void finish(Sequence& s, FinishReason why, StepEvent& ev);
};

namespace {

std::string n(int64_t v) { return std::to_string(v); }

template <class T>
void fill_ids(Tensor& t, int64_t i, int64_t v) {
  t.mutable_data<T>()[i] = static_cast<T>(v);
}

void set_int(Tensor& t, int64_t i, int64_t v) {
  if (t.dtype() == DataType::kInt64) fill_ids<int64_t>(t, i, v);
  else fill_ids<int32_t>(t, i, v);
}

}  // namespace

Result<std::unique_ptr<Sequence>> GenerationSession::Impl::admit(const SequenceInput& in, size_t index) {
  const std::string where = "sequence " + n(static_cast<int64_t>(index));
  auto s = std::make_unique<Sequence>();
  s->admitted = Clock::now();
  GB_ASSIGN_OR_RETURN(s->policy, generation::apply_request(base.policy, in.request, layout.info.vocab_size));
  GenerationPolicy& p = s->policy;
  if (in.prompt_ids) {
    s->prompt = *in.prompt_ids;
  } else {
    EncodeOptions eo;
    eo.add_special_tokens = p.add_special_tokens.value;
    eo.truncation_from_file = false;  // a prompt is never cut silently: the context check below refuses it
    eo.padding_from_file = false;
    auto enc = tokenizer.encode(in.prompt, std::nullopt, eo);
    if (!enc.ok()) return std::move(enc).take_error().with_where(where);
    s->prompt = enc->ids;
  }
  if (s->prompt.empty())
    return make_error(ErrorCode::kInvalidArgument, "the prompt is empty (0 tokens): there is nothing to continue", where,
                      "give a non-empty prompt");
  for (uint32_t id : s->prompt)
    if (static_cast<int64_t>(id) >= layout.info.vocab_size)
      return make_error(ErrorCode::kInvalidArgument, "prompt token " + n(id) + " is outside the vocabulary (" +
                        n(layout.info.vocab_size) + ")", where);
  const int64_t prompt = static_cast<int64_t>(s->prompt.size());
  const int64_t ctx = p.max_context.value;
  if (p.max_new_tokens.source == generation::kDefaultSource && prompt + p.max_new_tokens.value > ctx && prompt < ctx) {
    p.max_new_tokens = {ctx - prompt, std::string(generation::kDefaultSource) + " (" + n(generation::kDefaultMaxNewTokens) +
                                          ", capped at max_context " + n(ctx) + " - prompt " + n(prompt) + ")"};
  }
  if (prompt + p.max_new_tokens.value > ctx)
    return make_error(ErrorCode::kLimitExceeded,
                      "prompt " + n(prompt) + " tokens + max_new_tokens " + n(p.max_new_tokens.value) + " (" +
                          p.max_new_tokens.source + ") = " + n(prompt + p.max_new_tokens.value) + " > max_context " +
                          n(ctx) + " (" + p.max_context.source + ")",
                      where, "shorten the prompt, lower max_new_tokens, or raise max_context if the model allows it");
  s->capacity = p.max_new_tokens.value == 0 ? 0 : prompt + p.max_new_tokens.value;
  s->context = s->prompt;
  s->rng = Rng(p.seed.value);
  s->stream.emplace(&tokenizer, p.skip_special_tokens.value, p.stop_strings.value);
  return s;
}

namespace {

// The symbols of the dims that grow at every decode step: the past key/values' sequence dim and
// attention_mask's length (SessionOptions::unspecialized_symbols: one plan serves every past length).
std::vector<std::string> past_length_symbols(const std::vector<TensorSpec>& inputs, const generation::DecoderLayout& layout) {
  std::vector<std::string> symbols;
  auto add = [&](const std::string& input, size_t dim) {
    for (const auto& spec : inputs)
      if (spec.name == input && dim < spec.symbols.size() && !spec.symbols[dim].empty() &&
          std::find(symbols.begin(), symbols.end(), spec.symbols[dim]) == symbols.end())
        symbols.push_back(spec.symbols[dim]);
  };
  for (const auto& name : layout.past_names) add(name, 2);
  add("attention_mask", 1);
  return symbols;
}

}  // namespace

Result<GenerationSession> GenerationSession::load(const std::string& model_dir, const GenerationOptions& options) {
  if (options.prefill_chunk_tokens < 1)
    return make_error(ErrorCode::kInvalidArgument,
                      "prefill_chunk_tokens is " + n(options.prefill_chunk_tokens) + ": a prefill run must feed at least 1 prompt token",
                      "option prefill_chunk_tokens (--prefill-chunk-tokens)", "give a positive number of tokens (default 256)");
  GB_ASSIGN_OR_RETURN(auto files, generation::read_model_files(model_dir));
  SessionOptions so = options.session;
  // Sampling reads each sequence's last position: the LM head runs on that row only (the pass keeps every
  // position, and logs why, for a head it does not recognise; run_rows reads either shape).
  if (std::find(so.last_position_outputs.begin(), so.last_position_outputs.end(), "logits") == so.last_position_outputs.end())
    so.last_position_outputs.push_back("logits");
  if (options.precision) {
    so.precision = *options.precision;
  } else if (files.glassbox.is_object() && files.glassbox.contains("precision") && files.glassbox["precision"].is_string()) {
    auto pr = parse_precision(files.glassbox["precision"].get<std::string>());
    if (!pr.ok()) return std::move(pr).take_error().with_where(model_dir + "/glassbox.json precision");
    so.precision = *pr;
  }
  auto session = Session::load(files.model_path, so);
  if (!session.ok()) return std::move(session).take_error().with_where(files.model_path);
  auto tok = Tokenizer::from_file(files.tokenizer_path);
  if (!tok.ok()) return std::move(tok).take_error().with_where(files.tokenizer_path);
  int64_t config_vocab = files.config.is_object() && files.config.contains("vocab_size") && files.config["vocab_size"].is_number_integer()
                             ? files.config["vocab_size"].get<int64_t>() : 0;
  if (files.genai && config_vocab == 0) config_vocab = files.genai->vocab_size;
  auto layout = generation::recognise_layout(session->inputs(), session->outputs(), config_vocab);
  if (!layout.ok()) return std::move(layout).take_error().with_where(files.model_path);
  if (files.genai) {
    layout->info.model_path = files.model_path;
    GB_RETURN_IF_ERROR(generation::check_genai_sizes(*files.genai, layout->info));
    layout->info.layout = "onnxruntime-genai (genai_config.json)";
    layout->info.genai_config = files.genai->fields;
  }
  // The Optimum layout's Concat(past, new) -> present and onnxruntime-genai's GroupQueryAttention feed the
  // attention directly (the legacy merged If is first replaced by its cache branch: cache_branch_inlining): the session binds each sequence's cache to its runs instead of copying the past in and the
  // present out (kv_cache_binding). The session is loaded again with its past inputs named; when the pass cannot
  // bind them (its log says why) the cache is copied as before.
  so.unspecialized_symbols = past_length_symbols(session->inputs(), *layout);
  if (so.opt_level >= 2) {
    so.kv_cache_inputs = layout->past_names;
    session = Session::load(files.model_path, so);
    if (!session.ok()) return std::move(session).take_error().with_where(files.model_path);
  } else {
    session->set_unspecialized_symbols(so.unspecialized_symbols);
  }
  auto impl = std::make_unique<Impl>(std::move(files), options, std::move(session).value(), std::move(tok).value());
  impl->layout = std::move(layout).value();
  impl->kv_in_place = impl->session.kv_cache_bound();
  impl->layout.info.model_path = impl->files.model_path;
  auto base = generation::derive_policy(impl->files, impl->tokenizer, impl->layout.info.vocab_size, options);
  if (!base.ok()) return std::move(base).take_error().with_where(model_dir);
  impl->base = std::move(base).value();
  return GenerationSession(std::move(impl));
}

// One engine run over `rows`: each row feeds its next prompt chunk (prefill) or its last token
// (step) after its cached past. Rows are left-padded to the longest past and the longest new part, with
// attention_mask 0 and position_ids 1 on padding (Hugging Face's convention), so sequences of
// different lengths share one run. The new tokens' K/V are copied from present.* into each
// sequence's cache, unless the run appended them in place (kv_in_place: run_in_place).
Status GenerationSession::Impl::run_rows(const std::vector<Sequence*>& rows, int64_t chunk, std::vector<StepEvent>* events) {
  const bool prefill = chunk > 0;
  const auto& info = layout.info;
  const int64_t B = static_cast<int64_t>(rows.size());
  int64_t S = 0, P = 0;
  std::vector<int64_t> fresh(B);
  for (int64_t b = 0; b < B; ++b) {
    fresh[b] = prefill ? std::min(chunk, static_cast<int64_t>(rows[b]->prompt.size()) - rows[b]->length) : 1;
    if (rows[b]->length + fresh[b] > rows[b]->capacity)  // admission sized it: a bug if ever hit
      return make_error(ErrorCode::kInternal, "sequence " + n(rows[b]->id) + " would exceed its KV capacity of " +
                        n(rows[b]->capacity) + " tokens");
    S = std::max(S, fresh[b]);
    P = std::max(P, rows[b]->length);
  }
  const int64_t T = P + S, H = info.kv_heads, D = info.head_dim;
  GB_ASSIGN_OR_RETURN(Tensor ids, Tensor::allocate(layout.ids_dtype, {B, S}));
  GB_ASSIGN_OR_RETURN(Tensor mask, Tensor::allocate(layout.mask_dtype, {B, T}));
  GB_ASSIGN_OR_RETURN(Tensor pos, Tensor::allocate(layout.ids_dtype, {B, S}));
  for (int64_t b = 0; b < B; ++b) {
    const Sequence& s = *rows[b];
    for (int64_t t = 0; t < T; ++t) set_int(mask, b * T + t, (t >= P - s.length && t < P) || t >= T - fresh[b] ? 1 : 0);
    for (int64_t j = 0; j < S; ++j) {
      const int64_t k = j - (S - fresh[b]);  // index into this row's new tokens; < 0 on padding
      const uint32_t id = k < 0 ? 0 : prefill ? s.prompt[s.length + k] : s.generated.back();
      set_int(ids, b * S + j, id);
      set_int(pos, b * S + j, k < 0 ? 1 : s.length + k);
    }
  }
  std::vector<NamedTensor> feeds;
  feeds.push_back({"input_ids", std::move(ids)});
  feeds.push_back({"attention_mask", std::move(mask)});
  if (info.has_position_ids) feeds.push_back({"position_ids", std::move(pos)});
  if (layout.use_cache_branch) {  // legacy merged If: the no-cache branch when there is no past yet
    GB_ASSIGN_OR_RETURN(Tensor branch, Tensor::allocate(DataType::kBool, {1}));
    branch.mutable_data<bool>()[0] = P > 0;
    feeds.push_back({"use_cache_branch", std::move(branch)});
  }
  std::vector<NamedTensor> outs;
  if (kv_in_place) {
    GB_ASSIGN_OR_RETURN(outs, run_in_place(rows, fresh, feeds, P));
  } else {
    for (size_t c = 0; c < layout.past_names.size(); ++c) {
      GB_ASSIGN_OR_RETURN(Tensor past, past_feed(rows, c, P));
      feeds.push_back({layout.past_names[c], std::move(past)});
    }
    GB_ASSIGN_OR_RETURN(outs, session.run(feeds));
  }
  const Tensor* logits = nullptr;
  for (const auto& o : outs)
    if (o.name == "logits") logits = &o.tensor;
  const int64_t V = info.vocab_size;
  // [B, S, V], or [B, 1, V] when the LM head ran on the last position only (SessionOptions::last_position_outputs).
  const int64_t L = logits && logits->shape().size() == 3 && logits->shape()[1] == 1 ? 1 : S;
  if (!logits || logits->shape() != Shape{B, L, V})
    return make_error(ErrorCode::kInvalidModel, "output 'logits' is missing or not [" + n(B) + ", " + n(S) + " or 1, " + n(V) +
                      "] (batch, new tokens or the last one, vocabulary)", info.model_path);
  for (size_t c = 0; c < layout.present_names.size() && !kv_in_place; ++c) {
    const Tensor* present = nullptr;
    for (const auto& o : outs)
      if (o.name == layout.present_names[c]) present = &o.tensor;
    if (!present || present->shape() != Shape{B, H, T, D})
      return make_error(ErrorCode::kInvalidModel, "output '" + layout.present_names[c] + "' is not [" + n(B) + ", " + n(H) +
                        ", " + n(T) + ", " + n(D) + "] (past + new tokens)", info.model_path);
    const float* src = present->data<float>();
    for (int64_t b = 0; b < B; ++b) {
      Sequence& s = *rows[b];
      for (int64_t h = 0; h < H; ++h)
        std::copy_n(src + ((b * H + h) * T + (T - fresh[b])) * D, fresh[b] * D,
                    s.kv.data() + ((static_cast<int64_t>(c) * H + h) * s.capacity + s.length) * D);
    }
  }
  for (int64_t b = 0; b < B; ++b) {
    rows[b]->length += fresh[b];
    if (rows[b]->prefilled()) accept(*rows[b], logits->data<float>() + (b * L + L - 1) * V, events);
  }
  return Status();
}

// Cache c (a layer's K or V) of every row as one [B, kv_heads, P, head_dim] feed, each row's past left-padded to P.
// Not zero-filled first: every row's cached part is copied in and only its left padding (masked, but read by the
// attention product, so it must be finite) is zeroed.
Result<Tensor> GenerationSession::Impl::past_feed(const std::vector<Sequence*>& rows, size_t c, int64_t P) const {
  const int64_t B = static_cast<int64_t>(rows.size()), H = layout.info.kv_heads, D = layout.info.head_dim;
  GB_ASSIGN_OR_RETURN(Tensor past, Tensor::allocate_uninitialized(DataType::kFloat32, {B, H, P, D}));
  float* dst = past.mutable_data<float>();
  for (int64_t b = 0; b < B; ++b) {
    const Sequence& s = *rows[b];
    for (int64_t h = 0; h < H; ++h) {
      float* row = dst + (b * H + h) * P * D;
      std::fill_n(row, (P - s.length) * D, 0.0f);
      std::copy_n(s.kv.data() + (static_cast<int64_t>(c) * H + h) * s.capacity * D, s.length * D, row + (P - s.length) * D);
    }
  }
  return past;
}

// Each past input is fed as an uninitialized [B, kv_heads, P, head_dim] tensor (the run reads its shape only:
// kv_cache_binding) and bound to the rows' caches, which the run reads in place and appends the new positions to.
Result<std::vector<NamedTensor>> GenerationSession::Impl::run_in_place(const std::vector<Sequence*>& rows,
                                                                       const std::vector<int64_t>& fresh,
                                                                       std::vector<NamedTensor>& feeds, int64_t P) {
  const int64_t B = static_cast<int64_t>(rows.size()), H = layout.info.kv_heads, D = layout.info.head_dim;
  std::vector<KvCacheBinding> caches(layout.past_names.size());
  for (size_t c = 0; c < caches.size(); ++c) {
    GB_ASSIGN_OR_RETURN(Tensor shape_only, Tensor::allocate_uninitialized(DataType::kFloat32, {B, H, P, D}));
    feeds.push_back({layout.past_names[c], std::move(shape_only)});
    KvCacheBinding& k = caches[c];
    k.input = layout.past_names[c];
    for (Sequence* s : rows) {
      k.rows.push_back(s->kv.data() + static_cast<int64_t>(c) * H * s->capacity * D);
      k.capacities.push_back(s->capacity);
      k.lengths.push_back(s->length);
    }
    k.fresh = fresh;
  }
  return session.run_bound(feeds, caches);
}

Status GenerationSession::Impl::run_batched(const std::vector<Sequence*>& rows, int64_t chunk, std::vector<StepEvent>* events) {
  if (rows.empty()) return Status();
  if (layout.info.has_position_ids) return run_rows(rows, chunk, events);
  // Without position_ids the model derives positions itself, which padding would shift: one run per sequence.
  for (Sequence* r : rows) GB_RETURN_IF_ERROR(run_rows({r}, chunk, events));
  return Status();
}

void GenerationSession::Impl::finish(Sequence& s, FinishReason why, StepEvent& ev) {
  s.finish = why;
  s.finished_at = Clock::now();
  ev.finished = why;
}

// Chooses the sequence's next token from its logits row and applies the stop rules.
void GenerationSession::Impl::accept(Sequence& s, const float* logits_row, std::vector<StepEvent>* events) {
  StepEvent ev;
  ev.id = s.id;
  const int64_t V = layout.info.vocab_size;
  std::vector<float> row(logits_row, logits_row + V);
  if (observer) observer(s.id, s.steps, row);
  const int64_t step = s.steps++;
  if (auto bad = generation::count_non_finite(row); bad.any()) {
    s.non_finite_logits = true;
    s.error = "non-finite logits at step " + n(step) + " (" + (step == 0 ? "the prefill" : "decode") + "): " + n(bad.nan) +
              " NaN and " + n(bad.inf) + " Inf of " + n(V) + " values";
    finish(s, FinishReason::kError, ev);
    if (events) events->push_back(std::move(ev));
    return;
  }
  const uint32_t token = generation::choose_token(row, s.context, s.policy, s.rng);
  if (s.generated.empty()) s.first_token = Clock::now();
  s.generated.push_back(token);
  s.context.push_back(token);
  ev.token = token;
  const auto& stops = s.policy.stop_token_ids.value;
  if (std::find(stops.begin(), stops.end(), token) != stops.end()) {
    s.stop_token = token;
    ev.text = s.stream->finish();
    finish(s, FinishReason::kStop, ev);
  } else {
    auto piece = s.stream->push(token);
    if (!piece.ok()) {
      s.error = "step " + n(step) + ": " + piece.error().to_string();
      finish(s, FinishReason::kError, ev);
    } else {
      ev.text = std::move(piece).value();
      if (s.stream->stop_string()) {
        finish(s, FinishReason::kStop, ev);
      } else if (static_cast<int64_t>(s.generated.size()) >= s.policy.max_new_tokens.value) {
        ev.text += s.stream->finish();
        finish(s, FinishReason::kLength, ev);
      }
    }
  }
  s.text += ev.text;
  if (events) events->push_back(std::move(ev));
}

GenerationSession::GenerationSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GenerationSession::GenerationSession(GenerationSession&&) noexcept = default;
GenerationSession& GenerationSession::operator=(GenerationSession&&) noexcept = default;
GenerationSession::~GenerationSession() = default;

const DecoderInfo& GenerationSession::decoder() const { return impl_->layout.info; }
const Tokenizer& GenerationSession::tokenizer() const { return impl_->tokenizer; }
const Session& GenerationSession::session() const { return impl_->session; }
const std::vector<GenerationWarning>& GenerationSession::warnings() const { return impl_->base.warnings; }
const GenerationPolicy& GenerationSession::default_policy() const { return impl_->base.policy; }
int64_t GenerationSession::kv_budget_bytes() const { return impl_->options.kv_budget_bytes; }
int64_t GenerationSession::kv_reserved_bytes() const { return impl_->reserved; }
bool GenerationSession::kv_in_place() const { return impl_->kv_in_place; }
void GenerationSession::set_logits_observer(LogitsObserver observer) { impl_->observer = std::move(observer); }

Result<GenerationPolicy> GenerationSession::resolve(const GenerationRequest& request) const {
  return generation::apply_request(impl_->base.policy, request, impl_->layout.info.vocab_size);
}

Result<std::vector<SequenceId>> GenerationSession::admit(const std::vector<SequenceInput>& inputs, std::vector<StepEvent>* events) {
  Impl& m = *impl_;
  std::vector<std::unique_ptr<Sequence>> admitted;
  int64_t bytes = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    GB_ASSIGN_OR_RETURN(auto s, m.admit(inputs[i], i));
    bytes += s->capacity * m.layout.info.kv_bytes_per_token;
    admitted.push_back(std::move(s));
  }
  if (m.reserved + bytes > m.options.kv_budget_bytes)
    return make_error(ErrorCode::kLimitExceeded,
                      "KV cache budget: these sequences reserve " + n(bytes) + " bytes (" + n(m.layout.info.kv_bytes_per_token) +
                          " bytes/token x (prompt + max_new_tokens)), " + n(m.reserved) + " are reserved already, the budget is " +
                          n(m.options.kv_budget_bytes),
                      m.files.dir, "lower max_new_tokens, admit fewer sequences at once, or raise kv_budget_bytes");
  std::vector<SequenceId> ids;
  for (auto& s : admitted) {
    s->id = m.next_id++;
    s->kv.assign(static_cast<size_t>(s->capacity * m.layout.info.kv_bytes_per_token / sizeof(float)), 0.0f);
    ids.push_back(s->id);
    if (s->policy.max_new_tokens.value == 0) {
      StepEvent ev;
      ev.id = s->id;
      m.finish(*s, FinishReason::kLength, ev);
      if (events) events->push_back(ev);
    }
    m.reserved += s->capacity * m.layout.info.kv_bytes_per_token;
    m.seqs.emplace(s->id, std::move(s));
  }
  return ids;
}

Result<std::vector<StepEvent>> GenerationSession::prefill_chunk(std::span<const SequenceId> ids) {
  Impl& m = *impl_;
  std::vector<Sequence*> rows;
  if (ids.empty()) {
    for (auto& [id, s] : m.seqs)
      if (s->finish == FinishReason::kNone && !s->prefilled()) rows.push_back(s.get());
  } else {
    for (SequenceId id : ids) {
      auto it = m.seqs.find(id);
      if (it == m.seqs.end())
        return make_error(ErrorCode::kNotFound, "sequence " + n(id) + " is not in this session", {}, "use an id admit() returned");
      if (it->second->finish != FinishReason::kNone || it->second->prefilled())
        return make_error(ErrorCode::kInvalidArgument, "sequence " + n(id) + " is not prefilling (its whole prompt has run)", {},
                          "step() it instead");
      rows.push_back(it->second.get());
    }
  }
  std::vector<StepEvent> events;
  GB_RETURN_IF_ERROR(m.run_batched(rows, m.options.prefill_chunk_tokens, &events));
  return events;
}

Result<std::vector<SequenceId>> GenerationSession::prefill(const std::vector<SequenceInput>& inputs, std::vector<StepEvent>* events) {
  GB_ASSIGN_OR_RETURN(auto ids, admit(inputs, events));
  // Chunk after chunk until every prompt has run; a failed run admits nothing (all or none).
  for (bool more = true; more;) {
    std::vector<SequenceId> left;
    for (SequenceId id : ids)
      if (prefill_remaining(id) > 0) left.push_back(id);
    more = !left.empty();
    if (!more) break;
    auto evs = prefill_chunk(left);
    if (!evs.ok()) {
      for (SequenceId id : ids) cancel(id);
      return std::move(evs).take_error();
    }
    if (events) events->insert(events->end(), evs->begin(), evs->end());
  }
  return ids;
}

std::vector<SequenceId> GenerationSession::prefilling() const {
  std::vector<SequenceId> out;
  for (const auto& [id, s] : impl_->seqs)
    if (s->finish == FinishReason::kNone && !s->prefilled()) out.push_back(id);
  return out;
}

int64_t GenerationSession::prefill_remaining(SequenceId id) const {
  auto it = impl_->seqs.find(id);
  if (it == impl_->seqs.end() || it->second->finish != FinishReason::kNone) return 0;
  return static_cast<int64_t>(it->second->prompt.size()) - it->second->length;
}

int64_t GenerationSession::prefill_chunk_tokens() const { return impl_->options.prefill_chunk_tokens; }

Result<std::vector<StepEvent>> GenerationSession::step(std::span<const SequenceId> ids) {
  Impl& m = *impl_;
  std::vector<Sequence*> rows;
  if (ids.empty()) {
    for (auto& [id, s] : m.seqs)
      if (s->steppable()) rows.push_back(s.get());
  } else {
    for (SequenceId id : ids) {
      auto it = m.seqs.find(id);
      if (it == m.seqs.end())
        return make_error(ErrorCode::kNotFound, "sequence " + n(id) + " is not in this session", {}, "use an id prefill() returned");
      if (it->second->finish == FinishReason::kNone && !it->second->prefilled())
        return make_error(ErrorCode::kInvalidArgument, "sequence " + n(id) + " is still prefilling (" +
                          n(static_cast<int64_t>(it->second->prompt.size()) - it->second->length) + " prompt tokens left)",
                          {}, "run prefill_chunk() until its prompt has run");
      if (it->second->finish != FinishReason::kNone)
        return make_error(ErrorCode::kInvalidArgument, "sequence " + n(id) + " has finished (" +
                          finish_reason_name(it->second->finish) + ")", {}, "take its result with take_result()");
      rows.push_back(it->second.get());
    }
  }
  std::vector<StepEvent> events;
  GB_RETURN_IF_ERROR(m.run_batched(rows, 0, &events));
  return events;
}

std::vector<SequenceId> GenerationSession::active() const {
  std::vector<SequenceId> out;
  for (const auto& [id, s] : impl_->seqs)
    if (s->steppable()) out.push_back(id);
  return out;
}

Result<GenerationResult> GenerationSession::take_result(SequenceId id) {
  Impl& m = *impl_;
  auto it = m.seqs.find(id);
  if (it == m.seqs.end()) return make_error(ErrorCode::kNotFound, "sequence " + n(id) + " is not in this session");
  Sequence& s = *it->second;
  if (s.finish == FinishReason::kNone)
    return make_error(ErrorCode::kInvalidArgument, "sequence " + n(id) + " has not finished", {}, "step() it until it finishes, or cancel() it");
  GenerationResult r;
  r.text = std::move(s.text);
  r.prompt_ids = std::move(s.prompt);
  r.token_ids = std::move(s.generated);
  r.finish_reason = s.finish;
  r.stop_token = s.stop_token;
  r.stop_string = s.stream->stop_string();
  r.non_finite_logits = s.non_finite_logits;
  r.error = std::move(s.error);
  r.prompt_tokens = static_cast<int64_t>(r.prompt_ids.size());
  r.completion_tokens = static_cast<int64_t>(r.token_ids.size());
  if (r.completion_tokens > 0) {
    r.ttft_ms = ms_between(s.admitted, s.first_token);
    if (r.completion_tokens > 1) r.per_token_ms = ms_between(s.first_token, s.finished_at) / static_cast<double>(r.completion_tokens - 1);
  }
  r.total_ms = ms_between(s.admitted, s.finished_at);
  r.kv_capacity_tokens = s.capacity;
  r.kv_reserved_bytes = s.capacity * m.layout.info.kv_bytes_per_token;
  r.policy = std::move(s.policy);
  m.reserved -= r.kv_reserved_bytes;
  m.seqs.erase(it);
  return r;
}

void GenerationSession::cancel(SequenceId id) {
  auto it = impl_->seqs.find(id);
  if (it == impl_->seqs.end()) return;
  impl_->reserved -= it->second->capacity * impl_->layout.info.kv_bytes_per_token;
  impl_->seqs.erase(it);
}

Result<GenerationResult> GenerationSession::generate(const SequenceInput& input,
                                                     const std::function<void(const std::string&)>& on_text) {
  std::vector<StepEvent> events;
  GB_ASSIGN_OR_RETURN(auto ids, prefill({input}, &events));
  const SequenceId id = ids.front();
  auto emit = [&](const std::vector<StepEvent>& evs) {
    for (const auto& e : evs)
      if (on_text && !e.text.empty()) on_text(e.text);
  };
  emit(events);
  auto done = [&](const std::vector<StepEvent>& evs) {
    return std::any_of(evs.begin(), evs.end(), [&](const StepEvent& e) { return e.id == id && e.finished != FinishReason::kNone; });
  };
  bool finished = done(events);
  while (!finished) {
    auto evs = step(std::span<const SequenceId>(&id, 1));
    if (!evs.ok()) {
      cancel(id);
      return std::move(evs).take_error();
    }
    emit(*evs);
    finished = done(*evs);
  }
  GB_ASSIGN_OR_RETURN(auto r, take_result(id));
  if (r.finish_reason == FinishReason::kError)
    return make_error(ErrorCode::kInvalidModel, r.error, impl_->layout.info.model_path,
                      "run `glassbox run --check-numerics` on this step's inputs to find the first node that produced it");
  return r;
}

}  // namespace glassbox
