// Reads what a model directory declares about image preprocessing: preprocessor_config.json as
// Hugging Face image processors write it, and glassbox.json's "vision" object (same field names
// plus "letterbox" and "layout"; it wins field by field). Every field becomes one Step with its
// value and source; a field neither file declares is the processor class's own default (the one
// Python transformers applies) and says so, with its risk.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "vision/preprocess/processor_types.h"

namespace glassbox::vision {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kClassDefaultRisk =
    "not declared by the model's files: the Python class default; a model trained with other settings is fed "
    "differently";

// Fields that change pixels and that glassbox implements.
const std::set<std::string> kFields = {"image_processor_type", "feature_extractor_type", "do_convert_rgb", "do_resize",
                                       "size", "resample", "crop_pct", "do_center_crop", "crop_size", "do_rescale",
                                       "rescale_factor", "do_normalize", "image_mean", "image_std", "do_pad",
                                       "pad_size", "letterbox", "layout"};
// Fields with no effect on the pixel tensor (ignored, with the reason).
const std::set<std::string> kNoPixelEffect = {
    "processor_class",        // names the Processor wrapper (tokenizer + image processor)
    "_valid_processor_keys",  // transformers' own bookkeeping
    "image_seq_length",       // how many text tokens an image stands for (PaliGemma), not pixels
    "do_reduce_labels", "reduce_labels",  // segmentation label maps only
    "model_input_names",
};

std::string fmt(double v) {
  std::ostringstream o;
  o.precision(9);
  o << v;
  return o.str();
}

Result<json> read_object(const std::string& path) {
  std::ifstream in(path);
  if (!in) return json(nullptr);
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return make_error(ErrorCode::kInvalidModel, "not a JSON object", path);
  return j;
}

struct Reader {
  json pc;  // preprocessor_config.json (object or null)
  json gv;  // glassbox.json "vision" (object or null)
  std::string pc_path, gj_path;
  const detail::ProcessorDefaults* cls = nullptr;
  std::string type;
  Preprocess* out = nullptr;

  // glassbox.json wins over preprocessor_config.json; nullptr when neither declares the field.
  const json* find(const char* key, std::string& source) const {
    if (gv.is_object() && gv.contains(key) && !gv[key].is_null()) {
      source = "glassbox.json vision." + std::string(key);
      return &gv[key];
    }
    if (pc.is_object() && pc.contains(key) && !pc[key].is_null()) {
      source = "preprocessor_config.json " + std::string(key);
      return &pc[key];
    }
    return nullptr;
  }
  std::string where(const std::string& source) const { return source.rfind("glassbox", 0) == 0 ? gj_path : pc_path; }
  Error bad(const std::string& source, const std::string& what, const std::string& fix) const {
    return make_error(ErrorCode::kInvalidModel, source + ": " + what, where(source), fix);
  }
  void step(const std::string& field, const std::string& value, const std::string& source, const std::string& risk = {}) {
    out->steps.push_back({field, value, source, risk});
  }
  std::string class_default() const { return "default of " + type + " (transformers)"; }

  Result<bool> flag(const char* key, bool class_value) {
    std::string src;
    const json* v = find(key, src);
    if (!v) {
      step(key, class_value ? "true" : "false", class_default(), kClassDefaultRisk);
      return class_value;
    }
    if (!v->is_boolean()) return bad(src, "must be true or false, got " + v->dump(), "fix the value");
    step(key, *v ? "true" : "false", src);
    return v->get<bool>();
  }

