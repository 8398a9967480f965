#!/usr/bin/env python3
"""Produce real PyTorch-profiler (Kineto) Chrome-JSON traces for overlapscope tests.

Run with 2 ranks, one GPU per rank, NCCL backend (NVLink multicast must stay off):

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
    PYTHONUNBUFFERED=1 torchrun --nproc_per_node=2 tools/torch_traces/make_traces.py \
        --outdir /tmp/traces

For each scenario it writes <outdir>/<scenario>/rank{R}.json (one profiled run of
5 steps: schedule wait=1, warmup=1, active=3, so ProfilerStep#2..#4 are recorded)
and, from rank 0, <outdir>/<scenario>/timings.json (median iteration time over
un-profiled iterations, measured with CUDA events, plus versions).  At the end
rank 0 prints, per trace file, the count of events by "cat".

Trace contents are whatever Kineto writes; this script never edits them.
"""

import argparse
import collections
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, record_function

SCENARIOS = [
    "ag_sequential",
    "ag_overlap",
    "a2a_sync",
    "a2a_async",
    "d2h_blocking",
    "d2h_nonblocking_nosync",
    "d2h_nonblocking_event",
]

# Sizes (fp16). GEMM: [M,K] @ [K,N]; 8192x4096x4096 is ~275 GFLOP, ~0.35-0.5 ms on H100/H200.
GEMM_M, GEMM_K, GEMM_N = 8192, 4096, 4096
# all_gather_into_tensor: 8 Mi fp16 elements (16 MiB) per rank -> 32 MiB output with 2 ranks.
AG_ELEMS = 8 * 1024 * 1024
# Square "irrelevant" GEMMs used in the d2h scenarios (4096^3, ~0.15-0.2 ms each).
IRR_N = 4096
IRR_COUNT = 4
A2A_LAYERS = 4


def log(rank, *a):
    print(f"[rank{rank}]", *a, flush=True)


def init_distributed():
    """Refuses to run unless NVLink multicast is switched off (../shared/GPU.md), then joins the
    NCCL process group torchrun set up on this rank's GPU. Returns (rank, world, device)."""
    for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
        if k not in os.environ:
            sys.exit(f"refusing to run: {k} must be set (NVLink multicast must stay off)")
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local_rank)
    dev = torch.device("cuda", local_rank)
    dist.init_process_group("nccl", device_id=dev)
    return rank, world, dev


