#!/usr/bin/env python3
"""Replay error and what-if predictions against measured pairs (docs/RESULTS.md "Replay").

usage: tools/replay_pairs.py OVERLAPSCOPE [--errors]
--errors: the replay error of every trace with iterations (tests/data, ../shared/traces) instead.
For every pair (a run, the change that turns it into another measured run), predicts the second
from the first and compares with its measured step: the job's step per iteration is the slowest
rank's, the figure the median over iterations. Pairs whose traces are absent are skipped visibly.
"""
import json, os, statistics, subprocess, sys
from pathlib import Path

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


def errors(tool):
    """Replay error of every trace directory with iterations, with and without fallbacks."""
    dirs = sorted(str(p.parent.relative_to(ROOT)) for p in Path(ROOT, "tests/data").glob("**/rank0.json.gz"))
    shared = Path(os.environ.get("OVERLAPSCOPE_SHARED_TRACES", Path(ROOT).parent / "shared" / "traces"))
    extra = ["hta/trace_filter", "hta/ns_resolution_trace", "hta/nccl_parser_config", "hta/amd_trace",
             "hta/critical_path/cuda_event_sync", "hta/negative_queue_length_values_check",
             "tracelens/tests/traces/h100", "tracelens/tests/traces/mi300"]
    if shared.is_dir():
        dirs += [str(shared / d) for d in extra if (shared / d).is_dir()]
    else:
        print(f"skipped (absent): {shared}")
    print("| trace | iterations | median \\|error\\| | worst | strict median | strict worst | fallbacks |")
    print("|---|---|---|---|---|---|---|")
    for d in dirs:
        out = []
        for strict in (False, True):
            cmd = [tool, "replay", os.path.join(ROOT, d), "--json"] + (["--strict"] if strict else [])
            out.append(json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout))
        e, s = out[0]["replay_error"], out[1]["replay_error"]
        if e["iterations"] == 0:
            continue
        g = out[0]["graph"]
        name = d.split("tests/data/")[-1].split("traces/")[-1]
        print(f"| {name} | {e['iterations']} | {e['median_abs']*100:.2f} % | {e['worst_abs']*100:.2f} % | "
              f"{s['median_abs']*100:.2f} % | {s['worst_abs']*100:.2f} % | "
              f"{g['pinned_unresolved'] + g['device_order']} |")


def main():
    tool = sys.argv[1]
    if len(sys.argv) > 2 and sys.argv[2] == "--errors":
        errors(tool)
        return
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
        # A measured change within 1 % is noise: no sign to get right.
        noise = abs(measured_target - measured_base) < 0.01 * measured_base
        sign_ok = "noise" if noise else ("right" if (pred_c - measured_base) * (measured_target - measured_base) > 0
                                         else "WRONG")
        rows.append((base, target, " ".join(changes), b["replay_error"]["median_abs"], measured_base, measured_target,
                     pred, err, pred_c, err_c, b["contention_model"], sign_ok))
    print("| base -> target | change | base replay error | base | target | predicted | error | with contention | "
          "error | model | sign |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0].split('data/')[1]} -> {r[1].split('/')[-1]} | `{r[2]}` | {r[3]*100:.2f} % | {r[4]/1e6:.3f} ms "
              f"| {r[5]/1e6:.3f} ms | {r[6]/1e6:.3f} ms | {r[7]*100:+.1f} % | {r[8]/1e6:.3f} ms | {r[9]*100:+.1f} % "
              f"| {r[10]} | {r[11]} |")


if __name__ == "__main__":
    main()
