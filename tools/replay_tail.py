#!/usr/bin/env python3
"""How much a collective gets done in a GEMM's last tile round (docs/RESULTS.md "Seventh round").

usage: tools/replay_tail.py [--window]

Reads the Kineto JSON of the measured pairs whose collective becomes ready beside a GEMM that fills
every SM (make_traces.py's all-gather: sequential -> overlap; its all-to-all: sync -> async; the
torch_diag all-gathers). In the target, an instance counts where the collective started inside a
GEMM on every rank (the GEMM won the race: its blocks without a last tile retire a round early and
the collective starts on the SMs they free). Per instance:
- tail: the latest GEMM end less the latest collective start (both ranks' kernels running beside
  the last round of their GEMMs);
- transfer: the latest end less the latest start (the time the kernel needs once every rank is in);
- the base's transfer (the same figure over the base's instances, which never meet a GEMM);
- done in the tail: tail - (transfer - base transfer), the alone-time of the collective that the
  tail absorbed; rate: that over the tail (1: it ran as fast as alone beside the GEMM, 0: it moved
  nothing there).
Medians per capture. Ranks of one capture share a host clock (one machine). No replay is run.
--window (all-gathers only): beside the rate, the window in which every rank is in its GEMM's last
round (the earliest GEMM end less the latest collective start; negative: some rank's GEMM ended
before the last rank's collective started) and the rate over it (docs/RESULTS.md "Tenth round":
it does not explain the 4-rank rate).
"""
import gzip, json, os, statistics, sys
from pathlib import Path

ROOT = Path(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) / "tests" / "data"
AG, A2A = "ncclDevKernel_AllGather", "ncclDevKernel_SendRecv"
PAIRS = [("kineto/ag_sequential", "kineto/ag_overlap", AG), ("kineto_nosync/ag_sequential", "kineto_nosync/ag_overlap", AG),
         ("kineto/a2a_sync", "kineto/a2a_async", A2A), ("kineto_nosync/a2a_sync", "kineto_nosync/a2a_async", A2A)]
PAIRS += [(f"torch_diag/{w}/mm_ag_sequential", f"torch_diag/{w}/mm_ag_overlap", AG)
          for w in ("w2_default", "w2_sync", "w4_default", "w4_sync")]
PAIRS += [(f"whatif_torch/{v}/{r}/{b}", f"whatif_torch/{v}/{r}/{t}", c) for v in ("default", "sync")
          for r in ("run1", "run2") for b, t, c in (("ag_sequential", "ag_overlap", AG), ("a2a_sync", "a2a_async", A2A))]
# The same programs under NCCL settings (tools/torch_traces/README.md, tests/data/whatif_torch_nccl).
PAIRS += [(f"whatif_torch_nccl/{s}/{r}/{b}", f"whatif_torch_nccl/{s}/{r}/{t}", c) for s, b, t, c in (
    ("default", "ag_sequential", "ag_overlap", AG), ("proto_simple", "ag_sequential", "ag_overlap", AG),
    ("default", "a2a_sync", "a2a_async", A2A), ("max_nchannels_12", "a2a_sync", "a2a_async", A2A),
    ("proto_ll", "a2a_sync", "a2a_async", A2A)) for r in ("run1", "run2")]

# With the GEMM's shape recorded (whatif_traces.py --record-shapes --gemm-m M; tests/data/whatif_torch_shapes):
# the out-of-sample check of the rates above (the model's, analyze/replay/last_round.h, were taken
# before these captures existed).
PAIRS += [(f"whatif_torch_shapes/{g}/{r}/{b}", f"whatif_torch_shapes/{g}/{r}/{t}", c)
          for g in ("g2_m8192", "g2_m8448", "g2_m6144", "g4_m8192") for b, t, c in (
              ("ag_sequential", "ag_overlap", AG), ("a2a_sync", "a2a_async", A2A)) for r in ("run1", "run2")]


def kernels(d):
    """Per rank: (collective kernels, other kernels), each sorted by start."""
    out = []
    for f in sorted(d.glob("rank*.json.gz")):
        ks = sorted((e for e in json.load(gzip.open(f))["traceEvents"] if e.get("cat") == "kernel"), key=lambda e: e["ts"])
        out.append(([k for k in ks if k["name"].startswith("nccl")], [k for k in ks if not k["name"].startswith("nccl")]))
    return out


def transfer(group):
    return max(k["ts"] + k["dur"] for k in group) - max(k["ts"] for k in group)


def main():
    window = "--window" in sys.argv[1:]
    print("| base -> target | collective (grid) | instances in a GEMM on every rank | tail | transfer | "
          "base transfer | done in the tail | rate |" + (" ranks | every rank in its last round | rate over it |" if window else ""))
    print("|---|---|---|---|---|---|---|---|" + ("---|---|---|" if window else ""))
    med = statistics.median
    for base, target, name in PAIRS:
        if window and name != AG:
            continue
        b, t = ROOT / base, ROOT / target
        if not (b.is_dir() and t.is_dir()):
            print(f"skipped (absent): {base} -> {target}")
            continue
        base_ranks = kernels(b)
        base_t = [transfer(g) for g in zip(*([c for c in cs if c["name"].startswith(name)] for cs, _ in base_ranks))]
        ranks = kernels(t)
        tails, trans, windows, total, grid = [], [], [], 0, None
        for group in zip(*([c for c in cs if c["name"].startswith(name)] for cs, _ in ranks)):
            total += 1
            grid = grid or group[0]["args"].get("grid")
            hosts = []
            for c, (_, gemms) in zip(group, ranks):
                h = [g for g in gemms if g["ts"] <= c["ts"] < g["ts"] + g["dur"]]
                if h:
                    hosts.append(h[0])
            if len(hosts) < len(group):
                continue
            tail = max(g["ts"] + g["dur"] for g in hosts) - max(c["ts"] for c in group)
            if tail > 0:
                tails.append(tail)
                trans.append(transfer(group))
                windows.append(min(g["ts"] + g["dur"] for g in hosts) - max(c["ts"] for c in group))
        if not tails or not base_t:
            print(f"| {base} -> {target.split('/')[-1]} | {name[len('ncclDevKernel_'):]} {grid} | 0 of {total} | "
                  "- | - | - | - | - |")
            continue
        tail, tr, bt = med(tails), med(trans), med(base_t)
        done = tail - (tr - bt)
        extra = ""
        if window:
            w = med(windows)
            extra = f" {len(ranks)} | {w:.1f} µs | {done / w:.2f} |" if w > 0 else f" {len(ranks)} | {w:.1f} µs | - |"
        print(f"| {base} -> {target.split('/')[-1]} | {name[len('ncclDevKernel_'):]} {grid} | {len(tails)} of {total} | "
              f"{tail:.1f} µs | {tr:.1f} µs | {bt:.1f} µs | {done:.1f} µs | {done / tail:.2f} |{extra}")


if __name__ == "__main__":
    sys.exit(main())
