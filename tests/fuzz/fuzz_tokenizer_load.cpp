// Fuzzes the tokenizer.json loader: any bytes must load or fail with an Error, never crash;
// what loads must encode and decode a fixed text without crashing.
#include <cstdint>
#include <string>

#include "glassbox/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string json(reinterpret_cast<const char*>(data), size);
  auto tk = glassbox::Tokenizer::from_json_string(json);
  if (!tk.ok()) return 0;
  auto e = tk->encode("Hello wörld! 123 <s> 日本語", std::string_view("pair text"));
  if (e.ok()) (void)tk->decode(e->ids, true);
  return 0;
}
