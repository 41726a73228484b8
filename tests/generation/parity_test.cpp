// Generation parity with onnxruntime-node: tests/generation/decoder_reference.js (ctest fixture
// generation_reference) ran each model's model.onnx in a plain greedy loop feeding present -> past
// and wrote every step's logits and tokens. glassbox runs the same token-id prompts through
// GenerationSession (one prefill for the batch, then steps) and must give, at every step and for
// every sequence, logits within 1e-4 of ORT's relative to the row's scale (max|ref|, at least 1)
// and the same greedy token. The chunked-prefill cases run the prompts in chunks of 1, 7 and the
// longest prompt's length (prefill_chunk_tokens), and interleave one sequence's chunks with another's
// decode steps through admit() / prefill_chunk() as the server does; ORT's reference is one
// unchunked prefill run, so equal logits show a chunked prefill computes the same thing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "glassbox/tensor_io.h"
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

// Row-scaled error: max |a - ref| / max(max |ref|, 1).
double row_error(const float* a, const float* ref, int64_t V) {
  double max_diff = 0, scale = 1;
  for (int64_t v = 0; v < V; ++v) {
    max_diff = std::max(max_diff, std::abs(static_cast<double>(a[v]) - ref[v]));
    scale = std::max(scale, std::abs(static_cast<double>(ref[v])));
  }
  return max_diff / scale;
}

// ORT's own int8 error: its quantized model's step-0 logits (the prefill, same inputs) against its
// fp32 model's, worst over the batch. Later steps are not compared: the contexts may differ.
double ort_quantization_error(const std::string& quantized, const std::string& fp32, const std::string& case_name) {
  auto q = runtime::read_npy((fs::path(GLASSBOX_DECODER_REFERENCE) / quantized / (case_name + ".logits.npy")).string());
  auto f = runtime::read_npy((fs::path(GLASSBOX_DECODER_REFERENCE) / fp32 / (case_name + ".logits.npy")).string());
  EXPECT_TRUE(q.ok() && f.ok() && q->shape() == f->shape());
  if (!q.ok() || !f.ok() || q->shape() != f->shape()) return 0;
  const int64_t B = q->shape()[1], V = q->shape()[2];
  double worst = 0;
  for (int64_t b = 0; b < B; ++b) worst = std::max(worst, row_error(q->data<float>() + b * V, f->data<float>() + b * V, V));
  return worst;
}

// Runs the case's prompts greedily through glassbox; rows[b][s] = sequence b's logits at step s.
std::vector<std::vector<std::vector<float>>> run_case(GenerationSession& gen, const Case& c,
                                                      std::vector<std::vector<uint32_t>>& tokens) {
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
  std::vector<std::vector<std::vector<float>>> rows;
  auto ids = gen.prefill(inputs);
  EXPECT_TRUE(ids.ok()) << ids.error().to_string();
  if (!ids.ok()) return rows;
  for (int64_t s = 1; s < c.steps; ++s) {
    auto ev = gen.step();
    EXPECT_TRUE(ev.ok()) << "step " << s << ": " << ev.error().to_string();
    if (!ev.ok()) return rows;
    EXPECT_EQ(static_cast<int64_t>(ev->size()), static_cast<int64_t>(c.prompts.size()));
  }
  EXPECT_TRUE(gen.active().empty());
  for (SequenceId id : *ids) {
    auto r = gen.take_result(id);
    EXPECT_TRUE(r.ok());
    if (!r.ok()) return {};
    EXPECT_EQ(r->finish_reason, FinishReason::kLength) << r->error;
    tokens.push_back(r->token_ids);
    rows.push_back(std::move(seen[id]));
  }
  return rows;
}

