#include "runtime/weights_cache.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>
#include <vector>

#include "core/sha256.h"
#include "runtime/weights_cache_verify.h"
#include "kernels/gemm.h"

namespace glassbox::runtime {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr char kMagic[8] = {'G', 'B', 'P', 'W', 'C', 'A', 'C', 'H'};
constexpr uint64_t kAlign = 4096;
constexpr int64_t kRacyNs = int64_t{2} * 1000 * 1000 * 1000;  // a model changed within 2 s of its hash is rehashed

struct Header {
  char magic[8];
  uint32_t format_version;
  uint32_t reserved;
  uint64_t index_offset, index_bytes, index_checksum;
  uint64_t payload_offset, payload_bytes, payload_checksum;
};
static_assert(sizeof(Header) == 64);

std::mutex& cpu_override_mu() {
  static std::mutex mu;
  return mu;
}
std::string& cpu_override() {
  static std::string s;
  return s;
}

std::string cpu_key() {
  std::lock_guard<std::mutex> lock(cpu_override_mu());
  return cpu_override().empty() ? kernels::packed_layout_cpu_key() : cpu_override();
}

uint64_t round_up(uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

json stat_json(const struct stat& st) {
  return {{"dev", static_cast<uint64_t>(st.st_dev)}, {"ino", static_cast<uint64_t>(st.st_ino)},
          {"size", static_cast<int64_t>(st.st_size)},
          {"mtime_ns", static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec},
          {"ctime_ns", static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec}};
}

int64_t now_ns() {
  struct timespec ts {};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string errno_text(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

bool write_all(int fd, const void* data, size_t n, uint64_t at) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(at));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
    at += static_cast<uint64_t>(w);
  }
  return true;
}

bool read_all(int fd, void* data, size_t n, uint64_t at) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(at));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
    at += static_cast<uint64_t>(r);
  }
  return true;
}

// A read-only mapping of the whole cache file, shared by every packing served from it.
// A read-only mapping of the whole cache file, shared by every packing served from it.
struct Mapping {
  void* base = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (base) ::munmap(base, size);
  }
};

// The model's files (the .onnx and its external data) as the key names them.
struct ModelFile {
  std::string name;  // "" for the model file, else the external location
  std::string path;
  struct stat st {};
};

}  // namespace

void set_weights_cache_cpu_for_testing(const std::string& cpu) {
  std::lock_guard<std::mutex> lock(cpu_override_mu());
  cpu_override() = cpu;
}

// The cache file's name for a model path: DIR/<stem>-<sha256(real path), 16 hex>-<precision>.gbpw.
static std::string cache_file_name(const SessionOptions& o, const std::string& model_path) {
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(fs::absolute(model_path, ec), ec);
  const std::string real_path = ec ? model_path : real.string();
  return (fs::path(o.weights_cache) / (fs::path(model_path).stem().string() + "-" +
                                       sha256_hex(real_path.data(), real_path.size()).substr(0, 16) + "-" +
                                       precision_name(o.precision) + ".gbpw"))
      .string();
}

