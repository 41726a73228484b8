// Generation parity with onnxruntime-node: tests/generation/decoder_reference.js (ctest fixture
// generation_reference) ran each model's model.onnx in a plain greedy loop feeding present -> past
// and wrote every step's logits and tokens. glassbox runs the same token-id prompts through
// GenerationSession (one prefill for the batch, then steps) and must give, at every step and for
// every sequence, logits within 1e-4 of ORT's relative to the row's scale (max|ref|, at least 1)
// and the same greedy token.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "runtime/tensor_io.h"
#include "test_models.h"

namespace {

namespace fs = std::filesystem;
using namespace glassbox;

constexpr double kTolerance = 1e-4;

struct Case {
  std::string name;
  std::vector<std::vector<uint32_t>> prompts;
  int64_t steps = 0;
};

std::vector<Case> read_cases(const fs::path& dir) {
  std::ifstream in(dir / "cases.json");
  EXPECT_TRUE(in.good()) << (dir / "cases.json") << " is missing: ctest runs the fixture generation_reference";
  std::vector<Case> cases;
  if (!in) return cases;
  for (const auto& c : nlohmann::json::parse(in)) cases.push_back({c["name"], c["prompts"], c["steps"]});
  return cases;
}

void check_model(const std::string& name, int threads) {
  const fs::path ref_dir = fs::path(GLASSBOX_DECODER_REFERENCE) / name;
  GenerationOptions opts;
  opts.session.threads = threads;
  auto gen = gbtest::load_decoder(name, opts);
  const int64_t V = gen.decoder().vocab_size;
  const auto& stops = gen.default_policy().stop_token_ids.value;
  const auto cases = read_cases(ref_dir);
  ASSERT_EQ(cases.size(), 3u);
  for (const auto& c : cases) {
    SCOPED_TRACE(name + " " + c.name + " threads " + std::to_string(threads));
    auto ref_logits = runtime::read_npy((ref_dir / (c.name + ".logits.npy")).string());
    auto ref_tokens = runtime::read_npy((ref_dir / (c.name + ".tokens.npy")).string());
    ASSERT_TRUE(ref_logits.ok() && ref_tokens.ok());
    const int64_t B = static_cast<int64_t>(c.prompts.size());
    ASSERT_EQ(ref_logits->shape(), (Shape{c.steps, B, V}));
    // The reference never stops; a stop token in it would end glassbox's sequence early.
    for (int64_t i = 0; i < ref_tokens->numel(); ++i)
      ASSERT_EQ(std::count(stops.begin(), stops.end(), static_cast<uint32_t>(ref_tokens->data<int64_t>()[i])), 0)
          << "the reference generated a stop token: change the case's prompt";
    std::map<SequenceId, std::vector<std::vector<float>>> seen;
    gen.set_logits_observer([&](SequenceId id, int64_t step, std::span<const float> row) {
      EXPECT_EQ(static_cast<int64_t>(seen[id].size()), step);
      seen[id].emplace_back(row.begin(), row.end());
    });
    std::vector<SequenceInput> inputs;
    for (const auto& p : c.prompts) {
      SequenceInput in;
      in.prompt_ids = p;
      in.request.max_new_tokens = c.steps;
      in.request.do_sample = false;
      inputs.push_back(in);
    }
    auto ids = gen.prefill(inputs);
    ASSERT_TRUE(ids.ok()) << ids.error().to_string();
    for (int64_t s = 1; s < c.steps; ++s) {
      auto ev = gen.step();
      ASSERT_TRUE(ev.ok()) << "step " << s << ": " << ev.error().to_string();
      ASSERT_EQ(static_cast<int64_t>(ev->size()), B);
    }
    EXPECT_TRUE(gen.active().empty());
    double worst = 0;
    for (int64_t b = 0; b < B; ++b) {
      auto r = gen.take_result((*ids)[b]);
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(r->finish_reason, FinishReason::kLength);
      const auto& rows = seen[(*ids)[b]];
      ASSERT_EQ(static_cast<int64_t>(rows.size()), c.steps);
      ASSERT_EQ(static_cast<int64_t>(r->token_ids.size()), c.steps);
      for (int64_t s = 0; s < c.steps; ++s) {
        const float* ref = ref_logits->data<float>() + (s * B + b) * V;
        double max_diff = 0, scale = 1;
        for (int64_t v = 0; v < V; ++v) {
          max_diff = std::max(max_diff, std::abs(static_cast<double>(rows[s][v]) - ref[v]));
          scale = std::max(scale, std::abs(static_cast<double>(ref[v])));
        }
        worst = std::max(worst, max_diff / scale);
        ASSERT_LE(max_diff / scale, kTolerance) << "sequence " << b << " step " << s;
        ASSERT_EQ(r->token_ids[s], static_cast<uint32_t>(ref_tokens->data<int64_t>()[s * B + b]))
            << "sequence " << b << " step " << s;
      }
    }
    std::cout << name << " " << c.name << ": " << c.steps << " steps x " << B << " sequences, worst logits error "
              << worst << " relative, tokens identical\n";
  }
}

TEST(GenerationParity, LlamaStyleMatchesOnnxRuntime) { check_model("llama_tiny", 1); }
TEST(GenerationParity, Gpt2StyleMatchesOnnxRuntime) { check_model("gpt2_tiny", 1); }
TEST(GenerationParity, Gpt2StyleMatchesOnnxRuntimeOnTwoThreads) { check_model("gpt2_tiny", 2); }

}  // namespace
