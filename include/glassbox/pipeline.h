// Text pipelines on a model directory (Hugging Face Optimum layout):
// model.onnx, tokenizer.json, config.json, optional tokenizer_config.json and
// glassbox.json (the declared decisions). Whatever glassbox.json leaves out is
// derived from the other files, and every derivation is recorded with its source.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/session.h"
#include "glassbox/tokenizer.h"

namespace glassbox {

enum class PipelineTask { kClassify, kEmbed };
enum class Pooling { kCls, kMean, kNone };

// The decisions a pipeline runs with (glassbox.json's fields).
struct PipelineDecisions {
  PipelineTask task = PipelineTask::kClassify;
  int64_t max_length = 0;                      // tokens per input including special tokens
  std::optional<TruncationPolicy> truncation;  // nullopt = an overlong input is an error
  int64_t batch_size = 8;                      // texts per model run
  Pooling pooling = Pooling::kMean;            // embed only
  bool normalize = false;                      // embed only: L2-normalize vectors
  std::vector<std::string> labels;             // classify: label of each logit
  uint32_t pad_id = 0;                         // id used to pad batches (attention mask 0)
  // Batches of texts of different lengths run with Session::run_unpadded (each text on its
  // real length, no compute on padding; lengths rounded up to a multiple of 8). glassbox.json
  // "unpadded_batches" declares it; absent: on when, at load, a probe batch gives the padded
  // run's result (1e-4 relative) on its real tokens (the model masks padding).
  bool unpadded_batches = false;
};

// How one decision was reached: "glassbox.json", "config.json id2label", ...
struct Derivation {
  std::string field;
  std::string value;
  std::string source;
};

struct PipelineOptions {
  SessionOptions session;                      // engine settings
  std::optional<std::string> truncation;       // override: "none" | "longest_first" | "only_first" | "only_second"
  std::optional<int64_t> batch_size;           // override of glassbox.json batch_size
  std::optional<Precision> precision;          // override of glassbox.json precision (flag --precision)
  // Where `precision` came from, as explain shows it: "flag --precision" (run, classify, serve)
  // or "serve --config file" (a server config file's session.precision).
  std::string precision_source = "flag --precision";
  std::optional<std::string> weights_cache;    // override of glassbox.json weights_cache (flag --weights-cache; "" = off)
  std::string weights_cache_source = "flag --weights-cache";  // as precision_source ("argument weights_cache": Python)
  std::optional<PoolWait> pool_wait;           // override of glassbox.json pool_wait (flag --pool-wait)
};

struct PipelineInput {
  std::string text;
  std::optional<std::string> pair;
  // This input may be truncated to max_length even when the pipeline declares no
  // truncation policy (longest_first then applies): a caller's explicit per-input
  // choice, e.g. a server request's "truncate": true. The result reports tokens_dropped.
  bool allow_truncation = false;
};

struct LabelScore {
  std::string label;
  float score = 0;
};

struct Classification {
  std::vector<LabelScore> labels;  // sorted by score, top_k of them
  std::vector<float> logits;       // the model's raw output row, in label order
  int64_t tokens = 0;              // tokens the model saw (without padding)
  int64_t tokens_dropped = 0;      // removed by a declared truncation policy (0 otherwise)
};

struct Embedding {
  std::vector<float> vector;
  int64_t tokens = 0;
  int64_t tokens_dropped = 0;
};

// One text as the pipeline feeds it to the model (its declared or requested truncation applied).
struct EncodedText {
  Encoding encoding;
  int64_t tokens_dropped = 0;
};

// What one engine run of a batch computed.
struct BatchStats {
  int64_t texts = 0;
  int64_t real_tokens = 0;      // tokens of the texts
  int64_t computed_tokens = 0;  // positions the engine computed: real + padding
  bool unpadded = false;        // ran with Session::run_unpadded
  std::vector<std::string> nonfinite_outputs;  // outputs that held NaN/Inf (the run is then an error)
};

class Pipeline {
 public:
  static Result<Pipeline> load(const std::string& model_dir, const PipelineOptions& options = {});
  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;
  ~Pipeline();

  const PipelineDecisions& decisions() const;
  const std::vector<Derivation>& derivations() const;
  const Session& session() const;
  const Tokenizer& tokenizer() const;

  Result<std::vector<Classification>> classify(const std::vector<PipelineInput>& inputs, int top_k = 1) const;

  // The steps classify/embed take, for callers that form their own batches (the server's
  // scheduler): encode one input (index names it in errors), then run a batch of encoded
  // texts as exactly one engine run (padded or unpadded as decisions() say).
  Result<EncodedText> encode(const PipelineInput& input, size_t index = 0) const;
  Result<std::vector<Classification>> classify_encoded(const std::vector<EncodedText>& batch, int top_k,
                                                       BatchStats* stats = nullptr) const;
  Result<std::vector<Embedding>> embed_encoded(const std::vector<EncodedText>& batch, std::optional<bool> normalize,
                                               BatchStats* stats = nullptr) const;
  // normalize: overrides the declared decisions().normalize for this call (nullopt: declared).
  Result<std::vector<Embedding>> embed(const std::vector<PipelineInput>& inputs,
                                       std::optional<bool> normalize = std::nullopt) const;

  struct Impl;

 private:
  explicit Pipeline(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Where the default model (models/langid) is looked for when no model directory is given
// (`classify`, `embed`, `serve` without --model; --model always wins). Lookup order, first
// directory holding model.onnx wins:
//  1. installed layout: <directory of /proc/self/exe>/../share/glassbox/models/langid
//     (what `cmake --install --prefix P` writes; relocatable: P can be moved or copied);
//  2. build tree: the source tree's models/langid, compiled in as an absolute path.
// Neither found: dir is the installed-layout path (loading it then fails, naming it).
struct DefaultModelLookup {
  std::string dir;                 // the directory used
  std::string found_by;            // which rule found it, in words (explain prints it)
  std::vector<std::string> tried;  // the candidates, in lookup order
};
DefaultModelLookup find_default_model();

// find_default_model().dir
std::string default_model_dir();

}  // namespace glassbox
