#include "pipeline/model_dir.h"

#include <algorithm>
#include <filesystem>

#include "pipeline/json_fields.h"
#include "pipeline/multi_vector.h"

namespace glassbox::pipeline {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// "model.onnx" and "model_*.onnx" directly in `dir` (relative names prefixed by `prefix`).
void list_model_files(const fs::path& dir, const std::string& prefix, std::vector<std::string>& out) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file(ec) || name.size() < 10 || name.compare(name.size() - 5, 5, ".onnx") != 0) continue;
    if (name == "model.onnx" || name.rfind("model_", 0) == 0) out.push_back(prefix + name);
  }
}

}  // namespace

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace glassbox::pipeline

namespace glassbox {

const char* pooling_name(Pooling p) {
  switch (p) {
    case Pooling::kCls: return "cls";
    case Pooling::kMax: return "max";
    case Pooling::kMean: return "mean";
    case Pooling::kMeanSqrtLen: return "mean_sqrt_len_tokens";
    case Pooling::kWeightedMean: return "weightedmean";
    case Pooling::kLastToken: return "lasttoken";
    case Pooling::kNone: return "none";
  }
  return "?";
}

Result<ModelFileChoice> find_model_file(const std::string& dir, const std::optional<std::string>& declared,
                                        const std::string& declared_by) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return make_error(ErrorCode::kNotFound, "model directory does not exist", dir,
                      "pass a directory with model.onnx (or onnx/model.onnx), tokenizer.json and config.json");
  if (!declared) {  // glassbox.json's declaration, when the caller has none
    const std::string gj = (fs::path(dir) / "glassbox.json").string();
    GB_ASSIGN_OR_RETURN(auto g, pipeline::read_json(gj, false));
    GB_ASSIGN_OR_RETURN(auto file, pipeline::get_opt<std::string>(g, "model_file", gj));
    if (file) return find_model_file(dir, file, "glassbox.json \"model_file\"");
  }
  ModelFileChoice c;
  pipeline::list_model_files(dir, "", c.candidates);
  pipeline::list_model_files(fs::path(dir) / "onnx", "onnx/", c.candidates);
  std::sort(c.candidates.begin(), c.candidates.end());
  std::vector<std::string> others;
  if (declared) {
    const fs::path rel = fs::path(*declared).lexically_normal();
    if (declared->empty() || rel.is_absolute() || *rel.begin() == "..")
      return make_error(ErrorCode::kInvalidArgument, "model file '" + *declared + "' is not a path inside the model directory",
                        declared_by, "name the file relative to " + dir + ", e.g. onnx/model_quantized.onnx");
    const fs::path full = fs::path(dir) / rel;
    if (!fs::is_regular_file(full, ec))
      return make_error(ErrorCode::kNotFound, "model file '" + rel.string() + "' (" + declared_by + ") does not exist", dir,
                        c.candidates.empty() ? "this directory holds no model*.onnx file"
                                             : "ONNX files here: " + pipeline::joined(c.candidates));
    c.relative = rel.string();
    c.path = full.string();
    c.source = declared_by;
    return c;
  }
  for (const char* name : {"model.onnx", "onnx/model.onnx"}) {
    if (!fs::is_regular_file(fs::path(dir) / name, ec)) continue;
    c.relative = name;
    c.path = (fs::path(dir) / name).string();
    c.source = std::string("default: ") + name + " (the fp32 export: quantized variants change outputs)";
    for (const auto& f : c.candidates)
      if (f != c.relative) others.push_back(f);
    if (!others.empty())
      c.source += "; also here: " + pipeline::joined(others) + " (choose one with --model-file or glassbox.json \"model_file\")";
    return c;
  }
  if (!c.candidates.empty())
    return make_error(ErrorCode::kInvalidArgument,
                      "no fp32 model.onnx or onnx/model.onnx, only variants: " + pipeline::joined(c.candidates), dir,
                      "choose one with --model-file FILE or \"model_file\" in glassbox.json (a quantized file changes outputs: "
                      "measure it with `glassbox accuracy`)");
  return make_error(ErrorCode::kNotFound,
                    "the ONNX model is missing (looked for model.onnx, onnx/model.onnx, model_*.onnx, onnx/model_*.onnx)", dir,
                    "a model directory holds the ONNX file, tokenizer.json and config.json; export one with Optimum "
                    "(optimum-cli export onnx) or name the file with --model-file");
}

}  // namespace glassbox

