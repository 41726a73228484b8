// What the oneDNN GEMM files (gemm_dnnl.cpp float32/bf16, gemm_int8_dnnl.cpp u8 x s8)
// share: the engine, single-threaded execution on the calling thread, per-thread
// buffers, one primitive cache, interned packed-weight layouts, and the tile
// scheduler that spreads (row block x column block) tiles of a packed product over
// glassbox's ThreadPool. Threads: see the comment at the top of gemm_dnnl.cpp.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <istream>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/kernel_error.h"

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels::dnnl_common {

dnnl::engine& engine();

// The calling thread runs oneDNN single-threaded. Set on every call: conv_dnnl.cpp sets
// the same per-thread count to the pool size.
void single_threaded_onednn();

dnnl::stream& thread_stream();

// Per-thread buffers, one per tag (a tag's buffer is never in use twice at once on a thread).
enum BufferTag {
  kScratch = 0,    // oneDNN scratchpad of the primitive being executed
  kTile = 1,       // one tile's dense output (f32) or accumulator (s32)
  kBf16Rows = 2,   // the calling thread's bf16 copy of a call's activations (read by all tiles)
  kU8Rows = 3,     // the calling thread's u8 activations of an int8-dynamic call
  kRowParams = 4,  // the calling thread's per-row scales and zero points of that call
};

// A per-thread, 64-byte aligned buffer grown on demand.
template <int Tag>
void* thread_buffer(size_t bytes) {
  thread_local std::shared_ptr<void> buf;
  thread_local size_t size = 0;
  if (bytes > size) {
    size = (bytes + 4095) / 4096 * 4096;
    buf.reset(std::aligned_alloc(64, size), std::free);
  }
  return buf.get();
}

struct Primitive {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  size_t scratch = 0;
};

// Creating a primitive costs 0.3-1.3 ms, far more than a small tile: primitives are
// cached by key (shape, strides, layout, epilogue, types; keys of different product kinds
// differ in length or first element) behind a mutex, at most 2048 (then cleared).
Primitive get_primitive(const std::vector<int64_t>& key, const std::function<dnnl::matmul::primitive_desc()>& make);

// The weights layout oneDNN picks for a [K, n] block of packed weights (types: activations,
// weights, product) at a typical row count (128); products with other row counts are created
// with the same layout. `id` indexes the table shared by all packings (same desc, same id).
// Memoized by (K, n, types): a primitive descriptor costs ~0.1 ms and BERT-base packs hundreds
// of blocks of three shapes (and the packed-weights cache recomputes them on every load).
struct BlockLayout {
  int id = -1;
  dnnl::memory::desc desc;
};
BlockLayout block_layout(int64_t K, int64_t n, dnnl::memory::data_type src, dnnl::memory::data_type weights,
                         dnnl::memory::data_type dst);

// A new 64-byte aligned buffer of to.get_size() bytes holding `from` (data at `src`) reordered
// into the layout `to`, on the calling thread.
std::shared_ptr<void> reorder_into_new(const dnnl::memory::desc& from, const void* src, const dnnl::memory::desc& to);

// A packed block's bytes from the packed-weights cache, used in place: "" and *data set when
// `segment` holds exactly desc.get_size() bytes, 64-byte aligned (kept alive by `owner`), else why not.
std::string bind_cached_block(const dnnl::memory::desc& desc, std::span<const std::byte> segment, int64_t size_in_meta,
                              const std::shared_ptr<const void>& owner, std::shared_ptr<void>* data);

// One " n0:n:bytes" entry (block `index`) of a packing's meta text, the tiling of [0, N) having
// reached column `next`: "" and the fields set, or why the entry does not continue the tiling.
std::string read_block_entry(std::istream& in, int64_t index, int64_t next, int64_t N, int64_t* n0, int64_t* n,
                             int64_t* size);

// User-managed scratchpad (the library-managed one is shared by concurrent executions).
dnnl::primitive_attr base_attr();

// Runs p on the calling thread with its scratchpad in thread_buffer<kScratch>.
void execute(const Primitive& p, std::unordered_map<int, dnnl::memory> args);

// The per-tile path of the packed products: a cached primitive with this thread's argument
// memories, created once per (thread, primitive); each execution only swaps data handles.
// Per tile, get_primitive + execute took the cache's mutex, copied the primitive's handles
// (atomic reference counts shared by all threads), created 4-5 dnnl::memory objects and an
// argument map: microseconds per tile, hundreds of tiles per encoder run.
struct BoundPrimitive {
  Primitive p;
  std::unordered_map<int, dnnl::memory> args;  // SRC, WEIGHTS, DST [, BIAS] [, SCRATCHPAD]
};

// The primitive cached under key (made by `make` on a miss of the shared cache), from a
// thread-local front (no lock, no copy). The reference is valid until this thread's next call.
BoundPrimitive& bound_primitive(const std::vector<int64_t>& key, const std::function<dnnl::matmul::primitive_desc()>& make);

// Runs b on the calling thread on these buffers (bias only if its primitive takes one).
void execute_bound(BoundPrimitive& b, const void* src, const void* weights, void* dst, const void* bias = nullptr);

// Packed weights are cut into column blocks, the unit of parallel work: multiples of 64 up
// to 256, at least 3 per thread when N allows, so the caller can absorb a late worker's share.
int64_t column_block_width(int64_t N, ThreadPool* pool);

// Row blocks for tall products (batched sequences) so tiles stay cache-sized.
constexpr int64_t kRowBlock = 256;

// tile(m0, m, block) for every row block [m0, m0 + m) of M and column block index in
// [0, column_blocks), on the pool's threads (inline when one tile or no pool); a tile's
// KernelError is rethrown here (kernels::parallel_for_rethrow).
void run_tiles(int64_t M, int64_t column_blocks, ThreadPool* pool,
               const std::function<void(int64_t m0, int64_t m, int64_t block)>& tile);

// A oneDNN call that threw: a KernelError naming the call (`what`, with its sizes and types),
// oneDNN's message and status, this CPU's features and oneDNN's ISA, and what to do.
[[noreturn]] void throw_dnnl_error(const std::string& what, const dnnl::error& e);

// oneDNN's matmul implementation for these descriptors on this CPU ("brg:avx512_core",
// "gemm:jit", ...), or "none (oneDNN: <why>)": what explain reports per GEMM precision.
std::string matmul_implementation(const dnnl::memory::desc& a, const dnnl::memory::desc& w, const dnnl::memory::desc& c);

}  // namespace glassbox::kernels::dnnl_common
