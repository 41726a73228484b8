// `glassbox probe` on a model directory with a tokenizer: texts around the length limit and
// hostile texts go through the real pipeline (models/langid, the embedded default model).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "diag/probe.h"
#include "glassbox/pipeline.h"

using namespace glassbox;
namespace fs = std::filesystem;

namespace {

const diag::ProbeCase* find_case(const diag::ProbeReport& r, const std::string& prefix) {
  for (const auto& c : r.cases)
    if (c.name.rfind(prefix, 0) == 0) return &c;
  return nullptr;
}

TEST(ProbeText, DefaultModelPassesEveryTextCase) {
  auto r = diag::probe_model(default_model_dir(), SessionOptions{}, diag::ProbeOptions{});
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r->ok()) << diag::probe_to_text(*r);
  const int64_t max = r->max_length;
  ASSERT_GT(max, 2);
  for (int64_t n : {max - 1, max, max + 1, max + 3}) {
    const auto* c = find_case(*r, "text of " + std::to_string(n) + " tokens");
    ASSERT_NE(c, nullptr) << "no case for " << n << " tokens\n" << diag::probe_to_text(*r);
    EXPECT_EQ(c->status, diag::ProbeStatus::kPass) << c->detail;
    // Overlong: refused (no truncation policy) or truncated to the limit with the count reported.
    if (n > max)
      EXPECT_TRUE(c->detail.find("refused cleanly") != std::string::npos ||
                  c->detail.find("truncated as declared: " + std::to_string(n - max) + " tokens dropped") != std::string::npos)
          << c->detail;
    else EXPECT_NE(c->detail.find(std::to_string(n) + " tokens"), std::string::npos) << c->detail;
  }
  for (const char* name : {"empty string", "whitespace only", "NUL and control characters", "combining marks",
                           "emoji ZWJ sequences", "invalid UTF-8", "1 MB input", "unknown-token rate"}) {
    const auto* c = find_case(*r, name);
    ASSERT_NE(c, nullptr) << name << "\n" << diag::probe_to_text(*r);
    EXPECT_NE(c->status, diag::ProbeStatus::kFail) << name << ": " << c->detail;
  }
  EXPECT_NE(find_case(*r, "invalid UTF-8")->detail.find("refused cleanly"), std::string::npos);
}

TEST(ProbeText, MaxLengthBeyondThePositionTableIsCaught) {
  // A directory that declares max_length 200 for a model with 128 positions: texts that fit
  // the declared limit break inside the graph, and probe must say so.
  const fs::path dir = fs::temp_directory_path() / ("glassbox_probe_text_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(default_model_dir()))
    if (e.is_regular_file()) fs::copy_file(e.path(), dir / e.path().filename());
  nlohmann::json j = nlohmann::json::parse(std::ifstream(dir / "glassbox.json"));
  j["max_length"] = 200;
  if (j.contains("truncation") && j["truncation"].is_object() && j["truncation"].contains("max_length"))
    j["truncation"]["max_length"] = 200;
  std::ofstream(dir / "glassbox.json") << j.dump(1);
  diag::ProbeOptions po;
  auto r = diag::probe_model(dir.string(), SessionOptions{}, po);
  fs::remove_all(dir);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_FALSE(r->ok()) << diag::probe_to_text(*r);
  bool named = false;
  for (const auto& c : r->cases)
    if (c.status == diag::ProbeStatus::kFail &&
        (c.name.find("text of 199 tokens") != std::string::npos || c.name.find("text cases") != std::string::npos))
      named = true;
  EXPECT_TRUE(named) << diag::probe_to_text(*r);
}

TEST(ProbeText, CanBeSwitchedOff) {
  diag::ProbeOptions po;
  po.text_cases = false;
  auto r = diag::probe_model(default_model_dir(), SessionOptions{}, po);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(find_case(*r, "text of"), nullptr);
  EXPECT_EQ(find_case(*r, "empty string"), nullptr);
}

}  // namespace
