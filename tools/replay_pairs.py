#!/usr/bin/env python3
"""Replay error and what-if predictions against measured pairs (docs/RESULTS.md "Replay").

usage: tools/replay_pairs.py OVERLAPSCOPE [--errors | --noise | --race [DIR...] | --runs DIR...]
--errors: the replay error of every trace with iterations (tests/data, ../shared/traces) instead.
--noise: per program of tests/data/whatif_torch, the job step of both captures, the spread between
  them and the interquartile range over iterations: how large a measured change must be to count.
--race: per rank of every overlapped all-gather trace (the pairs' targets), which kernel got the SMs
  first where a GEMM and the all-gather met (no replay: read from the Kineto JSON): the GEMM (the
  all-gather starts in its last blocks, how long before its end) or the all-gather (both run side
  by side), the kernels' median durations, and where the trace records the GEMM's shape
  (record_shapes), the tile rounds of the persistent GEMM (tile from the kernel name). With DIRs:
  the same for each DIR's ag_overlap against its ag_sequential (e.g. tests/data/whatif_torch_race/*/run*).
--runs DIR...: the pairs of our own workloads in each DIR as `overlapscope run -o DIR` writes it
  (DIR/<workload>-<mode>/ with the raw capture; files may be gzipped, as tests/data/replay_pairs
  keeps them: they are unpacked into a temporary directory first).
For every pair (a run, the change that turns it into another measured run), predicts the second
from the first and compares with its measured step: the job's step per iteration is the slowest
rank's, the figure the lower median over iterations (the plain median's error beside it); the
predicted step is the base's times 1 + the replay's predicted change (`job` in --json: the median
over iterations of the job step's change, predicted against replayed of the same iteration, so
that a late rank's stall which the change moves into another iteration does not decide it). The
last column counts the base's iterations with a late rank (a peer waited >= 10 % of the step for
it at a collective). Pairs whose
traces are absent are skipped visibly. A measured change counts (its sign must be right) where it
exceeds 1 % and, for programs captured twice (whatif_torch's run1/run2), the spread between the two
captures of the base plus that of the target (the "noise" column). The same bound holds for the
prediction: a predicted change within it says "no change", so a counted change is "right" or
"WRONG" where the predicted one exceeds the bound (same or opposite direction) and "missed" where it
does not. "un-profiled": the change between the two programs' un-profiled medians of the same
session (timings.json of make_traces.py / whatif_traces.py: 20 iterations timed with CUDA events on
rank 0 just before each capture), a second witness of the measured change's sign; "sign (un-profiled)" judges the predicted change
against it (the bound: the spread between the two captures' un-profiled medians of the base plus
that of the target, 1 % at least; "-" without timings). "last round": the collectives the
contention model placed in a persistent GEMM's last tile round, made wait for its end with its
rounds known, and made wait for the end of one whose rounds are unknown (no record_shapes). A
summary line counts the pairs within 10 % and 5 % and both signs. A program captured once takes the
spread of its recaptures where the same program was recaptured on the same GPU model with the same
profiler settings (RECAPTURED: kineto_nosync's 3-step traces and whatif_torch/default, both make_traces.py's
Scenario at the same sizes on H100 without cuda_sync events); else 0 (kineto: 2 x H200, never
recaptured).
"""
import gzip, json, os, shutil, statistics, subprocess, sys, tempfile
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIRS = [
    # (base, target, changes)
    ("tests/data/kineto/ag_sequential", "tests/data/kineto/ag_overlap", ["async:/AllGather/"]),
    ("tests/data/kineto_nosync/ag_sequential", "tests/data/kineto_nosync/ag_overlap", ["async:/AllGather/"]),
    # make_traces.py's async all-to-all: the independent GEMM runs beside it, the next layer's GEMM
    # (record_function "gemm") waits for it: the join names that range.
    ("tests/data/kineto/a2a_sync", "tests/data/kineto/a2a_async", ["async:/SendRecv/@/^gemm$/"]),
    ("tests/data/kineto_nosync/a2a_sync", "tests/data/kineto_nosync/a2a_async", ["async:/SendRecv/@/^gemm$/"]),
    ("tests/data/kineto/d2h_blocking", "tests/data/kineto/d2h_nonblocking_event", ["nosync:/cudaStreamSynchronize/"]),
    ("tests/data/kineto_nosync/d2h_blocking", "tests/data/kineto_nosync/d2h_nonblocking_event",
     ["nosync:/cudaStreamSynchronize/"]),
    ("tests/data/torch_diag/w4_default/mm_ag_sequential", "tests/data/torch_diag/w4_default/mm_ag_overlap",
     ["async:/AllGather/"]),
    ("tests/data/torch_diag/w4_sync/mm_ag_sequential", "tests/data/torch_diag/w4_sync/mm_ag_overlap",
     ["async:/AllGather/"]),
    ("tests/data/torch_diag/w2_default/mm_ag_sequential", "tests/data/torch_diag/w2_default/mm_ag_overlap",
     ["async:/AllGather/"]),
    ("tests/data/torch_diag/w2_sync/mm_ag_sequential", "tests/data/torch_diag/w2_sync/mm_ag_overlap",
     ["async:/AllGather/"]),
]
# whatif_traces.py: make_traces.py's programs, 16 profiled steps, profiler defaults ("default") and
# with cuda_sync events ("sync"), each captured twice (run1, run2) on 2 x H100.
for _v in ("default", "sync"):
    for _r in ("run1", "run2"):
        _d = f"tests/data/whatif_torch/{_v}/{_r}"
        PAIRS += [
            (f"{_d}/ag_sequential", f"{_d}/ag_overlap", ["async:/AllGather/"]),
            (f"{_d}/a2a_sync", f"{_d}/a2a_async", ["async:/SendRecv/@/^gemm$/"]),
            (f"{_d}/d2h_blocking", f"{_d}/d2h_nonblocking_event", ["nosync:/cudaStreamSynchronize/"]),
        ]

