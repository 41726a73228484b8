// physical_core_count: distinct (package, core) pairs in /proc/cpuinfo, so
// hyperthread siblings count once. Falls back to hardware_concurrency.
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "glassbox/session.h"

namespace glassbox {

int physical_core_count() {
  static const int cores = [] {
    std::ifstream in("/proc/cpuinfo");
    std::set<std::pair<std::string, std::string>> seen;
    std::string line, physical = "0";
    while (std::getline(in, line)) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
      std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
      if (key == "physical id") physical = value;
      else if (key == "core id") seen.emplace(physical, value);
    }
    int n = static_cast<int>(seen.size());
    if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
    return n > 0 ? n : 1;
  }();
  return cores;
}

}  // namespace glassbox
