"""The public surface: a docstring on every public name, and the .pyi stubs list exactly what the
C++ module defines (a name added without a stub, or a stub for a name that is gone, fails)."""

import ast
import inspect
import os

import glassbox
from glassbox import _glassbox

STUBS = os.path.join(os.path.dirname(glassbox.__file__), "_glassbox.pyi")


def doc_text(obj):
    """The docstring without pybind11's generated signature lines."""
    doc = inspect.getdoc(obj) or ""
    lines = [line for line in doc.splitlines() if line.strip()]
    name = getattr(obj, "__name__", "")
    return "\n".join(line for line in lines if not (name and line.startswith(name + "(")) and not
                     line.lstrip().startswith("Overloaded function"))


def public_members(cls):
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        yield name, member


def test_every_public_name_has_a_docstring():
    missing = []
    for name in glassbox.__all__:
        obj = getattr(glassbox, name)
        if not doc_text(obj):
            missing.append(name)
        if inspect.isclass(obj):
            for member_name, member in public_members(obj):
                target = member.fget if isinstance(member, property) and member.fget else member
                if not (doc_text(member) or doc_text(target)):
                    missing.append(f"{name}.{member_name}")
    assert not missing, f"no docstring: {missing}"


def stub_names():
    tree = ast.parse(open(STUBS, encoding="utf-8").read())
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names[node.name] = {n.name if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) else n.target.id
                                for n in node.body if isinstance(n, (ast.FunctionDef, ast.AnnAssign))}
        elif isinstance(node, ast.FunctionDef):
            names[node.name] = set()
    return names


def test_stubs_match_the_module():
    stubs = stub_names()
    module = {n for n in dir(_glassbox) if not n.startswith("__")}
    assert set(stubs) == module, (set(stubs) ^ module)
    for cls_name in (n for n in module if inspect.isclass(getattr(_glassbox, n))):
        cls = getattr(_glassbox, cls_name)
        defined = {n for n in vars(cls) if not n.startswith("_") or n == "__len__"}
        stubbed = stubs[cls_name] - {"__init__"}
        assert defined == stubbed, f"{cls_name}: {defined ^ stubbed}"


def test_exceptions_map_error_codes():
    assert issubclass(glassbox.InvalidInput, ValueError) and issubclass(glassbox.InvalidInput, TypeError)
    assert issubclass(glassbox.NotFound, LookupError) and issubclass(glassbox.Unsupported, NotImplementedError)
    assert issubclass(glassbox.IoError, OSError) and issubclass(glassbox.InternalError, RuntimeError)
    for cls in (glassbox.InvalidInput, glassbox.NotFound, glassbox.ModelError, glassbox.Unsupported,
                glassbox.LimitExceeded, glassbox.IoError, glassbox.InternalError):
        assert issubclass(cls, glassbox.GlassboxError)
