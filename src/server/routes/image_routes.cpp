// Image and OCR models on /predict and /embed (Hugging Face inference endpoints' shapes) and the
// work every image route shares (docs/serving.md, "Images").
#include "server/routes/image_routes.h"

#include <chrono>

#include "server/codec/image_body.h"
#include "server/codec/json_body.h"

namespace glassbox::server {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

Result<vision::DecodedImage> decode_one(const LoadedModel& m, const std::string& bytes, size_t i, Metrics* metrics) {
  const auto t0 = Clock::now();
  auto d = vision::decode_image(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), m.image_limits);
  const Labels labels = {{"model", m.name}};
  metrics->observe("glassbox_image_decode_seconds", labels, seconds_since(t0));
  metrics->observe("glassbox_image_bytes", labels, static_cast<double>(bytes.size()));
  if (!d.ok()) return std::move(d).take_error().with_where("image " + std::to_string(i));
  metrics->observe("glassbox_image_pixels", labels, static_cast<double>(d->image.width) * d->image.height);
  return d;
}

// An embedder's images run max_batch_size at a time (ServerOptions::max_batch_size: the largest run its memory
// account was checked at), each chunk one engine run (all preprocessed to the declared size, no padding).
Result<ImageResults> run_images(const LoadedModel& m, const std::vector<std::string>& images, int top_k, int64_t max_batch,
                                Metrics* metrics) {
  ImageResults out;
  if (m.image_embedder) {
    const size_t chunk = static_cast<size_t>(std::max<int64_t>(1, max_batch));
    for (size_t at = 0; at < images.size(); at += chunk) {
      std::vector<vision::DecodedImage> decoded;
      for (size_t i = at; i < std::min(images.size(), at + chunk); ++i) {
        GB_ASSIGN_OR_RETURN(auto d, decode_one(m, images[i], i, metrics));
        decoded.push_back(std::move(d));
      }
      std::vector<const vision::RgbImage*> ptrs;
      for (const auto& d : decoded) ptrs.push_back(&d.image);
      GB_ASSIGN_OR_RETURN(auto rows, m.image_embedder->embed(ptrs));
      for (auto& r : rows) out.embeddings.push_back(std::move(r));
    }
    return out;
  }
  for (size_t i = 0; i < images.size(); ++i) {  // decoded one at a time: one image's pixels held at once
    GB_ASSIGN_OR_RETURN(auto d, decode_one(m, images[i], i, metrics));
    const std::string where = "image " + std::to_string(i);
    if (m.ocr) {
      auto r = m.ocr->run(d.image);
      if (!r.ok()) return std::move(r).take_error().with_where(where);
      out.ocr.push_back(std::move(r).value());
    } else {
      auto r = m.image_classifier->classify(d.image, top_k);
      if (!r.ok()) return std::move(r).take_error().with_where(where);
      out.classes.push_back(std::move(r).value());
    }
  }
  return out;
}

// The READY models of this server that take images for the route (embedders for /embed, classifiers
// and OCR for /predict), and how many text models the same route could mean.
struct Candidates {
  std::vector<std::shared_ptr<const LoadedModel>> images;
  int text = 0;
};

Candidates candidates(ServerContext& ctx, bool embed) {
  Candidates c;
  for (const auto& e : ctx.repository.index()) {
    if (e.state != "READY") continue;
    ModelLookup l = ctx.repository.get(e.name);
    if (!l.model) continue;
    if (l.model->takes_images() && (embed == (l.model->image_embedder != nullptr))) c.images.push_back(l.model);
    if (l.model->pipeline && (embed ? l.model->is_embedder() : l.model->is_classifier())) ++c.text;
  }
  return c;
}

std::string query_model(const std::string& query) {
  size_t at = 0;
  while (at <= query.size()) {
    const size_t end = std::min(query.find('&', at), query.size());
    const std::string_view kv(query.data() + at, end - at);
    if (kv.rfind("model=", 0) == 0) return std::string(kv.substr(6));
    at = end + 1;
  }
  return {};
}

