#include "ops/packed_weights.h"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "kernels/gemm_int8.h"
#include "ops/packed_cache.h"

namespace glassbox::ops {
namespace {

struct Entry {
  std::weak_ptr<Buffer> buffer;
  std::weak_ptr<const kernels::PackedGemmB> packed;
};

using Key = std::tuple<const Buffer*, size_t, int64_t, int64_t, bool, int>;

}  // namespace

std::shared_ptr<const kernels::PackedGemmB> packed_weights(const Tensor& b, bool trans_b, ThreadPool& pool,
                                                           Precision precision) {
  static std::mutex mu;
  static std::map<Key, Entry> registry;
  const int64_t K = trans_b ? b.shape()[1] : b.shape()[0];
  const int64_t N = trans_b ? b.shape()[0] : b.shape()[1];
  const Key key{b.buffer().get(), b.byte_offset(), K, N, trans_b, static_cast<int>(precision)};
  std::lock_guard<std::mutex> lock(mu);
  for (auto it = registry.begin(); it != registry.end();)  // drop packings nobody holds any more
    it = it->second.packed.expired() || it->second.buffer.expired() ? registry.erase(it) : std::next(it);
  auto it = registry.find(key);
  if (it != registry.end() && it->second.buffer.lock() == b.buffer())
    if (auto p = it->second.packed.lock()) return p;
  // Read the weights where they lie: the packer stages a misaligned view of the model file
  // block by block instead of the tensor making (and keeping) a whole aligned copy.
  // (Read inside pack(): a packing found in the cache never touches the weights.)
  auto src = [&b] { return static_cast<const char*>(b.buffer()->source_bytes()) + b.byte_offset(); };
  const auto packed_precision = precision == Precision::kBf16          ? kernels::PackedPrecision::kBf16
                                : precision == Precision::kInt8Dynamic ? kernels::PackedPrecision::kS8Dynamic
                                                                       : kernels::PackedPrecision::kF32;
  // The cache entry's kind (ops do not link the runtime's precision names: the packed precision's number).
  const std::string kind = "gemm_b precision=" + std::to_string(static_cast<int>(packed_precision)) + " K=" + std::to_string(K) +
                           " N=" + std::to_string(N) + " trans_b=" + (trans_b ? "1" : "0");
  auto p = pack_through_cache(
      b, kind, [&] { return kernels::pack_gemm_b(K, N, trans_b, trans_b ? K : N, src(), packed_precision, &pool); },
      [](std::shared_ptr<const kernels::PackedGemmB> q) { return kernels::packed_gemm_b_to_bytes(std::move(q)); },
      [&](const kernels::PackedBytes& bytes, std::string* why) {
        return kernels::packed_gemm_b_from_bytes(K, N, packed_precision, bytes, why);
      });
  registry[key] = Entry{b.buffer(), p};
  // Runs read the packed copy from now on: weights viewed in the mapped model file
  // (LoadOptions::map_initializers) leave the resident set.
  b.buffer()->release_pages(b.byte_offset(), b.nbytes());
  return p;
}

std::string packed_precision_decision(Precision precision, const Tensor* b, bool trans_b) {
  if (precision == Precision::kFp32 || !b || !b->defined() || b->dtype() != DataType::kFloat32 || b->rank() != 2) return {};
  if (precision == Precision::kBf16)
    return std::string("bf16: weights ") + shape_to_string(b->shape()) +
           " converted to bfloat16 once (first run), activations per call, fp32 accumulation and output (oneDNN " +
           kernels::gemm_bf16_implementation() + ")";
  if (b->shape()[trans_b ? 1 : 0] > kernels::kS8DynamicMaxK)
    return std::string("fp32: weights ") + shape_to_string(b->shape()) + " have more than " +
           std::to_string(kernels::kS8DynamicMaxK) + " rows, too many for exact int32 sums: not quantized";
  return std::string("int8-dynamic: weights ") + shape_to_string(b->shape()) +
         " quantized to s8 per output channel once (first run), activations to u8 per row per call, s32 "
         "accumulation, fp32 dequantization and epilogue (oneDNN " + kernels::gemm_u8s8_implementation() + ")";
}

}  // namespace glassbox::ops
