// How to add an op test: build a node with make_node(op, attrs), a TestContext
// with the inputs (and a byte cap for shape-bomb tests), run_op(node, opset, ctx),
// then compare ctx.output(i) with a reference computed here.
#include <gtest/gtest.h>

#include "kernels/data_movement.h"
#include "test_context.h"

namespace glassbox::testing_nn {
namespace {

TEST(StridedCopy, MatchesReferenceOnAwkwardShapes) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 5);
    std::vector<int64_t> shape(rank), strides(rank);
    int64_t span = 1;
    for (int d = 0; d < rank; ++d) shape[d] = static_cast<int64_t>(rng() % 5);  // includes 0 and 1
    for (int d = rank - 1; d >= 0; --d) {
      const int kind = static_cast<int>(rng() % 4);
      strides[d] = kind == 0 ? 0 : (kind == 1 ? -span : span);
      span *= std::max<int64_t>(1, shape[d]) + 1;
    }
    // Base pointer in the middle so negative strides stay inside.
    std::vector<uint32_t> src(static_cast<size_t>(2 * span + 1));
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint32_t>(rng());
    int64_t n = 1;
    for (auto s : shape) n *= s;
    for (size_t es : {size_t{1}, size_t{4}, size_t{8}}) {
      std::vector<uint8_t> a(static_cast<size_t>(n) * es + 1, 0), b(a.size(), 0);
      const char* base = reinterpret_cast<const char*>(src.data()) + (span * es);
      ThreadPool pool(3);
      kernels::strided_copy(es, rank, shape.data(), base, strides.data(), a.data(), &pool);
      kernels::strided_copy_reference(es, rank, shape.data(), base, strides.data(), b.data());
      ASSERT_EQ(a, b) << "trial " << trial << " elem " << es;
    }
  }
}

}  // namespace
}  // namespace glassbox::testing_nn
