"""The all-reduce samples (samples/all-reduce-<impl>/, real captures of `overlapscope run
all-reduce` on 4 x H100, docs/RESULTS.md): for every implementation, its kernels are classified as
communication, and every all-reduce is matched across the 4 ranks with its size. Reads the reports
the capture wrote; no GPU needed."""

import json

import pytest

from conftest import ROOT

SIZES = {524288 << i for i in range(8)}  # 0.5 MiB .. 64 MiB, as captured
IMPLS = {
    # implementation: (communicator prefix, a substring of its kernel's name)
    "nccl": ("nccl:", "ncclDevKernel_AllReduce"),
    "nccl-symmetric": ("nccl:", "ncclSymkDevKernel_AllReduce"),
    "one-shot": ("ovs:", "ovs_allreduce_one_shot"),
    "two-shot": ("ovs:", "ovs_allreduce_two_shot"),
    "one-shot-push": ("ovs:", "ovs_allreduce_one_shot_push"),
}


def report(impl):
    path = ROOT / "samples" / f"all-reduce-{impl}" / "report.json"
    assert path.exists(), f"{path} missing"
    return json.loads(path.read_text())


@pytest.mark.parametrize("impl", sorted(IMPLS))
def test_kernels_are_communication(impl):
    r = report(impl)
    kernel = IMPLS[impl][1]
    rows = [k for k in r["top_kernels"] if kernel in k["name"]]
    assert rows, f"no {kernel} kernel in the capture"
    assert all(k["class"] == "comm" for k in rows)
    # 5 captured iterations + 1 warm-up, 8 sizes, 4 GPUs.
    assert sum(k["count"] for k in rows) == 6 * 8 * 4
    assert (ROOT / "samples" / f"all-reduce-{impl}" / "trace.pftrace").stat().st_size > 0


@pytest.mark.parametrize("impl", sorted(IMPLS))
def test_every_all_reduce_matched_across_ranks(impl):
    x = report(impl)["collectives_across_ranks"]
    prefix = IMPLS[impl][0]
    assert x["unmatched"] == 0
    assert len(x["participants"]) == 4
    assert x["matched_instances"] == 6 * 8
    assert len(x["instances"]) == x["matched_instances"]
    sizes = set()
    for inst in x["instances"]:
        assert inst["op"] == "AllReduce"
        assert inst["communicator"].startswith(prefix)
        assert inst["nranks"] == 4
        assert sorted(rk["rank"] for rk in inst["ranks"]) == [0, 1, 2, 3]
        sizes.add(inst["bytes"])
    assert sizes == SIZES
