// Models of tokenizer.json ("model" field): BPE, WordPiece, WordLevel, Unigram.
#include <atomic>
#include <cstring>
#include <cstdio>
#include <limits>
#include <queue>

#include "tokenizer/components.h"
#include "tokenizer/word_cache.h"

namespace glassbox::tok {
namespace {

struct SvHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Open-addressing string -> id table (vocabulary look-ups dominate encode and load time).
// A slot holds the entry index and the hash's high half, so a probe touches the key bytes
// (one arena, no std::string per key) only when the tags match.
class Vocab {
 public:
  void reserve(std::size_t n) {
    entries_.reserve(n);
    arena_.reserve(n * 8);
    rehash(n * 2 + 16);
  }
  void set(std::string_view key, std::uint32_t id) {
    if (slots_.empty()) rehash(16);
    std::uint64_t h = SvHash{}(key);
    std::size_t i = find_slot(key, h);
    if (slots_[i].entry) {
      entries_[slots_[i].entry - 1].id = id;  // a later duplicate wins, like a map insert
      return;
    }
    entries_.push_back(Entry{static_cast<std::uint32_t>(arena_.size()), static_cast<std::uint32_t>(key.size()), id});
    arena_.append(key);
    slots_[i] = Slot{static_cast<std::uint32_t>(entries_.size()), tag(h)};
    if (entries_.size() * 2 > slots_.size()) rehash(slots_.size() * 2);
  }
  std::optional<std::uint32_t> get(std::string_view key) const {
    if (slots_.empty()) return std::nullopt;
    std::size_t i = find_slot(key, SvHash{}(key));
    if (!slots_[i].entry) return std::nullopt;
    return entries_[slots_[i].entry - 1].id;
  }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  template <class F>
  void for_each(F fn) const {
    for (const Entry& e : entries_) fn(key_of(e), e.id);
  }

