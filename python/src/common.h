// Shared by the binding's files: glassbox::Error -> typed Python exception, argument checks
// that raise glassbox.InvalidInput instead of pybind11's TypeError, and the GIL idiom.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <utility>

#include <map>

#include "glassbox/error.h"
#include "glassbox/session.h"

namespace glassbox::py_binding {

namespace py = pybind11;

// Raises the glassbox.errors class for e.code (InvalidInput, ModelError, ...) carrying
// what / where / fix as attributes and Error::to_string() as the message. Needs the GIL.
[[noreturn]] void raise_error(const Error& e);

[[noreturn]] inline void raise_invalid(std::string what, std::string where = {}, std::string fix = {}) {
  raise_error(make_error(ErrorCode::kInvalidArgument, std::move(what), std::move(where), std::move(fix)));
}

template <class T>
T unwrap(Result<T>&& r) {
  if (!r.ok()) raise_error(r.error());
  return std::move(r).value();
}
inline void unwrap(const Status& s) {
  if (!s.ok()) raise_error(s.error());
}

// Python type name of an object, for messages: "NoneType", "int", "numpy.ndarray".
std::string type_name(const py::handle& h);

// A Python str as UTF-8 (InvalidInput for anything else, or for lone surrogates).
std::string as_utf8(const py::handle& h, const std::string& what);
// A str or os.PathLike as a UTF-8 path (InvalidInput for anything else).
std::string as_path(const py::handle& h, const std::string& what);
// A Python int (not bool) in [lo, hi] (InvalidInput otherwise).
long long as_int(const py::handle& h, const std::string& what, long long lo, long long hi);
// max_memory: None (0: off), positive bytes, or a size string "512M" / "2G" (docs/memory.md).
int64_t as_budget(const py::handle& h, const std::string& where);
bool as_bool(const py::handle& h, const std::string& what);

// Converts a nlohmann JSON text into Python objects (json.loads): explain output, dicts.
py::object json_to_python(const std::string& text);

// explain()'s sources for options passed from Python: "session.<field>" -> "argument" for every
// field that differs from its SessionOptions default (the CLI says "flag" for the same thing).
std::map<std::string, std::string> argument_sources(const SessionOptions& given);

void bind_tokenizer(py::module_& m);
void bind_session(py::module_& m);
void bind_pipeline(py::module_& m);
void bind_vision(py::module_& m);

}  // namespace glassbox::py_binding
