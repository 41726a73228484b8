// Gather: out = data[..., indices, ...] along `axis`. Indices in [-n, n-1]
// (negative counts from the back); anything else is an error naming the index.
#include "kernels/data_movement.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct GatherAttrs {
  int64_t axis = 0;  // axis of data to index; negative from opset 11
};

class GatherOp final : public Op {
 public:
  explicit GatherOp(GatherAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "data"));
    GB_ASSIGN_OR_RETURN(const Tensor* it, nn::need_input(ctx, 1, "indices"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    const int64_t r = x->rank();
    GB_ASSIGN_OR_RETURN(int64_t axis, nn::norm_axis(&ctx, a_.axis, r));
    GB_ASSIGN_OR_RETURN(std::vector<int64_t> idx, nn::read_ints(ctx, *it, "indices"));
    const int64_t n = x->shape()[axis];
    for (size_t j = 0; j < idx.size(); ++j) {
      if (idx[j] < -n || idx[j] >= n)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "index " + std::to_string(idx[j]) + " (indices element " + std::to_string(j) +
                                  ") is out of range for axis " + std::to_string(axis) + " of size " +
                                  std::to_string(n),
                              "indices must lie in [" + std::to_string(-n) + ", " + std::to_string(n - 1) + "]");
      if (idx[j] < 0) idx[j] += n;
    }
    Shape out(x->shape().begin(), x->shape().begin() + axis);
    out.insert(out.end(), it->shape().begin(), it->shape().end());
    out.insert(out.end(), x->shape().begin() + axis + 1, x->shape().end());
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, x->dtype(), out));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x->shape()[d];
    for (int64_t d = axis + 1; d < r; ++d) inner *= x->shape()[d];
    const size_t row_bytes = static_cast<size_t>(inner) * dtype_size(x->dtype());
    // A large table viewed in the mapped model file (an embedding) is read row by row with
    // pread (Buffer::read_bytes): touching it through the mapping would map whole page-cache
    // folios around every row (~29 MB for 128 random rows of BERT-base's 94 MB table) and,
    // over many runs with different ids, make the whole table resident. Only for whole rows
    // of 64 bytes or more along the first axis (one read per row; an embedding look-up), not
    // for element-wise gathers along inner axes (a syscall per element).
    if (x->nbytes() >= (size_t{1} << 20) && x->buffer() && outer == 1 && row_bytes >= 64) {
      char* dst = static_cast<char*>(y->mutable_raw());
      const size_t n_idx = idx.size();
      bool ok = true;
      for (int64_t o = 0; o < outer && ok; ++o)
        for (size_t j = 0; j < n_idx && ok; ++j)
          ok = x->buffer()->read_bytes(x->byte_offset() + static_cast<size_t>(o * n + idx[j]) * row_bytes, row_bytes,
                                       dst + (static_cast<size_t>(o) * n_idx + j) * row_bytes);
      if (ok) return Status::ok_status();  // else: not a mapped file (or a read failed): copy below
    }
    // The kernel copies bytes (memcpy), so it reads the data where it lies: a table viewed
    // misaligned in the mapped model file is not copied whole for the rows a run needs.
    const void* src = x->buffer() ? static_cast<const char*>(x->buffer()->source_bytes()) + x->byte_offset() : x->raw();
    kernels::gather_axis(outer, n, row_bytes, src, idx.data(), static_cast<int64_t>(idx.size()), y->mutable_raw(),
                         &ctx.pool());
    return Status::ok_status();
  }

 private:
  GatherAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Gather(const graph::Node& node, int64_t) {
  GatherAttrs a;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", 0));
  return std::unique_ptr<Op>(new GatherOp(a));
}

}  // namespace glassbox::ops
