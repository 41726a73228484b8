// Settings that belong to the whole process rather than to one session: the CLI applies them
// once, before any model loads (`glassbox --heap-policy ...`); `glassbox explain` shows them.
// A library user (the Python module, an embedding program) gets none of them unless it calls
// apply_process_options itself: a library does not change its host's allocator.
#pragma once

#include <string>

#include "glassbox/error.h"

namespace glassbox {

struct ProcessOptions {
  // "retain": glibc malloc serves blocks up to 32 MiB from the heap instead of fresh mmaps and
  // does not trim the heap, so freed tensor memory is reused. Why: the first run of each new
  // input shape allocates every tensor once (it records the memory plan); with glibc's default
  // each large block is a new mapping, faulted and zeroed page by page and unmapped at free
  // (serving BERT-base: per-text p95 1006 -> 388 ms). "system": glibc's defaults.
  std::string heap_policy = "retain";
};

// Validates and applies `options` (once per process; later calls replace the recorded values
// but glibc keeps the settings). `source`: where the values came from ("default", "flag").
Status apply_process_options(const ProcessOptions& options, const std::string& source);
// What was applied, and from where ("default" before any call).
const ProcessOptions& process_options();
const std::string& process_options_source();
// False when the allocator refused the policy (a sanitizer's malloc) or before any call.
bool heap_policy_in_effect();

}  // namespace glassbox
