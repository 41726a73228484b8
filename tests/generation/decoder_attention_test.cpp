// decoder_attention_fusion on the exported decoders (scripts/make_decoder_models.py): the Llama-style
// one (grouped-query attention: torch's repeat_kv Unsqueeze/Expand/Reshape) and the GPT-2-style one
// (multi-head attention) run with the pass, without it and at level 0 (the graph as written) on a
// batch of two with random pasts of 0, 1 and 5 tokens, one and four new tokens and a left-padded row:
// logits and presents agree within 1e-5 relative, and the executed graph holds one DecoderAttention
// per layer (none with the pass off). With the past-length symbols unspecialized (the generation
// session's setting) one plan serves every past length and still matches.
// kv_cache_binding (the KV cache in place): the generation session binds its sequences' caches on the Optimum
// layout (fp32, q4, int8), the legacy merged one (its If replaced by the cache branch: cache_branch_inlining) and the
// onnxruntime-genai layout (GroupQueryAttention), and copies them when a pass is disabled (explain says why); in place, every logits row of batched, chunked, left-padded generation equals the
// copying session's; a session whose past inputs are bound refuses unbound runs and wrong bindings, and a name the
// pass cannot bind binds none. The bound GroupQueryAttention's logits and cache rows equal the unbound one's
// logits and presents, and a binding that disagrees with seqlens_k is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "glassbox/generation.h"
#include "glassbox/generation_json.h"
#include "glassbox/session.h"
#include "test_models.h"

namespace {

using namespace glassbox;

Tensor ints(DataType dt, const Shape& shape, const std::vector<int64_t>& v) {
  auto t = Tensor::allocate(dt, shape);
  EXPECT_TRUE(t.ok());
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == DataType::kInt64) t->mutable_data<int64_t>()[i] = v[i];
    else t->mutable_data<int32_t>()[i] = static_cast<int32_t>(v[i]);
  }
  return std::move(t).value();
}

// Batch of 2: row 0 has the full past P, row 1 is left-padded by `pad` positions of the past.
std::vector<NamedTensor> feeds_for(const Session& s, int64_t P, int64_t S, int64_t pad, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uf(-1.f, 1.f);
  std::uniform_int_distribution<int64_t> ui(0, 1000);
  const int64_t B = 2, T = P + S;
  std::vector<NamedTensor> f;
  for (const auto& spec : s.inputs()) {
    std::vector<int64_t> v;
    if (spec.name == "input_ids") {
      for (int64_t i = 0; i < B * S; ++i) v.push_back(ui(rng));
      f.push_back({spec.name, ints(spec.dtype, {B, S}, v)});
    } else if (spec.name == "attention_mask") {
      for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < T; ++t) v.push_back(b == 1 && t < pad ? 0 : 1);
      f.push_back({spec.name, ints(spec.dtype, {B, T}, v)});
    } else if (spec.name == "position_ids") {
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < S; ++j) v.push_back(b == 1 ? std::max<int64_t>(P - pad + j, 0) : P + j);
      f.push_back({spec.name, ints(spec.dtype, {B, S}, v)});
    } else {  // past_key_values.*: [B, kv_heads, P, head_dim]
      EXPECT_EQ(spec.dims.size(), 4u) << spec.to_string();
      auto t = Tensor::allocate(DataType::kFloat32, {B, spec.dims[1], P, spec.dims[3]});
      EXPECT_TRUE(t.ok());
      for (int64_t i = 0; i < t->numel(); ++i) t->mutable_data<float>()[i] = uf(rng);
      f.push_back({spec.name, std::move(t).value()});
    }
  }
  return f;
}

double max_rel_diff(const Tensor& a, const Tensor& ref) {
  double diff = 0, scale = 1e-30;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    diff = std::max(diff, std::fabs(double(a.data<float>()[i]) - ref.data<float>()[i]));
    scale = std::max(scale, std::fabs(double(ref.data<float>()[i])));
  }
  return diff / scale;
}

int64_t layers_of(const std::string& dir) {
  std::ifstream in(dir + "/config.json");
  auto cfg = nlohmann::json::parse(in);
  return cfg.value("num_hidden_layers", cfg.value("n_layer", int64_t{0}));
}

std::vector<std::string> past_symbols(const Session& s) {
  std::vector<std::string> out;
  for (const auto& spec : s.inputs())
    if ((spec.name.rfind("past_key_values", 0) == 0 && spec.symbols.size() == 4 && !spec.symbols[2].empty()) ||
        (spec.name == "attention_mask" && spec.symbols.size() == 2 && !spec.symbols[1].empty())) {
      const std::string& sym = spec.name == "attention_mask" ? spec.symbols[1] : spec.symbols[2];
      if (std::find(out.begin(), out.end(), sym) == out.end()) out.push_back(sym);
    }
  return out;
}

