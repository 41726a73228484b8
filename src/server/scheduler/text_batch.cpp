// Token-budget batching of text work: texts of waiting requests (same model, task and
// normalize; heads jobs with heads jobs) fill one engine run up to max_batch_tokens real tokens and max_batch_size texts.
#include <algorithm>
#include <chrono>
#include <functional>
#include <map>

#include "server/log.h"
#include "server/scheduler/pending.h"

namespace glassbox::server {
namespace {

using Clock = std::chrono::steady_clock;

bool same_text_batch(const WorkItem& a, const WorkItem& b) {
  const auto* ta = std::get_if<TextJob>(&a.job);
  const auto* tb = std::get_if<TextJob>(&b.job);
  return ta && tb && a.model == b.model && ta->task == tb->task && ta->normalize == tb->normalize &&
         ta->dimensions == tb->dimensions && ta->token_vectors == tb->token_vectors && ta->heads.empty() == tb->heads.empty();
}

void finish(Scheduler::Pending& p, Result<TextResults> r) {
  if (p.finished) return;
  p.finished = true;
  std::get<TextJob>(p.item.job).done(std::move(r));
}

Result<TextResults> run_engine(const LoadedModel& m, const TextJob& job, const std::vector<EncodedText>& batch, BatchStats* stats) {
  TextResults r;
  if (job.task == PipelineTask::kClassify) {
    const int all = static_cast<int>(m.pipeline->decisions().labels.size());
    GB_ASSIGN_OR_RETURN(r.classes, m.pipeline->classify_encoded(batch, all, stats));
  } else if (!job.heads.empty()) {
    GB_ASSIGN_OR_RETURN(r.heads, embed_heads_encoded(*m.pipeline, batch, stats));
  } else if (job.token_vectors) {
    GB_ASSIGN_OR_RETURN(r.embeddings, m.pipeline->embed_tokens_encoded(batch, stats));
  } else {
    GB_ASSIGN_OR_RETURN(r.embeddings, m.pipeline->embed_encoded(batch, EmbedOptions{job.normalize, job.dimensions}, stats));
  }
  return r;
}

void record_run(Metrics* metrics, const LoadedModel& m, const BatchStats& stats, double seconds) {
  const Labels labels = model_labels(m);
  metrics->observe("glassbox_compute_duration_seconds", labels, seconds);
  metrics->observe("glassbox_batch_size", labels, static_cast<double>(stats.texts));
  metrics->observe("glassbox_batch_tokens", labels, static_cast<double>(stats.real_tokens));
  metrics->add("glassbox_padding_tokens_total", labels, static_cast<double>(stats.computed_tokens - stats.real_tokens));
  for (const auto& o : stats.nonfinite_outputs) metrics->add("glassbox_nonfinite_outputs_total", {{"model", m.name}, {"version", m.version}, {"output", o}});
}

void record_predictions(Metrics* metrics, const LoadedModel& m, const TextResults& r, double saturation) {
  const Labels labels = model_labels(m);
  for (const auto& c : r.classes) {
    if (c.labels.empty()) continue;
    metrics->add("glassbox_predictions_total", {{"model", m.name}, {"version", m.version}, {"label", c.labels.front().label}});
    metrics->observe("glassbox_prediction_confidence", labels, c.labels.front().score);
    if (c.labels.front().score >= saturation) metrics->add("glassbox_softmax_saturated_total", labels);
  }
}

// Whether an item not yet started must be dropped before compute: its client has gone or its deadline passed
// (Scheduler::drop_if_dead answers it, with no lock held).
bool dead_now(const Scheduler::Pending& p) {
  if (p.started || p.finished) return false;
  return p.item.deadline <= Clock::now() || (p.item.cancelled && p.item.cancelled->load());
}

// Takes texts from the candidates in queue order until the batch is full (max_batch_tokens real tokens,
// max_batch_size texts) and records each request's queue time when it starts. Dead candidates go to
// w.dropped. Only moves already-encoded texts: cheap enough to run under the scheduler's lock.
void fill_text_work(const std::vector<std::shared_ptr<Scheduler::Pending>>& cands, const ServerOptions& options,
                    Metrics* metrics, Scheduler::TextWork& w) {
  const auto now = Clock::now();
  auto full = [&](int64_t more) {
    return !w.texts.empty() && (w.tokens + more > options.max_batch_tokens ||
                                static_cast<int>(w.texts.size()) >= options.max_batch_size);
  };
  for (const auto& c : cands) {
    if (dead_now(*c)) {
      w.dropped.push_back(c);
      continue;
    }
    while (!c->finished && c->next < c->texts.size()) {
      const int64_t len = static_cast<int64_t>(c->texts[c->next].encoding.size());
      if (full(len)) break;
      if (!c->started) {
        c->started = true;
        const double waited = std::chrono::duration<double>(now - c->enqueued).count();
        metrics->observe("glassbox_queue_duration_seconds", model_labels(*c->item.model), waited);
        if (c->item.meta) c->item.meta->queue_s = waited;
      }
      w.tokens += len;
      w.texts.push_back(std::move(c->texts[c->next]));
      w.slots.push_back({c, c->next});
      ++c->next;
    }
    if (!w.texts.empty() && (w.tokens >= options.max_batch_tokens || static_cast<int>(w.texts.size()) >= options.max_batch_size))
      break;
  }
}

// A text's heads from the batch's run, with only those its request asked for.
HeadEmbeddings asked_heads(const HeadEmbeddings& all, const std::vector<std::string>& asked) {
  auto wanted = [&](const char* name) { return std::find(asked.begin(), asked.end(), name) != asked.end(); };
  HeadEmbeddings h;
  h.tokens = all.tokens;
  h.tokens_dropped = all.tokens_dropped;
  if (wanted("dense")) h.dense = all.dense;
  if (wanted("sparse")) h.sparse = all.sparse;
  if (wanted("multi_vector")) h.multi_vector = all.multi_vector;
  return h;
}

// Gives each text's result (or error) to the request it belongs to; a request is answered when its last
// text is. Returns how many requests the batch served.
size_t distribute_results(Scheduler::TextWork& b, const TextJob& first, const Result<TextResults>& r,
                          const std::vector<Result<TextResults>>& per_text, double seconds) {
  std::map<Scheduler::Pending*, size_t> items_in_batch;
  for (size_t i = 0; i < b.slots.size(); ++i) {
    Scheduler::Pending& owner = *b.slots[i].owner;
    const bool first_text_of_owner = ++items_in_batch[&owner] == 1;
    if (owner.item.meta) {
      if (first_text_of_owner) owner.item.meta->compute_s += seconds;  // once per run it took part in, not per text
      owner.item.meta->batch_size = std::max<int64_t>(owner.item.meta->batch_size, static_cast<int64_t>(b.texts.size()));
    }
    const Result<TextResults>& mine = per_text.empty() ? r : per_text[i];
    if (!mine.ok()) {
      finish(owner, mine.error());
      continue;
    }
    const size_t at = per_text.empty() ? i : 0;
    const auto& asked = std::get<TextJob>(owner.item.job).heads;
    if (first.task == PipelineTask::kClassify) owner.results.classes[b.slots[i].index] = mine->classes[at];
    else if (!asked.empty()) owner.results.heads[b.slots[i].index] = asked_heads(mine->heads[at], asked);
    else owner.results.embeddings[b.slots[i].index] = mine->embeddings[at];
    if (--owner.remaining == 0) finish(owner, std::move(owner.results));
  }
  return items_in_batch.size();
}

// The engine run of one batch; when it fails with several texts, each text runs alone so one text's failure
// (NaN, an engine error) does not fail the texts batched with it.
struct BatchService {
  double seconds = 0;  // engine time of the batch
  size_t items = 0;    // requests it served
};
BatchService run_text_batch(const LoadedModel& m, const TextJob& first, Scheduler::TextWork& batch, const ServerOptions& options,
                            Metrics* metrics, NumericsSampler& numerics) {
  BatchStats stats;
  InternalNonFinite found;
  const NodeObserver observer = numerics.observe_next(m.name) ? record_first_nonfinite(&found) : NodeObserver();
  if (observer) stats.observer = &observer;
  const auto t0 = Clock::now();
  Result<TextResults> r = run_engine(m, first, batch.texts, &stats);
  report_internal_nonfinite(metrics, m, found, batch.slots.front().owner->item.meta.get());
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  record_run(metrics, m, stats, seconds);
  std::vector<Result<TextResults>> per_text;
  if (!r.ok() && batch.texts.size() > 1) {
    for (size_t i = 0; i < batch.texts.size(); ++i) {
      BatchStats one;
      per_text.push_back(run_engine(m, first, {batch.texts[i]}, &one));
      record_run(metrics, m, one, 0);
    }
  }
  if (r.ok()) record_predictions(metrics, m, *r, options.saturation_threshold);
  const size_t items = distribute_results(batch, first, r, per_text, seconds);
  for (const auto& pt : per_text)
    if (pt.ok()) record_predictions(metrics, m, pt.value(), options.saturation_threshold);
  return {seconds, items};
}

}  // namespace

void encode_texts(Scheduler::Pending& p, Metrics* metrics) {
  p.encoded = true;
  const auto& job = std::get<TextJob>(p.item.job);
  const LoadedModel& m = *p.item.model;
  const Labels labels = model_labels(m);
  bool windows = false;
  for (size_t i = 0; i < job.inputs.size(); ++i) {
    auto encoded = m.pipeline->encode_windows(job.inputs[i], i);  // one text unless split into windows
    if (!encoded.ok()) return finish(p, std::move(encoded).take_error());
    windows = windows || encoded->size() > 1;
    for (auto& e : *encoded) {
      const int64_t tokens = static_cast<int64_t>(e.encoding.size());
      metrics->observe("glassbox_input_tokens", labels, static_cast<double>(tokens));
      if (e.tokens_dropped > 0) {
        metrics->add("glassbox_truncated_inputs_total", labels);
        metrics->add("glassbox_truncated_tokens_total", labels, static_cast<double>(e.tokens_dropped));
      }
      if (p.item.meta) {
        p.item.meta->tokens += tokens;
        p.item.meta->tokens_dropped += e.tokens_dropped;
      }
      p.texts.push_back(std::move(e));
      p.results.source.push_back(i);
    }
  }
  if (!windows) p.results.source.clear();
  if (windows && !job.heads.empty())  // the routes of heads refuse "split"; a window's heads have no declared fold
    return finish(p, make_error(ErrorCode::kInvalidArgument, "split into windows", "inputs",
                                "a heads model declares no way to join the heads of windows: truncate or shorten the text"));
  p.remaining = p.texts.size();
  if (job.task == PipelineTask::kClassify) p.results.classes.resize(p.texts.size());
  else if (!job.heads.empty()) p.results.heads.resize(p.texts.size());
  else p.results.embeddings.resize(p.texts.size());
}

// Called by the dispatcher with the lock held: the candidates of head's batch in queue order, their texts
// moved into the work, and the items that are done with (answered, dropped, or every text taken) out of
// the queue.
Scheduler::TextWork Scheduler::take_text_work(const std::shared_ptr<Pending>& head) {
  TextWork w;
  for (const auto& p : queue_) {
    if (!same_text_batch(head->item, p->item)) continue;
    w.looked_at.push_back(p);
    if (static_cast<int>(w.looked_at.size()) >= options_.max_batch_size) break;
  }
  fill_text_work(w.looked_at, options_, metrics_, w);
  for (const auto& c : w.looked_at)
    if (c->finished || c->next >= c->texts.size() || std::find(w.dropped.begin(), w.dropped.end(), c) != w.dropped.end())
      remove(c);
  return w;
}

// Called with no lock held: answers the dropped items, runs the batch and gives each text's result to its
// request. The work (and the model versions its items hold) is released here, outside the lock.
void Scheduler::run_text(TextWork w) {
  for (const auto& d : w.dropped) drop_if_dead(d);
  if (w.texts.empty()) return;
  const auto& head = w.slots.front().owner;
  const LoadedModel& m = *head->item.model;
  const BatchService served = run_text_batch(m, std::get<TextJob>(head->item.job), w, options_, metrics_, numerics_);
  note_service(m.name, served.seconds, served.items);
}

}  // namespace glassbox::server
