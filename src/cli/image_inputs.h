// `classify` on an image model directory (docs/vision.md). The declared rule: a model directory
// (--model, or the first argument) that holds preprocessor_config.json (or glassbox.json "vision")
// and no tokenizer.json is an image model; every other argument must then be an image file (it
// exists and starts with JPEG/PNG/WebP magic bytes). An argument that is not is an error naming it,
// never text classified by guess.
#pragma once

#include <string>
#include <vector>

#include "cli/text_inputs.h"

namespace glassbox::cli {

// The image model directory the arguments name, or "" (then classify is the text pipeline).
std::string image_model_dir(const TextArgs& a);

// One JSON line per image on stdout: {"image", "label", "labels": [{"label","score"}], "logits",
// "width", "height"}.
void run_image_classify(const std::string& dir, const TextArgs& a, int top_k);

// `embed` on an image model directory: the images as one batch (ImageEmbedder); with `print`, one
// JSON line per image {"image", "vector", "width", "height"}. Returns the vectors in argument order.
std::vector<std::vector<float>> run_image_embed(const std::string& dir, const TextArgs& a, bool print);

}  // namespace glassbox::cli
