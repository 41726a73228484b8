#include "server/generation/generation_worker.h"

#include <algorithm>

#include "generation/policy.h"
#include "server/log.h"

namespace glassbox::server {
namespace {

std::string n(int64_t v) { return std::to_string(v); }

double seconds(GenClock::time_point a, GenClock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Idle wait: the worker re-checks its queue this often even without a notification.
constexpr auto kIdleTick = std::chrono::milliseconds(100);

GenerationRefusal refusal(int status, std::string code, std::string message, std::string param = {}) {
  GenerationRefusal r;
  r.status = status;
  r.code = std::move(code);
  r.message = std::move(message);
  r.param = std::move(param);
  return r;
}

int status_of(const Error& e) {
  switch (e.code) {
    case ErrorCode::kInvalidArgument: case ErrorCode::kUnsupported: return 400;
    case ErrorCode::kLimitExceeded: return 413;
    default: return 500;
  }
}

}  // namespace

GenerationWorker::GenerationWorker(GenerationSession session, GenerationWorkerOptions options, Metrics* metrics)
    : session_(std::move(session)), options_(std::move(options)), metrics_(metrics) {
  publish_gauges();
  thread_ = std::thread([this] { run(); });
}

GenerationWorker::~GenerationWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::optional<GenerationRefusal> GenerationWorker::submit(GenerationJob job, GenerationPolicy* policy_out) {
  auto reject = [&](GenerationRefusal r, const char* reason) {
    if (metrics_) metrics_->add("glassbox_generation_rejected_total", {{"model", options_.model}, {"reason", reason}});
    return std::optional<GenerationRefusal>(std::move(r));
  };
  auto resolved = session_.resolve(job.input.request);
  if (!resolved.ok()) return reject(refusal(400, "invalid_value", resolved.error().to_string()), "invalid");
  GenerationPolicy p = std::move(resolved).value();
  if (!job.input.prompt_ids) {
    EncodeOptions eo;
    eo.add_special_tokens = p.add_special_tokens.value;
    eo.truncation_from_file = false;  // a prompt is never cut silently: the context check refuses it
    eo.padding_from_file = false;
    auto enc = session_.tokenizer().encode(job.input.prompt, std::nullopt, eo);
    if (!enc.ok()) return reject(refusal(400, "invalid_value", enc.error().to_string(), "prompt"), "invalid");
    job.input.prompt_ids = enc->ids;
  }
  const auto& ids = *job.input.prompt_ids;
  const int64_t prompt = static_cast<int64_t>(ids.size());
  const int64_t vocab = session_.decoder().vocab_size;
  if (prompt == 0) return reject(refusal(400, "invalid_value", "the prompt is empty (0 tokens): there is nothing to continue", "prompt"), "invalid");
  for (uint32_t id : ids)
    if (static_cast<int64_t>(id) >= vocab)
      return reject(refusal(400, "invalid_value", "prompt token " + n(id) + " is outside the vocabulary (" + n(vocab) + ")", "prompt"), "invalid");
  const int64_t ctx = p.max_context.value;
  // The same cap the session applies at admission (GenerationSession::prefill).
  if (p.max_new_tokens.source == generation::kDefaultSource && prompt + p.max_new_tokens.value > ctx && prompt < ctx)
    p.max_new_tokens = {ctx - prompt, std::string(generation::kDefaultSource) + " (" + n(generation::kDefaultMaxNewTokens) +
                                          ", capped at max_context " + n(ctx) + " - prompt " + n(prompt) + ")"};
  if (prompt + p.max_new_tokens.value > ctx)
    return reject(refusal(400, "context_length_exceeded",
                          "prompt " + n(prompt) + " tokens + max_new_tokens " + n(p.max_new_tokens.value) + " (" +
                              p.max_new_tokens.source + ") = " + n(prompt + p.max_new_tokens.value) + " > max_context " +
                              n(ctx) + " (" + p.max_context.source + "): shorten the prompt or lower max_tokens",
                          "max_tokens"),
                  "too_long");
  const int64_t capacity = p.max_new_tokens.value == 0 ? 0 : prompt + p.max_new_tokens.value;
  job.kv_bytes = capacity * session_.decoder().kv_bytes_per_token;
  if (job.kv_bytes > session_.kv_budget_bytes())
    return reject(refusal(413, "kv_budget",
                          "this request reserves " + n(job.kv_bytes) + " bytes of KV cache ((prompt " + n(prompt) +
                              " + max_new_tokens " + n(p.max_new_tokens.value) + ") x " +
                              n(session_.decoder().kv_bytes_per_token) + " bytes/token), over the model's whole KV budget of " +
                              n(session_.kv_budget_bytes()) + " bytes (--kv-cache-bytes): it can never run; lower max_tokens",
                          "max_tokens"),
                  "kv_budget");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (draining_.load() || stop_)
      return reject(refusal(503, "draining", "server is shutting down: no new generation is admitted"), "draining");
    if (static_cast<int>(waiting_.size()) >= options_.max_queue) {
      GenerationRefusal r = refusal(429, "queue_full",
                                    n(static_cast<int64_t>(waiting_.size())) + " requests already wait for KV cache room on model '" +
                                        options_.model + "' (--max-queue " + n(options_.max_queue) + "); retry later");
      r.retry_after_s = 1;
      return reject(std::move(r), "queue_full");
    }
    if (policy_out) *policy_out = p;
    waiting_.push_back(std::make_unique<GenerationJob>(std::move(job)));
  }
  cv_.notify_all();
  return std::nullopt;
}

void GenerationWorker::begin_drain(double timeout_s) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (draining_.exchange(true)) return;
    drain_cut_at_ = GenClock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 900));
  }
  cv_.notify_all();
}