  // {"height","width"} / {"shortest_edge"} / {"longest_edge"} / a legacy integer.
  Result<SizeSpec> size(const char* key, const json& v, const std::string& src, bool int_is_square) {
    SizeSpec s;
    auto positive = [&](const json& x) { return x.is_number_integer() && x.get<int64_t>() > 0 && x.get<int64_t>() <= 65535; };
    if (positive(v)) {
      if (int_is_square) s.height = s.width = v.get<int64_t>();
      else s.kind = SizeSpec::Kind::kShortestEdge, s.edge = v.get<int64_t>();
      return s;
    }
    if (!v.is_object()) return bad(src, std::string(key) + " must be an object or a positive integer, got " + v.dump(), "fix it");
    const bool hw = v.contains("height") || v.contains("width");
    const bool se = v.contains("shortest_edge"), le = v.contains("longest_edge");
    if (hw && !se && !le && positive(v.value("height", json())) && positive(v.value("width", json()))) {
      s.height = v["height"].get<int64_t>();
      s.width = v["width"].get<int64_t>();
      return s;
    }
    if (se && !hw && !le && positive(v["shortest_edge"])) {
      s.kind = SizeSpec::Kind::kShortestEdge;
      s.edge = v["shortest_edge"].get<int64_t>();
      return s;
    }
    if (le)
      return make_error(ErrorCode::kUnsupported,
                        src + " = " + v.dump() + ": a longest_edge size is not implemented (its rounding differs "
                                                 "between processor classes)",
                        where(src), "declare glassbox.json vision.size as {\"height\", \"width\"} or {\"shortest_edge\"}");
    return bad(src, "unrecognised " + std::string(key) + " " + v.dump(),
               "use {\"height\": H, \"width\": W} or {\"shortest_edge\": N}");
  }
};

std::string size_text(const SizeSpec& s) {
  if (s.kind == SizeSpec::Kind::kShortestEdge) return "shortest_edge " + std::to_string(s.edge);
  return std::to_string(s.height) + " x " + std::to_string(s.width) + " (height x width)";
}

Status check_fields(const json& j, const std::string& path) {
  if (!j.is_object()) return Status();
  for (const auto& [k, v] : j.items()) {
    if (kFields.count(k) || kNoPixelEffect.count(k) || v.is_null() || (v.is_boolean() && !v.get<bool>())) continue;
    return make_error(ErrorCode::kUnsupported, "field '" + k + "' = " + v.dump() + " is not implemented by glassbox",
                      path, "remove it if it has no effect on the pixels, or preprocess the image yourself");
  }
  return Status();
}

Status read_resize(Reader& r) {
  Preprocess& p = *r.out;
  GB_ASSIGN_OR_RETURN(p.do_resize, r.flag("do_resize", true));
  std::string src;
  if (const json* v = r.find("size", src)) {
    GB_ASSIGN_OR_RETURN(p.size, r.size("size", *v, src, r.cls->int_size_is_square));
    r.step("size", size_text(p.size), src);
  } else {
    p.size = r.cls->size;
    r.step("size", size_text(p.size), r.class_default(), kClassDefaultRisk);
  }
  if (const json* v = r.find("resample", src)) {
    if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > 5)
      return make_error(ErrorCode::kUnsupported, src + " = " + v->dump() + " is not a PIL resampling code glassbox has",
                        r.where(src), "use 0 nearest, 1 lanczos, 2 bilinear, 3 bicubic, 4 box or 5 hamming");
    p.resample = static_cast<Resample>(v->get<int>());
    r.step("resample", std::to_string(v->get<int>()) + " (" + resample_name(p.resample) + ", Pillow's filter)", src);
  } else {
    p.resample = r.cls->resample;
    r.step("resample", std::string(resample_name(p.resample)) + " (Pillow's filter)", r.class_default(), kClassDefaultRisk);
  }
  if (r.cls->crop_pct) {  // ConvNeXt: shortest edge / crop_pct, then a centre crop of the size
    p.crop_pct = *r.cls->crop_pct;
    if (const json* v = r.find("crop_pct", src)) {
      if (!v->is_number() || v->get<double>() <= 0 || v->get<double>() > 1)
        return r.bad(src, "crop_pct must be a number in (0, 1], got " + v->dump(), "fix it");
      p.crop_pct = v->get<double>();
      r.step("crop_pct", fmt(*p.crop_pct), src);
    } else {
      r.step("crop_pct", fmt(*p.crop_pct), r.class_default(), kClassDefaultRisk);
    }
    if (p.size.kind != SizeSpec::Kind::kShortestEdge)
      return r.bad("size", r.type + " needs size {\"shortest_edge\": N}", "fix size");
  } else if (const json* v = r.find("crop_pct", src)) {  // e.g. timm-converted ViT configs
    r.step("crop_pct", v->dump() + " ignored", src + ": " + r.type + " has no crop_pct step (Python and transformers.js "
                                                                      "ignore it too)");
  }
  return Status();
}

