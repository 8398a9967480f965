"""GPU-machine check of the Python package (needs torch with CUDA and one GPU):

  python3 tools/python_gpu_check.py hook OUT_DIR      a torch.profiler loop (small model, a
                                                      schedule of 2 cycles) with
                                                      overlapscope.torch.on_trace_ready
  python3 tools/python_gpu_check.py profile OUT_DIR   overlapscope.profile() around CUDA work
  python3 tools/python_gpu_check.py both OUT_DIR      profile() right after a torch.profiler run
                                                      in the same process (Kineto still holds
                                                      CUPTI's callback subscriber): same checks

With PYTHONPATH=<build>/python (or the package installed). In `hook`, a one-rank NCCL process
group (when it can be created) runs an all-reduce on a side stream beside the matmuls, so the
trace has communication to overlap.

Every expectation prints "ok: ..." or "FAIL: ..."; the last line is "python_gpu_check MODE: PASS"
(exit 0) or "python_gpu_check MODE: FAIL (N of M expectations)" (exit 1). A crash of the process
(the reason the torch hook defers its exceptions) shows as a missing last line and a signal exit
code; faulthandler prints where it happened.
"""

import os
import sys

import torch

import overlapscope
import overlapscope.torch

RESULTS = []  # (passed, what)


def expect(passed, what):
    """Records and prints one expectation."""
    RESULTS.append((bool(passed), what))
    print("%s: %s" % ("ok" if passed else "FAIL", what))
    return bool(passed)


def model_and_data():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096)).cuda()
    return model, torch.randn(512, 4096, device="cuda"), torch.optim.SGD(model.parameters(), lr=1e-3)


def nccl_group():
    """A one-rank NCCL process group, or None (printed why)."""
    try:
        import torch.distributed as dist
        os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29531", rank=0, world_size=1,
                                device_id=torch.device("cuda:0"))
        return dist
    except Exception as e:  # the check goes on without communication
        print("no NCCL process group (%s): compute only" % e)
        return None


def train(prof, steps, dist):
    model, x, opt = model_and_data()
    side = torch.cuda.Stream()
    grad_buf = torch.zeros(16 << 20, device="cuda")
    for _ in range(steps):
        loss = model(x).pow(2).mean()
        loss.backward()
        if dist is not None:
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                dist.all_reduce(grad_buf)  # overlaps the next step's matmuls
        opt.step()
        opt.zero_grad()
        prof.step()
    torch.cuda.synchronize()


def hook(out):
    dist = nccl_group()
    handler = overlapscope.torch.on_trace_ready(out, require=["overlap_ratio>=0.5", "blocked_share<=0.5"],
                                                trace=True, on_fail="log")
    sched = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=2)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, schedule=sched, on_trace_ready=handler) as prof:
        train(prof, 12, dist)
    print("cycles analyzed: %d" % len(handler.history))
    for e in handler.history:
        print("  step %s: %s (%d bytes), %s (%d bytes), gates %s" %
              (e["step"], os.path.basename(e["trace"]), os.path.getsize(e["trace"]), os.path.basename(e["pftrace"]),
               os.path.getsize(e["pftrace"]), "passed" if e["passed"] else "FAILED"))
    expect(len(handler.history) == 2, "2 profiling cycles analyzed (schedule active=3, repeat=2)")
    for e in handler.history:
        expect(os.path.getsize(e["trace"]) > 0 and os.path.getsize(e["pftrace"]) > 0,
               "step %s: Kineto trace and .pftrace written" % e["step"])
    r = handler.report
    s = r.ranks[0].summary
    print("last cycle: comm_ns=%s exposed_comm_ns=%s overlap_ratio=%s compute_ns=%s gpu_idle_share=%.4f" %
          (s.comm_ns, s.exposed_comm_ns, s.overlap_ratio, s.compute_ns, s.gpu_idle_share))
    expect(len(r.ranks) == 1 and s.compute_ns > 0, "last cycle: one rank with compute time")
    if dist is not None and dist.get_world_size() > 1:
        expect(s.comm_ns > 0 and s.overlap_ratio is not None, "last cycle: the all-reduce is communication")
    elif dist is not None:
        # NCCL runs an in-place all-reduce of one rank as a no-op (no kernel, no copy): the trace
        # has no communication, and the report must say so rather than print an overlap.
        expect(s.comm_ns == 0 and s.overlap_ratio is None,
               "last cycle: a one-rank all-reduce launches nothing; no communication, overlap_ratio null")
    # The same file analyzed again from disk gives the same report.
    expect(overlapscope.analyze(handler.history[-1]["trace"]).to_dict() == r.to_dict(),
           "the last cycle's trace analyzed from disk gives the same report")
    strict_gates(out, acts)
    if dist is not None:
        dist.destroy_process_group()


