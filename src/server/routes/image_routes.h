// Image and OCR models behind the server's routes (docs/serving.md, "Images"): encoded images in
// (OIP BYTES "image", /predict and /embed JSON with base64 or data URIs, raw image/jpeg|png|webp
// bodies), decoded under the model's DecodeLimits (checked from each header, before any pixel
// buffer exists) on the scheduler's thread, then the model's pipeline. Decode time, encoded bytes
// and pixels are metrics.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/routes/router.h"

namespace glassbox::server {

struct ImageResults {
  std::vector<vision::ImageClassification> classes;  // image classifiers (top_k labels + every logit)
  std::vector<vision::ImageEmbedding> embeddings;     // image embedders
  std::vector<vision::ocr::OcrResult> ocr;            // OCR models
};

// Queues one work item that decodes `images` (encoded bytes, in order) and runs the model on them:
// a classifier or OCR model image by image, an embedder as one batch. `done` gets the results or the
// first error (its where names the image's index).
void submit_image_work(ServerContext& ctx, std::shared_ptr<const LoadedModel> model, std::vector<std::string> images, int top_k,
                       const HttpRequest& req, const Responder& respond, std::function<void(Result<ImageResults>)> done);

// One image's OCR result as the CLI prints it (without "image" and "ms"): width, height, lines
// (text, score, box, box_score, rotated_180), boxes_found, det_size.
nlohmann::ordered_json ocr_result_json(const vision::ocr::OcrResult& r);

// glassbox_image_decode_seconds, glassbox_image_bytes, glassbox_image_pixels (by model).
void declare_image_metrics(Metrics& metrics);

// POST /predict (embed = false: image classifiers and OCR) or /embed (embed = true: image
// embedders) when the request is for an image model: a raw image body, or JSON whose "model" names
// an image model, or JSON without "model" where image models are the only candidates. Returns
// false, touching nothing, when the request is for a text model (the text route answers it).
bool image_tei_route(ServerContext& ctx, HttpRequest& req, const Responder& respond, bool embed);

}  // namespace glassbox::server
