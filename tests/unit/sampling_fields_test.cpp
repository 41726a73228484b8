// The one reader of generation sampling fields (server/codec/sampling_fields.h) in the three dialects
// the server speaks: OpenAI's body, TGI's "parameters", OIP's request parameters.
#include "server/codec/sampling_fields.h"

#include <gtest/gtest.h>

namespace glassbox::server {
namespace {

using nlohmann::json;

const SamplingDialect kOpenAi{.prefix = "", .quote = true, .max_tokens = {"max_tokens", "max_completion_tokens"},
                              .temperature_zero_is_greedy = true, .sampling_when_any_sent = false,
                              .top_k_and_penalty = false, .signed_seed = true, .null_is_absent = true};
const SamplingDialect kTgi{.prefix = "parameters.", .quote = true, .max_tokens = {"max_new_tokens"},
                           .temperature_zero_is_greedy = false, .sampling_when_any_sent = true,
                           .top_k_and_penalty = true, .signed_seed = false, .null_is_absent = true};
const SamplingDialect kOip{.prefix = "parameters.", .quote = false, .max_tokens = {"max_tokens", "max_new_tokens"},
                           .temperature_zero_is_greedy = true, .sampling_when_any_sent = false,
                           .top_k_and_penalty = true, .signed_seed = false, .null_is_absent = false};

TEST(SamplingFields, OpenAiTemperatureZeroIsGreedyAndOtherFieldsPassThrough) {
  GenerationRequest r;
  auto p = read_sampling(json::parse(R"({"max_completion_tokens": 7, "temperature": 0, "top_p": 0.5, "seed": -1,
                                         "stop": ["a", "b"], "top_k": 3})"), kOpenAi, r);
  ASSERT_FALSE(p) << p->message;
  EXPECT_EQ(r.max_new_tokens, 7);
  EXPECT_EQ(r.do_sample, false);
  EXPECT_FALSE(r.temperature);  // greedy: no temperature applies
  EXPECT_EQ(r.top_p, 0.5);
  EXPECT_EQ(r.seed, ~uint64_t{0});  // -1 as two's complement
  EXPECT_EQ(r.stop_strings, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(r.top_k);  // not an OpenAI field
}

TEST(SamplingFields, TgiSamplesWhenAnySamplingFieldIsSentAndDoSampleIsNot) {
  GenerationRequest r;
  ASSERT_FALSE(read_sampling(json::parse(R"({"max_new_tokens": 4, "top_k": 5, "temperature": 0})"), kTgi, r));
  EXPECT_EQ(r.do_sample, true);
  EXPECT_EQ(r.temperature, 0.0);  // TGI passes temperature on as sent
  EXPECT_EQ(r.top_k, 5);
  GenerationRequest off;
  ASSERT_FALSE(read_sampling(json::parse(R"({"top_k": 5, "do_sample": false})"), kTgi, off));
  EXPECT_EQ(off.do_sample, false);
  GenerationRequest none;
  ASSERT_FALSE(read_sampling(json::parse(R"({"max_new_tokens": 4, "seed": null})"), kTgi, none));
  EXPECT_FALSE(none.do_sample);
  EXPECT_FALSE(none.seed);
}

TEST(SamplingFields, OipDoSampleOverridesTemperatureAndNullIsAnError) {
  GenerationRequest r;
  ASSERT_FALSE(read_sampling(json::parse(R"({"max_tokens": 3, "max_new_tokens": 3, "temperature": 0.7, "do_sample": false})"),
                             kOip, r));
  EXPECT_EQ(r.max_new_tokens, 3);
  EXPECT_EQ(r.do_sample, false);
  auto p = read_sampling(json::parse(R"({"seed": null})"), kOip, r);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->message, "parameters.seed must be a non-negative integer");
}

TEST(SamplingFields, EachBadFieldIsNamedInItsDialect) {
  struct Case {
    const SamplingDialect* d;
    const char* body;
    const char* message;
    const char* field;
  };
  const Case cases[] = {
      {&kOpenAi, R"({"temperature": 2.5})", "\"temperature\" must be between 0 and 2", "temperature"},
      {&kOpenAi, R"({"max_tokens": 2, "max_completion_tokens": 3})", "\"max_tokens\" and \"max_completion_tokens\" differ: send one",
       "max_tokens"},
      {&kOpenAi, R"({"seed": 1.5})", "\"seed\" must be an integer", "seed"},
      {&kOpenAi, R"({"stop": [""]})", "\"stop\" strings must not be empty", "stop"},
      {&kOpenAi, R"({"stop": [1]})", "\"stop\" must be a string or a list of at most 16 strings", "stop"},
      {&kTgi, R"({"top_k": -1})", "\"parameters.top_k\" must be a non-negative integer", "top_k"},
      {&kTgi, R"({"seed": -3})", "\"parameters.seed\" must be a non-negative integer", "seed"},
      {&kTgi, R"({"do_sample": "yes"})", "\"parameters.do_sample\" must be a boolean", "do_sample"},
      {&kOip, R"({"top_p": "high"})", "parameters.top_p must be a number", "top_p"},
      {&kOip, R"({"max_tokens": 2, "max_new_tokens": 3})", "parameters.max_tokens and parameters.max_new_tokens differ: send one",
       "max_tokens"},
      {&kOip, R"({"stop": "x", "repetition_penalty": "1"})", "parameters.repetition_penalty must be a number",
       "repetition_penalty"},
  };
  for (const auto& c : cases) {
    GenerationRequest r;
    auto p = read_sampling(json::parse(c.body), *c.d, r);
    ASSERT_TRUE(p) << c.body;
    EXPECT_EQ(p->message, c.message) << c.body;
    EXPECT_EQ(p->field, c.field) << c.body;
  }
  GenerationRequest r;
  json many = {{"stop", json::array()}};
  for (int i = 0; i < 17; ++i) many["stop"].push_back("s" + std::to_string(i));
  ASSERT_TRUE(read_sampling(many, kOpenAi, r));
}

}  // namespace
}  // namespace glassbox::server
