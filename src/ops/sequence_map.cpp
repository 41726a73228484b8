// SequenceMap (opset 17+): runs `body` once per element of the first input
// sequence. Body input j is element i of node input j when that is a sequence
// (all of the same length), else node input j itself. Body output k, a tensor
// per iteration, becomes element i of output sequence k.
#include "ops/control_flow.h"
#include "ops/sequence_util.h"

namespace glassbox::ops {
namespace {

class SequenceMapOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const std::vector<Tensor>* first, seq::need_sequence(ctx, 0, "input_sequence"));
    const size_t n = first->size();
    std::vector<Value> args;
    for (size_t j = 0; j < ctx.num_inputs(); ++j) {
      Value v = ctx.input_value(j);
      if (v.kind == Value::Kind::kNone || !v.defined())
        return nn::node_error(ctx, ErrorCode::kInvalidArgument, "input " + std::to_string(j) + " is missing or empty");
      if (v.kind == Value::Kind::kSequence && v.elements.size() != n)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "input " + std::to_string(j) + " has " + std::to_string(v.elements.size()) +
                                  " elements, input 0 has " + std::to_string(n));
      args.push_back(std::move(v));
    }
    std::vector<std::vector<Tensor>> outs(ctx.num_outputs());
    for (size_t i = 0; i < n; ++i) {
      std::vector<Value> in;
      in.reserve(args.size());
      for (const Value& a : args) in.push_back(a.kind == Value::Kind::kSequence ? Value::of(a.elements[i]) : a);
      GB_ASSIGN_OR_RETURN(std::vector<Value> res, ctx.run_subgraph_values("body", in));
      if (res.size() != outs.size())
        return nn::node_error(ctx, ErrorCode::kInvalidModel, "body produced " + std::to_string(res.size()) +
                                                                 " outputs, the node has " + std::to_string(outs.size()));
      for (size_t k = 0; k < res.size(); ++k) {
        if (res[k].kind != Value::Kind::kTensor)
          return nn::node_error(ctx, ErrorCode::kUnsupported,
                                "body output " + std::to_string(k) + " is a " + res[k].kind_name() +
                                    "; only tensor body outputs are supported");
        outs[k].push_back(std::move(res[k].tensor));
      }
    }
    for (size_t k = 0; k < outs.size(); ++k) GB_RETURN_IF_ERROR(ctx.set_output_sequence(k, std::move(outs[k])));
    return {};
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_SequenceMap(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"body"}));
  GB_ASSIGN_OR_RETURN(const graph::Graph* body, control_flow::graph_attr(node, "body"));
  if (node.inputs.empty()) return make_error(ErrorCode::kInvalidModel, "SequenceMap needs an input sequence");
  if (body->inputs.size() != node.inputs.size() || body->outputs.size() != node.outputs.size())
    return make_error(ErrorCode::kInvalidModel,
                      "body has " + std::to_string(body->inputs.size()) + " inputs and " +
                          std::to_string(body->outputs.size()) + " outputs; the node has " +
                          std::to_string(node.inputs.size()) + " and " + std::to_string(node.outputs.size()));
  return std::unique_ptr<Op>(new SequenceMapOp());
}

}  // namespace glassbox::ops
