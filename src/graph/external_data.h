// Safe resolution of ONNX external data: a location must stay inside the model
// directory (no absolute paths, no "..", no symlink escaping it), offsets and
// lengths must lie inside the file and match shape x dtype. Files are mapped
// read-only, once each, and shared by every tensor that points into them.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "glassbox/error.h"
#include "glassbox/tensor.h"

namespace glassbox::graph {

class ExternalDataResolver {
 public:
  explicit ExternalDataResolver(std::string model_dir) : model_dir_(std::move(model_dir)) {}

  // entries: the TensorProto.external_data key/value pairs in file order.
  // expected_bytes: numel * dtype size of the tensor.
  // On success returns the buffer + byte offset of the tensor's data.
  struct Location {
    std::shared_ptr<Buffer> buffer;
    size_t offset = 0;
    std::string file;  // relative location as written in the model
  };
  Result<Location> resolve(const std::vector<std::pair<std::string, std::string>>& entries, uint64_t expected_bytes);

 private:
  Result<std::shared_ptr<Buffer>> map_file(const std::string& location);

  std::string model_dir_;
  std::string canonical_dir_;
  std::map<std::string, std::shared_ptr<Buffer>> mapped_;  // canonical path -> mapping
};

// Reads a file into memory with mmap (read-only, private). Empty files give an empty buffer.
Result<std::shared_ptr<Buffer>> map_file_readonly(const std::string& path);

// `size` bytes at `offset` of a mapped file whose address is not aligned for their element
// type: data() makes an aligned heap copy on first use (once, thread-safe) and keeps it;
// source_bytes() gives the bytes in the file without copying (weight packing reads those, so
// a packed weight never gets a resident copy); release_pages() releases the file's pages.
std::shared_ptr<Buffer> make_lazy_aligned_slice(std::shared_ptr<Buffer> file, size_t offset, size_t size);

// Bytes the lazy aligned slices of this process have copied so far (each slice at most once, on its first typed
// access): what a kernel that reads a misaligned weight's typed data costs in resident memory. Tests check that the
// packed paths, which read the bytes where they lie, add nothing here.
int64_t lazy_aligned_copy_bytes();

}  // namespace glassbox::graph
