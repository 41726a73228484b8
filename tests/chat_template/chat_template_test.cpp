// The public chat-template API's contract (include/glassbox/chat_template.h). Rendering itself is
// compared byte for byte with python3-jinja2 by compare_with_jinja2.py; these tests pin the choices
// and the loud paths of the API around it.
#include <gtest/gtest.h>

#include "chat_template/interpreter.h"
#include "glassbox/chat_template.h"

namespace {

using glassbox::ChatTemplate;
using glassbox::ChatTemplateOptions;
using glassbox::ErrorCode;

const char* kUser = R"([{"role": "user", "content": "hi"}])";

// The value of a successful result ("<error: ...>" otherwise, which fails the comparison that uses it).
std::string ok(const glassbox::Result<std::string>& r) { return r.ok() ? r.value() : "<error: " + r.error().to_string() + ">"; }

TEST(ChatTemplateApi, NoTemplateIsAnErrorNeverChatML) {
  auto t = ChatTemplate::from_strings(R"({"bos_token": "<s>"})");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::kNotFound);
  EXPECT_NE(t.error().fix.find("ChatML"), std::string::npos);
}

TEST(ChatTemplateApi, NamedListChoosesLikeTransformers) {
  auto t = ChatTemplate::from_strings(R"({"chat_template": [{"name": "default", "template": "D"},
                                                            {"name": "tool_use", "template": "T"}]})");
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_EQ(t->template_names(), (std::vector<std::string>{"default", "tool_use"}));
  ChatTemplateOptions o;
  EXPECT_EQ(ok(t->render(kUser, o)), "D");
  o.tools_json = "[]";  // tools given (even empty): tool_use, as transformers' `tools is not None`
  EXPECT_EQ(ok(t->resolve_name(o)), "tool_use");
  EXPECT_EQ(ok(t->render(kUser, o)), "T");
  o.template_name = "default";
  EXPECT_EQ(ok(t->render(kUser, o)), "D");
  o.template_name = "missing";
  auto r = t->render(kUser, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_NE(r.error().fix.find("default, tool_use"), std::string::npos);
}

TEST(ChatTemplateApi, JinjaFileWinsAndSpecialTokensAreExposed) {
  auto t = ChatTemplate::from_strings(
      R"({"chat_template": "config", "bos_token": {"__type": "AddedToken", "content": "<s>"}, "eos_token": "</s>",
          "unk_token": null, "pad_token": ""})",
      std::string("jinja {{ bos_token }}{{ eos_token }}{{ unk_token is defined }}{{ pad_token is defined }}"));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->source(), "chat_template.jinja");
  EXPECT_EQ(ok(t->render("[]")), "jinja <s></s>FalseFalse");
  auto tokens = t->special_tokens();
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0], (std::pair<std::string, std::string>{"bos_token", "<s>"}));
}

TEST(ChatTemplateApi, ExtraVariablesOverrideTokensButNotOptions) {
  auto t = ChatTemplate::from_strings(R"({"chat_template": "{{ bos_token }}{{ flag }}", "bos_token": "<s>"})");
  ASSERT_TRUE(t.ok());
  ChatTemplateOptions o;
  o.extra_context_json = R"({"bos_token": "<B>", "flag": false})";
  EXPECT_EQ(ok(t->render("[]", o)), "<B>False");
  o.extra_context_json = R"({"add_generation_prompt": true})";
  auto r = t->render("[]", o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
}

TEST(ChatTemplateApi, MalformedInputsAreRefused) {
  auto t = ChatTemplate::from_strings(R"({"chat_template": "x"})");
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->render(R"({"role": "user"})").ok());          // not an array
  EXPECT_FALSE(t->render("[1, 2").ok());                          // not JSON
  EXPECT_FALSE(t->render(std::string("[\"\xff\"]")).ok());        // not UTF-8
  ChatTemplateOptions o;
  o.tools_json = R"({"type": "function"})";                       // tools must be a list
  EXPECT_FALSE(t->render("[]", o).ok());
  o.tools_json = R"(["just a string"])";                          // of schemas
  EXPECT_FALSE(t->render("[]", o).ok());
  EXPECT_FALSE(ChatTemplate::from_strings(R"({"chat_template": 5})").ok());
  EXPECT_FALSE(ChatTemplate::from_strings(R"({"chat_template": [{"name": "x"}]})").ok());
}

TEST(ChatTemplateApi, ParseErrorsNameTheTemplateAndPosition) {
  auto t = ChatTemplate::from_strings(R"({"chat_template": "ok\n  {% include 'x' %}"})");
  ASSERT_TRUE(t.ok());  // reported when the template is used
  auto r = t->render("[]");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(r.error().where, "chat template 'default': line 2:6");
}

TEST(ChatTemplateApi, RunawayOutputIsBounded) {
  auto t = ChatTemplate::from_strings(
      R"({"chat_template": "{% for a in range(100000) %}{{ 'x' * 1000000 }}{% endfor %}"})");
  ASSERT_TRUE(t.ok());
  auto r = t->render("[]");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kLimitExceeded);
}

TEST(ChatTemplateApi, RunawayLoopsAndRecursionAreBounded) {
  for (const char* tmpl : {
           R"({"chat_template": "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"})",
           R"({"chat_template": "{{ [0] * 100000000 }}"})",
       }) {
    auto t = ChatTemplate::from_strings(tmpl);
    ASSERT_TRUE(t.ok()) << tmpl;
    auto r = t->render("[]");
    ASSERT_FALSE(r.ok()) << tmpl;
    EXPECT_EQ(r.error().code, ErrorCode::kLimitExceeded) << r.error().to_string();
  }
  std::string deep = "{{ " + std::string(500, '(') + "1" + std::string(500, ')') + " }}";
  auto t = ChatTemplate::from_strings("", deep);
  ASSERT_TRUE(t.ok());
  auto r = t->render("[]");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kLimitExceeded);
}

TEST(ChatTemplateInterpreter, LoopBudgetStopsRunawayLoops) {
  namespace ct = glassbox::chat_template;
  auto tokens = ct::tokenize("{% for a in range(1000) %}{% for b in range(1000) %}{% endfor %}{% endfor %}");
  ASSERT_TRUE(tokens.ok());
  auto body = ct::parse(*tokens);
  ASSERT_TRUE(body.ok());
  ct::RenderLimits limits;
  limits.max_loop_iterations = 5000;  // the default (10 million) takes seconds under ASan
  ct::Interpreter in(ct::Clock{}, limits);
  auto r = in.render(*body, ct::Dict{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kLimitExceeded);
}

TEST(ChatTemplateApi, FixedClockAndZone) {
  auto t = ChatTemplate::from_strings(R"({"chat_template": "{{ strftime_now('%Y-%m-%d %H:%M:%S.%f%z') }}"})");
  ASSERT_TRUE(t.ok());
  ChatTemplateOptions o;
  o.now_unix_micros = 1721985342123456;  // 2024-07-26T09:15:42.123456Z
  EXPECT_EQ(ok(t->render("[]", o)), "2024-07-26 09:15:42.123456");
}

TEST(ChatTemplateApi, CopiesShareTheParsedTemplate) {
  auto t = ChatTemplate::from_strings(R"({"chat_template": "{{ messages|length }}"})");
  ASSERT_TRUE(t.ok());
  ChatTemplate copy = *t;
  EXPECT_EQ(ok(copy.render(kUser)), "1");
  EXPECT_EQ(ok(t->render("[]")), "0");
}

}  // namespace
