// DepthToSpace: [N, C, H, W] -> [N, C/b², H*b, W*b]; mode DCR (default) or CRD (opset 11).
#include "kernels/data_movement.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct DepthToSpaceAttrs {
  int64_t blocksize = 0;  // b (required)
  bool crd = false;       // mode: "DCR" (depth-column-row, default) or "CRD"
};

class DepthToSpaceOp final : public Op {
 public:
  explicit DepthToSpaceOp(DepthToSpaceAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    const int64_t b = a_.blocksize;
    if (x->rank() != 4 || x->shape()[1] % (b * b) != 0)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "input " + shape_to_string(x->shape()) + " must be 4-D with C divisible by blocksize² = " +
                                std::to_string(b * b));
    const int64_t n = x->shape()[0], c = x->shape()[1] / (b * b), h = x->shape()[2], w = x->shape()[3];
    // Output viewed as [N, C', H, b, W, b]; strides into the input for each of those axes.
    const int64_t hw = h * w;
    std::vector<int64_t> shape{n, c, h, b, w, b};
    std::vector<int64_t> strides;
    if (!a_.crd)  // input [N, b1, b2, C', H, W]
      strides = {c * b * b * hw, hw, w, b * c * hw, 1, c * hw};
    else          // input [N, C', b1, b2, H, W]
      strides = {c * b * b * hw, b * b * hw, w, b * hw, 1, hw};
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, x->dtype(), {n, c, h * b, w * b}));
    kernels::strided_copy(dtype_size(x->dtype()), 6, shape.data(), x->raw(), strides.data(), y->mutable_raw(),
                          &ctx.pool());
    return Status::ok_status();
  }

 private:
  DepthToSpaceAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_DepthToSpace(const graph::Node& node, int64_t) {
  DepthToSpaceAttrs a;
  GB_ASSIGN_OR_RETURN(a.blocksize, attr_int_required(node, "blocksize"));
  if (a.blocksize < 1) return make_error(ErrorCode::kInvalidModel, "blocksize must be >= 1");
  GB_ASSIGN_OR_RETURN(std::string mode, attr_string(node, "mode", "DCR"));
  if (mode != "DCR" && mode != "CRD") return make_error(ErrorCode::kInvalidModel, "mode must be DCR or CRD");
  a.crd = mode == "CRD";
  return std::unique_ptr<Op>(new DepthToSpaceOp(a));
}

}  // namespace glassbox::ops
