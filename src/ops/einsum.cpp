// Einsum (opset 12+), float32, one or two operands, explicit ("ij,jk->ik") or
// implicit output. Two operands: letters are classed as batch (A, B, out),
// M (A, out), N (B, out), K (A, B); letters in one operand only and not in the
// output are summed first. Each operand is gathered into [batch, M, K] /
// [batch, K, N] (no copy when already in that order), multiplied with one
// batched GEMM (kernels/gemm.h), and the result permuted to the output order.
// A letter repeated within one term takes that operand's diagonal (gathered to
// scratch first). Not implemented (refused): more than two operands,
// broadcasting a size-1 letter against a larger one.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/gemm.h"
#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct Equation {
  std::vector<std::string> inputs;
  std::string output;
};

Result<Equation> parse(const std::string& eq) {
  Equation e;
  std::string s;
  for (char c : eq)
    if (c != ' ') s += c;
  const auto arrow = s.find("->");
  const std::string lhs = s.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    e.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  auto bad = [&](const std::string& why) {
    return make_error(ErrorCode::kUnsupported, "Einsum equation '" + eq + "': " + why, {},
                      "rewrite the einsum as MatMul/Transpose/ReduceSum when exporting");
  };
  if (e.inputs.size() > 2) return bad("more than two operands is not implemented");
  for (std::string in : e.inputs) {
    if (const size_t p = in.find("..."); p != std::string::npos) in.erase(p, 3);
    if (in.find('.') != std::string::npos) return bad("malformed ellipsis");
    for (char c : in)
      if (!std::isalpha(static_cast<unsigned char>(c))) return bad(std::string("unexpected character '") + c + "'");
  }
  if (arrow != std::string::npos) {
    e.output = s.substr(arrow + 2);
  } else {  // implicit: ellipsis dims, then letters that appear exactly once, alphabetically
    std::string all;
    for (const auto& in : e.inputs) all += in;
    if (all.find("...") != std::string::npos) e.output = "...";
    for (char c = 'A'; c <= 'z'; ++c)
      if (std::isalpha(static_cast<unsigned char>(c)) && std::count(all.begin(), all.end(), c) == 1) e.output += c;
  }
  return e;
}

// Gathers tensor x (letters `from`, dims) into letter order `to`, summing
// letters of `from` missing from `to`. dims_of maps letters to sizes.
template <class T>
void gather_sum(const T* x, const std::string& from, const std::vector<int64_t>& dims, const std::string& to,
                const std::array<int64_t, 128>& size_of, T* y) {
  int64_t out_n = 1;
  for (char c : to) out_n *= size_of[static_cast<unsigned char>(c)];
  std::fill(y, y + out_n, T(0));
  // Stride in y of each letter of `from` (0 when summed away).
  std::vector<int64_t> ystride(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) {
    int64_t s = 1;
    const size_t pos = to.find(from[i]);
    if (pos == std::string::npos) continue;
    for (size_t j = pos + 1; j < to.size(); ++j) s *= size_of[static_cast<unsigned char>(to[j])];
    ystride[i] = s;
  }
  int64_t n = 1;
  for (auto d : dims) n *= d;
  std::vector<int64_t> idx(dims.size(), 0);
  int64_t yo = 0;
  for (int64_t e = 0; e < n; ++e) {
    y[yo] += x[e];
    for (size_t d = dims.size(); d-- > 0;) {
      yo += ystride[d];
      if (++idx[d] < dims[d]) break;
      yo -= dims[d] * ystride[d];
      idx[d] = 0;
    }
  }
}

// Replaces "..." by letters unused in the equation, right-aligned across
// operands (an operand with fewer ellipsis dims gets the trailing ones).
Result<Equation> expand_ellipsis(const Equation& e, const std::vector<const Tensor*>& ins) {
  bool any = e.output.find("...") != std::string::npos;
  for (const auto& in : e.inputs) any = any || in.find("...") != std::string::npos;
  if (!any) return e;
  std::string used;
  for (const auto& in : e.inputs) used += in;
  used += e.output;
  std::string pool;
  for (char c = 'A'; c <= 'z'; ++c)
    if (std::isalpha(static_cast<unsigned char>(c)) && used.find(c) == std::string::npos) pool += c;
  std::vector<int64_t> ell(e.inputs.size(), 0);
  int64_t max_ell = 0;
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    const size_t p = e.inputs[i].find("...");
    if (p == std::string::npos) continue;
    ell[i] = ins[i]->rank() - static_cast<int64_t>(e.inputs[i].size() - 3);
    if (ell[i] < 0)
      return make_error(ErrorCode::kInvalidArgument, "operand " + std::to_string(i) + " has too few dims for '" +
                                                         e.inputs[i] + "'");
    max_ell = std::max(max_ell, ell[i]);
  }
  if (max_ell > static_cast<int64_t>(pool.size()))
    return make_error(ErrorCode::kUnsupported, "Einsum: too many ellipsis dims");
  const std::string letters = pool.substr(0, static_cast<size_t>(max_ell));
  Equation out = e;
  for (size_t i = 0; i < e.inputs.size(); ++i)
    if (const size_t p = out.inputs[i].find("..."); p != std::string::npos)
      out.inputs[i].replace(p, 3, letters.substr(static_cast<size_t>(max_ell - ell[i])));
  if (const size_t p = out.output.find("..."); p != std::string::npos) out.output.replace(p, 3, letters);
  return out;
}

