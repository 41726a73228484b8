// Test driver for compare_with_jinja2.py: renders many cases in one process (the CLI is
// exercised separately). stdin: one JSON object per line
//   {"model_dir": DIR, "messages": [...], "tools": [...]?, "add_generation_prompt": bool,
//    "template_name": str?, "vars": {...}?, "now_micros": int?, "time_zone": "utc"|"local"?}
// stdout: one line per case, {"ok": true, "prompt": "..."} or {"ok": false, "error": "...", "code": "..."}.
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "glassbox/chat_template.h"

int main() {
  using glassbox::ChatTemplate;
  std::map<std::string, glassbox::Result<ChatTemplate>> cache;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    nlohmann::ordered_json c = nlohmann::ordered_json::parse(line);
    nlohmann::json out;
    auto fail = [&](const glassbox::Error& e) {
      out["ok"] = false;
      out["error"] = e.to_string();
      out["code"] = glassbox::error_code_name(e.code);
    };
    // A case names a model directory, or carries a template text and a tokenizer_config object.
    std::string key = c.contains("template") ? "template:" + c["template"].get<std::string>() + "\n" + c["config"].dump()
                                             : c["model_dir"].get<std::string>();
    auto it = cache.find(key);
    if (it == cache.end()) {
      if (c.contains("template"))
        it = cache.emplace(key, ChatTemplate::from_strings(c["config"].dump(), c["template"].get<std::string>())).first;
      else
        it = cache.emplace(key, ChatTemplate::from_model_dir(key)).first;
    }
    if (!it->second.ok()) {
      fail(it->second.error());
    } else {
      glassbox::ChatTemplateOptions o;
      o.add_generation_prompt = c.value("add_generation_prompt", false);
      if (c.contains("tools") && !c["tools"].is_null()) o.tools_json = c["tools"].dump();
      if (c.contains("template_name") && !c["template_name"].is_null()) o.template_name = c["template_name"];
      if (c.contains("vars") && !c["vars"].is_null()) o.extra_context_json = c["vars"].dump();
      if (c.contains("now_micros") && !c["now_micros"].is_null()) o.now_unix_micros = c["now_micros"].get<std::int64_t>();
      if (c.value("time_zone", std::string("utc")) == "local") o.time_zone = glassbox::TemplateTimeZone::kLocal;
      auto r = it->second->render(c["messages"].dump(), o);
      if (r.ok()) {
        out["ok"] = true;
        out["prompt"] = *r;
      } else {
        fail(r.error());
      }
    }
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
  }
  return 0;
}
