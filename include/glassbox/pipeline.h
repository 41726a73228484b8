// Text pipelines on a model directory as publishers write it: the ONNX file (model.onnx,
// onnx/model.onnx or a declared variant, see find_model_file), tokenizer.json, config.json,
// optional tokenizer_config.json, the sentence-transformers files (modules.json, 1_Pooling/,
// 2_Dense/, config_sentence_transformers.json, sentence_bert_config.json) and glassbox.json
// (the declared decisions, which win over the rest). Whatever glassbox.json leaves out is
// derived from the other files, and every derivation is recorded with its source.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/session.h"
#include "glassbox/tokenizer.h"

namespace glassbox {

enum class PipelineTask { kClassify, kEmbed };
// How token vectors become one text vector (sentence-transformers' Pooling modes, in the
// order it concatenates them when several are declared), or kNone: the model's output is
// already [batch, hidden].
enum class Pooling { kCls, kMax, kMean, kMeanSqrtLen, kWeightedMean, kLastToken, kNone };
// "cls", "max", "mean", "mean_sqrt_len_tokens", "weightedmean", "lasttoken", "none"
const char* pooling_name(Pooling p);

// How a classifier's logits become scores: softmax over the labels, sigmoid of each logit on its
// own (one label, multi-label models, sigmoid cross-encoders), or none (the raw logit: regression,
// identity cross-encoders such as the MS MARCO ones).
enum class ScoreFunction { kSoftmax, kSigmoid, kNone };
const char* score_function_name(ScoreFunction f);  // "softmax", "sigmoid", "none"

// A sentence-transformers Dense module applied to the pooled vector: activation(W x + b).
struct DenseLayer {
  std::string dir;                 // the module folder, e.g. "2_Dense"
  int64_t in = 0, out = 0;         // in_features, out_features
  std::vector<float> weight;       // [out, in], row-major (safetensors "linear.weight")
  std::vector<float> bias;         // [out], empty without bias ("linear.bias")
  std::string activation;          // "identity" | "tanh" | "relu" | "sigmoid" | "gelu" (erf)
};

// A sparse (SPLADE) output head over the model's [batch, sequence, vocabulary] MLM logits, as
// sentence-transformers' SpladePooling computes it: w = log(1 + relu(logit)) (log1p_relu: that log1p
// taken twice), positions with attention mask 0 count as 0, then max (or sum) over the sequence.
// Entries that are 0 are left out; top_k > 0 keeps only the top_k largest (ties: lower index).
struct SparseHead {
  std::string pooling = "max";       // "max" | "sum" (SpladePooling pooling_strategy)
  std::string activation = "relu";   // "relu" | "log1p_relu" (SpladePooling activation_function)
  int64_t top_k = 0;                 // 0 = every nonzero entry
};

// A multi-vector (ColBERT-style late interaction) head, as PyLate publishes it: the Transformer's
// token vectors through per-token Dense layers, L2-normalized per token. Queries and documents are
// encoded differently: a prefix token inserted after the first token ([CLS]), their own lengths,
// queries padded to query_length with the expansion token (attention 0 unless attend_to_expansion,
// every position kept), documents without the skiplist's tokens (punctuation) and padding.
struct MultiVectorHead {
  std::optional<uint32_t> query_prefix_id, document_prefix_id;  // nullopt: no prefix ("" declared)
  std::string query_prefix = "[Q] ", document_prefix = "[D] ";   // the prefix tokens (explain)
  int64_t query_length = 32, document_length = 180;              // tokens, the prefix included
  bool query_expansion = true;       // pad queries to query_length with expansion_id, keep every position
  bool attend_to_expansion = false;  // expansion positions get attention mask 1
  uint32_t expansion_id = 0;         // the tokenizer's mask token
  std::string expansion_token;       // its text (Encoding::tokens)
  std::vector<uint32_t> skiplist_ids;  // document tokens left out (PyLate skiplist_words, as tokens)
  std::vector<DenseLayer> dense;     // per token, in order (modules.json pylate.models.Dense.Dense)
};

// The decisions a pipeline runs with (glassbox.json's fields).
struct PipelineDecisions {
  PipelineTask task = PipelineTask::kClassify;
  int64_t max_length = 0;                      // tokens per input including special tokens
  std::optional<TruncationPolicy> truncation;  // nullopt = an overlong input is an error
  int64_t batch_size = 8;                      // texts per model run
  Pooling pooling = Pooling::kMean;            // embed only: pooling_modes.front(), for callers that show one mode
  std::vector<Pooling> pooling_modes = {Pooling::kMean};  // embed: several = concatenated in this order
  bool include_prompt = true;                  // false: prompt tokens are left out of pooling (1_Pooling include_prompt)
  std::vector<DenseLayer> dense;               // embed: applied after pooling, in order (modules.json Dense)
  bool normalize = false;                      // embed only: L2-normalize vectors (after dense and dimensions)
  std::map<std::string, std::string> prompts;  // named prompts (config_sentence_transformers.json prompts)
  std::string default_prompt_name;             // "" = none; used when a request names no prompt
  std::string similarity = "cosine";           // cosine | dot | euclidean | manhattan (similarity_fn_name)
  bool lowercase_input = false;                // lowercase texts before tokenizing (sentence_bert_config do_lower_case)
  std::string model_file;                      // the ONNX file loaded, relative to the model directory
  std::vector<std::string> labels;             // classify: label of each logit
  ScoreFunction score_function = ScoreFunction::kSoftmax;  // classify and rerank: logits -> scores
  // classify: a text whose top score is below this is reported as abstained ("not sure"), its labels and
  // scores still given (glassbox.json "abstain_below", a probability in (0, 1); softmax or sigmoid scores).
  // nullopt: every text gets its top label with no verdict on confidence.
  std::optional<double> abstain_below;
  uint32_t pad_id = 0;                         // id used to pad batches (attention mask 0)
  // Batches of texts of different lengths run with Session::run_unpadded (each text on its
  // real length, no compute on padding; lengths rounded up to a multiple of 8). glassbox.json
  // "unpadded_batches" declares it; absent: on when, at load, a probe batch gives the padded
  // run's result (1e-4 relative) on its real tokens (the model masks padding).
  bool unpadded_batches = false;
  // embed: a sparse head (modules.json SpladePooling, or glassbox.json "sparse"); nullopt = dense vectors.
  std::optional<SparseHead> sparse;
  // embed: a multi-vector head (PyLate ColBERT layout, or glassbox.json "multi_vector"); nullopt = one vector per text.
  std::optional<MultiVectorHead> multi_vector;
};

// How one decision was reached: "glassbox.json", "config.json id2label", ...
struct Derivation {
  std::string field;
  std::string value;
  std::string source;
  std::string risk = {};  // set when nothing declared it and the default can be wrong for this model (explain shows it)
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
  std::optional<std::string> model_file;       // override of glassbox.json model_file (flag --model-file)
};

struct PipelineInput {
  std::string text;
  std::optional<std::string> pair;
  // This input may be truncated to max_length even when the pipeline declares no
  // truncation policy (longest_first then applies): a caller's explicit per-input
  // choice, e.g. a server request's "truncate": true. The result reports tokens_dropped.
  bool allow_truncation = false;
  // With allow_truncation (and no declared policy): which text loses tokens (longest_first; a
  // rerank cuts only the document, only_second) and from which end (right keeps the beginning).
  TruncationStrategy truncation_strategy = TruncationStrategy::kLongestFirst;
  Side truncation_direction = Side::kRight;
  // Over max_length (and no declared truncation policy): cut into consecutive windows instead of
  // refusing (Pipeline::encode_windows): the pair (a rerank's document) is cut, each window with the
  // whole first text; a single text is cut itself. Windows do not overlap. Wins over allow_truncation.
  bool split_windows = false;
  // Embed: the prompt put before the text (sentence-transformers: prompt + text), by name from
  // decisions().prompts or literally; at most one of the two. Neither: default_prompt_name.
  std::optional<std::string> prompt_name = std::nullopt;
  std::optional<std::string> prompt = std::nullopt;
  // Multi-vector models (decisions().multi_vector): encode as a query (query prefix, query_length,
  // expansion) instead of a document (document prefix, document_length, skiplist).
  bool query = false;
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
  int64_t windows = 1;             // split_windows: the windows whose best logit this is (max_over_windows)
  bool abstained = false;          // decisions().abstain_below: the top score is below it (labels still given)
};

struct Embedding {
  std::vector<float> vector;
  // Sparse models (decisions().sparse): vector[i] is the weight of vocabulary id indices[i], ids ascending.
  std::vector<uint32_t> indices;
  // Multi-vector models: vector holds `vectors` rows (one per kept token), row-major.
  int64_t vectors = 0;
  int64_t tokens = 0;
  int64_t tokens_dropped = 0;
};

// One text as the pipeline feeds it to the model (its declared or requested truncation applied).
struct EncodedText {
  Encoding encoding;
  int64_t tokens_dropped = 0;
  int64_t prompt_tokens = 0;  // leading positions pooling leaves out (include_prompt false; 0 otherwise)
  bool query = false;         // multi-vector: encoded as a query (PipelineInput::query)
};

// Per-call embedding options (the server's and CLI's request fields).
struct EmbedOptions {
  std::optional<bool> normalize;       // nullopt: decisions().normalize
  std::optional<int64_t> dimensions;   // Matryoshka: keep the first N values, then normalize (if on)
};

// What one engine run of a batch computed.
struct BatchStats {
  int64_t texts = 0;
  int64_t real_tokens = 0;      // tokens of the texts
  int64_t computed_tokens = 0;  // positions the engine computed: real + padding
  bool unpadded = false;        // ran with Session::run_unpadded
  std::vector<std::string> nonfinite_outputs;  // outputs that held NaN/Inf (the run is then an error)
  // In: called after every node of the run (Session::run_observed), e.g. the server's sampled numerics check.
  // run_unpadded takes no observer, so an observed batch runs padded (same results on the real tokens).
  const NodeObserver* observer = nullptr;
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
  // encode(), except that an input over max_length with split_windows gives one EncodedText per
  // window (in order); any other input gives exactly encode()'s one.
  Result<std::vector<EncodedText>> encode_windows(const PipelineInput& input, size_t index = 0) const;
  Result<std::vector<Classification>> classify_encoded(const std::vector<EncodedText>& batch, int top_k,
                                                       BatchStats* stats = nullptr) const;
  Result<std::vector<Embedding>> embed_encoded(const std::vector<EncodedText>& batch, std::optional<bool> normalize,
                                               BatchStats* stats = nullptr) const;
  Result<std::vector<Embedding>> embed_encoded(const std::vector<EncodedText>& batch, const EmbedOptions& options,
                                               BatchStats* stats = nullptr) const;
  // Token-level vectors (TEI's /embed_all): per text, the model's [sequence, hidden] output on its
  // real tokens (special and prompt tokens included, no pooling, dense or normalization), flattened
  // row-major into Embedding::vector; Embedding::tokens rows of vector.size() / tokens values.
  Result<std::vector<Embedding>> embed_tokens_encoded(const std::vector<EncodedText>& batch, BatchStats* stats = nullptr) const;
  // normalize: overrides the declared decisions().normalize for this call (nullopt: declared).
  Result<std::vector<Embedding>> embed(const std::vector<PipelineInput>& inputs,
                                       std::optional<bool> normalize = std::nullopt) const;
  Result<std::vector<Embedding>> embed(const std::vector<PipelineInput>& inputs, const EmbedOptions& options) const;

