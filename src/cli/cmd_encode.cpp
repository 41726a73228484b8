// `glassbox encode --tokenizer FILE [flags] < in.jsonl > out.jsonl` (contract in DESIGN.md).
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_common.h"
#include "cli/encoding_json.h"
#include "core/jsonl.h"
#include "glassbox/tokenizer.h"

namespace {

struct EncodeFlags {
  std::string tokenizer;
  std::string add_special = "true";
  long max_length = -1;
  std::string truncation;  // empty = as declared in the file
  std::string truncation_side = "right";
  long stride = 0;
  std::string padding;  // empty = as declared in the file
  long pad_to_multiple_of = 0;
  std::string offsets = "chars";
  long batch = 0;  // 0 = all lines as one batch
  long pad_id = -1;       // -1 = the file's, else HF's default 0
  std::string pad_token;  // empty = the file's, else HF's default "[PAD]"
};

glassbox::Error flag_error(const std::string& what, const std::string& fix) {
  return glassbox::make_error(glassbox::ErrorCode::kInvalidArgument, what, "flags", fix);
}

// A line the fast parser hands back (core/jsonl.h): nlohmann decides, as before the fast path existed.
std::optional<glassbox::Error> parse_general_line(std::string_view line, std::size_t lineno, glassbox::EncodeInput& in) {
  using namespace glassbox;
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("text") || !j["text"].is_string())
    return make_error(ErrorCode::kInvalidArgument, "expected {\"text\": \"...\", \"pair\"?: \"...\"}",
                      "stdin line " + std::to_string(lineno), "send one JSON object per line");
  in.text = j["text"].get<std::string>();
  if (j.contains("pair") && !j["pair"].is_null()) {
    if (!j["pair"].is_string())
      return make_error(ErrorCode::kInvalidArgument, "\"pair\" must be a string", "stdin line " + std::to_string(lineno), "");
    in.pair = j["pair"].get<std::string>();
  }
  return std::nullopt;
}

void run_encode(const EncodeFlags& f) {
  using namespace glassbox;
  auto tk = Tokenizer::from_file(f.tokenizer);
  if (!tk.ok()) cli::fail("encode", tk.error());
  EncodeOptions opt;
  opt.add_special_tokens = f.add_special == "true";
  opt.offsets = f.offsets == "bytes" ? OffsetUnit::kBytes : OffsetUnit::kChars;
  if (!f.truncation.empty() || f.max_length >= 0 || f.stride > 0) {
    if (f.truncation == "none") {
      opt.truncation_from_file = false;
      opt.truncation.reset();
    } else {
      TruncationPolicy t = tk->file_truncation().value_or(TruncationPolicy{});
      if (f.max_length >= 0) t.max_length = static_cast<std::size_t>(f.max_length);
      else if (!tk->file_truncation())
        cli::fail("encode", flag_error("--truncation needs --max-length (the file declares none)", "add --max-length N"));
      if (f.truncation == "longest_first") t.strategy = TruncationStrategy::kLongestFirst;
      else if (f.truncation == "only_first") t.strategy = TruncationStrategy::kOnlyFirst;
      else if (f.truncation == "only_second") t.strategy = TruncationStrategy::kOnlySecond;
      t.direction = f.truncation_side == "left" ? Side::kLeft : Side::kRight;
      t.stride = static_cast<std::size_t>(f.stride);
      opt.truncation_from_file = false;
      opt.truncation = t;
    }
  }
  if (!f.padding.empty() || f.pad_to_multiple_of > 0) {
    if (f.padding == "none") {
      opt.padding_from_file = false;
      opt.padding.reset();
    } else {
      PaddingPolicy p = tk->file_padding().value_or(PaddingPolicy{});
      if (f.pad_id >= 0) p.pad_id = static_cast<std::uint32_t>(f.pad_id);
      if (!f.pad_token.empty()) p.pad_token = f.pad_token;
      if (f.padding == "longest") p.strategy = PaddingStrategy::kBatchLongest;
      else if (f.padding == "max_length") {
        if (f.max_length < 0) cli::fail("encode", flag_error("--padding max_length needs --max-length", "add --max-length N"));
        p.strategy = PaddingStrategy::kFixed;
        p.fixed_length = static_cast<std::size_t>(f.max_length);
      }
      if (f.pad_to_multiple_of > 0) p.pad_to_multiple_of = static_cast<std::size_t>(f.pad_to_multiple_of);
      opt.padding_from_file = false;
      opt.padding = p;
    }
  }
  std::vector<EncodeInput> batch;
  jsonl::OutBuffer out(STDOUT_FILENO);
  auto fail_flushed = [&](const Error& e) {
    (void)out.flush();  // what was encoded before the error still goes out, as it did through std::cout
    cli::fail("encode", e);
  };
  auto flush = [&]() {
    if (batch.empty()) return;
    auto r = tk->encode_batch(batch, opt, 1);
    if (!r.ok()) fail_flushed(r.error());
    for (auto& e : *r) {
      cli::append_encoding(out.buf(), e, true);
      out.buf() += '\n';
      if (auto st = out.maybe_flush(); !st.ok()) cli::fail("encode", st.error());
    }
    batch.clear();
  };
  jsonl::LineReader lines(STDIN_FILENO);
  std::string_view line;
  std::size_t lineno = 0;
  while (lines.next(line)) {
    ++lineno;
    EncodeInput in;
    jsonl::TextLine fast;
    const auto kind = jsonl::parse_text_line(line, fast);
    if (kind == jsonl::LineKind::kBlank) continue;
    if (kind == jsonl::LineKind::kParsed) {
      in.text = std::move(fast.text);
      in.pair = std::move(fast.pair);
    } else if (auto err = parse_general_line(line, lineno, in)) {
      fail_flushed(*err);
    }
    batch.push_back(std::move(in));
    if (f.batch > 0 && batch.size() >= static_cast<std::size_t>(f.batch)) flush();
  }
  if (!lines.status().ok()) fail_flushed(lines.status().error());
  flush();
  if (auto st = out.flush(); !st.ok()) cli::fail("encode", st.error());
}

}  // namespace