std::optional<GenerationRefusal> GenerationWorker::expired(const GenerationJob& job, GenClock::time_point now) const {
  if (job.client_gone && job.client_gone()) return refusal(499, "client_gone", "the client closed the connection");
  if (now >= job.deadline) return refusal(504, "deadline", "the request's deadline (X-Request-Timeout-Ms or the server's default) passed");
  if (now >= drain_cut_at_)
    return refusal(503, "draining", "server shut down: the drain timeout (--drain-timeout) ended this generation before it finished");
  return std::nullopt;
}

// Under mu_: drops waiting requests that expired, then takes waiting ones in arrival order while
// their reservations fit the KV budget (first come, first served: a large request is never overtaken).
std::vector<std::unique_ptr<GenerationJob>> GenerationWorker::take_admissible(Dropped& dropped) {
  const auto now = GenClock::now();
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (auto why = expired(**it, now)) {
      dropped.emplace_back(std::move(*it), std::move(*why));
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
  std::vector<std::unique_ptr<GenerationJob>> out;
  int64_t reserved = session_.kv_reserved_bytes();
  while (!waiting_.empty() && reserved + waiting_.front()->kv_bytes <= session_.kv_budget_bytes()) {
    reserved += waiting_.front()->kv_bytes;
    out.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
  return out;
}

void GenerationWorker::run() {
  for (;;) {
    std::vector<std::unique_ptr<GenerationJob>> admit;
    Dropped dropped;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (active_.empty()) cv_.wait_for(lock, kIdleTick, [&] { return stop_ || !waiting_.empty(); });
      if (stop_) break;
      admit = take_admissible(dropped);
    }
    for (auto& [job, why] : dropped) {
      if (metrics_) metrics_->add("glassbox_generation_requests_total", {{"model", options_.model}, {"finish_reason", why.code}});
      GenerationOutcome o;
      o.cut = std::move(why);
      o.queue_s = seconds(job->arrival, GenClock::now());
      job->on_done(std::move(o));
    }
    if (!admit.empty()) this->admit(std::move(admit));
    prefill_next();
    if (const size_t decoding = session_.active().size(); decoding > 0) {
      if (metrics_) metrics_->observe("glassbox_decode_batch_size", {{"model", options_.model}}, static_cast<double>(decoding));
      const auto t0 = GenClock::now();
      auto events = session_.step();
      if (metrics_) metrics_->observe("glassbox_decode_step_seconds", {{"model", options_.model}}, seconds(t0, GenClock::now()));
      if (!events.ok()) {
        log_line("generation step failed on model '" + options_.model + "': " + events.error().to_string());
        for (SequenceId id : session_.active()) cut(id, refusal(500, "engine_error", "the decode step failed: " + events.error().what));
      } else {
        deliver(*events);
      }
    }
    reap();
    publish_gauges();
  }
  // Stopped: nothing more will run. Every request still here gets an explicit end.
  std::vector<SequenceId> ids;
  for (const auto& [id, a] : active_) ids.push_back(id);
  for (SequenceId id : ids) cut(id, refusal(503, "server_stopped", "the server stopped before this generation finished"));
  std::deque<std::unique_ptr<GenerationJob>> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    left.swap(waiting_);
  }
  for (auto& job : left) {
    GenerationOutcome o;
    o.cut = refusal(503, "server_stopped", "the server stopped before this generation started");
    job->on_done(std::move(o));
  }
  publish_gauges();
}

