// Integrity checks of the packed-weights cache file (runtime/weights_cache.h): the checksum
// and the verifier that checks every segment of a mapped file on background threads, so the
// check overlaps the model's parse and conversion instead of following it (issue #17, cold start).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace glassbox::runtime {

// Integrity checksum (not a security hash: the key's SHA-256 covers the model; this catches
// truncation and bit flips): four independent 64-bit multiply-rotate lanes (the xxHash64 round),
// then the lanes and the length mixed together. Each 8-byte word enters its lane through
// acc + v * P2 with P2 odd, then a rotation and a multiplication by the odd P1: for a fixed rest
// of the input every step is a bijection of the lane, so any change confined to one word (any
// flipped bit or byte) changes that lane's state and every later state of it, and the final
// value changes unless the finalizer collides (probability ~2^-64 for unrelated states).
uint64_t checksum64(const void* data, size_t n);

struct CacheSegment {
  uint64_t offset = 0, bytes = 0, checksum = 0;  // offset relative to the payload
};

// Checks every segment's checksum. `threads` background threads start at construction and
// claim segments one at a time; a thread calling wait() claims segments too until none is
// left, then waits for those in flight. cancel() (or the destructor) makes the threads stop
// after their current segment. The payload must stay mapped until the object is destroyed.
class SegmentVerifier {
 public:
  SegmentVerifier(const std::byte* payload, std::vector<CacheSegment> segments, int threads);
  ~SegmentVerifier();
  SegmentVerifier(const SegmentVerifier&) = delete;
  SegmentVerifier& operator=(const SegmentVerifier&) = delete;

  struct Result {
    int64_t first_bad = -1;          // the lowest index whose checksum differs; -1: all match
    std::vector<uint64_t> sums;      // every segment's computed checksum (the payload checksum covers them)
  };
  // Helps, then waits until every segment is checked. Not after cancel().
  Result wait();
  void cancel();
  size_t size() const { return segments_.size(); }

 private:
  void work();

  const std::byte* payload_;
  std::vector<CacheSegment> segments_;
  std::vector<uint64_t> sums_;
  std::mutex mu_;
  std::condition_variable done_cv_;
  size_t next_ = 0, done_ = 0;  // under mu_: the next unclaimed segment, segments checked
  bool cancelled_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace glassbox::runtime
