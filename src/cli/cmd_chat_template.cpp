// `glassbox chat-template MODEL_DIR --messages FILE [--add-generation-prompt true|false]
//   [--tools FILE] [--template-name NAME] [--var KEY=JSON]... [--now TIME] [--time-zone utc|local] [--json]`
// Prints the rendered prompt exactly (no trailing newline added) and nothing else; with --json one line
// {"prompt": ..., "ids": [...]}, the ids being the prompt tokenized by MODEL_DIR/tokenizer.json WITHOUT
// adding special tokens again (the template already emits BOS where the model wants it).
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_common.h"
#include "glassbox/chat_template.h"
#include "glassbox/tokenizer.h"

namespace {

struct ChatTemplateFlags {
  std::string model_dir;
  std::string messages;
  std::string add_generation_prompt = "false";
  std::string tools;
  std::string template_name;
  std::vector<std::string> vars;
  std::string now;
  std::string time_zone = "utc";
  bool json = false;
};

glassbox::Result<std::string> read_input(const std::string& path) {
  std::stringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return glassbox::make_error(glassbox::ErrorCode::kIo, "cannot read file", path);
  ss << f.rdbuf();
  return ss.str();
}

// --now: Unix seconds (e.g. 1721985342 or 1721985342.5) or UTC ISO-8601 (2024-07-26T09:15:42[.123456]Z).
glassbox::Result<std::int64_t> parse_now(const std::string& text) {
  auto bad = [&] {
    return glassbox::make_error(glassbox::ErrorCode::kInvalidArgument, "cannot read time '" + text + "'", "--now",
                                "give Unix seconds or UTC ISO-8601 like 2024-07-26T09:15:42Z");
  };
  if (text.find('T') == std::string::npos) {
    char* end = nullptr;
    long double secs = std::strtold(text.c_str(), &end);
    if (text.empty() || *end != '\0') return bad();
    return static_cast<std::int64_t>(secs * 1000000.0L);
  }
  std::tm tm{};
  int frac_digits = 0;
  long frac = 0;
  char rest[32] = {0};
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%31s", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, rest) < 6)
    return bad();
  std::string tail = rest;
  if (!tail.empty() && tail[0] == '.') {
    std::size_t k = 1;
    while (k < tail.size() && std::isdigit(static_cast<unsigned char>(tail[k]))) {
      if (frac_digits < 6) { frac = frac * 10 + (tail[k] - '0'); ++frac_digits; }
      ++k;
    }
    tail = tail.substr(k);
  }
  if (tail != "Z") return bad();
  while (frac_digits++ < 6) frac *= 10;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<std::int64_t>(timegm(&tm)) * 1000000 + frac;
}

void run_chat_template(const ChatTemplateFlags& f) {
  using namespace glassbox;
  const char* verb = "chat-template";
  auto tmpl = ChatTemplate::from_model_dir(f.model_dir);
  if (!tmpl.ok()) cli::fail(verb, tmpl.error());
  ChatTemplateOptions o;
  o.add_generation_prompt = f.add_generation_prompt == "true";
  o.template_name = f.template_name;
  o.time_zone = f.time_zone == "local" ? TemplateTimeZone::kLocal : TemplateTimeZone::kUtc;
  if (!f.now.empty()) {
    auto now = parse_now(f.now);
    if (!now.ok()) cli::fail(verb, now.error());
    o.now_unix_micros = *now;
  }
  if (!f.tools.empty()) {
    auto tools = read_input(f.tools);
    if (!tools.ok()) cli::fail(verb, tools.error());
    o.tools_json = *tools;
  }
  if (!f.vars.empty()) {
    nlohmann::ordered_json extra = nlohmann::ordered_json::object();
    for (const auto& kv : f.vars) {
      auto eq = kv.find('=');
      nlohmann::ordered_json v;
      if (eq != std::string::npos) v = nlohmann::ordered_json::parse(kv.substr(eq + 1), nullptr, false);
      if (eq == std::string::npos || eq == 0 || v.is_discarded())
        cli::fail(verb, make_error(ErrorCode::kInvalidArgument, "expected KEY=JSON, got '" + kv + "'", "--var",
                                   "e.g. --var enable_thinking=false --var date_string='\"26 Jul 2024\"'"));
      extra[kv.substr(0, eq)] = v;
    }
    o.extra_context_json = extra.dump();
  }
  auto messages = read_input(f.messages);
  if (!messages.ok()) cli::fail(verb, messages.error());
  auto prompt = tmpl->render(*messages, o);
  if (!prompt.ok()) cli::fail(verb, prompt.error());
  if (!f.json) {
    std::cout << *prompt << std::flush;
    return;
  }
  auto tok = Tokenizer::from_file(f.model_dir + "/tokenizer.json");
  if (!tok.ok()) cli::fail(verb, tok.error());
  EncodeOptions eo;
  eo.add_special_tokens = false;     // the template placed the special tokens; adding them again doubles BOS
  eo.truncation_from_file = false;   // a prompt is never cut silently
  eo.truncation = std::nullopt;
  eo.padding_from_file = false;
  eo.padding = std::nullopt;
  auto enc = tok->encode(*prompt, std::nullopt, eo);
  if (!enc.ok()) cli::fail(verb, enc.error());
  nlohmann::json out;
  out["prompt"] = *prompt;
  out["ids"] = enc->ids;
  std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict) << "\n";
}

}  // namespace

void add_chat_template_command(CLI::App& app) {
  auto f = std::make_shared<ChatTemplateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "chat-template", "Render a model's chat template on messages exactly as transformers' apply_chat_template does");
  cmd->add_option("model_dir", f->model_dir,
                  "model directory: tokenizer_config.json (chat_template, special tokens) and/or chat_template.jinja")
      ->required();
  cmd->add_option("--messages", f->messages, "JSON file with the list of messages ('-' = stdin)")->required();
  cmd->add_option("--add-generation-prompt", f->add_generation_prompt,
                  "append the header of a new assistant turn (default false, as transformers)")
      ->check(CLI::IsMember({"true", "false"}))
      ->capture_default_str();
  cmd->add_option("--tools", f->tools, "JSON file with the list of tool schemas, the template's `tools` (default: None)");
  cmd->add_option("--template-name", f->template_name,
                  "which of a model's named templates (default: \"tool_use\" when --tools is given and the model has "
                  "it, else \"default\", as transformers chooses)");
  cmd->add_option("--var", f->vars, "KEY=JSON: an extra template variable, e.g. enable_thinking=false (repeatable)");
  cmd->add_option("--now", f->now,
                  "the instant strftime_now() formats: Unix seconds or UTC ISO-8601 (default: the system clock)");
  cmd->add_option("--time-zone", f->time_zone,
                  "utc | local: the zone strftime_now() formats in (default utc: the same prompt on every host; "
                  "transformers uses the local zone)")
      ->check(CLI::IsMember({"utc", "local"}))
      ->capture_default_str();
  cmd->add_flag("--json", f->json, "print {\"prompt\", \"ids\"}: ids = the prompt tokenized without adding special tokens");
  cmd->callback([f]() { run_chat_template(*f); });
}
