// A conversation (a JSON messages array as OpenAI and Hugging Face write it) -> the prompt a decoder
// continues: rendered by the model's own chat template (never a generic one) and tokenized WITHOUT
// adding special tokens again (the template placed BOS where the model wants it). One rule for the
// CLI (`glassbox generate --chat`) and Python (`pipeline("text-generation")` on messages).
// Implemented in src/generation/chat_prompt.cpp; docs/generation.md ("Chat").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/chat_template.h"
#include "glassbox/generation.h"

namespace glassbox {

struct ChatPromptRequest {
  std::string messages_json;  // a non-empty JSON array of {"role": ..., "content": ...}
  // nullopt: not continue_final_message. Both true is an error (as transformers' apply_chat_template).
  std::optional<bool> add_generation_prompt;
  // nullopt: true exactly when the last message's role is "assistant" and add_generation_prompt is not
  // set true (transformers' TextGenerationPipeline: a conversation ending in an assistant turn is a prefill).
  std::optional<bool> continue_final_message;
  ChatTemplateOptions template_options;  // template name, tools, variables, strftime_now's clock
  std::string source = "request";        // "flag": sources read "flag --continue-final-message"
};

struct ChatPrompt {
  std::string text;                // the rendered prompt (cut after the final message when continuing it)
  std::vector<uint32_t> ids;       // text tokenized with add_special_tokens false, never truncated
  std::string template_source;     // "tokenizer_config.json" or "chat_template.jinja"
  std::string template_name;       // "default" or the chosen named template
  Sourced<bool> add_generation_prompt;
  Sourced<bool> continue_final_message;
};

// continue_final_message cuts the rendered text as transformers does: right after the final message's text
// (the last text block of a list content), keeping its trailing whitespace when the template kept it.
Result<ChatPrompt> render_chat(const ChatTemplate& chat_template, const Tokenizer& tokenizer, const ChatPromptRequest& request);

// A result's policy for a chat prompt: add_special_tokens false, with that reason as its source.
void mark_chat_prompt(GenerationPolicy& policy);

}  // namespace glassbox
