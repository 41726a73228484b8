// JSON of generation results and policies, shared by the CLI (and later the server's routes).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "glassbox/chat_prompt.h"
#include "glassbox/generation.h"

namespace glassbox::generation {

// {"field": {"value": ..., "source": "..."}, ...} in declaration order.
nlohmann::ordered_json policy_json(const GenerationPolicy& policy);
// text, ids, finish_reason (+ stop_token / stop_string / error), usage, timings, kv_cache, policy.
nlohmann::ordered_json result_json(const GenerationResult& result, const DecoderInfo& decoder);
// What `glassbox generate --explain` prints: the decoder, KV memory, the default policy with
// sources, glassbox's defaults with reason and risk, the load-time warnings.
nlohmann::ordered_json explain_json(const GenerationSession& session);
// A chat prompt (`glassbox generate --chat --json`'s "chat"): template_source, template_name,
// add_generation_prompt and continue_final_message {value, source}, prompt, prompt_ids.
nlohmann::ordered_json chat_json(const ChatPrompt& prompt);

}  // namespace glassbox::generation
