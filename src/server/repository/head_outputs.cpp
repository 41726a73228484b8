// OIP output tensors of a heads model (head_outputs.h).
#include "server/repository/head_outputs.h"

#include <algorithm>
#include <string>

namespace glassbox::server {
namespace {

const char* const kDense = "dense";
const char* const kSparseIndices = "sparse_indices";
const char* const kSparseValues = "sparse_values";
const char* const kMultiVector = "multi_vector";
const char* const kMultiVectorRows = "multi_vector_rows";

// The last dimension of the graph's output `name` when the graph fixes it, else -1.
int64_t width_of(const Pipeline& p, const std::string& name) {
  for (const auto& o : p.session().outputs())
    if (o.name == name && o.has_shape && !o.dims.empty() && o.dims.back() > 0) return o.dims.back();
  return -1;
}

// Allocation of these small outputs cannot fail but for a bad shape, which they are not.
Tensor allocated(DataType dtype, Shape shape) { return Tensor::allocate(dtype, std::move(shape)).value(); }

OipTensor dense_tensor(const std::vector<HeadEmbeddings>& texts) {
  const int64_t n = static_cast<int64_t>(texts.size());
  const int64_t dim = n ? static_cast<int64_t>(texts[0].dense->vector.size()) : 0;
  OipTensor t{kDense, "FP32", {n, dim}, allocated(DataType::kFloat32, {n, dim}), {}};
  for (int64_t i = 0; i < n; ++i)
    std::copy(texts[i].dense->vector.begin(), texts[i].dense->vector.end(), t.tensor.mutable_data<float>() + i * dim);
  return t;
}

void add_sparse_tensors(const std::vector<HeadEmbeddings>& texts, std::vector<OipTensor>& outs) {
  int64_t nnz = 0;
  for (const auto& h : texts) nnz += static_cast<int64_t>(h.sparse->indices.size());
  OipTensor indices{kSparseIndices, "INT64", {nnz, 2}, allocated(DataType::kInt64, {nnz, 2}), {}};
  OipTensor values{kSparseValues, "FP32", {nnz}, allocated(DataType::kFloat32, {nnz}), {}};
  int64_t at = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const Embedding& e = *texts[i].sparse;
    for (size_t k = 0; k < e.indices.size(); ++k, ++at) {
      indices.tensor.mutable_data<int64_t>()[2 * at] = static_cast<int64_t>(i);
      indices.tensor.mutable_data<int64_t>()[2 * at + 1] = e.indices[k];
      values.tensor.mutable_data<float>()[at] = e.vector[k];
    }
  }
  outs.push_back(std::move(indices));
  outs.push_back(std::move(values));
}

void add_multi_vector_tensors(const std::vector<HeadEmbeddings>& texts, std::vector<OipTensor>& outs) {
  const int64_t n = static_cast<int64_t>(texts.size());
  int64_t rows = 0, dim = 0;
  for (const auto& h : texts) {
    rows += h.multi_vector->vectors;
    if (h.multi_vector->vectors > 0) dim = static_cast<int64_t>(h.multi_vector->vector.size()) / h.multi_vector->vectors;
  }
  OipTensor vectors{kMultiVector, "FP32", {rows, dim}, allocated(DataType::kFloat32, {rows, dim}), {}};
  OipTensor counts{kMultiVectorRows, "INT64", {n}, allocated(DataType::kInt64, {n}), {}};
  float* at = vectors.tensor.mutable_data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const Embedding& e = *texts[i].multi_vector;
    at = std::copy(e.vector.begin(), e.vector.end(), at);
    counts.tensor.mutable_data<int64_t>()[i] = e.vectors;
  }
  outs.push_back(std::move(vectors));
  outs.push_back(std::move(counts));
}

}  // namespace

std::vector<OipSpec> head_output_specs(const Pipeline& pipeline, const EmbeddingHeads& heads) {
  std::vector<OipSpec> specs;
  if (heads.dense) specs.push_back({kDense, "FP32", {-1, width_of(pipeline, heads.dense->output)}});
  if (heads.sparse) {
    specs.push_back({kSparseIndices, "INT64", {-1, 2}});
    specs.push_back({kSparseValues, "FP32", {-1}});
  }
  if (heads.multi_vector) {
    specs.push_back({kMultiVector, "FP32", {-1, width_of(pipeline, heads.multi_vector->output)}});
    specs.push_back({kMultiVectorRows, "INT64", {-1}});
  }
  return specs;
}

std::vector<OipTensor> head_output_tensors(const EmbeddingHeads& heads, const std::vector<HeadEmbeddings>& texts,
                                           int64_t& dropped) {
  std::vector<OipTensor> outs;
  if (heads.dense) outs.push_back(dense_tensor(texts));
  if (heads.sparse) add_sparse_tensors(texts, outs);
  if (heads.multi_vector) add_multi_vector_tensors(texts, outs);
  dropped = 0;
  for (const auto& h : texts) dropped += h.tokens_dropped;
  return outs;
}

}  // namespace glassbox::server
