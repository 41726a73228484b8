#include "glassbox/numerics_checker.h"

#include "glassbox/numerics.h"

namespace glassbox::runtime {

NodeObserver make_numerics_checker() {
  return [](const NodeEvent& ev) -> Status {
    for (size_t i = 0; i < ev.outputs.size(); ++i) {
      const Tensor* t = ev.outputs[i];
      if (!t) continue;
      const int64_t bad = first_non_finite(*t);
      if (bad < 0) continue;
      bool input_bad = false;
      for (const Tensor* in : ev.inputs) input_bad = input_bad || (in && first_non_finite(*in) >= 0);
      return make_error(ErrorCode::kInvalidArgument,
                        "output '" + ev.output_names[i] + "' (" + dtype_name(t->dtype()) + shape_to_string(t->shape()) +
                            ") has a NaN/Inf (" + non_finite_kind_name(non_finite_kind(*t, bad)) + ") at element " + std::to_string(bad) +
                            (input_bad ? " (an input already had one: a graph input or initializer is non-finite)"
                                       : " (all inputs were finite: this node created it)"),
                        "node '" + ev.node_name + "' (" + ev.op_type + ", step " + std::to_string(ev.index) + ")",
                        "inspect this node's inputs; run with --opt-level 0 to see the graph exactly as written");
    }
    return {};
  };
}

}  // namespace glassbox::runtime
