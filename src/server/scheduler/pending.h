// A request while the scheduler holds it: its work item, when it arrived, and for text work
// its encoded texts (tokenized by submit, before it queues) and the results gathered so far.
// Only the dispatcher thread touches the fields after submit; the queue's membership is guarded
// by the scheduler's mutex.
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

// Encodes every text of a text request once (submit calls it before the request queues); an input the
// pipeline refuses (overlong without a policy, empty) answers this request alone (p.finished).
void encode_texts(Scheduler::Pending& p, Metrics* metrics);

// One engine run of text work, taken from the queue under the scheduler's lock and run without it: the
// texts, for each the request and position it answers, and the requests dropped before compute (their
// client gone or their deadline passed), answered once the lock is released.
struct TextSlot {
  std::shared_ptr<Scheduler::Pending> owner;
  size_t index;
};
struct Scheduler::TextWork {
  std::vector<EncodedText> texts;
  std::vector<TextSlot> slots;
  int64_t tokens = 0;
  std::vector<std::shared_ptr<Pending>> dropped;
  std::vector<std::shared_ptr<Pending>> looked_at;  // held until the run ends: model versions are released unlocked
};

}  // namespace glassbox::server
