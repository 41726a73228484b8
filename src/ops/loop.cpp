// Loop (opset 1+): body(iteration_num, cond, v...) -> (cond, v..., scan...).
// Runs while (M absent or i < M) and (cond input absent or cond); without a
// cond input the body's cond output is ignored (a for loop). Node outputs: the
// final loop-carried values, then each scan output stacked along a new axis 0
// (all iterations must give it the same shape). Loop-carried values may be
// tensors, sequences or optionals; scan outputs are tensors.
#include "ops/control_flow.h"

namespace glassbox::ops {
namespace {

struct LoopAttrs {
  size_t carried = 0;  // N loop-carried values (node inputs after M and cond)
  size_t scans = 0;    // K scan outputs (node outputs after the N carried)
  std::vector<control_flow::DeclaredValue> scan_decl;  // body's declared scan outputs (for 0 iterations)
};

class LoopOp final : public Op {
 public:
  explicit LoopOp(LoopAttrs a) : a_(std::move(a)) {}

  Status compute(ComputeContext& ctx) const override {
    namespace cf = control_flow;
    bool has_m = false, has_cond = false, cond = true;
    int64_t max_trips = 0;
    if (const Tensor* m = ctx.input(0); m && m->defined()) {
      GB_ASSIGN_OR_RETURN(auto v, tensor_to_int64s(*m, "M"));
      if (v.size() != 1) return op_error(ctx, ErrorCode::kInvalidArgument, "M must hold one value");
      has_m = true;
      max_trips = v[0];
    }
    if (const Tensor* c = ctx.input(1); c && c->defined()) {
      GB_ASSIGN_OR_RETURN(cond, cf::read_condition(ctx, *c, "cond"));
      has_cond = true;
    }
    std::vector<Value> carried;
    for (size_t n = 0; n < a_.carried; ++n) {
      Value v = ctx.input_value(2 + n);
      if (!v.defined())
        return op_error(ctx, ErrorCode::kUnsupported, "loop-carried input " + std::to_string(n) + " is absent");
      carried.push_back(std::move(v));
    }
    GB_ASSIGN_OR_RETURN(Tensor iter, Tensor::allocate(DataType::kInt64, Shape{}));
    GB_ASSIGN_OR_RETURN(Tensor cond_in, Tensor::allocate(DataType::kBool, Shape{}));
    std::vector<std::vector<Tensor>> scans(a_.scans);  // per scan output, one charged copy per iteration
    int64_t i = 0;
    for (; (!has_m || i < max_trips) && cond; ++i) {
      iter.mutable_data<int64_t>()[0] = i;
      cond_in.mutable_data<bool>()[0] = cond;
      std::vector<Value> in{Value::of(iter), Value::of(cond_in)};
      for (const auto& v : carried) in.push_back(v);
      GB_ASSIGN_OR_RETURN(std::vector<Value> outs, ctx.run_subgraph_values("body", in));
      if (outs.size() != 1 + a_.carried + a_.scans)
        return op_error(ctx, ErrorCode::kInvalidModel, "body produced " + std::to_string(outs.size()) + " outputs");
      for (size_t k = 0; k < outs.size(); ++k)
        if ((k == 0 || k > a_.carried) && outs[k].kind != Value::Kind::kTensor)
          return op_error(ctx, ErrorCode::kUnsupported,
                          "body output " + std::to_string(k) + " is a " + outs[k].kind_name() +
                              "; the cond and scan outputs must be tensors");
      if (has_cond) {
        GB_ASSIGN_OR_RETURN(cond, cf::read_condition(ctx, outs[0].tensor, "body output cond"));
      }
      for (size_t n = 0; n < a_.carried; ++n) carried[n] = std::move(outs[1 + n]);
      for (size_t k = 0; k < a_.scans; ++k) {
        const Tensor& s = outs[1 + a_.carried + k].tensor;
        GB_RETURN_IF_ERROR(cf::need_fixed_size(ctx, s, "scan output " + std::to_string(k)));
        if (!scans[k].empty() && (s.shape() != scans[k][0].shape() || s.dtype() != scans[k][0].dtype()))
          return op_error(ctx, ErrorCode::kInvalidArgument,
                          "scan output " + std::to_string(k) + " is " + dtype_name(s.dtype()) +
                              shape_to_string(s.shape()) + " in iteration " + std::to_string(i) + " but was " +
                              dtype_name(scans[k][0].dtype()) + shape_to_string(scans[k][0].shape()) +
                              " before; every iteration must give the same shape");
        GB_ASSIGN_OR_RETURN(Tensor copy, ctx.allocate_scratch(s.dtype(), s.shape()));
        if (s.nbytes()) std::memcpy(copy.mutable_raw(), s.raw(), s.nbytes());
        scans[k].push_back(std::move(copy));
      }
    }
    for (size_t n = 0; n < a_.carried; ++n) {
      if (carried[n].kind == Value::Kind::kTensor) GB_RETURN_IF_ERROR(cf::set_output(ctx, n, carried[n].tensor));
      else GB_RETURN_IF_ERROR(ctx.set_output_value(n, carried[n]));
    }
    for (size_t k = 0; k < a_.scans; ++k) {
      const size_t out = a_.carried + k;
      if (scans[k].empty()) {  // no iteration ran: [0, declared dims...]
        const auto& d = a_.scan_decl[k];
        if (d.dtype == DataType::kUndefined || dtype_size(d.dtype) == 0)
          return op_error(ctx, ErrorCode::kUnsupported, "scan output " + std::to_string(k) +
                                                            " of a loop that ran 0 times has no declared dtype");
        GB_RETURN_IF_ERROR(ctx.allocate_output(out, d.dtype, d.known ? cf::insert_dim(d.dims, 0, 0) : Shape{0}).status());
        continue;
      }
      const Tensor& first = scans[k][0];
      const int64_t trips = static_cast<int64_t>(scans[k].size());
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(out, first.dtype(), cf::insert_dim(first.shape(), 0, trips)));
      for (int64_t t = 0; t < trips; ++t) cf::place_slice(scans[k][t], 0, t, *y);
    }
    return {};
  }

 private:
  LoopAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Loop(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"body"}));
  GB_ASSIGN_OR_RETURN(const graph::Graph* body, control_flow::graph_attr(node, "body"));
  if (node.inputs.size() < 2)
    return make_error(ErrorCode::kInvalidModel, "Loop needs inputs M and cond (either may be the empty name)");
  LoopAttrs a;
  a.carried = node.inputs.size() - 2;
  if (node.outputs.size() < a.carried)
    return make_error(ErrorCode::kInvalidModel, "Loop has " + std::to_string(a.carried) +
                                                    " loop-carried inputs but only " +
                                                    std::to_string(node.outputs.size()) + " outputs");
  a.scans = node.outputs.size() - a.carried;
  if (body->inputs.size() != 2 + a.carried || body->outputs.size() != 1 + a.carried + a.scans)
    return make_error(ErrorCode::kInvalidModel,
                      "body has " + std::to_string(body->inputs.size()) + " inputs and " +
                          std::to_string(body->outputs.size()) + " outputs; the node needs " +
                          std::to_string(2 + a.carried) + " and " + std::to_string(1 + a.carried + a.scans));
  for (size_t k = 0; k < a.scans; ++k) a.scan_decl.push_back(control_flow::declared(body->outputs[1 + a.carried + k]));
  return std::unique_ptr<Op>(new LoopOp(std::move(a)));
}

}  // namespace glassbox::ops
