// Tokenizer: loads tokenizer.json and runs the pipeline
// added tokens -> normalizer -> pre-tokenizer -> model -> truncation -> post-processor -> padding.
#include "glassbox/tokenizer.h"

#include <fstream>
#include <sstream>
#include <mutex>
#include <thread>

#include "core/thread_pool.h"

#include "tokenizer/added_vocab.h"
#include "tokenizer/components.h"
#include "tokenizer/encoding_ops.h"

namespace glassbox {

using tok::Json;
using tok::JsonCtx;

struct Tokenizer::Impl {
  std::unique_ptr<tok::Normalizer> normalizer;
  std::unique_ptr<tok::PreTokenizer> pre_tokenizer;
  std::unique_ptr<tok::Model> model;
  std::unique_ptr<tok::PostProcessor> post_processor;
  std::unique_ptr<tok::Decoder> decoder;
  tok::AddedVocabulary added;
  std::optional<TruncationPolicy> truncation;
  std::optional<PaddingPolicy> padding;
  // Persistent workers for encode_batch, so their per-thread word caches stay warm.
  mutable std::mutex pool_mu;
  mutable std::unique_ptr<ThreadPool> pool;

  Result<Encoding> encode_sequence(std::string_view text, std::uint32_t type_id, OffsetUnit unit) const;
  Result<Encoding> encode_one(std::string_view text, std::optional<std::string_view> pair, const EncodeOptions& o,
                              bool pad_single) const;
};

namespace {

Result<TruncationPolicy> parse_truncation(const JsonCtx& c) {
  TruncationPolicy t;
  GB_ASSIGN_OR_RETURN(std::int64_t ml, tok::get_int(c, "max_length", std::nullopt));
  GB_ASSIGN_OR_RETURN(std::int64_t st, tok::get_int(c, "stride", 0));
  if (ml < 0 || st < 0) return c.err("max_length and stride must be >= 0");
  t.max_length = static_cast<std::size_t>(ml);
  t.stride = static_cast<std::size_t>(st);
  GB_ASSIGN_OR_RETURN(std::string strat, tok::get_string(c, "strategy", std::string("LongestFirst")));
  if (strat == "LongestFirst") t.strategy = TruncationStrategy::kLongestFirst;
  else if (strat == "OnlyFirst") t.strategy = TruncationStrategy::kOnlyFirst;
  else if (strat == "OnlySecond") t.strategy = TruncationStrategy::kOnlySecond;
  else return c.at("strategy").err("unknown \"" + strat + "\"");
  GB_ASSIGN_OR_RETURN(std::string dir, tok::get_string(c, "direction", std::string("Right")));
  if (dir == "Right") t.direction = Side::kRight;
  else if (dir == "Left") t.direction = Side::kLeft;
  else return c.at("direction").err("unknown \"" + dir + "\"");
  return t;
}

Result<PaddingPolicy> parse_padding(const JsonCtx& c) {
  PaddingPolicy p;
  JsonCtx s = c.at("strategy");
  if (s.j.is_string() && s.j.get<std::string>() == "BatchLongest") {
    p.strategy = PaddingStrategy::kBatchLongest;
  } else if (s.j.is_object() && s.j.contains("Fixed") && s.j["Fixed"].is_number_unsigned()) {
    p.strategy = PaddingStrategy::kFixed;
    p.fixed_length = s.j["Fixed"].get<std::size_t>();
  } else if (!s.j.is_null()) {
    return s.err("unknown " + s.j.dump());
  }
  GB_ASSIGN_OR_RETURN(std::string dir, tok::get_string(c, "direction", std::string("Right")));
  if (dir == "Right") p.direction = Side::kRight;
  else if (dir == "Left") p.direction = Side::kLeft;
  else return c.at("direction").err("unknown \"" + dir + "\"");
  if (!c.at("pad_to_multiple_of").j.is_null()) {
    GB_ASSIGN_OR_RETURN(std::int64_t m, tok::get_int(c, "pad_to_multiple_of", std::nullopt));
    if (m < 0) return c.at("pad_to_multiple_of").err("must be >= 0");
    p.pad_to_multiple_of = static_cast<std::size_t>(m);
  }
  GB_ASSIGN_OR_RETURN(std::int64_t pid, tok::get_int(c, "pad_id", 0));
  GB_ASSIGN_OR_RETURN(std::int64_t ptid, tok::get_int(c, "pad_type_id", 0));
  p.pad_id = static_cast<std::uint32_t>(pid);
  p.pad_type_id = static_cast<std::uint32_t>(ptid);
  GB_ASSIGN_OR_RETURN(p.pad_token, tok::get_string(c, "pad_token", std::string("[PAD]")));
  return p;
}

// byte offset -> code point index, HF BytesToCharOffsetConverter semantics.
void to_char_offsets(std::string_view text, Encoding& e) {
  std::vector<std::uint32_t> map(text.size());
  std::uint32_t ci = 0;
  for (std::size_t i = 0; i < text.size();) {
    int len = tok::utf8_len_lead(static_cast<unsigned char>(text[i]));
    for (int k = 0; k < len && i + k < text.size(); ++k) map[i + k] = ci;
    i += len;
    ++ci;
  }
  for (auto& o : e.offsets) {
    bool ok_s = o.first < map.size();
    bool ok_e = o.second == 0 || o.second - 1 < map.size();
    if (!ok_s || !ok_e) continue;
    std::size_t s = map[o.first];
    std::size_t en = o.second == 0 ? 0 : map[o.second - 1] + 1;
    o = {s, en};
  }
}

}  // namespace

Result<Encoding> Tokenizer::Impl::encode_sequence(std::string_view text, std::uint32_t type_id, OffsetUnit unit) const {
  std::vector<tok::Piece> pieces;
  GB_RETURN_IF_ERROR(added.extract_and_normalize(text, normalizer.get(), pieces));
  if (pre_tokenizer) GB_RETURN_IF_ERROR(pre_tokenizer->pre_tokenize(pieces));
  Encoding e;
  std::vector<tok::Token> toks;
  for (std::size_t idx = 0; idx < pieces.size(); ++idx) {
    tok::Piece& p = pieces[idx];
    const std::vector<tok::Token>* src = &p.tokens;
    if (!p.done) {
      toks.clear();
      GB_RETURN_IF_ERROR(model->tokenize(p.ns.norm, toks));
      src = &toks;
    }
    for (const tok::Token& t : *src) {
      e.ids.push_back(t.id);
      e.tokens.push_back(t.value);
      if (t.start < t.end && t.end <= p.ns.align.size()) {
        auto r = p.ns.original_range(t.start, t.end);
        e.offsets.emplace_back(r.first, r.second);
      } else {
        e.offsets.emplace_back(p.ns.orig_start + t.start, p.ns.orig_start + t.end);
      }
      e.word_ids.push_back(static_cast<std::uint32_t>(idx));
    }
  }
  std::size_t n = e.ids.size();
  e.type_ids.assign(n, type_id);
  e.sequence_ids.assign(n, type_id);
  e.special_tokens_mask.assign(n, 0);
  e.attention_mask.assign(n, 1);
  if (unit == OffsetUnit::kChars) to_char_offsets(text, e);
  return e;
}

Result<Encoding> Tokenizer::Impl::encode_one(std::string_view text, std::optional<std::string_view> pair,
                                             const EncodeOptions& o, bool pad_single) const {
  for (std::string_view s : {text, pair.value_or(std::string_view())}) {
    std::size_t bad = tok::utf8_first_invalid(s);
    if (bad != std::string_view::npos)
      return make_error(ErrorCode::kInvalidArgument, "input is not valid UTF-8 (byte " + std::to_string(bad) + ")",
                        "encode", "send UTF-8 text");
  }
  tok::FastPathScope fast_scope(o.fast_paths);
  GB_ASSIGN_OR_RETURN(Encoding a, encode_sequence(text, 0, o.offsets));
  std::optional<Encoding> b;
  if (pair) {
    GB_ASSIGN_OR_RETURN(Encoding bb, encode_sequence(*pair, 1, o.offsets));
    b = std::move(bb);
  }
  const std::optional<TruncationPolicy>& trunc = o.truncation_from_file ? truncation : o.truncation;
  if (trunc) {
    std::size_t n_added = post_processor ? post_processor->added_tokens(pair.has_value()) : 0;
    std::size_t max_length = trunc->max_length;
    if (o.add_special_tokens && n_added > 0) {
      if (n_added > max_length)
        return make_error(ErrorCode::kInvalidArgument,
                          "max_length " + std::to_string(max_length) + " is smaller than the " + std::to_string(n_added) +
                              " special tokens the post-processor adds",
                          "truncation", "raise --max-length");
      max_length -= n_added;
    }
    GB_RETURN_IF_ERROR(tok::truncate_pair(a, b ? &*b : nullptr, *trunc, max_length));
  }
  Encoding out;
  std::vector<Encoding> encs;
  encs.push_back(std::move(a));
  if (b) encs.push_back(std::move(*b));
  if (post_processor) {
    for (std::size_t i = 0; i < encs.size(); ++i) {
      std::fill(encs[i].sequence_ids.begin(), encs[i].sequence_ids.end(), static_cast<std::uint32_t>(i));
      std::fill(encs[i].type_ids.begin(), encs[i].type_ids.end(), static_cast<std::uint32_t>(i));
    }
    GB_RETURN_IF_ERROR(post_processor->process_encodings(encs, o.add_special_tokens));
    out = tok::merge_all(encs);
  } else if (encs.size() == 1) {
    out = std::move(encs[0]);
  } else {
    out = tok::merge_all(encs);
  }
  const std::optional<PaddingPolicy>& pad = o.padding_from_file ? padding : o.padding;
  if (pad && pad_single) {
    std::vector<Encoding> one;
    one.push_back(std::move(out));
    tok::pad_batch(one, *pad);
    out = std::move(one[0]);
  }
  return out;
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Result<Tokenizer> Tokenizer::from_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return make_error(ErrorCode::kNotFound, "cannot open tokenizer file", path, "check the --tokenizer path");
  // One read into a buffer of the file's size (a stringstream would grow and copy it twice).
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  f.seekg(0, std::ios::beg);
  std::string text(size > 0 ? static_cast<std::size_t>(size) : 0, '\0');
  if (size < 0 || !f.read(text.data(), static_cast<std::streamsize>(text.size())))
    return make_error(ErrorCode::kNotFound, "cannot read tokenizer file", path, "check the file is readable");
  auto r = from_json_string(text);
  if (!r.ok()) return std::move(r).take_error().with_where(path);
  return r;
}

Result<Tokenizer> Tokenizer::from_json_string(std::string_view json) {
  if (json.size() >= (std::size_t{1} << 32))
    return make_error(ErrorCode::kInvalidModel, "tokenizer.json of " + std::to_string(json.size()) + " bytes (limit 4 GiB)",
                      "tokenizer.json", "pass a real tokenizer.json file");
  tok::CapturedModelData captured;
  std::vector<std::string> keys(8);
  // Keep model.vocab / model.merges entries out of the DOM (see CapturedModelData).
  Json::parser_callback_t cb = [&](int depth, Json::parse_event_t ev, Json& parsed) -> bool {
    if (ev == Json::parse_event_t::key) {
      if (depth >= 0 && depth < 8) keys[static_cast<std::size_t>(depth)] = parsed.get<std::string>();
      if (depth == 3 && keys[1] == "model" && keys[2] == "vocab") {
        // The entry is captured at its key and stays out of the DOM (a kept key inserts a placeholder
        // into the vocab object's std::map: 128k-262k string nodes nothing reads). Its id is filled at
        // the value event; an object or array value (no value event) stays null and the loader reports it.
        captured.has_vocab = true;
        captured.vocab.push_back({captured.add(keys[3]), Json()});
        return false;
      }
      return true;
    }
    if (depth == 3 && keys[1] == "model") {
      if (keys[2] == "vocab" && ev == Json::parse_event_t::value && !captured.vocab.empty()) {
        captured.vocab.back().id = std::move(parsed);
        return false;
      }
      if (keys[2] == "merges" && (ev == Json::parse_event_t::value || ev == Json::parse_event_t::array_end ||
                                  ev == Json::parse_event_t::object_end)) {
        using Form = tok::CapturedModelData::MergeForm;
        captured.has_merges = true;
        tok::CapturedModelData::MergeEntry m{Form::kOther, {}, {}};
        if (parsed.is_string()) {
          m.form = Form::kString;
          m.a = captured.add(parsed.get_ref<const std::string&>());
        } else if (parsed.is_array() && parsed.size() == 2 && parsed[0].is_string() && parsed[1].is_string()) {
          m.form = Form::kPair;
          m.a = captured.add(parsed[0].get_ref<const std::string&>());
          m.b = captured.add(parsed[1].get_ref<const std::string&>());
        }
        captured.merges.push_back(m);
        return false;  // the DOM value is freed now
      }
    }
    return true;
  };
  Json j = Json::parse(json.begin(), json.end(), cb, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(ErrorCode::kInvalidModel, "not a JSON object", "tokenizer.json", "pass a tokenizer.json file");
  JsonCtx root{j, ""};
  static const char* kKnown[] = {"version", "truncation", "padding", "added_tokens", "normalizer",
                                 "pre_tokenizer", "model", "post_processor", "decoder"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool ok = false;
    for (const char* k : kKnown) ok |= it.key() == k;
    if (!ok) return root.at(it.key()).err("unknown top-level field");
  }
  auto impl = std::make_unique<Impl>();
  if (!root.at("normalizer").j.is_null()) {
    GB_ASSIGN_OR_RETURN(impl->normalizer, tok::load_normalizer(root.at("normalizer")));
  }
  if (!root.at("pre_tokenizer").j.is_null()) {
    GB_ASSIGN_OR_RETURN(impl->pre_tokenizer, tok::load_pre_tokenizer(root.at("pre_tokenizer")));
  }
  if (root.at("model").j.is_null()) return root.at("model").err("missing");
  GB_ASSIGN_OR_RETURN(impl->model, tok::load_model(root.at("model"), &captured));
  if (!root.at("post_processor").j.is_null()) {
    GB_ASSIGN_OR_RETURN(impl->post_processor, tok::load_post_processor(root.at("post_processor")));
  }
  if (!root.at("decoder").j.is_null()) {
    GB_ASSIGN_OR_RETURN(impl->decoder, tok::load_decoder(root.at("decoder")));
  }
  if (!root.at("truncation").j.is_null()) {
    GB_ASSIGN_OR_RETURN(auto t, parse_truncation(root.at("truncation")));
    impl->truncation = t;
  }
  if (!root.at("padding").j.is_null()) {
    GB_ASSIGN_OR_RETURN(auto p, parse_padding(root.at("padding")));
    impl->padding = p;
  }
  JsonCtx at = root.at("added_tokens");
  std::vector<tok::AddedToken> added;
  if (!at.j.is_null()) {
    if (!at.j.is_array()) return at.err("expected an array");
    for (std::size_t i = 0; i < at.j.size(); ++i) {
      JsonCtx e = at.at(i);
      if (!e.j.is_object()) return e.err("expected an object");
      tok::AddedToken t;
      GB_ASSIGN_OR_RETURN(t.content, tok::get_string(e, "content", std::nullopt));
      GB_ASSIGN_OR_RETURN(t.single_word, tok::get_bool(e, "single_word", false));
      GB_ASSIGN_OR_RETURN(t.lstrip, tok::get_bool(e, "lstrip", false));
      GB_ASSIGN_OR_RETURN(t.rstrip, tok::get_bool(e, "rstrip", false));
      GB_ASSIGN_OR_RETURN(t.special, tok::get_bool(e, "special", false));
      GB_ASSIGN_OR_RETURN(t.normalized, tok::get_bool(e, "normalized", !t.special));
      if (tok::utf8_first_invalid(t.content) != std::string::npos) return e.at("content").err("invalid UTF-8");
      added.push_back(std::move(t));
    }
  }
  GB_RETURN_IF_ERROR(impl->added.add_tokens(added, *impl->model, impl->normalizer.get()));
  return Tokenizer(std::move(impl));
}

Result<Encoding> Tokenizer::encode(std::string_view text, std::optional<std::string_view> pair,
                                   const EncodeOptions& options) const {
  return impl_->encode_one(text, pair, options, true);
}

Result<std::vector<Encoding>> Tokenizer::encode_batch(const std::vector<EncodeInput>& inputs,
                                                      const EncodeOptions& options, std::size_t num_threads) const {
  std::vector<std::optional<Result<Encoding>>> res(inputs.size());
  auto work = [&](std::size_t begin, std::size_t step) {
    for (std::size_t i = begin; i < inputs.size(); i += step) {
      std::optional<std::string_view> pair;
      if (inputs[i].pair) pair = *inputs[i].pair;
      res[i].emplace(impl_->encode_one(inputs[i].text, pair, options, false));
    }
  };
  if (num_threads <= 1 || inputs.size() < 2) {
    work(0, 1);
  } else {
    std::lock_guard<std::mutex> lock(impl_->pool_mu);  // one batch at a time uses the pool
    if (!impl_->pool || impl_->pool->size() != static_cast<int>(num_threads))
      impl_->pool = std::make_unique<ThreadPool>(static_cast<int>(num_threads));
    // interleaved slices balance long and short lines across workers
    std::size_t n = num_threads;
    impl_->pool->parallel_for(static_cast<int64_t>(n), 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) work(static_cast<std::size_t>(t), n);
    });
  }
  std::vector<Encoding> out;
  out.reserve(inputs.size());
  for (std::size_t i = 0; i < res.size(); ++i) {
    if (!res[i]->ok()) return std::move(*res[i]).take_error().with_where("input " + std::to_string(i));
    out.push_back(std::move(*res[i]).value());
  }
  const std::optional<PaddingPolicy>& pad = options.padding_from_file ? impl_->padding : options.padding;
  if (pad) tok::pad_batch(out, *pad);
  return out;
}

