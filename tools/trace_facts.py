#!/usr/bin/env python3
"""Independent facts about PyTorch-profiler / Kineto Chrome traces, to check overlapscope against.

usage: trace_facts.py [--json] TRACE...

TRACE is a .json / .json.gz file (one process, usually one rank) or a directory of them (every
*.json[.gz] whose first 64 KiB mention "traceEvents"; X.json.gz is taken over X.json). Python 3
standard library only; nothing here shares code with the C++ importer or analyses.

Per file it prints what a reader must find there, for every Kineto schema written since
PyTorch 1.8 (categories "Kernel"/"Runtime"/"Memcpy"/"Memset"/"Operator" of 2021 as well as
"kernel"/"cuda_runtime"/"gpu_memcpy"/..., CUDA and ROCm/HIP):
  - counts: kernels, memcpys, memsets, runtime calls (CUDA runtime, HIP runtime, CUDA driver),
    GPU user annotations, cuda_sync records, and every (ph, cat) pair as found;
  - per device (args.device, else pid) exact-ns sets: busy = union of kernels, memcpys and
    memsets; comm / compute by METRICS.md section 1 (comm: names starting "ncclKernel",
    "ncclDevKernel", "nccl", "void ...nccl...", containing "rccl", "nvshmem",
    "cross_device_reduce", one/two-shot all-reduce; memcpys carrying Kineto's "Collective name";
    memory: other memcpys and memsets; compute: other kernels); comm_ns = |M|,
    hidden_comm_ns = |C and M|, gpu_span_ns = last end - first start, gpu_idle_ns = span - busy;
  - host blocked time (METRICS.md section 3) per thread, as a union of the intervals of blocking
    calls: stream/event/device synchronize (cuda*, cu*, hip*), synchronous memcpy (no "Async";
    hipMemcpyWithStream included) unless its GPU copy is device-to-device or host-to-host,
    synchronous memset, and async copies whose GPU copy names pageable memory. A device-wide sync
    starting at or after the process's last launch (a call whose correlation id reaches a GPU
    activity) is the profiler's final sync: reported as final_sync_ns, not counted.
Timestamps: Kineto writes microseconds as decimals; each ts / dur is converted to integer
nanoseconds from its decimal digits, rounding half away from zero (no binary floating point);
the file's baseTimeNanoseconds is added to starts. A tid written as "stream 7" (2021 schema) is
stream 7. Exit status: 0, or 2 when a file cannot be read as JSON.
"""
import decimal
import gzip
import json
import os
import re
import sys

D1000 = decimal.Decimal(1000)
COMM_PREFIXES = ("ncclKernel", "ncclDevKernel", "nccl")
COMM_CONTAINS = ("rccl", "nvshmem", "cross_device_reduce")
COMM_REGEXES = (re.compile(r"^void .*nccl"), re.compile(r"([Oo]ne|[Tt]wo)_?[Ss]hot_?[Aa]ll_?[Rr]educe"))
KERNEL_CATS = {"kernel", "Kernel"}
MEMCPY_CATS = {"gpu_memcpy", "Memcpy"}
MEMSET_CATS = {"gpu_memset", "Memset"}
API_CATS = {"cuda_runtime", "Runtime", "cuda_driver"}
GPU_ANNOTATION_CATS = {"gpu_user_annotation", "gpu_user_Annotation", "User"}
# roctracer async-op names written as cat "kernel" (2021-2023) or gpu_memcpy/gpu_memset (2023-24).
ROCM_COPY_NAMES = re.compile(r"^Copy(HostToDevice|DeviceToHost|DeviceToDevice|HostToHost)(2D)?$")
ROCM_FILL_NAMES = {"FillBuffer"}
SYNC_SUFFIXES = ("", "_ptsz", "_ptds", "_v2", "_v2_ptsz", "_v2_ptds")
STREAM_SYNC = ("cudaStreamSynchronize", "cuStreamSynchronize", "hipStreamSynchronize")
EVENT_SYNC = ("cudaEventSynchronize", "cuEventSynchronize", "hipEventSynchronize")
DEVICE_SYNC = ("cudaDeviceSynchronize", "cudaThreadSynchronize", "cuCtxSynchronize", "hipDeviceSynchronize",
               "hipCtxSynchronize")


def to_ns(v):
    """A JSON number of microseconds -> int ns, half away from zero; None when not a number."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v * 1000
    if isinstance(v, decimal.Decimal):
        if not v.is_finite():
            return None
        return int((v * D1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))
    return None


def as_int(v):
    """An integer id written as a number, a digit string, or "stream N"; None otherwise."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, decimal.Decimal) and v == v.to_integral_value():
        return int(v)
    if isinstance(v, str):
        s = v[7:] if v.startswith("stream ") else v
        if re.fullmatch(r"-?\d+", s):
            return int(s)
    return None


def name_is(name, bases):
    return any(name.startswith(b) and name[len(b):] in SYNC_SUFFIXES for b in bases)