# whatif_traces.py's all-gather and all-to-all pairs again (2 x H100, variant default, two captures
# each) with no NCCL setting and with NCCL_PROTO=Simple (all-gather), NCCL_MAX_NCHANNELS=12 and
# NCCL_PROTO=LL (all-to-all): tools/torch_traces/README.md, tests/data/whatif_torch_nccl.
for _s, _progs in (("default", ("ag", "a2a")), ("proto_simple", ("ag",)), ("max_nchannels_12", ("a2a",)),
                   ("proto_ll", ("a2a",))):
    for _r in ("run1", "run2"):
        _d = f"tests/data/whatif_torch_nccl/{_s}/{_r}"
        if "ag" in _progs:
            PAIRS.append((f"{_d}/ag_sequential", f"{_d}/ag_overlap", ["async:/AllGather/"]))
        if "a2a" in _progs:
            PAIRS.append((f"{_d}/a2a_sync", f"{_d}/a2a_async", ["async:/SendRecv/@/^gemm$/"]))

# whatif_traces.py --record-shapes --gemm-m M (4 x H100; the 2-GPU runs on GPUs 0,1): the same
# all-gather and all-to-all pairs with the GEMM's shape in the trace, at GEMM rows 8192 (32 SMs free
# in the persistent GEMM's last tile round), 8448 (the last round full) and 6144 (24 free), two
# captures each: tools/torch_traces/README.md, tests/data/whatif_torch_shapes.
SHAPES = ("g2_m8192", "g2_m8448", "g2_m6144", "g4_m8192")
for _g in SHAPES:
    for _r in ("run1", "run2"):
        _d = f"tests/data/whatif_torch_shapes/{_g}/{_r}"
        PAIRS += [(f"{_d}/ag_sequential", f"{_d}/ag_overlap", ["async:/AllGather/"]),
                  (f"{_d}/a2a_sync", f"{_d}/a2a_async", ["async:/SendRecv/@/^gemm$/"])]

# The all-gather pair at GEMM rows 8192 and 6144 with and without record_shapes, two captures each,
# in one session (2 x H100): tools/torch_traces/README.md, tests/data/whatif_torch_race.
for _g in ("m8192_shapes", "m8192_plain", "m6144_shapes", "m6144_plain"):
    for _r in ("run1", "run2"):
        _d = f"tests/data/whatif_torch_race/{_g}/{_r}"
        PAIRS.append((f"{_d}/ag_sequential", f"{_d}/ag_overlap", ["async:/AllGather/"]))

