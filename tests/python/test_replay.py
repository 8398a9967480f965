"""overlapscope.replay(): the same document as `overlapscope replay --json`, changes as arguments,
errors as exceptions."""

import json

import pytest

import overlapscope
from conftest import ROOT

A2A = str(ROOT / "tests" / "data" / "kineto" / "a2a_sync")


def test_replay_matches_the_cli(cli):
    doc = overlapscope.replay(A2A, ["async:/SendRecv/"])
    assert doc["schema"] == "overlapscope.replay/1"
    assert doc["schema_version"] == "1.2"
    assert list(doc)[3] == "replay_error"  # after schema, schema_version and inputs: the replay error first
    job = doc["job"]  # the change of the job's step: the median of per-iteration changes
    assert job["change_rule"] == "median-of-per-iteration-changes"
    assert abs(job["predicted_contention_step_ns"] - job["replayed_step_ns"] * (1 + job["change_contention"])) <= 1
    assert isinstance(job["late_rank_iterations"], list)
    assert all("predicted_change_contention" in r for r in doc["ranks"])  # the same rule per rank
    assert doc["replay_error"]["iterations"] > 0
    assert doc["changes"] == [{"spec": "async:/SendRecv/", "matched": doc["changes"][0]["matched"]}]
    assert doc["changes"][0]["matched"] > 0
    out = cli("replay", A2A, "--change", "async:/SendRecv/", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == doc


def test_replay_text_starts_with_the_error():
    text = overlapscope.replay(A2A, format="text")
    assert text.startswith("Replay error:")
    md = overlapscope.replay(A2A, "scale:comm=0.5", format="markdown", contention=False)
    assert md.startswith("# overlapscope replay")


def test_replay_prediction_moves_with_the_change():
    base = overlapscope.replay(A2A, "scale:compute=0.5", contention=False)
    for r in base["ranks"]:
        assert r["predicted"]["step_ns"] < r["measured"]["step_ns"]
        assert "predicted_contention" not in r


def test_replay_bad_change_is_an_option_error():
    with pytest.raises(overlapscope.OptionError, match="--change 'async:SendRecv'"):
        overlapscope.replay(A2A, "async:SendRecv")
    with pytest.raises(overlapscope.OptionError):
        overlapscope.replay(A2A, format="html")


def test_replay_html_page(tmp_path):
    page = tmp_path / "replay.html"
    doc = overlapscope.replay(A2A, "async:/SendRecv/", html=page)
    assert doc["schema"] == "overlapscope.replay/1"
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert text.index("Replay error: median |error|") < text.index("Per rank (median over iterations)")
    assert text.count('<svg class="chart"') == 2  # two ranks
    assert "<script" not in text


def test_replay_trace_and_strict_as_the_cli(cli, tmp_path):
    # trace= is --trace (per rank a "<name> predicted" process and GPU group), strict= is --strict.
    py, sh = tmp_path / "py.pftrace", tmp_path / "cli.pftrace"
    doc = overlapscope.replay(A2A, "async:/SendRecv/", strict=True, trace=py)
    assert doc["replay_error"]["strict"] is True
    assert overlapscope.replay(A2A)["replay_error"]["strict"] is False
    out = cli("replay", A2A, "--change", "async:/SendRecv/", "--strict", "--trace", str(sh))
    assert out.returncode == 0, out.stderr
    assert py.read_bytes() == sh.read_bytes()
    assert py.read_bytes().count(b" predicted") == 4  # two ranks
    with pytest.raises(overlapscope.Error):
        overlapscope.replay(A2A, trace=tmp_path / "no_such_dir" / "x.pftrace")
