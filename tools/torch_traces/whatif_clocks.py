#!/usr/bin/env python3
"""Do the what-if pairs' programs run the GPUs at different clocks? (issue 24's all-to-all loss)

The all-to-all pair (make_traces.Scenario `a2a_sync` -> `a2a_async`) runs slower asynchronous in
7 of 8 un-profiled comparisons, and its Kineto traces show the GEMMs of one GPU moving together in
steps, as clock levels would (docs/RESULTS.md "Ninth round"). Kineto records no clocks; this
script does: it runs the pair's programs un-profiled, alternately, each for PHASE_S seconds,
twice (sync, async, sync, async, then the all-gather pair the same way), timing every iteration
with CUDA events, while a thread of each rank samples its own GPU through NVML (pynvml) every
SAMPLE_MS: SM clock (MHz), power (W) and the active clock-event reasons bit mask.

Run with torchrun as whatif_traces.py is (NVLink multicast off; see its docstring):

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
    torchrun --nproc_per_node=2 tools/torch_traces/whatif_clocks.py --out /tmp/clocks.json

Writes one JSON (rank 0 gathers every rank's phases and samples) and prints, per phase and rank:
the median iteration (ms), the median SM clock (MHz) and power (W) over the phase's samples, and
the share of samples with a power or thermal clock-event reason active.
"""

import argparse
import json
import os
import statistics
import sys
import threading
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_traces  # noqa: E402
from make_traces import Scenario, init_distributed, log, time_scenario, versions  # noqa: E402

# NVML clock-event reason bits (nvml.h, nvmlClocksEventReason*): power capping (SW 0x4, HW
# slowdown 0x8, HW power brake 0x80) and thermal (SW 0x20, HW 0x40).
POWER_BITS = 0x4 | 0x8 | 0x80
THERMAL_BITS = 0x20 | 0x40


class SmiSampler(threading.Thread):
    """The same samples from `nvidia-smi -lms` where pynvml is not installed (stamped on arrival)."""

    def __init__(self, gpu, period_s):
        super().__init__(daemon=True)
        import subprocess
        self.p = subprocess.Popen(
            ["nvidia-smi", "-i", str(gpu), "--query-gpu=clocks.sm,power.draw,clocks_event_reasons.active",
             "--format=csv,noheader,nounits", f"-lms={max(1, int(period_s * 1000))}"],
            stdout=subprocess.PIPE, text=True)
        self.samples = []
        self.stop = threading.Event()

    def run(self):
        for line in self.p.stdout:
            parts = [x.strip() for x in line.split(",")]
            try:
                self.samples.append((time.time(), float(parts[0]), float(parts[1]), int(parts[2], 16)))
            except (ValueError, IndexError):
                continue
            if self.stop.is_set():
                break

    def join(self, timeout=None):
        self.p.terminate()
        super().join(timeout)


class Sampler(threading.Thread):
    """Samples one GPU through NVML until stopped: (time.time(), sm MHz, W, reasons). `gpu`: the
    NVML UUID ("GPU-...") or, where torch gives none, the NVML index."""

    def __init__(self, gpu, period_s):
        super().__init__(daemon=True)
        import pynvml
        self.nv = pynvml
        pynvml.nvmlInit()
        self.h = (pynvml.nvmlDeviceGetHandleByUUID(gpu) if isinstance(gpu, str)
                  else pynvml.nvmlDeviceGetHandleByIndex(gpu))
        self.period_s = period_s
        self.samples = []
        self.stop = threading.Event()

    def run(self):
        nv = self.nv
        while not self.stop.is_set():
            t = time.time()
            sm = nv.nvmlDeviceGetClockInfo(self.h, nv.NVML_CLOCK_SM)
            w = nv.nvmlDeviceGetPowerUsage(self.h) / 1000.0
            try:
                why = nv.nvmlDeviceGetCurrentClocksEventReasons(self.h)
            except AttributeError:  # older pynvml names it "throttle"
                why = nv.nvmlDeviceGetCurrentClocksThrottleReasons(self.h)
            self.samples.append((t, sm, w, why))
            time.sleep(self.period_s)


