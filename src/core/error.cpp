#include "glassbox/error.h"

namespace glassbox {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kInvalidModel: return "invalid model";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kLimitExceeded: return "limit exceeded";
    case ErrorCode::kIo: return "i/o error";
    case ErrorCode::kInternal: return "internal error";
  }
  return "unknown error";
}

std::string Error::to_string() const {
  std::string s;
  if (!where.empty()) s += where + ": ";
  s += error_code_name(code);
  s += ": ";
  s += what;
  if (!fix.empty()) s += " (fix: " + fix + ")";
  return s;
}

Error&& Error::with_where(const std::string& outer) && {
  where = where.empty() ? outer : outer + ": " + where;
  return std::move(*this);
}

}  // namespace glassbox
