# _errors.py — one exception class per ffn_status, each carrying the library's message.
# The binding's own checks (a dtype or layout a C view cannot take) raise the same classes, with
# messages written the library's way: what was wrong and what would be accepted.

from . import _lib


class Error(Exception):
    """Base of every ffn error. `status` is the ffn_status value, `status_name` its name
    ("INVALID_ARG"), `message` the library's message (ffn_ctx_last_error) or the binding's."""

    status = None

    def __init__(self, message, status=None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status

    @property
    def status_name(self):
        return _lib.STATUS_NAMES[self.status] if self.status is not None else "?"


class InvalidArgumentError(Error, ValueError):
    """FFN_STATUS_INVALID_ARG: a bad shape, stride, dtype, pointer or enum value."""
    status = _lib.STATUS["INVALID_ARG"]


class UnsupportedError(Error):
    """FFN_STATUS_UNSUPPORTED: a valid request this build, CPU or backend cannot serve."""
    status = _lib.STATUS["UNSUPPORTED"]


class OutOfMemoryError(Error, MemoryError):
    status = _lib.STATUS["OUT_OF_MEMORY"]


class BadFormatError(Error, ValueError):
    """FFN_STATUS_BAD_FORMAT: a malformed or hostile file or header."""
    status = _lib.STATUS["BAD_FORMAT"]


class IoError(Error, OSError):
    """FFN_STATUS_IO: open/read/write/mmap failed."""
    status = _lib.STATUS["IO"]


class NotFoundError(Error, LookupError):
    """FFN_STATUS_NOT_FOUND: a named tensor, key or file is missing."""
    status = _lib.STATUS["NOT_FOUND"]


class NonFiniteError(Error, ArithmeticError):
    status = _lib.STATUS["NON_FINITE"]


class BackendError(Error):
    """FFN_STATUS_BACKEND: BLAS, CUDA or MPI reported an error."""
    status = _lib.STATUS["BACKEND"]


class InternalError(Error):
    """FFN_STATUS_INTERNAL: a bug in ffn."""
    status = _lib.STATUS["INTERNAL"]


_BY_STATUS = {c.status: c for c in (InvalidArgumentError, UnsupportedError, OutOfMemoryError,
                                    BadFormatError, IoError, NotFoundError, NonFiniteError,
                                    BackendError, InternalError)}


def error_for(status, message):
    """The exception for a non-OK status."""
    cls = _BY_STATUS.get(status)
    if cls is None:
        return Error("%s (status %d)" % (message, status), status)
    return cls(message)
