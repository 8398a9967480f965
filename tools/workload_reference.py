#!/usr/bin/env python3
"""The work of `overlapscope run`'s workloads written the way PyTorch users write it.

Run it on the same machine, in the same call, as `overlapscope run`, and compare row by row
(docs/RESULTS.md):

    torchrun --nproc_per_node=N tools/workload_reference.py [--workloads mm-ag,a2a,ar] --out ref.json

Workloads (same shapes and sizes as the built-in ones, inputs from torch.randn):
  mm-ag: C = A @ B (8192^3 fp16) and all_gather_into_tensor of 64 MiB per rank. Rows: GEMM alone,
         all-gather alone, sequential (matmul, then the all-gather), overlapped (all-gather with
         async_op=True, the matmul, then work.wait()); and GEMM, all-gather and sequential
         LOOP (10) times back to back between one event pair, divided by LOOP ("_loop" rows: the
         GPU busy throughout, as in a training loop and as the workload's own timed phases run);
         "gemm_steady": one GEMM in the second half of the 500 ms burn-in (GEMMs back to back, 8 per
         event pair): the power-capped steady state, which the timed loops with their holds and
         barriers do not reach.
  a2a:   4 layers of Y_l = X @ W_l (8192x2048 @ 2048x8192 fp16), all_to_all_single of Y_l (128 MiB
         per rank), and a consumer of what arrived (z.mul_(0.5): reads and writes every element
         once, like the workload's check-and-poison kernel). Rows: compute alone, communication
         alone, sync (every call blocking), async (async_op=True; layer l's all-to-all overlaps
         layer l+1's matmul; wait() just before the consumer).
  ar:    dist.all_reduce (NCCL, in place) of 0.5 MiB .. 64 MiB bf16, and where PyTorch has them,
         its symmetric-memory one-shot and two-shot all-reduces (torch.ops.symm_mem; no NVLink
         multicast). Each size: an event pair around every all-reduce ("each") and REPS
         back-to-back all-reduces between one pair divided by REPS ("batch").

Timing follows the workload's protocol (docs/RESULTS.md): per iteration all ranks meet at a
barrier, the stream is held by torch.cuda._sleep while the host enqueues the iteration (so the
events time the GPU, not Python's launch cost), the kinds of a workload take turns iteration by
iteration after a 500 ms GEMM burn-in, the figure is the median over iterations, the maximum over
ranks. The SM clock (NVML, every 10 ms during the timed loops) is reported per rank.
Sets NCCL_NVLS_ENABLE=0 and TORCH_SYMM_MEM_DISABLE_MULTICAST=1 unless set.
"""
import argparse
import json
import os
import statistics
import sys
import threading
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

MIB = 1 << 20
HOLD_CYCLES = 4_000_000  # ~2 ms at ~2 GHz: longer than the host needs to enqueue an iteration
LOOP = 10  # calls per event pair of the mm-ag "_loop" rows


