// Hugging Face tokenizer.json, reimplemented: output identical to the `tokenizers`
// library (ids, type ids, tokens, offsets, masks, overflow windows), with truncation
// and padding as explicit policy. See docs/tokenizer.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "glassbox/error.h"

namespace glassbox {

// Which end of a sequence truncation removes from / padding is added to.
enum class Side { kRight, kLeft };

enum class TruncationStrategy {
  kLongestFirst,  // remove from the longer of the pair first (HF "LongestFirst")
  kOnlyFirst,     // only ever remove from the first sequence
  kOnlySecond,    // only ever remove from the second sequence (error for single inputs)
};

// One truncation policy, same meaning as tokenizer.json's "truncation".
struct TruncationPolicy {
  std::size_t max_length = 512;                                   // total tokens including special tokens
  TruncationStrategy strategy = TruncationStrategy::kLongestFirst;  // HF default
  Side direction = Side::kRight;                                  // HF default: keep the beginning
  std::size_t stride = 0;  // tokens repeated between consecutive overflow windows; must be < max_length
};

enum class PaddingStrategy {
  kBatchLongest,  // pad to the longest encoding of the batch
  kFixed,         // pad to PaddingPolicy::fixed_length
};

// One padding policy, same meaning as tokenizer.json's "padding".
struct PaddingPolicy {
  PaddingStrategy strategy = PaddingStrategy::kBatchLongest;  // HF default
  std::size_t fixed_length = 0;                               // used only with kFixed
  Side direction = Side::kRight;                              // HF default
  std::size_t pad_to_multiple_of = 0;                         // 0 = no rounding
  std::uint32_t pad_id = 0;                                   // HF default
  std::uint32_t pad_type_id = 0;                              // HF default
  std::string pad_token = "[PAD]";                            // HF default
};

// Unit of Encoding::offsets.
enum class OffsetUnit {
  kChars,  // Unicode code points into the input, as the Python and Node bindings report
  kBytes,  // UTF-8 byte offsets into the input, as the Rust `encode` reports
};

// Every policy of one encode call. Nothing is read from anywhere else.
struct EncodeOptions {
  // Let the post-processor add [CLS]/<s>/<bos>...; HF's default is true.
  bool add_special_tokens = true;
  // true: apply tokenizer.json's "truncation" exactly as declared (HF behaviour);
  // false: apply `truncation` below instead (nullopt = never truncate).
  bool truncation_from_file = true;
  std::optional<TruncationPolicy> truncation;
  // true: apply tokenizer.json's "padding" as declared; false: apply `padding` below.
  bool padding_from_file = true;
  std::optional<PaddingPolicy> padding;
  // Code points by default, as the Python/Node bindings and the CLI contract report.
  OffsetUnit offsets = OffsetUnit::kChars;
  // true: components take their specialised paths where they apply (per-character tables
  // for BertNormalizer, single-pass BertPreTokenizer, ...), proven identical to the general
  // path by differential tests (tests/tokenizer/fast_path_test.cpp); false: general path
  // only, to rule the fast paths out when chasing a difference.
  bool fast_paths = true;
};

// The result of encoding one input (or one pair of inputs).
struct Encoding {
  std::vector<std::uint32_t> ids;
  std::vector<std::uint32_t> type_ids;
  std::vector<std::string> tokens;
  std::vector<std::pair<std::size_t, std::size_t>> offsets;  // [start, end) in the input it came from
  std::vector<std::optional<std::uint32_t>> word_ids;         // nullopt for special and pad tokens
  std::vector<std::uint32_t> sequence_ids;                    // 0 = first input, 1 = pair; internal bookkeeping
  std::vector<std::uint32_t> special_tokens_mask;             // 1 for tokens added by post-processor/padding
  std::vector<std::uint32_t> attention_mask;                  // 0 for padding
  std::vector<Encoding> overflowing;                          // windows cut off by truncation, in order
  std::size_t size() const { return ids.size(); }
};

// One input of encode_batch: a text and an optional pair text.
struct EncodeInput {
  std::string text;
  std::optional<std::string> pair;
};

class Tokenizer {
 public:
  // Loads a tokenizer.json. Unknown component types or field values fail with the JSON
  // path and the value, e.g. `pre_tokenizer.pretokenizers[1].type: unknown "Foo"`.
  static Result<Tokenizer> from_file(const std::string& path);
  static Result<Tokenizer> from_json_string(std::string_view json);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Encodes `text` (and `pair` if given). Input must be valid UTF-8.
  Result<Encoding> encode(std::string_view text, std::optional<std::string_view> pair = std::nullopt,
                          const EncodeOptions& options = {}) const;

  // Encodes every input, then pads the batch as one (BatchLongest pads to the batch's longest).
  // num_threads: worker threads (1 = caller's thread only); results do not depend on it.
  Result<std::vector<Encoding>> encode_batch(const std::vector<EncodeInput>& inputs,
                                             const EncodeOptions& options = {},
                                             std::size_t num_threads = 1) const;

  // Ids back to text through the decoder. Unlike HF (which silently drops them), an id
  // that is neither in the vocabulary nor an added token is an error.
  Result<std::string> decode(const std::vector<std::uint32_t>& ids, bool skip_special_tokens = false) const;

  // Vocabulary look-ups (model vocabulary plus added tokens).
  std::optional<std::uint32_t> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(std::uint32_t id) const;
  std::size_t vocab_size() const;
  // Id of the model's unknown token (unk_token / unk_id), nullopt if the model has none.
  std::optional<std::uint32_t> unknown_id() const;

  // The truncation / padding declared in the file (nullopt if none).
  const std::optional<TruncationPolicy>& file_truncation() const;
  const std::optional<PaddingPolicy>& file_padding() const;

  struct Impl;

 private:
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace glassbox