class EinsumOp final : public Op {
 public:
  explicit EinsumOp(Equation e) : e_(std::move(e)) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* first, require_input(ctx, 0, "Inputs"));
    if (first->dtype() == DataType::kFloat64) return run<double>(ctx);
    return run<float>(ctx);
  }

 private:
  template <class T>
  Status run(ComputeContext& ctx) const {
    std::vector<const Tensor*> raw;
    for (size_t i = 0; i < e_.inputs.size(); ++i) {
      GB_ASSIGN_OR_RETURN(const Tensor* t, require_input(ctx, i, "Inputs"));
      raw.push_back(t);
    }
    GB_ASSIGN_OR_RETURN(Equation eq, expand_ellipsis(e_, raw));
    std::array<int64_t, 128> size_of{};
    size_of.fill(-1);
    std::vector<const Tensor*> ins;
    for (size_t i = 0; i < eq.inputs.size(); ++i) {
      GB_ASSIGN_OR_RETURN(const Tensor* t, require_input(ctx, i, "Inputs"));
      if (t->dtype() != dtype_of<T>())
        return op_error(ctx, ErrorCode::kUnsupported, std::string("Einsum supports float32/float64 (all operands "
                                                                  "alike), got ") + dtype_name(t->dtype()));
      if (t->rank() != static_cast<int64_t>(eq.inputs[i].size()))
        return op_error(ctx, ErrorCode::kInvalidArgument,
                        "operand " + std::to_string(i) + " has rank " + std::to_string(t->rank()) + " but term '" +
                            eq.inputs[i] + "' has " + std::to_string(eq.inputs[i].size()) + " letters");
      for (size_t d = 0; d < eq.inputs[i].size(); ++d) {
        int64_t& s = size_of[static_cast<unsigned char>(eq.inputs[i][d])];
        const int64_t dim = t->shape()[d];
        if (s == -1 || s == 1) s = dim;
        else if (dim != s && dim != 1)
          return op_error(ctx, ErrorCode::kInvalidArgument,
                          std::string("letter '") + eq.inputs[i][d] + "' has sizes " + std::to_string(s) + " and " +
                              std::to_string(dim));
      }
      ins.push_back(t);
    }
    // Repeated letters in a term: gather the diagonal, keep each letter once.
    std::array<Tensor, 2> diag;
    for (size_t i = 0; i < ins.size(); ++i) {
      const std::string term = eq.inputs[i];
      std::string uniq;
      for (char c : term)
        if (uniq.find(c) == std::string::npos) uniq += c;
      if (uniq.size() == term.size()) continue;
      std::vector<int64_t> st(term.size());
      int64_t acc = 1;
      for (size_t d = term.size(); d-- > 0;) {
        st[d] = acc;
        acc *= ins[i]->shape()[d];
      }
      Shape ushape;
      std::vector<int64_t> ustride;
      for (char c : uniq) {
        int64_t sum = 0;
        for (size_t d = 0; d < term.size(); ++d)
          if (term[d] == c) sum += st[d];
        ushape.push_back(size_of[static_cast<unsigned char>(c)]);
        ustride.push_back(sum);
      }
      GB_ASSIGN_OR_RETURN(diag[i], ctx.allocate_scratch(dtype_of<T>(), ushape));
      T* dst = diag[i].template mutable_data<T>();
      const T* src = ins[i]->template data<T>();
      std::vector<int64_t> idx(ushape.size(), 0);
      int64_t off = 0;
      for (int64_t e = 0; e < diag[i].numel(); ++e) {
        dst[e] = src[off];
        for (size_t d = ushape.size(); d-- > 0;) {
          off += ustride[d];
          if (++idx[d] < ushape[d]) break;
          off -= ushape[d] * ustride[d];
          idx[d] = 0;
        }
      }
      ins[i] = &diag[i];
      eq.inputs[i] = uniq;
    }
    Shape out_shape;
    for (char c : eq.output) {
      if (size_of[static_cast<unsigned char>(c)] < 0)
        return op_error(ctx, ErrorCode::kInvalidArgument, std::string("output letter '") + c + "' is in no input");
      out_shape.push_back(size_of[static_cast<unsigned char>(c)]);
    }
    for (size_t i = 0; i < ins.size(); ++i)
      for (size_t d = 0; d < eq.inputs[i].size(); ++d)
        if (ins[i]->shape()[d] != size_of[static_cast<unsigned char>(eq.inputs[i][d])])
          return op_error(ctx, ErrorCode::kUnsupported, "broadcasting a size-1 letter is not implemented");
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype_of<T>(), out_shape));
    if (ins.size() == 1) {
      gather_sum(ins[0]->data<T>(), eq.inputs[0], ins[0]->shape(), eq.output, size_of, y->mutable_data<T>());
      return {};
    }
    const std::string& a = eq.inputs[0];
    const std::string& b = eq.inputs[1];
    const std::string& o = eq.output;
    std::string batch, m, n, k;
    for (char c : a) {
      const bool in_b = b.find(c) != std::string::npos, in_o = o.find(c) != std::string::npos;
      if (in_b && in_o) batch += c;
      else if (in_o) m += c;
      else if (in_b) k += c;
    }
    for (char c : b)
      if (a.find(c) == std::string::npos && o.find(c) != std::string::npos) n += c;
    auto count = [&](const std::string& ls) {
      int64_t p = 1;
      for (char c : ls) p *= size_of[static_cast<unsigned char>(c)];
      return p;
    };
    const int64_t NB = count(batch), M = count(m), N = count(n), K = count(k);
    // Gather operands unless already in [batch, M, K] / [batch, K, N] order.
    auto prepare = [&](const Tensor& t, const std::string& from, const std::string& to, Tensor& scratch)
        -> Result<const T*> {
      if (from == to) return t.data<T>();
      GB_ASSIGN_OR_RETURN(scratch, ctx.allocate_scratch(dtype_of<T>(), {std::max<int64_t>(1, count(to))}));
      gather_sum(t.data<T>(), from, t.shape(), to, size_of, scratch.mutable_data<T>());
      return static_cast<const T*>(scratch.data<T>());
    };
    Tensor sa, sb, sc;
    // B may be used as [batch, N, K] (trans_b) when that is its natural order.
    const bool b_trans = (b == batch + n + k) && b != batch + k + n;
    GB_ASSIGN_OR_RETURN(const T* pa, prepare(*ins[0], a, batch + m + k, sa));
    GB_ASSIGN_OR_RETURN(const T* pb, prepare(*ins[1], b, b_trans ? batch + n + k : batch + k + n, sb));
    const std::string prod_order = batch + m + n;
    T* pc = y->mutable_data<T>();
    if (prod_order != o) {
      GB_ASSIGN_OR_RETURN(sc, ctx.allocate_scratch(dtype_of<T>(), {std::max<int64_t>(1, NB * M * N)}));
      pc = sc.mutable_data<T>();
    }
    kernels::GemmDesc d;
    d.batch = NB;
    d.M = M;
    d.N = N;
    d.K = K;
    d.trans_b = b_trans;
    d.lda = K;
    d.ldb = b_trans ? K : N;
    d.ldc = N;
    d.stride_a = M * K;
    d.stride_b = K * N;
    d.stride_c = M * N;
    if constexpr (std::is_same_v<T, float>) kernels::gemm_f32(d, pa, pb, pc, &ctx.pool());
    else kernels::gemm_naive<T>(d, pa, pb, pc);
    if (prod_order != o) {
      std::vector<int64_t> dims;
      for (char c : prod_order) dims.push_back(size_of[static_cast<unsigned char>(c)]);
      gather_sum(pc, prod_order, dims, o, size_of, y->mutable_data<T>());
    }
    return {};
  }

 private:
  Equation e_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Einsum(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"equation"}));
  GB_ASSIGN_OR_RETURN(std::string eq, attr_string(node, "equation", ""));
  GB_ASSIGN_OR_RETURN(Equation e, parse(eq));
  if (e.inputs.size() != node.inputs.size())
    return make_error(ErrorCode::kInvalidModel, "Einsum equation '" + eq + "' has " + std::to_string(e.inputs.size()) +
                                                    " terms but the node has " + std::to_string(node.inputs.size()) +
                                                    " inputs");
  return std::unique_ptr<Op>(new EinsumOp(std::move(e)));
}

}  // namespace glassbox::ops