// fp32_reference: for a quantized model, the fp32 model whose ORT logits give ORT's own int8 error,
// the tolerance (at least kTolerance); empty: kTolerance.
// chunk: prefill_chunk_tokens (0: the default).
void check_model(const std::string& name, int threads, const std::string& fp32_reference = "", int64_t chunk = 0) {
  const fs::path ref_dir = fs::path(GLASSBOX_DECODER_REFERENCE) / name;
  GenerationOptions opts;
  opts.session.threads = threads;
  if (chunk > 0) opts.prefill_chunk_tokens = chunk;
  auto gen = gbtest::load_decoder(name, opts);
  const int64_t V = gen.decoder().vocab_size;
  const auto& stops = gen.default_policy().stop_token_ids.value;
  const auto cases = read_cases(ref_dir);
  ASSERT_EQ(cases.size(), 3u);
  for (const auto& c : cases) {
    SCOPED_TRACE(name + " " + c.name + " threads " + std::to_string(threads) + " prefill chunk " + std::to_string(chunk));
    auto ref_logits = runtime::read_npy((ref_dir / (c.name + ".logits.npy")).string());
    auto ref_tokens = runtime::read_npy((ref_dir / (c.name + ".tokens.npy")).string());
    ASSERT_TRUE(ref_logits.ok() && ref_tokens.ok());
    const int64_t B = static_cast<int64_t>(c.prompts.size());
    ASSERT_EQ(ref_logits->shape(), (Shape{c.steps, B, V}));
    // The reference never stops; a stop token in it would end glassbox's sequence early.
    for (int64_t i = 0; i < ref_tokens->numel(); ++i)
      ASSERT_EQ(std::count(stops.begin(), stops.end(), static_cast<uint32_t>(ref_tokens->data<int64_t>()[i])), 0)
          << "the reference generated a stop token: change the case's prompt";
    const double ort_error = fp32_reference.empty() ? 0 : ort_quantization_error(name, fp32_reference, c.name);
    const double tolerance = std::max(kTolerance, ort_error);
    std::vector<std::vector<uint32_t>> tokens;
    const auto rows = run_case(gen, c, tokens);
    ASSERT_EQ(static_cast<int64_t>(rows.size()), B);
    double worst = 0;
    for (int64_t b = 0; b < B; ++b) {
      ASSERT_EQ(static_cast<int64_t>(rows[b].size()), c.steps);
      ASSERT_EQ(static_cast<int64_t>(tokens[b].size()), c.steps);
      for (int64_t s = 0; s < c.steps; ++s) {
        const double e = row_error(rows[b][s].data(), ref_logits->data<float>() + (s * B + b) * V, V);
        worst = std::max(worst, e);
        ASSERT_LE(e, tolerance) << "sequence " << b << " step " << s;
        ASSERT_EQ(tokens[b][s], static_cast<uint32_t>(ref_tokens->data<int64_t>()[s * B + b])) << "sequence " << b << " step " << s;
      }
    }
    std::cout << name << " " << c.name << (chunk > 0 ? " prefill chunk " + std::to_string(chunk) : "") << ": " << c.steps << " steps x " << B << " sequences, worst logits error "
              << worst << " relative (tolerance " << tolerance;
    if (!fp32_reference.empty()) std::cout << ": ORT's own int8-vs-fp32 error at the prefill " << ort_error;
    std::cout << "), tokens identical\n";
  }
}

