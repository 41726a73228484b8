// glassbox generate MODEL_DIR PROMPT... [--json] [--explain] [policy flags] [--threads N] [--precision P]
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/session_flags.h"
#include "generation/result_json.h"
#include "glassbox/generation.h"

namespace {

struct GenerateArgs {
  std::string model_dir;
  std::vector<std::string> prompts;
  bool json = false;
  bool explain = false;
  std::optional<int64_t> max_new_tokens, top_k, max_context;
  std::optional<double> temperature, top_p, min_p, repetition_penalty;
  std::optional<uint64_t> seed;
  bool do_sample = false;
  std::vector<std::string> stop;
  std::vector<uint32_t> stop_token_ids;
  glassbox::cli::SessionFlags session;  // --threads, --precision (unset: glassbox.json, else the default)
};

using glassbox::GenerationSession;

// --json with several prompts: one prefill for all of them, then steps that advance them together.
void run_batch(GenerationSession& gen, const std::vector<glassbox::SequenceInput>& inputs) {
  using namespace glassbox;
  auto ids = gen.prefill(inputs);
  if (!ids.ok()) cli::fail("generate", ids.error());
  while (!gen.active().empty()) {
    auto ev = gen.step();
    if (!ev.ok()) cli::fail("generate", ev.error());
  }
  int errors = 0;
  for (SequenceId id : *ids) {
    auto r = gen.take_result(id);
    if (!r.ok()) cli::fail("generate", r.error());
    errors += r->finish_reason == FinishReason::kError;
    std::cout << generation::result_json(*r, gen.decoder()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  if (errors) throw CLI::RuntimeError(1);
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("generate", "Generate text with a decoder model directory (Optimum layout): the "
                                             "completion streams to stdout; --json prints one JSON line per prompt "
                                             "(text, ids, finish_reason, the policy with sources, timings)");
  auto a = std::make_shared<GenerateArgs>();
  cmd->add_option("model_dir", a->model_dir, "model directory: model.onnx or onnx/model.onnx, tokenizer.json, config.json, "
                                             "optional generation_config.json, tokenizer_config.json, glassbox.json")->required();
  cmd->add_option("prompts", a->prompts, "prompt text(s); several run as one batch with --json");
  cmd->add_flag("--json", a->json, "one JSON line per prompt instead of streamed text (default: stream text)");
  cmd->add_flag("--explain", a->explain, "print the decoder, KV memory, the default policy with sources, glassbox's "
                                         "defaults with reason and risk and the load warnings as JSON, and exit");
  cmd->add_option("--max-new-tokens", a->max_new_tokens, "tokens generated at most (default: glassbox.json, "
                  "generation_config.json, else 256 capped at the context left)");
  auto* sample = cmd->add_flag("--do-sample,!--greedy", a->do_sample, "sample (or --greedy: argmax) (default: "
                               "generation_config.json do_sample, else greedy)");
  cmd->add_option("--temperature", a->temperature, "sampling temperature > 0 (default: the model's files, else 1)");
  cmd->add_option("--top-k", a->top_k, "keep the k most likely tokens, 0 = off (default: the model's files, else off)");
  cmd->add_option("--top-p", a->top_p, "nucleus mass in (0, 1], 1 = off (default: the model's files, else off)");
  cmd->add_option("--min-p", a->min_p, "keep tokens at least min-p x the top probability, 0 = off (default: off)");
  cmd->add_option("--repetition-penalty", a->repetition_penalty, "divide seen tokens' positive logits (multiply "
                  "negative ones) by this, 1 = off (default: the model's files, else off)");
  cmd->add_option("--seed", a->seed, "sampling seed (default: random per request, reported in --json)");
  cmd->add_option("--stop", a->stop, "stop string (repeatable); the text ends before it");
  cmd->add_option("--stop-token-id", a->stop_token_ids, "extra stop token id (repeatable), added to the model's EOS set");
  cmd->add_option("--max-context", a->max_context, "tokens one sequence may hold, prompt + generated (default: "
                  "glassbox.json generation.max_context, else config.json max_position_embeddings)");
  using glassbox::cli::SessionFlag;
  glassbox::cli::add_session_flags(cmd, a->session, {SessionFlag::kThreads, SessionFlag::kPrecision});
  cmd->callback([a, sample] {
    using namespace glassbox;
    GenerationOptions opts;
    if (a->session.threads) opts.session.threads = *a->session.threads;
    opts.precision = a->session.precision;  // over glassbox.json "precision"
    opts.max_context = a->max_context;
    opts.max_context_source = "flag --max-context";
    auto gen = GenerationSession::load(a->model_dir, opts);
    if (!gen.ok()) cli::fail("generate", gen.error());
    if (a->explain) {
      std::cout << generation::explain_json(*gen).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      return;
    }
    for (const auto& w : gen->warnings()) std::cerr << "glassbox generate: warning: " << w.what << " (fix: " << w.fix << ")\n";
    if (a->prompts.empty())
      cli::fail("generate", make_error(ErrorCode::kInvalidArgument, "no prompt given", {}, "glassbox generate MODEL_DIR \"prompt\""));
    GenerationRequest req;
    req.source = "flag";
    req.max_new_tokens = a->max_new_tokens;
    if (sample->count()) req.do_sample = a->do_sample;
    req.temperature = a->temperature;
    req.top_k = a->top_k;
    req.top_p = a->top_p;
    req.min_p = a->min_p;
    req.repetition_penalty = a->repetition_penalty;
    req.seed = a->seed;
    req.stop_strings = a->stop;
    req.stop_token_ids = a->stop_token_ids;
    std::vector<SequenceInput> inputs;
    for (const auto& p : a->prompts) inputs.push_back({p, std::nullopt, req});
    if (a->json) return run_batch(*gen, inputs);
    for (const auto& in : inputs) {
      auto r = gen->generate(in, [](const std::string& text) { std::cout << text << std::flush; });
      std::cout << "\n";
      if (!r.ok()) cli::fail("generate", r.error());
    }
  });
}