def is_comm_name(name):
    return (name.startswith(COMM_PREFIXES) or any(c in name for c in COMM_CONTAINS)
            or any(r.search(name) for r in COMM_REGEXES))


def union(intervals):
    """Sorted, merged [start, end) list (touching intervals merge)."""
    out = []
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def length(u):
    return sum(e - s for s, e in u)


def intersect_length(a, b):
    i = j = 0
    total = 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if e > s:
            total += e - s
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        return json.load(f, parse_float=decimal.Decimal)


def api_kind(name):
    return "hip" if name.startswith(("hip", "__hip")) else "cuda"


def call_class(name):
    """Blocking class of a host API call name, or None."""
    if name_is(name, STREAM_SYNC):
        return "stream-sync"
    if name_is(name, EVENT_SYNC):
        return "event-sync"
    if name_is(name, DEVICE_SYNC):
        return "device-sync"
    copy = name.startswith(("cudaMemcpy", "cuMemcpy", "hipMemcpy"))
    fill = name.startswith(("cudaMemset", "cuMemset", "hipMemset"))
    if copy:
        return "async-copy" if "Async" in name else "sync-copy"
    if fill:
        return None if "Async" in name else "sync-memset"
    return None


def facts_of_file(path):
    doc = load(path)
    events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
    meta = {} if isinstance(doc, list) else doc
    base_ns = meta.get("baseTimeNanoseconds") if isinstance(meta.get("baseTimeNanoseconds"), int) else 0
    dist = meta.get("distributedInfo") if isinstance(meta.get("distributedInfo"), dict) else {}
    r = {"path": path, "format": "legacy-array" if isinstance(doc, list) else "object",
         "rank": dist.get("rank") if isinstance(dist.get("rank"), int) else None,
         "schemaVersion": meta.get("schemaVersion"), "displayTimeUnit": meta.get("displayTimeUnit"),
         "baseTimeNanoseconds": meta.get("baseTimeNanoseconds"), "host_name": meta.get("host_name"),
         "categories": {}, "counts": {k: 0 for k in ("kernels", "memcpys", "memsets", "runtime_cuda", "runtime_hip",
                                                     "driver", "gpu_user_annotations", "cuda_sync",
                                                     "rocm_copies_as_kernel", "kernels_with_collective_name")},
         "skipped": {}}
    gpu = {}  # device -> list of (start, end, class)
    gpu_corr = {}  # correlation -> list of (kind, name)
    calls = []  # (pid, tid, start, end, name, corr)
    for ev in events:
        if not isinstance(ev, dict):
            continue
        ph, cat, name = ev.get("ph"), ev.get("cat"), ev.get("name")
        key = f"{ph}:{cat if cat is not None else '<none>'}"
        r["categories"][key] = r["categories"].get(key, 0) + 1
        if ph != "X" or not isinstance(name, str):
            continue
        ts, dur = to_ns(ev.get("ts")), to_ns(ev.get("dur"))
        if ts is None or dur is None or dur < 0:
            why = "missing or bad ts/dur" if ts is None or dur is None else "negative dur"
            r["skipped"][why] = r["skipped"].get(why, 0) + 1
            continue
        start, end = ts + base_ns, ts + base_ns + dur
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        corr = as_int(args.get("correlation"))
        kind = None
        if cat in KERNEL_CATS:
            kind = "kernel"
            if ROCM_COPY_NAMES.match(name):
                kind = "memcpy"
                r["counts"]["rocm_copies_as_kernel"] += 1
            elif name in ROCM_FILL_NAMES:
                kind = "memset"
                r["counts"]["rocm_copies_as_kernel"] += 1
        elif cat in MEMCPY_CATS:
            kind = "memcpy"
        elif cat in MEMSET_CATS:
            kind = "memset"
        if kind is not None:
            dev = as_int(args.get("device"))
            if dev is None:
                dev = as_int(ev.get("pid"))
            if dev is None:
                r["skipped"]["GPU activity without device"] = r["skipped"].get("GPU activity without device", 0) + 1
                continue
            r["counts"][kind + "s"] += 1
            if kind == "kernel":
                carries = "Collective name" in args
                cls = "comm" if is_comm_name(name) else "compute"
                if carries and cls != "comm":
                    r["counts"]["kernels_with_collective_name"] += 1
            else:
                cls = "comm" if kind == "memcpy" and "Collective name" in args else "memory"
            gpu.setdefault(dev, []).append((start, end, cls))
            if corr is not None:
                gpu_corr.setdefault(corr, []).append((kind, name))
            continue
        if cat in API_CATS:
            if cat == "cuda_driver":
                r["counts"]["driver"] += 1
            else:
                r["counts"]["runtime_" + api_kind(name)] += 1
            calls.append((as_int(ev.get("pid")), as_int(ev.get("tid")), start, end, name, corr))
        elif cat in GPU_ANNOTATION_CATS:
            r["counts"]["gpu_user_annotations"] += 1
        elif cat == "cuda_sync":
            r["counts"]["cuda_sync"] += 1

    devices = {}
    for dev, acts in sorted(gpu.items()):
        busy = union((s, e) for s, e, _ in acts)
        comm = union((s, e) for s, e, c in acts if c == "comm")
        comp = union((s, e) for s, e, c in acts if c == "compute")
        span = max(e for _, e, _ in acts) - min(s for s, _, _ in acts)
        devices[dev] = {"busy_ns": length(busy), "comm_ns": length(comm), "compute_ns": length(comp),
                        "hidden_comm_ns": intersect_length(comm, comp), "gpu_span_ns": span,
                        "gpu_idle_ns": span - length(busy)}
    r["devices"] = devices
    for k in ("busy_ns", "comm_ns", "compute_ns", "hidden_comm_ns", "gpu_span_ns", "gpu_idle_ns"):
        r[k] = sum(d[k] for d in devices.values())
    r["overlap_pct"] = round(100.0 * r["hidden_comm_ns"] / r["comm_ns"], 2) if r["comm_ns"] else None
    blocking_facts(r, calls, gpu_corr)
    return r


