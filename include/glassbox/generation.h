// Text generation with decoder LLMs, the glass-box way (docs/generation.md).
//
// A GenerationSession holds one decoder model directory (model.onnx or onnx/model.onnx in a
// recognised layout, tokenizer.json, config.json, optional generation_config.json and
// glassbox.json) and any number of sequences in flight. Each sequence's KV cache lives in a
// buffer sized when it is admitted (prompt + max_new_tokens tokens, never the whole context) and
// counted against a declared budget. prefill() admits sequences and runs their prompts as one
// engine run (in chunks of at most prefill_chunk_tokens, each one run after the past so far);
// step() advances every active sequence by one token in one engine run (sequences of different
// lengths batch through attention_mask / position_ids), so a server's scheduler can step many
// requests at once. admit() + prefill_chunk() expose the chunks: a scheduler runs decode steps of
// the others between two chunks of a long prompt. Every generation parameter is resolved with its source
// (request > glassbox.json > generation_config.json > config.json > glassbox default) and
// echoed with each result.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/session.h"
#include "glassbox/tokenizer.h"

namespace glassbox {

// A resolved value and where it came from: "request", "flag --top-k",
// "glassbox.json generation.top_k", "generation_config.json top_k", "config.json ...",
// "glassbox default".
template <class T>
struct Sourced {
  T value{};
  std::string source;
};

// Every parameter of one generation, each with its source (GenerationSession::resolve).
struct GenerationPolicy {
  Sourced<int64_t> max_new_tokens;       // tokens generated at most (the stop token counts)
  Sourced<bool> do_sample;               // false: greedy (argmax, first index on ties)
  Sourced<double> temperature;           // sampling only; logits / temperature
  Sourced<int64_t> top_k;                // sampling only; 0 = off
  Sourced<double> top_p;                 // sampling only; 1 = off
  Sourced<double> min_p;                 // sampling only; 0 = off
  Sourced<double> repetition_penalty;    // 1 = off; applied in greedy mode too (as transformers)
  Sourced<uint64_t> seed;                // sampling only
  Sourced<std::vector<uint32_t>> stop_token_ids;  // source lists every contributor
  Sourced<std::vector<std::string>> stop_strings;
  Sourced<bool> skip_special_tokens;     // special tokens left out of the text (ids keep them)
  Sourced<bool> add_special_tokens;      // the tokenizer's post-processor runs on a text prompt
  Sourced<int64_t> max_context;          // prompt + max_new_tokens must fit (session-wide)
};

// Per-request overrides; unset fields come from the model's files or glassbox's defaults.
struct GenerationRequest {
  std::optional<int64_t> max_new_tokens;
  std::optional<bool> do_sample;
  std::optional<double> temperature;
  std::optional<int64_t> top_k;
  std::optional<double> top_p;
  std::optional<double> min_p;
  std::optional<double> repetition_penalty;
  std::optional<uint64_t> seed;
  std::vector<uint32_t> stop_token_ids;     // added to the model's stop set
  std::vector<std::string> stop_strings;    // added to glassbox.json's
  std::optional<bool> skip_special_tokens;
  std::optional<bool> add_special_tokens;
  // How sources of these fields are named: "request" (API), "flag" (CLI: "flag --top-k").
  std::string source = "request";
};

// Session-wide settings. Each field: default, then why.
struct GenerationOptions {
  SessionOptions session;                   // engine settings (threads, precision, ...)
  std::optional<Precision> precision;       // override of glassbox.json "precision" (flag --precision)
  // Tokens one sequence may hold (prompt + generated). nullopt: glassbox.json "max_context", else
  // config.json max_position_embeddings (n_positions, n_ctx): the positions the model was built for.
  std::optional<int64_t> max_context;
  std::string max_context_source = "option max_context";
  // Bytes of KV cache all sequences in flight may reserve together; a sequence reserves
  // (prompt + max_new_tokens) x bytes per token when admitted, and admission over the budget is an
  // error naming the numbers (never an allocation failure mid-generation). 2 GiB: ~87k tokens of a
  // Qwen2.5-0.5B-shaped model (24 KiB/token fp32), far above one CPU's useful concurrency.
  int64_t kv_budget_bytes = int64_t{2} << 30;
  // Prompt tokens one prefill run feeds per sequence at most; a longer prompt runs in chunks, each
  // after the K/V of the chunks before (same logits as one run, docs/generation.md). 256: a prompt
  // up to 256 tokens is one run; a longer one pauses a server's other streams for one 256-token run
  // at a time instead of the whole prompt. Lower: more runs, each copying the past so far in (the
  // in-place cache is open), so long prompts' time to first token grows. Must be >= 1 (load refuses 0).
  int64_t prefill_chunk_tokens = 256;
};

// The decoder as glassbox recognised it.
struct DecoderInfo {
  std::string model_path;
  std::string layout;                // "optimum" (one model.onnx, past_key_values.* / present.*)
  int64_t layers = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  int64_t vocab_size = 0;            // logits' last dim
  bool has_position_ids = false;
  int64_t kv_bytes_per_token = 0;    // 2 (K, V) x layers x kv_heads x head_dim x 4 (fp32)
  // onnxruntime-genai's layout: every genai_config.json field, its value and what glassbox does with it.
  struct ConfigField {
    std::string field;  // e.g. "search.top_k"
    std::string value;  // JSON text
    std::string use;    // "policy top_k (below generation_config.json)", "checked against ...", "not used: ..."
  };
  std::vector<ConfigField> genai_config;
};

// A finding about the model's files at load (pad == eos, missing EOS, ...): declared, with the fix.
struct GenerationWarning {
  std::string what;
  std::string fix;
};

enum class FinishReason { kNone, kStop, kLength, kError };
const char* finish_reason_name(FinishReason r);  // "", "stop", "length", "error"

using SequenceId = int64_t;

// One sequence to admit: a text prompt (tokenized per the policy) or ids (used as given).
struct SequenceInput {
  std::string prompt;
  std::optional<std::vector<uint32_t>> prompt_ids;
  GenerationRequest request;
};

// What one prefill/step did to one sequence.
struct StepEvent {
  SequenceId id = 0;
  std::optional<uint32_t> token;  // the token chosen at this step
  std::string text;               // text that became final at this step (may be empty: held bytes)
  FinishReason finished = FinishReason::kNone;
};

struct GenerationResult {
  std::string text;                    // completion text (stop string and stop token excluded)
  std::vector<uint32_t> prompt_ids;
  std::vector<uint32_t> token_ids;     // completion ids (a stop token included)
  FinishReason finish_reason = FinishReason::kNone;
  std::optional<uint32_t> stop_token;  // finish_reason stop by a token
  std::optional<std::string> stop_string;  // finish_reason stop by a string
  std::string error;                   // finish_reason error: what happened, at which step
  bool non_finite_logits = false;      // finish_reason error because a logits row held NaN or Inf
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  double ttft_ms = 0;                  // admission to the first token
  double per_token_ms = 0;             // (end - first token) / (completion_tokens - 1); 0 below 2 tokens
  double total_ms = 0;
  int64_t kv_capacity_tokens = 0;      // reserved for this sequence: prompt + max_new_tokens
  int64_t kv_reserved_bytes = 0;
  GenerationPolicy policy;
};

// Called with every logits row the sampler sees (before any processing): sequence, step (0 =
// the prefill), the row. For tests and accuracy tools; nothing is copied when unset.
using LogitsObserver = std::function<void(SequenceId, int64_t step, std::span<const float> logits)>;

class GenerationSession {
 public:
  static Result<GenerationSession> load(const std::string& model_dir, const GenerationOptions& options = {});
  GenerationSession(GenerationSession&&) noexcept;
  GenerationSession& operator=(GenerationSession&&) noexcept;
  ~GenerationSession();