class Scenario:
    """Holds tensors and one iteration's work for one scenario."""

    def __init__(self, name, rank, world, dev):
        self.name = name
        self.rank = rank
        self.world = world
        self.dev = dev
        self.stale_reads = 0
        self.reads = 0
        self.bad_values = 0
        g = torch.Generator(device=dev)
        g.manual_seed(1234 + rank)
        h = torch.float16

        def rnd(*shape):
            return torch.randn(*shape, device=dev, dtype=h, generator=g) * 0.02

        if name.startswith("ag_"):
            self.a = rnd(GEMM_M, GEMM_K)
            self.b = rnd(GEMM_K, GEMM_N)
            self.c = torch.empty(GEMM_M, GEMM_N, device=dev, dtype=h)
            self.ag_in = rnd(AG_ELEMS)
            self.ag_out = torch.empty(AG_ELEMS * world, device=dev, dtype=h)
        elif name.startswith("a2a_"):
            assert GEMM_M % world == 0
            self.x0 = rnd(GEMM_M, GEMM_K)
            self.ws = [rnd(GEMM_K, GEMM_K) for _ in range(A2A_LAYERS)]
            # Independent side work (same in sync and async so FLOPs match).
            self.side_a = rnd(GEMM_M, GEMM_K)
            self.side_w = rnd(GEMM_K, GEMM_N)
            self.side_out = torch.empty(GEMM_M, GEMM_N, device=dev, dtype=h)
            self.a2a_out = [torch.empty(GEMM_M, GEMM_K, device=dev, dtype=h)
                            for _ in range(A2A_LAYERS)]
        elif name.startswith("d2h_"):
            self.a = rnd(GEMM_M, GEMM_K)
            self.b = rnd(GEMM_K, GEMM_N)
            self.irr_a = rnd(IRR_N, IRR_N)
            self.irr_b = rnd(IRR_N, IRR_N)
            self.irr_out = torch.empty(IRR_N, IRR_N, device=dev, dtype=h)
            self.pinned = torch.empty(1, dtype=torch.int32, pin_memory=True)
            self.event = torch.cuda.Event()
        else:
            raise ValueError(name)

    # ---------------------------------------------------------------- steps
    def step(self):
        getattr(self, "step_" + self.name)()

    def step_ag_sequential(self):
        with record_function("allgather"):
            dist.all_gather_into_tensor(self.ag_out, self.ag_in, async_op=False)
        with record_function("gemm"):
            torch.matmul(self.a, self.b, out=self.c)

    def step_ag_overlap(self):
        with record_function("allgather"):
            work = dist.all_gather_into_tensor(self.ag_out, self.ag_in, async_op=True)
        with record_function("gemm"):
            torch.matmul(self.a, self.b, out=self.c)
        with record_function("allgather_wait"):
            work.wait()

    def _a2a(self, async_op):
        x = self.x0
        for i in range(A2A_LAYERS):
            with record_function("gemm"):
                y = torch.matmul(x, self.ws[i])
            with record_function("alltoall"):
                work = dist.all_to_all_single(self.a2a_out[i], y, async_op=async_op)
            with record_function("gemm_indep"):
                torch.matmul(self.side_a, self.side_w, out=self.side_out)
            if async_op:
                with record_function("alltoall_wait"):
                    work.wait()
            x = self.a2a_out[i]  # consumed by the next layer's gemm
        self.last = x

    def step_a2a_sync(self):
        self._a2a(False)

    def step_a2a_async(self):
        self._a2a(True)

    def _flag(self):
        with record_function("gemm"):
            x = torch.matmul(self.a, self.b)
        with record_function("d2h_check"):
            # validation flag computed on the GPU: 1 when every element is finite
            flag = torch.isfinite(x).all().to(torch.int32)
        return flag

    def _irrelevant(self):
        with record_function("irrelevant_gemm"):
            for _ in range(IRR_COUNT):
                torch.matmul(self.irr_a, self.irr_b, out=self.irr_out)

    def _check(self, v):
        self.reads += 1
        if v == -1:
            self.stale_reads += 1
        elif v != 1:
            self.bad_values += 1

    def step_d2h_blocking(self):
        flag = self._flag()
        with record_function("d2h_copy"):
            v = int(flag.item())  # blocking D2H copy + sync
        self._check(v)
        self._irrelevant()

    def step_d2h_nonblocking_nosync(self):
        flag = self._flag()
        with record_function("host_reset"):
            self.pinned.fill_(-1)  # sentinel on the host; a stale read sees -1
        with record_function("d2h_copy"):
            self.pinned.copy_(flag.view(1), non_blocking=True)
        with record_function("host_read"):
            v = int(self.pinned[0])  # no synchronization: may be stale
        self._check(v)
        self._irrelevant()

    def step_d2h_nonblocking_event(self):
        flag = self._flag()
        with record_function("host_reset"):
            self.pinned.fill_(-1)
        with record_function("d2h_copy"):
            self.pinned.copy_(flag.view(1), non_blocking=True)
            self.event.record()
        self._irrelevant()
        with record_function("event_sync"):
            self.event.synchronize()
        with record_function("host_read"):
            v = int(self.pinned[0])
        self._check(v)


def versions():
    info = {
        "torch": torch.__version__,
        "cuda_runtime": torch.version.cuda,
        "nccl": ".".join(str(x) for x in torch.cuda.nccl.version()),
        "gpu": torch.cuda.get_device_name(0),
        "gpu_capability": list(torch.cuda.get_device_capability(0)),
        "python": platform.python_version(),
    }
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
        info["nvidia_smi"] = out
        if out:
            info["driver"] = out[0].split(",")[-1].strip()
    except Exception as e:  # noqa: BLE001
        info["nvidia_smi_error"] = repr(e)
    return info


