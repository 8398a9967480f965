"""Exceptions of overlapscope: every failure of the library surfaces as one of these.

    Error                  base class; .code is the C API's code (the CLI's exit code)
    +-- LibraryError       libovscope.so not found, not loadable, or of another ABI version
    +-- TraceError         an input (trace or rules file) cannot be read: .path, .offset, .reason
    +-- OptionError        a bad option, regex or gate expression (also a ValueError)
    +-- GateError          Report.require(): a gate failed; .failures names rank, metric, value
    +-- CaptureError       in-process capture failed (CUPTI, a capture already active)
        +-- UnavailableError   this build has no in-process capture (built without CUDA)
"""

import re

# Codes of the C API (engine/capi/ovscope.h).
OK = 0
ERROR = 1
BAD_INPUT = 2
BAD_ARGUMENT = 64
UNAVAILABLE = 69


class Error(Exception):
    """Any overlapscope failure. `code` is the C API's result code, `message` its text."""

    def __init__(self, message, code=ERROR):
        super().__init__(message)
        self.message = message
        self.code = code


class LibraryError(Error):
    """libovscope.so could not be found or loaded, or speaks another ABI version."""


class TraceError(Error):
    """An input cannot be read. `path`, `offset` (byte, or None when the reader names none) and
    `reason` come from the message "<path>: offset <N>: <reason>"."""

    _WITH_OFFSET = re.compile(r"^(?P<path>.*?): offset (?P<offset>\d+): (?P<reason>.*)$", re.S)

    def __init__(self, message, code=BAD_INPUT):
        super().__init__(message, code)
        m = self._WITH_OFFSET.match(message)
        if m:
            self.path, self.offset, self.reason = m.group("path"), int(m.group("offset")), m.group("reason")
        else:
            path, sep, reason = message.partition(": ")
            self.path, self.offset, self.reason = (path, None, reason) if sep else (None, None, message)


class OptionError(Error, ValueError):
    """A bad option value, classification regex, rules-file line or gate expression."""

    def __init__(self, message, code=BAD_ARGUMENT):
        super().__init__(message, code)


class GateError(Error):
    """Raised by Report.require() when a gate fails. `failures`: the failed GateCheck items
    (each with .label, .rank, .metric, .value, .gate, .line); `result`: the whole GateResult."""

    def __init__(self, result):
        self.result = result
        self.failures = [c for c in result.checks if not c.passed]
        lines = "\n".join("  " + c.line for c in self.failures)
        super().__init__("%d gate check(s) failed:\n%s" % (len(self.failures), lines), 3)


class CaptureError(Error):
    """In-process capture failed (CUPTI error, another capture or `overlapscope profile`
    already active in this process)."""


class UnavailableError(CaptureError):
    """This build of libovscope.so has no in-process capture (it was built without CUDA)."""

    def __init__(self, message, code=UNAVAILABLE):
        super().__init__(message, code)


def from_code(code, message, during_capture=False):
    """The exception for a C API failure `code` with its message."""
    if code == BAD_INPUT:
        return TraceError(message)
    if code == BAD_ARGUMENT:
        return OptionError(message)
    if code == UNAVAILABLE:
        return UnavailableError(message)
    return (CaptureError if during_capture else Error)(message, code)
