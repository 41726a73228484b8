// Fast JSON-lines I/O for the text verbs (encode, classify, embed): a JSON string writer that escapes exactly
// as nlohmann::json::dump(-1, ' ', false, error_handler_t::replace) does, a strict parser for the input contract
// {"text": "...", "pair": "..."} that hands every other line back to the general parser, and buffered whole-fd
// line reading and writing. Behaviour: docs/tokenizer.md, "glassbox encode line I/O".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "glassbox/error.h"

namespace glassbox::jsonl {

// Appends s as a JSON string, quotes included. Escapes '"', '\\', and every byte below 0x20 (\b \t \n \f \r by
// name, the rest as \u00xx, lowercase); everything else, DEL and U+2028/U+2029 included, is copied as UTF-8.
// Ill-formed UTF-8 becomes U+FFFD, one per maximal ill-formed subpart: a lead byte that cannot start a
// sequence, or the well-formed prefix of a sequence cut short by a byte (re-read as a new start) or by the end.
void append_string(std::string& out, std::string_view s);
void append_uint(std::string& out, std::uint64_t v);
void append_uint_array(std::string& out, const std::vector<std::uint32_t>& v);
void append_string_array(std::string& out, const std::vector<std::string>& v);
// [[s,e],[s,e],...]
void append_pair_array(std::string& out, const std::vector<std::pair<std::size_t, std::size_t>>& v);

// One input line of the text verbs.
struct TextLine {
  std::string text;
  std::optional<std::string> pair;  // absent or null: nullopt
};

// kParsed: the line is exactly an object whose members are "text" (string) and optionally "pair" (string or
// null), each at most once, with only JSON whitespace around tokens; `out` holds the decoded values.
// kBlank: the line is empty. kGeneral: anything else, valid or not (other keys or value types, escaped keys,
// a BOM, invalid UTF-8, lone surrogates, raw control characters, trailing text): the caller parses the line
// with its general JSON parser, which decides and reports. A kParsed line decodes to the value the general
// parser would give.
enum class LineKind { kParsed, kBlank, kGeneral };
LineKind parse_text_line(std::string_view line, TextLine& out);

// Reads a file descriptor in large chunks and splits it into lines the way std::getline does ('\n' separated,
// a final line without '\n' counts, the '\n' is not part of the line). Reads only as far as the next line
// needs, so a consumer that batches keeps memory bounded. A line stays valid until the next call.
class LineReader {
 public:
  explicit LineReader(int fd, std::size_t chunk = std::size_t{1} << 20) : fd_(fd), chunk_(chunk) {}
  // Next line; false at the end of input or on a read error (then status() says which).
  bool next(std::string_view& line);
  const Status& status() const { return status_; }

 private:
  bool fill();  // appends one chunk; false at EOF or error
  int fd_;
  std::size_t chunk_;
  std::string data_;
  std::size_t pos_ = 0;
  bool eof_ = false;
  Status status_;
};

// One large output buffer written to a file descriptor in big chunks (no per-line flush).
class OutBuffer {
 public:
  explicit OutBuffer(int fd, std::size_t flush_at = std::size_t{1} << 20) : fd_(fd), flush_at_(flush_at) {}
  std::string& buf() { return buf_; }
  // Writes the buffer out when it holds flush_at bytes or more.
  Status maybe_flush() { return buf_.size() >= flush_at_ ? flush() : Status(); }
  // Writes everything buffered; a failed or short write (EPIPE, disk full) is kIo.
  Status flush();

 private:
  int fd_;
  std::size_t flush_at_;
  std::string buf_;
};

}  // namespace glassbox::jsonl
