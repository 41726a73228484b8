#include "glassbox/process.h"

#include <malloc.h>

#include <climits>

namespace glassbox {
namespace {

ProcessOptions g_options;
std::string g_source = "default";
bool g_in_effect = false;

}  // namespace

Status apply_process_options(const ProcessOptions& options, const std::string& source) {
  if (options.heap_policy != "retain" && options.heap_policy != "system")
    return make_error(ErrorCode::kInvalidArgument, "heap policy '" + options.heap_policy + "' is not 'retain' or 'system'",
                      "--heap-policy", "use retain (reuse freed memory) or system (glibc's defaults)");
  if (options.heap_policy == "retain") {
    // 32 MiB is glibc's largest mmap threshold on 64-bit; a fixed value also stops its dynamic
    // adjustment. The trim threshold keeps freed heap memory for the next run.
    // A sanitizer's allocator (ASan replaces malloc) refuses mallopt: it has its own reuse policy and
    // the refusal is recorded (heap_policy_in_effect), not an error.
    g_in_effect = mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1 && mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
  } else {
    g_in_effect = true;
  }
  g_options = options;
  g_source = source;
  return {};
}

const ProcessOptions& process_options() { return g_options; }
const std::string& process_options_source() { return g_source; }
bool heap_policy_in_effect() { return g_in_effect; }

}  // namespace glassbox