TEST(DecoderAttentionFusion, MatchesTheGraphAsWrittenAndReachesTheExecutedGraph) {
  for (const char* name : {"llama_tiny", "gpt2_tiny"}) {
    SCOPED_TRACE(name);
    const std::string dir = gbtest::decoder_model(name);
    const std::string model = dir + "/model.onnx";
    const int64_t layers = layers_of(dir);
    ASSERT_GT(layers, 0);
    SessionOptions o0;
    o0.opt_level = 0;
    auto ref = Session::load(model, o0);
    ASSERT_TRUE(ref.ok()) << ref.error().to_string();
    SessionOptions off;
    off.disabled_passes = {"decoder_attention_fusion"};
    SessionOptions on;
    on.threads = 2;
    auto fused = Session::load(model, on), plain = Session::load(model, off), shared = Session::load(model, on);
    ASSERT_TRUE(fused.ok() && plain.ok() && shared.ok());
    shared->set_unspecialized_symbols(past_symbols(*shared));
    ASSERT_FALSE(past_symbols(*shared).empty());
    struct Case {
      int64_t P, S, pad;
    };
    for (const Case& c : {Case{0, 4, 1}, Case{1, 1, 1}, Case{5, 1, 3}, Case{5, 4, 2}, Case{1, 4, 0}}) {
      SCOPED_TRACE("past " + std::to_string(c.P) + ", new " + std::to_string(c.S) + ", pad " + std::to_string(c.pad));
      const auto feeds = feeds_for(*ref, c.P, c.S, c.pad, static_cast<uint32_t>(c.P * 10 + c.S));
      auto want = ref->run(feeds);
      ASSERT_TRUE(want.ok()) << want.error().to_string();
      for (Session* s : {&*fused, &*plain, &*shared}) {
        std::map<std::string, int> ops;
        auto got = s->run_observed(feeds, [&](const NodeEvent& e) {
          ops[e.op_type]++;
          return Status{};
        });
        ASSERT_TRUE(got.ok()) << got.error().to_string();
        ASSERT_EQ(got->size(), want->size());
        for (size_t k = 0; k < want->size(); ++k) {
          ASSERT_EQ((*got)[k].tensor.shape(), (*want)[k].tensor.shape()) << (*want)[k].name;
          EXPECT_LE(max_rel_diff((*got)[k].tensor, (*want)[k].tensor), 1e-5) << (*want)[k].name;
        }
        EXPECT_EQ(ops["DecoderAttention"], s == &*plain ? 0 : layers);
      }
    }
  }
}

std::vector<std::string> past_inputs(const Session& s) {
  std::vector<std::string> out;
  for (const auto& spec : s.inputs())
    if (spec.name.rfind("past_key_values", 0) == 0) out.push_back(spec.name);
  return out;
}

TEST(KvCacheBinding, InPlaceOnTheOptimumLayoutCopiedElsewhereAndSaysWhy) {
  for (const char* name : {"llama_tiny", "gpt2_tiny", "llama_tiny_q4", "gpt2_tiny_int8", "llama_tiny_genai", "llama_tiny_merged",
                           "gpt2_tiny_merged_q4"}) {
    auto gen = gbtest::load_decoder(name);
    EXPECT_TRUE(gen.kv_in_place()) << name;
    EXPECT_NE(generation::explain_json(gen)["kv_cache"]["feeding"].get<std::string>().find("in place"), std::string::npos);
  }
  GenerationOptions off, merged_off;
  off.session.disabled_passes = {"kv_cache_binding"};
  auto copied = gbtest::load_decoder("llama_tiny", off);
  EXPECT_FALSE(copied.kv_in_place());
  EXPECT_NE(generation::explain_json(copied)["kv_cache"]["feeding"].get<std::string>().find("copied"), std::string::npos);
  merged_off.session.disabled_passes = {"cache_branch_inlining"};
  auto merged = gbtest::load_decoder("llama_tiny_merged", merged_off);
  EXPECT_FALSE(merged.kv_in_place());
  EXPECT_NE(generation::explain_json(merged)["kv_cache"]["feeding"].get<std::string>().find("a subgraph reads it"), std::string::npos)
      << generation::explain_json(merged)["kv_cache"]["feeding"];
}