Status read_crop(Reader& r) {
  Preprocess& p = *r.out;
  std::string src;
  const json* v = r.find("do_center_crop", src);
  if (!r.cls->do_center_crop && r.cls->crop == 0) {  // the class has no centre-crop step
    if (v && v->is_boolean() && v->get<bool>())
      return make_error(ErrorCode::kUnsupported,
                        src + " = true, but " + r.type + " has no centre crop: Python transformers ignores the field, "
                                                         "transformers.js applies it",
                        r.where(src), "remove the field, or declare glassbox.json vision.image_processor_type");
    p.do_center_crop = false;
    r.step("do_center_crop", "false", r.type + " has no centre-crop step");
    return Status();
  }
  GB_ASSIGN_OR_RETURN(p.do_center_crop, r.flag("do_center_crop", r.cls->do_center_crop));
  if (!p.do_center_crop) return Status();
  if (const json* c = r.find("crop_size", src)) {
    GB_ASSIGN_OR_RETURN(SizeSpec s, r.size("crop_size", *c, src, true));
    if (s.kind != SizeSpec::Kind::kHeightWidth) return r.bad(src, "crop_size must be height/width", "fix it");
    p.crop_height = s.height, p.crop_width = s.width;
    r.step("crop_size", size_text(s), src);
  } else {
    p.crop_height = p.crop_width = r.cls->crop;
    r.step("crop_size", std::to_string(r.cls->crop) + " x " + std::to_string(r.cls->crop), r.class_default(),
           kClassDefaultRisk);
  }
  return Status();
}

Result<std::vector<float>> triple(Reader& r, const char* key, const json& v, const std::string& src) {
  std::vector<float> t;
  if (v.is_number()) t.assign(3, v.get<float>());
  else if (v.is_array() && v.size() == 3 && v[0].is_number() && v[1].is_number() && v[2].is_number())
    for (const auto& x : v) t.push_back(x.get<float>());
  else
    return r.bad(src, std::string(key) + " must be a number or 3 numbers (R, G, B), got " + v.dump(), "fix it");
  return t;
}

Status read_values(Reader& r) {
  Preprocess& p = *r.out;
  std::string src;
  GB_ASSIGN_OR_RETURN(p.do_rescale, r.flag("do_rescale", true));
  if (p.do_rescale) {
    if (const json* v = r.find("rescale_factor", src)) {
      if (!v->is_number() || v->get<double>() <= 0) return r.bad(src, "rescale_factor must be a positive number", "fix it");
      p.rescale_factor = v->get<double>();
      r.step("rescale_factor", fmt(p.rescale_factor), src);
    } else {
      r.step("rescale_factor", "1/255", r.class_default(), kClassDefaultRisk);
    }
  }
  GB_ASSIGN_OR_RETURN(p.do_normalize, r.flag("do_normalize", true));
  if (p.do_normalize) {
    for (const char* key : {"image_mean", "image_std"}) {
      float* dst = std::string(key) == "image_mean" ? p.mean : p.std;
      const float* def = std::string(key) == "image_mean" ? r.cls->mean : r.cls->std;
      if (const json* v = r.find(key, src)) {
        GB_ASSIGN_OR_RETURN(auto t, triple(r, key, *v, src));
        std::copy(t.begin(), t.end(), dst);
        r.step(key, "[" + fmt(t[0]) + ", " + fmt(t[1]) + ", " + fmt(t[2]) + "]", src);
      } else {
        std::copy(def, def + 3, dst);
        r.step(key, "[" + fmt(def[0]) + ", " + fmt(def[1]) + ", " + fmt(def[2]) + "]", r.class_default(), kClassDefaultRisk);
      }
      for (int c = 0; c < 3; ++c)
        if (std::string(key) == "image_std" && !(dst[c] > 0)) return r.bad(src, "image_std must be positive", "fix it");
    }
  }
  return Status();
}

