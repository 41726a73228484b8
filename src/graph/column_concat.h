// A constant made of other constants' columns, built only when something reads it.
//
// qkv_projection_fusion joins the Q, K and V projection weights [K, n_i] into one
// [K, n_0 + n_1 + n_2]. Copying them at load costs what the packed-weights cache is there
// to avoid (BERT-base: 85 MB of fp32 read from the model file and written to the heap,
// +1 s load, +150 MB peak RSS, all of it for nothing when the cache already holds the
// joined packing). This buffer holds the parts and joins them on first read instead:
//  - source_bytes() joins them into a heap copy and lets the parts' pages go (a mapped
//    model file drops them from the resident set). The packers read weights this way
//    (ops/packed_weights*.cpp) and call release_pages() over the whole buffer right after
//    packing: that frees the copy again. A pointer from source_bytes() is therefore valid
//    only until release_pages() covers the whole buffer.
//  - data() joins them too and keeps the copy for the buffer's lifetime (release_pages
//    no longer frees it): a reader of data() may hold the pointer.
//  - a packer whose packing comes from the cache never reads the bytes: nothing is joined.
#pragma once

#include <memory>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/tensor.h"

namespace glassbox::graph {

// [rows, sum of the parts' columns] of `parts` (each [rows, n_i], one dtype, not strings),
// part 0's columns first. Fails on an empty list, a rank other than 2, mismatched rows or
// dtypes, or string tensors.
Result<Tensor> concat_columns_lazily(std::vector<Tensor> parts);

}  // namespace glassbox::graph
