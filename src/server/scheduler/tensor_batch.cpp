// Tensor requests batched along their first dimension: consecutive requests for one model
// whose inputs agree in every dimension but the first, where the model declares that first
// dimension symbolic, run as one engine run (up to max_batch_size rows) and their outputs are
// split back by rows. Anything else runs alone, as do models with string inputs or outputs
// (their rows are not bytes to copy).
#include <chrono>
#include <cstring>

#include "core/tensor_rows.h"
#include "glassbox/numerics.h"
#include "server/scheduler/pending.h"

namespace glassbox::server {
namespace {

using Clock = std::chrono::steady_clock;

const std::vector<NamedTensor>& feeds_of(const Scheduler::Pending& p) { return std::get<TensorJob>(p.item.job).feeds; }

// Rows this request contributes, or -1 when it cannot be batched with others.
int64_t batch_rows(const LoadedModel& m, const std::vector<NamedTensor>& feeds) {
  int64_t rows = -1;
  for (const auto& f : feeds) {
    const auto& specs = m.session->inputs();
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == f.name; });
    if (spec == specs.end() || !spec->has_shape || spec->dims.empty() || spec->dims[0] >= 0 || f.tensor.rank() == 0) return -1;
    if (f.tensor.dtype() == DataType::kString) return -1;
    if (rows >= 0 && f.tensor.shape()[0] != rows) return -1;
    rows = f.tensor.shape()[0];
  }
  for (const auto& o : m.session->outputs())
    if (!o.has_shape || o.dims.empty() || o.dims[0] >= 0 || o.dtype == DataType::kString)
      return -1;  // outputs must carry the batch dimension too, in bytes
  return rows;
}

bool compatible(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const Tensor &x = a[i].tensor, &y = b[i].tensor;
    if (a[i].name != b[i].name || x.dtype() != y.dtype() || x.rank() != y.rank()) return false;
    for (int64_t d = 1; d < x.rank(); ++d)
      if (x.shape()[d] != y.shape()[d]) return false;
  }
  return true;
}

Result<std::vector<NamedTensor>> concat_feeds(const std::vector<std::shared_ptr<Scheduler::Pending>>& items) {
  std::vector<NamedTensor> out;
  const auto& first = feeds_of(*items.front());
  for (size_t i = 0; i < first.size(); ++i) {
    std::vector<const Tensor*> parts;
    for (const auto& p : items) parts.push_back(&feeds_of(*p)[i].tensor);
    GB_ASSIGN_OR_RETURN(Tensor t, concat_rows(parts));
    out.push_back({first[i].name, std::move(t)});
  }
  return out;
}

// Splits each output by rows; nullopt if an output's first dimension is not the batch's.
std::optional<std::vector<std::vector<NamedTensor>>> split_outputs(const std::vector<NamedTensor>& outs,
                                                                   const std::vector<int64_t>& rows, int64_t total) {
  std::vector<std::vector<NamedTensor>> per(rows.size());
  for (const auto& o : outs) {
    if (o.tensor.rank() == 0 || o.tensor.shape()[0] != total) return std::nullopt;
    int64_t begin = 0;
    for (size_t k = 0; k < rows.size(); ++k) {
      auto t = copy_rows(o.tensor, begin, rows[k]);
      if (!t.ok()) return std::nullopt;
      begin += rows[k];
      per[k].push_back({o.name, std::move(t).value()});
    }
  }
  return per;
}

void count_nonfinite(Metrics* metrics, const LoadedModel& m, const std::vector<NamedTensor>& outs) {
  for (const auto& o : outs) {
    // The one scan (glassbox/numerics.h): float16/bfloat16 outputs count too.
    if (first_non_finite(o.tensor) >= 0) metrics->add("glassbox_nonfinite_outputs_total", {{"model", m.name}, {"version", m.version}, {"output", o.name}});
  }
}

}  // namespace

void Scheduler::run_tensor(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Pending>& head) {
  const LoadedModel& m = *head->item.model;
  int64_t total = batch_rows(m, feeds_of(*head));
  if (total >= 0) wait_for_more(lock, head);
  std::vector<std::shared_ptr<Pending>> items = {head};
  if (total >= 0) {
    for (size_t i = 1; i < queue_.size(); ++i) {
      const auto& p = queue_[i];
      if (p->item.model != head->item.model || !std::holds_alternative<TensorJob>(p->item.job)) break;
      const int64_t rows = batch_rows(m, feeds_of(*p));
      if (rows < 0 || !compatible(feeds_of(*head), feeds_of(*p)) || total + rows > options_.max_batch_size) break;
      items.push_back(p);
      total += rows;
    }
  }
  for (const auto& p : items) remove(p);
  lock.unlock();
  std::vector<std::shared_ptr<Pending>> live;
  const auto now = Clock::now();
  for (const auto& p : items) {
    if (drop_if_dead(p)) continue;
    p->started = true;
    const double waited = std::chrono::duration<double>(now - p->enqueued).count();
    metrics_->observe("glassbox_queue_duration_seconds", model_labels(m), waited);
    if (p->item.meta) p->item.meta->queue_s = waited;
    live.push_back(p);
  }
  // One engine run, with the first-non-finite-node observer when --numerics-check picks it.
  auto engine_run = [&](const std::vector<NamedTensor>& feeds, const RequestMeta* meta) {
    if (!numerics_.observe_next(m.name)) return m.session->run(feeds);
    InternalNonFinite found;
    auto r = m.session->run_observed(feeds, record_first_nonfinite(&found));
    report_internal_nonfinite(metrics_, m, found, meta);
    return r;
  };
  auto run_alone = [&](Pending& p) {
    const auto t0 = Clock::now();
    auto r = engine_run(feeds_of(p), p.item.meta.get());
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    metrics_->observe("glassbox_compute_duration_seconds", model_labels(m), s);
    metrics_->observe("glassbox_batch_size", model_labels(m), 1);
    if (p.item.meta) {
      p.item.meta->compute_s += s;
      p.item.meta->batch_size = 1;
    }
    if (r.ok()) count_nonfinite(metrics_, m, *r);
    note_service(m.name, s, 1);
    std::get<TensorJob>(p.item.job).done(std::move(r));
  };
  bool done = false;
  if (live.size() > 1) {
    std::vector<int64_t> rows;
    int64_t sum = 0;
    for (const auto& p : live) sum += rows.emplace_back(feeds_of(*p).front().tensor.shape()[0]);
    auto feeds = concat_feeds(live);
    const auto t0 = Clock::now();
    auto r = feeds.ok() ? engine_run(*feeds, live.front()->item.meta.get()) : Result<std::vector<NamedTensor>>(feeds.error());
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    auto split = r.ok() ? split_outputs(*r, rows, sum) : std::nullopt;
    if (split) {
      metrics_->observe("glassbox_compute_duration_seconds", model_labels(m), s);
      metrics_->observe("glassbox_batch_size", model_labels(m), static_cast<double>(sum));
      count_nonfinite(metrics_, m, *r);
      note_service(m.name, s, live.size());
      for (size_t k = 0; k < live.size(); ++k) {
        if (auto& meta = live[k]->item.meta) {
          meta->compute_s += s;
          meta->batch_size = sum;
        }
        std::get<TensorJob>(live[k]->item.job).done(std::move((*split)[k]));
      }
      done = true;
    }
  }
  if (!done)
    for (const auto& p : live) run_alone(*p);
  items.clear();
  live.clear();
  lock.lock();
}

}  // namespace glassbox::server