 private:
  struct Entry {
    std::uint32_t off, len, id;
  };
  struct Slot {
    std::uint32_t entry = 0;  // index + 1; 0 = empty
    std::uint32_t tag = 0;
  };
  static std::uint32_t tag(std::uint64_t h) { return static_cast<std::uint32_t>(h >> 32); }
  std::string_view key_of(const Entry& e) const { return std::string_view(arena_).substr(e.off, e.len); }
  std::size_t find_slot(std::string_view key, std::uint64_t h) const {
    const std::size_t mask = slots_.size() - 1;
    const std::uint32_t t = tag(h);
    std::size_t i = h & mask;
    while (slots_[i].entry) {
      if (slots_[i].tag == t) {
        const Entry& e = entries_[slots_[i].entry - 1];
        if (e.len == key.size() && std::memcmp(arena_.data() + e.off, key.data(), key.size()) == 0) return i;
      }
      i = (i + 1) & mask;
    }
    return i;
  }
  void rehash(std::size_t want) {
    std::size_t n = 16;
    while (n < want) n <<= 1;
    if (n <= slots_.size()) return;
    slots_.assign(n, Slot{});
    for (std::size_t e = 0; e < entries_.size(); ++e) {
      std::uint64_t h = SvHash{}(key_of(entries_[e]));
      std::size_t i = h & (n - 1);
      while (slots_[i].entry) i = (i + 1) & (n - 1);
      slots_[i] = Slot{static_cast<std::uint32_t>(e + 1), tag(h)};
    }
  }
  std::vector<Entry> entries_;
  std::string arena_;
  std::vector<Slot> slots_;
};

std::optional<std::uint32_t> lookup(const Vocab& v, std::string_view s) { return v.get(s); }

// Open-addressing (left id, right id) -> (rank, merged id) table: the merge loop looks up
// every adjacent pair, and std::unordered_map's bucket -> node chase cost ~2x per look-up.
class MergeTable {
 public:
  struct Val {
    std::uint32_t rank, id;
  };
  static std::uint64_t key(std::uint32_t a, std::uint32_t b) { return (std::uint64_t(a) << 32) | b; }
  void reserve(std::size_t n) { rehash(n * 2 + 16); }
  void set(std::uint64_t k, Val v) {  // a later duplicate wins, like a map insert
    if (slots_.empty()) rehash(16);
    Slot& s = slots_[find_slot(k)];
    if (s.used) {
      s.val = v;
      return;
    }
    s = Slot{k, v, true};
    if (++count_ * 2 > slots_.size()) rehash(slots_.size() * 2);
  }
  const Val* find(std::uint64_t k) const {
    if (slots_.empty()) return nullptr;
    const Slot& s = slots_[find_slot(k)];
    return s.used ? &s.val : nullptr;
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    Val val{};
    bool used = false;
  };
  static std::size_t mix(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return static_cast<std::size_t>(k);
  }
  std::size_t find_slot(std::uint64_t k) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = mix(k) & mask;
    while (slots_[i].used && slots_[i].key != k) i = (i + 1) & mask;
    return i;
  }
  void rehash(std::size_t want) {
    std::size_t n = 16;
    while (n < want) n <<= 1;
    if (n <= slots_.size()) return;
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(n, Slot{});
    for (const Slot& s : old)
      if (s.used) slots_[find_slot(s.key)] = s;
  }
  std::vector<Slot> slots_;
  std::size_t count_ = 0;
};

// Reads {"token": id, ...} into vocab and the reverse table (from the DOM or the entries
// captured while parsing).
Status load_vocab_map(const JsonCtx& c, Vocab& vocab, std::vector<std::string>& rev,
                      const CapturedModelData* cap = nullptr) {
  if (!c.j.is_object()) return c.err("expected an object {token: id}");
  std::size_t max_id = 0;
  auto add = [&](std::string_view key, const Json& v) -> Status {
    if (!v.is_number_unsigned()) return c.at(std::string(key)).err("expected a non-negative id");
    std::uint64_t id = v.get<std::uint64_t>();
    if (id > 0xFFFFFFF0ull) return c.at(std::string(key)).err("id out of range");
    vocab.set(key, static_cast<std::uint32_t>(id));
    max_id = std::max<std::size_t>(max_id, id);
    return Status();
  };
  if (cap && cap->has_vocab) {
    vocab.reserve(cap->vocab.size());
    for (const auto& e : cap->vocab) GB_RETURN_IF_ERROR(add(cap->str(e.token), e.id));
  } else {
    vocab.reserve(c.j.size());
    for (auto it = c.j.begin(); it != c.j.end(); ++it) GB_RETURN_IF_ERROR(add(it.key(), it.value()));
  }
  rev.assign(vocab.empty() ? 0 : max_id + 1, std::string());
  vocab.for_each([&](std::string_view k, std::uint32_t v) { rev[v] = std::string(k); });
  return Status();
}

std::atomic<std::uint64_t> g_model_generation{1};

// ---------------- BPE ----------------
class BpeModel : public Model {
 public:
  Vocab vocab;
  std::vector<std::string> rev;
  MergeTable merges;  // (a,b) -> (rank, new id)
  std::optional<std::string> unk_token, prefix, suffix;
  bool fuse_unk = false, byte_fallback = false, ignore_merges = false;
  std::uint64_t generation = g_model_generation.fetch_add(1);
  std::uint32_t byte_ids[256];
  bool byte_ok[256];

  static std::uint64_t key(std::uint32_t a, std::uint32_t b) { return MergeTable::key(a, b); }

  struct Sym {
    std::uint32_t id;
    std::uint32_t start, len;
    std::int32_t prev, next;
  };
  struct Word {
    std::vector<std::uint32_t> ids;
    std::vector<std::uint32_t> lens;
  };

  // Ids of the one-character tokens below U+0800 (every byte-level symbol), kNoId if absent:
  // the merge loop's initial symbols without a string hash each.
  static constexpr std::uint32_t kCharIds = 0x800, kNoId = 0xFFFFFFFFu;
  std::vector<std::uint32_t> char_ids;
  void build_char_ids() {
    char_ids.assign(kCharIds, kNoId);
    std::string one;
    for (char32_t c = 0; c < kCharIds; ++c) {
      one.clear();
      utf8_append(one, c);
      if (auto id = lookup(vocab, one)) char_ids[c] = *id;
    }
  }

