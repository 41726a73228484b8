// Encoding operations with HF semantics: truncation windows, merging, padding.
#include "tokenizer/encoding_ops.h"

#include <algorithm>

namespace glassbox::tok {

static Encoding slice_enc(const Encoding& e, std::size_t a, std::size_t b) {
  Encoding o;
  o.ids.assign(e.ids.begin() + a, e.ids.begin() + b);
  o.type_ids.assign(e.type_ids.begin() + a, e.type_ids.begin() + b);
  o.tokens.assign(e.tokens.begin() + a, e.tokens.begin() + b);
  o.offsets.assign(e.offsets.begin() + a, e.offsets.begin() + b);
  o.word_ids.assign(e.word_ids.begin() + a, e.word_ids.begin() + b);
  o.sequence_ids.assign(e.sequence_ids.begin() + a, e.sequence_ids.begin() + b);
  o.special_tokens_mask.assign(e.special_tokens_mask.begin() + a, e.special_tokens_mask.begin() + b);
  o.attention_mask.assign(e.attention_mask.begin() + a, e.attention_mask.begin() + b);
  return o;
}

Status truncate_encoding(Encoding& e, std::size_t max_len, std::size_t stride, Side dir) {
  std::size_t len = e.size();
  if (max_len >= len) return Status();
  if (max_len == 0) {
    Encoding old = std::move(e);
    e = Encoding();
    e.overflowing.push_back(std::move(old));
    return Status();
  }
  if (stride >= max_len)
    return make_error(ErrorCode::kInvalidArgument,
                      "stride " + std::to_string(stride) + " must be smaller than the length left for the sequence (" +
                          std::to_string(max_len) + ", after removing the special tokens)",
                      "truncation", "lower --stride or raise --max-length");
  std::size_t step = max_len - stride;
  std::vector<std::pair<std::size_t, std::size_t>> parts;
  if (dir == Side::kRight) {
    for (std::size_t s = 0; s < len; s += step) {
      std::size_t stop = std::min(s + max_len, len);
      parts.emplace_back(s, stop);
      if (stop == len) break;
    }
  } else {
    // HF: (0..len).rev().step_by(step)
    for (std::size_t k = 0;; ++k) {
      if (k * step >= len) break;
      std::size_t stop = len - k * step;
      std::size_t start = stop < max_len ? 0 : stop - max_len;
      if (start < stop) parts.emplace_back(start, stop);
      if (start == 0) break;
    }
  }
  Encoding first = slice_enc(e, parts[0].first, parts[0].second);
  for (std::size_t i = 1; i < parts.size(); ++i) first.overflowing.push_back(slice_enc(e, parts[i].first, parts[i].second));
  e = std::move(first);
  return Status();
}

static void append(Encoding& a, const Encoding& b) {
  a.ids.insert(a.ids.end(), b.ids.begin(), b.ids.end());
  a.type_ids.insert(a.type_ids.end(), b.type_ids.begin(), b.type_ids.end());
  a.tokens.insert(a.tokens.end(), b.tokens.begin(), b.tokens.end());
  a.offsets.insert(a.offsets.end(), b.offsets.begin(), b.offsets.end());
  a.word_ids.insert(a.word_ids.end(), b.word_ids.begin(), b.word_ids.end());
  a.sequence_ids.insert(a.sequence_ids.end(), b.sequence_ids.begin(), b.sequence_ids.end());
  a.special_tokens_mask.insert(a.special_tokens_mask.end(), b.special_tokens_mask.begin(), b.special_tokens_mask.end());
  a.attention_mask.insert(a.attention_mask.end(), b.attention_mask.begin(), b.attention_mask.end());
}

void merge_with(Encoding& self, const Encoding& pair) {
  std::vector<Encoding> ovs;
  for (const Encoding& so : self.overflowing) {
    Encoding n = so;
    merge_with(n, pair);
    ovs.push_back(std::move(n));
    for (const Encoding& po : pair.overflowing) {
      Encoding m = so;
      merge_with(m, po);
      ovs.push_back(std::move(m));
    }
  }
  for (const Encoding& po : pair.overflowing) {
    Encoding n = self;
    merge_with(n, po);
    ovs.push_back(std::move(n));
  }
  append(self, pair);
  self.overflowing = std::move(ovs);
}

Encoding merge_all(std::vector<Encoding>& encs) {
  Encoding out;
  for (auto& e : encs) merge_with(out, e);
  return out;
}

void pad_encoding(Encoding& e, std::size_t target, const PaddingPolicy& p) {
  for (auto& o : e.overflowing) pad_encoding(o, target, p);
  if (e.size() >= target) return;
  std::size_t n = target - e.size();
  auto ins = [&](auto& v, auto val) {
    if (p.direction == Side::kLeft) v.insert(v.begin(), n, val);
    else v.insert(v.end(), n, val);
  };
  ins(e.ids, p.pad_id);
  ins(e.type_ids, p.pad_type_id);
  ins(e.tokens, p.pad_token);
  ins(e.offsets, std::pair<std::size_t, std::size_t>(0, 0));
  ins(e.word_ids, std::optional<std::uint32_t>());
  ins(e.sequence_ids, std::uint32_t(0));
  ins(e.special_tokens_mask, std::uint32_t(1));
  ins(e.attention_mask, std::uint32_t(0));
}

void pad_batch(std::vector<Encoding>& encs, const PaddingPolicy& p) {
  if (encs.empty()) return;
  std::size_t len = 0;
  if (p.strategy == PaddingStrategy::kFixed) len = p.fixed_length;
  else
    for (auto& e : encs) len = std::max(len, e.size());
  if (p.pad_to_multiple_of > 0 && len % p.pad_to_multiple_of > 0) len += p.pad_to_multiple_of - len % p.pad_to_multiple_of;
  for (auto& e : encs) pad_encoding(e, len, p);
}

Status truncate_pair(Encoding& a, Encoding* b, const TruncationPolicy& t, std::size_t max_length) {
  if (max_length == 0) {
    GB_RETURN_IF_ERROR(truncate_encoding(a, 0, t.stride, t.direction));
    if (b) GB_RETURN_IF_ERROR(truncate_encoding(*b, 0, t.stride, t.direction));
    return Status();
  }
  std::size_t total = a.size() + (b ? b->size() : 0);
  if (total <= max_length) return Status();
  std::size_t to_remove = total - max_length;
  switch (t.strategy) {
    case TruncationStrategy::kLongestFirst: {
      if (!b) return truncate_encoding(a, total - to_remove, t.stride, t.direction);
      std::size_t n1 = a.size(), n2 = b->size();
      bool swap = false;
      if (n1 > n2) {
        swap = true;
        std::swap(n1, n2);
      }
      if (n1 > max_length) n2 = n1;
      else n2 = std::max(n1, max_length - n1);
      if (n1 + n2 > max_length) {
        n1 = max_length / 2;
        n2 = n1 + max_length % 2;
      }
      if (swap) std::swap(n1, n2);
      GB_RETURN_IF_ERROR(truncate_encoding(a, n1, t.stride, t.direction));
      return truncate_encoding(*b, n2, t.stride, t.direction);
    }
    case TruncationStrategy::kOnlyFirst:
    case TruncationStrategy::kOnlySecond: {
      Encoding* target = &a;
      if (t.strategy == TruncationStrategy::kOnlySecond) {
        if (!b)
          return make_error(ErrorCode::kInvalidArgument, "truncation only_second needs a pair input", "truncation",
                            "use longest_first or only_first for single inputs");
        target = b;
      }
      if (target->size() > to_remove) return truncate_encoding(*target, target->size() - to_remove, t.stride, t.direction);
      return make_error(ErrorCode::kInvalidArgument,
                        "the sequence to truncate has " + std::to_string(target->size()) + " tokens, fewer than the " +
                            std::to_string(to_remove) + " to remove",
                        "truncation", "raise --max-length or use longest_first");
    }
  }
  return Status();
}

}  // namespace glassbox::tok
