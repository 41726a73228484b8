// libFuzzer target: a chat template (the input) parsed and rendered on fixed messages. Any input
// must give a prompt or an Error, never a crash, a hang or unbounded memory.
#include <cstddef>
#include <cstdint>
#include <string>

#include "glassbox/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto t = glassbox::ChatTemplate::from_strings(R"({"bos_token": "<s>", "eos_token": "</s>"})", text);
  if (!t.ok()) return 0;
  glassbox::ChatTemplateOptions o;
  o.add_generation_prompt = true;
  o.now_unix_micros = 0;
  o.tools_json = R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}])";
  auto r = t->render(R"([{"role": "system", "content": "s"}, {"role": "user", "content": "u é"},
                         {"role": "assistant", "content": null, "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},
                         {"role": "tool", "content": "r"}])", o);
  (void)r;
  return 0;
}
