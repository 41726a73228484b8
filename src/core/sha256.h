// SHA-256 (FIPS 180-4) through OpenSSL's libcrypto (SHA-NI where the CPU has it,
// ~1.6 GB/s here): the content key of the packed-weights cache.
#pragma once

#include <cstddef>
#include <string>

#include "glassbox/error.h"

namespace glassbox {

// Lowercase hex digest of `size` bytes, as sha256sum prints it.
std::string sha256_hex(const void* data, size_t size);

// Digest of a file's bytes, read with pread in 1 MiB chunks (the page cache, never the
// process's resident set, unlike hashing through a mapping).
Result<std::string> sha256_file(const std::string& path);

}  // namespace glassbox
