// The packed-weights cache's integrity check (runtime/weights_cache_verify.h): checksum64
// changes for every single flipped bit and every changed byte (a property of its construction,
// checked exhaustively on a buffer that covers the 32-byte lanes and the byte tail), and the
// background SegmentVerifier finds exactly the corrupt segment whatever the number of threads,
// when the waiter does all the work, and when it is cancelled or dropped without waiting.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "runtime/weights_cache_verify.h"

namespace glassbox::rt_test {
namespace {

using runtime::CacheSegment;
using runtime::checksum64;
using runtime::SegmentVerifier;

std::vector<unsigned char> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

TEST(WeightsCacheVerify, ChecksumChangesForEverySingleBitFlip) {
  auto buf = random_bytes(32 * 9 + 13, 1);  // nine full 32-byte rounds and a 13-byte tail
  const uint64_t clean = checksum64(buf.data(), buf.size());
  for (size_t i = 0; i < buf.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      buf[i] ^= static_cast<unsigned char>(1u << bit);
      ASSERT_NE(checksum64(buf.data(), buf.size()), clean) << "byte " << i << " bit " << bit;
      buf[i] ^= static_cast<unsigned char>(1u << bit);
    }
  EXPECT_EQ(checksum64(buf.data(), buf.size()), clean);
}

TEST(WeightsCacheVerify, ChecksumChangesForEveryByteValue) {
  auto buf = random_bytes(100, 2);
  const uint64_t clean = checksum64(buf.data(), buf.size());
  for (size_t i : {size_t{0}, size_t{7}, size_t{31}, size_t{63}, size_t{95}, size_t{96}, size_t{99}}) {
    const unsigned char was = buf[i];
    for (int v = 0; v < 256; ++v) {
      if (v == was) continue;
      buf[i] = static_cast<unsigned char>(v);
      ASSERT_NE(checksum64(buf.data(), buf.size()), clean) << "byte " << i << " = " << v;
    }
    buf[i] = was;
  }
}

TEST(WeightsCacheVerify, ChecksumCoversTheLength) {
  const std::vector<unsigned char> zeros(4096, 0);
  for (size_t n = 1; n < 70; ++n) EXPECT_NE(checksum64(zeros.data(), n), checksum64(zeros.data(), n - 1)) << n;
  EXPECT_NE(checksum64(zeros.data(), 4096), checksum64(zeros.data(), 4096 - 32));
}

// A payload of `count` segments at 4096-byte offsets with their checksums.
struct Payload {
  std::vector<unsigned char> bytes;
  std::vector<CacheSegment> segments;
};

Payload make_payload(size_t count) {
  Payload p;
  std::mt19937 rng(3);
  uint64_t offset = 0;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t n = 1 + rng() % 9000;
    p.segments.push_back({offset, n, 0});
    offset += (n + 4095) / 4096 * 4096;
  }
  p.bytes = random_bytes(offset, 4);
  for (auto& s : p.segments) s.checksum = checksum64(p.bytes.data() + s.offset, s.bytes);
  return p;
}

const std::byte* data(const Payload& p) { return reinterpret_cast<const std::byte*>(p.bytes.data()); }

TEST(WeightsCacheVerify, VerifierAcceptsACleanPayloadAtAnyThreadCount) {
  const Payload p = make_payload(97);
  for (int threads : {0, 1, 2, 7}) {
    SegmentVerifier v(data(p), p.segments, threads);
    const SegmentVerifier::Result r = v.wait();
    EXPECT_EQ(r.first_bad, -1) << threads;
    ASSERT_EQ(r.sums.size(), p.segments.size());
    for (size_t i = 0; i < p.segments.size(); ++i) EXPECT_EQ(r.sums[i], p.segments[i].checksum) << i;
  }
}

TEST(WeightsCacheVerify, VerifierFindsAOneByteCorruptionInAnySegment) {
  Payload p = make_payload(40);
  std::mt19937 rng(5);
  for (size_t k = 0; k < p.segments.size(); ++k) {
    const CacheSegment& s = p.segments[k];
    // first, last and a random byte of segment k
    for (uint64_t at : {s.offset, s.offset + s.bytes - 1, s.offset + rng() % s.bytes}) {
      p.bytes[at] ^= 0x20;
      SegmentVerifier v(data(p), p.segments, static_cast<int>(k % 4));
      EXPECT_EQ(v.wait().first_bad, static_cast<int64_t>(k)) << "segment " << k << " byte " << at;
      p.bytes[at] ^= 0x20;
    }
  }
}

TEST(WeightsCacheVerify, VerifierReportsTheLowestBadSegment) {
  Payload p = make_payload(30);
  p.bytes[p.segments[21].offset] ^= 1;
  p.bytes[p.segments[9].offset + 5] ^= 1;
  SegmentVerifier v(data(p), p.segments, 3);
  EXPECT_EQ(v.wait().first_bad, 9);
}

TEST(WeightsCacheVerify, VerifierCancelledOrDroppedWithoutWaiting) {
  const Payload p = make_payload(200);
  for (int round = 0; round < 20; ++round) {
    SegmentVerifier dropped(data(p), p.segments, 3);  // destroyed while its threads may still run
  }
  SegmentVerifier v(data(p), p.segments, 2);
  v.cancel();
  EXPECT_GE(v.wait().first_bad, 0);  // a cancelled check never says "all match"
  SegmentVerifier empty(data(p), {}, 2);
  EXPECT_EQ(empty.wait().first_bad, -1);
}

}  // namespace
}  // namespace glassbox::rt_test
