// glassbox.Tokenizer / glassbox.Encoding: the Hugging Face `tokenizers` API over glassbox::Tokenizer.
// Truncation and padding live on the Python object (as in `tokenizers`): from the file until
// enable_*/no_* replaces them; every call copies them before the GIL is released.
#include <pybind11/stl.h>

#include <memory>

#include "common.h"
#include "glassbox/tokenizer.h"

namespace glassbox::py_binding {
namespace {

struct PyTokenizer {
  std::shared_ptr<const Tokenizer> tk;
  EncodeOptions options;  // add_special_tokens is per call
};

const char* strategy_name(TruncationStrategy s) {
  switch (s) {
    case TruncationStrategy::kLongestFirst: return "longest_first";
    case TruncationStrategy::kOnlyFirst: return "only_first";
    case TruncationStrategy::kOnlySecond: return "only_second";
  }
  return "?";
}

Side parse_side(const py::handle& h, const std::string& what) {
  const std::string s = as_utf8(h, what);
  if (s == "right") return Side::kRight;
  if (s == "left") return Side::kLeft;
  raise_invalid(what + " is '" + s + "'", {}, "use 'right' or 'left'");
}

py::list ulist(const std::vector<std::uint32_t>& v) {
  py::list l(v.size());
  for (size_t i = 0; i < v.size(); ++i) l[i] = py::int_(v[i]);
  return l;
}

std::vector<std::uint32_t> parse_ids(const py::handle& ids) {
  if (ids.is_none() || PyUnicode_Check(ids.ptr()) || PyBytes_Check(ids.ptr()))
    raise_invalid("ids must be a sequence of ints, got " + type_name(ids));
  py::object seq;
  try {
    seq = py::list(py::reinterpret_borrow<py::object>(ids));
  } catch (py::error_already_set&) {
    raise_invalid("ids must be a sequence of ints, got " + type_name(ids));
  }
  std::vector<std::uint32_t> out;
  for (py::handle h : seq) out.push_back(static_cast<std::uint32_t>(as_int(h, "id", 0, 0xffffffffLL)));
  return out;
}

EncodeInput parse_input(const py::handle& h, size_t index) {
  const std::string what = "input " + std::to_string(index);
  if (PyUnicode_Check(h.ptr())) return {as_utf8(h, what), std::nullopt};
  if ((PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) && py::len(h) == 2) {
    py::sequence s = py::reinterpret_borrow<py::sequence>(h);
    return {as_utf8(s[0], what + " text"), as_utf8(s[1], what + " pair")};
  }
  raise_invalid(what + " must be a str or a (text, pair) tuple of two str, got " + type_name(h));
}

std::vector<EncodeInput> parse_inputs(const py::handle& texts) {
  if (texts.is_none() || PyUnicode_Check(texts.ptr()) || !PySequence_Check(texts.ptr()))
    raise_invalid("encode_batch takes a list of str or (text, pair) tuples, got " + type_name(texts), {},
                  "for one text use encode()");
  std::vector<EncodeInput> out;
  size_t i = 0;
  for (py::handle h : py::reinterpret_borrow<py::sequence>(texts)) out.push_back(parse_input(h, i++));
  return out;
}

// {"input_ids", "token_type_ids", "attention_mask"} as int64 [batch, length] (transformers' names).
py::dict to_numpy(const std::vector<Encoding>& encs) {
  const size_t n = encs.size(), len = n ? encs[0].size() : 0;
  for (size_t i = 1; i < n; ++i)
    if (encs[i].size() != len)
      raise_invalid("return_tensors='np' needs encodings of one length; encoding 0 has " + std::to_string(len) +
                        " tokens, encoding " + std::to_string(i) + " has " + std::to_string(encs[i].size()),
                    "Tokenizer.encode_batch", "call enable_padding() (or pad to a fixed length) first");
  py::dict d;
  auto field = [&](const char* name, auto member) {
    py::array_t<int64_t> a({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(len)});
    auto w = a.mutable_unchecked<2>();
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < len; ++k) w(i, k) = static_cast<int64_t>((encs[i].*member)[k]);
    d[name] = a;
  };
  field("input_ids", &Encoding::ids);
  field("token_type_ids", &Encoding::type_ids);
  field("attention_mask", &Encoding::attention_mask);
  return d;
}

EncodeOptions call_options(const PyTokenizer& self, const py::handle& add_special_tokens) {
  EncodeOptions o = self.options;
  o.add_special_tokens = as_bool(add_special_tokens, "add_special_tokens");
  return o;
}

}  // namespace

