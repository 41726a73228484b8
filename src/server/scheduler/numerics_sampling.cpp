#include "server/scheduler/numerics_sampling.h"

#include "glassbox/numerics.h"
#include "server/log.h"

namespace glassbox::server {

bool NumericsSampler::observe_next(const std::string& model) {
  if (options_.numerics_check == "off") return false;
  const uint64_t run = runs_[model]++;
  if (options_.numerics_check == "all") return true;
  return run % static_cast<uint64_t>(options_.numerics_sample_every) == 0;
}

NodeObserver record_first_nonfinite(InternalNonFinite* found) {
  return [found](const NodeEvent& ev) -> Status {
    if (found->found) return {};
    for (size_t i = 0; i < ev.outputs.size(); ++i) {
      const Tensor* t = ev.outputs[i];
      if (!t) continue;
      const int64_t bad = first_non_finite(*t);
      if (bad < 0) continue;
      *found = {true, ev.node_name, ev.op_type, ev.output_names[i], non_finite_kind_name(non_finite_kind(*t, bad))};
      return {};
    }
    return {};
  };
}

void report_internal_nonfinite(Metrics* metrics, const LoadedModel& m, const InternalNonFinite& f, const RequestMeta* meta) {
  if (!f.found) return;
  metrics->add("glassbox_nonfinite_internal_total", {{"model", m.name}, {"version", m.version}, {"node", f.node}, {"kind", f.kind}});
  const std::string line = "numerics check: model " + m.name + " v" + m.version + ": node '" + f.node + "' (" + f.op_type +
                           ") wrote " + f.kind + " into '" + f.output +
                           "' (the first node to do so in this run; `glassbox run --check-numerics` on the input names it)";
  if (meta) log_request_event(line, *meta);
  else log_line(line);
}

Status check_numerics_options(const ServerOptions& o) {
  if (o.numerics_check != "off" && o.numerics_check != "sampled" && o.numerics_check != "all")
    return make_error(ErrorCode::kInvalidArgument, "numerics_check '" + o.numerics_check + "' is unknown", "server options",
                      "use \"off\", \"sampled\" or \"all\"");
  if (o.numerics_sample_every < 1)
    return make_error(ErrorCode::kInvalidArgument,
                      "numerics_sample_every must be at least 1, got " + std::to_string(o.numerics_sample_every),
                      "server options", "1 observes every run (as numerics_check \"all\")");
  return {};
}

}  // namespace glassbox::server
