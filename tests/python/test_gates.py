"""Gates: Report.gates/require on every rank, as the CLI's --require judges them."""

import pytest

import overlapscope

TWO_RANKS = "samples/pytorch_ag_overlap"
NO_COMM = "tests/data/kineto/d2h_blocking"


def cli_gate_lines(cli, trace, *gates):
    args = [a for g in gates for a in ("--require", g)]
    p = cli("analyze", trace, "--json", *args)
    lines = [l[len("gate: "):] for l in p.stderr.decode().splitlines() if l.startswith("gate: ")]
    return p.returncode, lines


def test_checks_are_the_cli_gate_lines(cli, in_root):
    r = overlapscope.analyze(TWO_RANKS)
    ratios = [rk.summary.overlap_ratio for rk in r.ranks]
    # A threshold between the two ranks' ratios: one passes, one fails.
    mid = round((min(ratios) + max(ratios)) / 2, 3)
    gates = ["overlap_ratio>=%g" % mid, "blocked_share<=0.05"]
    result = r.gates(gates)
    rc, lines = cli_gate_lines(cli, TWO_RANKS, *gates)
    assert rc == 3
    assert [c.line for c in result.checks] == lines
    assert not result.passed and not result
    for c in result.checks:
        rank = next(x for x in r.to_dict()["ranks"] if x["label"] == c.label)
        assert c.rank == rank["rank"]
        assert c.value == rank["summary"][c.metric]
        assert c.gate in gates
    failed = result.failures
    assert len(failed) == 1
    assert failed[0].metric == "overlap_ratio" and failed[0].value == min(ratios)


def test_require_raises_naming_rank_metric_and_value(in_root):
    r = overlapscope.analyze(TWO_RANKS)
    worst = min(r.ranks, key=lambda x: x.summary.overlap_ratio)
    with pytest.raises(overlapscope.GateError) as e:
        r.require("overlap_ratio>=0.99")
    err = e.value
    assert err.code == 3
    assert {f.label for f in err.failures} == {x.label for x in r.ranks}
    assert worst.label in str(err) and "overlap_ratio>=0.99" in str(err)
    assert "value %.6g" % worst.summary.overlap_ratio in str(err)
    assert [f.value for f in err.failures if f.label == worst.label] == [worst.summary.overlap_ratio]


def test_require_passes_and_returns_the_result(cli, in_root):
    r = overlapscope.analyze(TWO_RANKS)
    result = r.require("overlap_ratio>=0.1", ["blocked_share<=0.5"])
    assert result.passed and len(result.checks) == 2 * len(r.ranks)
    rc, lines = cli_gate_lines(cli, TWO_RANKS, "overlap_ratio>=0.1", "blocked_share<=0.5")
    assert rc == 0 and lines == [c.line for c in result.checks]


def test_absent_metric_fails_and_says_so(cli, in_root):
    r = overlapscope.analyze(NO_COMM)
    assert r.ranks[0].summary.overlap_ratio is None
    result = r.gates("overlap_ratio>=0.5")
    assert not result.passed
    assert all(c.value is None for c in result.checks)
    assert "absent: no communication" in result.checks[0].line
    assert [c.line for c in result.checks] == cli_gate_lines(cli, NO_COMM, "overlap_ratio>=0.5")[1]


@pytest.mark.parametrize("gate, why", [("overlap_ratio>>0.5", "is not a number"),
                                       ("overlap_ratio=0.5", "use =="),
                                       ("no_such_metric>=1", "unknown metric 'no_such_metric'"),
                                       ("overlap_ratio", "expected METRIC OP NUMBER")])
def test_bad_gate_is_an_option_error(gate, why, in_root):
    r = overlapscope.analyze(TWO_RANKS)
    with pytest.raises(overlapscope.OptionError, match=why):
        r.gates(gate)
    with pytest.raises(ValueError, match=why):  # OptionError is a ValueError too
        overlapscope.check_gates(gate)


def test_check_gates_accepts_good_gates():
    overlapscope.check_gates("overlap_ratio>=0.6", ["blocked_share <= 0.05", "findings==0"])