class ClockSampler:
    """SM clock of this rank's GPU (NVML) while `active` is set, with the board power and how often
    the SW power cap (reason bit 0x4) held the clock down, as the workload's sampler reports them."""

    def __init__(self, device):
        self.samples, self.active, self.stop = [], False, False
        self.power, self.capped, self.reasons_n = [], 0, 0
        try:
            import pynvml

            pynvml.nvmlInit()
            # NVML counts every GPU of the host; CUDA_VISIBLE_DEVICES renumbers them for CUDA.
            visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
            index = int(visible.split(",")[device]) if visible else device
            self.h = pynvml.nvmlDeviceGetHandleByIndex(index)
            self.nvml = pynvml
        except Exception as e:  # no NVML: no clock
            print(f"[ref] no NVML clock: {e}", file=sys.stderr)
            self.nvml = None
            return
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()

    def loop(self):
        while not self.stop:
            if self.active:
                try:
                    self.samples.append(self.nvml.nvmlDeviceGetClockInfo(self.h, self.nvml.NVML_CLOCK_SM))
                    self.power.append(self.nvml.nvmlDeviceGetPowerUsage(self.h) / 1000.0)
                    reasons = (getattr(self.nvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
                               or self.nvml.nvmlDeviceGetCurrentClocksThrottleReasons)
                    why = reasons(self.h)
                    self.reasons_n += 1
                    self.capped += 1 if why & 0x4 else 0
                except Exception:
                    pass
            time.sleep(0.01)

    def take(self):
        """Median SM clock since the last take(); the power and power-cap share go to `last`."""
        s, self.samples = self.samples, []
        p, self.power = self.power, []
        self.last = {"power_w": statistics.median(p) if p else 0.0,
                     "power_cap_pct": 100.0 * self.capped / self.reasons_n if self.reasons_n else 0.0}
        self.capped = self.reasons_n = 0
        return statistics.median(s) if s else 0.0


def max_over_ranks(values):
    t = torch.tensor(values, dtype=torch.float64, device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.tolist()


def timed_interleaved(kinds, warmup, iters, clock):
    """kinds: {name: fn(ev)} where fn enqueues one iteration and may record named event pairs via
    ev(name) -> (begin, end). Returns {name: median ms} plus {name/pair: median ms}."""
    names = list(kinds)
    samples = {}
    clock.active = True
    for it in range(warmup + iters):
        for name in names:
            pairs = {}

            def ev(pair):
                p = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                pairs.setdefault(pair, []).append(p)
                return p

            dist.barrier()
            torch.cuda.synchronize()
            torch.cuda._sleep(HOLD_CYCLES)
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            kinds[name](ev)
            end.record()
            end.synchronize()
            if it < warmup:
                continue
            samples.setdefault(name, []).append(begin.elapsed_time(end))
            for pair, ps in pairs.items():
                samples.setdefault(f"{name}/{pair}", []).extend(b.elapsed_time(e) for b, e in ps)
    clock.active = False
    keys = sorted(samples)
    med = max_over_ranks([statistics.median(samples[k]) for k in keys])
    return dict(zip(keys, med)), {k: len(samples[k]) for k in keys}


def burn_in(a, b, ms=500):
    """GEMMs back to back for `ms`, as a training loop runs them; returns the median time of one
    GEMM over the second half (ms), timed by an event pair around each chunk of 8: the steady
    state a GPU reaches under its power cap, which the timed loops' barriers and holds (a nearly
    idle GPU for ~2 ms before every timed call) do not reach."""
    t0 = time.time()
    chunks = []
    while (time.time() - t0) * 1000 < ms:
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(8):
            torch.matmul(a, b)
        e1.record()
        chunks.append((e0, e1))
        torch.cuda.synchronize()
    half = chunks[len(chunks) // 2:]
    return statistics.median(e0.elapsed_time(e1) / 8 for e0, e1 in half) if half else 0.0


def _u64(c):
    """A 64-bit constant as the int64 with the same bits (torch has no uint64 arithmetic)."""
    return c - (1 << 64) if c >= 1 << 63 else c


def _shr(x, k):
    """Logical right shift of int64 bit patterns (>> is arithmetic on int64)."""
    return (x >> k) & ((1 << (64 - k)) - 1)


def ovs_normal(seed, count, dtype):
    """The workload's own N(0,1) inputs (workloads/gemm_data.cu: Box-Muller on two 24-bit uniforms of
    a splitmix64 hash of (seed, index / 2)), to tell its data from its program (--inputs ovs).
    int64 products wrap modulo 2^64 on the GPU, as the workload's uint64 ones do."""
    x = torch.arange(count, dtype=torch.int64, device="cuda")
    h = (seed << 40) ^ _shr(x, 1)
    h = h + _u64(0x9E3779B97F4A7C15)
    h = (h ^ _shr(h, 30)) * _u64(0xBF58476D1CE4E5B9)
    h = (h ^ _shr(h, 27)) * _u64(0x94D049BB133111EB)
    h = h ^ _shr(h, 31)
    u1 = (_shr(h, 40) + 1).to(torch.float32) * 2.0**-24
    u2 = (h & 0xFFFFFF).to(torch.float32) * 2.0**-24
    r = torch.sqrt(-2.0 * torch.log(u1))
    ang = 2.0 * torch.pi * u2
    return torch.where((x & 1) == 1, r * torch.sin(ang), r * torch.cos(ang)).to(dtype)


def inputs(args, seed, *shape):
    if args.inputs == "ovs":
        n = 1
        for d in shape:
            n *= d
        return ovs_normal(seed, n, torch.float16).view(*shape)
    return torch.randn(*shape, dtype=torch.float16, device="cuda")


def run_mm_ag(args, clock):
    n = dist.get_world_size()
    a = inputs(args, 11, 8192, 8192)
    b = inputs(args, 12, 8192, 8192)
    c = torch.empty(8192, 8192, dtype=torch.float16, device="cuda")
    inp = torch.randn(args.ag_mb * MIB // 2, dtype=torch.float16, device="cuda")
    out = torch.empty(n * inp.numel(), dtype=torch.float16, device="cuda")
    steady = burn_in(a, b)

    def gemm(ev):
        torch.matmul(a, b, out=c)

    def ag(ev):
        dist.all_gather_into_tensor(out, inp)

    def seq(ev):
        torch.matmul(a, b, out=c)
        dist.all_gather_into_tensor(out, inp)

    def ovl(ev):
        w = dist.all_gather_into_tensor(out, inp, async_op=True)
        g0, g1 = ev("gemm")
        g0.record()
        torch.matmul(a, b, out=c)
        g1.record()
        w.wait()

    def with_backend(name):
        # The same GEMM through one cuBLAS front end (torch.backends.cuda.preferred_blas_library).
        def fn(ev):
            before = torch.backends.cuda.preferred_blas_library()
            torch.backends.cuda.preferred_blas_library(name)
            torch.matmul(a, b, out=c)
            torch.backends.cuda.preferred_blas_library(before)
        return fn

    def loop(fn):
        # LOOP calls back to back between one event pair: the GPU never idles, as in a training
        # loop; the single calls above start after the hold's ~2 ms of a nearly idle GPU, whose
        # power controller has let the clock rise meanwhile.
        def run(ev):
            for _ in range(LOOP):
                fn(ev)
        return run

    kinds = {"gemm_alone": gemm, "allgather_alone": ag, "sequential": seq, "overlap": ovl,
             "gemm_cublas": with_backend("cublas"), "gemm_cublaslt": with_backend("cublaslt"),
             "gemm_loop": loop(gemm), "allgather_loop": loop(ag), "sequential_loop": loop(seq)}
    med, cnt = timed_interleaved(kinds, args.warmup, args.iters, clock)
    for k in ("gemm_loop", "allgather_loop", "sequential_loop"):
        med[k] /= LOOP
    med["gemm_steady"] = max_over_ranks([steady])[0]
    ref = (a.double()[:64] @ b.double()).to(torch.float16)  # spot check of 64 rows
    ok = torch.allclose(c[:64].double(), ref.double(), rtol=2e-3, atol=0.5)
    med["gemm_tflops"] = 2 * 8192**3 / (med["gemm_alone"] * 1e-3) / 1e12
    return {"ms": med, "blas_default": str(torch.backends.cuda.preferred_blas_library()), "samples": cnt, "validated": bool(ok), "sm_clock_mhz": clock.take()}


def run_a2a(args, clock):
    layers = 4
    x = torch.randn(8192, 2048, dtype=torch.float16, device="cuda")
    ws = [torch.randn(2048, 8192, dtype=torch.float16, device="cuda") for _ in range(layers)]
    ys = [torch.empty(8192, 8192, dtype=torch.float16, device="cuda") for _ in range(layers)]
    zs = [torch.empty_like(y) for y in ys]
    burn_in(x, ws[0])

    def compute(ev):
        for l in range(layers):
            torch.matmul(x, ws[l], out=ys[l])
            zs[l].mul_(0.5)

    def matmuls(ev):
        for l in range(layers):
            torch.matmul(x, ws[l], out=ys[l])

    def consumers(ev):
        for l in range(layers):
            zs[l].mul_(0.5)

    def comm(ev):
        for l in range(layers):
            dist.all_to_all_single(zs[l], ys[l])

    def sync(ev):
        for l in range(layers):
            torch.matmul(x, ws[l], out=ys[l])
            dist.all_to_all_single(zs[l], ys[l])
            zs[l].mul_(0.5)

    def asyn(ev):
        works = []
        for l in range(layers):
            torch.matmul(x, ws[l], out=ys[l])
            works.append(dist.all_to_all_single(zs[l], ys[l], async_op=True))
            if l > 0:
                works[l - 1].wait()
                zs[l - 1].mul_(0.5)
        works[-1].wait()
        zs[-1].mul_(0.5)

    kinds = {"compute_alone": compute, "comm_alone": comm, "sync": sync, "async": asyn, "matmuls_only": matmuls,
             "consumers_only": consumers}
    med, cnt = timed_interleaved(kinds, args.warmup, args.iters, clock)
    return {"ms": med, "samples": cnt, "sm_clock_mhz": clock.take()}


def symm_mem_impls(max_bytes):
    """PyTorch's symmetric-memory all-reduces that run without NVLink multicast, or the reason."""
    try:
        import torch.distributed._symmetric_memory as symm_mem

        buf = symm_mem.empty(max_bytes // 2, dtype=torch.bfloat16, device="cuda")
        name = dist.group.WORLD.group_name
        symm_mem.rendezvous(buf, name)
        impls = {}
        if hasattr(torch.ops.symm_mem, "one_shot_all_reduce"):
            impls["torch-symm-one-shot"] = lambda t: torch.ops.symm_mem.one_shot_all_reduce(t, "sum", name)
        if hasattr(torch.ops.symm_mem, "two_shot_all_reduce_"):
            impls["torch-symm-two-shot"] = lambda t: torch.ops.symm_mem.two_shot_all_reduce_(t, "sum", name)
        return buf, impls, ""
    except Exception as e:
        return None, {}, f"{type(e).__name__}: {e}"


def run_ar(args, clock):
    sizes = []
    s = args.ar_min_kib * 1024
    while s <= args.ar_max_mib * MIB:
        sizes.append(s)
        s *= 2
    max_bytes = sizes[-1]
    nccl_buf = torch.randn(max_bytes // 2, dtype=torch.bfloat16, device="cuda")
    symm_buf, symm, symm_err = symm_mem_impls(max_bytes)
    impls = {"nccl": (nccl_buf, lambda t: dist.all_reduce(t))}
    for k, fn in symm.items():
        impls[k] = (symm_buf, fn)
    # First call of each (connections, rendezvous) outside the timing; drop what fails.
    errors = {}
    for k, (buf, fn) in list(impls.items()):
        try:
            for s in sizes:
                fn(buf[: s // 2])
            torch.cuda.synchronize()
        except Exception as e:
            errors[k] = f"{type(e).__name__}: {e}"
            del impls[k]
    ok_all = max_over_ranks([0.0 if errors else 1.0])[0]
    if symm_err:
        errors["torch-symm"] = symm_err
    res = {"sizes": sizes, "each_ms": {}, "batch_ms": {}, "errors": errors}
    for s in sizes:
        kinds = {}
        for k, (buf, fn) in impls.items():
            t = buf[: s // 2]

            def each(ev, fn=fn, t=t):
                for _ in range(args.reps):
                    b, e = ev("ar")
                    b.record()
                    fn(t)
                    e.record()

            def batch(ev, fn=fn, t=t):
                b, e = ev("batch")
                b.record()
                for _ in range(args.reps):
                    fn(t)
                e.record()

            kinds[f"{k}:each"] = each
            kinds[f"{k}:batch"] = batch
        med, cnt = timed_interleaved(kinds, args.warmup, args.ar_iters, clock)
        for k in impls:
            res["each_ms"].setdefault(k, {})[s] = med[f"{k}:each/ar"]
            res["batch_ms"].setdefault(k, {})[s] = med[f"{k}:batch/batch"] / args.reps
        res.setdefault("samples_each", cnt.get("nccl:each/ar"))
    res["sm_clock_mhz"] = clock.take()
    res["ok_all_ranks"] = ok_all
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workloads", default="mm-ag,a2a,ar")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--ar-iters", type=int, default=20)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--ag-mb", type=int, default=64)
    ap.add_argument("--ar-min-kib", type=int, default=512)
    ap.add_argument("--ar-max-mib", type=int, default=64)
    ap.add_argument("--out", default="")
    ap.add_argument("--inputs", choices=["randn", "ovs"], default="randn",
                    help="mm-ag's GEMM inputs: torch.randn, or the workload's own N(0,1) generator")
    args = ap.parse_args()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    clock = ClockSampler(local)
    out = {"world_size": dist.get_world_size(), "torch": torch.__version__,
           "nccl": ".".join(map(str, torch.cuda.nccl.version())), "gpu": torch.cuda.get_device_name(local)}
    todo = {"mm-ag": run_mm_ag, "a2a": run_a2a, "ar": run_ar}
    for w in args.workloads.split(","):
        t0 = time.time()
        out[w] = todo[w](args, clock)
        out[w]["wall_s"] = round(time.time() - t0, 1)
        # Every rank's median SM clock of this workload's timed loops, power and power-cap share.
        last = getattr(clock, "last", {})
        for key, v in (("sm_clock_mhz", out[w].get("sm_clock_mhz", 0)), ("power_w", last.get("power_w", 0)),
                       ("power_cap_pct", last.get("power_cap_pct", 0))):
            t = torch.zeros(dist.get_world_size(), dtype=torch.float64, device="cuda")
            t[dist.get_rank()] = v
            dist.all_reduce(t)
            out[w][key] = t.tolist()
        if dist.get_rank() == 0:
            print(f"[ref] {w}: " + json.dumps(out[w], default=str), flush=True)
    if dist.get_rank() == 0 and args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1, default=str)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
