#!/usr/bin/env python3
"""PyTorch check of the CUPTI capture (tools/gpu_checks.sh, section capture).

  torch_capture_check.py plain              matmul loop inside an NVTX range "measured"
  torch_capture_check.py torchprof OUT.json same loop under torch.profiler, Kineto trace to OUT.json
  torch_capture_check.py compare DUMP.tsv OUT.json
      DUMP.tsv: spill_dump of `overlapscope profile -- python3 torch_capture_check.py plain`.
      Compares the kernels inside "measured" with the Kineto trace's kernels: same names with
      the same counts, and per-name median durations within 1 %. Prints PASS/FAIL lines and
      exits non-zero on a failure.
The two runs are separate processes: two CUPTI clients cannot share one process.
"""
import gzip
import json
import statistics
import sys

ITERS = 30
N = 4096


def setup():
    import torch
    torch.manual_seed(0)
    a = torch.randn(N, N, device="cuda", dtype=torch.float16)
    b = torch.randn(N, N, device="cuda", dtype=torch.float16)
    for _ in range(5):  # warm-up: cuBLAS picks its kernels, lazy loading is done
        a @ b
    torch.cuda.synchronize()
    return torch, a, b


def measured(torch, a, b):
    torch.cuda.nvtx.range_push("measured")
    for _ in range(ITERS):
        c = a @ b
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    return c


def plain():
    torch, a, b = setup()
    measured(torch, a, b)


def torchprof(out):
    torch, a, b = setup()
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        measured(torch, a, b)
    p.export_chrome_trace(out)


def compare(dump, kineto):
    ours, window = {}, None
    rows = [line.rstrip("\n").split("\t") for line in open(dump)]
    for r in rows:
        if r[0] == "R" and r[2] == "measured":
            window = (int(r[3]), int(r[4]))
    nvtx_ok = window is not None
    if window is None:
        # Without NVTX: the loop lies between the last two device-wide syncs (setup's and its own).
        ctx = sorted((int(r[2]), int(r[3])) for r in rows if r[0] == "S" and r[1] == "context_sync")
        if len(ctx) < 2:
            print("FAIL torch: neither the NVTX range 'measured' nor two device syncs in the capture")
            return 1
        window = (ctx[-2][1], ctx[-1][1])
    print(f"NVTX range 'measured' captured: {'yes' if nvtx_ok else 'NO (window taken from the device syncs)'}")
    for r in rows:
        if r[0] == "K" and window[0] <= int(r[2]) <= window[1]:
            ours.setdefault(r[1], []).append(int(r[3]) - int(r[2]))
    opener = gzip.open if kineto.endswith(".gz") else open
    with opener(kineto, "rt") as f:
        trace = json.load(f)
    theirs = {}
    for e in trace.get("traceEvents", []):
        if e.get("cat") == "kernel":
            theirs.setdefault(e["name"], []).append(round(float(e["dur"]) * 1000))
    failures = 0
    print(f"capture: {sum(map(len, ours.values()))} kernels in 'measured'; "
          f"torch.profiler: {sum(map(len, theirs.values()))} kernels")
    for name in sorted(set(ours) | set(theirs)):
        a, b = ours.get(name, []), theirs.get(name, [])
        line = f"  {name[:90]}: capture {len(a)} x, torch.profiler {len(b)} x"
        if a and b:
            ma, mb = statistics.median(a), statistics.median(b)
            rel = abs(ma - mb) / mb if mb else 0.0
            line += f"; median {ma / 1000:.3f} us vs {mb / 1000:.3f} us ({rel * 100:.2f} %)"
            if rel > 0.01:
                failures += 1
                line += "  <- duration differs by more than 1 %"
        if len(a) != len(b):
            failures += 1
            line += "  <- count differs"
        print(line)
    print(("PASS" if failures == 0 else "FAIL") + f" torch: {failures} difference(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "plain":
        plain()
    elif mode == "torchprof":
        torchprof(sys.argv[2])
    elif mode == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(f"unknown mode {mode}")
