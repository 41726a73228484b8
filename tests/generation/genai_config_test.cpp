// onnxruntime-genai's builder layout (docs/generation.md): llama_tiny_genai (scripts/make_genai_layout.py)
// loads from genai_config.json; every field is reported with what glassbox does with it; the policy
// fields carry genai_config.json as their source; a field or value glassbox does not implement, a
// renamed input and a size that disagrees with the graph are refused by name. (Logits parity against
// onnxruntime-node: parity_test.cpp LlamaStyleGenaiLayoutMatchesOnnxRuntime.)
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "test_models.h"

namespace fs = std::filesystem;
using glassbox::GenerationOptions;
using glassbox::GenerationSession;
using nlohmann::json;

namespace {

const std::string kName = "llama_tiny_genai";

json read_config() {
  std::ifstream in(fs::path(gbtest::decoder_model(kName)) / "genai_config.json");
  return json::parse(in);
}

// A copy of the model directory (files linked) whose genai_config.json is `config`.
std::string with_config(const std::string& tag, const json& config) {
  const fs::path src = gbtest::decoder_model(kName);
  const fs::path dir = fs::temp_directory_path() / ("glassbox_genai_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"model.onnx", "tokenizer.json", "tokenizer_config.json"}) fs::create_symlink(src / f, dir / f);
  std::ofstream(dir / "genai_config.json") << config.dump(2);
  return dir.string();
}

std::string load_error(const std::string& tag, const json& config) {
  const std::string dir = with_config(tag, config);
  GenerationOptions opts;
  opts.session.threads = 1;
  auto s = GenerationSession::load(dir, opts);
  fs::remove_all(dir);
  return s.ok() ? std::string("loaded") : s.error().to_string();
}

}  // namespace

TEST(GenaiLayout, LoadsFromGenaiConfigWithSources) {
  auto gen = gbtest::load_decoder(kName);
  EXPECT_EQ(gen.decoder().layout, "onnxruntime-genai (genai_config.json)");
  EXPECT_FALSE(gen.decoder().has_position_ids);
  EXPECT_EQ(gen.decoder().kv_heads, 2);
  EXPECT_EQ(gen.decoder().head_dim, 16);
  const auto& p = gen.default_policy();
  EXPECT_EQ(p.max_context.value, 256);
  EXPECT_EQ(p.max_context.source, "genai_config.json model.context_length");
  EXPECT_EQ(p.top_k.value, 50);
  EXPECT_EQ(p.top_k.source, "genai_config.json search.top_k");
  EXPECT_EQ(p.do_sample.source, "genai_config.json search.do_sample");
  EXPECT_NE(p.stop_token_ids.source.find("genai_config.json model.eos_token_id [151645, 151643]"), std::string::npos)
      << p.stop_token_ids.source;
  // Every leaf field of the file is in explain with its use.
  const json config = read_config();
  size_t leaves = 0;
  std::function<void(const json&)> count = [&](const json& j) {
    for (const auto& [k, v] : j.items()) v.is_object() ? count(v) : void(++leaves);
  };
  count(config);
  EXPECT_EQ(gen.decoder().genai_config.size(), leaves);
  bool max_length_declared = false;
  for (const auto& f : gen.decoder().genai_config) {
    EXPECT_FALSE(f.use.empty()) << f.field;
    if (f.field == "search.max_length") max_length_declared = f.use.rfind("not used", 0) == 0;
  }
  EXPECT_TRUE(max_length_declared);
}

TEST(GenaiLayout, RefusesWhatItDoesNotImplementByName) {
  json c = read_config();
  c["search"]["num_beams"] = 4;
  EXPECT_NE(load_error("beams", c).find("search.num_beams"), std::string::npos);
  c = read_config();
  c["model"]["decoder"]["sliding_window"] = json{{"window_size", 8}};
  EXPECT_NE(load_error("unknown", c).find("model.decoder.sliding_window.window_size is not known"), std::string::npos);
  c = read_config();
  c["model"]["decoder"]["inputs"]["input_ids"] = "tokens";
  EXPECT_NE(load_error("renamed", c).find("model.decoder.inputs.input_ids"), std::string::npos);
  c = read_config();
  c["model"]["decoder"]["session_options"]["provider_options"] = json::array({json{{"cuda", json::object()}}});
  EXPECT_NE(load_error("provider", c).find("provider_options"), std::string::npos);
  c = read_config();
  c["model"]["decoder"]["num_key_value_heads"] = 4;
  const std::string e = load_error("heads", c);
  EXPECT_NE(e.find("model.decoder.num_key_value_heads is 4 but the graph has 2"), std::string::npos) << e;
}
