// The safetensors format (what sentence-transformers writes for a Dense module's weights):
// an 8-byte little-endian header length N, N bytes of JSON {"name": {"dtype", "shape",
// "data_offsets": [begin, end]}, "__metadata__"?: {str: str}}, then the byte buffer the offsets
// index (relative to its start). Read strictly: every size, offset and dtype is checked, the
// buffer must be indexed entirely without holes or overlaps (as the format requires).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "glassbox/error.h"

namespace glassbox::pipeline {

struct SafetensorsTensor {
  std::string dtype;           // as stored: "F32", "F16", "BF16", "F64"
  std::vector<int64_t> shape;
  std::vector<float> values;   // converted to float32 exactly (F64 rounded to nearest)
};

// Reads every tensor of `path`; a dtype other than F32/F16/BF16/F64 is refused by name.
Result<std::map<std::string, SafetensorsTensor>> read_safetensors(const std::string& path);

// The same from bytes already in memory (tests; `where` names them in errors).
Result<std::map<std::string, SafetensorsTensor>> parse_safetensors(const std::string& bytes, const std::string& where);

}  // namespace glassbox::pipeline