// What start_weights_cache does before the model is parsed (it needs only the model's path):
// opens the file, checks the header and the index checksum, parses the index, maps the file
// and starts checking every segment's checksum on background threads. The key (which needs the
// parsed model's external files) is compared later, by the WeightsCache.
class WeightsCacheEarly {
 public:
  WeightsCacheEarly(const SessionOptions& o, const std::string& model_path) : file(cache_file_name(o, model_path)) {
    const auto t0 = Clock::now();
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno != ENOENT) stale = errno_text("cannot open", file);
    } else {
      exists = true;
      read(fd, std::max(1, o.threads - 1));
      ::close(fd);  // the mapping stays
    }
    open_ms = ms_since(t0);
  }
  void cancel() {
    if (verifier) verifier->cancel();
  }

  const std::string file;
  bool exists = false;                       // false: no file there
  std::string stale;                         // why the file is unusable, found before the key matters
  std::string corrupt;                       // why its entries are unusable, reported only if the key matches
  std::pair<dev_t, ino_t> found{0, 0};       // device and inode of the file (0, 0: none)
  Header header{};
  json index;
  std::map<std::string, kernels::PackedBytes> entries;  // views of the mapping
  std::shared_ptr<Mapping> map;
  std::unique_ptr<SegmentVerifier> verifier;  // declared after map: stops before the unmapping
  double open_ms = 0;

 private:
  void read(int fd, int threads) {
    struct stat st {};
    Header& h = header;
    if (::fstat(fd, &st) != 0) return void(stale = errno_text("cannot stat", file));
    found = {st.st_dev, st.st_ino};  // if unusable, a writer must replace this file, never keep it
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size < sizeof h || !read_all(fd, &h, sizeof h, 0)) return void(stale = "truncated: " + std::to_string(size) + " bytes, no header");
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return void(stale = "not a glassbox weights cache file (bad magic)");
    if (h.format_version != kWeightsCacheFormatVersion)
      return void(stale = "file format version " + std::to_string(h.format_version) + ", this build reads " +
                          std::to_string(kWeightsCacheFormatVersion));
    if (h.payload_offset > size || h.payload_bytes != size - h.payload_offset)
      return void(stale = "truncated or resized: " + std::to_string(size) + " bytes, the header says " +
                          std::to_string(h.payload_offset) + " + " + std::to_string(h.payload_bytes));
    if (h.index_offset != sizeof h || h.index_bytes > h.payload_offset - sizeof h || h.payload_offset % kAlign != 0)
      return void(stale = "corrupt: header offsets are inconsistent");
    std::string text(h.index_bytes, '\0');
    if (!read_all(fd, text.data(), text.size(), h.index_offset)) return void(stale = "cannot read the index");
    if (checksum64(text.data(), text.size()) != h.index_checksum) return void(stale = "corrupt: index checksum mismatch");
    index = json::parse(text, nullptr, false);
    if (index.is_discarded() || !index.is_object() || !index.contains("key") || !index.contains("entries"))
      return void(stale = "corrupt: index is not the expected JSON");
    try {
      map_and_start(fd, size, threads);
    } catch (const json::exception& e) {
      corrupt = std::string("corrupt: index entries malformed (") + e.what() + ")";
    }
  }

  void map_and_start(int fd, uint64_t size, int threads) {
    map = std::make_shared<Mapping>();
    map->base = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map->base == MAP_FAILED) {
      map->base = nullptr;
      return void(corrupt = errno_text("cannot map", file));
    }
    map->size = size;
    const auto* payload = static_cast<const std::byte*>(map->base) + header.payload_offset;
    std::vector<CacheSegment> segments;
    for (const auto& e : index.at("entries")) {
      kernels::PackedBytes b;
      b.meta = e.at("meta").get<std::string>();
      b.owner = map;
      for (const auto& s : e.at("segments")) {
        const CacheSegment seg{s.at(0).get<uint64_t>(), s.at(1).get<uint64_t>(), s.at(2).get<uint64_t>()};
        if (seg.offset % kAlign != 0 || seg.offset > header.payload_bytes || seg.bytes > header.payload_bytes - seg.offset)
          return void(corrupt = "corrupt: a segment lies outside the payload");
        segments.push_back(seg);
        b.segments.emplace_back(payload + seg.offset, seg.bytes);
      }
      entries[e.at("key").get<std::string>()] = std::move(b);
    }
    verifier = std::make_unique<SegmentVerifier>(payload, std::move(segments), threads);
  }
};

class WeightsCache final : public ops::PackedBlobStore {
 public:
  // open_ms: what the load spent on the cache (the early part's own time plus this one's).
  WeightsCache(const SessionOptions& o, const graph::Model& model, std::shared_ptr<WeightsCacheEarly> early) {
    const auto t0 = Clock::now();
    open(o, model, std::move(early));
    report_.open_ms += ms_since(t0);
  }
  ~WeightsCache() override {
    if (writer_.joinable()) writer_.join();
  }

