#!/usr/bin/env python3
"""Compares two measurements of collective skew for one captured mode of `overlapscope run`.

usage: skew_check.py DIR WORKLOAD MODE [--tolerance 0.05]

DIR is the run's -o directory. The ranks' own figure comes from DIR/WORKLOAD-timings.json
(`captured_<MODE>_skew_median_ms`: per instance, max - min over ranks of each rank's CUDA-event
duration of the collective, median over the captured instances). The trace (DIR/WORKLOAD-MODE/
report.json, `collectives_across_ranks.instances[]`, over the instances the events timed: the
capture also holds one warm-up iteration, left out) gives two figures: the same durations-based
one (max - min over ranks of end - arrival), and the METRICS.md section 6 skew (max - min of the
arrivals). The two agree when every rank ends at once; on a ring with more than 2 ranks the ends
are tens of us apart, which the events cannot see. A copy-engine collective (modes ending in
"-ce") ends on every rank with NCCL's closing barrier, after the last copy anywhere: its
durations use that common end. PASS when the durations-based figure is within
the tolerance of the events' (relative), and the METRICS skew within the tolerance plus the
median spread of the ranks' ends; else FAIL. Exit 0 / 1, and 2 when a file or figure is missing.
"""
import json
import statistics
import sys


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir, workload, mode = argv[1:4]
    tol = float(argv[argv.index("--tolerance") + 1]) if "--tolerance" in argv else 0.05
    timings_path = f"{out_dir}/{workload}-timings.json"
    report_path = f"{out_dir}/{workload}-{mode}/report.json"
    try:
        timings = json.load(open(timings_path))
        report = json.load(open(report_path))
    except (OSError, ValueError) as e:
        print(f"FAIL skew {workload} {mode}: {e}")
        return 2
    figures = timings.get("figures", {})
    # matmul-allgather names its series with '_' (overlap-ce -> overlap_ce), all-to-all keeps '-'.
    series = mode if f"captured_{mode}_skew_median_ms" in figures else mode.replace("-", "_")
    key = f"captured_{series}_skew_median_ms"
    if key not in figures:
        have = sorted(k for k in figures if k.endswith("_skew_median_ms"))
        print(f"FAIL skew {workload} {mode}: {timings_path} has no {key} (skew figures: {have})")
        return 2
    event_ns = figures[key] * 1e6
    event_n = int(figures.get(f"captured_{series}_skew_instances", 0))
    xr = report.get("collectives_across_ranks") or {}
    inst = xr.get("instances") or []
    if not inst:
        print(f"FAIL skew {workload} {mode}: {report_path} has no matched collective instances")
        return 2
    # The capture window also holds the mode's warm-up iteration (workloads/mode_runner.cc: one
    # warm-up, then the timed iterations), which the ranks do not time: compare the trace's last
    # `event_n` instances, the ones the CUDA events timed.
    warmup = len(inst) - event_n if 0 < event_n < len(inst) else 0
    inst = sorted(inst, key=lambda i: i["first_start_ns"])[warmup:]
    trace_ns = statistics.median(i["skew_ns"] for i in inst)
    # The events see each rank's duration (own arrival to own end) only; their skew is
    # max - min of durations, which equals max(arrival) - min(arrival) only when every rank ends
    # at once. The trace has both, so it gives the same durations-based figure (like for like)
    # and the spread of the ends (why the METRICS skew may differ from the events' figure).
    # A copy-engine collective's last copy is not its end on the rank: NCCL closes it with a
    # barrier of stream memory operations (ce_coll.cc: ncclMemOpSync after the copies, invisible
    # to CUPTI), so every rank leaves when the last copy anywhere lands. The built-in workloads'
    # copy-engine modes end in "-ce".
    copy_engine = mode.endswith("-ce")

    def durations_skew(i):
        common_end = max(p["end_ns"] for p in i["ranks"])
        d = [(common_end if copy_engine else p["end_ns"]) - p["arrival_ns"] for p in i["ranks"]]
        return max(d) - min(d)
    dur_ns = statistics.median(durations_skew(i) for i in inst)
    spread_ns = statistics.median(max(p["end_ns"] for p in i["ranks"]) - min(p["end_ns"] for p in i["ranks"])
                                  for i in inst)
    rel_dur = abs(dur_ns - event_ns) / event_ns if event_ns > 0 else float("inf")
    rel = abs(trace_ns - event_ns) / event_ns if event_ns > 0 else float("inf")
    ok = rel_dur <= tol and abs(trace_ns - event_ns) <= tol * event_ns + spread_ns
    verdict = "PASS" if ok else "FAIL"
    print(f"{verdict} skew {workload} {mode}: CUDA events median {event_ns / 1e3:.1f} us over {event_n} instances; "
          f"trace over {len(inst)} instances (after {warmup} warm-up; matched by {xr.get('matched_by')}, "
          f"participants by {xr.get('identified_by')}): same durations-based figure {dur_ns / 1e3:.1f} us "
          f"({100 * rel_dur:.2f} %), METRICS skew {trace_ns / 1e3:.1f} us ({100 * rel:.2f} %; ranks' ends "
          f"{spread_ns / 1e3:.1f} us apart); tolerance {100 * tol:.0f} % (+ the end spread for the METRICS skew)")
    waits = {}
    for i in inst:
        for r in i.get("ranks", []):
            waits.setdefault(r.get("label"), []).append(r.get("wait_ns", 0))
    for label, w in sorted(waits.items(), key=lambda kv: str(kv[0])):
        ev = figures.get(f"captured_{series}_wait_rank{label.split()[-1]}_median_ms") if label else None
        evs = f", CUDA events {ev * 1e3:.1f} us" if isinstance(ev, (int, float)) else ""
        print(f"    {label}: median wait {statistics.median(w) / 1e3:.1f} us in the trace{evs}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
