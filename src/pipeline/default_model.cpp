// Where the default model (models/langid) is found when no --model is given: declared lookup order,
// first directory holding model.onnx wins (see find_default_model in include/glassbox/pipeline.h).
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "glassbox/pipeline.h"

namespace glassbox {

namespace {

namespace fs = std::filesystem;

// The running executable, resolved through /proc/self/exe (empty when /proc is not mounted).
std::string executable_path() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.string();
}

bool holds_model(const std::string& dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_regular_file(fs::path(dir) / "model.onnx", ec);
}

}  // namespace

DefaultModelLookup find_default_model() {
  DefaultModelLookup out;
  const std::string exe = executable_path();
  std::string installed;
  if (!exe.empty())
    installed = (fs::path(exe).parent_path() / GLASSBOX_INSTALL_MODEL_RELDIR).lexically_normal().string();
  else
    out.tried.push_back("(installed layout: /proc/self/exe unreadable, executable directory unknown)");
  if (!installed.empty()) out.tried.push_back(installed);
  out.tried.push_back(GLASSBOX_DEFAULT_MODEL_DIR);
  if (holds_model(installed)) {
    out.dir = installed;
    out.found_by = std::string("installed layout: <directory of ") + exe + ">/" + GLASSBOX_INSTALL_MODEL_RELDIR;
  } else if (holds_model(GLASSBOX_DEFAULT_MODEL_DIR)) {
    out.dir = GLASSBOX_DEFAULT_MODEL_DIR;
    out.found_by = "build tree: the source tree's models/langid compiled in (no installed copy next to the executable)";
  } else {
    // Neither exists: name the installed location, so the load error says where an install puts it.
    out.dir = installed.empty() ? std::string(GLASSBOX_DEFAULT_MODEL_DIR) : installed;
    out.found_by = "not found (no model.onnx in any lookup directory); pass --model DIR";
  }
  return out;
}

std::string default_model_dir() { return find_default_model().dir; }

}  // namespace glassbox
