// `glassbox decode --tokenizer FILE [--skip-special-tokens true|false] < ids.jsonl` (contract in DESIGN.md).
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_common.h"
#include "glassbox/tokenizer.h"

namespace {

struct DecodeFlags {
  std::string tokenizer;
  std::string skip_special = "false";
};

void run_decode(const DecodeFlags& f) {
  using namespace glassbox;
  auto tk = Tokenizer::from_file(f.tokenizer);
  if (!tk.ok()) cli::fail("decode", tk.error());
  std::string line;
  std::size_t lineno = 0;
  while (std::getline(std::cin, line)) {
    ++lineno;
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    // accepts [ids...] or {"ids": [...]} (an encode output line)
    if (j.is_object() && j.contains("ids")) j = j["ids"];
    std::vector<std::uint32_t> ids;
    bool ok = j.is_array();
    if (ok)
      for (auto& v : j) {
        if (!v.is_number_unsigned() || v.get<std::uint64_t>() > 0xFFFFFFFFull) { ok = false; break; }
        ids.push_back(v.get<std::uint32_t>());
      }
    if (!ok)
      cli::fail("decode", make_error(ErrorCode::kInvalidArgument, "expected [ids...] or {\"ids\": [...]}",
                                     "stdin line " + std::to_string(lineno), "send one JSON array of ids per line"));
    auto r = tk->decode(ids, f.skip_special == "true");
    if (!r.ok()) cli::fail("decode", std::move(r).take_error().with_where("stdin line " + std::to_string(lineno)));
    nlohmann::json out;
    out["text"] = *r;
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
}

}  // namespace

void add_decode_command(CLI::App& app) {
  auto f = std::make_shared<DecodeFlags>();
  CLI::App* cmd = app.add_subcommand("decode", "Turn JSONL id lists from stdin back into {\"text\"} lines");
  cmd->add_option("--tokenizer", f->tokenizer, "tokenizer.json file")->required();
  cmd->add_option("--skip-special-tokens", f->skip_special, "drop special added tokens")
      ->check(CLI::IsMember({"true", "false"}))
      ->capture_default_str();
  cmd->callback([f]() { run_decode(*f); });
}
