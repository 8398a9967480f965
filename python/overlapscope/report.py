"""Report: one analysis of one or more traces (a handle on the C library's report).

    r = overlapscope.analyze("traces/")
    r.ranks[0].summary.overlap_ratio     # attribute access to the JSON report (the names of
                                         # the engine's typed report::Report; .cls for "class")
    r.to_dict()                          # the `overlapscope analyze --json` document
    r.text(), r.markdown(), r.summary_text()
    r.require("overlap_ratio>=0.6")      # GateError naming rank, metric and value
    r.export("analyzed.pftrace")
    r.summary_df(), r.kernels_df()       # pandas, when installed
"""

import ctypes
import json as _json
import threading

from . import _lib, errors, frames
from .node import wrap


class GateCheck:
    """One gate on one rank: gate text, metric, rank label and number (None for a process
    without a rank), the rank's value (None when absent there), whether it passed, and the
    line the CLI prints for it."""

    __slots__ = ("gate", "metric", "label", "rank", "value", "passed", "line")

    def __init__(self, d):
        for k in self.__slots__:
            setattr(self, k, d[k])

    def __repr__(self):
        return "GateCheck(%r)" % self.line


class GateResult:
    """All checks of Report.gates(): `passed` when every check passed."""

    def __init__(self, d):
        self.passed = d["passed"]
        self.checks = [GateCheck(c) for c in d["checks"]]

    @property
    def failures(self):
        return [c for c in self.checks if not c.passed]

    def __bool__(self):
        return self.passed

    def __str__(self):
        return "\n".join(c.line for c in self.checks)

    def __repr__(self):
        return "GateResult(passed=%r, %d checks)" % (self.passed, len(self.checks))


def _gate_list(gates):
    out = []
    for g in gates:
        out.extend([g] if isinstance(g, str) else list(g))
    return out


class Report:
    """See the module doc. Made by overlapscope.analyze() or overlapscope.profile(); holds the
    loaded traces until it is closed (or garbage-collected)."""

    def __init__(self, handle):
        self._h = ctypes.c_void_p(handle)
        self._lock = threading.Lock()
        self._json_text = None
        self._doc = None

    def close(self):
        """Frees the library's report now (later calls raise Error)."""
        with self._lock:
            if self._h.value:
                _lib.lib().ovs_report_free(self._h)
                self._h = ctypes.c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._h.value:
            raise errors.Error("this report was closed")
        return self._h

    def _render(self, fmt, collectives=None):
        opts = _lib.options({"collectives": collectives})
        return _lib.call_str(_lib.lib().ovs_report_render, self._handle(), fmt.encode(), opts)

    # The document -----------------------------------------------------------------------------

    def json(self):
        """The JSON report as text, byte for byte `overlapscope analyze --json`."""
        with self._lock:
            if self._json_text is None:
                self._json_text = self._render("json")
            return self._json_text

    def to_dict(self):
        """The JSON report (schema overlapscope.report/1) as a new dict."""
        return _json.loads(self.json())

    def _document(self):
        if self._doc is None:
            self._doc = self.to_dict()
        return self._doc

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        doc = self._document()
        if name not in doc:
            raise AttributeError("Report has no field %r; fields: %s" % (name, ", ".join(doc)))
        return wrap(doc[name])

    def __getitem__(self, key):
        return wrap(self._document()[key])

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._document()))

    # Renderings -------------------------------------------------------------------------------

    def text(self, collectives=20):
        """The text report (as `overlapscope analyze` prints it). `collectives`: matched
        collective instances listed (an int, or "all")."""
        return self._render("text", collectives)

    def markdown(self, collectives=20):
        """The Markdown report (`overlapscope analyze --markdown`)."""
        return self._render("markdown", collectives)

    def explain_classes(self):
        """Which classification rule matched each GPU activity name (`--explain-classes`)."""
        return self._render("explain-classes")

    def summary_text(self):
        """One screen: the text report's header, each rank's summary block (the lines up to its
        first table) and the cross-rank summary; the tables are left out."""
        wanted = ("== job overview", "== rank", "== pid", "== collectives across ranks")
        out, keep, block, in_section = [], True, True, False
        for line in self.text(collectives=0).splitlines():
            if line.startswith("== "):
                keep, block, in_section = line.startswith(wanted), True, True
            if keep and block:
                out.append(line)
            if in_section and not line.strip():
                block = False  # a section's first block ends at its first blank line
        while out and not out[-1].strip():
            out.pop()
        return "\n".join(out) + "\n"

    def info(self, json=False):
        """What the traces hold (`overlapscope info`): text, or the JSON document as a dict."""
        fmt = b"json" if json else b"text"
        text = _lib.call_str(_lib.lib().ovs_report_info, self._handle(), fmt)
        return _json.loads(text) if json else text

    def _repr_markdown_(self):
        return self.markdown()

    def __repr__(self):
        if not self._h.value:
            return "<overlapscope.Report (closed)>"
        doc = self._document()
        ranks = ", ".join(
            "%s: overlap %s" % (r["label"], "n/a" if r["summary"].get("overlap_ratio") is None else
                                "%.1f%%" % (100 * r["summary"]["overlap_ratio"])) for r in doc["ranks"])
        return "<overlapscope.Report of %s: %s>" % (", ".join(doc["inputs"]), ranks)

    # Gates and export -------------------------------------------------------------------------

    def gates(self, *gates):
        """Checks gates like "overlap_ratio>=0.6" (strings, or lists of them) on every rank and
        returns a GateResult (never raises for a failed gate; OptionError for a bad one)."""
        text = _json.dumps(_gate_list(gates)).encode()
        return GateResult(_json.loads(_lib.call_str(_lib.lib().ovs_report_gates, self._handle(), text)))

    def require(self, *gates):
        """Like gates(), but raises GateError naming each failed rank, metric and value."""
        result = self.gates(*gates)
        if not result.passed:
            raise errors.GateError(result)
        return result

    def export(self, path, analysis=True):
        """Writes the trace: Perfetto (.pftrace; with the analysis drawn in unless analysis=False)
        or Kineto-compatible Chrome JSON (.json / .json.gz, one file per rank). Returns what was
        written ({"format", "files", counts})."""
        opts = _lib.options({"analysis": bool(analysis)})
        text = _lib.call_str(_lib.lib().ovs_report_export, self._handle(), _lib.encode(path), opts)
        return _json.loads(text)

    # DataFrames (pandas) ----------------------------------------------------------------------

    def summary_df(self):
        """One row per rank: label, rank, pid, host, source and every summary metric."""
        return frames.summary(self._document())

    def kernels_df(self):
        """The top GPU activities by class (rows: the report's top list, `top` per class)."""
        return frames.kernels(self._document())

    def iterations_df(self):
        """One row per rank, GPU and iteration: overlap metrics of each iteration."""
        return frames.iterations(self._document())

    def collectives_df(self):
        """One row per matched collective instance and rank (multi-rank traces)."""
        return frames.collectives(self._document())
