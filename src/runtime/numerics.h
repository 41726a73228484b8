// Observer that stops a run at the first node producing NaN or Inf, naming
// the node, its op, the output and the first bad element.
#pragma once

#include "glassbox/session.h"

namespace glassbox::runtime {

NodeObserver make_numerics_checker();

// Index of the first NaN/Inf element of a floating-point tensor, -1 if none (or not float).
int64_t first_non_finite(const Tensor& t);

}  // namespace glassbox::runtime
