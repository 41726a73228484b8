#include "glassbox/generation_json.h"

namespace glassbox::generation {

using nlohmann::ordered_json;

namespace {

template <class T>
ordered_json field(const Sourced<T>& f) {
  return ordered_json{{"value", f.value}, {"source", f.source}};
}

ordered_json decoder_json(const DecoderInfo& d) {
  return ordered_json{{"model", d.model_path}, {"layout", d.layout}, {"layers", d.layers}, {"kv_heads", d.kv_heads},
                      {"head_dim", d.head_dim}, {"vocab_size", d.vocab_size}, {"position_ids", d.has_position_ids},
                      {"kv_bytes_per_token", d.kv_bytes_per_token}};
}

// Where the LM head runs (SessionOptions::last_position_outputs, which the session sets): the pass's own lines.
std::string lm_head_text(const Session& session) {
  std::string text;
  for (const auto& e : session.pass_log())
    if (e.pass == "last_position_outputs") text += (text.empty() ? "" : "; ") + e.message;
  return text.empty() ? "logits at every position: the pass last_position_outputs did not run (opt level 0 or disabled)"
                      : text;
}

}  // namespace

ordered_json policy_json(const GenerationPolicy& p) {
  return ordered_json{{"max_new_tokens", field(p.max_new_tokens)},
                      {"do_sample", field(p.do_sample)},
                      {"temperature", field(p.temperature)},
                      {"top_k", field(p.top_k)},
                      {"top_p", field(p.top_p)},
                      {"min_p", field(p.min_p)},
                      {"repetition_penalty", field(p.repetition_penalty)},
                      {"seed", field(p.seed)},
                      {"stop_token_ids", field(p.stop_token_ids)},
                      {"stop_strings", field(p.stop_strings)},
                      {"skip_special_tokens", field(p.skip_special_tokens)},
                      {"add_special_tokens", field(p.add_special_tokens)},
                      {"max_context", field(p.max_context)}};
}

ordered_json result_json(const GenerationResult& r, const DecoderInfo& d) {
  ordered_json j;
  j["text"] = r.text;
  j["ids"] = r.token_ids;
  j["finish_reason"] = finish_reason_name(r.finish_reason);
  if (r.stop_token) j["stop_token"] = *r.stop_token;
  if (r.stop_string) j["stop_string"] = *r.stop_string;
  if (!r.error.empty()) j["error"] = r.error;
  j["usage"] = {{"prompt_tokens", r.prompt_tokens}, {"completion_tokens", r.completion_tokens}};
  j["timings"] = {{"ttft_ms", r.ttft_ms}, {"per_token_ms", r.per_token_ms}, {"total_ms", r.total_ms}};
  j["kv_cache"] = {{"bytes_per_token", d.kv_bytes_per_token}, {"capacity_tokens", r.kv_capacity_tokens},
                   {"reserved_bytes", r.kv_reserved_bytes}};
  j["policy"] = policy_json(r.policy);
  return j;
}

namespace {

// How each run gets the cache: in place, or copied and why (the pass log of kv_cache_binding, else the layout).
std::string kv_feeding_text(const GenerationSession& s) {
  if (s.kv_in_place())
    return "in place: each run reads the sequences' caches where they are and appends the new positions (kv_cache_binding)";
  std::string why;
  for (const auto& e : s.session().pass_log())
    if (e.pass == "kv_cache_binding") why = e.message;
  if (why.empty())
    why = "the layout reads its past inside a subgraph (legacy merged If), opt level < 2, or the pass kv_cache_binding is "
          "disabled";
  return "copied: the past is copied into each run and the new present rows out of it (" + why + ")";
}

}  // namespace

ordered_json explain_json(const GenerationSession& s) {
  ordered_json j;
  j["decoder"] = decoder_json(s.decoder());
  j["decoder"]["lm_head"] = lm_head_text(s.session());
  const int64_t ctx = s.default_policy().max_context.value;
  j["kv_cache"] = {{"bytes_per_token", s.decoder().kv_bytes_per_token},
                   {"reserved_per_sequence", "(prompt + max_new_tokens) x bytes_per_token, at admission"},
                   {"bytes_at_max_context", ctx * s.decoder().kv_bytes_per_token},
                   {"budget_bytes", s.kv_budget_bytes()},
                   {"feeding", kv_feeding_text(s)}};
  if (!s.decoder().genai_config.empty()) {
    ordered_json fields = ordered_json::array();
    for (const auto& f : s.decoder().genai_config) fields.push_back({{"field", f.field}, {"value", f.value}, {"use", f.use}});
    j["genai_config"] = fields;
  }
  j["prefill"] = {{"chunk_tokens", s.prefill_chunk_tokens()},
                  {"default", 256},
                  {"reason", "a prompt up to 256 tokens is one run; a longer one runs in chunks, each after the K/V so far "
                             "(the same logits), so a server steps its other streams between two chunks"},
                  {"risk", "lower: more runs (each copying the past in where the cache is not in place), so long prompts' time to first token grows; "
                           "higher: a long prompt pauses a server's other streams longer"}};
  j["policy"] = policy_json(s.default_policy());
  ordered_json defaults = ordered_json::array();
  for (const auto& d : generation_defaults())
    defaults.push_back({{"field", d.field}, {"default", d.value}, {"reason", d.reason}, {"risk", d.risk}});
  j["defaults"] = defaults;
  ordered_json warnings = ordered_json::array();
  for (const auto& w : s.warnings()) warnings.push_back({{"what", w.what}, {"fix", w.fix}});
  j["warnings"] = warnings;
  return j;
}

}  // namespace glassbox::generation
