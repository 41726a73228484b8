// GenerationSession on the tiny decoders: the declared policy and its sources, load-time findings,
// and the destructive cases (max_new_tokens 0 and 1, prompt at max_context -1 / +1, EOS as the
// first token, seeded sampling on 1 and 2 threads, KV budget, NaN weights, refused layouts).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "test_models.h"

namespace {

namespace fs = std::filesystem;
using namespace glassbox;
using gbtest::decoder_model;
using gbtest::load_decoder;

SequenceInput ids_input(std::vector<uint32_t> ids, GenerationRequest r = {}) {
  SequenceInput in;
  in.prompt_ids = std::move(ids);
  in.request = std::move(r);
  return in;
}

std::vector<uint32_t> prompt_of(size_t n) {
  std::vector<uint32_t> ids;
  for (size_t i = 0; i < n; ++i) ids.push_back(static_cast<uint32_t>(100 + 37 * i));
  return ids;
}

// A copy of a model directory that a test may edit.
fs::path copy_model(const std::string& name, const std::string& tag) {
  const fs::path dst = fs::temp_directory_path() / ("glassbox_gen_" + tag + "_" + std::to_string(getpid()));
  fs::remove_all(dst);
  fs::copy(decoder_model(name), dst, fs::copy_options::recursive);
  return dst;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

TEST(GenerationPolicy, SourcesFollowTheFiles) {
  auto gen = load_decoder("llama_tiny");
  const auto& p = gen.default_policy();
  // generation_config.json eos_token_id is the list [151645, 151643]; tokenizer eos <|im_end|> = 151645.
  EXPECT_EQ(p.stop_token_ids.value, (std::vector<uint32_t>{151645, 151643}));
  EXPECT_NE(p.stop_token_ids.source.find("generation_config.json eos_token_id [151645, 151643]"), std::string::npos);
  EXPECT_NE(p.stop_token_ids.source.find("tokenizer_config.json eos_token '<|im_end|>'"), std::string::npos);
  EXPECT_EQ(p.max_context.value, 256);
  EXPECT_EQ(p.max_context.source, "config.json max_position_embeddings");
  EXPECT_FALSE(p.do_sample.value);
  EXPECT_EQ(p.do_sample.source, "glassbox default");
  EXPECT_EQ(p.max_new_tokens.value, 256);
  // Qwen's files: pad 151643 is also an eos id -> a declared warning.
  bool pad_warned = false;
  for (const auto& w : gen.warnings()) pad_warned |= w.what.find("pad token 151643") != std::string::npos;
  EXPECT_TRUE(pad_warned);
  auto gpt2 = load_decoder("gpt2_tiny");
  EXPECT_EQ(gpt2.default_policy().max_context.source, "config.json n_positions");
  EXPECT_EQ(gpt2.default_policy().max_context.value, 128);
  // generation_config.json eos_token_id and tokenizer_config.json eos_token '</s>' name the same id.
  const auto eos = gpt2.tokenizer().token_to_id("</s>");
  ASSERT_TRUE(eos.has_value());
  EXPECT_EQ(gpt2.default_policy().stop_token_ids.value, (std::vector<uint32_t>{*eos}));
}

TEST(GenerationPolicy, PrecedenceRequestOverGlassboxJsonOverGenerationConfig) {
  const auto dir = copy_model("gpt2_tiny", "precedence");
  write(dir / "generation_config.json", R"({"eos_token_id": 2, "do_sample": true, "top_k": 20, "temperature": 0.7})");
  write(dir / "glassbox.json", R"({"generation": {"top_k": 5, "max_new_tokens": 9, "stop_strings": ["\n\n"]}})");
  auto gen = GenerationSession::load(dir.string(), {});
  ASSERT_TRUE(gen.ok()) << gen.error().to_string();
  const auto& p = gen->default_policy();
  EXPECT_TRUE(p.do_sample.value);
  EXPECT_EQ(p.do_sample.source, "generation_config.json do_sample");
  EXPECT_EQ(p.top_k.value, 5);
  EXPECT_EQ(p.top_k.source, "glassbox.json generation.top_k");
  EXPECT_DOUBLE_EQ(p.temperature.value, 0.7);
  EXPECT_EQ(p.max_new_tokens.source, "glassbox.json generation.max_new_tokens");
  GenerationRequest r;
  r.source = "flag";
  r.top_k = 3;
  r.stop_strings = {"END"};
  auto q = gen->resolve(r);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->top_k.value, 3);
  EXPECT_EQ(q->top_k.source, "flag --top-k");
  EXPECT_EQ(q->stop_strings.value, (std::vector<std::string>{"\n\n", "END"}));
  // A field glassbox.json may not hold is refused by name.
  write(dir / "glassbox.json", R"({"generation": {"top_kk": 5}})");
  auto bad = GenerationSession::load(dir.string(), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().what.find("generation.top_kk"), std::string::npos);
  fs::remove_all(dir);
}

TEST(GenerationPolicy, StopIdOutsideTheVocabularyIsAnError) {
  auto gen = load_decoder("gpt2_tiny");
  GenerationRequest r;
  r.stop_token_ids = {21022};
  auto q = gen.resolve(r);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.error().what.find("21022 is outside the vocabulary (21022"), std::string::npos) << q.error().to_string();
  const auto dir = copy_model("gpt2_tiny", "noeos");
  write(dir / "generation_config.json", R"({"eos_token_id": 99999})");
  auto bad = GenerationSession::load(dir.string(), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().to_string().find("generation_config.json eos_token_id"), std::string::npos);
  // No EOS anywhere: a declared warning, not a silent endless generation.
  write(dir / "generation_config.json", R"({})");
  write(dir / "config.json", R"({"model_type": "gpt2", "vocab_size": 21022, "n_positions": 128})");
  write(dir / "tokenizer_config.json", R"({})");
  auto none = GenerationSession::load(dir.string(), {});
  ASSERT_TRUE(none.ok()) << none.error().to_string();
  bool warned = false;
  for (const auto& w : none->warnings()) warned |= w.what.find("declares no EOS") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_TRUE(none->default_policy().stop_token_ids.value.empty());
  fs::remove_all(dir);
}

