"""tools/a2a_loss.py's facts of the async all-to-all pairs (docs/RESULTS.md "Why the async all-to-all
predictions miss their small loss (branch h34c)"): read from the Kineto JSON of tests/data, no CLI."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import a2a_loss  # noqa: E402


def rows(capture):
    d = ROOT / "tests" / "data" / capture
    return a2a_loss.pair_rows(str(d / "a2a_sync"), str(d / "a2a_async"), False)


def test_kineto_pair_terms_the_model_already_has():
    rs = rows("kineto")
    assert len(rs) == 2
    for x in rs:
        # the all-to-all starts in the independent GEMM's last tile round, ~50 µs before its end
        assert -55 < x["start_vs_i"] < -40
        # the join through the cross-stream event is as fast as the same-stream successor in sync
        assert abs(x["join"][1] - x["join"][0]) < 0.3
        assert 1.0 < x["join"][0] < 2.0
        # the host runs milliseconds ahead of the GPU: never on the path
        assert min(x["slack"]) > 1000
        assert x["calls"][1] - x["calls"][0] == 6
        # the GEMM beside the all-to-all is no slower than its GPU-wide speed says
        assert abs(x["contention"]) < 5
        # async saves the dispatch gaps (the model's predicted change)
        assert -15 < x["d"]["gaps"] < -5
        # and its all-to-all ends later than the model's ready + the sync transfer
        assert x["end_vs_model"] > 5


def test_full_last_round_all_to_all_slower_without_a_gemm_beside_it():
    # GEMM rows 8448: the last tile round is full, the all-to-all starts at the GEMM's end
    for x in rows("whatif_torch_shapes/g2_m8448/run1"):
        assert -10 < x["start_vs_i"] < 0
        assert x["end_vs_model"] > 15
