"""overlapscope: how much of a GPU job's communication hides under computation, where hosts
block on GPUs, which sync points cost time — per rank, in exact nanoseconds.

    import overlapscope
    r = overlapscope.analyze("traces/")            # Kineto .json/.json.gz, .ovspill, dirs
    print(r.summary_text())
    r.ranks[0].summary.overlap_ratio
    r.require("overlap_ratio>=0.6")                # raises GateError naming rank and value

    with overlapscope.profile() as p:              # in-process CUPTI capture (CUDA builds)
        train_step()
    print(p.report.text())

    # torch.profiler.profile(..., on_trace_ready=overlapscope.torch.on_trace_ready("out/"))

The work is done by libovscope.so (the C API, engine/capi/ovscope.h) through ctypes; see
_lib.py for where it is looked for. Failures raise overlapscope.Error subclasses (errors.py).
"""

from . import _lib
from ._options import analysis_options
from .capture import Capture, capture_available, profile
from .errors import (CaptureError, Error, GateError, LibraryError, OptionError, TraceError,
                     UnavailableError)
from .report import GateCheck, GateResult, Report
from . import torch  # noqa: E402 (imports torch only when its hook runs)

__version__ = "0.1.0"
__all__ = [
    "analyze", "replay", "info", "profile", "check_gates", "capture_available", "library_version", "Report", "GateCheck",
    "GateResult", "Capture", "Error", "LibraryError", "TraceError", "OptionError", "GateError",
    "CaptureError", "UnavailableError"
]


def _paths(paths_or_dir):
    if isinstance(paths_or_dir, (str, bytes)) or hasattr(paths_or_dir, "__fspath__"):
        return [paths_or_dir]
    paths = list(paths_or_dir)
    if not paths:
        raise OptionError("no trace given")
    return paths


def analyze(paths_or_dir, *, align_clocks=None, comm_kernel=None, compute_kernel=None, memory_kernel=None,
            classes=None, iteration_marker=None, min_gap_ns=None, runtime_cutoff_ns=None,
            launch_delay_cutoff_ns=None, top=None, threads=None, groups=None):
    """Loads traces (a path, a directory, or a list of them: Kineto .json/.json.gz one file per
    rank, .ovspill captures) and analyzes them: the Report of `overlapscope analyze`.

    Options (None: the CLI's default), as the CLI's flags:
      align_clocks            "auto" (default), "on", "off"
      comm_kernel, compute_kernel, memory_kernel   regex or list: classification rules
      classes                 rules file path(s) ("CLASS REGEX" per line)
      iteration_marker        default "ProfilerStep#"
      min_gap_ns, runtime_cutoff_ns, launch_delay_cutoff_ns   ints (ns)
      top                     rows of every "top" list (default 10)
      threads                 analysis threads (default 2)
      groups                  stream-concurrency groups: {"NAME": "REGEX"} or ["NAME=REGEX", ...]
                              (the CLI's --group)
    Raises TraceError (unreadable input: .path, .offset, .reason), OptionError (bad option),
    LibraryError (no libovscope.so).
    """
    import ctypes
    opts = analysis_options(align_clocks, comm_kernel, compute_kernel, memory_kernel, classes, iteration_marker,
                            min_gap_ns, runtime_cutoff_ns, launch_delay_cutoff_ns, top, threads, groups)
    arr, n = _lib.path_array(_paths(paths_or_dir))
    out = ctypes.c_void_p()
    _lib.check(_lib.lib().ovs_analyze(arr, n, _lib.options(opts), ctypes.byref(out)))
    return Report(out.value)


def replay(paths_or_dir, changes=(), *, contention=True, sm_count=None, strict=False, format="json", trace=None,
           html=None, **analysis):
    """Replays every iteration of the traces on their dependency graph and predicts it under
    `changes` (`overlapscope replay`, METRICS §11): with format="json" the overlapscope.replay/1
    document as a dict (docs/report-schema.md "Replay", "schema_version" 1.2; its "replay_error"
    comes first, and "job" holds the job's step with a prediction's change, the median of
    per-iteration changes, and the iterations with a late rank), else the "text" or "markdown"
    rendering.

      changes     what-ifs as the CLI's --change: a string or a list, e.g.
                  ["async:/AllGather/", "ce:/AllGather/"], "scale:comm=0.5", "nosync:/cudaStreamSynchronize/",
                  "prefetch:/AllGather/", "defer:/Consumer/"
      contention  also predict with the contention model (default True)
      sm_count    SMs per GPU for the SM-share model (default: from the GPU's name)
      strict      no fallbacks: what the dependency graph alone explains (`replay --strict`)
      trace       also write the predicted timeline beside the measured one to this path, Perfetto
                  (`replay --trace`: per rank a "<name> predicted" process and GPU groups)
      html        also write a self-contained HTML page of the result to this path (`replay --html`)
      analysis    analyze()'s options (align_clocks, comm_kernel, classes, iteration_marker, ...)
    Raises OptionError (a malformed change), TraceError, LibraryError.
    """
    import json as _json
    if format not in ("json", "text", "markdown"):
        raise OptionError(f"format {format!r}: expected 'json', 'text' or 'markdown'")
    if isinstance(changes, str):
        changes = [changes]
    opts = analysis_options(**analysis)
    rep = {"changes": list(changes), "contention": bool(contention)}
    if sm_count is not None:
        rep["sm_count"] = sm_count
    if strict:
        rep["strict"] = True
    if trace is not None:
        rep["trace"] = str(trace)
    if html is not None:
        rep["html"] = str(html)
    arr, n = _lib.path_array(_paths(paths_or_dir))
    text = _lib.call_str(_lib.lib().ovs_replay, arr, n, _lib.options(opts), _lib.options(rep), format.encode())
    return _json.loads(text) if format == "json" else text


def info(paths_or_dir, *, json=False, align_clocks=None):
    """What the traces hold (`overlapscope info`), without analyzing: text, or with json=True
    the overlapscope.info/1 document as a dict."""
    import json as _json
    arr, n = _lib.path_array(_paths(paths_or_dir))
    fmt = b"json" if json else b"text"
    text = _lib.call_str(_lib.lib().ovs_info, arr, n, _lib.options({"align_clocks": align_clocks}), fmt)
    return _json.loads(text) if json else text


def library_version():
    """(version string, ABI version, path) of the loaded libovscope.so."""
    lib = _lib.lib()
    return lib.ovs_version().decode(), lib.ovs_abi_version(), lib.path


def check_gates(*gates):
    """Raises OptionError when a gate ("METRIC OP NUMBER", strings or lists of them) does not
    parse or names an unknown metric; checks before anything is analyzed."""
    import json as _json
    from .report import _gate_list
    _lib.check(_lib.lib().ovs_check_gates(_json.dumps(_gate_list(gates)).encode()))
