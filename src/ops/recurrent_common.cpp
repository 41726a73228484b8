#include "ops/recurrent_common.h"

#include <algorithm>
#include <cctype>

#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

using kernels::ActivationKind;
using kernels::RecurrentCell;

struct ActivationSpec {
  const char* name;
  ActivationKind kind;
  bool uses_alpha, uses_beta;
  float alpha, beta;  // defaults: those of the ONNX op of the same name
};

constexpr ActivationSpec kActivations[] = {
    {"relu", ActivationKind::kRelu, false, false, 0.f, 0.f},
    {"tanh", ActivationKind::kTanh, false, false, 0.f, 0.f},
    {"sigmoid", ActivationKind::kSigmoid, false, false, 0.f, 0.f},
    {"affine", ActivationKind::kAffine, true, true, 1.f, 0.f},
    {"leakyrelu", ActivationKind::kLeakyRelu, true, false, 0.01f, 0.f},
    {"thresholdedrelu", ActivationKind::kThresholdedRelu, true, false, 1.f, 0.f},
    {"scaledtanh", ActivationKind::kScaledTanh, true, true, 1.f, 1.f},
    {"hardsigmoid", ActivationKind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", ActivationKind::kElu, true, false, 1.f, 0.f},
    {"softsign", ActivationKind::kSoftsign, false, false, 0.f, 0.f},
    {"softplus", ActivationKind::kSoftplus, false, false, 0.f, 0.f},
};

int64_t activations_per_direction(RecurrentCell c) {
  return c == RecurrentCell::kRnn ? 1 : c == RecurrentCell::kGru ? 2 : 3;
}

const char* cell_name(RecurrentCell c) {
  return c == RecurrentCell::kRnn ? "RNN" : c == RecurrentCell::kGru ? "GRU" : "LSTM";
}

Status shape_error(const ComputeContext& ctx, const char* what, const Tensor& t, const Shape& want) {
  return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                        std::string(what) + " has shape " + shape_to_string(t.shape()) + ", expected " +
                            shape_to_string(want));
}

}  // namespace

Result<RecurrentAttrs> parse_recurrent_attrs(const graph::Node& node, RecurrentCell cell, int64_t opset) {
  std::vector<const char*> known = {"activation_alpha", "activation_beta", "activations", "clip", "direction",
                                    "hidden_size"};
  if (opset >= 14) known.push_back("layout");
  if (cell == RecurrentCell::kGru) known.push_back("linear_before_reset");
  if (cell == RecurrentCell::kLstm) known.push_back("input_forget");
  for (const auto& [name, a] : node.attributes)
    if (std::find_if(known.begin(), known.end(), [&](const char* k) { return name == k; }) == known.end())
      return unsupported_attr(name, std::string("is not an attribute of ") + cell_name(cell) + " at opset " +
                                        std::to_string(opset));
  RecurrentAttrs a;
  GB_ASSIGN_OR_RETURN(a.clip, attr_float(node, "clip", 0.f));
  if (node.attr("clip") && !(a.clip > 0.f)) return unsupported_attr("clip", "must be positive");
  GB_ASSIGN_OR_RETURN(a.direction, attr_string(node, "direction", "forward"));
  if (a.direction != "forward" && a.direction != "reverse" && a.direction != "bidirectional")
    return unsupported_attr("direction", "'" + a.direction + "' is not forward, reverse or bidirectional");
  GB_ASSIGN_OR_RETURN(a.hidden_size, attr_int(node, "hidden_size", 0));
  if (a.hidden_size < 0) return unsupported_attr("hidden_size", "must be positive");
  GB_ASSIGN_OR_RETURN(a.layout, attr_int(node, "layout", 0));
  if (a.layout != 0 && a.layout != 1) return unsupported_attr("layout", "must be 0 or 1");
  GB_ASSIGN_OR_RETURN(int64_t lbr, attr_int(node, "linear_before_reset", 0));
  a.linear_before_reset = lbr != 0;
  GB_ASSIGN_OR_RETURN(int64_t input_forget, attr_int(node, "input_forget", 0));
  a.input_forget = input_forget != 0;

  const int64_t per_dir = activations_per_direction(cell);
  const int64_t dirs = a.direction == "bidirectional" ? 2 : 1;
  std::vector<std::string> names;
  if (const graph::Attribute* at = node.attr("activations")) {
    if (at->type != graph::AttrType::kStrings) return attr_type_error(*at, graph::AttrType::kStrings);
    names = at->strings;
    if (static_cast<int64_t>(names.size()) == per_dir && dirs == 2) names.insert(names.end(), at->strings.begin(), at->strings.end());
    if (static_cast<int64_t>(names.size()) != per_dir * dirs)
      return unsupported_attr("activations", "has " + std::to_string(at->strings.size()) + " entries; " +
                                                 cell_name(cell) + " needs " + std::to_string(per_dir) +
                                                 " per direction");
  } else {
    const std::vector<std::string> dflt = cell == RecurrentCell::kRnn   ? std::vector<std::string>{"Tanh"}
                                          : cell == RecurrentCell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                        : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), dflt.begin(), dflt.end());
  }
  GB_ASSIGN_OR_RETURN(auto alphas, nn::attr_floats_or(node, "activation_alpha"));
  GB_ASSIGN_OR_RETURN(auto betas, nn::attr_floats_or(node, "activation_beta"));
  size_t ai = 0, bi = 0;  // alphas/betas are consumed in order by the activations that take them
  for (const std::string& n : names) {
    std::string lower(n);
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const ActivationSpec* spec = nullptr;
    for (const auto& s : kActivations)
      if (lower == s.name) spec = &s;
    if (!spec) return unsupported_attr("activations", "activation '" + n + "' is not implemented");
    kernels::Activation act{spec->kind, spec->alpha, spec->beta};
    if (spec->uses_alpha && ai < alphas.size()) act.alpha = alphas[ai++];
    if (spec->uses_beta && bi < betas.size()) act.beta = betas[bi++];
    a.activations.push_back(act);
  }
  return a;
}

