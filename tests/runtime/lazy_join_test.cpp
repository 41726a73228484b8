// The joined Q/K/V weights of qkv_projection_fusion (graph/column_concat.h) are made only
// when read: the parts are read once per join, in the right column order; a packer's
// release frees the join (read again, it is joined again); data() keeps it; and a packing
// found in the packed-weights cache never reads the parts at all (ops/packed_weights*.cpp).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>

#include "core/thread_pool.h"
#include "graph/column_concat.h"
#include "kernels/gemm.h"
#include "kernels/gemm_int8.h"
#include "ops/packed_cache.h"
#include "ops/packed_weights.h"
#include "ops/packed_weights_s8.h"

namespace glassbox {
namespace {

// A part whose reads and releases are counted.
class CountingBuffer final : public Buffer {
 public:
  explicit CountingBuffer(std::vector<char> bytes) : bytes_(std::move(bytes)) {}
  const void* data() const override { ++reads; return bytes_.data(); }
  void* mutable_data() override { return nullptr; }
  size_t size() const override { return bytes_.size(); }
  const void* source_bytes() const override { ++reads; return bytes_.data(); }
  void release_pages(size_t, size_t) const override { ++releases; }
  mutable std::atomic<int> reads{0}, releases{0};

 private:
  std::vector<char> bytes_;
};

// [rows, cols] with element (r, c) = base + r * cols + c.
template <class T>
std::pair<Tensor, std::shared_ptr<CountingBuffer>> counting_part(int64_t rows, int64_t cols, int base, DataType dt) {
  std::vector<char> bytes(static_cast<size_t>(rows * cols) * sizeof(T));
  for (int64_t i = 0; i < rows * cols; ++i) {
    const T v = static_cast<T>(base + i);
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
  auto buf = std::make_shared<CountingBuffer>(std::move(bytes));
  auto t = Tensor::view(dt, Shape{rows, cols}, buf);
  EXPECT_TRUE(t.ok());
  return {*t, buf};
}

TEST(LazyJoin, JoinsColumnsInOrderOnlyWhenRead) {
  auto [a, ba] = counting_part<float>(3, 2, 0, DataType::kFloat32);
  auto [b, bb] = counting_part<float>(3, 1, 100, DataType::kFloat32);
  auto [c, bc] = counting_part<float>(3, 4, 200, DataType::kFloat32);
  auto joined = graph::concat_columns_lazily({a, b, c});
  ASSERT_TRUE(joined.ok()) << joined.error().to_string();
  EXPECT_EQ(joined->shape(), (Shape{3, 7}));
  EXPECT_EQ(ba->reads + bb->reads + bc->reads, 0) << "nothing is read before the join is";
  const float* j = static_cast<const float*>(joined->buffer()->source_bytes());
  for (int64_t r = 0; r < 3; ++r) {
    EXPECT_EQ(j[r * 7 + 0], r * 2 + 0);
    EXPECT_EQ(j[r * 7 + 1], r * 2 + 1);
    EXPECT_EQ(j[r * 7 + 2], 100 + r);
    for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(j[r * 7 + 3 + k], 200 + r * 4 + k);
  }
  EXPECT_EQ(ba->reads, 1);
  EXPECT_EQ(ba->releases, 1) << "a part's pages are let go once it is joined";
  joined->buffer()->source_bytes();
  EXPECT_EQ(ba->reads, 1) << "the join is kept until released";
  joined->buffer()->release_pages(0, joined->nbytes());
  joined->buffer()->source_bytes();
  EXPECT_EQ(ba->reads, 2) << "released over the whole buffer, the join was freed and is made again";
  const float* pinned = joined->data<float>();
  joined->buffer()->release_pages(0, joined->nbytes());
  EXPECT_EQ(joined->data<float>(), pinned) << "after data() the join stays for the buffer's lifetime";
  EXPECT_EQ(pinned[3], 200.0f);
  EXPECT_EQ(ba->reads, 2);
}

TEST(LazyJoin, RefusesWhatItCannotJoin) {
  auto [a, ba] = counting_part<float>(3, 2, 0, DataType::kFloat32);
  auto [b, bb] = counting_part<float>(4, 2, 0, DataType::kFloat32);
  auto [c, bc] = counting_part<int8_t>(3, 2, 0, DataType::kInt8);
  EXPECT_FALSE(graph::concat_columns_lazily({}).ok());
  EXPECT_FALSE(graph::concat_columns_lazily({a, b}).ok()) << "rows differ";
  EXPECT_FALSE(graph::concat_columns_lazily({a, c}).ok()) << "dtypes differ";
  auto v = Tensor::view(DataType::kFloat32, Shape{6}, ba);
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(graph::concat_columns_lazily({*v}).ok()) << "rank 1";
  auto err = graph::concat_columns_lazily({a, b});
  EXPECT_NE(err.error().to_string().find("rows"), std::string::npos) << err.error().to_string();
}

// A cache that holds whatever was added, by key.
class MemoryStore final : public ops::PackedBlobStore {
 public:
  std::optional<kernels::PackedBytes> find(const std::string& key) override {
    auto it = blobs.find(key);
    if (it == blobs.end()) return std::nullopt;
    return it->second;
  }
  void add(const std::string& key, kernels::PackedBytes bytes) override { blobs[key] = std::move(bytes); }
  void refused(const std::string& key, const std::string& why) override { ADD_FAILURE() << key << ": " << why; }
  std::map<std::string, kernels::PackedBytes> blobs;
};

TEST(LazyJoin, CachedPackingNeverReadsTheParts) {
  ThreadPool pool(1);
  auto store = std::make_shared<MemoryStore>();
  for (bool s8 : {false, true}) {
    SCOPED_TRACE(s8 ? "s8 weights" : "f32 weights");
    const DataType dt = s8 ? DataType::kInt8 : DataType::kFloat32;
    // Same name both times: a second load of the same model finds the first one's packing.
    for (int load = 0; load < 2; ++load) {
      auto [a, ba] = s8 ? counting_part<int8_t>(32, 16, 1, dt) : counting_part<float>(32, 16, 1, dt);
      auto [b, bb] = s8 ? counting_part<int8_t>(32, 16, 2, dt) : counting_part<float>(32, 16, 2, dt);
      auto joined = graph::concat_columns_lazily({a, b});
      ASSERT_TRUE(joined.ok());
      ops::register_cacheable_constant(*joined, "w/qkv", store);
      if (s8)
        ASSERT_NE(ops::packed_weights_s8(*joined, pool), nullptr);
      else
        ASSERT_NE(ops::packed_weights(*joined, false, pool), nullptr);
      EXPECT_EQ(ba->reads + bb->reads, load == 0 ? 2 : 0) << "load " << load;
    }
  }
  EXPECT_EQ(store->blobs.size(), 2u);
}

}  // namespace
}  // namespace glassbox
