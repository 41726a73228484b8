// glassbox embed IMAGE_MODEL_DIR IMAGE... [--output FILE.npy]   (an image embedder: cli/image_inputs.h)
// glassbox embed [MODEL_DIR] [TEXT...] [--output FILE.npy] [--batch N] [--truncation P] [--dimensions N]
//                [--prompt-name NAME | --prompt TEXT] [--model-file FILE] [--sparse] [--query]
//                [--overflow error|truncate] [--heads dense,sparse,multi_vector]
// A sparse (SPLADE) model prints {"text", "indices", "values", "tokens", "tokens_dropped"} per text; a
// multi-vector (ColBERT) model {"text", "vectors": [[...] per kept token], "tokens", "tokens_dropped"}; a
// model with glassbox.json "heads" (BGE-M3) {"text", "dense": [...], "sparse": {"indices", "values"},
// "multi_vector": [[...]], "tokens", "tokens_dropped"}, every head from one engine run per batch.
#include <sstream>

#include "cli/image_inputs.h"
#include "cli/text_inputs.h"
#include "glassbox/embedding_heads.h"
#include "glassbox/tensor_io.h"

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

nlohmann::ordered_json rows_json(const glassbox::Embedding& e);

// One JSON line per text: a multi-vector model's rows, a sparse model's entries, or a dense vector.
void print_embedding(const glassbox::PipelineInput& in, const glassbox::Embedding& e, bool multi, bool sparse) {
  nlohmann::ordered_json j{{"text", in.text}};
  if (multi) {
    j["vectors"] = rows_json(e);
  } else if (sparse) {
    j["indices"] = e.indices;
    j["values"] = e.vector;
  } else {
    j["vector"] = e.vector;
  }
  j["tokens"] = e.tokens;
  j["tokens_dropped"] = e.tokens_dropped;
  std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

nlohmann::ordered_json rows_json(const glassbox::Embedding& e) {
  const size_t dim = e.vectors > 0 ? e.vector.size() / static_cast<size_t>(e.vectors) : 0;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (int64_t k = 0; k < e.vectors; ++k) rows.push_back(std::vector<float>(e.vector.begin() + k * dim, e.vector.begin() + (k + 1) * dim));
  return rows;
}

// --heads LIST (comma-separated) -> the heads to print, each one the model declares; empty: all declared.
std::vector<std::string> chosen_heads(const glassbox::EmbeddingHeads& declared, const std::optional<std::string>& flag) {
  using namespace glassbox;
  const std::vector<std::string> names = head_names(declared);
  if (!flag) return names;
  std::vector<std::string> out;
  std::stringstream ss(*flag);
  for (std::string h; std::getline(ss, h, ',');) {
    if (std::find(names.begin(), names.end(), h) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ",") + n;
      cli::fail("embed", make_error(ErrorCode::kInvalidArgument, "head '" + h + "' is not one the model declares", "flag --heads",
                                    "declared heads (glassbox.json heads): " + list));
    }
    if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  }
  return out;
}

