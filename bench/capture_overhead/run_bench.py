#!/usr/bin/env python3
"""Capture overhead benchmark: what `overlapscope profile` adds to a program, against no
profiler, the CUPTI floor (libbench_cupti_floor.so: kernel/memcpy/memset records only) and
torch.profiler; plus record counts and capture ranges. Run on the GPU machine by
tools/gpu_checks.sh (section capture_bench); figures go to docs/PERFORMANCE.md.

  run_bench.py --bin DIR --out DIR [--rounds 3] [--steps 8] [--loop-iters 2000] [--spin-iters 200]
               [--cap-dir DIR] [--no-torch]

DIR of --bin holds overlapscope, libovscope_inject.so (and the NCCL plugin), known_work,
spill_dump and libbench_cupti_floor.so. Every configuration runs once per round, in an order
rotated each round (interleaved); a phase's figure in one run is the minimum over its steps
(PyTorch phases) or the per-iteration GPU time of the whole loop (known_work); the table shows the
median over rounds and, in brackets, the lowest and highest round.
"""
import argparse
import collections
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_CONFIGS = ["none", "floor", "ovs", "ovs_activity", "ovs_all", "torchprof"]
KW_CONFIGS = ["none", "floor", "ovs", "ovs_activity", "ovs_all", "ovs_armed"]
LABELS = {
    "none": "no profiler",
    "floor": "CUPTI floor (kernels+copies)",
    "ovs": "overlapscope",
    "ovs_activity": "overlapscope, API as activity records",
    "ovs_all": "overlapscope --api=all",
    "ovs_armed": "overlapscope, range never opened",
    "ovs_noapi": "overlapscope, no API",
    "ovs_noapi_nohook": "overlapscope, no API, no runtime callback",
    "ovs_min_nohook": "overlapscope, kernels+copies only, no API, no runtime callback",
    "ovs_minkinds": "overlapscope, kernels+copies + API",
    "ovs_nohook": "overlapscope without the cudaDeviceReset callback",
    "ovs_synccb": "overlapscope, syncs/events from callbacks",
    "ovs_fullkinds": "overlapscope + EXTERNAL_CORRELATION, OVERHEAD kinds",
    "torchprof": "torch.profiler",
}
# Breakdown configurations (--configs): environment of the injection library (inject_main.cc).
CONFIG_ENV = {
    "ovs_activity": {"OVERLAPSCOPE_API_MECHANISM": "activity"},
    "ovs_noapi": {"OVERLAPSCOPE_NO_API": "1"},
    "ovs_noapi_nohook": {"OVERLAPSCOPE_NO_API": "1", "OVERLAPSCOPE_RESET_HOOK": "0"},
    "ovs_min_nohook": {"OVERLAPSCOPE_NO_API": "1", "OVERLAPSCOPE_RESET_HOOK": "0", "OVERLAPSCOPE_KINDS": "min"},
    "ovs_minkinds": {"OVERLAPSCOPE_KINDS": "min"},
    "ovs_nohook": {"OVERLAPSCOPE_RESET_HOOK": "0"},
    "ovs_synccb": {"OVERLAPSCOPE_SYNC_RECORDS": "callbacks"},
    "ovs_fullkinds": {"OVERLAPSCOPE_KINDS": "full"},
}
PHASE_LABELS = {
    "train": "train step (4-layer transformer, AdamW)",
    "graph": "CUDA-graph replays (10 per step)",
    "tiny": "400 tiny elementwise ops",
    "nccl1": "NCCL all_reduce x50, 1 rank",
    "LOOP": "known_work loop (20 tiny kernels/iter)",
    "LOOP_SPIN": "known_work loop_spin (20 x ~20 us kernels/iter)",
}
LAUNCH_BOUND = {"train", "tiny"}


