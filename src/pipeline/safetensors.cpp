#include "pipeline/safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace glassbox::pipeline {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the format's own limit (100 MB)
constexpr uint64_t kMaxFileBytes = 4ull << 30;     // a Dense layer is megabytes; refuse before reading more

float f16_to_f32(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, bits = 0;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant != 0) {  // subnormal: normalize
    int e = -1;
    do { ++e; mant <<= 1; } while (!(mant & 0x400u));
    bits = sign | ((112 - e) << 23) | ((mant & 0x3ffu) << 13);
  } else {
    bits = sign;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

int dtype_bytes(const std::string& d) {
  if (d == "F32") return 4;
  if (d == "F16" || d == "BF16") return 2;
  if (d == "F64") return 8;
  return 0;
}

template <class T>
T load_le(const unsigned char* p) {  // x86 and the format are little-endian
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

Error bad(const std::string& what, const std::string& where) {
  return make_error(ErrorCode::kInvalidModel, what, where, "re-save the weights with the safetensors library");
}

}  // namespace

Result<std::map<std::string, SafetensorsTensor>> parse_safetensors(const std::string& bytes, const std::string& where) {
  if (bytes.size() < 8) return bad("file has " + std::to_string(bytes.size()) + " bytes, fewer than the 8-byte header length", where);
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const uint64_t n = load_le<uint64_t>(data);
  if (n > kMaxHeaderBytes || n > bytes.size() - 8)
    return bad("header length " + std::to_string(n) + " exceeds the file (" + std::to_string(bytes.size()) + " bytes)", where);
  const std::string header = bytes.substr(8, n);
  if (header.empty() || header[0] != '{') return bad("header does not start with '{'", where);
  json h = json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (h.is_discarded() || !h.is_object()) return bad("header is not a JSON object", where);
  const uint64_t buffer = bytes.size() - 8 - n;
  const unsigned char* base = data + 8 + n;
  struct Span { uint64_t begin, end; std::string name; };
  std::vector<Span> spans;
  std::map<std::string, SafetensorsTensor> out;
  for (const auto& [name, t] : h.items()) {
    if (name == "__metadata__") {
      if (!t.is_object()) return bad("__metadata__ is not an object", where);
      for (const auto& [k, v] : t.items())
        if (!v.is_string()) return bad("__metadata__ '" + k + "' is not a string", where);
      continue;
    }
    const std::string at = where + ": tensor '" + name + "'";
    if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string() || !t.contains("shape") || !t["shape"].is_array() ||
        !t.contains("data_offsets") || !t["data_offsets"].is_array() || t["data_offsets"].size() != 2 || t.size() != 3)
      return bad("entry is not {\"dtype\", \"shape\", \"data_offsets\": [begin, end]}", at);
    SafetensorsTensor st;
    st.dtype = t["dtype"].get<std::string>();
    const int eb = dtype_bytes(st.dtype);
    if (eb == 0)
      return make_error(ErrorCode::kUnsupported, "dtype " + st.dtype + " is not read (F32, F16, BF16, F64 are)", at,
                        "save the weights as float32");
    uint64_t numel = 1;
    for (const auto& d : t["shape"]) {
      if (!d.is_number_unsigned()) return bad("shape holds " + d.dump() + ", not a non-negative integer", at);
      const uint64_t v = d.get<uint64_t>();
      if (v != 0 && numel > (uint64_t{1} << 40) / v) return bad("shape is too large", at);
      numel *= v;
      st.shape.push_back(static_cast<int64_t>(v));
    }
    const auto& off = t["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) return bad("data_offsets are not non-negative integers", at);
    const uint64_t b = off[0].get<uint64_t>(), e = off[1].get<uint64_t>();
    if (b > e || e > buffer)
      return bad("data_offsets [" + std::to_string(b) + ", " + std::to_string(e) + "] are outside the " +
                     std::to_string(buffer) + "-byte buffer", at);
    if (e - b != numel * static_cast<uint64_t>(eb))
      return bad("data_offsets span " + std::to_string(e - b) + " bytes, but " + st.dtype + " of this shape needs " +
                     std::to_string(numel * eb), at);
    st.values.resize(numel);
    const unsigned char* p = base + b;
    for (uint64_t i = 0; i < numel; ++i) {
      if (st.dtype == "F32") {
        st.values[i] = load_le<float>(p + 4 * i);
      } else if (st.dtype == "F64") {
        st.values[i] = static_cast<float>(load_le<double>(p + 8 * i));
      } else if (st.dtype == "F16") {
        st.values[i] = f16_to_f32(load_le<uint16_t>(p + 2 * i));
      } else {  // BF16: the upper half of a float32
        const uint32_t bits = static_cast<uint32_t>(load_le<uint16_t>(p + 2 * i)) << 16;
        std::memcpy(&st.values[i], &bits, 4);
      }
    }
    spans.push_back({b, e, name});
    out.emplace(name, std::move(st));
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  uint64_t pos = 0;
  for (const auto& s : spans) {
    if (s.begin != pos)
      return bad(s.begin < pos ? "tensor '" + s.name + "' overlaps the previous one"
                               : "bytes " + std::to_string(pos) + ".." + std::to_string(s.begin) + " before tensor '" + s.name +
                                     "' belong to no tensor",
                 where);
    pos = s.end;
  }
  if (pos != buffer)
    return bad("the last " + std::to_string(buffer - pos) + " bytes of the buffer belong to no tensor", where);
  return out;
}

Result<std::map<std::string, SafetensorsTensor>> read_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot open the weights file", path);
  const auto size = static_cast<uint64_t>(in.tellg());
  if (size > kMaxFileBytes)
    return make_error(ErrorCode::kLimitExceeded, "weights file has " + std::to_string(size) + " bytes, over 4 GiB", path);
  std::string bytes(size, '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size)))
    return make_error(ErrorCode::kIo, "cannot read the weights file", path);
  return parse_safetensors(bytes, path);
}

}  // namespace glassbox::pipeline
