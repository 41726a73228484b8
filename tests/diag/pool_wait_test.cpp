// SessionOptions::pool_wait: parsing, the `glassbox explain` row (default, config file,
// flag, glassbox.json) and its errors, and every verb that takes --pool-wait running
// with each mode (outputs of the modes must not differ: waiting changes no arithmetic).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "diag/explain.h"
#include "model_builder.h"

namespace glassbox::testing {
namespace {

const std::string kTinyBert = std::string(GLASSBOX_SOURCE_DIR) + "/tests/data/generated/bert_tiny_op17.onnx";
const std::string kLangId = std::string(GLASSBOX_SOURCE_DIR) + "/models/langid";

TEST(PoolWait, ParseAndNames) {
  for (PoolWait w : {PoolWait::kAuto, PoolWait::kSpin, PoolWait::kSleep}) {
    auto p = parse_pool_wait(pool_wait_name(w));
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(*p, w);
  }
  auto bad = parse_pool_wait("busy");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().to_string().find("busy"), std::string::npos);
  EXPECT_NE(bad.error().to_string().find("auto, spin or sleep"), std::string::npos);
  EXPECT_EQ(SessionOptions{}.pool_wait, PoolWait::kAuto);
}

TEST(PoolWait, ExplainRowDefaultConfigFileAndBadValue) {
  diag::EffectiveOptions o;
  bool found = false;
  for (const auto& r : diag::explain_options(o))
    if (r.component == "session" && r.name == "pool_wait") {
      found = true;
      EXPECT_EQ(r.value, "auto");
      EXPECT_EQ(r.source, "default");
      EXPECT_NE(r.reason.find("idle core"), std::string::npos);
      EXPECT_NE(r.risk.find("spin"), std::string::npos);
    }
  EXPECT_TRUE(found);
  ASSERT_TRUE(diag::apply_config(nlohmann::json::parse(R"({"session":{"pool_wait":"sleep"}})"), o).ok());
  EXPECT_EQ(o.session.pool_wait, PoolWait::kSleep);
  for (const auto& r : diag::explain_options(o))
    if (r.name == "pool_wait") {
      EXPECT_EQ(r.value, "sleep");
      EXPECT_EQ(r.source, "file");
    }
  auto bad = diag::apply_config(nlohmann::json::parse(R"({"session":{"pool_wait":"yield"}})"), o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().to_string().find("yield"), std::string::npos);
  auto wrong_type = diag::apply_config(nlohmann::json::parse(R"({"session":{"pool_wait":3}})"), o);
  EXPECT_FALSE(wrong_type.ok());
}

TEST(PoolWait, CliFlagsOnRunBenchExplain) {
  if (!std::filesystem::exists(kTinyBert)) GTEST_FAIL() << "the generated test models are missing: run scripts/make_test_models.py";
  const std::string shapes = " --shape input_ids=1x8 --shape attention_mask=1x8 --shape token_type_ids=1x8";
  for (const char* mode : {"auto", "spin", "sleep"}) {
    auto b = run_cli("bench " + kTinyBert + " --pool-wait " + mode + shapes + " --repeat 2 --warmup 1 --threads 2");
    EXPECT_EQ(b.rc, 0) << mode << ": " << b.out;
    auto e = run_cli("explain " + kTinyBert + " --pool-wait " + mode);
    ASSERT_EQ(e.rc, 0) << e.out;
    EXPECT_NE(e.out.find(std::string("pool_wait = ") + mode + "  (flag; default auto)"), std::string::npos) << e.out;
  }
  auto plain = run_cli("explain " + kTinyBert);
  EXPECT_NE(plain.out.find("pool_wait = auto  (default)"), std::string::npos) << plain.out;
  auto bad = run_cli("run " + kTinyBert + " --pool-wait busy");
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.out.find("busy"), std::string::npos) << bad.out;
  auto bad_bench = run_cli("bench " + kTinyBert + " --pool-wait 200" + shapes);
  EXPECT_NE(bad_bench.rc, 0);
}

// A model directory: glassbox.json's "pool_wait" is used and shown with its source; the
// flag wins over it; a wrong value names the file and the choices. classify gives the same
// answer in every mode.
TEST(PoolWait, GlassboxJsonAndClassify) {
  TempDir dir;
  for (const auto& e : std::filesystem::directory_iterator(kLangId))
    if (e.path().filename() != "glassbox.json")
      std::filesystem::create_symlink(e.path(), std::filesystem::path(dir.file(e.path().filename().string())));
  std::ifstream in(kLangId + "/glassbox.json");
  auto j = nlohmann::json::parse(in);
  auto write = [&](const nlohmann::json& value) {
    j["pool_wait"] = value;
    std::ofstream(dir.file("glassbox.json")) << j.dump(2);
  };
  const std::string model = dir.path();
  write("sleep");
  auto e = run_cli("explain " + model);
  ASSERT_EQ(e.rc, 0) << e.out;
  EXPECT_NE(e.out.find("pool_wait = sleep  [glassbox.json]"), std::string::npos) << e.out;
  auto f = run_cli("explain " + model + " --pool-wait spin");
  ASSERT_EQ(f.rc, 0) << f.out;
  EXPECT_NE(f.out.find("pool_wait = spin  [flag --pool-wait]"), std::string::npos) << f.out;
  for (const char* mode : {"auto", "spin", "sleep"}) {
    auto c = run_cli("classify " + model + " --pool-wait " + mode + " --threads 2 \"Guten Morgen, wie geht es dir?\"");
    ASSERT_EQ(c.rc, 0) << c.out;
    EXPECT_NE(c.out.find("\"label\":\"de\""), std::string::npos) << c.out;
  }
  write("fast");
  auto bad = run_cli("explain " + model);
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.out.find("glassbox.json"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("auto, spin or sleep"), std::string::npos) << bad.out;
  write(7);
  auto bad_type = run_cli("classify " + model + " \"hallo\"");
  EXPECT_NE(bad_type.rc, 0);
  EXPECT_NE(bad_type.out.find("'pool_wait' must be a string"), std::string::npos) << bad_type.out;
}

}  // namespace
}  // namespace glassbox::testing