// Greedy logits of every step for two prompts (5 and 9 tokens) decoded together, prefilled in chunks of 4
// (the shorter prompt left-padded in its chunks), 10 new tokens each.
std::vector<std::vector<float>> batched_logits(GenerationSession& gen, std::vector<std::vector<uint32_t>>* tokens) {
  std::vector<std::vector<float>> rows;
  gen.set_logits_observer([&](SequenceId, int64_t, std::span<const float> row) { rows.emplace_back(row.begin(), row.end()); });
  std::vector<SequenceInput> inputs(2);
  inputs[0].prompt_ids = std::vector<uint32_t>{11, 22, 33, 44, 55};
  inputs[1].prompt_ids = std::vector<uint32_t>{9, 8, 7, 6, 5, 4, 3, 2, 1};
  for (auto& in : inputs) {
    in.request.max_new_tokens = 10;
    in.request.do_sample = false;
  }
  auto ids = gen.prefill(inputs);
  EXPECT_TRUE(ids.ok()) << ids.error().to_string();
  if (!ids.ok()) return rows;
  for (int s = 1; s < 10; ++s) {
    auto ev = gen.step();
    EXPECT_TRUE(ev.ok()) << ev.error().to_string();
  }
  for (SequenceId id : *ids) {
    auto r = gen.take_result(id);
    EXPECT_TRUE(r.ok());
    if (r.ok()) tokens->push_back(r->token_ids);
  }
  return rows;
}

TEST(KvCacheBinding, InPlaceLogitsEqualTheCopiedOnes) {
  for (const char* name : {"llama_tiny", "gpt2_tiny", "llama_tiny_genai", "gpt2_tiny_merged"}) {
    SCOPED_TRACE(name);
    GenerationOptions in_place, copied;
    in_place.prefill_chunk_tokens = copied.prefill_chunk_tokens = 4;
    in_place.session.threads = copied.session.threads = 2;
    copied.session.disabled_passes = {"kv_cache_binding", "cache_branch_inlining"};
    auto a = gbtest::load_decoder(name, in_place), b = gbtest::load_decoder(name, copied);
    ASSERT_TRUE(a.kv_in_place());
    ASSERT_FALSE(b.kv_in_place());
    std::vector<std::vector<uint32_t>> ta, tb;
    const auto la = batched_logits(a, &ta), lb = batched_logits(b, &tb);
    ASSERT_EQ(la.size(), 20u);
    ASSERT_EQ(la.size(), lb.size());
    EXPECT_EQ(ta, tb);
    for (size_t i = 0; i < la.size(); ++i) {
      double diff = 0, scale = 1e-30;
      for (size_t v = 0; v < la[i].size(); ++v) {
        diff = std::max(diff, std::fabs(double(la[i][v]) - lb[i][v]));
        scale = std::max(scale, std::fabs(double(lb[i][v])));
      }
      EXPECT_LE(diff / scale, 1e-5) << "logits row " << i;
    }
  }
}

TEST(KvCacheBinding, BoundSessionRefusesUnboundRunsAndAPartialNameBindsNone) {
  const std::string model = gbtest::decoder_model("llama_tiny") + "/model.onnx";
  auto probe = Session::load(model);
  ASSERT_TRUE(probe.ok());
  SessionOptions o;
  o.kv_cache_inputs = past_inputs(*probe);
  auto bound = Session::load(model, o);
  ASSERT_TRUE(bound.ok()) << bound.error().to_string();
  EXPECT_TRUE(bound->kv_cache_bound());
  for (const auto& out : bound->outputs()) EXPECT_EQ(out.name.rfind("present", 0), std::string::npos) << out.name;
  const auto feeds = feeds_for(*bound, 2, 1, 0, 7);
  auto plain = bound->run(feeds);
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.error().to_string().find("run_bound"), std::string::npos) << plain.error().to_string();
  std::vector<KvCacheBinding> none;
  auto wrong = bound->run_bound(feeds, none);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().to_string().find("KV caches given"), std::string::npos) << wrong.error().to_string();
  o.kv_cache_inputs.push_back("input_ids");
  auto partial = Session::load(model, o);
  ASSERT_TRUE(partial.ok());
  EXPECT_FALSE(partial->kv_cache_bound());
  bool said = false;
  for (const auto& e : partial->pass_log())
    said = said || (e.pass == "kv_cache_binding" && e.message.find("'input_ids' is not bound") != std::string::npos);
  EXPECT_TRUE(said);
  EXPECT_EQ(partial->outputs().size(), probe->outputs().size());
}

bool logged(const Session& s, const std::string& pass, const std::string& text) {
  for (const auto& e : s.pass_log())
    if (e.pass == pass && e.message.find(text) != std::string::npos) return true;
  return false;
}

