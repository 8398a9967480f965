#!/usr/bin/env python3
"""Replay error and what-if predictions against measured pairs (docs/RESULTS.md "Replay").

usage: tools/replay_pairs.py OVERLAPSCOPE [--markdown]
For every pair (a run, the change that turns it into another measured run), predicts the second
from the first and compares with its measured step: the job's step per iteration is the slowest
rank's, the figure the median over iterations. Pairs whose traces are absent are skipped visibly.
"""
import json, os, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIRS = [
    # (base, target, changes)
    ("tests/data/kineto/ag_sequential", "tests/data/kineto/ag_overlap", ["async:/AllGather/"]),
    ("tests/data/kineto_nosync/ag_sequential", "tests/data/kineto_nosync/ag_overlap", ["async:/AllGather/"]),
    ("tests/data/kineto/a2a_sync", "tests/data/kineto/a2a_async", ["async:/SendRecv/"]),
    ("tests/data/kineto_nosync/a2a_sync", "tests/data/kineto_nosync/a2a_async", ["async:/SendRecv/"]),
    ("tests/data/kineto/d2h_blocking", "tests/data/kineto/d2h_nonblocking_event", ["nosync:/cudaStreamSynchronize/"]),
    ("tests/data/kineto_nosync/d2h_blocking", "tests/data/kineto_nosync/d2h_nonblocking_event",
     ["nosync:/cudaStreamSynchronize/"]),
    ("tests/data/torch_diag/w4_default/mm_ag_sequential", "tests/data/torch_diag/w4_default/mm_ag_overlap",
     ["async:/AllGather/"]),
    ("tests/data/torch_diag/w4_sync/mm_ag_sequential", "tests/data/torch_diag/w4_sync/mm_ag_overlap",
     ["async:/AllGather/"]),
    ("tests/data/torch_diag/w2_default/mm_ag_sequential", "tests/data/torch_diag/w2_default/mm_ag_overlap",
     ["async:/AllGather/"]),
    ("tests/data/torch_diag/w2_sync/mm_ag_sequential", "tests/data/torch_diag/w2_sync/mm_ag_overlap",
     ["async:/AllGather/"]),
]


def replay(tool, path, changes):
    cmd = [tool, "replay", os.path.join(ROOT, path), "--json"]
    for c in changes:
        cmd += ["--change", c]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def job_step(doc, key):
    """Median over iterations of the slowest rank's step (iterations matched by number)."""
    by_it = {}
    for it in doc["iterations"]:
        if key in it:
            by_it.setdefault(it["iteration"], []).append(it[key]["step_ns"])
    return statistics.median(max(v) for v in by_it.values()) if by_it else None


def main():
    tool = sys.argv[1]
    rows = []
    for base, target, changes in PAIRS:
        if not (os.path.isdir(os.path.join(ROOT, base)) and os.path.isdir(os.path.join(ROOT, target))):
            print(f"skipped (absent): {base} -> {target}")
            continue
        b = replay(tool, base, changes)
        t = replay(tool, target, [])
        measured_base, measured_target = job_step(b, "measured"), job_step(t, "measured")
        pred, pred_c = job_step(b, "predicted"), job_step(b, "predicted_contention")
        err = (pred - measured_target) / measured_target
        err_c = (pred_c - measured_target) / measured_target if pred_c else None
        sign_ok = (pred - measured_base) * (measured_target - measured_base) >= 0
        rows.append((base, target, " ".join(changes), b["replay_error"]["median_abs"], measured_base, measured_target,
                     pred, err, pred_c, err_c, b["contention_model"], sign_ok))
    print("| base -> target | change | base replay error | base | target | predicted | error | with contention | "
          "error | model | sign |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0].split('data/')[1]} -> {r[1].split('/')[-1]} | `{r[2]}` | {r[3]*100:.2f} % | {r[4]/1e6:.3f} ms "
              f"| {r[5]/1e6:.3f} ms | {r[6]/1e6:.3f} ms | {r[7]*100:+.1f} % | {r[8]/1e6:.3f} ms | {r[9]*100:+.1f} % "
              f"| {r[10]} | {'right' if r[11] else 'WRONG'} |")


if __name__ == "__main__":
    main()
