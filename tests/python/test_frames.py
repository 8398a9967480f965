"""pandas DataFrames of a report: each row and value as in the JSON report. Skipped, visibly,
where pandas is not installed (ctest reports the test as skipped)."""

import pytest

import overlapscope

pd = pytest.importorskip("pandas", reason="pandas is not installed: DataFrame tests skipped")

TRACE = "samples/pytorch_ag_overlap"


@pytest.fixture
def report(in_root):
    return overlapscope.analyze(TRACE)


def test_summary_df_has_one_row_per_rank_with_every_metric(report):
    df = report.summary_df()
    doc = report.to_dict()
    assert list(df["label"]) == [r["label"] for r in doc["ranks"]]
    assert list(df.columns[:5]) == ["label", "rank", "pid", "host", "source"]
    for i, r in enumerate(doc["ranks"]):
        for metric, value in r["summary"].items():
            got = df.iloc[i][metric]
            assert (pd.isna(got) and value is None) or got == value, metric
    assert df.set_index("rank").loc[1, "overlap_ratio"] == report.ranks[1].summary.overlap_ratio


def test_kernels_df_is_the_top_list(report):
    df = report.kernels_df()
    assert df.to_dict("records") == report.to_dict()["top_kernels"]
    assert {"class", "name", "count", "total_ns"} <= set(df.columns)


def test_iterations_df_rows_per_rank_device_iteration(report):
    df = report.iterations_df()
    doc = report.to_dict()
    want = [(r["rank"], d["device"], it["iteration"], it["exposed_comm_ns"]) for r in doc["ranks"]
            for d in r["devices"] for it in d["iterations"]]
    assert list(zip(df["rank"], df["device"], df["iteration"], df["exposed_comm_ns"])) == want
    assert len(want) > 0
    # Idle by cause per iteration (schema 1.7) flattened into one column per cause.
    gaps = [it["gap_ns"]["launch_bound"] for r in doc["ranks"] for d in r["devices"] for it in d["iterations"]]
    assert list(df["gap_launch_bound_ns"]) == gaps
    assert "gap_ns" not in df.columns


def test_collectives_df_rows_per_instance_and_rank(report):
    df = report.collectives_df()
    inst = report.to_dict()["collectives_across_ranks"]["instances"]
    assert len(df) == sum(len(i["ranks"]) for i in inst) > 0
    first = df.iloc[0]
    assert first["op"] == inst[0]["op"] and first["wait_ns"] == inst[0]["ranks"][0]["wait_ns"]
    assert first["rank_channels"] is None or pd.isna(first["rank_channels"])