TEST(GenerationSession, MaxNewTokensZeroAndOne) {
  auto gen = load_decoder("gpt2_tiny");
  GenerationRequest r;
  r.max_new_tokens = 0;
  auto zero = gen.generate(ids_input(prompt_of(5), r));
  ASSERT_TRUE(zero.ok()) << zero.error().to_string();
  EXPECT_EQ(zero->finish_reason, FinishReason::kLength);
  EXPECT_TRUE(zero->token_ids.empty());
  EXPECT_EQ(zero->text, "");
  EXPECT_EQ(zero->prompt_tokens, 5);
  EXPECT_EQ(zero->kv_reserved_bytes, 0);
  r.max_new_tokens = 1;
  auto one = gen.generate(ids_input(prompt_of(5), r));
  ASSERT_TRUE(one.ok()) << one.error().to_string();
  EXPECT_EQ(one->token_ids.size(), 1u);
  EXPECT_EQ(one->completion_tokens, 1);
  EXPECT_EQ(one->kv_capacity_tokens, 6);
  EXPECT_EQ(one->kv_reserved_bytes, 6 * gen.decoder().kv_bytes_per_token);
  EXPECT_EQ(gen.kv_reserved_bytes(), 0);  // freed with the result
  if (one->finish_reason != FinishReason::kStop) {
    EXPECT_EQ(one->finish_reason, FinishReason::kLength);
  }
}