namespace glassbox::pipeline {

Result<ModelDirFiles> read_model_dir(const std::string& dir, const std::optional<std::string>& model_file) {
  ModelDirFiles f;
  f.dir = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return make_error(ErrorCode::kNotFound, "model directory does not exist", dir,
                      "pass a directory with model.onnx (or onnx/model.onnx), tokenizer.json and config.json");
  GB_ASSIGN_OR_RETURN(f.glassbox, read_json((fs::path(dir) / "glassbox.json").string(), false));
  GB_ASSIGN_OR_RETURN(f.model, find_model_file(dir, model_file));  // flag > glassbox.json "model_file" > default
  f.model_path = f.model.path;
  f.tokenizer_path = (fs::path(dir) / "tokenizer.json").string();
  if (!fs::exists(f.tokenizer_path, ec))
    return make_error(ErrorCode::kNotFound, "required file is missing", f.tokenizer_path,
                      "a model directory needs the ONNX model, tokenizer.json and config.json");
  GB_ASSIGN_OR_RETURN(f.config, read_json((fs::path(dir) / "config.json").string(), true));
  GB_ASSIGN_OR_RETURN(f.tokenizer_config, read_json((fs::path(dir) / "tokenizer_config.json").string(), false));
  GB_ASSIGN_OR_RETURN(f.st, read_sentence_transformers(dir));
  return f;
}

Result<std::optional<TruncationPolicy>> parse_truncation(const std::string& text, int64_t max_length) {
  if (text == "none") return std::optional<TruncationPolicy>();
  TruncationPolicy p;
  p.max_length = static_cast<size_t>(max_length);
  if (text == "longest_first") p.strategy = TruncationStrategy::kLongestFirst;
  else if (text == "only_first") p.strategy = TruncationStrategy::kOnlyFirst;
  else if (text == "only_second") p.strategy = TruncationStrategy::kOnlySecond;
  else
    return make_error(ErrorCode::kInvalidArgument, "truncation '" + text + "' is unknown", {},
                      "use none, longest_first, only_first or only_second");
  return std::optional<TruncationPolicy>(p);
}

namespace {

// The directory's glassbox.json as the derive_* steps cite it: its content, its name (a decision's source) and
// its path (an error's where).
struct GlassboxJson {
  const json& g;
  std::string name;
  std::string path;
};
GlassboxJson glassbox_json(const ModelDirFiles& f) { return {f.glassbox, "glassbox.json", f.dir + "/glassbox.json"}; }

// task: glassbox.json > a sparse head (embeds) > output 'logits' with config.json id2label (classify) > embed.
Status derive_task(const ModelDirFiles& f, const std::vector<TensorSpec>& outputs, PipelineDecisions& dec,
                   std::vector<Derivation>& d) {
  const auto& [g, gj, gj_path] = glassbox_json(f);
  GB_ASSIGN_OR_RETURN(auto task, get_opt<std::string>(g, "task", gj_path));
  if (task) {
    if (*task == "classify") dec.task = PipelineTask::kClassify;
    else if (*task == "embed") dec.task = PipelineTask::kEmbed;
    else return make_error(ErrorCode::kInvalidModel, "task '" + *task + "' is unknown (classify|embed)", f.dir + "/" + gj);
    d.push_back({"task", *task, gj});
  } else if (f.st.splade || (g.is_object() && g.contains("sparse") && !g["sparse"].is_null())) {
    dec.task = PipelineTask::kEmbed;
    d.push_back({"task", "embed", f.st.splade ? "modules.json " + f.st.chain : gj + " sparse (a sparse head embeds)"});
  } else {
    const bool has_labels = f.config.contains("id2label");
    const bool logits = !outputs.empty() && outputs[0].name == "logits";
    dec.task = (has_labels && logits) ? PipelineTask::kClassify : PipelineTask::kEmbed;
    d.push_back({"task", dec.task == PipelineTask::kClassify ? "classify" : "embed",
                 logits ? "model output 'logits' + config.json id2label" : "model output is not 'logits'"});
  }
  return {};
}

// max_length: glassbox.json > sentence_bert_config.json > tokenizer_config.json > config.json; none is an error.
Status derive_max_length(const ModelDirFiles& f, PipelineDecisions& dec, std::vector<Derivation>& d) {
  const auto& [g, gj, gj_path] = glassbox_json(f);
  const std::string tc_path = f.dir + "/tokenizer_config.json";
  const std::string cfg_path = f.dir + "/config.json";
  GB_ASSIGN_OR_RETURN(auto v, get_opt<int64_t>(g, "max_length", gj_path));
  std::optional<int64_t> v2;  // HF writes the float 1e30 when the length is unknown: not an error, just no value
  if (f.tokenizer_config.is_object() && f.tokenizer_config.contains("model_max_length") &&
      !f.tokenizer_config["model_max_length"].is_number_float()) {
    GB_ASSIGN_OR_RETURN(v2, get_opt<int64_t>(f.tokenizer_config, "model_max_length", tc_path));
  }
  GB_ASSIGN_OR_RETURN(auto v3, get_opt<int64_t>(f.config, "max_position_embeddings", cfg_path));
  const auto& st = f.st;
  if (v) {
    dec.max_length = *v;
    d.push_back({"max_length", std::to_string(*v), gj});
  } else if (st.max_seq_length) {
    dec.max_length = *st.max_seq_length;
    d.push_back({"max_length", std::to_string(dec.max_length), "sentence_bert_config.json max_seq_length"});
  } else if (v2 && *v2 > 0 && *v2 < 1000000) {  // (or a huge integer)
    dec.max_length = *v2;
    d.push_back({"max_length", std::to_string(*v2), "tokenizer_config.json model_max_length"});
  } else if (v3) {
    dec.max_length = *v3;
    d.push_back({"max_length", std::to_string(*v3), "config.json max_position_embeddings"});
  } else {
    return make_error(ErrorCode::kInvalidModel, "cannot tell the model's maximum input length", f.dir,
                      "set \"max_length\" in glassbox.json");
  }
  if (dec.max_length <= 0) return make_error(ErrorCode::kInvalidModel, "max_length must be positive", f.dir);
  return {};
}

// truncation: flag > glassbox.json > none (an overlong input is an error).
Status derive_truncation(const ModelDirFiles& f, const PipelineOptions& options, PipelineDecisions& dec,
                         std::vector<Derivation>& d) {
  const auto& [g, gj, gj_path] = glassbox_json(f);
  std::string trunc = "none";
  std::string trunc_src = "default: an overlong input is an error, nothing is dropped silently";
  Side side = Side::kRight;
  if (g.is_object() && g.contains("truncation") && !g["truncation"].is_null()) {
    // "truncation": "longest_first", or {"enabled": true, "strategy": "longest_first", "direction": "right"}
    const json& t = g["truncation"];
    trunc_src = gj;
    if (t.is_string()) {
      trunc = t.get<std::string>();
    } else if (t.is_object()) {
      GB_ASSIGN_OR_RETURN(auto enabled, get_opt<bool>(t, "enabled", gj_path + " truncation"));
      GB_ASSIGN_OR_RETURN(auto strategy, get_opt<std::string>(t, "strategy", gj_path + " truncation"));
      GB_ASSIGN_OR_RETURN(auto direction, get_opt<std::string>(t, "direction", gj_path + " truncation"));
      GB_ASSIGN_OR_RETURN(auto tmax, get_opt<int64_t>(t, "max_length", gj_path + " truncation"));
      trunc = enabled.value_or(true) ? strategy.value_or("longest_first") : "none";
      if (direction && *direction != "right" && *direction != "left")
        return make_error(ErrorCode::kInvalidModel, "truncation direction '" + *direction + "' is unknown", gj_path,
                          "use \"right\" (keep the beginning) or \"left\" (keep the end)");
      if (direction && *direction == "left") side = Side::kLeft;
      if (tmax && *tmax != dec.max_length)
        return make_error(ErrorCode::kInvalidModel,
                          "truncation max_length " + std::to_string(*tmax) + " differs from max_length " +
                              std::to_string(dec.max_length),
                          gj_path, "truncation always cuts to the pipeline's max_length: drop one of the two fields");
    } else {
      return make_error(ErrorCode::kInvalidModel, "field 'truncation' must be a string or an object, got " + t.dump(),
                        gj_path, "use \"truncation\": \"none\" | \"longest_first\" | \"only_first\" | \"only_second\"");
    }
  }
  if (options.truncation) {
    trunc = *options.truncation;
    trunc_src = "flag --truncation";
  }
  GB_ASSIGN_OR_RETURN(dec.truncation, parse_truncation(trunc, dec.max_length));
  if (dec.truncation) dec.truncation->direction = side;
  d.push_back({"truncation", trunc + (dec.truncation && side == Side::kLeft ? " (left)" : ""), trunc_src});
  return {};
}

// batch_size: flag > glassbox.json > default.
Status derive_batch_size(const ModelDirFiles& f, const PipelineOptions& options, PipelineDecisions& dec,
                         std::vector<Derivation>& d) {
  const auto& [g, gj, gj_path] = glassbox_json(f);
  if (options.batch_size) {
    dec.batch_size = *options.batch_size;
    d.push_back({"batch_size", std::to_string(dec.batch_size), "flag --batch"});
  } else if (auto b = get_opt<int64_t>(g, "batch_size", gj_path); !b.ok()) {
    return std::move(b).take_error();
  } else if (*b) {
    dec.batch_size = **b;
    d.push_back({"batch_size", std::to_string(**b), gj});
  } else {
    d.push_back({"batch_size", std::to_string(dec.batch_size), "default: padding waste stays small for short texts"});
  }
  if (dec.batch_size <= 0) return make_error(ErrorCode::kInvalidArgument, "batch_size must be positive");
  return {};
}

// pad_id: glassbox.json > tokenizer.json padding > a pad token in the vocabulary > 0 (masked out).
Status derive_pad_id(const ModelDirFiles& f, const Tokenizer& tokenizer, PipelineDecisions& dec, std::vector<Derivation>& d) {
  const auto& [g, gj, gj_path] = glassbox_json(f);
  GB_ASSIGN_OR_RETURN(auto pad, get_opt<uint32_t>(g, "pad_id", gj_path));
  if (pad) {
    dec.pad_id = *pad;
    d.push_back({"pad_id", std::to_string(*pad), gj});
  } else if (tokenizer.file_padding()) {
    dec.pad_id = tokenizer.file_padding()->pad_id;
    d.push_back({"pad_id", std::to_string(dec.pad_id), "tokenizer.json padding.pad_id"});
  } else {
    bool found = false;
    for (const char* tok : {"[PAD]", "<pad>", "<PAD>", "[pad]"}) {
      if (auto id = tokenizer.token_to_id(tok)) {
        dec.pad_id = *id;
        d.push_back({"pad_id", std::to_string(*id), std::string("tokenizer vocabulary ") + tok});
        found = true;
        break;
      }
    }
    if (!found) d.push_back({"pad_id", "0", "default: no pad token declared (padded positions are masked out)"});
  }
  return {};
}

// labels: glassbox.json > config.json id2label; a classifier without them is an error.
Status derive_labels(const ModelDirFiles& f, PipelineDecisions& dec, std::vector<Derivation>& d) {
  const auto& [g, gj, gj_path] = glassbox_json(f);
  if (g.is_object() && g.contains("labels") && !g["labels"].is_null()) {
    if (!g["labels"].is_array())
      return make_error(ErrorCode::kInvalidModel, "field 'labels' must be an array of strings", gj_path);
    for (const auto& l : g["labels"]) {
      if (!l.is_string())
        return make_error(ErrorCode::kInvalidModel, "field 'labels' must be an array of strings, has " + l.dump(), gj_path);
      dec.labels.push_back(l.get<std::string>());
    }
    d.push_back({"labels", std::to_string(dec.labels.size()) + " labels", gj});
  } else if (f.config.contains("id2label") && f.config["id2label"].is_object()) {
    const auto& m = f.config["id2label"];
    dec.labels.resize(m.size());
    for (const auto& [k, v] : m.items()) {
      size_t idx = 0;
      try {
        idx = std::stoul(k);
      } catch (const std::exception&) {
        return make_error(ErrorCode::kInvalidModel, "id2label key '" + k + "' is not an integer", f.dir + "/config.json");
      }
      if (idx >= dec.labels.size())
        return make_error(ErrorCode::kInvalidModel, "id2label ids are not 0..n-1", f.dir + "/config.json");
      if (!v.is_string())
        return make_error(ErrorCode::kInvalidModel, "id2label value for '" + k + "' is not a string", f.dir + "/config.json");
      dec.labels[idx] = v.get<std::string>();
    }
    d.push_back({"labels", std::to_string(dec.labels.size()) + " labels", "config.json id2label"});
  }
  if (dec.task == PipelineTask::kClassify && dec.labels.empty())
    return make_error(ErrorCode::kInvalidModel, "a classify model needs label names", f.dir,
                      "add id2label to config.json or \"labels\" to glassbox.json");
  return {};
}

}  // namespace

Result<PipelineDecisions> derive_decisions(const ModelDirFiles& f, const PipelineOptions& options,
                                           const std::vector<TensorSpec>& outputs, const Tokenizer& tokenizer,
                                           std::vector<Derivation>& d) {
  PipelineDecisions dec;
  const auto& [g, gj, gj_path] = glassbox_json(f);
  d.push_back({"model_file", f.model.relative, f.model.source});
  GB_RETURN_IF_ERROR(derive_task(f, outputs, dec, d));
  GB_RETURN_IF_ERROR(derive_max_length(f, dec, d));
  GB_RETURN_IF_ERROR(derive_truncation(f, options, dec, d));
  GB_RETURN_IF_ERROR(derive_batch_size(f, options, dec, d));
  GB_RETURN_IF_ERROR(derive_pad_id(f, tokenizer, dec, d));
  GB_RETURN_IF_ERROR(derive_labels(f, dec, d));
  GB_RETURN_IF_ERROR(derive_score_function(f, dec, d));
  GB_RETURN_IF_ERROR(derive_abstain(f, dec, d));
  GB_RETURN_IF_ERROR(derive_multi_vector(f, tokenizer, dec, d).status());
  GB_RETURN_IF_ERROR(derive_embedding(f, outputs, dec, d));
  GB_ASSIGN_OR_RETURN(auto unpadded, get_opt<bool>(g, "unpadded_batches", gj_path));
  if (unpadded) {  // absent: Pipeline::load probes the model
    dec.unpadded_batches = *unpadded;
    d.push_back({"unpadded_batches", *unpadded ? "true" : "false", gj});
  }
  return dec;
}

}  // namespace glassbox::pipeline
