// Timing probe for the Conv op (disabled by default; run with
// --gtest_also_run_disabled_tests --gtest_filter=*ConvTiming*).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "test_context.h"

namespace glassbox::testing_nn {
namespace {

TEST(ConvBench, DISABLED_ConvTiming) {
  struct Case {
    Shape x, w;
    int64_t group;
  };
  for (const Case& c : {Case{{1, 16, 320, 320}, {16, 16, 3, 3}, 1}, Case{{1, 64, 160, 160}, {64, 1, 3, 3}, 64},
                        Case{{1, 96, 80, 80}, {96, 96, 1, 1}, 1}}) {
    Tensor x = random_f32(c.x, 1), w = random_f32(c.w, 2), b = random_f32({c.w[0]}, 3);
    auto op = ops::create_op(make_node("Conv", {attr_is("pads", {1, 1, 1, 1}), attr_i("group", c.group)}), 13);
    if (c.w[2] == 1) op = ops::create_op(make_node("Conv", {attr_i("group", c.group)}), 13);
    ASSERT_TRUE(op.ok());
    for (int rep = 0; rep < 3; ++rep) {
      TestContext ctx({x, w, b}, 1, size_t{1} << 32, 2);
      const auto t0 = std::chrono::steady_clock::now();
      ASSERT_TRUE(op.value()->compute(ctx).ok());
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::printf("conv x%s w%s run %d: %.2f ms\n", shape_to_string(c.x).c_str(), shape_to_string(c.w).c_str(), rep, ms);
    }
  }
}

}  // namespace
}  // namespace glassbox::testing_nn