  const DecoderInfo& decoder() const;
  const Tokenizer& tokenizer() const;
  const Session& session() const;
  const std::vector<GenerationWarning>& warnings() const;
  // The policy a request with no overrides gets (max_new_tokens before the context cap).
  const GenerationPolicy& default_policy() const;
  Result<GenerationPolicy> resolve(const GenerationRequest& request) const;
  int64_t kv_budget_bytes() const;
  int64_t kv_reserved_bytes() const;  // by the sequences in flight
  // True when each run reads and appends to the sequences' caches in place (SessionOptions::kv_cache_inputs bound
  // by the pass kv_cache_binding); false: the past is copied into each run and the present rows out of it.
  bool kv_in_place() const;

  // Admits the sequences (prompt + max_new_tokens <= max_context, KV budget) and runs their
  // prompts (batched, in chunks of prefill_chunk_tokens), choosing each one's first token. All or
  // none are admitted.
  Result<std::vector<SequenceId>> prefill(const std::vector<SequenceInput>& inputs, std::vector<StepEvent>* events = nullptr);
  // Admits the sequences as prefill() does (reserving their KV) without running them: each is
  // prefilling until prefill_chunk() has run its whole prompt. A max_new_tokens 0 sequence finishes
  // here (its event in `events`). All or none are admitted.
  Result<std::vector<SequenceId>> admit(const std::vector<SequenceInput>& inputs, std::vector<StepEvent>* events = nullptr);
  // Runs the next chunk (at most prefill_chunk_tokens prompt tokens, after the K/V so far) of each
  // of `ids` (empty: every prefilling sequence) in one engine run. A sequence whose last chunk ran
  // gets its first token (an event) and becomes steppable. A failed run changes no sequence.
  Result<std::vector<StepEvent>> prefill_chunk(std::span<const SequenceId> ids = {});
  // Sequences admitted whose prompt is not all prefilled yet, in admission order.
  std::vector<SequenceId> prefilling() const;
  // Prompt tokens of `id` not yet prefilled (0 once steppable, finished or unknown).
  int64_t prefill_remaining(SequenceId id) const;
  int64_t prefill_chunk_tokens() const;
  // One token for each of `ids` (empty: every active sequence) in one engine run.
  Result<std::vector<StepEvent>> step(std::span<const SequenceId> ids = {});
  // Steppable sequences: prefilled and not finished.
  std::vector<SequenceId> active() const;
  // The result of a finished sequence (removed from the session, its KV buffer freed).
  Result<GenerationResult> take_result(SequenceId id);
  // Ends a sequence now (finish_reason stays none if it had not finished) and frees it.
  void cancel(SequenceId id);

  // prefill + step until done; on_text receives each piece of final text as it is produced.
  Result<GenerationResult> generate(const SequenceInput& input,
                                    const std::function<void(const std::string&)>& on_text = {});

  void set_logits_observer(LogitsObserver observer);

  struct Impl;

 private:
  explicit GenerationSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// glassbox's own default of each policy field: value, reason, risk (explain, docs).
struct GenerationDefault {
  const char* field;
  const char* value;
  const char* reason;
  const char* risk;
};
std::span<const GenerationDefault> generation_defaults();

}  // namespace glassbox