void add_encode_command(CLI::App& app) {
  auto f = std::make_shared<EncodeFlags>();
  CLI::App* cmd = app.add_subcommand("encode", "Tokenize JSONL {\"text\",\"pair\"?} lines from stdin into encodings");
  cmd->add_option("--tokenizer", f->tokenizer, "tokenizer.json file")->required();
  cmd->add_option("--add-special-tokens", f->add_special, "let the post-processor add special tokens")
      ->check(CLI::IsMember({"true", "false"}))
      ->capture_default_str();
  cmd->add_option("--max-length", f->max_length, "truncation / fixed padding length (overrides the file)");
  cmd->add_option("--truncation", f->truncation, "override the file's truncation")
      ->check(CLI::IsMember({"none", "longest_first", "only_first", "only_second"}));
  cmd->add_option("--truncation-side", f->truncation_side, "which end truncation removes")
      ->check(CLI::IsMember({"right", "left"}))
      ->capture_default_str();
  cmd->add_option("--stride", f->stride, "tokens shared by consecutive overflow windows")->capture_default_str();
  cmd->add_option("--padding", f->padding, "override the file's padding")
      ->check(CLI::IsMember({"none", "longest", "max_length"}));
  cmd->add_option("--pad-to-multiple-of", f->pad_to_multiple_of, "round the padded length up to a multiple of N");
  cmd->add_option("--offsets", f->offsets, "offset unit: Unicode code points (as the Python binding) or UTF-8 bytes")
      ->check(CLI::IsMember({"chars", "bytes"}))
      ->capture_default_str();
  cmd->add_option("--pad-id", f->pad_id, "pad id when padding (default: the file's padding, else 0 as HF)");
  cmd->add_option("--pad-token", f->pad_token, "pad token (default: the file's padding, else [PAD] as HF)");
  cmd->add_option("--batch", f->batch, "lines per batch for --padding longest (0 = all lines)")->capture_default_str();
  cmd->callback([f]() { run_encode(*f); });
}