// The model a request names (JSON "model" or ?model=), else the one candidate. Sets `mine` false when
// the request is for a text model (nothing answered).
ModelLookup choose(ServerContext& ctx, const std::string& named, const Candidates& c, bool raw, bool embed, bool& mine) {
  const char* route = embed ? "/embed" : "/predict";
  mine = true;
  if (!named.empty()) {
    if (!valid_model_name(named)) return {nullptr, 400, "invalid model name"};
    ModelLookup l = ctx.repository.get(named);
    if (!l.model) return l;
    if (!l.model->takes_images()) {
      mine = !raw ? false : true;
      return {nullptr, 400, "model '" + named + "' is a text model: an image body needs an image model"};
    }
    if (embed != (l.model->image_embedder != nullptr))
      return {nullptr, 400, "model '" + named + "' is an image " + (embed ? "classifier or OCR model: use /predict" : "embedder: use /embed")};
    return l;
  }
  if (c.images.empty()) {
    mine = raw;
    return {nullptr, 400, std::string("no image model serves ") + route + " on this server"};
  }
  if (c.images.size() > 1 || c.text > 0)
    return {nullptr, 400, std::string("several models serve ") + route + ": name one with " +
                              (raw ? "the query parameter ?model=NAME" : "\"model\"")};
  return {c.images.front(), 200, ""};
}

Result<std::vector<std::string>> json_images(const json& body, const ServerOptions& o, bool& single) {
  if (!body.contains("inputs")) return make_error(ErrorCode::kInvalidArgument, "body has no \"inputs\"", "body: \"inputs\"");
  const json& v = body["inputs"];
  single = v.is_string();
  if (!single && (!v.is_array() || v.empty()))
    return make_error(ErrorCode::kInvalidArgument, "\"inputs\" must be an image (base64 or a data URI) or a non-empty list of them",
                      "body: \"inputs\"");
  if (!single && static_cast<int64_t>(v.size()) > o.max_texts_per_request)
    return make_error(ErrorCode::kLimitExceeded, std::to_string(v.size()) + " images, over the server's max_texts_per_request (" +
                                                     std::to_string(o.max_texts_per_request) + ")", "body: \"inputs\"");
  std::vector<std::string> out;
  for (size_t i = 0; i < (single ? 1 : v.size()); ++i) {
    const json& x = single ? v : v[i];
    const std::string where = single ? "body: \"inputs\"" : "body: \"inputs\"[" + std::to_string(i) + "]";
    if (!x.is_string()) return make_error(ErrorCode::kInvalidArgument, "an image must be a string (base64 or a data URI)", where);
    GB_ASSIGN_OR_RETURN(auto bytes, image_bytes_from_text(x.get_ref<const std::string&>(), where));
    out.push_back(std::move(bytes));
  }
  return out;
}

// top_k: TEI's top-level field or the Hugging Face endpoint's parameters.top_k; default 5 (transformers'
// image-classification pipeline).
Result<int> read_top_k(const json& body) {
  GB_ASSIGN_OR_RETURN(auto k, optional_int(body, "top_k"));
  if (!k && body.contains("parameters") && body["parameters"].is_object()) {
    GB_ASSIGN_OR_RETURN(k, optional_int(body["parameters"], "top_k"));
  }
  const int64_t v = k.value_or(5);
  if (v < 1 || v > 1000000) return make_error(ErrorCode::kInvalidArgument, "\"top_k\" must be at least 1", "body: \"top_k\"");
  return static_cast<int>(v);
}

nlohmann::ordered_json predict_body(const LoadedModel& m, const ImageResults& r, bool single) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  if (m.ocr) {
    for (const auto& o : r.ocr) out.push_back(ocr_result_json(o));
  } else if (m.image_embedder) {
    for (const auto& e : r.embeddings) out.push_back(e.vector);
    return out;  // /embed: always a list of vectors (TEI)
  } else {
    for (const auto& c : r.classes) {
      nlohmann::ordered_json labels = nlohmann::ordered_json::array();
      for (const auto& l : c.labels) labels.push_back({{"label", l.label}, {"score", l.score}});
      out.push_back(std::move(labels));
    }
  }
  return single ? out[0] : out;
}

}  // namespace

