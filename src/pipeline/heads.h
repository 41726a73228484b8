// glassbox.json "heads" (include/glassbox/embedding_heads.h): several embedding heads read from the
// outputs of one engine run (the BGE-M3 shape). Parsing with explain rows, and the arithmetic per head.
#pragma once

#include <optional>
#include <vector>

#include "glassbox/embedding_heads.h"
#include "pipeline/model_dir.h"

namespace glassbox::pipeline {

// Whether glassbox.json declares "heads" (derive_embedding then derives no dense pooling).
bool declares_heads(const ModelDirFiles& f);

// glassbox.json "heads" -> the declared heads (nullopt: none), one explain row per field. Every field is
// required; unknown heads and fields, outputs the model lacks, an output named twice, skip tokens the
// tokenizer does not know and a declaration beside another head ("sparse", "multi_vector", "pooling",
// modules.json) are refused by name.
Result<std::optional<EmbeddingHeads>> derive_heads(const ModelDirFiles& f, const std::vector<TensorSpec>& outputs,
                                                   const Tokenizer& tokenizer, const PipelineDecisions& dec,
                                                   std::vector<Derivation>& d);

// One run's outputs -> each text's declared heads (`where` names the model in errors).
Result<std::vector<HeadEmbeddings>> read_heads(const EmbeddingHeads& heads, const std::vector<EncodedText>& batch,
                                               const std::vector<NamedTensor>& outs, const std::string& where);

}  // namespace glassbox::pipeline