Result<std::string> Tokenizer::decode(const std::vector<std::uint32_t>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (std::uint32_t id : ids) {
    const std::string* t = impl_->added.decode_token(id);
    if (!t) t = impl_->model->id_to_token(id);
    if (!t)
      return make_error(ErrorCode::kInvalidArgument, "id " + std::to_string(id) + " is not in the vocabulary",
                        "decode", "pass ids produced by this tokenizer");
    if (skip_special_tokens && impl_->added.is_special(*t)) continue;
    tokens.push_back(*t);
  }
  if (!impl_->decoder) {
    std::string out;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (i) out += ' ';
      out += tokens[i];
    }
    return out;
  }
  GB_RETURN_IF_ERROR(impl_->decoder->decode_chain(tokens));
  std::string out;
  for (auto& t : tokens) out += t;
  return out;
}

std::optional<std::uint32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (auto a = impl_->added.token_to_id(token)) return a;
  return impl_->model->token_to_id(token);
}
std::optional<std::string> Tokenizer::id_to_token(std::uint32_t id) const {
  if (auto* a = impl_->added.id_to_token(id)) return *a;
  if (auto* m = impl_->model->id_to_token(id)) return *m;
  return std::nullopt;
}
std::size_t Tokenizer::vocab_size() const { return impl_->model->vocab_size() + impl_->added.size(); }
std::optional<std::uint32_t> Tokenizer::unknown_id() const { return impl_->model->unknown_id(); }
const std::optional<TruncationPolicy>& Tokenizer::file_truncation() const { return impl_->truncation; }
const std::optional<PaddingPolicy>& Tokenizer::file_padding() const { return impl_->padding; }

}  // namespace glassbox