Status read_pad_layout(Reader& r) {
  Preprocess& p = *r.out;
  std::string src;
  const json* v = r.find("do_pad", src);
  p.do_pad = v && v->is_boolean() && v->get<bool>();
  r.step("do_pad", p.do_pad ? "true" : "false", v ? src : "absent: no padding (every class here pads only when told)");
  if (p.do_pad) {
    std::string psrc;
    const json* ps = r.find("pad_size", psrc);
    if (!ps)
      return make_error(ErrorCode::kUnsupported, src + " = true without pad_size: the padded size would be a guess",
                        r.where(src), "declare pad_size {\"height\": H, \"width\": W}");
    GB_ASSIGN_OR_RETURN(SizeSpec s, r.size("pad_size", *ps, psrc, true));
    if (s.kind != SizeSpec::Kind::kHeightWidth) return r.bad(psrc, "pad_size must be height/width", "fix it");
    p.pad_height = s.height, p.pad_width = s.width;
    r.step("pad_size", size_text(s) + ", zeros at the bottom/right after normalization", psrc);
  }
  if (const json* lb = r.find("letterbox", src)) {
    if (!lb->is_object() || !lb->contains("height") || !lb->contains("width") || !(*lb)["height"].is_number_integer() ||
        !(*lb)["width"].is_number_integer() || (*lb)["height"].get<int64_t>() <= 0 || (*lb)["width"].get<int64_t>() <= 0)
      return r.bad(src, "letterbox must be {\"height\": H, \"width\": W, \"fill\": 0..255}", "fix it");
    Letterbox l;
    l.height = (*lb)["height"].get<int64_t>();
    l.width = (*lb)["width"].get<int64_t>();
    if (lb->contains("fill")) {
      if (!(*lb)["fill"].is_number_integer() || (*lb)["fill"].get<int>() < 0 || (*lb)["fill"].get<int>() > 255)
        return r.bad(src, "letterbox.fill must be 0..255", "fix it");
      l.fill = static_cast<uint8_t>((*lb)["fill"].get<int>());
    }
    p.letterbox = l;
    r.step("letterbox",
           std::to_string(l.height) + " x " + std::to_string(l.width) + ", fill " + std::to_string(l.fill) +
               " (replaces resize and crop)",
           src);
  }
  if (const json* lay = r.find("layout", src)) {
    const std::string s = lay->is_string() ? lay->get<std::string>() : "";
    if (s != "nchw" && s != "nhwc") return r.bad(src, "layout must be \"nchw\" or \"nhwc\"", "fix it");
    p.layout = s == "nchw" ? Layout::kNchw : Layout::kNhwc;
    r.step("layout", s, src);
  }
  return Status();
}

}  // namespace

Result<Preprocess> read_preprocess(const std::string& dir) {
  Reader r;
  Preprocess p;
  r.out = &p;
  r.pc_path = (fs::path(dir) / "preprocessor_config.json").string();
  r.gj_path = (fs::path(dir) / "glassbox.json").string();
  GB_ASSIGN_OR_RETURN(r.pc, read_object(r.pc_path));
  GB_ASSIGN_OR_RETURN(json gj, read_object(r.gj_path));
  if (gj.is_object() && gj.contains("vision")) {
    if (!gj["vision"].is_object()) return make_error(ErrorCode::kInvalidModel, "\"vision\" must be an object", r.gj_path);
    r.gv = gj["vision"];
  }
  if (r.pc.is_null() && r.gv.is_null())
    return make_error(ErrorCode::kNotFound, "no preprocessor_config.json and no glassbox.json \"vision\"", dir,
                      "an image model directory declares its preprocessing in preprocessor_config.json");
  GB_RETURN_IF_ERROR(check_fields(r.pc, r.pc_path));
  GB_RETURN_IF_ERROR(check_fields(r.gv, r.gj_path));
  std::string src;
  const json* t = r.find("image_processor_type", src);
  if (!t) t = r.find("feature_extractor_type", src);
  if (!t || !t->is_string())
    return make_error(ErrorCode::kInvalidModel, "no image_processor_type (or feature_extractor_type) declared", r.pc_path,
                      "name the processor class, e.g. \"image_processor_type\": \"ViTImageProcessor\"");
  r.type = t->get<std::string>();
  r.cls = detail::find_processor_defaults(r.type);
  if (!r.cls)
    return make_error(ErrorCode::kUnsupported, "image processor '" + r.type + "' is not implemented", r.where(src),
                      "glassbox implements " + detail::known_processor_types());
  p.processor_type = r.type;
  r.step("image_processor_type", r.type, src);
  std::string csrc;
  const json* c = r.find("do_convert_rgb", csrc);
  if (c && !c->is_boolean()) return r.bad(csrc, "do_convert_rgb must be true or false", "fix it");
  p.do_convert_rgb = true;
  r.step("do_convert_rgb", "true (always: images are decoded to RGB)", c ? csrc + " = " + c->dump() : "glassbox decodes to RGB",
         c && !c->get<bool>() ? "the file says false: a grey or RGBA image still reaches the model as RGB (a model "
                                "wanting 1 or 4 channels is not served)"
                              : "");
  GB_RETURN_IF_ERROR(read_resize(r));
  GB_RETURN_IF_ERROR(read_crop(r));
  GB_RETURN_IF_ERROR(read_values(r));
  GB_RETURN_IF_ERROR(read_pad_layout(r));
  return p;
}

}  // namespace glassbox::vision
