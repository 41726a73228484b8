// Scan: body(state..., scan_slice...) -> (state..., scan_output_slice...),
// iterated over the scan inputs' sequence axis.
// Opset 9+: scan_input_axes / directions, scan_output_axes / directions.
// Opset 8: inputs carry a leading batch dim ([batch, seq, ...] scan inputs,
// [batch, ...] states) and an optional sequence_lens input; each batch entry is
// scanned on its own. sequence_lens shorter than the sequence are refused.
#include "ops/control_flow.h"

namespace glassbox::ops {
namespace {

namespace cf = control_flow;

struct ScanAttrs {
  bool batched = false;           // opset 8 form
  size_t states = 0;              // N state variables
  size_t scan_inputs = 0;         // M = num_scan_inputs (required)
  size_t scan_outputs = 0;        // K
  std::vector<int64_t> in_axes;   // scan_input_axes (default 0)
  std::vector<int64_t> in_dirs;   // scan_input_directions / directions (0 forward, 1 reverse)
  std::vector<int64_t> out_axes;  // scan_output_axes (default 0)
  std::vector<int64_t> out_dirs;  // scan_output_directions (default 0)
  std::vector<cf::DeclaredValue> out_decl;  // body's declared scan outputs (for empty sequences)
};

class ScanOp final : public Op {
 public:
  explicit ScanOp(ScanAttrs a) : a_(std::move(a)) {}

  Status compute(ComputeContext& ctx) const override {
    const size_t first = a_.batched ? 1 : 0;  // opset 8: input 0 is sequence_lens
    std::vector<Tensor> states, scans;
    for (size_t i = 0; i < a_.states + a_.scan_inputs; ++i) {
      GB_ASSIGN_OR_RETURN(const Tensor* t, require_input(ctx, first + i, "state or scan input"));
      GB_RETURN_IF_ERROR(cf::need_fixed_size(ctx, *t, "input " + std::to_string(first + i)));
      (i < a_.states ? states : scans).push_back(*t);
    }
    if (!a_.batched) {
      GB_ASSIGN_OR_RETURN(std::vector<Tensor> outs, scan(ctx, states, scans));
      for (size_t i = 0; i < outs.size(); ++i) GB_RETURN_IF_ERROR(cf::set_output(ctx, i, outs[i]));
      return {};
    }
    // Opset 8: every input has the batch as dim 0.
    int64_t batch = -1;
    for (const auto& t : states) GB_RETURN_IF_ERROR(check_batch(ctx, t, batch));
    for (const auto& t : scans) GB_RETURN_IF_ERROR(check_batch(ctx, t, batch));
    if (batch < 0) return op_error(ctx, ErrorCode::kInvalidModel, "Scan-8 needs at least one state or scan input");
    if (const Tensor* lens = ctx.input(0); lens && lens->defined() && !scans.empty()) {
      GB_ASSIGN_OR_RETURN(auto v, tensor_to_int64s(*lens, "sequence_lens"));
      for (int64_t l : v)
        if (l != scans[0].shape()[1])
          return op_error(ctx, ErrorCode::kUnsupported,
                          "sequence_lens entries shorter than the sequence are not supported (got " +
                              std::to_string(l) + " for length " + std::to_string(scans[0].shape()[1]) + ")");
    }
    std::vector<Tensor*> outputs(a_.states + a_.scan_outputs, nullptr);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Tensor> bs, bx;
      for (const auto& t : states) {
        GB_ASSIGN_OR_RETURN(Tensor s, slice0(ctx, t, b));
        bs.push_back(std::move(s));
      }
      for (const auto& t : scans) {
        GB_ASSIGN_OR_RETURN(Tensor s, slice0(ctx, t, b));
        bx.push_back(std::move(s));
      }
      GB_ASSIGN_OR_RETURN(std::vector<Tensor> outs, scan(ctx, bs, bx));
      for (size_t i = 0; i < outs.size(); ++i) {
        if (!outputs[i]) {
          GB_ASSIGN_OR_RETURN(outputs[i], ctx.allocate_output(i, outs[i].dtype(), cf::insert_dim(outs[i].shape(), 0, batch)));
        } else if (Shape expect = cf::drop_dim(outputs[i]->shape(), 0);
                   expect != outs[i].shape() || outs[i].dtype() != outputs[i]->dtype()) {
          return op_error(ctx, ErrorCode::kInvalidArgument,
                          "output " + std::to_string(i) + " differs in shape between batch entries");
        }
        cf::place_slice(outs[i], 0, b, *outputs[i]);
      }
    }
    if (batch == 0)
      return op_error(ctx, ErrorCode::kUnsupported, "Scan-8 with an empty batch is not supported");
    return {};
  }

