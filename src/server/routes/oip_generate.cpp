#include "server/routes/oip_generate.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>

#include "server/codec/request_fields.h"
#include "server/codec/sampling_fields.h"
#include "server/routes/generation_routes.h"

namespace glassbox::server {
namespace {

using nlohmann::json;

Error bad(std::string what, std::string where = "inputs") {
  return make_error(ErrorCode::kInvalidArgument, std::move(what), std::move(where));
}

// Request parameters that are not generation fields: OIP scheduling and encoding options.
bool scheduling_parameter(const std::string& k) { return k == "timeout" || k == "priority" || k == "binary_data_output"; }

// OIP parameters -> the request overrides. temperature as OpenAI's (0 greedy, > 0 sampling at that
// temperature) unless do_sample is sent; "stop" is a string or (JSON only) a list of strings. A key
// that is neither a generation field nor an OIP scheduling option is refused, never ignored.
std::optional<Error> read_generation_parameters(const json& q, GenerationRequest& r) {
  static const char* fields[] = {"max_tokens", "max_new_tokens", "temperature", "top_p", "top_k", "seed", "stop",
                                 "do_sample", "repetition_penalty"};
  for (const auto& [k, v] : q.items()) {
    if (scheduling_parameter(k)) continue;
    if (std::find(std::begin(fields), std::end(fields), k) == std::end(fields))
      return bad("parameter '" + k + "' is not a generation field; generation models accept max_tokens (or max_new_tokens), "
                 "temperature, top_p, top_k, seed, stop, do_sample, repetition_penalty, and timeout, priority", "parameters");
  }
  static const SamplingDialect oip{.prefix = "parameters.", .quote = false, .max_tokens = {"max_tokens", "max_new_tokens"},
                                   .temperature_zero_is_greedy = true, .sampling_when_any_sent = false,
                                   .top_k_and_penalty = true, .signed_seed = false, .null_is_absent = false};
  if (auto p = read_sampling(q, oip, r)) return bad(std::move(p->message), "parameters");
  return std::nullopt;
}

// The prompts of "text_input": one BYTES tensor [N] or [N, 1], valid UTF-8, at most max_texts_per_request.
Result<std::vector<std::string>> prompts_of(const InferRequest& req, const ServerOptions& options) {
  const OipTensor* text = nullptr;
  for (const auto& t : req.inputs) {
    if (t.name != "text_input")
      return bad("generation models take one input 'text_input' (BYTES, shape [N]), not '" + t.name + "'");
    text = &t;
  }
  if (!text) return bad("missing input 'text_input' (BYTES, shape [N]): the prompt(s) to continue");
  if (text->datatype != "BYTES") return bad("input 'text_input' is " + text->datatype + ", not BYTES");
  if (!(text->shape.size() == 1 || (text->shape.size() == 2 && text->shape[1] == 1)))
    return bad("input 'text_input' has shape " + shape_to_string(text->shape) + ", not [N] (or [N, 1])");
  if (text->bytes.empty()) return bad("input 'text_input' has no elements");
  if (static_cast<int64_t>(text->bytes.size()) > options.max_texts_per_request)
    return bad(std::to_string(text->bytes.size()) + " prompts, over the server's max_texts_per_request (" +
               std::to_string(options.max_texts_per_request) + ")");
  for (size_t i = 0; i < text->bytes.size(); ++i)
    if (!valid_utf8(text->bytes[i])) return bad("text_input element " + std::to_string(i) + " is not valid UTF-8");
  return text->bytes;
}

// The N jobs of one request: each finished one fills its slot; the last answers (the first cut or
// error wins, so the client never sees a partial text_output).
struct Gather {
  Gather(size_t n, Responder r, GenerateAnswer d)
      : left(n), texts(n), policies(n), respond(std::move(r)), done(std::move(d)) {}
  std::mutex mu;
  size_t left = 0;
  std::vector<std::string> texts;
  std::vector<std::string> policies;
  std::optional<GenerationRefusal> failed;
  std::atomic<bool> abandoned{false};  // a later prompt was refused: the queued ones end now
  Responder respond;
  GenerateAnswer done;

  void finished(size_t i, GenerationOutcome o) {
    std::unique_lock<std::mutex> lock(mu);
    if (!o.result) {
      if (!failed) failed = std::move(o.cut);
    } else if (o.result->finish_reason == FinishReason::kError) {
      if (!failed) failed = GenerationRefusal{500, generation_error_code(*o.result), {}, "generation stopped: " + o.result->error, 0};
    } else {
      texts[i] = o.result->text;
      policies[i] = policy_header(o.result->policy);
    }
    if (--left > 0) return;
    lock.unlock();
    if (failed) return respond(generation_refusal_response(*failed));
    const int64_t n = static_cast<int64_t>(texts.size());
    OipTensor out{"text_output", "BYTES", {n}, {}, std::move(texts)};
    json params = json::object();
    // One policy when every prompt ran with the same one; else a list, one per prompt in order (each
    // prompt draws its own seed when none is sent, and a default max_new_tokens is capped per prompt).
    const bool same = std::all_of(policies.begin(), policies.end(), [&](const std::string& p) { return p == policies[0]; });
    std::string echo = policies[0];
    if (!same) {
      echo = "[";
      for (size_t k = 0; k < policies.size(); ++k) echo += (k ? "," : "") + policies[k];
      echo += "]";
    }
    params["policy"] = echo;
    std::vector<OipTensor> outs;
    outs.push_back(std::move(out));
    done(std::move(outs), params);
  }
};

}  // namespace

void infer_generate(ServerContext& ctx, std::shared_ptr<const LoadedModel> m, const InferRequest& req, const Responder& respond,
                    const HttpRequest& origin, GenerateAnswer done) {
  auto prompts = prompts_of(req, ctx.options);
  if (!prompts.ok()) return respond(error_response(prompts.error(), nullptr));
  GenerationRequest overrides;
  if (auto e = read_generation_parameters(req.parameters, overrides)) return respond(error_response(*e, nullptr));
  origin.meta->model = m->name;
  origin.meta->version = m->version;
  auto gather = std::make_shared<Gather>(prompts->size(), respond, std::move(done));
  auto generator = m->generator;
  m.reset();  // the jobs must not own the model (its last reference would stop the worker from its own thread)
  const auto deadline = deadline_of(ctx, *origin.meta);
  auto cancelled = origin.cancelled;
  for (size_t i = 0; i < prompts->size(); ++i) {
    GenerationJob job;
    job.input.prompt = (*prompts)[i];
    job.input.request = overrides;
    job.deadline = deadline;
    job.client_gone = [cancelled, gather] { return gather->abandoned.load() || (cancelled && cancelled->load()); };
    job.on_done = [gather, i](GenerationOutcome o) { gather->finished(i, std::move(o)); };
    if (auto refused = generator->submit(std::move(job), nullptr)) {
      // The request is answered with this refusal (recorded first, so it wins); the prompts already
      // queued end at the worker's next check, and those never submitted count as ended.
      for (size_t k = i; k < prompts->size(); ++k) {
        GenerationOutcome o;
        o.cut = *refused;
        gather->finished(k, std::move(o));
        gather->abandoned.store(true);
      }
      return;
    }
  }
}

}  // namespace glassbox::server
