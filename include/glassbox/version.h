// glassbox's version: declared once, in CMakeLists.txt's project(... VERSION ...); the CLI's --version,
// the server's metadata routes and the Python package all read it from here.
#pragma once

namespace glassbox {

const char* version();  // e.g. "0.1.0"

}  // namespace glassbox
