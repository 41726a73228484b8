// glassbox rerank MODEL_DIR --query Q [DOC...] [--top-n N] [--raw-scores] [--truncation only_second]
//                [--overflow error|truncate|split]
// A cross-encoder scores each (query, document) pair; a multi-vector (ColBERT) model scores each document by
// MaxSim against the query's token vectors. One JSON line per document, best first.
#include "cli/text_inputs.h"

void add_rerank_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("rerank", "Rank documents against a query with a cross-encoder model directory (one logit "
                                           "per pair, the model's declared score function); JSON lines, best first");
  struct Args {
    glassbox::cli::TextArgs text;
    std::string query;
    std::optional<size_t> top_n;
    bool raw_scores = false;
    std::optional<std::string> overflow;
  };
  auto a = std::make_shared<Args>();
  glassbox::cli::add_text_options(cmd, a->text);
  cmd->add_option("--query", a->query, "the query, the first text of every pair")->required();
  cmd->add_option("--top-n", a->top_n, "N: print the best N documents (default: all)")->check(CLI::PositiveNumber);
  cmd->add_flag("--raw-scores", a->raw_scores,
                "score = the model's logit (default: the declared score function; `glassbox explain` shows it)");
  glassbox::cli::add_overflow_option(cmd, a->overflow, /*split_allowed=*/true);
  cmd->callback([a] {
    using namespace glassbox;
    std::vector<PipelineInput> docs;
    Pipeline pipeline = cli::load_pipeline("rerank", a->text, docs);
    std::vector<std::string> texts;
    for (const auto& d : docs) {
      if (d.pair) cli::fail("rerank", make_error(ErrorCode::kInvalidArgument, "a document line holds a \"pair\"", "stdin",
                                                 "give each document as {\"text\": ...}; the query is --query"));
      texts.push_back(d.text);
    }
    RerankOptions options;
    options.top_n = a->top_n;
    options.raw_scores = a->raw_scores;
    const cli::OverflowChoice overflow = cli::overflow_choice(a->overflow);
    options.truncate = overflow.truncate;
    options.split = overflow.split;
    const auto t0 = std::chrono::steady_clock::now();
    auto ranked = rerank(pipeline, a->query, texts, options);
    if (!ranked.ok()) cli::fail("rerank", ranked.error());
    int64_t tokens = 0;
    for (const auto& r : *ranked) {
      tokens += r.tokens;
      nlohmann::ordered_json j{{"index", r.index},   {"score", r.score},   {"logit", r.logit},
                               {"text", texts[r.index]}, {"tokens", r.tokens}, {"tokens_dropped", r.tokens_dropped}};
      if (options.split) j["windows"] = r.windows;
      std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
    cli::print_throughput("rerank", texts.size(), tokens, t0);
  });
}
