// A KV cache the caller keeps (the generation session) and binds to one run of a session whose
// SessionOptions::kv_cache_inputs name its past inputs (Session::run_bound, docs/generation.md "KV cache in
// place"): the attention reads the cached positions where they are and writes the run's new keys or values
// after them, so no past is copied in and no present comes out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace glassbox {

struct KvCacheBinding {
  std::string input;  // the past input it stands for; the tensor fed for it gives the run's shapes only
  // One buffer per batch row: head h, position t at rows[b] + (h * capacities[b] + t) * head_dim.
  std::vector<float*> rows;
  std::vector<int64_t> capacities;  // positions per head in each row's buffer (>= lengths[b] + fresh[b])
  // Positions cached per row before the run: the last lengths[b] of the fed past's positions are row b's
  // (left padding before them), and its new positions are the last fresh[b] of the run's new tokens.
  std::vector<int64_t> lengths;
  std::vector<int64_t> fresh;
  int64_t uses = 0;      // set by the run: the nodes that read and wrote it (run_bound requires exactly 1)
};

}  // namespace glassbox
