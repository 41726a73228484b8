// `glassbox generate` end to end: --json lines (text, ids, finish_reason, policy with flag sources,
// timings, KV memory), the streamed text equals the JSON text, a batch of prompts gives what each
// prompt gives alone, --explain lists the defaults with reasons, and refusals exit non-zero.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test_models.h"

namespace {

using Run = gbtest::ShellRun;

Run run_cli(const std::string& args) { return gbtest::shell(std::string(GLASSBOX_CLI) + " generate " + args + " 2>/dev/null"); }

std::vector<nlohmann::json> lines(const std::string& out) {
  std::vector<nlohmann::json> v;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  return v;
}

TEST(GenerateCli, JsonStreamAndBatchAgree) {
  const std::string dir = gbtest::decoder_model("gpt2_tiny");
  auto one = run_cli(dir + " 'hello there' --json --max-new-tokens 12 --threads 1 --top-k 7");
  ASSERT_EQ(one.status, 0) << one.out;
  auto j = lines(one.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["policy"]["max_new_tokens"]["source"], "flag --max-new-tokens");
  EXPECT_EQ(j[0]["policy"]["top_k"]["value"], 7);
  EXPECT_EQ(j[0]["policy"]["top_k"]["source"], "flag --top-k");
  EXPECT_EQ(j[0]["policy"]["do_sample"]["source"], "glassbox default");
  EXPECT_EQ(j[0]["policy"]["max_context"]["source"], "config.json n_positions");
  EXPECT_TRUE(j[0]["timings"].contains("ttft_ms"));
  EXPECT_EQ(j[0]["kv_cache"]["bytes_per_token"], 2 * 2 * 4 * 8 * 4);
  const std::string finish = j[0]["finish_reason"];
  EXPECT_TRUE(finish == "length" || finish == "stop");
  // Streaming prints the same text (and a newline).
  auto streamed = run_cli(dir + " 'hello there' --max-new-tokens 12 --threads 1");
  ASSERT_EQ(streamed.status, 0);
  EXPECT_EQ(streamed.out, j[0]["text"].get<std::string>() + "\n");
  // Two prompts of different lengths in one batch give what each gives alone.
  auto other = lines(run_cli(dir + " 'a much longer prompt than the other one' --json --max-new-tokens 12 --threads 1").out);
  auto both = lines(run_cli(dir + " 'hello there' 'a much longer prompt than the other one' --json --max-new-tokens 12 --threads 1").out);
  ASSERT_EQ(both.size(), 2u);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(both[0]["ids"], j[0]["ids"]);
  EXPECT_EQ(both[1]["ids"], other[0]["ids"]);
}

TEST(GenerateCli, ExplainAndRefusals) {
  const std::string dir = gbtest::decoder_model("llama_tiny");
  auto ex = run_cli(dir + " --explain");
  ASSERT_EQ(ex.status, 0);
  auto j = nlohmann::json::parse(ex.out);
  EXPECT_EQ(j["decoder"]["layout"], "optimum");
  EXPECT_EQ(j["decoder"]["kv_heads"], 2);
  EXPECT_EQ(j["kv_cache"]["bytes_per_token"], 2 * 2 * 2 * 8 * 4);
  EXPECT_EQ(j["kv_cache"]["bytes_at_max_context"], 256 * 2 * 2 * 2 * 8 * 4);
  EXPECT_EQ(j["policy"]["stop_token_ids"]["value"], nlohmann::json::array({151645, 151643}));
  bool has_reason = false;
  for (const auto& d : j["defaults"]) has_reason |= d["field"] == "max_new_tokens" && !d["reason"].get<std::string>().empty();
  EXPECT_TRUE(has_reason);
  EXPECT_FALSE(j["warnings"].empty());
  EXPECT_NE(run_cli(dir + " 'x' --max-new-tokens 300 --json").status, 0);  // 300 > max_context 256
  EXPECT_NE(run_cli(dir + " 'x' --temperature 0 --do-sample --json").status, 0);
}

}  // namespace
