"""The Python API gives what the CLI gives, byte for byte, on every trace of tests/data and
samples/: the report (JSON == Report.to_dict(), text, Markdown), info, and the exported traces."""

import json

import pytest

import overlapscope
from conftest import golden_inputs

TRACES = golden_inputs()


def test_every_golden_input_is_covered():
    # 12 inputs in inputs.txt plus the rank files inside the Kineto directories.
    assert len(TRACES) > 12
    assert "samples/pytorch_ag_overlap" in TRACES
    assert "tests/data/kineto/ag_overlap/rank0.json" in TRACES


@pytest.mark.parametrize("trace", TRACES)
def test_report_is_the_cli_report(trace, cli, in_root):
    r = overlapscope.analyze(trace)
    want = cli("analyze", trace, "--json")
    assert want.returncode == 0, want.stderr
    assert r.json().encode() == want.stdout
    assert r.to_dict() == json.loads(want.stdout)
    assert r.text().encode() == cli("analyze", trace).stdout
    assert r.markdown().encode() == cli("analyze", trace, "--markdown").stdout
    assert r.explain_classes().encode() == cli("analyze", trace, "--explain-classes").stdout


@pytest.mark.parametrize("trace", TRACES)
def test_info_is_the_cli_info(trace, cli, in_root):
    want = cli("info", trace, "--json").stdout
    assert overlapscope.info(trace, json=True) == json.loads(want)
    assert overlapscope.info(trace).encode() == cli("info", trace).stdout
    assert overlapscope.analyze(trace).info(json=True) == json.loads(want)


@pytest.mark.parametrize("trace", TRACES)
def test_exports_are_the_cli_exports(trace, cli, in_root, tmp_path):
    r = overlapscope.analyze(trace)
    (tmp_path / "py").mkdir()
    (tmp_path / "cli").mkdir()
    assert cli("analyze", trace, "--trace", str(tmp_path / "cli/analyzed.pftrace")).returncode == 0
    assert cli("export", trace, "-o", str(tmp_path / "cli/plain.pftrace")).returncode == 0
    assert cli("export", trace, "-o", str(tmp_path / "cli/chrome.json")).returncode == 0
    drawn = r.export(tmp_path / "py/analyzed.pftrace")
    assert drawn["format"] == "perfetto" and drawn["analysis"] is True
    assert drawn["bytes"] == (tmp_path / "py/analyzed.pftrace").stat().st_size
    r.export(str(tmp_path / "py/plain.pftrace"), analysis=False)
    chrome = r.export(tmp_path / "py/chrome.json")
    assert chrome["format"] == "chrome" and len(chrome["files"]) == len(r.ranks)
    py = {p.name: p.read_bytes() for p in (tmp_path / "py").iterdir()}
    want = {p.name: p.read_bytes() for p in (tmp_path / "cli").iterdir()}
    assert sorted(py) == sorted(want)
    for name in want:
        assert py[name] == want[name], name


def test_options_are_the_cli_flags(cli, in_root, tmp_path):
    rules = tmp_path / "rules.txt"
    rules.write_text("memory contains Memset\n")
    trace = "tests/data/kineto/ag_overlap"
    args = ["--comm-kernel", "AllGather", "--compute-kernel", "nvjet", "--classes", str(rules), "--top", "2",
            "--min-gap", "1us", "--runtime-cutoff", "20us", "--launch-delay-cutoff", "50us", "--align-clocks", "on",
            "--iteration-marker", "ProfilerStep#"]
    want = cli("analyze", trace, "--json", *args)
    assert want.returncode == 0, want.stderr
    r = overlapscope.analyze(trace, comm_kernel="AllGather", compute_kernel=["nvjet"], classes=rules, top=2,
                             min_gap_ns=1000, runtime_cutoff_ns=20000, launch_delay_cutoff_ns=50000, align_clocks="on",
                             iteration_marker="ProfilerStep#")
    assert r.json().encode() == want.stdout
    # The options changed the report (else this test would prove nothing about them).
    assert r.to_dict() != overlapscope.analyze(trace).to_dict()
    assert r.options.top_n == 2 and r.options.min_gap_ns == 1000


def test_groups_are_the_cli_group_flag(cli, in_root):
    trace = "tests/data/kineto/ag_overlap"
    want = cli("analyze", trace, "--json", "--group", "gemm=nvjet", "--group", "comm=AllGather")
    assert want.returncode == 0, want.stderr
    for groups in ({"gemm": "nvjet", "comm": "AllGather"}, ["gemm=nvjet", "comm=AllGather"]):
        r = overlapscope.analyze(trace, groups=groups)
        assert r.json().encode() == want.stdout
    names = [g["name"] for g in r.to_dict()["stream_concurrency"]["groups"]]
    assert names == ["gemm", "comm"]
    with pytest.raises(overlapscope.OptionError):
        overlapscope.analyze(trace, groups=["no-equals-sign"])


def test_collectives_option_of_text_is_the_cli_flag(cli, in_root):
    trace = "samples/pytorch_ag_overlap"
    r = overlapscope.analyze(trace)
    for n in ("0", "1", "all"):
        want = cli("analyze", trace, "--collectives", n).stdout
        assert r.text(collectives=n if n == "all" else int(n)).encode() == want
    assert r.text(collectives=0) != r.text(collectives="all")
