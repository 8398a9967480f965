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
gates. handler.history records each cycle.

A failed gate (or a trace that cannot be written or analyzed) with on_fail="raise" (default: a job
that asked for a gate stops at the first cycle that breaks it) raises GateError (or the error)
out of the profiler: from the cycle's stop() (the end of the `with` block) when that is where
torch called on_trace_ready, else from the next step() before torch does anything in it (or
from stop() after torch has finished it). It is not raised inside on_trace_ready called from
step(): torch goes on with its state machine after the callback (it prepares the next cycle),
and an exception there leaves the profiler half-switched (in a GPU check, a process that raised
there died of a segmentation fault afterwards). With on_fail="log" the failure is logged on the logger "overlapscope"
(a warning for a gate, an error otherwise) and training goes on.

In a distributed job (torch.distributed initialized with more than one rank; job="auto", the
default, or job=True), each cycle also makes one report of the whole job: every rank reduces its
own trace to a part (overlapscope.job.reduce_rank: a few KB plus about 100 bytes per collective),
the parts are gathered to the group's first rank with one torch.distributed.gather_object (gloo
and NCCL alike; NCCL needs torch.cuda.set_device, as every NCCL job does), which assembles them
(collectives matched across ranks, the straggler summary, the job overview with the ranks that
stand out) and prints the job overview; every other rank prints one line. The gates then apply to
the job: "overlap_ratio>=0.5" means no rank below 0.5, and collective_times_last or
collective_wait_ns, which only the job knows, can be gated. The verdict is sent back to every rank
(one broadcast_object_list of a few bytes), so that all ranks raise or log together: a rank that
raised alone would leave the others waiting in their next collective. handler.job is the last
JobReport (on the gathering rank; None elsewhere).

torch is not imported by this module; only the profiler object torch hands over is used (its
export_chrome_trace and step_num; step and stop are wrapped on that object to raise deferred
failures), and torch.distributed when the job is distributed.
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


def _inside(prof, method):
    """Whether this call runs inside prof.<method>() (the innermost of its step/stop frames)."""
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name in ("step", "stop") and f.f_locals.get("self") is prof:
            return f.f_code.co_name == method
        f = f.f_back
    return False


def _distributed(mode):
    """torch.distributed when this cycle makes a job report (initialized, more than one rank,
    mode "auto" or True), else None. torch is imported only if the program already did."""
    if mode is False:
        return None
    torch = sys.modules.get("torch")
    dist = getattr(torch, "distributed", None) if torch is not None else None
    try:
        if dist is None or not dist.is_available() or not dist.is_initialized() or dist.get_world_size() < 2:
            return None
    except Exception:  # a torch without a working distributed package
        return None
    return dist


