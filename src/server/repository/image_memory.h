// An image or OCR model's memory account (docs/memory.md, "In the server"): its sessions' weights, what its load
// left resident beyond them, and the dry runs (Session::check_memory) of its largest declared inputs — a
// classifier's one image and an embedder's max_batch_size images at the size the preprocessing declares, OCR's
// detector at det_limit_side_len square, its classifier and its recogniser at rec_min_width.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "server/repository/loaded_model.h"
#include "server/repository/model_memory.h"

namespace glassbox::server {

struct ImageAccount {
  int64_t bytes = 0;    // the model's account (without the process): weights + load growth + the largest run
  nlohmann::json rows;  // explain's "memory" rows
};

// `rss_before_load`: the resident set before the model's sessions loaded (the load's growth is measured from it).
// Without a budget: weights + load growth, no dry run (rows empty). Under one: refused, naming the numbers, when
// a run does not fit (or when the preprocessed size follows the image, so no largest size is declared).
Result<ImageAccount> image_memory_account(const LoadedModel& m, const ModelBudget& b, int64_t rss_before_load, int64_t max_batch);

}  // namespace glassbox::server