void bind_tokenizer(py::module_& m) {
  py::class_<Encoding>(m, "Encoding", "The result of encoding one input (or pair): the fields of tokenizers.Encoding.")
      .def_property_readonly("ids", [](const Encoding& e) { return ulist(e.ids); }, "Token ids.")
      .def_property_readonly("type_ids", [](const Encoding& e) { return ulist(e.type_ids); },
                             "Segment ids (0 first sequence, 1 pair).")
      .def_property_readonly("tokens", [](const Encoding& e) { return e.tokens; }, "Token strings.")
      .def_property_readonly(
          "offsets",
          [](const Encoding& e) {
            py::list l(e.offsets.size());
            for (size_t i = 0; i < e.offsets.size(); ++i) l[i] = py::make_tuple(e.offsets[i].first, e.offsets[i].second);
            return l;
          },
          "(start, end) of each token in the str it came from, in code points (Python string indices).")
      .def_property_readonly("attention_mask", [](const Encoding& e) { return ulist(e.attention_mask); },
                             "1 for real tokens, 0 for padding.")
      .def_property_readonly("special_tokens_mask", [](const Encoding& e) { return ulist(e.special_tokens_mask); },
                             "1 for tokens added by the post-processor or padding.")
      .def_property_readonly("word_ids",
                             [](const Encoding& e) {
                               py::list l(e.word_ids.size());
                               for (size_t i = 0; i < e.word_ids.size(); ++i)
                                 l[i] = e.word_ids[i] ? py::object(py::int_(*e.word_ids[i])) : py::none();
                               return l;
                             },
                             "Index of the word each token belongs to (None for special and pad tokens).")
      .def_property_readonly("overflowing", [](const Encoding& e) { return e.overflowing; },
                             "Windows cut off by truncation, in order (each an Encoding).")
      .def("__len__", &Encoding::size)
      .def("__repr__", [](const Encoding& e) {
        return "Encoding(num_tokens=" + std::to_string(e.size()) + ", overflowing=" + std::to_string(e.overflowing.size()) +
               ")";
      });

  py::class_<PyTokenizer>(m, "Tokenizer",
                          "A Hugging Face tokenizer.json, output identical to the `tokenizers` library. Truncation and "
                          "padding are those the file declares until enable_*/no_* replace them.")
      .def_static(
          "from_file",
          [](const py::handle& path) {
            const std::string p = as_path(path, "path");
            auto r = [&] {
              py::gil_scoped_release nogil;
              return Tokenizer::from_file(p);
            }();
            PyTokenizer t{std::make_shared<const Tokenizer>(unwrap(std::move(r))), {}};
            return t;
          },
          py::arg("path"), "Loads a tokenizer.json (ModelError for unknown components, NotFound for a missing file).")
      .def_static(
          "from_str",
          [](const py::handle& json) {
            const std::string s = as_utf8(json, "json");
            return PyTokenizer{std::make_shared<const Tokenizer>(unwrap(Tokenizer::from_json_string(s))), {}};
          },
          py::arg("json"), "Loads a tokenizer from the text of a tokenizer.json.")
      .def(
          "encode",
          [](const PyTokenizer& self, const py::handle& sequence, const py::handle& pair,
             const py::handle& add_special_tokens) {
            const std::string text = as_utf8(sequence, "sequence");
            std::optional<std::string> p;
            if (!pair.is_none()) p = as_utf8(pair, "pair");
            const EncodeOptions o = call_options(self, add_special_tokens);
            auto r = [&] {
              py::gil_scoped_release nogil;
              return self.tk->encode(text, p ? std::optional<std::string_view>(*p) : std::nullopt, o);
            }();
            return unwrap(std::move(r));
          },
          py::arg("sequence"), py::arg("pair") = py::none(), py::arg("add_special_tokens") = true,
          "Encodes one text (and its pair). Errors: InvalidInput (not a str, a policy the input cannot meet).")
      .def(
          "encode_batch",
          [](const PyTokenizer& self, const py::handle& input, const py::handle& add_special_tokens,
             const py::handle& return_tensors, const py::handle& threads) -> py::object {
            std::vector<EncodeInput> inputs = parse_inputs(input);
            const EncodeOptions o = call_options(self, add_special_tokens);
            const size_t n_threads = static_cast<size_t>(as_int(threads, "threads", 1, 1024));
            std::string tensors;
            if (!return_tensors.is_none()) {
              tensors = as_utf8(return_tensors, "return_tensors");
              if (tensors != "np") raise_invalid("return_tensors is '" + tensors + "'", {}, "use None (Encodings) or 'np'");
            }
            auto r = [&] {
              py::gil_scoped_release nogil;
              return self.tk->encode_batch(inputs, o, n_threads);
            }();
            std::vector<Encoding> encs = unwrap(std::move(r));
            if (tensors == "np") return to_numpy(encs);
            return py::cast(std::move(encs));
          },
          py::arg("input"), py::arg("add_special_tokens") = true, py::arg("return_tensors") = py::none(),
          py::arg("threads") = 1,
          "Encodes a list of str or (text, pair) tuples, then pads them as one batch; the GIL is released meanwhile. "
          "return_tensors='np': a dict of int64 [batch, length] arrays input_ids / token_type_ids / attention_mask "
          "(InvalidInput unless padding makes the lengths equal). threads: worker threads (results do not depend on it).")
      .def(
          "decode",
          [](const PyTokenizer& self, const py::handle& ids, const py::handle& skip) {
            std::vector<std::uint32_t> v = parse_ids(ids);
            return unwrap(self.tk->decode(v, as_bool(skip, "skip_special_tokens")));
          },
          py::arg("ids"), py::arg("skip_special_tokens") = true,
          "Ids back to text. Unlike `tokenizers` (which drops them silently), an unknown id is InvalidInput.")
      .def(
          "decode_batch",
          [](const PyTokenizer& self, const py::handle& sequences, const py::handle& skip) {
            if (sequences.is_none() || !PySequence_Check(sequences.ptr()))
              raise_invalid("sequences must be a list of id lists, got " + type_name(sequences));
            const bool s = as_bool(skip, "skip_special_tokens");
            std::vector<std::string> out;
            for (py::handle ids : py::reinterpret_borrow<py::sequence>(sequences))
              out.push_back(unwrap(self.tk->decode(parse_ids(ids), s)));
            return out;
          },
          py::arg("sequences"), py::arg("skip_special_tokens") = true, "decode() of each id list.")
      .def(
          "enable_truncation",
          [](PyTokenizer& self, const py::handle& max_length, const py::handle& stride, const py::handle& strategy,
             const py::handle& direction) {
            TruncationPolicy t;
            t.max_length = static_cast<size_t>(as_int(max_length, "max_length", 1, 1LL << 40));
            t.stride = static_cast<size_t>(as_int(stride, "stride", 0, 1LL << 40));
            const std::string s = as_utf8(strategy, "strategy");
            if (s == "longest_first") t.strategy = TruncationStrategy::kLongestFirst;
            else if (s == "only_first") t.strategy = TruncationStrategy::kOnlyFirst;
            else if (s == "only_second") t.strategy = TruncationStrategy::kOnlySecond;
            else raise_invalid("strategy is '" + s + "'", "enable_truncation", "use 'longest_first', 'only_first' or 'only_second'");
            t.direction = parse_side(direction, "direction");
            if (t.stride >= t.max_length)
              raise_invalid("stride " + std::to_string(t.stride) + " must be smaller than max_length " +
                                std::to_string(t.max_length),
                            "enable_truncation", "lower stride or raise max_length");
            self.options.truncation_from_file = false;
            self.options.truncation = t;
          },
          py::arg("max_length"), py::arg("stride") = 0, py::arg("strategy") = "longest_first",
          py::arg("direction") = "right",
          "Truncate every encoding to max_length tokens (special tokens included); what is cut goes to "
          ".overflowing in windows sharing `stride` tokens. Replaces the file's truncation.")
      .def(
          "no_truncation",
          [](PyTokenizer& self) {
            self.options.truncation_from_file = false;
            self.options.truncation.reset();
          },
          "Never truncate (also overrides a truncation the file declares).")
      .def(
          "enable_padding",
          [](PyTokenizer& self, const py::handle& direction, const py::handle& pad_id, const py::handle& pad_type_id,
             const py::handle& pad_token, const py::handle& length, const py::handle& multiple) {
            PaddingPolicy p;
            p.direction = parse_side(direction, "direction");
            p.pad_token = as_utf8(pad_token, "pad_token");
            const auto vocab_id = self.tk->token_to_id(p.pad_token);
            if (pad_id.is_none()) {
              if (!vocab_id)
                raise_invalid("pad_token '" + p.pad_token + "' is not in the vocabulary and no pad_id was given",
                              "enable_padding", "pass pad_token= a token of the vocabulary, or pad_id= explicitly");
              p.pad_id = *vocab_id;
            } else {
              p.pad_id = static_cast<std::uint32_t>(as_int(pad_id, "pad_id", 0, 0xffffffffLL));
              if (vocab_id && *vocab_id != p.pad_id)
                raise_invalid("pad_token '" + p.pad_token + "' has id " + std::to_string(*vocab_id) + " but pad_id is " +
                                  std::to_string(p.pad_id),
                              "enable_padding", "pass the pad token's own id, or omit pad_id");
            }
            p.pad_type_id = static_cast<std::uint32_t>(as_int(pad_type_id, "pad_type_id", 0, 0xffffffffLL));
            if (!length.is_none()) {
              p.strategy = PaddingStrategy::kFixed;
              p.fixed_length = static_cast<size_t>(as_int(length, "length", 1, 1LL << 40));
            }
            if (!multiple.is_none()) p.pad_to_multiple_of = static_cast<size_t>(as_int(multiple, "pad_to_multiple_of", 1, 1LL << 20));
            self.options.padding_from_file = false;
            self.options.padding = p;
          },
          py::arg("direction") = "right", py::arg("pad_id") = py::none(), py::arg("pad_type_id") = 0,
          py::arg("pad_token") = "[PAD]", py::arg("length") = py::none(), py::arg("pad_to_multiple_of") = py::none(),
          "Pad batches to their longest encoding (or to `length`), rounded up to pad_to_multiple_of. pad_id defaults "
          "to pad_token's id; a pad_token missing from the vocabulary without pad_id, or a pad_id that is not "
          "pad_token's id, is InvalidInput (`tokenizers` would pad with id 0 silently). Replaces the file's padding.")
      .def(
          "no_padding",
          [](PyTokenizer& self) {
            self.options.padding_from_file = false;
            self.options.padding.reset();
          },
          "Never pad (also overrides padding the file declares).")
      .def_property_readonly(
          "truncation",
          [](const PyTokenizer& self) -> py::object {
            const auto& t = self.options.truncation_from_file ? self.tk->file_truncation() : self.options.truncation;
            if (!t) return py::none();
            py::dict d;
            d["max_length"] = t->max_length;
            d["stride"] = t->stride;
            d["strategy"] = strategy_name(t->strategy);
            d["direction"] = t->direction == Side::kLeft ? "left" : "right";
            return d;
          },
          "The truncation in effect as a dict (None: never truncates).")
      .def_property_readonly(
          "padding",
          [](const PyTokenizer& self) -> py::object {
            const auto& p = self.options.padding_from_file ? self.tk->file_padding() : self.options.padding;
            if (!p) return py::none();
            py::dict d;
            d["length"] = p->strategy == PaddingStrategy::kFixed ? py::object(py::int_(p->fixed_length)) : py::none();
            d["pad_to_multiple_of"] = p->pad_to_multiple_of ? py::object(py::int_(p->pad_to_multiple_of)) : py::none();
            d["pad_id"] = p->pad_id;
            d["pad_token"] = p->pad_token;
            d["pad_type_id"] = p->pad_type_id;
            d["direction"] = p->direction == Side::kLeft ? "left" : "right";
            return d;
          },
          "The padding in effect as a dict (None: never pads).")
      .def("token_to_id", [](const PyTokenizer& self, const py::handle& token) -> py::object {
            auto id = self.tk->token_to_id(as_utf8(token, "token"));
            return id ? py::object(py::int_(*id)) : py::none();
          }, py::arg("token"), "Id of a token (model vocabulary or added token), None if absent.")
      .def("id_to_token", [](const PyTokenizer& self, const py::handle& id) -> py::object {
            auto t = self.tk->id_to_token(static_cast<std::uint32_t>(as_int(id, "id", 0, 0xffffffffLL)));
            return t ? py::object(py::str(*t)) : py::none();
          }, py::arg("id"), "Token of an id, None if absent.")
      .def("get_vocab_size", [](const PyTokenizer& self) { return self.tk->vocab_size(); },
           "Vocabulary size including added tokens.");
}

}  // namespace glassbox::py_binding