class TraceHandler:
    """The callable on_trace_ready() returns. After each cycle: `report` (the last Report),
    `history` (one dict per cycle: step, trace, pftrace, passed, gate lines)."""

    def __init__(self, out_dir, require=(), trace=False, on_fail="raise", worker_name=None, use_gzip=False,
                 print_summary=True, file=None, job="auto", group=None, **analysis):
        from . import check_gates
        if on_fail not in ("raise", "log"):
            raise errors.OptionError("on_fail=%r: expected \"raise\" or \"log\"" % (on_fail,))
        if job not in ("auto", True, False):
            raise errors.OptionError("job=%r: expected \"auto\", True or False" % (job,))
        self.job_mode, self.group, self.job = job, group, None
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
        self._pending = None  # a failure to raise at the profiler's next step() or stop()

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
        deferred = self._arm(prof)
        try:
            failure = self._cycle(prof)
        except Exception as e:  # the trace could not be written or analyzed
            failure = e
        if failure is None:
            return
        if self.on_fail == "log":
            self._log(failure, prof)
        elif deferred and not _inside(prof, "stop"):
            self._pending = failure
        else:  # in stop() torch calls on_trace_ready last; or called directly: nothing to protect
            self._pending = None  # this failure is the newer news
            raise failure

    def _cycle(self, prof):
        """Writes, analyzes, exports and gates one cycle; returns a GateError for a failed gate."""
        from . import analyze
        path = self._export(prof)
        if self.report is not None:
            self.report.close()  # one cycle's trace model at a time
        report = self.report = analyze(path, **self.analysis)
        entry = {"step": getattr(prof, "step_num", None), "trace": path, "pftrace": None, "passed": True, "gates": []}
        self.history.append(entry)
        if self.trace:
            entry["pftrace"] = _pftrace_path(path, self.trace)
            os.makedirs(os.path.dirname(entry["pftrace"]) or ".", exist_ok=True)
            report.export(entry["pftrace"])
        dist = _distributed(self.job_mode)
        if dist is not None:
            from ._job_cycle import job_cycle
            return job_cycle(self, dist, path, report, entry)
        result = report.gates(self.require) if self.require else None
        if result is not None:
            entry["passed"], entry["gates"] = result.passed, [c.line for c in result.checks]
        if self.print_summary:
            self._say(self._summary(entry, report))
        return errors.GateError(result) if result is not None and not result.passed else None

    def _log(self, failure, prof):
        step = getattr(prof, "step_num", None)
        if isinstance(failure, errors.GateError):
            log.warning("overlapscope: gate failed at step %s (%s):\n%s", step, self.history[-1]["trace"],
                        "\n".join(c.line for c in failure.failures))
        else:
            log.error("overlapscope: profiling cycle at step %s not analyzed: %s", step, failure)

    def _arm(self, prof):
        """Wraps prof.step and prof.stop (once) so that a pending failure is raised where torch's
        profiler is in a consistent state; False when prof has no such methods to wrap."""
        if getattr(prof, "_overlapscope_handler", None) is self:
            return True
        step, stop = getattr(prof, "step", None), getattr(prof, "stop", None)
        if not callable(step) or not callable(stop):
            return False

        def step_after_pending(*args, **kwargs):
            self._raise_pending()  # before torch's step: the next cycle was prepared
            return step(*args, **kwargs)

        def stop_then_pending(*args, **kwargs):
            out = stop(*args, **kwargs)  # the last cycle's on_trace_ready may run in here
            self._raise_pending()
            return out

        try:
            prof.step, prof.stop, prof._overlapscope_handler = step_after_pending, stop_then_pending, self
        except AttributeError:
            return False
        return True

    def _raise_pending(self):
        failure, self._pending = self._pending, None
        if failure is not None:
            raise failure

    @staticmethod
    def _summary(entry, report):
        head = "overlapscope: profiling cycle at step %s: %s\n" % (entry["step"], entry["trace"])
        tail = "".join("gate: %s\n" % line for line in entry["gates"])
        if entry["pftrace"]:
            tail += "wrote %s\n" % entry["pftrace"]
        return head + report.summary_text() + tail


def on_trace_ready(out_dir, require=(), trace=False, on_fail="raise", worker_name=None, use_gzip=False,
                   print_summary=True, file=None, job="auto", group=None, **analysis):
    """A handler for torch.profiler.profile(on_trace_ready=...); see the module doc.

    out_dir, worker_name, use_gzip: as torch.profiler.tensorboard_trace_handler.
    require: gates ("overlap_ratio>=0.6", ...) checked on every rank of each cycle's trace.
    trace: True (a .pftrace beside each trace) or a directory for them; False: none.
    on_fail: "raise" (GateError, from the profiler's next step() or its stop()) or "log" (logger
      "overlapscope"); see the module doc.
    print_summary, file: print the one-screen summary to `file` (default sys.stdout).
    job: "auto" (default: a job report when torch.distributed is initialized with >= 2 ranks), True
      (the same), False (each rank on its own); group: the process group (default the world).
    analysis: options of overlapscope.analyze() (comm_kernel=..., top=..., ...).
    """
    return TraceHandler(out_dir, require, trace, on_fail, worker_name, use_gzip, print_summary, file, job, group,
                        **analysis)
