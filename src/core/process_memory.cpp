#include "core/process_memory.h"

#include <cctype>
#include <cstdio>
#include <fstream>

namespace glassbox {
namespace {

int64_t status_bytes(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string k = std::string(key) + ":";
  while (std::getline(in, line))
    if (line.rfind(k, 0) == 0) return std::stoll(line.substr(k.size())) * 1024;  // the kernel writes kB
  return 0;
}

}  // namespace

int64_t process_rss_bytes() { return status_bytes("VmRSS"); }
int64_t process_peak_rss_bytes() { return status_bytes("VmHWM"); }

int64_t process_baseline_rss_bytes() {
  static const int64_t baseline = process_rss_bytes();
  return baseline;
}

Result<int64_t> parse_byte_size(const std::string& text) {
  const auto bad = [&] {
    return make_error(ErrorCode::kInvalidArgument, "byte size '" + text + "' is not understood", {},
                      "write bytes as a number with an optional K, M, G or T (binary: 512M = 512 MiB), e.g. 512M");
  };
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0 || i > 15) return bad();
  int64_t value = std::stoll(text.substr(0, i));
  std::string unit = text.substr(i);
  if (unit.size() == 3 && unit.substr(1) == "iB") unit = unit.substr(0, 1);
  if (unit.size() == 2 && unit[1] == 'B') unit = unit.substr(0, 1);
  int shift = 0;
  if (unit == "K" || unit == "k") shift = 10;
  else if (unit == "M" || unit == "m") shift = 20;
  else if (unit == "G" || unit == "g") shift = 30;
  else if (unit == "T" || unit == "t") shift = 40;
  else if (!unit.empty() && unit != "B") return bad();
  if (value <= 0 || value > (int64_t{1} << (62 - shift))) return bad();
  return value << shift;
}

std::string format_bytes(int64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

}  // namespace glassbox
