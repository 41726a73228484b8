// Routes of generation models (docs/serving.md, "Generation"): OpenAI POST /v1/chat/completions,
// POST /v1/completions, GET /v1/models; TGI POST /generate, POST /generate_stream. Each parses
// its protocol's request into a GenerationJob for the model's GenerationWorker and renders the
// worker's events in the protocol's shapes (JSON, or SSE through a ResponseStream). Every answer
// carries the effective generation policy (X-Glassbox-Policy, and a "glassbox" object in bodies).
#pragma once

#include <string>
#include <vector>

#include "glassbox/generation.h"
#include "server/generation/generation_worker.h"
#include "server/routes/router.h"

namespace glassbox::server {

// The worker's refusal (queue full, KV budget, too long, draining) as a refusal with the status
// the generation rule chose and its code as the detail; the route table renders it per protocol.
HttpResponse generation_refusal_response(const GenerationRefusal& r);
// The error code of a generation that ended in error: "nonfinite_logits" when a logits row held NaN or Inf,
// "generation_error" otherwise (e.g. a chosen id outside the tokenizer's vocabulary).
const char* generation_error_code(const GenerationResult& r);
// X-Glassbox-Policy: {"field": [value, "source"], ...} on one line, ASCII only.
std::string policy_header(const GenerationPolicy& p);

// The handlers (openai_chat_completions, openai_completions, openai_models, tgi_generate,
// tgi_generate_stream) are declared with the route table's in router.h.

}  // namespace glassbox::server
