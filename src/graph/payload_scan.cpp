#include "graph/payload_scan.h"

namespace glassbox::graph {
namespace {

// Protobuf wire format (https://protobuf.dev/programming-guides/encoding/): a message is a
// sequence of (tag varint = field << 3 | wire type, value) records.
constexpr uint32_t kModelGraph = 7;         // ModelProto.graph
constexpr uint32_t kGraphInitializer = 5;   // GraphProto.initializer
constexpr uint32_t kTensorRawData = 9;      // TensorProto.raw_data
constexpr uint32_t kLengthDelimited = 2;

bool read_varint(const uint8_t*& p, const uint8_t* end, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p >= end) return false;
    const uint8_t b = *p++;
    v |= uint64_t(b & 0x7F) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

struct Field {
  uint32_t number, wire_type;
  const uint8_t* record;  // the tag's first byte
  const uint8_t* value;   // the payload (after the length for length-delimited fields)
  const uint8_t* end;     // one past the record
};

// Calls fn(field) for every record of the message in [p, end); false on malformed bytes or
// when fn returns false.
template <class F>
bool for_each_field(const uint8_t* p, const uint8_t* end, F fn) {
  while (p < end) {
    Field f{};
    f.record = p;
    uint64_t tag;
    if (!read_varint(p, end, tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1FFFFFFF) return false;
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire_type = static_cast<uint32_t>(tag & 7);
    switch (f.wire_type) {
      case 0: {
        uint64_t ignored;
        f.value = p;
        if (!read_varint(p, end, ignored)) return false;
        break;
      }
      case 1:
      case 5: {
        const size_t n = f.wire_type == 1 ? 8 : 4;
        if (static_cast<size_t>(end - p) < n) return false;
        f.value = p;
        p += n;
        break;
      }
      case kLengthDelimited: {
        uint64_t len;
        if (!read_varint(p, end, len) || len > static_cast<uint64_t>(end - p)) return false;
        f.value = p;
        p += len;
        break;
      }
      default:
        return false;  // groups (3, 4) are not used by ONNX; anything else is corrupt
    }
    f.end = p;
    if (!fn(f)) return false;
  }
  return true;
}

void append_record(std::string& out, const Field& f) {
  out.append(reinterpret_cast<const char*>(f.record), static_cast<size_t>(f.end - f.record));
}

void append_message(std::string& out, uint32_t number, const std::string& body) {
  put_varint(out, (uint64_t(number) << 3) | kLengthDelimited);
  put_varint(out, body.size());
  out += body;
}

}  // namespace

std::optional<StrippedModel> strip_initializer_payloads(const uint8_t* data, size_t size, uint64_t min_bytes) {
  StrippedModel out;
  bool seen_graph = false;
  auto strip_tensor = [&](const Field& tf, int index, std::string& body) {
    bool seen_raw = false;
    return for_each_field(tf.value, tf.end, [&](const Field& f) {
      if (f.number == kTensorRawData) {
        if (seen_raw || f.wire_type != kLengthDelimited) return false;
        seen_raw = true;
        const uint64_t n = static_cast<uint64_t>(f.end - f.value);
        if (n > min_bytes) {
          out.payloads.push_back({index, static_cast<uint64_t>(f.value - data), n});
          return true;
        }
      }
      append_record(body, f);
      return true;
    });
  };
  auto strip_graph = [&](const Field& gf, std::string& body) {
    int index = 0;
    return for_each_field(gf.value, gf.end, [&](const Field& f) {
      if (f.number != kGraphInitializer) {
        append_record(body, f);
        return true;
      }
      if (f.wire_type != kLengthDelimited) return false;
      std::string tensor;
      if (!strip_tensor(f, index++, tensor)) return false;
      append_message(body, kGraphInitializer, tensor);
      return true;
    });
  };
  const bool ok = for_each_field(data, data + size, [&](const Field& f) {
    if (f.number != kModelGraph) {
      append_record(out.bytes, f);
      return true;
    }
    if (seen_graph || f.wire_type != kLengthDelimited) return false;  // a repeated graph field would merge
    seen_graph = true;
    std::string graph;
    if (!strip_graph(f, graph)) return false;
    append_message(out.bytes, kModelGraph, graph);
    return true;
  });
  if (!ok || out.payloads.empty()) return std::nullopt;
  return out;
}

}  // namespace glassbox::graph
