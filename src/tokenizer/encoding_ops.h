// Encoding operations with Hugging Face semantics (truncation windows, merge, padding).
#pragma once

#include <vector>

#include "glassbox/error.h"
#include "glassbox/tokenizer.h"

namespace glassbox::tok {

// Encoding::truncate: first window stays, the others go to `overflowing` in order.
Status truncate_encoding(Encoding& e, std::size_t max_len, std::size_t stride, Side dir);
// truncate_encodings with the given effective max_length.
Status truncate_pair(Encoding& a, Encoding* b, const TruncationPolicy& t, std::size_t max_length);
// Encoding::merge_with (growing_offsets = false), overflow combinations included.
void merge_with(Encoding& self, const Encoding& pair);
Encoding merge_all(std::vector<Encoding>& encs);
void pad_encoding(Encoding& e, std::size_t target, const PaddingPolicy& p);
void pad_batch(std::vector<Encoding>& encs, const PaddingPolicy& p);

}  // namespace glassbox::tok
