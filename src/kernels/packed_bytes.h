// A packed weight matrix as bytes, for the packed-weights cache file
// (SessionOptions::weights_cache): a short text the packing kind writes and parses
// back (dimensions, block table), and the large payloads (the packed blocks), each
// stored 4096-byte aligned in the file. Kernels only turn a packing into this and
// back; the file, its key and its checks live in the runtime (runtime/weights_cache.h).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace glassbox::kernels {

struct PackedBytes {
  std::string meta;                                  // the kind's own description, checked when read back
  std::vector<std::span<const std::byte>> segments;  // payloads: in the packing (write) or the mapped file (read)
  std::shared_ptr<const void> owner;                 // keeps the segments' memory alive
};

}  // namespace glassbox::kernels
