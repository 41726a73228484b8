#include "runtime/weights_cache_verify.h"

#include <algorithm>
#include <cstring>

namespace glassbox::runtime {

uint64_t checksum64(const void* data, size_t n) {
  constexpr uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full, P3 = 0x165667B19E3779F9ull;
  auto rotl = [](uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
  auto round = [&](uint64_t acc, uint64_t v) { return rotl(acc + v * P2, 31) * P1; };
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t lane[4] = {P1 + P2, P2, 0, 0 - P1};
  size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int l = 0; l < 4; ++l) {
      uint64_t v;
      std::memcpy(&v, p + i + 8 * l, 8);
      lane[l] = round(lane[l], v);
    }
  uint64_t h = rotl(lane[0], 1) + rotl(lane[1], 7) + rotl(lane[2], 12) + rotl(lane[3], 18) + n;
  for (; i < n; ++i) h = rotl(h ^ (p[i] * P3), 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  return h ^ (h >> 32);
}

SegmentVerifier::SegmentVerifier(const std::byte* payload, std::vector<CacheSegment> segments, int threads)
    : payload_(payload), segments_(std::move(segments)), sums_(segments_.size()) {
  const int n = std::clamp(threads, 0, static_cast<int>(std::min<size_t>(segments_.size(), 64)));
  for (int t = 0; t < n; ++t) threads_.emplace_back([this] { work(); });
}

SegmentVerifier::~SegmentVerifier() {
  cancel();
  for (auto& t : threads_) t.join();
}

void SegmentVerifier::cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  done_cv_.notify_all();
}

void SegmentVerifier::work() {
  for (;;) {
    size_t i;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (cancelled_ || next_ >= segments_.size()) return;
      i = next_++;
    }
    const uint64_t sum = checksum64(payload_ + segments_[i].offset, segments_[i].bytes);
    std::lock_guard<std::mutex> lock(mu_);
    sums_[i] = sum;
    if (++done_ == segments_.size()) done_cv_.notify_all();
  }
}

SegmentVerifier::Result SegmentVerifier::wait() {
  work();  // the caller checks segments too rather than idling
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return done_ == segments_.size() || cancelled_; });
  Result r;
  if (cancelled_ || done_ != segments_.size()) return r.first_bad = 0, r;  // cancelled: nothing may be trusted
  r.sums = sums_;
  for (size_t i = 0; i < segments_.size() && r.first_bad < 0; ++i)
    if (sums_[i] != segments_[i].checksum) r.first_bad = static_cast<int64_t>(i);
  return r;
}

}  // namespace glassbox::runtime
