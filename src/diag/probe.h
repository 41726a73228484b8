// `glassbox probe`: destructive tests on purpose. Runs a model with dynamic axes at
// batch 1, 2 and an odd size, at sequence lengths 1, 2, max-1, max and max+1 (which
// must fail cleanly), with all-padding masks, and checks that outputs are finite and
// batch-invariant. A failing length inside [1, max] is bisected to the first one
// that breaks. On a model directory with tokenizer.json it adds the text cases of
// probe_text.h (lengths around the limit, hostile texts, unknown-token rate).
// JSON schema glassbox.probe/1.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/session.h"

namespace glassbox::diag {

enum class ProbeStatus { kPass, kFail, kWarn, kSkip };
const char* probe_status_name(ProbeStatus s);

struct ProbeCase {
  std::string name;    // e.g. "sequence length 129 (max+1)"
  ProbeStatus status = ProbeStatus::kSkip;
  std::string detail;  // what happened
};

struct ProbeOptions {
  int64_t max_length = 0;  // 0 = unknown: from config.json's max_position_embeddings when probing a model directory
  int64_t base_length = 8; // sequence length of the batch-size cases
  int64_t other_dim = 64;   // size of other dynamic dims (image height/width): big enough for typical CNN strides
  double rtol = 1e-3, atol = 1e-4;  // batch invariance tolerance: |single - batched| <= atol + rtol*|single|
  uint64_t seed = 0;
  bool text_cases = true;  // model directory with tokenizer.json: also run the text cases (probe_text.h)
};

struct ProbeReport {
  std::string model;
  int64_t max_length = 0;
  std::string max_length_source;  // "flag", "config.json max_position_embeddings", "unknown"
  std::vector<ProbeCase> cases;
  bool ok() const;  // no kFail
};

// `path` is an .onnx file or a model directory containing model.onnx (and config.json).
Result<ProbeReport> probe_model(const std::string& path, const SessionOptions& session_options, const ProbeOptions& options);

nlohmann::ordered_json probe_to_json(const ProbeReport& r);
std::string probe_to_text(const ProbeReport& r);

}  // namespace glassbox::diag