Status run_recurrent(ComputeContext& ctx, RecurrentCell cell, const RecurrentAttrs& a) {
  const bool lstm = cell == RecurrentCell::kLstm;
  GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
  GB_ASSIGN_OR_RETURN(const Tensor* w, nn::need_input(ctx, 1, "W"));
  GB_ASSIGN_OR_RETURN(const Tensor* r, nn::need_input(ctx, 2, "R"));
  const Tensor* b = ctx.input(3);
  const Tensor* lens = ctx.input(4);
  const Tensor* h0 = ctx.input(5);
  const Tensor* c0 = lstm ? ctx.input(6) : nullptr;
  const Tensor* p = lstm ? ctx.input(7) : nullptr;
  for (auto [t, name] : {std::pair{x, "X"}, {w, "W"}, {r, "R"}, {b, "B"}, {h0, "initial_h"}, {c0, "initial_c"}, {p, "P"}})
    if (t) GB_RETURN_IF_ERROR(nn::need_float32(ctx, *t, name));
  if (x->rank() != 3 || w->rank() != 3 || r->rank() != 3)
    return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                          "X, W and R must have rank 3, got " + shape_to_string(x->shape()) + ", " +
                              shape_to_string(w->shape()) + ", " + shape_to_string(r->shape()));
  const bool bm = a.layout == 1;
  const int64_t T = x->shape()[bm ? 1 : 0], nb = x->shape()[bm ? 0 : 1], I = x->shape()[2];
  const int64_t nd = a.direction == "bidirectional" ? 2 : 1;
  const int64_t H = a.hidden_size > 0 ? a.hidden_size : r->shape()[2];
  const int64_t G = kernels::recurrent_gates(cell), GH = G * H;
  if (w->shape() != Shape{nd, GH, I}) return shape_error(ctx, "W", *w, {nd, GH, I});
  if (r->shape() != Shape{nd, GH, H}) return shape_error(ctx, "R", *r, {nd, GH, H});
  if (b && b->shape() != Shape{nd, 2 * GH}) return shape_error(ctx, "B", *b, {nd, 2 * GH});
  const Shape state_shape = bm ? Shape{nb, nd, H} : Shape{nd, nb, H};
  if (h0 && h0->shape() != state_shape) return shape_error(ctx, "initial_h", *h0, state_shape);
  if (c0 && c0->shape() != state_shape) return shape_error(ctx, "initial_c", *c0, state_shape);
  if (p && p->shape() != Shape{nd, 3 * H}) return shape_error(ctx, "P", *p, {nd, 3 * H});
  std::vector<int32_t> seq_lens;
  if (lens) {
    if (lens->dtype() != DataType::kInt32)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            std::string("sequence_lens must be int32, got ") + dtype_name(lens->dtype()));
    if (lens->shape() != Shape{nb}) return shape_error(ctx, "sequence_lens", *lens, {nb});
    seq_lens.assign(lens->data<int32_t>(), lens->data<int32_t>() + nb);
    for (int64_t i = 0; i < nb; ++i)
      if (seq_lens[i] < 0 || seq_lens[i] > T)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "sequence_lens[" + std::to_string(i) + "] = " + std::to_string(seq_lens[i]) +
                                  " is outside [0, " + std::to_string(T) + "] (the sequence length of X)");
  }

  float* out[3] = {nullptr, nullptr, nullptr};
  const Shape y_shape = bm ? Shape{nb, T, nd, H} : Shape{T, nd, nb, H};
  const size_t n_out = std::min<size_t>(ctx.num_outputs(), lstm ? 3 : 2);
  for (size_t i = 0; i < n_out; ++i) {
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(i, DataType::kFloat32, i == 0 ? y_shape : state_shape));
    out[i] = y->mutable_data<float>();
  }
  kernels::RecurrentDesc d;
  d.cell = cell;
  d.seq = T;
  d.batch = nb;
  d.input = I;
  d.hidden = H;
  d.num_directions = nd;
  d.batch_major = bm;
  d.clip = a.clip;
  d.linear_before_reset = a.linear_before_reset;
  d.input_forget = a.input_forget;
  GB_ASSIGN_OR_RETURN(Tensor scratch, ctx.allocate_scratch(DataType::kFloat32, {kernels::recurrent_scratch_floats(d)}));
  const size_t per_dir = a.activations.size() / static_cast<size_t>(nd);
  for (int64_t dir = 0; dir < nd; ++dir) {
    d.direction = dir;
    d.reverse = a.direction == "reverse" || dir == 1;
    const kernels::Activation* acts = a.activations.data() + dir * per_dir;
    d.f = acts[0];
    if (per_dir > 1) d.g = acts[1];
    if (per_dir > 2) d.h = acts[2];
    kernels::recurrent_f32(d, x->data<float>(), w->data<float>() + dir * GH * I, r->data<float>() + dir * GH * H,
                           b ? b->data<float>() + dir * 2 * GH : nullptr, p ? p->data<float>() + dir * 3 * H : nullptr,
                           lens ? seq_lens.data() : nullptr, h0 ? h0->data<float>() : nullptr,
                           c0 ? c0->data<float>() : nullptr, out[0], out[1], out[2], scratch.mutable_data<float>(),
                           &ctx.pool());
  }
  return Status::ok_status();
}

}  // namespace glassbox::ops
