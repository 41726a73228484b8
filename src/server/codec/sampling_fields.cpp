#include "server/codec/sampling_fields.h"

#include <algorithm>

namespace glassbox::server {
namespace {

using nlohmann::json;

class Reader {
 public:
  Reader(const json& q, const SamplingDialect& d) : q_(q), d_(d) {}

  bool sent(const char* k) const { return q_.contains(k) && !(d_.null_is_absent && q_[k].is_null()); }
  std::string name(const char* k) const {
    std::string n = std::string(d_.prefix) + k;
    return d_.quote ? "\"" + n + "\"" : n;
  }
  FieldProblem problem(const char* k, const std::string& rule) const { return {name(k) + " " + rule, k}; }

  std::optional<FieldProblem> number(const char* k, std::optional<double>& out) const {
    if (!sent(k)) return std::nullopt;
    if (!q_[k].is_number()) return problem(k, "must be a number");
    out = q_[k].get<double>();
    return std::nullopt;
  }
  std::optional<FieldProblem> count(const char* k, std::optional<int64_t>& out) const {
    if (!sent(k)) return std::nullopt;
    if (!q_[k].is_number_integer() || q_[k].get<int64_t>() < 0) return problem(k, "must be a non-negative integer");
    out = q_[k].get<int64_t>();
    return std::nullopt;
  }
  std::optional<FieldProblem> boolean(const char* k, std::optional<bool>& out) const {
    if (!sent(k)) return std::nullopt;
    if (!q_[k].is_boolean()) return problem(k, "must be a boolean");
    out = q_[k].get<bool>();
    return std::nullopt;
  }
  std::optional<FieldProblem> seed(std::optional<uint64_t>& out) const {
    if (!sent("seed")) return std::nullopt;
    const json& s = q_["seed"];
    if (d_.signed_seed) {
      if (!s.is_number_integer()) return problem("seed", "must be an integer");
      out = static_cast<uint64_t>(s.get<int64_t>());  // two's complement, as OpenAI clients send it
    } else {
      if (!s.is_number_unsigned()) return problem("seed", "must be a non-negative integer");
      out = s.get<uint64_t>();
    }
    return std::nullopt;
  }
  std::optional<FieldProblem> stop(std::vector<std::string>& out) const {
    if (!sent("stop")) return std::nullopt;
    const json& s = q_["stop"];
    if (s.is_string()) {
      out.push_back(s.get<std::string>());
    } else if (s.is_array() && s.size() <= 16 && std::all_of(s.begin(), s.end(), [](const json& e) { return e.is_string(); })) {
      for (const auto& e : s) out.push_back(e.get<std::string>());
    } else {
      return problem("stop", "must be a string or a list of at most 16 strings");
    }
    for (const auto& x : out)
      if (x.empty()) return problem("stop", "strings must not be empty");
    return std::nullopt;
  }
  std::optional<FieldProblem> max_tokens(std::optional<int64_t>& out) const {
    std::optional<int64_t> first, second;
    if (auto e = count(d_.max_tokens.at(0), first)) return e;
    if (d_.max_tokens.size() > 1) {
      if (auto e = count(d_.max_tokens[1], second)) return e;
      if (first && second && *first != *second)
        return FieldProblem{name(d_.max_tokens[0]) + " and " + name(d_.max_tokens[1]) + " differ: send one", d_.max_tokens[0]};
    }
    out = second ? second : first;
    return std::nullopt;
  }

 private:
  const json& q_;
  const SamplingDialect& d_;
};

}  // namespace

std::optional<FieldProblem> read_sampling(const json& q, const SamplingDialect& d, GenerationRequest& r) {
  const Reader in(q, d);
  if (auto e = in.max_tokens(r.max_new_tokens)) return e;
  if (auto e = in.number("temperature", r.temperature)) return e;
  if (r.temperature && d.temperature_zero_is_greedy) {
    if (*r.temperature < 0 || *r.temperature > 2) return in.problem("temperature", "must be between 0 and 2");
    r.do_sample = *r.temperature > 0;
    if (*r.temperature == 0) r.temperature.reset();  // greedy: no temperature applies
  }
  if (auto e = in.number("top_p", r.top_p)) return e;
  if (d.top_k_and_penalty) {
    if (auto e = in.count("top_k", r.top_k)) return e;
    if (auto e = in.number("repetition_penalty", r.repetition_penalty)) return e;
    std::optional<bool> do_sample;
    if (auto e = in.boolean("do_sample", do_sample)) return e;
    if (do_sample) r.do_sample = do_sample;
    else if (d.sampling_when_any_sent && (r.temperature || r.top_k || r.top_p)) r.do_sample = true;
  }
  if (auto e = in.seed(r.seed)) return e;
  if (auto e = in.stop(r.stop_strings)) return e;
  return std::nullopt;
}

}  // namespace glassbox::server
