// Per-thread cache of model results per word (pre-token): words repeat, and a cache hit
// replaces the BPE merge loop / WordPiece greedy search by one look-up.
//
// Flat open-addressing table: one 24-byte slot per word (hash, offsets), the word bytes in one
// arena and the tokens in another, so a hit costs ~2 cache misses instead of the bucket ->
// node -> string -> vector pointer chase of std::unordered_map<std::string, std::vector<...>>
// (measured: the look-up was 25 % of byte-level BPE encode time on the corpus).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace glassbox::tok {

class WordCache {
 public:
  struct Tok {
    std::uint32_t id, start, end;  // byte offsets inside the word
  };
  static constexpr std::size_t kMaxWordBytes = 255;
  static constexpr std::size_t kMaxWords = 1 << 18;  // cleared when full (bounded memory per thread)

  static std::uint64_t hash(std::string_view s) { return std::hash<std::string_view>{}(s) | 1; }  // 0 = empty slot

  // Tokens cached for `word` (h = hash(word)), or {nullptr, 0} on a miss.
  std::pair<const Tok*, std::size_t> find(std::string_view word, std::uint64_t h) const {
    if (slots_.empty()) return {nullptr, 0};
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.hash == 0) return {nullptr, 0};
      if (s.hash == h && s.key_len == word.size() && std::memcmp(keys_.data() + s.key_off, word.data(), word.size()) == 0)
        return {toks_.data() + s.tok_off, s.n_toks};
    }
  }

  // Caches `n` tokens for `word` (must not be cached yet); words over kMaxWordBytes are skipped.
  void insert(std::string_view word, std::uint64_t h, const Tok* toks, std::size_t n) {
    if (word.size() > kMaxWordBytes || n > 0xFFFF) return;
    if (count_ >= kMaxWords) clear();
    if (slots_.empty()) slots_.assign(1024, Slot{});
    if ((count_ + 1) * 2 > slots_.size()) grow();
    Slot s{h, static_cast<std::uint32_t>(keys_.size()), static_cast<std::uint32_t>(toks_.size()),
           static_cast<std::uint16_t>(word.size()), static_cast<std::uint16_t>(n)};
    keys_.append(word);
    toks_.insert(toks_.end(), toks, toks + n);
    place(s);
    ++count_;
  }

  void clear() {
    slots_.clear();
    keys_.clear();
    toks_.clear();
    count_ = 0;
  }
  std::size_t size() const { return count_; }

 private:
  struct Slot {
    std::uint64_t hash = 0;
    std::uint32_t key_off = 0, tok_off = 0;
    std::uint16_t key_len = 0, n_toks = 0;
  };
  void place(const Slot& s) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = s.hash & mask;
    while (slots_[i].hash != 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    for (const Slot& s : old)
      if (s.hash != 0) place(s);
  }
  std::vector<Slot> slots_;
  std::string keys_;
  std::vector<Tok> toks_;
  std::size_t count_ = 0;
};

}  // namespace glassbox::tok