TEST(GenerationParity, LlamaStyleMatchesOnnxRuntime) { check_model("llama_tiny", 1); }
// scripts/train_decoder.py's llama_text: trained weights (peaked, text-like logits) through the in-place KV cache.
TEST(GenerationParity, LlamaStyleTrainedMatchesOnnxRuntime) { check_model("llama_text", 1); }
TEST(GenerationParity, Gpt2StyleMatchesOnnxRuntime) { check_model("gpt2_tiny", 1); }
TEST(GenerationParity, Gpt2StyleMatchesOnnxRuntimeOnTwoThreads) { check_model("gpt2_tiny", 2); }
// Optimum's legacy merged layout (decoder_model_merged.onnx: If on use_cache_branch).
TEST(GenerationParity, LlamaStyleLegacyMergedMatchesOnnxRuntime) { check_model("llama_tiny_merged", 1); }
TEST(GenerationParity, Gpt2StyleLegacyMergedMatchesOnnxRuntime) { check_model("gpt2_tiny_merged", 1); }
// ORT quantize_dynamic's int8 form (DynamicQuantizeLinear + MatMulInteger), current and merged layouts.
TEST(GenerationParity, LlamaStyleInt8MatchesOnnxRuntime) { check_model("llama_tiny_int8", 1, "llama_tiny"); }
TEST(GenerationParity, Gpt2StyleInt8MatchesOnnxRuntime) { check_model("gpt2_tiny_int8", 1, "gpt2_tiny"); }
TEST(GenerationParity, LlamaStyleLegacyMergedInt8MatchesOnnxRuntime) { check_model("llama_tiny_merged_int8", 1, "llama_tiny"); }
TEST(GenerationParity, Gpt2StyleLegacyMergedInt8MatchesOnnxRuntime) { check_model("gpt2_tiny_merged_int8", 1, "gpt2_tiny"); }
// q4 MatMulNBits (block 32, symmetric, accuracy_level unset: ORT computes in fp32 too), current and merged layouts.
TEST(GenerationParity, LlamaStyleQ4MatchesOnnxRuntime) { check_model("llama_tiny_q4", 1); }
TEST(GenerationParity, Gpt2StyleQ4MatchesOnnxRuntime) { check_model("gpt2_tiny_q4", 1); }
TEST(GenerationParity, LlamaStyleLegacyMergedQ4MatchesOnnxRuntime) { check_model("llama_tiny_merged_q4", 1); }
TEST(GenerationParity, Gpt2StyleLegacyMergedQ4MatchesOnnxRuntime) { check_model("gpt2_tiny_merged_q4", 1); }
// onnxruntime-genai's builder layout (genai_config.json; GroupQueryAttention with rotary, no position_ids:
// the batch-2 case runs each prompt alone on both sides).
TEST(GenerationParity, LlamaStyleGenaiLayoutMatchesOnnxRuntime) { check_model("llama_tiny_genai", 1); }

// The longest prompt of the cases (decoder_reference.js): 11 tokens (b1_long); 9 in b2_mixed.
constexpr int64_t kLongestPrompt = 11;

TEST(GenerationParity, LlamaStyleChunkedPrefillMatchesOnnxRuntime) {
  for (int64_t chunk : {int64_t{1}, int64_t{7}, kLongestPrompt}) check_model("llama_tiny", 1, "", chunk);
}
TEST(GenerationParity, Gpt2StyleChunkedPrefillMatchesOnnxRuntime) {
  for (int64_t chunk : {int64_t{1}, int64_t{7}, kLongestPrompt}) check_model("gpt2_tiny", 1, "", chunk);
}
// The legacy merged layout switches branches on use_cache_branch: the first chunk has no past, the next ones do.
TEST(GenerationParity, LlamaStyleLegacyMergedChunkedPrefillMatchesOnnxRuntime) { check_model("llama_tiny_merged", 1, "", 7); }
TEST(GenerationParity, Gpt2StyleLegacyMergedChunkedPrefillMatchesOnnxRuntime) { check_model("gpt2_tiny_merged", 1, "", 1); }

