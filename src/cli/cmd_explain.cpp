// glassbox explain [MODEL.onnx | MODEL_DIR] [--config FILE] [--threads N] [--opt-level L] [--markdown | --json]
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "cli/cli_common.h"
#include "cli/session_flags.h"
#include "cli/serve_config.h"
#include "diag/explain.h"
#include "diag/explain_model.h"
#include "glassbox/pipeline.h"
#include "server/repository/warmup.h"
#include "server/grpc/grpc_server.h"
#include "server/routes/route_table.h"

namespace {

struct ExplainArgs {
  std::string model, config;
  glassbox::cli::SessionFlags session;
  std::optional<std::string> model_file;  // --model-file
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

// The warm-up `glassbox serve` would run for this model (declared or derived, with the serve
// options of --config), or the reason it cannot be planned.
nlohmann::ordered_json warmup_json(const std::string& model_dir, const glassbox::Session* tensor_session,
                                   const glassbox::server::ServerOptions& options) {
  using namespace glassbox;
  const std::string name = std::filesystem::path(model_dir).lexically_normal().filename().string();
  auto declared = model_dir.empty() ? Result<server::WarmupDeclaration>(server::WarmupDeclaration{})
                                    : server::find_warmup_declaration(options, name, model_dir);
  if (!declared.ok()) return {{"error", declared.error().to_string()}};
  auto plan = tensor_session ? server::plan_tensor_warmup(tensor_session->inputs(), *declared, model_dir,
                                                          server::warmup_rules(options))
                             : server::plan_text_warmup(*declared);
  if (!plan.ok()) return {{"source", declared->value.is_null() ? "derived" : declared->source}, {"error", plan.error().to_string()}};
  return plan->to_json();
}

void print_warmup(const nlohmann::ordered_json& w, bool markdown) {
  if (w.is_null()) return;
  std::cout << (markdown ? "\n**warm-up** (as `glassbox serve` runs it): " : "\nwarm-up (as `glassbox serve` runs it): ")
            << w.value("source", std::string("derived")) << "\n";
  if (w.contains("rule")) std::cout << "  rule: " << w["rule"].get<std::string>() << "\n";
  if (w.contains("error")) std::cout << "  cannot be planned: " << w["error"].get<std::string>() << "\n";
  if (markdown && w.contains("inputs")) std::cout << "\n| input | datatype | shape | fill | shape from |\n|---|---|---|---|---|\n";
  for (const auto& i : w.value("inputs", nlohmann::ordered_json::array())) {
    if (markdown)
      std::cout << "| " << i["name"].get<std::string>() << " | " << i["datatype"].get<std::string>() << " | "
                << i["shape"].dump() << " | " << i["fill"].get<std::string>() << " | " << i["shape_source"].get<std::string>() << " |\n";
    else
      std::cout << "  " << i["name"].get<std::string>() << " " << i["datatype"].get<std::string>() << i["shape"].dump() << " "
                << i["fill"].get<std::string>() << "  [" << i["shape_source"].get<std::string>() << "]\n";
  }
}

// What loading the model showed (diag::explain_model) and the warm-up plan a serve run would use;
// `opts.session` gets the resolved session options.
struct ExplainedModel {
  glassbox::WeightsCacheReport cache;
  std::vector<glassbox::Derivation> decisions;
  std::vector<glassbox::OpDecision> op_choices;
  nlohmann::ordered_json warmup;  // null: no model given
};

ExplainedModel load_for_explain(const ExplainArgs& a, glassbox::diag::EffectiveOptions& opts,
                                const glassbox::server::ServeConfig& serve) {
  using namespace glassbox;
  ExplainedModel m;
  if (a.model.empty()) return m;
  PipelineOptions po;
  po.session = opts.session;
  a.session.apply(po);
  po.model_file = a.model_file;
  auto e = diag::explain_model(a.model, po, a.session.max_memory.value_or(0), opts);
  if (!e.ok()) cli::fail("explain", e.error());
  m.decisions = std::move(e->model.decisions);
  m.op_choices = std::move(e->model.op_choices);
  m.cache = std::move(e->model.cache);
  if (e->pipeline) m.warmup = warmup_json(a.model, nullptr, serve.server);
  else if (e->tensor_session) m.warmup = warmup_json(e->warmup_dir, &*e->tensor_session, serve.server);
  return m;
}

// Decisions nothing in the model directory declared, whose default can be wrong for this model:
// repeated after the list, with their risk, so they are not lost among the declared ones.
void print_undeclared(const std::vector<glassbox::Derivation>& decisions) {
  bool first = true;
  for (const auto& d : decisions) {
    if (d.risk.empty()) continue;
    if (first) std::cout << "\nUNDECLARED (a default, not the model's own declaration):\n";
    first = false;
    std::cout << "  ! " << d.field << " = " << d.value << "\n    risk: " << d.risk << "\n";
  }
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
  a.session.apply(opts.session, &opts.sources);
  auto [cache, decisions, op_choices, warmup] = load_for_explain(a, opts, serve);
  auto rows = diag::explain_options(opts);
  auto process = diag::explain_process_options();
  rows.insert(rows.end(), process.begin(), process.end());
  if (a.serve) {
    auto more = server_rows(serve);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  if (a.markdown) {
    std::cout << diag::explain_to_markdown(rows);
    if (!decisions.empty()) std::cout << "\n| pipeline decision | value | source | risk (undeclared) |\n|---|---|---|---|\n";
    for (const auto& d : decisions)
      std::cout << "| " << d.field << " | " << d.value << " | " << d.source << " | " << (d.risk.empty() ? "" : "**" + d.risk + "**")
                << " |\n";
    if (!op_choices.empty()) std::cout << "\n| node | op | chosen at load |\n|---|---|---|\n";
    for (const auto& d : op_choices) std::cout << "| " << d.node << " | " << d.op_type << " | " << d.decision << " |\n";
    const std::string c = diag::weights_cache_to_text(cache);
    if (!c.empty()) std::cout << "\nweights cache (this load):\n\n```\n" << c << "```\n";
    print_warmup(warmup, true);
    // gRPC's table first: the routes table runs to the end (tests/server/test_routes.py reads it so).
    if (a.serve) std::cout << "\n**gRPC methods** (`glassbox serve --grpc-port`)\n\n" << server::grpc_methods_markdown();
    if (a.serve) std::cout << "\n**routes** (`glassbox serve`)\n\n" << server::routes_markdown();
  } else if (a.json) {
    auto j = diag::explain_model_json(rows, {decisions, op_choices, cache});
    if (!warmup.is_null()) j["warmup"] = warmup;
    j["cpu"] = diag::cpu_report_to_json(cpu_report());
    if (a.serve) j["routes"] = server::routes_json();
    if (a.serve) j["grpc_methods"] = server::grpc_methods_json();
    if (a.model.empty()) j["default_model"] = default_model_json();
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << diag::explain_to_text(rows);
    std::cout << "\n" << diag::cpu_report_to_text(cpu_report());
    if (a.model.empty()) print_default_model();
    if (!decisions.empty()) std::cout << "\npipeline decisions (" << a.model << ")\n";
    for (const auto& d : decisions) std::cout << "  " << d.field << " = " << d.value << "  [" << d.source << "]\n";
    print_undeclared(decisions);
    if (!op_choices.empty()) std::cout << "\nchosen at load (" << a.model << ")\n";
    for (const auto& d : op_choices) std::cout << "  " << d.node << " (" << d.op_type << "): " << d.decision << "\n";
    const std::string c = diag::weights_cache_to_text(cache);
    if (!c.empty()) std::cout << "\nweights cache (this load of " << a.model << ")\n" << c;
    print_warmup(warmup, false);
    if (a.serve) {
      std::cout << "\nroutes of `glassbox serve` (method, path = metric label, protocol of its responses and errors)\n";
      for (const auto& r : server::routes())
        std::cout << "  " << r.method << " " << r.path << "  [" << server::protocol_name(r.protocol) << "]  " << r.what << "\n";
      std::cout << "\ngRPC methods (--grpc-port; path = metric label)\n";
      for (const auto& m : server::grpc_methods()) std::cout << "  " << server::grpc_method_path(m.name) << "  " << m.what << "\n";
    }
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
  // With a model, --precision also lists the ops that run in bf16 / int8, and --weights-cache shows whether this
  // load hit, missed or rebuilt the cache and why.
  using glassbox::cli::SessionFlag;
  glassbox::cli::add_session_flags(cmd, a->session, {SessionFlag::kThreads, SessionFlag::kOptLevel, SessionFlag::kPrecision,
                                                     SessionFlag::kWeightsCache, SessionFlag::kPoolWait,
                                                     SessionFlag::kMaxMemory});
  glassbox::cli::add_model_file_option(cmd, a->model_file);
  auto* md = cmd->add_flag("--markdown", a->markdown, "write the table as Markdown (docs/decisions.md is generated this way)");
  cmd->add_flag("--serve", a->serve, "also print the options of `glassbox serve` (a --config file may then hold \"server\")");
  cmd->add_flag("--json", a->json, "print JSON (schema glassbox.explain/1)")->excludes(md);
  cmd->callback([a] { explain_command(*a); });
}
