// One generation model served: a worker thread that owns its GenerationSession and runs
// continuous batching (docs/serving.md, "Generation"). Between decode steps it admits waiting
// requests whose KV reservation (prompt + max_new_tokens tokens) fits the budget and runs one
// prefill chunk (at most the session's prefill_chunk_tokens padded tokens, one or more prompts);
// each step then advances every prefilled sequence by one token in one engine run, so a long
// generation never starves short ones and a long prompt pauses the others by one chunk at a time. Each sequence's tokens go to its request as they come;
// a sequence whose client has gone, whose deadline has passed, or that the drain cuts is ended
// at the next step and its KV freed. Protocol-free: routes turn events into OpenAI/TGI shapes.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "glassbox/generation.h"
#include "server/metrics/metrics.h"

namespace glassbox::server {

using GenClock = std::chrono::steady_clock;

// Why a request did not get a normal result: an HTTP status, a short machine code
// (OpenAI's error.code, the metrics' reason) and the message naming the numbers.
struct GenerationRefusal {
  int status = 0;
  std::string code;     // "context_length_exceeded", "kv_budget", "queue_full", "draining", ...
  std::string param;    // the request field at fault ("" when none)
  std::string message;
  int retry_after_s = 0;  // 429: Retry-After
};

// How one accepted request ended: a result (stop, length, or error on non-finite logits), or a
// cut (client gone, deadline, drain, engine failure) after `tokens` tokens were delivered.
struct GenerationOutcome {
  std::optional<GenerationResult> result;
  GenerationRefusal cut;
  int64_t tokens = 0;
  double queue_s = 0;
};

struct GenerationJob {
  SequenceInput input;            // prompt_ids are set by submit() (tokenized per the policy)
  GenClock::time_point arrival = GenClock::now();
  GenClock::time_point deadline = GenClock::time_point::max();
  int64_t kv_bytes = 0;           // its reservation, set by submit()
  // Called on the worker thread: is the client still there; each token (text may be empty while
  // bytes are held); the end, exactly once.
  std::function<bool()> client_gone;
  std::function<void(const StepEvent&)> on_token;
  std::function<void(GenerationOutcome)> on_done;
};

struct GenerationWorkerOptions {
  std::string model;       // metric label
  int max_queue = 64;      // requests waiting for KV room before 429
};

class GenerationWorker {
 public:
  GenerationWorker(GenerationSession session, GenerationWorkerOptions options, Metrics* metrics);
  ~GenerationWorker();  // cuts what is left (error "server stopped") and joins the thread
  GenerationWorker(const GenerationWorker&) = delete;
  GenerationWorker& operator=(const GenerationWorker&) = delete;

  // The session's immutable parts (tokenizer, decoder, default policy): safe from any thread.
  const GenerationSession& session() const { return session_; }

  // Resolves the policy and tokenizes the prompt, checks that the request can ever fit
  // (max_context: 400; KV budget: 413) and queues it (full: 429). nullopt: accepted, and
  // *policy holds the policy it will run with (max_new_tokens capped as the session caps it).
  std::optional<GenerationRefusal> submit(GenerationJob job, GenerationPolicy* policy);
  // From now on new requests are refused (503); sequences still running `timeout_s` x 0.9 from now
  // are cut with an explicit error (the rest of the drain time lets the cut reach the client).
  void begin_drain(double timeout_s);

  int64_t kv_budget_bytes() const { return session_.kv_budget_bytes(); }

 private:
  struct Active {
    std::unique_ptr<GenerationJob> job;
    int64_t tokens = 0;
    GenClock::time_point first_token{};
    double queue_s = 0;
  };
  void run();
  using Dropped = std::vector<std::pair<std::unique_ptr<GenerationJob>, GenerationRefusal>>;
  std::vector<std::unique_ptr<GenerationJob>> take_admissible(Dropped& dropped);
  std::optional<GenerationRefusal> expired(const GenerationJob& job, GenClock::time_point now) const;
  void admit(std::vector<std::unique_ptr<GenerationJob>> jobs);
  void prefill_next();
  void prefill_chunk(const std::vector<SequenceId>& ids);
  void deliver(const std::vector<StepEvent>& events);
  void finish(SequenceId id);
  void cut(SequenceId id, GenerationRefusal why);
  void reap();
  void publish_gauges();
  void observe_done(const Active& a, const char* finish_reason);
  void observe_stop(const GenerationResult& r);

  GenerationSession session_;
  GenerationWorkerOptions options_;
  Metrics* metrics_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<GenerationJob>> waiting_;
  int64_t waiting_bytes_ = 0;
  bool stop_ = false;
  std::atomic<bool> draining_{false};
  GenClock::time_point drain_cut_at_ = GenClock::time_point::max();  // under mu_
  std::map<SequenceId, Active> active_;  // worker thread only
  std::thread thread_;
};

}  // namespace glassbox::server
