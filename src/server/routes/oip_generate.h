// OIP infer for generation models, Triton's generate convention: BYTES "text_input" [N] (or
// [N, 1]) -> BYTES "text_output" [N], optional request parameters mapped onto the generation
// policy (max_tokens / max_new_tokens, temperature, top_p, top_k, seed, stop, do_sample,
// repetition_penalty). Each text is one job of the model's GenerationWorker, the same path as
// /v1/completions; the effective policy is echoed as the response parameter "policy" (the
// X-Glassbox-Policy form) and, over REST, in the X-Glassbox-Policy header.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "server/codec/oip_codec.h"
#include "server/routes/router.h"

namespace glassbox::server {

// Called once with text_output and the response parameters; every refusal goes to `respond`.
using GenerateAnswer = std::function<void(std::vector<OipTensor> outputs, const nlohmann::json& parameters)>;

void infer_generate(ServerContext& ctx, std::shared_ptr<const LoadedModel> model, const InferRequest& req,
                    const Responder& respond, const HttpRequest& origin, GenerateAnswer done);

}  // namespace glassbox::server