// Admits the jobs into the session (their KV reserved, nothing run yet); prefill_next() runs them.
void GenerationWorker::admit(std::vector<std::unique_ptr<GenerationJob>> jobs) {
  std::vector<SequenceInput> inputs;
  for (const auto& j : jobs) inputs.push_back(j->input);
  std::vector<StepEvent> events;
  const auto t0 = GenClock::now();
  auto ids = session_.admit(inputs, &events);
  if (!ids.ok()) {
    if (jobs.size() > 1) {  // all or none: find which one fails by admitting them one by one
      for (auto& j : jobs) {
        std::vector<std::unique_ptr<GenerationJob>> one;
        one.push_back(std::move(j));
        admit(std::move(one));
      }
      return;
    }
    if (metrics_) metrics_->add("glassbox_generation_requests_total", {{"model", options_.model}, {"finish_reason", "error"}});
    GenerationOutcome o;
    o.cut = refusal(status_of(ids.error()), "prefill_failed", ids.error().to_string());
    jobs.front()->on_done(std::move(o));
    return;
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    Active a;
    a.queue_s = seconds(jobs[i]->arrival, t0);
    if (metrics_) {
      metrics_->observe("glassbox_generation_queue_seconds", {{"model", options_.model}}, a.queue_s);
      metrics_->observe("glassbox_prompt_tokens", {{"model", options_.model}},
                        static_cast<double>(jobs[i]->input.prompt_ids->size()));
    }
    a.job = std::move(jobs[i]);
    active_.emplace((*ids)[i], std::move(a));
  }
  deliver(events);  // max_new_tokens 0 ends at admission
}

// One prefill run: the oldest prefilling sequences, as many as fit prefill_chunk_tokens padded
// tokens (rows x the longest chunk among them; the first always runs), each its next chunk.
void GenerationWorker::prefill_next() {
  const int64_t budget = session_.prefill_chunk_tokens();
  std::vector<SequenceId> ids;
  int64_t longest = 0;
  for (SequenceId id : session_.prefilling()) {
    const int64_t chunk = std::min(budget, session_.prefill_remaining(id));
    const int64_t widest = std::max(longest, chunk);
    if (!ids.empty() && widest * static_cast<int64_t>(ids.size() + 1) > budget) break;
    ids.push_back(id);
    longest = widest;
  }
  if (!ids.empty()) prefill_chunk(ids);
}

void GenerationWorker::prefill_chunk(const std::vector<SequenceId>& ids) {
  const auto t0 = GenClock::now();
  auto events = session_.prefill_chunk(ids);
  if (!events.ok()) {
    if (ids.size() > 1) {  // a failed run changes no sequence: find which one fails by running them one by one
      for (SequenceId id : ids) prefill_chunk({id});
      return;
    }
    cut(ids.front(), refusal(status_of(events.error()), "prefill_failed", events.error().to_string()));
    return;
  }
  if (metrics_) metrics_->observe("glassbox_generation_prefill_seconds", {{"model", options_.model}}, seconds(t0, GenClock::now()));
  deliver(*events);
}

void GenerationWorker::deliver(const std::vector<StepEvent>& events) {
  const auto now = GenClock::now();
  for (const auto& ev : events) {
    auto it = active_.find(ev.id);
    if (it == active_.end()) continue;
    Active& a = it->second;
    if (ev.token) {
      if (a.tokens == 0) a.first_token = now;
      ++a.tokens;
      if (metrics_) metrics_->add("glassbox_generated_tokens_total", {{"model", options_.model}});
      if (a.job->on_token) a.job->on_token(ev);
    }
    if (ev.finished != FinishReason::kNone) finish(ev.id);
  }
}

