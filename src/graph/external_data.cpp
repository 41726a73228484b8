#include "graph/external_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <set>

namespace glassbox::graph {
namespace {

class MappedBuffer final : public Buffer {
 public:
  MappedBuffer(void* data, size_t size, int fd) : data_(data), size_(size), fd_(fd) {}
  ~MappedBuffer() override {
    if (data_ && size_) munmap(data_, size_);
    if (fd_ >= 0) close(fd_);
  }
  bool read_bytes(size_t offset, size_t size, void* dst) const override {
    if (fd_ < 0 || offset > size_ || size > size_ - offset) return false;
    char* out = static_cast<char*>(dst);
    while (size > 0) {
      const ssize_t n = pread(fd_, out, size, static_cast<off_t>(offset));
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        return false;
      }
      out += n;
      offset += static_cast<size_t>(n);
      size -= static_cast<size_t>(n);
    }
    return true;
  }
  const void* data() const override { return data_; }
  void* mutable_data() override { return nullptr; }
  size_t size() const override { return size_; }
  void release_pages(size_t offset, size_t size) const override {
    if (!data_ || offset >= size_) return;
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t begin = reinterpret_cast<uintptr_t>(data_) + offset;
    const uintptr_t end = begin + std::min(size, size_ - offset);
    const uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  }

 private:
  void* data_;
  size_t size_;
  int fd_;  // kept open for read_bytes
};

std::atomic<int64_t> g_lazy_copy_bytes{0};

class LazyAlignedSlice final : public Buffer {
 public:
  LazyAlignedSlice(std::shared_ptr<Buffer> file, size_t offset, size_t size)
      : file_(std::move(file)), offset_(offset), size_(size) {}
  const void* data() const override {
    std::call_once(once_, [this] {
      copy_ = make_owned_buffer(size_);
      if (size_) std::memcpy(copy_->mutable_data(), source_bytes(), size_);
      g_lazy_copy_bytes.fetch_add(static_cast<int64_t>(size_), std::memory_order_relaxed);
    });
    return copy_->data();
  }
  void* mutable_data() override { return nullptr; }  // read-only, like the file
  size_t size() const override { return size_; }
  const void* source_bytes() const override { return static_cast<const char*>(file_->data()) + offset_; }
  void release_pages(size_t offset, size_t size) const override { file_->release_pages(offset_ + offset, size); }
  bool read_bytes(size_t offset, size_t size, void* dst) const override {
    return offset <= size_ && size <= size_ - offset && file_->read_bytes(offset_ + offset, size, dst);
  }

 private:
  std::shared_ptr<Buffer> file_;
  size_t offset_, size_;
  mutable std::once_flag once_;
  mutable std::shared_ptr<Buffer> copy_;
};

Error ext_error(std::string what, std::string fix = "re-export the model with its external data inside the model directory") {
  return make_error(ErrorCode::kInvalidModel, std::move(what), {}, std::move(fix));
}

Result<uint64_t> parse_u63(const std::string& key, const std::string& text) {
  uint64_t v = 0;
  if (text.empty() || text.size() > 19) return ext_error("external_data " + key + " '" + text + "' is not a valid integer");
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v > static_cast<uint64_t>(INT64_MAX))
    return ext_error("external_data " + key + " '" + text + "' is not a valid non-negative 64-bit integer");
  return v;
}

}  // namespace

std::shared_ptr<Buffer> make_lazy_aligned_slice(std::shared_ptr<Buffer> file, size_t offset, size_t size) {
  return std::make_shared<LazyAlignedSlice>(std::move(file), offset, size);
}

int64_t lazy_aligned_copy_bytes() { return g_lazy_copy_bytes.load(std::memory_order_relaxed); }

