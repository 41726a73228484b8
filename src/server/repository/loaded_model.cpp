#include "server/repository/loaded_model.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fstream>

#include "core/process_memory.h"
#include "generation/decoder_layout.h"
#include "diag/explain.h"
#include "glassbox/generation_json.h"
#include "glassbox/generation_memory.h"
#include "glassbox/memory_budget.h"
#include "server/codec/oip_codec.h"
#include "server/repository/head_outputs.h"
#include "server/repository/image_memory.h"
#include "server/repository/model_memory.h"
#include "server/repository/warmup.h"

namespace glassbox::server {
namespace {

OipSpec to_oip(const TensorSpec& s) {
  OipSpec o{s.name, oip_datatype_name(s.dtype), {}};
  if (s.has_shape) o.shape = s.dims;  // -1 already marks symbolic dims
  return o;
}

nlohmann::ordered_json explain_json(const Session& session, const Pipeline* pipeline) {
  diag::EffectiveOptions opts;
  opts.session = session.options();
  auto rows = diag::explain_options(opts);
  auto process = diag::explain_process_options();  // the serving process's heap policy
  rows.insert(rows.end(), process.begin(), process.end());
  diag::ModelExplanation model{{}, session.op_decisions(), session.weights_cache_report()};
  if (pipeline) model.decisions = pipeline->derivations();
  return diag::explain_model_json(rows, model);
}

Status warm_up(const LoadedModel& m, const WarmupPlan& plan, int64_t reserved) {
  if (m.pipeline) {
    if (m.is_classifier()) return m.pipeline->classify(plan.texts).status();
    return m.pipeline->embed(plan.texts).status();
  }
  // Under a budget the warm-up is the tensor model's dry run: its shape's figures join the model's account,
  // beside what is reserved outside the run (the process and what the load left resident beyond the weights).
  if (m.session->options().max_memory > 0) return m.session->check_memory(plan.feeds, reserved).status();
  return m.session->run(plan.feeds).status();
}

// Plans and runs the warm-up; records the plan and outcome in m.warmup and m.explain["warmup"].
// The error returned means the model must not serve. `reserved`: a tensor model's dry run counts it outside the run.
Status run_warmup(LoadedModel& m, const ServerOptions& options, int64_t reserved = -1) {
  const auto t0 = std::chrono::steady_clock::now();
  auto declared = find_warmup_declaration(options, m.name, m.dir);
  if (!declared.ok()) return std::move(declared).take_error();
  auto plan = m.pipeline ? plan_text_warmup(*declared)
                         : plan_tensor_warmup(m.session->inputs(), *declared, m.dir, warmup_rules(options));
  const bool declared_plan = !declared->value.is_null();
  Status ran = plan.ok() ? warm_up(m, *plan, reserved) : Status(plan.error());
  m.warmup = plan.ok() ? plan->to_json() : nlohmann::ordered_json{{"source", declared_plan ? declared->source : "derived"},
                                                                   {"declared", declared_plan}};
  m.warmup["ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  m.warmup["policy"] = options.warmup_failure;
  if (ran.ok()) {
    m.warmup["outcome"] = "done";
  } else {
    const std::string shapes = plan.ok() ? " (" + plan->summary() + ")" : "";
    Error e = ran.error();
    e.what = std::string("warm-up run failed under ") + (declared_plan ? "declared" : "derived") + " shapes" + shapes + ": " + e.what;
    if (!declared_plan && e.fix.empty())
      e.fix = "declare the warm-up in the model's glassbox.json or server.model_warmup (docs/serving.md, \"Warm-up\")";
    if (declared_plan || options.warmup_failure != "ready") return e;
    m.warmup_error = e.to_string();
    m.warmup["outcome"] = "failed: ready without warm-up (warmup_failure=ready)";
    m.warmup["error"] = m.warmup_error;
  }
  m.explain["warmup"] = m.warmup;
  return {};
}

void describe_text_model(LoadedModel& m) {
  m.inputs = {{"text", "BYTES", {-1}}, {"text_pair", "BYTES", {-1}}};
  if (m.is_classifier()) {
    const int64_t c = static_cast<int64_t>(m.pipeline->decisions().labels.size());
    m.outputs = {{"logits", "FP32", {-1, c}}, {"label", "BYTES", {-1}}, {"score", "FP32", {-1}}};
  } else if (const EmbeddingHeads* heads = embedding_heads(*m.pipeline)) {  // one set of tensors per declared head
    m.outputs = head_output_specs(*m.pipeline, *heads);
  } else if (m.is_sparse()) {  // COO: row i of indices is (text, vocabulary id) of values[i]
    m.outputs = {{"indices", "INT64", {-1, 2}}, {"values", "FP32", {-1}}};
  } else {
    int64_t hidden = -1;
    for (const auto& o : m.pipeline->session().outputs())
      if (o.has_shape && !o.dims.empty() && o.dims.back() > 0) hidden = o.dims.back();
    m.outputs = {{"embedding", "FP32", {-1, hidden}}};
  }
}

// Error texts reach clients: the model directory's path (as given and canonical) is
// replaced by the model's name, so no internal path leaves the server.
Error scrubbed(const Error& e, const std::string& dir, const std::string& where) {
  std::vector<std::string> paths = {dir};
  std::error_code ec;
  const auto canon = std::filesystem::weakly_canonical(dir, ec);
  if (!ec) paths.push_back(canon.string());
  std::sort(paths.begin(), paths.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  auto scrub = [&](std::string s) {
    for (const auto& p : paths) {
      if (p.empty()) continue;
      for (size_t at = s.find(p); at != std::string::npos; at = s.find(p, at)) s.replace(at, p.size(), "<model>");
    }
    return s;
  };
  return make_error(e.code, scrub(e.what), scrub(where), scrub(e.fix));
}

// A decoder directory served by a GenerationWorker: no warm-up run (the first request's prefill
// plans the engine); its explain shows the decoder, KV budget, policy and chat template.
Result<std::shared_ptr<const LoadedModel>> load_generation_model(std::shared_ptr<LoadedModel> m, const std::string& dir,
                                                                 const PipelineOptions& engine, const ServerOptions& options,
                                                                 Metrics* metrics, const std::string& where, const ModelBudget& budget) {
  GenerationOptions gen;
  gen.session = engine.session;
  gen.precision = engine.precision;
  const KvBudget kv = kv_budget_for(budget, options);  // declared, or derived from the model's budget
  gen.kv_budget_bytes = kv.bytes;
  gen.prefill_chunk_tokens = options.prefill_chunk_tokens;
  // docs/memory.md: weights + the KV cache + the steps' past feeds + each run's tensors must fit (reserved up front).
  apply_generation_budget(gen.session, budget, gen.kv_budget_bytes);
  auto session = GenerationSession::load(dir, gen);
  if (!session.ok()) return scrubbed(with_budget_source(session.error(), budget), dir, where);
  // Under a budget, the smallest generation (one prompt token, one step) runs once at load: what it leaves resident
  // beyond its tensors is the GEMM weights packed on first use (docs/memory.md), counted as memory.first_use.
  int64_t first_use = 0;
  if (budget.bytes > 0) {
    const int64_t before = process_rss_bytes();
    auto dry = generation::estimate_decoder_memory(*session, 1, 1, 1);
    if (!dry.ok()) return scrubbed(with_budget_source(dry.error(), budget), dir, where);
    first_use = std::max<int64_t>(0, process_rss_bytes() - before - dry->run() - dry->past_feeds);
  }
  m->memory_bytes = session->session().memory_report().weights + first_use + 2 * gen.kv_budget_bytes;  // cache + feeds
  if (budget.bytes > 0) {  // the process, the KV cache and feeds, and now the first use: runs get what is left
    const int64_t reserved = session->session().memory_report().reserved + first_use;
    if (Status st = session->session().set_reserved(reserved); !st.ok())
      return scrubbed(with_budget_source(st.error(), budget), dir, where);
  }
  const MemoryReport report = session->session().memory_report();
  m->kind = ModelKind::kGeneration;
  nlohmann::ordered_json gexplain = generation::explain_json(*session);
  gexplain["decoder"].erase("model");  // a server path
  auto tmpl = ChatTemplate::from_model_dir(dir);
  if (tmpl.ok()) {
    m->chat_template.emplace(std::move(tmpl).value());
    gexplain["chat_template"] = {{"source", m->chat_template->source()}, {"names", m->chat_template->template_names()}};
  } else {
    m->chat_template_error = scrubbed(tmpl.error(), dir, where).to_string();
    gexplain["chat_template"] = {{"source", nullptr}, {"error", m->chat_template_error}};
  }
  gexplain["kv_cache"]["budget_bytes"] = kv.bytes;
  gexplain["kv_cache"]["budget_source"] = kv.source;
  gexplain["prefill"]["chunk_source"] = "server option prefill_chunk_tokens (--prefill-chunk-tokens)";
  gexplain["served_as"] = {{"kind", "generation"}, {"rule", generation::kGenerationModelRule}};
  GenerationWorkerOptions wopts;
  wopts.model = m->name;
  wopts.max_queue = options.max_queue;
  m->generator = std::make_shared<GenerationWorker>(std::move(session).value(), std::move(wopts), metrics);
  m->inputs = {{"text_input", "BYTES", {-1}}};
  m->outputs = {{"text_output", "BYTES", {-1}}};
  m->dir = dir;
  m->explain = explain_json(m->engine(), nullptr);
  m->explain["generation"] = std::move(gexplain);
  nlohmann::json memory = budget_rows(budget);  // docs/memory.md: weights + KV budget (+ the run limit under a budget)
  const MeasuredPart first{"memory.first_use", first_use,
                           "measured: what the smallest generation (1 prompt token, 1 step) left resident at load beyond "
                           "its tensors (the GEMM weights packed on first use)"};
  for (auto& r : session_memory_rows(report, gen.kv_budget_bytes, kv.source, first)) memory.push_back(r);
  m->explain["memory"] = std::move(memory);
  m->warmup = {{"source", "none"}, {"declared", false}, {"outcome", "not run: generation models plan on their first prefill"}};
  m->explain["warmup"] = m->warmup;
  return std::shared_ptr<const LoadedModel>(std::move(m));
}

// An image model (classifier or embedder) or a PP-OCR directory: decisions as explain rows, BYTES
// "image" in, a derived warm-up of one 64 x 64 mid-grey image (plans the engine at the declared size).
Status load_image_kinds(LoadedModel& m, const std::string& dir, const PipelineOptions& engine, const ModelBudget& budget,
                        int64_t max_batch) {
  vision::ImageClassifierOptions opts;
  opts.session = engine.session;
  if (engine.precision) opts.session.precision = *engine.precision;
  // Under a budget each session refuses a run whose tensors cross what the budget leaves it (413).
  opts.session.max_memory = budget.bytes;
  opts.session.max_memory_reserved = budget.bytes > 0 ? process_baseline_rss_bytes() : 0;
  const int64_t before_load = process_rss_bytes();
  const std::vector<vision::Step>* steps = nullptr;
  m.inputs = {{"image", "BYTES", {-1}}};
  if (vision::ocr::is_ocr_model_dir(dir)) {
    vision::ocr::OcrOptions o{opts.session, opts.limits};
    GB_ASSIGN_OR_RETURN(auto p, vision::ocr::OcrPipeline::load(dir, o));
    m.kind = ModelKind::kOcr;
    m.ocr = std::make_shared<const vision::ocr::OcrPipeline>(std::move(p));
    steps = &m.ocr->steps();
    m.outputs = {{"text", "BYTES", {-1}}, {"ocr", "BYTES", {-1}}};
  } else {
    GB_ASSIGN_OR_RETURN(auto task, vision::image_model_task(dir));
    m.kind = ModelKind::kImage;
    if (task.first == vision::ImageTask::kFeatureExtraction) {
      GB_ASSIGN_OR_RETURN(auto e, vision::ImageEmbedder::load(dir, opts));
      m.image_embedder = std::make_shared<const vision::ImageEmbedder>(std::move(e));
      steps = &m.image_embedder->steps();
      m.outputs = {{"embedding", "FP32", {-1, m.image_embedder->dims()}}};
    } else {
      GB_ASSIGN_OR_RETURN(auto c, vision::ImageClassifier::load(dir, opts));
      m.image_classifier = std::make_shared<const vision::ImageClassifier>(std::move(c));
      steps = &m.image_classifier->steps();
      const int64_t n = static_cast<int64_t>(m.image_classifier->labels().size());
      m.outputs = {{"logits", "FP32", {-1, n}}, {"label", "BYTES", {-1}}, {"score", "FP32", {-1}}};
    }
  }
  m.image_limits = opts.limits;
  GB_ASSIGN_OR_RETURN(ImageAccount account, image_memory_account(m, budget, before_load, max_batch));
  m.memory_bytes = account.bytes;
  m.explain = explain_json(m.engine(), nullptr);
  if (!account.rows.empty()) m.explain["memory"] = std::move(account.rows);
  m.explain["pipeline"] = nlohmann::ordered_json::array();
  for (const auto& st : *steps) {
    std::string value = st.value;  // a file's path names the model's folder as "<model>", never the server's path
    if (value.rfind(dir, 0) == 0) value = "<model>" + value.substr(dir.size());
    nlohmann::ordered_json row = {{"field", st.field}, {"value", value}, {"source", st.source}};
    if (!st.risk.empty()) row["risk"] = st.risk;
    m.explain["pipeline"].push_back(std::move(row));
  }
  const auto t0 = std::chrono::steady_clock::now();
  vision::RgbImage grey{64, 64, std::vector<uint8_t>(64 * 64 * 3, 128)};
  Status ran = m.ocr ? m.ocr->run(grey).status()
               : m.image_embedder ? m.image_embedder->embed({&grey}).status()
                                  : m.image_classifier->classify(grey, 1).status();
  if (!ran.ok()) return std::move(ran).take_error().with_where("warm-up (one 64 x 64 grey image)");
  m.warmup = {{"source", "derived"}, {"declared", false}, {"plan", "one 64 x 64 mid-grey image through the declared preprocessing"},
              {"ms", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()},
              {"outcome", "done"}};
  m.explain["warmup"] = m.warmup;
  return {};
}

}  // namespace

std::string client_message(const Error& e, const LoadedModel& m) {
  Error s = scrubbed(e, m.dir, e.where);
  return s.to_string();
}

// A tensor model (no tokenizer): its session under the budget (the process and the weights must fit, each request's
// tensors get what they leave, else 413) and its OIP inputs and outputs; *load_growth: what the load left resident
// beyond the weights. Errors unscrubbed (the caller scrubs them).
Status load_tensor_model(LoadedModel& m, const std::string& dir, const PipelineOptions& engine, const ModelBudget& budget,
                         int64_t* load_growth) {
  SessionOptions session = engine.session;
  if (engine.precision) session.precision = *engine.precision;
  auto file = find_model_file(dir);  // model.onnx, onnx/model.onnx or glassbox.json "model_file"
  if (!file.ok()) return file.error();
  // The budget: the process and the weights must fit, each request's tensors get what they leave (else 413),
  // and the warm-up is the dry run whose figures join the model's account (run_warmup).
  session.max_memory = budget.bytes;
  session.max_memory_reserved = budget.bytes > 0 ? process_baseline_rss_bytes() : 0;
  const int64_t before_load = process_rss_bytes();
  auto s = Session::load(file->path, session);
  if (!s.ok()) return with_budget_source(s.error(), budget);
  *load_growth = measured_load_growth(before_load, s->memory_report().weights);
  // Runs get the budget less the process, what the load left resident and the weights.
  if (budget.bytes > 0)
    if (Status st = s->set_reserved(process_baseline_rss_bytes() + *load_growth); !st.ok())
      return with_budget_source(st.error(), budget);
  // OIP v2 carries tensors: a sequence-of-maps output (ZipMap) is refused with the alternative (docs/ml.md).
  for (const auto& o : s->outputs())
    if (o.type != ValueType::kTensor)
      return make_error(ErrorCode::kUnsupported,
                        "output '" + o.name + "' is a " + o.type_note +
                            "; the OIP v2 protocol carries tensors only, so this model cannot be served",
                        file->relative,
                        "export the model without ZipMap (skl2onnx: options={'zipmap': False}; the probabilities "
                        "tensor before ZipMap holds the same numbers), or read the maps with `glassbox run`");
  m.kind = ModelKind::kTensor;
  m.session.emplace(std::move(s).value());
  for (const auto& i : m.session->inputs()) m.inputs.push_back(to_oip(i));
  for (const auto& o : m.session->outputs()) m.outputs.push_back(to_oip(o));
  return {};
}

Result<std::shared_ptr<const LoadedModel>> load_model_version(const std::string& name, const std::string& version,
                                                              const std::string& dir, const PipelineOptions& engine,
                                                              const ServerOptions& options, Metrics* metrics, int64_t others) {
  const std::string where = "model '" + name + "' version " + version;
  auto m = std::make_shared<LoadedModel>();
  m->name = name;
  m->version = version;
  auto budget = model_budget(name, dir, options, others);  // docs/memory.md: its own, or what the server leaves
  if (!budget.ok()) return scrubbed(budget.error(), dir, where);
  if (generation::is_generation_model_dir(dir)) return load_generation_model(std::move(m), dir, engine, options, metrics, where, *budget);
  if (vision::ocr::is_ocr_model_dir(dir) || vision::is_image_model_dir(dir)) {
    m->dir = dir;
    if (Status st = load_image_kinds(*m, dir, engine, *budget, options.max_batch_size); !st.ok())
      return scrubbed(with_budget_source(st.error(), *budget), dir, where);
    return std::shared_ptr<const LoadedModel>(std::move(m));
  }
  std::error_code ec;
  const bool text = std::filesystem::exists(std::filesystem::path(dir) / "tokenizer.json", ec);
  nlohmann::json memory_rows = nlohmann::json::array();  // docs/memory.md: the budget and its breakdown, for explain
  int64_t load_growth = 0;  // a tensor model's: what its load left resident beyond the weights (compiled trees)
  if (text) {
    // Checked at the largest run the scheduler forms, max_batch_size x max_length.
    auto p = pipeline::load_with_budget(dir, engine, budget->bytes, false, std::pair<int64_t, int64_t>{options.max_batch_size, 0},
                                        budget->source());
    if (!p.ok()) return scrubbed(with_budget_source(p.error(), *budget), dir, where);
    m->kind = ModelKind::kText;
    m->pipeline.emplace(std::move(p->pipeline));
    if (p->estimate) m->memory_bytes = p->estimate->total() - process_baseline_rss_bytes();
    for (const auto& d : p->rows) memory_rows.push_back({{"field", d.field}, {"value", d.value}, {"source", d.source}});
    if (budget->server > 0) memory_rows.push_back(budget_rows(*budget).back());  // memory.server
    describe_text_model(*m);
  } else if (Status st = load_tensor_model(*m, dir, engine, *budget, &load_growth); !st.ok()) {
    return scrubbed(st.error(), dir, where);
  }
  m->dir = dir;
  m->explain = explain_json(m->engine(), m->pipeline ? &*m->pipeline : nullptr);
  if (!memory_rows.empty()) m->explain["memory"] = std::move(memory_rows);
  const int64_t reserved = budget->bytes > 0 ? process_baseline_rss_bytes() + load_growth : -1;
  if (Status st = run_warmup(*m, options, reserved); !st.ok())
    return scrubbed(with_budget_source(st.error(), *budget), dir, where);
  if (m->session) {  // a tensor model's account: its weights, its load's growth and its warm-up shape's run tensors
    const MemoryReport r = m->session->memory_report();
    m->memory_bytes = r.weights + load_growth + r.run();
    if (budget->bytes > 0) {
      memory_rows = budget_rows(*budget);
      const MeasuredPart growth{"memory.load_growth", load_growth,
                                "measured: what the model's load left resident beyond its weights (a tree ensemble's "
                                "compiled trees); a load beside requests or another load measures their memory too"};
      for (auto& row : session_memory_rows(r, -1, "", growth)) memory_rows.push_back(row);
      m->explain["memory"] = memory_rows;
    }
  }
  if (!m->warmup_error.empty()) {  // what the index and explain show: no path of the server's
    m->warmup_error = scrubbed(make_error(ErrorCode::kInternal, m->warmup_error), dir, where).what;
    m->warmup["error"] = m->warmup_error;
    m->explain["warmup"] = m->warmup;
  }
  return std::shared_ptr<const LoadedModel>(std::move(m));
}

}  // namespace glassbox::server
