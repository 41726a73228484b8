// The process's resident memory as Linux reports it (/proc/self/status), and byte sizes as
// people write them ("512M"). Used by the memory budget (docs/memory.md).
#pragma once

#include <cstdint>
#include <string>

#include "glassbox/error.h"

namespace glassbox {

int64_t process_rss_bytes();       // VmRSS now; 0 when /proc is unreadable
int64_t process_peak_rss_bytes();  // VmHWM: the resident set's high-water mark
// VmRSS the first time this is called: a program calls it before loading any model, so it is the
// binary, its libraries and the runtime's own start-up (the budget's "process baseline").
int64_t process_baseline_rss_bytes();

// "536870912", "512M", "512MiB", "2G", "64K" (binary multiples; M = MiB). Positive; kInvalidArgument otherwise.
Result<int64_t> parse_byte_size(const std::string& text);
// 536870912 -> "512.0 MiB"
std::string format_bytes(int64_t bytes);

}  // namespace glassbox
