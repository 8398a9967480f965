#!/usr/bin/env python3
"""Checks that the report names an injected straggler's spin as the cause of its lateness.

usage: straggler_cause_check.py REPORT.json --delay-rank R --delay-us US [--tolerance 0.10]
                                 [--timings WORKLOAD-timings.json --mode MODE]

REPORT.json is `overlapscope analyze --json` of a capture of `overlapscope run WORKLOAD
--delay-rank R --delay-us US` (e.g. DIR/matmul-allgather-sequential/report.json): rank R ran a
one-block spin kernel of US µs on the collective's stream right before every collective. From
`straggler_causes.summaries` (METRICS.md section 8) of the collective op where R is last most
often, PASS when
  - that summary is rank R's, last in at least 90 % of the instances it took part in;
  - the first name of its lead over the median rank is the spin kernel (a name containing "Spin");
  - the spin's time on R's path per instance where R was last (delta_ns / times_last) is within
    the tolerance of US µs (relative);
  - R's lead over the median rank per instance (behind_median_ns / times_last) is within the
    tolerance plus 50 µs of how late R really was: with --timings, the ranks' own CUDA-event skew
    of the captured mode (`captured_<MODE>_skew_median_ms`, as tools/skew_check.py reads it);
    without, US µs. The spin is the only injected difference, but it need not be all of the
    lateness: on the copy-engine all-to-all under MPI the delayed rank also starts its copies
    later after the spin, and its CUDA events show it (e.g. 468 µs late for a 300 µs spin).
Prints the figures either way. Exit 0 PASS, 1 FAIL, 2 when the file or a figure is missing.
"""
import json
import sys


def arg(argv, name, default=None):
    return argv[argv.index(name) + 1] if name in argv else default


def main(argv):
    if len(argv) < 2 or "--delay-rank" not in argv or "--delay-us" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    path = argv[1]
    rank = int(arg(argv, "--delay-rank"))
    delay_ns = float(arg(argv, "--delay-us")) * 1000.0
    tol = float(arg(argv, "--tolerance", "0.10"))
    expect_ns, expect_from = delay_ns, "the delay"
    if "--timings" in argv:
        mode = arg(argv, "--mode", "")
        try:
            figures = json.load(open(arg(argv, "--timings"))).get("figures", {})
        except (OSError, ValueError) as e:
            print(f"FAIL straggler cause {path}: {e}")
            return 2
        # matmul-allgather names its series with '_' (overlap-ce -> overlap_ce), all-to-all '-'.
        series = mode if f"captured_{mode}_skew_median_ms" in figures else mode.replace("-", "_")
        key = f"captured_{series}_skew_median_ms"
        if key not in figures:
            print(f"FAIL straggler cause {path}: the timings have no {key}")
            return 2
        expect_ns, expect_from = figures[key] * 1e6, "the ranks' CUDA-event skew"
    try:
        report = json.load(open(path))
        summaries = report["straggler_causes"]["summaries"]
    except (OSError, ValueError, KeyError) as e:
        print(f"FAIL straggler cause {path}: {e}")
        return 2
    if not summaries:
        print(f"FAIL straggler cause {path}: no rank arrived last in any matched collective")
        return 1
    top = max(summaries, key=lambda s: (s["times_last"], s["lateness_ns"]))
    names = top.get("names") or []
    spin = names[0] if names else None
    last = top["times_last"]
    per_spin = spin["delta_ns"] / last if spin else 0.0
    per_behind = top["behind_median_ns"] / last
    share = top["times_last_share"] or 0.0
    print(f"{path}: most often last: {top['label']} in {last} of {top['instances']} {top['op']} "
          f"({100 * share:.1f}%); first cause: {spin['name'] if spin else '-'} "
          f"{per_spin / 1000:.1f} us per instance (injected {delay_ns / 1000:.1f} us), "
          f"{100 * (spin['share_of_behind'] or 0) if spin else 0:.1f}% of its lead; lead over the median rank "
          f"{per_behind / 1000:.1f} us per instance ({expect_from}: {expect_ns / 1000:.1f} us)")
    fails = []
    top_rank = top["rank"]
    if top_rank is None and str(top["label"]).startswith("GPU "):
        # One process driving every GPU (`run` with threads) and a collective matched by GPU (the
        # copy-engine modes carry no communicator rank): the workload runs rank r on GPU r.
        top_rank = int(top["label"].split()[1])
    if top_rank != rank:
        fails.append(f"rank {top_rank} is last most often, not rank {rank}")
    if share < 0.9:
        fails.append(f"last in {100 * share:.1f}% < 90%")
    if spin is None or "spin" not in spin["name"].lower():
        fails.append("the first cause is not the spin kernel")
    if abs(per_spin - delay_ns) > tol * delay_ns:
        fails.append(f"spin {per_spin / 1000:.1f} us is not within {100 * tol:.0f}% of {delay_ns / 1000:.1f} us")
    if abs(per_behind - expect_ns) > tol * expect_ns + 50000:
        fails.append(f"lead {per_behind / 1000:.1f} us is not within {100 * tol:.0f}% + 50 us of {expect_from}")
    print(("FAIL straggler cause: " + "; ".join(fails)) if fails else "PASS straggler cause")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
