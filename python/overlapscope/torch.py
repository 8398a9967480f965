"""overlapscope.torch: analyze each torch.profiler cycle in the training process itself.

    import torch, overlapscope.torch
    with torch.profiler.profile(
            schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=2),
            on_trace_ready=overlapscope.torch.on_trace_ready(
                "prof/", require=["overlap_ratio>=0.6"], trace=True)) as prof:
        for batch in data:
            train_step(batch)
            prof.step()

At each profiling cycle the handler writes the Kineto trace as torch's own
tensorboard_trace_handler does (same directory layout and file name,
"<worker>.<time_ns>.pt.trace.json[.gz]", worker "<hostname>_<pid>" by default, so the files
still open in TensorBoard and HTA), analyzes it in-process, prints the one-screen summary, writes
"<same name>.pftrace" beside it with trace=True (or into the directory trace="DIR"), and checks the
gates. A failed gate raises GateError from prof.step() with on_fail="raise" (default: a job that
asked for a gate stops at the first cycle that breaks it), or logs a warning on the logger
"overlapscope" and goes on with on_fail="log". Either way handler.history records each cycle.

torch is not imported by this module; only the profiler object torch hands over is used (its
export_chrome_trace and step_num).
"""

import logging
import os
import socket
import sys
import time

from . import errors
from ._options import analysis_options

log = logging.getLogger("overlapscope")

_SUFFIXES = (".pt.trace.json.gz", ".pt.trace.json")


def _pftrace_path(trace_path, trace):
    base = os.path.basename(trace_path)
    for s in _SUFFIXES:
        if base.endswith(s):
            base = base[:-len(s)]
            break
    folder = os.path.dirname(trace_path) if trace is True else os.fspath(trace)
    return os.path.join(folder, base + ".pftrace")


class TraceHandler:
    """The callable on_trace_ready() returns. After each cycle: `report` (the last Report),
    `history` (one dict per cycle: step, trace, pftrace, passed, gate lines)."""

    def __init__(self, out_dir, require=(), trace=False, on_fail="raise", worker_name=None, use_gzip=False,
                 print_summary=True, file=None, **analysis):
        from . import check_gates
        if on_fail not in ("raise", "log"):
            raise errors.OptionError("on_fail=%r: expected \"raise\" or \"log\"" % (on_fail,))
        self.out_dir = os.fspath(out_dir)
        self.require = [require] if isinstance(require, str) else list(require)
        if self.require:
            check_gates(self.require)  # a typo fails now, not after the first profiling cycle
        self.trace, self.on_fail, self.worker_name = trace, on_fail, worker_name
        self.use_gzip, self.print_summary, self.file = use_gzip, print_summary, file
        analysis_options(**analysis)  # an unknown option is a TypeError now
        self.analysis = analysis
        self.report = None
        self.history = []

    def _export(self, prof):
        """Writes the Kineto trace as torch's tensorboard_trace_handler names it."""
        os.makedirs(self.out_dir, exist_ok=True)
        worker = self.worker_name or "%s_%d" % (socket.gethostname(), os.getpid())
        name = "%s.%d.pt.trace.json%s" % (worker, time.time_ns(), ".gz" if self.use_gzip else "")
        path = os.path.join(self.out_dir, name)
        prof.export_chrome_trace(path)
        return path

    def _say(self, text):
        out = self.file if self.file is not None else sys.stdout
        out.write(text)
        out.flush()

    def __call__(self, prof):
        from . import analyze
        path = self._export(prof)
        step = getattr(prof, "step_num", None)
        if self.report is not None:
            self.report.close()  # one cycle's trace model at a time
        report = self.report = analyze(path, **self.analysis)
        entry = {"step": step, "trace": path, "pftrace": None, "passed": True, "gates": []}
        if self.trace:
            entry["pftrace"] = _pftrace_path(path, self.trace)
            os.makedirs(os.path.dirname(entry["pftrace"]) or ".", exist_ok=True)
            report.export(entry["pftrace"])
        result = report.gates(self.require) if self.require else None
        if result is not None:
            entry["passed"], entry["gates"] = result.passed, [c.line for c in result.checks]
        self.history.append(entry)
        if self.print_summary:
            self._say(self._summary(entry, report))
        if result is not None and not result.passed:
            if self.on_fail == "raise":
                raise errors.GateError(result)
            log.warning("overlapscope: gate failed at step %s (%s):\n%s", step, path,
                        "\n".join(c.line for c in result.failures))

    @staticmethod
    def _summary(entry, report):
        head = "overlapscope: profiling cycle at step %s: %s\n" % (entry["step"], entry["trace"])
        tail = "".join("gate: %s\n" % line for line in entry["gates"])
        if entry["pftrace"]:
            tail += "wrote %s\n" % entry["pftrace"]
        return head + report.summary_text() + tail


def on_trace_ready(out_dir, require=(), trace=False, on_fail="raise", worker_name=None, use_gzip=False,
                   print_summary=True, file=None, **analysis):
    """A handler for torch.profiler.profile(on_trace_ready=...); see the module doc.

    out_dir, worker_name, use_gzip: as torch.profiler.tensorboard_trace_handler.
    require: gates ("overlap_ratio>=0.6", ...) checked on every rank of each cycle's trace.
    trace: True (a .pftrace beside each trace) or a directory for them; False: none.
    on_fail: "raise" (GateError) or "log" (a warning on logger "overlapscope").
    print_summary, file: print the one-screen summary to `file` (default sys.stdout).
    analysis: options of overlapscope.analyze() (comm_kernel=..., top=..., ...).
    """
    return TraceHandler(out_dir, require, trace, on_fail, worker_name, use_gzip, print_summary, file, **analysis)
