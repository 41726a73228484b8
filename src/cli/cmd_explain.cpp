// glassbox explain [MODEL.onnx | MODEL_DIR] [--config FILE] [--threads N] [--opt-level L] [--markdown | --json]
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/cli_common.h"
#include "cli/serve_config.h"
#include "diag/explain.h"
#include "glassbox/pipeline.h"

namespace {

struct ExplainArgs {
  std::string model, config;
  std::optional<int> threads, opt_level;
  std::string precision;  // empty: not given
  std::optional<std::string> weights_cache;
  std::string pool_wait;  // empty: not given
  bool markdown = false, json = false;
  bool serve = false;
};

// The rows of `glassbox serve`'s options, in the same table as the engine's.
std::vector<glassbox::diag::OptionExplanation> server_rows(const glassbox::server::ServeConfig& config) {
  std::vector<glassbox::diag::OptionExplanation> rows;
  for (const auto& r : glassbox::server::explain_server_options(config.server, config.sources))
    rows.push_back({"server", r.name, r.value, r.default_value, r.source, r.reason, r.risk});
  return rows;
}

// Where `classify`/`embed`/`serve` find their model when no --model is given (no model argument
// here: that is the model they would use), and by which rule of the declared lookup order.
nlohmann::json default_model_json() {
  const auto found = glassbox::find_default_model();
  return {{"dir", found.dir}, {"found_by", found.found_by}, {"tried", found.tried}};
}

void print_default_model() {
  const auto found = glassbox::find_default_model();
  std::cout << "\ndefault model (classify/embed/serve without --model): " << found.dir << "\n  found by: "
            << found.found_by << "\n  lookup order:";
  for (const auto& t : found.tried) std::cout << " " << t;
  std::cout << "\n";
}

void explain_command(const ExplainArgs& a) {
  using namespace glassbox;
  diag::EffectiveOptions opts;
  server::ServeConfig serve;
  if (a.serve && !a.config.empty()) {
    cli::apply_serve_config_file("explain", a.config, serve);
    opts.session = serve.session;
    for (const auto& [k, v] : serve.sources) opts.sources[k] = v;
  } else if (!a.config.empty()) {
    std::ifstream in(a.config);
    if (!in) cli::fail("explain", make_error(ErrorCode::kNotFound, "cannot read config file", a.config));
    auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) cli::fail("explain", make_error(ErrorCode::kInvalidArgument, "config is not valid JSON", a.config));
    Status s = diag::apply_config(j, opts);
    if (!s.ok()) cli::fail("explain", std::move(s).take_error().with_where(a.config));
  }
  if (a.threads) {
    opts.session.threads = *a.threads;
    opts.sources["session.threads"] = "flag";
  }
  if (a.opt_level) {
    opts.session.opt_level = *a.opt_level;
    opts.sources["session.opt_level"] = "flag";
  }
  if (!a.precision.empty()) {
    opts.session.precision = cli::precision_or_fail("explain", a.precision);
    opts.sources["session.precision"] = "flag";
  }
  if (a.weights_cache) {
    opts.session.weights_cache = *a.weights_cache;
    opts.sources["session.weights_cache"] = "flag";
  }
  if (!a.pool_wait.empty()) {
    opts.session.pool_wait = cli::pool_wait_or_fail("explain", a.pool_wait);
    opts.sources["session.pool_wait"] = "flag";
  }
  WeightsCacheReport cache;  // what this load found in the packed-weights cache
  std::vector<Derivation> decisions;  // a model directory: the pipeline decisions and where each came from
  std::vector<OpDecision> op_choices;  // what ops chose at load (tree layouts), with why
  std::error_code ec;
  if (!a.model.empty() && std::filesystem::is_directory(a.model, ec)) {
    PipelineOptions po;
    po.session = opts.session;
    if (!a.precision.empty()) po.precision = opts.session.precision;
    if (a.weights_cache) po.weights_cache = *a.weights_cache;
    if (!a.pool_wait.empty()) po.pool_wait = opts.session.pool_wait;
    auto pipeline = Pipeline::load(a.model, po);
    if (!pipeline.ok()) cli::fail("explain", pipeline.error());
    opts.session = pipeline->session().options();
    decisions = pipeline->derivations();
    for (const auto& d : decisions)  // glassbox.json may declare the precision
      if ((d.field == "precision" || d.field == "weights_cache" || d.field == "pool_wait") && d.source == "glassbox.json")
        opts.sources["session." + d.field] = "file (glassbox.json)";
    op_choices = pipeline->session().op_decisions();
    cache = pipeline->session().weights_cache_report();
  } else if (!a.model.empty()) {
    // Loading resolves derived values (threads = 0 -> physical cores) exactly as `run` would.
    auto session = Session::load(a.model, opts.session);
    if (!session.ok()) cli::fail("explain", session.error());
    opts.session = session->options();
    op_choices = session->op_decisions();
    cache = session->weights_cache_report();
  }
  auto rows = diag::explain_options(opts);
  auto process = diag::explain_process_options();
  rows.insert(rows.end(), process.begin(), process.end());
  if (a.serve) {
    auto more = server_rows(serve);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  if (a.markdown) {
    std::cout << diag::explain_to_markdown(rows);
    if (!decisions.empty()) std::cout << "\n| pipeline decision | value | source |\n|---|---|---|\n";
    for (const auto& d : decisions) std::cout << "| " << d.field << " | " << d.value << " | " << d.source << " |\n";
    if (!op_choices.empty()) std::cout << "\n| node | op | chosen at load |\n|---|---|---|\n";
    for (const auto& d : op_choices) std::cout << "| " << d.node << " | " << d.op_type << " | " << d.decision << " |\n";
    const std::string c = diag::weights_cache_to_text(cache);
    if (!c.empty()) std::cout << "\nweights cache (this load):\n\n```\n" << c << "```\n";
  } else if (a.json) {
    auto j = diag::explain_to_json(rows);
    if (!decisions.empty()) {
      j["pipeline"] = nlohmann::json::array();
      for (const auto& d : decisions) j["pipeline"].push_back({{"field", d.field}, {"value", d.value}, {"source", d.source}});
    }
    if (!op_choices.empty()) {
      j["op_decisions"] = nlohmann::json::array();
      for (const auto& d : op_choices) j["op_decisions"].push_back({{"node", d.node}, {"op_type", d.op_type}, {"decision", d.decision}});
    }
    j["cpu"] = diag::cpu_report_to_json(cpu_report());
    if (a.model.empty()) j["default_model"] = default_model_json();
    else if (cache.state != "off" || !cache.reason.empty()) j["weights_cache"] = diag::weights_cache_to_json(cache);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << diag::explain_to_text(rows);
    std::cout << "\n" << diag::cpu_report_to_text(cpu_report());
    if (a.model.empty()) print_default_model();
    if (!decisions.empty()) std::cout << "\npipeline decisions (" << a.model << ")\n";
    for (const auto& d : decisions) std::cout << "  " << d.field << " = " << d.value << "  [" << d.source << "]\n";
    if (!op_choices.empty()) std::cout << "\nchosen at load (" << a.model << ")\n";
    for (const auto& d : op_choices) std::cout << "  " << d.node << " (" << d.op_type << "): " << d.decision << "\n";
    const std::string c = diag::weights_cache_to_text(cache);
    if (!c.empty()) std::cout << "\nweights cache (this load of " << a.model << ")\n" << c;
  }
}

}  // namespace

