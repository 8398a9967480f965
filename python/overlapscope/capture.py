"""In-process capture: overlapscope.profile() records this process's GPU work with CUPTI (the
C API's ovs_capture_*, over the engine's CaptureSession) and analyzes it when it stops.

    with overlapscope.profile(require=["overlap_ratio>=0.5"]) as p:
        for _ in range(5):
            step()
    print(p.report.summary_text())

Only in builds with CUDA (overlapscope.capture_available()); elsewhere start() raises
UnavailableError. One capture per process at a time, and not while torch.profiler (or another
CUPTI client) is recording: CUPTI serves one subscriber.
"""

import ctypes
import sys

from . import _lib, errors
from ._options import analysis_options
from .report import Report


def capture_available():
    """Whether the loaded libovscope.so can capture in-process (built with CUDA)."""
    return bool(_lib.lib().ovs_capture_available())


def _synchronize_torch():
    """Waits for torch's GPU work when torch is loaded and CUDA is initialized (activities still
    running when capture stops have no end and are counted as skipped)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return
    for d in range(torch.cuda.device_count()):
        torch.cuda.synchronize(d)


class Capture:
    """A capture: start() ... stop() -> Report, or a `with` block (the report is then .report).

    Capture options: spill_path (keep the raw capture there; default a temporary file, deleted),
    buffer_bytes, max_buffers, driver_api (record cu* calls, default True), nvtx (default True),
    rank, world_size (default: from RANK/WORLD_SIZE...). synchronize: wait for torch's CUDA work
    before stopping (default True). require: gates checked when the block ends (GateError).
    analysis: options of overlapscope.analyze() (e.g. comm_kernel=..., top=...).
    """

    def __init__(self, spill_path=None, buffer_bytes=None, max_buffers=None, driver_api=None, nvtx=None, rank=None,
                 world_size=None, synchronize=True, require=None, **analysis):
        self._capture_opts = {
            "spill_path": None if spill_path is None else str(spill_path), "buffer_bytes": buffer_bytes,
            "max_buffers": max_buffers, "driver_api": driver_api, "nvtx": nvtx, "rank": rank,
            "world_size": world_size
        }
        self._analysis_opts = analysis_options(**analysis)
        self._synchronize = synchronize
        self._require = [require] if isinstance(require, str) else list(require or [])
        self._h = ctypes.c_void_p()
        self.report = None

    def start(self):
        if self._h.value:
            raise errors.CaptureError("this capture is running already")
        out = ctypes.c_void_p()
        _lib.check(_lib.lib().ovs_capture_start(_lib.options(self._capture_opts), ctypes.byref(out)),
                   during_capture=True)
        self._h = out
        return self

    def stop(self):
        """Stops capturing and returns the Report of what was recorded."""
        if not self._h.value:
            raise errors.CaptureError("this capture is not running")
        if self._synchronize:
            _synchronize_torch()
        out = ctypes.c_void_p()
        try:
            _lib.check(_lib.lib().ovs_capture_stop(self._h, _lib.options(self._analysis_opts), ctypes.byref(out)),
                       during_capture=True)
        finally:
            _lib.lib().ovs_capture_free(self._h)
            self._h = ctypes.c_void_p()
        self.report = Report(out.value)
        return self.report

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:  # the block failed: stop, keep its report, let its error through
            try:
                self.stop()
            except errors.Error:
                pass
            return False
        self.stop()
        if self._require:
            self.report.require(self._require)
        return False

    def __del__(self):
        try:
            if self._h.value:
                _lib.lib().ovs_capture_free(self._h)
        except Exception:
            pass


def profile(**options):
    """A Capture to use as a context manager; see Capture for the options."""
    return Capture(**options)
