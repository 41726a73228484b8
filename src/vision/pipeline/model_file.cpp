#include "vision/pipeline/model_file.h"

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

}  // namespace glassbox::vision
