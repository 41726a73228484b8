// The test table (test_registry.cpp) must mirror the NN ops' lines in src/ops/ops.inc.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <tuple>

#include "test_context.h"

namespace glassbox::ops {
std::vector<std::tuple<std::string, int64_t, int64_t>> nn_test_registry_entries();
}

namespace glassbox::testing_nn {
namespace {

TEST(RegistrySync, TestTableMatchesOpsInc) {
  std::ifstream f(GLASSBOX_SOURCE_DIR "/src/ops/ops.inc");
  ASSERT_TRUE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string inc = ss.str();
  for (const auto& [name, first, last] : ops::nn_test_registry_entries()) {
    const std::string line = "OP(" + name + ", " + std::to_string(first) + ", " + std::to_string(last) + ")";
    EXPECT_NE(inc.find(line + "\n"), std::string::npos) << line << " is not in ops.inc";
  }
}

}  // namespace
}  // namespace glassbox::testing_nn