// The server's order: sequence 0 (4 tokens) is prefilled and decoding when sequence 1 (9 tokens)
// arrives; each of sequence 1's chunks of 3 is followed by a decode step of sequence 0 alone, then
// both step together. Every logits row of each sequence matches ORT's b2_mixed reference.
void check_interleaved(const std::string& name) {
  SCOPED_TRACE(name);
  const fs::path ref_dir = fs::path(GLASSBOX_DECODER_REFERENCE) / name;
  const auto cases = read_cases(ref_dir);
  auto it = std::find_if(cases.begin(), cases.end(), [](const Case& c) { return c.name == "b2_mixed"; });
  ASSERT_NE(it, cases.end());
  const Case& c = *it;
  ASSERT_EQ(c.prompts.size(), 2u);
  ASSERT_EQ(c.prompts[0].size(), 4u);
  ASSERT_EQ(c.prompts[1].size(), 9u);
  auto ref_logits = runtime::read_npy((ref_dir / "b2_mixed.logits.npy").string());
  auto ref_tokens = runtime::read_npy((ref_dir / "b2_mixed.tokens.npy").string());
  ASSERT_TRUE(ref_logits.ok() && ref_tokens.ok());
  GenerationOptions opts;
  opts.prefill_chunk_tokens = 3;
  auto gen = gbtest::load_decoder(name, opts);
  const int64_t V = gen.decoder().vocab_size;
  std::map<SequenceId, std::vector<std::vector<float>>> seen;
  gen.set_logits_observer([&](SequenceId id, int64_t, std::span<const float> row) { seen[id].emplace_back(row.begin(), row.end()); });
  auto input = [&](size_t b) {
    SequenceInput in;
    in.prompt_ids = c.prompts[b];
    in.request.max_new_tokens = c.steps;
    in.request.do_sample = false;
    return in;
  };
  auto first = gen.admit({input(0)});
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  const SequenceId a = first->front();
  EXPECT_EQ(gen.prefilling(), std::vector<SequenceId>{a});
  EXPECT_TRUE(gen.active().empty());
  auto refused = gen.step(std::span<const SequenceId>(&a, 1));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().what.find("still prefilling (4 prompt tokens left)"), std::string::npos) << refused.error().what;
  auto ev = gen.prefill_chunk();  // 3 of 4: no token yet
  ASSERT_TRUE(ev.ok()) << ev.error().to_string();
  EXPECT_TRUE(ev->empty());
  EXPECT_EQ(gen.prefill_remaining(a), 1);
  ev = gen.prefill_chunk();  // the last one: the first token
  ASSERT_TRUE(ev.ok());
  ASSERT_EQ(ev->size(), 1u);
  EXPECT_TRUE((*ev)[0].token.has_value());
  EXPECT_EQ(gen.active(), std::vector<SequenceId>{a});
  auto second = gen.admit({input(1)});
  ASSERT_TRUE(second.ok());
  const SequenceId b = second->front();
  int64_t chunks = 0;
  while (gen.prefill_remaining(b) > 0) {
    ev = gen.prefill_chunk();
    ASSERT_TRUE(ev.ok()) << ev.error().to_string();
    ++chunks;
    ev = gen.step();  // only a: b is still prefilling or just got its first token from the chunk
    ASSERT_TRUE(ev.ok()) << ev.error().to_string();
    if (gen.prefill_remaining(b) > 0) {
      ASSERT_EQ(ev->size(), 1u);
      EXPECT_EQ((*ev)[0].id, a);
    }
  }
  EXPECT_EQ(chunks, 3);
  while (!gen.active().empty()) ASSERT_TRUE(gen.step().ok());
  const int64_t B = 2;
  for (int64_t i = 0; i < B; ++i) {
    const SequenceId id = i == 0 ? a : b;
    auto r = gen.take_result(id);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(static_cast<int64_t>(r->token_ids.size()), c.steps);
    ASSERT_EQ(static_cast<int64_t>(seen[id].size()), c.steps);
    for (int64_t s = 0; s < c.steps; ++s) {
      EXPECT_LE(row_error(seen[id][s].data(), ref_logits->data<float>() + (s * B + i) * V, V), kTolerance) << "sequence " << i << " step " << s;
      EXPECT_EQ(r->token_ids[s], static_cast<uint32_t>(ref_tokens->data<int64_t>()[s * B + i])) << "sequence " << i << " step " << s;
    }
  }
  EXPECT_EQ(gen.kv_reserved_bytes(), 0);
}

TEST(GenerationParity, LlamaStyleInterleavedChunkedPrefillMatchesOnnxRuntime) { check_interleaved("llama_tiny"); }
TEST(GenerationParity, Gpt2StyleInterleavedChunkedPrefillMatchesOnnxRuntime) { check_interleaved("gpt2_tiny"); }

}  // namespace
