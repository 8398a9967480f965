"""overlapscope.torch.on_trace_ready with a stand-in for torch.profiler.profile (torch is not on
the build machine): an object whose export_chrome_trace writes a real PyTorch trace of tests/data,
as torch's would, and whose step_num counts steps."""

import gzip
import io
import logging
import os
import re
import socket

import pytest

import overlapscope
import overlapscope.torch as ovs_torch
from conftest import ROOT

REAL = ROOT / "tests/data/kineto/ag_overlap/rank1.json"  # rank 1: 31% of its communication hidden


class FakeProfiler:
    """What the handler uses of torch.profiler.profile, with its state machine: a cycle is
    `active` steps; when one ends, step() runs stop_trace, on_trace_ready, prepare_trace in this
    order (torch's action list for RECORD_AND_SAVE -> next cycle), and stop() ends the last cycle
    (stop_trace, then on_trace_ready when steps were recorded since the last one). export_chrome_trace writes a real PyTorch trace, gzipped when
    the name ends in .gz, as torch's does."""

    def __init__(self, handler, source=REAL, active=3):
        self.on_trace_ready, self.source, self.active = handler, source, active
        self.step_num, self.exported, self.prepared, self.stopped = 0, [], 0, False

    def export_chrome_trace(self, path):
        data = self.source.read_bytes()
        if path.endswith(".gz"):
            data = gzip.compress(data)
        with open(path, "wb") as f:
            f.write(data)
        self.exported.append(path)

    def step(self):
        self.step_num += 1
        if self.step_num % self.active == 0:
            self.on_trace_ready(self)
            self.prepared += 1  # torch's prepare_trace: skipped if on_trace_ready raised

    def stop(self):
        self.stopped = True  # torch's stop_trace; on_trace_ready is the last thing stop() does
        if self.step_num % self.active != 0:  # steps recorded since the last cycle
            self.on_trace_ready(self)

    def cycle(self):
        for _ in range(self.active):
            self.step()


def test_writes_the_trace_as_tensorboard_handler_names_it(tmp_path):
    out = io.StringIO()
    h = ovs_torch.on_trace_ready(tmp_path / "prof", file=out)
    prof = FakeProfiler(h)
    prof.cycle()
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
    prof = FakeProfiler(h)
    prof.cycle()
    prof.cycle()
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
    FakeProfiler(h).cycle()
    (entry,) = h.history
    assert os.path.dirname(entry["pftrace"]) == str(tmp_path / "perfetto")
    assert os.path.getsize(entry["pftrace"]) > 0


def test_failed_gate_raises_from_the_next_step_not_inside_the_callback(tmp_path):
    out = io.StringIO()
    h = ovs_torch.on_trace_ready(tmp_path, require=["overlap_ratio>=0.6"], file=out)
    prof = FakeProfiler(h)
    prof.cycle()  # the callback returns: torch goes on to prepare the next cycle
    assert prof.prepared == 1 and h.history[0]["passed"] is False
    with pytest.raises(overlapscope.GateError) as e:
        prof.step()
    assert prof.step_num == 3  # raised before the profiler's step ran
    (fail,) = e.value.failures
    assert (fail.label, fail.metric) == ("rank 1", "overlap_ratio")
    assert fail.value == pytest.approx(0.311, abs=0.001)
    assert "gate: FAIL rank 1: overlap_ratio>=0.6 (value 0.31" in out.getvalue()
    prof.step()  # raised once
    assert prof.step_num == 4


def test_failed_gate_of_the_last_cycle_raises_from_stop(tmp_path):
    h = ovs_torch.on_trace_ready(tmp_path, require=["overlap_ratio>=0.6"], print_summary=False)
    prof = FakeProfiler(h)
    prof.step()
    with pytest.raises(overlapscope.GateError):
        prof.stop()
    assert prof.stopped  # raised from on_trace_ready, the last thing torch's stop() does


def test_failed_gate_pending_at_the_end_raises_from_stop(tmp_path):
    h = ovs_torch.on_trace_ready(tmp_path, require=["overlap_ratio>=0.6"], print_summary=False)
    prof = FakeProfiler(h)
    prof.cycle()
    with pytest.raises(overlapscope.GateError):
        prof.stop()  # no step() came after the failed cycle
    assert prof.stopped and len(h.history) == 1


def test_called_directly_it_raises_at_once(tmp_path):
    class Minimal:  # no step/stop: nothing to protect, nothing to defer to
        def export_chrome_trace(self, path):
            FakeProfiler(None).export_chrome_trace(path)

    h = ovs_torch.on_trace_ready(tmp_path, require=["overlap_ratio>=0.6"], print_summary=False)
    with pytest.raises(overlapscope.GateError):
        h(Minimal())


def test_failed_gate_logs_and_goes_on(tmp_path, caplog):
    h = ovs_torch.on_trace_ready(tmp_path, require="overlap_ratio>=0.6", on_fail="log", print_summary=False)
    prof = FakeProfiler(h)
    with caplog.at_level(logging.WARNING, logger="overlapscope"):
        for _ in range(7):
            prof.step()
        prof.stop()
    assert [e["passed"] for e in h.history] == [False, False, False]
    warnings = [r for r in caplog.records if r.name == "overlapscope"]
    assert len(warnings) == 3 and "FAIL rank 1: overlap_ratio>=0.6" in warnings[0].getMessage()
    assert all(r.levelno == logging.WARNING for r in warnings)


def test_passing_gate_is_quiet(tmp_path, caplog):
    h = ovs_torch.on_trace_ready(tmp_path, require=["overlap_ratio>=0.3"], print_summary=False)
    FakeProfiler(h).cycle()
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
    FakeProfiler(h).cycle()
    assert h.report.options.top_n == 1 and h.report.options.min_gap_ns == 1000


def test_unreadable_trace_is_a_trace_error_at_the_next_step(tmp_path, caplog):
    broken = tmp_path / "broken.json"
    broken.write_bytes(REAL.read_bytes()[:500])
    h = ovs_torch.on_trace_ready(tmp_path / "out", print_summary=False)
    prof = FakeProfiler(h, broken)
    prof.cycle()
    assert prof.prepared == 1
    with pytest.raises(overlapscope.TraceError) as e:
        prof.step()
    assert e.value.offset == 500
    logged = ovs_torch.on_trace_ready(tmp_path / "out2", print_summary=False, on_fail="log")
    with caplog.at_level(logging.ERROR, logger="overlapscope"):
        FakeProfiler(logged, broken).cycle()
    assert any("not analyzed" in r.getMessage() and "offset 500" in r.getMessage() for r in caplog.records)
