// Chat templates with Hugging Face's semantics: the `chat_template` of a model directory
// (tokenizer_config.json, string or named list, or chat_template.jinja) rendered exactly as
// transformers' apply_chat_template(tokenize=False) renders it with Jinja2 (trim_blocks,
// lstrip_blocks, loop controls, tojson without ASCII escaping, raise_exception, strftime_now).
// glassbox implements the subset of Jinja2 that chat templates use; anything outside it is an
// error naming the construct and its line:column, never a different or fallback template.
// See docs/generation.md ("Chat templates").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "glassbox/error.h"

namespace glassbox {

// The time zone strftime_now() formats in. transformers uses the process's local zone
// (datetime.now()), a hidden input: glassbox declares it.
enum class TemplateTimeZone {
  kUtc,    // default: the same prompt on every host; risk: differs from transformers on a host whose TZ is not UTC
  kLocal,  // the process's local zone (TZ), as transformers does
};

// Every input of one render besides the messages. Nothing else is read.
struct ChatTemplateOptions {
  // Append the header that starts an assistant turn (transformers' default: false).
  bool add_generation_prompt = false;
  // For a named list of templates: which one. Empty = transformers' rule: "tool_use" when tools
  // are given and the model has it, else "default"; no such template is an error.
  std::string template_name;
  // JSON array of tool schemas, the template's `tools`; nullopt: `tools` is None (transformers' default).
  std::optional<std::string> tools_json;
  // JSON object of extra template variables (e.g. {"enable_thinking": false}); they override the
  // special tokens of the same name, as transformers' **kwargs do. Empty = none.
  std::string extra_context_json;
  // strftime_now(): which zone, and which instant (nullopt = the system clock when rendering;
  // a fixed instant, in microseconds since the Unix epoch, makes renders reproducible).
  TemplateTimeZone time_zone = TemplateTimeZone::kUtc;
  std::optional<std::int64_t> now_unix_micros;
};

class ChatTemplate {
 public:
  // Reads MODEL_DIR/tokenizer_config.json (chat_template, special tokens), special_tokens_map.json
  // (its tokens override, as transformers' loader does), chat_template.jinja (wins over the config's
  // chat_template, as in transformers) and additional_chat_templates/NAME.jinja. A directory without
  // any template is an error: glassbox never substitutes a generic (ChatML) template.
  static Result<ChatTemplate> from_model_dir(const std::string& dir);
  // The same from texts: tokenizer_config.json's content (may be empty) and a chat_template.jinja text.
  static Result<ChatTemplate> from_strings(std::string_view tokenizer_config_json,
                                           std::optional<std::string> chat_template_jinja = std::nullopt,
                                           std::string_view special_tokens_map_json = {});

  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;
  ChatTemplate(const ChatTemplate&);
  ChatTemplate& operator=(const ChatTemplate&);
  ~ChatTemplate();

  // Renders `messages_json` (a JSON array of messages, passed to the template as `messages`).
  // The text must be tokenized WITHOUT adding special tokens again (the template emits BOS
  // where the model wants it).
  Result<std::string> render(std::string_view messages_json, const ChatTemplateOptions& options = {}) const;

  // The template render() would use with these options.
  Result<std::string> resolve_name(const ChatTemplateOptions& options) const;
  // Names of the templates ("default" for a single template).
  std::vector<std::string> template_names() const;
  // Where the template(s) came from: "tokenizer_config.json" or "chat_template.jinja".
  const std::string& source() const;
  // The special-token variables passed to the template (name, text), e.g. ("bos_token", "<s>").
  std::vector<std::pair<std::string, std::string>> special_tokens() const;

 private:
  struct Impl;
  explicit ChatTemplate(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace glassbox