# The same all-gather and all-to-all pairs on 2 and 4 x H200 (whatif_traces.py --alternate-order:
# the second capture runs the programs in reverse order), with and without record_shapes, and in the
# same session and on the same GPUs whatif_clocks.py's balanced timings (BALANCED below):
# tools/torch_traces/README.md, tests/data/whatif_h200.
for _g, _progs in (("g2_m8192_shapes", ("ag", "a2a")), ("g2_m8192_plain", ("ag",)),
                   ("g4_m8192_shapes", ("ag", "a2a"))):
    for _r in ("run1", "run2"):
        _d = f"tests/data/whatif_h200/{_g}/{_r}"
        PAIRS.append((f"{_d}/ag_sequential", f"{_d}/ag_overlap", ["async:/AllGather/"]))
        if "a2a" in _progs:
            PAIRS.append((f"{_d}/a2a_sync", f"{_d}/a2a_async", ["async:/SendRecv/@/^gemm$/"]))

# Our workloads (`overlapscope run -o DIR`): (base mode dir, target mode dir, changes).
# matmul-allgather's sequential program computes first and gathers after; the overlapped one
# issues the all-gather first: prefetch: (async: at the start of the iteration). async: at the
# same point of the program overlaps nothing there (the iteration ends with a host sync).
_AG = "prefetch:/(?i)allgather/"
# all-to-all's async program also consumes each layer's all-to-all (the validation kernels) after
# the next layer's GEMM: the all-to-all joins its consumer, and the consumer is deferred.
_A2A = "async:/(?i)alltoall|sendrecv/@/Sampled|FinitePoison/"
_DEFER = "defer:/FinitePoison|Sampled/"
RUN_PAIRS = [
    ("matmul-allgather-sequential", "matmul-allgather-overlap", [_AG]),
    ("matmul-allgather-sequential", "matmul-allgather-overlap-ce", [_AG, "ce:/(?i)allgather/"]),
    ("all-to-all-sync", "all-to-all-async", [_A2A, _DEFER]),
    ("all-to-all-sync", "all-to-all-async-ce", [_A2A, _DEFER, "ce:/(?i)alltoall|sendrecv/"]),
    ("d2h-blocking", "d2h-nonblocking-event", ["nosync:/^cudaMemcpy(_v[0-9]+)?$/"]),
]


def unpacked(mode_dir, tmp):
    """mode_dir itself, or a copy in `tmp` with every .gz file unpacked (the reader takes no .gz spill)."""
    names = os.listdir(mode_dir)
    if not any(n.endswith(".gz") for n in names):
        return mode_dir
    out = os.path.join(tmp, os.path.relpath(mode_dir, "/").replace("/", "_"))
    os.makedirs(out, exist_ok=True)
    for n in names:
        src = os.path.join(mode_dir, n)
        if n.endswith(".ovspill.gz") or n.endswith(".ovnccl.gz"):
            with gzip.open(src, "rb") as f, open(os.path.join(out, n[:-3]), "wb") as g:
                shutil.copyfileobj(f, g)
    return out


def run_pairs(run_dirs, tmp):
    """(base, target, changes) of every RUN_PAIRS entry present in the given `run -o` directories."""
    out = []
    for d in run_dirs:
        for base, target, changes in RUN_PAIRS:
            b, t = os.path.join(d, base), os.path.join(d, target)
            if os.path.isdir(b) and os.path.isdir(t):
                out.append((unpacked(b, tmp), unpacked(t, tmp), changes, f"{os.path.basename(d)}/{base} -> {target}"))
            elif os.path.isdir(b) or os.path.isdir(t):
                print(f"skipped (one side absent): {b} -> {t}")
    return out


