#include "ops/packed_weights_s8.h"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "ops/packed_cache.h"

namespace glassbox::ops {
namespace {

struct Entry {
  std::weak_ptr<Buffer> buffer;
  std::weak_ptr<const kernels::PackedGemmS8B> packed;
};

using Key = std::tuple<const Buffer*, size_t, int64_t, int64_t>;

}  // namespace

std::shared_ptr<const kernels::PackedGemmS8B> packed_weights_s8(const Tensor& b, ThreadPool& pool) {
  static std::mutex mu;
  static std::map<Key, Entry> registry;
  const int64_t K = b.shape()[0], N = b.shape()[1];
  const Key key{b.buffer().get(), b.byte_offset(), K, N};
  std::lock_guard<std::mutex> lock(mu);
  for (auto it = registry.begin(); it != registry.end();)
    it = it->second.packed.expired() || it->second.buffer.expired() ? registry.erase(it) : std::next(it);
  auto it = registry.find(key);
  if (it != registry.end() && it->second.buffer.lock() == b.buffer())
    if (auto p = it->second.packed.lock()) return p;
  // Read inside pack(): a packing found in the cache never touches the weights.
  auto src = [&b] {
    return reinterpret_cast<const int8_t*>(static_cast<const char*>(b.buffer()->source_bytes()) + b.byte_offset());
  };
  const std::string kind = "gemm_b_s8 K=" + std::to_string(K) + " N=" + std::to_string(N);
  auto p = pack_through_cache(
      b, kind, [&] { return kernels::pack_gemm_b_s8(K, N, N, src(), &pool); },
      [](std::shared_ptr<const kernels::PackedGemmS8B> q) { return kernels::packed_gemm_b_s8_to_bytes(std::move(q)); },
      [&](const kernels::PackedBytes& bytes, std::string* why) {
        return kernels::packed_gemm_b_s8_from_bytes(K, N, bytes, why);
      });
  registry[key] = Entry{b.buffer(), p};
  b.buffer()->release_pages(b.byte_offset(), b.nbytes());
  return p;
}

}  // namespace glassbox::ops
