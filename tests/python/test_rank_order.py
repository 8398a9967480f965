"""Ranks in rank order when only the traces' distributedInfo says the rank: four real ranks
copied under tensorboard_trace_handler-style names whose order is ranks 1, 3, 2, 0 come back as
ranks 0, 1, 2, 3 in the report and its DataFrames."""

import os
import shutil

import pytest

import overlapscope

SRC = "tests/data/torch_diag/w4_sync/fsdp2_straggler"
NAMES = {0: "job.93", 1: "job.17", 2: "job.55", 3: "job.40"}  # natural order: 17, 40, 55, 93


@pytest.fixture
def shuffled(in_root, tmp_path):
    for rank, name in NAMES.items():
        shutil.copy(os.path.join(SRC, f"rank{rank}.json.gz"), tmp_path / f"{name}.pt.trace.json.gz")
    return str(tmp_path)


def test_report_ranks_in_rank_order(shuffled):
    doc = overlapscope.analyze(shuffled).to_dict()
    assert [r["rank"] for r in doc["ranks"]] == [0, 1, 2, 3]
    assert [os.path.basename(r["source"]) for r in doc["ranks"]] == [
        f"{NAMES[r]}.pt.trace.json.gz" for r in range(4)]


def test_frames_rows_in_rank_order(shuffled):
    pytest.importorskip("pandas", reason="pandas is not installed: DataFrame test skipped")
    report = overlapscope.analyze(shuffled)
    assert list(report.summary_df()["rank"]) == [0, 1, 2, 3]
    ranks = list(report.iterations_df()["rank"])
    assert ranks == sorted(ranks) and set(ranks) == {0, 1, 2, 3}