void GenerationWorker::observe_done(const Active& a, const char* finish_reason) {
  if (!metrics_) return;
  const Labels model{{"model", options_.model}};
  const auto now = GenClock::now();
  metrics_->add("glassbox_generation_requests_total", {{"model", options_.model}, {"finish_reason", finish_reason}});
  metrics_->observe("glassbox_completion_tokens", model, static_cast<double>(a.tokens));
  const double e2e = seconds(a.job->arrival, now);
  metrics_->observe("glassbox_generation_e2e_seconds", model, e2e);
  if (a.tokens >= 1) {
    const double ttft = seconds(a.job->arrival, a.first_token);  // from arrival: queueing counts
    metrics_->observe("glassbox_time_to_first_token_seconds", model, ttft);
    if (a.tokens >= 2)
      metrics_->observe("glassbox_time_per_output_token_seconds", model, (e2e - ttft) / static_cast<double>(a.tokens - 1));
  }
}

// Which rule ended a generation: a stop token, a stop string, or max_new_tokens (after the context cap); a
// generation cut by non-finite logits is counted apart (the model, not a rule, ended it).
void GenerationWorker::observe_stop(const GenerationResult& r) {
  if (!metrics_) return;
  if (r.non_finite_logits) {
    metrics_->add("glassbox_generation_nonfinite_logits_total", {{"model", options_.model}});
    return;
  }
  const char* rule = r.stop_string ? "stop_string"
                     : r.stop_token ? "stop_token"
                     : r.finish_reason == FinishReason::kLength ? "max_new_tokens"
                                                                 : nullptr;
  if (rule) metrics_->add("glassbox_generation_stops_total", {{"model", options_.model}, {"rule", rule}});
}

void GenerationWorker::finish(SequenceId id) {
  auto it = active_.find(id);
  Active a = std::move(it->second);
  active_.erase(it);
  auto r = session_.take_result(id);
  GenerationOutcome o;
  o.tokens = a.tokens;
  o.queue_s = a.queue_s;
  if (r.ok()) {
    observe_done(a, finish_reason_name(r->finish_reason));
    observe_stop(*r);
    o.result = std::move(r).value();
  } else {
    observe_done(a, "error");
    o.cut = refusal(500, "engine_error", r.error().to_string());
  }
  a.job->on_done(std::move(o));
}

void GenerationWorker::cut(SequenceId id, GenerationRefusal why) {
  auto it = active_.find(id);
  if (it == active_.end()) return;
  Active a = std::move(it->second);
  active_.erase(it);
  session_.cancel(id);  // frees its KV reservation now
  observe_done(a, why.code == "engine_error" || why.code == "prefill_failed" ? "error" : why.code.c_str());
  GenerationOutcome o;
  o.tokens = a.tokens;
  o.queue_s = a.queue_s;
  o.cut = std::move(why);
  a.job->on_done(std::move(o));
}

// Active sequences whose client left, whose deadline passed or that the drain cuts end now.
void GenerationWorker::reap() {
  const auto now = GenClock::now();
  std::vector<std::pair<SequenceId, GenerationRefusal>> ends;
  {
    std::lock_guard<std::mutex> lock(mu_);  // drain_cut_at_
    for (const auto& [id, a] : active_)
      if (auto why = expired(*a.job, now)) ends.emplace_back(id, std::move(*why));
  }
  for (auto& [id, why] : ends) cut(id, std::move(why));
}

void GenerationWorker::publish_gauges() {
  if (!metrics_) return;
  size_t waiting = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    waiting = waiting_.size();
  }
  const std::string& m = options_.model;
  metrics_->set("glassbox_active_sequences", {{"model", m}}, static_cast<double>(active_.size()));
  metrics_->set("glassbox_waiting_sequences", {{"model", m}}, static_cast<double>(waiting));
  metrics_->set("glassbox_kv_cache_bytes", {{"model", m}, {"state", "used"}}, static_cast<double>(session_.kv_reserved_bytes()));
  metrics_->set("glassbox_kv_cache_bytes", {{"model", m}, {"state", "budget"}}, static_cast<double>(session_.kv_budget_bytes()));
}

}  // namespace glassbox::server
