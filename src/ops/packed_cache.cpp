#include "ops/packed_cache.h"

#include <map>
#include <mutex>
#include <utility>

namespace glassbox::ops {
namespace {

struct Entry {
  std::weak_ptr<Buffer> buffer;
  std::weak_ptr<PackedBlobStore> store;
  std::string name;
};

using Key = std::pair<const Buffer*, size_t>;  // storage and byte offset (mapped initializers share one Buffer)

struct Registry {
  std::mutex mu;
  std::map<Key, Entry> entries;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_cacheable_constant(const Tensor& t, const std::string& name, const std::shared_ptr<PackedBlobStore>& store) {
  if (!t.defined() || !t.buffer()) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto it = r.entries.begin(); it != r.entries.end();)
    it = it->second.buffer.expired() || it->second.store.expired() ? r.entries.erase(it) : std::next(it);
  r.entries[{t.buffer().get(), t.byte_offset()}] = Entry{t.buffer(), store, name};
}

CacheableConstant cacheable_constant(const Tensor& t) {
  if (!t.defined() || !t.buffer()) return {};
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.entries.find({t.buffer().get(), t.byte_offset()});
  if (it == r.entries.end() || it->second.buffer.lock() != t.buffer()) return {};
  auto store = it->second.store.lock();
  if (!store) return {};
  return {std::move(store), it->second.name};
}

}  // namespace glassbox::ops
