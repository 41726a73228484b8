// Routes of generation models (docs/serving.md, "Generation"): OpenAI POST /v1/chat/completions,
// POST /v1/completions, GET /v1/models; TGI POST /generate, POST /generate_stream. Each parses
// its protocol's request into a GenerationJob for the model's GenerationWorker and renders the
// worker's events in the protocol's shapes (JSON, or SSE through a ResponseStream). Every answer
// carries the effective generation policy (X-Glassbox-Policy, and a "glassbox" object in bodies).
#pragma once

#include <string>
#include <vector>

#include "server/routes/router.h"

namespace glassbox::server {

// The handlers (openai_chat_completions, openai_completions, openai_models, tgi_generate,
// tgi_generate_stream) are declared with the route table's in router.h.

}  // namespace glassbox::server
