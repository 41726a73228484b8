#include "glassbox/process.h"

#include <malloc.h>

#include <climits>

namespace glassbox {
namespace {

ProcessOptions g_options;
std::string g_source = "default";

}  // namespace

Status apply_process_options(const ProcessOptions& options, const std::string& source) {
  if (options.heap_policy != "retain" && options.heap_policy != "system")
    return make_error(ErrorCode::kInvalidArgument, "heap policy '" + options.heap_policy + "' is not 'retain' or 'system'",
                      "--heap-policy", "use retain (reuse freed memory) or system (glibc's defaults)");
  if (options.heap_policy == "retain") {
    // 32 MiB is glibc's largest mmap threshold on 64-bit; a fixed value also stops its dynamic
    // adjustment. The trim threshold keeps freed heap memory for the next run.
    if (mallopt(M_MMAP_THRESHOLD, 32 << 20) != 1 || mallopt(M_TRIM_THRESHOLD, INT_MAX) != 1)
      return make_error(ErrorCode::kInternal, "mallopt refused the heap policy 'retain'", "--heap-policy",
                        "run with --heap-policy system");
  }
  g_options = options;
  g_source = source;
  return {};
}

const ProcessOptions& process_options() { return g_options; }
const std::string& process_options_source() { return g_source; }

}  // namespace glassbox
