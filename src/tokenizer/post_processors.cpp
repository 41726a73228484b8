// Post-processors of tokenizer.json ("post_processor" field).
#include <map>

#include "tokenizer/components.h"

namespace glassbox::tok {
namespace {

struct SpecialTok {
  std::string token;
  std::uint32_t id;
};

// [pre...] + enc + [post...]; content type ids from `type_override` or the encoding's.
Encoding wrap_one(const Encoding& e, const std::vector<SpecialTok>& pre, const std::vector<SpecialTok>& post,
                  std::uint32_t pre_type, std::uint32_t post_type, std::optional<std::uint32_t> content_type) {
  Encoding o;
  std::size_t n = e.size() + pre.size() + post.size();
  o.ids.reserve(n);
  auto add_special = [&](const SpecialTok& t, std::uint32_t type) {
    o.ids.push_back(t.id);
    o.type_ids.push_back(type);
    o.tokens.push_back(t.token);
    o.offsets.emplace_back(0, 0);
    o.word_ids.push_back(std::nullopt);
    o.sequence_ids.push_back(0);
    o.special_tokens_mask.push_back(1);
    o.attention_mask.push_back(1);
  };
  for (auto& t : pre) add_special(t, pre_type);
  o.ids.insert(o.ids.end(), e.ids.begin(), e.ids.end());
  if (content_type) o.type_ids.insert(o.type_ids.end(), e.size(), *content_type);
  else o.type_ids.insert(o.type_ids.end(), e.type_ids.begin(), e.type_ids.end());
  o.tokens.insert(o.tokens.end(), e.tokens.begin(), e.tokens.end());
  o.offsets.insert(o.offsets.end(), e.offsets.begin(), e.offsets.end());
  o.word_ids.insert(o.word_ids.end(), e.word_ids.begin(), e.word_ids.end());
  o.sequence_ids.insert(o.sequence_ids.end(), e.sequence_ids.begin(), e.sequence_ids.end());
  o.special_tokens_mask.insert(o.special_tokens_mask.end(), e.size(), 0);
  o.attention_mask.insert(o.attention_mask.end(), e.size(), 1);
  for (auto& t : post) add_special(t, post_type);
  return o;
}

Encoding wrap(Encoding& e, const std::vector<SpecialTok>& pre, const std::vector<SpecialTok>& post,
              std::uint32_t pre_type, std::uint32_t post_type, std::optional<std::uint32_t> content_type,
              std::optional<std::uint32_t> overflow_content_type) {
  Encoding o = wrap_one(e, pre, post, pre_type, post_type, content_type);
  for (auto& ov : e.overflowing) o.overflowing.push_back(wrap_one(ov, pre, post, pre_type, post_type, overflow_content_type));
  return o;
}

class BertProcessor : public PostProcessor {
 public:
  SpecialTok sep, cls;
  std::size_t added_tokens(bool is_pair) const override { return is_pair ? 3 : 2; }
  Status process_encodings(std::vector<Encoding>& encs, bool add) const override {
    if (!add) return Status();
    encs[0] = wrap(encs[0], {cls}, {sep}, 0, 0, std::nullopt, std::nullopt);
    if (encs.size() > 1) encs[1] = wrap(encs[1], {}, {sep}, 1, 1, std::nullopt, std::nullopt);
    return Status();
  }
};

class RobertaProcessor : public PostProcessor {
 public:
  SpecialTok sep, cls;
  bool trim_offsets = true, add_prefix_space = true;
  std::size_t added_tokens(bool is_pair) const override { return is_pair ? 4 : 2; }
  Status process_encodings(std::vector<Encoding>& encs, bool add) const override {
    if (trim_offsets)
      for (auto& e : encs) {
        process_offsets(e, add_prefix_space);
        for (auto& o : e.overflowing) process_offsets(o, add_prefix_space);
      }
    for (auto& e : encs) std::fill(e.type_ids.begin(), e.type_ids.end(), 0);
    if (!add) return Status();
    encs[0] = wrap(encs[0], {cls}, {sep}, 0, 0, std::nullopt, 0);
    if (encs.size() > 1) encs[1] = wrap(encs[1], {sep}, {sep}, 0, 0, std::nullopt, 0);
    return Status();
  }
};

class ByteLevelProcessor : public PostProcessor {
 public:
  bool trim_offsets = true, add_prefix_space = true;
  std::size_t added_tokens(bool) const override { return 0; }
  Status process_encodings(std::vector<Encoding>& encs, bool) const override {
    if (trim_offsets)
      for (auto& e : encs) {
        process_offsets(e, add_prefix_space);
        for (auto& o : e.overflowing) process_offsets(o, add_prefix_space);
      }
    return Status();
  }
};

class TemplateProcessor : public PostProcessor {
 public:
  struct PieceT {
    bool is_seq;
    int seq;  // 0 = A, 1 = B
    std::string special;
    std::uint32_t type_id;
  };
  std::vector<PieceT> single, pair;
  std::map<std::string, std::pair<std::vector<std::uint32_t>, std::vector<std::string>>> specials;
  std::size_t n_single = 0, n_pair = 0;
  std::size_t added_tokens(bool is_pair) const override { return is_pair ? n_pair : n_single; }
  Status process_encodings(std::vector<Encoding>& encs, bool add) const override {
    const auto& tpl = encs.size() == 2 ? pair : single;
    std::vector<Encoding> out;
    for (const PieceT& p : tpl) {
      if (p.is_seq) {
        Encoding& e = encs[static_cast<std::size_t>(p.seq)];
        std::fill(e.type_ids.begin(), e.type_ids.end(), p.type_id);
        out.push_back(e);
      } else if (add) {
        const auto& sp = specials.at(p.special);
        Encoding e;
        std::size_t n = sp.first.size();
        e.ids = sp.first;
        e.type_ids.assign(n, p.type_id);
        e.tokens = sp.second;
        e.offsets.assign(n, {0, 0});
        e.word_ids.assign(n, std::nullopt);
        e.sequence_ids.assign(n, 0);
        e.special_tokens_mask.assign(n, 1);
        e.attention_mask.assign(n, 1);
        out.push_back(std::move(e));
      }
    }
    encs = std::move(out);
    return Status();
  }
};

class SequenceProcessor : public PostProcessor {
 public:
  std::vector<std::unique_ptr<PostProcessor>> items;
  std::size_t added_tokens(bool is_pair) const override {
    std::size_t n = 0;
    for (auto& p : items) n += p->added_tokens(is_pair);
    return n;
  }
  Status process_encodings(std::vector<Encoding>& encs, bool add) const override {
    for (auto& p : items) GB_RETURN_IF_ERROR(p->process_encodings(encs, add));
    return Status();
  }
};

Result<SpecialTok> get_special(const JsonCtx& c) {
  if (!c.j.is_array() || c.j.size() != 2 || !c.j[0].is_string() || !c.j[1].is_number_unsigned())
    return c.err("expected [token, id]");
  return SpecialTok{c.j[0].get<std::string>(), c.j[1].get<std::uint32_t>()};
}

Result<std::vector<TemplateProcessor::PieceT>> parse_template(const JsonCtx& c) {
  std::vector<TemplateProcessor::PieceT> out;
  if (!c.j.is_array()) return c.err("expected an array of pieces");
  for (std::size_t i = 0; i < c.j.size(); ++i) {
    JsonCtx p = c.at(i);
    if (p.j.is_object() && p.j.contains("Sequence")) {
      JsonCtx s = p.at("Sequence");
      GB_ASSIGN_OR_RETURN(std::string id, get_string(s, "id", std::nullopt));
      GB_ASSIGN_OR_RETURN(std::int64_t t, get_int(s, "type_id", 0));
      if (id != "A" && id != "B") return s.at("id").err("unknown \"" + id + "\"");
      out.push_back({true, id == "B" ? 1 : 0, "", static_cast<std::uint32_t>(t)});
    } else if (p.j.is_object() && p.j.contains("SpecialToken")) {
      JsonCtx s = p.at("SpecialToken");
      GB_ASSIGN_OR_RETURN(std::string id, get_string(s, "id", std::nullopt));
      GB_ASSIGN_OR_RETURN(std::int64_t t, get_int(s, "type_id", 0));
      out.push_back({false, 0, id, static_cast<std::uint32_t>(t)});
    } else {
      return p.err("expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    }
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<PostProcessor>> load_post_processor(const JsonCtx& c) {
  if (!c.j.is_object()) return c.err("expected an object");
  GB_ASSIGN_OR_RETURN(std::string type, get_string(c, "type", std::nullopt));
  if (type == "BertProcessing") {
    GB_RETURN_IF_ERROR(check_fields(c, {"sep", "cls"}));
    auto p = std::make_unique<BertProcessor>();
    GB_ASSIGN_OR_RETURN(p->sep, get_special(c.at("sep")));
    GB_ASSIGN_OR_RETURN(p->cls, get_special(c.at("cls")));
    return std::unique_ptr<PostProcessor>(std::move(p));
  }
  if (type == "RobertaProcessing") {
    GB_RETURN_IF_ERROR(check_fields(c, {"sep", "cls", "trim_offsets", "add_prefix_space"}));
    auto p = std::make_unique<RobertaProcessor>();
    GB_ASSIGN_OR_RETURN(p->sep, get_special(c.at("sep")));
    GB_ASSIGN_OR_RETURN(p->cls, get_special(c.at("cls")));
    GB_ASSIGN_OR_RETURN(p->trim_offsets, get_bool(c, "trim_offsets", true));
    GB_ASSIGN_OR_RETURN(p->add_prefix_space, get_bool(c, "add_prefix_space", true));
    return std::unique_ptr<PostProcessor>(std::move(p));
  }
  if (type == "ByteLevel") {
    GB_RETURN_IF_ERROR(check_fields(c, {"add_prefix_space", "trim_offsets", "use_regex"}));
    auto p = std::make_unique<ByteLevelProcessor>();
    GB_ASSIGN_OR_RETURN(p->trim_offsets, get_bool(c, "trim_offsets", true));
    GB_ASSIGN_OR_RETURN(p->add_prefix_space, get_bool(c, "add_prefix_space", true));
    return std::unique_ptr<PostProcessor>(std::move(p));
  }
  if (type == "TemplateProcessing") {
    GB_RETURN_IF_ERROR(check_fields(c, {"single", "pair", "special_tokens"}));
    auto p = std::make_unique<TemplateProcessor>();
    GB_ASSIGN_OR_RETURN(p->single, parse_template(c.at("single")));
    GB_ASSIGN_OR_RETURN(p->pair, parse_template(c.at("pair")));
    JsonCtx st = c.at("special_tokens");
    if (!st.j.is_object()) return st.err("expected an object");
    for (auto it = st.j.begin(); it != st.j.end(); ++it) {
      JsonCtx e = st.at(it.key());
      JsonCtx ids = e.at("ids"), toks = e.at("tokens");
      if (!ids.j.is_array() || !toks.j.is_array() || ids.j.size() != toks.j.size())
        return e.err("expected ids and tokens arrays of equal length");
      std::vector<std::uint32_t> iv;
      std::vector<std::string> tv;
      for (std::size_t i = 0; i < ids.j.size(); ++i) {
        if (!ids.j[i].is_number_unsigned() || !toks.j[i].is_string()) return e.err("bad ids/tokens entry");
        iv.push_back(ids.j[i].get<std::uint32_t>());
        tv.push_back(toks.j[i].get<std::string>());
      }
      p->specials[it.key()] = {iv, tv};
    }
    for (int k = 0; k < 2; ++k) {
      auto& tpl = k == 0 ? p->single : p->pair;
      std::size_t& n = k == 0 ? p->n_single : p->n_pair;
      for (std::size_t i = 0; i < tpl.size(); ++i) {
        if (tpl[i].is_seq) continue;
        auto it = p->specials.find(tpl[i].special);
        if (it == p->specials.end())
          return c.at(k == 0 ? "single" : "pair")
              .at(i)
              .err("special token \"" + tpl[i].special + "\" is not in special_tokens");
        n += it->second.first.size();
      }
    }
    return std::unique_ptr<PostProcessor>(std::move(p));
  }
  if (type == "Sequence") {
    GB_RETURN_IF_ERROR(check_fields(c, {"processors"}));
    auto p = std::make_unique<SequenceProcessor>();
    GB_RETURN_IF_ERROR(load_items(c, "processors", load_post_processor, p->items));
    return std::unique_ptr<PostProcessor>(std::move(p));
  }
  return c.at("type").err("unknown \"" + type + "\"");
}

}  // namespace glassbox::tok