// A model with declared heads: one engine run per batch feeds every head; one JSON line per text.
void embed_heads_cli(const glassbox::Pipeline& pipeline, const std::vector<glassbox::PipelineInput>& texts,
                     const std::vector<std::string>& heads) {
  using namespace glassbox;
  auto want = [&](const char* h) { return std::find(heads.begin(), heads.end(), h) != heads.end(); };
  const auto t0 = std::chrono::steady_clock::now();
  int64_t tokens = 0;
  cli::with_progress(texts, 256, [&](const std::vector<PipelineInput>& chunk) {
    auto r = embed_heads(pipeline, chunk);
    if (!r.ok()) cli::fail("embed", r.error());
    for (size_t i = 0; i < r->size(); ++i) {
      const HeadEmbeddings& h = (*r)[i];
      tokens += h.tokens;
      nlohmann::ordered_json j{{"text", chunk[i].text}};
      if (want("dense")) j["dense"] = h.dense->vector;
      if (want("sparse")) j["sparse"] = {{"indices", h.sparse->indices}, {"values", h.sparse->vector}};
      if (want("multi_vector")) j["multi_vector"] = rows_json(*h.multi_vector);
      j["tokens"] = h.tokens;
      j["tokens_dropped"] = h.tokens_dropped;
      std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
  });
  cli::print_throughput("embed", texts.size(), tokens, t0);
}

// A model with glassbox.json "heads": prints its heads and returns true; `other`: a flag that does not apply to one.
// A model without heads: --heads is refused; returns false.
bool embed_heads_if_declared(const glassbox::Pipeline& pipeline, const std::vector<glassbox::PipelineInput>& texts,
                             const std::optional<std::string>& heads_flag, const char* other) {
  using namespace glassbox;
  const EmbeddingHeads* heads = embedding_heads(pipeline);
  if (!heads && heads_flag)
    cli::fail("embed", make_error(ErrorCode::kInvalidArgument, "this model declares no heads", "flag --heads",
                                  "--heads applies to a model with glassbox.json \"heads\" (several embeddings from one run)"));
  if (!heads) return false;
  if (other)
    cli::fail("embed", make_error(ErrorCode::kInvalidArgument, other, pipeline.decisions().model_file,
                                  "this model declares heads (glassbox.json): choose them with --heads; each head is "
                                  "given as declared, in the JSON lines"));
  embed_heads_cli(pipeline, texts, chosen_heads(*heads, heads_flag));
  return true;
}

void add_heads_option(CLI::App* cmd, std::optional<std::string>& heads) {
  cmd->add_option("--heads", heads,
                  "LIST: the heads to print, comma-separated (dense, sparse, multi_vector), of a model that declares "
                  "glassbox.json \"heads\" (default: every declared head; all come from one engine run)");
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
    bool query = false;
    std::optional<std::string> overflow, heads;
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
  cmd->add_flag("--query", a->query,
                "multi-vector (ColBERT) models: embed the texts as queries (query prefix, query_length, [MASK] expansion) "
                "(default: as documents: document prefix, document_length, punctuation skiplist)");
  add_heads_option(cmd, a->heads);
  glassbox::cli::add_overflow_option(cmd, a->overflow, /*split_allowed=*/false);
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
    const bool multi = pipeline.decisions().multi_vector.has_value();
    if (a->query && !multi)
      cli::fail("embed", make_error(ErrorCode::kInvalidArgument, "only a multi-vector (ColBERT) model embeds queries apart",
                                    "flag --query", "leave out --query"));
    for (auto& t : texts) {
      t.prompt_name = a->prompt_name;
      t.prompt = a->prompt;
      t.query = a->query;
      t.allow_truncation = cli::overflow_choice(a->overflow).truncate;
    }
    const char* other = a->sparse ? "--sparse" : a->dimensions ? "--dimensions" : !a->output.empty() ? "--output" : nullptr;
    if (embed_heads_if_declared(pipeline, texts, a->heads, other)) return;
    const EmbedOptions options{std::nullopt, a->dimensions};
    const bool sparse = pipeline.decisions().sparse.has_value();
    if (a->sparse && !sparse)
      cli::fail("embed", make_error(ErrorCode::kInvalidArgument, "this model gives dense vectors", "flag --sparse",
                                    "a sparse model declares a SpladePooling module (modules.json) or \"sparse\" in glassbox.json"));
    if ((sparse || multi) && !a->output.empty())
      cli::fail("embed", make_error(ErrorCode::kInvalidArgument, "--output: a sparse or multi-vector model's vectors are not "
                                    "one dense array", a->output, "leave out --output: the JSON lines hold each text's vectors"));
    const auto t0 = std::chrono::steady_clock::now();
    int64_t tokens = 0;
    cli::with_progress(texts, 256, [&](const std::vector<PipelineInput>& chunk) {
      auto r = pipeline.embed(chunk, options);
      if (!r.ok()) cli::fail("embed", r.error());
      for (size_t i = 0; i < r->size(); ++i) {
        tokens += (*r)[i].tokens;
        if (multi || sparse || a->output.empty()) print_embedding(chunk[i], (*r)[i], multi, sparse);
        else all.push_back(std::move((*r)[i]));
      }
    });
    if (!a->output.empty()) write_vectors(a->output, all);
    cli::print_throughput("embed", texts.size(), tokens, t0);
  });
}
