#include "server/routes/generation_routes.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

#include "generation/decoder_layout.h"
#include "glassbox/generation_json.h"
#include "glassbox/version.h"
#include "server/codec/json_body.h"
#include "server/codec/sampling_fields.h"

namespace glassbox::server {
namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string dump(const ojson& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// --- OpenAI's error shape -----------------------------------------------------------------------

// A refusal by HTTP status, with OpenAI's specific error.code as the detail; the route table
// renders it in the route's protocol (server/routes/refusal.h).
RefusalCode refusal_code_of(int status) {
  switch (status) {
    case 404: return RefusalCode::kModelNotFound;
    case 405: return RefusalCode::kMethodNotAllowed;
    case 413: return RefusalCode::kTooLarge;
    case 429: return RefusalCode::kQueueFull;
    case 503: return RefusalCode::kModelUnavailable;
    case 504: return RefusalCode::kDeadline;
    default: return status >= 500 ? RefusalCode::kInternal : RefusalCode::kInvalidRequest;
  }
}

HttpResponse openai_error(int status, const std::string& message, const std::string& param = {}, const std::string& code = {}) {
  Refusal r{refusal_code_of(status), message, param};
  if (code == "draining") r.code = RefusalCode::kDraining;
  r.detail = code;
  HttpResponse res = refuse(std::move(r));
  res.status = status;  // the status the generation rule chose (e.g. 400 context_length_exceeded)
  return res;
}

HttpResponse refusal_response(const GenerationRefusal& r) { return generation_refusal_response(r); }

// The "glassbox" object of a final body/chunk: finish details, timings, KV reservation, policy.
ojson glassbox_object(const GenerationResult& r, const GenerationOutcome& o, const DecoderInfo& d) {
  ojson j = generation::result_json(r, d);
  j.erase("text");
  j["timings"]["queue_ms"] = o.queue_s * 1000;
  return j;
}

// --- request parameters -----------------------------------------------------------------------------

struct ApiError {
  int status = 400;
  std::string message, param, code;
};

struct Params {
  GenerationRequest request;
  bool stream = false;
  bool include_usage = false;
  bool details = false;  // TGI
};

std::optional<ApiError> bad(std::string message, std::string param, std::string code = "invalid_value") {
  return ApiError{400, std::move(message), std::move(param), std::move(code)};
}

bool present(const json& b, const char* k) { return b.contains(k) && !b[k].is_null(); }

// A sampling field the request got wrong, as OpenAI's invalid_value error.
std::optional<ApiError> bad_field(std::optional<FieldProblem> p) {
  if (!p) return std::nullopt;
  return bad(std::move(p->message), std::move(p->field));
}

// OpenAI sampling fields. temperature 0 = greedy, > 0 = sampling at that temperature; fields not
// sent keep the model's declared policy (the echo says which source each came from).
std::optional<ApiError> read_openai(const json& b, Params& p) {
  static const char* refused[] = {"logprobs", "top_logprobs", "tools", "tool_choice", "functions", "function_call",
                                  "response_format", "logit_bias", "echo", "suffix", "best_of"};
  for (const char* k : refused)
    if (present(b, k) && b[k] != json(false))
      return bad(std::string("\"") + k + "\" is not supported by this server (glassbox serves plain text generation); "
                 "leave it out", k, "unsupported_parameter");
  for (const char* k : {"presence_penalty", "frequency_penalty"})
    if (present(b, k) && (!b[k].is_number() || b[k].get<double>() != 0))
      return bad(std::string("\"") + k + "\" is not supported (only 0); glassbox applies repetition_penalty from the "
                 "model's policy instead", k, "unsupported_parameter");
  if (present(b, "n") && (!b["n"].is_number_integer() || b["n"].get<int64_t>() != 1))
    return bad("\"n\" must be 1: one choice per request (send several requests; they are batched together)", "n",
               "unsupported_parameter");
  static const SamplingDialect openai{.prefix = "", .quote = true, .max_tokens = {"max_tokens", "max_completion_tokens"},
                                      .temperature_zero_is_greedy = true, .sampling_when_any_sent = false,
                                      .top_k_and_penalty = false, .signed_seed = true, .null_is_absent = true};
  if (auto e = bad_field(read_sampling(b, openai, p.request))) return e;
  if (present(b, "stream")) {
    if (!b["stream"].is_boolean()) return bad("\"stream\" must be a boolean", "stream");
    p.stream = b["stream"].get<bool>();
  }
  if (present(b, "stream_options")) {
    const json& so = b["stream_options"];
    if (!so.is_object()) return bad("\"stream_options\" must be an object", "stream_options");
    if (!p.stream) return bad("\"stream_options\" is only allowed with \"stream\": true", "stream_options");
    if (present(so, "include_usage")) {
      if (!so["include_usage"].is_boolean()) return bad("\"stream_options.include_usage\" must be a boolean", "stream_options");
      p.include_usage = so["include_usage"].get<bool>();
    }
  }
  return std::nullopt;
}

// TGI "parameters": sampling is on when do_sample is true, or (do_sample not sent) when any of
// temperature, top_k, top_p is sent, as TGI does.
std::optional<ApiError> read_tgi(const json& b, Params& p) {
  if (present(b, "stream") && b["stream"].is_boolean()) p.stream = b["stream"].get<bool>();
  if (!present(b, "parameters")) return std::nullopt;
  const json& q = b["parameters"];
  if (!q.is_object()) return bad("\"parameters\" must be an object", "parameters");
  static const SamplingDialect tgi{.prefix = "parameters.", .quote = true, .max_tokens = {"max_new_tokens"},
                                   .temperature_zero_is_greedy = false, .sampling_when_any_sent = true,
                                   .top_k_and_penalty = true, .signed_seed = false, .null_is_absent = true};
  if (auto e = bad_field(read_sampling(q, tgi, p.request))) return e;
  if (present(q, "details")) p.details = q["details"].is_boolean() && q["details"].get<bool>();
  for (const char* k : {"best_of", "decoder_input_details", "grammar", "top_n_tokens", "truncate", "watermark", "typical_p",
                        "frequency_penalty", "return_full_text"})
    if (present(q, k) && q[k] != json(false)) return bad(std::string("\"parameters.") + k + "\" is not supported", k);
  return std::nullopt;
}

// --- shared plumbing ----------------------------------------------------------------------------------

std::string new_id(const char* prefix) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device{}();
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s%016llx%08llx", prefix, static_cast<unsigned long long>(salt),
                static_cast<unsigned long long>(counter.fetch_add(1)));
  return buf;
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string sse(const ojson& j) { return "data: " + dump(j) + "\n\n"; }

// A generation model by name: OpenAI's "model" field.
std::shared_ptr<const LoadedModel> find_generator(ServerContext& ctx, const json& body, std::optional<ApiError>& err) {
  if (!body.contains("model") || !body["model"].is_string()) {
    err = bad("\"model\" (a string) is required", "model", "missing_required_parameter");
    return nullptr;
  }
  const std::string name = body["model"].get<std::string>();
  if (!valid_model_name(name)) {
    err = ApiError{404, "model '" + name.substr(0, 128) + "' does not exist", "model", "model_not_found"};
    return nullptr;
  }
  ModelLookup look = ctx.repository.get(name);
  if (!look.model) {
    err = ApiError{look.status, look.message, "model", look.status == 404 ? "model_not_found" : "model_not_ready"};
    return nullptr;
  }
  if (!look.model->is_generator()) {
    err = bad("model '" + name + "' is not a generation model (" + generation::kGenerationModelRule + ")", "model", "model_not_supported");
    return nullptr;
  }
  return look.model;
}

ojson usage_json(const GenerationResult& r) {
  return ojson{{"prompt_tokens", r.prompt_tokens}, {"completion_tokens", r.completion_tokens},
               {"total_tokens", r.prompt_tokens + r.completion_tokens}};
}

// One OpenAI request in flight: its identity and what its stream has sent.
struct OpenAiCall {
  bool chat = true;
  std::string id;
  int64_t created = 0;
  std::string model;
  DecoderInfo decoder;
  Params params;
  std::shared_ptr<ResponseStream> stream;  // stream: true

