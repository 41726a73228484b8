// IEEE half (float16) and bfloat16 storage types with float32 conversion.
// Storage only: arithmetic on them goes through float.
#pragma once

#include <cstdint>
#include <cstring>

namespace glassbox::kernels {

struct Float16 {
  uint16_t bits = 0;
};
struct BFloat16 {
  uint16_t bits = 0;
};

inline float half_to_float(Float16 h) {
  const uint32_t sign = (h.bits & 0x8000u) << 16;
  uint32_t exp = (h.bits >> 10) & 0x1f;
  uint32_t mant = h.bits & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {  // subnormal: renormalize
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) { mant <<= 1; --exp; }
      mant &= 0x3ffu;
      out = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

// Round to nearest even, overflow to inf, NaN preserved.
inline Float16 float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return {static_cast<uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u))};
  if (ax >= 0x477ff000u) return {static_cast<uint16_t>(sign | 0x7c00u)};  // rounds to >= 65520: inf
  if (ax < 0x38800000u) {  // result is subnormal or zero
    if (ax < 0x33000000u) return {sign};
    const uint32_t e = ax >> 23;
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14 - (e - 127) - ... maps to a 10-bit subnormal mantissa
    uint32_t r = m >> (shift);
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return {static_cast<uint16_t>(sign | r)};
  }
  uint32_t r = ax - 0x38000000u;  // rebias exponent
  const uint32_t rem = r & 0x1fffu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return {static_cast<uint16_t>(sign | r)};
}

inline float bfloat16_to_float(BFloat16 b) {
  const uint32_t x = static_cast<uint32_t>(b.bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

inline BFloat16 float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return {static_cast<uint16_t>((x >> 16) | 0x40u)};  // quiet NaN
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return {static_cast<uint16_t>((x + rounding) >> 16)};
}

}  // namespace glassbox::kernels
