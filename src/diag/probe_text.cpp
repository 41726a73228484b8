#include "diag/probe_text.h"

#include <chrono>
#include <cmath>
#include <sstream>

#include "core/utf8.h"
#include "glassbox/pipeline.h"

namespace glassbox::diag {
namespace {

// What one text did in the pipeline.
struct TextRun {
  bool ok = false;
  Error error;
  int64_t tokens = 0, dropped = 0;
  std::string summary;  // top label / vector size
  double ms = 0;
};

TextRun run_text(const Pipeline& p, const std::string& text) {
  TextRun r;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<PipelineInput> in{{text, std::nullopt}};
  if (p.decisions().task == PipelineTask::kClassify) {
    auto res = p.classify(in, 1);
    if (res.ok()) {
      const Classification& c = res->at(0);
      r.ok = true;
      r.tokens = c.tokens;
      r.dropped = c.tokens_dropped;
      std::ostringstream s;
      if (!c.labels.empty()) s << "top label " << c.labels[0].label << " (" << c.labels[0].score << ")";
      r.summary = s.str();
    } else {
      r.error = res.error();
    }
  } else {
    auto res = p.embed(in);
    if (res.ok()) {
      const Embedding& e = res->at(0);
      r.ok = true;
      r.tokens = e.tokens;
      r.dropped = e.tokens_dropped;
      r.summary = "vector of " + std::to_string(e.vector.size());
    } else {
      r.error = res.error();
    }
  }
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// A refusal the caller can act on (bad input or a declared limit) made before the model ran,
// as opposed to a failure inside the graph (errors from a node carry "node '...'" in where).
bool clean_refusal(const Error& e) {
  const bool from_node = e.where.find("node '") != std::string::npos || e.what.find("node '") != std::string::npos;
  return !from_node && (e.code == ErrorCode::kInvalidArgument || e.code == ErrorCode::kLimitExceeded);
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// Token count of `text` with special tokens and without any truncation.
int64_t count_tokens(const Tokenizer& tk, const std::string& text) {
  EncodeOptions o;
  o.truncation_from_file = false;
  o.padding_from_file = false;
  auto e = tk.encode(text, std::nullopt, o);
  return e.ok() ? static_cast<int64_t>(e->size()) : -1;
}

// The shortest prefix of "a a a ..." with at least `target` tokens, and its count.
std::pair<std::string, int64_t> prefix_of_length(const Tokenizer& tk, int64_t target) {
  std::string s;
  int64_t n = count_tokens(tk, s);
  // One character adds at most one token to these tokenizers' counts, so a linear scan finds
  // the exact count if any prefix has it; 8 characters per token bounds the scan.
  for (int64_t k = 0; k < 8 * target + 8 && n < target && n >= 0; ++k) {
    s.push_back(k % 2 == 0 ? 'a' : ' ');
    n = count_tokens(tk, s);
  }
  return {s, n};
}

// A text of exactly `target` tokens (special tokens included): the shortest prefix of
// "a a a ..." with that count (exact whenever one character adds at most one token, as with
// byte-level vocabularies where "a " is two), else one repeated filler word, else the closest
// text found above it. Returns the text and its actual count.
std::pair<std::string, int64_t> text_of_length(const Tokenizer& tk, int64_t target) {
  std::pair<std::string, int64_t> best{"", -1};
  auto prefix = prefix_of_length(tk, target);
  if (prefix.second == target) return prefix;
  if (prefix.second > target) best = prefix;
  for (const char* word : {"a", "the", "x", "1", "."}) {
    const int64_t base = count_tokens(tk, "");
    const int64_t one = count_tokens(tk, word);
    const int64_t four = count_tokens(tk, std::string(word) + " " + word + " " + word + " " + word);
    if (base < 0 || one <= base || four <= one) continue;
    const double per = static_cast<double>(four - one) / 3.0;
    auto build = [&](int64_t k) {
      std::string s;
      s.reserve(static_cast<size_t>(k) * 4);
      for (int64_t i = 0; i < k; ++i) {
        if (i) s += ' ';
        s += word;
      }
      return s;
    };
    int64_t k = std::max<int64_t>(1, static_cast<int64_t>(std::llround((target - one) / per)) + 1);
    for (int step = 0; step < 12 && k > 0; ++step) {
      const std::string s = build(k);
      const int64_t n = count_tokens(tk, s);
      if (n == target) return {s, n};
      if (n > target && (best.second < 0 || n < best.second)) best = {s, n};
      k += n < target ? 1 : -1;
    }
  }
  return best;
}

std::string utf8(char32_t c) {
  std::string s;
  utf8_append(s, c);
  return s;
}

}  // namespace

Status probe_text_cases(const std::string& model_dir, const SessionOptions& session_options, ProbeReport& report) {
  PipelineOptions po;
  po.session = session_options;
  GB_ASSIGN_OR_RETURN(Pipeline p, Pipeline::load(model_dir, po));
  const Tokenizer& tk = p.tokenizer();
  const PipelineDecisions& d = p.decisions();
  const int64_t max = d.max_length;
  const std::string policy = d.truncation ? "truncation declared" : "no truncation policy (overlong = error)";

  // Lengths around the model limit, built from the model's own tokenizer.
  if (max > 1) {
    for (int64_t delta : {-1, 0, 1, 2, 3}) {
      const int64_t target = max + delta;
      const std::string label = delta == 0 ? "max" : delta < 0 ? "max-1" : "max+" + std::to_string(delta);
      const std::string name = "text of " + std::to_string(target) + " tokens (" + label + ")";
      auto [text, n] = text_of_length(tk, target);
      if (n < 0) {
        report.cases.push_back({name, ProbeStatus::kSkip, "could not build a text of that length with this tokenizer"});
        continue;
      }
      const std::string built = n == target ? "" : " (closest text found has " + std::to_string(n) + " tokens)";
      TextRun r = run_text(p, text);
      ProbeCase c{name, ProbeStatus::kPass, {}};
      if (n <= max) {
        if (!r.ok) c = {name, ProbeStatus::kFail, first_line(r.error.to_string()) + built};
        else if (r.dropped != 0)
          c = {name, ProbeStatus::kFail, "fits the limit but " + std::to_string(r.dropped) + " tokens were dropped" + built};
        else c.detail = "ran: " + std::to_string(r.tokens) + " tokens, " + r.summary + built;
      } else if (!d.truncation) {
        if (r.ok) c = {name, ProbeStatus::kFail, "overlong input accepted although no truncation policy is declared" + built};
        else if (!clean_refusal(r.error)) c = {name, ProbeStatus::kFail, first_line(r.error.to_string()) + built};
        else c.detail = "refused cleanly (" + policy + "): " + first_line(r.error.what) + built;
      } else {
        if (!r.ok) c = {name, ProbeStatus::kFail, first_line(r.error.to_string()) + built};
        else if (r.tokens > max || r.dropped != n - r.tokens)
          c = {name, ProbeStatus::kFail, "truncation inconsistent: " + std::to_string(r.tokens) + " tokens used, " +
                                             std::to_string(r.dropped) + " reported dropped of " + std::to_string(n) + built};
        else c.detail = "truncated as declared: " + std::to_string(r.dropped) + " tokens dropped, " + r.summary + built;
      }
      report.cases.push_back(c);
    }
  } else {
    report.cases.push_back({"texts around the length limit", ProbeStatus::kSkip, "the model directory declares no max_length"});
  }

  // Hostile texts: each must either run with finite outputs or be refused with a clear message.
  std::string zwj;
  for (int i = 0; i < 8; ++i)
    zwj += utf8(0x1F468) + utf8(0x200D) + utf8(0x1F469) + utf8(0x200D) + utf8(0x1F467) + utf8(0x200D) + utf8(0x1F466) + " " +
           utf8(0x1F469) + utf8(0x1F3FD) + utf8(0x200D) + utf8(0x1F4BB) + " " + utf8(0x1F3F3) + utf8(0xFE0F) + utf8(0x200D) +
           utf8(0x1F308) + " ";
  std::string zalgo = "e";
  for (int i = 0; i < 60; ++i) zalgo += utf8(0x0300 + static_cast<char32_t>(i % 0x30));
  zalgo += " Zalgo" + utf8(0x0336) + utf8(0x0489);
  std::string megabyte;
  megabyte.reserve(1 << 20);
  while (megabyte.size() < (1u << 20)) megabyte += "lorem ipsum dolor sit amet ";
  megabyte.resize(1u << 20);
  const std::vector<std::pair<std::string, std::string>> hostile = {
      {"empty string", ""},
      {"whitespace only", " \t\n " + utf8(0x3000) + utf8(0x00A0) + " "},
      {"NUL and control characters", std::string("a\0b\x01" "c\x7f", 6) + utf8(0x200B) + " d" + utf8(0xFEFF)},
      {"combining marks (60 on one letter)", zalgo},
      {"emoji ZWJ sequences", zwj},
      {"invalid UTF-8", "abc \xff\xfe def"},
      {"1 MB input without newlines", megabyte},
  };
  for (const auto& [name, text] : hostile) {
    TextRun r = run_text(p, text);
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f ms", r.ms);
    if (r.ok) {
      std::string detail = "ran in " + std::string(ms) + ": " + std::to_string(r.tokens) + " tokens";
      if (r.dropped) detail += ", " + std::to_string(r.dropped) + " dropped by the declared truncation";
      report.cases.push_back({name, ProbeStatus::kPass, detail + ", " + r.summary});
    } else if (clean_refusal(r.error)) {
      report.cases.push_back({name, ProbeStatus::kPass, "refused cleanly in " + std::string(ms) + ": " + first_line(r.error.what)});
    } else {
      report.cases.push_back({name, ProbeStatus::kFail, first_line(r.error.to_string())});
    }
  }

  // Unknown-token rate on a multilingual sample: high rates mean the tokenizer does not cover
  // what users will send (a warning, not a failure).
  const std::vector<std::pair<std::string, std::string>> sample = {
      {"en", "The quick brown fox jumps over the lazy dog."},
      {"de", "Guten Morgen, wie geht es dir? Schöne Grüße aus Köln."},
      {"ru", "Съешь же ещё этих мягких французских булок, да выпей чаю."},
      {"zh", "我能吞下玻璃而不伤身体。"},
      {"ar", "أنا قادر على أكل الزجاج و هذا لا يؤلمني."},
      {"hi", "मैं काँच खा सकता हूँ और मुझे उससे कोई चोट नहीं पहुंचती."},
      {"emoji", "Great job! " + utf8(0x1F44D) + utf8(0x1F389) + utf8(0x1F680)},
  };
  if (auto unk = tk.unknown_id()) {
    EncodeOptions o;
    o.add_special_tokens = false;
    o.truncation_from_file = false;
    o.padding_from_file = false;
    std::ostringstream detail;
    double worst = 0;
    int64_t total = 0, unknown = 0;
    for (const auto& [lang, text] : sample) {
      auto e = tk.encode(text, std::nullopt, o);
      if (!e.ok()) continue;
      int64_t u = 0;
      for (auto id : e->ids) u += id == *unk;
      total += static_cast<int64_t>(e->size());
      unknown += u;
      const double rate = e->size() ? static_cast<double>(u) / static_cast<double>(e->size()) : 0;
      worst = std::max(worst, rate);
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s %.0f%%", lang.c_str(), 100 * rate);
      detail << (detail.tellp() > 0 ? ", " : "") << buf;
    }
    char head[96];
    std::snprintf(head, sizeof head, "%.1f%% of %lld tokens unknown: ", total ? 100.0 * unknown / total : 0.0,
                  static_cast<long long>(total));
    report.cases.push_back({"unknown-token rate (multilingual sample)", worst > 0.05 ? ProbeStatus::kWarn : ProbeStatus::kPass,
                            head + detail.str()});
  } else {
    report.cases.push_back({"unknown-token rate (multilingual sample)", ProbeStatus::kPass,
                            "the tokenizer has no unknown token (byte-level or byte fallback): every text is covered"});
  }
  return Status();
}

}  // namespace glassbox::diag