def replay(tool, path, changes):
    cmd = [tool, "replay", os.path.join(ROOT, path), "--json"]
    for c in changes:
        cmd += ["--change", c]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def job_step(doc, key, lower=True):
    """Lower median over iterations of the slowest rank's step (iterations matched by number): the
    middle value, the smaller of the two middle ones for an even count (a host stall only lengthens
    an iteration: with 4 iterations of which 2 stalled, the plain median averages a stalled one in).
    lower=False: the plain median (shown beside it)."""
    by_it = {}
    for it in doc["iterations"]:
        if key in it:
            by_it.setdefault(it["iteration"], []).append(it[key]["step_ns"])
    if not by_it:
        return None
    v = sorted(max(x) for x in by_it.values())
    return v[(len(v) - 1) // 2] if lower else statistics.median(v)


# A program captured once -> where the same program was captured twice on the same GPU model with the
# same profiler settings: the spread between those captures is this capture's run-to-run noise too
# (a single capture cannot measure its own). kineto_nosync (2 of 4 x H100, profiler defaults, no
# cuda_sync events, torch 2.11, NCCL 2.28.9) and whatif_torch/default (2 x H100, the same settings and
# versions) run make_traces.py's Scenario unchanged. kineto (2 x H200, cuda_sync events) has no
# recapture on H200: its noise stays unknown (0, the 1 % floor applies).
RECAPTURED = {"tests/data/kineto_nosync/": "tests/data/whatif_torch/default/"}


def twin(path):
    """The other capture of the same program (whatif_torch's run1/run2), or None."""
    for a, b in (("/run1/", "/run2/"), ("/run2/", "/run1/")):
        if a in path and os.path.isdir(path.replace(a, b)):
            return path.replace(a, b)
    return None


def unprofiled(path):
    """The un-profiled median iteration (ms) of the session that captured `path` (timings.json of
    make_traces.py / whatif_traces.py), or None."""
    for name in ("timings.json", "timings.json.gz"):
        p = os.path.join(path, name)
        if os.path.exists(p):
            with (gzip.open(p) if name.endswith(".gz") else open(p)) as f:
                return json.load(f).get("timing", {}).get("median_iter_ms")
    return None


def unprofiled_change(base, target):
    b, t = unprofiled(base), unprofiled(target)
    return (t - b) / b if b and t else None


def unprofiled_spread(path):
    """|un-profiled median - the twin capture's| / un-profiled median; 0 without a twin or timings."""
    t = twin(path)
    a, b = unprofiled(path), (unprofiled(t) if t else None)
    return abs(b - a) / a if a and b else 0.0


# Pair sets -> whatif_clocks.py files of the same session and GPUs: each program run un-profiled
# for 2 s phases in the order A B B A B A A B (after 20 warm-up steps), every iteration timed. The
# first phase of a run measures 1-1.5 % faster whichever program it is (docs/RESULTS.md "The
# un-profiled truth: run order and clocks"), so it is left out; the 20-iteration timings.json right
# after a capture's idle export are not steady (the programs' order moves them by more than an
# all-to-all pair's change).
_H200 = "tests/data/whatif_h200/"
BALANCED = {
    _H200 + "g2_m8192_shapes/": (_H200 + "clocks_g2_m8192_gpu01.json.gz", _H200 + "clocks_g2_m8192_gpu23.json.gz"),
    _H200 + "g2_m8192_plain/": (_H200 + "clocks_g2_m8192_gpu01.json.gz", _H200 + "clocks_g2_m8192_gpu23.json.gz"),
    _H200 + "g4_m8192_shapes/": (_H200 + "clocks_g4_m8192.json.gz",),
}


def balanced_change(base, target):
    """(change, bound) of the target program against the base in the balanced timings of the pair's
    session (BALANCED), or None: per file, rank 0's phase medians without the run's first phase, the
    median of each program's; the change averaged over the files; the bound the largest spread
    (max - min over median) of one program's phases or between the files' changes, 1 % at least."""
    rel = os.path.relpath(base, ROOT) + "/"
    files = next((f for k, f in BALANCED.items() if rel.startswith(k)), None)
    if not files or not all(os.path.exists(os.path.join(ROOT, f)) for f in files):
        return None
    a, b = os.path.basename(base), os.path.basename(target)
    changes, spread = [], 0.01
    for f in files:
        with gzip.open(os.path.join(ROOT, f)) as fh:
            ranks = json.load(fh)["ranks"]
        phases = next(r for r in ranks if r["rank"] == 0)["phases"][1:]
        med = {}
        for name in (a, b):
            v = [p["median_iter_ms"] for p in phases if p["scenario"] == name]
            if not v:
                return None
            med[name] = statistics.median(v)
            spread = max(spread, (max(v) - min(v)) / med[name])
        changes.append(med[b] / med[a] - 1)
    spread = max(spread, max(changes) - min(changes))
    return sum(changes) / len(changes), spread


def judge(measured, predicted, bound):
    """The sign of a predicted change against a measured one, both relative to the base: "noise"
    (the measured change within the bound), "missed" (the predicted one within it), "right" or
    "WRONG"."""
    if abs(measured) < bound:
        return "noise"
    if abs(predicted) < bound:
        return "missed"
    return "right" if predicted * measured > 0 else "WRONG"


def capture_spread(tool, path, step):
    """|step - the twin capture's step| / step: the run-to-run noise of one program; for a program
    captured once, the spread between its recaptures (RECAPTURED), |run2 - run1| / run1; else 0."""
    t = twin(path)
    if t is not None:
        return abs(job_step(replay(tool, t, []), "measured") - step) / step
    rel = os.path.relpath(path, ROOT) + "/"
    for once, again in RECAPTURED.items():
        if rel.startswith(once):
            r1 = os.path.join(ROOT, again, "run1", rel[len(once):])
            if os.path.isdir(r1) and os.path.isdir(twin(r1) or ""):
                a = job_step(replay(tool, r1, []), "measured")
                return abs(job_step(replay(tool, twin(r1), []), "measured") - a) / a
    return 0.0


def race(dirs=()):
    """--race: who got the SMs first where a GEMM and the all-gather met, per rank of each overlapped
    all-gather trace (Kineto JSON read directly): the pairs' targets, or DIR/ag_overlap of each DIR."""
    import math, re
    print("| trace | rank | GEMM first | all-gather first | all-gather's start before the GEMM's end | "
          "GEMM (GEMM first) | GEMM (all-gather first) | all-gather (GEMM first) | base: GEMM, all-gather | "
          "tiles, rounds, blocks retiring a round early |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    med = lambda v: f"{statistics.median(v):.1f} µs" if v else "-"
    todo = [(os.path.abspath(os.path.join(d, "ag_sequential")), os.path.abspath(os.path.join(d, "ag_overlap")))
            for d in dirs] or sorted({(b, t) for b, t, c in PAIRS if c == ["async:/AllGather/"]}, key=lambda x: x[1])
    for base, target in todo:
        for f in sorted(Path(ROOT, target).glob("rank*.json.gz")):
            alone = [e for e in json.load(gzip.open(Path(ROOT, base, f.name)))["traceEvents"] if e.get("cat") == "kernel"]
            alone_g = [e["dur"] for e in alone if not e["name"].startswith("nccl")]
            alone_c = [e["dur"] for e in alone if e["name"].startswith("ncclDevKernel_AllGather")]
            ev = json.load(gzip.open(f))["traceEvents"]
            ks = sorted((e for e in ev if e.get("cat") == "kernel"), key=lambda e: e["ts"])
            coll = [e for e in ks if e["name"].startswith("ncclDevKernel_AllGather")]
            dims = {e["args"]["External id"]: e["args"]["Input Dims"] for e in ev if e.get("cat") == "cpu_op"
                    and e["name"] in ("aten::mm", "aten::matmul") and "Input Dims" in e.get("args", {})}
            lead, g_first, g_second, c_first, tiles = [], [], [], [], set()
            for k in (e for e in ks if not e["name"].startswith("nccl")):
                s, t = k["ts"], k["ts"] + k["dur"]
                met = [c for c in coll if c["ts"] < t and c["ts"] + c["dur"] > s]
                if not met:
                    continue
                if met[0]["ts"] >= s:  # the GEMM first: the all-gather started inside it
                    lead.append(t - met[0]["ts"])
                    g_first.append(k["dur"])
                    c_first.append(met[0]["dur"])
                else:
                    g_second.append(k["dur"])
                m = re.search(r"_(\d+)x(\d+)_\d+x\d+_", k["name"])
                x = dims.get(k["args"].get("External id"))
                if m and x:  # [[M, K], [K, N], ...]: tiles of the output either way round
                    tm, tn, M, N = int(m.group(1)), int(m.group(2)), x[0][0], x[1][1]
                    b = k["args"]["grid"][0] * k["args"]["grid"][1] * k["args"]["grid"][2]
                    for T in {math.ceil(M / tm) * math.ceil(N / tn), math.ceil(N / tm) * math.ceil(M / tn)}:
                        tiles.add(f"{T}, {math.ceil(T / b)}, {(b - T % b) % b}")
            print(f"| {target.split('data/')[-1]} | {f.name.split('.')[0]} | {len(g_first)} | {len(g_second)} | "
                  f"{med(lead)} | {med(g_first)} | {med(g_second)} | {med(c_first)} | {med(alone_g)}, {med(alone_c)} | "
                  f"{'; '.join(sorted(tiles)) or '-'} |")


def noise(tool):
    """Job step (lower median) of both captures of every whatif_torch program, their spread, and the
    interquartile range over iterations of each capture."""
    print("| variant | program | run1 | IQR run1 | run2 | IQR run2 | spread between captures |")
    print("|---|---|---|---|---|---|---|")
    for d in sorted(Path(ROOT, "tests/data/whatif_torch").glob("*/run1/*")):
        cells = []
        for p in (str(d), twin(str(d))):
            doc = replay(tool, p, [])
            by_it = {}
            for it in doc["iterations"]:
                by_it.setdefault(it["iteration"], []).append(it["measured"]["step_ns"])
            q = statistics.quantiles(sorted(max(x) for x in by_it.values()), n=4)
            cells.append((job_step(doc, "measured"), q[0], q[2]))
        (a, a1, a3), (b, b1, b3) = cells
        print(f"| {d.parent.parent.name} | {d.name} | {a/1e6:.3f} ms | {a1/1e6:.3f}–{a3/1e6:.3f} ms | {b/1e6:.3f} ms "
              f"| {b1/1e6:.3f}–{b3/1e6:.3f} ms | {abs(b - a) / a * 100:.1f} % |")


def errors(tool):
    """Replay error of every trace directory with iterations, with and without fallbacks."""
    dirs = sorted(str(p.parent.relative_to(ROOT)) for p in Path(ROOT, "tests/data").glob("**/rank0.json.gz"))
    shared = Path(os.environ.get("OVERLAPSCOPE_SHARED_TRACES", Path(ROOT).parent / "shared" / "traces"))
    extra = ["hta/trace_filter", "hta/ns_resolution_trace", "hta/nccl_parser_config", "hta/amd_trace",
             "hta/critical_path/cuda_event_sync", "hta/negative_queue_length_values_check",
             "tracelens/tests/traces/h100", "tracelens/tests/traces/mi300"]
    if shared.is_dir():
        dirs += [str(shared / d) for d in extra if (shared / d).is_dir()]
    else:
        print(f"skipped (absent): {shared}")
    print("| trace | iterations | median \\|error\\| | worst | strict median | strict worst | fallbacks | SM waits |")
    print("|---|---|---|---|---|---|---|---|")
    for d in dirs:
        out = []
        for strict in (False, True):
            cmd = [tool, "replay", os.path.join(ROOT, d), "--json"] + (["--strict"] if strict else [])
            out.append(json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout))
        e, s = out[0]["replay_error"], out[1]["replay_error"]
        if e["iterations"] == 0:
            continue
        g = out[0]["graph"]
        name = d.split("tests/data/")[-1].split("traces/")[-1]
        print(f"| {name} | {e['iterations']} | {e['median_abs']*100:.2f} % | {e['worst_abs']*100:.2f} % | "
              f"{s['median_abs']*100:.2f} % | {s['worst_abs']*100:.2f} % | "
              f"{g['pinned_unresolved'] + g['device_order']} | {g.get('sm_waits', 0)} |")


def main():
    tool = sys.argv[1]
    if len(sys.argv) > 2 and sys.argv[2] == "--errors":
        errors(tool)
        return
    if len(sys.argv) > 2 and sys.argv[2] == "--noise":
        noise(tool)
        return
    if len(sys.argv) > 2 and sys.argv[2] == "--race":
        race(sys.argv[3:])
        return
    tmp = tempfile.mkdtemp(prefix="replay_pairs_")
    try:
        if len(sys.argv) > 2 and sys.argv[2] == "--runs":
            pairs = run_pairs(sys.argv[3:], tmp)
        else:
            pairs = []
            for base, target, changes in PAIRS:
                b, t = os.path.join(ROOT, base), os.path.join(ROOT, target)
                if not (os.path.isdir(b) and os.path.isdir(t)):
                    print(f"skipped (absent): {base} -> {target}")
                    continue
                pairs.append((b, t, changes, f"{base.split('data/')[1]} -> {target.split('/')[-1]}"))
        table(tool, pairs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def table(tool, pairs):
    rows = []
    for base, target, changes, label in pairs:
        try:
            b = replay(tool, base, changes)
            t = replay(tool, target, [])
        except subprocess.CalledProcessError as e:
            print(f"failed: {label}: {e.stderr.strip()[:300]}")
            continue
        measured_base, measured_target = job_step(b, "measured"), job_step(t, "measured")
        job = b.get("job", {})
        if None in (measured_base, measured_target) or "change" not in job:
            print(f"no iterations: {label}")
            continue
        # The predicted job step: the measured base times 1 + the replay's change (the median of
        # per-iteration changes, predicted against replayed: `job` in --json).
        change, change_c = job["change"], job.get("change_contention", job["change"])
        pred, pred_c = measured_base * (1 + change), measured_base * (1 + change_c)
        err = (pred - measured_target) / measured_target
        err_c = (pred_c - measured_target) / measured_target
        med_b, med_t = job_step(b, "measured", lower=False), job_step(t, "measured", lower=False)
        err_med = (med_b * (1 + change_c) - med_t) / med_t
        # A measured change within 1 %, or within the spread between two captures of the base plus
        # that of the target, is noise: no sign to get right. A predicted change within the same
        # bound predicts none: where the measured one counts, that is a miss, not a right sign.
        bound = max(0.01, capture_spread(tool, base, measured_base) + capture_spread(tool, target, measured_target))
        noisy = abs(measured_target - measured_base) < bound * measured_base
        if noisy:
            sign_ok = "noise"
        elif abs(pred_c - measured_base) < bound * measured_base:
            sign_ok = "missed"
        else:
            sign_ok = "right" if (pred_c - measured_base) * (measured_target - measured_base) > 0 else "WRONG"
        # Against the un-profiled timings (the programs' real change): the bound is the spread between
        # the two captures' un-profiled medians of the base plus the target's (1 % at least).
        up = unprofiled_change(base, target)
        up_bound = max(0.01, unprofiled_spread(base) + unprofiled_spread(target))
        up_sign = judge(up, (pred_c - measured_base) / measured_base, up_bound) if up is not None else "-"
        bal = balanced_change(base, target)
        bal_sign = judge(bal[0], (pred_c - measured_base) / measured_base, bal[1]) if bal else "-"
        rows.append((label, " ".join(changes).replace("|", "\\|"), b["replay_error"]["median_abs"], measured_base, measured_target,
                     pred, err, pred_c, err_c, b["contention_model"], sign_ok, err_med, bound,
                     (pred_c - measured_base) / measured_base, up, up_sign, up_bound,
                     b.get("last_round", {}), len(job.get("late_rank_iterations", [])), job.get("iterations", 0),
                     bal, bal_sign))
    print("| base -> target | change | base replay error | base | target | predicted | error | with contention | "
          "error | model | sign | error (plain median) | noise | measured change | predicted change | un-profiled | "
          "un-profiled noise | sign (un-profiled) | last round (in, outside, no shape) | base iterations with a late rank | "
          "balanced | balanced noise | sign (balanced) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        up = f"{r[14]*100:+.1f} %" if r[14] is not None else "-"
        print(f"| {r[0]} | `{r[1]}` | {r[2]*100:.2f} % | {r[3]/1e6:.3f} ms "
              f"| {r[4]/1e6:.3f} ms | {r[5]/1e6:.3f} ms | {r[6]*100:+.1f} % | {r[7]/1e6:.3f} ms | {r[8]*100:+.1f} % "
              f"| {r[9]} | {r[10]} | {r[11]*100:+.1f} % | {r[12]*100:.1f} % | {(r[4]-r[3])/r[3]*100:+.1f} % "
              f"| {r[13]*100:+.1f} % | {up} | {r[16]*100:.1f} % | {r[15]} | "
              f"{r[17].get('in_round', 0)}, {r[17].get('outside', 0)}, {r[17].get('no_shape', 0)} | {r[18]} of {r[19]} | "
              f"{f'{r[20][0]*100:+.1f} %' if r[20] else '-'} | {f'{r[20][1]*100:.1f} %' if r[20] else '-'} | {r[21]} |")
    within = lambda x: sum(abs(r[8]) <= x for r in rows)
    count = lambda i, v: sum(r[i] == v for r in rows)
    print(f"\n{len(rows)} pairs: {within(0.10)} within 10 %, {within(0.05)} within 5 %; signs against the profiled "
          f"traces {count(10, 'right')} right, {count(10, 'WRONG')} WRONG, {count(10, 'missed')} missed, "
          f"{count(10, 'noise')} noise; against the un-profiled timings {count(15, 'right')} right, "
          f"{count(15, 'WRONG')} WRONG, {count(15, 'missed')} missed, {count(15, 'noise')} noise; against the balanced "
          f"timings ({sum(r[20] is not None for r in rows)} pairs) {count(21, 'right')} right, {count(21, 'WRONG')} WRONG, "
          f"{count(21, 'missed')} missed, {count(21, 'noise')} noise")


if __name__ == "__main__":
    main()
