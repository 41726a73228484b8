// glassbox::FusedConv (internal, made by the conv_epilogue_fusion pass): Conv (same inputs and attributes; the
// pass has already folded a following per-channel scale/shift or BatchNormalization into W and B) with an
// activation applied to its output inside the oneDNN primitive.
// Attributes: Conv's, plus activation: "" | "relu" | "clip" | "hard_sigmoid" | "hard_swish" | "sigmoid",
// activation_alpha / activation_beta (clip: min / max; hard_sigmoid: alpha / beta).
#include "ops/attr_util.h"
#include "ops/conv_attrs.h"

namespace glassbox::ops {

Result<std::unique_ptr<Op>> create_internal_FusedConv(const graph::Node& node) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"auto_pad", "kernel_shape", "strides", "dilations", "pads", "group",
                                              "activation", "activation_alpha", "activation_beta"}));
  auto act_attr = attr_string(node, "activation", "");
  if (!act_attr.ok()) return std::move(act_attr).take_error();
  const std::string act = *act_attr;
  using K = kernels::ConvActivation::Kind;
  kernels::ConvActivation a;
  if (act == "") a.kind = K::kNone;
  else if (act == "relu") a.kind = K::kRelu;
  else if (act == "clip") a.kind = K::kClip;
  else if (act == "hard_sigmoid") a.kind = K::kHardSigmoid;
  else if (act == "hard_swish") a.kind = K::kHardSwish;
  else if (act == "sigmoid") a.kind = K::kSigmoid;
  else return make_error(ErrorCode::kUnsupported, "FusedConv activation '" + act + "' is not implemented");
  GB_ASSIGN_OR_RETURN(a.alpha, attr_float(node, "activation_alpha", 0.f));
  GB_ASSIGN_OR_RETURN(a.beta, attr_float(node, "activation_beta", 0.f));
  return nn::create_conv_op(node, a);
}

}  // namespace glassbox::ops