TEST(GenerationSession, PromptAtTheContextEdges) {
  auto gen = load_decoder("gpt2_tiny");  // max_context 128 (config.json n_positions)
  GenerationRequest r;
  r.max_new_tokens = 1;
  auto fits = gen.generate(ids_input(prompt_of(127), r));
  ASSERT_TRUE(fits.ok()) << fits.error().to_string();
  EXPECT_EQ(fits->completion_tokens, 1);
  auto full = gen.generate(ids_input(prompt_of(128), r));
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.error().what.find("prompt 128 tokens + max_new_tokens 1 (request) = 129 > max_context 128 (config.json n_positions)"),
            std::string::npos) << full.error().to_string();
  auto over = gen.generate(ids_input(prompt_of(129)));
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().what.find("prompt 129 tokens"), std::string::npos) << over.error().to_string();
  // The default max_new_tokens (256) is capped to the room left, and says so.
  auto near = gen.generate(ids_input(prompt_of(125)));
  ASSERT_TRUE(near.ok()) << near.error().to_string();
  EXPECT_EQ(near->policy.max_new_tokens.value, 3);
  EXPECT_NE(near->policy.max_new_tokens.source.find("capped at max_context 128 - prompt 125"), std::string::npos);
  EXPECT_LE(near->completion_tokens, 3);
  // An explicit max_context option wins over config.json, with its source.
  GenerationOptions o;
  o.max_context = 16;
  auto small = load_decoder("gpt2_tiny", o);
  EXPECT_EQ(small.default_policy().max_context.source, "option max_context");
  r.max_new_tokens = 7;
  auto refused = small.generate(ids_input(prompt_of(10), r));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().what.find("= 17 > max_context 16 (option max_context)"), std::string::npos) << refused.error().to_string();
}

TEST(GenerationSession, EosAsTheFirstToken) {
  auto gen = load_decoder("gpt2_tiny");
  GenerationRequest r;
  r.max_new_tokens = 1;
  auto first = gen.generate(ids_input(prompt_of(4), r));
  ASSERT_TRUE(first.ok());
  const uint32_t t = first->token_ids.at(0);
  GenerationRequest stop;
  stop.max_new_tokens = 10;
  stop.stop_token_ids = {t};
  auto r2 = gen.generate(ids_input(prompt_of(4), stop));
  ASSERT_TRUE(r2.ok()) << r2.error().to_string();
  EXPECT_EQ(r2->finish_reason, FinishReason::kStop);
  EXPECT_EQ(r2->stop_token, t);
  EXPECT_EQ(r2->token_ids, std::vector<uint32_t>{t});
  EXPECT_EQ(r2->text, "");
  EXPECT_NE(r2->policy.stop_token_ids.source.find("request [" + std::to_string(t) + "]"), std::string::npos);
}

std::vector<uint32_t> sample_tokens(int threads, uint64_t seed) {
  GenerationOptions o;
  o.session.threads = threads;
  auto gen = load_decoder("gpt2_tiny", o);
  GenerationRequest r;
  r.do_sample = true;
  r.temperature = 1.5;  // a flat distribution: many tokens are likely, so a wrong draw shows
  r.seed = seed;
  r.max_new_tokens = 24;
  auto out = gen.generate(ids_input(prompt_of(6), r));
  EXPECT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(out->policy.seed.source, "request");
  return out.ok() ? out->token_ids : std::vector<uint32_t>{};
}

TEST(GenerationSession, SeededSamplingIsReproducibleOnAnyThreadCount) {
  const auto a = sample_tokens(1, 1234);
  const auto b = sample_tokens(2, 1234);
  const auto c = sample_tokens(1, 1235);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(GenerationSession, RandomSeedIsReported) {
  auto gen = load_decoder("gpt2_tiny");
  GenerationRequest r;
  r.do_sample = true;
  r.max_new_tokens = 8;
  auto out = gen.generate(ids_input(prompt_of(3), r));
  ASSERT_TRUE(out.ok());
  EXPECT_NE(out->policy.seed.source.find("drawn at random"), std::string::npos);
  r.seed = out->policy.seed.value;  // the reported seed reproduces the sample
  auto again = gen.generate(ids_input(prompt_of(3), r));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->token_ids, out->token_ids);
}