def blocking_facts(r, calls, gpu_corr):
    last_launch = None
    for _, _, start, _, _, corr in calls:
        if corr is not None and corr in gpu_corr:
            last_launch = start if last_launch is None else max(last_launch, start)
    per_thread, final, by_call = {}, 0, {}
    for pid, tid, start, end, name, corr in calls:
        cls = call_class(name)
        if cls is None:
            continue
        linked = gpu_corr.get(corr, []) if corr is not None else []
        copies = [n for k, n in linked if k == "memcpy"]
        if cls == "async-copy":
            if not any("Pageable" in n for n in copies):
                continue
        elif cls == "sync-copy":
            if any(re.match(r"^(Memcpy (DtoD|HtoH)|CopyDeviceToDevice|CopyHostToHost)", n) for n in copies):
                continue
        elif cls == "device-sync" and last_launch is not None and start >= last_launch:
            final += end - start
            continue
        per_thread.setdefault((pid, tid), []).append((start, end))
        by_call[name] = by_call.get(name, 0) + (end - start)
    r["blocked_ns"] = sum(length(union(v)) for v in per_thread.values())
    r["final_sync_ns"] = final
    r["blocked_by_call"] = dict(sorted(by_call.items(), key=lambda kv: -kv[1]))


def expand(paths):
    out = []
    for p in paths:
        if not os.path.isdir(p):
            out.append(p)
            continue
        names = sorted(os.listdir(p))
        for n in names:
            if not (n.endswith(".json") or n.endswith(".json.gz")):
                continue
            if n.endswith(".json") and n + ".gz" in names:
                continue
            full = os.path.join(p, n)
            opener = gzip.open if n.endswith(".gz") else open
            with opener(full, "rb") as f:
                head = f.read(65536)
            if b'"traceEvents"' in head:
                out.append(full)
    return out


def main(argv):
    as_json = "--json" in argv
    paths = [a for a in argv[1:] if a != "--json"]
    if not paths:
        print(__doc__, file=sys.stderr)
        return 64
    results, status = [], 0
    for path in expand(paths):
        try:
            results.append(facts_of_file(path))
        except (OSError, ValueError, EOFError) as e:
            results.append({"path": path, "error": f"{type(e).__name__}: {e}"})
            status = 2
    if as_json:
        json.dump(results, sys.stdout, indent=1, default=str)
        print()
        return status
    for r in results:
        if "error" in r:
            print(f"{r['path']}: cannot read: {r['error']}")
            continue
        c = r["counts"]
        print(f"{r['path']} (rank {r['rank']}, {r['format']}, displayTimeUnit {r['displayTimeUnit']}, "
              f"baseTimeNanoseconds {r['baseTimeNanoseconds']})")
        print(f"  kernels {c['kernels']}  memcpys {c['memcpys']}  memsets {c['memsets']}  runtime cuda "
              f"{c['runtime_cuda']} hip {c['runtime_hip']}  driver {c['driver']}  gpu annotations "
              f"{c['gpu_user_annotations']}  cuda_sync {c['cuda_sync']}")
        pct = "n/a (no comm)" if r["overlap_pct"] is None else f"{r['overlap_pct']:.2f} %"
        print(f"  comm {r['comm_ns']} ns  hidden {r['hidden_comm_ns']} ns  overlap {pct}  busy {r['busy_ns']} ns  "
              f"span {r['gpu_span_ns']} ns  idle {r['gpu_idle_ns']} ns")
        print(f"  blocked {r['blocked_ns']} ns  (final device sync {r['final_sync_ns']} ns not counted)")
        top = ", ".join(f"{k} {v}" for k, v in list(r["blocked_by_call"].items())[:4])
        if top:
            print(f"  blocking calls: {top}")
        print("  categories: " + ", ".join(f"{k} {v}" for k, v in sorted(r["categories"].items())))
        if r["skipped"]:
            print("  skipped: " + ", ".join(f"{k} {v}" for k, v in r["skipped"].items()))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
