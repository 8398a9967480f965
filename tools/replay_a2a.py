#!/usr/bin/env python3
"""Why make_traces.py's async all-to-all runs slower than its sync one (docs/RESULTS.md "Why the
async all-to-all is slower"): the same program captured six times (tests/data/kineto on 2 x H200,
kineto_nosync and whatif_torch/{default,sync}/{run1,run2} on 2 x H100), read from the Kineto JSON.

usage: tools/replay_a2a.py OVERLAPSCOPE

Per capture, sync -> async:
- job step: the slowest rank's step, lower median over iterations (`overlapscope replay --json`,
  measured), and the un-profiled median of the same session (timings.json: 20 iterations timed
  with CUDA events on rank 0 just before the capture);
- GEMM time per iteration on the GPU with more of it (median over iterations): every layer's
  all-to-all waits for both GPUs, so the slower GPU's GEMMs set the step;
- the GEMM's median duration by what ran before it on its GPU (the all-to-all, or a GEMM), per
  rank: in the sync program the independent GEMM follows the all-to-all, in the async one the next
  layer's GEMM does;
- where the async all-to-all started: before the end of the GEMM it met (median), and how many did;
- the all-to-all's end after the later rank was ready (per rank and instance, median): ready is its
  start in the sync program, and the end of the GEMM it started in (or its start, if later) in the
  async one;
- the gap from the all-to-all's end to the next activity of its GPU (median);
- what is left of the change in the job step after the GEMMs' and 4 x the all-to-all's (4 layers).
"""
import gzip, json, os, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import replay_pairs  # noqa: E402

CAPTURES = ["kineto", "kineto_nosync", "whatif_torch/default/run1", "whatif_torch/default/run2",
            "whatif_torch/sync/run1", "whatif_torch/sync/run2"]


def kernels(path):
    """GPU activities of one rank's trace in start order: kind (gemm, a2a, other), start, end, the
    index of the profiler step whose range holds the launch (None outside)."""
    ev = json.load(gzip.open(path))["traceEvents"]
    launch = {e["args"]["correlation"]: e["ts"] for e in ev
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("name", "").startswith("ProfilerStep"))
    out = []
    for e in sorted((e for e in ev if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")), key=lambda e: e["ts"]):
        at = launch.get(e["args"].get("correlation"))
        it = next((i for i, (s, t) in enumerate(steps) if at is not None and s <= at <= t), None)
        kind = "gemm" if "nvjet" in e["name"] else "a2a" if "SendRecv" in e["name"] else "other"
        out.append({"kind": kind, "ts": e["ts"], "end": e["ts"] + e["dur"], "it": it})
    return out


def timings(d):
    for name in ("timings.json", "timings.json.gz"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            with (gzip.open(p) if name.endswith(".gz") else open(p)) as f:
                return json.load(f)["timing"]["median_iter_ms"]
    return None


def gemm_before(ks, a):
    """The last GEMM of the GPU that started before activity `a` (None when none did)."""
    g = [k for k in ks if k["kind"] == "gemm" and k["ts"] < a["ts"]]
    return g[-1] if g else None


def program(tool, d):
    ranks = [kernels(os.path.join(d, f"rank{r}.json.gz")) for r in (0, 1)]
    doc = replay_pairs.replay(tool, d, [])
    steps = {}
    for it in doc["iterations"]:
        steps.setdefault(it["iteration"], []).append((it["measured"]["step_ns"], it["rank"]))
    gemm_per_it = []  # the slower GPU's: per layer both wait for the all-to-all, i.e. for each other
    for i in range(len(steps)):
        gemm_per_it.append(max(sum(k["end"] - k["ts"] for k in ks if k["kind"] == "gemm" and k["it"] == i)
                               for ks in ranks))
    by_prev = [{"a2a": [], "gemm": []} for _ in ranks]
    for r, ks in enumerate(ranks):
        gpu = [k for k in ks if k["kind"] != "other"]
        for prev, k in zip(gpu, gpu[1:]):
            if k["kind"] == "gemm" and prev["end"] <= k["ts"]:
                by_prev[r][prev["kind"]].append(k["end"] - k["ts"])
    a2a = [[k for k in ks if k["kind"] == "a2a" and k["it"] is not None] for ks in ranks]
    lead, after_ready, gap = [], [], []
    for i in range(min(map(len, a2a))):
        ready = []
        for r in (0, 1):
            a, g = a2a[r][i], gemm_before(ranks[r], a2a[r][i])
            if g is not None and g["end"] > a["ts"]:
                lead.append(g["end"] - a["ts"])
            ready.append(max(a["ts"], g["end"]) if g is not None else a["ts"])
        after_ready += [a2a[r][i]["end"] - max(ready) for r in (0, 1)]
    for ks in ranks:
        for k in (k for k in ks if k["kind"] == "a2a"):
            nxt = [x["ts"] for x in ks if x["kind"] != "a2a" and k["end"] - 0.5 <= x["ts"] < k["end"] + 50]
            if nxt:
                gap.append(min(nxt) - k["end"])
    med = statistics.median
    return {"step": replay_pairs.job_step(doc, "measured") / 1e3, "unprofiled": timings(d),
            "gemm": med(gemm_per_it), "after_a2a": [med(x["a2a"]) for x in by_prev],
            "after_gemm": [med(x["gemm"]) for x in by_prev], "lead": med(lead) if lead else None,
            "leads": len(lead), "count": 2 * min(map(len, a2a)), "after_ready": med(after_ready), "gap": med(gap)}


def main():
    tool = sys.argv[1]
    print("| capture | job step sync -> async | un-profiled | GEMM per iteration | GEMM after the all-to-all "
          "(rank 0, 1) | GEMM after a GEMM (rank 0, 1) | async all-to-all started in a GEMM | all-to-all end "
          "after the later rank's ready | gap after the all-to-all | rest of the step's change |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    f = lambda v: ", ".join(f"{x:.1f}" for x in v)
    for c in CAPTURES:
        d = os.path.join(replay_pairs.ROOT, "tests/data", c)
        if not os.path.isdir(os.path.join(d, "a2a_sync")):
            print(f"skipped (absent): {c}")
            continue
        s, a = program(tool, os.path.join(d, "a2a_sync")), program(tool, os.path.join(d, "a2a_async"))
        up = "-"
        if s["unprofiled"] and a["unprofiled"]:
            ch = (a["unprofiled"] / s["unprofiled"] - 1) * 100
            up = f"{s['unprofiled']:.3f} -> {a['unprofiled']:.3f} ms ({ch:+.1f} %)"
        rest = a["step"] - s["step"] - (a["gemm"] - s["gemm"]) - 4 * (a["after_ready"] - s["after_ready"])
        print(f"| {c} | {s['step']:.1f} -> {a['step']:.1f} µs ({(a['step'] / s['step'] - 1) * 100:+.1f} %) | {up} "
              f"| {s['gemm']:.1f} -> {a['gemm']:.1f} µs ({a['gemm'] - s['gemm']:+.1f}) "
              f"| {f(s['after_a2a'])} -> {f(a['after_a2a'])} µs | {f(s['after_gemm'])} -> {f(a['after_gemm'])} µs "
              f"| {a['leads']} of {a['count']}, {a['lead']:.1f} µs before its end "
              f"| {s['after_ready']:.1f} -> {a['after_ready']:.1f} µs ({a['after_ready'] - s['after_ready']:+.1f}) "
              f"| {s['gap']:.2f}, {a['gap']:.2f} µs "
              f"| {rest:+.1f} µs |")


if __name__ == "__main__":
    main()
