"""overlapscope.job: a job's report assembled from its ranks' parts (what overlapscope.torch does
over torch.distributed) is the report of `overlapscope analyze --per-rank` over the same files;
and, where torch with gloo is installed, the torch hook's job mode under torchrun on the CPU
(tools/torch_job_check.py; skipped visibly without torch)."""

import os
import subprocess
import sys

import pytest

import overlapscope
import overlapscope.job as job
from conftest import ROOT

RANKS = [str(ROOT / ("tests/data/kineto/ag_overlap/rank%d.json" % r)) for r in (0, 1)]


def test_assembled_parts_are_the_per_rank_report(cli):
    parts = [job.reduce_rank(p) for p in RANKS]
    assert all(isinstance(p, bytes) and len(p) > 0 for p in parts)
    j = job.JobReport.assemble(RANKS, parts)
    want = cli("analyze", *RANKS, "--per-rank", "--json").stdout.decode()
    assert j.render("json") == want
    assert j.text() == cli("analyze", *RANKS, "--per-rank").stdout.decode()
    assert "== job overview: 2 ranks ==" in j.overview()
    assert "\n== rank" not in j.overview()


def test_job_gates_check_every_rank():
    j = job.JobReport.assemble(RANKS, [job.reduce_rank(p) for p in RANKS])
    result = j.gates("overlap_ratio>=0.5")
    assert [c.rank for c in result.checks] == [0, 1]
    # rank 1 hides 31% of its communication (tests/data/kineto/ag_overlap/timings.json)
    assert not result.passed and [c.passed for c in result.checks] == [True, False]


def test_bad_parts_are_an_error():
    with pytest.raises(overlapscope.Error):
        job.JobReport.assemble(RANKS, [b"not a part", b"x"])
    with pytest.raises(overlapscope.Error):
        job.JobReport.assemble(RANKS, [job.reduce_rank(RANKS[0])])  # one name per part
    with pytest.raises(overlapscope.TraceError):
        job.reduce_rank(str(ROOT / "tests/data/no_such_trace.json"))


def test_torch_job_mode_under_torchrun_gloo(tmp_path):
    try:
        import torch  # noqa: F401
        import torch.distributed as dist
    except ImportError:
        pytest.skip("torch is not installed (apt-get install python3-torch): the job mode is not run here")
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("this torch has no gloo backend")
    # Started as torchrun would (its env:// variables): Debian's torch 1.13 torchrun fails under
    # Python 3.11 before it starts anything.
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    procs = []
    for rank in range(3):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), LOCAL_RANK=str(rank),
                   WORLD_SIZE="3")
        env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(overlapscope.__file__)),
                                             env.get("PYTHONPATH", "")])
        cmd = [sys.executable, str(ROOT / "tools/torch_job_check.py"), "--backend", "gloo", "--out", str(tmp_path)]
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=600) for p in procs]
    out0 = outs[0][0]
    assert [p.returncode for p in procs] == [0, 0, 0] and "PASS" in out0, \
        "\n".join(o[0][-2000:] + o[1][-2000:] for o in outs)
    assert "== job overview: 3 ranks ==" in out0
