#!/usr/bin/env python3
"""Real PyTorch programs of ../shared/BACKGROUND.md, traced by torch.profiler, for the diagnosis
(cross-stream waits, the dependency graph, findings) and replay checks.

Run with one GPU per rank, NCCL, NVLink multicast off:

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
    PYTHONUNBUFFERED=1 torchrun --nproc_per_node=4 tools/torch_traces/diagnosis_traces.py \
        --outdir /tmp/diag [--sync-events]

Scenarios (per profiled step):
- dtensor_a2a_eager / dtensor_a2a_compiled: BACKGROUND 4. Four layers of a row-sharded DTensor
  matmul whose output is resharded with `redistribute(..., [Shard(1)], async_op=True)` (an
  all_to_all), an independent local matmul written after it (what the user hoped would overlap),
  then the reshard back; eager, and the same function under torch.compile.
- fsdp2 / fsdp2_straggler: a stack of bf16 Linear+GELU blocks, each `fully_shard`ed, AdamW;
  forward, backward, step. In fsdp2_straggler the last rank also runs host-side preprocessing
  (CPU tensor ops inside record_function("data_prep")) every step: a host-bound straggler.
- mm_ag_sequential / mm_ag_overlap: BACKGROUND 3 at the seed's sizes: an 8192^3 fp16 GEMM and
  an all-gather of 64 MiB input per rank, all-gather synchronous then GEMM, or async + GEMM + wait.

The profiler runs with its defaults (activities CPU+CUDA, no record_shapes), schedule wait=1,
warmup=1, active=4; `--sync-events` adds _ExperimentalConfig(enable_cuda_sync_events=True).
Un-profiled iterations are timed with CUDA events first (median), written by rank 0 to
<outdir>/<scenario>/timings.json. Trace contents are whatever Kineto writes.
"""

import argparse
import json
import os
import statistics
import sys
import time
import traceback

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, record_function

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_traces import cat_counts, init_distributed, log, versions  # noqa: E402

SCENARIOS = ["dtensor_a2a_eager", "dtensor_a2a_compiled", "fsdp2", "fsdp2_straggler",
             "mm_ag_sequential", "mm_ag_overlap"]
A2A_M, A2A_K, A2A_LAYERS = 8192, 4096, 4
FSDP_DIM, FSDP_LAYERS, FSDP_BATCH = 4096, 8, 8192
MM_N = 8192
AG_ELEMS = 32 * 1024 * 1024  # fp16: 64 MiB per rank


class DTensorA2A:
    def __init__(self, rank, world, dev, compiled):
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import Replicate, Shard, distribute_tensor
        self.Shard = Shard
        self.mesh = init_device_mesh("cuda", (world,))
        g = torch.Generator(device=dev)
        g.manual_seed(7)
        h = torch.float16

        def rnd(*s):
            return torch.randn(*s, device=dev, dtype=h, generator=g) * 0.02
        self.x = distribute_tensor(rnd(A2A_M, A2A_K), self.mesh, [Shard(0)])
        self.ws = [distribute_tensor(rnd(A2A_K, A2A_K), self.mesh, [Replicate()])
                   for _ in range(A2A_LAYERS)]
        self.side_a = rnd(A2A_M // world, A2A_K)
        self.side_b = rnd(A2A_K, A2A_K)
        self.fn = torch.compile(self._layers) if compiled else self._layers

    def _layers(self, x, ws, side_a, side_b):
        Shard = self.Shard
        side = None
        for w in ws:
            y = x @ w                                                        # Shard(0)
            z = y.redistribute(self.mesh, [Shard(1)], async_op=True)       # all_to_all
            side = side_a @ side_b                                           # independent work
            x = z.redistribute(self.mesh, [Shard(0)], async_op=True)       # all_to_all back
        return x, side

    def step(self):
        with record_function("a2a_layers"):
            out, side = self.fn(self.x, self.ws, self.side_a, self.side_b)
            self.last = out.to_local().sum() + side.sum()


class Fsdp2:
    def __init__(self, rank, world, dev, straggler):
        from torch.distributed.fsdp import fully_shard
        torch.manual_seed(11)
        blocks = [torch.nn.Sequential(torch.nn.Linear(FSDP_DIM, FSDP_DIM), torch.nn.GELU())
                  for _ in range(FSDP_LAYERS)]
        self.model = torch.nn.Sequential(*blocks).to(device=dev, dtype=torch.bfloat16)
        for b in self.model:
            fully_shard(b)
        fully_shard(self.model)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4, foreach=True)
        g = torch.Generator(device=dev)
        g.manual_seed(100 + rank)
        self.inp = torch.randn(FSDP_BATCH // world, FSDP_DIM, device=dev, dtype=torch.bfloat16,
                               generator=g)
        self.slow = straggler and rank == world - 1
        self.cpu = torch.randn(1 << 21)

    def step(self):
        if self.slow:
            with record_function("data_prep"):
                for _ in range(6):  # host-side preprocessing: ~10-30 ms of CPU ops
                    self.cpu = torch.sort(self.cpu + 0.5).values
        with record_function("forward"):
            out = self.model(self.inp)
            loss = out.float().pow(2).mean()
        with record_function("backward"):
            loss.backward()
        with record_function("optimizer"):
            self.opt.step()
            self.opt.zero_grad(set_to_none=True)


