#include "cli/session_flags.h"

#include "core/process_memory.h"
#include "diag/explain.h"

namespace glassbox::cli {
namespace {

// What each flag takes; the default and the reason come from the option table (diag::session_option_doc).
const char* syntax(SessionFlag f) {
  switch (f) {
    case SessionFlag::kThreads: return "N: intra-op threads of the engine";
    case SessionFlag::kOptLevel: return "0|1|2: graph optimization level (0 = the graph exactly as written)";
    case SessionFlag::kDisablePass: return "NAME: skip a graph pass (repeatable; `glassbox ops --passes` lists them)";
    case SessionFlag::kPrecision: return "fp32 | bf16 | int8-dynamic: arithmetic of the GEMMs on constant weights";
    case SessionFlag::kWeightsCache: return "DIR: packed-weights cache, written after the first run, mapped on later loads";
    case SessionFlag::kPoolWait: return "auto | spin | sleep: how idle pool threads wait for the next op during a run";
    case SessionFlag::kMaxMemory:
      return "BYTES (512M, 2G): memory budget: weights + arenas + run tensors (+ process and tokenizer for a model "
             "directory), checked at load and before each run's allocations (docs/memory.md)";
  }
  return "";
}

std::string help(const SessionFlagInfo& info) {
  auto doc = diag::session_option_doc(info.field);
  std::string h = syntax(info.flag);
  if (doc) h += " (default " + doc->default_value + ": " + doc->reason + "; a flag overrides glassbox.json and --config)";
  return h;
}

template <class T>
std::string check_parse(Result<T> (*parse)(const std::string&), const std::string& v) {
  auto r = parse(v);
  return r.ok() ? std::string() : r.error().to_string();
}

}  // namespace

const std::vector<SessionFlagInfo>& session_flag_infos() {
  static const std::vector<SessionFlagInfo> infos = {
      {SessionFlag::kThreads, "--threads", "threads"},
      {SessionFlag::kOptLevel, "--opt-level", "opt_level"},
      {SessionFlag::kDisablePass, "--disable-pass", "disabled_passes"},
      {SessionFlag::kPrecision, "--precision", "precision"},
      {SessionFlag::kWeightsCache, "--weights-cache", "weights_cache"},
      {SessionFlag::kPoolWait, "--pool-wait", "pool_wait"},
      {SessionFlag::kMaxMemory, "--max-memory", "max_memory"},
  };
  return infos;
}

void add_session_flags(CLI::App* cmd, SessionFlags& f, std::initializer_list<SessionFlag> which) {
  for (SessionFlag flag : which) {
    const SessionFlagInfo& info = session_flag_infos()[static_cast<size_t>(flag)];
    const std::string text = help(info);
    switch (flag) {
      case SessionFlag::kThreads: cmd->add_option(info.name, f.threads, text)->check(CLI::NonNegativeNumber); break;
      case SessionFlag::kOptLevel: cmd->add_option(info.name, f.opt_level, text)->check(CLI::Range(0, 2)); break;
      case SessionFlag::kDisablePass: cmd->add_option(info.name, f.disabled_passes, text); break;
      case SessionFlag::kWeightsCache: cmd->add_option(info.name, f.weights_cache, text); break;
      case SessionFlag::kPrecision:
        cmd->add_option_function<std::string>(info.name, [&f](const std::string& v) { f.precision = parse_precision(v).value(); }, text)
            ->check([](const std::string& v) { return check_parse(&parse_precision, v); });
        break;
      case SessionFlag::kPoolWait:
        cmd->add_option_function<std::string>(info.name, [&f](const std::string& v) { f.pool_wait = parse_pool_wait(v).value(); }, text)
            ->check([](const std::string& v) { return check_parse(&parse_pool_wait, v); });
        break;
      case SessionFlag::kMaxMemory:
        cmd->add_option_function<std::string>(info.name, [&f](const std::string& v) { f.max_memory = parse_byte_size(v).value(); }, text)
            ->check([](const std::string& v) { return check_parse(&parse_byte_size, v); });
        break;
    }
  }
}

void SessionFlags::apply(SessionOptions& o, std::map<std::string, std::string>* sources) const {
  auto mark = [sources](const char* field) {
    if (sources) (*sources)[std::string("session.") + field] = "flag";
  };
  if (threads) o.threads = *threads, mark("threads");
  if (opt_level) o.opt_level = *opt_level, mark("opt_level");
  if (!disabled_passes.empty()) o.disabled_passes = disabled_passes, mark("disabled_passes");
  if (precision) o.precision = *precision, mark("precision");
  if (weights_cache) o.weights_cache = *weights_cache, mark("weights_cache");
  if (pool_wait) o.pool_wait = *pool_wait, mark("pool_wait");
  if (max_memory) o.max_memory = *max_memory, mark("max_memory");
}

void SessionFlags::apply(PipelineOptions& o) const {
  if (threads) o.session.threads = *threads;
  if (opt_level) o.session.opt_level = *opt_level;
  if (!disabled_passes.empty()) o.session.disabled_passes = disabled_passes;
  if (precision) o.precision = *precision;
  if (weights_cache) o.weights_cache = *weights_cache;
  if (pool_wait) o.pool_wait = *pool_wait;
}

}  // namespace glassbox::cli
