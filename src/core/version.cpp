#include "glassbox/version.h"

// GLASSBOX_VERSION_STRING is set for this file alone by src/core/CMakeLists.txt from PROJECT_VERSION.
namespace glassbox {

const char* version() { return GLASSBOX_VERSION_STRING; }

}  // namespace glassbox