void submit_image_work(ServerContext& ctx, std::shared_ptr<const LoadedModel> model, std::vector<std::string> images, int top_k,
                       const HttpRequest& req, const Responder& respond, std::function<void(Result<ImageResults>)> done) {
  auto shared = std::make_shared<std::vector<std::string>>(std::move(images));
  Metrics* metrics = &ctx.metrics;
  auto meta = req.meta;
  auto m = model;
  const int64_t max_batch = ctx.options.max_batch_size;
  TaskJob job{[m, shared, top_k, max_batch, metrics, meta, done = std::move(done)] {
    const auto t0 = Clock::now();
    auto r = run_images(*m, *shared, top_k, max_batch, metrics);
    meta->compute_s += seconds_since(t0);
    meta->batch_size = std::max<int64_t>(meta->batch_size, static_cast<int64_t>(shared->size()));
    done(std::move(r));
  }};
  submit_work(ctx, make_work(ctx, std::move(model), std::move(job), req), respond);
}

nlohmann::ordered_json ocr_result_json(const vision::ocr::OcrResult& r) {
  nlohmann::ordered_json j;
  j["width"] = r.width;
  j["height"] = r.height;
  auto lines = nlohmann::ordered_json::array();
  for (const auto& l : r.lines) {
    auto box = nlohmann::ordered_json::array();
    for (const auto& pt : l.box) box.push_back({static_cast<int>(pt.x), static_cast<int>(pt.y)});
    lines.push_back({{"text", l.text}, {"score", l.score}, {"box", box}, {"box_score", l.box_score}, {"rotated_180", l.rotated_180}});
  }
  j["lines"] = lines;
  j["boxes_found"] = r.boxes_found;
  j["det_size"] = {r.det_width, r.det_height};
  return j;
}

void declare_image_metrics(Metrics& m) {
  using T = Metrics::Type;
  m.declare("glassbox_image_decode_seconds", T::kHistogram, "Time to decode one request image (JPEG/PNG/WebP to RGB), by model.",
            latency_buckets());
  m.declare("glassbox_image_bytes", T::kHistogram, "Encoded size of request images, by model.",
            {1e3, 1e4, 1e5, 3e5, 1e6, 3e6, 1e7, 6.7e7});
  m.declare("glassbox_image_pixels", T::kHistogram, "Decoded width x height of request images, by model.",
            {4096, 65536, 262144, 1048576, 4194304, 16777216, 67108864});
}

bool image_tei_route(ServerContext& ctx, HttpRequest& req, const Responder& respond, bool embed) {
  const std::string content_type(req.header("content-type").value_or(""));
  const bool raw = is_image_content_type(content_type);
  const Candidates c = candidates(ctx, embed);
  if (!raw && c.images.empty()) return false;  // a text-only server: the text route parses the body once
  json body;
  if (!raw) {
    auto b = parse_json_body(req.body, ctx.options.max_json_depth);
    if (!b.ok()) return false;  // the text route answers the malformed body in its words
    body = std::move(b).value();
  } else if (!image_media_type(content_type)) {
    respond(refuse(RefusalCode::kInvalidRequest, "Content-Type '" + content_type +
                                                     "' is not decoded: send image/jpeg, image/png or image/webp", "content-type"));
    return true;
  }
  std::string named = raw ? query_model(req.query) : "";
  if (!raw && body.is_object() && body.contains("model")) {
    if (!body["model"].is_string()) return false;
    named = body["model"].get<std::string>();
  }
  bool mine = true;
  ModelLookup look = choose(ctx, named, c, raw, embed, mine);
  if (!mine) return false;
  if (!look.model) return respond(lookup_refusal(look)), true;
  if (ctx.draining.load()) return respond(draining_refusal()), true;
  bool single = true;
  std::vector<std::string> images;
  int top_k = 5;
  if (raw) {
    images.push_back(std::move(req.body));
  } else {
    auto imgs = json_images(body, ctx.options, single);
    auto k = read_top_k(body);
    if (!imgs.ok()) return respond(error_response(imgs.error(), nullptr)), true;
    if (!k.ok()) return respond(error_response(k.error(), nullptr)), true;
    images = std::move(imgs).value();
    top_k = *k;
  }
  auto m = look.model;
  submit_image_work(ctx, m, std::move(images), top_k, req, respond, [respond, m, single](Result<ImageResults> r) {
    if (!r.ok()) return respond(error_response(r.error(), m.get()));
    respond(json_response(200, predict_body(*m, *r, single)));
  });
  return true;
}

}  // namespace glassbox::server
