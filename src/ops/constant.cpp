// Constant: one of value (tensor), value_float(s), value_int(s) (opset 12+).
// sparse_value and string values are refused at load.
#include <cstring>

#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

class ConstantOp final : public Op {
 public:
  explicit ConstantOp(Tensor value) : value_(std::move(value)) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, value_.dtype(), value_.shape()));
    if (value_.nbytes()) std::memcpy(y->mutable_raw(), value_.raw(), value_.nbytes());
    return Status::ok_status();
  }

 private:
  Tensor value_;  // copied into a fresh output each run: outputs may be written in place downstream
};

template <class T>
Result<Tensor> make_tensor(DataType dt, const Shape& shape, const std::vector<T>& vals) {
  GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dt, shape));
  if (!vals.empty()) std::memcpy(t.mutable_raw(), vals.data(), vals.size() * sizeof(T));
  return t;
}

}  // namespace

Result<std::unique_ptr<Op>> create_Constant(const graph::Node& node, int64_t) {
  for (const char* refused : {"sparse_value", "value_string", "value_strings"})
    if (nn::has_attr(node, refused))
      return make_error(ErrorCode::kUnsupported, std::string("Constant attribute '") + refused + "' is not supported");
  Tensor value;
  int found = 0;
  if (const graph::Attribute* a = node.attr("value")) {
    if (a->type != graph::AttrType::kTensor || !a->t.defined())
      return make_error(ErrorCode::kInvalidModel, "attribute 'value' must be a tensor");
    if (dtype_size(a->t.dtype()) == 0)
      return make_error(ErrorCode::kUnsupported,
                        std::string("Constant of dtype ") + dtype_name(a->t.dtype()) + " is not supported");
    value = a->t;
    ++found;
  }
  if (const graph::Attribute* a = node.attr("value_float")) {
    GB_ASSIGN_OR_RETURN(value, make_tensor<float>(DataType::kFloat32, {}, {a->f}));
    ++found;
  }
  if (const graph::Attribute* a = node.attr("value_floats")) {
    GB_ASSIGN_OR_RETURN(value, make_tensor<float>(DataType::kFloat32, {static_cast<int64_t>(a->floats.size())},
                                                  a->floats));
    ++found;
  }
  if (const graph::Attribute* a = node.attr("value_int")) {
    GB_ASSIGN_OR_RETURN(value, make_tensor<int64_t>(DataType::kInt64, {}, {a->i}));
    ++found;
  }
  if (const graph::Attribute* a = node.attr("value_ints")) {
    GB_ASSIGN_OR_RETURN(value, make_tensor<int64_t>(DataType::kInt64, {static_cast<int64_t>(a->ints.size())},
                                                    a->ints));
    ++found;
  }
  if (found != 1)
    return make_error(ErrorCode::kInvalidModel, "Constant needs exactly one value attribute, found " +
                                                    std::to_string(found));
  return std::unique_ptr<Op>(new ConstantOp(std::move(value)));
}

}  // namespace glassbox::ops
