// The packed-weights cache as the packers see it (SessionOptions::weights_cache; the file,
// its key and its checks are the runtime's: runtime/weights_cache.h).
//
// The runtime registers every initializer of a session that uses a cache with a name that
// is stable across processes (the initializer's name; the file's key covers the model's
// bytes and everything that changes the packing). A packer asks `pack_through_cache`:
// a packing found in the cache is rebuilt in place from the mapped file (no copy);
// otherwise the weights are packed and handed to the store, which writes them after the
// first run. Weights not registered (no cache, or constants made at run time) are packed
// as before.
//
// How a packed kind plugs in: give it a kind string that names everything its bytes depend
// on besides the weights (e.g. "gemm_b bf16 K=768 N=3072 trans_b=0"), a to_bytes and a
// from_bytes in kernels/ (kernels/packed_bytes.h), and call pack_through_cache from the
// op-layer function that packs it (packed_weights.cpp, packed_weights_s8.cpp). Bump
// kPackedLayoutVersion (runtime/weights_cache.h) when a kind's bytes change meaning.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "glassbox/tensor.h"
#include "kernels/packed_bytes.h"

namespace glassbox::ops {

class PackedBlobStore {
 public:
  virtual ~PackedBlobStore() = default;
  // The bytes stored under `key`, segments in the read-only mapped cache file; nullopt when absent.
  virtual std::optional<kernels::PackedBytes> find(const std::string& key) = 0;
  // A packing made in this process; bytes.owner keeps it alive until the file is written.
  virtual void add(const std::string& key, kernels::PackedBytes bytes) = 0;
  // A stored packing its kind refused (from_bytes said why): it was packed again instead.
  virtual void refused(const std::string& key, const std::string& why) = 0;
};

// The runtime: `t` (an initializer of a session with a cache) is known as `name` to `store`.
// Held weakly (tensor storage and store), so a freed session's entries go away.
void register_cacheable_constant(const Tensor& t, const std::string& name, const std::shared_ptr<PackedBlobStore>& store);

struct CacheableConstant {
  std::shared_ptr<PackedBlobStore> store;  // null: not registered, pack as usual
  std::string name;
};
CacheableConstant cacheable_constant(const Tensor& t);

// The packing of `b` for `kind`: from the cache when it holds one the kind accepts, else
// pack() (then handed to the cache when `b` is registered).
//   pack: () -> shared_ptr<const P>;  to_bytes: (shared_ptr<const P>) -> PackedBytes;
//   from_bytes: (const PackedBytes&, std::string* why) -> shared_ptr<const P> (nullptr: refused)
template <class Pack, class ToBytes, class FromBytes>
auto pack_through_cache(const Tensor& b, const std::string& kind, Pack pack, ToBytes to_bytes, FromBytes from_bytes) {
  const CacheableConstant c = cacheable_constant(b);
  if (!c.store) return pack();
  const std::string key = kind + " " + c.name;
  if (auto bytes = c.store->find(key)) {
    std::string why;
    if (auto p = from_bytes(*bytes, &why)) return p;
    c.store->refused(key, why);
  }
  auto p = pack();
  c.store->add(key, to_bytes(p));
  return p;
}

}  // namespace glassbox::ops
