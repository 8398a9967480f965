#!/usr/bin/env python3
"""PyTorch phases of the capture benchmark (bench/capture_overhead/run_bench.py).

  torch_phases.py phases [--steps N] [--torchprof TRACE.json] [--only PHASE,...]
      Runs each phase (after warm-up) N times and prints one line per phase:
        PHASE <name> steps=<N> min_ms=<x> median_ms=<y>
      A step is timed from an idle GPU to torch.cuda.synchronize() after it. The measured steps of
      each phase lie inside an NVTX range and a record_function range "phase:<name>", so a capture
      and a torch.profiler trace can be cut into phases the same way. --torchprof: the measured
      steps run under torch.profiler (CPU + CUDA activities) and the trace is written to the file.
  torch_phases.py range profiler|nvtx [--steps 1000] [--first 500] [--count 10]
      A loop of small steps (10 elementwise kernels each); steps FIRST..FIRST+COUNT-1 lie inside
      torch.cuda.profiler.start()/stop() (profiler) or an NVTX range "capture" (nvtx).
      Prints: RANGE steps=.. first=.. count=.. kernels_per_step=10

Phases: train (4-layer transformer encoder, AdamW), graph (CUDA-graph replay of a small MLP),
tiny (400 tiny elementwise ops), nccl1 (all_reduce of 1 MiB on a one-rank NCCL group: what a
capture costs per collective; a single GPU moves no data between ranks).
"""
import argparse
import contextlib
import os
import statistics
import sys
import time


def build_phases(torch, only):
    phases = {}
    dev = "cuda"

    def want(n):  # build only what runs
        return only is None or n in only
    if want("train"):
        phases["train"] = train_phase(torch, dev)
    if want("graph"):
        phases["graph"] = graph_phase(torch, dev)
    if want("tiny"):
        phases["tiny"] = tiny_phase(torch, dev)
    return phases


def train_phase(torch, dev):
    # 4 encoder layers (d_model 512, 8 heads, ff 2048), batch 16 x 256 tokens, AdamW.
    layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(16, 256, 512, device=dev)

    def train():
        opt.zero_grad(set_to_none=True)
        loss = model(x).square().mean()
        loss.backward()
        opt.step()

    return train


def graph_phase(torch, dev):
    # One CUDA graph of an 8-layer MLP forward (256 x 1024), replayed.
    mlp = torch.nn.Sequential(*[m for _ in range(8) for m in (torch.nn.Linear(1024, 1024), torch.nn.ReLU())]).to(dev)
    gx = torch.randn(256, 1024, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(3):
            mlp(gx)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        gy = mlp(gx)

    def replay():
        for _ in range(10):
            graph.replay()
        return gy

    return replay


def tiny_phase(torch, dev):
    # 400 elementwise ops on 1024 floats (launch-bound).
    t = torch.ones(1024, device=dev)

    def tiny():
        y = t
        for _ in range(400):
            y = y * 1.0001
        return y

    return tiny


def nccl_phase(torch):
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
    store = dist.HashStore()
    dist.init_process_group("nccl", store=store, rank=0, world_size=1, device_id=torch.device("cuda:0"))
    buf = torch.ones(1 << 18, device="cuda")  # 1 MiB

    def allreduce():
        for _ in range(50):
            dist.all_reduce(buf)

    return allreduce, dist


def timed_steps(torch, fn, steps):
    out = []
    for _ in range(steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def run_phases(args):
    import torch
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = True
    only = set(args.only.split(",")) if args.only else None
    phases = build_phases(torch, only)
    dist = None
    if only is None or "nccl1" in only:
        try:
            phases["nccl1"], dist = nccl_phase(torch)
        except Exception as e:  # no NCCL in this torch build: say so, run the rest
            print(f"PHASE nccl1 SKIPPED {type(e).__name__}: {e}", flush=True)
    names = [n for n in phases if only is None or n in only]
    for n in names:  # warm-up: lazy module loading, cuBLAS heuristics, allocator, NCCL channels
        for _ in range(3):
            phases[n]()
    torch.cuda.synchronize()
    prof = contextlib.nullcontext()
    if args.torchprof:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    results = {}
    with prof as p:
        for n in names:
            torch.cuda.nvtx.range_push(f"phase:{n}")
            with torch.autograd.profiler.record_function(f"phase:{n}"):
                results[n] = timed_steps(torch, phases[n], args.steps)
            torch.cuda.nvtx.range_pop()
    if args.torchprof:
        p.export_chrome_trace(args.torchprof)
    for n in names:
        v = results[n]
        print(f"PHASE {n} steps={len(v)} min_ms={min(v):.4f} median_ms={statistics.median(v):.4f}", flush=True)
    if dist is not None:
        dist.destroy_process_group()


def run_range(args):
    import torch
    t = torch.ones(1024, device="cuda")
    per_step = 10

    def step():
        y = t
        for _ in range(per_step):
            y = y + 1.0
        return y

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    last = args.first + args.count - 1
    for i in range(args.steps):
        if i == args.first:
            if args.kind == "profiler":
                torch.cuda.profiler.start()
            else:
                torch.cuda.nvtx.range_push("capture")
        step()
        torch.cuda.synchronize()
        if i == last:
            if args.kind == "profiler":
                torch.cuda.profiler.stop()
            else:
                torch.cuda.nvtx.range_pop()
    print(f"RANGE steps={args.steps} first={args.first} count={args.count} kernels_per_step={per_step}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="mode", required=True)
    ph = sub.add_parser("phases")
    ph.add_argument("--steps", type=int, default=8)
    ph.add_argument("--torchprof", default="")
    ph.add_argument("--only", default="")
    rg = sub.add_parser("range")
    rg.add_argument("kind", choices=["profiler", "nvtx"])
    rg.add_argument("--steps", type=int, default=1000)
    rg.add_argument("--first", type=int, default=500)
    rg.add_argument("--count", type=int, default=10)
    args = ap.parse_args()
    if args.mode == "phases":
        run_phases(args)
    else:
        run_range(args)


if __name__ == "__main__":
    sys.exit(main())
