// What other runtime files need from a Session's internals: runs whose intra-op work
// goes to a given pool instead of the session's (run_unpadded gives each concurrently
// running sequence a one-thread pool). Not public API.
#pragma once

#include <vector>

#include "core/thread_pool.h"
#include "glassbox/session.h"

namespace glassbox {
class SessionImpl;
namespace runtime {

ThreadPool& session_pool(SessionImpl& impl);
bool has_observer(const SessionImpl& impl);
// Session::run_values / Session::run with every parallel_for on `pool`; `observer` (when not
// null) replaces the session's own observer for this run.
Result<std::vector<NamedValue>> run_values_on(SessionImpl& impl, const std::vector<NamedValue>& inputs, ThreadPool& pool,
                                              RunStats* stats, const NodeObserver* observer = nullptr,
                                              std::vector<KvCacheBinding>* caches = nullptr);
Result<std::vector<NamedTensor>> run_tensors_on(SessionImpl& impl, const std::vector<NamedTensor>& inputs, ThreadPool& pool,
                                                RunStats* stats, const NodeObserver* observer = nullptr,
                                              std::vector<KvCacheBinding>* caches = nullptr);

}  // namespace runtime
}  // namespace glassbox
