#include "ops/broadcast.h"

#include <gtest/gtest.h>

#include <random>

namespace glassbox::ops {
namespace {

TEST(Broadcast, Shapes) {
  EXPECT_EQ(broadcast_shapes(Shape{2, 3, 4}, Shape{4}).value(), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes(Shape{2, 1, 4}, Shape{3, 1}).value(), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes(Shape{}, Shape{5}).value(), (Shape{5}));
  EXPECT_EQ(broadcast_shapes(Shape{0, 3}, Shape{1, 3}).value(), (Shape{0, 3}));
  EXPECT_FALSE(broadcast_shapes(Shape{2, 3}, Shape{4}).ok());
}

// Offsets from the walk equal a naive per-element index computation.
TEST(Broadcast, WalkMatchesNaive) {
  std::mt19937 rng(42);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = static_cast<int>(rng() % 5);
    Shape out(rank);
    for (auto& d : out) d = 1 + rng() % 4;
    std::vector<Shape> ins(1 + rng() % 3);
    for (auto& s : ins) {
      const int r = static_cast<int>(rng() % (rank + 1));
      s.assign(out.end() - r, out.end());
      for (auto& d : s)
        if (rng() % 3 == 0) d = 1;
    }
    Shape o = broadcast_shapes(std::span<const Shape>(ins)).value();
    BroadcastWalk walk(o, ins);
    int64_t numel = 1;
    for (auto d : o) numel *= d;
    std::vector<std::vector<int64_t>> got(ins.size(), std::vector<int64_t>(numel, -1));
    walk.for_runs(0, walk.num_runs(), [&](int64_t, int64_t out_off, const int64_t* in_offs) {
      for (int64_t j = 0; j < walk.run_length(); ++j)
        for (size_t k = 0; k < ins.size(); ++k) got[k][out_off + j] = in_offs[k] + j * walk.inner_stride(k);
    });
    for (int64_t e = 0; e < numel; ++e) {
      std::vector<int64_t> idx(o.size());
      int64_t r = e;
      for (size_t d = o.size(); d-- > 0;) { idx[d] = r % o[d]; r /= o[d]; }
      for (size_t k = 0; k < ins.size(); ++k) {
        int64_t off = 0;
        const size_t lead = o.size() - ins[k].size();
        for (size_t d = 0; d < ins[k].size(); ++d) off = off * ins[k][d] + (ins[k][d] == 1 ? 0 : idx[lead + d]);
        ASSERT_EQ(got[k][e], off) << "iter " << iter << " elem " << e << " input " << k;
      }
    }
    // Starting mid-way gives the same offsets.
    if (walk.num_runs() > 2) {
      walk.for_runs(walk.num_runs() / 2, walk.num_runs(), [&](int64_t, int64_t out_off, const int64_t* in_offs) {
        for (size_t k = 0; k < ins.size(); ++k) ASSERT_EQ(got[k][out_off], in_offs[k]);
      });
    }
  }
}

}  // namespace
}  // namespace glassbox::ops