 private:
  static Status check_batch(const ComputeContext& ctx, const Tensor& t, int64_t& batch) {
    if (t.rank() < 1) return op_error(ctx, ErrorCode::kInvalidArgument, "Scan-8 inputs need a batch dim");
    if (batch >= 0 && t.shape()[0] != batch)
      return op_error(ctx, ErrorCode::kInvalidArgument, "Scan-8 inputs disagree on the batch size");
    batch = t.shape()[0];
    return {};
  }

  static Result<Tensor> slice0(ComputeContext& ctx, const Tensor& t, int64_t b) {
    GB_ASSIGN_OR_RETURN(Tensor s, ctx.allocate_scratch(t.dtype(), cf::drop_dim(t.shape(), 0)));
    cf::copy_slice(t, 0, b, s);
    return s;
  }

  // One unbatched scan: returns the final states, then the stacked scan outputs.
  Result<std::vector<Tensor>> scan(ComputeContext& ctx, std::vector<Tensor> states, const std::vector<Tensor>& scans) const {
    std::vector<int64_t> axes(scans.size());
    int64_t len = -1;
    for (size_t j = 0; j < scans.size(); ++j) {
      GB_ASSIGN_OR_RETURN(axes[j], normalize_axis(a_.in_axes[j], scans[j].rank()));
      const int64_t l = scans[j].shape()[axes[j]];
      if (len >= 0 && l != len)
        return op_error(ctx, ErrorCode::kInvalidArgument,
                        "scan inputs have different sequence lengths (" + std::to_string(len) + " and " +
                            std::to_string(l) + ")");
      len = l;
    }
    if (len < 0) len = 0;
    std::vector<Tensor> slices;
    for (size_t j = 0; j < scans.size(); ++j) {
      GB_ASSIGN_OR_RETURN(Tensor s, ctx.allocate_scratch(scans[j].dtype(), cf::drop_dim(scans[j].shape(), axes[j])));
      slices.push_back(std::move(s));
    }
    std::vector<std::vector<Tensor>> parts(a_.scan_outputs);
    for (int64_t t = 0; t < len; ++t) {
      for (size_t j = 0; j < scans.size(); ++j)
        cf::copy_slice(scans[j], axes[j], a_.in_dirs[j] ? len - 1 - t : t, slices[j]);
      std::vector<const Tensor*> in;
      for (const auto& s : states) in.push_back(&s);
      for (const auto& s : slices) in.push_back(&s);
      GB_ASSIGN_OR_RETURN(std::vector<Tensor> outs, ctx.run_subgraph("body", in));
      if (outs.size() != a_.states + a_.scan_outputs)
        return op_error(ctx, ErrorCode::kInvalidModel, "body produced " + std::to_string(outs.size()) + " outputs");
      for (size_t n = 0; n < a_.states; ++n) states[n] = std::move(outs[n]);
      for (size_t k = 0; k < a_.scan_outputs; ++k) {
        const Tensor& s = outs[a_.states + k];
        GB_RETURN_IF_ERROR(cf::need_fixed_size(ctx, s, "scan output " + std::to_string(k)));
        if (!parts[k].empty() && (s.shape() != parts[k][0].shape() || s.dtype() != parts[k][0].dtype()))
          return op_error(ctx, ErrorCode::kInvalidArgument,
                          "scan output " + std::to_string(k) + " changes shape or dtype between iterations");
        GB_ASSIGN_OR_RETURN(Tensor copy, ctx.allocate_scratch(s.dtype(), s.shape()));
        if (s.nbytes()) std::memcpy(copy.mutable_raw(), s.raw(), s.nbytes());
        parts[k].push_back(std::move(copy));
      }
    }
    std::vector<Tensor> result = std::move(states);
    for (size_t k = 0; k < a_.scan_outputs; ++k) {
      Shape part_shape;
      DataType dt;
      if (parts[k].empty()) {
        const auto& d = a_.out_decl[k];
        if (!d.known || d.dtype == DataType::kUndefined || dtype_size(d.dtype) == 0)
          return op_error(ctx, ErrorCode::kUnsupported,
                          "scan output " + std::to_string(k) + " of an empty sequence has no declared shape");
        part_shape = d.dims;
        dt = d.dtype;
      } else {
        part_shape = parts[k][0].shape();
        dt = parts[k][0].dtype();
      }
      const int64_t out_rank = static_cast<int64_t>(part_shape.size()) + 1;
      GB_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(a_.out_axes[k], out_rank));
      GB_ASSIGN_OR_RETURN(Tensor y, ctx.allocate_scratch(dt, cf::insert_dim(part_shape, axis, len)));
      for (int64_t t = 0; t < len; ++t) cf::place_slice(parts[k][t], axis, a_.out_dirs[k] ? len - 1 - t : t, y);
      result.push_back(std::move(y));
    }
    return result;
  }