  ojson chunk(ojson choice) const {
    ojson j{{"id", id}, {"object", chat ? "chat.completion.chunk" : "text_completion"}, {"created", created}, {"model", model},
            {"system_fingerprint", std::string("glassbox-") + glassbox::version()}};
    j["choices"] = choice.is_null() ? ojson::array() : ojson::array({std::move(choice)});
    if (params.include_usage) j["usage"] = nullptr;
    return j;
  }
  ojson choice(const std::string& text, const ojson& finish) const {
    if (chat) return ojson{{"index", 0}, {"delta", text.empty() ? ojson::object() : ojson{{"content", text}}}, {"logprobs", nullptr}, {"finish_reason", finish}};
    return ojson{{"text", text}, {"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish}};
  }
};

const char* openai_finish(FinishReason f) { return f == FinishReason::kLength ? "length" : "stop"; }

void openai_stream_done(const OpenAiCall& c, GenerationOutcome o) {
  ResponseStream& s = *c.stream;
  if (s.client_gone()) return s.abort();
  if (!o.result || o.result->finish_reason == FinishReason::kError) {
    const std::string msg = o.result ? "generation stopped: " + o.result->error : o.cut.message;
    const int status = o.result ? 500 : o.cut.status;
    const std::string code = o.result ? generation_error_code(*o.result) : o.cut.code;
    s.write(sse(ojson{{"error", {{"message", msg + " (after " + std::to_string(o.tokens) + " tokens)"},
                                 {"type", status >= 500 ? "server_error" : "invalid_request_error"}, {"param", nullptr}, {"code", code}}}}));
    return s.end();  // no [DONE]: the error event is the end, never a normal-looking stop
  }
  ojson last = c.chunk(c.choice("", openai_finish(o.result->finish_reason)));
  last["glassbox"] = glassbox_object(*o.result, o, c.decoder);
  s.write(sse(last));
  if (c.params.include_usage) {
    ojson u = c.chunk(nullptr);
    u["usage"] = usage_json(*o.result);
    s.write(sse(u));
  }
  s.write("data: [DONE]\n\n");
  s.end();
}

HttpResponse openai_body(const OpenAiCall& c, const GenerationOutcome& o) {
  if (!o.result) return openai_error(o.cut.status, o.cut.message, o.cut.param, o.cut.code);
  const GenerationResult& r = *o.result;
  if (r.finish_reason == FinishReason::kError) return openai_error(500, "generation stopped: " + r.error, {}, generation_error_code(r));
  ojson choice = c.chat ? ojson{{"index", 0}, {"message", {{"role", "assistant"}, {"content", r.text}}}, {"logprobs", nullptr},
                                {"finish_reason", openai_finish(r.finish_reason)}}
                        : ojson{{"text", r.text}, {"index", 0}, {"logprobs", nullptr}, {"finish_reason", openai_finish(r.finish_reason)}};
  ojson body{{"id", c.id}, {"object", c.chat ? "chat.completion" : "text_completion"}, {"created", c.created}, {"model", c.model},
             {"system_fingerprint", std::string("glassbox-") + glassbox::version()}, {"choices", ojson::array({std::move(choice)})},
             {"usage", usage_json(r)}, {"glassbox", glassbox_object(r, o, c.decoder)}};
  HttpResponse res = json_response(200, body);
  res.headers.emplace_back("X-Glassbox-Policy", policy_header(r.policy));
  return res;
}

// Submits the job; answers a refusal at once, else the stream's headers (stream) or nothing yet.
void submit_openai(ServerContext& ctx, HttpRequest& req, std::shared_ptr<const LoadedModel> m, SequenceInput input,
                   std::shared_ptr<OpenAiCall> call, const Responder& respond) {
  req.meta->model = m->name;
  req.meta->version = m->version;
  GenerationJob job;
  job.input = std::move(input);
  job.input.request = call->params.request;
  job.deadline = deadline_of(ctx, *req.meta);
  auto cancelled = req.cancelled;
  const std::string name = m->name;
  if (call->params.stream) {
    call->stream = std::make_shared<ResponseStream>();
    if (call->chat) {  // the role comes first, before any token the worker may queue
      ojson first = call->chunk(ojson{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"logprobs", nullptr}, {"finish_reason", nullptr}});
      call->stream->write(sse(first));
    }
    job.client_gone = [call, cancelled] { return call->stream->client_gone() || cancelled->load(); };
    job.on_token = [call](const StepEvent& ev) {
      if (!ev.text.empty()) call->stream->write(sse(call->chunk(call->choice(ev.text, nullptr))));
    };
    job.on_done = [call](GenerationOutcome o) { openai_stream_done(*call, std::move(o)); };
  } else {
    job.client_gone = [cancelled] { return cancelled->load(); };
    job.on_done = [call, respond](GenerationOutcome o) { respond(openai_body(*call, o)); };
  }
  GenerationPolicy policy;
  auto generator = m->generator;
  m.reset();  // the job must not own the model: its last reference would stop the worker from its own thread
  if (auto refused = generator->submit(std::move(job), &policy)) return respond(refusal_response(*refused));
  if (!call->params.stream) return;  // on_done answers; the header is added there
  HttpResponse r;
  r.content_type = "text/event-stream; charset=utf-8";
  r.headers.emplace_back("Cache-Control", "no-cache");
  r.headers.emplace_back("X-Accel-Buffering", "no");
  r.headers.emplace_back("X-Glassbox-Policy", policy_header(policy));
  r.stream = call->stream;
  respond(std::move(r));
}

// --- OpenAI routes ------------------------------------------------------------------------------------

void openai_completion(ServerContext& ctx, HttpRequest&& req, bool chat, Responder respond) {
  req.meta->route = chat ? "/v1/chat/completions" : "/v1/completions";
  if (req.method != "POST") return respond(openai_error(405, "method " + req.method + " is not allowed on " + req.meta->route));
  if (ctx.draining.load()) return respond(openai_error(503, "server is shutting down: no new work is admitted", {}, "draining"));
  auto body = parse_json_body(req.body, ctx.options.max_json_depth);
  if (!body.ok()) return respond(openai_error(400, body.error().to_string()));
  if (!body->is_object()) return respond(openai_error(400, "the request body must be a JSON object"));
  std::optional<ApiError> err;
  auto m = find_generator(ctx, *body, err);
  if (!m) return respond(openai_error(err->status, err->message, err->param, err->code));
  auto call = std::make_shared<OpenAiCall>();
  call->chat = chat;
  call->id = new_id(chat ? "chatcmpl-" : "cmpl-");
  call->created = unix_now();
  call->model = m->name;
  call->decoder = m->generator->session().decoder();
  call->decoder.model_path.clear();  // a server path
  if (auto e = read_openai(*body, call->params)) return respond(openai_error(e->status, e->message, e->param, e->code));
  SequenceInput input;
  if (chat) {
    if (!body->contains("messages") || !(*body)["messages"].is_array() || (*body)["messages"].empty())
      return respond(openai_error(400, "\"messages\" (a non-empty list) is required", "messages", "missing_required_parameter"));
    if (!m->chat_template)
      return respond(openai_error(400, "model '" + m->name + "' has no chat template, so chat messages cannot be turned into a "
                                       "prompt (glassbox never substitutes a generic template): " + m->chat_template_error +
                                       "; use POST /v1/completions with a prompt", "messages", "chat_template_missing"));
    ChatTemplateOptions topts;
    topts.add_generation_prompt = true;
    auto text = m->chat_template->render((*body)["messages"].dump(), topts);
    if (!text.ok()) return respond(openai_error(400, "chat template: " + client_message(text.error(), *m), "messages", "chat_template_error"));
    input.prompt = std::move(text).value();
    call->params.request.add_special_tokens = false;  // the template wrote the special tokens the model wants
  } else {
    if (!body->contains("prompt")) return respond(openai_error(400, "\"prompt\" is required", "prompt", "missing_required_parameter"));
    const json& p = (*body)["prompt"];
    const json* one = &p;
    if (p.is_array() && p.size() == 1 && (p[0].is_string() || p[0].is_array())) one = &p[0];
    if (one->is_string()) {
      input.prompt = one->get<std::string>();
    } else if (one->is_array() && !one->empty() && std::all_of(one->begin(), one->end(), [](const json& x) { return x.is_number_unsigned(); })) {
      std::vector<uint32_t> ids;
      for (const auto& x : *one) ids.push_back(static_cast<uint32_t>(std::min<uint64_t>(x.get<uint64_t>(), UINT32_MAX)));
      input.prompt_ids = std::move(ids);
    } else {
      return respond(openai_error(400, "\"prompt\" must be a string, a list of token ids, or a list holding one of those "
                                       "(one prompt per request)", "prompt", "invalid_value"));
    }
  }
  submit_openai(ctx, req, std::move(m), std::move(input), std::move(call), respond);
}

void openai_model_list(ServerContext& ctx, HttpRequest&& req, Responder respond) {
  req.meta->route = "/v1/models";
  if (req.method != "GET") return respond(openai_error(405, "method " + req.method + " is not allowed on /v1/models"));
  ojson data = ojson::array();
  for (const auto& e : ctx.repository.index()) {
    if (e.state != "READY") continue;
    auto m = ctx.repository.get(e.name).model;
    if (!m) continue;
    data.push_back({{"id", e.name}, {"object", "model"}, {"created", 0}, {"owned_by", "glassbox"},
                    {"glassbox", {{"kind", m->is_generator() ? "generation" : m->is_embedder() ? "embedding" : m->pipeline ? "text" : "tensor"},
                                  {"version", e.version}}}});
  }
  respond(json_response(200, ojson{{"object", "list"}, {"data", std::move(data)}}));
}

// --- TGI routes -------------------------------------------------------------------------------------

const char* tgi_finish(const GenerationResult& r) {
  if (r.finish_reason == FinishReason::kLength) return "length";
  return r.stop_string ? "stop_sequence" : "eos_token";
}

ojson tgi_details(const GenerationResult& r, const GenerationOutcome& o, const DecoderInfo& d) {
  ojson j{{"finish_reason", tgi_finish(r)}, {"generated_tokens", r.completion_tokens},
          {"seed", r.policy.do_sample.value ? json(r.policy.seed.value) : json(nullptr)}};
  j["glassbox"] = glassbox_object(r, o, d);
  return j;
}

// TGI's error shape {"error", "error_type"} is rendered from the refusal by the route table (protocol tei).
HttpResponse tgi_err(int status, const std::string& msg, const std::string& type) { return openai_error(status, msg, {}, type); }

// The worker's callbacks of a TGI request: SSE token events (the finishing token's text goes in
// the final event, with generated_text and details), or one JSON body.
void bind_tgi_callbacks(GenerationJob& job, std::shared_ptr<ResponseStream> stream, const DecoderInfo& decoder, bool details,
                        std::shared_ptr<std::atomic<bool>> cancelled, const Responder& respond) {
  if (!stream) {
    job.client_gone = [cancelled] { return cancelled->load(); };
    job.on_done = [respond, decoder, details](GenerationOutcome o) {
      if (!o.result) return respond(tgi_err(o.cut.status, o.cut.message, o.cut.code));
      if (o.result->finish_reason == FinishReason::kError) return respond(tgi_err(500, "generation stopped: " + o.result->error, generation_error_code(*o.result)));
      ojson out{{"generated_text", o.result->text}};
      ojson d = tgi_details(*o.result, o, decoder);
      if (details) out["details"] = d;
      else out["glassbox"] = d["glassbox"];
      HttpResponse r = json_response(200, out);
      r.headers.emplace_back("X-Glassbox-Policy", policy_header(o.result->policy));
      respond(std::move(r));
    };
    return;
  }
  auto index = std::make_shared<int64_t>(0);
  auto last_text = std::make_shared<std::string>();
  job.client_gone = [stream, cancelled] { return stream->client_gone() || cancelled->load(); };
  job.on_token = [stream, index, last_text](const StepEvent& ev) {
    ojson t{{"index", ++*index}, {"token", {{"id", *ev.token}, {"text", ev.text}, {"logprob", nullptr}, {"special", false}}},
            {"generated_text", nullptr}, {"details", nullptr}};
    if (ev.finished == FinishReason::kNone) stream->write(sse(t));
    else *last_text = ev.text;
  };
  job.on_done = [stream, decoder, index, last_text](GenerationOutcome o) {
    if (stream->client_gone()) return stream->abort();
    if (!o.result || o.result->finish_reason == FinishReason::kError) {
      stream->write(sse(ojson{{"error", o.result ? "generation stopped: " + o.result->error : o.cut.message},
                              {"error_type", o.result ? generation_error_code(*o.result) : o.cut.code}}));
      return stream->end();
    }
    const GenerationResult& r = *o.result;
    const uint32_t last = r.token_ids.empty() ? 0 : r.token_ids.back();
    ojson t{{"index", *index}, {"token", {{"id", last}, {"text", *last_text}, {"logprob", nullptr}, {"special", r.stop_token.has_value()}}},
            {"generated_text", r.text}, {"details", tgi_details(r, o, decoder)}};
    stream->write(sse(t));
    stream->end();
  };
}

void tgi_generate_route(ServerContext& ctx, HttpRequest&& req, bool stream_route, Responder respond) {
  req.meta->route = stream_route ? "/generate_stream" : "/generate";
  if (req.method != "POST") return respond(tgi_err(405, "method " + req.method + " is not allowed on " + req.meta->route, "validation"));
  if (ctx.draining.load()) return respond(tgi_err(503, "server is shutting down: no new work is admitted", "draining"));
  auto body = parse_json_body(req.body, ctx.options.max_json_depth);
  if (!body.ok() || !body->is_object()) return respond(tgi_err(400, body.ok() ? "the request body must be a JSON object" : body.error().to_string(), "validation"));
  if (!body->contains("inputs") || !(*body)["inputs"].is_string()) return respond(tgi_err(400, "\"inputs\" (a string) is required", "validation"));
  // TGI serves one model: the request may name it ("model", glassbox's extension), else the only generation model.
  std::shared_ptr<const LoadedModel> m;
  if (body->contains("model")) {
    std::optional<ApiError> err;
    m = find_generator(ctx, *body, err);
    if (!m) return respond(tgi_err(err->status, err->message, "validation"));
  } else {
    int count = 0;
    for (const auto& e : ctx.repository.index())
      if (auto x = ctx.repository.get(e.name).model; x && x->is_generator()) {
        m = x;
        ++count;
      }
    if (count != 1)
      return respond(tgi_err(400, count == 0 ? "no generation model is ready on this server"
                                              : "several generation models are served: name one with \"model\"", "validation"));
  }
  Params params;
  if (auto e = read_tgi(*body, params)) return respond(tgi_err(400, e->message, "validation"));
  req.meta->model = m->name;
  req.meta->version = m->version;
  GenerationJob job;
  job.input.prompt = (*body)["inputs"].get<std::string>();
  job.input.request = params.request;
  job.deadline = deadline_of(ctx, *req.meta);
  auto cancelled = req.cancelled;
  DecoderInfo decoder = m->generator->session().decoder();
  decoder.model_path.clear();
  auto stream = stream_route ? std::make_shared<ResponseStream>() : nullptr;
  bind_tgi_callbacks(job, stream, decoder, params.details, cancelled, respond);
  GenerationPolicy policy;
  auto generator = m->generator;
  m.reset();
  if (auto refused = generator->submit(std::move(job), &policy)) return respond(refusal_response(*refused));
  if (!stream) return;
  HttpResponse r;
  r.content_type = "text/event-stream; charset=utf-8";
  r.headers.emplace_back("Cache-Control", "no-cache");
  r.headers.emplace_back("X-Glassbox-Policy", policy_header(policy));
  r.stream = stream;
  respond(std::move(r));
}

}  // namespace

HttpResponse generation_refusal_response(const GenerationRefusal& r) {
  HttpResponse res = openai_error(r.status, r.message, r.param, r.code);
  if (r.retry_after_s > 0) {
    res.refusal->retry_after_s = r.retry_after_s;
    res.headers.emplace_back("Retry-After", std::to_string(r.retry_after_s));
  }
  return res;
}

const char* generation_error_code(const GenerationResult& r) {
  return r.non_finite_logits ? "nonfinite_logits" : "generation_error";
}

std::string policy_header(const GenerationPolicy& p) {
  const ojson full = generation::policy_json(p);
  ojson compact;
  for (const auto& [k, v] : full.items()) compact[k] = ojson::array({v["value"], v["source"]});
  return compact.dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace);
}

GB_ROUTE_HANDLER(openai_chat_completions) { openai_completion(ctx, std::move(req), true, std::move(respond)); (void)params; }
GB_ROUTE_HANDLER(openai_completions) { openai_completion(ctx, std::move(req), false, std::move(respond)); (void)params; }
GB_ROUTE_HANDLER(openai_models) { openai_model_list(ctx, std::move(req), std::move(respond)); (void)params; }
GB_ROUTE_HANDLER(tgi_generate) { tgi_generate_route(ctx, std::move(req), false, std::move(respond)); (void)params; }
GB_ROUTE_HANDLER(tgi_generate_stream) { tgi_generate_route(ctx, std::move(req), true, std::move(respond)); (void)params; }

}  // namespace glassbox::server
