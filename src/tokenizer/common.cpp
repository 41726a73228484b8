// Shared pieces of the components: JSON access with paths, patterns, splitting, byte map.
#include <algorithm>
#include <array>

#include "tokenizer/components.h"

namespace glassbox::tok {

namespace {
thread_local bool t_fast_paths = true;
}  // namespace
bool fast_paths_enabled() { return t_fast_paths; }
FastPathScope::FastPathScope(bool on) : saved_(t_fast_paths) { t_fast_paths = on; }
FastPathScope::~FastPathScope() { t_fast_paths = saved_; }


JsonCtx JsonCtx::at(const std::string& key) const {
  static const Json kNull;
  auto it = j.find(key);
  return JsonCtx{it == j.end() ? kNull : *it, path.empty() ? key : path + "." + key};
}
JsonCtx JsonCtx::at(std::size_t i) const { return JsonCtx{j.at(i), path + "[" + std::to_string(i) + "]"}; }
Error JsonCtx::err(const std::string& what) const {
  return make_error(ErrorCode::kInvalidModel, path + ": " + what, "tokenizer.json",
                    "fix the tokenizer.json or report the unsupported component");
}

static std::string dump_short(const Json& j) {
  std::string s = j.dump();
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

Result<bool> get_bool(const JsonCtx& c, const std::string& key, std::optional<bool> dflt) {
  JsonCtx v = c.at(key);
  if (v.j.is_null()) {
    if (dflt) return *dflt;
    return v.err("missing boolean");
  }
  if (!v.j.is_boolean()) return v.err("expected a boolean, got " + dump_short(v.j));
  return v.j.get<bool>();
}
Result<std::string> get_string(const JsonCtx& c, const std::string& key, std::optional<std::string> dflt) {
  JsonCtx v = c.at(key);
  if (v.j.is_null()) {
    if (dflt) return *dflt;
    return v.err("missing string");
  }
  if (!v.j.is_string()) return v.err("expected a string, got " + dump_short(v.j));
  return v.j.get<std::string>();
}
Result<std::int64_t> get_int(const JsonCtx& c, const std::string& key, std::optional<std::int64_t> dflt) {
  JsonCtx v = c.at(key);
  if (v.j.is_null()) {
    if (dflt) return *dflt;
    return v.err("missing integer");
  }
  if (!v.j.is_number_integer()) return v.err("expected an integer, got " + dump_short(v.j));
  return v.j.get<std::int64_t>();
}

Result<SplitBehavior> parse_behavior(const JsonCtx& c) {
  if (!c.j.is_string()) return c.err("expected a split behavior string, got " + dump_short(c.j));
  std::string s = c.j.get<std::string>();
  if (s == "Removed") return SplitBehavior::kRemoved;
  if (s == "Isolated") return SplitBehavior::kIsolated;
  if (s == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (s == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (s == "Contiguous") return SplitBehavior::kContiguous;
  return c.err("unknown \"" + s + "\"");
}

Result<PatternSpec> get_pattern(const JsonCtx& c) {
  if (!c.j.is_object()) return c.err("expected {\"String\": ...} or {\"Regex\": ...}, got " + dump_short(c.j));
  PatternSpec p;
  if (c.j.contains("String")) {
    GB_ASSIGN_OR_RETURN(p.text, get_string(c, "String", std::nullopt));
  } else if (c.j.contains("Regex")) {
    GB_ASSIGN_OR_RETURN(p.text, get_string(c, "Regex", std::nullopt));
    p.is_regex = true;
    auto r = Regex::compile(p.text);
    if (!r.ok()) return c.at("Regex").err(r.error().what + " in \"" + p.text + "\"");
    p.regex = std::move(r).value();
  } else {
    return c.err("unknown pattern " + dump_short(c.j));
  }
  return p;
}

Status find_pattern(const PatternSpec& p, std::string_view text, std::vector<Match>& out) {
  out.clear();
  if (text.empty()) {
    out.push_back({0, 0, false});
    return Status();
  }
  std::size_t prev = 0;
  if (p.is_regex) {
    thread_local std::vector<std::pair<std::size_t, std::size_t>> ms;
    ms.clear();
    GB_RETURN_IF_ERROR(p.regex->find_all(text, ms));
    for (auto [s, e] : ms) {
      if (prev != s) out.push_back({prev, s, false});
      out.push_back({s, e, true});
      prev = e;
    }
  } else if (!p.text.empty()) {
    std::size_t pos = 0;
    while ((pos = text.find(p.text, pos)) != std::string_view::npos) {
      if (prev != pos) out.push_back({prev, pos, false});
      out.push_back({pos, pos + p.text.size(), true});
      pos += p.text.size();
      prev = pos;
    }
  }
  if (prev != text.size()) out.push_back({prev, text.size(), false});
  return Status();
}

void split_by_matches(const NStr& ns, std::vector<Match>& m, SplitBehavior b, std::vector<NStr>& out) {
  // (s, e, remove)
  std::vector<Match> sp;
  sp.reserve(m.size());
  switch (b) {
    case SplitBehavior::kIsolated:
      for (auto& x : m) sp.push_back({x.s, x.e, false});
      break;
    case SplitBehavior::kRemoved:
      sp = m;
      break;
    case SplitBehavior::kContiguous: {
      bool prev = false;
      for (auto& x : m) {
        if (x.is_match == prev && !sp.empty()) sp.back().e = x.e;
        else sp.push_back({x.s, x.e, false});
        prev = x.is_match;
      }
      break;
    }
    case SplitBehavior::kMergedWithPrevious: {
      bool prev = false;
      for (auto& x : m) {
        if (x.is_match && !prev && !sp.empty()) sp.back().e = x.e;
        else sp.push_back({x.s, x.e, false});
        prev = x.is_match;
      }
      break;
    }
    case SplitBehavior::kMergedWithNext: {
      bool prev = false;
      for (auto it = m.rbegin(); it != m.rend(); ++it) {
        if (it->is_match && !prev && !sp.empty()) sp.back().s = it->s;
        else sp.push_back({it->s, it->e, false});
        prev = it->is_match;
      }
      std::reverse(sp.begin(), sp.end());
      break;
    }
  }
  for (auto& x : sp) {
    if (x.is_match) continue;  // "remove" flag
    if (x.s == x.e) continue;
    out.push_back(ns.slice(x.s, x.e));
  }
}

namespace {
struct ByteMap {
  std::array<char32_t, 256> b2c{};
  std::unordered_map<char32_t, int> c2b;
  ByteMap() {
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      bool keep = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      b2c[b] = keep ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
      c2b[b2c[b]] = b;
    }
  }
};
const ByteMap& byte_map() {
  static const ByteMap m;
  return m;
}
}  // namespace

char32_t byte_to_char(unsigned char b) { return byte_map().b2c[b]; }
int char_to_byte(char32_t c) {
  if (c < 0x80 && c >= 0x21 && c <= 0x7E) return static_cast<int>(c);
  auto& m = byte_map().c2b;
  auto it = m.find(c);
  return it == m.end() ? -1 : it->second;
}

void process_offsets(Encoding& e, bool add_prefix_space) {
  const char32_t space_char = byte_to_char(' ');
  for (std::size_t i = 0; i < e.tokens.size(); ++i) {
    const std::string& t = e.tokens[i];
    auto& off = e.offsets[i];
    std::u32string cs = to_u32(t);
    auto is_sp = [&](char32_t c) { return c == space_char || is_whitespace(c); };
    std::size_t lead = 0, trail = 0;
    while (lead < cs.size() && is_sp(cs[lead])) ++lead;
    while (trail < cs.size() && is_sp(cs[cs.size() - 1 - trail])) ++trail;
    if (lead == 0 && trail == 0) continue;
    if (lead > 0) {
      bool is_first = i == 0 || off.first == 0;
      if (is_first && add_prefix_space && lead == 1) lead = 0;
      off.first = std::min(off.first + lead, off.second);
    }
    if (trail > 0 && off.second >= trail) off.second = std::max(off.second - trail, off.first);
  }
}

Status check_fields(const JsonCtx& c, std::initializer_list<const char*> allowed) {
  for (auto it = c.j.begin(); it != c.j.end(); ++it) {
    bool ok = it.key() == "type";
    for (const char* a : allowed) ok |= it.key() == a;
    if (!ok) return c.at(it.key()).err("unknown field");
  }
  return Status();
}

}  // namespace glassbox::tok
