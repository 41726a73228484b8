#include "glassbox/chat_prompt.h"

#include <nlohmann/json.hpp>

#include "glassbox/generation_json.h"

namespace glassbox {

using nlohmann::json;

namespace {

// Python's str.strip() set for ASCII (space, \t \n \v \f \r, \x1c-\x1f); other Unicode whitespace
// (U+00A0, U+2000...) is not stripped here: a final message ending in it is cut one character later.
bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f'); }

std::string_view lstrip(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return s;
}

std::string_view strip(std::string_view s) {
  s = lstrip(s);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

Error chat_error(std::string what, std::string fix) {
  return make_error(ErrorCode::kInvalidArgument, std::move(what), "messages", std::move(fix));
}

// transformers' continue_final_message cut (render_jinja_template in chat_template_utils.py).
Result<std::string> cut_after_final_message(const std::string& rendered, const json& final_message) {
  const json* content = final_message.is_object() && final_message.contains("content") ? &final_message["content"] : nullptr;
  std::string text;
  if (content && content->is_string()) {
    text = content->get<std::string>();
  } else if (content && content->is_array()) {
    bool found = false;
    for (auto it = content->rbegin(); it != content->rend() && !found; ++it)
      if (it->is_object() && it->contains("text") && (*it)["text"].is_string()) {
        text = (*it)["text"].get<std::string>();
        found = true;
      }
    if (!found)
      return chat_error("continue_final_message is set but the final message has no text block to continue",
                        "give the final message a string content or a {\"type\": \"text\", \"text\": ...} block");
  } else {
    return chat_error("continue_final_message is set but the final message has no string or list \"content\"",
                      "give the final message the text to continue");
  }
  const std::string_view stripped = strip(text);
  const size_t at = rendered.rfind(stripped);
  if (at == std::string::npos)
    return chat_error("continue_final_message is set but the final message does not appear in the chat after applying "
                      "the chat template (the template changed or dropped part of it)",
                      "check that the template keeps the final message's text as given");
  // As transformers: keep the message's trailing whitespace when the template kept it, else cut after its text.
  const size_t kept = lstrip(text).size();
  if (rendered.compare(at, kept, text) == 0) return rendered.substr(0, at + kept);
  return rendered.substr(0, at + stripped.size());
}

}  // namespace

Result<ChatPrompt> render_chat(const ChatTemplate& chat_template, const Tokenizer& tokenizer, const ChatPromptRequest& request) {
  auto src = [&](const char* flag) { return request.source == "flag" ? std::string("flag --") + flag : request.source; };
  const json messages = json::parse(request.messages_json, nullptr, false);
  if (messages.is_discarded() || !messages.is_array() || messages.empty())
    return chat_error("the messages must be a non-empty JSON array (not valid JSON, not an array, or empty)",
                      "give [{\"role\": \"user\", \"content\": \"...\"}, ...] as OpenAI and Hugging Face write it");
  const json& last = messages.back();
  const bool last_is_assistant = last.is_object() && last.contains("role") && last["role"] == "assistant";
  ChatPrompt p;
  if (request.add_generation_prompt.value_or(false) && request.continue_final_message.value_or(false))
    return chat_error("continue_final_message and add_generation_prompt are not compatible: continue the final message, "
                      "or add the header that starts a new assistant message",
                      "set only one of them (as transformers' apply_chat_template requires)");
  if (request.continue_final_message) {
    p.continue_final_message = {*request.continue_final_message, src("continue-final-message")};
  } else if (request.add_generation_prompt.value_or(false)) {
    p.continue_final_message = {false, "add_generation_prompt is set (" + src("add-generation-prompt") + ")"};
  } else {
    p.continue_final_message = {last_is_assistant, std::string("glassbox default: the last message's role is ") +
                                                       (last_is_assistant ? "" : "not ") +
                                                       "\"assistant\" (transformers' text-generation pipeline rule)"};
  }
  if (request.add_generation_prompt) {
    p.add_generation_prompt = {*request.add_generation_prompt, src("add-generation-prompt")};
  } else {
    p.add_generation_prompt = {!p.continue_final_message.value,
                               "glassbox default: not continue_final_message (transformers' text-generation pipeline)"};
  }
  ChatTemplateOptions topts = request.template_options;
  topts.add_generation_prompt = p.add_generation_prompt.value;
  GB_ASSIGN_OR_RETURN(p.template_name, chat_template.resolve_name(topts));
  p.template_source = chat_template.source();
  GB_ASSIGN_OR_RETURN(p.text, chat_template.render(request.messages_json, topts));
  if (p.continue_final_message.value) {
    GB_ASSIGN_OR_RETURN(p.text, cut_after_final_message(p.text, last));
  }
  EncodeOptions eo;
  eo.add_special_tokens = false;    // the template placed the special tokens: adding them again doubles BOS
  eo.truncation_from_file = false;  // a prompt is never cut silently (admission checks the context)
  eo.truncation = std::nullopt;
  eo.padding_from_file = false;
  eo.padding = std::nullopt;
  auto enc = tokenizer.encode(p.text, std::nullopt, eo);
  if (!enc.ok()) return std::move(enc).take_error().with_where("the rendered chat prompt");
  p.ids = std::move(enc->ids);
  return p;
}

void mark_chat_prompt(GenerationPolicy& policy) {
  policy.add_special_tokens = {false, "chat template: the rendered prompt is tokenized without adding special tokens "
                                      "(the template placed them)"};
}

namespace generation {

nlohmann::ordered_json chat_json(const ChatPrompt& p) {
  nlohmann::ordered_json j;
  j["template_source"] = p.template_source;
  j["template_name"] = p.template_name;
  j["add_generation_prompt"] = {{"value", p.add_generation_prompt.value}, {"source", p.add_generation_prompt.source}};
  j["continue_final_message"] = {{"value", p.continue_final_message.value}, {"source", p.continue_final_message.source}};
  j["prompt"] = p.text;
  j["prompt_ids"] = p.ids;
  return j;
}

}  // namespace generation

}  // namespace glassbox
