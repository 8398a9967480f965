#!/usr/bin/env python3
"""overlapscope.torch's job report in a real torch.distributed job (README "Python").

    torchrun --nproc_per_node 2 tools/torch_job_check.py            # 2 GPUs, NCCL
    torchrun --nproc_per_node 4 tools/torch_job_check.py            # 4 GPUs, NCCL
    torchrun --nproc_per_node 4 tools/torch_job_check.py --backend gloo   # CPU only: the plumbing

Every rank trains a small model (matmuls, then an all_reduce of its gradient-sized buffer per
step); the last rank is a host-bound straggler (sleeps --delay-ms before its all_reduce each
step). Each rank profiles 2 cycles with overlapscope.torch.on_trace_ready (job mode) and the gate
"overlap_ratio>=0" (every rank has the figure, or no communication). Rank 0 checks, on every
cycle's job report (handler.job):
  - one row per rank, in rank order; the printed overview names the job's rank count;
  - NCCL (GPU): the straggler arrives last in the most collectives (collective_times_last) and
    waits least; with 3 or more ranks it is in "stand out" and no other rank is;
  - the gates were checked on every rank of the job (one check per rank);
and every other rank printed one line. Prints "PASS" or "FAIL: why" on rank 0; exit 0 / 1.
Needs PYTHONPATH=<build>/python (the overlapscope package with libovscope.so) and torch.
"""

import argparse
import io
import os
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    ap.add_argument("--delay-ms", type=float, default=20.0)
    ap.add_argument("--out", default=None, help="trace directory (default: a temporary one)")
    args = ap.parse_args()

    import torch
    import torch.distributed as dist
    import overlapscope.torch as ovs_torch

    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    gpu = args.backend == "nccl"
    if gpu:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    device = torch.device("cuda") if gpu else torch.device("cpu")
    straggler = world - 1
    out_dir = args.out or tempfile.mkdtemp(prefix="ovs_job_")
    printed = io.StringIO()
    handler = ovs_torch.on_trace_ready(os.path.join(out_dir, "rank%d" % rank), require=["collective_times_last>=0"],
                                       on_fail="log", file=printed, worker_name="rank%d" % rank)
    a = torch.randn(1024 if gpu else 128, 1024 if gpu else 128, device=device)
    grad = torch.randn(8 << 20 if gpu else 1 << 16, device=device)
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if gpu else [])
    reports = []
    with torch.profiler.profile(activities=activities,
                                schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=2),
                                on_trace_ready=handler) as prof:
        for _ in range(12):
            for _ in range(4):
                a = torch.tanh(a @ a)
            if rank == straggler:
                if gpu:
                    torch.cuda.synchronize()
                time.sleep(args.delay_ms / 1000.0)
            dist.all_reduce(grad)
            if gpu:
                torch.cuda.synchronize()
            prof.step()
            if rank == 0 and handler.job is not None and (not reports or reports[-1][0] is not handler.job):
                reports.append((handler.job, handler.job.to_dict(), handler.history[-1]))
    if rank == 0 and handler.job is not None and (not reports or reports[-1][0] is not handler.job):
        reports.append((handler.job, handler.job.to_dict(), handler.history[-1]))

    lines = printed.getvalue()
    problems = []
    if rank == 0:
        if not reports:
            problems.append("no job report on rank 0 (printed: %r)" % lines[:500])
        for _, doc, entry in reports:
            ranks = [r["rank"] for r in doc["ranks"]]
            if ranks != list(range(world)):
                problems.append("ranks %s, not 0..%d in order" % (ranks, world - 1))
            if not entry.get("passed"):
                problems.append("the job's gates failed: %s" % entry.get("gates"))
            if len(entry.get("gates", [])) != world:
                problems.append("%d gate checks, expected one per rank" % len(entry.get("gates", [])))
            if gpu:
                s = [r["summary"] for r in doc["ranks"]]
                last = [x["collective_times_last"] for x in s]
                wait = [x["collective_wait_ns"] for x in s]
                if last[straggler] != max(last) or last[straggler] == 0:
                    problems.append("times last %s: rank %d should be last most often" % (last, straggler))
                if wait[straggler] != min(wait):
                    problems.append("collective wait %s: rank %d should wait least" % (wait, straggler))
                if world >= 3:
                    named = sorted(x["rank"] for x in doc["job_overview"]["stand_out"])
                    if named != [straggler]:
                        problems.append("stand out: %s, expected [%d]" % (named, straggler))
        if "== job overview: %d ranks ==" % world not in lines:
            problems.append("the job overview was not printed on rank 0")
        sys.stdout.write(lines)
    elif "(job overview on rank 0)" not in lines or lines.count("\n") != len(handler.history):
        problems.append("rank %d printed %r, expected one line per cycle" % (rank, lines[:300]))
    verdicts = [None] * world if rank == 0 else None
    dist.gather_object(problems, verdicts, dst=0)
    ok = True
    if rank == 0:
        for r, p in enumerate(verdicts):
            for line in p:
                print("FAIL: rank %d: %s" % (r, line))
                ok = False
        print("PASS" if ok else "FAIL", "(%d ranks, %s, %d job reports)" % (world, args.backend, len(reports)))
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
