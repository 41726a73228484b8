// Added tokens (tokenizer.json "added_tokens"): matched before normalization
// (normalized=false) or on each normalized segment (normalized=true).
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tokenizer/components.h"

namespace glassbox::tok {

struct AddedToken {
  std::string content;
  bool single_word = false, lstrip = false, rstrip = false, normalized = true, special = false;
};

// Byte trie for leftmost-longest matching of many literal patterns.
class LiteralTrie {
 public:
  void add(const std::string& pattern, std::uint32_t value);
  bool empty() const { return terminal_.size() <= 1; }
  // Longest pattern starting at text[pos]: returns length (0 = none) and its value.
  std::size_t longest_at(std::string_view text, std::size_t pos, std::uint32_t& value) const;

 private:
  std::unordered_map<std::uint64_t, std::uint32_t> edges_;
  std::vector<std::int64_t> terminal_{-1};
  bool first_byte_[256] = {};
};

class AddedVocabulary {
 public:
  // Adds tokens in order (HF add_tokens): ids come from the model when the content is in
  // its vocabulary, else the next free id.
  Status add_tokens(const std::vector<AddedToken>& tokens, const Model& model, const Normalizer* normalizer);
  // Splits `text` (absolute original offset `base`) into pieces: added-token pieces are
  // done; the rest are normalized.
  Status extract_and_normalize(std::string_view text, const Normalizer* normalizer, std::vector<Piece>& out) const;

  std::optional<std::uint32_t> token_to_id(std::string_view s) const;
  const std::string* id_to_token(std::uint32_t id) const;            // content
  const std::string* decode_token(std::uint32_t id) const;           // normalized content if any
  bool is_special(std::string_view s) const { return special_.count(std::string(s)) > 0; }
  std::size_t size() const { return by_id_.size(); }

 private:
  void find_matches(const NStr& ns, const LiteralTrie& trie, std::vector<Piece>& out) const;
  std::unordered_map<std::string, std::uint32_t> by_content_;
  std::unordered_map<std::uint32_t, AddedToken> by_id_;
  std::unordered_map<std::uint32_t, std::string> normalized_;
  std::unordered_set<std::string> special_;
  LiteralTrie trie_, norm_trie_;
};

}  // namespace glassbox::tok