TEST(GenerationSession, KvBudgetRefusesAdmission) {
  GenerationOptions o;
  auto probe = load_decoder("gpt2_tiny");
  const int64_t per_token = probe.decoder().kv_bytes_per_token;
  EXPECT_EQ(per_token, 2 * 2 * 4 * 8 * 4);  // K+V x layers x kv_heads x head_dim x fp32
  o.kv_budget_bytes = 20 * per_token;
  auto gen = load_decoder("gpt2_tiny", o);
  GenerationRequest r;
  r.max_new_tokens = 16;
  auto refused = gen.prefill({ids_input(prompt_of(5), r)});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(refused.error().what.find("reserve " + std::to_string(21 * per_token) + " bytes"), std::string::npos)
      << refused.error().to_string();
  r.max_new_tokens = 15;
  auto ok = gen.prefill({ids_input(prompt_of(5), r)});
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  EXPECT_EQ(gen.kv_reserved_bytes(), 20 * per_token);
  gen.cancel(ok->front());
  EXPECT_EQ(gen.kv_reserved_bytes(), 0);
}

// prefill_chunk_tokens must be >= 1: 0 and negatives are refused at load, by name.
TEST(GenerationSession, PrefillChunkOfZeroTokensIsRefusedByName) {
  for (int64_t bad : {int64_t{0}, int64_t{-3}}) {
    GenerationOptions o;
    o.prefill_chunk_tokens = bad;
    auto s = GenerationSession::load(decoder_model("gpt2_tiny"), o);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(s.error().what.find("prefill_chunk_tokens is " + std::to_string(bad)), std::string::npos) << s.error().to_string();
  }
}

// A chunked prefill that fails admits nothing and holds no KV (all or none, as one run).
TEST(GenerationSession, ChunkedPrefillReadsLogitsOnlyAfterTheLastChunk) {
  GenerationOptions o;
  o.prefill_chunk_tokens = 2;
  auto gen = load_decoder("gpt2_tiny_nan", o);
  GenerationRequest r;
  r.max_new_tokens = 4;
  auto ids = gen.prefill({ids_input(prompt_of(5), r)});  // 3 runs: 2 + 2 + 1 tokens; logits only after the last
  ASSERT_TRUE(ids.ok()) << ids.error().to_string();
  auto res = gen.take_result(ids->front());
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->finish_reason, FinishReason::kError);
  EXPECT_NE(res->error.find("non-finite logits at step 0 (the prefill)"), std::string::npos) << res->error;
  EXPECT_EQ(gen.kv_reserved_bytes(), 0);
}

TEST(GenerationSession, NonFiniteLogitsAreReportedWithTheStep) {
  auto gen = load_decoder("gpt2_tiny_nan");
  GenerationRequest r;
  r.max_new_tokens = 4;
  auto out = gen.generate(ids_input(prompt_of(3), r));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().what.find("non-finite logits at step 0 (the prefill)"), std::string::npos) << out.error().to_string();
  // Through prefill/step the sequence finishes with finish_reason error and the same message.
  auto ids = gen.prefill({ids_input(prompt_of(3), r)});
  ASSERT_TRUE(ids.ok());
  auto res = gen.take_result(ids->front());
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->finish_reason, FinishReason::kError);
  EXPECT_NE(res->error.find("NaN"), std::string::npos);
}

