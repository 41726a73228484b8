// One op's handle on the packing of its constant weights (float32 packed_weights.h,
// int8 packed_weights_s8.h): remembers the packing of the weights it was first given
// and packs again only when given other weights (another Buffer or offset) or asks for
// another variant (precision, transposition). The Buffer is held as weak_ptr, so a freed
// and reused address is never mistaken for the old weights.
#pragma once

#include <memory>
#include <mutex>

#include "glassbox/tensor.h"

namespace glassbox::ops {

template <class Packed>
class PackedSlot {
 public:
  // pack() -> std::shared_ptr<const Packed>, called under the slot's lock when needed.
  template <class Pack>
  std::shared_ptr<const Packed> get(const Tensor& b, int variant, const Pack& pack) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!packed_ || buffer_.lock() != b.buffer() || offset_ != b.byte_offset() || variant_ != variant) {
      packed_ = pack();
      variant_ = variant;
      buffer_ = b.buffer();
      offset_ = b.byte_offset();
    }
    return packed_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::shared_ptr<const Packed> packed_;
  mutable std::weak_ptr<Buffer> buffer_;
  mutable size_t offset_ = 0;
  mutable int variant_ = 0;
};

}  // namespace glassbox::ops
