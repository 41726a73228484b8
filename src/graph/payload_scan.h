// Zero-copy initializers: finds the raw_data payloads of the main graph's initializers in a
// serialized ModelProto, so protobuf parses only the structure and the IR views the payloads
// in the mapped file (LoadOptions::map_initializers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace glassbox::graph {

struct InitializerPayload {
  int index = -1;       // position in ModelProto.graph.initializer
  uint64_t offset = 0;  // of the raw_data bytes in the serialized model
  uint64_t size = 0;
};

struct StrippedModel {
  std::string bytes;                         // the model without those raw_data fields
  std::vector<InitializerPayload> payloads;  // in initializer order
};

// Copies `data` without the raw_data fields longer than `min_bytes` of the main graph's
// initializers (subgraphs and Constant nodes are left alone). nullopt when nothing would be
// stripped or the bytes are not the plain wire format this scan understands (groups, a
// repeated graph field, a tensor with two raw_data fields, truncation): the caller then
// parses the original bytes, and protobuf reports what is wrong with them.
std::optional<StrippedModel> strip_initializer_payloads(const uint8_t* data, size_t size, uint64_t min_bytes);

}  // namespace glassbox::graph