def strict_gates(out, acts):
    """on_fail="raise" with a gate that cannot hold: GateError out of the profiler, from the step
    after a scheduled cycle, and from the end of the `with` block without a schedule."""
    # Scheduled: the cycle ends in the 2nd step(), the failure comes out of the 3rd (2 steps done);
    # unscheduled: torch calls on_trace_ready in stop(), at the end of the block (4 steps done).
    for name, sched, steps_expected in (("scheduled", torch.profiler.schedule(wait=0, warmup=1, active=1), 2),
                                        ("unscheduled", None, 4)):
        strict = overlapscope.torch.on_trace_ready(os.path.join(out, name), require="gpu_idle_share<=0",
                                                   print_summary=False)
        steps_done = 0
        try:
            with torch.profiler.profile(activities=acts, schedule=sched, on_trace_ready=strict) as prof:
                model, x, _ = model_and_data()
                for _ in range(4):
                    model(x).sum().item()
                    prof.step()
                    steps_done += 1
            expect(False, "%s strict gate: GateError (none was raised)" % name)
        except overlapscope.GateError as e:
            print("%s strict gate: GateError after %d steps: %s" % (name, steps_done, e))
            expect(steps_done == steps_expected,
                   "%s strict gate: GateError after %d steps (%d)" % (name, steps_expected, steps_done))
        # The profiler is usable after the failure: a new one in the same process records.
        with torch.profiler.profile(activities=acts) as prof:
            torch.randn(256, 256, device="cuda").sum().item()
        again = os.path.join(out, name, "after.json")
        prof.export_chrome_trace(again)
        expect(overlapscope.analyze(again).ranks[0].summary.compute_ns > 0,
               "%s strict gate: torch.profiler records kernels again afterwards" % name)


def profile(out):
    print("capture available: %s; library %s" % (overlapscope.capture_available(), overlapscope.library_version()))
    if not expect(overlapscope.capture_available(), "this build captures in-process"):
        return
    a = torch.randn(4096, 4096, device="cuda")
    b = torch.empty(4096, 4096, device="cuda")
    torch.cuda.synchronize()
    with overlapscope.profile(require=["blocked_share<=0.99"]) as p:
        for _ in range(5):
            torch.matmul(a, a, out=b)
        host = b.cpu()  # a blocking device-to-host copy
        pinned = torch.empty(4096, 4096, pin_memory=True)
        pinned.copy_(b, non_blocking=True)
        torch.cuda.synchronize()
    r = p.report
    print(r.summary_text())
    s = r.ranks[0].summary
    print("kernels: %s" % [(k.name[:40], k.count) for k in r.top_kernels])
    print("summary: compute_ns=%s blocked_ns=%s findings=%s gpu_idle_share=%.4f" %
          (s.compute_ns, s.blocked_ns, s.findings, s.gpu_idle_share))
    print("info:\n" + r.info())
    written = r.export(os.path.join(out, "capture.pftrace"))
    print("export: %s" % written)
    gemm = sum(k.count for k in r.top_kernels if k.kind == "kernel" and "gemm" in k.name.lower())
    expect(gemm >= 5, "the 5 matmuls' kernels were captured (%d gemm kernels)" % gemm)
    expect(s.compute_ns > 0 and s.blocked_ns > 0, "compute time and host blocking (b.cpu()) measured")
    expect(written["format"] == "perfetto" and os.path.getsize(written["files"][0]) > 0, "Perfetto export written")
    expect(host.shape == (4096, 4096), "the work's result is intact")


def both(out):
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        torch.randn(1024, 1024, device="cuda").sum().item()
    prof.export_chrome_trace(os.path.join(out, "before.json"))
    # torch.profiler (Kineto) keeps CUPTI's one callback subscriber after its session (unless
    # TEARDOWN_CUPTI=1): the capture then records API calls from activity records. The whole
    # profile() check must pass: kernels, host blocking, export.
    profile(out)
    print("profile() after torch.profiler in the same process: captured")


if __name__ == "__main__":
    import faulthandler
    faulthandler.enable()  # a crash prints where it happened
    sys.stdout.reconfigure(line_buffering=True)
    mode, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    {"hook": hook, "profile": profile, "both": both}[mode](out)
    failed = sum(1 for passed, _ in RESULTS if not passed)
    if failed:
        print("python_gpu_check %s: FAIL (%d of %d expectations)" % (mode, failed, len(RESULTS)))
        sys.exit(1)
    print("python_gpu_check %s: PASS (%d expectations)" % (mode, len(RESULTS)))
