#include "tokenizer/added_vocab.h"

#include <algorithm>
#include <map>

namespace glassbox::tok {

void LiteralTrie::add(const std::string& pattern, std::uint32_t value) {
  if (pattern.empty()) return;
  std::uint32_t node = 0;
  for (unsigned char b : pattern) {
    std::uint64_t k = (std::uint64_t(node) << 8) | b;
    auto it = edges_.find(k);
    if (it == edges_.end()) {
      std::uint32_t nn = static_cast<std::uint32_t>(terminal_.size());
      terminal_.push_back(-1);
      edges_.emplace(k, nn);
      node = nn;
    } else {
      node = it->second;
    }
  }
  first_byte_[static_cast<unsigned char>(pattern[0])] = true;
  terminal_[node] = value;  // a later identical pattern wins, like a map insert
}

std::size_t LiteralTrie::longest_at(std::string_view text, std::size_t pos, std::uint32_t& value) const {
  if (!first_byte_[static_cast<unsigned char>(text[pos])]) return 0;
  std::uint32_t node = 0;
  std::size_t best = 0;
  for (std::size_t k = pos; k < text.size(); ++k) {
    auto it = edges_.find((std::uint64_t(node) << 8) | static_cast<unsigned char>(text[k]));
    if (it == edges_.end()) break;
    node = it->second;
    if (terminal_[node] >= 0) {
      best = k + 1 - pos;
      value = static_cast<std::uint32_t>(terminal_[node]);
    }
  }
  return best;
}

Status AddedVocabulary::add_tokens(const std::vector<AddedToken>& tokens, const Model& model,
                                   const Normalizer* normalizer) {
  std::uint32_t vs = static_cast<std::uint32_t>(model.vocab_size());
  std::uint32_t next_id = vs;
  if (!by_id_.empty()) {
    std::uint32_t mx = 0;
    for (auto& [id, t] : by_id_) mx = std::max(mx, id);
    next_id = (mx >= vs || vs == 0) ? mx + 1 : vs;
  }
  for (const AddedToken& t : tokens) {
    if (t.content.empty()) continue;
    std::uint32_t id;
    if (auto e = token_to_id(t.content)) id = *e;
    else if (auto m = model.token_to_id(t.content)) id = *m;
    else id = next_id++;
    if (t.normalized && normalizer) {
      NStr ns = NStr::from_original(t.content, 0);
      GB_RETURN_IF_ERROR(normalizer->normalize(ns));
      if (ns.norm != t.content) normalized_[id] = ns.norm;
    }
    by_content_[t.content] = id;
    if (t.special) special_.insert(t.content);
    by_id_[id] = t;
  }
  // rebuild tries (HF iterates its id map; on identical patterns we let the larger id win)
  trie_ = LiteralTrie();
  norm_trie_ = LiteralTrie();
  std::map<std::uint32_t, const AddedToken*> ordered;
  for (auto& [id, t] : by_id_) ordered[id] = &t;
  for (auto& [id, t] : ordered) {
    if (t->normalized) {
      auto it = normalized_.find(id);
      norm_trie_.add(it != normalized_.end() ? it->second : t->content, id);
    } else {
      trie_.add(t->content, id);
    }
  }
  return Status();
}

std::optional<std::uint32_t> AddedVocabulary::token_to_id(std::string_view s) const {
  auto it = by_content_.find(std::string(s));
  if (it == by_content_.end()) return std::nullopt;
  return it->second;
}
const std::string* AddedVocabulary::id_to_token(std::uint32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &it->second.content;
}
const std::string* AddedVocabulary::decode_token(std::uint32_t id) const {
  auto n = normalized_.find(id);
  if (n != normalized_.end()) return &n->second;
  return id_to_token(id);
}

namespace {
bool ends_with_word(std::string_view s) {
  if (s.empty()) return false;
  std::size_t i = s.size() - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  int len;
  return is_word_char(utf8_decode(s, i, len));
}
bool starts_with_word(std::string_view s) {
  if (s.empty()) return false;
  int len;
  return is_word_char(utf8_decode(s, 0, len));
}
}  // namespace

void AddedVocabulary::find_matches(const NStr& ns, const LiteralTrie& trie, std::vector<Piece>& out) const {
  const std::string& s = ns.norm;
  if (s.empty()) return;
  if (trie.empty()) {
    out.push_back(Piece{ns, false, {}});
    return;
  }
  std::size_t start_offset = 0;
  auto emit = [&](std::size_t a, std::size_t b, std::optional<std::uint32_t> id) {
    if (a >= b) return;
    Piece p{ns.slice(a, b), false, {}};
    if (id) {
      p.done = true;
      p.tokens.push_back(Token{*id, p.ns.norm, 0, static_cast<std::uint32_t>(b - a)});
    }
    out.push_back(std::move(p));
  };
  std::size_t pos = 0;
  while (pos < s.size()) {
    std::uint32_t id = 0;
    std::size_t len = trie.longest_at(s, pos, id);
    if (len == 0) {
      ++pos;
      continue;
    }
    std::size_t start = pos, stop = pos + len;
    pos = stop;  // non-overlapping: search resumes after this match
    const AddedToken& t = by_id_.at(id);
    if (t.single_word) {
      bool start_space = start == 0 || !ends_with_word(std::string_view(s).substr(0, start));
      bool stop_space = stop == s.size() || !starts_with_word(std::string_view(s).substr(stop));
      if (!start_space || !stop_space) continue;
    }
    if (t.lstrip) {
      std::size_t ns_ = start;
      while (ns_ > 0) {
        std::size_t k = ns_ - 1;
        while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
        int l;
        if (!is_whitespace(utf8_decode(s, k, l))) break;
        ns_ = k;
      }
      start = std::max(ns_, start_offset);
    }
    if (t.rstrip) {
      while (stop < s.size()) {
        int l;
        if (!is_whitespace(utf8_decode(s, stop, l))) break;
        stop += l;
      }
    }
    if (start_offset < start) emit(start_offset, start, std::nullopt);
    emit(start, stop, id);
    start_offset = stop;
  }
  if (start_offset < s.size()) emit(start_offset, s.size(), std::nullopt);
}

Status AddedVocabulary::extract_and_normalize(std::string_view text, const Normalizer* normalizer,
                                              std::vector<Piece>& out) const {
  NStr whole = NStr::from_original(text, 0);
  std::vector<Piece> first;
  find_matches(whole, trie_, first);
  for (Piece& p : first) {
    if (p.done) {
      out.push_back(std::move(p));
      continue;
    }
    if (normalizer) GB_RETURN_IF_ERROR(normalizer->normalize(p.ns));
    find_matches(p.ns, norm_trie_, out);
  }
  return Status();
}

}  // namespace glassbox::tok