class MmAg:
    def __init__(self, rank, world, dev, overlap):
        g = torch.Generator(device=dev)
        g.manual_seed(3 + rank)
        h = torch.float16
        self.a = torch.randn(MM_N, MM_N, device=dev, dtype=h, generator=g)
        self.b = torch.randn(MM_N, MM_N, device=dev, dtype=h, generator=g)
        self.c = torch.empty(MM_N, MM_N, device=dev, dtype=h)
        self.ag_in = torch.randn(AG_ELEMS, device=dev, dtype=h, generator=g)
        self.ag_out = torch.empty(AG_ELEMS * world, device=dev, dtype=h)
        self.overlap = overlap

    def step(self):
        if self.overlap:
            with record_function("allgather"):
                work = dist.all_gather_into_tensor(self.ag_out, self.ag_in, async_op=True)
            with record_function("gemm"):
                torch.matmul(self.a, self.b, out=self.c)
            with record_function("allgather_wait"):
                work.wait()
        else:
            with record_function("allgather"):
                dist.all_gather_into_tensor(self.ag_out, self.ag_in, async_op=False)
            with record_function("gemm"):
                torch.matmul(self.a, self.b, out=self.c)


def make(name, rank, world, dev):
    if name.startswith("dtensor_a2a"):
        return DTensorA2A(rank, world, dev, compiled=name.endswith("compiled"))
    if name.startswith("fsdp2"):
        return Fsdp2(rank, world, dev, straggler=name.endswith("straggler"))
    if name.startswith("mm_ag"):
        return MmAg(rank, world, dev, overlap=name.endswith("overlap"))
    raise ValueError(name)


def timed(sc, warmup, iters):
    for _ in range(warmup):
        sc.step()
    torch.cuda.synchronize()
    dist.barrier()
    evs = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    evs[0].record()
    for i in range(iters):
        sc.step()
        evs[i + 1].record()
    torch.cuda.synchronize()
    per = [evs[i].elapsed_time(evs[i + 1]) for i in range(iters)]
    return {"iters": iters, "median_iter_ms": statistics.median(per), "min_iter_ms": min(per),
            "max_iter_ms": max(per), "per_iter_ms": per}


def profiled(sc, path, exp_cfg):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    kw = dict(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
              schedule=torch.profiler.schedule(wait=1, warmup=1, active=4),
              on_trace_ready=lambda p: p.export_chrome_trace(path))
    if exp_cfg is not None:
        kw["experimental_config"] = exp_cfg
    with torch.profiler.profile(**kw) as prof:
        for _ in range(6):
            sc.step()
            prof.step()
    torch.cuda.synchronize()


def captured(sc):
    """The profiled steps without torch.profiler, for a capture by `overlapscope profile
    --capture-range=cudaProfilerApi` (CUPTI records the event of every cudaEventRecord and
    cudaStreamWaitEvent: the recorded cross-stream waits the inference is checked against).
    Each step is an NVTX range ProfilerStep#N, the name torch.profiler gives its steps."""
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for i in range(4):
        torch.cuda.nvtx.range_push(f"ProfilerStep#{i}")
        sc.step()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--outdir", default="diag")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--sync-events", action="store_true")
    ap.add_argument("--no-profiler", action="store_true",
                    help="run the profiled steps without torch.profiler, between "
                         "cudaProfilerStart/Stop, for `overlapscope profile "
                         "--capture-range=cudaProfilerApi`")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10)
    args = ap.parse_args()
    rank, world, dev = init_distributed()
    exp_cfg = None
    if args.sync_events:
        exp_cfg = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    vers = versions() if rank == 0 else None
    names = [s for s in args.scenarios.split(",") if s]
    for name in names:
        t0 = time.perf_counter()
        path = os.path.join(args.outdir, name, f"rank{rank}.json")
        try:
            sc = make(name, rank, world, dev)
            tim = timed(sc, args.warmup, args.iters)
            dist.barrier()
            if args.no_profiler:
                captured(sc)
            else:
                profiled(sc, path, exp_cfg)
            dist.barrier()
        except Exception:  # noqa: BLE001  one scenario failing must not stop the others
            log(rank, f"{name}: FAILED\n{traceback.format_exc()}")
            dist.barrier()
            continue
        size = os.path.getsize(path) if os.path.exists(path) else 0
        log(rank, f"{name}: median {tim['median_iter_ms']:.3f} ms/iter "
                  f"(min {tim['min_iter_ms']:.3f}), trace {size} bytes, "
                  f"{time.perf_counter() - t0:.1f}s")
        if rank == 0:
            os.makedirs(os.path.join(args.outdir, name), exist_ok=True)
            rec = {"scenario": name, "world_size": world, "timing": tim, "versions": vers,
                   "profiler": ({"capture": "overlapscope profile, cudaProfilerApi range, 4 steps"}
                                if args.no_profiler else
                                {"schedule": "wait=1,warmup=1,active=4",
                                 "enable_cuda_sync_events": exp_cfg is not None}),
                   "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            with open(os.path.join(args.outdir, name, "timings.json"), "w") as f:
                json.dump(rec, f, indent=1)
        del sc
        torch.cuda.empty_cache()
    dist.barrier()
    if rank == 0:
        for name in names:
            for r in range(world):
                p = os.path.join(args.outdir, name, f"rank{r}.json")
                if os.path.exists(p):
                    print(f"{name}/rank{r}.json {os.path.getsize(p)} bytes:",
                          json.dumps(cat_counts(p)), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
