// --numerics-check: which engine runs carry the first-non-finite-node observer, and what happens to a find.
// "all" observes every run, "sampled" the 1st, (N+1)th, (2N+1)th ... run of each model (N =
// numerics_sample_every), "off" none. The observer never stops a run: the request is answered exactly as
// without it. What it adds is the node: an internal NaN/Inf that a later op hides from the outputs (a Where,
// a masked Max, a clamp) is counted by glassbox_nonfinite_internal_total{model,version,node,kind} and logged
// with the request's ids, instead of passing unseen.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "glassbox/session.h"
#include "server/http/http_types.h"
#include "server/metrics/metrics.h"
#include "server/repository/loaded_model.h"
#include "server/server_options.h"

namespace glassbox::server {

// The first node, in execution order, one of whose outputs held NaN or Inf.
struct InternalNonFinite {
  bool found = false;
  std::string node, op_type, output;
  std::string kind;  // "NaN" | "+Inf" | "-Inf": the first bad element's (non_finite_kind_name)
};

class NumericsSampler {
 public:
  // Reads numerics_check and numerics_sample_every from `options`, which must outlive it.
  explicit NumericsSampler(const ServerOptions& options) : options_(options) {}
  // Whether the next engine run of `model` carries the observer; counts the run. Dispatcher thread only.
  bool observe_next(const std::string& model);

 private:
  const ServerOptions& options_;
  std::map<std::string, uint64_t> runs_;
};

// Records the first node with a non-finite output into *found and lets the run go on.
NodeObserver record_first_nonfinite(InternalNonFinite* found);
// Counts and logs a find (meta: the request's ids for the log line; nullptr: a server event line).
void report_internal_nonfinite(Metrics* metrics, const LoadedModel& m, const InternalNonFinite& f, const RequestMeta* meta);
// numerics_check is off | sampled | all and numerics_sample_every >= 1, else an error naming the field.
Status check_numerics_options(const ServerOptions& options);

}  // namespace glassbox::server
