// Model inputs for diagnostic verbs: from files (--input NAME=FILE, .pb/.npy)
// or generated from a shape (--shape NAME=1x128) with a declared, seeded fill rule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/session.h"

namespace glassbox::diag {

struct InputOrigin {
  std::string name;
  std::string source;  // "file:<path>" or "generated:<rule>"
  DataType dtype = DataType::kUndefined;
  Shape shape;
};

// How generated inputs are filled (printed with every result that used them):
// float -> uniform [-1, 1); integer named *mask* -> 1; *type* (token_type_ids) -> 0;
// *position* -> 0..n-1 along the last axis; other integers -> uniform [0, 100); bool -> true.
const char* generated_fill_rule();

// "1x128" -> {1, 128}; "" -> {} (a scalar).
Result<Shape> parse_shape(const std::string& text);

// Builds one tensor per model input. input_args: "NAME=FILE"; shape_args: "NAME=DxD...".
// An input with a fully known declared shape needs neither. Unknown names are errors.
Result<std::vector<NamedTensor>> prepare_inputs(const Session& session, const std::vector<std::string>& input_args,
                                                const std::vector<std::string>& shape_args, uint64_t seed,
                                                std::vector<InputOrigin>* origins);

// Generates one input tensor of the given spec and concrete shape with the fill rule above.
Result<Tensor> generate_input(const TensorSpec& spec, const Shape& shape, uint64_t seed);

}  // namespace glassbox::diag
