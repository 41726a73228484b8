// Scatter (opsets 9-10, deprecated in 11 in favour of ScatterElements): the
// same semantics as ScatterElements without a reduction.
#include "ops/nn_args.h"

namespace glassbox::ops {

Result<std::unique_ptr<Op>> create_ScatterElements(const graph::Node& node, int64_t opset);

Result<std::unique_ptr<Op>> create_Scatter(const graph::Node& node, int64_t opset) {
  return create_ScatterElements(node, opset);
}

}  // namespace glassbox::ops
