// The packed-weights cache file (SessionOptions::weights_cache): the GEMM weights a
// session packs (ops/packed_cache.h) written once after its first run and mapped
// read-only by later loads of the same model, so a warm start skips the packing.
//
// One file per model path and precision: DIR/<model stem>-<sha256(real path), 16 hex>-<precision>.gbpw.
// Layout (little-endian):
//   [0, 64)     header: magic "GBPWCACH", format version (u32), reserved (u32), index offset,
//               index bytes, index checksum, payload offset, payload bytes, payload checksum (u64 each)
//   [64, ...)   index: JSON {"key": {...}, "model_stat": ..., "entries": [{"key", "meta", "segments":
//               [[offset, bytes, checksum], ...]}]}, offsets relative to the payload
//   payload     at a 4096-byte boundary; every segment 4096-byte aligned (used in place by the kernels)
// The key: the model's SHA-256 and size, the engine version, kPackedLayoutVersion, the CPU
// key (oneDNN version and ISA, vector features: they decide the blocked layouts), the
// precision and the passes (opt level, disabled passes: they decide which constants exist and
// their names). A file whose header, key, size or any segment checksum does not match is
// never used: the session packs as without a cache and replaces the file after its first run.
// Writes: a unique temporary name in DIR, fsync, rename over the file, fsync of DIR; one
// writer at a time per file (flock on FILE.lock, non-blocking: a process that finds it taken
// leaves the write to the holder). The model's hash is reused while its device, inode, size,
// mtime and ctime are unchanged since it was hashed, as git's index does (a model modified
// within 2 s of being hashed is hashed again on every load, the "racy" case).
#pragma once

#include <memory>
#include <string>

#include "glassbox/session.h"
#include "graph/graph.h"
#include "ops/packed_cache.h"

namespace glassbox::runtime {

// Bump when any packed kind's bytes change meaning (block layout, meta text, segment order).
constexpr int kPackedLayoutVersion = 2;
// The file's own layout (header, index).
constexpr int kWeightsCacheFormatVersion = 1;

// Test hook, for tests only: replaces the CPU key of this process ("" restores the real
// one), so a test can write a file as if on another CPU. Not an option: nothing else calls it.
void set_weights_cache_cpu_for_testing(const std::string& cpu);

class WeightsCache;
class WeightsCacheEarly;

// Before the model is parsed (the load's other work overlaps it): opens the cache file for
// `model_path` in options.weights_cache, checks its header and index, maps it and starts
// checking every segment's checksum on max(1, options.threads - 1) background threads.
// Nothing from the file is used before open_weights_cache has compared the key and awaited the
// check. nullptr when the option is "". Dropping the result cancels the check and joins.
std::shared_ptr<WeightsCacheEarly> start_weights_cache(const SessionOptions& options, const std::string& model_path);

// Opens (or prepares to create) the cache for `model` in options.weights_cache, continuing
// `early` (if it was started for the same file; else the whole check happens here). Never
// fails: a problem becomes the report's state (unavailable: the session runs without a cache;
// rebuilt: the file is replaced after the first run). nullptr when the option is "".
std::shared_ptr<WeightsCache> open_weights_cache(const SessionOptions& options, const graph::Model& model,
                                                 std::shared_ptr<WeightsCacheEarly> early);

// The store the packers see (registered per initializer by the session).
std::shared_ptr<ops::PackedBlobStore> weights_cache_store(const std::shared_ptr<WeightsCache>& cache);

// After each successful run: on a miss, starts writing the file (once, in the background).
void weights_cache_after_run(WeightsCache& cache);

WeightsCacheReport weights_cache_report(WeightsCache& cache, bool wait_for_write);

}  // namespace glassbox::runtime
