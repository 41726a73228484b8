// Static memory plan: from the allocations one run of a shape signature made
// (size, producing step, last reader, alias root), place every intermediate in
// one arena so that tensors whose lifetimes overlap never share bytes. Later runs
// of the same signature take their intermediates from one arena allocation.
#pragma once

#include <cstdint>
#include <vector>

namespace glassbox::runtime {

// What one unplanned run observed, per value id.
struct MemoryRecord {
  struct Entry {
    int64_t bytes = -1;   // -1: not allocated by the executor (input, constant, alias, graph output)
    int def_step = -1;
    int alias_of = -1;    // value id whose storage this value views (alias_output), -1 if none
  };
  std::vector<Entry> values;
};

struct MemoryPlan {
  struct Slot {
    int64_t offset = -1;  // -1: not in the arena
    int64_t bytes = 0;
  };
  std::vector<Slot> slots;  // by value id
  int64_t arena_bytes = 0;
};

constexpr int64_t kArenaAlignment = 64;

// last_use: step of the last reader per value (INT_MAX for graph outputs, which
// are never placed in the arena). An alias extends its root's lifetime.
MemoryPlan build_memory_plan(const MemoryRecord& record, const std::vector<int>& last_use);

// Before building a plan for a run that outgrew `outgrown` (a dim of any size, SessionOptions::
// unspecialized_symbols): every value recorded larger than its old slot, or without one, gets twice its
// recorded bytes, so a dim growing one by one outgrows its plan log2 times, not at every size.
void grow_record(MemoryRecord& record, const MemoryPlan& outgrown);

}  // namespace glassbox::runtime
