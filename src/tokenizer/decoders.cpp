// Decoders of tokenizer.json ("decoder" field).
#include "tokenizer/components.h"

namespace glassbox::tok {
namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  std::size_t pos = 0, prev = 0;
  bool any = false;
  while ((pos = s.find(from, prev)) != std::string::npos) {
    out.append(s, prev, pos - prev);
    out.append(to);
    prev = pos + from.size();
    any = true;
  }
  if (!any) return;
  out.append(s, prev, std::string::npos);
  s = std::move(out);
}

std::string cleanup(std::string s) {
  static const std::pair<const char*, const char*> kRules[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},           {" ,", ","},    {" ' ", "'"},   {" n't", "n't"},
      {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (auto& [a, b] : kRules) replace_all(s, a, b);
  return s;
}

class ByteLevelDecoder : public Decoder {
 public:
  Status decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const std::string& t : tokens) {
      std::size_t mark = bytes.size();
      bool ok = true;
      for (std::size_t i = 0; i < t.size();) {
        int len;
        char32_t c = utf8_decode(t, i, len);
        i += len;
        int b = char_to_byte(c);
        if (b < 0) { ok = false; break; }
        bytes.push_back(static_cast<char>(b));
      }
      if (!ok) {
        bytes.resize(mark);
        bytes.append(t);
      }
    }
    tokens.assign(1, utf8_lossy(bytes));
    return Status();
  }
};

class MetaspaceDecoder : public Decoder {
 public:
  char32_t replacement = U'\u2581';
  bool prepend = true;  // prepend_scheme != never
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      const std::string& t = tokens[i];
      for (std::size_t k = 0; k < t.size();) {
        int len;
        char32_t c = utf8_decode(t, k, len);
        k += len;
        if (c == replacement) {
          if (!(i == 0 && prepend)) out.push_back(' ');
        } else {
          utf8_append(out, c);
        }
      }
      tokens[i] = std::move(out);
    }
    return Status();
  }
};

class WordPieceDecoder : public Decoder {
 public:
  std::string prefix = "##";
  bool cleanup_ = true;
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      std::string& t = tokens[i];
      if (i != 0) {
        if (t.compare(0, prefix.size(), prefix) == 0) t.erase(0, prefix.size());
        else t = std::string(" ").append(t);
      }
      if (cleanup_) t = cleanup(std::move(t));
    }
    return Status();
  }
};

class BpeDecoder : public Decoder {
 public:
  std::string suffix = "</w>";
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) replace_all(tokens[i], suffix, i + 1 == tokens.size() ? "" : " ");
    return Status();
  }
};

class CtcDecoder : public Decoder {
 public:
  std::string pad = "<pad>", delim = "|";
  bool cleanup_ = true;
  Status decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0 && tokens[i] == tokens[i - 1]) continue;
      std::string r = tokens[i];
      replace_all(r, pad, "");
      if (cleanup_) {
        r = cleanup(std::move(r));
        replace_all(r, delim, " ");
      }
      if (!r.empty()) out.push_back(std::move(r));
    }
    tokens = std::move(out);
    return Status();
  }
};

class ReplaceDecoder : public Decoder {
 public:
  PatternSpec pattern;
  std::string content;
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) {
      if (!pattern.is_regex) {
        replace_all(t, pattern.text, content);
        continue;
      }
      std::vector<Match> ms;
      GB_RETURN_IF_ERROR(find_pattern(pattern, t, ms));
      std::string out;
      for (auto& m : ms) {
        if (m.is_match) out.append(content);
        else out.append(t, m.s, m.e - m.s);
      }
      t = std::move(out);
    }
    return Status();
  }
};

class FuseDecoder : public Decoder {
 public:
  Status decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (auto& t : tokens) all += t;
    tokens.assign(1, std::move(all));
    return Status();
  }
};

class StripDecoder : public Decoder {
 public:
  char32_t content = ' ';
  std::size_t start = 0, stop = 0;
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) {
      std::u32string cs = to_u32(t);
      std::size_t a = 0, b = cs.size();
      for (std::size_t i = 0; i < start && i < cs.size(); ++i) {
        if (cs[i] == content) a = i + 1;
        else break;
      }
      for (std::size_t i = 0; i < stop && i < cs.size(); ++i) {
        std::size_t idx = cs.size() - i - 1;
        if (cs[idx] == content) b = idx;
        else break;
      }
      std::string out;
      for (std::size_t i = a; i < b; ++i) utf8_append(out, cs[i]);
      t = std::move(out);
    }
    return Status();
  }
};

class ByteFallbackDecoder : public Decoder {
 public:
  Status decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    auto hexval = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    auto flush = [&]() {
      if (pending.empty()) return;
      if (utf8_first_invalid(pending) == std::string::npos) out.push_back(pending);
      else
        for (std::size_t i = 0; i < pending.size(); ++i) out.push_back("\xEF\xBF\xBD");
      pending.clear();
    };
    for (std::string& t : tokens) {
      int v = -1;
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') {
        int h = hexval(t[3]), l = hexval(t[4]);
        if (h >= 0 && l >= 0) v = h * 16 + l;
      }
      if (v >= 0) {
        pending.push_back(static_cast<char>(v));
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    tokens = std::move(out);
    return Status();
  }
};

