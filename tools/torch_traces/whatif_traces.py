#!/usr/bin/env python3
"""What-if pairs for `overlapscope replay`: make_traces.py's programs traced over many steps.

make_traces.py records 3 profiled steps, too few to compare two runs: one late start of a rank
moves the median, and two captures of the same program differ by more than the change between
the programs of a pair. This script runs the same programs (make_traces.Scenario, unchanged:
the all-gather, all-to-all and D2H pairs) and traces each with torch.profiler as users do
(activities CPU+CUDA, no record_shapes), schedule wait=1, warmup=2, active=ACTIVE (default 16),
so ProfilerStep#3..#(2+ACTIVE) are recorded. Two profiler variants: `default` (nothing else) and
`sync` (experimental_config enable_cuda_sync_events=True). Every scenario is captured CAPTURES
times (default 2), the captures in turn (capture 1 of every variant and scenario, then capture 2),
so that the spread between two captures of one program can be compared with a pair's change.

Run with 2 ranks, one GPU per rank, NCCL, NVLink multicast off:

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
    PYTHONUNBUFFERED=1 torchrun --nproc_per_node=2 tools/torch_traces/whatif_traces.py --outdir /tmp/w

Writes <outdir>/<variant>/run<k>/<scenario>/rank<R>.json and, from rank 0, timings.json beside
them (un-profiled iterations timed with CUDA events, as make_traces.py does, and the host wall
time of every profiled step, taken between prof.step() calls: nothing is added to the trace).
Trace contents are whatever Kineto writes.
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_traces  # noqa: E402
from make_traces import Scenario, init_distributed, log, time_scenario, versions  # noqa: E402

SCENARIOS = ["ag_sequential", "ag_overlap", "a2a_sync", "a2a_async", "d2h_blocking",
             "d2h_nonblocking_event"]
VARIANTS = ["default", "sync"]


def profile(sc, path, sync_events, active, record_shapes=False):
    """Traces wait=1, warmup=2, active steps; returns the host wall time (ms) of each active step."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    kwargs = dict(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=record_shapes,
                  schedule=torch.profiler.schedule(wait=1, warmup=2, active=active),
                  on_trace_ready=lambda p: p.export_chrome_trace(path))
    if sync_events:
        kwargs["experimental_config"] = torch._C._profiler._ExperimentalConfig(
            enable_cuda_sync_events=True)
    torch.cuda.synchronize()
    dist.barrier()
    marks = []
    with torch.profiler.profile(**kwargs) as prof:
        for _ in range(3 + active):
            sc.step()
            marks.append(time.perf_counter())  # before prof.step(): the last one exports the trace
            prof.step()
    torch.cuda.synchronize()
    # marks[i]: step i's work enqueued; active steps are 3 .. 2+active (0-based)
    return [(marks[i] - marks[i - 1]) * 1e3 for i in range(3, 3 + active)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--outdir", default="whatif")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--captures", type=int, default=2)
    ap.add_argument("--active", type=int, default=16)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--record-shapes", action="store_true",
                    help="torch.profiler's record_shapes=True (cpu_ops carry Input Dims)")
    ap.add_argument("--gemm-m", type=int, default=0,
                    help="rows of the GEMMs (make_traces.GEMM_M, default 8192): changes the tile count")
    ap.add_argument("--alternate-order", action="store_true",
                    help="run the scenarios in reverse order in every even capture: the first program "
                         "of a run measures 1-1.5 %% faster whichever it is (docs/RESULTS.md \"The "
                         "un-profiled truth: run order and clocks\"), so a fixed order biases a pair")
    args = ap.parse_args()
    if args.gemm_m:
        make_traces.GEMM_M = args.gemm_m
    rank, world, dev = init_distributed()
    vers = versions() if rank == 0 else None
    if rank == 0:
        log(rank, "versions:", json.dumps(vers))

    names = [s for s in args.scenarios.split(",") if s]
    for cap in range(1, args.captures + 1):
        for variant in [v for v in args.variants.split(",") if v]:
            for name in (names[::-1] if args.alternate_order and cap % 2 == 0 else names):
                t0 = time.perf_counter()
                sc = Scenario(name, rank, world, dev)
                tim = time_scenario(sc, args.warmup, args.iters)
                d = os.path.join(args.outdir, variant, f"run{cap}", name)
                host = profile(sc, os.path.join(d, f"rank{rank}.json"), variant == "sync", args.active,
                               args.record_shapes)
                dist.barrier()
                log(rank, f"{variant}/run{cap}/{name}: un-profiled median {tim['median_iter_ms']:.3f} ms, "
                          f"profiled host step median {statistics.median(host):.3f} ms "
                          f"(min {min(host):.3f}, max {max(host):.3f}), stale={sc.stale_reads}, "
                          f"{time.perf_counter() - t0:.1f} s")
                if rank == 0:
                    rec = {"scenario": name, "variant": variant, "capture": cap, "world_size": world,
                           "alternate_order": args.alternate_order,
                           "timing": tim, "profiled_host_step_ms": host,
                           "profiler": {"schedule": f"wait=1,warmup=2,active={args.active}",
                                        "record_shapes": args.record_shapes, "enable_cuda_sync_events": variant == "sync"},
                           "gemm_mkn": [make_traces.GEMM_M, make_traces.GEMM_K, make_traces.GEMM_N],
                           "host_reads": sc.reads, "stale_reads": sc.stale_reads, "versions": vers,
                           "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
                    with open(os.path.join(d, "timings.json"), "w") as f:
                        json.dump(rec, f, indent=1)
                del sc
                torch.cuda.empty_cache()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
