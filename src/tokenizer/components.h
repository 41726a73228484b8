// The pipeline components of tokenizer.json: normalizers, pre-tokenizers, models,
// post-processors and decoders. Each is built from its JSON object by a loader that
// reports unknown types/fields with the JSON path.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "glassbox/tokenizer.h"
#include "tokenizer/regex.h"
#include "tokenizer/text.h"

namespace glassbox::tok {

using Json = nlohmann::json;

// EncodeOptions::fast_paths of the encode call running on this thread. Components read it
// instead of taking it as an argument so the interfaces stay those of HF's pipeline; the
// scope is set by Tokenizer::Impl::encode_one for the duration of one call.
bool fast_paths_enabled();
class FastPathScope {
 public:
  explicit FastPathScope(bool on);
  ~FastPathScope();
  FastPathScope(const FastPathScope&) = delete;
  FastPathScope& operator=(const FastPathScope&) = delete;

 private:
  bool saved_;
};

// A token produced by a model; start/end are byte offsets into the model's input piece.
struct Token {
  std::uint32_t id;
  std::string value;
  std::uint32_t start, end;
};

// One split of the pre-tokenized string. Added-token splits arrive with `tokens` set and
// are left alone by pre-tokenizers and the model.
struct Piece {
  NStr ns;
  bool done = false;
  std::vector<Token> tokens;
};

// JSON loading helper that remembers the path for error messages.
struct JsonCtx {
  const Json& j;
  std::string path;
  JsonCtx at(const std::string& key) const;
  JsonCtx at(std::size_t i) const;
  Error err(const std::string& what) const;
};

// Fails on any field of a component object other than "type" and `allowed`.
Status check_fields(const JsonCtx& c, std::initializer_list<const char*> allowed);

// Loads the array `field` of sub-components with `load` into `items` (every "Sequence" component).
template <class Load, class Items>
Status load_items(const JsonCtx& c, const char* field, Load&& load, Items& items) {
  JsonCtx arr = c.at(field);
  if (!arr.j.is_array()) return arr.err("expected an array");
  for (std::size_t i = 0; i < arr.j.size(); ++i) {
    GB_ASSIGN_OR_RETURN(auto item, load(arr.at(i)));
    items.push_back(std::move(item));
  }
  return Status();
}

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual Status normalize(NStr& ns) const = 0;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual Status pre_tokenize(std::vector<Piece>& pieces) const = 0;
};

class Model {
 public:
  virtual ~Model() = default;
  // Appends the tokens of one pre-token.
  virtual Status tokenize(std::string_view text, std::vector<Token>& out) const = 0;
  virtual std::optional<std::uint32_t> token_to_id(std::string_view token) const = 0;
  virtual const std::string* id_to_token(std::uint32_t id) const = 0;
  virtual std::size_t vocab_size() const = 0;
  // Id of the model's unknown token, if it has one.
  virtual std::optional<std::uint32_t> unknown_id() const = 0;
};

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  virtual std::size_t added_tokens(bool is_pair) const = 0;
  // HF PostProcessor::process_encodings (type ids already set to the sequence index).
  virtual Status process_encodings(std::vector<Encoding>& encs, bool add_special_tokens) const = 0;
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual Status decode_chain(std::vector<std::string>& tokens) const = 0;
};

Result<std::unique_ptr<Normalizer>> load_normalizer(const JsonCtx& c);
Result<std::unique_ptr<PreTokenizer>> load_pre_tokenizer(const JsonCtx& c);
// model.vocab (object form) and model.merges captured while parsing, so the 33 MB files of
// large vocabularies never become a JSON DOM (load time): every entry is converted as soon
// as it is parsed and its DOM value freed, its strings appended to one arena. Empty when
// not captured.
struct CapturedModelData {
  bool has_vocab = false, has_merges = false;
  std::string arena;  // captured strings, back to back
  struct Str {
    std::uint32_t off = 0, len = 0;
  };
  struct VocabEntry {
    Str token;
    Json id;  // as parsed: a number (no heap), anything else is reported by the loader
  };
  std::vector<VocabEntry> vocab;
  enum class MergeForm : std::uint8_t { kString, kPair, kOther };
  struct MergeEntry {
    MergeForm form;  // kOther: any other shape, refused by the loader with its index
    Str a, b;        // kString: a = the whole "a b" string; kPair: the two strings
  };
  std::vector<MergeEntry> merges;

  Str add(std::string_view s) {
    Str r{static_cast<std::uint32_t>(arena.size()), static_cast<std::uint32_t>(s.size())};
    arena.append(s);
    return r;
  }
  std::string_view str(Str s) const { return std::string_view(arena).substr(s.off, s.len); }
};
Result<std::unique_ptr<Model>> load_model(const JsonCtx& c, const CapturedModelData* captured = nullptr);
Result<std::unique_ptr<PostProcessor>> load_post_processor(const JsonCtx& c);
Result<std::unique_ptr<Decoder>> load_decoder(const JsonCtx& c);

// Split behaviours shared by Split, Punctuation, Metaspace, CharDelimiterSplit ...
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
Result<SplitBehavior> parse_behavior(const JsonCtx& c);
// matches: (start, end, is_match) covering the whole piece, in order.
struct Match {
  std::size_t s, e;
  bool is_match;
};
void split_by_matches(const NStr& ns, std::vector<Match>& matches, SplitBehavior b, std::vector<NStr>& out);
// Applies fn to every not-yet-tokenized piece; empty results are dropped (HF). fn may
// modify (or move from) the piece it is given: the input pieces are replaced by the result.
template <class F>
Status split_pieces(std::vector<Piece>& pieces, F fn) {
  // Per-thread buffers keep their capacity between calls (no per-call vector growth).
  thread_local std::vector<Piece> spare;
  thread_local std::vector<NStr> parts;
  std::vector<Piece> out = std::move(spare);
  out.clear();
  out.reserve(pieces.size() * 2);
  for (Piece& p : pieces) {
    if (p.done) {
      out.push_back(std::move(p));
      continue;
    }
    parts.clear();
    GB_RETURN_IF_ERROR(fn(p.ns, parts));
    for (NStr& n : parts)
      if (!n.empty()) out.push_back(Piece{std::move(n), false, {}});
  }
  std::swap(pieces, out);
  out.clear();
  spare = std::move(out);
  return Status();
}

// Byte-level alphabet: byte -> char and back.
char32_t byte_to_char(unsigned char b);
int char_to_byte(char32_t c);  // -1 if not in the alphabet

// Helpers for loaders.
Result<bool> get_bool(const JsonCtx& c, const std::string& key, std::optional<bool> dflt);
Result<std::string> get_string(const JsonCtx& c, const std::string& key, std::optional<std::string> dflt);
Result<std::int64_t> get_int(const JsonCtx& c, const std::string& key, std::optional<std::int64_t> dflt);
// Reads a {"String": s} or {"Regex": r} pattern.
struct PatternSpec {
  bool is_regex = false;
  std::string text;
  std::shared_ptr<Regex> regex;
};
Result<PatternSpec> get_pattern(const JsonCtx& c);
// All (start,end,is_match) of a pattern in `text` (HF Pattern::find_matches).
Status find_pattern(const PatternSpec& p, std::string_view text, std::vector<Match>& out);

// Offsets trimming of the ByteLevel / Roberta post-processors.
void process_offsets(Encoding& e, bool add_prefix_space);

}  // namespace glassbox::tok
