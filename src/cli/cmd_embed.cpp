// glassbox embed [MODEL_DIR] [TEXT...] [--output FILE.npy] [--batch N] [--truncation P]
#include "cli/text_inputs.h"
#include "runtime/tensor_io.h"

void add_embed_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("embed", "Embed texts with a model directory (pooling per the directory's decisions); "
                                          "JSON lines on stdout, or one [texts, hidden] .npy with --output");
  struct Args {
    glassbox::cli::TextArgs text;
    std::string output;
  };
  auto a = std::make_shared<Args>();
  glassbox::cli::add_text_options(cmd, a->text);
  cmd->add_option("--output", a->output, "write all vectors as one float32 [texts, hidden] .npy (default: JSONL on stdout)");
  cmd->callback([a] {
    using namespace glassbox;
    std::vector<PipelineInput> texts;
    Pipeline pipeline = cli::load_pipeline("embed", a->text, texts);
    const Pipeline* p = &pipeline;
    const auto t0 = std::chrono::steady_clock::now();
    int64_t tokens = 0;
    std::vector<Embedding> all;
    cli::with_progress(texts, 256, [&](const std::vector<PipelineInput>& chunk) {
      auto r = p->embed(chunk);
      if (!r.ok()) cli::fail("embed", r.error());
      for (size_t i = 0; i < r->size(); ++i) {
        tokens += (*r)[i].tokens;
        if (a->output.empty()) {
          nlohmann::ordered_json j{{"text", chunk[i].text}, {"vector", (*r)[i].vector}, {"tokens", (*r)[i].tokens},
                                   {"tokens_dropped", (*r)[i].tokens_dropped}};
          std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        } else {
          all.push_back(std::move((*r)[i]));
        }
      }
    });
    if (!a->output.empty()) {
      const int64_t hidden = all.empty() ? 0 : static_cast<int64_t>(all[0].vector.size());
      auto t = Tensor::allocate(DataType::kFloat32, {static_cast<int64_t>(all.size()), hidden});
      if (!t.ok()) cli::fail("embed", t.error());
      for (size_t i = 0; i < all.size(); ++i)
        std::copy(all[i].vector.begin(), all[i].vector.end(), t->mutable_data<float>() + i * hidden);
      Status s = runtime::write_npy(a->output, *t);
      if (!s.ok()) cli::fail("embed", s.error());
    }
    cli::print_throughput("embed", texts.size(), tokens, t0);
  });
}