void add_explain_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("explain", "Print every effective option with its value, source (default/file/flag/derived), "
                                            "the reason for its default and its risk");
  auto a = std::make_shared<ExplainArgs>();
  cmd->add_option("model", a->model,
                  "ONNX model: resolve derived values (threads) as `run` would; a model directory also prints the "
                  "pipeline decisions and where each came from (default: none)");
  cmd->add_option("--config", a->config, "JSON file {\"session\":{...},\"load\":{...},\"encode\":{...}} (default: none)");
  cmd->add_option("--threads", a->threads, "as `run --threads` (default: option default)");
  cmd->add_option("--opt-level", a->opt_level, "as `run --opt-level` (default: option default)");
  glassbox::cli::add_precision_option(cmd, a->precision)
      ->description("as `run --precision`; with a model, lists the ops that run in bf16 / int8 (default: option default)");
  cmd->add_option("--weights-cache", a->weights_cache,
                  "as `run --weights-cache`; with a model, shows whether this load hit, missed or rebuilt the cache "
                  "and why (default: option default, or glassbox.json)");
  glassbox::cli::add_pool_wait_option(cmd, a->pool_wait)
      ->description("as `run --pool-wait` (default: option default, or glassbox.json)");
  auto* md = cmd->add_flag("--markdown", a->markdown, "write the table as Markdown (docs/decisions.md is generated this way)");
  cmd->add_flag("--serve", a->serve, "also print the options of `glassbox serve` (a --config file may then hold \"server\")");
  cmd->add_flag("--json", a->json, "print JSON (schema glassbox.explain/1)")->excludes(md);
  cmd->callback([a] { explain_command(*a); });
}
