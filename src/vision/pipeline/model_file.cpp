#include "vision/pipeline/model_file.h"

#include <algorithm>
#include <filesystem>

namespace glassbox::vision {

Result<Session> load_model_session(const std::string& dir, const SessionOptions& options, std::vector<Step>& steps) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path model = fs::path(dir) / "model.onnx";
  std::string rule = "model.onnx";
  if (!fs::exists(model, ec)) model = fs::path(dir) / "onnx" / "model.onnx", rule = "onnx/model.onnx (no model.onnx)";
  if (!fs::exists(model, ec))
    return make_error(ErrorCode::kNotFound, "no model.onnx or onnx/model.onnx", dir, "put the ONNX model in the directory");
  GB_ASSIGN_OR_RETURN(Session session, Session::load(model.string(), options));
  steps.push_back({"model", model.string(), rule, ""});
  return session;
}

Result<Tensor> pixel_batch(const std::vector<const RgbImage*>& images, const Preprocess& pre, Layout layout,
                           const DecodeLimits& limits, const Session& session, const std::string& input) {
  std::vector<PixelTensor> px;
  for (const RgbImage* im : images) {
    GB_ASSIGN_OR_RETURN(PixelTensor p, preprocess(*im, pre, layout, limits));
    if (!px.empty() && p.dims != px.front().dims) return make_error(ErrorCode::kInternal, "preprocessing made two sizes for one model");
    px.push_back(std::move(p));
  }
  if (px.empty()) return make_error(ErrorCode::kInvalidArgument, "no images");
  std::vector<int64_t> dims = px.front().dims;
  dims[0] = static_cast<int64_t>(px.size());
  for (const auto& s : session.inputs())
    if (s.name == input && s.has_shape && s.dims.size() == dims.size())
      for (size_t i = 1; i < dims.size(); ++i)
        if (s.dims[i] >= 0 && s.dims[i] != dims[i])
          return make_error(ErrorCode::kInvalidArgument,
                            "preprocessing made " + shape_to_string(dims) + " but the model input is " + s.to_string(), {},
                            "the model's preprocessor_config.json does not match its input size (glassbox never resizes to "
                            "fit silently)");
  GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kFloat32, dims));
  float* dst = t.mutable_data<float>();
  for (const auto& p : px) dst = std::copy(p.values.begin(), p.values.end(), dst);
  return t;
}

}  // namespace glassbox::vision
