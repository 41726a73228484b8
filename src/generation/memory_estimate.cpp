#include "glassbox/generation_memory.h"

#include <algorithm>

namespace glassbox::generation {
namespace {

// The feeds of one run over `batch` rows with a past of `past` tokens and `fresh` new ones, shaped as
// GenerationSession's run_rows builds them (Optimum's layout): the values do not change what is allocated.
Result<std::vector<NamedTensor>> feeds_at(const GenerationSession& g, int64_t batch, int64_t past, int64_t fresh) {
  const DecoderInfo& info = g.decoder();
  std::vector<NamedTensor> feeds;
  for (const auto& spec : g.session().inputs()) {
    Shape shape;
    if (spec.name == "input_ids" || spec.name == "position_ids") shape = {batch, fresh};
    else if (spec.name == "attention_mask") shape = {batch, past + fresh};
    else if (spec.name == "use_cache_branch") shape = {1};
    else if (spec.dtype == DataType::kFloat32) shape = {batch, info.kv_heads, past, info.head_dim};  // past_key_values.*
    else return make_error(ErrorCode::kUnsupported, "decoder input '" + spec.name + "' is not one the memory estimate knows",
                           info.model_path, "estimate this decoder by measuring a generation instead");
    GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(spec.dtype, shape));
    if (spec.name == "attention_mask") {
      for (int64_t i = 0; i < t.numel(); ++i) {
        if (t.dtype() == DataType::kInt64) t.mutable_data<int64_t>()[i] = 1;
        else if (t.dtype() == DataType::kInt32) t.mutable_data<int32_t>()[i] = 1;
      }
    }
    if (spec.name == "use_cache_branch") t.mutable_data<bool>()[0] = past > 0;
    feeds.push_back({spec.name, std::move(t)});
  }
  return feeds;
}

}  // namespace

Result<DecoderMemory> estimate_decoder_memory(const GenerationSession& g, int64_t batch, int64_t prompt, int64_t new_tokens,
                                              int64_t reserved) {
  if (batch < 1 || prompt < 1 || new_tokens < 1)
    return make_error(ErrorCode::kInvalidArgument, "generation shape " + std::to_string(batch) + " x " + std::to_string(prompt) +
                      " + " + std::to_string(new_tokens) + " has an empty part", {}, "batch, prompt and new tokens are each >= 1");
  const int64_t bpt = g.decoder().kv_bytes_per_token;
  DecoderMemory m;
  m.batch = batch, m.prompt = prompt, m.new_tokens = new_tokens;
  m.kv_cache = batch * (prompt + new_tokens) * bpt;
  const int64_t last_past = prompt + new_tokens - 1;
  GB_ASSIGN_OR_RETURN(auto prefill, feeds_at(g, batch, 0, prompt));
  GB_ASSIGN_OR_RETURN(auto step, feeds_at(g, batch, last_past, 1));
  for (const auto& f : step) m.past_feeds += static_cast<int64_t>(f.tensor.nbytes());
  // What the session counts outside itself includes the cache and the step's feeds, as a budgeted caller reserves them.
  GB_ASSIGN_OR_RETURN(MemoryReport a, g.session().check_memory(prefill, reserved));
  GB_ASSIGN_OR_RETURN(MemoryReport b, g.session().check_memory(step, reserved));
  const MemoryReport& big = a.run() >= b.run() ? a : b;
  m.first_run = big.first_run, m.arena = big.arena, m.shape = big.shape;
  return m;
}

}  // namespace glassbox::generation
