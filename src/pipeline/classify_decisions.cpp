// How a classifier's logits become scores (decisions().score_function), read from the model's own
// files in this order, each with its source:
//   1. glassbox.json "score_function": "softmax" | "sigmoid" | "none";
//   2. a sentence-transformers CrossEncoder's declared activation: config.json
//      "sentence_transformers": {"activation_fn": ...} (v4+) or "sbert_ce_default_activation_function"
//      (v2/v3): torch.nn Sigmoid -> sigmoid, Identity -> none, Softmax -> softmax; anything else is
//      refused by name;
//   3. config.json "problem_type": regression -> none, multi_label_classification -> sigmoid,
//      single_label_classification -> softmax;
//   4. otherwise transformers' text-classification rule: one label -> sigmoid (a softmax over one
//      logit is always 1), several -> softmax.
#include <cstdio>
#include <string>

#include "pipeline/json_fields.h"
#include "pipeline/model_dir.h"

namespace glassbox {

const char* score_function_name(ScoreFunction f) {
  switch (f) {
    case ScoreFunction::kSoftmax: return "softmax";
    case ScoreFunction::kSigmoid: return "sigmoid";
    case ScoreFunction::kNone: return "none";
  }
  return "?";
}

}  // namespace glassbox

namespace glassbox::pipeline {
namespace {

using nlohmann::json;

struct Declared {
  ScoreFunction f;
  std::string source;
};

Result<std::optional<Declared>> from_glassbox_json(const ModelDirFiles& files) {
  const std::string where = files.dir + "/glassbox.json";
  GB_ASSIGN_OR_RETURN(auto v, get_opt<std::string>(files.glassbox, "score_function", where));
  if (!v) return std::optional<Declared>();
  for (ScoreFunction f : {ScoreFunction::kSoftmax, ScoreFunction::kSigmoid, ScoreFunction::kNone})
    if (*v == score_function_name(f)) return std::optional<Declared>(Declared{f, "glassbox.json"});
  return make_error(ErrorCode::kInvalidModel, "score_function '" + *v + "' is unknown", where, "use softmax, sigmoid or none");
}

// The CrossEncoder activation sentence-transformers saved with the model, if any.
Result<std::optional<Declared>> from_cross_encoder(const ModelDirFiles& files) {
  const std::string where = files.dir + "/config.json";
  const json& c = files.config;
  std::optional<std::string> name;
  std::string field;
  if (c.is_object() && c.contains("sentence_transformers") && c["sentence_transformers"].is_object()) {
    GB_ASSIGN_OR_RETURN(name, get_opt<std::string>(c["sentence_transformers"], "activation_fn", where));
    field = "sentence_transformers.activation_fn";
  }
  if (!name) {
    GB_ASSIGN_OR_RETURN(name, get_opt<std::string>(c, "sbert_ce_default_activation_function", where));
    field = "sbert_ce_default_activation_function";
  }
  if (!name) return std::optional<Declared>();
  const std::string source = "config.json " + field + " " + *name;
  if (*name == "torch.nn.modules.activation.Sigmoid") return std::optional<Declared>(Declared{ScoreFunction::kSigmoid, source});
  if (*name == "torch.nn.modules.linear.Identity") return std::optional<Declared>(Declared{ScoreFunction::kNone, source});
  if (*name == "torch.nn.modules.activation.Softmax") return std::optional<Declared>(Declared{ScoreFunction::kSoftmax, source});
  return make_error(ErrorCode::kUnsupported, "cross-encoder activation '" + *name + "' is not implemented", where,
                    "glassbox implements torch.nn Sigmoid, Identity and Softmax; or declare \"score_function\" in glassbox.json");
}

Result<std::optional<Declared>> from_problem_type(const ModelDirFiles& files) {
  const std::string where = files.dir + "/config.json";
  GB_ASSIGN_OR_RETURN(auto v, get_opt<std::string>(files.config, "problem_type", where));
  if (!v) return std::optional<Declared>();
  const std::string source = "config.json problem_type " + *v;
  if (*v == "regression") return std::optional<Declared>(Declared{ScoreFunction::kNone, source});
  if (*v == "multi_label_classification") return std::optional<Declared>(Declared{ScoreFunction::kSigmoid, source});
  if (*v == "single_label_classification") return std::optional<Declared>(Declared{ScoreFunction::kSoftmax, source});
  return make_error(ErrorCode::kInvalidModel, "problem_type '" + *v + "' is unknown", where,
                    "transformers knows regression, single_label_classification and multi_label_classification");
}

}  // namespace

Status derive_score_function(const ModelDirFiles& files, PipelineDecisions& dec, std::vector<Derivation>& d) {
  if (dec.task != PipelineTask::kClassify) return {};
  std::optional<Declared> found;
  for (auto* rule : {&from_glassbox_json, &from_cross_encoder, &from_problem_type}) {
    GB_ASSIGN_OR_RETURN(found, (*rule)(files));
    if (found) break;
  }
  if (!found)
    found = dec.labels.size() == 1
                ? Declared{ScoreFunction::kSigmoid, "default for one label (transformers' text-classification rule: a softmax "
                                                    "over one logit is always 1)"}
                : Declared{ScoreFunction::kSoftmax, "default for several labels (transformers' text-classification rule)"};
  dec.score_function = found->f;
  d.push_back({"score_function", score_function_name(found->f), found->source});
  return {};
}

Status derive_abstain(const ModelDirFiles& files, PipelineDecisions& dec, std::vector<Derivation>& d) {
  const std::string where = files.dir + "/glassbox.json";
  GB_ASSIGN_OR_RETURN(auto below, get_opt<double>(files.glassbox, "abstain_below", where));
  if (dec.task != PipelineTask::kClassify) {
    if (below)  // declared but meaningless here: refused, never ignored
      return make_error(ErrorCode::kInvalidModel, "abstain_below applies to classifiers; this model embeds", where,
                        "remove \"abstain_below\"");
    return {};
  }
  if (!below) {
    d.push_back({"abstain_below", "none", "default: every text gets its top label, however low its score"});
    return {};
  }
  if (!(*below > 0 && *below < 1))
    return make_error(ErrorCode::kInvalidModel, "abstain_below " + std::to_string(*below) + " is not a probability in (0, 1)",
                      where, "declare the top score under which the answer is \"not sure\", e.g. 0.5");
  if (dec.score_function == ScoreFunction::kNone)
    return make_error(ErrorCode::kInvalidModel, "abstain_below needs scores that are probabilities, but score_function is none",
                      where, "declare score_function softmax or sigmoid, or remove abstain_below");
  dec.abstain_below = *below;
  char text[32];
  std::snprintf(text, sizeof text, "%g", *below);
  d.push_back({"abstain_below", text, "glassbox.json (a top score below it is reported as abstained)"});
  return {};
}

}  // namespace glassbox::pipeline