Result<std::shared_ptr<Buffer>> map_file_readonly(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(ErrorCode::kIo, "cannot open file", path, "check that the file exists and is readable");
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return make_error(ErrorCode::kIo, "not a regular file", path);
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* data = nullptr;
  if (size > 0) {
    data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      close(fd);
      return make_error(ErrorCode::kIo, "mmap failed", path);
    }
  }
  return std::shared_ptr<Buffer>(std::make_shared<MappedBuffer>(data, size, fd));
}

Result<std::shared_ptr<Buffer>> ExternalDataResolver::map_file(const std::string& location) {
  if (model_dir_.empty())
    return ext_error("tensor uses external data but the model was not loaded from a file",
                     "load the model with its path so external data can be resolved");
  if (canonical_dir_.empty()) {
    char buf[PATH_MAX];
    if (!realpath(model_dir_.c_str(), buf)) return make_error(ErrorCode::kIo, "cannot resolve model directory", model_dir_);
    canonical_dir_ = buf;
  }
  const std::string joined = model_dir_ + "/" + location;
  char resolved[PATH_MAX];
  if (!realpath(joined.c_str(), resolved))
    return ext_error("external data file '" + location + "' does not exist in the model directory",
                     "put the data file next to the model");
  const std::string canonical = resolved;
  const std::string prefix = canonical_dir_ == "/" ? "/" : canonical_dir_ + "/";
  if (canonical.compare(0, prefix.size(), prefix) != 0)
    return ext_error("external data location '" + location + "' resolves outside the model directory (symlink?)");
  auto it = mapped_.find(canonical);
  if (it != mapped_.end()) return it->second;
  GB_ASSIGN_OR_RETURN(auto buffer, map_file_readonly(canonical));
  mapped_[canonical] = buffer;
  return buffer;
}

Result<ExternalDataResolver::Location> ExternalDataResolver::resolve(
    const std::vector<std::pair<std::string, std::string>>& entries, uint64_t expected_bytes) {
  std::set<std::string> seen;
  std::string location;
  uint64_t offset = 0;
  bool has_length = false;
  uint64_t length = 0;
  for (const auto& [key, value] : entries) {
    if (!seen.insert(key).second) return ext_error("external_data key '" + key + "' appears twice");
    if (key == "location") {
      location = value;
    } else if (key == "offset") {
      GB_ASSIGN_OR_RETURN(offset, parse_u63(key, value));
    } else if (key == "length") {
      GB_ASSIGN_OR_RETURN(length, parse_u63(key, value));
      has_length = true;
    } else if (key == "checksum") {
      // SHA1 of the data; optional in the spec and not verified (hashing would read every byte at load).
    } else {
      return ext_error("unknown external_data key '" + key + "'", "only location, offset, length, checksum are defined");
    }
  }
  if (location.empty()) return ext_error("external_data has no 'location' (or it is empty)");
  if (location.find('\0') != std::string::npos) return ext_error("external data location contains a NUL byte");
  if (location[0] == '/' || location[0] == '\\') return ext_error("external data location '" + location + "' is absolute");
  // Refuse any ".." component, even one that would stay inside: the spec says "relative to the model directory".
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find_first_of("/\\", start);
    if (end == std::string::npos) end = location.size();
    if (location.compare(start, end - start, "..") == 0 && end - start == 2)
      return ext_error("external data location '" + location + "' contains '..'");
    start = end + 1;
  }
  if (has_length && length != expected_bytes)
    return ext_error("external data length " + std::to_string(length) + " does not match shape x dtype size " +
                     std::to_string(expected_bytes));
  GB_ASSIGN_OR_RETURN(auto buffer, map_file(location));
  const uint64_t file_size = buffer->size();
  if (offset > file_size || expected_bytes > file_size - offset)
    return ext_error("external data [offset " + std::to_string(offset) + ", +" + std::to_string(expected_bytes) +
                     " bytes) lies outside '" + location + "' (" + std::to_string(file_size) + " bytes)");
  return Location{std::move(buffer), static_cast<size_t>(offset), location};
}

}  // namespace glassbox::graph