  ScanAttrs a_;
};

Result<std::vector<int64_t>> per_item(const graph::Node& node, const char* name, size_t count) {
  GB_ASSIGN_OR_RETURN(auto v, attr_ints(node, name));
  if (!v) return std::vector<int64_t>(count, 0);
  if (v->size() != count)
    return make_error(ErrorCode::kInvalidModel, std::string("attribute '") + name + "' has " +
                                                    std::to_string(v->size()) + " entries, expected " +
                                                    std::to_string(count));
  return *v;
}

}  // namespace

Result<std::unique_ptr<Op>> create_Scan(const graph::Node& node, int64_t opset) {
  ScanAttrs a;
  a.batched = opset < 9;
  if (a.batched)
    GB_RETURN_IF_ERROR(check_known_attrs(node, {"body", "num_scan_inputs", "directions"}));
  else
    GB_RETURN_IF_ERROR(check_known_attrs(node, {"body", "num_scan_inputs", "scan_input_axes", "scan_input_directions",
                                                "scan_output_axes", "scan_output_directions"}));
  GB_ASSIGN_OR_RETURN(const graph::Graph* body, cf::graph_attr(node, "body"));
  GB_ASSIGN_OR_RETURN(int64_t m, attr_int_required(node, "num_scan_inputs"));
  const size_t data_inputs = node.inputs.size() - (a.batched && !node.inputs.empty() ? 1 : 0);
  if (m < 1 || static_cast<size_t>(m) > data_inputs)
    return make_error(ErrorCode::kInvalidModel, "num_scan_inputs = " + std::to_string(m) + " does not fit the " +
                                                    std::to_string(data_inputs) + " state and scan inputs");
  a.scan_inputs = static_cast<size_t>(m);
  a.states = data_inputs - a.scan_inputs;
  if (node.outputs.size() < a.states)
    return make_error(ErrorCode::kInvalidModel, "Scan has fewer outputs than state variables");
  a.scan_outputs = node.outputs.size() - a.states;
  if (body->inputs.size() != a.states + a.scan_inputs || body->outputs.size() != a.states + a.scan_outputs)
    return make_error(ErrorCode::kInvalidModel,
                      "body has " + std::to_string(body->inputs.size()) + " inputs and " +
                          std::to_string(body->outputs.size()) + " outputs; the node needs " +
                          std::to_string(a.states + a.scan_inputs) + " and " +
                          std::to_string(a.states + a.scan_outputs));
  if (a.batched) {
    GB_ASSIGN_OR_RETURN(a.in_dirs, per_item(node, "directions", a.scan_inputs));
    a.in_axes.assign(a.scan_inputs, 0);
    a.out_axes.assign(a.scan_outputs, 0);
    a.out_dirs.assign(a.scan_outputs, 0);
  } else {
    GB_ASSIGN_OR_RETURN(a.in_axes, per_item(node, "scan_input_axes", a.scan_inputs));
    GB_ASSIGN_OR_RETURN(a.in_dirs, per_item(node, "scan_input_directions", a.scan_inputs));
    GB_ASSIGN_OR_RETURN(a.out_axes, per_item(node, "scan_output_axes", a.scan_outputs));
    GB_ASSIGN_OR_RETURN(a.out_dirs, per_item(node, "scan_output_directions", a.scan_outputs));
  }
  for (int64_t d : a.in_dirs)
    if (d != 0 && d != 1) return unsupported_attr("scan_input_directions", "entries must be 0 or 1");
  for (int64_t d : a.out_dirs)
    if (d != 0 && d != 1) return unsupported_attr("scan_output_directions", "entries must be 0 or 1");
  for (size_t k = 0; k < a.scan_outputs; ++k) a.out_decl.push_back(cf::declared(body->outputs[a.states + k]));
  return std::unique_ptr<Op>(new ScanOp(std::move(a)));
}

}  // namespace glassbox::ops