def time_scenario(sc, warmup, iters):
    """Median iteration time (ms) with CUDA events between back-to-back iterations."""
    for _ in range(warmup):
        sc.step()
    torch.cuda.synchronize()
    dist.barrier()
    torch.cuda.synchronize()
    evs = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    t0 = time.perf_counter()
    evs[0].record()
    for i in range(iters):
        sc.step()
        evs[i + 1].record()
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) * 1e3
    per = [evs[i].elapsed_time(evs[i + 1]) for i in range(iters)]
    return {
        "iters": iters,
        "warmup_iters": warmup,
        "median_iter_ms": statistics.median(per),
        "min_iter_ms": min(per),
        "max_iter_ms": max(per),
        "per_iter_ms": per,
        "host_wall_total_ms": wall,
        "host_wall_mean_iter_ms": wall / iters,
    }


def profile_scenario(sc, path, exp_cfg):
    os.makedirs(os.path.dirname(path), exist_ok=True)

    def on_ready(p):
        p.export_chrome_trace(path)

    kwargs = dict(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
        record_shapes=True,
        on_trace_ready=on_ready,
    )
    if exp_cfg is not None:
        kwargs["experimental_config"] = exp_cfg
    with torch.profiler.profile(**kwargs) as prof:
        for _ in range(5):
            sc.step()
            prof.step()
    torch.cuda.synchronize()


def cat_counts(path):
    with open(path) as f:
        doc = json.load(f)
    c = collections.Counter(str(e.get("cat", "<none>")) for e in doc.get("traceEvents", []))
    return dict(sorted(c.items()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--outdir", default="traces")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--no-sync-events", action="store_true",
                    help="do not ask Kineto for cuda_sync events")
    args = ap.parse_args()

    rank, world, dev = init_distributed()

    exp_cfg = None
    if not args.no_sync_events:
        try:
            exp_cfg = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
        except Exception as e:  # noqa: BLE001
            log(rank, "no enable_cuda_sync_events:", repr(e))

    vers = versions() if rank == 0 else None
    if rank == 0:
        log(rank, "versions:", json.dumps(vers))
        log(rank, "world:", world, "sync events:", exp_cfg is not None)

    names = [s for s in args.scenarios.split(",") if s]
    for name in names:
        t_start = time.perf_counter()
        sc = Scenario(name, rank, world, dev)
        tim = time_scenario(sc, args.warmup, args.iters)
        dist.barrier()
        path = os.path.join(args.outdir, name, f"rank{rank}.json")
        profile_scenario(sc, path, exp_cfg)
        dist.barrier()
        log(rank, f"{name}: median {tim['median_iter_ms']:.3f} ms/iter, "
                  f"host {tim['host_wall_mean_iter_ms']:.3f} ms/iter, reads={sc.reads} "
                  f"stale={sc.stale_reads} bad={sc.bad_values}, "
                  f"trace {os.path.getsize(path)} bytes, {time.perf_counter() - t_start:.1f}s")
        if rank == 0:
            rec = {
                "scenario": name,
                "world_size": world,
                "rank": rank,
                "timing": tim,
                "host_reads": sc.reads,
                "stale_reads": sc.stale_reads,
                "bad_values": sc.bad_values,
                "sizes": {
                    "gemm_mkn": [GEMM_M, GEMM_K, GEMM_N],
                    "allgather_elems_per_rank_fp16": AG_ELEMS,
                    "irrelevant_gemm_n": IRR_N,
                    "irrelevant_gemm_count": IRR_COUNT,
                    "a2a_layers": A2A_LAYERS,
                },
                "profiler": {"schedule": "wait=1,warmup=1,active=3", "record_shapes": True,
                             "enable_cuda_sync_events": exp_cfg is not None},
                "versions": vers,
                "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            with open(os.path.join(args.outdir, name, "timings.json"), "w") as f:
                json.dump(rec, f, indent=1)
        del sc
        torch.cuda.empty_cache()

    dist.barrier()
    if rank == 0:
        print("=== event counts by cat ===", flush=True)
        for name in names:
            for r in range(world):
                p = os.path.join(args.outdir, name, f"rank{r}.json")
                try:
                    print(f"{name}/rank{r}.json {os.path.getsize(p)} bytes:",
                          json.dumps(cat_counts(p)), flush=True)
                except Exception as e:  # noqa: BLE001
                    print(f"{name}/rank{r}.json: ERROR {e!r}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
