// Recognising a decoder's ONNX layout from its input and output names (docs/generation.md
// "Models and layouts"); anything else is refused, naming what was expected.
#pragma once

#include <string>
#include <vector>

#include "glassbox/generation.h"

namespace glassbox::generation {

struct DecoderLayout {
  DecoderInfo info;
  DataType ids_dtype = DataType::kInt64;   // input_ids / position_ids
  DataType mask_dtype = DataType::kInt64;  // attention_mask
  std::vector<std::string> past_names;     // past_key_values.{i}.key, .value, in layer order
  std::vector<std::string> present_names;  // present.{i}.key, .value
  // Optimum's legacy merged layout: the bool input that picks the If's branch. Fed false on a
  // run whose past is empty (the no-cache branch; the zero-length pasts are dummies), true after.
  bool use_cache_branch = false;
};

// config: config.json, used only for the vocabulary size when the logits' width is symbolic.
Result<DecoderLayout> recognise_layout(const std::vector<TensorSpec>& inputs, const std::vector<TensorSpec>& outputs,
                                       int64_t config_vocab_size);

// Which model directories are decoders (the server serves them as generation models, `glassbox accuracy` measures
// their greedy generation): tokenizer.json and a config.json whose "architectures" names a causal language model
// ("...ForCausalLM" or "...LMHeadModel"); GenerationSession then checks the ONNX layout and refuses anything it
// cannot generate with, by name. The rule in words (explain and the docs quote it), and the check.
extern const char* const kGenerationModelRule;
bool is_generation_model_dir(const std::string& dir);

}  // namespace glassbox::generation