class SequenceDecoder : public Decoder {
 public:
  std::vector<std::unique_ptr<Decoder>> items;
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (auto& d : items) GB_RETURN_IF_ERROR(d->decode_chain(tokens));
    return Status();
  }
};

Result<char32_t> one_char(const JsonCtx& c, const std::string& key) {
  GB_ASSIGN_OR_RETURN(std::string s, get_string(c, key, std::nullopt));
  if (utf8_count(s) != 1) return c.at(key).err("expected exactly one character, got \"" + s + "\"");
  int len;
  return utf8_decode(s, 0, len);
}

}  // namespace

Result<std::unique_ptr<Decoder>> load_decoder(const JsonCtx& c) {
  if (!c.j.is_object()) return c.err("expected an object");
  GB_ASSIGN_OR_RETURN(std::string type, get_string(c, "type", std::nullopt));
  if (type == "ByteLevel") {
    GB_RETURN_IF_ERROR(check_fields(c, {"add_prefix_space", "trim_offsets", "use_regex"}));
    return std::unique_ptr<Decoder>(std::make_unique<ByteLevelDecoder>());
  }
  if (type == "Metaspace") {
    GB_RETURN_IF_ERROR(check_fields(c, {"replacement", "prepend_scheme", "split", "add_prefix_space", "str_rep"}));
    auto d = std::make_unique<MetaspaceDecoder>();
    GB_ASSIGN_OR_RETURN(d->replacement, one_char(c, "replacement"));
    if (!c.at("prepend_scheme").j.is_null()) {
      GB_ASSIGN_OR_RETURN(std::string s, get_string(c, "prepend_scheme", std::nullopt));
      if (s != "always" && s != "first" && s != "never") return c.at("prepend_scheme").err("unknown \"" + s + "\"");
      d->prepend = s != "never";
    } else {
      GB_ASSIGN_OR_RETURN(d->prepend, get_bool(c, "add_prefix_space", true));
    }
    return std::unique_ptr<Decoder>(std::move(d));
  }
  if (type == "WordPiece") {
    GB_RETURN_IF_ERROR(check_fields(c, {"prefix", "cleanup"}));
    auto d = std::make_unique<WordPieceDecoder>();
    GB_ASSIGN_OR_RETURN(d->prefix, get_string(c, "prefix", std::string("##")));
    GB_ASSIGN_OR_RETURN(d->cleanup_, get_bool(c, "cleanup", true));
    return std::unique_ptr<Decoder>(std::move(d));
  }
  if (type == "BPEDecoder") {
    GB_RETURN_IF_ERROR(check_fields(c, {"suffix"}));
    auto d = std::make_unique<BpeDecoder>();
    GB_ASSIGN_OR_RETURN(d->suffix, get_string(c, "suffix", std::string("</w>")));
    return std::unique_ptr<Decoder>(std::move(d));
  }
  if (type == "CTC") {
    GB_RETURN_IF_ERROR(check_fields(c, {"pad_token", "word_delimiter_token", "cleanup"}));
    auto d = std::make_unique<CtcDecoder>();
    GB_ASSIGN_OR_RETURN(d->pad, get_string(c, "pad_token", std::string("<pad>")));
    GB_ASSIGN_OR_RETURN(d->delim, get_string(c, "word_delimiter_token", std::string("|")));
    GB_ASSIGN_OR_RETURN(d->cleanup_, get_bool(c, "cleanup", true));
    return std::unique_ptr<Decoder>(std::move(d));
  }
  if (type == "Replace") {
    GB_RETURN_IF_ERROR(check_fields(c, {"pattern", "content"}));
    auto d = std::make_unique<ReplaceDecoder>();
    GB_ASSIGN_OR_RETURN(d->pattern, get_pattern(c.at("pattern")));
    GB_ASSIGN_OR_RETURN(d->content, get_string(c, "content", std::nullopt));
    return std::unique_ptr<Decoder>(std::move(d));
  }
  if (type == "Fuse") {
    GB_RETURN_IF_ERROR(check_fields(c, {}));
    return std::unique_ptr<Decoder>(std::make_unique<FuseDecoder>());
  }
  if (type == "Strip") {
    GB_RETURN_IF_ERROR(check_fields(c, {"content", "start", "stop"}));
    auto d = std::make_unique<StripDecoder>();
    GB_ASSIGN_OR_RETURN(d->content, one_char(c, "content"));
    GB_ASSIGN_OR_RETURN(std::int64_t a, get_int(c, "start", std::nullopt));
    GB_ASSIGN_OR_RETURN(std::int64_t b, get_int(c, "stop", std::nullopt));
    if (a < 0 || b < 0) return c.err("start/stop must be >= 0");
    d->start = static_cast<std::size_t>(a);
    d->stop = static_cast<std::size_t>(b);
    return std::unique_ptr<Decoder>(std::move(d));
  }
  if (type == "ByteFallback") {
    GB_RETURN_IF_ERROR(check_fields(c, {}));
    return std::unique_ptr<Decoder>(std::make_unique<ByteFallbackDecoder>());
  }
  if (type == "Sequence") {
    GB_RETURN_IF_ERROR(check_fields(c, {"decoders"}));
    auto d = std::make_unique<SequenceDecoder>();
    GB_RETURN_IF_ERROR(load_items(c, "decoders", load_decoder, d->items));
    return std::unique_ptr<Decoder>(std::move(d));
  }
  return c.at("type").err("unknown \"" + type + "\"");
}

}  // namespace glassbox::tok
