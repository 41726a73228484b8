// The one non-finite scan: which elements of a floating-point tensor are NaN, +Inf or
// -Inf, for every float dtype (float32, float64, float16, bfloat16) alike. Read from the
// bits (an all-ones exponent), so a float16/bfloat16 NaN is found without converting.
// Used by --check-numerics, `glassbox diff`/`probe`, the pipelines and the server's
// glassbox_nonfinite_outputs_total: one definition, so they cannot disagree on a dtype.
#pragma once

#include <cstdint>

#include "glassbox/tensor.h"

namespace glassbox {

// True for the dtypes that can hold NaN/Inf: float32, float64, float16, bfloat16.
bool dtype_has_non_finite(DataType t);

// Index of the first NaN/Inf element, -1 if none (always -1 for other dtypes).
int64_t first_non_finite(const Tensor& t);

enum class NonFiniteKind { kFinite, kNaN, kPosInf, kNegInf };
// What element i of t is (kFinite for other dtypes); i must be in [0, numel).
NonFiniteKind non_finite_kind(const Tensor& t, int64_t i);
// "NaN", "+Inf", "-Inf" or "finite".
const char* non_finite_kind_name(NonFiniteKind k);

struct NonFiniteCounts {
  int64_t first = -1;  // index of the first non-finite element, -1 if none
  int64_t nan = 0;
  int64_t pos_inf = 0;
  int64_t neg_inf = 0;
  int64_t total() const { return nan + pos_inf + neg_inf; }
};
// Every element counted by kind.
NonFiniteCounts count_non_finite(const Tensor& t);

}  // namespace glassbox
