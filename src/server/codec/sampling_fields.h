// The sampling fields of a generation request, read once for every protocol that carries them
// (OpenAI's body, TGI's "parameters", OIP's request parameters). Each protocol names its dialect:
// which names it accepts and how temperature, do_sample and seed behave in it. Free of models and
// sockets, like the other codecs.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/generation.h"

namespace glassbox::server {

struct SamplingDialect {
  // How a field is named in messages: prefix + name, quoted or not ("\"top_p\"", "parameters.top_p").
  const char* prefix = "";
  bool quote = true;
  // The names of max_new_tokens, one or two; when both are sent they must agree (the second wins).
  std::vector<const char*> max_tokens;
  // temperature 0 = greedy (do_sample false), > 0 = sampling at that temperature, range [0, 2]
  // (OpenAI's rule). Off: temperature is a number passed on as it is (TGI).
  bool temperature_zero_is_greedy = true;
  // do_sample not sent but temperature, top_k or top_p sent: sampling (TGI's rule).
  bool sampling_when_any_sent = false;
  bool top_k_and_penalty = true;  // top_k, repetition_penalty and do_sample are fields (not OpenAI)
  bool signed_seed = false;       // any integer (OpenAI); otherwise a non-negative one
  bool null_is_absent = true;     // JSON null means "not sent" (OpenAI, TGI); OIP: a type error
};

// A field the request got wrong: the message and the field's plain name.
struct FieldProblem {
  std::string message;
  std::string field;
};

// Reads max_new_tokens, temperature, top_p, seed, stop (a string or at most 16 non-empty strings) and,
// where the dialect has them, top_k, repetition_penalty and do_sample into `r`. Fields not sent stay
// unset: the model's declared policy applies to them.
std::optional<FieldProblem> read_sampling(const nlohmann::json& q, const SamplingDialect& d, GenerationRequest& r);

}  // namespace glassbox::server