TEST(GenerationSession, NonDecoderModelsAreRefusedByName) {
  const fs::path dir = fs::temp_directory_path() / ("glassbox_gen_langid_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::copy(fs::path(GLASSBOX_SOURCE_DIR) / "models" / "langid", dir, fs::copy_options::recursive);
  auto gen = GenerationSession::load(dir.string(), {});
  ASSERT_FALSE(gen.ok());
  EXPECT_EQ(gen.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(gen.error().fix.find("past_key_values.{i}.key/value"), std::string::npos) << gen.error().to_string();
  fs::remove(dir / "model.onnx");
  write(dir / "genai_config.json", "{}");
  auto genai = GenerationSession::load(dir.string(), {});
  ASSERT_FALSE(genai.ok());
  // onnxruntime-genai's layout is read from genai_config.json (genai_config_test.cpp); one without a decoder file is refused.
  EXPECT_NE(genai.error().what.find("genai_config.json has no model.decoder.filename"), std::string::npos) << genai.error().to_string();
  fs::remove_all(dir);
}

TEST(GenerationSession, StopStringSplitAcrossGeneratedTokens) {
  auto gen = load_decoder("gpt2_tiny");
  GenerationRequest r;
  r.max_new_tokens = 24;
  auto free_run = gen.generate(ids_input(prompt_of(5), r));
  ASSERT_TRUE(free_run.ok()) << free_run.error().to_string();
  const std::string full = free_run->text;
  const auto& ids = free_run->token_ids;
  // A 4-byte ASCII stop string that starts 2 bytes before a token boundary and first occurs there.
  std::string stop;
  size_t cut = 0, k = 1;
  for (; k < ids.size() && stop.empty(); ++k) {
    const std::string prefix = gen.tokenizer().decode(std::vector<uint32_t>(ids.begin(), ids.begin() + static_cast<long>(k)), true).value();
    if (prefix.size() < 2 || prefix.size() + 2 > full.size() || full.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string cand = full.substr(prefix.size() - 2, 4);
    if (std::all_of(cand.begin(), cand.end(), [](char c) { return c > 0x20 && c < 0x7f; }) && full.find(cand) == prefix.size() - 2) {
      stop = cand;
      cut = prefix.size() - 2;
    }
  }
  ASSERT_FALSE(stop.empty()) << "no ASCII boundary in: " << full;
  r.stop_strings = {stop};
  std::string streamed;
  auto stopped = gen.generate(ids_input(prompt_of(5), r), [&](const std::string& t) { streamed += t; });
  ASSERT_TRUE(stopped.ok()) << stopped.error().to_string();
  EXPECT_EQ(stopped->finish_reason, FinishReason::kStop);
  EXPECT_EQ(stopped->stop_string, stop);
  EXPECT_EQ(stopped->text, full.substr(0, cut));
  EXPECT_EQ(streamed, stopped->text);
  EXPECT_EQ(stopped->token_ids.size(), k);  // it ended with the token that completed the stop string
}

TEST(GenerationSession, TextPromptStreamsTheSameTextAsTheResult) {
  auto gen = load_decoder("llama_tiny");
  SequenceInput in;
  in.prompt = "The capital of France is";
  in.request.max_new_tokens = 12;
  std::string streamed;
  auto out = gen.generate(in, [&](const std::string& t) { streamed += t; });
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(streamed, out->text);
  EXPECT_GT(out->prompt_tokens, 3);
  EXPECT_EQ(out->completion_tokens, static_cast<int64_t>(out->token_ids.size()));
  EXPECT_GE(out->ttft_ms, 0.0);
}

}  // namespace

// The LM head runs on each sequence's last position only (SessionOptions::last_position_outputs, which the
// generation session sets): in every layout whose head is a MatMul / MatMulNBits; a head quantized with a
// per-tensor activation scale (taken over every position) is kept whole, and the pass log says why. The
// parity tests (parity_test.cpp) show the logits read are ORT's, whole-output, last-position values.
TEST(GenerationSession, LmHeadRunsOnTheLastPositionOnly) {
  for (const char* name : {"llama_tiny", "gpt2_tiny", "llama_tiny_merged", "gpt2_tiny_merged", "llama_tiny_q4",
                           "gpt2_tiny_merged_q4", "llama_tiny_genai", "llama_tiny_int8"}) {
    auto gen = load_decoder(name);
    std::string log;
    for (const auto& e : gen.session().pass_log())
      if (e.pass == "last_position_outputs") log += e.message + "\n";
    int64_t positions = 0;
    for (const auto& o : gen.session().outputs())
      if (o.name == "logits") positions = o.dims.at(1);
    if (std::string(name) == "llama_tiny_int8") {
      EXPECT_NE(log.find("'logits' kept at every position: "), std::string::npos) << name << ":\n" << log;
      EXPECT_EQ(positions, -1) << name;
    } else {
      EXPECT_NE(log.find("'logits' for the last position only"), std::string::npos) << name << ":\n" << log;
      EXPECT_EQ(positions, 1) << name;
    }
  }
}
