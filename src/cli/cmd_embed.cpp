// glassbox embed IMAGE_MODEL_DIR IMAGE... [--output FILE.npy]   (an image embedder: cli/image_inputs.h)
// glassbox embed [MODEL_DIR] [TEXT...] [--output FILE.npy] [--batch N] [--truncation P] [--dimensions N]
//                [--prompt-name NAME | --prompt TEXT] [--model-file FILE] [--sparse]
// A sparse (SPLADE) model prints {"text", "indices", "values", "tokens", "tokens_dropped"} per text.
#include "cli/image_inputs.h"
#include "cli/text_inputs.h"
#include "runtime/tensor_io.h"

namespace {

// Every vector as one float32 [n, hidden] .npy (--output).
void write_vectors(const std::string& path, const std::vector<glassbox::Embedding>& all) {
  using namespace glassbox;
  const int64_t hidden = all.empty() ? 0 : static_cast<int64_t>(all[0].vector.size());
  auto t = Tensor::allocate(DataType::kFloat32, {static_cast<int64_t>(all.size()), hidden});
  if (!t.ok()) cli::fail("embed", t.error());
  for (size_t i = 0; i < all.size(); ++i) std::copy(all[i].vector.begin(), all[i].vector.end(), t->mutable_data<float>() + i * hidden);
  Status s = runtime::write_npy(path, *t);
  if (!s.ok()) cli::fail("embed", s.error());
}

}  // namespace

void add_embed_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("embed", "Embed texts with a model directory (pooling per the directory's decisions); "
                                          "JSON lines on stdout, or one [texts, hidden] .npy with --output");
  struct Args {
    glassbox::cli::TextArgs text;
    std::string output;
    std::optional<int64_t> dimensions;
    std::optional<std::string> prompt_name, prompt;
    bool sparse = false;
  };
  auto a = std::make_shared<Args>();
  glassbox::cli::add_text_options(cmd, a->text);
  cmd->add_option("--output", a->output, "write all vectors as one float32 [texts, hidden] .npy (default: JSONL on stdout)");
  cmd->add_option("--dimensions", a->dimensions,
                  "N: keep the first N values of each vector (Matryoshka), then normalize if the model does "
                  "(default: the whole vector)")->check(CLI::PositiveNumber);
  cmd->add_option("--prompt-name", a->prompt_name,
                  "NAME: put the model's prompt NAME (config_sentence_transformers.json prompts) before each text "
                  "(default: its default_prompt_name, else none)");
  cmd->add_option("--prompt", a->prompt, "TEXT: put TEXT before each text, literally (default: as --prompt-name)")
      ->excludes("--prompt-name");
  cmd->add_flag("--sparse", a->sparse,
                 "require sparse output (the model declares a SPLADE head: modules.json SpladePooling or glassbox.json "
                 "\"sparse\"); lines then hold indices and values (default: the output kind the model declares)");
  cmd->callback([a] {
    using namespace glassbox;
    std::vector<Embedding> all;
    if (const std::string dir = cli::image_model_dir(a->text); !dir.empty()) {  // an image embedder
      for (auto& v : cli::run_image_embed(dir, a->text, a->output.empty())) {
        Embedding e;
        e.vector = std::move(v);
        all.push_back(std::move(e));
      }
      if (!a->output.empty()) write_vectors(a->output, all);
      return;
    }
    std::vector<PipelineInput> texts;
    Pipeline pipeline = cli::load_pipeline("embed", a->text, texts);
    for (auto& t : texts) {
      t.prompt_name = a->prompt_name;
      t.prompt = a->prompt;
    }
    EmbedOptions options;
    options.dimensions = a->dimensions;
    const Pipeline* p = &pipeline;
    const bool sparse = pipeline.decisions().sparse.has_value();
    if (a->sparse && !sparse)
      cli::fail("embed", make_error(ErrorCode::kInvalidArgument, "this model gives dense vectors", "flag --sparse",
                                    "a sparse model declares a SpladePooling module (modules.json) or \"sparse\" in glassbox.json"));
    if (sparse && !a->output.empty())
      cli::fail("embed", make_error(ErrorCode::kInvalidArgument, "--output: a sparse model's vectors are not one dense array",
                                    a->output, "leave out --output: the JSON lines hold each text's indices and values"));
    const auto t0 = std::chrono::steady_clock::now();
    int64_t tokens = 0;
    cli::with_progress(texts, 256, [&](const std::vector<PipelineInput>& chunk) {
      auto r = p->embed(chunk, options);
      if (!r.ok()) cli::fail("embed", r.error());
      for (size_t i = 0; i < r->size(); ++i) {
        tokens += (*r)[i].tokens;
        if (sparse) {
          nlohmann::ordered_json j{{"text", chunk[i].text}, {"indices", (*r)[i].indices}, {"values", (*r)[i].vector},
                                   {"tokens", (*r)[i].tokens}, {"tokens_dropped", (*r)[i].tokens_dropped}};
          std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        } else if (a->output.empty()) {
          nlohmann::ordered_json j{{"text", chunk[i].text}, {"vector", (*r)[i].vector}, {"tokens", (*r)[i].tokens},
                                   {"tokens_dropped", (*r)[i].tokens_dropped}};
          std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        } else {
          all.push_back(std::move((*r)[i]));
        }
      }
    });
    if (!a->output.empty()) write_vectors(a->output, all);
    cli::print_throughput("embed", texts.size(), tokens, t0);
  });
}
