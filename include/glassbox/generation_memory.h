// A decoder's memory at a generation shape (docs/memory.md, "Generation and the KV cache"): `batch` sequences
// of `prompt` prompt tokens and `new_tokens` generated ones. Counted, beside the process and the weights:
//   kv_cache    batch x (prompt + new_tokens) x kv_bytes_per_token, reserved whole at admission
//   past_feeds  the past copied into each step's feeds (the in-place cache is open, docs/generation.md):
//               at the last step batch x (prompt + new_tokens - 1) x kv_bytes_per_token, the caller's tensors
//   run         the engine's own accounting (Session::check_memory: two runs each) of the prefill at
//               batch x prompt and of the last step (one token after the longest past): the larger
#pragma once
// (Public: `glassbox inspect --generate-shape` uses it; docs/memory.md.)

#include <cstdint>
#include <string>

#include "glassbox/generation.h"

namespace glassbox::generation {

struct DecoderMemory {
  int64_t batch = 0, prompt = 0, new_tokens = 0;
  int64_t kv_cache = 0;    // the sequences' KV reservations
  int64_t past_feeds = 0;  // the feeds of the last step (its past, copied), bytes
  int64_t first_run = 0, arena = 0;  // of the dry run (prefill or last step) whose run tensors are larger
  std::string shape;       // that dry run's input shapes
  int64_t run() const { return first_run + arena; }
  int64_t total_without_process(int64_t weights) const { return weights + kv_cache + past_feeds + run(); }
};

// Dry-runs the prefill and the last step of the shape on `g`'s session (zero ids, ones in the mask, zero past).
// `reserved` is passed to Session::check_memory (what is counted outside the session; -1 keeps the session's):
// with a budget, a shape that does not fit is refused there naming every number.
Result<DecoderMemory> estimate_decoder_memory(const GenerationSession& g, int64_t batch, int64_t prompt, int64_t new_tokens,
                                              int64_t reserved = -1);

}  // namespace glassbox::generation
