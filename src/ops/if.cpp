// If (opset 1+): runs then_branch or else_branch (no inputs; outer-scope values
// are captured by the runtime) and copies the branch's outputs to the node's.
// The branches may produce different shapes; outputs may be tensors, sequences or optionals.
#include "ops/control_flow.h"

namespace glassbox::ops {
namespace {

class IfOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* cond_t, require_input(ctx, 0, "cond"));
    GB_ASSIGN_OR_RETURN(bool cond, control_flow::read_condition(ctx, *cond_t, "cond"));
    GB_ASSIGN_OR_RETURN(std::vector<Value> outs, ctx.run_subgraph_values(cond ? "then_branch" : "else_branch", {}));
    if (outs.size() != ctx.num_outputs())
      return op_error(ctx, ErrorCode::kInvalidModel,
                      std::string(cond ? "then_branch" : "else_branch") + " produced " + std::to_string(outs.size()) +
                          " outputs, the node has " + std::to_string(ctx.num_outputs()));
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i].kind == Value::Kind::kTensor) GB_RETURN_IF_ERROR(control_flow::set_output(ctx, i, outs[i].tensor));
      else GB_RETURN_IF_ERROR(ctx.set_output_value(i, outs[i]));
    }
    return {};
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_If(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"then_branch", "else_branch"}));
  for (const char* branch : {"then_branch", "else_branch"}) {
    GB_ASSIGN_OR_RETURN(const graph::Graph* g, control_flow::graph_attr(node, branch));
    if (!g->inputs.empty())
      return make_error(ErrorCode::kInvalidModel, std::string(branch) + " must have no inputs");
    if (g->outputs.size() != node.outputs.size())
      return make_error(ErrorCode::kInvalidModel, std::string(branch) + " has " + std::to_string(g->outputs.size()) +
                                                      " outputs, the node has " + std::to_string(node.outputs.size()));
  }
  return std::unique_ptr<Op>(new IfOp());
}

}  // namespace glassbox::ops
