// `glassbox accuracy` on a decoder directory (issue 28: "glassbox accuracy reporting token agreement over N
// greedy steps and logit error per step"): on the trained Llama-style model (llama_text) with bf16 and
// int8-dynamic, the JSON report's per-prompt agreed steps and per-step logits errors equal what this test
// computes itself from two GenerationSessions (fp32 and the candidate, greedy, every step's logits observed);
// an impossible threshold fails with exit code 3 and a FAIL line; no prompts is refused naming --texts.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "glassbox/generation.h"
#include "test_models.h"

namespace {

using namespace glassbox;

// `glassbox accuracy ARGS`: its output (stderr too) and exit code.
gbtest::ShellRun accuracy(const std::string& args) {
  gbtest::ShellRun r = gbtest::shell(std::string(GLASSBOX_CLI) + " accuracy " + args + " 2>&1");
  r.status = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
  return r;
}

struct Greedy {
  std::vector<uint32_t> tokens;
  std::vector<std::vector<float>> rows;
};

Greedy greedy(const std::string& dir, Precision p, const std::string& prompt, int64_t steps) {
  GenerationOptions o;
  o.session.threads = 2;
  o.precision = p;
  auto s = GenerationSession::load(dir, o);
  EXPECT_TRUE(s.ok()) << s.error().to_string();
  Greedy g;
  if (!s.ok()) return g;
  s->set_logits_observer([&](SequenceId, int64_t, std::span<const float> row) { g.rows.emplace_back(row.begin(), row.end()); });
  SequenceInput in;
  in.prompt = prompt;
  in.request.max_new_tokens = steps;
  in.request.do_sample = false;
  auto r = s->generate(in);
  EXPECT_TRUE(r.ok());
  if (r.ok()) g.tokens = r->token_ids;
  return g;
}

TEST(GenerationAccuracyCli, AgreedStepsAndLogitErrorsPerStep) {
  const std::string dir = gbtest::decoder_model("llama_text");
  const std::vector<std::string> prompts = {"This program is free software", "You should have received a copy of"};
  const std::filesystem::path file = std::filesystem::temp_directory_path() / ("glassbox_prompts_" + std::to_string(::getpid()));
  {
    std::ofstream f(file);
    for (const auto& p : prompts) f << p << "\n";
  }
  const int64_t steps = 12;
  for (Precision candidate : {Precision::kBf16, Precision::kInt8Dynamic}) {
    SCOPED_TRACE(precision_name(candidate));
    auto r = accuracy(dir + " --precision " + precision_name(candidate) + " --texts " + file.string() + " --steps " +
                      std::to_string(steps) + " --threads 2 --max-rel-error 1 --min-token-agreement 0 --json");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
    EXPECT_EQ(j["candidate"], precision_name(candidate));
    EXPECT_EQ(j["lower_precision_ops"].size(), 15u);  // 2 layers x 7 projections + the LM head
    ASSERT_EQ(j["generation"]["prompts"].size(), prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) {
      const auto& got = j["generation"]["prompts"][i];
      const Greedy a = greedy(dir, Precision::kFp32, prompts[i], steps), b = greedy(dir, candidate, prompts[i], steps);
      int64_t agreed = 0;
      std::vector<double> errors;
      for (size_t s = 0; s < a.tokens.size() && s < b.tokens.size(); ++s) {
        double diff = 0, scale = 0;
        for (size_t v = 0; v < a.rows[s].size(); ++v) {
          diff = std::max(diff, std::fabs(double(b.rows[s][v]) - a.rows[s][v]));
          scale = std::max(scale, std::fabs(double(a.rows[s][v])));
        }
        errors.push_back(diff / scale);
        if (a.tokens[s] != b.tokens[s]) break;
        ++agreed;
      }
      EXPECT_EQ(got["prompt"], prompts[i]);
      EXPECT_EQ(got["steps"].get<int64_t>(), static_cast<int64_t>(a.tokens.size()));
      EXPECT_EQ(got["agreed_steps"].get<int64_t>(), agreed);
      ASSERT_EQ(got["rel_error_per_step"].size(), errors.size());
      for (size_t s = 0; s < errors.size(); ++s) {
        EXPECT_NEAR(got["rel_error_per_step"][s].get<double>(), errors[s], 1e-9 + 1e-6 * errors[s]) << "step " << s;
        EXPECT_GT(errors[s], 0.0) << "step " << s << ": a lower precision left every logit unchanged";
      }
    }
  }
  auto strict = accuracy(dir + " --precision bf16 --texts " + file.string() + " --steps 4 --threads 2 --max-rel-error 0");
  EXPECT_EQ(strict.status, 3) << strict.out;
  EXPECT_NE(strict.out.find("FAIL: logits: max relative error"), std::string::npos) << strict.out;
  EXPECT_NE(strict.out.find("greedy tokens agree on"), std::string::npos) << strict.out;
  auto none = accuracy(dir + " --precision bf16 --threads 2");
  EXPECT_NE(none.status, 0);
  EXPECT_NE(none.out.find("--texts"), std::string::npos) << none.out;
  std::filesystem::remove(file);
}

}  // namespace
