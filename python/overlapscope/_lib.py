"""Finds and loads libovscope.so (the C API, engine/capi/ovscope.h) and wraps its calls.

Where the library is looked for, first match wins:
  1. $OVERLAPSCOPE_LIB (a path to the .so);
  2. next to this package (the build puts a copy in <build>/python/overlapscope/, and a
     `pip install` of that directory carries it along);
  3. the build trees of the source checkout this package lives in (<root>/build*/engine/capi/),
     the most recently built first.
"""

import ctypes
import glob
import json
import os
import threading

from . import errors

ABI_VERSION = 1  # the ABI this package speaks (OVS_ABI_VERSION)
_NAME = "libovscope.so"

_lock = threading.Lock()
_lib = None


def candidates():
    """The paths tried, in order (the existing ones)."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("OVERLAPSCOPE_LIB")
    if env:
        return [env]
    found = [os.path.join(here, _NAME)]
    root = os.path.dirname(os.path.dirname(here))
    builds = glob.glob(os.path.join(root, "build*", "engine", "capi", _NAME))
    found += sorted(builds, key=os.path.getmtime, reverse=True)
    return [p for p in found if os.path.exists(p)]


def _declare(lib):
    c_char_pp = ctypes.POINTER(ctypes.c_char_p)
    out_str = ctypes.POINTER(ctypes.c_void_p)  # char**: freed with ovs_free, so not c_char_p
    out_handle = ctypes.POINTER(ctypes.c_void_p)
    sigs = {
        "ovs_abi_version": (ctypes.c_int, []),
        "ovs_version": (ctypes.c_char_p, []),
        "ovs_last_error": (ctypes.c_char_p, []),
        "ovs_last_error_code": (ctypes.c_int, []),
        "ovs_free": (None, [ctypes.c_void_p]),
        "ovs_analyze": (ctypes.c_int, [c_char_pp, ctypes.c_size_t, ctypes.c_char_p, out_handle]),
        "ovs_report_free": (None, [ctypes.c_void_p]),
        "ovs_report_render": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, out_str]),
        "ovs_report_gates": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, out_str]),
        "ovs_check_gates": (ctypes.c_int, [ctypes.c_char_p]),
        "ovs_report_export": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, out_str]),
        "ovs_report_info": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, out_str]),
        "ovs_info": (ctypes.c_int, [c_char_pp, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p, out_str]),
        "ovs_replay": (ctypes.c_int, [c_char_pp, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                      out_str]),
        "ovs_capture_available": (ctypes.c_int, []),
        "ovs_capture_start": (ctypes.c_int, [ctypes.c_char_p, out_handle]),
        "ovs_capture_stop": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, out_handle]),
        "ovs_capture_free": (None, [ctypes.c_void_p]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    # The job's report assembled in the job (overlapscope.job): newer than the rest of ABI 1, so
    # a library without them still loads (overlapscope.job says what is missing).
    size_p = ctypes.POINTER(ctypes.c_size_t)
    job = {
        "ovs_reduce_rank": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, out_str, size_p]),
        "ovs_job_assemble": (ctypes.c_int, [c_char_pp, c_char_pp, size_p, ctypes.c_size_t, ctypes.c_char_p,
                                            out_handle]),
        "ovs_job_render": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, out_str]),
        "ovs_job_gates": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, out_str]),
        "ovs_job_free": (None, [ctypes.c_void_p]),
    }
    for name, (res, args) in job.items():
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype, fn.argtypes = res, args


def _open(path):
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise errors.LibraryError("cannot load %s: %s" % (path, e)) from None
    try:
        _declare(lib)
    except AttributeError as e:
        raise errors.LibraryError("%s is not an overlapscope C API library: %s" % (path, e)) from None
    abi = lib.ovs_abi_version()
    if abi != ABI_VERSION:
        raise errors.LibraryError("%s has ABI version %d; this package needs %d (rebuild, or point "
                                  "OVERLAPSCOPE_LIB at a matching library)" % (path, abi, ABI_VERSION))
    return lib


def lib():
    """The loaded library (loaded on first use); LibraryError when none can be loaded."""
    global _lib
    with _lock:
        if _lib is None:
            paths = candidates()
            if not paths:
                raise errors.LibraryError(
                    "%s not found: set OVERLAPSCOPE_LIB to its path, or build the project "
                    "(bash tools/quickstart.sh builds <repo>/build/engine/capi/%s)" % (_NAME, _NAME))
            _lib = _open(paths[0])
            _lib.path = paths[0]
        return _lib


def path():
    """Path of the loaded library."""
    return lib().path


def encode(s):
    """str or os.PathLike -> bytes as the OS takes it (None stays None)."""
    if s is None:
        return None
    return os.fsencode(s) if not isinstance(s, bytes) else s


def options(d):
    """Options dict -> JSON bytes (None values left out, so that defaults apply)."""
    return json.dumps({k: v for k, v in (d or {}).items() if v is not None}).encode()


def check(rc, during_capture=False):
    """Raises the exception for a failed call (rc != 0), with the library's message."""
    if rc != errors.OK:
        l = lib()
        msg = (l.ovs_last_error() or b"").decode("utf-8", "replace")
        raise errors.from_code(rc, msg or "overlapscope call failed (code %d)" % rc, during_capture)


def take_string(ptr):
    """Copies and frees a char* the library returned."""
    if not ptr.value:
        return None
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", "replace")
    finally:
        lib().ovs_free(ptr.value)


def call_str(fn, *args):
    """Calls fn(*args, char** out) and returns the string it produced."""
    out = ctypes.c_void_p()
    check(fn(*args, ctypes.byref(out)))
    return take_string(out)


def path_array(paths):
    """A (char**, n) pair for a list of paths."""
    enc = [encode(p) for p in paths]
    return (ctypes.c_char_p * len(enc))(*enc), len(enc)
