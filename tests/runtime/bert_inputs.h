// Inputs for the torch.onnx-exported BERT-shaped test models (tests/data/generated, made by
// scripts/make_test_models.py), shared by the fusion and unpadded-run tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "glassbox/session.h"
#include "test_models.h"

namespace glassbox::rt_test {

inline std::string generated_model_path(const std::string& name) {
  return std::string(GLASSBOX_SOURCE_DIR) + "/tests/data/generated/" + name + ".onnx";
}

// A [lengths.size(), seq] batch for every input of `s`: input_ids pseudo-random in [1, 1000)
// (an LCG from `seed`) on the first lengths[b] tokens and 0 after, attention_mask 1/0 alike,
// any other input (token_type_ids) 0.
inline std::vector<NamedTensor> bert_inputs(const Session& s, int64_t seq, const std::vector<int64_t>& lengths,
                                            uint32_t seed) {
  const int64_t batch = static_cast<int64_t>(lengths.size());
  std::vector<int64_t> ids(batch * seq), mask(batch * seq, 0), types(batch * seq, 0);
  uint32_t state = seed;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < seq; ++t) {
      state = state * 1664525u + 1013904223u;
      const bool real = t < lengths[static_cast<size_t>(b)];
      ids[b * seq + t] = real ? 1 + (state >> 8) % 999 : 0;
      mask[b * seq + t] = real ? 1 : 0;
    }
  std::vector<NamedTensor> in;
  for (const auto& spec : s.inputs()) {
    const auto& v = spec.name == "input_ids" ? ids : spec.name == "attention_mask" ? mask : types;
    in.push_back({spec.name, make_tensor<int64_t>(DataType::kInt64, {batch, seq}, v)});
  }
  return in;
}

}  // namespace glassbox::rt_test