  Status merge_word(std::string_view w, Word& out) const {
    thread_local std::vector<Sym> syms;
    syms.clear();
    syms.reserve(w.size());
    bool has_unk = false;
    std::uint32_t unk_id_ = 0, unk_len = 0;
    std::uint32_t pos = 0;
    auto add = [&](std::uint32_t id, std::uint32_t len) {
      std::int32_t n = static_cast<std::int32_t>(syms.size());
      syms.push_back(Sym{id, pos, len, n - 1, n + 1});
      pos += len;
    };
    std::string s;
    for (std::size_t i = 0; i < w.size();) {
      int blen = utf8_len_lead(static_cast<unsigned char>(w[i]));
      std::size_t end = i + blen;
      bool first = i == 0, last = end >= w.size();
      std::string_view piece = w.substr(i, blen);
      std::optional<std::uint32_t> id;
      if ((!first && prefix) || (last && suffix)) {
        s.clear();
        if (!first && prefix) s += *prefix;
        s.append(piece);
        if (last && suffix) s += *suffix;
        id = lookup(vocab, s);
      } else {
        char32_t cp = 0;
        if (blen <= 2) {
          int l;
          cp = utf8_decode(w, i, l);
        }
        if (blen <= 2 && cp < kCharIds && char_ids[cp] != kNoId) {
          id = char_ids[cp];
        } else {
          s.assign(piece);
          id = lookup(vocab, piece);
        }
      }
      if (id) {
        if (has_unk) {
          add(unk_id_, unk_len);
          has_unk = false;
        }
        add(*id, static_cast<std::uint32_t>(blen));
      } else {
        bool done = false;
        if (byte_fallback) {
          bool all = true;
          for (unsigned char b : s) all &= byte_ok[b];
          if (all) {
            for (unsigned char b : s) add(byte_ids[b], 1);
            done = true;
          }
        }
        if (!done && unk_token) {
          auto uid = lookup(vocab, *unk_token);
          if (!uid)
            return make_error(ErrorCode::kInvalidModel, "BPE unk_token \"" + *unk_token + "\" is not in the vocabulary",
                              "tokenizer.json: model.unk_token");
          if (has_unk && fuse_unk) unk_len += static_cast<std::uint32_t>(blen);
          else {
            if (has_unk) add(unk_id_, unk_len);
            has_unk = true;
            unk_id_ = *uid;
            unk_len = static_cast<std::uint32_t>(blen);
          }
        }
      }
      i = end;
    }
    if (has_unk) add(unk_id_, unk_len);
    if (!syms.empty()) syms.back().next = static_cast<std::int32_t>(syms.size());
    // merge loop: lowest rank first, leftmost on ties
    struct M {
      std::uint32_t rank;
      std::uint32_t pos;
      std::uint32_t new_id;
      bool operator<(const M& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    std::priority_queue<M> q;
    const std::int32_t n = static_cast<std::int32_t>(syms.size());
    for (std::int32_t i = 0; i + 1 < n; ++i) {
      if (const auto* m = merges.find(key(syms[i].id, syms[i + 1].id)))
        q.push(M{m->rank, static_cast<std::uint32_t>(i), m->id});
    }
    while (!q.empty()) {
      M top = q.top();
      q.pop();
      Sym& cur = syms[top.pos];
      if (cur.len == 0 || cur.next == -1 || cur.next >= n) continue;
      std::int32_t next_pos = cur.next;
      Sym right = syms[next_pos];
      const auto* m = merges.find(key(cur.id, right.id));
      if (m == nullptr || m->id != top.new_id) continue;
      cur.id = top.new_id;
      cur.len += right.len;
      cur.next = right.next;
      syms[next_pos].len = 0;
      if (right.next > -1 && right.next < n) syms[right.next].prev = static_cast<std::int32_t>(top.pos);
      if (cur.prev >= 0) {
        if (const auto* m2 = merges.find(key(syms[cur.prev].id, cur.id)))
          q.push(M{m2->rank, static_cast<std::uint32_t>(cur.prev), m2->id});
      }
      if (cur.next < n) {
        if (const auto* m3 = merges.find(key(cur.id, syms[cur.next].id))) q.push(M{m3->rank, top.pos, m3->id});
      }
    }
    out.ids.clear();
    out.lens.clear();
    for (auto& sy : syms)
      if (sy.len > 0) {
        out.ids.push_back(sy.id);
        out.lens.push_back(sy.len);
      }
    return Status();
  }

  struct Cache {
    std::uint64_t generation = 0;
    WordCache words;
  };

  Status tokenize(std::string_view text, std::vector<Token>& out) const override {
    if (text.empty()) return Status();
    thread_local Cache cache;
    if (cache.generation != generation) {
      cache.words.clear();
      cache.generation = generation;
    }
    const std::uint64_t h = WordCache::hash(text);
    auto [hit, n] = cache.words.find(text, h);  // ignore_merges results are cached too
    if (!hit) {
      thread_local Word local;
      thread_local std::vector<WordCache::Tok> toks;
      std::optional<std::uint32_t> whole;
      if (ignore_merges) whole = lookup(vocab, text);
      if (whole) {
        local.ids.assign(1, *whole);
        local.lens.assign(1, static_cast<std::uint32_t>(text.size()));
      } else {
        GB_RETURN_IF_ERROR(merge_word(text, local));
      }
      toks.clear();
      std::uint32_t pos = 0;
      for (std::size_t i = 0; i < local.ids.size(); ++i) {
        toks.push_back({local.ids[i], pos, pos + local.lens[i]});
        pos += local.lens[i];
      }
      cache.words.insert(text, h, toks.data(), toks.size());
      hit = toks.data();
      n = toks.size();
    }
    out.reserve(out.size() + n);
    for (std::size_t i = 0; i < n; ++i) out.push_back(Token{hit[i].id, rev[hit[i].id], hit[i].start, hit[i].end});
    return Status();
  }
  std::optional<std::uint32_t> token_to_id(std::string_view t) const override { return lookup(vocab, t); }
  const std::string* id_to_token(std::uint32_t id) const override {
    return id < rev.size() && lookup(vocab, rev[id]) == id ? &rev[id] : nullptr;
  }
  std::size_t vocab_size() const override { return vocab.size(); }
  std::optional<std::uint32_t> unknown_id() const override { return unk_token ? lookup(vocab, *unk_token) : std::nullopt; }
};

// ---------------- WordPiece ----------------
// A vocabulary with one unknown token (WordPiece, WordLevel): the id/token lookups both share.
class VocabModel : public Model {
 public:
  Vocab vocab;
  std::vector<std::string> rev;
  std::string unk_token;
  explicit VocabModel(std::string unk) : unk_token(std::move(unk)) {}
  std::optional<std::uint32_t> token_to_id(std::string_view t) const override { return lookup(vocab, t); }
  const std::string* id_to_token(std::uint32_t id) const override {
    return id < rev.size() && lookup(vocab, rev[id]) == id ? &rev[id] : nullptr;
  }
  std::size_t vocab_size() const override { return vocab.size(); }
  std::optional<std::uint32_t> unknown_id() const override { return lookup(vocab, unk_token); }
};

class WordPieceModel : public VocabModel {
 public:
  WordPieceModel() : VocabModel("[UNK]") {}
  std::string prefix = "##";
  std::size_t max_chars = 100;
  std::size_t max_token_bytes = 0;

  std::uint64_t generation = g_model_generation.fetch_add(1);
  struct Cache {
    std::uint64_t generation = 0;
    WordCache words;
  };

  // Words repeat: results are cached per thread (the greedy search is many hash look-ups).
  Status tokenize(std::string_view text, std::vector<Token>& out) const override {
    thread_local Cache cache;
    if (cache.generation != generation) {
      cache.words.clear();
      cache.generation = generation;
    }
    const std::uint64_t h = WordCache::hash(text);
    auto [hit, n] = cache.words.find(text, h);
    if (hit) {
      out.reserve(out.size() + n);
      for (std::size_t i = 0; i < n; ++i)
        out.push_back(Token{hit[i].id, hit[i].id < rev.size() && !rev[hit[i].id].empty() ? rev[hit[i].id] : unk_token,
                            hit[i].start, hit[i].end});
      return Status();
    }
    std::size_t mark = out.size();
    GB_RETURN_IF_ERROR(tokenize_uncached(text, out));
    thread_local std::vector<WordCache::Tok> toks;
    toks.clear();
    for (std::size_t i = mark; i < out.size(); ++i) toks.push_back({out[i].id, out[i].start, out[i].end});
    cache.words.insert(text, h, toks.data(), toks.size());
    return Status();
  }

  Status tokenize_uncached(std::string_view text, std::vector<Token>& out) const {
    auto unk = [&]() -> Status {
      auto id = lookup(vocab, unk_token);
      if (!id)
        return make_error(ErrorCode::kInvalidModel, "WordPiece unk_token \"" + unk_token + "\" is not in the vocabulary",
                          "tokenizer.json: model.unk_token");
      out.push_back(Token{*id, unk_token, 0, static_cast<std::uint32_t>(text.size())});
      return Status();
    };
    if (utf8_count(text) > max_chars) return unk();
    std::size_t mark = out.size();
    std::size_t start = 0;
    std::string buf;
    while (start < text.size()) {
      std::size_t end = text.size();
      std::size_t pre = start > 0 ? prefix.size() : 0;
      if (end - start + pre > max_token_bytes) {
        end = start + (max_token_bytes > pre ? max_token_bytes - pre : 0);
        while (end > start && end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
      }
      bool found = false;
      while (start < end) {
        std::string_view sub = text.substr(start, end - start);
        std::optional<std::uint32_t> id;
        if (start > 0) {
          buf.assign(prefix);
          buf.append(sub);
          id = lookup(vocab, buf);
        } else {
          id = lookup(vocab, sub);
        }
        if (id) {
          out.push_back(Token{*id, rev[*id], static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(end)});
          found = true;
          break;
        }
        --end;
        while (end > start && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
      }
      if (!found) {
        out.resize(mark);
        return unk();
      }
      start = end;
    }
    return Status();
  }
};

// ---------------- WordLevel ----------------
class WordLevelModel : public VocabModel {
 public:
  WordLevelModel() : VocabModel("<unk>") {}
  Status tokenize(std::string_view text, std::vector<Token>& out) const override {
    auto id = lookup(vocab, text);
    if (id) {
      out.push_back(Token{*id, rev[*id], 0, static_cast<std::uint32_t>(text.size())});
      return Status();
    }
    auto uid = lookup(vocab, unk_token);
    if (!uid)
      return make_error(ErrorCode::kInvalidArgument,
                        "WordLevel: \"" + std::string(text.substr(0, 40)) + "\" is not in the vocabulary and unk_token \"" +
                            unk_token + "\" is missing too",
                        "tokenizer.json: model");
    out.push_back(Token{*uid, unk_token, 0, static_cast<std::uint32_t>(text.size())});
    return Status();
  }
};

// ---------------- Unigram ----------------
class UnigramModel : public Model {
 public:
  std::vector<std::pair<std::string, double>> pieces;
  Vocab ids;
  std::optional<std::uint32_t> unk_id;
  bool byte_fallback = false;
  double min_score = std::numeric_limits<double>::infinity();
  // byte trie: (node << 8 | byte) -> child; terminal[node] = piece id + 1
  std::unordered_map<std::uint64_t, std::uint32_t> edges;
  std::vector<std::uint32_t> terminal{0};

  void build_trie() {
    for (std::uint32_t i = 0; i < pieces.size(); ++i) {
      std::uint32_t node = 0;
      for (unsigned char b : pieces[i].first) {
        std::uint64_t k = (std::uint64_t(node) << 8) | b;
        auto it = edges.find(k);
        if (it == edges.end()) {
          std::uint32_t nn = static_cast<std::uint32_t>(terminal.size());
          terminal.push_back(0);
          edges.emplace(k, nn);
          node = nn;
        } else {
          node = it->second;
        }
      }
      if (terminal[node] == 0) terminal[node] = i + 1;
    }
  }

  Status tokenize(std::string_view s, std::vector<Token>& out) const override {
    if (s.empty()) return Status();
    const double unk_score = min_score - 10.0;
    struct Node {
      std::uint32_t id = 0;
      double score = 0;
      std::int64_t starts_at = -1;
    };
    std::vector<Node> best(s.size() + 1);
    for (std::size_t st = 0; st < s.size();) {
      double base = best[st].score;
      bool single = false;
      std::size_t mblen = utf8_len_lead(static_cast<unsigned char>(s[st]));
      std::uint32_t node = 0;
      for (std::size_t k = st; k < s.size(); ++k) {
        auto it = edges.find((std::uint64_t(node) << 8) | static_cast<unsigned char>(s[k]));
        if (it == edges.end()) break;
        node = it->second;
        if (terminal[node]) {
          std::uint32_t tid = terminal[node] - 1;
          // id = token_to_ids[token] (the last duplicate wins in HF's map)
          std::uint32_t id = *ids.get(pieces[tid].first);
          double cand = pieces[id].second + base;
          Node& t = best[k + 1];
          if (t.starts_at < 0 || cand > t.score) {
            t.score = cand;
            t.starts_at = static_cast<std::int64_t>(st);
            t.id = id;
          }
          if (!single && k + 1 - st == mblen) single = true;
        }
      }
      if (!single) {
        Node& t = best[st + mblen];
        double cand = unk_score + base;
        if (t.starts_at < 0 || cand > t.score) {
          t.score = cand;
          t.starts_at = static_cast<std::int64_t>(st);
          t.id = unk_id.value_or(0);
        }
      }
      st += mblen;
    }
    std::vector<std::pair<std::size_t, std::size_t>> res;  // ranges, reversed
    std::size_t ends = s.size();
    std::optional<std::pair<std::size_t, std::size_t>> fused;
    while (ends > 0) {
      const Node& nd = best[ends];
      std::size_t st = static_cast<std::size_t>(nd.starts_at);
      if (unk_id && nd.id == *unk_id) {
        fused = fused ? std::make_pair(st, fused->second) : std::make_pair(st, ends);
      } else {
        if (fused) {
          res.push_back(*fused);
          fused.reset();
        }
        res.emplace_back(st, ends);
      }
      ends = st;
    }
    if (fused) res.push_back(*fused);
    for (auto it = res.rbegin(); it != res.rend(); ++it) {
      std::string_view piece = s.substr(it->first, it->second - it->first);
      std::uint32_t a = static_cast<std::uint32_t>(it->first), b = static_cast<std::uint32_t>(it->second);
      auto id = lookup(ids, piece);
      if (id) {
        out.push_back(Token{*id, std::string(piece), a, b});
        continue;
      }
      if (byte_fallback) {
        std::vector<Token> bt;
        bool all = true;
        for (unsigned char c : piece) {
          char name[8];
          std::snprintf(name, sizeof(name), "<0x%02X>", c);
          auto bid = lookup(ids, name);
          if (!bid) { all = false; break; }
          bt.push_back(Token{*bid, name, a, b});
        }
        if (all) {
          out.insert(out.end(), bt.begin(), bt.end());
          continue;
        }
      }
      if (!unk_id)
        return make_error(ErrorCode::kInvalidModel, "Unigram: no unk_id and a piece is not in the vocabulary",
                          "tokenizer.json: model.unk_id");
      out.push_back(Token{*unk_id, std::string(piece), a, b});
    }
    return Status();
  }
  std::optional<std::uint32_t> token_to_id(std::string_view t) const override { return lookup(ids, t); }
  const std::string* id_to_token(std::uint32_t id) const override {
    return id < pieces.size() ? &pieces[id].first : nullptr;
  }
  std::size_t vocab_size() const override { return pieces.size(); }
  std::optional<std::uint32_t> unknown_id() const override { return unk_id; }
};

Result<std::optional<std::string>> opt_string(const JsonCtx& c, const std::string& key) {
  if (c.at(key).j.is_null()) return std::optional<std::string>();
  GB_ASSIGN_OR_RETURN(std::string s, get_string(c, key, std::nullopt));
  return std::optional<std::string>(s);
}

Result<std::unique_ptr<Model>> load_bpe(const JsonCtx& c, const CapturedModelData* cap) {
  GB_RETURN_IF_ERROR(check_fields(c, {"dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix",
                                      "fuse_unk", "byte_fallback", "ignore_merges", "vocab", "merges"}));
  auto m = std::make_unique<BpeModel>();
  JsonCtx d = c.at("dropout");
  if (!d.j.is_null()) {
    if (!d.j.is_number()) return d.err("expected a number or null");
    double p = d.j.get<double>();
    if (p != 0.0)
      return d.err("dropout " + d.j.dump() +
                   " is refused: BPE dropout is random, glassbox only encodes deterministically (set it to null)");
  }
  GB_ASSIGN_OR_RETURN(m->unk_token, opt_string(c, "unk_token"));
  GB_ASSIGN_OR_RETURN(m->prefix, opt_string(c, "continuing_subword_prefix"));
  GB_ASSIGN_OR_RETURN(m->suffix, opt_string(c, "end_of_word_suffix"));
  GB_ASSIGN_OR_RETURN(m->fuse_unk, get_bool(c, "fuse_unk", false));
  GB_ASSIGN_OR_RETURN(m->byte_fallback, get_bool(c, "byte_fallback", false));
  GB_ASSIGN_OR_RETURN(m->ignore_merges, get_bool(c, "ignore_merges", false));
  GB_RETURN_IF_ERROR(load_vocab_map(c.at("vocab"), m->vocab, m->rev, cap));
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    auto id = lookup(m->vocab, name);
    m->byte_ok[b] = id.has_value();
    m->byte_ids[b] = id.value_or(0);
  }
  m->build_char_ids();
  JsonCtx mc = c.at("merges");
  if (!mc.j.is_array()) return mc.err("expected an array");
  const bool from_cap = cap && cap->has_merges;
  const std::size_t n_merges = from_cap ? cap->merges.size() : mc.j.size();
  auto merge_err = [&](std::size_t i, const std::string& what) {
    return make_error(ErrorCode::kInvalidModel, mc.path + "[" + std::to_string(i) + "]: " + what, "tokenizer.json",
                      "fix the tokenizer.json");
  };
  m->merges.reserve(n_merges);
  std::string merged;
  std::size_t plen = m->prefix ? m->prefix->size() : 0;
  using Form = CapturedModelData::MergeForm;
  for (std::size_t i = 0; i < n_merges; ++i) {
    // Each entry as (form, first string, second string), from the capture or the DOM.
    Form form = Form::kOther;
    std::string_view a, b;
    if (from_cap) {
      const CapturedModelData::MergeEntry& ce = cap->merges[i];
      form = ce.form;
      a = cap->str(ce.a);
      b = cap->str(ce.b);
    } else {
      const Json& e = mc.j[i];
      if (e.is_string()) {
        form = Form::kString;
        a = e.get_ref<const std::string&>();
      } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
        form = Form::kPair;
        a = e[0].get_ref<const std::string&>();
        b = e[1].get_ref<const std::string&>();
      }
    }
    if (form == Form::kString) {
      std::string_view s = a;
      std::size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        return merge_err(i, "expected \"a b\", got \"" + std::string(s) + "\"");
      a = s.substr(0, sp);
      b = s.substr(sp + 1);
    } else if (form == Form::kOther) {
      return merge_err(i, "expected [\"a\", \"b\"] or \"a b\"");
    }
    auto ia = lookup(m->vocab, a), ib = lookup(m->vocab, b);
    if (!ia) return merge_err(i, "merge token \"" + std::string(a) + "\" is not in the vocabulary");
    if (!ib) return merge_err(i, "merge token \"" + std::string(b) + "\" is not in the vocabulary");
    if (b.size() < plen)
      return merge_err(i, "merge token \"" + std::string(b) + "\" is shorter than continuing_subword_prefix");
    merged.assign(a);
    merged.append(b.substr(plen));
    auto in = lookup(m->vocab, merged);
    if (!in) return merge_err(i, "merged token \"" + merged + "\" is not in the vocabulary");
    m->merges.set(BpeModel::key(*ia, *ib), {static_cast<std::uint32_t>(i), *in});
  }
  return std::unique_ptr<Model>(std::move(m));
}

}  // namespace

Result<std::unique_ptr<Model>> load_model(const JsonCtx& c, const CapturedModelData* cap) {
  if (!c.j.is_object()) return c.err("expected an object");
  std::string type;
  if (c.j.contains("type")) {
    GB_ASSIGN_OR_RETURN(type, get_string(c, "type", std::nullopt));
  } else if (c.j.contains("merges")) {
    type = "BPE";
  } else if (c.j.contains("continuing_subword_prefix") || c.j.contains("max_input_chars_per_word")) {
    type = "WordPiece";
  } else {
    return c.err("missing \"type\"");
  }
  if (type == "BPE") return load_bpe(c, cap);
  if (type == "WordPiece") {
    GB_RETURN_IF_ERROR(check_fields(c, {"unk_token", "continuing_subword_prefix", "max_input_chars_per_word", "vocab"}));
    auto m = std::make_unique<WordPieceModel>();
    GB_ASSIGN_OR_RETURN(m->unk_token, get_string(c, "unk_token", std::string("[UNK]")));
    GB_ASSIGN_OR_RETURN(m->prefix, get_string(c, "continuing_subword_prefix", std::string("##")));
    GB_ASSIGN_OR_RETURN(std::int64_t mc, get_int(c, "max_input_chars_per_word", 100));
    if (mc < 0) return c.at("max_input_chars_per_word").err("must be >= 0");
    m->max_chars = static_cast<std::size_t>(mc);
    GB_RETURN_IF_ERROR(load_vocab_map(c.at("vocab"), m->vocab, m->rev, cap));
    m->vocab.for_each([&](std::string_view k, std::uint32_t) { m->max_token_bytes = std::max(m->max_token_bytes, k.size()); });
    return std::unique_ptr<Model>(std::move(m));
  }
  if (type == "WordLevel") {
    GB_RETURN_IF_ERROR(check_fields(c, {"unk_token", "vocab"}));
    auto m = std::make_unique<WordLevelModel>();
    GB_ASSIGN_OR_RETURN(m->unk_token, get_string(c, "unk_token", std::string("<unk>")));
    GB_RETURN_IF_ERROR(load_vocab_map(c.at("vocab"), m->vocab, m->rev, cap));
    return std::unique_ptr<Model>(std::move(m));
  }
  if (type == "Unigram") {
    GB_RETURN_IF_ERROR(check_fields(c, {"unk_id", "vocab", "byte_fallback"}));
    auto m = std::make_unique<UnigramModel>();
    GB_ASSIGN_OR_RETURN(m->byte_fallback, get_bool(c, "byte_fallback", false));
    JsonCtx v = c.at("vocab");
    if (!v.j.is_array()) return v.err("expected an array of [piece, score]");
    for (std::size_t i = 0; i < v.j.size(); ++i) {
      const Json& e = v.j[i];
      if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number())
        return v.at(i).err("expected [piece, score]");
      m->pieces.emplace_back(e[0].get<std::string>(), e[1].get<double>());
      m->ids.set(m->pieces.back().first, static_cast<std::uint32_t>(i));
      m->min_score = std::min(m->min_score, m->pieces.back().second);
    }
    if (!c.at("unk_id").j.is_null()) {
      GB_ASSIGN_OR_RETURN(std::int64_t u, get_int(c, "unk_id", std::nullopt));
      if (u < 0 || static_cast<std::size_t>(u) >= m->pieces.size())
        return c.at("unk_id").err("out of range: " + std::to_string(u));
      m->unk_id = static_cast<std::uint32_t>(u);
    }
    m->build_trie();
    return std::unique_ptr<Model>(std::move(m));
  }
  return c.at("type").err("unknown \"" + type + "\"");
}

}  // namespace glassbox::tok