  std::optional<kernels::PackedBytes> find(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    ++report_.used;
    return it->second;
  }

  void add(const std::string& key, kernels::PackedBytes bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (report_.state == "hit" || writer_started_ || !writable_) {
      ++report_.not_in_file;
      return;
    }
    pending_[key] = std::move(bytes);
  }

  void refused(const std::string& key, const std::string& why) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (report_.refused++ == 0) report_.refused_why = key + ": " + why;
  }

  void after_run() {
    std::lock_guard<std::mutex> lock(mu_);
    if (writer_started_ || !writable_ || (report_.state != "miss" && report_.state != "rebuilt")) return;
    if (pending_.empty()) {  // the first run packed nothing the cache covers (e.g. only convolutions)
      report_.write = "skipped: the first run packed no GEMM weights (nothing to cache for this model)";
      return;
    }
    writer_started_ = true;
    report_.write = "pending: writing in the background";
    writer_ = std::thread([this] { write_file(); });  // joined by the destructor (the session's end)
  }

  WeightsCacheReport report(bool wait) {
    if (wait) {
      std::unique_lock<std::mutex> lock(mu_);
      written_cv_.wait(lock, [&] { return !writer_started_ || writer_done_; });
    }
    std::lock_guard<std::mutex> lock(mu_);
    return report_;
  }

 private:
  // --- load: find, check and map the file -------------------------------------------------
  void open(const SessionOptions& o, const graph::Model& model, std::shared_ptr<WeightsCacheEarly> early) {
    const fs::path dir(o.weights_cache);
    std::error_code ec;
    file_ = cache_file_name(o, model.path);
    report_.file = file_;
    files_.push_back({"", model.path, {}});
    for (const auto& loc : model.external_data.files)
      files_.push_back({loc, (fs::path(model.path).parent_path() / loc).string(), {}});
    for (auto& f : files_)
      if (::stat(f.path.c_str(), &f.st) != 0) return unavailable(errno_text("cannot stat", f.path));
    std::string disabled;
    for (const auto& p : o.disabled_passes) disabled += (disabled.empty() ? "" : ",") + p;
    key_ = {{"engine", std::string("glassbox ") + GLASSBOX_VERSION},
            {"layout_version", kPackedLayoutVersion},
            {"cpu", cpu_key()},
            {"precision", precision_name(o.precision)},
            {"passes", "opt_level=" + std::to_string(o.opt_level) + " disabled=" + disabled},
            {"files", json::array()}};
    fs::create_directories(dir, ec);
    writable_ = !ec && ::access(dir.c_str(), W_OK | X_OK) == 0;
    const std::string why_not_writable = ec ? "cannot create " + dir.string() + ": " + ec.message()
                                            : "cannot write to " + dir.string() + ": " + std::strerror(errno);
    if (!early || early->file != file_) early = std::make_shared<WeightsCacheEarly>(o, model.path);
    report_.open_ms = early->open_ms;
    std::string stale;
    const bool hit = use_file(*early, stale);
    early.reset();  // its threads are done (or cancelled); a hit's entries keep the mapping
    if (hit) return;  // usable even from a read-only directory
    if (!writable_) return unavailable(why_not_writable + (stale.empty() ? "" : " (and the file there is unusable: " + stale + ")"));
    report_.state = stale.empty() ? "miss" : "rebuilt";
    report_.reason = stale.empty() ? "no cache file yet: the packed weights are written after the first run"
                                   : stale + "; packing again, the file is replaced after the first run";
    report_.write = "pending: after the first run";
  }

  void unavailable(const std::string& why) {
    report_.state = "unavailable";
    report_.reason = why + "; running without the cache";
    writable_ = false;
    fprintf(stderr, "glassbox: warning: weights cache: %s\n", report_.reason.c_str());
  }

  // The key with every file's SHA-256, reusing `index`'s hashes for files whose stat is unchanged
  // and not racy; also the stat memo to write with the file. Touches no member: the writer calls
  // it without the lock (hashing BERT-base's 438 MB takes ~0.5 s of CPU).
  struct FullKey {
    json key, model_stat;
    std::string model_hash, how, error;
  };
  FullKey full_key(const json* index) const {
    FullKey out{key_, json::array(), "", "", ""};
    out.key["files"] = json::array();
    for (const auto& f : files_) {
      const json st = stat_json(f.st);
      std::string hash;
      const json* memo = nullptr;
      if (index && index->contains("model_stat") && (*index)["model_stat"].is_array())
        for (const auto& m : (*index)["model_stat"])
          if (m.is_object() && m.value("name", "?") == f.name && m.contains("stat") && m["stat"] == st) memo = &m;
      const auto t0 = Clock::now();
      const int64_t started = now_ns();
      if (memo && (*memo)["sha256"].is_string()) {
        hash = (*memo)["sha256"].get<std::string>();
        out.how = "stat unchanged since it was hashed (device, inode, size, mtime, ctime)";
      } else {
        auto h = sha256_file(f.path);
        if (!h.ok()) {
          out.error = h.error().to_string();
          return out;
        }
        hash = *h;
        out.how = "hashed in " + std::to_string(static_cast<int>(ms_since(t0))) + " ms";
      }
      out.key["files"].push_back({{"name", f.name}, {"bytes", static_cast<int64_t>(f.st.st_size)}, {"sha256", hash}});
      const bool racy = started - st["ctime_ns"].get<int64_t>() < kRacyNs;
      json m = {{"name", f.name}, {"sha256", hash}};
      if (!racy || memo) m["stat"] = st;
      out.model_stat.push_back(m);
      if (f.name.empty()) out.model_hash = "sha256:" + hash;
    }
    return out;
  }

  void take_key(FullKey k) {  // with mu_ held, or before the session is shared
    key_ = std::move(k.key);
    model_stat_ = std::move(k.model_stat);
    report_.model_hash = std::move(k.model_hash);
    report_.model_hash_how = std::move(k.how);
  }

  // True on a hit. Otherwise *stale says why an existing file is unusable ("" = no file). What
  // needs no key (header, index, mapping, the segments' checksums) was started by `early`
  // before the model was parsed; here the key is compared, then the check's result awaited.
  bool use_file(WeightsCacheEarly& early, std::string& stale) {
    found_ = early.found;
    if (!early.stale.empty() || !early.exists) return (stale = early.stale), false;
    FullKey k = full_key(&early.index);
    if (!k.error.empty()) return early.cancel(), (stale = "cannot hash the model: " + k.error), false;
    const json want = k.key;
    take_key(std::move(k));
    const json& have = early.index["key"];
    if (have != want) {
      early.cancel();
      stale = "stale: the key differs";
      for (auto it = want.begin(); it != want.end(); ++it)
        if (!have.contains(it.key()) || have[it.key()] != it.value()) {
          stale = "stale: " + it.key() + " differs (file: " + (have.contains(it.key()) ? have[it.key()].dump() : "none") +
                  ", now: " + it.value().dump() + ")";
          break;
        }
      return false;
    }
    if (!early.corrupt.empty()) return (stale = early.corrupt), false;
    // Every byte is checked before any is used: wait for (and help) the background check.
    const auto t0 = Clock::now();
    const SegmentVerifier::Result r = early.verifier->wait();
    const double waited = ms_since(t0);
    if (r.first_bad >= 0)
      return (stale = "corrupt: checksum mismatch in segment " + std::to_string(r.first_bad) + " of " +
                      std::to_string(early.verifier->size())),
             false;
    if (checksum64(r.sums.data(), r.sums.size() * sizeof(uint64_t)) != early.header.payload_checksum)
      return (stale = "corrupt: payload checksum mismatch"), false;
    entries_ = std::move(early.entries);
    report_.state = "hit";
    char wait_text[32];
    std::snprintf(wait_text, sizeof wait_text, "%.1f", waited);
    report_.reason = "key matches (model, engine, layout version, CPU, precision, passes); every checksum verified (" +
                     std::to_string(r.sums.size()) + " segments, checked in the background while the model loaded; the load waited " +
                     wait_text + " ms for the rest)";
    report_.packings = static_cast<int64_t>(entries_.size());
    report_.bytes = static_cast<int64_t>(early.header.payload_bytes);
    return true;
  }

  // --- after the first run: write the file --------------------------------------------------
  void write_file() {
    const auto t0 = Clock::now();
    std::string result = write_file_locked();
    std::lock_guard<std::mutex> lock(mu_);
    report_.write = result + " (" + std::to_string(static_cast<int>(ms_since(t0))) + " ms)";
    pending_.clear();  // the packings no longer need to stay alive for the writer
    writer_done_ = true;
    written_cv_.notify_all();
  }

  std::string write_file_locked() {
    const std::string lock_path = file_ + ".lock";
    const int lock_fd = ::open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (lock_fd < 0) return "failed: " + errno_text("cannot open", lock_path);
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{lock_fd};
    if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) return "skipped: another process is writing " + file_;
    remove_dead_temporaries();
    json key;
    {
      std::lock_guard<std::mutex> lock(mu_);
      key = key_;
    }
    if (!key.contains("files") || key["files"].empty()) {  // a miss: the model was not hashed at load
      FullKey k = full_key(nullptr);
      if (!k.error.empty()) return "failed: cannot hash the model: " + k.error;
      key = k.key;
      std::lock_guard<std::mutex> lock(mu_);
      take_key(std::move(k));
    }
    for (const auto& f : files_) {  // the model must not have changed since this session loaded it
      struct stat now {};
      if (::stat(f.path.c_str(), &now) != 0 || stat_json(now) != stat_json(f.st))
        return "skipped: " + f.path + " changed since the session loaded it";
    }
    if (existing_file_matches(key)) return "skipped: another process wrote it meanwhile";
    return write_new_file(key);
  }

  // A writer that held the lock before us may have written the same key: no need to write it again.
  // Never the file this session found unusable (its key may match while its payload is corrupt).
  bool existing_file_matches(const json& key) {
    const int fd = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    Header h{};
    bool same = false;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && std::make_pair(st.st_dev, st.st_ino) != found_ && read_all(fd, &h, sizeof h, 0) && std::memcmp(h.magic, kMagic, 8) == 0 &&
        h.format_version == kWeightsCacheFormatVersion && h.payload_offset + h.payload_bytes == static_cast<uint64_t>(st.st_size) &&
        h.index_bytes < (uint64_t{1} << 30)) {
      std::string text(h.index_bytes, '\0');
      if (read_all(fd, text.data(), text.size(), h.index_offset) && checksum64(text.data(), text.size()) == h.index_checksum) {
        json index = json::parse(text, nullptr, false);
        same = !index.is_discarded() && index.contains("key") && index["key"] == key;
      }
    }
    ::close(fd);
    return same;
  }

  // Temporaries of writers that died (killed mid-write) would stay forever: remove those whose pid is gone.
  void remove_dead_temporaries() {
    std::error_code ec;
    const std::string prefix = fs::path(file_).filename().string() + ".tmp.";
    for (const auto& e : fs::directory_iterator(fs::path(file_).parent_path(), ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(prefix, 0) != 0) continue;
      const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove(e.path(), ec);
    }
  }

  std::string write_new_file(const json& key) {
    std::map<std::string, kernels::PackedBytes> pending;
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending = pending_;
    }
    json entries = json::array();
    std::vector<std::span<const std::byte>> segments;
    std::vector<uint64_t> sums;
    uint64_t offset = 0;
    for (const auto& [k, b] : pending) {
      json segs = json::array();
      for (const auto& s : b.segments) {
        sums.push_back(checksum64(s.data(), s.size()));
        segs.push_back({offset, static_cast<uint64_t>(s.size()), sums.back()});
        segments.push_back(s);
        offset = round_up(offset + s.size());
      }
      entries.push_back({{"key", k}, {"meta", b.meta}, {"segments", segs}});
    }
    json index;
    {
      std::lock_guard<std::mutex> lock(mu_);
      index = {{"key", key}, {"model_stat", model_stat_}, {"entries", entries}};
    }
    const std::string text = index.dump();
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.format_version = kWeightsCacheFormatVersion;
    h.index_offset = sizeof h;
    h.index_bytes = text.size();
    h.index_checksum = checksum64(text.data(), text.size());
    h.payload_offset = round_up(sizeof h + text.size());
    h.payload_bytes = segments.empty() ? 0 : offset;
    h.payload_checksum = checksum64(sums.data(), sums.size() * sizeof(uint64_t));
    std::random_device rd;
    const std::string tmp = file_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
    const int fd = ::open(tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return "failed: " + errno_text("cannot create", tmp);
    bool ok = write_all(fd, &h, sizeof h, 0) && write_all(fd, text.data(), text.size(), h.index_offset);
    uint64_t seg_offset = 0;
    for (size_t i = 0; ok && i < segments.size(); ++i) {
      ok = write_all(fd, segments[i].data(), segments[i].size(), h.payload_offset + seg_offset);
      seg_offset = round_up(seg_offset + segments[i].size());
    }
    ok = ok && ::ftruncate(fd, static_cast<off_t>(h.payload_offset + h.payload_bytes)) == 0;
    const int write_errno = errno;
    ok = ok && ::fsync(fd) == 0;
    ::close(fd);
    if (!ok || ::rename(tmp.c_str(), file_.c_str()) != 0) {
      const std::string why = std::strerror(ok ? errno : write_errno);
      ::unlink(tmp.c_str());
      return "failed: writing " + tmp + ": " + why;
    }
    const int dfd = ::open(fs::path(file_).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);  // the rename itself survives a crash
      ::close(dfd);
    }
    std::lock_guard<std::mutex> lock(mu_);
    report_.packings = static_cast<int64_t>(pending.size());
    report_.bytes = static_cast<int64_t>(h.payload_bytes);
    return "written: " + std::to_string(pending.size()) + " packings, " + std::to_string(h.payload_bytes) + " bytes";
  }

  std::string file_;
  std::vector<ModelFile> files_;
  json key_, model_stat_;
  bool writable_ = false;
  std::pair<dev_t, ino_t> found_{0, 0};  // device and inode of the file found at load (0, 0: none)

  std::mutex mu_;
  std::condition_variable written_cv_;
  WeightsCacheReport report_;
  std::map<std::string, kernels::PackedBytes> entries_;  // hit: views of the mapped file
  std::map<std::string, kernels::PackedBytes> pending_;  // miss: packings of this process, to write
  bool writer_started_ = false, writer_done_ = false;
  std::thread writer_;
};

std::shared_ptr<WeightsCacheEarly> start_weights_cache(const SessionOptions& options, const std::string& model_path) {
  if (options.weights_cache.empty()) return nullptr;
  return std::make_shared<WeightsCacheEarly>(options, model_path);
}

std::shared_ptr<WeightsCache> open_weights_cache(const SessionOptions& options, const graph::Model& model,
                                                 std::shared_ptr<WeightsCacheEarly> early) {
  if (options.weights_cache.empty()) return nullptr;
  return std::make_shared<WeightsCache>(options, model, std::move(early));
}

std::shared_ptr<ops::PackedBlobStore> weights_cache_store(const std::shared_ptr<WeightsCache>& cache) { return cache; }

void weights_cache_after_run(WeightsCache& cache) { cache.after_run(); }

WeightsCacheReport weights_cache_report(WeightsCache& cache, bool wait_for_write) { return cache.report(wait_for_write); }

}  // namespace glassbox::runtime
