// glassbox._VisionPipeline: image classification, image feature extraction and OCR over
// glassbox::vision (include/glassbox/vision_pipeline.h, ocr.h) with the GIL released while images
// decode and models run. Images come as paths (str / os.PathLike), encoded bytes (bytes, bytearray,
// memoryview: JPEG/PNG/WebP by their magic bytes) or numpy arrays [H, W, 3] of uint8, declared RGB;
// python/glassbox/_pipeline.py shapes the results like transformers.pipeline().
#include <pybind11/stl.h>

#include <memory>

#include "common.h"
#include "diag/explain.h"
#include "glassbox/ocr.h"
#include "glassbox/vision_pipeline.h"

namespace glassbox::py_binding {
namespace {

struct PyVision {
  std::string task;  // "classify" | "embed" | "ocr"
  std::shared_ptr<const vision::ImageClassifier> classifier;
  std::shared_ptr<const vision::ImageEmbedder> embedder;
  std::shared_ptr<const vision::ocr::OcrPipeline> ocr;
  std::string model_dir;
  std::map<std::string, std::string> sources;
  vision::DecodeLimits limits;
  const std::vector<vision::Step>& steps() const {
    return classifier ? classifier->steps() : embedder ? embedder->steps() : ocr->steps();
  }
  const Session& session() const {
    return classifier ? classifier->session() : embedder ? embedder->session() : ocr->det_session();
  }
};

// What one Python image is before decoding: a path, encoded bytes, or pixels already RGB.
struct ImageArg {
  std::string path;
  std::string bytes;
  bool is_path = false, is_pixels = false;
  vision::RgbImage pixels;
};

ImageArg image_arg(const py::handle& h, const std::string& what) {
  ImageArg a;
  if (PyUnicode_Check(h.ptr()) || py::hasattr(h, "__fspath__")) {
    a.is_path = true;
    a.path = as_path(h, what);
  } else if (PyBytes_Check(h.ptr()) || PyByteArray_Check(h.ptr()) || PyMemoryView_Check(h.ptr())) {
    py::buffer_info b = py::reinterpret_borrow<py::buffer>(h).request();
    a.bytes.assign(static_cast<const char*>(b.ptr), static_cast<size_t>(b.size * b.itemsize));
  } else if (py::isinstance<py::array>(h)) {
    py::array arr = py::reinterpret_borrow<py::array>(h);
    if (arr.dtype().kind() != 'u' || arr.dtype().itemsize() != 1 || arr.ndim() != 3 || arr.shape(2) != 3)
      raise_invalid(what + " is a numpy array of dtype " + std::string(py::str(arr.dtype())) + " and shape " +
                        std::string(py::str(py::tuple(py::cast(std::vector<py::ssize_t>(arr.shape(), arr.shape() + arr.ndim()))))),
                    {}, "pass pixels as uint8 [height, width, 3] in RGB order (no conversion is guessed), or a path or encoded bytes");
    if (arr.shape(0) < 1 || arr.shape(1) < 1 || arr.shape(0) > 32768 || arr.shape(1) > 32768)
      raise_invalid(what + " has " + std::to_string(arr.shape(0)) + " x " + std::to_string(arr.shape(1)) + " pixels (1..32768 per side)");
    auto c = py::array_t<uint8_t, py::array::c_style>::ensure(arr);  // same dtype: only the strides may change
    a.is_pixels = true;
    a.pixels.height = static_cast<int>(arr.shape(0));
    a.pixels.width = static_cast<int>(arr.shape(1));
    a.pixels.pixels.assign(c.data(), c.data() + c.size());
  } else {
    raise_invalid(what + " must be a path (str, os.PathLike), encoded image bytes or a numpy uint8 array [H, W, 3], got " +
                  type_name(h));
  }
  return a;
}

std::vector<ImageArg> image_args(const py::handle& images) {
  if (!PyList_Check(images.ptr()) && !PyTuple_Check(images.ptr())) raise_invalid("images must be a list, got " + type_name(images));
  std::vector<ImageArg> out;
  size_t i = 0;
  for (py::handle h : py::reinterpret_borrow<py::sequence>(images)) out.push_back(image_arg(h, "image " + std::to_string(i++)));
  return out;
}

// Decodes (limits checked before allocation) unless the pixels came as an array. Called without the GIL.
Result<vision::RgbImage> to_rgb(ImageArg& a, const vision::DecodeLimits& limits, size_t i) {
  const std::string where = a.is_path ? a.path : "image " + std::to_string(i);
  if (a.is_pixels) return std::move(a.pixels);
  auto d = a.is_path ? vision::decode_image_file(a.path, limits)
                     : vision::decode_image(reinterpret_cast<const uint8_t*>(a.bytes.data()), a.bytes.size(), limits);
  if (!d.ok()) return std::move(d).take_error().with_where(where);
  return std::move(d->image);
}

py::dict ocr_dict(const vision::ocr::OcrResult& r) {
  py::dict d;
  d["width"] = r.width;
  d["height"] = r.height;
  py::list lines;
  for (const auto& l : r.lines) {
    py::dict e;
    e["text"] = l.text;
    e["score"] = l.score;
    py::list box;
    for (const auto& p : l.box) box.append(py::make_tuple(static_cast<int>(p.x), static_cast<int>(p.y)));
    e["box"] = box;
    e["box_score"] = l.box_score;
    e["rotated_180"] = l.rotated_180;
    lines.append(e);
  }
  d["lines"] = lines;
  d["boxes_found"] = r.boxes_found;
  d["det_size"] = py::make_tuple(r.det_width, r.det_height);
  return d;
}

PyVision load_vision(const std::string& dir, const std::string& task, int threads, int opt_level) {
  vision::ImageClassifierOptions o;
  o.session.threads = threads;
  o.session.opt_level = opt_level;
  PyVision v{task, nullptr, nullptr, nullptr, dir, argument_sources(o.session), o.limits};
  py::gil_scoped_release nogil;
  auto load = [&]() -> Status {
    if (task == "ocr") {
      GB_ASSIGN_OR_RETURN(auto p, vision::ocr::OcrPipeline::load(dir, {o.session, o.limits}));
      v.ocr = std::make_shared<const vision::ocr::OcrPipeline>(std::move(p));
    } else if (task == "embed") {
      GB_ASSIGN_OR_RETURN(auto e, vision::ImageEmbedder::load(dir, o));
      v.embedder = std::make_shared<const vision::ImageEmbedder>(std::move(e));
    } else {
      GB_ASSIGN_OR_RETURN(auto c, vision::ImageClassifier::load(dir, o));
      v.classifier = std::make_shared<const vision::ImageClassifier>(std::move(c));
    }
    return Status();
  };
  Status st = load();
  if (!st.ok()) {
    py::gil_scoped_acquire gil;
    raise_error(st.error());
  }
  return v;
}

py::object run_vision(const PyVision& self, const py::handle& images, const py::handle& top_k) {
  std::vector<ImageArg> args = image_args(images);
  const int k = self.classifier ? static_cast<int>(as_int(top_k, "top_k", 1, 1 << 20)) : 1;
  std::vector<vision::ImageClassification> classes;
  std::vector<vision::ImageEmbedding> embeddings;
  std::vector<vision::ocr::OcrResult> texts;
  Status st = [&]() -> Status {
    py::gil_scoped_release nogil;
    std::vector<vision::RgbImage> rgb;
    for (size_t i = 0; i < args.size(); ++i) {
      GB_ASSIGN_OR_RETURN(auto im, to_rgb(args[i], self.limits, i));
      if (self.embedder) {
        rgb.push_back(std::move(im));
      } else if (self.ocr) {
        GB_ASSIGN_OR_RETURN(auto r, self.ocr->run(im));
        texts.push_back(std::move(r));
      } else {
        GB_ASSIGN_OR_RETURN(auto r, self.classifier->classify(im, k));
        classes.push_back(std::move(r));
      }
    }
    if (self.embedder) {
      std::vector<const vision::RgbImage*> ptrs;
      for (const auto& im : rgb) ptrs.push_back(&im);
      GB_ASSIGN_OR_RETURN(embeddings, self.embedder->embed(ptrs));
    }
    return Status();
  }();
  unwrap(st);
  py::list out;
  if (self.embedder) {
    const size_t dim = embeddings.empty() ? 0 : embeddings[0].vector.size();
    py::array_t<float> vectors({static_cast<py::ssize_t>(embeddings.size()), static_cast<py::ssize_t>(dim)});
    auto w = vectors.mutable_unchecked<2>();
    for (size_t i = 0; i < embeddings.size(); ++i)
      for (size_t j = 0; j < dim; ++j) w(i, j) = embeddings[i].vector[j];
    return vectors;
  }
  for (const auto& r : texts) out.append(ocr_dict(r));
  for (const auto& c : classes) {
    py::list labels;
    for (const auto& l : c.labels) {
      py::dict d;
      d["label"] = l.label;
      d["score"] = l.score;
      labels.append(d);
    }
    out.append(py::make_tuple(labels, c.logits));
  }
  return out;
}

}  // namespace

void bind_vision(py::module_& m) {
  py::class_<PyVision>(m, "_VisionPipeline", "glassbox::vision pipelines; use glassbox.pipeline().")
      .def(py::init([](const py::handle& model_dir, const py::handle& task, const py::handle& threads, const py::handle& opt_level) {
             const std::string t = as_utf8(task, "task");
             if (t != "classify" && t != "embed" && t != "ocr") raise_invalid("task is '" + t + "'", {}, "use classify, embed or ocr");
             return load_vision(as_path(model_dir, "model_dir"), t, static_cast<int>(as_int(threads, "threads", 0, 4096)),
                                static_cast<int>(as_int(opt_level, "opt_level", 0, 2)));
           }),
           py::arg("model_dir"), py::arg("task"), py::arg("threads"), py::arg("opt_level"))
      .def_property_readonly("task", [](const PyVision& v) { return v.task; })
      .def_property_readonly("model_dir", [](const PyVision& v) { return v.model_dir; })
      .def_property_readonly("labels", [](const PyVision& v) {
        return v.classifier ? v.classifier->labels() : std::vector<std::string>{};
      })
      .def("run", &run_vision, py::arg("images"), py::arg("top_k") = 5)
      .def("explain", [](const PyVision& self) {
        diag::EffectiveOptions eo;
        eo.session = self.session().options();
        eo.sources = self.sources;
        nlohmann::ordered_json j = diag::explain_to_json(diag::explain_options(eo));
        j["pipeline"] = nlohmann::json::array();
        for (const auto& s : self.steps()) {
          j["pipeline"].push_back({{"field", s.field}, {"value", s.value}, {"source", s.source}});
          if (!s.risk.empty()) j["pipeline"].back()["risk"] = s.risk;
        }
        return json_to_python(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      });
  m.def("_image_model_task", [](const py::handle& model_dir) {
    const std::string dir = as_path(model_dir, "model_dir");
    if (vision::ocr::is_ocr_model_dir(dir)) return std::string("ocr");
    if (!vision::is_image_model_dir(dir)) return std::string("");
    auto t = unwrap(vision::image_model_task(dir));
    return std::string(t.first == vision::ImageTask::kFeatureExtraction ? "embed" : "classify");
  });
}

}  // namespace glassbox::py_binding
