// `glassbox accuracy` on a decoder model directory (issue 28): each prompt generated greedily for `steps` tokens
// in fp32 and in the candidate precision (one GenerationSession each, same threads). Every step's logits row is
// compared while the two runs have chosen the same tokens so far — after the first step whose tokens differ the
// two contexts differ and their logits are no longer comparable — so the report gives per prompt the steps the
// greedy tokens agree on (their common prefix: free-running generation in the candidate is fp32's text up to
// there) and the normwise relative error max|b - a| / max|a| of each compared step's logits.
#include <algorithm>

#include "diag/accuracy.h"
#include "glassbox/generation.h"

namespace glassbox::diag {
namespace {

struct Greedy {
  std::vector<uint32_t> tokens;
  std::vector<Tensor> rows;  // the logits row of each step, [vocab]
};

Result<GenerationSession> load(const AccuracyRequest& q, Precision p) {
  GenerationOptions o;
  o.session = q.session;
  o.precision = p;
  auto s = GenerationSession::load(q.model, o);
  if (!s.ok()) return std::move(s).take_error().with_where(q.model + " (" + precision_name(p) + ")");
  return s;
}

Result<Greedy> greedy(GenerationSession& s, const std::string& prompt, int64_t steps) {
  Greedy g;
  Status copied;
  s.set_logits_observer([&](SequenceId, int64_t, std::span<const float> row) {
    auto t = Tensor::allocate_uninitialized(DataType::kFloat32, {static_cast<int64_t>(row.size())});
    if (!t.ok()) {
      copied = t.error();
      return;
    }
    std::copy(row.begin(), row.end(), t->mutable_data<float>());
    g.rows.push_back(std::move(t).value());
  });
  SequenceInput in;
  in.prompt = prompt;
  in.request.max_new_tokens = steps;
  in.request.do_sample = false;
  in.request.source = "glassbox accuracy";
  auto r = s.generate(in);
  s.set_logits_observer(nullptr);
  if (!r.ok()) return std::move(r).take_error();
  GB_RETURN_IF_ERROR(copied);
  if (r->finish_reason == FinishReason::kError)
    return make_error(ErrorCode::kInternal, "generation failed: " + r->error, "prompt \"" + prompt + "\"");
  g.tokens = r->token_ids;
  return g;
}

}  // namespace

Status measure_generation_accuracy(const AccuracyRequest& q, AccuracyReport& r) {
  if (q.texts.empty())
    return make_error(ErrorCode::kInvalidArgument, "a decoder directory needs prompts", q.model,
                      "pass --texts FILE: one prompt per line, like the ones you will send");
  if (q.steps < 1)
    return make_error(ErrorCode::kInvalidArgument, "steps must be >= 1, got " + std::to_string(q.steps), q.model);
  GB_ASSIGN_OR_RETURN(GenerationSession reference, load(q, Precision::kFp32));
  GB_ASSIGN_OR_RETURN(GenerationSession candidate, load(q, q.candidate));
  list_lower_precision_ops(candidate.session(), r);
  r.generation_steps = q.steps;
  int64_t steps = 0, agreed = 0;
  double worst = 0;
  for (const auto& prompt : q.texts) {
    GB_ASSIGN_OR_RETURN(Greedy a, greedy(reference, prompt, q.steps));
    GB_ASSIGN_OR_RETURN(Greedy b, greedy(candidate, prompt, q.steps));
    GenerationAccuracy g;
    g.prompt = prompt;
    g.steps = static_cast<int64_t>(a.tokens.size());
    const size_t n = std::min({a.tokens.size(), b.tokens.size(), a.rows.size(), b.rows.size()});
    for (size_t i = 0; i < n; ++i) {
      g.rel_error.push_back(normwise_error(a.rows[i], b.rows[i]));
      worst = std::max(worst, g.rel_error.back());
      if (a.tokens[i] != b.tokens[i]) break;
      ++g.agreed;
    }
    steps += g.steps;
    agreed += g.agreed;
    r.generation.push_back(std::move(g));
  }
  const auto& t = r.thresholds;
  if (!(worst <= t.max_rel_error))
    r.failures.push_back("logits: max relative error " + num(worst) + " > " + num(t.max_rel_error) +
                         " at a step both runs reached with the same tokens");
  const double share = steps > 0 ? static_cast<double>(agreed) / static_cast<double>(steps) : 1.0;
  if (share < t.min_token_agreement)
    r.failures.push_back("greedy token agreement " + std::to_string(agreed) + "/" + std::to_string(steps) + " < " +
                         num(t.min_token_agreement));
  return {};
}

}  // namespace glassbox::diag