  struct Impl;
  // For the pipeline library's free functions (embedding_heads.h); Impl is defined in src/pipeline only.
  const Impl& impl() const { return *impl_; }

 private:
  explicit Pipeline(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Rerank: one relevance score per (query, document) pair from a cross-encoder (a classify
// pipeline with exactly one label), the score function as the model declares it (decisions().
// score_function), results sorted by score (ties keep document order).
struct RerankOptions {
  // false: a pair over max_length is an error naming the document; true: the document (never the
  // query) loses tokens from `direction`'s end and the result says how many.
  bool truncate = false;
  Side direction = Side::kRight;
  // true (wins over truncate): a pair over max_length is cut into windows of the document, each with
  // the whole query, and the document scores its best window (max over the windows' logits).
  bool split = false;
  bool raw_scores = false;            // the logit instead of the declared score function
  std::optional<size_t> top_n;        // keep the best n (nullopt: all)
};
struct RankedDocument {
  size_t index = 0;                   // position of the document in the request
  float score = 0;                    // the declared score function of the logit (or the logit: raw_scores)
  float logit = 0;
  int64_t tokens = 0;                 // tokens of the pair the model saw
  int64_t tokens_dropped = 0;
  int64_t windows = 1;                // pairs the document was split into (RerankOptions::split)
};
// The pairs rerank feeds the model (query as the first text, each document as the pair).
std::vector<PipelineInput> rerank_inputs(const std::string& query, const std::vector<std::string>& documents,
                                         const RerankOptions& options);
// Scores from classify results in document order -> ranked documents (the rerank_inputs order).
Result<std::vector<RankedDocument>> rank_documents(const Pipeline& pipeline, const std::vector<Classification>& scored,
                                                   const RerankOptions& options);
// Results of windows (source[i]: the input window i came from, ascending) -> one per input: the
// window with the highest first logit (ties: the first), its tokens the sum over windows, windows set.
Result<std::vector<Classification>> max_over_windows(std::vector<Classification> per_window,
                                                     const std::vector<size_t>& source, size_t inputs);
Result<std::vector<RankedDocument>> rerank(const Pipeline& pipeline, const std::string& query,
                                           const std::vector<std::string>& documents, const RerankOptions& options = {});

// Late interaction (ColBERT's MaxSim, as PyLate's colbert_scores computes it): for each query row, the
// largest dot product with any document row, summed over the query rows (float64). The rows are the
// multi-vector head's L2-normalized token vectors, so each dot product is their cosine. Sizes: rows x dim.
Result<double> max_sim(const std::vector<float>& query, const std::vector<float>& document, int64_t dim);

// The similarity of two vectors as sentence-transformers defines `similarity_fn_name`
// (decisions().similarity): "cosine" (the dot of a / max(|a|, 1e-12) and b / max(|b|, 1e-12)), "dot", "euclidean"
// (minus the L2 distance), "manhattan" (minus the L1 distance); sizes must agree.
Result<double> vector_similarity(const std::string& function, const std::vector<float>& a, const std::vector<float>& b);

// Where a model directory's ONNX file is. Looked for as publishers write it: model.onnx
// (glassbox, Optimum CLI), onnx/model.onnx (transformers.js, sentence-transformers' ONNX
// backend), and their variants model_*.onnx / onnx/model_*.onnx (_quantized, _int8, _uint8,
// _q4, _fp16, _bnb4, Optimum's model_qint8_avx512_vnni.onnx, ...). `declared` (a path relative
// to dir, named by `declared_by`: the flag --model-file) wins; then dir/glassbox.json
// "model_file"; otherwise the fp32 default model.onnx, then onnx/model.onnx. Only variants and
// no declaration: an error listing them (a quantized file changes outputs; never picked silently).
struct ModelFileChoice {
  std::string path;                     // the file to load
  std::string relative;                 // its path inside the directory, e.g. "onnx/model.onnx"
  std::string source;                   // why this file (the declaration, or the default rule)
  std::vector<std::string> candidates;  // every model*.onnx found in dir and dir/onnx (relative, sorted)
};
Result<ModelFileChoice> find_model_file(const std::string& dir, const std::optional<std::string>& declared = std::nullopt,
                                        const std::string& declared_by = "flag --model-file");

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