// The legacy merged layout: with its past inputs named, the If is replaced by the branch that reads them and the
// caches bind; a name the other branch reads too leaves the If as it is (and so binds nothing), and the log says why.
TEST(KvCacheBinding, MergedDecoderIfIsReplacedByItsCacheBranch) {
  const std::string model = gbtest::decoder_model("llama_tiny_merged") + "/decoder_model_merged.onnx";
  auto probe = Session::load(model);
  ASSERT_TRUE(probe.ok()) << probe.error().to_string();
  SessionOptions o;
  o.kv_cache_inputs = past_inputs(*probe);
  auto bound = Session::load(model, o);
  ASSERT_TRUE(bound.ok()) << bound.error().to_string();
  EXPECT_TRUE(bound->kv_cache_bound());
  EXPECT_TRUE(logged(*bound, "cache_branch_inlining", "replaced by its branch that reads the past inputs"));
  EXPECT_TRUE(logged(*bound, "cache_branch_inlining", "'use_cache_branch' is no longer read"));
  for (const auto& out : bound->outputs()) EXPECT_EQ(out.name.rfind("present", 0), std::string::npos) << out.name;
  o.kv_cache_inputs.push_back("input_ids");
  auto both = Session::load(model, o);
  ASSERT_TRUE(both.ok()) << both.error().to_string();
  EXPECT_FALSE(both->kv_cache_bound());
  EXPECT_TRUE(logged(*both, "cache_branch_inlining", "else_branch of If 'optimum::if' reads some past inputs, not all"));
  EXPECT_EQ(both->outputs().size(), probe->outputs().size());
}

// onnxruntime-genai's layout: each past input is read by a GroupQueryAttention, which the pass makes the bound
// glassbox::GroupQueryAttention. Batch 2, past 3, 2 new tokens: its logits equal the unbound session's, each
// cache's rows equal the present it no longer outputs, and a binding whose lengths are not seqlens_k's cached
// rows is refused.
TEST(KvCacheBinding, GroupQueryAttentionReadsAndAppendsTheBoundCache) {
  const std::string model = gbtest::decoder_model("llama_tiny_genai") + "/model.onnx";
  auto plain = Session::load(model);
  ASSERT_TRUE(plain.ok()) << plain.error().to_string();
  SessionOptions o;
  o.kv_cache_inputs = past_inputs(*plain);
  auto bound = Session::load(model, o);
  ASSERT_TRUE(bound.ok()) << bound.error().to_string();
  ASSERT_TRUE(bound->kv_cache_bound());
  bool said = false;
  for (const auto& e : bound->pass_log())
    said = said || (e.pass == "kv_cache_binding" && e.message.find("2 GroupQueryAttention read it in place") != std::string::npos);
  EXPECT_TRUE(said);
  const int64_t B = 2, P = 3, S = 2, cap = 8;
  const auto feeds = feeds_for(*plain, P, S, 0, 11);
  auto want = plain->run(feeds);
  ASSERT_TRUE(want.ok()) << want.error().to_string();
  std::vector<std::vector<float>> buffers;
  std::vector<KvCacheBinding> caches;
  for (const auto& f : feeds) {
    if (f.name.rfind("past_key_values", 0) != 0) continue;
    const int64_t H = f.tensor.shape()[1], D = f.tensor.shape()[3];
    KvCacheBinding c;
    c.input = f.name;
    for (int64_t b = 0; b < B; ++b) {
      buffers.emplace_back(static_cast<size_t>(H * cap * D), 0.f);
      for (int64_t h = 0; h < H; ++h)
        std::copy_n(f.tensor.data<float>() + (b * H + h) * P * D, P * D, buffers.back().data() + h * cap * D);
      c.capacities.push_back(cap);
      c.lengths.push_back(P);
      c.fresh.push_back(S);
    }
    caches.push_back(std::move(c));
  }
  for (size_t i = 0, k = 0; i < caches.size(); ++i)
    for (int64_t b = 0; b < B; ++b) caches[i].rows.push_back(buffers[k++].data());
  auto got = bound->run_bound(feeds, caches);
  ASSERT_TRUE(got.ok()) << got.error().to_string();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].name, "logits");
  EXPECT_LE(max_rel_diff((*got)[0].tensor, (*want)[0].tensor), 1e-5);
  for (const auto& c : caches) {
    const std::string present = "present" + c.input.substr(std::string("past_key_values").size());
    const Tensor* p = nullptr;
    for (const auto& w : *want)
      if (w.name == present) p = &w.tensor;
    ASSERT_NE(p, nullptr) << present;
    const int64_t H = p->shape()[1], T = p->shape()[2], D = p->shape()[3];
    ASSERT_EQ(T, P + S);
    double diff = 0;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < T * D; ++i)
          diff = std::max(diff, std::fabs(double(c.rows[b][h * cap * D + i]) - p->data<float>()[(b * H + h) * T * D + i]));
    EXPECT_LE(diff, 1e-5) << present;
  }
  for (auto& c : caches) c.lengths = {P - 1, P - 1};
  auto wrong = bound->run_bound(feeds, caches);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().to_string().find("lengths equal to seqlens_k's cached rows"), std::string::npos) << wrong.error().to_string();
}

}  // namespace
