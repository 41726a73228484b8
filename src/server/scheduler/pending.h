// A request while the scheduler holds it: its work item, when it arrived, and for text work
// its encoded texts and the results gathered so far. Only the dispatcher thread touches the
// fields after submit; the queue's membership is guarded by the scheduler's mutex.
#pragma once

#include "server/scheduler/scheduler.h"

namespace glassbox::server {

struct Scheduler::Pending {
  WorkItem item;
  std::chrono::steady_clock::time_point enqueued;
  bool started = false;  // part of it went to an engine run: no longer dropped, it finishes
  bool finished = false; // answered (results or error)
  // Text work.
  bool encoded = false;
  std::vector<EncodedText> texts;
  size_t next = 0;       // first text not yet given to a batch
  size_t remaining = 0;  // texts whose result is missing
  TextResults results;
};

inline Labels model_labels(const LoadedModel& m) { return {{"model", m.name}, {"version", m.version}}; }

}  // namespace glassbox::server