def run_phase(sc, seconds):
    """Steps for `seconds` (after 20 warm-up steps); returns wall start/end and per-iteration ms."""
    for _ in range(20):
        sc.step()
    torch.cuda.synchronize()
    dist.barrier()
    # Every rank runs the same number of steps: rank 0 decides from a short timed probe.
    probe = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    probe[0].record()
    for _ in range(10):
        sc.step()
    probe[1].record()
    torch.cuda.synchronize()
    n = torch.tensor([max(20, int(seconds * 1000 / (probe[0].elapsed_time(probe[1]) / 10)))], device="cuda")
    dist.broadcast(n, 0)
    iters = int(n.item())
    # make_traces.time_scenario times the steps (CUDA events between them); warm-up done above.
    t0 = time.time()
    tim = time_scenario(sc, 0, iters)
    t1 = time.time()
    return {"start": t0, "end": t1, "per_iter_ms": tim["per_iter_ms"]}


def summarize(phases, samples):
    for ph in phases:
        s = [x for x in samples if ph["start"] <= x[0] <= ph["end"]]
        ph["samples"] = len(s)
        ph["median_iter_ms"] = statistics.median(ph["per_iter_ms"])
        if s:
            ph["median_sm_mhz"] = statistics.median(x[1] for x in s)
            ph["median_power_w"] = statistics.median(x[2] for x in s)
            ph["power_reason_share"] = sum(1 for x in s if x[3] & POWER_BITS) / len(s)
            ph["thermal_reason_share"] = sum(1 for x in s if x[3] & THERMAL_BITS) / len(s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="clocks.json")
    ap.add_argument("--order", default="a2a_sync,a2a_async,a2a_sync,a2a_async,ag_sequential,ag_overlap,"
                    "ag_sequential,ag_overlap")
    ap.add_argument("--phase-s", type=float, default=4.0)
    ap.add_argument("--sample-ms", type=float, default=5.0)
    ap.add_argument("--gemm-m", type=int, default=0,
                    help="rows of the GEMMs (make_traces.GEMM_M, default 8192), as whatif_traces.py takes it")
    args = ap.parse_args()
    if args.gemm_m:
        make_traces.GEMM_M = args.gemm_m
    rank, world, dev = init_distributed()
    index = torch.cuda.current_device()
    # NVML numbers every GPU of the host, CUDA only the visible ones (CUDA_VISIBLE_DEVICES): the
    # GPU is named by its UUID, which both agree on, where torch gives it.
    mine = str(getattr(torch.cuda.get_device_properties(index), "uuid", ""))
    gpu = ("GPU-" + mine) if mine else index
    try:
        sampler = Sampler(gpu, args.sample_ms / 1000.0)
    except ImportError:
        log(rank, "pynvml not installed: sampling with nvidia-smi -lms")
        sampler = SmiSampler(gpu, args.sample_ms / 1000.0)
    sampler.start()
    phases = []
    for name in [s for s in args.order.split(",") if s]:
        sc = Scenario(name, rank, world, dev)
        ph = run_phase(sc, args.phase_s)
        ph.update({"scenario": name, "rank": rank})
        phases.append(ph)
        del sc
        torch.cuda.empty_cache()
    sampler.stop.set()
    sampler.join()
    summarize(phases, sampler.samples)
    everything = [None] * world
    dist.all_gather_object(everything, {"rank": rank, "phases": phases, "samples": sampler.samples})
    if rank == 0:
        for r in everything:
            for ph in r["phases"]:
                log(0, f"rank {r['rank']} {ph['scenario']:14s} iter {ph['median_iter_ms']:.3f} ms "
                       f"({len(ph['per_iter_ms'])} iters), SM {ph.get('median_sm_mhz', 0):.0f} MHz, "
                       f"{ph.get('median_power_w', 0):.0f} W, power-capped {100 * ph.get('power_reason_share', 0):.0f}% "
                       f"thermal {100 * ph.get('thermal_reason_share', 0):.0f}% of {ph['samples']} samples")
        with open(args.out, "w") as f:
            json.dump({"versions": versions(), "gemm_mkn": [make_traces.GEMM_M, make_traces.GEMM_K,
                                                            make_traces.GEMM_N],
                       "phase_s": args.phase_s, "sample_ms": args.sample_ms, "ranks": everything}, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
