// glassbox generate MODEL_DIR PROMPT... [--json] [--explain] [policy flags] [--threads N] [--precision P]
// glassbox generate MODEL_DIR --chat MESSAGES.json|- [--continue-final-message | --add-generation-prompt] [...]
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_common.h"
#include "cli/session_flags.h"
#include "glassbox/generation_json.h"
#include "glassbox/chat_prompt.h"
#include "glassbox/generation.h"

namespace {

struct GenerateArgs {
  std::string model_dir;
  std::vector<std::string> prompts;
  bool json = false;
  bool explain = false;
  std::optional<int64_t> max_new_tokens, top_k, max_context, prefill_chunk_tokens;
  std::optional<double> temperature, top_p, min_p, repetition_penalty;
  std::optional<uint64_t> seed;
  bool do_sample = false;
  std::vector<std::string> stop;
  std::vector<uint32_t> stop_token_ids;
  std::string chat;  // messages file, "-" = stdin
  bool add_generation_prompt = false, continue_final_message = false;
  std::string template_name;
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

glassbox::GenerationRequest request_from(const GenerateArgs& a, bool sample_given) {
  glassbox::GenerationRequest req;
  req.source = "flag";
  req.max_new_tokens = a.max_new_tokens;
  if (sample_given) req.do_sample = a.do_sample;
  req.temperature = a.temperature;
  req.top_k = a.top_k;
  req.top_p = a.top_p;
  req.min_p = a.min_p;
  req.repetition_penalty = a.repetition_penalty;
  req.seed = a.seed;
  req.stop_strings = a.stop;
  req.stop_token_ids = a.stop_token_ids;
  return req;
}

glassbox::Result<std::string> read_messages(const std::string& path) {
  std::stringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return glassbox::make_error(glassbox::ErrorCode::kIo, "cannot read the messages file", path,
                                      "give a JSON file with the messages array, or - for stdin");
  ss << f.rdbuf();
  return ss.str();
}

glassbox::ChatPromptRequest chat_request(const GenerateArgs& a, std::string messages_json) {
  glassbox::ChatPromptRequest creq;
  creq.messages_json = std::move(messages_json);
  if (a.add_generation_prompt) creq.add_generation_prompt = true;
  if (a.continue_final_message) creq.continue_final_message = true;
  creq.template_options.template_name = a.template_name;
  creq.source = "flag";
  return creq;
}

glassbox::ChatTemplate load_template(const GenerateArgs& a) {
  auto tmpl = glassbox::ChatTemplate::from_model_dir(a.model_dir);
  if (!tmpl.ok()) glassbox::cli::fail("generate", tmpl.error());
  return std::move(tmpl).value();
}

// --chat FILE: the messages rendered by the model's own chat template, tokenized without adding special
// tokens again, then generated from those ids; --json adds "chat" (template source, flags with sources,
// the rendered prompt and its ids).
void run_chat(GenerationSession& gen, const GenerateArgs& a, glassbox::GenerationRequest req) {
  using namespace glassbox;
  const ChatTemplate tmpl = load_template(a);
  auto messages = read_messages(a.chat);
  if (!messages.ok()) cli::fail("generate", messages.error());
  auto prompt = render_chat(tmpl, gen.tokenizer(), chat_request(a, std::move(messages).value()));
  if (!prompt.ok()) cli::fail("generate", std::move(prompt).take_error().with_where(a.chat == "-" ? "stdin" : a.chat));
  SequenceInput in{prompt->text, prompt->ids, std::move(req)};
  auto r = gen.generate(in, [&](const std::string& text) {
    if (!a.json) std::cout << text << std::flush;
  });
  if (!r.ok()) cli::fail("generate", r.error());
  if (!a.json) {
    std::cout << "\n";
    return;
  }
  mark_chat_prompt(r->policy);
  auto j = generation::result_json(*r, gen.decoder());
  j["chat"] = generation::chat_json(*prompt);
  std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

// --chat with no file on a terminal: one user message per line ("> " on stderr), each reply streamed to
// stdout and kept in the conversation, until end of input. A turn that fails is reported and dropped.
void run_interactive(GenerationSession& gen, const GenerateArgs& a, const glassbox::GenerationRequest& req) {
  using namespace glassbox;
  const ChatTemplate tmpl = load_template(a);
  nlohmann::json messages = nlohmann::json::array();
  for (std::string line; std::cerr << "> " << std::flush, std::getline(std::cin, line);) {
    if (line.empty()) continue;
    messages.push_back({{"role", "user"}, {"content", line}});
    auto prompt = render_chat(tmpl, gen.tokenizer(), chat_request(a, messages.dump()));
    Result<GenerationResult> r = prompt.ok() ? gen.generate({prompt->text, prompt->ids, req}, [](const std::string& text) {
      std::cout << text << std::flush;
    }) : Result<GenerationResult>(std::move(prompt).take_error());
    std::cout << "\n" << std::flush;
    if (!r.ok()) {
      std::cerr << "glassbox generate: " << r.error().to_string() << " (this turn is dropped)\n";
      messages.erase(messages.end() - 1);
      continue;
    }
    messages.push_back({{"role", "assistant"}, {"content", r->text}});
  }
  std::cerr << "\n";
}

// The session-wide sizes: --max-context and --prefill-chunk-tokens.
void add_context_flags(CLI::App* cmd, GenerateArgs& a) {
  cmd->add_option("--max-context", a.max_context, "tokens one sequence may hold, prompt + generated (default: "
                  "glassbox.json generation.max_context, else config.json max_position_embeddings)");
  cmd->add_option("--prefill-chunk-tokens", a.prefill_chunk_tokens, "prompt tokens per prefill run; a longer prompt "
                  "runs in chunks, each after the K/V so far, with the same result (default: 256)");
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
  auto* chat = cmd->add_option("--chat", a->chat, "JSON file with a messages array ([{\"role\", \"content\"}], as OpenAI and "
                               "Hugging Face write it; - = stdin), rendered by the model's own chat template "
                               "(tokenizer_config.json chat_template or chat_template.jinja; none is an error) and "
                               "tokenized without adding special tokens again; no file with stdin a terminal: an "
                               "interactive chat, one user message per line")->expected(0, 1);
  cmd->add_flag("--continue-final-message", a->continue_final_message, "--chat: continue the last (assistant) "
                "message instead of starting a new turn (default: when the last message's role is assistant, as "
                "transformers' text-generation pipeline)")->needs(chat);
  cmd->add_flag("--add-generation-prompt", a->add_generation_prompt, "--chat: append the header of a new assistant "
                "turn (default: unless continuing the final message); not with --continue-final-message")->needs(chat);
  cmd->add_option("--chat-template-name", a->template_name, "--chat: which of the model's named templates (default: "
                  "\"default\", as transformers chooses)")->needs(chat);
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
  add_context_flags(cmd, *a);
  using glassbox::cli::SessionFlag;
  glassbox::cli::add_session_flags(cmd, a->session,
                                   {SessionFlag::kThreads, SessionFlag::kOptLevel, SessionFlag::kDisablePass, SessionFlag::kPrecision});
  cmd->callback([a, sample, chat] {
    using namespace glassbox;
    GenerationOptions opts;
    a->session.apply(opts.session);
    opts.precision = a->session.precision;  // over glassbox.json "precision"
    opts.max_context = a->max_context;
    opts.max_context_source = "flag --max-context";
    if (a->prefill_chunk_tokens) opts.prefill_chunk_tokens = *a->prefill_chunk_tokens;
    auto gen = GenerationSession::load(a->model_dir, opts);
    if (!gen.ok()) cli::fail("generate", gen.error());
    if (a->explain) {
      std::cout << generation::explain_json(*gen).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      return;
    }
    for (const auto& w : gen->warnings()) std::cerr << "glassbox generate: warning: " << w.what << " (fix: " << w.fix << ")\n";
    GenerationRequest req = request_from(*a, sample->count() > 0);
    if (chat->count()) {
      if (!a->prompts.empty())
        cli::fail("generate", make_error(ErrorCode::kInvalidArgument, "prompt text given with --chat", "--chat",
                                         "give either prompts or --chat MESSAGES.json"));
      if (!a->chat.empty()) return run_chat(*gen, *a, std::move(req));
      if (a->json || !isatty(STDIN_FILENO))
        cli::fail("generate", make_error(ErrorCode::kInvalidArgument, "--chat without a messages file", "--chat",
                                         "give --chat MESSAGES.json (- = stdin); the interactive chat needs a "
                                         "terminal on stdin and no --json"));
      return run_interactive(*gen, *a, req);
    }
    if (a->prompts.empty())
      cli::fail("generate", make_error(ErrorCode::kInvalidArgument, "no prompt given", {},
                                       "glassbox generate MODEL_DIR \"prompt\", or --chat MESSAGES.json"));
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
