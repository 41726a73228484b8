// glassbox classify [MODEL_DIR] [TEXT...] [--top-k K] [--batch N] [--truncation P]
// glassbox classify IMAGE_MODEL_DIR IMAGE... [--top-k K]   (cli/image_inputs.h: the declared rule)
#include "cli/image_inputs.h"
#include "cli/text_inputs.h"

void add_classify_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("classify", "Classify texts with a model directory (default: the embedded language "
                                             "identification model); one JSON line per text on stdout");
  struct Args {
    glassbox::cli::TextArgs text;
    int top_k = 1;
    bool timing = false;
  };
  auto a = std::make_shared<Args>();
  glassbox::cli::add_text_options(cmd, a->text);
  cmd->add_option("--top-k", a->top_k, "labels reported per text (default 1)")->check(CLI::PositiveNumber);
  cmd->add_flag("--timing", a->timing,
                "run the texts one at a time and print per-text latency (p50/p95/p99), load time and peak RSS "
                "as a JSON line on stderr (default: off, texts run in batches)");
  cmd->callback([a] {
    using namespace glassbox;
    if (const std::string dir = cli::image_model_dir(a->text); !dir.empty())
      return cli::run_image_classify(dir, a->text, a->top_k);
    std::vector<PipelineInput> texts;
    const auto load0 = std::chrono::steady_clock::now();
    Pipeline pipeline = cli::load_pipeline("classify", a->text, texts);
    cli::TextTiming timing;
    timing.load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load0).count();
    const Pipeline* p = &pipeline;
    const auto t0 = std::chrono::steady_clock::now();
    int64_t tokens = 0;
    size_t index = 0;
    cli::with_progress(texts, a->timing ? 1 : 256, [&](const std::vector<PipelineInput>& chunk) {
      const auto c0 = std::chrono::steady_clock::now();
      auto r = p->classify(chunk, a->top_k);
      if (a->timing) timing.per_text_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count());
      if (!r.ok()) cli::fail("classify", std::move(r).take_error().with_where("texts from " + std::to_string(index)));
      for (size_t i = 0; i < r->size(); ++i) {
        const auto& c = (*r)[i];
        nlohmann::ordered_json j;
        j["text"] = chunk[i].text;
        if (chunk[i].pair) j["pair"] = *chunk[i].pair;
        j["label"] = c.labels.front().label;
        if (p->decisions().abstain_below) j["abstained"] = c.abstained;  // declared: the top score is below it
        auto labels = nlohmann::ordered_json::array();
        for (const auto& l : c.labels) labels.push_back({{"label", l.label}, {"score", l.score}});
        j["labels"] = labels;
        j["tokens"] = c.tokens;
        j["tokens_dropped"] = c.tokens_dropped;
        std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        tokens += c.tokens;
      }
      index += chunk.size();
    });
    cli::print_throughput("classify", texts.size(), tokens, t0);
    if (a->timing) cli::print_timing("classify", timing);
  });
}
