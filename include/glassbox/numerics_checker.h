// Observer that stops a run at the first node producing NaN or Inf, naming
// the node, its op, the output and the first bad element.
#pragma once

#include "glassbox/session.h"

namespace glassbox::runtime {

// The scan itself is glassbox::first_non_finite (glassbox/numerics.h): every float dtype.
NodeObserver make_numerics_checker();

}  // namespace glassbox::runtime
