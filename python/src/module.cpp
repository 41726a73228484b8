// The extension module glassbox._glassbox; python/glassbox/__init__.py re-exports it.
#include "common.h"

#include "glassbox/pipeline.h"
#include "glassbox/session.h"
#include "glassbox/version.h"

namespace glassbox::py_binding {

void bind_generation(py::module_& m);  // generation_py.cpp

void raise_error(const Error& e) {
  py::object errors = py::module_::import("glassbox.errors");
  py::object cls = errors.attr("_class_for_code")(error_code_name(e.code));
  py::object exc = cls(e.to_string());
  exc.attr("code") = py::str(error_code_name(e.code));
  exc.attr("what") = py::str(e.what);
  exc.attr("where") = py::str(e.where);
  exc.attr("fix") = py::str(e.fix);
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw py::error_already_set();
}

std::string type_name(const py::handle& h) {
  py::handle t = reinterpret_cast<PyObject*>(Py_TYPE(h.ptr()));
  std::string mod = py::str(t.attr("__module__"));
  std::string name = py::str(t.attr("__qualname__"));
  return mod == "builtins" ? name : mod + "." + name;
}

std::string as_utf8(const py::handle& h, const std::string& what) {
  if (!PyUnicode_Check(h.ptr())) raise_invalid(what + " must be a str, got " + type_name(h));
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(h.ptr(), &n);
  if (!p) {
    PyErr_Clear();
    raise_invalid(what + " is not encodable as UTF-8 (it contains a lone surrogate)", {},
                  "decode the source bytes with errors='replace' or remove the surrogate");
  }
  return std::string(p, static_cast<size_t>(n));
}

std::string as_path(const py::handle& h, const std::string& what) {
  py::object path;
  try {
    path = py::module_::import("os").attr("fspath")(h);
  } catch (py::error_already_set&) {
    raise_invalid(what + " must be a str or os.PathLike, got " + type_name(h));
  }
  return as_utf8(path, what);
}

long long as_int(const py::handle& h, const std::string& what, long long lo, long long hi) {
  // numpy integers implement __index__; bool is an int subclass but never meant as a count.
  if (PyBool_Check(h.ptr()) || !PyIndex_Check(h.ptr()))
    raise_invalid(what + " must be an int, got " + type_name(h));
  py::object idx = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
  if (!idx) {
    PyErr_Clear();
    raise_invalid(what + " must be an int, got " + type_name(h));
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
  if (overflow != 0 || v < lo || v > hi)
    raise_invalid(what + " is " + std::string(py::str(idx)) + ", outside [" + std::to_string(lo) + ", " +
                  std::to_string(hi) + "]");
  return v;
}

bool as_bool(const py::handle& h, const std::string& what) {
  if (!PyBool_Check(h.ptr())) raise_invalid(what + " must be True or False, got " + type_name(h));
  return h.ptr() == Py_True;
}

py::object json_to_python(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

}  // namespace glassbox::py_binding

PYBIND11_MODULE(_glassbox, m) {
  using namespace glassbox::py_binding;
  m.doc() = "glassbox C++ core (tokenizer, ONNX session, text pipelines); use the `glassbox` package.";
  m.attr("__version__") = glassbox::version();
  bind_tokenizer(m);
  bind_session(m);
  bind_pipeline(m);
  bind_vision(m);
  bind_generation(m);
  m.def("default_model_dir", &glassbox::default_model_dir,
        "The C++ default model lookup: <executable dir>/../share/glassbox/models/langid (an installed layout), "
        "else the source tree's models/langid compiled into the library (glassbox::find_default_model).");
  m.def("physical_core_count", &glassbox::physical_core_count,
        "Physical CPU cores (hyperthread siblings counted once): what threads=0 resolves to.");
}
