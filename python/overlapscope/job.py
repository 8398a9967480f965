"""overlapscope.job: one report for a whole training job, assembled inside the job.

Each process reduces its own rank's trace to a part (reduce_rank: its report tables, summary and a
compact record of its collectives; tens of KB plus about 100 bytes per collective), one process
gathers the parts (over torch.distributed in overlapscope.torch, or any other way) and assembles
the job (JobReport.assemble): collectives matched across ranks, the straggler summary, the job
overview with the ranks that stand out, and gates over every rank. The same report as
`overlapscope analyze --per-rank` over the ranks' files in that order (the critical path is not
computed: it needs every rank's events at once).

    part = overlapscope.job.reduce_rank("prof/rank3.json")          # bytes, on every rank
    job = overlapscope.job.JobReport.assemble(names, parts)          # on the gathering rank
    print(job.overview())
    job.gates(["overlap_ratio>=0.5"])                               # every rank of the job
"""

import ctypes
import json as _json

from . import _lib, errors
from ._options import analysis_options
from .report import GateResult, _gate_list


def _need(name):
    fn = getattr(_lib.lib(), name, None)
    if fn is None or fn.argtypes is None:
        raise errors.LibraryError("%s has no %s (rebuild the library)" % (_lib.path(), name))
    return fn


def reduce_rank(path, **analysis):
    """The part of one rank's trace (bytes) for JobReport.assemble; options as analyze()."""
    opts = _lib.options(analysis_options(**analysis))
    out, n = ctypes.c_void_p(), ctypes.c_size_t()
    _lib.check(_need("ovs_reduce_rank")(_lib.encode(path), opts, ctypes.byref(out), ctypes.byref(n)))
    try:
        return ctypes.string_at(out.value, n.value)
    finally:
        _lib.lib().ovs_free(out.value)


class JobReport:
    """A job's report assembled from its ranks' parts. render(fmt), text(), markdown(),
    to_dict(), overview() (the text up to the first rank's detail block), gates(...)."""

    def __init__(self, handle):
        self._h = handle

    @classmethod
    def assemble(cls, names, parts, **analysis):
        """names[i]: rank i's trace path (for the report; need not exist here); parts[i] its
        reduce_rank() bytes, in the job's rank order."""
        names, parts = list(names), [bytes(p) for p in parts]
        if len(names) != len(parts) or not parts:
            raise errors.OptionError("one name per part, at least one part")
        enc = [_lib.encode(n) for n in names]
        name_arr = (ctypes.c_char_p * len(enc))(*enc)
        part_arr = (ctypes.c_char_p * len(parts))(*parts)
        lens = (ctypes.c_size_t * len(parts))(*[len(p) for p in parts])
        out = ctypes.c_void_p()
        _lib.check(_need("ovs_job_assemble")(name_arr, part_arr, lens, len(parts),
                                             _lib.options(analysis_options(**analysis)), ctypes.byref(out)))
        return cls(out.value)

    def close(self):
        if self._h:
            _lib.lib().ovs_job_free(self._h)
            self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def render(self, fmt="text", collectives=None, ranks=None):
        if not self._h:
            raise errors.Error("the job report was closed")
        opts = _lib.options({"collectives": collectives, "ranks": ranks})
        return _lib.call_str(_need("ovs_job_render"), self._h, fmt.encode(), opts)

    def text(self, ranks=None):
        return self.render("text", ranks=ranks)

    def markdown(self, ranks=None):
        return self.render("markdown", ranks=ranks)

    def to_dict(self):
        return _json.loads(self.render("json"))

    def overview(self):
        """The text report's warnings, head and job overview (what comes before the first
        rank's detail block or the next section)."""
        text = self.render("text", ranks=0)
        start = text.find("\n== job overview")
        if start < 0:
            return text
        ends = [c for c in (text.find("\n== ", start + 1), text.find("\n(detail blocks", start)) if c >= 0]
        return text[:min(ends) + 1] if ends else text

    def gates(self, *gates):
        text = _json.dumps(_gate_list(gates)).encode()
        return GateResult(_json.loads(_lib.call_str(_need("ovs_job_gates"), self._h, text)))
