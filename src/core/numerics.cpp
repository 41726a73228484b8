#include "glassbox/numerics.h"

#include <cstring>

namespace glassbox {
namespace {

// Bit layout of one float dtype: an element is non-finite when its exponent is all ones;
// NaN when the mantissa is then non-zero, else +-Inf by the sign bit.
template <class Bits>
struct Layout {
  Bits exponent, mantissa, sign;
};
constexpr Layout<uint32_t> kF32{0x7f800000u, 0x007fffffu, 0x80000000u};
constexpr Layout<uint64_t> kF64{0x7ff0000000000000ull, 0x000fffffffffffffull, 0x8000000000000000ull};
constexpr Layout<uint16_t> kF16{0x7c00, 0x03ff, 0x8000};
constexpr Layout<uint16_t> kBF16{0x7f80, 0x007f, 0x8000};

template <class Bits>
Bits bits_at(const Tensor& t, int64_t i) {
  Bits b;
  std::memcpy(&b, static_cast<const char*>(t.raw()) + i * static_cast<int64_t>(sizeof(Bits)), sizeof(Bits));
  return b;
}

template <class Bits>
int64_t first_of(const Tensor& t, Layout<Bits> l) {
  const int64_t n = t.numel();
  const Bits* p = static_cast<const Bits*>(t.raw());
  // Blocks with a branch-free test (vectorized by the compiler), then the exact index.
  constexpr int64_t kBlock = 256;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = b + kBlock < n ? b + kBlock : n;
    bool any = false;
    for (int64_t i = b; i < e; ++i) any |= (p[i] & l.exponent) == l.exponent;
    if (!any) continue;
    for (int64_t i = b; i < e; ++i)
      if ((p[i] & l.exponent) == l.exponent) return i;
  }
  return -1;
}

template <class Bits>
NonFiniteKind kind_of(Bits b, Layout<Bits> l) {
  if ((b & l.exponent) != l.exponent) return NonFiniteKind::kFinite;
  if (b & l.mantissa) return NonFiniteKind::kNaN;
  return (b & l.sign) ? NonFiniteKind::kNegInf : NonFiniteKind::kPosInf;
}

template <class Bits>
NonFiniteCounts count_of(const Tensor& t, Layout<Bits> l) {
  NonFiniteCounts c;
  c.first = first_of(t, l);
  if (c.first < 0) return c;
  const Bits* p = static_cast<const Bits*>(t.raw());
  for (int64_t i = c.first; i < t.numel(); ++i) {
    switch (kind_of(p[i], l)) {
      case NonFiniteKind::kFinite: break;
      case NonFiniteKind::kNaN: ++c.nan; break;
      case NonFiniteKind::kPosInf: ++c.pos_inf; break;
      case NonFiniteKind::kNegInf: ++c.neg_inf; break;
    }
  }
  return c;
}

// Calls f(layout) for the tensor's float dtype; returns `none` for every other dtype
// (and for an empty or storage-less tensor).
template <class R, class F>
R dispatch(const Tensor& t, R none, F f) {
  if (t.numel() == 0 || !t.raw()) return none;
  switch (t.dtype()) {
    case DataType::kFloat32: return f(kF32);
    case DataType::kFloat64: return f(kF64);
    case DataType::kFloat16: return f(kF16);
    case DataType::kBFloat16: return f(kBF16);
    default: return none;
  }
}

}  // namespace

bool dtype_has_non_finite(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat64 || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

int64_t first_non_finite(const Tensor& t) {
  return dispatch<int64_t>(t, -1, [&](auto l) { return first_of(t, l); });
}

NonFiniteKind non_finite_kind(const Tensor& t, int64_t i) {
  return dispatch<NonFiniteKind>(t, NonFiniteKind::kFinite, [&]<class Bits>(Layout<Bits> l) {
    return kind_of(bits_at<Bits>(t, i), l);
  });
}

const char* non_finite_kind_name(NonFiniteKind k) {
  switch (k) {
    case NonFiniteKind::kNaN: return "NaN";
    case NonFiniteKind::kPosInf: return "+Inf";
    case NonFiniteKind::kNegInf: return "-Inf";
    case NonFiniteKind::kFinite: break;
  }
  return "finite";
}

NonFiniteCounts count_non_finite(const Tensor& t) {
  return dispatch<NonFiniteCounts>(t, NonFiniteCounts{}, [&](auto l) { return count_of(t, l); });
}

}  // namespace glassbox
