"""Typed exceptions raised by glassbox, one per glassbox::ErrorCode (include/glassbox/error.h).

Every exception carries the C++ error's parts as attributes: ``code`` (the ErrorCode name,
e.g. ``"invalid argument"``), ``what`` (what is wrong), ``where`` (file, node, input...) and
``fix`` (how to fix it); ``str(e)`` is the one-line ``where: code: what (fix: ...)``.
Each class also derives from the closest built-in exception, so ``except ValueError`` keeps
working for code ported from other libraries.
"""


class GlassboxError(Exception):
    """Base class of every glassbox exception."""

    code: str = ""
    what: str = ""
    where: str = ""
    fix: str = ""


class InvalidInput(GlassboxError, ValueError, TypeError):
    """The caller passed something malformed: a wrong dtype, rank or type, a missing feed, bad text."""


class NotFound(GlassboxError, LookupError):
    """A named file, tensor, input, output or token does not exist."""


class ModelError(GlassboxError, ValueError):
    """The model or tokenizer file is malformed or inconsistent."""


class Unsupported(GlassboxError, NotImplementedError):
    """Valid, but glassbox does not implement it (op, attribute, dtype, precision)."""


class LimitExceeded(GlassboxError):
    """A declared limit (bytes, elements, depth) would be exceeded."""


class IoError(GlassboxError, OSError):
    """The operating system refused a read, write or map."""


class InternalError(GlassboxError, RuntimeError):
    """A bug in glassbox: please report it with the message."""


_BY_CODE = {
    "invalid argument": InvalidInput,
    "not found": NotFound,
    "invalid model": ModelError,
    "unsupported": Unsupported,
    "limit exceeded": LimitExceeded,
    "i/o error": IoError,
    "internal error": InternalError,
}


def _class_for_code(code: str) -> type:
    """The exception class for an ErrorCode name (used by the C++ module)."""
    return _BY_CODE.get(code, InternalError)


__all__ = ["GlassboxError", "InvalidInput", "NotFound", "ModelError", "Unsupported", "LimitExceeded", "IoError",
           "InternalError"]