class Bench:
    def __init__(self, a):
        self.a = a
        self.bin = os.path.abspath(a.bin)
        self.out = os.path.abspath(a.out)
        self.cap = os.path.abspath(a.cap_dir or os.path.join(self.out, "cap"))  # captures and traces (large)
        self.ovs = os.path.join(self.bin, "overlapscope")
        self.floor = os.path.join(self.bin, "libbench_cupti_floor.so")
        self.values = collections.defaultdict(lambda: collections.defaultdict(dict))  # phase -> cfg -> round -> ms
        self.runs = 0
        chosen = a.configs.split(",") if a.configs else None
        self.torch_configs = a.torch_configs.split(",") if a.torch_configs else (chosen or TORCH_CONFIGS)
        self.kw_configs = [c for c in (a.kw_configs.split(",") if a.kw_configs else (chosen or KW_CONFIGS))
                           if c != "torchprof"]
        os.makedirs(os.path.join(self.out, "logs"), exist_ok=True)

    def run(self, tag, cfg, cmd, cap_dir=None):
        """Runs cmd under configuration cfg; returns its stdout (the program's lines)."""
        env = dict(os.environ)
        full = list(cmd)
        if cfg == "floor":
            env["CUDA_INJECTION64_PATH"] = self.floor
            env["BENCH_FLOOR_OUT"] = cap_dir
            os.makedirs(cap_dir, exist_ok=True)
        elif cfg.startswith("ovs"):
            opts = {"ovs_all": ["--api=all"], "ovs_armed": ["--capture-range=cudaProfilerApi"]}.get(cfg, [])
            env.update(CONFIG_ENV.get(cfg, {}))
            full = [self.ovs, "profile", "-o", cap_dir] + opts + ["--"] + full
        if self.a.cpus:
            full = ["taskset", "-c", self.a.cpus] + full
        self.runs += 1
        log = os.path.join(self.out, "logs", f"{tag}.{cfg}.log")
        t0 = time.time()
        p = subprocess.run(full, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        with open(log, "w") as f:
            f.write(f"$ {' '.join(full)}\n(exit {p.returncode}, {time.time() - t0:.1f} s)\n{p.stdout}")
        if p.returncode != 0:
            print(f"  FAIL {tag} under {cfg}: exit {p.returncode} (log {log})", flush=True)
        return p.stdout

    def torch_round(self, r, order):
        for cfg in order:
            if cfg not in self.torch_configs:
                continue
            cap = os.path.join(self.cap, f"torch.{cfg}.r{r}")
            shutil.rmtree(cap, ignore_errors=True)
            cmd = [sys.executable, os.path.join(HERE, "torch_phases.py"), "phases", "--steps", str(self.a.steps)]
            if self.a.phases:
                cmd += ["--only", self.a.phases]
            if cfg == "torchprof":
                os.makedirs(cap, exist_ok=True)
                cmd += ["--torchprof", os.path.join(cap, "kineto.json")]
            for m in re.finditer(r"^PHASE (\w+) steps=\d+ min_ms=([\d.]+)", self.run(f"torch.r{r}", cfg, cmd, cap), re.M):
                self.values[m[1]][cfg][r] = float(m[2])

    def kw_round(self, r, order):
        kw = os.path.join(self.bin, "known_work")
        for mode, iters in (("loop", self.a.loop_iters), ("loop_spin", self.a.spin_iters)):
            for cfg in order:
                if cfg not in self.kw_configs:
                    continue
                cap = os.path.join(self.cap, f"{mode}.{cfg}.r{r}")
                shutil.rmtree(cap, ignore_errors=True)
                out = self.run(f"{mode}.r{r}", cfg, [kw, mode, str(iters)], cap)
                m = re.search(r"^(LOOP\w*) .*gpu_us_per_iter=([\d.]+)", out, re.M)
                if m:
                    self.values[m[1]][cfg][r] = float(m[2]) / 1000.0  # ms per iteration

    def table(self):
        cfgs = [c for c in LABELS if any(c in v for v in self.values.values())]
        lines = ["| phase | " + " | ".join(LABELS[c] for c in cfgs) + " |", "|---" * (len(cfgs) + 1) + "|"]
        goals = []
        for phase, by in self.values.items():
            base = by.get("none", {})
            if not base:
                continue
            b = statistics.median(base.values())
            lo, hi = min(base.values()), max(base.values())
            cells = [f"{b:.4f} ms [{lo:.4f}..{hi:.4f}]" if b < 10 else f"{b:.2f} ms [{lo:.2f}..{hi:.2f}]"]
            added = {}
            for c in cfgs[1:]:
                v = by.get(c, {})
                if not v:
                    cells.append("—")
                    continue
                # Per round, against that round's own baseline (the machine drifts between rounds:
                # an interleaved round is the fair comparison); rounds whose baseline failed are
                # left out. The figure is the median of the per-round overheads.
                rel = [(x - base[r]) / base[r] * 100 for r, x in v.items() if r in base] or [0.0]
                added[c] = statistics.median(rel)
                cells.append(f"{added[c]:+.1f} % [{min(rel):+.1f}..{max(rel):+.1f}]")
            lines.append(f"| {PHASE_LABELS.get(phase, phase)} | " + " | ".join(cells) + " |")
            goals += self.goals(phase, added)
        return "\n".join(lines), goals

    @staticmethod
    def goals(phase, added):
        out = []
        if "ovs" in added and "floor" in added:
            d = added["ovs"] - added["floor"]
            out.append(f"goal {phase}: overlapscope - floor = {d:+.1f} points (<= 5): {'PASS' if d <= 5 else 'FAIL'}")
        if phase in LAUNCH_BOUND and "ovs" in added and "torchprof" in added and added["torchprof"] > 0:
            ratio = added["ovs"] / added["torchprof"]
            out.append(f"goal {phase}: overlapscope adds {ratio:.2f} x torch.profiler's added time (<= 0.33): "
                       f"{'PASS' if ratio <= 1 / 3 else 'FAIL'}")
        if phase == "LOOP_SPIN" and "ovs" in added:
            out.append(f"goal {phase}: overlapscope {added['ovs']:+.2f} % (<= 1 %): "
                       f"{'PASS' if added['ovs'] <= 1 else 'FAIL'}")
        return out

    # ------------------------------------------------------------------ record counts
    def dump(self, cap):
        files = [os.path.join(cap, f) for f in sorted(os.listdir(cap)) if f.endswith(".ovspill")]
        if not files:
            return []
        p = subprocess.run([os.path.join(self.bin, "spill_dump")] + files, stdout=subprocess.PIPE, text=True)
        return [line.rstrip("\n").split("\t") for line in p.stdout.splitlines()]

    def our_counts(self, rows):
        ranges = {r[2][6:]: (int(r[3]), int(r[4])) for r in rows if r[0] == "R" and r[2].startswith("phase:")}
        counts = {}
        for phase, (s, e) in ranges.items():
            c = counts.setdefault(phase, [0, 0, 0, 0])
            for r in rows:
                if r[0] in "KMZ" and len(r) > 3:
                    start = int(r[2]) if r[0] == "K" else int(r[3])
                    if s <= start <= e:
                        c["KMZ".index(r[0])] += 1
                elif r[0] == "A" and s <= int(r[3]) <= e:
                    c[3] += 1
        return counts

    @staticmethod
    def kineto_counts(path):
        with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
            ev = json.load(f).get("traceEvents", [])
        ranges = {e["name"][6:]: (float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))) for e in ev
                  if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("phase:")}
        kinds = {"kernel": 0, "gpu_memcpy": 1, "gpu_memset": 2, "cuda_runtime": 3, "cuda_driver": 3}
        counts = {}
        for phase, (s, e) in ranges.items():
            c = counts.setdefault(phase, [0, 0, 0, 0])
            for x in ev:
                k = kinds.get(x.get("cat"))
                if k is not None and "ts" in x and s <= float(x["ts"]) <= e:
                    c[k] += 1
        return counts

    def counts(self):
        lines, ok = [], True
        ours = self.our_counts(self.dump(os.path.join(self.cap, "torch.ovs.r0")))
        all_api = self.our_counts(self.dump(os.path.join(self.cap, "torch.ovs_all.r0")))
        kin = os.path.join(self.cap, "torch.torchprof.r0", "kineto.json")
        theirs = self.kineto_counts(kin) if os.path.exists(kin) else {}
        for phase in sorted(set(ours) | set(theirs)):
            a, b = ours.get(phase, [0] * 4), theirs.get(phase, [0] * 4)
            same = a[:3] == b[:3]
            ok &= same
            lines.append(f"counts {phase}: kernels/memcpys/memsets overlapscope {a[0]}/{a[1]}/{a[2]}, torch.profiler "
                         f"{b[0]}/{b[1]}/{b[2]}: {'PASS' if same else 'FAIL'}; API records overlapscope {a[3]} "
                         f"(--api=all {all_api.get(phase, [0] * 4)[3]}), torch.profiler {b[3]}")
        # Totals of the whole process against the CUPTI floor client (both see every activity).
        for prog in ("torch", "loop", "loop_spin"):
            floor_dir = os.path.join(self.cap, f"{prog}.floor.r0")
            ftxt = [f for f in os.listdir(floor_dir) if f.startswith("floor.")] if os.path.isdir(floor_dir) else []
            rows = self.dump(os.path.join(self.cap, f"{prog}.ovs.r0"))
            if not ftxt or not rows:
                continue
            fl = [0, 0, 0]
            for f in ftxt:
                m = re.match(r"kernels (\d+) memcpys (\d+) memsets (\d+)", open(os.path.join(floor_dir, f)).read())
                fl = [x + int(y) for x, y in zip(fl, m.groups())] if m else fl
            ov = [sum(r[0] == k for r in rows) for k in "KMZ"]
            same = ov == fl
            ok &= same
            lines.append(f"counts {prog} (whole process): overlapscope {ov[0]}/{ov[1]}/{ov[2]}, CUPTI floor "
                         f"{fl[0]}/{fl[1]}/{fl[2]}: {'PASS' if same else 'FAIL'}")
        return lines, ok

    # ------------------------------------------------------------------ capture ranges
    def ranges(self):
        lines, ok = [], True
        script = os.path.join(HERE, "torch_phases.py")
        cases = [("cudaProfilerApi", ["--capture-range=cudaProfilerApi"], "profiler"),
                 ("nvtx", ["--capture-range=nvtx", "--nvtx-capture=capture"], "nvtx"), ("none", [], "profiler")]
        for name, opts, kind in cases:
            cap = os.path.join(self.cap, f"range.{name}")
            shutil.rmtree(cap, ignore_errors=True)
            t0 = time.time()
            out = self.run(f"range.{name}", "none", [self.ovs, "profile", "-o", cap] + opts +
                           ["--", sys.executable, script, "range", kind])
            m = re.search(r"RANGE steps=(\d+) first=\d+ count=(\d+) kernels_per_step=(\d+)", out)
            rows = self.dump(cap)
            size = sum(os.path.getsize(os.path.join(cap, f)) for f in os.listdir(cap) if f.endswith(".ovspill"))
            wins = [(int(r[5]), int(r[6])) for r in rows if r[0] == "W"]
            kernels = sum(r[0] == "K" for r in rows)
            apis = [r for r in rows if r[0] == "A"]
            outside = sum(not any(s <= int(r[3]) and int(r[4]) <= e for s, e in wins) for r in apis)
            if not m:
                ok = False
                lines.append(f"range {name}: FAIL (program output missing)")
                continue
            steps, count, per = int(m[1]), int(m[2]), int(m[3])
            want = count * per if name != "none" else None
            good = name == "none" or (len(wins) == 1 and kernels == want and outside == 0)
            ok &= good
            lines.append(f"range {name}: {steps} steps, windows {len(wins)}, kernels {kernels}"
                         f"{f' (expected {want})' if want else ''}, API records {len(apis)} ({outside} outside "
                         f"windows), spill {size / 1024:.1f} KiB, profile wall {time.time() - t0:.1f} s"
                         f"{'' if name == 'none' else (': PASS' if good else ': FAIL')}")
        return lines, ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--loop-iters", type=int, default=2000)
    ap.add_argument("--spin-iters", type=int, default=200)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--cap-dir", default="", help="where the captures go (default OUT/cap; they are large)")
    ap.add_argument("--configs", default="", help="comma-separated configurations (default: the standard set)")
    ap.add_argument("--torch-configs", default="", help="configurations of the PyTorch phases (default --configs)")
    ap.add_argument("--kw-configs", default="", help="configurations of the known_work loops (default --configs)")
    ap.add_argument("--phases", default="", help="PyTorch phases to run (default all)")
    ap.add_argument("--cpus", default="", help="run every program under taskset -c CPUS")
    ap.add_argument("--no-kw", action="store_true", help="skip the known_work loops")
    ap.add_argument("--no-checks", action="store_true", help="skip the count and capture-range checks")
    a = ap.parse_args()
    b = Bench(a)
    have_torch = not a.no_torch and subprocess.run(
        [sys.executable, "-c", "import torch; assert torch.cuda.is_available()"], capture_output=True).returncode == 0
    if not have_torch:
        print("PyTorch with CUDA not available: PyTorch phases skipped")
    t0 = time.time()
    every = [c for c in LABELS if c in set(b.torch_configs) | set(b.kw_configs)]
    for r in range(a.rounds):
        order = every[r % len(every):] + every[:r % len(every)]  # rotated: no config always first
        print(f"round {r + 1}/{a.rounds}: order {', '.join(order)}", flush=True)
        if have_torch:
            b.torch_round(r, order)
        if not a.no_kw:
            b.kw_round(r, order)
    table, goals = b.table()
    print(f"\n{b.runs} runs in {time.time() - t0:.0f} s; no profiler: median [lowest..highest] of {a.rounds} rounds; "
          f"others: median [lowest..highest] over the rounds of the overhead against the same round's no-profiler "
          f"run; PyTorch phases: minimum of {a.steps} steps per run; known_work: GPU time per iteration\n")
    print(table)
    print()
    for g in goals:
        print(g)
    print("\nper round (ms):")
    for p, v in b.values.items():
        print(f"  {p}: " + "; ".join(f"{c} " + " ".join(f"{x:.4f}" for _, x in sorted(rv.items())) for c, rv in v.items()))
    ok = True
    if have_torch and not a.no_checks:
        lines, ok_c = b.counts()
        lines2, ok_r = b.ranges()
        ok = ok_c and ok_r
        print()
        print("\n".join(lines + lines2))
    with open(os.path.join(b.out, "bench_table.md"), "w") as f:
        f.write(table + "\n\n" + "\n".join(goals) + "\n")
    with open(os.path.join(b.out, "bench_values.json"), "w") as f:
        json.dump({p: {c: dict(r) for c, r in v.items()} for p, v in b.values.items()}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
