#include "runtime/memory_plan.h"

#include <algorithm>
#include <climits>

namespace glassbox::runtime {

MemoryPlan build_memory_plan(const MemoryRecord& record, const std::vector<int>& last_use) {
  const size_t n = record.values.size();
  MemoryPlan plan;
  plan.slots.resize(n);
  // Lifetime of each storage root: [definition, last reader of the root or any alias of it].
  std::vector<int> end(n, -1);
  auto root_of = [&](int v) {
    for (int hops = 0; v >= 0 && record.values[v].alias_of >= 0 && hops < static_cast<int>(n); ++hops)
      v = record.values[v].alias_of;
    return v;
  };
  for (size_t v = 0; v < n; ++v) {
    const int r = root_of(static_cast<int>(v));
    if (r < 0 || record.values[r].bytes < 0) continue;
    end[r] = std::max({end[r], last_use[v], record.values[r].def_step});
  }
  struct Item {
    int value;
    int64_t bytes;
    int begin, end;
  };
  std::vector<Item> items;
  for (size_t v = 0; v < n; ++v) {
    const auto& e = record.values[v];
    if (e.bytes < 0 || e.alias_of >= 0 || end[v] == INT_MAX) continue;
    items.push_back({static_cast<int>(v), (e.bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment,
                     e.def_step, std::max(end[v], e.def_step)});
  }
  // Largest first, each at the lowest offset free during its whole lifetime.
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.value < b.value;
  });
  std::vector<Item> placed;
  std::vector<int64_t> placed_offset;
  for (const auto& it : items) {
    std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, offset+bytes) of overlapping lifetimes
    for (size_t j = 0; j < placed.size(); ++j)
      if (placed[j].begin <= it.end && it.begin <= placed[j].end)
        busy.emplace_back(placed_offset[j], placed_offset[j] + placed[j].bytes);
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [b, e] : busy) {
      if (offset + it.bytes <= b) break;
      offset = std::max(offset, e);
    }
    placed.push_back(it);
    placed_offset.push_back(offset);
    plan.slots[it.value] = {offset, record.values[it.value].bytes};
    plan.arena_bytes = std::max(plan.arena_bytes, offset + it.bytes);
  }
  return plan;
}

void grow_record(MemoryRecord& record, const MemoryPlan& outgrown) {
  for (size_t v = 0; v < record.values.size(); ++v) {
    auto& e = record.values[v];
    if (e.bytes <= 0 || e.alias_of >= 0) continue;
    const bool had_room = v < outgrown.slots.size() && outgrown.slots[v].offset >= 0 && e.bytes <= outgrown.slots[v].bytes;
    if (!had_room) e.bytes *= 2;
  }
}

}  // namespace glassbox::runtime
