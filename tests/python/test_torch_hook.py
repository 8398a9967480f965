"""overlapscope.torch.on_trace_ready with a stand-in for torch.profiler.profile (torch is not on
the build machine): an object whose export_chrome_trace writes a real PyTorch trace of tests/data,
as torch's would, and whose step_num counts steps."""

import gzip
import io
import logging
import os
import re
import shutil
import socket

import pytest

import overlapscope
import overlapscope.torch as ovs_torch
from conftest import ROOT

REAL = ROOT / "tests/data/kineto/ag_overlap/rank1.json"  # rank 1: 31% of its communication hidden


class FakeProfiler:
    """What the handler uses of torch.profiler.profile: export_chrome_trace(path), step_num."""

    def __init__(self, source=REAL):
        self.source, self.step_num, self.exported = source, 0, []

    def export_chrome_trace(self, path):
        data = self.source.read_bytes()
        if path.endswith(".gz"):  # torch gzips when the name ends in .gz
            data = gzip.compress(data)
        with open(path, "wb") as f:
            f.write(data)
        self.exported.append(path)

    def cycle(self, handler, steps=3):
        self.step_num += steps
        handler(self)


def test_writes_the_trace_as_tensorboard_handler_names_it(tmp_path):
    out = io.StringIO()
    h = ovs_torch.on_trace_ready(tmp_path / "prof", file=out)
    prof = FakeProfiler()
    prof.cycle(h)
    (path,) = prof.exported
    assert os.path.dirname(path) == str(tmp_path / "prof")
    worker = "%s_%d" % (socket.gethostname(), os.getpid())
    assert re.fullmatch(re.escape(worker) + r"\.\d{19}\.pt\.trace\.json", os.path.basename(path))
    # The summary printed is the report's one screen: header and the rank's summary block.
    text = out.getvalue()
    assert text.startswith("overlapscope: profiling cycle at step 3: %s\n" % path)
    assert "== rank 1" in text and "overlap       31.1% of communication hidden" in text
    assert "launch delay" not in text  # tables are left out
    assert h.report.to_dict() == overlapscope.analyze(path).to_dict()
    assert h.history == [{"step": 3, "trace": path, "pftrace": None, "passed": True, "gates": []}]


def test_gzip_worker_name_and_pftrace(tmp_path):
    h = ovs_torch.on_trace_ready(tmp_path, worker_name="w0", use_gzip=True, trace=True, print_summary=False)
    prof = FakeProfiler()
    prof.cycle(h)
    prof.cycle(h)
    assert len(h.history) == 2 and h.history[0]["trace"] != h.history[1]["trace"]
    for entry in h.history:
        assert re.fullmatch(r"w0\.\d+\.pt\.trace\.json\.gz", os.path.basename(entry["trace"]))
        assert entry["pftrace"] == entry["trace"][:-len(".pt.trace.json.gz")] + ".pftrace"
        # The same bytes as exporting the trace's report with the analysis drawn in.
        again = tmp_path / "again.pftrace"
        overlapscope.analyze(entry["trace"]).export(again)
        assert open(entry["pftrace"], "rb").read() == again.read_bytes()


def test_pftrace_into_a_directory(tmp_path):
    h = ovs_torch.on_trace_ready(tmp_path / "json", trace=tmp_path / "perfetto", print_summary=False)
    FakeProfiler().cycle(h)
    (entry,) = h.history
    assert os.path.dirname(entry["pftrace"]) == str(tmp_path / "perfetto")
    assert os.path.getsize(entry["pftrace"]) > 0


def test_failed_gate_raises_from_the_step(tmp_path):
    out = io.StringIO()
    h = ovs_torch.on_trace_ready(tmp_path, require=["overlap_ratio>=0.6"], file=out)
    with pytest.raises(overlapscope.GateError) as e:
        FakeProfiler().cycle(h)
    (fail,) = e.value.failures
    assert (fail.label, fail.metric) == ("rank 1", "overlap_ratio")
    assert fail.value == pytest.approx(0.311, abs=0.001)
    assert h.history[0]["passed"] is False
    assert "gate: FAIL rank 1: overlap_ratio>=0.6 (value 0.31" in out.getvalue()


def test_failed_gate_logs_and_goes_on(tmp_path, caplog):
    h = ovs_torch.on_trace_ready(tmp_path, require="overlap_ratio>=0.6", on_fail="log", print_summary=False)
    prof = FakeProfiler()
    with caplog.at_level(logging.WARNING, logger="overlapscope"):
        prof.cycle(h)
        prof.cycle(h)
    assert [e["passed"] for e in h.history] == [False, False]
    warnings = [r for r in caplog.records if r.name == "overlapscope"]
    assert len(warnings) == 2 and "FAIL rank 1: overlap_ratio>=0.6" in warnings[0].getMessage()


def test_passing_gate_is_quiet(tmp_path, caplog):
    h = ovs_torch.on_trace_ready(tmp_path, require=["overlap_ratio>=0.3"], print_summary=False)
    FakeProfiler().cycle(h)
    assert h.history[0]["passed"] is True and h.history[0]["gates"][0].startswith("PASS rank 1")


def test_bad_settings_fail_before_profiling(tmp_path):
    with pytest.raises(overlapscope.OptionError, match="unknown metric"):
        ovs_torch.on_trace_ready(tmp_path, require=["overlap>=0.6"])
    with pytest.raises(overlapscope.OptionError, match="on_fail"):
        ovs_torch.on_trace_ready(tmp_path, on_fail="ignore")
    with pytest.raises(TypeError):
        ovs_torch.on_trace_ready(tmp_path, no_such_option=1)
    assert not any(tmp_path.iterdir())


def test_analysis_options_reach_the_report(tmp_path):
    h = ovs_torch.on_trace_ready(tmp_path, top=1, min_gap_ns=1000, print_summary=False)
    FakeProfiler().cycle(h)
    assert h.report.options.top_n == 1 and h.report.options.min_gap_ns == 1000


def test_unreadable_trace_is_a_trace_error(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_bytes(REAL.read_bytes()[:500])
    h = ovs_torch.on_trace_ready(tmp_path / "out", print_summary=False)
    with pytest.raises(overlapscope.TraceError) as e:
        FakeProfiler(broken).cycle(h)
    assert e.value.offset == 500
