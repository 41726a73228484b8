// Errors as values: every failure says what went wrong, where, and how to fix it.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace glassbox {

enum class ErrorCode {
  kInvalidArgument,  // the caller passed something malformed (flag, input tensor, text)
  kNotFound,         // a named file, tensor, input or token does not exist
  kInvalidModel,     // the model / tokenizer file is malformed or inconsistent
  kUnsupported,      // valid, but glassbox does not implement it (op, attribute, dtype)
  kLimitExceeded,    // a declared limit (bytes, elements, depth) would be exceeded
  kIo,               // the OS refused a read / write / map
  kInternal,         // a bug in glassbox: please report
};

const char* error_code_name(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string what;   // what is wrong, e.g. "external data offset 9000 is past end of file (size 100)"
  std::string where;  // where, e.g. "model.onnx: initializer 'w' (node 'MatMul_3')"
  std::string fix;    // how to fix it, e.g. "re-export the model" / "raise --max-model-bytes"

  // "where: what (fix: ...)" on one line; never contains internal handles.
  std::string to_string() const;

  // Prepends a location (outermost last): err.with_where("file.onnx").
  Error&& with_where(const std::string& outer) &&;
};

inline Error make_error(ErrorCode code, std::string what, std::string where = {}, std::string fix = {}) {
  return Error{code, std::move(what), std::move(where), std::move(fix)};
}

// Status: success or one Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error e) : error_(std::move(e)) {}  // NOLINT(google-explicit-constructor): return make_error(...)
  static Status ok_status() { return Status(); }
  bool ok() const { return !error_.has_value(); }
  const Error& error() const& { return *error_; }
  Error&& take_error() && { return std::move(*error_); }
  std::string to_string() const { return ok() ? "ok" : error_->to_string(); }

 private:
  std::optional<Error> error_;
};

// Result<T>: a T or an Error.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}   // NOLINT(google-explicit-constructor)
  Result(Error e) : v_(std::move(e)) {}       // NOLINT(google-explicit-constructor)
  Result(Status s) : v_(std::move(s).take_error()) { }  // only from a failed Status
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Error& error() const& { return std::get<Error>(v_); }
  Error&& take_error() && { return std::get<Error>(std::move(v_)); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  Status status() const { return ok() ? Status() : Status(error()); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace glassbox

#define GB_CONCAT_INNER_(a, b) a##b
#define GB_CONCAT_(a, b) GB_CONCAT_INNER_(a, b)

// Returns the error of a failed Status/Result from the enclosing function.
#define GB_RETURN_IF_ERROR(expr)                                  \
  do {                                                            \
    auto&& gb_status_ = (expr);                                   \
    if (!gb_status_.ok()) return std::move(gb_status_).take_error(); \
  } while (0)

// GB_ASSIGN_OR_RETURN(auto x, make_x()); declares x from a Result or returns its error.
#define GB_ASSIGN_OR_RETURN(lhs, expr) GB_ASSIGN_OR_RETURN_IMPL_(GB_CONCAT_(gb_result_, __LINE__), lhs, expr)
#define GB_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)      \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return std::move(tmp).take_error();   \
  lhs = std::move(tmp).value()
